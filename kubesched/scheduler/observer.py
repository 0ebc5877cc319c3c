"""Where the scheduler reports what it does: the :class:`Observer` protocol metrics implement."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol


class Observer(Protocol):
    """Where the scheduler reports what it does (metrics). :class:`NullObserver` by default;
    ``kubesched.server.metrics.PrometheusObserver`` exports it with kube-scheduler's metric names."""

    def schedule_attempt(self, result: str, profile: str, seconds: float) -> None: ...

    def extension_point(self, point: str, status: str, profile: str, seconds: float) -> None: ...

    def plugin_execution(self, plugin: str, point: str, status: str, seconds: float) -> None: ...

    def pod_scheduled(self, attempts: int, seconds: float) -> None: ...

    def queue_incoming(self, queue: str, event: str) -> None: ...

    def preemption_attempt(self) -> None: ...

    def preemption_victims(self, count: int) -> None: ...

    def preemption_goroutine(self, result: str, seconds: float) -> None: ...

    def batch_attempt(self, profile: str, result: str) -> None: ...

    def batch_flush(self, profile: str, reason: str) -> None: ...

    def watch_pending(self, counts: Callable[[], dict[str, int]]) -> None: ...

    def permit_waited(self, result: str, seconds: float) -> None: ...

    def watch_cache(self, sizes: Callable[[], dict[str, int]]) -> None: ...

    def watch_unschedulable(self, counts: Callable[[], dict[tuple[str, str], int]]) -> None: ...


class NullObserver:
    def schedule_attempt(self, result: str, profile: str, seconds: float) -> None:
        pass

    def extension_point(self, point: str, status: str, profile: str, seconds: float) -> None:
        pass

    def plugin_execution(self, plugin: str, point: str, status: str, seconds: float) -> None:
        pass

    def pod_scheduled(self, attempts: int, seconds: float) -> None:
        pass

    def queue_incoming(self, queue: str, event: str) -> None:
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

    def watch_pending(self, counts: Callable[[], dict[str, int]]) -> None:
        pass

    def permit_waited(self, result: str, seconds: float) -> None:
        pass

    def watch_cache(self, sizes: Callable[[], dict[str, int]]) -> None:
        pass

    def watch_unschedulable(self, counts: Callable[[], dict[tuple[str, str], int]]) -> None:
        pass
