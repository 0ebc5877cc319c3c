"""A replica kept standby follows every pod and schedules none: what it holds must follow the
cluster, not its history. Pods are created, bound by someone else and deleted, cycle after
cycle, through the embedded API server; the standby watches them with the real client."""

from __future__ import annotations

import gc
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from polling import eventually

from kubesched.cluster.kube.cluster import KubeCluster
from kubesched.cluster.store import Store
from kubesched.config import load_config
from kubesched.framework.types import PodInfo, QueuedPodInfo
from kubesched.scheduler import Scheduler, SchedulerOptions
from kubesched.sim.apiserver.server import APIServer
from kubesched.testing import make_node, make_pod

PODS = 40
CYCLES = 3


@pytest.fixture
async def standby(tmp_path: Path) -> AsyncIterator[tuple[Store, Scheduler]]:
    store = Store()
    store.create("Namespace", {"metadata": {"name": "default"}})
    store.create("Node", make_node("n1").capacity(cpu="100", memory="100Gi", pods="1000").obj())
    srv = APIServer(store)
    await srv.start()
    cluster = KubeCluster(kubeconfig=srv.write_kubeconfig(tmp_path / "kubeconfig"))
    sched = Scheduler(load_config(None).profiles, cluster, SchedulerOptions(seed=1, record_results=True))
    sched.set_leading(False)
    try:
        await sched.start()
        yield store, sched
    finally:
        await cluster.stop()
        await srv.stop()


def _alive(prefix: str) -> dict[str, int]:
    """The QueuedPodInfo and PodInfo objects still alive for pods named ``prefix``…"""
    gc.collect()
    qpis = pods = 0
    for obj in gc.get_objects():
        if isinstance(obj, QueuedPodInfo) and obj.pod_info.name.startswith(prefix):
            qpis += 1
        elif isinstance(obj, PodInfo) and obj.name.startswith(prefix):
            pods += 1
    return {"QueuedPodInfo": qpis, "PodInfo": pods}


async def test_a_standby_keeps_nothing_of_pods_bound_elsewhere_and_deleted(standby: tuple[Store, Scheduler]) -> None:
    store, sched = standby
    queue = sched.queue
    for cycle in range(CYCLES):
        names = [f"standby-{cycle}-{i}" for i in range(PODS)]
        for name in names:
            store.create("Pod", make_pod(name).req(cpu="10m").obj())
        await eventually(lambda: len(queue) == PODS, "every pod queued on the standby")
        for name in names:  # the leader binds them
            store.bind("default", name, "n1")
        await eventually(lambda: sched.cache.pod_count() == PODS and len(queue) == 0, "every bind seen")
        for name in names:
            store.delete("Pod", "default", name)
        await eventually(lambda: sched.cache.pod_count() == 0, "every delete seen")

    assert _alive("standby-") == {"QueuedPodInfo": 0, "PodInfo": 0}
    assert queue.footprint() == dict.fromkeys(queue.footprint(), 0)
