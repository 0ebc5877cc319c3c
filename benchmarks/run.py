"""scheduler_perf-shaped benchmarks on the in-memory cluster.

Each workload creates its nodes, lets the scheduler place ``init_pods`` (not measured), then
creates ``measure_pods`` at once and measures until every one of them is bound:

* pods/s: measured pods divided by the time from their creation to the last bind;
* p50/p90/p99 of the scheduling-attempt latency (one scheduling cycle) of the measured pods;
* peak RSS of the process (each workload runs in a fresh process);
* the event loop's largest lag while the measured pods are scheduled: how long a bind, a watch
  event, a lease renewal or a health check could have waited for the scheduling loop.

    python -m benchmarks.run                      # every workload, a table
    python -m benchmarks.run -w SchedulingBasic/5000Nodes_10000Pods --json
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


def _openb(pods: str) -> Callable[[], Any]:
    def load() -> Any:
        from kubesched.sim.openb import load_openb

        return load_openb(pods=pods)

    return load


def _openb_missing() -> str | None:
    from kubesched.sim.openb import trace_dir

    return None if trace_dir() is not None else "the openb trace is absent (../shared/traces/alibaba-gpu-v2023)"


WORKLOADS: dict[str, Workload] = {
    w.name: w
    for w in [
        Workload("SchedulingBasic/500Nodes", 500, 500, 1000, description="upstream SchedulingBasic, 500 nodes"),
        Workload("SchedulingBasic/5000Nodes", 5000, 1000, 1000, description="upstream SchedulingBasic, 5000 nodes"),
        Workload(
            "SchedulingBasic/5000Nodes_10000Pods",
            5000,
            1000,
            10000,
            description="upstream SchedulingBasic, 5000 nodes, 10000 measured pods",
        ),
        Workload(
            "SchedulingPodAntiAffinity/5000Nodes",
            5000,
            1000,
            1000,
            make_init_pod=_anti_affinity("sched-0"),
            make_pod=_anti_affinity("sched-1"),
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
            description="upstream SchedulingPodAffinity: required affinity on zone",
        ),
        Workload(
            "SchedulingNodeAffinity/5000Nodes",
            5000,
            5000,
            1000,
            make_node=zoned_node(["zone1"]),
            make_pod=NODE_AFFINITY_POD,
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
            description="upstream PreemptionBasic: every measured pod must preempt",
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


def percentile(values: list[float], p: float) -> float:
    if not values:
        return 0.0
    s = sorted(values)
    k = min(len(s) - 1, max(0, int(round(p / 100.0 * (len(s) - 1)))))
    return s[k]


async def _run(w: Workload) -> Result:
    from kubesched.cluster.memory import InMemoryCluster
    from kubesched.cluster.store import Store
    from kubesched.config import load_config
    from kubesched.scheduler import Scheduler, SchedulerOptions

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
    m = cfg.model
    sched = Scheduler(
        cfg.profiles,
        cluster,
        SchedulerOptions(parallelism=m.parallelism, percentage_of_nodes_to_score=m.percentageOfNodesToScore, seed=1),
    )
    bound = {"n": 0}

    def count(etype: str, kind: str, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
        if kind == "Pod" and etype == "MODIFIED" and old is not None:
            if obj["spec"].get("nodeName") and not old["spec"].get("nodeName"):
                bound["n"] += 1

    store.subscribe(count)
    runner = asyncio.create_task(sched.run())
    await asyncio.sleep(0)

    async def place(
        pods: list[dict[str, Any]], wait_bound: bool = False, on_queued: Callable[[], None] | None = None
    ) -> float:
        """Create ``pods`` at once; return the seconds until each has been decided: bound, or
        found unschedulable on its first attempt (or, with ``wait_bound``, until all are bound)."""
        attempts_before = sched.stats.attempts
        bound_before = bound["n"]
        t0 = time.perf_counter()
        for pod in pods:
            store.create("Pod", pod)
        await asyncio.sleep(0)
        if on_queued is not None:
            await cluster.wait_delivered()
            on_queued()

        def decided() -> bool:
            if wait_bound:
                return bound["n"] - bound_before >= len(pods)
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
    bound_before = bound["n"]
    unschedulable_before = sched.stats.unschedulable
    measured = (
        scenario.pending_pods if scenario is not None else [make_pod("measured", i) for i in range(w.measure_pods)]
    )
    lag = {"max": 0.0}

    async def watch_lag() -> None:
        # A neighbour on the loop that wants to run every millisecond: how late it gets to.
        loop = asyncio.get_running_loop()
        while True:
            t = loop.time()
            await asyncio.sleep(0.001)
            lag["max"] = max(lag["max"], loop.time() - t - 0.001)

    lag_tasks: list[asyncio.Task[None]] = []
    # Measured once every pod is in the queue: creating thousands of pods in one go (and the
    # in-memory cluster delivering them in one turn) is the benchmark's own doing.
    seconds = await place(measured, w.wait_bound, on_queued=lambda: lag_tasks.append(asyncio.create_task(watch_lag())))
    for t in lag_tasks:
        t.cancel()
    durations = list(sched.stats.attempt_durations)
    await sched.stop()
    runner.cancel()
    await asyncio.gather(runner, return_exceptions=True)
    rss_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return Result(
        workload=w.name,
        nodes=len(scenario.nodes) if scenario is not None else w.nodes,
        init_pods=w.init_pods,
        measure_pods=len(measured),
        pods_per_second=round(len(measured) / seconds, 1),
        seconds=round(seconds, 3),
        unschedulable=sched.stats.unschedulable - unschedulable_before,
        attempt_p50_ms=round(percentile(durations, 50) * 1000, 3),
        attempt_p90_ms=round(percentile(durations, 90) * 1000, 3),
        attempt_p99_ms=round(percentile(durations, 99) * 1000, 3),
        peak_rss_mib=round(rss_kib / 1024, 1),
        scheduled=bound["n"] - bound_before,
        loop_lag_max_ms=round(lag["max"] * 1000, 1),
    )


def run_in_process(name: str, use_uvloop: bool = True) -> Result:
    w = WORKLOADS[name]
    if use_uvloop:
        try:
            import uvloop

            result = uvloop.run(_run(w))
            result.loop = "uvloop"
            return result
        except ImportError:
            pass
    result = asyncio.run(_run(w))
    result.loop = "asyncio"
    return result


def run_isolated(name: str, use_uvloop: bool) -> Result:
    """Run one workload in a fresh interpreter, so peak RSS is that workload's alone."""
    cmd = [sys.executable, "-m", "benchmarks.run", "--workload", name, "--json", "--in-process"]
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

    t = Table(title="kubesched benchmarks (in-memory cluster, default profile)")
    for col in (
        "workload",
        "nodes",
        "init",
        "measured",
        "scheduled",
        "unschedulable",
        "pods/s",
        "p50 ms",
        "p90 ms",
        "p99 ms",
        "peak RSS MiB",
        "max loop lag ms",
        "loop",
    ):
        t.add_column(col, justify="left" if col in ("workload", "loop") else "right")
    for r in results:
        t.add_row(
            r.workload,
            str(r.nodes),
            str(r.init_pods),
            str(r.measure_pods),
            str(r.scheduled),
            str(r.unschedulable),
            f"{r.pods_per_second:.1f}",
            f"{r.attempt_p50_ms:.3f}",
            f"{r.attempt_p90_ms:.3f}",
            f"{r.attempt_p99_ms:.3f}",
            f"{r.peak_rss_mib:.1f}",
            f"{r.loop_lag_max_ms:.1f}",
            r.loop,
        )
    Console(color_system=None, width=150).print(t)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m benchmarks.run", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("-w", "--workload", action="append", help="workload name (repeatable); default: all")
    ap.add_argument("--json", action="store_true", help="print JSON instead of a table")
    ap.add_argument("--list", action="store_true", help="list workloads")
    ap.add_argument("--no-uvloop", action="store_true", help="use the standard asyncio loop")
    ap.add_argument("--in-process", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--save", metavar="FILE", help="also write the JSON results to FILE")
    args = ap.parse_args(argv)
    if args.list:
        for w in WORKLOADS.values():
            print(f"{w.name:45s} nodes={w.nodes} init={w.init_pods} measured={w.measure_pods}  {w.description}")
        return 0
    names = args.workload or list(WORKLOADS)
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
    results: list[Result] = []
    for name in names:
        if args.in_process:
            results.append(run_in_process(name, not args.no_uvloop))
        else:
            if not args.json:
                print(f"running {name} ...", file=sys.stderr, flush=True)
            results.append(run_isolated(name, not args.no_uvloop))
    payload = [asdict(r) for r in results]
    if args.save:
        Path(args.save).parent.mkdir(parents=True, exist_ok=True)
        Path(args.save).write_text(json.dumps(payload, indent=2) + "\n")
    if args.json:
        print(json.dumps(payload, indent=2))
    else:
        print_table(results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
