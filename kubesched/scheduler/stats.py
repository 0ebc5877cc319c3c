"""What the scheduler counts: :class:`Stats`.

The ground floor of the scheduler package, beside :mod:`kubesched.scheduler.options`.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

__all__ = ["KEPT_ATTEMPT_DURATIONS", "Stats"]

#: How many attempt durations :class:`Stats` keeps (the newest).
KEPT_ATTEMPT_DURATIONS = 100_000


@dataclass
class Stats:
    """Counts of scheduling attempts and their outcomes, since the scheduler was made."""

    attempts: int = 0
    scheduled: int = 0
    unschedulable: int = 0
    errors: int = 0
    #: Duration of each scheduling attempt (scheduling cycle), in seconds: the most recent
    #: :data:`KEPT_ATTEMPT_DURATIONS`, so that a scheduler that runs for months does not grow.
    attempt_durations: deque[float] = field(default_factory=lambda: deque(maxlen=KEPT_ATTEMPT_DURATIONS))
