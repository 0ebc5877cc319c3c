"""The simulator one pod at a time: place a pod, see where it went, remove pods, place the next.

:func:`kubesched.sim.run.simulate.simulate` runs a whole scenario and reports at the end. A replay
that measures the cluster after every pod (``kubesched replay``) needs the same machinery — the
real scheduler loop, queue, cache and plugins over an in-memory cluster — driven a step at a
time::

    sim = await SteppedSimulation.start(profiles, nodes, settings)
    sim.advance_to(30.0)                 # simulated seconds (a churn replay: the event's time)
    placed = await sim.place(pod)        # scheduled alone, its binding cycle finished
    placed.node, placed.pod              # the node (None: unschedulable), the pod as bound
    await sim.remove("default", "p1")    # a departure
    await sim.close()                    # everything it held let go

A pod that gets no node is deleted again unless ``keep_unschedulable`` is set: it is never
retried behind the next pods' backs, as a replay that reports each pod once needs (and as the
FGD paper's simulator does).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from kubesched.cluster.base import NotFound
from kubesched.cluster.memory import InMemoryCluster
from kubesched.cluster.store import Store, json_copy
from kubesched.objects import Obj
from kubesched.runtime.framework import ProfileSpec
from kubesched.scheduler import Scheduler
from kubesched.sim.run.simulate import ManualClock, SimulationSettings
from kubesched.sim.scenario.reading import admit_pod


@dataclass
class Placement:
    """Where one pod went: ``node`` (None when unschedulable), ``pod`` as the cluster holds it
    after its binding cycle (annotations written at PreBind included), and ``message``: why it
    got no node."""

    pod: Obj
    node: str | None
    message: str = ""


class SteppedSimulation:
    """The real scheduler over an in-memory cluster, driven a pod at a time (see the module
    docstring). Build it with :meth:`start`."""

    def __init__(
        self, store: Store, cluster: InMemoryCluster, scheduler: Scheduler, keep: bool, clock: ManualClock | None = None
    ) -> None:
        self.store = store
        self.cluster = cluster
        self.scheduler = scheduler
        #: The simulated clock the scheduler runs on (a replay moves it to each event's time).
        self.clock = clock if clock is not None else ManualClock()
        self.keep_unschedulable = keep
        self._uid = 0

    @classmethod
    async def start(
        cls,
        profiles: list[ProfileSpec],
        nodes: list[Obj],
        settings: SimulationSettings | None = None,
        *,
        events: bool = False,
        keep_unschedulable: bool = False,
    ) -> SteppedSimulation:
        """A cluster of ``nodes`` (created in the order given) and a scheduler of ``profiles``,
        informers synced. ``events``: write Scheduled/FailedScheduling events and pod
        conditions, as ``simulate`` does (a replay reads placements, not events)."""
        settings = settings or SimulationSettings()
        store = Store(history=100)
        store.follow_gates(settings.feature_gates)
        for name in ("default", "kube-system"):
            store.create("Namespace", {"metadata": {"name": name}})
        for node in nodes:
            store.create("Node", node)
        cluster = InMemoryCluster(store)
        options = settings.scheduler_options(record_plugin_results=False, report_to_cluster=events)
        clock = ManualClock()
        scheduler = Scheduler(profiles, cluster, options, clock=clock)
        await scheduler.start()
        return cls(store, cluster, scheduler, keep_unschedulable, clock)

    def advance_to(self, t: float) -> None:
        """Simulated time moves on to ``t`` seconds (never back)."""
        self.clock.advance_to(t)

    async def place(self, pod: Obj) -> Placement:
        """Create ``pod`` (a copy), schedule it to a decision and finish its binding cycle."""
        # One copy, which admission completes and the store keeps (the caller's is untouched).
        pod = json_copy(pod)
        meta = pod["metadata"] = pod.get("metadata") or {}
        pod["spec"] = pod.get("spec") or {}
        meta.setdefault("namespace", "default")
        self._uid += 1
        meta.setdefault("uid", f"00000000-0000-0000-0001-{self._uid:012d}")
        admit_pod(pod, {})
        ns, name = meta["namespace"], meta["name"]
        key = f"{ns}/{name}"
        self.store.create("Pod", pod, owned=True)
        await self.cluster.wait_delivered()
        queue = self.scheduler.queue
        while (qpi := queue.pop_nowait()) is not None:
            await self.scheduler.schedule_one(qpi)
            await asyncio.sleep(0)
        await self.scheduler.wait_for_bindings()
        await self.cluster.wait_delivered()
        live = self.store.get("Pod", ns, name)
        node = (live.get("spec") or {}).get("nodeName") or None
        if node is not None:
            return Placement(live, node)
        result = self.scheduler.results.get(key)
        message = result.message if result is not None and result.message else "not attempted"
        if not self.keep_unschedulable:
            self.store.delete("Pod", ns, name)
            await self.cluster.wait_delivered()
        return Placement(live, None, message)

    async def remove(self, namespace: str, name: str) -> Obj | None:
        """Delete a pod (it leaves its node); the pod as it was, or None when there is none."""
        try:
            pod = self.store.delete("Pod", namespace, name)
        except NotFound:
            return None
        await self.cluster.wait_delivered()
        return pod

    async def close(self) -> None:
        """Stop the scheduler and the cluster, then let go of what they hold: a process that
        runs simulations one after another (a sweep's worker) frees each as it closes."""
        await self.scheduler.stop()
        await self.cluster.stop()
        self.scheduler.release()
        self.store.discard()


__all__ = ["Placement", "SteppedSimulation"]
