"""The HTTP backend (``python -m benchmarks.run --backend http``): a workload through the
embedded API server.

The in-memory backend hands the scheduler its events in-process; this one puts real HTTP in
between, as in a cluster: ``kubesched sim serve`` runs in a process of its own (plain HTTP on
loopback) and serves the cluster, the scheduler talks to it through the same kubernetes_asyncio
backend ``kubesched run`` uses (list+watch informers, the binding subresource, events, status
patches), and the measured pods are created over HTTP by a client of their own in the
scheduler's process (the same transport, as upstream's createPods uses client-go beside the
scheduler), ``CREATE_CONCURRENCY`` at a time. Measured, as in the in-memory backend: from the first create to the last bind the server
committed (its own clock, ``GET /kubesched/stats``). Nodes and init pods come in the server's
start scenario (setup, not measured).

The server has its own process, as `sim serve` and `kubesched run` have in use; the client that
creates the measured pods shares the scheduler's. ``cpu_ms_per_pod`` is the scheduler's process,
``server_cpu_ms_per_pod`` the server's (read from /proc, where there is one). The scheduler's client is not rate limited
(``clientConnection.qps`` is the cluster operator's choice; the default 50 would make this a
measure of the limit).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.backends.common import (
    CHURN_PREFIX,
    Churn,
    workload_config,
    workload_gates,
    workload_scheduler,
)
from benchmarks.catalogue import Workload, default_node, default_pod
from benchmarks.measure import (
    CyclicGarbage,
    LoopLag,
    Result,
    cpu_seconds,
    group_cycles,
    import_lazy_modules,
    measured_result,
)

#: Pods the client creates at once.
CREATE_CONCURRENCY = 64
#: The scheduler client's rate limit here: high enough never to be the bottleneck.
CLIENT_QPS = 100_000.0


async def run_http(w: Workload, batch: bool = True, placements: dict[str, str] | None = None) -> Result:
    """Run ``w`` once over HTTP; ``batch`` and ``placements`` as for the in-memory backend."""
    import aiohttp
    import yaml

    from kubesched.cluster.base import watched_kinds
    from kubesched.cluster.kube.cluster import KubeCluster
    from kubesched.testing import sim_serve_process

    cfg = workload_config(w)
    gates = workload_gates(w)
    scenario = w.scenario() if w.scenario is not None else None
    nodes = scenario.nodes if scenario is not None else [(w.make_node or default_node)(i) for i in range(w.nodes)]
    make_pod = w.make_pod or default_pod
    init = [] if scenario is not None else [(w.make_init_pod or make_pod)("init", i) for i in range(w.init_pods)]
    extra = ("init", "test") if w.objects is not None else ()
    namespaces = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}} for ns in ("sched-0", "sched-1", *extra)
    ]
    objects = w.objects() if w.objects is not None else []
    objects += w.pod_groups() if w.pod_groups is not None else []
    tmp = tempfile.TemporaryDirectory()
    start = Path(tmp.name) / "start.yaml"
    start.write_text(yaml.safe_dump_all([*namespaces, *nodes, *objects, *init], sort_keys=False))
    served = contextlib.ExitStack()
    # The API server admits what the workload's gates allow (spec.schedulingGroup needs
    # GenericWorkload); the scheduler watches the kinds they turn on (PodGroups).
    serve_args = ["--scenario", str(start)]
    if w.feature_gates:
        serve_args += ["--feature-gates", ",".join(f"{k}={str(v).lower()}" for k, v in w.feature_gates.items())]
    server = served.enter_context(sim_serve_process(Path(tmp.name), *serve_args))
    cluster = KubeCluster(
        kubeconfig=server["kubeconfig"], qps=CLIENT_QPS, burst=int(CLIENT_QPS), watched_kinds=watched_kinds(gates)
    )
    sched = workload_scheduler(w, cfg, cluster, batch)
    runner = asyncio.create_task(sched.run())
    session = aiohttp.ClientSession(server["url"])
    # The pods are created through a client of their own, as upstream's createPods op creates
    # them with client-go beside the scheduler: the project's transport, not rate limited.
    creator = KubeCluster(
        kubeconfig=server["kubeconfig"],
        qps=CLIENT_QPS,
        burst=int(CLIENT_QPS),
        user_agent="kubesched-bench/creator",
        connections=CREATE_CONCURRENCY,
    )
    try:
        expected_init = len(init)
        while not sched.synced or sched.stats.attempts < expected_init:
            await _check(runner)
        while sched.queue.has_active() or sched.in_flight():
            await _check(runner)
        while (await _bound(session)) < expected_init - sched.stats.unschedulable:
            await asyncio.sleep(0.1)
            await _check(runner)
        import_lazy_modules(dra=any(o.get("kind") == "DeviceClass" for o in objects))
        gc.collect()
        gc.freeze()
        garbage = CyclicGarbage()
        garbage.start()
        sched.stats.attempt_durations.clear()
        unschedulable_before = sched.stats.unschedulable
        measured = (
            scenario.pending_pods if scenario is not None else [make_pod("measured", i) for i in range(w.measure_pods)]
        )
        names = {f"{p['metadata'].get('namespace') or 'default'}/{p['metadata']['name']}" for p in measured}
        lag = LoopLag()
        lag.start()
        churn = Churn(w, lambda pod: _create_all(creator, [pod]))
        churn.start()
        attempts_goal = sched.stats.attempts + len(measured)
        bound_before = await _bound(session)
        cpu = cpu_seconds()
        server_cpu = _process_cpu(server["pid"])
        t0 = time.time()
        await _create_all(creator, measured)

        def settled(done: int) -> bool:
            if w.wait_bound:
                return done >= len(measured)
            return (
                sched.stats.attempts >= attempts_goal
                and not sched.queue.has_active()
                and sched.in_flight() == 0
                and done + sched.stats.unschedulable - unschedulable_before >= len(measured)
            )

        async def decided() -> tuple[bool, dict[str, Any]]:
            # The server's totals bound from above how many measured pods are bound (churn pods
            # bind too), so the per-pod table, whose size grows with the pods, is asked for only
            # once they say the measured pods may all be decided.
            if not settled(await _bound(session) - bound_before):
                return False, {}
            stats = await _stats(session)
            return settled(sum(1 for key in names if key in stats["pods"])), stats

        while True:
            finished, stats = await decided()
            if finished:
                break
            # The bind times come from the server's clock; polling only says when to stop.
            await asyncio.sleep(0.1)
            await _check(runner)
        bound_at = [stats["pods"][key]["firstBoundAt"] for key in names if key in stats["pods"]]
        seconds = (max(bound_at) if bound_at else time.time()) - t0
        # The scheduler's process (the pods' creator in it); the server's process apart.
        cpu = cpu_seconds() - cpu
        server_after = _process_cpu(server["pid"])
        server_cpu = server_after - server_cpu if server_cpu is not None and server_after is not None else None
        lag.stop()
        garbage.stop()
        await churn.stop()
        durations = list(sched.stats.attempt_durations)
        cycles = group_cycles(sched)
        if placements is not None:
            async with session.get("/api/v1/pods") as resp:
                for pod in (await resp.json())["items"]:
                    meta = pod["metadata"]
                    if pod["spec"].get("nodeName") and not meta["name"].startswith(CHURN_PREFIX):
                        placements[f"{meta['namespace']}/{meta['name']}"] = pod["spec"]["nodeName"]
    finally:
        await session.close()
        await creator.stop()
        await sched.stop()
        runner.cancel()
        await asyncio.gather(runner, return_exceptions=True)
        await cluster.stop()
        served.close()
        tmp.cleanup()
    result = measured_result(
        w,
        len(nodes),
        len(measured),
        seconds,
        durations,
        sched.stats.unschedulable - unschedulable_before,
        len(bound_at),
        lag,
        backend="http",
        groups=w.groups,
        group_cycles=cycles,
        cpu=cpu,
        garbage=garbage.count,
    )
    if server_cpu is not None and measured:
        result.server_cpu_ms_per_pod = round(server_cpu * 1000 / len(measured), 4)
    return result


def _process_cpu(pid: str) -> float | None:
    """The CPU seconds (user and system) process ``pid`` has spent, where /proc tells (Linux)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


async def _stats(session: Any) -> dict[str, Any]:
    async with session.get("/kubesched/stats") as resp:
        return dict(await resp.json())


async def _totals(session: Any) -> dict[str, Any]:
    """The server's binding totals, without its per-pod table."""
    async with session.get("/kubesched/stats", params={"pods": "false"}) as resp:
        return dict(await resp.json())


async def _bound(session: Any) -> int:
    return int((await _totals(session))["boundPods"])


async def _check(runner: asyncio.Task[Any]) -> None:
    await asyncio.sleep(0.005)
    if runner.done():
        raise RuntimeError(f"scheduler stopped: {runner.exception()!r}")


async def _create_all(creator: Any, pods: list[dict[str, Any]]) -> None:
    """Create every pod through ``creator`` (a KubeCluster), ``CREATE_CONCURRENCY`` at a time."""
    from kubesched.cluster.base import ClusterError

    queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    for pod in pods:
        queue.put_nowait(pod)

    async def worker() -> None:
        while not queue.empty():
            pod = queue.get_nowait()
            try:
                await creator.create_object("Pod", pod)
            except ClusterError as exc:
                raise RuntimeError(f"creating pod {pod['metadata']['name']}: {exc.code} {exc}") from exc

    await asyncio.gather(*(worker() for _ in range(CREATE_CONCURRENCY)))
