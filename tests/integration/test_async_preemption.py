"""Async preemption (upstream's SchedulerAsyncPreemption) through the real scheduler loop over the
in-memory cluster: the preemptor is nominated at once, waits gated while its victims are deleted
in the background, and is scheduled once the last one is gone; a failed deletion activates it."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from polling import eventually

from kubesched.backend.queue import GATED_Q, UNSCHEDULABLE_Q
from kubesched.cluster.base import ClusterError, NotFound
from kubesched.cluster.memory import InMemoryCluster
from kubesched.cluster.store import Store
from kubesched.config import parse_config
from kubesched.framework.features import FeatureGates
from kubesched.plugins.preemption.default_preemption import WAITING_FOR_PREEMPTION, DefaultPreemption
from kubesched.scheduler import Scheduler, SchedulerOptions
from kubesched.server.metrics import PrometheusObserver
from kubesched.testing import make_node, make_pod


class HeldDeletions(InMemoryCluster):
    """Deletes pods only once ``release`` is set, and notes, per deletion, whether the
    preemptor was still held back by DefaultPreemption's PreEnqueue."""

    def __init__(self, store: Store) -> None:
        super().__init__(store)
        self.release = asyncio.Event()
        self.release.set()
        self.deleting: list[str] = []
        self.gated_at_delete: list[bool] = []
        self.plugin: DefaultPreemption | None = None
        self.preemptor_uid = ""
        #: Names whose deletion fails with this error.
        self.fail: dict[str, Exception] = {}

    async def delete_pod(self, pod: dict[str, Any]) -> None:
        name = pod["metadata"]["name"]
        self.deleting.append(name)
        assert self.plugin is not None
        self.gated_at_delete.append(self.plugin.is_pod_running_preemption(self.preemptor_uid))
        await self.release.wait()
        if name in self.fail:
            raise self.fail[name]
        await super().delete_pod(pod)


class Cluster:
    def __init__(self, async_preemption: bool = True) -> None:
        self.store = Store()
        self.cluster = HeldDeletions(self.store)
        cfg = parse_config({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"})
        self.observer = PrometheusObserver()
        self.scheduler = Scheduler(
            cfg.profiles,
            self.cluster,
            SchedulerOptions(
                seed=3,
                feature_gates=FeatureGates({"SchedulerAsyncPreemption": async_preemption}),
                pod_initial_backoff=0.05,
                pod_max_backoff=0.1,
            ),
            observer=self.observer,
        )
        self.cluster.plugin = self.scheduler.frameworks["default-scheduler"].plugins["DefaultPreemption"]
        self.task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> Cluster:
        self.task = asyncio.create_task(self.scheduler.run())
        await asyncio.sleep(0)
        return self

    async def __aexit__(self, *exc: Any) -> None:
        self.cluster.release.set()
        await self.scheduler.stop(grace=2)
        assert self.task is not None
        await asyncio.wait_for(self.task, 5)

    def create(self, *objs: Any) -> None:
        for o in objs:
            obj = o.obj()
            self.store.create(obj["kind"], obj)

    def pod(self, name: str) -> dict[str, Any] | None:
        try:
            return self.store.get("Pod", "default", name)
        except Exception:  # noqa: BLE001 - deleted
            return None

    def node_of(self, name: str) -> str | None:
        p = self.pod(name)
        return p["spec"].get("nodeName") if p else None

    def metric(self, name: str, **labels: str) -> float:
        value = self.observer.registry.get_sample_value(name, labels)
        return value or 0.0


async def fill_node_with_victims(c: Cluster, victims: int = 3) -> Any:
    c.create(make_node("n1").capacity(cpu="3", memory="8Gi", pods="10"))
    c.create(*[make_pod(f"low-{i}").priority(0).req(cpu="1") for i in range(victims)])
    await eventually(lambda: all(c.node_of(f"low-{i}") == "n1" for i in range(victims)))
    high = make_pod("high").priority(100).req(cpu="3")
    c.cluster.preemptor_uid = high.obj()["metadata"]["uid"]
    return high


async def test_the_preemptor_waits_gated_until_its_victims_are_gone_then_lands() -> None:
    async with Cluster() as c:
        high = await fill_node_with_victims(c)
        c.cluster.release.clear()
        c.create(high)
        # Nominated at once, while every deletion is still held.
        await eventually(lambda: (c.pod("high") or {}).get("status", {}).get("nominatedNodeName") == "n1")
        uid = c.cluster.preemptor_uid
        await eventually(lambda: c.scheduler.queue.where(uid) == UNSCHEDULABLE_Q)
        # An event that would let it try again (room elsewhere) meets its PreEnqueue gate.
        c.create(make_node("n2").capacity(cpu="3", memory="8Gi", pods="10"))
        await eventually(lambda: c.scheduler.queue.where(uid) == GATED_Q)
        assert c.node_of("high") is None
        held = next(q for _, q in c.scheduler.queue.pending_pods() if q.pod_info.uid == uid)
        assert held.gating_plugin == "DefaultPreemption"
        assert held.last_failure == WAITING_FOR_PREEMPTION
        c.cluster.release.set()
        # Its nominated node first: n1, now free, rather than the new n2.
        await eventually(lambda: c.node_of("high") == "n1")
        assert all(c.pod(f"low-{i}") is None for i in range(3))
    # Every victim but the last is deleted while the preemptor is held, the last one after them;
    # the preemptor stays marked while that last victim is still in the cache (upstream's
    # lastVictimsPendingPreemption), so this deletion's event is the one that brings it back.
    assert sorted(c.cluster.deleting) == ["low-0", "low-1", "low-2"]
    assert c.cluster.gated_at_delete == [True, True, True]
    assert c.metric("scheduler_preemption_goroutines_execution_total", result="success") == 1
    assert c.metric("scheduler_preemption_victims_count") == 1
    assert c.metric("scheduler_preemption_victims_sum") == 3


async def test_without_async_preemption_the_cycle_deletes_the_victims_itself() -> None:
    async with Cluster(async_preemption=False) as c:
        high = await fill_node_with_victims(c)
        c.create(high)
        await eventually(lambda: c.node_of("high") == "n1")
    assert c.cluster.gated_at_delete == [False, False, False]
    assert c.metric("scheduler_preemption_goroutines_execution_total", result="success") == 0


async def test_a_failed_deletion_activates_the_preemptor_which_preempts_again() -> None:
    async with Cluster() as c:
        high = await fill_node_with_victims(c)
        c.cluster.fail = {"low-0": ClusterError("etcd is unhappy")}
        c.create(high)
        await eventually(lambda: c.metric("scheduler_preemption_goroutines_execution_total", result="error") >= 1)
        # Activated, it tries again: low-0 is still there, so it preempts it once more.
        c.cluster.fail = {}
        await eventually(lambda: c.node_of("high") == "n1")
        assert c.pod("low-0") is None
    assert c.cluster.deleting.count("low-0") >= 2


async def test_a_victim_already_gone_is_not_a_failure() -> None:
    async with Cluster() as c:
        high = await fill_node_with_victims(c, victims=2)
        c.cluster.fail = {"low-0": NotFound('pods "low-0" not found')}
        c.create(high)
        await eventually(lambda: c.metric("scheduler_preemption_goroutines_execution_total", result="success") >= 1)
        assert c.metric("scheduler_preemption_goroutines_execution_total", result="error") == 0
        # A victim reported gone counts as preempted: the rest proceeds, nothing is activated.
        assert c.pod("low-1") is None
        assert "low-1" in c.cluster.deleting


@pytest.mark.parametrize("async_preemption", [True, False])
async def test_decisions_are_the_same_with_and_without_async_preemption(async_preemption: bool) -> None:
    async with Cluster(async_preemption=async_preemption) as c:
        c.create(*[make_node(f"n{i}").capacity(cpu="2", memory="8Gi", pods="10") for i in range(3)])
        c.create(*[make_pod(f"low-{i}").priority(i).req(cpu="1") for i in range(6)])
        await eventually(lambda: all(c.node_of(f"low-{i}") for i in range(6)))
        placed = {f"low-{i}": c.node_of(f"low-{i}") for i in range(6)}
        c.create(make_pod("high").priority(100).req(cpu="2"))
        await eventually(lambda: c.node_of("high") is not None)
        gone = sorted(n for n in placed if c.pod(n) is None)
    # Either way the node chosen is the one whose most important victim matters least (upstream's
    # first criterion), and its pods are the ones deleted.
    top = {node: max(int(n.split("-")[1]) for n, w in placed.items() if w == node) for node in set(placed.values())}
    chosen = min(top, key=lambda node: top[node])
    assert gone == sorted(n for n, where in placed.items() if where == chosen)
