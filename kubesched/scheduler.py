"""The scheduler loop: pop a pod, run its scheduling cycle, spawn its binding cycle.

Scheduling cycles are serial: one pod is decided at a time, against a snapshot of the cache
taken at the start of its cycle. Binding cycles run concurrently as tasks the scheduler owns;
each handles its own failure (Unreserve in reverse order, forget the assumed pod, requeue).

A pod is never lost: it ends bound, or unschedulable with a FailedScheduling event and a
``PodScheduled=False`` condition, waiting in the queue for an event that could make it fit.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from kubesched.cache import Cache, Snapshot
from kubesched.cluster.base import Cluster, ClusterError, Conflict, NotFound
from kubesched.cluster.store import now_rfc3339
from kubesched.extender import (
    ExtenderError,
    HTTPExtender,
    Victims,
    binder_for,
    find_nodes_that_pass_extenders,
    preempt_with_extenders,
    prioritize_with_extenders,
)
from kubesched.framework.events import (
    ASSIGNED_POD_DELETE,
    NODE_ADD,
    NODE_DELETE,
    ActionType,
    ClusterEvent,
    Resource,
    node_update_actions,
    pod_update_actions,
)
from kubesched.framework.interface import PODS_TO_ACTIVATE_KEY, CycleState, PostFilterResult
from kubesched.framework.registry import Registry, default_registry
from kubesched.framework.runtime import Framework, ProfileSpec, WaitingPods
from kubesched.framework.status import Code, Status
from kubesched.framework.types import NodeInfo, PodInfo, PodSpecError, QueuedPodInfo, pod_key
from kubesched.queue import RESULT_ANNOTATION_PREFIX, SchedulingQueue

log = logging.getLogger(__name__)

MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5
NO_NODES_MSG = "no nodes available to schedule pods"
#: Error codes after which a write may or may not have been applied: the request timed out or
#: its connection broke (:class:`~kubesched.cluster.base.ClusterError` codes of the backends).
AMBIGUOUS_WRITE_CODES = frozenset({500, 502, 503, 504})
#: How many attempt durations :class:`Stats` keeps (the newest).
KEPT_ATTEMPT_DURATIONS = 100_000
#: Where the pod of a failed bind turned out to be (see Scheduler._where_after_failed_bind).
_BOUND_HERE, _ELSEWHERE, _UNBOUND, _UNKNOWN = "bound here", "elsewhere", "unbound", "unknown"
#: Seconds between the reads that find out whether a bind took effect after all.
VERIFY_BIND_WAITS = (0.5, 1.0, 2.0)


def num_feasible_nodes_to_find(percentage: int | None, num_all_nodes: int) -> int:
    """How many feasible nodes are enough before scoring (upstream's adaptive rule).

    Below 100 nodes, all of them. Otherwise the configured percentage, or when unset (0) an
    adaptive one: 50% minus 1% per 125 nodes, never under 5%; and never fewer than 100 nodes.
    """
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    pct = percentage or 0
    if pct >= 100:
        return num_all_nodes
    if pct == 0:
        pct = 50 - num_all_nodes // 125
        if pct < MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND:
            pct = MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND
    n = num_all_nodes * pct // 100
    return max(n, MIN_FEASIBLE_NODES_TO_FIND)


@dataclass
class Diagnosis:
    node_to_status: dict[str, Status] = field(default_factory=dict)
    unschedulable_plugins: set[str] = field(default_factory=set)
    pre_filter_msg: str = ""
    post_filter_msg: str = ""


class FitError(Exception):
    """No node fits the pod. Its message is upstream's FailedScheduling message."""

    def __init__(self, pod: PodInfo, num_all_nodes: int, diagnosis: Diagnosis) -> None:
        super().__init__()
        self.pod = pod
        self.num_all_nodes = num_all_nodes
        self.diagnosis = diagnosis

    def __str__(self) -> str:
        msg = f"0/{self.num_all_nodes} nodes are available:"
        d = self.diagnosis
        if d.pre_filter_msg:
            msg += f" {d.pre_filter_msg}."
        else:
            histogram: dict[str, int] = {}
            for status in d.node_to_status.values():
                for reason in status.reasons:
                    histogram[reason] = histogram.get(reason, 0) + 1
            if histogram:
                msg += " " + ", ".join(sorted(f"{n} {r}" for r, n in histogram.items())) + "."
        if d.post_filter_msg:
            msg += f" {d.post_filter_msg}."
        return msg


class Observer(Protocol):
    """Where the scheduler reports what it does (metrics). :class:`NullObserver` by default;
    ``kubesched.metrics.PrometheusObserver`` exports it with kube-scheduler's metric names."""

    def schedule_attempt(self, result: str, profile: str, seconds: float) -> None: ...

    def extension_point(self, point: str, status: str, profile: str, seconds: float) -> None: ...

    def plugin_execution(self, plugin: str, point: str, status: str, seconds: float) -> None: ...

    def pod_scheduled(self, attempts: int, seconds: float) -> None: ...

    def queue_incoming(self, queue: str, event: str) -> None: ...

    def preemption_attempt(self) -> None: ...

    def watch_pending(self, counts: Callable[[], dict[str, int]]) -> None: ...


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

    def watch_pending(self, counts: Callable[[], dict[str, int]]) -> None:
        pass


#: Share of scheduling cycles in which every plugin call is timed (upstream samples 10%).
PLUGIN_METRICS_SAMPLE_PERCENT = 10


@dataclass
class SchedulerOptions:
    parallelism: int = 16
    percentage_of_nodes_to_score: int | None = None
    pod_initial_backoff: float = 1.0
    pod_max_backoff: float = 10.0
    max_unschedulable_duration: float = 300.0
    #: Seconds after a finished bind before an unconfirmed assumed pod is dropped; 0 = never,
    #: as upstream (expiring can double-count a pod whose confirmation is merely late).
    assumed_ttl: float = 0.0
    seed: int | None = None
    #: Keep each pod's outcome (node, phase, message) for a report.
    record_results: bool = False
    #: With ``record_results``, also each plugin's result per node (filter/score maps): what
    #: the JSON report and the result annotations show; costly on large clusters.
    record_plugin_results: bool = True
    #: Also write them onto the pod as ``kubesched.io/*-result`` annotations.
    result_annotations: bool = False
    #: Write FailedScheduling/Scheduled events and PodScheduled conditions.
    report_to_cluster: bool = True


@dataclass
class PodResult:
    """What happened to a pod on its last attempt, plugin by plugin."""

    namespace: str
    name: str
    scheduler_name: str
    node: str | None = None
    phase: str = "Pending"
    message: str = ""
    attempts: int = 0
    filter: dict[str, dict[str, str]] = field(default_factory=dict)
    score: dict[str, dict[str, int]] = field(default_factory=dict)
    final_score: dict[str, dict[str, int]] = field(default_factory=dict)
    prefilter: dict[str, str] = field(default_factory=dict)
    postfilter: dict[str, str] = field(default_factory=dict)
    prescore: dict[str, str] = field(default_factory=dict)
    reserve: dict[str, str] = field(default_factory=dict)
    permit: dict[str, str] = field(default_factory=dict)
    prebind: dict[str, str] = field(default_factory=dict)
    bind: dict[str, str] = field(default_factory=dict)
    extender_filter: dict[str, dict[str, str]] = field(default_factory=dict)
    extender_prioritize: dict[str, dict[str, int]] = field(default_factory=dict)
    extender_bind: dict[str, str] = field(default_factory=dict)

    def reset_attempt(self) -> None:
        for d in (
            self.filter,
            self.score,
            self.final_score,
            self.prefilter,
            self.postfilter,
            self.prescore,
            self.reserve,
            self.permit,
            self.prebind,
            self.bind,
            self.extender_filter,
            self.extender_prioritize,
            self.extender_bind,
        ):
            d.clear()

    def annotations(self) -> dict[str, str]:
        import json

        def dump(v: Any) -> str:
            return json.dumps(v, sort_keys=True, separators=(",", ":"))

        return {
            f"{RESULT_ANNOTATION_PREFIX}prefilter-result": dump(self.prefilter),
            f"{RESULT_ANNOTATION_PREFIX}filter-result": dump(self.filter),
            f"{RESULT_ANNOTATION_PREFIX}postfilter-result": dump(self.postfilter),
            f"{RESULT_ANNOTATION_PREFIX}score-result": dump(self.score),
            f"{RESULT_ANNOTATION_PREFIX}finalscore-result": dump(self.final_score),
            f"{RESULT_ANNOTATION_PREFIX}reserve-result": dump(self.reserve),
            f"{RESULT_ANNOTATION_PREFIX}permit-result": dump(self.permit),
            f"{RESULT_ANNOTATION_PREFIX}prebind-result": dump(self.prebind),
            f"{RESULT_ANNOTATION_PREFIX}bind-result": dump(self.bind),
            f"{RESULT_ANNOTATION_PREFIX}selected-node": self.node or "",
            f"{RESULT_ANNOTATION_PREFIX}extender-filter-result": dump(self.extender_filter),
            f"{RESULT_ANNOTATION_PREFIX}extender-prioritize-result": dump(self.extender_prioritize),
            f"{RESULT_ANNOTATION_PREFIX}extender-bind-result": dump(self.extender_bind),
        }


@dataclass
class Stats:
    attempts: int = 0
    scheduled: int = 0
    unschedulable: int = 0
    errors: int = 0
    #: Duration of each scheduling attempt (scheduling cycle), in seconds: the most recent
    #: :data:`KEPT_ATTEMPT_DURATIONS`, so that a scheduler that runs for months does not grow.
    attempt_durations: deque[float] = field(default_factory=lambda: deque(maxlen=KEPT_ATTEMPT_DURATIONS))


class Scheduler:
    """Profiles, queue, cache and the loop that ties them to a cluster."""

    def __init__(
        self,
        profiles: Iterable[ProfileSpec],
        cluster: Cluster,
        options: SchedulerOptions | None = None,
        registry: Registry | None = None,
        clock: Callable[[], float] | None = None,
        observer: Observer | None = None,
        extenders: Iterable[HTTPExtender] = (),
    ) -> None:
        self.options = options or SchedulerOptions()
        #: HTTP extenders, shared by all profiles, run after the plugins as upstream orders them.
        self.extenders: list[HTTPExtender] = list(extenders)
        self.cluster = cluster
        # The event loop's clock by default, so that backoff, flushes and timeouts all share one
        # notion of time (and tests can fast-forward it).
        self.clock = clock or loop_time
        self.registry = registry if registry is not None else default_registry()
        self.waiting_pods = WaitingPods()
        self.frameworks: dict[str, Framework] = {}
        for spec in profiles:
            if spec.scheduler_name in self.frameworks:
                raise ValueError(f"duplicate profile for schedulerName {spec.scheduler_name!r}")
            self.frameworks[spec.scheduler_name] = Framework(
                spec,
                self.registry,
                cluster=cluster,
                waiting_pods=self.waiting_pods,
                parallelism=self.options.parallelism,
            )
        if not self.frameworks:
            raise ValueError("at least one profile is needed")
        self.cache = Cache(assumed_ttl=self.options.assumed_ttl, clock=self.clock)
        self.snapshot = Snapshot()
        self.queue = SchedulingQueue(
            self.frameworks,
            clock=self.clock,
            initial_backoff=self.options.pod_initial_backoff,
            max_backoff=self.options.pod_max_backoff,
            max_unschedulable_duration=self.options.max_unschedulable_duration,
        )
        self.rng = random.Random(self.options.seed)
        self.observer: Observer = observer if observer is not None else NullObserver()
        self._cycles = 0
        #: A scheduling cycle is under way (it may await async plugins): the snapshot is its own.
        self._in_cycle = False
        if observer is not None:
            for fw in self.frameworks.values():
                fw.observer = observer
            self.queue.on_incoming = observer.queue_incoming
            observer.watch_pending(self.queue.counts)
        self.next_start_node_index = 0
        self.listers = ObjectCache()
        preempting = any(e.supports_preemption() for e in self.extenders)
        for fw in self.frameworks.values():
            fw.listers = self.listers
            fw.nominator = self.queue.nominator
            if preempting:
                fw.preempt_with_extenders = self._preempt_with_extenders
        self.results: dict[str, PodResult] = {}
        self.stats = Stats()
        self._binding_tasks: set[asyncio.Task[None]] = set()
        self._side_tasks: set[asyncio.Task[None]] = set()
        self._stopping = False
        self.synced = False
        self.leading = True
        self._unreported: dict[str, tuple[dict[str, Any], str]] = {}

    # --- informer events ------------------------------------------------------------------------
    def _responsible(self, pi: PodInfo) -> bool:
        return pi.scheduler_name in self.frameworks

    def _pod_info(self, obj: dict[str, Any], old: dict[str, Any] | None = None) -> PodInfo | None:
        try:
            return PodInfo(obj)
        except PodSpecError as exc:
            # Report once per version of the spec: the report itself updates the pod's status,
            # and that update must not trigger another report.
            if old is None or old.get("spec") != obj.get("spec"):
                self._report_malformed(obj, str(exc))
            return None

    def on_add(self, kind: str, obj: dict[str, Any]) -> None:
        if kind == "Pod":
            pi = self._pod_info(obj)
            if pi is None:
                return
            if pi.node_name:
                if _terminal(obj):
                    return
                self.cache.add_pod(pi)
                self.queue.assigned_pod_added(pi)
            elif self._responsible(pi) and not _terminal(obj) and not pi.deleting:
                self._nominate_from(pi)
                self.queue.add(pi)
        elif kind == "Node":
            self.cache.add_node(obj)
            self.queue.on_event(NODE_ADD, None, obj)
        else:
            self.listers.put(kind, obj)
            self._other_event(kind, ActionType.ADD, None, obj)

    def on_update(self, kind: str, old: dict[str, Any], new: dict[str, Any]) -> None:
        if kind == "Pod":
            pi = self._pod_info(new, old)
            if pi is None:
                return
            if pi.node_name:
                was_pending = not (old.get("spec") or {}).get("nodeName")
                if was_pending:
                    self.queue.delete(pi.uid)
                    self.queue.nominator.delete(pi.uid)
                if _terminal(new):
                    if self.cache.remove_pod(pi.uid) is not None:
                        self.queue.assigned_pod_deleted(pi)
                    return
                self.cache.add_pod(pi)
                if was_pending:
                    self.queue.assigned_pod_added(pi)
                else:
                    actions = pod_update_actions(old, new)
                    self.queue.on_event(ClusterEvent(Resource.POD, actions, "AssignedPodUpdate"), old, new)
            elif self._responsible(pi):
                self._nominate_from(pi)
                self.queue.update(pi)
        elif kind == "Node":
            self.cache.update_node(old, new)
            actions = node_update_actions(old, new)
            if actions:
                self.queue.on_event(ClusterEvent(Resource.NODE, actions, "NodeUpdate"), old, new)
        else:
            self.listers.put(kind, new)
            self._other_event(kind, ActionType.UPDATE, old, new)

    def on_delete(self, kind: str, obj: dict[str, Any]) -> None:
        if kind == "Pod":
            uid = (obj.get("metadata") or {}).get("uid") or pod_key(obj)
            self._unreported.pop(uid, None)
            self.queue.nominator.delete(uid)
            removed = self.cache.remove_pod(uid)
            if removed is not None:
                self.queue.assigned_pod_deleted(removed)
            self.queue.delete(uid)
            wp = self.waiting_pods.get(uid)
            if wp is not None:
                for plugin in wp.pending_plugins():
                    wp.reject(plugin, "pod was deleted")
                    break
        elif kind == "Node":
            self.cache.remove_node(obj)
            self.queue.on_event(NODE_DELETE, obj, None)
        else:
            self.listers.remove(kind, obj)
            self._other_event(kind, ActionType.DELETE, obj, None)

    def _nominate_from(self, pi: PodInfo) -> None:
        """Keep the nominator in step with ``status.nominatedNodeName`` of a pending pod."""
        nominated = (pi.pod.get("status") or {}).get("nominatedNodeName")
        if nominated:
            self.queue.nominator.add(pi, nominated)
        else:
            self.queue.nominator.delete(pi.uid)

    def _other_event(
        self, kind: str, action: ActionType, old: dict[str, Any] | None, new: dict[str, Any] | None
    ) -> None:
        resource = _EVENT_RESOURCES.get(kind)
        if resource is not None:
            self.queue.on_event(ClusterEvent(resource, action, f"{kind}{_ACTION_NAMES[action]}"), old, new)

    def _report_malformed(self, obj: dict[str, Any], message: str) -> None:
        """A pod we cannot read is reported on that pod; everything else goes on."""
        spec = obj.get("spec") or {}
        if spec.get("nodeName") or (spec.get("schedulerName") or "default-scheduler") not in self.frameworks:
            log.warning("ignoring malformed pod %s: %s", pod_key(obj), message)
            return
        key = pod_key(obj)
        meta = obj.get("metadata") or {}
        if self.options.record_results:
            self.results[key] = PodResult(
                meta.get("namespace") or "default",
                meta.get("name", ""),
                spec.get("schedulerName") or "default-scheduler",
                phase="Error",
                message=message,
            )
        log.warning("pod %s cannot be scheduled: %s", key, message)
        if not self.leading:
            # Only the leader writes to the cluster; report it once leadership is ours.
            self._unreported[meta.get("uid") or key] = (obj, message)
            return
        if self.options.report_to_cluster:
            self._spawn_side(
                self._report_failure(obj, spec.get("schedulerName") or "default-scheduler", "SchedulerError", message)
            )

    def set_leading(self, leading: bool) -> None:
        """Whether this process may write to the cluster (leader election); becoming the leader
        reports what was held back meanwhile."""
        self.leading = leading
        if leading:
            pending, self._unreported = self._unreported, {}
            for obj, message in pending.values():
                self._report_malformed(obj, message)

    # --- running ------------------------------------------------------------------------------
    async def start(self) -> None:
        """Connect to the cluster and wait until every informer has synced."""
        await self.cluster.start(self)
        self.synced = True

    async def run(self, start: bool = True) -> None:
        """Schedule until :meth:`stop`: the loop plus the queue's periodic flushes.

        With ``start=False`` the informers must already be synced (:meth:`start`), e.g. when
        the process synced first and then waited to become the leader.
        """
        if start:
            await self.start()
        flusher = asyncio.create_task(self._flush_periodically(), name="queue-flush")
        try:
            while not self._stopping:
                qpi = await self.queue.pop()
                if qpi is None:
                    break
                self._in_cycle = True
                try:
                    await self.schedule_one(qpi)
                finally:
                    self._in_cycle = False
                # A cycle is CPU work on the loop that also carries binds, watch events, lease
                # renewals and health checks: give it back between pods, or a burst of pods
                # starves all of them until the queue drains.
                await asyncio.sleep(0)
        finally:
            flusher.cancel()
            await asyncio.gather(flusher, return_exceptions=True)

    async def _flush_periodically(self) -> None:
        last_pool_flush = self.clock()
        while True:
            await asyncio.sleep(1.0)
            try:
                self.queue.flush_backoff_completed()
                if self.clock() - last_pool_flush >= 30.0:
                    self.queue.flush_unschedulable_left_over()
                    last_pool_flush = self.clock()
                self.cache.cleanup_expired_assumed_pods()
                if not self._in_cycle and not self.queue.has_active():
                    # Idle: bring the snapshot up to date now rather than at the next cycle, so
                    # that what was deleted meanwhile (say, thousands of pods) is not kept alive
                    # by stale node copies until another pod arrives.
                    self.cache.update_snapshot(self.snapshot)
            except Exception:  # noqa: BLE001 - a periodic task must not die silently
                log.exception("queue flush failed")

    async def stop(self, grace: float = 30.0) -> None:
        """Stop popping; let in-flight binding cycles finish within ``grace`` seconds."""
        self._stopping = True
        self.queue.close()
        await self.wait_for_bindings(grace)

    async def wait_for_bindings(self, timeout: float | None = None) -> None:
        tasks = set(self._binding_tasks) | set(self._side_tasks)
        if tasks:
            await asyncio.wait(tasks, timeout=timeout)

    def in_flight(self) -> int:
        return len(self._binding_tasks)

    # --- the scheduling cycle -----------------------------------------------------------------
    async def schedule_one(self, qpi: QueuedPodInfo) -> None:
        pi = qpi.pod_info
        fw = self.frameworks.get(pi.scheduler_name)
        if fw is None or self.cache.is_assumed(pi.uid):
            self.queue.done(pi.uid)
            return
        if pi.deleting:
            # Upstream's skipPodSchedule: say so on the pod rather than drop it silently.
            self.queue.done(pi.uid)
            if self.options.report_to_cluster:
                self._spawn_side(
                    self.cluster.record_event(
                        pi.pod,
                        "Warning",
                        "FailedScheduling",
                        "Scheduling",
                        f"skip schedule deleting pod: {pi.key}",
                        fw.profile_name,
                    )
                )
            return
        start = time.perf_counter()
        self.stats.attempts += 1
        record: PodResult | None = None
        if self.options.record_results:
            record = self.results.get(pi.key)
            if record is None:
                record = self.results[pi.key] = PodResult(pi.namespace, pi.name, pi.scheduler_name)
            record.reset_attempt()
            record.attempts = qpi.attempts
        self.cache.update_snapshot(self.snapshot)
        fw.set_snapshot(self.snapshot)
        state = CycleState()
        self._cycles += 1
        state.record_plugin_metrics = self._cycles % (100 // PLUGIN_METRICS_SAMPLE_PERCENT) == 0
        try:
            node_name = await self._schedule_pod(fw, state, pi, self._traces(record))
        except FitError as fit:
            await self._post_filter_and_fail(fw, state, qpi, fit, record)
            self.stats.attempt_durations.append(time.perf_counter() - start)
            self.observer.schedule_attempt("unschedulable", fw.profile_name, time.perf_counter() - start)
            return
        except _CycleError as err:
            self._fail(fw, qpi, err.status, record, start)
            return
        assumed = pi.with_node(node_name)
        self.cache.assume_pod(assumed, node_name)
        t0 = time.perf_counter()
        tr = self._traces(record)
        status = await fw.run_reserve(state, assumed, node_name, tr.reserve if tr else None)
        self._ep("Reserve", status, fw, t0)
        if status is not None:
            await fw.run_unreserve(state, assumed, node_name)
            self.cache.forget_pod(assumed)
            self._fail(fw, qpi, status, record, start, node=node_name)
            return
        t0 = time.perf_counter()
        status = await fw.run_permit(state, assumed, node_name, tr.permit if tr else None)
        self._ep("Permit", status, fw, t0)
        if status is not None and not status.is_wait():
            await fw.run_unreserve(state, assumed, node_name)
            self.cache.forget_pod(assumed)
            self._fail(fw, qpi, status, record, start, node=node_name)
            return
        self.stats.attempt_durations.append(time.perf_counter() - start)
        self._activate_requested(state)
        task = asyncio.create_task(
            self._binding_cycle(_Binding(fw, state, qpi, assumed, node_name, record, start)), name=f"bind {pi.key}"
        )
        self._binding_tasks.add(task)
        task.add_done_callback(self._binding_done)

    async def _preempt_with_extenders(
        self, pod: PodInfo, candidates: dict[str, tuple[list[PodInfo], int]]
    ) -> dict[str, tuple[list[PodInfo], int]]:
        victims = {node: Victims(list(pods), n) for node, (pods, n) in candidates.items()}
        kept = await preempt_with_extenders(self.extenders, pod, victims, self.snapshot.node_info_map)
        return {node: (v.pods, v.num_pdb_violations) for node, v in kept.items()}

    def _traces(self, record: PodResult | None) -> PodResult | None:
        """Where per-plugin results go: the pod's record, unless only outcomes are kept."""
        return record if record is not None and self.options.record_plugin_results else None

    def _activate_requested(self, state: CycleState) -> None:
        """Move the pods plugins asked for (PodsToActivate) to activeQ."""
        pods = state.get(PODS_TO_ACTIVATE_KEY)
        if pods:
            self.queue.activate(list(pods))
            pods.clear()

    def _ep(self, point: str, status: Status | None, fw: Framework, t0: float) -> None:
        label = "Success" if status is None else status.code.upstream_name
        self.observer.extension_point(point, label, fw.profile_name, time.perf_counter() - t0)

    def _binding_done(self, task: asyncio.Task[None]) -> None:
        self._binding_tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("binding cycle %s crashed", task.get_name(), exc_info=task.exception())

    async def _schedule_pod(self, fw: Framework, state: CycleState, pi: PodInfo, record: PodResult | None) -> str:
        nodes = self.snapshot.list()
        if not nodes:
            raise _CycleError(Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, NO_NODES_MSG))
        feasible, diagnosis = await self._find_nodes_that_fit(fw, state, pi, nodes, record)
        if not feasible:
            raise FitError(pi, len(nodes), diagnosis)
        if len(feasible) == 1:
            return feasible[0].name
        t0 = time.perf_counter()
        status = await fw.run_pre_score(state, pi, feasible, record.prescore if record else None)
        self._ep("PreScore", status, fw, t0)
        if status is not None:
            raise _CycleError(status)
        if not fw.has_score_plugins() and not self.extenders:
            totals = [1] * len(feasible)
        else:
            t0 = time.perf_counter()
            totals, status = await fw.run_score(
                state, pi, feasible, record.score if record else None, record.final_score if record else None
            )
            self._ep("Score", status, fw, t0)
            if status is not None:
                raise _CycleError(status)
            if self.extenders:
                extra = await prioritize_with_extenders(self.extenders, pi, feasible)
                for i, ni in enumerate(feasible):
                    for ext_name, weighted in extra.get(ni.name, ()):
                        totals[i] += weighted
                        if record is not None:
                            record.extender_prioritize.setdefault(ni.name, {})[ext_name] = weighted
        return self._select_host(feasible, totals)

    def _select_host(self, nodes: list[NodeInfo], totals: list[int]) -> str:
        """The highest total; ties broken uniformly at random (seedable)."""
        best = max(totals)
        ties = [i for i, t in enumerate(totals) if t == best]
        chosen = ties[0] if len(ties) == 1 else ties[self.rng.randrange(len(ties))]
        return nodes[chosen].name

    async def _find_nodes_that_fit(
        self, fw: Framework, state: CycleState, pi: PodInfo, all_nodes: list[NodeInfo], record: PodResult | None
    ) -> tuple[list[NodeInfo], Diagnosis]:
        diagnosis = Diagnosis()
        t0 = time.perf_counter()
        result, status, rejectors = await fw.run_pre_filter(state, pi, record.prefilter if record else None)
        self._ep("PreFilter", status, fw, t0)
        if status is not None:
            if status.code is Code.ERROR:
                raise _CycleError(status)
            diagnosis.pre_filter_msg = status.message()
            diagnosis.unschedulable_plugins = rejectors or ({status.plugin} if status.plugin else set())
            for ni in all_nodes:
                diagnosis.node_to_status[ni.name] = status
            return [], diagnosis
        nodes = all_nodes
        if result is not None and result.node_names is not None:
            names = result.node_names
            nodes = [ni for ni in all_nodes if ni.name in names]
            diagnosis.unschedulable_plugins |= rejectors
            absent = Status(
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE, f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(rejectors))}]"
            )
            for ni in all_nodes:
                if ni.name not in names:
                    diagnosis.node_to_status[ni.name] = absent
        t0 = time.perf_counter()
        nominated = (pi.pod.get("status") or {}).get("nominatedNodeName")
        if nominated and any(ni.name == nominated for ni in nodes):
            # Preemption made room there: try that node alone first, as upstream does.
            ni = self.snapshot.get(nominated)
            trace: dict[str, str] | None = {} if record is not None else None
            status = await fw.run_filter_with_nominated_pods(state, pi, ni, trace)
            if record is not None and trace is not None:
                record.filter[ni.name] = trace
            if status is None:
                self.observer.extension_point("Filter", "Success", fw.profile_name, time.perf_counter() - t0)
                return [ni], diagnosis
            if status.code is Code.ERROR:
                raise _CycleError(status)
        feasible = await self._find_nodes_that_pass_filters(fw, state, pi, nodes, diagnosis, record, len(all_nodes))
        if self.extenders and feasible:
            try:
                after = await find_nodes_that_pass_extenders(
                    self.extenders, pi, feasible, diagnosis.node_to_status, record.extender_filter if record else None
                )
            except ExtenderError as exc:
                raise _CycleError(Status.as_error(exc)) from exc
            if len(after) != len(feasible):
                # Extenders register no events: a pod they rejected is retried on any event.
                diagnosis.unschedulable_plugins.add(EXTENDER_NAME)
            feasible = after
        self.observer.extension_point(
            "Filter", "Success" if feasible else "Unschedulable", fw.profile_name, time.perf_counter() - t0
        )
        return feasible, diagnosis

    async def _find_nodes_that_pass_filters(
        self,
        fw: Framework,
        state: CycleState,
        pi: PodInfo,
        nodes: list[NodeInfo],
        diagnosis: Diagnosis,
        record: PodResult | None,
        num_all_nodes: int,
    ) -> list[NodeInfo]:
        n = len(nodes)
        if n == 0:
            return []
        pct = fw.percentage_of_nodes_to_score
        if pct is None:
            pct = self.options.percentage_of_nodes_to_score
        want = num_feasible_nodes_to_find(pct, n)
        if not fw.has_score_plugins() and not self.extenders:
            want = 1  # nothing to rank them by: the first feasible node is the answer
        start = self.next_start_node_index % n
        feasible: list[NodeInfo] = []
        processed = 0
        statuses = diagnosis.node_to_status
        if not fw.has_filter_plugins():
            for i in range(min(want, n)):
                feasible.append(nodes[(start + i) % n])
            self.next_start_node_index = (start + len(feasible)) % num_all_nodes
            return feasible
        run_filter = fw.run_filter
        nominator = self.queue.nominator
        for i in range(n):
            ni = nodes[(start + i) % n]
            if nominator and nominator.has_nominated(ni.name):
                trace_n: dict[str, str] | None = {} if record is not None else None
                status = await fw.run_filter_with_nominated_pods(state, pi, ni, trace_n)
                if record is not None and trace_n is not None:
                    record.filter[ni.name] = trace_n
            elif record is not None:
                trace: dict[str, str] = {}
                status = fw.run_filter_traced(state, pi, ni, trace)
                record.filter[ni.name] = trace
            else:
                status = run_filter(state, pi, ni)
            processed += 1
            if status is None:
                feasible.append(ni)
                if len(feasible) >= want:
                    break
            elif status.code is Code.ERROR:
                raise _CycleError(status)
            else:
                statuses[ni.name] = status
                if status.plugin:
                    diagnosis.unschedulable_plugins.add(status.plugin)
        self.next_start_node_index = (start + processed) % num_all_nodes
        return feasible

    async def _post_filter_and_fail(
        self, fw: Framework, state: CycleState, qpi: QueuedPodInfo, fit: FitError, record: PodResult | None
    ) -> None:
        pi = qpi.pod_info
        nominated: str | None = None
        if fw.has_post_filter_plugins():
            t0 = time.perf_counter()
            result, status = await fw.run_post_filter(
                state, pi, fit.diagnosis.node_to_status, tr.postfilter if (tr := self._traces(record)) else None
            )
            self._ep("PostFilter", status, fw, t0)
            if status.code is Code.ERROR:
                log.warning("PostFilter of pod %s failed: %s", pi.key, status.message())
            if not status.is_success() and status.message():
                fit.diagnosis.post_filter_msg = status.message()
            if isinstance(result, PostFilterResult) and result.nominated_node_name:
                nominated = result.nominated_node_name
                # Hold the room preemption made: other pods' filters now count this pod there.
                self.queue.nominator.add(pi, nominated)
            self.observer.preemption_attempt()
        message = str(fit)
        self.stats.unschedulable += 1
        if record is not None:
            record.phase = "Unschedulable"
            record.node = None
            record.message = message
        self.queue.add_unschedulable_if_not_present(qpi, fit.diagnosis.unschedulable_plugins)
        qpi.last_failure = message
        await self._after_failure(fw, pi, "Unschedulable", message, record, nominated)

    def _fail(
        self,
        fw: Framework,
        qpi: QueuedPodInfo,
        status: Status,
        record: PodResult | None,
        start: float | None,
        node: str | None = None,
        backoff: bool = False,
        attempt_start: float | None = None,
    ) -> None:
        """A failure outside Filter (Reserve, Permit, binding, a plugin error): requeue and report.

        A rejection on the chosen ``node`` is reported as upstream does, as a fit error over that
        one node. ``backoff`` sends even a rejection to backoffQ (failures after Permit).
        """
        pi = qpi.pod_info
        now = time.perf_counter()
        if start is not None:
            self.stats.attempt_durations.append(now - start)
        began = start if start is not None else attempt_start
        if began is not None:
            result = "error" if status.code is Code.ERROR else "unschedulable"
            self.observer.schedule_attempt(result, fw.profile_name, now - began)
        message = status.message() or status.code.upstream_name
        if node is not None and status.is_rejected():
            message = str(FitError(pi, 1, Diagnosis({node: status}, {status.plugin} - {""})))
        if status.code is Code.ERROR or backoff:
            if status.code is Code.ERROR:
                self.stats.errors += 1
            else:
                self.stats.unschedulable += 1
            reason = "SchedulerError" if status.code is Code.ERROR else "Unschedulable"
            self.queue.requeue_after_error(qpi)
        else:
            self.stats.unschedulable += 1
            reason = "Unschedulable"
            self.queue.add_unschedulable_if_not_present(qpi, {status.plugin} if status.plugin else set())
        qpi.last_failure = message
        if record is not None:
            record.phase = "Error" if status.code is Code.ERROR else "Unschedulable"
            record.node = None
            record.message = message
        self._spawn_side(self._after_failure(fw, pi, reason, message, record, None))

    async def _after_failure(
        self, fw: Framework, pi: PodInfo, reason: str, message: str, record: PodResult | None, nominated: str | None
    ) -> None:
        if self.options.report_to_cluster:
            await self._report_failure(pi.pod, fw.profile_name, reason, message, nominated)
        if record is not None and self.options.result_annotations:
            await self._annotate(pi, record)

    async def _report_failure(
        self, pod: dict[str, Any], profile: str, reason: str, message: str, nominated: str | None = None
    ) -> None:
        condition = {
            "type": "PodScheduled",
            "status": "False",
            "reason": reason,
            "message": message,
            "lastProbeTime": None,
            "lastTransitionTime": now_rfc3339(),
        }
        # Event notes are capped at 1 KiB by the API; the condition keeps the whole message.
        note = message if len(message) <= 1024 else message[:1020] + " ..."
        try:
            await self.cluster.record_event(pod, "Warning", "FailedScheduling", "Scheduling", note, profile)
            await self.cluster.update_pod_condition(pod, condition, nominated)
        except NotFound:
            pass
        except Exception:  # noqa: BLE001 - reporting must never take the scheduler down
            log.exception("could not report the failure of pod %s", pod_key(pod))

    async def _annotate(self, pi: PodInfo, record: PodResult) -> None:
        try:
            await self.cluster.patch_pod_annotations(pi.pod, record.annotations())
        except NotFound:
            pass
        except Exception:  # noqa: BLE001
            log.exception("could not annotate pod %s", pi.key)

    def _spawn_side(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._side_tasks.add(task)
        task.add_done_callback(self._side_tasks.discard)

    # --- the binding cycle --------------------------------------------------------------------
    async def _binding_cycle(self, b: _Binding) -> None:
        fw, state, assumed, node_name, record = b.fw, b.state, b.assumed, b.node_name, b.record
        past_permit = False
        try:
            status = await fw.wait_on_permit(assumed)
            if status is None:
                past_permit = True
                t0 = time.perf_counter()
                status = await fw.run_pre_bind(
                    state, assumed, node_name, tr.prebind if (tr := self._traces(record)) else None
                )
                self._ep("PreBind", status, fw, t0)
            if status is None:
                t0 = time.perf_counter()
                binder = binder_for(self.extenders, assumed) if self.extenders else None
                if binder is not None:
                    # A binding extender binds instead of the Bind plugins (upstream).
                    try:
                        await binder.bind(assumed, node_name)
                        if (tr := self._traces(record)) is not None:
                            tr.extender_bind[binder.name] = "success"
                    except ExtenderError as exc:
                        status = Status.as_error(exc)
                        if (tr := self._traces(record)) is not None:
                            tr.extender_bind[binder.name] = str(exc)
                else:
                    status = await fw.run_bind(
                        state, assumed, node_name, tr.bind if (tr := self._traces(record)) else None
                    )
                self._ep("Bind", status, fw, t0)
        except Exception as exc:  # noqa: BLE001 - the task must handle its own failure
            status = Status.as_error(exc)
        if status is not None:
            try:
                where = await self._where_after_failed_bind(assumed, node_name, status)
                if where == _BOUND_HERE:
                    await self._binding_succeeded(b)
                else:
                    await self._binding_failed(b, status, past_permit, where)
            except Exception:
                # The attempt must end whatever went wrong here: a pod left "in flight" would keep
                # the queue recording every cluster event for it, forever, and never be retried.
                log.exception("handling the failed binding of %s failed", assumed.key)
                cached = self.cache.get_pod(assumed.uid)
                if cached is not None and cached.node_name and not self.cache.is_assumed(assumed.uid):
                    self.queue.done(assumed.uid)
                else:
                    self.queue.requeue_after_error(b.qpi)
            return
        await self._binding_succeeded(b)

    async def _where_after_failed_bind(self, assumed: PodInfo, node_name: str, status: Status) -> str:
        """Where the pod of a failed bind is now: :data:`_BOUND_HERE` (the bind took effect after
        all), :data:`_ELSEWHERE` (bound to another node, or gone), :data:`_UNBOUND`, or
        :data:`_UNKNOWN` (the server could not be asked, a few times over).

        A bind that timed out or lost its connection may have been applied by the server, and a
        409 says the pod is bound already, perhaps by this very bind: the informer may already
        show where, else the server is asked. Reporting a pod bound here as unschedulable would
        be a false event, and retrying it a second binding; dropping an unbound pod on a 409
        would lose it (upstream, too, requeues unless its informer shows the pod assigned)."""
        cached = self.cache.get_pod(assumed.uid)
        if cached is not None and not self.cache.is_assumed(assumed.uid):
            return _BOUND_HERE if cached.node_name == node_name else _ELSEWHERE
        err = status.error
        if err is None:
            return _UNBOUND
        cause = err if isinstance(err, ClusterError) else err.__cause__
        if not isinstance(cause, ClusterError) or not (
            isinstance(cause, (Conflict, NotFound)) or cause.code in AMBIGUOUS_WRITE_CODES
        ):
            return _UNBOUND
        live = None
        for wait in (*VERIFY_BIND_WAITS, None):
            try:
                live = await self.cluster.get_pod(assumed.namespace, assumed.name)
                break
            except NotFound:
                return _ELSEWHERE
            except Exception as exc:  # noqa: BLE001 - the API is unreachable for now
                if wait is None:
                    log.info("pod %s: cannot tell whether its bind took effect (%s)", assumed.key, exc)
                    return _UNKNOWN
                await asyncio.sleep(wait)
        assert live is not None
        if (live.get("metadata") or {}).get("uid") != assumed.uid:
            return _ELSEWHERE  # deleted, perhaps recreated under the same name
        bound_to = (live.get("spec") or {}).get("nodeName")
        if not bound_to:
            return _UNBOUND
        return _BOUND_HERE if bound_to == node_name else _ELSEWHERE

    async def _record_scheduled(self, assumed: PodInfo, node_name: str, profile: str) -> None:
        try:
            await self.cluster.record_event(
                assumed.pod,
                "Normal",
                "Scheduled",
                "Binding",
                f"Successfully assigned {assumed.key} to {node_name}",
                profile,
            )
        except Exception:  # noqa: BLE001 - reporting must never take the scheduler down
            log.exception("could not record the Scheduled event of %s", assumed.key)

    async def _binding_failed(self, b: _Binding, status: Status, past_permit: bool, where: str) -> None:
        fw, state, assumed, node_name, record = b.fw, b.state, b.assumed, b.node_name, b.record
        await fw.run_unreserve(state, assumed, node_name)
        if self.cache.is_assumed(assumed.uid):
            self.cache.forget_pod(assumed)
        # The room this pod held is free again: pods waiting for room may fit now.
        self.queue.on_event(ASSIGNED_POD_DELETE, assumed.pod, None, skip_uid=assumed.uid)
        if where == _ELSEWHERE:
            # Bound by someone else, or deleted: the informer brings the truth; no retry.
            log.info("pod %s not bound: %s", assumed.key, status.message())
            self.queue.done(assumed.uid)
            return
        if where == _UNKNOWN:
            # Perhaps bound after all: retry after backoff (the informer takes the pod out of the
            # queue if it shows it bound meanwhile), but report no failure that may be false.
            self.queue.requeue_after_error(b.qpi)
            return
        self._fail(
            fw,
            b.qpi,
            status,
            record,
            None,
            node=None if past_permit else node_name,
            backoff=past_permit,
            attempt_start=b.start,
        )

    async def _binding_succeeded(self, b: _Binding) -> None:
        fw, state, assumed, node_name, record = b.fw, b.state, b.assumed, b.node_name, b.record
        qpi, start = b.qpi, b.start
        if self.cache.is_assumed(assumed.uid):
            self.cache.finish_binding(assumed)
        self.stats.scheduled += 1
        self.observer.schedule_attempt("scheduled", fw.profile_name, time.perf_counter() - start)
        if qpi.initial_attempt_timestamp is not None:
            self.observer.pod_scheduled(qpi.attempts, self.clock() - qpi.initial_attempt_timestamp)
        self.queue.done(assumed.uid)
        if record is not None:
            record.phase = "Scheduled"
            record.node = node_name
            record.message = f"Successfully assigned {assumed.key} to {node_name}"
        if self.options.report_to_cluster:
            # In its own task, as upstream's event recorder: a write the cluster keeps failing
            # (and retrying) must not hold the binding cycle.
            self._spawn_side(self._record_scheduled(assumed, node_name, fw.profile_name))
        if record is not None and self.options.result_annotations:
            await self._annotate(assumed, record)
        t0 = time.perf_counter()
        await fw.run_post_bind(state, assumed, node_name)
        self._ep("PostBind", None, fw, t0)
        self._activate_requested(state)


@dataclass(slots=True)
class _Binding:
    """One pod's binding cycle: what its scheduling cycle decided, and for which attempt."""

    fw: Framework
    state: CycleState
    qpi: QueuedPodInfo
    assumed: PodInfo
    node_name: str
    record: PodResult | None
    start: float


class _CycleError(Exception):
    def __init__(self, status: Status) -> None:
        super().__init__(status.message())
        self.status = status


_EVENT_RESOURCES = {
    "Namespace": Resource.NAMESPACE,
    "PersistentVolume": Resource.PERSISTENT_VOLUME,
    "PersistentVolumeClaim": Resource.PERSISTENT_VOLUME_CLAIM,
    "StorageClass": Resource.STORAGE_CLASS,
    "CSINode": Resource.CSI_NODE,
    "PodDisruptionBudget": Resource.POD_DISRUPTION_BUDGET,
}
_ACTION_NAMES = {ActionType.ADD: "Add", ActionType.UPDATE: "Update", ActionType.DELETE: "Delete"}


class ObjectCache:
    """The cluster objects plugins read besides pods and nodes (the handle's ``listers``)."""

    def __init__(self) -> None:
        self._objects: dict[str, dict[str, dict[str, Any]]] = {}

    @staticmethod
    def _key(obj: dict[str, Any]) -> str:
        meta = obj.get("metadata") or {}
        ns = meta.get("namespace")
        return f"{ns}/{meta.get('name', '')}" if ns else meta.get("name", "")

    def put(self, kind: str, obj: dict[str, Any]) -> None:
        self._objects.setdefault(kind, {})[self._key(obj)] = obj

    def remove(self, kind: str, obj: dict[str, Any]) -> None:
        self._objects.get(kind, {}).pop(self._key(obj), None)

    def get(self, kind: str, namespace: str | None, name: str) -> dict[str, Any] | None:
        objs = self._objects.get(kind, {})
        if namespace:
            found = objs.get(f"{namespace}/{name}")
            if found is not None:
                return found
        return objs.get(name)

    def list(self, kind: str, namespace: str | None = None) -> list[dict[str, Any]]:
        objs = self._objects.get(kind, {}).values()
        if namespace is None:
            return list(objs)
        return [o for o in objs if ((o.get("metadata") or {}).get("namespace") or "") == namespace]

    def namespace_labels(self, namespace: str) -> dict[str, str]:
        ns = self._objects.get("Namespace", {}).get(namespace)
        return dict(((ns or {}).get("metadata") or {}).get("labels") or {})


#: How upstream names extenders among a pod's rejectors.
EXTENDER_NAME = "Extender"


def loop_time() -> float:
    """The running event loop's time; ``time.monotonic`` outside a loop."""
    try:
        return asyncio.get_running_loop().time()
    except RuntimeError:
        return time.monotonic()


def _terminal(pod: dict[str, Any]) -> bool:
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


__all__ = [
    "ActionType",
    "Diagnosis",
    "FitError",
    "PodResult",
    "Scheduler",
    "SchedulerOptions",
    "num_feasible_nodes_to_find",
]
