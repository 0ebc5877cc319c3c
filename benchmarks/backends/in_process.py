"""The in-memory backend: a workload on the in-memory cluster, in this process.

The scheduler gets its events from the store in-process (no HTTP, no serialization): what is
measured is the scheduler itself. Each run makes its own store and scheduler, so two runs in one
process (``--compare``) start alike.

A shipped workload (every one but the trace replays) runs by ``kubesched bench``'s runner from
its ops (:mod:`benchmarks.backends.ops`). A trace replay is a scenario, not ops: its nodes are
made, then its pods all at once, measured until each is decided (:func:`run_scenario`).
"""

from __future__ import annotations

import asyncio
import gc
import time
from typing import Any

from benchmarks.backends.common import workload_config, workload_scheduler
from benchmarks.backends.ops import run_ops
from benchmarks.catalogue import Workload
from benchmarks.measure import (
    CyclicGarbage,
    LoopLag,
    Result,
    cpu_seconds,
    group_cycles,
    import_lazy_modules,
    measured_result,
)


async def run_memory(w: Workload, batch: bool = True, placements: dict[str, str] | None = None) -> Result:
    """Run ``w`` once. ``batch`` picks the scheduler's batch (columnar) or per-node Filter and
    Score; ``placements``, when given, receives each bound pod's node (``namespace/name``)."""
    if w.scenario is None:
        return await run_ops(w, "memory", batch, placements)
    return await run_scenario(w, batch, placements)


async def run_scenario(w: Workload, batch: bool = True, placements: dict[str, str] | None = None) -> Result:
    """Run ``w``'s scenario once: its nodes, then every one of its pods at once, measured from
    the first create until each pod is decided (bound, or found unschedulable on its first
    attempt)."""
    from kubesched.cluster.memory import InMemoryCluster
    from kubesched.cluster.store import Store

    assert w.scenario is not None
    scenario = w.scenario()
    cfg = workload_config(w)
    store = Store(history=1000)
    cluster = InMemoryCluster(store)
    for node in scenario.nodes:
        store.create("Node", node)
    sched = workload_scheduler(w, cfg, cluster, batch)
    bound = BindCounter(placements)
    store.subscribe(bound)
    runner = asyncio.create_task(sched.run())
    await asyncio.sleep(0)
    await cluster.wait_delivered()
    # As ``kubesched run`` does once its informers have synced: what exists now lives on, and
    # the collector no longer scans it (no pauses of tens of milliseconds mid-burst).
    import_lazy_modules(dra=False)
    gc.collect()
    gc.freeze()
    garbage = CyclicGarbage()
    garbage.start()
    sched.stats.attempt_durations.clear()
    measured: list[dict[str, Any]] = scenario.pending_pods
    lag = LoopLag()
    cpu = cpu_seconds()
    t0 = time.perf_counter()
    # The scenario's pods are its own (kept for another run): the store copies each.
    for pod in measured:
        store.create("Pod", pod)
    await asyncio.sleep(0)
    await cluster.wait_delivered()
    lag.start()
    while not (sched.stats.attempts >= len(measured) and not sched.queue.has_active() and sched.in_flight() == 0):
        await asyncio.sleep(0.005)
        if runner.done():
            raise RuntimeError(f"scheduler stopped: {runner.exception()!r}")
    seconds = time.perf_counter() - t0
    cpu = cpu_seconds() - cpu
    lag.stop()
    garbage.stop()
    durations = list(sched.stats.attempt_durations)
    cycles = group_cycles(sched)
    await sched.stop()
    runner.cancel()
    await asyncio.gather(runner, return_exceptions=True)
    return measured_result(
        w,
        len(scenario.nodes),
        len(measured),
        seconds,
        durations,
        len(measured) - bound.n,
        bound.n,
        lag,
        groups=w.groups,
        group_cycles=cycles,
        cpu=cpu,
        garbage=garbage.count,
    )


class BindCounter:
    """A store subscriber counting the pods bound (and, with ``placements``, where)."""

    def __init__(self, placements: dict[str, str] | None = None) -> None:
        self.n = 0
        self.placements = placements

    def __call__(self, etype: str, kind: str, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
        if kind == "Pod" and etype == "MODIFIED" and old is not None:
            if obj["spec"].get("nodeName") and not old["spec"].get("nodeName"):
                self.n += 1
                if self.placements is not None:
                    meta = obj["metadata"]
                    self.placements[f"{meta.get('namespace')}/{meta['name']}"] = obj["spec"]["nodeName"]
