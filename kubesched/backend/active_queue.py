"""activeQ: the pods ready to be tried, as upstream's activeQueue, ordered by the QueueSort plugin.

Profiles that sort with the same QueueSort plugin (and args) share one heap, ordered by it: with
one such group, upstream's single queue. Groups take turns at pop (round robin; with one group,
simply its head).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from kubesched.backend.backoff import Less
from kubesched.framework.types import QueuedPodInfo
from kubesched.runtime.framework import Framework


class _ActiveEntry:
    """A pod in activeQ's heap. Pods the QueueSort plugin cannot tell apart (same priority and
    timestamp: created in one turn of the loop) leave in the order they came in, so a run does
    not depend on the heap's shape."""

    __slots__ = ("qpi", "less", "removed", "seq", "group")

    def __init__(
        self, qpi: QueuedPodInfo, less: Callable[[QueuedPodInfo, QueuedPodInfo], bool], seq: int, group: int
    ) -> None:
        self.qpi = qpi
        self.less = less
        self.removed = False
        self.seq = seq
        self.group = group

    def __lt__(self, other: _ActiveEntry) -> bool:
        if self.less(self.qpi, other.qpi):
            return True
        if self.less(other.qpi, self.qpi):
            return False
        return self.seq < other.seq


def queue_sort_key(fw: Framework) -> tuple[str, str]:
    """What makes two profiles sort pods alike: the QueueSort plugin's name and its args."""
    refs = fw.spec.plugins.get("queueSort") or []
    name = refs[0].name if refs else ""
    args = fw.spec.plugin_args.get(name)
    return name, repr(args)


class ActiveQueue:
    """The heaps of activeQ, one per queue-sort group of the ``frameworks`` (profiles by name),
    and its pods by uid."""

    def __init__(self, frameworks: Mapping[str, Framework]) -> None:
        groups: dict[Any, int] = {}
        self._less: list[Callable[[QueuedPodInfo, QueuedPodInfo], bool]] = []
        self._group_of: dict[str, int] = {}
        for name, fw in frameworks.items():
            key = queue_sort_key(fw)
            if key not in groups:
                groups[key] = len(self._less)
                self._less.append(fw.less)
            self._group_of[name] = groups[key]
        #: The first group's order (with one QueueSort plugin, the queue's).
        self.less = self._less[0]
        self._heaps: list[list[_ActiveEntry]] = [[] for _ in self._less]
        #: Per heap, its entries marked removed and not dropped yet (see :meth:`_compact`).
        self._removed: list[int] = [0 for _ in self._less]
        self._turn = 0
        self._seq = 0
        self._by_uid: dict[str, _ActiveEntry] = {}

    def __len__(self) -> int:
        return len(self._by_uid)

    def __contains__(self, uid: object) -> bool:
        return uid in self._by_uid

    def get(self, uid: str) -> QueuedPodInfo | None:
        e = self._by_uid.get(uid)
        return None if e is None else e.qpi

    def pods(self) -> Iterator[QueuedPodInfo]:
        for e in self._by_uid.values():
            yield e.qpi

    def heap_size(self) -> int:
        """Entries in the heaps, the removed ones not dropped yet included."""
        return sum(len(h) for h in self._heaps)

    def order_of(self, qpi: QueuedPodInfo) -> tuple[Less, int]:
        """How activeQ would order the pod, and its queue-sort group (podBackoffQ's order within
        one window)."""
        group = self._group_of.get(qpi.pod_info.scheduler_name, 0)
        return self._less[group], group

    def push(self, qpi: QueuedPodInfo) -> None:
        """Add the pod (not in activeQ) to its group's heap."""
        self._seq += 1
        group = self._group_of.get(qpi.pod_info.scheduler_name, 0)
        entry = _ActiveEntry(qpi, self._less[group], self._seq, group)
        heapq.heappush(self._heaps[group], entry)
        self._by_uid[qpi.key] = entry

    def remove(self, uid: str) -> QueuedPodInfo | None:
        """Take the pod out, if it is here: its entry is marked removed, dropped later."""
        e = self._by_uid.pop(uid, None)
        if e is None:
            return None
        e.removed = True
        self._removed[e.group] += 1
        self._compact(e.group)
        return e.qpi

    def pop(self) -> QueuedPodInfo | None:
        """The head of the next group in turn that has one; ``None`` when activeQ is empty."""
        entry = self._next_entry()
        if entry is None:
            return None
        del self._by_uid[entry.qpi.key]
        return entry.qpi

    # Heap entries are removed lazily (marked, dropped when popped), which keeps removal O(1);
    # but a replica that never pops (a standby: it follows every pod, schedules none) would keep
    # each removed pod's entry, QueuedPodInfo and PodInfo for ever. So a heap is rebuilt from its
    # live entries once the dead ones are more than half of it: O(n) after at least n/2 removals,
    # amortised O(1), and a heap never holds more than twice its live pods (nothing once none is
    # left). The check runs on every removal, the informer's binds and deletes included.

    def _compact(self, group: int) -> None:
        """Rebuild activeQ heap ``group`` without its removed entries once they are the most."""
        heap = self._heaps[group]
        if 2 * self._removed[group] <= len(heap):
            return
        heap[:] = [e for e in heap if not e.removed]
        heapq.heapify(heap)  # the order is total (``seq`` breaks ties): pops are unchanged
        self._removed[group] = 0

    def _next_entry(self) -> _ActiveEntry | None:
        """The head of the next queue group in turn that has one (round robin over groups;
        with one group, simply its head)."""
        n = len(self._heaps)
        for k in range(n):
            group = (self._turn + k) % n
            heap = self._heaps[group]
            while heap:
                entry = heapq.heappop(heap)
                if entry.removed:
                    self._removed[group] -= 1
                    continue
                self._turn = (group + 1) % n
                return entry
        return None
