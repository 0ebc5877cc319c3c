"""The CompositePodGroup benchmark workloads (podgroups.yaml's cases, upstream scheduler_perf's
cpg/ CPGBasicScheduling and CPGGangScheduling): their shapes are upstream's, and at the smallest
size on the in-memory backend each hierarchy is placed whole in one cycle."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from benchmarks.backends import run_workload
from benchmarks.backends.ops import run_yaml
from benchmarks.catalogue import WORKLOADS
from benchmarks.shipped import yaml_workload
from kubesched.bench.model import CreateNodes
from tests.bench_shapes import op_node, op_objects, op_pod, reshaped, small_node_template

SHAPES = [
    ("10Nodes_3CPGs_6Groups_18Pods", 10, 3, 6, 3),
    ("100Nodes_10CPGs_20Groups_60Pods", 100, 10, 20, 3),
    ("5000Nodes_500CPGs_1000Groups_3000Pods", 5000, 500, 1000, 3),
    ("5000Nodes_3CPGs_6Groups_9000Pods", 5000, 3, 6, 1500),
]


@pytest.mark.parametrize("test", ["CPGBasicScheduling", "CPGGangScheduling"])
@pytest.mark.parametrize(("case", "nodes", "cpgs", "groups", "per_group"), SHAPES)
def test_the_cpg_workloads_have_upstreams_shapes(
    test: str, case: str, nodes: int, cpgs: int, groups: int, per_group: int
) -> None:
    w = WORKLOADS[f"{test}/{case}"]
    gang = test == "CPGGangScheduling"
    assert (w.nodes, w.init_pods, w.measure_pods, w.groups) == (nodes, 0, groups * per_group, groups)
    assert w.feature_gates == {
        "GenericWorkload": True,
        "TopologyAwareWorkloadScheduling": True,
        "CompositePodGroup": True,
    }
    y = yaml_workload(w.name)
    objs = op_objects(y)
    composites = [o for o in objs if o["kind"] == "CompositePodGroup"]
    pgs = [o for o in objs if o["kind"] == "PodGroup"]
    assert [o["metadata"]["name"] for o in composites] == [f"cpg-{i}" for i in range(cpgs)]
    assert len(pgs) == groups
    # Two PodGroups per composite: group i under cpg-(i // 2).
    assert pgs[-1]["spec"]["parentCompositePodGroupName"] == f"cpg-{cpgs - 1}"
    assert pgs[2]["spec"]["parentCompositePodGroupName"] == "cpg-1"
    if gang:
        assert composites[0]["spec"]["schedulingPolicy"] == {"gang": {"minGroupCount": 2}}
        assert pgs[0]["spec"]["schedulingPolicy"] == {"gang": {"minCount": per_group}}
        assert "priority" not in pgs[0]["spec"] and "priority" not in composites[0]["spec"]
    else:
        assert composites[0]["spec"]["schedulingPolicy"] == pgs[0]["spec"]["schedulingPolicy"] == {"basic": {}}
    last = op_pod(y, w.measure_pods - 1)
    assert last["spec"]["schedulingGroup"]["podGroupName"] == pgs[-1]["metadata"]["name"]
    assert "priority" not in last["spec"]
    assert pgs[0]["spec"]["workloadRef"]["templateName"] == "pg-template"
    assert w.slow == (gang and per_group >= 500)


@pytest.mark.parametrize("test", ["CPGBasicScheduling", "CPGGangScheduling"])
@pytest.mark.parametrize("batch", [True, False], ids=["batch", "per-node"])
async def test_each_hierarchy_is_placed_in_one_cycle(test: str, batch: bool) -> None:
    w = WORKLOADS[f"{test}/10Nodes_3CPGs_6Groups_18Pods"]
    placements: dict[str, str] = {}
    result = await run_workload(w, batch=batch, placements=placements)
    assert (result.scheduled, result.unschedulable, result.measure_pods) == (18, 0, 18)
    # Outcomes are counted per PodGroup: the six groups, decided by their three hierarchies.
    assert (result.groups, result.group_cycles) == (6, 6)
    assert len(placements) == 18


async def test_a_composite_gang_that_cannot_fit_binds_none(tmp_path: Path) -> None:
    """One node with room for four pods, one composite of two gangs of three: none is bound;
    the basic composite binds the first group (three pods) and one pod of the second; the two
    members left over stay unbound."""
    node = (1, small_node_template(tmp_path, 4))
    counts = {"CompositePodGroup": 1, "PodGroup": 2}
    gang = reshaped(
        yaml_workload("CPGGangScheduling/10Nodes_3CPGs_6Groups_18Pods"), nodes=node, counts=counts, measured=6
    )
    result = await asyncio.wait_for(run_yaml(gang), 60)
    assert (result.scheduled, result.unschedulable, result.groups) == (0, 6, 2)
    basic = reshaped(
        yaml_workload("CPGBasicScheduling/10Nodes_3CPGs_6Groups_18Pods"), nodes=node, counts=counts, measured=6
    )
    result = await asyncio.wait_for(run_yaml(basic), 60)
    assert (result.scheduled, result.unschedulable, result.groups) == (4, 2, 2)


async def test_the_topology_aware_hierarchies_keep_a_composite_in_a_zone_and_a_group_in_a_rack() -> None:
    """Upstream's cpg/ CPGTopologyAwareScheduling at 2500 nodes (zones of 1000 nodes, racks of
    100): every composite placed whole in one zone, each of its PodGroups in one rack, by one
    cycle a hierarchy."""
    y = yaml_workload("CPGTopologyAwareScheduling/100Nodes_10CPGs_20Groups_60Pods")
    node = next(op for op in y.ops if isinstance(op, CreateNodes))
    assert node.template.name == "cpg-tas-node.yaml"
    w = reshaped(y, nodes=(2500, node.template))
    placements: dict[str, str] = {}
    result = await asyncio.wait_for(run_yaml(w, placements=placements), 120)
    assert (result.scheduled, result.unschedulable, result.groups, result.group_cycles) == (60, 0, 20, 20)
    labels = {n["metadata"]["name"]: n["metadata"]["labels"] for n in (op_node(w, i) for i in range(2500))}
    racks: dict[int, set[str]] = {}
    zones: dict[int, set[str]] = {}
    for key, node_name in placements.items():
        index = int(key.rsplit("-", 1)[1])  # test-cpg-gang-pod-<i>: group i // 3, composite i // 6
        racks.setdefault(index // 3, set()).add(labels[node_name]["topology.kubernetes.io/rack"])
        zones.setdefault(index // 6, set()).add(labels[node_name]["topology.kubernetes.io/zone"])
    assert len(racks) == 20 and all(len(r) == 1 for r in racks.values())
    assert len(zones) == 10 and all(len(z) == 1 for z in zones.values())
    # Without the constraints the default profile spreads them: more than one rack is used.
    assert len(set().union(*racks.values())) > 1
