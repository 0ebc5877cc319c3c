"""The garbage collector during an experiment: what survives is frozen as the replay goes.

An experiment builds its cluster, scheduler and workload once, then places ten thousand pods
in a few seconds, and what it keeps (the store's objects and history, the scheduler's pods, the
samples) only grows. CPython's automatic full collections walk all of it, over and over, to
free next to nothing: the scheduling path makes no reference cycles to speak of (see
:mod:`kubesched.scheduler.gc_pacing`, which the long-running scheduler uses to the same end) —
about a twelfth of an experiment's CPU time. :class:`FrozenSurvivors` moves the objects that
survived so far out of the collector's sight (``gc.freeze()``, a constant-time splice) every
few hundred pods, so that collections only walk what is young, lets more young objects come
between two collections, and gives all back at the end.

Nothing decided depends on when the collector runs: it frees objects nobody can reach, and the
caches the plugins keep by weak reference are rebuilt, equal, when one of theirs goes.
"""

from __future__ import annotations

import gc
from types import TracebackType

#: Pods placed between two freezes.
FREEZE_EVERY = 500
#: New tracked objects between two young collections during an experiment (CPython's default is
#: 700: a young collection every few pods, each finding next to nothing to free).
YOUNG_THRESHOLD = 10_000


class FrozenSurvivors:
    """``with FrozenSurvivors(): ... .step()`` once per event (see the module docstring). It does
    nothing when something else in the process has frozen objects (it would unfreeze them)."""

    #: Whether a replay ran in this process before: its garbage is collected before the next
    #: freezes it (a sweep's worker runs hundreds).
    _ran = False

    def __init__(self, every: int | None = None) -> None:
        self.every = every if every is not None else FREEZE_EVERY
        self.active = False
        self._count = 0
        self._threshold: tuple[int, int, int] | None = None

    def __enter__(self) -> FrozenSurvivors:
        self.active = gc.isenabled() and gc.get_freeze_count() == 0
        if self.active:
            if FrozenSurvivors._ran:
                gc.collect()
            FrozenSurvivors._ran = True
            gc.freeze()
            self._threshold = gc.get_threshold()
            young, middle, old = self._threshold
            gc.set_threshold(max(young, YOUNG_THRESHOLD), middle, old)
        return self

    def step(self) -> None:
        self._count += 1
        if self.active and self._count % self.every == 0:
            gc.freeze()

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if self.active:
            gc.unfreeze()
            if self._threshold is not None:
                gc.set_threshold(*self._threshold)
            self.active = False


__all__ = ["FREEZE_EVERY", "FrozenSurvivors"]
