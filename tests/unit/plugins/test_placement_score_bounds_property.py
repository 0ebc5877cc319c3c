"""Placement score bounds: NodeResourcesFit's bound of a placement is its score with every member
proposed on it and no proposal of fewer scores more; read off the columns or node by node, the
same. And TopologyPlacementGenerator splits the cluster by the columns as it does node by node."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from pod_group_fakes import PodGroupHandle, grouped_pod

from kubesched.framework.columns import NodeSubset
from kubesched.framework.interface import MAX_NODE_SCORE, CycleState
from kubesched.framework.podgroup import Placement, PodGroupAssignments, PodGroupInfo, ProposedAssignment
from kubesched.framework.types import PodInfo
from kubesched.plugins.noderesources.fit import NodeResourcesFit, NodeResourcesFitArgs
from kubesched.plugins.podgrouppodscount import PodGroupPodsCount
from kubesched.plugins.topologyaware import TopologyPlacementGenerator
from kubesched.testing import make_node

GPU = "example.com/gpu"
RACK = "topology.kubernetes.io/rack"

requests = st.fixed_dictionaries(
    {},
    optional={
        "cpu": st.sampled_from(["0", "100m", "900m", "2", "7"]),
        "memory": st.sampled_from(["0", "100Mi", "3Gi", "40Gi"]),
        GPU: st.sampled_from(["0", "1", "3"]),
    },
)


@st.composite
def clusters(draw: Any) -> dict[str, Any]:
    n = draw(st.integers(1, 10))
    nodes = []
    for i in range(n):
        b = make_node(f"n{i}").capacity(
            cpu=draw(st.sampled_from(["0", "1", "4", "16"])),
            memory=draw(st.sampled_from(["1Gi", "32Gi"])),
            pods=110,
            **({GPU: draw(st.sampled_from(["0", "2", "8"]))} if draw(st.booleans()) else {}),
        )
        rack = draw(st.sampled_from(["r0", "r1", "r2", "", None]))
        if rack is not None:
            b = b.label(RACK, rack)
        nodes.append(b.obj())
    existing = draw(st.lists(st.tuples(st.integers(0, n - 1), requests), max_size=6))
    members = draw(st.lists(requests, min_size=1, max_size=4))
    resources = draw(
        st.lists(st.sampled_from(["cpu", "memory", GPU]), min_size=1, max_size=3, unique=True).map(
            lambda names: [{"name": r, "weight": 1 + len(r) % 3} for r in names]
        )
    )
    return {"nodes": nodes, "existing": existing, "members": members, "resources": resources}


def racked_group(h: PodGroupHandle) -> PodGroupInfo:
    h.add_groups(
        {
            "apiVersion": "scheduling.k8s.io/v1beta1",
            "kind": "PodGroup",
            "metadata": {"name": "pg", "namespace": "default", "uid": "pg", "generation": 1},
            "spec": {"schedulingPolicy": {"basic": {}}, "schedulingConstraints": {"topology": [{"key": RACK}]}},
        }
    )
    return PodGroupInfo("default", "pg", None)


def fit_plugin(resources: list[dict[str, Any]], handle: Any) -> NodeResourcesFit:
    args = NodeResourcesFitArgs.model_validate({"scoringStrategy": {"type": "LeastAllocated", "resources": resources}})
    return NodeResourcesFit(args, handle)


@settings(max_examples=250, deadline=None)
@given(clusters())
def test_the_bound_is_the_score_with_every_member_and_no_fewer_score_more(c: dict[str, Any]) -> None:
    h = PodGroupHandle()
    h.add_nodes(*c["nodes"])
    for i, (at, req) in enumerate(c["existing"]):
        h.add_pod(grouped_pod(f"old{i}", None, node=f"n{at}", **req))
    snapshot = h.snapshot()
    columns = snapshot.columns()
    group = racked_group(h)
    members = [PodInfo(grouped_pod(f"m{i}", "pg", **req)) for i, req in enumerate(c["members"])]

    generator = TopologyPlacementGenerator(None, h)
    listed = snapshot.list()
    by_columns, status = generator.generate_placements(
        CycleState(), group, Placement("", NodeSubset.at_rows(listed, columns, np.arange(len(listed))))
    )
    assert status is None
    node_by_node, status = generator.generate_placements(CycleState(), group, Placement("", list(listed)))
    assert status is None
    # The same placements, in the same order, holding the same nodes: split by codes or by labels.
    assert [(p.name, p.node_names()) for p in by_columns] == [(p.name, p.node_names()) for p in node_by_node]
    assert all(isinstance(p.nodes, NodeSubset) for p in by_columns)

    fit = fit_plugin(c["resources"], h)
    state = CycleState()
    bounds = fit.placement_score_bounds(state, group, by_columns, members)
    assert bounds == fit.placement_score_bounds(state, group, node_by_node, members)
    asks_for_gpu = {req.get(GPU, "0") != "0" for req in c["members"]}
    if any(r["name"] == GPU for r in c["resources"]) and len(asks_for_gpu) > 1:
        assert bounds is None  # some members ask for the GPU, others do not
        return
    assert bounds is not None
    for placement, bound in zip(node_by_node, bounds, strict=True):
        assert 0 <= bound <= MAX_NODE_SCORE
        first = placement.nodes[0].name

        def scored(chosen: tuple[PodInfo, ...], placement: Placement = placement, first: str = first) -> int:
            proposed = [ProposedAssignment(pi, first) for pi in chosen]
            return int(fit.score_placement(state, group, PodGroupAssignments(placement, proposed)))

        assert scored(tuple(members)) == bound
        for k in range(1, len(members)):  # a feasible placement holds one member at least
            for fewer in itertools.combinations(members, k):
                assert scored(fewer) <= bound

    counts = PodGroupPodsCount(None, h)
    assert counts.placement_score_bounds(state, group, by_columns, members) == [MAX_NODE_SCORE] * len(by_columns)
    assert PodGroupPodsCount.partial_below_bound


def test_a_parent_of_some_nodes_splits_into_the_same_domains_and_keeps_the_split() -> None:
    """A parent of some of the nodes (a hierarchy's), and the split kept while labels stay: a
    relabelled node moves to its new domain."""
    h = PodGroupHandle()
    h.add_nodes(*(make_node(f"n{i}").capacity(cpu="1").label(RACK, f"r{i % 3}").obj() for i in range(9)))
    snapshot = h.snapshot()
    columns = snapshot.columns()
    generator = TopologyPlacementGenerator(None, h)
    group = racked_group(h)
    some = [snapshot.get(f"n{i}") for i in (7, 2, 4, 5)]
    placements, _ = generator.generate_placements(CycleState(), group, Placement("", NodeSubset(some)))
    assert [(p.name, p.node_names()) for p in placements] == [("r1", ["n7", "n4"]), ("r2", ["n2", "n5"])]
    listed = snapshot.list()
    whole = Placement("", NodeSubset.at_rows(listed, columns, np.arange(len(listed))))
    first, _ = generator.generate_placements(CycleState(), group, whole)
    assert [p.name for p in first] == ["r0", "r1", "r2"]
    h.cache.update_node(None, make_node("n0").capacity(cpu="1").label(RACK, "r2").obj())
    snapshot = h.snapshot()
    listed = snapshot.list()
    whole = Placement("", NodeSubset.at_rows(listed, snapshot.columns(), np.arange(len(listed))))
    again, _ = generator.generate_placements(CycleState(), group, whole)
    assert [(p.name, p.node_names()) for p in again] == [
        ("r2", ["n0", "n2", "n5", "n8"]),
        ("r1", ["n1", "n4", "n7"]),
        ("r0", ["n3", "n6"]),
    ]
    # The nodes handed out are the snapshot's current ones.
    assert all(ni is snapshot.get(ni.name) for p in again for ni in p.nodes)


def test_a_domain_whose_node_changed_is_handed_its_new_nodeinfo_the_others_are_kept() -> None:
    """The split keeps each domain's node list while none of its nodes is replaced in the
    snapshot: a pod bound in r1 gives r1 the node's new NodeInfo, r0 keeps its list."""
    h = PodGroupHandle()
    h.add_nodes(*(make_node(f"n{i}").capacity(cpu="4").label(RACK, f"r{i // 3}").obj() for i in range(6)))
    generator = TopologyPlacementGenerator(None, h)
    group = racked_group(h)

    def generate() -> list[Placement]:
        snapshot = h.snapshot()
        listed = snapshot.list()
        whole = Placement("", NodeSubset.at_rows(listed, snapshot.columns(), np.arange(len(listed))))
        placements, _ = generator.generate_placements(CycleState(), group, whole)
        assert all(ni is snapshot.get(ni.name) for p in placements for ni in p.nodes)
        return placements

    r0, r1 = generate()
    h.add_pod(grouped_pod("p", None, node="n4", cpu="1"))
    again = generate()
    assert again[0].nodes is r0.nodes
    assert again[1].nodes is not r1.nodes
    assert again[1].nodes[1].requested.milli_cpu == 1000
    assert generate()[1].nodes is again[1].nodes
