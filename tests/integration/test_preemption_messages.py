"""What a running scheduler writes when preemption finds room, as kube-scheduler 1.37 does:

* a pod: the FailedScheduling event and the PodScheduled condition of the attempt that nominated
  it end ``preemption: found a potential placement for pod on node N, preempting K victims``
  (the PostFilter message appended as it is: no period after it);
* a pod group: its ``PodGroupInitiallyScheduled`` condition (False, Unschedulable) and its
  waiting members' messages end ``pod group preemption: found a placement for podgroup,
  preempting K victims``, after the group's own reasons; its victims' events say ``Preempted by
  podgroup <uid> on node cluster`` (the group preempts over the whole cluster).

The real loop (``Scheduler.run``) over the in-memory cluster, default profile.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from polling import eventually

from kubesched.cluster.base import NotFound
from kubesched.cluster.memory import InMemoryCluster
from kubesched.cluster.store import Store
from kubesched.config import load_config
from kubesched.framework.features import FeatureGates
from kubesched.scheduler import Scheduler, SchedulerOptions
from kubesched.testing import make_node, make_pod

Obj = dict[str, Any]


class Running:
    def __init__(self, gates: FeatureGates) -> None:
        self.store = Store()
        self.cluster = InMemoryCluster(self.store)
        cfg = load_config(None, feature_gates=gates)
        self.scheduler = Scheduler(cfg.profiles, self.cluster, SchedulerOptions(seed=3, feature_gates=gates))
        self.task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> Running:
        self.task = asyncio.create_task(self.scheduler.run())
        await asyncio.sleep(0)
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.scheduler.stop(grace=1)
        assert self.task is not None
        await asyncio.wait_for(self.task, 5)

    def create(self, *objs: Obj) -> None:
        for obj in objs:
            self.store.create(obj["kind"], obj)

    def pod(self, name: str) -> Obj | None:
        try:
            return self.store.get("Pod", "default", name)
        except NotFound:
            return None

    def node_of(self, name: str) -> str | None:
        pod = self.pod(name)
        return pod["spec"].get("nodeName") if pod is not None else None

    def failed_scheduling(self, name: str) -> list[str]:
        pod = self.pod(name)
        assert pod is not None
        return [e["message"] for e in self.cluster.events_for(pod) if e["reason"] == "FailedScheduling"]

    def conditions_written(self, kind: str, name: str, ctype: str) -> list[tuple[str, str, str]]:
        """Every distinct ``(status, reason, message)`` the object's condition had, oldest first
        (the store's watch history: the victims go at once here, so a waiting state is brief)."""
        seen: list[tuple[str, str, str]] = []
        for _, _, k, obj, _ in self.store.events_since(0, [kind]):
            if k != kind or obj["metadata"]["name"] != name:
                continue
            for c in (obj.get("status") or {}).get("conditions") or ():
                if c["type"] == ctype:
                    got = (c["status"], c.get("reason", ""), c.get("message", ""))
                    if not seen or seen[-1] != got:
                        seen.append(got)
        return seen


@pytest.mark.parametrize("async_preemption", [True, False], ids=["async", "sync"])
async def test_the_attempt_that_nominates_says_where_and_how_many(async_preemption: bool) -> None:
    gates = FeatureGates().replace(SchedulerAsyncPreemption=async_preemption)
    async with Running(gates) as r:
        r.create(make_node("n1").capacity(cpu="2", memory="8Gi", pods="10").obj())
        r.create(make_node("n2").capacity(cpu="2", memory="8Gi", pods="10").obj())
        # n1 is held by a pod of higher priority; n2 by two of lower priority, both needed.
        r.create(make_pod("keeper").node("n1").priority(1000).req(cpu="2").obj())
        r.create(*(make_pod(f"low-{i}").node("n2").priority(0).req(cpu="1").obj() for i in range(2)))
        r.create(make_pod("urgent").priority(100).req(cpu="2").obj())
        await eventually(lambda: r.node_of("urgent") == "n2", "the preemptor bound where it preempted")
        said = (
            "0/2 nodes are available: 2 Insufficient cpu. "
            "preemption: found a potential placement for pod on node n2, preempting 2 victims"
        )
        # The event and the PodScheduled condition of the attempt that nominated it; then bound.
        assert r.failed_scheduling("urgent") == [said]
        assert r.conditions_written("Pod", "urgent", "PodScheduled") == [
            ("False", "Unschedulable", said),
            ("True", "", ""),
        ]
        assert r.pod("low-0") is None and r.pod("low-1") is None


def pod_group(name: str, min_count: int, priority: int) -> Obj:
    return {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"schedulingPolicy": {"gang": {"minCount": min_count}}, "priority": priority},
    }


def member(name: str, group: str, cpu: str, priority: int) -> Obj:
    obj = make_pod(name).priority(priority).req(cpu=cpu).obj()
    obj["spec"]["schedulingGroup"] = {"podGroupName": group}
    return obj


async def test_a_pod_group_that_preempts_says_so_on_its_condition() -> None:
    gates = FeatureGates().replace(GenericWorkload=True)
    async with Running(gates) as r:
        r.create(make_node("n1").capacity(cpu="2", memory="8Gi", pods="10").obj())
        r.create(make_pod("low").node("n1").priority(0).req(cpu="2").obj())
        r.create(pod_group("train", 1, 100), member("w0", "train", "2", 100))
        await eventually(lambda: r.node_of("w0") == "n1", "the member bound where the group preempted")
        assert r.pod("low") is None
        conds = await eventually(
            lambda: r.conditions_written("PodGroup", "train", "PodGroupInitiallyScheduled"),
            "the PodGroup's condition, True at last",
            until=lambda c: bool(c) and c[-1][0] == "True",
        )
        waiting, scheduled = conds
        assert scheduled == ("True", "Scheduled", "")
        assert waiting[:2] == ("False", "Unschedulable")
        # The group's own reason, then the preemption's, joined as a status's reasons are.
        assert waiting[2] == (
            "minCount (1) cannot be satisfied: 0 scheduled, 0 remaining, "
            "pod group preemption: found a placement for podgroup, preempting 1 victims"
        )
        # The member waited nominated with the group's message.
        assert r.failed_scheduling("w0") == [waiting[2]]
        # The victim was taken for the group, over the whole cluster, and says so.
        group_uid = r.store.get("PodGroup", "default", "train")["metadata"]["uid"]
        victim = [obj for _, _, k, obj, _ in r.store.events_since(0, ["Pod"]) if obj["metadata"]["name"] == "low"]
        assert {c["message"] for c in victim[-1]["status"]["conditions"] if c["type"] == "DisruptionTarget"} == {
            "default-scheduler: preempting to accommodate a higher priority podgroup"
        }
        events = r.cluster.events_for(victim[-1])
        assert [e["message"] for e in events if e["reason"] == "Preempted"] == [
            f"Preempted by podgroup {group_uid} on node cluster"
        ]
