"""Which member of a pod group the queue pops first is up to timing; the order the members are
tried in (and so which member takes which node) must not be: members first tried in one cycle
share one first-attempt time, and go by creation, then name."""

from __future__ import annotations

from typing import Any

from conftest import make_harness, profile

from kubesched.framework.features import FeatureGates
from kubesched.framework.types import PodInfo, QueuedPodInfo
from kubesched.scheduler import SchedulerOptions
from kubesched.scheduler.podgroup.cycle import first_tried_together, member_order
from kubesched.testing import make_node, make_pod

GATES = FeatureGates().replace(GenericWorkload=True)
CREATED = "2026-01-01T00:00:00Z"


def member(name: str) -> dict[str, Any]:
    pod = make_pod(name).req(cpu="1").obj()
    pod["metadata"]["creationTimestamp"] = CREATED
    pod["spec"]["schedulingGroup"] = {"podGroupName": "train"}
    return pod


def queued(name: str, attempts: int, first_try: float) -> QueuedPodInfo:
    q = QueuedPodInfo(PodInfo(member(name)), 0.0)
    q.attempts, q.initial_attempt_timestamp = attempts, first_try
    return q


def test_members_first_tried_in_this_cycle_share_the_earliest_first_attempt() -> None:
    popped, taken = queued("w2", 1, 10.000), [queued("w0", 1, 10.001), queued("w1", 1, 10.002)]
    veteran = queued("w9", 3, 5.0)
    members = [popped, *taken, veteran]
    first_tried_together(members)
    assert [q.initial_attempt_timestamp for q in members] == [10.0, 10.0, 10.0, 5.0]
    # A member tried in an earlier cycle keeps its place ahead; the new ones go by name.
    assert [q.pod_info.name for q in sorted(members, key=member_order)] == ["w9", "w0", "w1", "w2"]


async def test_the_member_popped_first_does_not_take_the_best_node() -> None:
    """w2 is created (and queued) first, so the queue pops it; the clock ticks on every reading,
    so the members taken with it are stamped later. Still w0 goes first and takes the emptiest
    node (LeastAllocated; one pod a node), w1 the next, w2 the last."""
    ticks = iter(range(1_000_000))
    nodes = [make_node(n).capacity(cpu=cpu, pods=1).obj() for n, cpu in (("small", "2"), ("big", "8"), ("mid", "4"))]
    pg = {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "train", "namespace": "default", "uid": "pg-train"},
        "spec": {"schedulingPolicy": {"gang": {"minCount": 3}}},
    }
    fw = profile(
        preEnqueue=["GangScheduling"],
        preFilter=["NodeResourcesFit"],
        filter=["NodeResourcesFit"],
        score=["NodeResourcesFit"],
        placementFeasible=["GangScheduling"],
    )
    options = SchedulerOptions(seed=1, record_results=True, feature_gates=GATES)
    h = await make_harness(
        [fw],
        options=options,
        objs=[*nodes, pg, member("w2"), member("w0"), member("w1")],
        clock=lambda: next(ticks) / 1000,
    )
    assert await h.run_all() == 1
    assert [h.node_of(n) for n in ("w0", "w1", "w2")] == ["big", "mid", "small"]
