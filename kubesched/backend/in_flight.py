"""Pods in flight: popped for an attempt that has not ended yet, and the cluster events that
arrive meanwhile (upstream's in-flight pods and events of its activeQueue).

When an attempt fails, the events it missed decide where the pod waits: if one of them could have
made it schedulable, it backs off instead of joining the unschedulable pool, so an event is never
lost in the window between pop and failure. A pod deleted or updated while in flight is noted too:
the attempt's outcome must not resurrect a deleted pod, nor requeue a stale version.

What it holds is bounded by the attempts under way: an event is dropped once no attempt in flight
is older than it (see :meth:`InFlight.end`).
"""

from __future__ import annotations

from typing import Any

from kubesched.framework.events import ClusterEvent
from kubesched.framework.types import PodInfo

#: A cluster event as the queue hears it: the event, and the object's old and new versions.
Heard = tuple[ClusterEvent, Any, Any]


class InFlight:
    """The pods in flight, the events kept for them, and what happened to them meanwhile."""

    def __init__(self) -> None:
        #: Per pod in flight, the index of the first event its attempt may have missed (counted
        #: from the first event ever kept).
        self._pods: dict[str, int] = {}
        self._events: list[Heard] = []
        self._base = 0
        #: Pods deleted while an attempt for them is in flight.
        self.gone: set[str] = set()
        #: The latest version of pods updated while an attempt for them is in flight.
        self.latest: dict[str, PodInfo] = {}

    def __len__(self) -> int:
        return len(self._pods)

    def __contains__(self, uid: object) -> bool:
        return uid in self._pods

    @property
    def events(self) -> list[Heard]:
        """The events kept for the attempts in flight, oldest first."""
        return self._events

    def start(self, uid: str) -> None:
        """The pod's attempt starts: the events from now on are kept for it."""
        self._pods[uid] = self._base + len(self._events)

    def started_at(self, uid: str) -> int | None:
        """Where the pod's attempt started (for :meth:`events_from`), or None when not in flight."""
        return self._pods.get(uid)

    def events_from(self, start: int) -> list[Heard]:
        """The events kept since ``start`` (:meth:`started_at`)."""
        return self._events[start - self._base :]

    def record(self, event: ClusterEvent, old: Any, new: Any) -> None:
        self._events.append((event, old, new))

    def end(self, uid: str) -> None:
        """The pod's attempt is over (bound, or requeued): stop recording events for it."""
        self.gone.discard(uid)
        self.latest.pop(uid, None)
        if self._pods.pop(uid, None) is None:
            return
        if not self._pods:
            self._base += len(self._events)
            self._events.clear()
            return
        # Events older than the oldest attempt still in flight concern no one any more. Under a
        # steady stream of pods some attempt is always in flight, so waiting for none would let
        # the list grow without bound. (Insertion order is pop order: the first is the oldest.)
        oldest = next(iter(self._pods.values()))
        drop = oldest - self._base
        if drop >= 256 or (drop > 0 and 2 * drop >= len(self._events)):
            del self._events[:drop]
            self._base = oldest
