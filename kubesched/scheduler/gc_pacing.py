"""When the garbage collector may pause the scheduler's loop.

CPython's full collection walks every tracked object; a scheduler holding ten thousand pods
and their derived state pauses its event loop for 100 ms and more each time, several times in
a burst — binds, watch events and lease renewals all wait. Yet the scheduling path makes no
reference cycles to speak of (a 10000-pod burst measured with ``gc.callbacks``: every young and
full collection in it found nothing to free), so those pauses buy nothing. ``kubesched bench``
counts what the collector frees while the measured pods are scheduled (``cyclic_garbage``), and a
test holds it at zero over DRA, pod groups, preemption, affinity and spreading: a cycle made per
scheduling cycle is kept here until a full collection (DRA's allocators once grew a steady state
by 10 MiB a second that way).

:class:`GcPacer` moves what survived so far out of the collector's sight (``gc.freeze()``, a
constant-time list splice) once a second while the scheduler is busy, so automatic collections
only ever look at what is young. Cycles that do arise are still reclaimed: a full collection
over everything runs when the scheduler is idle, at most every :attr:`idle_every` seconds, and in
any case every :attr:`busy_every` seconds of uninterrupted load, so a scheduler that is never
idle still frees its cycles.

Idle is not free, though: the loop also answers ``/healthz`` and renews the leader's lease, and a
full collection over a large heap holds it for as long as it walks (about 3 µs an object on a
loaded machine: 0.6 s for a scheduler holding 3000 pods, seconds for ten thousand). So, as Go's
collector paces itself by heap growth, a full collection runs only once the objects it would
walk have grown by :attr:`grow_by` (1.0: doubled) since the last one left them, and never below
:attr:`floor` objects: a scheduler whose heap stays flat — every burst measured frees nothing in
a full collection — is never paused for one, and one that does leak cycles is walked as often as
its heap doubles.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable


class GcPacer:
    """Freeze survivors while busy; collect everything when idle (see the module docstring)."""

    def __init__(
        self,
        idle_every: float = 60.0,
        busy_every: float = 600.0,
        clock: Callable[[], float] = time.monotonic,
        grow_by: float = 1.0,
        floor: int = 500_000,
    ) -> None:
        self.idle_every = idle_every
        self.busy_every = busy_every
        self.grow_by = grow_by
        self.floor = floor
        self._clock = clock
        self._last_full = clock()
        #: How many objects the next full collection waits for (frozen, so walked by it).
        self.goal = floor
        #: Full collections this pacer ran, and the objects they freed.
        self.full_collections = 0
        self.freed = 0

    def tick(self, idle: bool) -> None:
        """Called about once a second by the scheduler, with whether it has nothing to do."""
        gc.freeze()
        since = self._clock() - self._last_full
        if since >= (self.idle_every if idle else self.busy_every) and gc.get_freeze_count() >= self.goal:
            self.collect_all()

    def collect_all(self) -> None:
        """A full collection over every object, frozen ones included; then freeze what is left,
        and wait for it to grow by :attr:`grow_by` before the next."""
        gc.unfreeze()
        self.freed += gc.collect()
        gc.freeze()
        self.full_collections += 1
        self._last_full = self._clock()
        self.goal = max(self.floor, int(gc.get_freeze_count() * (1 + self.grow_by)))
