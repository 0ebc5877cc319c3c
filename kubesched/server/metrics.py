"""Prometheus metrics with kube-scheduler 1.37's names, types, labels, buckets and help texts.

The scheduler reports through the small :class:`~kubesched.scheduler.observer.Observer`
interface it defines; this module is the Prometheus implementation wired in by ``kubesched
run``. Each instance owns its registry, so several schedulers in one process (tests) never
collide, and no ``_created`` series are exported (kube-scheduler has none). Help texts start
with the family's stability level as upstream's registry writes them (``[STABLE]``, ``[BETA]``,
``[ALPHA]``, and ``(Deprecated since 1.37.0)`` for a deprecated family).

Every ``scheduler_*`` family kube-scheduler 1.37 registers for single pods is here (see
:data:`FAMILIES`), plus the volume binder's two and the ResourceClaim creation counter the
scheduler shares with kube-controller-manager (DynamicResources' claims for extended resources). No label names a pod or a node, so the series
do not grow with the pods a scheduler has seen: label values come from the configuration
(profiles, plugins), fixed sets (results, extension points, queues, cluster events) or, for
upstream's ``attempts`` label, the most attempts a pod took. The gauges are read from the
queue, the cache and the scheduler's task sets at scrape time.

The pod-group families (:data:`WORKLOAD_FAMILIES`: ``scheduler_podgroup_*``, workload
preemption) are registered only with ``GenericWorkload``, the placement ones (generated,
evaluated, evaluation latency) with ``TopologyAwareWorkloadScheduling``, as upstream registers them. Left out: the async API
call dispatcher's (no dispatcher here), and preemption's evaluation/execution timings, PDB
violation and disruption families.
"""

from __future__ import annotations

from collections import Counter as Tally
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

import prometheus_client
from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.metrics import MetricWrapperBase
from prometheus_client.registry import Collector

from kubesched.framework.features import FeatureGates

prometheus_client.disable_created_metrics()

ALPHA, BETA, STABLE = "ALPHA", "BETA", "STABLE"

_Family = TypeVar("_Family", bound=MetricWrapperBase)


def exponential_buckets(start: float, factor: float, count: int) -> list[float]:
    return [start * factor**i for i in range(count)]


def help_text(stability: str, text: str, deprecated: str = "") -> str:
    """A help text as kube-scheduler's registry exposes it: ``[ALPHA] ...``, with ``(Deprecated
    since X) `` after the level for a family deprecated in release X."""
    return f"[{stability}] " + (f"(Deprecated since {deprecated}) " if deprecated else "") + text


#: Family name → (stability, type): what kube-scheduler 1.37 serves for single pods, as served here.
FAMILIES: dict[str, tuple[str, str]] = {
    "scheduler_schedule_attempts_total": (STABLE, "counter"),
    "scheduler_event_handling_duration_seconds": (ALPHA, "histogram"),
    "scheduler_scheduling_attempt_duration_seconds": (STABLE, "histogram"),
    "scheduler_scheduling_algorithm_duration_seconds": (BETA, "histogram"),
    "scheduler_preemption_victims": (STABLE, "histogram"),
    "scheduler_preemption_attempts_total": (STABLE, "counter"),
    "scheduler_pending_pods": (STABLE, "gauge"),
    "scheduler_queued_entities": (ALPHA, "gauge"),
    "scheduler_inflight_events": (ALPHA, "gauge"),
    "scheduler_goroutines": (BETA, "gauge"),
    "scheduler_batch_attempts_total": (ALPHA, "counter"),
    "scheduler_batch_cache_flushed_total": (ALPHA, "counter"),
    "scheduler_batch_rescore_attempts_total": (ALPHA, "counter"),
    "scheduler_batch_rescore_duration_seconds": (ALPHA, "histogram"),
    "scheduler_get_node_hint_duration_seconds": (ALPHA, "histogram"),
    "scheduler_store_schedule_results_duration_seconds": (ALPHA, "histogram"),
    "scheduler_pod_scheduling_sli_duration_seconds": (BETA, "histogram"),
    "scheduler_pod_scheduling_attempts": (STABLE, "histogram"),
    "scheduler_pod_scheduled_after_flush_total": (ALPHA, "counter"),
    "scheduler_framework_extension_point_duration_seconds": (STABLE, "histogram"),
    "scheduler_plugin_execution_duration_seconds": (BETA, "histogram"),
    "scheduler_queueing_hint_execution_duration_seconds": (ALPHA, "histogram"),
    "scheduler_queue_incoming_pods_total": (STABLE, "counter"),
    "scheduler_queue_incoming_entities_total": (ALPHA, "counter"),
    "scheduler_permit_wait_duration_seconds": (BETA, "histogram"),
    "scheduler_cache_size": (ALPHA, "gauge"),
    "scheduler_unschedulable_pods": (BETA, "gauge"),
    "scheduler_plugin_evaluation_total": (BETA, "counter"),
    # Behind SchedulerAsyncPreemption (on by default).
    "scheduler_preemption_goroutines_duration_seconds": (ALPHA, "histogram"),
    "scheduler_preemption_goroutines_execution_total": (ALPHA, "counter"),
    # The volume binder's, registered beside the scheduler's.
    "scheduler_volume_binder_cache_requests_total": (ALPHA, "counter"),
    "scheduler_volume_scheduling_stage_error_total": (ALPHA, "counter"),
    # Behind DRADeviceBindingConditions (on by default): DynamicResources' PreBind waits.
    "scheduler_dra_bindingconditions_allocations_total": (ALPHA, "counter"),
    "scheduler_dra_bindingconditions_wait_duration_seconds": (ALPHA, "histogram"),
    # Behind DRAExtendedResource (GA, locked on): the claims DynamicResources creates for extended
    # resources, counted in the family kube-controller-manager counts its claims in.
    "dynamic_resource_allocation_resourceclaim_creates_total": (ALPHA, "counter"),
}

#: Family name → (stability, type) of the families registered with GenericWorkload.
WORKLOAD_FAMILIES: dict[str, tuple[str, str]] = {
    "scheduler_podgroup_schedule_attempts_total": (ALPHA, "counter"),
    "scheduler_podgroup_scheduling_attempt_duration_seconds": (ALPHA, "histogram"),
    "scheduler_podgroup_scheduling_algorithm_duration_seconds": (ALPHA, "histogram"),
    "scheduler_workload_preemption_attempts_total": (ALPHA, "counter"),
    "scheduler_workload_preemption_victims": (ALPHA, "histogram"),
    # With TopologyAwareWorkloadScheduling (registered by that gate alone).
    "scheduler_generated_placements_total": (ALPHA, "counter"),
    "scheduler_placement_evaluations_total": (ALPHA, "counter"),
    "scheduler_placement_evaluation_duration_seconds": (ALPHA, "histogram"),
}

#: The ``result`` of a placement's evaluation.
FEASIBLE, INFEASIBLE = "feasible", "infeasible"
#: What follows each placement family's help text (upstream's words).
_RESULTS_HELP = "'feasible' means the pod group fit into the placement, while 'infeasible' means it did not."

#: The in-flight "event" upstream counts for each pod popped and not done yet.
POD_POPPED = "PodPopped"

PENDING_PODS_HELP = (
    "Number of pending pods, by the queue type. 'active' means number of pods in activeQ; 'backoff' means number "
    "of pods in backoffQ; 'unschedulable' means number of pods in unschedulableEntities that the scheduler "
    "attempted to schedule and failed; 'gated' is the number of unschedulable pods that the scheduler never "
    "attempted to schedule because they are gated; 'incomplete' means number of pods in incompletePodGroupPods; "
    "'pending' means number of pods in pendingPodGroupPods."
)
QUEUED_ENTITIES_HELP = (
    "Number of queued scheduling entities ('pod' or 'podgroup'; 'pod' stands for individual pods that are not "
    "members of any podgroup) by the queue type. 'active' means number of entities in activeQ; 'backoff' means "
    "number of entities in backoffQ; 'unschedulable' means number of entities in unschedulableEntities that the "
    "scheduler attempted to schedule and failed; 'gated' is the number of unschedulable entities that the "
    "scheduler never attempted to schedule because they are gated."
)


class _Gauge(Collector):
    """A gauge family read at scrape time: ``values()`` maps label tuples to numbers."""

    def __init__(
        self, name: str, documentation: str, labels: list[str], values: Callable[[], dict[tuple[str, ...], float]]
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


def _in_flight_events(queue: Any) -> dict[tuple[str, ...], float]:
    """``scheduler_inflight_events``: the cluster events the queue keeps while pods are in flight
    (so that a pod that fails can be requeued by what happened meanwhile), by event, and the pods
    popped and not done yet as ``PodPopped``, as upstream counts both."""
    popped, _ = queue.in_flight_counts()
    tally = Tally(str(event) for event, _old, _new in queue.in_flight_events())
    values: dict[tuple[str, ...], float] = {(event,): n for event, n in tally.items()}
    values[(POD_POPPED,)] = popped
    return values


class PrometheusObserver:
    """The scheduler's metrics, registered in ``self.registry``."""

    def __init__(self, registry: CollectorRegistry | None = None, feature_gates: FeatureGates | None = None) -> None:
        """``feature_gates`` (1.37's defaults when None) decide which gated families are
        registered, as upstream's Register does (DRADeviceBindingConditions)."""
        self.registry = registry if registry is not None else CollectorRegistry(auto_describe=True)
        #: The series :meth:`_series` looked up, by family and label values.
        self._labelled: dict[tuple[MetricWrapperBase, tuple[str, ...]], Any] = {}
        r = self.registry
        gates = feature_gates if feature_gates is not None else FeatureGates()
        self.schedule_attempts = Counter(
            "scheduler_schedule_attempts",
            help_text(
                STABLE,
                "Number of attempts to schedule pods, by the result. 'unschedulable' means a pod could not be "
                "scheduled, while 'error' means an internal scheduler problem.",
            ),
            ["result", "profile"],
            registry=r,
        )
        self.event_handling = Histogram(
            "scheduler_event_handling_duration_seconds",
            help_text(ALPHA, "Event handling latency in seconds."),
            ["event"],
            buckets=exponential_buckets(0.0001, 2, 12),
            registry=r,
        )
        self.attempt_duration = Histogram(
            "scheduler_scheduling_attempt_duration_seconds",
            help_text(STABLE, "Scheduling attempt latency in seconds (scheduling algorithm + binding)"),
            ["result", "profile"],
            buckets=exponential_buckets(0.001, 2, 15),
            registry=r,
        )
        self.algorithm_duration = Histogram(
            "scheduler_scheduling_algorithm_duration_seconds",
            help_text(BETA, "Scheduling algorithm latency in seconds"),
            buckets=exponential_buckets(0.001, 2, 15),
            registry=r,
        )
        self.preemption_victims_hist = Histogram(
            "scheduler_preemption_victims",
            help_text(STABLE, "Number of selected preemption victims for preemption initiated by a single pod"),
            buckets=exponential_buckets(1, 2, 7),
            registry=r,
        )
        self.preemption_attempts = Counter(
            "scheduler_preemption_attempts",
            help_text(STABLE, "Total preemption attempts in the cluster till now"),
            registry=r,
        )
        self.batch_attempts = Counter(
            "scheduler_batch_attempts",
            help_text(ALPHA, "Counts of results when we attempt to use batching."),
            ["profile", "result"],
            registry=r,
        )
        self.batch_flushes = Counter(
            "scheduler_batch_cache_flushed",
            help_text(ALPHA, "Counts of cache flushes by reason."),
            ["profile", "reason"],
            registry=r,
        )
        # Opportunistic batching here keeps the hinted node's score rather than rescoring it:
        # the two rescore families stay without series.
        self.batch_rescore_attempts = Counter(
            "scheduler_batch_rescore_attempts",
            help_text(ALPHA, "Counts of rescore attempts during opportunistic batching."),
            ["profile"],
            registry=r,
        )
        self.batch_rescore_duration = Histogram(
            "scheduler_batch_rescore_duration_seconds",
            help_text(ALPHA, "Latency for rescoring a node during opportunistic batching."),
            ["profile"],
            buckets=exponential_buckets(0.00001, 2, 12),
            registry=r,
        )
        self.get_node_hint_duration = Histogram(
            "scheduler_get_node_hint_duration_seconds",
            help_text(ALPHA, "Latency for getting a node hint."),
            ["hinted", "profile"],
            buckets=exponential_buckets(0.00001, 2, 12),
            registry=r,
        )
        self.store_results_duration = Histogram(
            "scheduler_store_schedule_results_duration_seconds",
            help_text(ALPHA, "Latency for storing scheduling results."),
            ["profile"],
            buckets=exponential_buckets(0.00001, 2, 12),
            registry=r,
        )
        self.sli_duration = Histogram(
            "scheduler_pod_scheduling_sli_duration_seconds",
            help_text(
                BETA,
                "E2e latency for a pod being scheduled, from the time the pod enters the scheduling queue and might "
                "involve multiple scheduling attempts.",
            ),
            ["attempts"],
            buckets=exponential_buckets(0.01, 2, 20),
            registry=r,
        )
        self.scheduling_attempts = Histogram(
            "scheduler_pod_scheduling_attempts",
            help_text(STABLE, "Number of attempts to successfully schedule a pod."),
            buckets=exponential_buckets(1, 2, 5),
            registry=r,
        )
        self.scheduled_after_flush = Counter(
            "scheduler_pod_scheduled_after_flush",
            help_text(
                ALPHA,
                "Number of pods that were successfully scheduled after being flushed from unschedulableEntities due "
                "to timeout. This metric helps detect potential queueing hint misconfigurations or event handling "
                "issues.",
            ),
            registry=r,
        )
        self.extension_point_duration = Histogram(
            "scheduler_framework_extension_point_duration_seconds",
            help_text(STABLE, "Latency for running all plugins of a specific extension point."),
            ["extension_point", "status", "profile"],
            buckets=exponential_buckets(0.0001, 2, 12),
            registry=r,
        )
        self.plugin_duration = Histogram(
            "scheduler_plugin_execution_duration_seconds",
            help_text(BETA, "Duration for running a plugin at a specific extension point."),
            ["plugin", "extension_point", "status"],
            buckets=exponential_buckets(0.00001, 1.5, 20),
            registry=r,
        )
        self.hint_duration = Histogram(
            "scheduler_queueing_hint_execution_duration_seconds",
            help_text(ALPHA, "Duration for running a queueing hint function of a plugin."),
            ["plugin", "event", "hint"],
            buckets=exponential_buckets(0.00001, 1.5, 20),
            registry=r,
        )
        self.incoming = Counter(
            "scheduler_queue_incoming_pods",
            help_text(STABLE, "Number of pods added to scheduling queues by event and queue type."),
            ["queue", "event"],
            registry=r,
        )
        self.incoming_entities = Counter(
            "scheduler_queue_incoming_entities",
            help_text(
                ALPHA,
                "Number of scheduling entities added to scheduling queues by event, queue type, and entity type. "
                "Entity types are either 'pod' (for individual pods that are not members of any podgroup) or "
                "'podgroup'.",
            ),
            ["queue", "event", "type"],
            registry=r,
        )
        self.permit_wait = Histogram(
            "scheduler_permit_wait_duration_seconds",
            help_text(BETA, "Duration of waiting on permit."),
            ["result"],
            buckets=exponential_buckets(0.001, 2, 15),
            registry=r,
        )
        self.plugin_evaluations = Counter(
            "scheduler_plugin_evaluation",
            help_text(
                BETA,
                "Number of attempts to schedule pods by each plugin and the extension point (available only in "
                "PreFilter, Filter, PreScore, and Score).",
            ),
            ["plugin", "extension_point", "profile"],
            registry=r,
        )
        self.preemption_goroutines_duration = Histogram(
            "scheduler_preemption_goroutines_duration_seconds",
            help_text(ALPHA, "Duration in seconds for running goroutines for the preemption.", deprecated="1.37.0"),
            ["result"],
            buckets=exponential_buckets(0.01, 2, 20),
            registry=r,
        )
        self.preemption_goroutines_total = Counter(
            "scheduler_preemption_goroutines_execution",
            help_text(ALPHA, "Number of preemption goroutines executed."),
            ["result"],
            registry=r,
        )
        # Upstream registers the binder cache's counter but, since its pod binding cache went,
        # increments it nowhere: it is served empty, as kube-scheduler serves it.
        self.volume_binder_cache = Counter(
            "scheduler_volume_binder_cache_requests",
            help_text(ALPHA, "Total number for request volume binding cache"),
            ["operation"],
            registry=r,
        )
        self.volume_stage_errors = Counter(
            "scheduler_volume_scheduling_stage_error",
            help_text(ALPHA, "Volume scheduling stage error count"),
            ["operation"],
            registry=r,
        )
        self.resource_claim_creates: Counter | None = None
        if gates.enabled("DRAExtendedResource"):
            self.resource_claim_creates = Counter(
                "dynamic_resource_allocation_resourceclaim_creates",
                help_text(
                    ALPHA, "Number of ResourceClaims creation requests, categorized by creation status and admin access"
                ),
                ["status", "admin_access"],
                registry=r,
            )
        self.dra_binding_allocations: Counter | None = None
        self.dra_binding_wait: Histogram | None = None
        if gates.enabled("DRADeviceBindingConditions"):
            self.dra_binding_allocations = Counter(
                "scheduler_dra_bindingconditions_allocations",
                help_text(
                    ALPHA,
                    "Number of allocations using devices with BindingConditions, counted per driver per "
                    "scheduling attempt",
                ),
                ["profile", "driver", "status"],
                registry=r,
            )
            self.dra_binding_wait = Histogram(
                "scheduler_dra_bindingconditions_wait_duration_seconds",
                help_text(ALPHA, "Time in seconds spent waiting for BindingConditions to be satisfied during PreBind."),
                ["profile", "driver", "status"],
                buckets=exponential_buckets(0.1, 2, 14),
                registry=r,
            )
        self.pod_group_attempts: Counter | None = None
        self.pod_group_duration: Histogram | None = None
        self.pod_group_algorithm_duration: Histogram | None = None
        self.workload_preemption_attempts: Counter | None = None
        self.workload_preemption_victims_hist: Histogram | None = None
        self.generated_placements: Counter | None = None
        self.placement_evaluations: Counter | None = None
        self.placement_evaluation_duration: Histogram | None = None
        if gates.enabled("GenericWorkload"):
            self._register_workload_families(r)
        if gates.enabled("TopologyAwareWorkloadScheduling"):
            self._register_placement_families(r)
        self._pending: _Gauge | None = None

    def _register_workload_families(self, r: CollectorRegistry) -> None:
        self.pod_group_attempts = Counter(
            "scheduler_podgroup_schedule_attempts",
            help_text(
                ALPHA,
                "Number of attempts to schedule pod group, by the result. 'unschedulable' means a pod group could "
                "not be scheduled, while 'error' means an internal scheduler problem.",
            ),
            ["result", "profile"],
            registry=r,
        )
        self.pod_group_duration = Histogram(
            "scheduler_podgroup_scheduling_attempt_duration_seconds",
            help_text(ALPHA, "Pod group scheduling attempt latency in seconds"),
            ["result", "profile"],
            buckets=exponential_buckets(0.001, 2, 15),
            registry=r,
        )
        self.pod_group_algorithm_duration = Histogram(
            "scheduler_podgroup_scheduling_algorithm_duration_seconds",
            help_text(ALPHA, "Pod group scheduling algorithm latency in seconds"),
            buckets=exponential_buckets(0.001, 2, 15),
            registry=r,
        )
        self.workload_preemption_attempts = Counter(
            "scheduler_workload_preemption_attempts",
            help_text(
                ALPHA, "Total preemption attempts initiated by workload (including pod groups) in the cluster till now."
            ),
            ["result"],
            registry=r,
        )
        self.workload_preemption_victims_hist = Histogram(
            "scheduler_workload_preemption_victims",
            help_text(ALPHA, "Number of pod preemption victims caused by workload preemption."),
            buckets=exponential_buckets(1, 2, 11),
            registry=r,
        )

    def _register_placement_families(self, r: CollectorRegistry) -> None:
        self.generated_placements = Counter(
            "scheduler_generated_placements",
            help_text(
                ALPHA, "Number of candidate placements generated when scheduling pod groups, by scheduler profile."
            ),
            ["profile"],
            registry=r,
        )
        self.placement_evaluations = Counter(
            "scheduler_placement_evaluations",
            help_text(
                ALPHA,
                "Number of candidate placements evaluated when scheduling pod groups, by result and scheduler "
                f"profile. {_RESULTS_HELP}",
            ),
            ["result", "profile"],
            registry=r,
        )
        self.placement_evaluation_duration = Histogram(
            "scheduler_placement_evaluation_duration_seconds",
            help_text(
                ALPHA,
                "Latency in seconds of evaluating a single candidate placement when scheduling pod groups, by result "
                f"and scheduler profile. {_RESULTS_HELP}",
            ),
            ["result", "profile"],
            buckets=exponential_buckets(0.001, 2, 15),
            registry=r,
        )

    def _series(self, family: _Family, *values: str) -> _Family:
        """``family.labels(*values)``, kept for the next time: the families told of every cycle
        and every event find their series in a dict, much cheaper than ``labels()``."""
        key = (family, values)
        series: _Family | None = self._labelled.get(key)
        if series is None:
            series = self._labelled[key] = family.labels(*values)
        return series

    # --- the Observer interface (see kubesched.scheduler.Observer) ----------------------------
    def schedule_attempt(self, result: str, profile: str, seconds: float) -> None:
        self._series(self.schedule_attempts, result, profile).inc()
        self._series(self.attempt_duration, result, profile).observe(seconds)

    def scheduling_algorithm(self, seconds: float) -> None:
        self.algorithm_duration.observe(seconds)

    def pod_group_attempt(self, result: str, profile: str, seconds: float) -> None:
        if self.pod_group_attempts is not None and self.pod_group_duration is not None:
            self.pod_group_attempts.labels(result, profile).inc()
            self.pod_group_duration.labels(result, profile).observe(seconds)

    def pod_group_algorithm(self, seconds: float) -> None:
        if self.pod_group_algorithm_duration is not None:
            self.pod_group_algorithm_duration.observe(seconds)

    def workload_preemption(self, result: str, victims: int) -> None:
        if self.workload_preemption_attempts is not None:
            self.workload_preemption_attempts.labels(result).inc()
        if victims and self.workload_preemption_victims_hist is not None:
            self.workload_preemption_victims_hist.observe(victims)

    def placements(self, profile: str, generated: int, feasible: int, infeasible: int) -> None:
        """The placements generated; evaluations are counted one by one (:meth:`placement_evaluated`)."""
        if self.generated_placements is not None:
            self.generated_placements.labels(profile).inc(generated)

    def placement_evaluated(self, profile: str, feasible: bool, seconds: float) -> None:
        """``scheduler_placement_evaluations_total`` and ``..._evaluation_duration_seconds``
        together, as upstream records them."""
        if self.placement_evaluations is not None and self.placement_evaluation_duration is not None:
            result = FEASIBLE if feasible else INFEASIBLE
            self.placement_evaluations.labels(result, profile).inc()
            self.placement_evaluation_duration.labels(result, profile).observe(seconds)

    def resource_claim_created(self, succeeded: bool, admin_access: bool) -> None:
        if self.resource_claim_creates is not None:
            status = "success" if succeeded else "failure"
            self.resource_claim_creates.labels(status, "true" if admin_access else "false").inc()

    def event_handled(self, event: str, seconds: float) -> None:
        self._series(self.event_handling, event).observe(seconds)

    def extension_point(self, point: str, status: str, profile: str, seconds: float) -> None:
        self._series(self.extension_point_duration, point, status, profile).observe(seconds)

    def plugin_execution(self, plugin: str, point: str, status: str, seconds: float) -> None:
        self._series(self.plugin_duration, plugin, point, status).observe(seconds)

    def plugins_evaluated(self, profile: str, point: str, plugins: Iterable[str], count: int) -> None:
        if count <= 0:
            return
        for plugin in plugins:
            self._series(self.plugin_evaluations, plugin, point, profile).inc(count)

    def queueing_hint(self, plugin: str, event: str, hint: str, seconds: float) -> None:
        self._series(self.hint_duration, plugin, event, hint).observe(seconds)

    def pod_scheduled(self, attempts: int, seconds: float) -> None:
        self._series(self.sli_duration, str(attempts)).observe(seconds)
        self.scheduling_attempts.observe(attempts)

    def permit_waited(self, result: str, seconds: float) -> None:
        self.permit_wait.labels(result).observe(seconds)

    def queue_incoming(self, queue: str, event: str, pods: int = 1, entity: str = "pod") -> None:
        """An entity (a pod, or a pod group of ``pods``) entered ``queue``."""
        self._series(self.incoming, queue, event).inc(pods)
        self._series(self.incoming_entities, queue, event, entity).inc()

    def preemption_attempt(self) -> None:
        self.preemption_attempts.inc()

    def preemption_victims(self, count: int) -> None:
        self.preemption_victims_hist.observe(count)

    def preemption_goroutine(self, result: str, seconds: float) -> None:
        self.preemption_goroutines_duration.labels(result).observe(seconds)
        self.preemption_goroutines_total.labels(result).inc()

    def batch_attempt(self, profile: str, result: str) -> None:
        self._series(self.batch_attempts, profile, result).inc()

    def batch_flush(self, profile: str, reason: str) -> None:
        self.batch_flushes.labels(profile, reason).inc()

    def batch_hint(self, profile: str, hinted: bool, seconds: float) -> None:
        self._series(self.get_node_hint_duration, "hint" if hinted else "no_hint", profile).observe(seconds)

    def batch_stored(self, profile: str, seconds: float) -> None:
        self._series(self.store_results_duration, profile).observe(seconds)

    def dra_binding_conditions(self, profile: str, driver: str, status: str, seconds: float) -> None:
        if self.dra_binding_allocations is not None and self.dra_binding_wait is not None:
            self.dra_binding_allocations.labels(profile, driver, status).inc()
            self.dra_binding_wait.labels(profile, driver, status).observe(seconds)

    def volume_stage_error(self, operation: str) -> None:
        """The volume binder failed at ``operation`` (``predicate``, ``assume``, ``bind``)."""
        self.volume_stage_errors.labels(operation).inc()

    def watch_pending(
        self, counts: Callable[[], dict[str, int]], entities: Callable[[], dict[tuple[str, str], int]]
    ) -> None:
        """``scheduler_pending_pods{queue}`` and ``scheduler_queued_entities{queue,type}``:
        ``counts()`` gives the pods by queue (active, backoff, unschedulable, gated, incomplete,
        pending), ``entities()`` the entities by (queue, type)."""
        if self._pending is not None:
            return
        self._pending = _Gauge(
            "scheduler_pending_pods",
            help_text(STABLE, PENDING_PODS_HELP),
            ["queue"],
            lambda: {(k,): v for k, v in counts().items()},
        )
        self.registry.register(self._pending)
        self.registry.register(
            _Gauge(
                "scheduler_queued_entities",
                help_text(ALPHA, QUEUED_ENTITIES_HELP),
                ["queue", "type"],
                lambda: {(q, t): n for (q, t), n in entities().items()},
            )
        )

    def watch_cache(self, sizes: Callable[[], dict[str, int]]) -> None:
        """``scheduler_cache_size{type}``: ``sizes()`` gives nodes, pods and assumed_pods."""
        self.registry.register(
            _Gauge(
                "scheduler_cache_size",
                help_text(ALPHA, "Number of nodes, pods, and assumed (bound) pods in the scheduler cache."),
                ["type"],
                lambda: {(k,): v for k, v in sizes().items()},
            )
        )

    def watch_unschedulable(self, counts: Callable[[], dict[tuple[str, str], int]]) -> None:
        """``scheduler_unschedulable_pods{plugin,profile}``: ``counts()`` per (plugin, profile)."""
        self.registry.register(
            _Gauge(
                "scheduler_unschedulable_pods",
                help_text(
                    BETA,
                    "The number of unschedulable pods broken down by plugin name. A pod will increment the gauge for "
                    "all plugins that caused it to not schedule and so this metric have meaning only when broken "
                    "down by plugin.",
                ),
                ["plugin", "profile"],
                lambda: {tuple(k): v for k, v in counts().items()},
            )
        )

    def watch_scheduler(self, sched: Any) -> None:
        """What is read from a built :class:`~kubesched.scheduler.Scheduler` rather than told:
        its queue's hints (timed as they run), ``scheduler_inflight_events{event}`` and
        ``scheduler_goroutines{operation}``.

        Upstream counts goroutines by the work they do; the matching work here is asyncio tasks.
        ``binding`` counts the binding cycles in flight, one task each as upstream's one goroutine
        each. Filter and Score run as vector operations on the loop and extenders are called one
        after another, so there are no ``Filter``, ``Score`` or ``prioritizing_extender`` tasks to
        count and those series are not exported.
        """
        sched.queue.on_hint = self.queueing_hint
        self.registry.register(
            _Gauge(
                "scheduler_inflight_events",
                help_text(ALPHA, "Number of events currently tracked in the scheduling queue."),
                ["event"],
                lambda: _in_flight_events(sched.queue),
            )
        )
        self.registry.register(
            _Gauge(
                "scheduler_goroutines",
                help_text(BETA, "Number of running goroutines split by the work they do such as binding."),
                ["operation"],
                lambda: {("binding",): len(sched.ctx.bindings)},
            )
        )

    def exposition(self) -> bytes:
        return prometheus_client.generate_latest(self.registry)
