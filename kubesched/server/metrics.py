"""Prometheus metrics with kube-scheduler's names, labels and buckets.

The scheduler reports through the small :class:`Observer` interface it defines; this module is
the Prometheus implementation wired in by ``kubesched run``. Each instance owns its registry,
so several schedulers in one process (tests) never collide, and no ``_created`` series are
exported (kube-scheduler has none).

No label names a pod or a node, so the series do not grow with the pods a scheduler has seen:
label values come from the configuration (profiles, plugins), fixed sets (results, extension
points, queues, cluster events) or, for upstream's ``attempts`` label, the most attempts a pod
took. The gauges are read from the queue and the cache at scrape time.
"""

from __future__ import annotations

from collections.abc import Callable

import prometheus_client
from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

prometheus_client.disable_created_metrics()


def exponential_buckets(start: float, factor: float, count: int) -> list[float]:
    return [start * factor**i for i in range(count)]


class _PendingPods(Collector):
    """``scheduler_pending_pods{queue}``, read from the queue at scrape time."""

    def __init__(self, counts: Callable[[], dict[str, int]]) -> None:
        self._counts = counts

    def collect(self):  # type: ignore[no-untyped-def]
        g = GaugeMetricFamily(
            "scheduler_pending_pods",
            "Number of pending pods, by the queue type. 'active' means number of pods in activeQ; 'backoff' means "
            "number of pods in backoffQ; 'unschedulable' means number of pods in unschedulablePods that the scheduler "
            "attempted to schedule and failed; 'gated' is the number of unschedulable pods that the scheduler never "
            "attempted to schedule because they are gated.",
            labels=["queue"],
        )
        for queue, n in self._counts().items():
            g.add_metric([queue], n)
        yield g


class _Gauge(Collector):
    """A gauge family read at scrape time: ``values()`` maps label tuples to numbers."""

    def __init__(
        self, name: str, documentation: str, labels: list[str], values: Callable[[], dict[tuple[str, ...], int]]
    ) -> None:
        self._name = name
        self._doc = documentation
        self._labels = labels
        self._values = values

    def collect(self):  # type: ignore[no-untyped-def]
        g = GaugeMetricFamily(self._name, self._doc, labels=self._labels)
        for labels, n in self._values().items():
            g.add_metric(list(labels), n)
        yield g


class PrometheusObserver:
    """The scheduler's metrics, registered in ``self.registry``."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry if registry is not None else CollectorRegistry(auto_describe=True)
        r = self.registry
        self.schedule_attempts = Counter(
            "scheduler_schedule_attempts",
            "Number of attempts to schedule pods, by the result. 'unschedulable' means a pod could not be scheduled, "
            "while 'error' means an internal scheduler problem.",
            ["result", "profile"],
            registry=r,
        )
        self.attempt_duration = Histogram(
            "scheduler_scheduling_attempt_duration_seconds",
            "Scheduling attempt latency in seconds (scheduling algorithm + binding)",
            ["result", "profile"],
            buckets=exponential_buckets(0.001, 2, 15),
            registry=r,
        )
        self.extension_point_duration = Histogram(
            "scheduler_framework_extension_point_duration_seconds",
            "Latency for running all plugins of a specific extension point.",
            ["extension_point", "status", "profile"],
            buckets=exponential_buckets(0.0001, 2, 12),
            registry=r,
        )
        self.plugin_duration = Histogram(
            "scheduler_plugin_execution_duration_seconds",
            "Duration for running a plugin at a specific extension point.",
            ["plugin", "extension_point", "status"],
            buckets=exponential_buckets(0.00001, 1.5, 20),
            registry=r,
        )
        self.sli_duration = Histogram(
            "scheduler_pod_scheduling_sli_duration_seconds",
            "E2e latency for a pod being scheduled, from the time the pod enters the scheduling queue and might "
            "involve multiple scheduling attempts.",
            ["attempts"],
            buckets=exponential_buckets(0.01, 2, 20),
            registry=r,
        )
        self.incoming = Counter(
            "scheduler_queue_incoming_pods",
            "Number of pods added to scheduling queues by event and queue type.",
            ["queue", "event"],
            registry=r,
        )
        self.preemption_attempts = Counter(
            "scheduler_preemption_attempts", "Total preemption attempts in the cluster till now", registry=r
        )
        self.scheduling_attempts = Histogram(
            "scheduler_pod_scheduling_attempts",
            "Number of attempts to successfully schedule a pod.",
            buckets=exponential_buckets(1, 2, 5),
            registry=r,
        )
        self.permit_wait = Histogram(
            "scheduler_permit_wait_duration_seconds",
            "Duration of waiting on permit.",
            ["result"],
            buckets=exponential_buckets(0.001, 2, 15),
            registry=r,
        )
        self.preemption_victims_hist = Histogram(
            "scheduler_preemption_victims",
            "Number of selected preemption victims",
            buckets=exponential_buckets(1, 2, 7),
            registry=r,
        )
        self.preemption_goroutines_duration = Histogram(
            "scheduler_preemption_goroutines_duration_seconds",
            "Duration in seconds for running goroutines for the preemption.",
            ["result"],
            buckets=exponential_buckets(0.01, 2, 20),
            registry=r,
        )
        self.preemption_goroutines_total = Counter(
            "scheduler_preemption_goroutines_execution",
            "Number of preemption goroutines executed.",
            ["result"],
            registry=r,
        )
        self.batch_attempts = Counter(
            "scheduler_batch_attempts",
            "Counts of results when attempting to use batching (opportunistic batching).",
            ["profile", "result"],
            registry=r,
        )
        self.batch_flushes = Counter(
            "scheduler_batch_cache_flushed",
            "Counts of cached batches flushed, by the reason (opportunistic batching).",
            ["profile", "reason"],
            registry=r,
        )
        self._pending: _PendingPods | None = None

    # --- the Observer interface (see kubesched.scheduler.Observer) ----------------------------
    def schedule_attempt(self, result: str, profile: str, seconds: float) -> None:
        self.schedule_attempts.labels(result, profile).inc()
        self.attempt_duration.labels(result, profile).observe(seconds)

    def extension_point(self, point: str, status: str, profile: str, seconds: float) -> None:
        self.extension_point_duration.labels(point, status, profile).observe(seconds)

    def plugin_execution(self, plugin: str, point: str, status: str, seconds: float) -> None:
        self.plugin_duration.labels(plugin, point, status).observe(seconds)

    def pod_scheduled(self, attempts: int, seconds: float) -> None:
        self.sli_duration.labels(str(attempts)).observe(seconds)
        self.scheduling_attempts.observe(attempts)

    def permit_waited(self, result: str, seconds: float) -> None:
        self.permit_wait.labels(result).observe(seconds)

    def queue_incoming(self, queue: str, event: str) -> None:
        self.incoming.labels(queue, event).inc()

    def preemption_attempt(self) -> None:
        self.preemption_attempts.inc()

    def preemption_victims(self, count: int) -> None:
        self.preemption_victims_hist.observe(count)

    def preemption_goroutine(self, result: str, seconds: float) -> None:
        self.preemption_goroutines_duration.labels(result).observe(seconds)
        self.preemption_goroutines_total.labels(result).inc()

    def batch_attempt(self, profile: str, result: str) -> None:
        self.batch_attempts.labels(profile, result).inc()

    def batch_flush(self, profile: str, reason: str) -> None:
        self.batch_flushes.labels(profile, reason).inc()

    def watch_pending(self, counts: Callable[[], dict[str, int]]) -> None:
        if self._pending is None:
            self._pending = _PendingPods(counts)
            self.registry.register(self._pending)

    def watch_cache(self, sizes: Callable[[], dict[str, int]]) -> None:
        """``scheduler_cache_size{type}``: ``sizes()`` gives nodes, pods and assumed_pods."""
        self.registry.register(
            _Gauge(
                "scheduler_cache_size",
                "Number of nodes, pods, and assumed (bound) pods in the scheduler cache.",
                ["type"],
                lambda: {(k,): v for k, v in sizes().items()},
            )
        )

    def watch_unschedulable(self, counts: Callable[[], dict[tuple[str, str], int]]) -> None:
        """``scheduler_unschedulable_pods{plugin,profile}``: ``counts()`` per (plugin, profile)."""
        self.registry.register(
            _Gauge(
                "scheduler_unschedulable_pods",
                "The number of unschedulable pods broken down by plugin name. A pod will increment the gauge for all "
                "plugins that caused it to not schedule and so this metric have meaning only when broken down by plugin.",
                ["plugin", "profile"],
                lambda: {tuple(k): v for k, v in counts().items()},
            )
        )

    def exposition(self) -> bytes:
        return prometheus_client.generate_latest(self.registry)
