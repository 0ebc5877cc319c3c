"""The simulated clock: one notion of "now", in seconds since the simulation began, that pod
lifetimes, Job completion and a scenario's Steps all read.

* :class:`ManualClock` is virtual time: the driver (``simulate``, a replay) moves it, jumping to
  the next thing due when nothing else is pending, so a run takes as long as its scheduling.
* :class:`PacedClock` follows the wall clock, ``speed`` times faster (``sim serve --speed``):
  with speed 10, a step ``at: 60s`` comes six seconds after the start.

Both answer ``clock()`` with simulated seconds, and :func:`stamp` turns simulated seconds into
the RFC 3339 time the controllers write (a Job's ``completionTime``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta


class ManualClock:
    """Simulated seconds; advanced by the driver, never by waiting."""

    def __init__(self, start: float = 0.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance_to(self, t: float) -> None:
        if t > self.now:
            self.now = t


class PacedClock:
    """Simulated seconds that pass with the wall clock, ``speed`` times as fast."""

    def __init__(self, speed: float = 1.0, wall: Callable[[], float] = time.monotonic) -> None:
        if not speed > 0:
            raise ValueError(f"speed must be above 0, not {speed}")
        self.speed = float(speed)
        self._wall = wall
        self._start = wall()
        #: The date of simulated time 0 (what stamps count from).
        self.started_at = datetime.now(UTC)

    def __call__(self) -> float:
        return (self._wall() - self._start) * self.speed

    def restart(self) -> None:
        """Simulated time 0 is now (``sim serve`` starts it once its scheduler is ready)."""
        self._start = self._wall()
        self.started_at = datetime.now(UTC)

    def wall_seconds_until(self, t: float) -> float:
        """How long to wait on the wall clock until simulated time ``t`` (0 when it is past)."""
        return max(0.0, (t - self()) / self.speed)


def stamp(origin: datetime, clock: Callable[[], float]) -> Callable[[], str]:
    """A function giving ``origin`` plus the clock's simulated seconds, as the API server stamps
    times (whole seconds, UTC)."""

    def now() -> str:
        return (origin + timedelta(seconds=int(clock()))).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")

    return now


def format_seconds(value: float) -> str:
    """Simulated seconds for people: ``45s``, ``2m30s``, ``1h0m5s`` (fractions kept below a minute)."""
    if value < 60:
        return f"{round(value, 3):g}s"
    whole = int(round(value))
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}h{minutes}m{secs}s" if hours else f"{minutes}m{secs}s"


__all__ = ["ManualClock", "PacedClock", "format_seconds", "stamp"]
