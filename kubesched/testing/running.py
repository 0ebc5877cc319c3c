"""A whole scheduler over an in-memory cluster, in the test's process and event loop.

    async with running_scheduler(plugins=[MyPlugin], nodes=[make_node("n1")], pods=[make_pod("p")]) as s:
        assert await s.wait_bound("p") == "n1"
        s.add(make_pod("big").req(cpu="64"))
        assert "Insufficient cpu" in await s.wait_unschedulable("big")
        assert s.events("big")[-1]["reason"] == "FailedScheduling"

The scheduler is the real one (queue, cache, plugins, binding cycles, events and conditions
written to the store); only the cluster is in memory. With ``loop=True`` (the default) its loop
runs as a task, as ``kubesched run`` runs it; with ``loop=False`` nothing is scheduled until the
test steps it (:meth:`Harness.run_once`, :meth:`Harness.schedule_next`, :meth:`Harness.run_all`),
which is how tests look between two cycles.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from typing import Any

from kubesched.cluster.memory import InMemoryCluster
from kubesched.cluster.store import Store
from kubesched.config import SchedulerConfig, load_config, parse_config
from kubesched.config.models import API_VERSION, KIND
from kubesched.framework.features import FeatureGates
from kubesched.runtime.framework import PluginRef, ProfileSpec
from kubesched.runtime.registry import Registry, default_registry
from kubesched.scheduler import PodResult, Scheduler, SchedulerOptions
from kubesched.sim.scenario.loading import load_scenario_into
from kubesched.sim.scenario.reading import Scenario, load_scenario
from kubesched.tasks import TaskSet
from kubesched.testing.builders import NodeBuilder, PodBuilder
from kubesched.testing.resources import put_objects, replace_objects

ObjectLike = PodBuilder | NodeBuilder | dict[str, Any]


class Recorder:
    """Collects ``(plugin, point, detail)`` calls, so that a test can assert their order: give it
    to test plugins, which call ``recorder(self.name, "Filter", node.name)``."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, Any]] = []

    def __call__(self, plugin: str, point: str, detail: Any = None) -> None:
        self.calls.append((plugin, point, detail))

    def points(self, point: str) -> list[str]:
        """The plugins called at ``point``, in order."""
        return [p for p, pt, _ in self.calls if pt == point]


def registry_with(*classes: type) -> Registry:
    """The installed plugins plus ``classes`` (a test's plugins; one of an installed name replaces it)."""
    names = {c.name for c in classes}  # type: ignore[attr-defined]
    reg = Registry()
    for e in default_registry().entries():
        if e.name not in names:
            reg.register(e.cls, e.name, e.distribution)
    for cls in classes:
        reg.register(cls)
    return reg


#: The points whose plugins carry a weight (1 unless given).
WEIGHTED = ("score", "placementScore")


def profile(name: str = "default-scheduler", **points: list[Any]) -> ProfileSpec:
    """A profile with PrioritySort and DefaultBinder plus the given points:
    ``profile(filter=["A", "B"], score=[("C", 2)])``."""
    plugins: dict[str, list[PluginRef]] = {
        "queueSort": [PluginRef("PrioritySort")],
        "bind": [PluginRef("DefaultBinder")],
    }
    for point, refs in points.items():
        plugins[point] = [
            PluginRef(r[0], r[1]) if isinstance(r, tuple) else PluginRef(r, 1 if point in WEIGHTED else 0) for r in refs
        ]
    return ProfileSpec(name, plugins)


class MemoryCluster:
    """An empty in-memory cluster: ``store`` holds the objects (what an API server would),
    ``cluster`` is what a scheduler or a plugin's handle watches and writes through."""

    def __init__(self) -> None:
        self.store = Store()
        self.cluster = InMemoryCluster(self.store)

    def add(self, *objs: ObjectLike) -> None:
        """Create objects (builders or dicts with a ``kind``): CustomResourceDefinitions and
        custom objects too (see :func:`~kubesched.testing.resources.put_objects`)."""
        put_objects(self.store, objs)

    def get(self, kind: str, name: str, namespace: str | None = "default") -> dict[str, Any]:
        """An object (``namespace=None`` for cluster-scoped kinds)."""
        return self.store.get(kind, namespace, name)


class Harness:
    """A scheduler over an in-memory cluster: add objects, schedule, read what happened.

    ``scheduler`` is the :class:`kubesched.scheduler.Scheduler`, ``cluster`` its
    ``InMemoryCluster``, ``store`` the objects (what an API server would hold)."""

    def __init__(self, scheduler: Scheduler, cluster: InMemoryCluster, store: Store) -> None:
        self.scheduler = scheduler
        self.cluster = cluster
        self.store = store
        self._loop_task: asyncio.Task[None] | None = None
        #: The scheduling loop's owner, once :meth:`start_loop` has run it.
        self._tasks = TaskSet("test harness")

    # --- the cluster ----------------------------------------------------------------------------
    def add(self, *objs: ObjectLike) -> None:
        """Create objects (builders or dicts with a ``kind``) in the cluster: custom objects too,
        which plugins' informers (``handle.informer_for``) deliver."""
        put_objects(self.store, objs)

    def update(self, *objs: ObjectLike) -> None:
        """Replace objects in the cluster (a quota raised, a label changed): the scheduler and
        plugins' informers see the updates."""
        replace_objects(self.store, objs)

    def delete(self, kind: str, name: str, namespace: str | None = "default") -> None:
        """Delete an object (``namespace=None`` for cluster-scoped kinds)."""
        self.store.delete(kind, namespace if kind != "Node" else None, name)

    def pod(self, name: str, namespace: str = "default") -> dict[str, Any]:
        return self.store.get("Pod", namespace, name)

    def node_of(self, name: str, namespace: str = "default") -> str | None:
        """The node ``name`` is bound to, or ``None``."""
        node: str | None = self.pod(name, namespace)["spec"].get("nodeName")
        return node

    def placements(self) -> dict[str, str | None]:
        """Every pod (``name``, or ``namespace/name`` outside ``default``) and its node or ``None``."""
        out: dict[str, str | None] = {}
        for p in self.store.list("Pod")[0]:
            meta = p["metadata"]
            ns = meta.get("namespace") or "default"
            out[meta["name"] if ns == "default" else f"{ns}/{meta['name']}"] = p["spec"].get("nodeName")
        return out

    def events(self, name: str, namespace: str = "default") -> list[dict[str, Any]]:
        """The Events about pod ``name`` (Scheduled, FailedScheduling, Preempted, ...), oldest first."""
        return self.cluster.events_for(self.pod(name, namespace))

    def failures(self, name: str, namespace: str = "default") -> list[str]:
        """The messages of ``name``'s FailedScheduling events, oldest first."""
        return [e["message"] for e in self.events(name, namespace) if e["reason"] == "FailedScheduling"]

    def condition(self, name: str, type: str = "PodScheduled", namespace: str = "default") -> dict[str, Any] | None:
        """The pod's condition of ``type``, if it has one."""
        conditions = (self.pod(name, namespace).get("status") or {}).get("conditions") or ()
        return next((c for c in conditions if c.get("type") == type), None)

    def pod_group_condition(self, name: str, namespace: str = "default") -> dict[str, Any] | None:
        """The PodGroup's ``PodGroupInitiallyScheduled`` condition, if the scheduler wrote one."""
        pg = self.store.get("PodGroup", namespace, name)
        conditions = (pg.get("status") or {}).get("conditions") or ()
        return next((c for c in conditions if c["type"] == "PodGroupInitiallyScheduled"), None)

    def pod_group_members(self, name: str, namespace: str = "default") -> dict[str, str | None]:
        """The pods of PodGroup ``name`` (``spec.schedulingGroup.podGroupName``) and their nodes
        (``None`` while pending), by pod name."""
        out: dict[str, str | None] = {}
        for p in self.store.list("Pod", namespace)[0]:
            if ((p.get("spec") or {}).get("schedulingGroup") or {}).get("podGroupName") == name:
                out[p["metadata"]["name"]] = p["spec"].get("nodeName")
        return out

    def result(self, name: str, namespace: str = "default") -> PodResult | None:
        """The scheduler's record of the pod's last attempt: ``node``, ``phase`` (Scheduled,
        Unschedulable, Error), ``message``, ``attempts`` and each plugin's results (kept when
        the options' ``record_results`` is on, as it is here by default)."""
        return self.scheduler.results.get(f"{namespace}/{name}")

    def waiting(self) -> set[str]:
        """The names of the pods waiting at Permit."""
        return {wp.pod_info.name for wp in self.scheduler.waiting_pods}

    def unschedulable(self, name: str, namespace: str = "default") -> str | None:
        """Why the pod's last attempt failed (its message), or ``None`` if it did not fail."""
        record = self.result(name, namespace)
        if record is not None and record.phase in ("Unschedulable", "Error"):
            return record.message
        cond = self.condition(name, "PodScheduled", namespace)
        if cond is not None and cond.get("status") == "False":
            return str(cond.get("message", ""))
        return None

    # --- stepping -------------------------------------------------------------------------------
    async def settle(self) -> None:
        """Let informer deliveries and the binding cycles under way finish."""
        await self.cluster.wait_delivered()
        await self.scheduler.wait_for_bindings()
        await self.cluster.wait_delivered()

    async def schedule_next(self) -> str | None:
        """Run the scheduling cycle of the next active pod, leaving its binding cycle running (it
        may wait at Permit): its name, or ``None`` when no pod is active."""
        await self.cluster.wait_delivered()
        qpi = self.scheduler.queue.pop_nowait()
        if qpi is None:
            return None
        await self.scheduler.schedule_one(qpi)
        for _ in range(3):
            await asyncio.sleep(0)
        name: str = qpi.pod_info.name
        return name

    async def run_once(self) -> bool:
        """Schedule one pod if any is active; let its binding finish."""
        await self.settle()
        qpi = self.scheduler.queue.pop_nowait()
        if qpi is None:
            return False
        await self.scheduler.schedule_one(qpi)
        await self.settle()
        return True

    async def run_all(self, limit: int = 10_000) -> int:
        """Schedule active pods one at a time until none is left (at most ``limit``): how many."""
        n = 0
        while n < limit and await self.run_once():
            n += 1
        return n

    # --- waiting for an outcome -----------------------------------------------------------------
    async def wait_for(self, condition: Callable[[], Any], timeout: float = 10.0) -> Any:
        """Until ``condition()`` is truthy (its value), scheduling meanwhile: the loop does when
        it runs, else the active pods are stepped through here, binding cycles given their time
        and finished backoffs flushed. ``TimeoutError`` after ``timeout`` seconds."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            await self.cluster.wait_delivered()
            value = condition()
            if value:
                return value
            if loop.time() >= deadline:
                raise TimeoutError(f"not reached within {timeout}s")
            if self._loop_task is None and await self.schedule_next() is not None:
                continue
            await self.scheduler.wait_for_bindings(timeout=min(0.01, max(0.0, deadline - loop.time())))
            if self._loop_task is None:
                self.scheduler.queue.flush_backoff_completed()
            await asyncio.sleep(0.001)

    async def wait_bound(self, name: str, namespace: str = "default", timeout: float = 10.0) -> str:
        """Until pod ``name`` is bound: its node. ``AssertionError`` if it is found unschedulable
        first (with the reason)."""

        def bound() -> str | None:
            node = self.node_of(name, namespace)
            if node is None and (why := self.unschedulable(name, namespace)) is not None:
                raise AssertionError(f"pod {namespace}/{name} is unschedulable: {why}")
            return node

        node: str = await self.wait_for(bound, timeout)
        return node

    async def wait_unschedulable(self, name: str, namespace: str = "default", timeout: float = 10.0) -> str:
        """Until an attempt to schedule pod ``name`` fails: the reason (the FailedScheduling
        message). ``AssertionError`` if it is bound first."""

        def failed() -> str | None:
            if (node := self.node_of(name, namespace)) is not None:
                raise AssertionError(f"pod {namespace}/{name} was bound to {node}")
            return self.unschedulable(name, namespace)

        message: str = await self.wait_for(failed, timeout)
        return message

    async def wait_pod_group_condition(
        self, name: str, status: str | None = None, namespace: str = "default", timeout: float = 10.0
    ) -> dict[str, Any]:
        """Until the PodGroup's ``PodGroupInitiallyScheduled`` condition is written (with
        ``status`` ``"True"`` or ``"False"``, when given): the condition (``status``,
        ``reason``: Scheduled, Unschedulable or SchedulerError, ``message``)."""

        def written() -> dict[str, Any] | None:
            cond = self.pod_group_condition(name, namespace)
            if cond is None or (status is not None and cond.get("status") != status):
                return None
            return cond

        cond: dict[str, Any] = await self.wait_for(written, timeout)
        return cond

    async def wait_pod_group_scheduled(
        self, name: str, namespace: str = "default", timeout: float = 10.0
    ) -> dict[str, str]:
        """Until the PodGroup is placed (its condition True) and its members are bound: their
        nodes by pod name. ``AssertionError`` if the group is found unschedulable first."""

        def placed() -> dict[str, str] | None:
            cond = self.pod_group_condition(name, namespace)
            if cond is None:
                return None
            if cond.get("status") != "True":
                raise AssertionError(f"pod group {namespace}/{name} is unschedulable: {cond.get('message', '')}")
            members = self.pod_group_members(name, namespace)
            if not members or any(node is None for node in members.values()):
                return None
            return {pod: node for pod, node in members.items() if node is not None}

        nodes: dict[str, str] = await self.wait_for(placed, timeout)
        return nodes

    async def wait_idle(self, timeout: float = 10.0) -> None:
        """Until no pod is active, none is being scheduled and no binding cycle is running."""

        def idle() -> bool:
            return not self.scheduler.queue.has_active() and not self.scheduler.in_flight()

        await self.wait_for(idle, timeout)

    # --- the loop -------------------------------------------------------------------------------
    def start_loop(self) -> None:
        """Run the scheduling loop as a task (the scheduler has started)."""
        if self._loop_task is None:
            self._loop_task = self._tasks.spawn(self.scheduler.run(start=False), name="scheduling loop")

    async def stop(self, grace: float = 5.0) -> None:
        """Stop the scheduler (and its loop): the pods waiting at Permit are rejected (the test
        is over), then binding cycles get ``grace`` seconds."""
        for wp in list(self.scheduler.waiting_pods):
            for plugin in wp.pending_plugins()[:1]:
                wp.reject(plugin, "the scheduler is stopping")
        await self.scheduler.stop(grace)
        if self._loop_task is not None:
            task, self._loop_task = self._loop_task, None
            with contextlib.suppress(asyncio.CancelledError):
                await task


async def make_harness(
    profiles: Iterable[ProfileSpec],
    registry: Registry | None = None,
    options: SchedulerOptions | None = None,
    objs: Iterable[Any] = (),
    clock: Any = None,
    observer: Any = None,
) -> Harness:
    """A started scheduler of ``profiles`` over a new in-memory cluster holding ``objs``, stepped
    by the test (its loop is not running). Options: seed 1, results recorded, unless given;
    ``observer`` receives what the scheduler reports (its metrics)."""
    store = Store()
    cluster = InMemoryCluster(store)
    h = Harness(None, cluster, store)  # type: ignore[arg-type]
    h.add(*objs)
    kwargs: dict[str, Any] = {}
    if clock is not None:
        kwargs["clock"] = clock
    if observer is not None:
        kwargs["observer"] = observer
    sched = Scheduler(
        list(profiles), cluster, options or SchedulerOptions(seed=1, record_results=True), registry, **kwargs
    )
    h.scheduler = sched
    await sched.start()
    await asyncio.sleep(0)
    return h


def config_enabling(plugins: Iterable[type]) -> dict[str, Any]:
    """A configuration whose default profile also enables ``plugins`` under multiPoint (a plugin
    with a QueueSort replaces PrioritySort)."""
    classes = list(plugins)
    plugin_sets: dict[str, Any] = {"multiPoint": {"enabled": [{"name": c.name} for c in classes]}}  # type: ignore[attr-defined]
    if any(callable(getattr(c, "less", None)) for c in classes):
        plugin_sets["queueSort"] = {"disabled": [{"name": "PrioritySort"}]}
    return {"apiVersion": API_VERSION, "kind": KIND, "profiles": [{"plugins": plugin_sets}]}


def _profiles(
    config: str | os.PathLike[str] | Mapping[str, Any] | SchedulerConfig | None,
    plugins: list[type],
    registry: Registry,
    gates: FeatureGates,
) -> list[ProfileSpec]:
    if isinstance(config, SchedulerConfig):
        return config.profiles
    if config is None:
        return parse_config(config_enabling(plugins), registry=registry, feature_gates=gates).profiles
    if isinstance(config, Mapping):
        return parse_config(dict(config), registry=registry, feature_gates=gates).profiles
    return load_config(config, registry, gates).profiles


@contextlib.asynccontextmanager
async def running_scheduler(
    config: str | os.PathLike[str] | Mapping[str, Any] | SchedulerConfig | None = None,
    plugins: Iterable[type] = (),
    scenario: str | os.PathLike[str] | Scenario | None = None,
    nodes: Iterable[ObjectLike] = (),
    pods: Iterable[ObjectLike] = (),
    objects: Iterable[ObjectLike] = (),
    profiles: Iterable[ProfileSpec] | None = None,
    options: SchedulerOptions | None = None,
    extenders: Iterable[Any] = (),
    loop: bool = True,
    feature_gates: Mapping[str, bool] | FeatureGates | None = None,
    pod_termination: str = "immediate",
) -> AsyncIterator[Harness]:
    """A started scheduler over an in-memory cluster, stopped on the way out.

    ``plugins`` are classes the registry gets besides the installed ones. The profiles come
    from ``profiles``, else ``config`` (a KubeSchedulerConfiguration file, its decoded dict, or a
    loaded :class:`~kubesched.config.SchedulerConfig`), else the default profile with
    ``plugins`` enabled under multiPoint (see :func:`config_enabling`). The cluster holds the
    ``scenario`` (a file or a parsed Scenario, as ``simulate`` reads it) and ``objects``,
    ``nodes`` and ``pods`` (builders or dicts). ``options``: seed 1 and results recorded unless
    given; their feature gates are the configuration's too. ``extenders``: HTTP extenders
    (``kubesched.extender.HTTPExtender``) called after the plugins. ``loop=False`` leaves the
    stepping to the test. ``feature_gates``: ``{"GenericWorkload": True}`` sets those gates on
    top of the options' ones, a FeatureGates replaces them (pod groups are scheduled as groups
    with ``GenericWorkload`` on). ``pod_termination="graceful"``: a deleted pod on a node (a
    victim) stays Terminating, holding its node, until the test removes it — no kubelet runs, as in
    upstream's integration tests (:mod:`kubesched.cluster.termination`)."""
    classes = list(plugins)
    options = options or SchedulerOptions(seed=1, record_results=True)
    if feature_gates is not None:
        gates = (
            feature_gates
            if isinstance(feature_gates, FeatureGates)
            else options.feature_gates.replace(**dict(feature_gates))
        )
        options = dataclasses.replace(options, feature_gates=gates)
    registry = registry_with(*classes)
    specs = list(profiles) if profiles is not None else _profiles(config, classes, registry, options.feature_gates)
    store = Store()
    store.follow_gates(options.feature_gates)
    store.pod_termination = pod_termination
    if scenario is not None:
        load_scenario_into(store, scenario if isinstance(scenario, Scenario) else load_scenario(scenario))
    cluster = InMemoryCluster(store)
    h = Harness(Scheduler(specs, cluster, options, registry, extenders=extenders), cluster, store)
    h.add(*objects, *nodes, *pods)
    await h.scheduler.start()
    if loop:
        h.start_loop()
    try:
        yield h
    finally:
        await h.stop()
