"""PrioritySort: the default QueueSort, higher priority first, then first come first served."""

from __future__ import annotations

from typing import Any

from kubesched.framework.events import ClusterEventWithHint
from kubesched.framework.interface import Handle
from kubesched.framework.types import QueuedPodInfo


class PrioritySort:
    """Orders activeQ by ``spec.priority`` (descending, absent = 0), then by the time each pod
    entered the queue (earlier first)."""

    name = "PrioritySort"

    def __init__(self, args: Any = None, handle: Handle | None = None) -> None:
        self.handle = handle

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        p1 = a.pod_info.priority
        p2 = b.pod_info.priority
        return p1 > p2 or (p1 == p2 and a.timestamp < b.timestamp)

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """None: a queue-sort plugin never rejects a pod."""
        return []
