"""The pods placed since the measurements were taken (upstream's ``PodAssignEventHandler`` and
its ``ScheduledPodsCache``): a load source reports what ran during its window, not the pods bound
since, so TargetLoadPacking adds their predicted usage itself.

Every pod seen assigned to a node (added with a ``nodeName``, or updated to another node) is kept
under that node with the time it was seen; a deleted pod is dropped; entries older than
:data:`METRICS_AGENT_REPORTING_INTERVAL_SECONDS` are dropped by a cleanup every
:data:`CACHE_CLEANUP_INTERVAL_SECONDS` (done when the cache is next touched).
"""

from __future__ import annotations

import bisect
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

#: The most a load-watcher's figures may lag behind (upstream's cleanup period, 5 minutes).
CACHE_CLEANUP_INTERVAL_SECONDS = 5 * 60
#: How often a metrics agent ingests: a pod placed this long before the window's end is taken
#: as not yet measured.
METRICS_AGENT_REPORTING_INTERVAL_SECONDS = 60


@dataclass(frozen=True)
class ScheduledPod:
    #: When the pod was seen assigned (Unix seconds).
    timestamp: float
    pod: Mapping[str, Any]


def _node_name(pod: Mapping[str, Any]) -> str:
    return str((pod.get("spec") or {}).get("nodeName") or "")


def _uid(pod: Mapping[str, Any]) -> str:
    meta = pod.get("metadata") or {}
    return str(meta.get("uid") or f"{meta.get('namespace') or 'default'}/{meta.get('name', '')}")


class PodAssignEventHandler:
    """Node name -> the pods seen bound to it recently, oldest first."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self.clock = clock
        self.scheduled_pods_cache: dict[str, list[ScheduledPod]] = {}
        self._last_cleanup = clock()

    # --- the pod informer's handlers (assigned pods only) ---------------------------------------
    def on_add(self, pod: Mapping[str, Any]) -> None:
        self._update(pod)

    def on_update(self, old: Mapping[str, Any], new: Mapping[str, Any]) -> None:
        if _node_name(old) != _node_name(new):
            self._update(new)

    def on_delete(self, pod: Mapping[str, Any]) -> None:
        entries = self.scheduled_pods_cache.get(_node_name(pod))
        if not entries:
            return
        uid = _uid(pod)
        for i, entry in enumerate(entries):
            if _uid(entry.pod) == uid:
                del entries[i]
                break

    def _update(self, pod: Mapping[str, Any]) -> None:
        node = _node_name(pod)
        if not node:
            return
        self.scheduled_pods_cache.setdefault(node, []).append(ScheduledPod(self.clock(), pod))

    # --- reading ------------------------------------------------------------------------------------
    def pods_on(self, node_name: str) -> list[ScheduledPod]:
        """The pods kept for ``node_name`` (after the periodic cleanup, when due)."""
        now = self.clock()
        if now - self._last_cleanup >= CACHE_CLEANUP_INTERVAL_SECONDS:
            self._last_cleanup = now
            self.cleanup()
        return list(self.scheduled_pods_cache.get(node_name, ()))

    def cleanup(self) -> None:
        """Drop the entries older than the reporting interval, and nodes left with none."""
        now = self.clock()
        for node in list(self.scheduled_pods_cache):
            entries = self.scheduled_pods_cache[node]
            # the first entry still within the interval (entries are in the order they were seen)
            idx = bisect.bisect_left(
                [e.timestamp + METRICS_AGENT_REPORTING_INTERVAL_SECONDS > now for e in entries], True
            )
            del entries[:idx]
            if not entries:
                del self.scheduled_pods_cache[node]
