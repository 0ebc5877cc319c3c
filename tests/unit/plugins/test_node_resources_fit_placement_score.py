"""NodeResourcesFit's placement score: the cases of upstream's TestPlacementBinPackingScore
(placement_score_test.go, the PlacementBinPacking plugin that was folded into NodeResourcesFit;
the 1.37 tag's own table was not found), plus what the docs page states: the strategy type is
ignored (always MostAllocated), the resources and weights are the plugin's."""

from __future__ import annotations

from typing import Any

import pytest
from pod_group_fakes import PodGroupHandle, grouped_pod

from kubesched.framework.interface import CycleState
from kubesched.framework.podgroup import Placement, PodGroupAssignments, PodGroupInfo, ProposedAssignment
from kubesched.framework.types import PodInfo
from kubesched.plugins.noderesources.fit import NodeResourcesFit, NodeResourcesFitArgs
from kubesched.testing import make_node

GPU = "nvidia.com/gpu"


def node(name: str, gpu: str | None = None) -> dict[str, Any]:
    b = make_node(name)
    return b.capacity(cpu="5000m", memory="5000", pods=110, **({GPU: gpu} if gpu else {})).obj()


def req(cpu: str, memory: str, gpu: str | None = None) -> dict[str, str]:
    r = {"cpu": cpu, "memory": memory}
    if gpu is not None:
        r[GPU] = gpu
    return r


def plugin(
    kind: str = "MostAllocated", resources: tuple[str, ...] = ("cpu", "memory"), handle: Any = None
) -> NodeResourcesFit:
    args = NodeResourcesFitArgs.model_validate(
        {"scoringStrategy": {"type": kind, "resources": [{"name": r, "weight": 1} for r in resources]}}
    )
    return NodeResourcesFit(args, handle)


def score(
    fit: NodeResourcesFit,
    nodes: list[dict[str, Any]],
    placement_nodes: list[str],
    group: list[tuple[dict[str, str], str]],
    existing: list[tuple[str, dict[str, str]]] = (),  # type: ignore[assignment]
) -> int:
    h = PodGroupHandle()
    h.add_nodes(*nodes)
    for i, (n, r) in enumerate(existing):
        h.add_pod(grouped_pod(f"baz{i}", None, node=n, **r))
    snap = h.snapshot()
    placement = Placement("p", [snap.get(n) for n in placement_nodes])
    proposed = [ProposedAssignment(PodInfo(grouped_pod(f"m{i}", "pg", **r)), n) for i, (r, n) in enumerate(group)]
    return fit.score_placement(
        CycleState(), PodGroupInfo("default", "pg", None), PodGroupAssignments(placement, proposed)
    )


TWO_MEMBERS = [(req("1000m", "0"), "node1"), (req("2000m", "2000"), "node2")]


@pytest.mark.parametrize(
    ("nodes", "group", "existing", "resources", "want"),
    [
        ([node("node1"), node("node2")], TWO_MEMBERS, [], ("cpu", "memory"), 25),
        ([node("node1"), node("node2"), node("node3")], TWO_MEMBERS, [], ("cpu", "memory"), 25),
        ([node("node1"), node("node2")], TWO_MEMBERS, [("node1", req("1000m", "0"))], ("cpu", "memory"), 30),
        (
            [node("node1", "5"), node("node2", "5")],
            [(req("1000m", "0", "0"), "node1"), (req("1000m", "2000", "1"), "node2")],
            [("node1", req("1000m", "0", "0"))],
            ("cpu", "memory", GPU),
            20,
        ),
        (
            [node("node1", "5"), node("node2", "5")],
            [(req("1000m", "0", "0"), "node1"), (req("1000m", "2000", "0"), "node2")],
            [("node1", req("1000m", "0", "1"))],
            ("cpu", "memory", GPU),
            25,
        ),
    ],
    ids=[
        "Computes score based on total requests",
        "Does not include nodes from outside of placement",
        "Includes pre-existing pods from outside of pod group",
        "Includes scalar resources if any pod in pod group has nonzero requests",
        "Does not include scalar resources if all pods in pod group have zero requests",
    ],
)
def test_placement_bin_packing_score(
    nodes: list[dict[str, Any]],
    group: list[tuple[dict[str, str], str]],
    existing: list[tuple[str, dict[str, str]]],
    resources: tuple[str, ...],
    want: int,
) -> None:
    assert score(plugin(resources=resources), nodes, ["node1", "node2"], group, existing) == want


@pytest.mark.parametrize("kind", ["LeastAllocated", "MostAllocated"])
def test_the_strategy_type_is_for_pods_only_placements_are_bin_packed(kind: str) -> None:
    """3000m of 10000m cpu and 2000 of 10000 memory: 30 and 20, whatever the type says."""
    assert score(plugin(kind), [node("node1"), node("node2")], ["node1", "node2"], TWO_MEMBERS) == 25


def test_resource_weights_are_the_plugins() -> None:
    args = NodeResourcesFitArgs.model_validate(
        {
            "scoringStrategy": {
                "type": "LeastAllocated",
                "resources": [{"name": "cpu", "weight": 3}, {"name": "memory", "weight": 1}],
            }
        }
    )
    # (30 * 3 + 20 * 1) / 4 = 27
    assert score(NodeResourcesFit(args), [node("node1"), node("node2")], ["node1", "node2"], TWO_MEMBERS) == 27


def test_a_member_on_a_node_the_snapshot_does_not_know_is_skipped() -> None:
    h = PodGroupHandle()
    h.add_nodes(node("node1"), node("node2"))
    fit = plugin(handle=h)
    snap = h.snapshot()
    placement = Placement("p", [snap.get("node1"), snap.get("node2")])
    proposed = [
        ProposedAssignment(PodInfo(grouped_pod("m0", "pg", **req("1000m", "0"))), "node1"),
        ProposedAssignment(PodInfo(grouped_pod("m1", "pg", **req("2000m", "2000"))), "gone"),
    ]
    got = fit.score_placement(
        CycleState(), PodGroupInfo("default", "pg", None), PodGroupAssignments(placement, proposed)
    )
    # Only m0 counts: cpu 1000/10000 = 10, memory 0 → 5.
    assert got == 5


def test_members_without_requests_count_the_non_zero_defaults() -> None:
    """As the node score does: 100m cpu and 200Mi memory for a container asking for nothing."""
    nodes = [make_node(f"node{i}").capacity(cpu="1", memory="1000Mi", pods=110).obj() for i in (1, 2)]
    group = [({}, "node1"), ({}, "node2")]
    # cpu 200m of 2000m = 10, memory 400Mi of 2000Mi = 20 → 15
    assert score(plugin(), nodes, ["node1", "node2"], group) == 15
