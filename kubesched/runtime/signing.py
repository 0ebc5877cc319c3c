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
    fragments: dict[str, Any] = {"v1.Pod.Spec.SchedulerName": pod.scheduler_name}
    for name, plugin in signers.items():
        try:
            part = plugin.sign_pod(pod)
        except Exception:  # an error is a refusal, as upstream logs and refuses
            log.debug("plugin %s could not sign pod %s", name, pod.key, exc_info=True)
            return None
        if part is None:
            return None
        fragments.update(part)
    try:
        return json.dumps(fragments, sort_keys=True, separators=(",", ":"), default=repr).encode()
    except (TypeError, ValueError):
        return None
