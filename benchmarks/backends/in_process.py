"""The in-memory backend: a workload on the in-memory cluster, in this process.

The scheduler gets its events from the store in-process (no HTTP, no serialization): what is
measured is the scheduler itself. Each run makes its own store and scheduler, so two runs in one
process (``--compare``) start alike.
"""

from __future__ import annotations

import asyncio
import gc
import time
from collections.abc import Callable
from typing import Any

from benchmarks.backends.common import Churn, group_cycles, not_churn, workload_config, workload_scheduler
from benchmarks.catalogue import Workload, default_node, default_pod
from benchmarks.measure import CyclicGarbage, LoopLag, Result, cpu_seconds, import_lazy_modules, measured_result


async def run_memory(w: Workload, batch: bool = True, placements: dict[str, str] | None = None) -> Result:
    """Run ``w`` once. ``batch`` picks the scheduler's batch (columnar) or per-node Filter and
    Score; ``placements``, when given, receives each bound pod's node (``namespace/name``)."""
    from kubesched.cluster.memory import InMemoryCluster
    from kubesched.cluster.store import Store

    cfg = workload_config(w)
    store = Store(history=1000)
    cluster = InMemoryCluster(store)
    scenario = w.scenario() if w.scenario is not None else None
    if scenario is not None:
        for node in scenario.nodes:
            store.create("Node", node)
    else:
        make_node = w.make_node or default_node
        for i in range(w.nodes):
            store.create("Node", make_node(i), owned=True)
    make_pod = w.make_pod or default_pod
    controllers = None
    if w.objects is not None:
        from kubesched.sim.controllers import ControllerManager

        for ns in ("init", "test"):
            store.create("Namespace", {"metadata": {"name": ns}})
        for obj in w.objects():
            store.create(obj["kind"], obj)
        # The resource-claim controller makes each pod's claims from its templates.
        controllers = ControllerManager(store)
        controllers.start()
    if w.pod_groups is not None:
        for obj in w.pod_groups():
            store.create(obj["kind"], obj)
    sched = workload_scheduler(w, cfg, cluster, batch)
    bound = BindCounter(placements, only=not_churn)
    store.subscribe(bound)
    runner = asyncio.create_task(sched.run())
    await asyncio.sleep(0)

    async def place(
        pods: list[dict[str, Any]],
        wait_bound: bool = False,
        on_queued: Callable[[], None] | None = None,
        owned: bool = True,
    ) -> float:
        """Create ``pods`` at once; return the seconds until each has been decided: bound, or
        found unschedulable on its first attempt (or, with ``wait_bound``, until all are bound).
        ``owned``: the pods were made for this call and are handed over to the store, as a
        request's decoded body is to the API server (else the store copies each)."""
        attempts_before = sched.stats.attempts
        bound_before = bound.n
        t0 = time.perf_counter()
        for pod in pods:
            store.create("Pod", pod, owned=owned)
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
    import_lazy_modules(dra=bool(store.list("DeviceClass")[0]))
    gc.freeze()
    garbage = CyclicGarbage()
    garbage.start()
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
    cpu = cpu_seconds()
    # A scenario's pods are its own (kept for another run); the makers' are fresh each call.
    seconds = await place(measured, w.wait_bound, on_queued=lag.start, owned=scenario is None)
    cpu = cpu_seconds() - cpu
    lag.stop()
    garbage.stop()
    await churn.stop()
    durations = list(sched.stats.attempt_durations)
    cycles = group_cycles(sched)
    await sched.stop()
    if controllers is not None:
        await controllers.stop()
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
        groups=w.groups,
        group_cycles=cycles,
        cpu=cpu,
        garbage=garbage.count,
    )


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
