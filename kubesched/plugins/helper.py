"""Helpers shared by the in-tree plugins (upstream's ``framework/plugins/helper``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

import numpy as np

from kubesched.framework.columns import NodeColumns
from kubesched.framework.features import FeatureGates
from kubesched.framework.interface import NodeScore, PodGroups
from kubesched.framework.podgroup import PodGroupInfo
from kubesched.framework.types import PodInfo


def go_div(a: int, b: int) -> int:
    """Integer division truncating toward zero, as Go's ``/`` on integers does.

    Python's ``//`` floors, which differs for negative operands; scores computed upstream with
    int64 arithmetic must come out the same here.
    """
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def default_normalize_score(max_priority: int, reverse: bool, scores: list[NodeScore]) -> None:
    """Scale ``scores`` in place to ``0..max_priority`` relative to the highest score.

    With ``reverse`` the scale is flipped (``max_priority - scaled``), so that the node with the
    highest raw score gets 0. When every score is 0 (or below), the scores stay as they are,
    except that with ``reverse`` every node gets ``max_priority``.
    """
    max_count = 0
    for s in scores:
        if s.score > max_count:
            max_count = s.score
    if max_count == 0:
        if reverse:
            for s in scores:
                s.score = max_priority
        return
    for s in scores:
        value = go_div(max_priority * s.score, max_count)
        s.score = max_priority - value if reverse else value


def default_normalize_scores(max_priority: int, reverse: bool, scores: np.ndarray) -> np.ndarray:
    """:func:`default_normalize_score` over an int64 array: a new array, or ``scores`` itself
    where nothing changes (all at or below 0, not reversed)."""
    max_count = int(scores.max()) if len(scores) else 0
    if max_count <= 0:
        return np.full(len(scores), max_priority, np.int64) if reverse else scores
    product = max_priority * scores
    value = np.abs(product) // max_count * np.sign(product)  # Go's truncating division
    return cast("np.ndarray", max_priority - value if reverse else value)


def tolerations_fragment(pod: Any) -> dict[str, Any]:
    """The signature fragment of a pod's tolerations (order does not change any verdict)."""
    return {"Tolerations": sorted(pod.tolerations, key=lambda t: sorted((k, str(v)) for k, v in t.items()))}


def requests_fragment(pod: Any) -> dict[str, Any]:
    """The signature fragment of a pod's resource requests (and their non-zero defaults)."""
    return {
        "ContainerRequestsAndOverheads": [pod.requests.to_dict(), pod.non_zero_requests.to_dict()],
    }


def volumes_fragment(pod: Any) -> dict[str, Any]:
    """The signature fragment of a pod's volumes, leaving out ConfigMaps and Secrets (no volume
    plugin reads them)."""
    kept = [v for v in pod.volumes if "configMap" not in v and "secret" not in v]
    if not kept:
        return {"Volumes": []}
    # Claims are named within the pod's namespace.
    return {"Volumes": sorted(kept, key=lambda v: str(sorted(v.items()))), "VolumesNamespace": pod.namespace}


def pod_uid(pod: Mapping[str, Any]) -> str:
    """The uid of a pod dict, falling back to ``namespace/name`` for objects without one."""
    meta = pod.get("metadata") or {}
    return meta.get("uid") or f"{meta.get('namespace') or 'default'}/{meta.get('name', '')}"


_DEFAULT_GATES = FeatureGates()


def feature_gates_of(handle: Any) -> FeatureGates:
    """The feature gates as the plugin's handle has them; 1.37's defaults for a plugin built
    without a handle (as unit tests build some)."""
    gates = getattr(handle, "feature_gates", None)
    return gates if isinstance(gates, FeatureGates) else _DEFAULT_GATES


def feature_enabled(handle: Any, name: str) -> bool:
    """Gate ``name`` as the plugin's handle has it (see :func:`feature_gates_of`)."""
    return feature_gates_of(handle).enabled(name)


def scheduled_pods(pod_groups: PodGroups, group: PodGroupInfo) -> list[PodInfo]:
    """The group's members placed (bound or assumed) before this cycle; for a CompositePodGroup,
    those of every PodGroup below it."""
    keys = pod_groups.leaves_under(group.key) if group.is_composite else [group.key]
    out: list[PodInfo] = []
    for key in keys:
        out.extend(pod_groups.state(key.namespace, key.name).scheduled.values())
    return out


def snapshot_columns(snapshot: Any) -> NodeColumns | None:
    """The snapshot's nodes as columns, when it has them (the scheduler's does; a test's lister
    may not, and its plugins then read node by node)."""
    columns = getattr(snapshot, "columns", None)
    return columns() if callable(columns) else None
