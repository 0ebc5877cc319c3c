"""``python -m benchmarks.run --backend http``: a workload through the embedded API server.

The in-memory backend hands the scheduler its events in-process; this one puts real HTTP in
between, as in a cluster: the embedded API server (``kubesched sim serve``'s, plain HTTP on
loopback) serves the store, the scheduler talks to it through the same kubernetes_asyncio
backend ``kubesched run`` uses (list+watch informers, the binding subresource, events, status
patches), and the measured pods are created by a client over HTTP, ``CREATE_CONCURRENCY`` at a
time. Measured, as in the in-memory backend: from the first create to the last bind the server
committed. Nodes and init pods go into the store directly (setup, not measured).

Everything runs in one process on one event loop — API server, scheduler and client, as
upstream's scheduler_perf runs its API server beside the scheduler — so the figure is what one
core does with all three. The scheduler's client is not rate limited (``clientConnection.qps``
is the cluster operator's choice; the default 50 would make this a measure of the limit).
"""

from __future__ import annotations

import asyncio
import gc
import json
import tempfile
import time
from pathlib import Path
from typing import Any

#: Pods the client creates at once.
CREATE_CONCURRENCY = 64
#: The scheduler client's rate limit here: high enough never to be the bottleneck.
CLIENT_QPS = 100_000.0


async def run_http(w: Any, batch: bool = True, placements: dict[str, str] | None = None) -> Any:
    import aiohttp

    from benchmarks.run import (
        BindCounter,
        Churn,
        LoopLag,
        default_node,
        default_pod,
        measured_result,
        not_churn,
        workload_scheduler,
    )
    from kubesched.cluster.kube import KubeCluster
    from kubesched.cluster.store import Store
    from kubesched.config import load_config
    from kubesched.sim.apiserver import APIServer

    cfg = load_config(w.config)
    store = Store(history=100_000)
    scenario = w.scenario() if w.scenario is not None else None
    nodes = scenario.nodes if scenario is not None else [(w.make_node or default_node)(i) for i in range(w.nodes)]
    for node in nodes:
        store.create("Node", node)
    for ns in ("sched-0", "sched-1"):
        store.create("Namespace", {"metadata": {"name": ns}})
    bound = BindCounter(placements, only=not_churn)
    store.subscribe(bound)
    make_pod = w.make_pod or default_pod
    if scenario is None:
        make_init = w.make_init_pod or make_pod
        for i in range(w.init_pods):
            store.create("Pod", make_init("init", i))
    server = APIServer(store)
    await server.start()
    tmp = tempfile.TemporaryDirectory()
    kubeconfig = server.write_kubeconfig(Path(tmp.name) / "kubeconfig")
    cluster = KubeCluster(kubeconfig=kubeconfig, qps=CLIENT_QPS, burst=int(CLIENT_QPS))
    sched = workload_scheduler(w, cfg, cluster, batch)
    runner = asyncio.create_task(sched.run())
    session = aiohttp.ClientSession(server.url)
    try:
        expected_init = 0 if scenario is not None else w.init_pods
        while not sched.synced or sched.stats.attempts < expected_init:
            await _check(runner)
        while sched.queue.has_active() or sched.in_flight() or bound.n < expected_init - sched.stats.unschedulable:
            await _check(runner)
        gc.collect()
        gc.freeze()
        sched.stats.attempt_durations.clear()
        bound_before = bound.n
        unschedulable_before = sched.stats.unschedulable
        measured = (
            scenario.pending_pods if scenario is not None else [make_pod("measured", i) for i in range(w.measure_pods)]
        )
        lag = LoopLag()
        lag.start()
        churn = Churn(w, lambda pod: _create_all(session, [pod]))
        churn.start()
        attempts_goal = sched.stats.attempts + len(measured)
        t0 = time.perf_counter()
        await _create_all(session, measured)

        def decided() -> bool:
            if w.wait_bound:
                return bound.n - bound_before >= len(measured)
            return (
                sched.stats.attempts >= attempts_goal
                and not sched.queue.has_active()
                and sched.in_flight() == 0
                and bound.n - bound_before + sched.stats.unschedulable - unschedulable_before >= len(measured)
            )

        while not decided():
            await _check(runner)
        seconds = (bound.last if bound.n > bound_before else time.perf_counter()) - t0
        lag.stop()
        await churn.stop()
        durations = list(sched.stats.attempt_durations)
    finally:
        await session.close()
        await sched.stop()
        runner.cancel()
        await asyncio.gather(runner, return_exceptions=True)
        await cluster.stop()
        await server.stop()
        tmp.cleanup()
    return measured_result(
        w,
        len(nodes),
        len(measured),
        seconds,
        durations,
        sched.stats.unschedulable - unschedulable_before,
        bound.n - bound_before,
        lag,
        backend="http",
    )


async def _check(runner: asyncio.Task[Any]) -> None:
    await asyncio.sleep(0.005)
    if runner.done():
        raise RuntimeError(f"scheduler stopped: {runner.exception()!r}")


async def _create_all(session: Any, pods: list[dict[str, Any]]) -> None:
    """POST every pod, ``CREATE_CONCURRENCY`` requests in flight."""
    queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    for pod in pods:
        queue.put_nowait(pod)

    async def worker() -> None:
        while not queue.empty():
            pod = queue.get_nowait()
            ns = pod["metadata"].get("namespace") or "default"
            async with session.post(
                f"/api/v1/namespaces/{ns}/pods", data=json.dumps(pod), headers={"Content-Type": "application/json"}
            ) as resp:
                if resp.status != 201:
                    raise RuntimeError(f"creating pod {pod['metadata']['name']}: {resp.status} {await resp.text()}")

    await asyncio.gather(*(worker() for _ in range(CREATE_CONCURRENCY)))
