"""An example scheduler extender.

* **filter**: a pod fits only while its name is shorter than ``max_pod_name_length`` characters
  (``EXTENDER_MAX_POD_NAME_LENGTH``, default 10); a longer name fails every node with a reason
  naming the rule.
* **prioritize**: shorter node names score higher: 10 for the shortest name, falling linearly to
  0 for the longest (all 10 when every name has the same length).

Both are plain functions of Kubernetes JSON dicts, served in the extender wire format by
:func:`kubesched.extender.make_extender_app` (see :func:`make_app`).
"""

from __future__ import annotations

import os
from typing import Any

from aiohttp import web

from kubesched.extender import MAX_EXTENDER_PRIORITY, make_extender_app

__all__ = [
    "DEFAULT_MAX_POD_NAME_LENGTH",
    "ENV_MAX_POD_NAME_LENGTH",
    "filter_nodes",
    "make_app",
    "max_pod_name_length_from_env",
    "prioritize_nodes",
]

DEFAULT_MAX_POD_NAME_LENGTH = 10
ENV_MAX_POD_NAME_LENGTH = "EXTENDER_MAX_POD_NAME_LENGTH"

Obj = dict[str, Any]


def _name(obj: Obj) -> str:
    return str((obj.get("metadata") or {}).get("name", ""))


def max_pod_name_length_from_env() -> int:
    """``EXTENDER_MAX_POD_NAME_LENGTH`` as a positive integer, or the default when unset."""
    raw = os.environ.get(ENV_MAX_POD_NAME_LENGTH, "").strip()
    if not raw:
        return DEFAULT_MAX_POD_NAME_LENGTH
    try:
        value = int(raw)
    except ValueError:
        raise ValueError(f"{ENV_MAX_POD_NAME_LENGTH}={raw!r}: must be a positive integer") from None
    if value <= 0:
        raise ValueError(f"{ENV_MAX_POD_NAME_LENGTH}={raw!r}: must be a positive integer")
    return value


def filter_nodes(
    pod: Obj, nodes: list[Obj], max_pod_name_length: int = DEFAULT_MAX_POD_NAME_LENGTH
) -> tuple[list[Obj], dict[str, str]]:
    """All nodes when the pod's name is shorter than the limit; otherwise none, each failed with
    the reason."""
    name = _name(pod)
    if len(name) < max_pod_name_length:
        return list(nodes), {}
    reason = f"pod name {name!r} is {len(name)} characters long; this extender admits names shorter than {max_pod_name_length}"
    return [], {_name(n): reason for n in nodes}


def prioritize_nodes(pod: Obj, nodes: list[Obj]) -> dict[str, int]:
    """``{node: score}``: MAX_EXTENDER_PRIORITY (10) for the shortest name, 0 for the longest,
    linear (rounded down) in between."""
    names = [_name(n) for n in nodes]
    if not names:
        return {}
    shortest = min(map(len, names))
    longest = max(map(len, names))
    if shortest == longest:
        return dict.fromkeys(names, MAX_EXTENDER_PRIORITY)
    span = longest - shortest
    return {n: MAX_EXTENDER_PRIORITY * (longest - len(n)) // span for n in names}


def make_app(max_pod_name_length: int | None = None) -> web.Application:
    """The extender as an aiohttp app: ``POST /filter`` and ``POST /prioritize``."""
    limit = max_pod_name_length if max_pod_name_length is not None else max_pod_name_length_from_env()

    def filter_fn(pod: Obj, nodes: list[Obj]) -> tuple[list[Obj], dict[str, str]]:
        return filter_nodes(pod, nodes, limit)

    return make_extender_app(filter=filter_fn, prioritize=prioritize_nodes)
