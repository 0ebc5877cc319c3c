"""The pod-group benchmark workloads (podgroups.yaml's cases, upstream scheduler_perf's
podgroup/gangscheduling and podgroup/basicscheduling) at their smallest sizes, on the in-memory
backend: their PodGroups and members are as upstream's templates make them, each group is placed
by one pod-group cycle under GenericWorkload and the default profile, and a gang that cannot fit
binds none, so that a figure measures group scheduling, not pods that went another way."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from benchmarks.backends import run_workload
from benchmarks.backends.common import workload_config
from benchmarks.backends.ops import run_yaml
from benchmarks.catalogue import WORKLOADS
from benchmarks.shipped import yaml_workload
from kubesched.bench.model import CreateNamespaces
from tests.bench_shapes import op_node, op_objects, op_pod, reshaped, small_node_template

GANG_CASES = [
    ("GangScheduling/10Nodes_3Gangs", 10, 3, 3),
    ("GangScheduling/100Nodes_10Gangs", 100, 10, 3),
    ("GangScheduling/5000Nodes_1000Gangs_3000Pods", 5000, 1000, 3),
    ("GangScheduling/5000Nodes_3Gangs_3000Pods_1000PerGroup", 5000, 3, 1000),
    ("GangScheduling/2000Nodes_500Gangs_1500Pods", 2000, 500, 3),
]
BASIC_CASES = [
    ("BasicScheduling/10Nodes_3Groups", 10, 3, 3),
    ("BasicScheduling/100Nodes_10Groups", 100, 10, 3),
    ("BasicScheduling/5000Nodes_1000Groups_3000Pods", 5000, 1000, 3),
    ("BasicScheduling/5000Nodes_3Groups_3000Pods_1000PerGroup", 5000, 3, 1000),
]


@pytest.mark.parametrize(("name", "nodes", "groups", "per_group"), GANG_CASES + BASIC_CASES)
def test_the_pod_group_workloads_have_upstreams_shapes(name: str, nodes: int, groups: int, per_group: int) -> None:
    w = WORKLOADS[name]
    gang = name.startswith("GangScheduling/")
    assert (w.nodes, w.init_pods, w.measure_pods, w.groups) == (nodes, 0, groups * per_group, groups)
    assert w.feature_gates == {"GenericWorkload": True} and w.floor is None
    y = yaml_workload(name)
    namespace = "gang-ns-0" if gang else "basic-ns-0"
    assert [(op.prefix, op.count) for op in y.ops if isinstance(op, CreateNamespaces)] == [(namespace[:-2], 1)]
    pgs = op_objects(y)
    assert len(pgs) == groups and all(o["kind"] == "PodGroup" for o in pgs)
    assert {o["metadata"]["namespace"] for o in pgs} == {namespace}
    policy = {"gang": {"minCount": per_group}} if gang else {"basic": {}}
    assert all(o["spec"]["schedulingPolicy"] == policy for o in pgs)
    # Pod i belongs to group i // per_group: the last pod to the last group.
    last = op_pod(y, w.measure_pods - 1)
    assert last["metadata"]["namespace"] == namespace
    assert last["spec"]["schedulingGroup"]["podGroupName"] == pgs[-1]["metadata"]["name"]
    assert last["spec"]["containers"][0]["resources"] == {"requests": {"cpu": "100m", "memory": "100Mi"}}


def test_generic_workload_puts_gang_scheduling_in_the_default_profile() -> None:
    w = WORKLOADS["GangScheduling/10Nodes_3Gangs"]
    plugins = workload_config(w).profiles[0].plugins
    assert [r.name for r in plugins["placementFeasible"]] == ["GangScheduling"]
    assert "GangScheduling" not in [
        r.name
        for r in workload_config(WORKLOADS["SchedulingBasic/500Nodes"]).profiles[0].plugins.get("placementFeasible", [])
    ]


@pytest.mark.parametrize("name", ["GangScheduling/10Nodes_3Gangs", "BasicScheduling/100Nodes_10Groups"])
@pytest.mark.parametrize("batch", [True, False], ids=["batch", "per-node"])
async def test_each_group_is_placed_by_one_group_cycle(name: str, batch: bool) -> None:
    w = WORKLOADS[name]
    placements: dict[str, str] = {}
    result = await run_workload(w, batch=batch, placements=placements)
    assert (result.scheduled, result.unschedulable, result.measure_pods) == (w.measure_pods, 0, w.measure_pods)
    assert (result.groups, result.group_cycles) == (w.groups, w.groups)
    assert result.groups_per_second is not None and result.groups_per_second > 0
    assert result.groups_per_second == pytest.approx(result.pods_per_second / 3, rel=0.05)
    assert len(placements) == w.measure_pods
    assert set(placements.values()) <= {f"node-{i}" for i in range(w.nodes)}


async def test_a_gang_that_cannot_fit_binds_none_while_a_basic_group_binds_what_fits(tmp_path: Path) -> None:
    """One node with room for two pods, groups of three: the gang binds none, the basic group two;
    the member it left over is tried once more in a cycle of its own (which would preempt for it)."""
    node = (1, small_node_template(tmp_path, 2))
    gang = reshaped(yaml_workload("GangScheduling/10Nodes_3Gangs"), nodes=node, counts={"PodGroup": 1}, measured=3)
    result = await asyncio.wait_for(run_yaml(gang), 60)
    assert (result.scheduled, result.unschedulable, result.groups, result.group_cycles) == (0, 3, 1, 1)
    basic = reshaped(yaml_workload("BasicScheduling/10Nodes_3Groups"), nodes=node, counts={"PodGroup": 1}, measured=3)
    result = await asyncio.wait_for(run_yaml(basic), 60)
    assert (result.scheduled, result.unschedulable, result.groups, result.group_cycles) == (2, 1, 1, 2)


@pytest.mark.parametrize(
    ("name", "nodes", "groups", "per_group"), [("TopologyAwareScheduling/100Nodes_10Gangs", 100, 10, 3)]
)
async def test_the_topology_aware_workload_places_each_gang_in_one_rack(
    name: str, nodes: int, groups: int, per_group: int
) -> None:
    """Upstream's podgroup/tas: nodes in racks of 100, each gang constrained to one rack, under
    TopologyAwareWorkloadScheduling; every gang is placed whole, by one group cycle."""
    w = WORKLOADS[name]
    assert (w.nodes, w.measure_pods, w.groups) == (nodes, groups * per_group, groups)
    assert w.feature_gates == {"GenericWorkload": True, "TopologyAwareWorkloadScheduling": True}
    y = yaml_workload(name)
    # Racks of 100 nodes: the 5000-node size's node 100 is the second rack's first.
    large = yaml_workload("TopologyAwareScheduling/5000Nodes_750Gangs_3000Pods")
    labels = [op_node(y, 0), op_node(y, 99), op_node(large, 100)]
    labels = [n["metadata"]["labels"] for n in labels]
    assert [(n["topology.kubernetes.io/zone"], n["topology.kubernetes.io/rack"]) for n in labels] == [
        ("zone-0", "rack-0"),
        ("zone-0", "rack-0"),
        ("zone-1", "rack-1"),
    ]
    pgs = op_objects(y, ("PodGroup",))
    assert len(pgs) == groups and all(
        o["spec"]["schedulingConstraints"] == {"topology": [{"key": "topology.kubernetes.io/rack"}]} for o in pgs
    )
    placements: dict[str, str] = {}
    result = await run_workload(w, placements=placements)
    assert (result.scheduled, result.unschedulable, result.group_cycles) == (w.measure_pods, 0, groups)
    assert len(placements) == w.measure_pods
