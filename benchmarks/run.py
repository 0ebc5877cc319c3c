"""scheduler_perf-shaped benchmarks on the in-memory cluster.

Each workload creates its nodes, lets the scheduler place ``init_pods`` (not measured), then
creates ``measure_pods`` at once and measures until every one of them is bound:

* pods/s: measured pods divided by the time from their creation to the last bind;
* p50/p90/p99 of the scheduling-attempt latency (one scheduling cycle) of the measured pods;
* peak RSS of the process (each workload runs in a fresh process);
* the event loop's largest lag while the measured pods are scheduled: how long a bind, a watch
  event, a lease renewal or a health check could have waited for the scheduling loop;
* upstream's throughput floor for the workload (scheduler_perf's ``threshold``) and our pods/s
  divided by it; "-" where upstream sets none.

    python -m benchmarks.run                      # every workload but the slow ones, a table
    python -m benchmarks.run --all                # the slow ones too (15000 nodes: minutes)
    python -m benchmarks.run -w SchedulingBasic/5000Nodes_10000Pods --json
    python -m benchmarks.run --scaling            # SchedulingBasic at 500, 5000, 15000 nodes
    python -m benchmarks.run --compare            # per-node vs batch path, same placements checked
    python -m benchmarks.run --backend http -w SchedulingBasic/5000Nodes_10000Pods   # over HTTP
    python -m benchmarks.run --list

The node and pod templates follow upstream's scheduler_perf defaults (node: 4 CPU, 32Gi, 110
pods; pod: 100m CPU, 500Mi memory). The default profile (every in-tree default plugin) is used.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


@dataclass(frozen=True)
class Floor:
    """Upstream's throughput floor: scheduler_perf fails a run whose pods/s falls below it."""

    pods_per_second: float
    #: The upstream test case the threshold belongs to ("SchedulingPodAntiAffinity/5000Nodes_2000Pods").
    upstream: str


# Thresholds of kubernetes/kubernetes test/integration/scheduler_perf, the newest stored versions
# of misc/, affinity/ and topology_spreading/performance-config.yaml (master after v1.34: the
# configs already name v1.35's NodeDeclaredFeatures gate). Upstream sets a threshold only on its
# large `performance` cases; a workload of ours with the same test and node count but fewer
# measured pods carries that case's floor, named, so the table can say the sizes differ.
# PreemptionBasic has no threshold upstream (570 belongs to PreemptionAsync: default pods measured
# while a high-priority pod preempts every 200 ms).
SCHEDULING_BASIC_FLOOR = Floor(680, "SchedulingBasic/5000Nodes_10000Pods")
ANTI_AFFINITY_FLOOR = Floor(60, "SchedulingPodAntiAffinity/5000Nodes_2000Pods")
AFFINITY_FLOOR = Floor(35, "SchedulingPodAffinity/5000Nodes_5000Pods")
NODE_AFFINITY_FLOOR = Floor(220, "SchedulingNodeAffinity/5000Nodes_10000Pods")
SPREADING_FLOOR = Floor(460, "TopologySpreading/5000Nodes_5000Pods")
PREEMPTION_ASYNC_FLOOR = Floor(570, "PreemptionAsync/5000Nodes")


@dataclass
class Workload:
    name: str
    nodes: int
    init_pods: int
    measure_pods: int
    make_node: Callable[[int], dict[str, Any]] | None = None
    make_pod: Callable[[str, int], dict[str, Any]] | None = None
    config: str | None = None
    description: str = ""
    #: A scenario (nodes + pending pods) instead of templates; its pods are all measured.
    scenario: Callable[[], Any] | None = None
    #: Why the workload cannot run here (e.g. trace data absent), or None.
    unavailable: Callable[[], str | None] | None = None
    #: Template of the init pods when it differs from the measured pods'.
    make_init_pod: Callable[[str, int], dict[str, Any]] | None = None
    #: Measure until every measured pod is bound (preemption: pods need a second attempt).
    wait_bound: bool = False
    #: Upstream's throughput floor for this workload, or None where upstream sets none.
    floor: Floor | None = None
    #: Takes minutes: run only when named (-w), with --all or by --scaling.
    slow: bool = False
    #: Upstream's OpportunisticBatching feature gate on (SchedulerOptions.opportunistic_batching).
    opportunistic_batching: bool = False
    #: Where pods land depends on wall-clock timing (preemption: when a preemptor's backoff
    #: ends against when its victims are gone), so two runs may differ on any path.
    timing_dependent: bool = False
    #: Upstream's ``churn`` op in ``create`` mode: while the measured pods are scheduled, one pod
    #: of this template every ``churn_interval`` seconds (not measured; they may preempt).
    make_churn_pod: Callable[[str, int], dict[str, Any]] | None = None
    churn_interval: float = 0.2


def default_node(i: int) -> dict[str, Any]:
    name = f"node-{i}"
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "spec": {},
        "status": {
            "capacity": {"pods": "110", "cpu": "4", "memory": "32Gi"},
            "allocatable": {"pods": "110", "cpu": "4", "memory": "32Gi"},
        },
    }


def default_pod(prefix: str, i: int) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"{prefix}-{i}", "namespace": "default"},
        "spec": {
            "containers": [
                {
                    "name": "pause",
                    "image": "registry.k8s.io/pause:3.10",
                    "ports": [{"containerPort": 80}],
                    "resources": {
                        "requests": {"cpu": "100m", "memory": "500Mi"},
                        "limits": {"cpu": "100m", "memory": "500Mi"},
                    },
                }
            ]
        },
    }


def zoned_node(zones: list[str]) -> Callable[[int], dict[str, Any]]:
    """node-default with ``topology.kubernetes.io/zone`` cycling through ``zones`` (upstream's
    labelNodePrepareStrategy)."""

    def make(i: int) -> dict[str, Any]:
        node = default_node(i)
        node["metadata"]["labels"]["topology.kubernetes.io/zone"] = zones[i % len(zones)]
        return node

    return make


def _pod(
    namespace: str = "default", labels: dict[str, str] | None = None, cpu: str = "100m", **spec: Any
) -> Callable[[str, int], dict[str, Any]]:
    def make(prefix: str, i: int) -> dict[str, Any]:
        pod = default_pod(prefix, i)
        pod["metadata"]["namespace"] = namespace
        if labels:
            pod["metadata"]["labels"] = dict(labels)
        res = pod["spec"]["containers"][0]["resources"]
        res["requests"]["cpu"] = res["limits"]["cpu"] = cpu
        pod["spec"].update(spec)
        return pod

    return make


def _anti_affinity(namespace: str) -> Callable[[str, int], dict[str, Any]]:
    term = {
        "labelSelector": {"matchLabels": {"color": "green"}},
        "topologyKey": "kubernetes.io/hostname",
        "namespaces": ["sched-0", "sched-1"],
    }
    return _pod(
        namespace,
        {"color": "green"},
        affinity={"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}},
    )


def _affinity(namespace: str) -> Callable[[str, int], dict[str, Any]]:
    term = {
        "labelSelector": {"matchLabels": {"color": "blue"}},
        "topologyKey": "topology.kubernetes.io/zone",
        "namespaces": ["sched-0", "sched-1"],
    }
    return _pod(
        namespace,
        {"color": "blue"},
        affinity={"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}},
    )


NODE_AFFINITY_POD = _pod(
    affinity={
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["zone1", "zone2"]}
                        ]
                    }
                ]
            }
        }
    }
)
SPREADING_POD = _pod(
    labels={"color": "blue"},
    topologySpreadConstraints=[
        {
            "maxSkew": 5,
            "topologyKey": "topology.kubernetes.io/zone",
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"color": "blue"}},
        }
    ],
)
LOW_PRIORITY_POD = _pod(cpu="900m", terminationGracePeriodSeconds=0)
HIGH_PRIORITY_POD = _pod(cpu="3000m", priority=10)
SATURATING_POD = _pod(cpu="3")


def _openb(pods: str) -> Callable[[], Any]:
    def load() -> Any:
        from kubesched.sim.scenario.openb import load_openb

        return load_openb(pods=pods)

    return load


def _openb_missing() -> str | None:
    from kubesched.sim.scenario.openb import trace_dir

    return None if trace_dir() is not None else "the openb trace is absent (../shared/traces/alibaba-gpu-v2023)"


WORKLOADS: dict[str, Workload] = {
    w.name: w
    for w in [
        Workload("SchedulingBasic/500Nodes", 500, 500, 1000, description="upstream SchedulingBasic, 500 nodes"),
        Workload(
            "SchedulingBasic/5000Nodes",
            5000,
            1000,
            1000,
            floor=SCHEDULING_BASIC_FLOOR,
            description="upstream SchedulingBasic, 5000 nodes",
        ),
        Workload(
            "SchedulingBasic/5000Nodes_10000Pods",
            5000,
            1000,
            10000,
            floor=SCHEDULING_BASIC_FLOOR,
            description="upstream SchedulingBasic, 5000 nodes, 10000 measured pods",
        ),
        Workload(
            "SchedulingBasic/15000Nodes_50000Pods",
            15000,
            5000,
            50000,
            slow=True,
            description="SchedulingBasic at 15000 nodes (no upstream case): init and measured as 5000Nodes_50000Pods",
        ),
        Workload(
            "SchedulingPodAntiAffinity/5000Nodes",
            5000,
            1000,
            1000,
            make_init_pod=_anti_affinity("sched-0"),
            make_pod=_anti_affinity("sched-1"),
            floor=ANTI_AFFINITY_FLOOR,
            description="upstream SchedulingPodAntiAffinity: required anti-affinity on hostname",
        ),
        Workload(
            "SchedulingPodAffinity/5000Nodes",
            5000,
            5000,
            1000,
            make_node=zoned_node(["zone1"]),
            make_init_pod=_affinity("sched-0"),
            make_pod=_affinity("sched-1"),
            floor=AFFINITY_FLOOR,
            description="upstream SchedulingPodAffinity: required affinity on zone",
        ),
        Workload(
            "SchedulingNodeAffinity/5000Nodes",
            5000,
            5000,
            1000,
            make_node=zoned_node(["zone1"]),
            make_pod=NODE_AFFINITY_POD,
            floor=NODE_AFFINITY_FLOOR,
            description="upstream SchedulingNodeAffinity",
        ),
        Workload(
            "TopologySpreading/5000Nodes",
            5000,
            5000,
            2000,
            make_node=zoned_node(["moon-1", "moon-2", "moon-3"]),
            make_init_pod=default_pod,
            make_pod=SPREADING_POD,
            floor=SPREADING_FLOOR,
            description="upstream TopologySpreading: maxSkew 5 over three zones, DoNotSchedule",
        ),
        Workload(
            "PreemptionBasic/500Nodes",
            500,
            2000,
            500,
            make_init_pod=LOW_PRIORITY_POD,
            make_pod=HIGH_PRIORITY_POD,
            wait_bound=True,
            timing_dependent=True,
            description="upstream PreemptionBasic: every measured pod must preempt",
        ),
        Workload(
            "PreemptionAsync/5000Nodes",
            5000,
            20000,
            5000,
            make_init_pod=LOW_PRIORITY_POD,
            make_churn_pod=HIGH_PRIORITY_POD,
            churn_interval=0.2,
            wait_bound=True,
            timing_dependent=True,
            floor=PREEMPTION_ASYNC_FLOOR,
            description="upstream PreemptionAsync: default pods measured while a high-priority pod that "
            "must preempt arrives every 200 ms (async preemption, as upstream's default)",
        ),
        Workload(
            "Batching/ResourceSaturation_5000Nodes",
            5000,
            0,
            5000,
            make_pod=SATURATING_POD,
            config=str(ROOT / "benchmarks" / "no-topology-defaults.yaml"),
            opportunistic_batching=True,
            description="upstream batching/ResourceSaturation: 3-CPU pods on 4-CPU nodes (one per node), "
            "OpportunisticBatching on, no default spreading (which makes pods unsignable)",
        ),
        Workload(
            "OpenbGPU/default",
            1523,
            0,
            8152,
            scenario=_openb("default"),
            unavailable=_openb_missing,
            description="Alibaba GPU trace: 1523 real nodes, 8152 real pods in arrival order (GPU sharing as gpu-milli)",
        ),
        Workload(
            "OpenbGPU/gpuspec33",
            1523,
            0,
            8152,
            scenario=_openb("gpuspec33"),
            unavailable=_openb_missing,
            description="as OpenbGPU/default, a third of GPU pods constrained to GPU models (node affinity)",
        ),
    ]
}


@dataclass
class Result:
    workload: str
    nodes: int
    init_pods: int
    measure_pods: int
    pods_per_second: float
    seconds: float
    unschedulable: int
    attempt_p50_ms: float
    attempt_p90_ms: float
    attempt_p99_ms: float
    peak_rss_mib: float
    scheduled: int
    loop_lag_max_ms: float = 0.0
    python: str = field(default_factory=lambda: sys.version.split()[0])
    loop: str = ""
    #: ``memory`` (the in-memory cluster) or ``http`` (the embedded API server over HTTP).
    backend: str = "memory"
    #: Upstream's floor (pods/s), our pods/s divided by it, and the upstream case it is from.
    floor_pods_per_second: float | None = None
    floor_ratio: float | None = None
    floor_source: str | None = None


def with_floor(result: Result, floor: Floor | None) -> Result:
    """``result`` with upstream's floor and our ratio to it filled in (left None without a floor)."""
    if floor is not None:
        result.floor_pods_per_second = floor.pods_per_second
        result.floor_ratio = round(result.pods_per_second / floor.pods_per_second, 2)
        result.floor_source = floor.upstream
    return result


def percentile(values: list[float], p: float) -> float:
    if not values:
        return 0.0
    s = sorted(values)
    k = min(len(s) - 1, max(0, int(round(p / 100.0 * (len(s) - 1)))))
    return s[k]


async def _run(w: Workload, batch: bool = True, placements: dict[str, str] | None = None) -> Result:
    """Run ``w`` once. ``batch`` picks the scheduler's batch (columnar) or per-node Filter and
    Score; ``placements``, when given, receives each bound pod's node (``namespace/name``)."""
    from kubesched.cluster.memory import InMemoryCluster
    from kubesched.cluster.store import Store
    from kubesched.config import load_config

    cfg = load_config(w.config)
    store = Store(history=1000)
    cluster = InMemoryCluster(store)
    scenario = w.scenario() if w.scenario is not None else None
    if scenario is not None:
        for node in scenario.nodes:
            store.create("Node", node)
    else:
        make_node = w.make_node or default_node
        for i in range(w.nodes):
            store.create("Node", make_node(i))
    make_pod = w.make_pod or default_pod
    sched = workload_scheduler(w, cfg, cluster, batch)
    bound = BindCounter(placements, only=not_churn)
    store.subscribe(bound)
    runner = asyncio.create_task(sched.run())
    await asyncio.sleep(0)

    async def place(
        pods: list[dict[str, Any]], wait_bound: bool = False, on_queued: Callable[[], None] | None = None
    ) -> float:
        """Create ``pods`` at once; return the seconds until each has been decided: bound, or
        found unschedulable on its first attempt (or, with ``wait_bound``, until all are bound)."""
        attempts_before = sched.stats.attempts
        bound_before = bound.n
        t0 = time.perf_counter()
        for pod in pods:
            store.create("Pod", pod)
        await asyncio.sleep(0)
        if on_queued is not None:
            await cluster.wait_delivered()
            on_queued()

        def decided() -> bool:
            if wait_bound:
                return bound.n - bound_before >= len(pods)
            return (
                sched.stats.attempts - attempts_before >= len(pods)
                and not sched.queue.has_active()
                and sched.in_flight() == 0
            )

        while not decided():
            await asyncio.sleep(0.005)
            if runner.done():
                raise RuntimeError(f"scheduler stopped: {runner.exception()!r}")
        return time.perf_counter() - t0

    for ns in ("sched-0", "sched-1"):
        store.create("Namespace", {"metadata": {"name": ns}})
    if scenario is None:
        make_init = w.make_init_pod or make_pod
        await place([make_init("init", i) for i in range(w.init_pods)])
    # As ``kubesched run`` does once its informers have synced: what exists now lives on, and
    # the collector no longer scans it (no pauses of tens of milliseconds mid-burst).
    gc.freeze()
    sched.stats.attempt_durations.clear()
    bound_before = bound.n
    unschedulable_before = sched.stats.unschedulable
    measured = (
        scenario.pending_pods if scenario is not None else [make_pod("measured", i) for i in range(w.measure_pods)]
    )
    lag = LoopLag()
    churn = Churn(w, lambda pod: store.create("Pod", pod))
    churn.start()
    # Measured once every pod is in the queue: creating thousands of pods in one go (and the
    # in-memory cluster delivering them in one turn) is the benchmark's own doing.
    seconds = await place(measured, w.wait_bound, on_queued=lag.start)
    lag.stop()
    await churn.stop()
    durations = list(sched.stats.attempt_durations)
    await sched.stop()
    runner.cancel()
    await asyncio.gather(runner, return_exceptions=True)
    return measured_result(
        w,
        len(scenario.nodes) if scenario is not None else w.nodes,
        len(measured),
        seconds,
        durations,
        sched.stats.unschedulable - unschedulable_before,
        bound.n - bound_before,
        lag,
    )


def workload_scheduler(w: Workload, cfg: Any, cluster: Any, batch: bool) -> Any:
    """The scheduler a workload runs: its configuration's profiles and options, seed 1."""
    from kubesched.scheduler import Scheduler, SchedulerOptions

    m = cfg.model
    return Scheduler(
        cfg.profiles,
        cluster,
        SchedulerOptions(
            parallelism=m.parallelism,
            percentage_of_nodes_to_score=m.percentageOfNodesToScore,
            seed=1,
            batch=batch,
            opportunistic_batching=w.opportunistic_batching,
            gc_pacing=True,  # as `kubesched run` has it
        ),
    )


CHURN_PREFIX = "churn"


def not_churn(pod: dict[str, Any]) -> bool:
    return not pod["metadata"]["name"].startswith(CHURN_PREFIX)


class Churn:
    """Upstream's ``churn`` op in ``create`` mode: ``create(pod)`` one pod of the workload's
    churn template every interval, from :meth:`start` to :meth:`stop` (nothing without one)."""

    def __init__(self, w: Workload, create: Callable[[dict[str, Any]], Any]) -> None:
        self.w = w
        self.create = create
        self.created = 0
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self.w.make_churn_pod is not None:
            self._task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        assert self.w.make_churn_pod is not None
        while True:
            result = self.create(self.w.make_churn_pod(CHURN_PREFIX, self.created))
            if asyncio.iscoroutine(result):
                await result
            self.created += 1
            await asyncio.sleep(self.w.churn_interval)

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)


class BindCounter:
    """A store subscriber counting the pods bound (and, with ``placements``, where); with
    ``only``, just the pods it accepts."""

    def __init__(
        self, placements: dict[str, str] | None = None, only: Callable[[dict[str, Any]], bool] | None = None
    ) -> None:
        self.n = 0
        #: ``time.perf_counter()`` of the last bind.
        self.last = 0.0
        self.placements = placements
        self.only = only

    def __call__(self, etype: str, kind: str, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
        if kind == "Pod" and etype == "MODIFIED" and old is not None:
            if obj["spec"].get("nodeName") and not old["spec"].get("nodeName"):
                if self.only is not None and not self.only(obj):
                    return
                self.n += 1
                self.last = time.perf_counter()
                if self.placements is not None:
                    meta = obj["metadata"]
                    self.placements[f"{meta.get('namespace')}/{meta['name']}"] = obj["spec"]["nodeName"]


class LoopLag:
    """A neighbour on the loop that wants to run every millisecond: how late it gets to."""

    def __init__(self) -> None:
        self.max = 0.0
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._watch())

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()

    async def _watch(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            t = loop.time()
            await asyncio.sleep(0.001)
            self.max = max(self.max, loop.time() - t - 0.001)


def measured_result(
    w: Workload,
    nodes: int,
    measured: int,
    seconds: float,
    durations: list[float],
    unschedulable: int,
    scheduled: int,
    lag: LoopLag,
    backend: str = "memory",
) -> Result:
    rss_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return Result(
        workload=w.name,
        nodes=nodes,
        init_pods=w.init_pods,
        measure_pods=measured,
        pods_per_second=round(measured / seconds, 1),
        seconds=round(seconds, 3),
        unschedulable=unschedulable,
        attempt_p50_ms=round(percentile(durations, 50) * 1000, 3),
        attempt_p90_ms=round(percentile(durations, 90) * 1000, 3),
        attempt_p99_ms=round(percentile(durations, 99) * 1000, 3),
        peak_rss_mib=round(rss_kib / 1024, 1),
        scheduled=scheduled,
        loop_lag_max_ms=round(lag.max * 1000, 1),
        backend=backend,
    )


def runner_for(backend: str) -> Callable[..., Any]:
    """The coroutine function that runs a workload once on ``backend`` (``memory`` or ``http``)."""
    if backend == "http":
        from benchmarks.http_backend import run_http

        return run_http
    return _run


def run_in_process(name: str, use_uvloop: bool = True, backend: str = "memory") -> Result:
    w = WORKLOADS[name]
    run = runner_for(backend)
    if use_uvloop:
        try:
            import uvloop

            result = uvloop.run(run(w))
            result.loop = "uvloop"
            return with_floor(result, w.floor)
        except ImportError:
            pass
    result = asyncio.run(run(w))
    result.loop = "asyncio"
    return with_floor(result, w.floor)


def run_isolated(name: str, use_uvloop: bool, backend: str = "memory") -> Result:
    """Run one workload in a fresh interpreter, so peak RSS is that workload's alone."""
    cmd = [sys.executable, "-m", "benchmarks.run", "--workload", name, "--json", "--in-process", "--backend", backend]
    if not use_uvloop:
        cmd.append("--no-uvloop")
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"workload {name} failed:\n{out.stderr}")
    data = json.loads(out.stdout)[0]
    return Result(**data)


def print_table(results: list[Result]) -> None:
    from rich.console import Console
    from rich.table import Table

    backend = "in-memory cluster" if not results or results[0].backend == "memory" else "over HTTP"
    t = Table(title=f"kubesched benchmarks ({backend}, default profile)")
    for col in (
        "workload",
        "nodes",
        "init",
        "measured",
        "scheduled",
        "unschedulable",
        "pods/s",
        "floor",
        "ours/floor",
        "p50 ms",
        "p90 ms",
        "p99 ms",
        "peak RSS MiB",
        "max loop lag ms",
        "loop",
    ):
        t.add_column(col, justify="left" if col in ("workload", "loop") else "right", no_wrap=col == "workload")
    borrowed: dict[str, str] = {}
    for r in results:
        floor = "-"
        if r.floor_pods_per_second is not None:
            floor = f"{r.floor_pods_per_second:g}"
            if r.floor_source != r.workload:
                floor += "*"
                borrowed[r.workload] = r.floor_source or ""
        t.add_row(
            r.workload,
            str(r.nodes),
            str(r.init_pods),
            str(r.measure_pods),
            str(r.scheduled),
            str(r.unschedulable),
            f"{r.pods_per_second:.1f}",
            floor,
            f"{r.floor_ratio:.2f}" if r.floor_ratio is not None else "-",
            f"{r.attempt_p50_ms:.3f}",
            f"{r.attempt_p90_ms:.3f}",
            f"{r.attempt_p99_ms:.3f}",
            f"{r.peak_rss_mib:.1f}",
            f"{r.loop_lag_max_ms:.1f}",
            r.loop,
        )
    console = Console(color_system=None, width=200)
    console.print(t)
    if borrowed:
        console.print("floor: upstream scheduler_perf's threshold (pods/s); * from the upstream case of that test")
        console.print("with the same node count and more measured pods:")
        for ours, theirs in borrowed.items():
            console.print(f"  {ours}: {theirs}")


#: SchedulingBasic at growing cluster sizes, for --scaling.
SCALING = ["SchedulingBasic/500Nodes", "SchedulingBasic/5000Nodes_10000Pods", "SchedulingBasic/15000Nodes_50000Pods"]


def scaling_rows(results: list[Result]) -> list[dict[str, Any]]:
    """Time per measured pod at each size, and how many times the smallest size's it is."""
    rows: list[dict[str, Any]] = []
    for r in results:
        ms = 1000.0 / r.pods_per_second if r.pods_per_second else float("inf")
        base = rows[0]["ms_per_pod"] if rows else ms
        rows.append(
            {
                "workload": r.workload,
                "nodes": r.nodes,
                "measure_pods": r.measure_pods,
                "pods_per_second": r.pods_per_second,
                "ms_per_pod": round(ms, 3),
                "growth": round(ms / base, 2),
                "attempt_p50_ms": r.attempt_p50_ms,
                "peak_rss_mib": r.peak_rss_mib,
            }
        )
    return rows


def print_scaling(rows: list[dict[str, Any]]) -> None:
    from rich.console import Console
    from rich.table import Table

    t = Table(title="SchedulingBasic: time per pod as the cluster grows")
    for col in ("workload", "nodes", "measured", "pods/s", "ms per pod", "x smallest", "p50 ms", "peak RSS MiB"):
        t.add_column(col, justify="left" if col == "workload" else "right")
    for row in rows:
        t.add_row(
            row["workload"],
            str(row["nodes"]),
            str(row["measure_pods"]),
            f"{row['pods_per_second']:.1f}",
            f"{row['ms_per_pod']:.2f}",
            f"{row['growth']:.2f}",
            f"{row['attempt_p50_ms']:.3f}",
            f"{row['peak_rss_mib']:.1f}",
        )
    Console(color_system=None, width=150).print(t)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m benchmarks.run", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "-w", "--workload", action="append", help="workload name (repeatable); default: all but the slow ones"
    )
    ap.add_argument("--all", action="store_true", help="every workload, the slow ones too")
    ap.add_argument(
        "--scaling",
        action="store_true",
        help="run SchedulingBasic at 500, 5000 and 15000 nodes and show how time per pod grows",
    )
    ap.add_argument(
        "--compare",
        action="store_true",
        help="run each workload twice in one process, node by node and in batches; check both placed every pod "
        "on the same node and print both speeds (exit 1 when a placement differs)",
    )
    ap.add_argument(
        "--backend",
        choices=("memory", "http"),
        default="memory",
        help="memory: the in-memory cluster; http: through the embedded API server over HTTP, "
        "pods created by a client (see benchmarks/http_backend.py)",
    )
    ap.add_argument("--json", action="store_true", help="print JSON instead of a table")
    ap.add_argument("--list", action="store_true", help="list workloads")
    ap.add_argument("--no-uvloop", action="store_true", help="use the standard asyncio loop")
    ap.add_argument("--in-process", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--save", metavar="FILE", help="also write the JSON results to FILE")
    args = ap.parse_args(argv)
    if args.list:
        for w in WORKLOADS.values():
            slow = " (slow: only with -w or --all)" if w.slow else ""
            print(f"{w.name:45s} nodes={w.nodes} init={w.init_pods} measured={w.measure_pods}  {w.description}{slow}")
        return 0
    if args.scaling and (args.workload or args.all):
        print("--scaling runs its own workloads; it does not combine with -w or --all", file=sys.stderr)
        return 2
    names = args.workload or default_names(args.all)
    if args.scaling:
        names = list(SCALING)
    unknown = [n for n in names if n not in WORKLOADS]
    if unknown:
        print(f"unknown workload(s): {', '.join(unknown)}; see --list", file=sys.stderr)
        return 2
    runnable = []
    for n in names:
        check = WORKLOADS[n].unavailable
        why = check() if check is not None else None
        if why:
            print(f"skipping {n}: {why}", file=sys.stderr)
        else:
            runnable.append(n)
    names = runnable
    if args.compare:
        return compare(names, args)
    results: list[Result] = []
    for name in names:
        if args.in_process:
            results.append(run_in_process(name, not args.no_uvloop, args.backend))
        else:
            if not args.json:
                print(f"running {name} ...", file=sys.stderr, flush=True)
            results.append(run_isolated(name, not args.no_uvloop, args.backend))
    payload = [asdict(r) for r in results]
    if args.save:
        Path(args.save).parent.mkdir(parents=True, exist_ok=True)
        Path(args.save).write_text(json.dumps(payload, indent=2) + "\n")
    if args.scaling:
        rows = scaling_rows(results)
        if args.json:
            print(json.dumps(rows, indent=2))
        else:
            print_scaling(rows)
        return 0
    if args.json:
        print(json.dumps(payload, indent=2))
    else:
        print_table(results)
    return 0


def compare(names: list[str], args: argparse.Namespace) -> int:
    from benchmarks.compare import compare_in_process, compare_isolated, print_comparisons

    rows: list[dict[str, Any]] = []
    for name in names:
        if args.in_process:
            rows.append(compare_in_process(name, not args.no_uvloop, args.backend).to_json())
        else:
            if not args.json:
                print(f"comparing {name} ...", file=sys.stderr, flush=True)
            rows.append(compare_isolated(name, not args.no_uvloop, args.backend))
    if args.save:
        Path(args.save).parent.mkdir(parents=True, exist_ok=True)
        Path(args.save).write_text(json.dumps(rows, indent=2) + "\n")
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        print_comparisons(rows)
    return 0 if all(r["same_placements"] for r in rows) else 1


def default_names(everything: bool = False) -> list[str]:
    """The workloads a run without -w runs: all of them but the slow ones (all with ``everything``)."""
    return [w.name for w in WORKLOADS.values() if everything or not w.slow]


if __name__ == "__main__":
    raise SystemExit(main())
