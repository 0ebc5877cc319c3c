"""The real scheduler loop (``Scheduler.run``) over the in-memory cluster: routing by profile,
failure reporting, requeue on cluster events, backoff on a fake loop clock."""

from __future__ import annotations

import asyncio
import copy
from pathlib import Path
from typing import Any

import pytest
from polling import eventually

from kubesched.cluster.memory import InMemoryCluster
from kubesched.cluster.store import Store
from kubesched.config import load_config, parse_config
from kubesched.scheduler import Scheduler, SchedulerOptions
from kubesched.testing import make_node, make_pod

ROOT = Path(__file__).resolve().parents[2]


class Running:
    def __init__(self, config: Any = None, options: SchedulerOptions | None = None) -> None:
        self.store = Store()
        self.cluster = InMemoryCluster(self.store)
        cfg = load_config(config) if not isinstance(config, dict) else parse_config(config)
        self.scheduler = Scheduler(cfg.profiles, self.cluster, options or SchedulerOptions(seed=3))
        self.task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> Running:
        self.task = asyncio.create_task(self.scheduler.run())
        await asyncio.sleep(0)
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.scheduler.stop(grace=1)
        assert self.task is not None
        await asyncio.wait_for(self.task, 5)

    def create(self, *objs: Any) -> None:
        for o in objs:
            obj = o.obj()
            self.store.create(obj["kind"], obj)

    def node_of(self, name: str) -> str | None:
        return self.store.get("Pod", "default", name)["spec"].get("nodeName")

    def pod(self, name: str) -> dict[str, Any]:
        return self.store.get("Pod", "default", name)


async def test_profiles_route_pods_by_scheduler_name_and_ignore_others() -> None:
    async with Running(ROOT / "config" / "kubesched.yaml") as r:
        r.create(*[make_node(f"n{i}").capacity(cpu="4", memory="16Gi", pods="20") for i in range(4)])
        r.create(*[make_pod(f"spread-{i}").req(cpu="500m", memory="1Gi") for i in range(4)])
        r.create(
            *[make_pod(f"pack-{i}").scheduler("bin-packing-scheduler").req(cpu="500m", memory="1Gi") for i in range(4)]
        )
        r.create(make_pod("foreign").scheduler("someone-else"))
        await eventually(lambda: all(r.node_of(f"spread-{i}") and r.node_of(f"pack-{i}") for i in range(4)))
        # LeastAllocated spreads; MostAllocated packs the second profile's pods together.
        assert len({r.node_of(f"spread-{i}") for i in range(4)}) == 4
        assert len({r.node_of(f"pack-{i}") for i in range(4)}) == 1
        await asyncio.sleep(0.05)
        foreign = r.pod("foreign")
        assert foreign["spec"].get("nodeName") is None
        assert not foreign["status"].get("conditions")
        assert r.cluster.events_for(foreign) == []
        scheduled = [e for e in r.cluster.events_for(r.pod("pack-0")) if e["reason"] == "Scheduled"]
        assert scheduled and scheduled[0]["reportingComponent"] == "bin-packing-scheduler"


async def test_unschedulable_pod_is_reported_then_scheduled_when_a_node_arrives() -> None:
    async with Running() as r:
        r.create(make_node("small").capacity(cpu="1", memory="1Gi", pods="10"))
        r.create(make_pod("big").req(cpu="2"))
        await eventually(lambda: bool(r.pod("big")["status"].get("conditions")))
        cond = r.pod("big")["status"]["conditions"][0]
        assert cond["type"] == "PodScheduled" and cond["status"] == "False" and cond["reason"] == "Unschedulable"
        # Upstream's exact text: the preemption part is a fit error of its own, appended as it is
        # (one period, its own; the scheduler adds none after a PostFilter message since 1.30).
        assert cond["message"] == (
            "0/1 nodes are available: 1 Insufficient cpu. "
            "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
        )
        events = r.cluster.events_for(r.pod("big"))
        assert [e["reason"] for e in events] == ["FailedScheduling"]
        assert r.scheduler.queue.where(r.pod("big")["metadata"]["uid"]) == "unschedulable"
        r.create(make_node("large").capacity(cpu="8", memory="8Gi", pods="10"))
        await eventually(lambda: r.node_of("big") == "large")


async def test_removing_a_taint_requeues_the_pod() -> None:
    async with Running() as r:
        r.create(make_node("n1").taint("dedicated", "gpu"))
        r.create(make_pod("p"))
        await eventually(lambda: bool(r.pod("p")["status"].get("conditions")))
        assert "node(s) had untolerated taint(s)" in r.pod("p")["status"]["conditions"][0]["message"]
        node = copy.deepcopy(r.store.get("Node", None, "n1"))
        node["spec"]["taints"] = []
        r.store.update("Node", node)
        await eventually(lambda: r.node_of("p") == "n1")


async def test_deleting_a_pod_frees_its_room_for_a_waiting_pod() -> None:
    async with Running() as r:
        r.create(make_node("n1").capacity(cpu="1", memory="4Gi", pods="10"))
        r.create(make_pod("first").req(cpu="800m"))
        await eventually(lambda: r.node_of("first") == "n1")
        r.create(make_pod("second").req(cpu="800m"))
        await eventually(lambda: bool(r.pod("second")["status"].get("conditions")))
        r.store.delete("Pod", "default", "first")
        await eventually(lambda: r.node_of("second") == "n1")


@pytest.mark.looptime
async def test_repeated_failures_are_one_aggregated_event() -> None:
    async with Running() as r:
        r.create(make_node("n1").capacity(cpu="1", memory="1Gi", pods="10"))
        r.create(make_pod("big").req(cpu="2"))
        await eventually(lambda: bool(r.cluster.events_for(r.pod("big"))))
        # Nothing changes in the cluster, so the pod is only retried when the unschedulable
        # pool is flushed (after 5 minutes); each retry fails the same way, and the event is
        # counted, not repeated.
        for _ in range(3):
            await asyncio.sleep(331)  # fake time
        events = [e for e in r.cluster.events_for(r.pod("big")) if e["reason"] == "FailedScheduling"]
        assert len(events) == 1
        assert events[0]["count"] == 4


@pytest.mark.looptime
async def test_errors_back_off_exponentially() -> None:
    from kubesched.framework.status import Status

    class Flaky:
        name = "Flaky"
        times: list[float] = []

        def __init__(self, args: Any, handle: Any) -> None:
            pass

        def filter(self, state: Any, pod: Any, node: Any) -> Status:
            Flaky.times.append(asyncio.get_running_loop().time())
            if len(Flaky.times) < 4:
                raise RuntimeError("transient")
            return None  # type: ignore[return-value]

    from conftest import registry_with

    store = Store()
    cluster = InMemoryCluster(store)
    cfg = parse_config(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [
                {"schedulerName": "default-scheduler", "plugins": {"filter": {"enabled": [{"name": "Flaky"}]}}}
            ],
        },
        registry=registry_with(Flaky),
    )
    sched = Scheduler(cfg.profiles, cluster, SchedulerOptions(seed=1), registry=registry_with(Flaky))
    task = asyncio.create_task(sched.run())
    await asyncio.sleep(0)
    store.create("Node", make_node("n1").obj())
    store.create("Pod", make_pod("p").obj())
    await eventually(
        lambda: store.get("Pod", "default", "p")["spec"].get("nodeName"), "p bound", timeout=40, interval=0.1
    )
    await sched.stop(grace=1)
    await asyncio.wait_for(task, 5)
    assert store.get("Pod", "default", "p")["spec"]["nodeName"] == "n1"
    gaps = [b - a for a, b in zip(Flaky.times, Flaky.times[1:], strict=False)]
    # 1s, 2s, 4s of backoff, never shorter. As kube-scheduler 1.37 (SchedulerPopFromBackoffQ),
    # an expiry is truncated to its 1 s window and a pod leaves backoffQ at the flush that
    # starts the next window: each wait is its backoff plus up to one window.
    for gap, backoff in zip(gaps, [1, 2, 4], strict=True):
        assert backoff <= gap <= backoff + 1.2, gaps
