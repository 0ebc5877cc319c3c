"""The pod-group cycle on the real loop (GenericWorkload): a group's pending members are placed
together, all of them or none, and the PodGroup says so."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import Harness, make_harness, profile

from kubesched.framework.features import FeatureGates
from kubesched.scheduler import SchedulerOptions
from kubesched.testing import make_node, make_pod

GATES = FeatureGates().replace(GenericWorkload=True)


def pod_group(name: str, min_count: int | None = None, namespace: str = "default", **spec: Any) -> dict[str, Any]:
    policy = {"gang": {"minCount": min_count}} if min_count is not None else {"basic": {}}
    return {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": namespace, "uid": f"pg-{name}", "generation": 1},
        "spec": {"schedulingPolicy": policy, **spec},
    }


def member(name: str, group: str, cpu: str = "1", priority: int = 0) -> dict[str, Any]:
    pod = make_pod(name).req(cpu=cpu).priority(priority).obj()
    pod["spec"]["schedulingGroup"] = {"podGroupName": group}
    return pod


def gang_profile() -> Any:
    return profile(
        preEnqueue=["GangScheduling"],
        preFilter=["NodeResourcesFit"],
        filter=["NodeResourcesFit"],
        placementFeasible=["GangScheduling"],
        permit=["GangScheduling"],
    )


async def harness(*objs: Any, gates: FeatureGates = GATES) -> Harness:
    options = SchedulerOptions(seed=1, record_results=True, feature_gates=gates)
    return await make_harness([gang_profile()], options=options, objs=objs)


async def test_a_gang_whose_last_member_cannot_fit_binds_none_and_says_why() -> None:
    """Eight members of 1 CPU on 7 CPUs: none is bound; the seven that fit say the gang's
    reason, the eighth its own; the PodGroup's condition is False/Unschedulable."""
    nodes = [make_node(f"n{i}").capacity(cpu="1", pods=10).obj() for i in range(7)]
    pods = [member(f"w{i}", "train") for i in range(8)]
    h = await harness(*nodes, pod_group("train", 8), *pods)
    await h.run_all()
    assert [h.node_of(f"w{i}") for i in range(8)] == [None] * 8
    messages = {h.scheduler.results[f"default/w{i}"].message for i in range(8)}
    assert "minCount (8) cannot be satisfied: 7 scheduled, 0 remaining" in messages
    assert any(m.startswith("0/7 nodes are available: 7 Insufficient cpu.") for m in messages)
    assert h.scheduler.cache.assumed_count() == 0
    cond = h.pod_group_condition("train")
    assert cond is not None and (cond["status"], cond["reason"]) == ("False", "Unschedulable")
    assert cond["message"] == "minCount (8) cannot be satisfied: 7 scheduled, 0 remaining"
    events = [e.get("note") or e.get("message", "") for i in range(8) for e in h.events(f"w{i}")]
    assert sum("minCount (8) cannot be satisfied" in n for n in events) == 7


async def test_a_gang_that_fits_binds_every_member_in_one_cycle() -> None:
    nodes = [make_node(f"n{i}").capacity(cpu="2", pods=10).obj() for i in range(4)]
    pods = [member(f"w{i}", "train") for i in range(8)]
    h = await harness(*nodes, pod_group("train", 8), *pods)
    cycles = await h.run_all()
    assert cycles == 1
    assert all(h.node_of(f"w{i}") for i in range(8))
    cond = h.pod_group_condition("train")
    assert cond is not None and (cond["status"], cond["reason"]) == ("True", "Scheduled")


async def test_a_gang_waits_for_its_quorum_then_goes_as_one() -> None:
    """PreEnqueue holds members until minCount of them exist; the last arrival lets all in."""
    nodes = [make_node("n0").capacity(cpu="8", pods=10).obj()]
    h = await harness(*nodes, pod_group("train", 3), member("w0", "train"), member("w1", "train"))
    assert await h.run_all() == 0
    q = h.scheduler.queue
    assert q.counts()["gated"] == 2
    assert q.pooled(h.pod("w0")["metadata"]["uid"]).last_failure == (
        "waiting for minCount pods from a gang to appear in scheduling queue"
    )
    h.add(member("w2", "train"))
    assert await h.run_all() == 1
    assert [h.node_of(f"w{i}") for i in range(3)] == ["n0"] * 3


async def test_a_member_waits_for_its_pod_group_object() -> None:
    """A member whose PodGroup is unseen waits apart (incomplete), never tried; the PodGroup's
    arrival brings it to the queue as its group."""
    nodes = [make_node("n0").capacity(cpu="8", pods=10).obj()]
    h = await harness(*nodes, member("w0", "late"))
    assert await h.run_all() == 0
    queue = h.scheduler.queue
    assert queue.where(h.pod("w0")["metadata"]["uid"]) == "incomplete"
    assert queue.counts()["incomplete"] == 1
    h.add(pod_group("late", 1))
    assert await h.run_all() == 1
    assert h.node_of("w0") == "n0"


async def test_a_basic_group_places_what_fits() -> None:
    """A basic group's minimum is one: members that fit are bound, the others say why."""
    nodes = [make_node("n0").capacity(cpu="2", pods=10).obj()]
    pods = [member(f"w{i}", "web") for i in range(3)]
    h = await harness(*nodes, pod_group("web"), *pods)
    await h.run_all()
    bound = [h.node_of(f"w{i}") for i in range(3)]
    assert bound.count("n0") == 2 and bound.count(None) == 1
    cond = h.pod_group_condition("web")
    assert cond is not None and cond["status"] == "True"


async def test_the_condition_never_goes_back_to_false() -> None:
    """Once initially scheduled, a later member that cannot fit leaves the condition True."""
    nodes = [make_node("n0").capacity(cpu="2", pods=10).obj()]
    h = await harness(*nodes, pod_group("train", 2), member("w0", "train"), member("w1", "train"))
    await h.run_all()
    assert h.pod_group_condition("train")["status"] == "True"  # type: ignore[index]
    h.add(member("w2", "train"))
    await h.run_all()
    assert h.node_of("w2") is None
    cond = h.pod_group_condition("train")
    assert cond is not None and cond["status"] == "True"


async def test_members_with_different_priorities_than_the_group_fail_all() -> None:
    nodes = [make_node("n0").capacity(cpu="8", pods=10).obj()]
    pods = [member("w0", "train", priority=5), member("w1", "train", priority=5)]
    h = await harness(*nodes, pod_group("train", 2, priority=7), *pods)
    await h.run_once()
    msg = "all pods in a single pod group should have the same priority as the pod group's priority, got 5 and 7"
    assert h.scheduler.results["default/w0"].message == msg
    assert h.scheduler.results["default/w1"].message == msg
    assert h.pod_group_condition("train")["reason"] == "SchedulerError"  # type: ignore[index]


@pytest.mark.parametrize("gates", [FeatureGates()])
async def test_without_the_gate_members_are_scheduled_one_by_one(gates: FeatureGates) -> None:
    """GenericWorkload off: schedulingGroup means nothing to the scheduler."""
    nodes = [make_node(f"n{i}").capacity(cpu="1", pods=10).obj() for i in range(7)]
    pods = [member(f"w{i}", "train") for i in range(8)]
    options = SchedulerOptions(seed=1, record_results=True, feature_gates=gates)
    h = await make_harness(
        [profile(preFilter=["NodeResourcesFit"], filter=["NodeResourcesFit"])], options=options, objs=[*nodes, *pods]
    )
    await h.run_all()
    assert sum(1 for i in range(8) if h.node_of(f"w{i}")) == 7
