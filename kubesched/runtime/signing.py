"""Pod signatures for opportunistic batching: what a profile's plugins read of a pod, as one
comparable value (upstream's PodSigner)."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any

from kubesched.framework.types import PodInfo

log = logging.getLogger(__name__)


def pod_signature(signers: Mapping[str, Any], pod: PodInfo) -> bytes | None:
    """The fragments every plugin of ``signers`` (name → plugin with ``sign_pod``) reads of
    ``pod``, merged with the pod's scheduler name and serialised canonically: two pods with the
    same signature get the same answers from those plugins on the same cluster. ``None`` when a
    plugin cannot sign it (its ``sign_pod`` returned ``None``, or raised) or the fragments are
    not JSON."""
    return PodSigner(signers).sign(pod)


def _fragment(name: str, plugin: Any, pod: PodInfo) -> dict[str, Any] | None:
    """What ``plugin`` signs of ``pod``; ``None`` when it refuses (returns ``None`` or raises)."""
    try:
        part: dict[str, Any] | None = plugin.sign_pod(pod)
    except Exception:  # an error is a refusal, as upstream logs and refuses
        log.debug("plugin %s could not sign pod %s", name, pod.key, exc_info=True)
        return None
    return part


class PodSigner:
    """:func:`pod_signature` for one profile's signers, asking first the plugin that refused the
    last pod: a profile's pods are mostly refused by the same plugin (PodTopologySpread refuses
    every pod while it has default constraints, as the System defaulting does), and one refusal
    ends a signature whichever plugin gives it. Signing reads the pod and nothing else, so the
    order of the questions changes only how many are asked; the fragments are merged in the
    signers' order."""

    __slots__ = ("signers", "refuser")

    def __init__(self, signers: Mapping[str, Any]) -> None:
        self.signers = signers
        #: The name of the plugin that refused the last pod it refused, if any.
        self.refuser: str | None = None

    def sign(self, pod: PodInfo) -> bytes | None:
        """:func:`pod_signature` of ``pod``."""
        signers = self.signers
        first = self.refuser
        early: dict[str, Any] | None = None
        if first is not None:
            early = _fragment(first, signers[first], pod)
            if early is None:
                return None
        fragments: dict[str, Any] = {"v1.Pod.Spec.SchedulerName": pod.scheduler_name}
        for name, plugin in signers.items():
            part = early if name == first else _fragment(name, plugin, pod)
            if part is None:
                self.refuser = name
                return None
            fragments.update(part)
        try:
            return json.dumps(fragments, sort_keys=True, separators=(",", ":"), default=repr).encode()
        except (TypeError, ValueError):
            return None
