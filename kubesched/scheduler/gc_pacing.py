"""When the garbage collector may pause the scheduler's loop.

CPython's full collection walks every tracked object; a scheduler holding ten thousand pods
and their derived state pauses its event loop for 100 ms and more each time, several times in
a burst — binds, watch events and lease renewals all wait. Yet the scheduling path makes no
reference cycles to speak of (a 10000-pod burst measured with ``gc.callbacks``: every young and
full collection in it found nothing to free), so those pauses buy nothing.

:class:`GcPacer` moves what survived so far out of the collector's sight (``gc.freeze()``, a
constant-time list splice) once a second while the scheduler is busy, so automatic collections
only ever look at what is young. Cycles that do arise are still reclaimed: a full collection
over everything runs when the scheduler is idle (where a pause harms nobody), at most every
:attr:`idle_every` seconds, and in any case every :attr:`busy_every` seconds of uninterrupted
load, so a scheduler that is never idle still frees its cycles.
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
    ) -> None:
        self.idle_every = idle_every
        self.busy_every = busy_every
        self._clock = clock
        self._last_full = clock()
        #: Full collections this pacer ran, and the objects they freed.
        self.full_collections = 0
        self.freed = 0

    def tick(self, idle: bool) -> None:
        """Called about once a second by the scheduler, with whether it has nothing to do."""
        since = self._clock() - self._last_full
        if since >= (self.idle_every if idle else self.busy_every):
            self.collect_all()
        else:
            gc.freeze()

    def collect_all(self) -> None:
        """A full collection over every object, frozen ones included; then freeze what is left."""
        gc.unfreeze()
        self.freed += gc.collect()
        gc.freeze()
        self.full_collections += 1
        self._last_full = self._clock()
