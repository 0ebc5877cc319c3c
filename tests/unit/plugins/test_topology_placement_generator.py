"""TopologyPlacementGenerator: upstream's TestGeneratePlacements (topology_placement_test.go,
1.37), its nine PodGroup cases and their nine CompositePodGroup twins (the constraint on the
composite, the placed pods spread over the PodGroups below it, one of them two levels down).
Placements are compared as a map of name to node names, as upstream does."""

from __future__ import annotations

from typing import Any

import pytest
from pod_group_fakes import PodGroupHandle, composite_pod_group, grouped_pod, pod_group

from kubesched.framework.interface import CycleState
from kubesched.framework.podgroup import COMPOSITE_POD_GROUP_KIND, Placement, PodGroupInfo
from kubesched.framework.status import Code
from kubesched.plugins.topologyaware import TopologyPlacementGenerator
from kubesched.testing import make_node

PARENT = "test-placement"


def node(name: str, **labels: str) -> dict[str, Any]:
    b = make_node(name)
    for k, v in labels.items():
        b = b.label(k, v)
    return b.obj()


def topo(value: str) -> dict[str, str]:
    return {"topology": value}


# (name, topology key (None: no constraint), nodes of already placed members, placement nodes,
#  other nodes, wanted placements (None: an Error))
CASES: list[
    tuple[str, str | None, list[str], list[dict[str, Any]], list[dict[str, Any]], dict[str, list[str]] | None]
] = [
    (
        "without constraint returns placement matching all nodes",
        None,
        [],
        [node("node1"), node("node2", foo="bar")],
        [node("node3")],
        {PARENT: ["node1", "node2"]},
    ),
    (
        "with topology key constraint, returns placement for each topology domain",
        "topology1",
        [],
        [
            node("node0", topology2="d1"),
            node("node1", topology2="d4"),
            node("node2", topology1="d1"),
            node("node3", topology1="d2"),
            node("node4", topology1="d1"),
            node("node5", topology1="d3"),
        ],
        [],
        {"d1": ["node2", "node4"], "d2": ["node3"], "d3": ["node5"]},
    ),
    (
        "without matching topology label, returns empty",
        "topology3",
        [],
        [
            node("node0", topology2="d1"),
            node("node1", topology2="d4"),
            node("node2", topology1="d1"),
            node("node3", topology1="d2"),
            node("node4", topology1="d1"),
            node("node5", topology1="d3"),
        ],
        [],
        {},
    ),
    (
        "with pods already scheduled in a single domain, returns that domain",
        "topology",
        ["node2", "node3"],
        [node("node0", **topo("d2")), node("node1", **topo("d1"))],
        [node("node2", **topo("d1")), node("node3", **topo("d1"))],
        {"d1": ["node1"]},
    ),
    (
        "with pods already scheduled in a single domain not present in current placement, returns empty",
        "topology",
        ["node2", "node3"],
        [node("node0", **topo("d2"))],
        [node("node2", **topo("d1")), node("node3", **topo("d1"))],
        {},
    ),
    (
        "with pods already scheduled in conflicting domains, returns error",
        "topology",
        ["node2", "node3"],
        [node("node0", **topo("d2")), node("node1", **topo("d1"))],
        [node("node2", **topo("d0")), node("node3", **topo("d1"))],
        None,
    ),
    (
        "with pods already scheduled in the empty string domain, returns that domain",
        "topology",
        ["node2", "node3"],
        [node("node0", **topo("d1")), node("node1", **topo(""))],
        [node("node2", **topo("")), node("node3", **topo(""))],
        {"": ["node1"]},
    ),
    (
        "with already scheduled pod on node outside of snapshot, returns error",
        "topology",
        ["node2", "node4"],
        [node("node0", **topo("d2")), node("node1", **topo("d1"))],
        [node("node2", **topo("d1")), node("node3", **topo("d1"))],
        None,
    ),
    (
        "with already scheduled pod on node without topology label, returns error",
        "topology",
        ["node2"],
        [node("node1", **topo("d2"))],
        [node("node2", foo="bar")],
        None,
    ),
]


def generate(
    key: str | None,
    placed_on: list[str],
    placement_nodes: list[dict[str, Any]],
    other_nodes: list[dict[str, Any]],
    composite: bool = False,
) -> tuple[list[Placement], Any]:
    h = PodGroupHandle(composite=composite)
    h.add_nodes(*placement_nodes, *other_nodes)
    if composite:
        group_obj = composite_pod_group("root", topology_key=key)
        h.add_groups(
            group_obj,
            composite_pod_group("cpg1", parent="root"),
            pod_group("pg1", parent="cpg1"),
            pod_group("pg2", parent="root"),
        )
        info = PodGroupInfo("default", "root", group_obj, kind=COMPOSITE_POD_GROUP_KIND)
        leaves = ["pg1", "pg2"]
    else:
        group_obj = pod_group("root", topology_key=key)
        h.add_groups(group_obj)
        info = PodGroupInfo("default", "root", group_obj)
        leaves = ["root"]
    for i, n in enumerate(placed_on):
        h.add_pod(grouped_pod(f"pod{i}", leaves[i % len(leaves)], node=n))
    snap = h.snapshot()
    names = [n["metadata"]["name"] for n in placement_nodes]
    parent = Placement(PARENT, [snap.get(n) for n in names])
    plugin = TopologyPlacementGenerator(None, h)  # type: ignore[arg-type]
    return plugin.generate_placements(CycleState(), info, parent)


@pytest.mark.parametrize("composite", [False, True], ids=["PodGroup", "CompositePodGroup"])
@pytest.mark.parametrize(
    ("key", "placed_on", "placement_nodes", "other_nodes", "want"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_generate_placements(
    key: str | None,
    placed_on: list[str],
    placement_nodes: list[dict[str, Any]],
    other_nodes: list[dict[str, Any]],
    want: dict[str, list[str]] | None,
    composite: bool,
) -> None:
    placements, status = generate(key, placed_on, placement_nodes, other_nodes, composite)
    if want is None:
        assert status is not None and status.code is Code.ERROR
        assert placements == []
        return
    assert status is None
    assert {p.name: p.node_names() for p in placements} == want


@pytest.mark.parametrize(
    ("placed_on", "other_nodes", "message"),
    [
        (
            ["node2", "node3"],
            [node("node2", **topo("d0")), node("node3", **topo("d1"))],
            "cannot determine domain for already scheduled pods: more than 1 domain found for pod group: d0, d1",
        ),
        (
            ["node2", "node4"],
            [node("node2", **topo("d1"))],
            "cannot determine domain for already scheduled pods: getting node for pod default/pod1: "
            "nodeinfo not found for node name 'node4'",
        ),
        (
            ["node2"],
            [node("node2", foo="bar")],
            "cannot determine domain for already scheduled pods: no topology domain found for pod default/pod0",
        ),
    ],
    ids=["conflicting domains", "node outside the snapshot", "node without the label"],
)
def test_error_messages_name_the_pod_and_the_domains(
    placed_on: list[str], other_nodes: list[dict[str, Any]], message: str
) -> None:
    _, status = generate("topology", placed_on, [node("node0", **topo("d1"))], other_nodes)
    assert status is not None and status.message() == message


@pytest.mark.parametrize(
    ("domains", "conflict"),
    [([""], False), (["", "d1"], True), (["d1", ""], True)],
    ids=["single empty domain is valid", "empty then non-empty conflicts", "non-empty then empty conflicts"],
)
def test_the_empty_domain_is_a_domain(domains: list[str], conflict: bool) -> None:
    """Upstream's TestGetScheduledPodsTopologyDomainEmptyValue: ``""`` is a value like any other."""
    others = [node(f"placed{i}", **topo(d)) for i, d in enumerate(domains)]
    placements, status = generate(
        "topology", [f"placed{i}" for i in range(len(domains))], [node("free", **topo(""))], others
    )
    if conflict:
        assert status is not None and "more than 1 domain found" in status.message()
    else:
        assert status is None and {p.name: p.node_names() for p in placements} == {"": ["free"]}


def test_an_unknown_pod_group_is_an_error() -> None:
    h = PodGroupHandle()
    h.add_nodes(node("n0"))
    plugin = TopologyPlacementGenerator(None, h)  # type: ignore[arg-type]
    parent = Placement(PARENT, h.snapshot().list())
    placements, status = plugin.generate_placements(CycleState(), PodGroupInfo("default", "ghost", None), parent)
    assert placements == [] and status is not None and status.code is Code.ERROR
    assert status.message() == 'podgroup.scheduling.k8s.io "ghost" not found'
