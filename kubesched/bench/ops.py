"""The ops of a workload, run against a scheduler on the in-memory cluster: :class:`OpRunner`.

The scheduler gets its events from the store in-process (no HTTP, no serialization), as in
``python -m benchmarks.run``: what is measured is the scheduler and its plugins. With
``backend="http"`` the store is served by the embedded API server instead and the scheduler, in
a process of its own, is its client over HTTP (:mod:`kubesched.bench.served`,
:mod:`kubesched.bench.scheduler_side`): the scheduler and the API between. Every pod a workload
creates carries the measured profile's ``schedulerName``.

When are pods done? A pod is *decided* once it is bound, or once it sits in the unschedulable
pool (or is gated) with no nomination, the queue holding no active pod and no cycle in flight: a
plugin that rejects pods ends a run instead of hanging it (upstream waits for every pod to be
bound). A preemptor waiting for its victims stays nominated, so it is not decided until bound.
A member of a pod group its cycle rejected backs off with its group rather than waiting in the
pool (the group is tried again as it was): backing off so, found unschedulable, it is decided.
"""

from __future__ import annotations

import asyncio
import copy
import fnmatch
import gc
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kubesched.backend.queue import ACTIVE_Q, BACKOFF_Q, GATED_Q, UNSCHEDULABLE_Q
from kubesched.bench.errors import WorkloadError
from kubesched.bench.measure import Result, cpu_seconds, make_result
from kubesched.bench.model import (
    AllocClaims,
    Barrier,
    Churn,
    CreateAny,
    CreateNamespaces,
    CreateNodes,
    CreatePods,
    CreateResourceDriver,
    DeletePods,
    NodeAllocatable,
    Op,
    ReplayTrace,
    Sleep,
    StartCollecting,
    StopCollecting,
    WaitForPodGroups,
    Workload,
    has_labels,
)
from kubesched.bench.render import bound_volume, driver_slice, node_object, node_template, render_any
from kubesched.bench.scheduler_side import LocalScheduler, SchedulerProcess
from kubesched.bench.served import ServedCluster
from kubesched.bench.templates import decode, is_templated, read_file, read_template, type_name
from kubesched.bench.trace import trace_objects
from kubesched.cluster.base import ClusterError, Conflict, NotFound, watched_kinds
from kubesched.cluster.custom_resources import CRD_KIND
from kubesched.cluster.memory import InMemoryCluster
from kubesched.cluster.store import API_VERSIONS, Store, json_copy
from kubesched.config import SchedulerConfig
from kubesched.errors import KubeschedError
from kubesched.framework.features import FeatureGates
from kubesched.objects import Obj
from kubesched.scheduler import Scheduler, SchedulerOptions
from kubesched.sim.apiserver.customresources import admit_definition
from kubesched.sim.controllers import ControllerManager
from kubesched.sim.scenario.custom import is_custom_kind, read_custom
from kubesched.tasks import TaskSet

#: ``progress(done, total)``: pods decided of the pods the workload creates (churn aside).
Progress = Callable[[int, int], None]

#: Name prefix of the churn objects: never measured, never waited for.
CHURN_PREFIX = "churn-"
#: Seconds between two looks at the scheduler while waiting.
_POLL = 0.005
#: Objects an op makes between two looks at the run's deadline (``--timeout``).
_CLOCK_EVERY = 256
#: The API group of DRA's kinds: once a workload stores one, the resource-claim controller runs.
_DRA_GROUP = "resource.k8s.io/"


@dataclass
class _Window:
    """Pods measured together: created by one ``collectMetrics`` op, or between
    ``startCollectingMetrics`` and ``stopCollectingMetrics``."""

    name: str
    namespaces: tuple[str, ...]
    t0: float
    nodes: int
    init_pods: int
    keys: list[str] = field(default_factory=list)
    lag_started: bool = False
    #: Only pods with these labels are measured (startCollectingMetrics' labelSelector).
    labels: tuple[tuple[str, str], ...] = ()
    #: The run's process's CPU seconds when the window opened (:func:`cpu_seconds`): with the
    #: scheduler apart, what the API server and the ops cost.
    cpu0: float = 0.0
    #: The pod groups (``namespace/name``) the measured pods belong to.
    groups: set[str] = field(default_factory=set)

    def takes(self, pod: Obj) -> bool:
        """Whether ``pod`` is measured here: of the window's namespaces, with its labels."""
        return (not self.namespaces or pod["metadata"]["namespace"] in self.namespaces) and has_labels(pod, self.labels)


class OpRunner:
    """Runs one workload's ops once against a fresh store and scheduler; :meth:`run` returns one
    :class:`Result` per measured set of pods."""

    def __init__(
        self,
        w: Workload,
        cfg: SchedulerConfig,
        scheduler_name: str,
        gates: FeatureGates,
        progress: Progress | None = None,
        timeout: float = 600.0,
        backend: str = "memory",
        batch: bool = True,
        placements: dict[str, str] | None = None,
    ) -> None:
        self.w = w
        #: ``namespace/name`` -> node of every pod the workload made (churn aside) once bound.
        self.placements = placements
        self.scheduler_name = scheduler_name
        self.progress = progress
        self.timeout = timeout
        self.backend = backend
        self.store = Store(history=1000)
        self.store.follow_gates(gates)
        m = cfg.model
        options = SchedulerOptions(
            parallelism=m.parallelism,
            percentage_of_nodes_to_score=m.percentageOfNodesToScore,
            seed=1,
            batch=batch,
            feature_gates=gates,
            gc_pacing=True,  # as `kubesched run` has it
        )
        #: ``http``: the store behind an embedded API server, the scheduler (a process of its
        #: own, forked here while the store is empty) its client over HTTP.
        self.served = ServedCluster(self.store, gates) if backend == "http" else None
        self.memory: InMemoryCluster | None = None
        self.sched: LocalScheduler | SchedulerProcess
        if self.served is not None:
            self.sched = SchedulerProcess(cfg.profiles, options, watched_kinds(gates))
        else:
            self.memory = InMemoryCluster(self.store)
            self.sched = LocalScheduler(Scheduler(cfg.profiles, self.memory, options))
        #: Pods created (churn aside): ``namespace/name`` -> uid, and those bound.
        self.pods: dict[str, str] = {}
        self.bound: set[str] = set()
        #: How many of them were taken away (deleted) unbound.
        self._taken = 0
        self.total = sum(op.count for op in w.ops if isinstance(op, CreatePods))
        self.results: list[Result] = []
        self._nodes = 0
        self._pod_names = 0
        self._namespaces: set[str] = set()
        self._window: _Window | None = None
        self._churn: list[asyncio.Task[None]] = []
        #: The run's tasks (the scheduling loop, churn, deletions not waited for, the loop lag
        #: watch): none outlives :meth:`run`.
        self._tasks = TaskSet("benchmark run")
        #: The resource-claim controller (claims from pods' templates), from the first DRA object on.
        self._controllers: ControllerManager | None = None
        self._gates = gates
        self._deadline = 0.0
        self._shown = -1.0
        self.store.subscribe(self._on_event)

    def _on_event(self, etype: str, kind: str, obj: Obj, old: Obj | None) -> None:
        if kind == "Pod" and etype == "MODIFIED" and old is not None:
            if obj["spec"].get("nodeName") and not old["spec"].get("nodeName"):
                meta = obj["metadata"]
                key = f"{meta.get('namespace')}/{meta['name']}"
                if key in self.pods:
                    self.bound.add(key)
                    if self.placements is not None:
                        self.placements[key] = obj["spec"]["nodeName"]

    async def run(self) -> list[Result]:
        """Every op in order, then the churn stopped and the scheduler with it."""
        self._deadline = time.monotonic() + self.timeout
        async with self._tasks:
            try:
                if self.served is not None:
                    await self.served.start()
                    assert isinstance(self.sched, SchedulerProcess)
                    await self.sched.start(str(self.served.kubeconfig))
                else:
                    assert isinstance(self.sched, LocalScheduler)
                    await self.sched.start(self._tasks)
                for index, op in enumerate(self.w.ops):
                    await self._do(op, index)
            finally:
                for task in self._churn:
                    task.cancel()
                await asyncio.gather(*self._churn, return_exceptions=True)
                await self.sched.stop()
                if self._controllers is not None:
                    await self._controllers.stop()
                if self.served is not None:
                    await self.served.stop()
                # What the windows froze is the collector's again (a run in a long-lived process).
                gc.unfreeze()
        if self.progress is not None:
            self.progress(self.total, self.total)
        return self.results

    async def _do(self, op: Op, index: int) -> None:
        if isinstance(op, CreateNodes):
            self._create_nodes(op)
        elif isinstance(op, CreateNamespaces):
            labels = (read_template(op.template, "Namespace")["metadata"].get("labels") or {}) if op.template else {}
            for i in range(op.count):
                self._in_time(i, "createNamespaces")
                self._namespace(f"{op.prefix}-{i}", labels)
        elif isinstance(op, CreatePods):
            await self._create_pods(op)
        elif isinstance(op, CreateAny):
            for i in range(op.count):
                self._in_time(i, "createAny")
                self._create_any(op, i)
            if op.kind is not None:  # createPodGroups: done once the scheduler has them all
                await self._delivered()
        elif isinstance(op, CreateResourceDriver):
            self._resource_driver(op)
        elif isinstance(op, AllocClaims):
            from kubesched.bench.claims import allocate_claims  # the DRA allocator: only where asked

            await self._delivered()
            allocate_claims(self.store, op.namespace, self._gates)
        elif isinstance(op, WaitForPodGroups):
            await self._delivered()
            have = len(self.store.list("PodGroup", op.namespace)[0])
            if have < op.count:
                raise WorkloadError(
                    f"{self.w.name}: waitForPodGroups: {op.count} PodGroups wanted in {op.namespace}, there are {have}"
                )
        elif isinstance(op, DeletePods):
            if op.skip_wait:
                self._churn.append(self._tasks.spawn(self._delete_pods(op), name="deletePods"))
            else:
                await self._delete_pods(op)
        elif isinstance(op, Churn):
            templates = [_churn_template(p) for p in op.templates]
            self._churn.append(self._tasks.spawn(self._churn_loop(templates, op), name="churn"))
        elif isinstance(op, Barrier):
            keys = [k for k in self.pods if not op.namespaces or k.split("/", 1)[0] in op.namespaces]
            if op.labels:
                keys = [k for k in keys if self._podhas_labels(k, op.labels)]
            await self._wait(keys, attempted_only=op.stage == "Attempted")
        elif isinstance(op, Sleep):
            left = self._deadline - time.monotonic()
            await asyncio.sleep(max(0.0, min(op.seconds, left)))
            if op.seconds > left:
                raise WorkloadError(
                    f"{self.w.name}: sleep of {op.seconds:g} s goes past {self.timeout:g} s (--timeout)"
                )
        elif isinstance(op, StartCollecting):
            await self._start_window(op.name or self.w.name, op.namespaces, op.labels)
        elif isinstance(op, StopCollecting):
            await self._stop_window()
        elif isinstance(op, ReplayTrace):
            await self._replay(op, index)

    def _create_nodes(self, op: CreateNodes) -> None:
        template = node_template(op)
        for i in range(op.count):
            self._in_time(i, "createNodes")
            node = node_object(template(i), op, i, self._nodes)
            self._nodes += 1
            self.store.create("Node", node)
            if op.allocatable is not None:
                self._csi_node(node["metadata"]["name"], op.allocatable)

    def _in_time(self, done: int, op: str) -> bool:
        """True, or a WorkloadError once the run's ``--timeout`` has passed (looked at every
        :data:`_CLOCK_EVERY` objects ``op`` makes, ``done`` so far)."""
        if done % _CLOCK_EVERY == 0 and time.monotonic() > self._deadline:
            raise WorkloadError(
                f"{self.w.name}: {op}: {done} objects made when the run reached {self.timeout:g} s (--timeout)"
            )
        return True

    def _csi_node(self, node: str, strategy: NodeAllocatable) -> None:
        """The CSINode upstream's nodeAllocatableStrategy makes for ``node``."""
        drivers = [
            {"name": driver, "nodeID": node, **({"allocatable": {"count": count}} if count is not None else {})}
            for driver, count in strategy.drivers
        ]
        meta: Obj = {"name": node}
        if strategy.migrated:
            meta["annotations"] = {"storage.alpha.kubernetes.io/migrated-plugins": ",".join(strategy.migrated)}
        self.store.create(
            "CSINode",
            {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": meta, "spec": {"drivers": drivers}},
        )

    def _create_any(self, op: CreateAny, index: int) -> None:
        """One object of ``op``'s template: checked as the API server checks it (a definition's
        fields; a custom object against its definition's schema) and stored."""
        obj = render_any(op, index)
        if op.kind is not None and obj.get("kind") != op.kind:
            raise WorkloadError(f"{op.template}.kind: expected a {op.kind} template, got {obj.get('kind')!r}")
        self._store_any(obj, op.namespace, f"{op.template} (object {index})")

    def _resource_driver(self, op: CreateResourceDriver) -> None:
        """As upstream's createResourceDriver: a slice of ``op.max_claims`` devices for each
        matching node, in a pool of its own named after the node."""
        nodes, _ = self.store.list("Node")
        for i, node in enumerate(
            n["metadata"]["name"] for n in nodes if fnmatch.fnmatchcase(n["metadata"]["name"], op.nodes)
        ):
            self._in_time(i, "createResourceDriver")
            self._store_any(driver_slice(op.driver, node, op.max_claims), "", f"createResourceDriver (node {node})")

    def _claim_controller(self) -> None:
        """Start the resource-claim controller (upstream's scheduler_perf runs it with DRA)."""
        if self._controllers is None:
            self._controllers = ControllerManager(self.store, self._gates)
            self._controllers.start()

    def _store_any(self, obj: Obj, namespace: str, where: str) -> tuple[str, str, str | None]:
        """``obj`` (any kind createAny makes) checked and stored: a namespaced kind in
        ``namespace`` if one is given, else in its own or ``default``. Returns its store kind,
        name and namespace (what deleting it takes)."""
        kind = obj.get("kind")
        if not isinstance(kind, str):
            raise WorkloadError(f"{where}.kind: expected a kind, got {kind!r}")
        meta = obj.setdefault("metadata", {})
        if not isinstance(meta, dict):
            raise WorkloadError(f"{where}.metadata: expected a mapping, got {type_name(meta)}")
        for field_name in ("name", "generateName", "namespace"):
            if meta.get(field_name) is not None and not isinstance(meta[field_name], str):
                raise WorkloadError(f"{where}.metadata.{field_name}: expected a string, got {meta[field_name]!r}")
        if kind == CRD_KIND:
            made = self.store.create(CRD_KIND, admit_definition(obj, None, self.store.custom_resources))
            return CRD_KIND, made["metadata"]["name"], None
        if namespace:
            meta["namespace"] = namespace
        if is_custom_kind(obj):
            try:
                obj, _ = read_custom(obj, self.store.custom_resources, where)
            except KubeschedError as exc:
                raise WorkloadError(str(exc)) from None
            key = self.store.custom_resources.store_key_for(obj["apiVersion"], str(kind))
            if key is None:  # read_custom refuses a kind no definition serves; kept for the types
                raise WorkloadError(f"{where}: no CustomResourceDefinition serves {kind}")
            kind = key
        elif kind not in API_VERSIONS:
            raise WorkloadError(f"{where}.kind: {kind!r} is not a kind kubesched bench can create")
        if self.store.cluster_scoped(str(kind)):
            meta.pop("namespace", None)
        else:
            self._namespace(meta.setdefault("namespace", "default"))
        if str(obj.get("apiVersion", "")).startswith(_DRA_GROUP):
            self._claim_controller()
        try:
            made = self.store.create(str(kind), obj)
        except ClusterError as exc:  # no name, or the name taken
            raise WorkloadError(f"{where}: {exc}") from None
        return str(kind), made["metadata"]["name"], made["metadata"].get("namespace")

    async def _delivered(self) -> None:
        """Until every change made so far has reached the scheduler (over its watches, over HTTP),
        or a WorkloadError once the run's ``--timeout`` has passed."""
        if self.served is not None:
            assert isinstance(self.sched, SchedulerProcess)
            waiting = self.served.wait_delivered(self.sched.informer_versions)
        elif self.memory is not None:
            waiting = self.memory.wait_delivered(meanwhile=False)
        else:
            return
        try:
            await asyncio.wait_for(waiting, max(0.0, self._deadline - time.monotonic()))
        except TimeoutError:
            raise WorkloadError(
                f"{self.w.name}: the scheduler had not seen the workload's changes when the run reached "
                f"{self.timeout:g} s (--timeout)"
            ) from None

    def _namespace(self, name: str, labels: dict[str, str] | None = None) -> None:
        if name not in self._namespaces:
            self._namespaces.add(name)
            meta: Obj = {"name": name, "labels": dict(labels)} if labels else {"name": name}
            try:
                self.store.create("Namespace", {"apiVersion": "v1", "kind": "Namespace", "metadata": meta})
            except Conflict:
                pass  # one every API server has (default, kube-system): the served store has them

    def _pod(self, template: Obj, namespace: str) -> Obj:
        # The store copies what it is given: the template's nested parts may be shared here.
        meta = dict(template["metadata"])
        generate = meta.pop("generateName", None)
        meta["name"] = f"{generate or (meta.get('name', 'pod') + '-')}{self._pod_names}"
        meta["namespace"] = namespace
        self._pod_names += 1
        return {**template, "metadata": meta, "spec": {**template["spec"], "schedulerName": self.scheduler_name}}

    async def _create_pods(self, op: CreatePods) -> None:
        if op.steady_seconds is not None:
            await self._steady_pods(op, op.steady_seconds)
            return
        self._namespace(op.namespace)
        # Made before the clock starts: the templates are the workload's doing, not the scheduler's.
        if is_templated(op.template):  # {{.Index}}, {{.Count}}: one rendering a pod
            params = dict(op.params)
            pods = [
                self._pod(read_template(op.template, "Pod", {**params, "Index": i, "Count": op.count}), op.namespace)
                for i in range(op.count)
                if self._in_time(i, "createPods")
            ]
        else:
            template = read_template(op.template, "Pod")
            pods = [self._pod(template, op.namespace) for i in range(op.count) if self._in_time(i, "createPods")]
        if op.volume_templates is not None:
            self._bound_claims(op, pods)
        await self._submit(pods, op.collect_metrics, op.skip_wait)

    async def _replay(self, op: ReplayTrace, index: int) -> None:
        """The trace's nodes, then its pods (read before the clock starts) all at once."""
        nodes, pods = trace_objects(op, self.scheduler_name, f"{self.w.name}: workloadTemplate[{index}] (replayTrace)")
        for i, node in enumerate(nodes):
            self._in_time(i, "replayTrace")
            self.store.create("Node", node)
        self._nodes += len(nodes)
        self.total += len(pods)
        for namespace in {p["metadata"]["namespace"] for p in pods}:
            self._namespace(namespace)
        await self._submit(pods, op.collect_metrics, skip_wait=False)

    async def _submit(self, pods: list[Obj], collect_metrics: bool, skip_wait: bool) -> None:
        """Create ``pods`` (named, in their namespaces) at once: measured in a window of their own
        with ``collect_metrics``, else in the window open (those of its namespaces and labels);
        then waited for until decided unless ``skip_wait``."""
        # Each pod whole and its own, handed over to the store as an API server hands over a
        # request's decoded body: copying it is not the scheduler's work either.
        pods = [json_copy(p) for p in pods]
        keys = [f"{p['metadata']['namespace']}/{p['metadata']['name']}" for p in pods]
        if collect_metrics:
            await self._start_window(self.w.name, ())
        window = self._window
        measured = [(k, p) for k, p in zip(keys, pods) if window.takes(p)] if window is not None else []
        if window is not None:
            window.groups.update(g for _, p in measured if (g := _group_of(p)))
        for i, (key, pod) in enumerate(zip(keys, pods)):
            self._in_time(i, "createPods")
            created = self.store.create("Pod", pod, owned=True)
            self.pods[key] = created["metadata"].get("uid", "")
        if window is not None:
            window.keys.extend(k for k, _ in measured)
        await asyncio.sleep(0)
        if window is not None:
            await self._start_lag(window)
        if collect_metrics:
            await self._stop_window()
        elif not skip_wait:
            await self._wait(keys)

    async def _steady_pods(self, op: CreatePods, seconds: float) -> None:
        """Upstream's steady state: ``op.count`` pods pending at all times for ``seconds``, each
        one bound deleted (its claims going with it) and a new one made; every pod made is
        measured, the window ending once the last ones are decided."""
        self._namespace(op.namespace)
        params = dict(op.params)
        made = 0
        await self._start_window(self.w.name, ())
        window = self._window
        assert window is not None
        keys = window.keys

        def make() -> str:
            nonlocal made
            values = {**params, "Index": made, "Count": op.count}
            pod = self._pod(read_template(op.template, "Pod", values), op.namespace)
            made += 1
            key = f"{op.namespace}/{pod['metadata']['name']}"
            self.pods[key] = self.store.create("Pod", pod)["metadata"].get("uid", "")
            keys.append(key)
            return key

        live = [make() for _ in range(op.count)]
        await self._start_lag(window)
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            for i, key in enumerate(live):
                if key in self.bound:
                    namespace, name = key.split("/", 1)
                    self._untrack(key)
                    try:
                        self.store.delete("Pod", namespace, name)
                    except NotFound:
                        pass  # gone already
                    live[i] = make()
            self.total = max(self.total, made)
            self._report()
            await asyncio.sleep(_POLL)
            self._check_scheduler()
            if time.monotonic() > self._deadline:
                raise WorkloadError(
                    f"{self.w.name}: steady state of {seconds:g} s went past {self.timeout:g} s (--timeout)"
                )
        await self._stop_window()

    def _bound_claims(self, op: CreatePods, pods: list[Obj]) -> None:
        """As upstream's createPods with volume templates: pod ``i``'s one volume is its own claim,
        stored bound to a volume of its own (:func:`bound_volume`). Made before the pods, outside
        the measured time."""
        assert op.volume_templates is not None
        pv_template = read_template(op.volume_templates[0], "PersistentVolume")
        pvc_template = read_template(op.volume_templates[1], "PersistentVolumeClaim")
        for i, pod in enumerate(pods):
            self._in_time(i, "createPods (volumes)")
            pvc, pv = bound_volume(pv_template, pvc_template, op.namespace, i)
            self.store.create("PersistentVolumeClaim", pvc)
            self.store.create("PersistentVolume", pv)
            claim = {"claimName": pvc["metadata"]["name"]}
            pod["spec"] = {**pod["spec"], "volumes": [{"name": "vol", "persistentVolumeClaim": claim}]}

    async def _delete_pods(self, op: DeletePods) -> None:
        """Delete the namespace's pods that carry ``op``'s labels, all at once or at its rate;
        they are no longer waited for."""
        pods, _ = self.store.list("Pod", op.namespace)
        doomed = [p["metadata"]["name"] for p in pods if has_labels(p, op.labels)]
        for name in doomed:
            self._untrack(f"{op.namespace}/{name}")
            try:
                self.store.delete("Pod", op.namespace, name)
            except NotFound:
                continue  # gone already
            if op.per_second:
                await asyncio.sleep(1.0 / op.per_second)
        await asyncio.sleep(0)

    async def _churn_loop(self, templates: list[Obj], op: Churn) -> None:
        """Upstream's churn: every interval, one object of each template (``create``, ``number``
        times or for ever), or the object of the next of ``number`` slots replaced (``recreate``)."""
        slots: list[list[tuple[str, str, str | None] | None]] = [[None] * op.number for _ in templates]
        tick = 0
        n = 0
        while op.mode == "recreate" or not op.number or tick < op.number:
            for i, template in enumerate(templates):
                if op.mode == "recreate":
                    old = slots[i][tick % op.number]
                    if old is not None:
                        try:
                            self.store.delete(old[0], old[2], old[1])
                        except NotFound:
                            pass  # gone already
                obj = copy.deepcopy(template)
                obj["metadata"].pop("generateName", None)
                made: tuple[str, str, str | None]
                if obj["kind"] == "Pod":
                    obj["metadata"]["name"] = f"{CHURN_PREFIX}{n}"
                    obj["metadata"]["namespace"] = "default"
                    obj["spec"]["schedulerName"] = self.scheduler_name
                    self.store.create("Pod", obj)
                    made = ("Pod", obj["metadata"]["name"], "default")
                elif obj["kind"] == "Node":
                    obj["metadata"]["name"] = f"{CHURN_PREFIX}node-{n}"
                    self.store.create("Node", obj)
                    made = ("Node", obj["metadata"]["name"], None)
                else:  # any other kind (a Service...): stored as createAny stores it
                    obj["metadata"]["name"] = f"{CHURN_PREFIX}{str(obj['kind']).lower()}-{n}"
                    made = self._store_any(obj, "", f"{op.templates[i]} (churn object {n})")
                if op.mode == "recreate":
                    slots[i][tick % op.number] = made
                n += 1
            tick += 1
            await asyncio.sleep(op.interval)

    def _podhas_labels(self, key: str, labels: tuple[tuple[str, str], ...]) -> bool:
        namespace, name = key.split("/", 1)
        try:
            return has_labels(self.store.get("Pod", namespace, name), labels)
        except NotFound:
            return False

    async def _start_window(
        self, name: str, namespaces: tuple[str, ...], labels: tuple[tuple[str, str], ...] = ()
    ) -> None:
        dra = bool(self.store.list("DeviceClass")[0])
        if self.sched.apart:
            # The run's own process (the API server, the ops) frees its set-up's garbage too.
            gc.collect()
            gc.freeze()
        await self.sched.open_window(dra)
        self._window = _Window(
            name, namespaces, time.perf_counter(), self._nodes, len(self.pods), labels=labels, cpu0=cpu_seconds()
        )

    async def _start_lag(self, window: _Window) -> None:
        """The lag is watched from when the window's first pods are in the queue (creating
        thousands of pods in one go is the benchmark's own doing)."""
        if not window.lag_started:
            await self._delivered()
            await self.sched.start_lag()
            window.lag_started = True

    async def _stop_window(self) -> None:
        window = self._window
        assert window is not None
        await self._wait(window.keys)
        seconds = time.perf_counter() - window.t0
        cpu = cpu_seconds() - window.cpu0
        figures = await self.sched.close_window()
        self._window = None
        # A pod a deletePods op took before it was bound is not measured.
        window.keys[:] = [k for k in window.keys if k in self.pods or k in self.bound]
        scheduled = sum(1 for k in window.keys if k in self.bound)
        result = make_result(
            window.name,
            window.nodes,
            window.init_pods,
            len(window.keys),
            seconds,
            figures.durations,
            len(window.keys) - scheduled,
            scheduled,
            figures.lag_max,
            backend=self.backend,
            groups=len(window.groups),
            group_cycles=figures.group_cycles,
            cpu=figures.cpu,
            garbage=figures.garbage,
        )
        if self.sched.apart:
            # The scheduler's process is measured above; the run's (the API server) apart.
            result.peak_rss_mib = figures.peak_rss_mib
            if window.keys:
                result.server_cpu_ms_per_pod = round(cpu * 1000 / len(window.keys), 4)
        self.results.append(result)

    async def _wait(self, keys: list[str], attempted_only: bool = False) -> None:
        """Until every pod of ``keys`` is decided (see the module's docstring), or, with
        ``attempted_only``, tried at least once."""
        remaining = keys
        # What the workload did last (nodes added, pods deleted) reaches the scheduler first, so
        # that pods it unblocks are not judged parked before it has seen it.
        await self._delivered()
        scanned = -1  # pods bound or taken away at the last look at ``remaining``
        while True:
            self._report()
            idle = await self.sched.idle()
            settled = len(self.bound) + self._taken
            # A look costs a step a pod left, inside the measured window: taken once they may
            # all be bound or taken away by now, or while pods may be parked (or only tried).
            if attempted_only or idle or settled - scanned >= len(remaining):
                scanned = settled
                # A pod a deletePods op took away is no longer waited for.
                remaining = [k for k in remaining if k not in self.bound and k in self.pods]
                if not remaining:
                    return
                if (attempted_only or idle) and await self._all_parked(remaining, attempted_only):
                    return
            await asyncio.sleep(_POLL)
            self._check_scheduler()
            if time.monotonic() > self._deadline:
                raise WorkloadError(
                    f"{self.w.name}: {len(remaining)} pods still undecided after {self.timeout:g} s (--timeout)"
                )

    def _untrack(self, key: str) -> None:
        """Pod ``key`` is being deleted: no longer waited for."""
        if self.pods.pop(key, None) is not None and key not in self.bound:
            self._taken += 1

    def _check_scheduler(self) -> None:
        failure = self.sched.failure()
        if failure is not None:
            raise WorkloadError(f"{self.w.name}: the scheduler stopped: {failure}")

    async def _all_parked(self, keys: list[str], attempted_only: bool) -> bool:
        wheres = await self.sched.where([self.pods[k] for k in keys])
        return all(self._parked(k, where, attempted_only) for k, where in zip(keys, wheres, strict=True))

    def _parked(self, key: str, where: str | None, attempted_only: bool) -> bool:
        namespace, name = key.split("/", 1)
        try:
            pod = self.store.get("Pod", namespace, name)
        except NotFound:
            return True  # deleted: nothing left to wait for
        if attempted_only:
            return where is not None and where != ACTIVE_Q
        status = pod.get("status") or {}
        # A pod group its cycle rejected backs off and is tried again as it was (upstream's
        # requeue of an attempted group): decided, as a single pod parked unschedulable is.
        rejected_group = where == BACKOFF_Q and _group_of(pod) is not None and _rejected(status)
        if where not in (UNSCHEDULABLE_Q, GATED_Q) and not rejected_group:
            return False
        return not status.get("nominatedNodeName")

    def _report(self) -> None:
        if self.progress is None:
            return
        now = time.monotonic()
        if now - self._shown >= 0.1:
            self._shown = now
            self.progress(len(self.bound), self.total)


def _group_of(pod: Obj) -> str | None:
    """``namespace/name`` of the pod group ``pod`` belongs to (spec.schedulingGroup), or None."""
    group = (pod.get("spec") or {}).get("schedulingGroup") or {}
    name = group.get("podGroupName")
    return f"{pod['metadata'].get('namespace')}/{name}" if name else None


def _rejected(status: Obj) -> bool:
    """Whether a pod's status says its last attempt found it unschedulable."""
    return any(
        c.get("type") == "PodScheduled" and c.get("status") == "False" and c.get("reason") == "Unschedulable"
        for c in status.get("conditions") or ()
    )


def _churn_template(path: Any) -> Obj:
    """A churn template: a Pod or a Node (read as their templates are), or one object of any
    other kind with apiVersion and kind (a Service...)."""
    obj = decode(read_file(path, "churn template"), path, "churn template")
    kind = obj.get("kind") if isinstance(obj, dict) else None
    if kind in ("Pod", "Node"):
        return read_template(path, str(kind))
    if not isinstance(obj, dict) or not kind or not obj.get("apiVersion"):
        raise WorkloadError(f"{path}: a churn template is one object with apiVersion and kind")
    obj.setdefault("metadata", {})
    return obj
