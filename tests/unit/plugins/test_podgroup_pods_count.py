"""PodGroupPodsCount: upstream's TestScorePlacement (its PodGroup cases and the four
CompositePodGroup ones, with placed pods across a multi-level hierarchy) and
TestNormalizePlacementScore (podgroup_pods_count_test.go, 1.37)."""

from __future__ import annotations

import pytest
from pod_group_fakes import PodGroupHandle, composite_pod_group, grouped_pod, pod_group

from kubesched.framework.interface import CycleState
from kubesched.framework.podgroup import (
    COMPOSITE_POD_GROUP_KIND,
    Placement,
    PlacementScore,
    PodGroupAssignments,
    PodGroupInfo,
    ProposedAssignment,
)
from kubesched.framework.status import Code
from kubesched.framework.types import PodInfo
from kubesched.plugins.podgrouppodscount import NO_PODS_ASSIGNED, PodGroupPodsCount
from kubesched.testing import make_node

GROUP = "pg1"


@pytest.mark.parametrize(
    ("assigned", "assumed", "want"),
    [
        ({"p2": "node2", "p3": "node3"}, {"p1": "node1"}, 5),  # 1 assumed + 2 assigned + 2 proposed
        ({"p1": "node1"}, {}, 3),  # 1 assigned + 2 proposed
        ({}, {"p1": "node1"}, 3),  # 1 assumed + 2 proposed
        ({}, {}, 2),  # 2 proposed
    ],
    ids=[
        "existing assigned and assumed pods",
        "no assumed pods",
        "no assigned pods",
        "no assigned pods, no assumed pods",
    ],
)
def test_score_placement(assigned: dict[str, str], assumed: dict[str, str], want: int) -> None:
    h = PodGroupHandle()
    h.add_nodes(*(make_node(f"node{i}").capacity(cpu="4", pods=10).obj() for i in (1, 2, 3)))
    h.add_groups(pod_group(GROUP, min_count=1))
    for name, n in assigned.items():
        h.add_pod(grouped_pod(name, GROUP, node=n))
    for name, n in assumed.items():
        h.assume(grouped_pod(name, GROUP), n)
    # The members proposed by the placement's evaluation are known, pending, members.
    proposed = [h.add_pod(grouped_pod(f"proposed-pod-{i}", GROUP)) for i in (1, 2)]
    h.add_pod(grouped_pod("p-new", GROUP))
    placement = Placement("p", h.snapshot().list())
    assignments = PodGroupAssignments(
        placement, [ProposedAssignment(pi, f"node{i}") for i, pi in enumerate(proposed, 1)]
    )
    plugin = PodGroupPodsCount(None, h)  # type: ignore[arg-type]
    assert plugin.score_placement(CycleState(), PodGroupInfo("default", GROUP, None), assignments) == want


@pytest.mark.parametrize(
    ("assigned", "assumed", "want"),
    [
        ({"a0": ("pg1", "node2"), "a1": ("pg2", "node3")}, {"s0": ("pg1", "node1")}, 5),
        ({"a0": ("pg1", "node1")}, {}, 3),
        ({}, {"s0": ("pg1", "node1")}, 3),
        ({}, {}, 2),
    ],
    ids=[
        "for cpg existing assigned and assumed pods across multi-level hierarchies",
        "for cpg with no assumed pods",
        "for cpg with no assigned pods",
        "for cpg with no assigned pods, no assumed pods",
    ],
)
def test_score_placement_of_a_composite_sums_its_pod_groups(
    assigned: dict[str, tuple[str, str]], assumed: dict[str, tuple[str, str]], want: int
) -> None:
    """root → cpg1 → pg1 and root → cpg2 → pg2 (upstream's paths to the root)."""
    h = PodGroupHandle(composite=True)
    h.add_nodes(*(make_node(f"node{i}").capacity(cpu="4", pods=10).obj() for i in (1, 2, 3)))
    h.add_groups(
        composite_pod_group("root"),
        composite_pod_group("cpg1", parent="root"),
        composite_pod_group("cpg2", parent="root"),
        pod_group("pg1", parent="cpg1"),
        pod_group("pg2", parent="cpg2"),
        pod_group("elsewhere"),
    )
    h.add_pod(grouped_pod("outside", "elsewhere", node="node1"))
    for name, (group, n) in assigned.items():
        h.add_pod(grouped_pod(name, group, node=n))
    for name, (group, n) in assumed.items():
        h.assume(grouped_pod(name, group), n)
    proposed = [PodInfo(grouped_pod(f"proposed-pod-{i}", "pg1")) for i in (1, 2)]
    assignments = PodGroupAssignments(
        Placement("p", []), [ProposedAssignment(pi, f"node{i}") for i, pi in enumerate(proposed, 1)]
    )
    root = PodGroupInfo("default", "root", composite_pod_group("root"), kind=COMPOSITE_POD_GROUP_KIND)
    plugin = PodGroupPodsCount(None, h)  # type: ignore[arg-type]
    assert plugin.score_placement(CycleState(), root, assignments) == want


def test_members_of_other_groups_do_not_count() -> None:
    h = PodGroupHandle()
    h.add_nodes(make_node("node1").capacity(cpu="4", pods=10).obj())
    h.add_pod(grouped_pod("other", "pg2", node="node1"))
    h.add_pod(grouped_pod("loose", None, node="node1"))
    pi = PodInfo(grouped_pod("m", GROUP))
    assignments = PodGroupAssignments(Placement("p", []), [ProposedAssignment(pi, "node1")])
    plugin = PodGroupPodsCount(None, h)  # type: ignore[arg-type]
    assert plugin.score_placement(CycleState(), PodGroupInfo("default", GROUP, None), assignments) == 1


@pytest.mark.parametrize(
    ("scores", "want"),
    [
        ([10, 50, 110], [9, 45, 100]),  # score * 100 / 110, integer division
        ([50, 50], [100, 100]),
        ([50], [100]),
        ([11, 100, 101, 102], [10, 98, 99, 100]),  # a far low score is not spread evenly
    ],
    ids=[
        "distinct scores",
        "equal scores",
        "single score",
        "some minimal score that is far from a group of scores located closely",
    ],
)
def test_normalize_placement_score(scores: list[int], want: list[int]) -> None:
    entries = [PlacementScore(Placement(f"p{i}", []), s) for i, s in enumerate(scores)]
    plugin = PodGroupPodsCount(None, PodGroupHandle())  # type: ignore[arg-type]
    assert plugin.normalize_placement_scores(CycleState(), PodGroupInfo("default", GROUP, None), entries) is None
    assert [e.score for e in entries] == want


def test_normalize_zero_scores_is_an_error() -> None:
    entries = [PlacementScore(Placement("a", []), 0), PlacementScore(Placement("b", []), 0)]
    plugin = PodGroupPodsCount(None, PodGroupHandle())  # type: ignore[arg-type]
    status = plugin.normalize_placement_scores(CycleState(), PodGroupInfo("default", GROUP, None), entries)
    assert status is not None and status.code is Code.ERROR
    assert (
        status.message() == NO_PODS_ASSIGNED == "no pods from pod group are assigned to any of the candidate placements"
    )
