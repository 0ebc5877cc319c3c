"""backoffQ: pods waiting out their backoff before they go back to activeQ, as kube-scheduler
1.37's backoff queue.

It is two heaps. Pods that plugins rejected (they have rejecting or pending plugins) wait in
*podBackoffQ*; pods whose attempt ended in an error wait apart, in *podErrorBackoffQ*. Both are
ordered by backoff expiry. The backoff is ``initial * 2^(n-1)`` seconds, capped at the maximum,
where ``n`` counts the pod's rejections (``unschedulable_count``) or, after an error, its errors
in a row (``consecutive_errors_count``): a pod that was popped but neither rejected nor failed
has no backoff. A maximum of 0 turns backoff off.

With ``SchedulerPopFromBackoffQ`` (KEP-5142, on by default since 1.33) expiries are truncated
to whole-second *windows*: a pod is done backing off once the clock's window is past its
expiry's window, podBackoffQ orders the pods of one window as activeQ would (priority first),
and the scheduler, finding activeQ empty, takes podBackoffQ's head at once instead of idling
(:meth:`BackoffQueue.pop_head`). podErrorBackoffQ is never popped early.

A pod group (:class:`~kubesched.framework.types.QueuedPodGroupInfo`) backs off the same way, its
cap the maximum times the square root of its size. A group comes back to backoffQ after every
failed attempt, no event needed; until an event or an activation moves it (``held_back``) it
waits with the errored pods, out of an idle scheduler's reach: taking it early would retry a
group that cannot fit back to back (upstream does; kubesched lets it wait its backoff out).

Entries are removed lazily (marked, dropped when they reach the top) and a heap is rebuilt once
its dead entries are more than half of it, so what it holds stays bounded by the pods it waits on.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Callable, Iterator

from kubesched.framework.types import QueuedPodGroupInfo, QueuedPodInfo

#: Seconds in one ordering window of podBackoffQ (upstream's backoffQOrderingWindowDuration).
ORDERING_WINDOW = 1.0

#: How activeQ orders two pods, and the queue-sort group a pod belongs to: pods of one window
#: are compared by ``less`` only when they sort alike.
Less = Callable[[QueuedPodInfo, QueuedPodInfo], bool]


class _Entry:
    __slots__ = ("qpi", "expiry", "seq", "less", "group", "error", "removed")

    def __init__(self, qpi: QueuedPodInfo, expiry: float, seq: int, less: Less | None, group: int, error: bool) -> None:
        self.qpi = qpi
        self.expiry = expiry
        self.seq = seq
        self.less = less
        self.group = group
        self.error = error
        self.removed = False

    def __lt__(self, other: _Entry) -> bool:
        if self.expiry != other.expiry:
            return self.expiry < other.expiry
        if self.less is not None and self.group == other.group:
            if self.less(self.qpi, other.qpi):
                return True
            if self.less(other.qpi, self.qpi):
                return False
        return self.seq < other.seq


def align_to_window(t: float) -> float:
    """``t`` truncated to the start of its ordering window."""
    return math.floor(t / ORDERING_WINDOW) * ORDERING_WINDOW


class BackoffQueue:
    """podBackoffQ and podErrorBackoffQ (see the module docstring).

    ``windows`` is the ``SchedulerPopFromBackoffQ`` gate: aligned expiries, podBackoffQ ordered
    by ``order`` (a pod's activeQ ``less`` and queue-sort group) within a window, and
    :meth:`pop_head`. Time comes from ``clock`` (seconds)."""

    def __init__(
        self,
        clock: Callable[[], float],
        initial_backoff: float,
        max_backoff: float,
        windows: bool,
        order: Callable[[QueuedPodInfo], tuple[Less, int]] | None = None,
    ) -> None:
        self.clock = clock
        self.initial_backoff = initial_backoff
        self.max_backoff = max_backoff
        self.windows = windows
        self.order = order
        self._heaps: tuple[list[_Entry], list[_Entry]] = ([], [])  # podBackoffQ, podErrorBackoffQ
        self._removed = [0, 0]
        self._entries: dict[str, _Entry] = {}
        self._errors = 0  # entries of podErrorBackoffQ
        self._seq = itertools.count()

    # --- durations ------------------------------------------------------------------------------
    @staticmethod
    def count(qpi: QueuedPodInfo) -> int:
        """What the backoff counts: the errors in a row after an error, else the rejections."""
        return qpi.consecutive_errors_count if qpi.consecutive_errors_count > 0 else qpi.unschedulable_count

    def duration(self, qpi: QueuedPodInfo) -> float:
        """``initial * 2^(count-1)`` seconds, capped at the maximum; 0 for a count of 0. A pod
        group's cap is the maximum times the square root of its size, as upstream's."""
        n = self.count(qpi)
        if n == 0:
            return 0.0
        cap = self.max_backoff * math.sqrt(qpi.size) if qpi.size > 1 else self.max_backoff
        d = self.initial_backoff
        for _ in range(1, n):
            if d > cap - d:
                return cap
            d += d
        return min(d, cap)

    def expiry(self, qpi: QueuedPodInfo) -> float:
        """When the pod's backoff ends (aligned to its window with ``windows``); 0.0 when it has
        none (never tried, or backoff is off)."""
        if self.max_backoff == 0 or self.count(qpi) == 0:
            return 0.0
        t = qpi.timestamp + self.duration(qpi)
        return align_to_window(t) if self.windows else t

    def is_backing_off(self, qpi: QueuedPodInfo) -> bool:
        """Whether the pod must still wait. With windows, a pod whose expiry falls in the current
        window still waits: the flush that moves it runs at the next window's start."""
        return self._waits(self.expiry(qpi))

    def _waits(self, expiry: float) -> bool:
        if expiry == 0.0:
            return False
        if self.windows:
            return expiry >= align_to_window(self.clock())
        return expiry > self.clock()

    def ready_at(self, expiry: float) -> float:
        """The moment a pod with ``expiry`` stops backing off."""
        return expiry + ORDERING_WINDOW if self.windows and expiry else expiry

    # --- contents -------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, uid: str) -> bool:
        return uid in self._entries

    def get(self, uid: str) -> QueuedPodInfo | None:
        e = self._entries.get(uid)
        return e.qpi if e is not None else None

    def pods(self) -> Iterator[QueuedPodInfo]:
        return (e.qpi for e in self._entries.values())

    def len_backoff(self) -> int:
        """Pods in podBackoffQ (the one :meth:`pop_head` takes from)."""
        return len(self._entries) - self._errors

    def len_error(self) -> int:
        """Pods in podErrorBackoffQ."""
        return self._errors

    def heap_sizes(self) -> tuple[int, int]:
        """Entries in each heap, the lazily dropped ones included."""
        return len(self._heaps[0]), len(self._heaps[1])

    # --- changes --------------------------------------------------------------------------------
    def add(self, qpi: QueuedPodInfo) -> float:
        """Queue the pod: in podErrorBackoffQ when nothing rejected it (an error), else in
        podBackoffQ. Returns its expiry (also kept in ``qpi.backoff_expiry``)."""
        self.remove(qpi.key)
        error = (isinstance(qpi, QueuedPodGroupInfo) and qpi.held_back) or (
            not qpi.unschedulable_plugins and not qpi.pending_plugins
        )
        expiry = self.expiry(qpi)
        qpi.backoff_expiry = expiry
        less: Less | None = None
        group = 0
        if self.windows and not error and self.order is not None:
            less, group = self.order(qpi)
        e = _Entry(qpi, expiry, next(self._seq), less, group, error)
        heapq.heappush(self._heaps[error], e)
        self._entries[qpi.key] = e
        self._errors += error
        return expiry

    def remove(self, uid: str) -> QueuedPodInfo | None:
        e = self._entries.pop(uid, None)
        if e is None:
            return None
        e.removed = True
        self._errors -= e.error
        self._removed[e.error] += 1
        self._compact(int(e.error))
        return e.qpi

    def _compact(self, which: int) -> None:
        heap = self._heaps[which]
        if 2 * self._removed[which] <= len(heap):
            return
        heap[:] = [e for e in heap if not e.removed]
        heapq.heapify(heap)  # the order is total (``seq`` breaks ties): pops are unchanged
        self._removed[which] = 0

    def _peek(self, which: int) -> _Entry | None:
        heap = self._heaps[which]
        while heap and heap[0].removed:
            heapq.heappop(heap)
            self._removed[which] -= 1
        return heap[0] if heap else None

    def _pop(self, which: int) -> QueuedPodInfo:
        e = heapq.heappop(self._heaps[which])
        del self._entries[e.qpi.key]
        self._errors -= e.error
        return e.qpi

    def pop_completed(self) -> list[QueuedPodInfo]:
        """Take every pod whose backoff is over: podBackoffQ's, then podErrorBackoffQ's, each in
        its heap's order."""
        done: list[QueuedPodInfo] = []
        for which in (0, 1):
            while (e := self._peek(which)) is not None and not self._waits(e.expiry):
                done.append(self._pop(which))
        return done

    def pop_head(self) -> QueuedPodInfo | None:
        """Take podBackoffQ's head, backing off or not (activeQ is empty); ``None`` if it has
        none. podErrorBackoffQ is left alone."""
        if self._peek(0) is None:
            return None
        return self._pop(0)

    def next_ready(self) -> float | None:
        """The earliest moment a queued pod stops backing off."""
        heads = [e for which in (0, 1) if (e := self._peek(which)) is not None]
        if not heads:
            return None
        return min(self.ready_at(e.expiry) for e in heads)
