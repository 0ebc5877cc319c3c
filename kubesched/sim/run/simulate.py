"""``kubesched simulate``: run the real scheduler over an in-memory cluster until nothing is left to try.

The loop, queue, cache and plugins are the ones ``kubesched run`` uses. Only time is simulated
(:class:`kubesched.sim.scenario.clock.ManualClock`): when every remaining pod is waiting out a
backoff, the clock jumps to the next expiry instead of sleeping, and when nothing is left to try
it jumps to the next thing due — a step, a pod's lifetime ending — so a run is as fast as the
scheduling itself and, for a given seed, the same every time. Events past the horizon
(``SimulationSettings.until``, or :func:`kubesched.sim.scenario.timeline.default_horizon`) are
not run, and the report says so (``summary.stopped``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kubesched.cluster.base import ClusterError
from kubesched.cluster.memory import InMemoryCluster
from kubesched.cluster.store import Store
from kubesched.framework.features import FeatureGates
from kubesched.runtime.framework import ProfileSpec
from kubesched.scheduler import PodResult, Scheduler, SchedulerOptions
from kubesched.sim.controllers import ControllerManager
from kubesched.sim.run.report import SimulationResult, build_report, group_counts, jobs_report, pod_groups_report
from kubesched.sim.scenario.clock import ManualClock, format_seconds, stamp
from kubesched.sim.scenario.loading import load_custom_resources
from kubesched.sim.scenario.reading import SCENARIO_EPOCH, Scenario, ScenarioError, admit_pod
from kubesched.sim.scenario.steps import Step, StepProblem
from kubesched.sim.scenario.timeline import Agenda, Horizon, Lives, create_or_replace, default_horizon

#: Events (steps, pods ending) a run takes at most: a guard against workloads that end and come
#: back at the same instant (a lifetime of 0s), where the horizon is never reached.
MAX_EVENTS = 100_000


@dataclass
class SimulationSettings:
    parallelism: int = 16
    percentage_of_nodes_to_score: int | None = None
    pod_initial_backoff: float = 1.0
    pod_max_backoff: float = 10.0
    seed: int | None = 0
    #: Simulated seconds after which pods still backing off are no longer retried.
    horizon: float = 300.0
    #: The time horizon (simulated seconds): no step or pod end later than this is run.
    #: ``None``: :func:`kubesched.sim.scenario.timeline.default_horizon` of the scenario.
    until: float | None = None
    #: Events run at most (see :data:`MAX_EVENTS`).
    max_events: int = MAX_EVENTS
    #: Also write the results onto each pod as annotations (the report has them already; the
    #: annotations matter where a client reads pods, as with `sim serve`).
    result_annotations: bool = False
    #: Keep every plugin's result on every node (the JSON report's filter/score maps). A table
    #: shows only outcomes, and large clusters make these maps very large.
    plugin_results: bool = True
    #: Filter and Score over the node columns (see ``SchedulerOptions.batch``); same decisions.
    batch: bool = True
    #: Upstream's feature gates (see ``SchedulerOptions.feature_gates``).
    feature_gates: FeatureGates = field(default_factory=FeatureGates)
    #: How a deleted pod on a node ends (``kubesched.cluster.termination``): "immediate", or
    #: "graceful" — Terminating for its grace period of simulated time, holding its node.
    pod_termination: str = "immediate"

    def scheduler_options(self, **simulation: Any) -> SchedulerOptions:
        """The scheduler's options under these settings, as a simulation runs it (results kept,
        assumed pods never expired), with what the simulation itself decides in ``simulation``."""
        return SchedulerOptions(
            parallelism=self.parallelism,
            percentage_of_nodes_to_score=self.percentage_of_nodes_to_score,
            pod_initial_backoff=self.pod_initial_backoff,
            pod_max_backoff=self.pod_max_backoff,
            seed=self.seed,
            record_results=True,
            assumed_ttl=0,
            batch=self.batch,
            feature_gates=self.feature_gates,
            **simulation,
        )


async def simulate(
    profiles: list[ProfileSpec],
    scenario: Scenario,
    settings: SimulationSettings | None = None,
    progress: Callable[[int, int], None] | None = None,
    extenders: list[Any] | None = None,
    clock_progress: Callable[[float, float], None] | None = None,
) -> SimulationResult:
    """Schedule ``scenario``'s pending pods with ``profiles``; ``progress(done, total)`` is
    called as pods reach a decision, ``clock_progress(now, horizon)`` as simulated time passes."""
    settings = settings or SimulationSettings()
    store = Store(history=1000)
    store.follow_gates(settings.feature_gates)
    store.pod_termination = settings.pod_termination
    cluster = InMemoryCluster(store)
    clock = ManualClock()
    options = settings.scheduler_options(
        record_plugin_results=settings.plugin_results or settings.result_annotations,
        result_annotations=settings.result_annotations,
        report_to_cluster=True,
        keep_deleted_results=True,
    )
    priority_classes = {pc["metadata"]["name"]: pc for pc in scenario.priority_classes}
    namespaces = {ns["metadata"]["name"] for ns in scenario.namespaces}
    for ns in scenario.namespaces:
        store.create("Namespace", ns)
    for name in ("default", "kube-system"):
        if name not in namespaces:
            store.create("Namespace", {"metadata": {"name": name}})
    for pc in scenario.priority_classes:
        store.create("PriorityClass", pc)
    # Storage and disruption objects before nodes and pods: pods refer to them.
    # Fixed uids, as the pods' below: a report that names an object's uid (a victim's
    # "Preempted by podgroup <uid>") reads the same on every run.
    for n, obj in enumerate(scenario.others, 1):
        meta = obj.get("metadata") or {}
        store.create(obj["kind"], {**obj, "metadata": {"uid": f"00000000-0000-0000-0001-{n:012d}", **meta}})
    # Custom resources' definitions, then their objects (plugins watch them through informers).
    load_custom_resources(store, scenario)
    for node in scenario.nodes:
        store.create("Node", node)
    uid = 0

    def with_uid(pod: dict[str, Any]) -> dict[str, Any]:
        nonlocal uid
        uid += 1
        pod["metadata"].setdefault("uid", f"00000000-0000-0000-0000-{uid:012d}")
        return pod

    for pod in scenario.running_pods:
        store.create("Pod", with_uid(admit_pod(pod, priority_classes)))

    scheduler = Scheduler(profiles, cluster, options, clock=clock, extenders=extenders or ())
    started = time.perf_counter()
    await scheduler.start()
    unknown: dict[str, PodResult] = {}
    pending_keys: list[str] = []

    def made_by_controller(etype: str, kind: str, obj: dict[str, Any], old: Any) -> None:
        # Pods the workload controllers make are reported as the scenario's own pods are.
        if kind == "Pod" and etype == "ADDED" and (obj["metadata"].get("ownerReferences")):
            if not obj["spec"].get("nodeName"):
                pending_keys.append(f"{obj['metadata']['namespace']}/{obj['metadata']['name']}")

    store.subscribe(made_by_controller)
    controllers = ControllerManager(store, settings.feature_gates, now=stamp(SCENARIO_EPOCH, clock))
    controllers.follow()
    # When each Job completed, in simulated seconds.
    jobs_done: dict[str, float] = {}

    def job_completed(etype: str, kind: str, obj: dict[str, Any], old: Any) -> None:
        if kind == "Job" and etype == "MODIFIED" and (obj.get("status") or {}).get("completionTime"):
            meta = obj["metadata"]
            jobs_done.setdefault(f"{meta.get('namespace') or 'default'}/{meta['name']}", clock.now)

    store.subscribe(job_completed)

    #: What steps could not do (a pod created twice, a patch the API server would refuse).
    problems: list[StepProblem] = []

    def create_pod(pod: dict[str, Any], step: Step | None) -> dict[str, Any] | None:
        """``pod`` admitted and created; a step's pod that cannot be (it exists already) is a
        problem of that step, and None."""
        meta = pod["metadata"]
        try:
            created = with_uid(admit_pod(pod, priority_classes))
            store.create("Pod", created)
        except (ClusterError, ScenarioError) as exc:
            if step is None:
                raise
            problems.append(
                StepProblem(step.index + 1, clock.now, "create", f"Pod {meta['namespace']}/{meta['name']}", str(exc))
            )
            return None
        return created

    def add_pending(pods: list[dict[str, Any]], step: Step | None = None) -> None:
        for pod in pods:
            if create_pod(pod, step) is None:
                continue
            meta = pod["metadata"]
            key = f"{meta['namespace']}/{meta['name']}"
            pending_keys.append(key)
            sched_name = pod["spec"].get("schedulerName") or "default-scheduler"
            if sched_name not in scheduler.frameworks:
                unknown[key] = PodResult(
                    meta["namespace"],
                    meta["name"],
                    sched_name,
                    phase="Error",
                    message=f"no profile has schedulerName {sched_name!r}; known: {', '.join(scheduler.frameworks)}",
                )

    # Time: steps, and pods that end once they have run their lifetime.
    agenda = Agenda(scenario.steps)
    life = Lives(store, agenda, clock)
    life.gates = settings.feature_gates
    store.subscribe(life.on_write)
    for pod in scenario.running_pods:
        life.started(pod)
    add_pending(scenario.pending_pods)
    controllers.run_pending()
    await cluster.wait_delivered()

    total = len(pending_keys)
    decided = 0
    queue = scheduler.queue
    horizon = default_horizon(scenario)
    if settings.until is not None:
        horizon = Horizon(settings.until, "--until", endless=horizon.endless)

    def backoff_end() -> float:
        # Pods backing off are retried for settings.horizon after each event, never past --until.
        end = clock.now + settings.horizon
        return end if settings.until is None else min(end, settings.until)

    horizon_end = backoff_end()

    async def settle() -> None:
        """Schedule until nothing is left to try before the next event on the agenda."""
        nonlocal decided
        while True:
            qpi = queue.pop_nowait()
            if qpi is not None:
                first = qpi.attempts == 1
                await scheduler.schedule_one(qpi)
                if first:
                    decided += 1
                    if progress is not None:
                        progress(decided, max(total, decided))
                # Let binding cycles and informer deliveries make progress as they would.
                await asyncio.sleep(0)
                continue
            await scheduler.wait_for_bindings()
            await cluster.wait_delivered()
            if controllers.pending():
                # Pods were bound or deleted (preemption): replicas come back, ordinals go on.
                controllers.run_pending()
                await cluster.wait_delivered()
            if queue.has_active():
                continue
            expiry = queue.next_backoff_expiry()
            upcoming = agenda.next_time()
            if expiry is not None and expiry <= horizon_end and (upcoming is None or expiry <= upcoming):
                clock.advance_to(expiry)
                queue.flush_backoff_completed()
                continue
            break

    await settle()
    timeline = [life.moment("start", pending_keys, scheduler)] if agenda or life.any else []
    stopped = ""
    events = 0
    while agenda:
        upcoming = agenda.next_time()
        assert upcoming is not None
        # A pod deleted gracefully terminates even past the default horizon (it happens once and
        # frees what a preemptor waits for); --until is a hard stop.
        if upcoming > horizon.at and (settings.until is not None or agenda.next_kind() != "terminated"):
            stopped = (
                f"stopped at the horizon {format_seconds(horizon.at)} ({horizon.why}): "
                f"{len(agenda)} event(s) still due, the next at {format_seconds(upcoming)}"
            )
            if horizon.endless:
                stopped += "; workloads recreate pods that have a lifetime, so events never run out"
            if settings.until is None:
                stopped += " (--until sets another horizon)"
            break
        if events >= settings.max_events:
            stopped = f"stopped after {events} events at {format_seconds(clock.now)}: {len(agenda)} event(s) still due"
            break
        events += 1
        at, what, item = agenda.pop()
        clock.advance_to(at)
        horizon_end = backoff_end()
        if clock_progress is not None:
            clock_progress(clock.now, horizon.at)
        if what == "step":
            sub = item.scenario
            known = len(problems)
            if sub is not None:
                for obj in [*sub.namespaces, *sub.priority_classes]:
                    if obj["kind"] == "PriorityClass":
                        priority_classes[obj["metadata"]["name"]] = obj
                    create_or_replace(store, obj["kind"], obj)
                for obj in [*sub.others, *sub.nodes]:
                    create_or_replace(store, obj["kind"], obj)
                for pod in sub.running_pods:
                    if create_pod(pod, item) is not None:
                        life.started(pod)
                add_pending(sub.pending_pods, item)
            problems.extend(life.apply_step(item))
            event = item.describe() + "".join(f"; {p.action} {p.obj} refused" for p in problems[known:])
        else:
            event = life.happen(what, item)
        await cluster.wait_delivered()
        queue.flush_backoff_completed()
        await settle()
        timeline.append(life.moment(event, pending_keys, scheduler))
    if stopped:
        if stopped.startswith("stopped at the horizon"):
            clock.advance_to(horizon.at)
        timeline.append(life.moment(stopped, pending_keys, scheduler))
    if clock_progress is not None:
        clock_progress(horizon.at if not stopped else clock.now, horizon.at)
    await scheduler.wait_for_bindings()
    await cluster.wait_delivered()
    elapsed = time.perf_counter() - started
    if progress is not None:
        progress(decided, max(total, decided))
    result = build_report(scenario, scheduler, store, pending_keys, unknown, elapsed, clock.now, life)
    groups = pod_groups_report(store, result.pods, settings.feature_gates.enabled("GenericWorkload"))
    if groups:
        result.pod_groups = groups
        result.summary["podGroups"] = group_counts(groups)
    if timeline:
        result.summary["timeline"] = timeline
    if problems:
        result.summary["stepProblems"] = [p.as_json() for p in problems]
    if stopped:
        result.summary["stopped"] = stopped
        result.summary["horizon"] = horizon.at
    jobs = jobs_report(store, jobs_done)
    if jobs:
        result.summary["jobs"] = jobs
    return result


__all__ = ["MAX_EVENTS", "ManualClock", "ScenarioError", "SimulationResult", "SimulationSettings", "simulate"]
