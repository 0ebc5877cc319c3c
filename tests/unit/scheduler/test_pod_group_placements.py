"""The placement algorithm on the real loop (GenericWorkload + TopologyAwareWorkloadScheduling):
a group with a zone constraint is placed in one zone or not at all, and PodGroupPodsCount and
NodeResourcesFit's placement score choose between zones that fit."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import Harness, make_harness
from placement_profile import placement_profile

from kubesched.framework.features import FeatureGates
from kubesched.plugins.podgrouppodscount import PodGroupPodsCount
from kubesched.plugins.topologyaware import TopologyPlacementGenerator
from kubesched.runtime.registry import Registry, default_registry
from kubesched.scheduler import SchedulerOptions
from kubesched.server.metrics import PrometheusObserver
from kubesched.testing import make_node, make_pod

GATES = FeatureGates().replace(GenericWorkload=True, TopologyAwareWorkloadScheduling=True)
ZONE = "topology.kubernetes.io/zone"


def registry() -> Registry:
    """The installed plugins, plus this checkout's placement plugins if the install predates them."""
    reg = Registry()
    for e in default_registry().entries():
        reg.register(e.cls, e.name, e.distribution)
    for cls in (TopologyPlacementGenerator, PodGroupPodsCount):
        if cls.name not in reg:
            reg.register(cls)
    return reg


def zoned_group(name: str, min_count: int | None) -> dict[str, Any]:
    policy = {"gang": {"minCount": min_count}} if min_count is not None else {"basic": {}}
    return {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": "default", "uid": f"pg-{name}", "generation": 1},
        "spec": {"schedulingPolicy": policy, "schedulingConstraints": {"topology": [{"key": ZONE}]}},
    }


def member(name: str, group: str, cpu: str = "1", node: str = "") -> dict[str, Any]:
    b = make_pod(name).req(cpu=cpu)
    if node:
        b = b.node(node)
    pod = b.obj()
    pod["spec"]["schedulingGroup"] = {"podGroupName": group}
    return pod


def zone_node(name: str, zone: str, cpu: str) -> dict[str, Any]:
    return make_node(name).capacity(cpu=cpu, memory="64Gi", pods=20).label(ZONE, zone).obj()


async def harness(*objs: Any, observer: Any = None) -> Harness:
    prof = placement_profile(("PodGroupPodsCount", 1), ("NodeResourcesFit", 1))
    options = SchedulerOptions(seed=1, record_results=True, feature_gates=GATES)
    return await make_harness([prof], registry=registry(), options=options, objs=objs, observer=observer)


def zone_of(h: Harness, pod: str) -> str | None:
    node = h.node_of(pod)
    if node is None:
        return None
    return str(h.store.get("Node", None, node)["metadata"]["labels"][ZONE])


async def test_a_gang_with_a_zone_constraint_lands_in_one_zone() -> None:
    """Four 1-CPU members; each zone has two 2-CPU nodes: both fit, the gang takes one of them."""
    nodes = [zone_node(f"{z}{i}", z, "2") for z in ("a", "b") for i in range(2)]
    pods = [member(f"w{i}", "train") for i in range(4)]
    h = await harness(*nodes, zoned_group("train", 4), *pods)
    assert await h.run_all() == 1
    zones = {zone_of(h, f"w{i}") for i in range(4)}
    assert len(zones) == 1 and zones <= {"a", "b"}
    assert h.pod_group_condition("train")["status"] == "True"  # type: ignore[index]
    assert all(h.node_of(f"w{i}") for i in range(4))


async def test_a_gang_no_zone_can_hold_binds_none() -> None:
    """Five CPUs in the cluster for four 1-CPU members, but no zone has four: none is bound and
    the group says how many placements were tried."""
    nodes = [zone_node("a0", "a", "2"), zone_node("b0", "b", "2"), zone_node("b1", "b", "1")]
    pods = [member(f"w{i}", "train") for i in range(4)]
    h = await harness(*nodes, zoned_group("train", 4), *pods)
    await h.run_all()
    assert [h.node_of(f"w{i}") for i in range(4)] == [None] * 4
    assert h.scheduler.cache.assumed_count() == 0
    cond = h.pod_group_condition("train")
    assert cond is not None and (cond["status"], cond["reason"]) == ("False", "Unschedulable")
    assert cond["message"].startswith("0/2 placements are available, first placement status: ")
    assert "minCount (4) cannot be satisfied" in cond["message"]
    messages = [h.scheduler.results[f"default/w{i}"].message for i in range(4)]
    assert any(m.startswith("0/2 placements are available") for m in messages)


async def test_the_zone_holding_more_members_wins() -> None:
    """minCount 2 of 4 members: zone a (4 CPUs) places all four, zone b (2 CPUs) two. Both are
    feasible; PodGroupPodsCount gives a 100 and b 50, so all four go to a."""
    nodes = [zone_node("a0", "a", "4"), zone_node("b0", "b", "2")]
    pods = [member(f"w{i}", "train") for i in range(4)]
    h = await harness(*nodes, zoned_group("train", 2), *pods)
    assert await h.run_all() == 1
    assert [zone_of(h, f"w{i}") for i in range(4)] == ["a"] * 4


async def test_with_equal_counts_the_fuller_zone_wins() -> None:
    """Two 1-CPU members fit in either zone; zone b already runs a 2-CPU pod, so NodeResourcesFit's
    MostAllocated placement score prefers b (4 of 8 CPUs used against 2 of 8)."""
    nodes = [zone_node(f"{z}{i}", z, "4") for z in ("a", "b") for i in range(2)]
    busy = make_pod("busy").req(cpu="2").node("b0").obj()
    pods = [member(f"w{i}", "train") for i in range(2)]
    h = await harness(*nodes, busy, zoned_group("train", 2), *pods)
    assert await h.run_all() == 1
    assert [zone_of(h, "w0"), zone_of(h, "w1")] == ["b", "b"]


async def test_a_member_already_placed_pins_the_group_to_its_zone() -> None:
    """A basic group whose first member runs in zone b: later members go to b only, even though
    zone a has more room; once b is full they wait."""
    nodes = [zone_node("a0", "a", "8"), zone_node("b0", "b", "2")]
    first = member("w0", "web", node="b0")
    pods = [member(f"w{i}", "web") for i in range(1, 4)]
    h = await harness(*nodes, zoned_group("web", None), first, *pods)
    await h.run_all()
    assert zone_of(h, "w0") == "b"
    placed = [zone_of(h, f"w{i}") for i in range(1, 4)]
    assert placed.count("b") == 1 and placed.count(None) == 2 and "a" not in placed


class SnapshotReadingScorer:
    """A placement scorer that reads the handle's snapshot: what it sees of the placement's
    nodes must not include members of placements evaluated (and undone) before scoring."""

    name = "SnapshotReadingScorer"
    seen: list[tuple[str, int]] = []

    def __init__(self, args: Any, handle: Any) -> None:
        self.handle = handle

    def score_placement(self, state: Any, group: Any, assignments: Any) -> int:
        snap = self.handle.snapshot()
        pods = sum(len(snap.get(n).pods) for n in assignments.placement.node_names())
        type(self).seen.append((assignments.placement.name, pods))
        return 0


async def test_placement_scorers_see_the_cluster_without_the_undone_evaluations() -> None:
    SnapshotReadingScorer.seen = []
    reg = registry()
    reg.register(SnapshotReadingScorer)
    prof = placement_profile(("SnapshotReadingScorer", 1))
    nodes = [zone_node(f"{z}0", z, "4") for z in ("a", "b")]
    pods = [member(f"w{i}", "train") for i in range(2)]
    options = SchedulerOptions(seed=1, record_results=True, feature_gates=GATES)
    h = await make_harness([prof], registry=reg, options=options, objs=[*nodes, zoned_group("train", 2), *pods])
    assert await h.run_all() == 1
    assert sorted(SnapshotReadingScorer.seen) == [("a", 0), ("b", 0)]
    assert {zone_of(h, "w0"), zone_of(h, "w1")} in ({"a"}, {"b"})


async def test_the_default_profile_with_both_gates_places_a_zoned_gang() -> None:
    """Upstream's default profile under GenericWorkload + TopologyAwareWorkloadScheduling: the
    pod-group plugins and NodeResourcesFit at placementScore come from multiPoint."""
    from kubesched.config import parse_config

    config = parse_config(
        {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"},
        registry=registry(),
        feature_gates=GATES,
    )
    (spec,) = config.profiles
    assert [r.name for r in spec.plugins["placementScore"]] == ["NodeResourcesFit", "PodGroupPodsCount"]
    # Both zones hold the three members; b already runs a 1-CPU pod, so b is the fuller bin.
    nodes = [zone_node("a0", "a", "4"), zone_node("b0", "b", "4")]
    busy = make_pod("busy").req(cpu="1").node("b0").obj()
    pods = [member(f"w{i}", "train") for i in range(3)]
    options = SchedulerOptions(seed=1, record_results=True, feature_gates=GATES)
    h = await make_harness(
        config.profiles, registry=registry(), options=options, objs=[*nodes, busy, zoned_group("train", 3), *pods]
    )
    assert await h.run_all() == 1
    assert [zone_of(h, f"w{i}") for i in range(3)] == ["b"] * 3


def evaluations(observer: PrometheusObserver, result: str) -> tuple[float | None, float | None]:
    """scheduler_placement_evaluations_total and its latency histogram's count for ``result``."""
    labels = {"result": result, "profile": "default-scheduler"}
    count = observer.registry.get_sample_value("scheduler_placement_evaluations_total", labels)
    timed = observer.registry.get_sample_value("scheduler_placement_evaluation_duration_seconds_count", labels)
    return count, timed


@pytest.mark.parametrize(
    ("cpus", "min_count", "feasible", "infeasible", "generated"),
    [
        ((("a", "2"), ("b", "2"), ("b", "1")), 4, None, 2, 2),
        # Each zone holds two of the four: feasible, not whole, so both are evaluated and scored
        # (and the two left over are tried once more in the zone chosen, the one placement then
        # generated: infeasible).
        ((("a", "2"), ("b", "2")), 2, 2, 1, 3),
        # Each zone holds all four: the first evaluated is taken, the other is not evaluated.
        ((("a", "4"), ("b", "4")), 4, 1, None, 2),
    ],
    ids=["no-zone-holds-the-gang", "both-zones-fit-some", "both-zones-fit-all"],
)
async def test_each_placement_evaluated_is_counted_and_timed(
    cpus: tuple[tuple[str, str], ...], min_count: int, feasible: int | None, infeasible: int | None, generated: int
) -> None:
    """The evaluation counter and the latency histogram move together, one sample per placement
    evaluated, by result; the two zones are the two placements generated."""
    observer = PrometheusObserver(feature_gates=GATES)
    nodes = [zone_node(f"{zone}{i}", zone, cpu) for i, (zone, cpu) in enumerate(cpus)]
    pods = [member(f"w{i}", "train") for i in range(4)]
    h = await harness(*nodes, zoned_group("train", min_count), *pods, observer=observer)
    await h.run_all()
    assert evaluations(observer, "feasible") == (feasible, feasible)
    assert evaluations(observer, "infeasible") == (infeasible, infeasible)
    counted = observer.registry.get_sample_value(
        "scheduler_generated_placements_total", {"profile": "default-scheduler"}
    )
    assert counted == generated


class ReserveCounter:
    """Counts Reserve and Unreserve per pod."""

    name = "ReserveCounter"
    calls: list[tuple[str, str]] = []

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    def reserve(self, state: Any, pod: Any, node_name: str) -> None:
        type(self).calls.append(("reserve", pod.name))

    def unreserve(self, state: Any, pod: Any, node_name: str) -> None:
        type(self).calls.append(("unreserve", pod.name))


class CountsPlaced:
    """A PlacementScore plugin without bounds: more members placed is better."""

    name = "CountsPlaced"

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    def score_placement(self, state: Any, group: Any, assignments: Any) -> int:
        return len(assignments.assignments)


@pytest.mark.parametrize(
    ("zones", "scorer", "expected"),
    [
        # One zone, one placement: kept as its evaluation left it.
        (("a",), "PodGroupPodsCount", [("reserve", "w0"), ("reserve", "w1")]),
        # Two zones, a scorer without bounds: each evaluated and undone, the winner reserved again.
        (
            ("a", "b"),
            "CountsPlaced",
            [("reserve", "w0"), ("reserve", "w1"), ("unreserve", "w1"), ("unreserve", "w0")] * 2
            + [("reserve", "w0"), ("reserve", "w1")],
        ),
        # Two zones, PodGroupPodsCount's bounds: the first where both fit is kept as it is.
        (("a", "b"), "PodGroupPodsCount", [("reserve", "w0"), ("reserve", "w1")]),
    ],
    ids=["one-placement", "two-placements", "two-placements-bounded"],
)
async def test_the_one_placement_there_is_is_not_undone_and_applied_again(
    zones: tuple[str, ...], scorer: str, expected: list[tuple[str, str]]
) -> None:
    ReserveCounter.calls = []
    reg = registry()
    reg.register(ReserveCounter)
    reg.register(CountsPlaced)
    prof = placement_profile((scorer, 1), reserve=["ReserveCounter"])
    nodes = [zone_node(f"{z}0", z, "4") for z in zones]
    pods = [member(f"w{i}", "train") for i in range(2)]
    options = SchedulerOptions(seed=1, record_results=True, feature_gates=GATES)
    h = await make_harness([prof], registry=reg, options=options, objs=[*nodes, zoned_group("train", 2), *pods])
    assert await h.run_all() == 1
    placed = {zone_of(h, "w0"), zone_of(h, "w1")}
    assert len(placed) == 1 and placed <= set(zones)
    assert ReserveCounter.calls == expected
