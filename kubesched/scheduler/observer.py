"""Where the scheduler reports what it does: the :class:`Observer` protocol metrics implement,
and :func:`timed_event`, which times the informers' event handlers for it."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterable
from typing import Any, Protocol, TypeVar

__all__ = ["NullObserver", "Observer", "event_label", "timed_event"]


class Observer(Protocol):
    """Where the scheduler reports what it does (metrics). :class:`NullObserver` by default;
    ``kubesched.server.metrics.PrometheusObserver`` exports it with kube-scheduler's metric names."""

    def schedule_attempt(self, result: str, profile: str, seconds: float) -> None: ...

    def extension_point(self, point: str, status: str, profile: str, seconds: float) -> None: ...

    def plugin_execution(self, plugin: str, point: str, status: str, seconds: float) -> None: ...

    def pod_scheduled(self, attempts: int, seconds: float) -> None: ...

    def queue_incoming(self, queue: str, event: str, pods: int = 1, entity: str = "pod") -> None: ...

    def preemption_attempt(self) -> None: ...

    def preemption_victims(self, count: int) -> None: ...

    def preemption_goroutine(self, result: str, seconds: float) -> None: ...

    def batch_attempt(self, profile: str, result: str) -> None: ...

    def batch_flush(self, profile: str, reason: str) -> None: ...

    def watch_pending(
        self, counts: Callable[[], dict[str, int]], entities: Callable[[], dict[tuple[str, str], int]]
    ) -> None: ...

    def permit_waited(self, result: str, seconds: float) -> None: ...

    def watch_cache(self, sizes: Callable[[], dict[str, int]]) -> None: ...

    def watch_unschedulable(self, counts: Callable[[], dict[tuple[str, str], int]]) -> None: ...

    def scheduling_algorithm(self, seconds: float) -> None:
        """A scheduling cycle found a node (filtering and scoring) in ``seconds``."""

    def pod_group_attempt(self, result: str, profile: str, seconds: float) -> None:
        """A pod group's cycle ended (scheduled, unschedulable, error) after ``seconds``."""

    def pod_group_algorithm(self, seconds: float) -> None:
        """A pod group's placement took ``seconds``."""

    def workload_preemption(self, result: str, victims: int) -> None:
        """A pod group's preemption ended with ``result`` (a status code's name), preempting
        ``victims`` pods."""

    def placements(self, profile: str, generated: int, feasible: int, infeasible: int) -> None:
        """A pod group's cycle generated ``generated`` placements and evaluated them (``feasible``
        and ``infeasible`` are totals; each evaluation is also told to :meth:`placement_evaluated`)."""

    def placement_evaluated(self, profile: str, feasible: bool, seconds: float) -> None:
        """One candidate placement of a pod group was evaluated in ``seconds``: the group fit
        there (``feasible``) or did not. An evaluation that erred is not told."""

    def resource_claim_created(self, succeeded: bool, admin_access: bool) -> None:
        """A ResourceClaim the scheduler writes (DynamicResources' claim for extended resources)
        was created, or its creation failed; plugins reach it as ``handle.observer``."""

    def event_handled(self, event: str, seconds: float) -> None:
        """An informer event (``event`` as :func:`event_label` names it) took ``seconds`` to handle."""

    def plugins_evaluated(self, profile: str, point: str, plugins: Iterable[str], count: int) -> None:
        """Each of ``plugins`` ran ``count`` times at ``point`` (PreFilter, Filter, PreScore, Score)."""

    def queueing_hint(self, plugin: str, event: str, hint: str, seconds: float) -> None:
        """A queueing hint of ``plugin`` answered ``hint`` (Queue, QueueSkip, Error) for ``event``."""

    def batch_hint(self, profile: str, hinted: bool, seconds: float) -> None:
        """Opportunistic batching looked for a node hint (and found one, or not) in ``seconds``."""

    def batch_stored(self, profile: str, seconds: float) -> None:
        """Opportunistic batching stored a cycle's results for the next pod in ``seconds``."""

    def dra_binding_conditions(self, profile: str, driver: str, status: str, seconds: float) -> None:
        """DynamicResources' PreBind waited ``seconds`` for the binding conditions of devices of
        ``driver`` and ended with ``status`` (success, failure, timeout); plugins reach it as
        ``handle.observer``."""


class NullObserver:
    def schedule_attempt(self, result: str, profile: str, seconds: float) -> None:
        pass

    def extension_point(self, point: str, status: str, profile: str, seconds: float) -> None:
        pass

    def plugin_execution(self, plugin: str, point: str, status: str, seconds: float) -> None:
        pass

    def pod_scheduled(self, attempts: int, seconds: float) -> None:
        pass

    def queue_incoming(self, queue: str, event: str, pods: int = 1, entity: str = "pod") -> None:
        pass

    def preemption_attempt(self) -> None:
        pass

    def preemption_victims(self, count: int) -> None:
        pass

    def preemption_goroutine(self, result: str, seconds: float) -> None:
        pass

    def batch_attempt(self, profile: str, result: str) -> None:
        pass

    def batch_flush(self, profile: str, reason: str) -> None:
        pass

    def watch_pending(
        self, counts: Callable[[], dict[str, int]], entities: Callable[[], dict[tuple[str, str], int]]
    ) -> None:
        pass

    def permit_waited(self, result: str, seconds: float) -> None:
        pass

    def watch_cache(self, sizes: Callable[[], dict[str, int]]) -> None:
        pass

    def watch_unschedulable(self, counts: Callable[[], dict[tuple[str, str], int]]) -> None:
        pass

    def scheduling_algorithm(self, seconds: float) -> None:
        pass

    def pod_group_attempt(self, result: str, profile: str, seconds: float) -> None:
        pass

    def pod_group_algorithm(self, seconds: float) -> None:
        pass

    def workload_preemption(self, result: str, victims: int) -> None:
        pass

    def placements(self, profile: str, generated: int, feasible: int, infeasible: int) -> None:
        pass

    def placement_evaluated(self, profile: str, feasible: bool, seconds: float) -> None:
        pass

    def resource_claim_created(self, succeeded: bool, admin_access: bool) -> None:
        pass

    def event_handled(self, event: str, seconds: float) -> None:
        pass

    def plugins_evaluated(self, profile: str, point: str, plugins: Iterable[str], count: int) -> None:
        pass

    def queueing_hint(self, plugin: str, event: str, hint: str, seconds: float) -> None:
        pass

    def batch_hint(self, profile: str, hinted: bool, seconds: float) -> None:
        pass

    def batch_stored(self, profile: str, seconds: float) -> None:
        pass

    def dra_binding_conditions(self, profile: str, driver: str, status: str, seconds: float) -> None:
        pass


_ACTIONS = {"add": "Add", "update": "Update", "delete": "Delete"}


def event_label(kind: str, action: str, obj: dict[str, Any] | None) -> str:
    """The ``event`` label of an informer event, as upstream's handlers name theirs: a pod is an
    ``AssignedPod`` once it has a node and an ``UnscheduledPod`` before (``AssignedPodAdd``,
    ``UnscheduledPodUpdate``); other kinds are ``<Kind><Action>`` (``NodeAdd``, ``PersistentVolumeClaimUpdate``)."""
    verb = _ACTIONS[action]
    if kind == "Pod":
        assigned = bool(((obj or {}).get("spec") or {}).get("nodeName"))
        return f"{'AssignedPod' if assigned else 'UnscheduledPod'}{verb}"
    return f"{kind}{verb}"


_H = TypeVar("_H", bound=Callable[..., None])


def timed_event(action: str) -> Callable[[_H], _H]:
    """Time an event handler method ``(self, kind, *objs)`` of an object with ``ctx.observer``,
    reporting :meth:`Observer.event_handled` with the label of its (newest) object."""

    def wrap(handler: _H) -> _H:
        @functools.wraps(handler)
        def timed(self: Any, kind: str, *objs: Any) -> None:
            observer = self.ctx.observer
            if type(observer) is NullObserver:  # nobody counts: do not time (simulations see millions)
                handler(self, kind, *objs)
                return
            started = time.perf_counter()
            try:
                handler(self, kind, *objs)
            finally:
                observer.event_handled(event_label(kind, action, objs[-1]), time.perf_counter() - started)

        return timed  # type: ignore[return-value]

    return wrap
