"""CompositePodGroup hierarchies on the real loop (GenericWorkload + CompositePodGroup): the
members of every PodGroup under a root are placed in one cycle, all of them or none."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import Harness, make_harness, profile, registry_with
from placement_profile import placement_profile

from kubesched.framework.features import FeatureGates
from kubesched.framework.status import Code, Status
from kubesched.plugins.podgrouppodscount import PodGroupPodsCount
from kubesched.scheduler import SchedulerOptions
from kubesched.testing import make_node, make_pod

GATES = FeatureGates().replace(GenericWorkload=True, TopologyAwareWorkloadScheduling=True, CompositePodGroup=True)


def pod_group(name: str, min_count: int, parent: str) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": "default", "uid": f"pg-{name}", "generation": 1},
        "spec": {"schedulingPolicy": {"gang": {"minCount": min_count}}, "parentCompositePodGroupName": parent},
    }


def composite(name: str, min_group_count: int | None) -> dict[str, Any]:
    policy = {"gang": {"minGroupCount": min_group_count}} if min_group_count is not None else {"basic": {}}
    return {
        "apiVersion": "scheduling.k8s.io/v1alpha3",
        "kind": "CompositePodGroup",
        "metadata": {"name": name, "namespace": "default", "uid": f"cpg-{name}", "generation": 1},
        "spec": {"schedulingPolicy": policy},
    }


def member(name: str, group: str) -> dict[str, Any]:
    pod = make_pod(name).req(cpu="1").obj()
    pod["spec"]["schedulingGroup"] = {"podGroupName": group}
    return pod


async def harness(cpus: list[str], min_group_count: int | None = 2, names: str = "a0 a1 b0 b1") -> Harness:
    nodes = [make_node(f"n{i}").capacity(cpu=c, pods=10).obj() for i, c in enumerate(cpus)]
    groups = [composite("job", min_group_count), pod_group("a", 2, "job"), pod_group("b", 2, "job")]
    pods = [member(n, n[0]) for n in names.split()]
    prof = profile(
        preEnqueue=["GangScheduling"],
        preFilter=["NodeResourcesFit"],
        filter=["NodeResourcesFit"],
        placementFeasible=["GangScheduling"],
        permit=["GangScheduling"],
    )
    options = SchedulerOptions(seed=1, record_results=True, feature_gates=GATES)
    return await make_harness([prof], options=options, objs=[*nodes, *groups, *pods])


async def test_a_composite_gang_whose_second_child_cannot_fit_binds_nothing() -> None:
    """Three CPUs for two gangs of two: "a" fits, "b" does not, and the composite needs both."""
    h = await harness(["1", "1", "1"])
    await h.run_all()
    assert [h.node_of(p) for p in ("a0", "a1", "b0", "b1")] == [None] * 4
    assert h.scheduler.cache.assumed_count() == 0
    root = "0/1 placements are available, first placement status: minCount (2) cannot be satisfied: 1 scheduled, 0 remaining"
    msgs = {p: h.scheduler.results[f"default/{p}"].message for p in ("a0", "a1", "b0", "b1")}
    assert msgs["a0"] == msgs["a1"] == root
    assert sorted([msgs["b0"], msgs["b1"]])[0].startswith("0/3 nodes are available: 3 Insufficient cpu.")
    assert "minCount (2) cannot be satisfied: 1 scheduled, 0 remaining" in {msgs["b0"], msgs["b1"]}
    cond_a, cond_b = h.pod_group_condition("a"), h.pod_group_condition("b")
    assert cond_a is not None and (cond_a["status"], cond_a["message"]) == ("False", root)
    assert cond_b is not None and cond_b["status"] == "False"
    assert h.store.get("CompositePodGroup", "default", "job").get("status", {}).get("conditions") is None


async def test_a_composite_gang_that_fits_binds_every_member_in_one_cycle() -> None:
    h = await harness(["1", "1", "1", "1"])
    assert await h.run_all() == 1
    assert all(h.node_of(p) for p in ("a0", "a1", "b0", "b1"))
    for name in ("a", "b"):
        cond = h.pod_group_condition(name)
        assert cond is not None and (cond["status"], cond["reason"]) == ("True", "Scheduled")


async def test_a_basic_composite_binds_the_child_that_fits() -> None:
    """minGroupCount 1 (basic): "a" is placed although "b" is not."""
    h = await harness(["1", "1", "1"], min_group_count=None)
    await h.run_all()
    assert h.node_of("a0") and h.node_of("a1")
    assert h.node_of("b0") is None and h.node_of("b1") is None
    cond_b = h.pod_group_condition("b")
    assert cond_b is not None and cond_b["message"] == "minCount (2) cannot be satisfied: 1 scheduled, 0 remaining"


async def test_members_wait_for_the_tree_quorum_then_go_as_one() -> None:
    """ "b" has one member of two: the tree is short, every member waits at PreEnqueue with the
    root's name; the missing member lets the whole hierarchy in, placed in one cycle."""
    h = await harness(["1", "1", "1", "1"], names="a0 a1 b0")
    assert await h.run_all() == 0
    q = h.scheduler.queue
    for name in ("a0", "a1", "b0"):
        assert q.pooled(h.pod(name)["metadata"]["uid"]).last_failure == (
            'waiting for composite pod group "job" tree to meet quorum'
        )
    h.add(member("b1", "b"))
    assert await h.run_all() == 1
    assert all(h.node_of(p) for p in ("a0", "a1", "b0", "b1"))


@pytest.mark.parametrize(("sizes", "zones"), [((3, 4), {"b"}), ((4, 4), {"a", "b"})], ids=["one fits", "both fit"])
async def test_a_composite_with_a_zone_constraint_keeps_both_children_in_one_zone(
    sizes: tuple[int, int], zones: set[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Zone "a" holds three members or four, zone "b" four: the hierarchy lands in one zone that
    holds both gangs of two ("b" when "a" is too small, although "a" is tried first; either when
    both fit, chosen by PlacementScore over the proposals of both children)."""
    nodes = [
        make_node(f"{zone}{i}").capacity(cpu="1", pods=10).label("zone", zone).obj()
        for zone, count in zip(("a", "b"), sizes, strict=True)
        for i in range(count)
    ]
    cpg = composite("job", 2)
    cpg["spec"]["schedulingConstraints"] = {"topology": [{"key": "zone"}]}
    groups = [cpg, pod_group("x", 2, "job"), pod_group("y", 2, "job")]
    pods = [member(n, n[0]) for n in ("x0", "x1", "y0", "y1")]
    prof = placement_profile("PodGroupPodsCount", permit=["GangScheduling"])
    scored: list[tuple[str, int]] = []
    original = PodGroupPodsCount.score_placement

    def spy(self: PodGroupPodsCount, state: Any, group: Any, assignments: Any) -> int:
        scored.append((str(group.key), len(assignments.assignments)))
        return original(self, state, group, assignments)

    monkeypatch.setattr(PodGroupPodsCount, "score_placement", spy)
    options = SchedulerOptions(seed=1, record_results=True, feature_gates=GATES)
    h = await make_harness([prof], options=options, objs=[*nodes, *groups, *pods])
    assert await h.run_all() == 1
    # Both zones feasible: the composite's placements are scored with all four proposed members.
    assert scored == ([("CompositePodGroup/default/job", 4)] * 2 if len(zones) == 2 else [])
    placed = [h.node_of(p) for p in ("x0", "x1", "y0", "y1")]
    assert all(n is not None for n in placed), placed
    assert len({n[0] for n in placed if n}) == 1 and {n[0] for n in placed if n} <= zones
    assert len(set(placed)) == 4


async def test_members_of_one_hierarchy_with_two_scheduler_names_all_fail_with_the_reason() -> None:
    """Both names are this scheduler's profiles: the hierarchy is one cycle of one profile, so
    a member of another profile fails the cycle for all."""
    nodes = [make_node(f"n{i}").capacity(cpu="1", pods=10).obj() for i in range(4)]
    groups = [composite("job", 2), pod_group("a", 2, "job"), pod_group("b", 2, "job")]
    pods = [member(n, n[0]) for n in ("a0", "a1", "b0", "b1")]
    for p in pods[:2]:  # each PodGroup has one scheduler, the hierarchy two
        p["spec"]["schedulerName"] = "other-scheduler"
    points: dict[str, Any] = {
        "preFilter": ["NodeResourcesFit"],
        "filter": ["NodeResourcesFit"],
        "placementFeasible": ["GangScheduling"],
    }
    options = SchedulerOptions(seed=1, record_results=True, feature_gates=GATES)
    h = await make_harness(
        [profile(**points), profile("other-scheduler", **points)], options=options, objs=[*nodes, *groups, *pods]
    )
    await h.run_all()
    assert all(h.node_of(p) is None for p in ("a0", "a1", "b0", "b1"))
    messages = {h.scheduler.results[f"default/{p}"].message for p in ("a0", "a1", "b0", "b1")}
    assert len(messages) == 1
    (message,) = messages
    assert message.startswith("all pods in a single pod group should have the same .spec.schedulerName set, got: ")
    assert "'default-scheduler'" in message and "'other-scheduler'" in message


async def test_a_nested_composite_that_fails_fails_its_root_and_a_sibling_never_tried() -> None:
    """root (minGroupCount 2) over sub (minGroupCount 2 over s1, s2) and c: s2 cannot fit, so
    sub fails, the root cannot reach two children and stops before c; c's members take the
    root's reason, s1's members (placed, then undone) sub's."""
    nodes = [make_node(f"n{i}").capacity(cpu="1", pods=10).obj() for i in range(2)]
    sub = composite("sub", 2)
    sub["spec"]["parentCompositePodGroupName"] = "root"
    groups = [
        composite("root", 2),
        sub,
        pod_group("s1", 1, "sub"),
        pod_group("s2", 2, "sub"),
        pod_group("c", 1, "root"),
    ]
    pods = [member("s1-0", "s1"), member("s2-0", "s2"), member("s2-1", "s2"), member("c-0", "c")]
    for p, g in zip(pods, ("s1", "s2", "s2", "c"), strict=True):
        p["spec"]["schedulingGroup"] = {"podGroupName": g}
    prof = profile(
        preEnqueue=["GangScheduling"],
        preFilter=["NodeResourcesFit"],
        filter=["NodeResourcesFit"],
        placementFeasible=["GangScheduling"],
    )
    options = SchedulerOptions(seed=1, record_results=True, feature_gates=GATES)
    # Two CPUs: s1 takes one, s2 finds one for its first member and none for its second.
    h = await make_harness([prof], options=options, objs=[*nodes, *groups, *pods])
    await h.run_all()
    assert all(h.node_of(p["metadata"]["name"]) is None for p in pods)
    msg = {p["metadata"]["name"]: h.scheduler.results[f"default/{p['metadata']['name']}"].message for p in pods}
    root = "0/1 placements are available, first placement status: minCount (2) cannot be satisfied: 0 scheduled, 1 remaining"
    sub_reason = "0/1 placements are available, first placement status: minCount (2) cannot be satisfied: 1 scheduled, 0 remaining"
    assert msg["c-0"] == root
    assert msg["s1-0"] == sub_reason
    assert "minCount (2) cannot be satisfied: 1 scheduled, 0 remaining" in {msg["s2-0"], msg["s2-1"]}


class BrokenFor:
    """A PlacementFeasible plugin that errs for PodGroup "b" (and lets everything else pass)."""

    name = "BrokenFor"

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    def placement_feasible(self, state: Any, group: Any, progress: Any) -> Status | None:
        return Status(Code.ERROR, "injected error") if group.name == "b" else None


async def test_a_child_error_is_the_hierarchys_error() -> None:
    """A child that errs aborts the composite (``composite pod group evaluation failed due to
    child error: ...``): the leaf that succeeded before is undone and its members fail with the
    composite's error, the erring leaf's with its own."""
    nodes = [make_node(f"n{i}").capacity(cpu="1", pods=10).obj() for i in range(4)]
    groups = [composite("job", 2), pod_group("a", 2, "job"), pod_group("b", 2, "job")]
    pods = [member(n, n[0]) for n in ("a0", "a1", "b0", "b1")]
    prof = profile(
        preFilter=["NodeResourcesFit"],
        filter=["NodeResourcesFit"],
        placementFeasible=["GangScheduling", "BrokenFor"],
    )
    options = SchedulerOptions(seed=1, record_results=True, feature_gates=GATES)
    h = await make_harness([prof], registry_with(BrokenFor), options=options, objs=[*nodes, *groups, *pods])
    await h.run_all()
    assert all(h.node_of(p) is None for p in ("a0", "a1", "b0", "b1"))
    assert h.scheduler.cache.assumed_count() == 0
    msg = {p: h.scheduler.results[f"default/{p}"].message for p in ("a0", "a1", "b0", "b1")}
    own = 'running PlacementFeasible plugin "BrokenFor": injected error'
    assert msg["a0"] == msg["a1"] == f"composite pod group evaluation failed due to child error: {own}"
    assert msg["b0"] == msg["b1"] == own
    for name in ("a", "b"):
        cond = h.pod_group_condition(name)
        assert cond is not None and (cond["status"], cond["reason"]) == ("False", "SchedulerError")


SNAPSHOT = "failed to build hierarchy snapshot: "


def nested(name: str, parent: str | None) -> dict[str, Any]:
    obj = composite(name, None)
    if parent is not None:
        obj["spec"]["parentCompositePodGroupName"] = parent
    return obj


async def hierarchy(*groups: dict[str, Any]) -> Harness:
    """One node of 4 CPUs, the given groups, and pod "p" of PodGroup "pg" (a gang of one)."""
    prof = profile(
        preEnqueue=["GangScheduling"],
        preFilter=["NodeResourcesFit"],
        filter=["NodeResourcesFit"],
        placementFeasible=["GangScheduling"],
        permit=["GangScheduling"],
    )
    options = SchedulerOptions(seed=1, record_results=True, feature_gates=GATES)
    objs = [make_node("n0").capacity(cpu="4", pods=10).obj(), *groups, member("p", "pg")]
    return await make_harness([prof], options=options, objs=objs)


def waits_silently(h: Harness, message: str) -> None:
    """As 1.37 leaves a pod whose hierarchy snapshot cannot be built: pending, gated at
    PreEnqueue with the snapshot's message, no event, no condition on the pod or its group."""
    assert h.node_of("p") is None
    assert h.scheduler.queue.pooled(h.pod("p")["metadata"]["uid"]).last_failure == message
    assert h.events("p") == [] and h.condition("p") is None and h.pod_group_condition("pg") is None


async def test_a_cyclic_hierarchy_waits_until_the_cycle_is_broken() -> None:
    """Upstream's integration case (cpg1 and cpg2 each other's parent, pg1 under cpg1) as 1.37
    runs it: the member waits; cpg2 deleted and created again as a root lets it through."""
    h = await hierarchy(nested("c1", "c2"), nested("c2", "c1"), pod_group("pg", 1, "c1"))
    assert await h.run_all() == 0
    waits_silently(h, SNAPSHOT + "cycle detected in composite pod group hierarchy: compositepodgroup/default/c2")
    h.delete("CompositePodGroup", "c2")
    h.add(nested("c2", None))
    assert await h.run_all() == 1
    assert h.node_of("p") == "n0"


@pytest.mark.parametrize(
    ("ancestors", "message"),
    [
        (["c1", "c2", "c3", "r"], None),
        (
            ["c1", "c2", "c3", "c4", "r"],
            "composite pod group object not found in state for compositepodgroup/default/c1",
        ),
    ],
    ids=["five levels are scheduled", "six levels wait"],
)
async def test_a_hierarchy_deeper_than_the_maximum(ancestors: list[str], message: str | None) -> None:
    """WorkloadMaxTreeDepth is 4, but 1.37 checks no depth: its hierarchy snapshot's walk up
    stops three parents above the PodGroup, which still reaches the root of five levels; from
    six on the snapshot lacks the root and the member waits (upstream's integration case of five
    levels, which later upstream code refuses, is scheduled)."""
    parents = [*ancestors[1:], None]
    h = await hierarchy(*(nested(n, p) for n, p in zip(ancestors, parents, strict=True)), pod_group("pg", 1, "c1"))
    if message is None:
        assert await h.run_all() == 1
        assert h.node_of("p") == "n0"
    else:
        assert await h.run_all() == 0
        waits_silently(h, SNAPSHOT + message)
