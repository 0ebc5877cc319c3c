"""NodeResourcesBalancedAllocation: upstream's balanced_allocation_test cases (std-based score),
the best-effort Skip, Score without PreScore, and Args validation."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from kubesched.framework.interface import CycleState
from kubesched.framework.status import Code
from kubesched.plugins.noderesources.balanced_allocation import NodeResourcesBalancedAllocation
from kubesched.plugins.noderesources.resource_allocation import balanced_resource_scorer
from kubesched.testing import make_node, make_pod
from kubesched.testing.harness import as_node_infos, as_pod_info, score_nodes

GPU = "nvidia.com/gpu"
DEFAULT = [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]
WITH_GPU = [*DEFAULT, {"name": GPU, "weight": 1}]


def pod(*containers: dict[str, str], node: str = "", name: str = "p") -> dict[str, Any]:
    """A pod with exactly these containers' requests (none at all when none are given)."""
    b = make_pod(name)
    if node:
        b.node(node)
    obj = b.obj()
    obj["spec"]["containers"] = [
        {"name": f"c{i}", "image": "pause", "resources": {"requests": dict(c)}} for i, c in enumerate(containers)
    ]
    return obj


def node(name: str, milli_cpu: int, memory: int, scalar: dict[str, int] | None = None) -> Any:
    """Upstream's ``makeNode(name, milliCPU, memory, scalar)``."""
    alloc = {"cpu": f"{milli_cpu}m", "memory": str(memory), "pods": "110"}
    alloc.update({k: str(v) for k, v in (scalar or {}).items()})
    return make_node(name).set("status.allocatable", alloc)


def cpu_only(on: str, name: str) -> dict[str, Any]:
    return pod({"cpu": "1000m", "memory": "0"}, {"cpu": "2000m", "memory": "0"}, node=on, name=name)


def cpu_and_memory(on: str, name: str) -> dict[str, Any]:
    return pod({"cpu": "1000m", "memory": "2000"}, {"cpu": "2000m", "memory": "3000"}, node=on, name=name)


def cpu_memory_gpu(on: str, name: str) -> dict[str, Any]:
    return pod({"cpu": "1000m", "memory": "2000"}, {"cpu": "2000m", "memory": "3000", GPU: "3"}, node=on, name=name)


INCOMING_CPU_AND_MEMORY = cpu_and_memory("", "incoming")
SCHEDULED = [cpu_only("node1", "e1"), cpu_and_memory("node2", "e2")]

CASES = [
    (
        "nothing scheduled, resources requested, differently sized nodes",
        INCOMING_CPU_AND_MEMORY,
        [node("node1", 4000, 10000), node("node2", 6000, 10000)],
        [],
        DEFAULT,
        {"node1": 87, "node2": 100},
    ),
    (
        "resources requested, pods scheduled with resources",
        INCOMING_CPU_AND_MEMORY,
        [node("node1", 10000, 20000), node("node2", 10000, 20000)],
        SCHEDULED,
        DEFAULT,
        {"node1": 82, "node2": 95},
    ),
    (
        "resources requested, pods scheduled with resources, differently sized nodes",
        INCOMING_CPU_AND_MEMORY,
        [node("node1", 10000, 20000), node("node2", 10000, 50000)],
        SCHEDULED,
        DEFAULT,
        {"node1": 82, "node2": 80},
    ),
    (
        "requested resources at node capacity",
        cpu_only("", "incoming"),
        [node("node1", 6000, 10000), node("node2", 6000, 10000)],
        SCHEDULED,
        DEFAULT,
        {"node1": 50, "node2": 75},
    ),
    (
        "include scalar resource on a node for balanced resource allocation",
        pod({"memory": "0", GPU: "1"}),
        [node("node1", 3500, 40000, {GPU: 8}), node("node2", 3500, 40000, {GPU: 8})],
        [cpu_and_memory("node2", "e1"), cpu_memory_gpu("node1", "e2")],
        WITH_GPU,
        {"node1": 70, "node2": 65},
    ),
    (
        "node without the scalar resource should skip the scalar resource",
        INCOMING_CPU_AND_MEMORY,
        [node("node1", 3500, 40000, {GPU: 8}), node("node2", 3500, 40000)],
        [],
        WITH_GPU,
        {"node1": 63, "node2": 63},
    ),
    (
        "fractions above one are capped",
        INCOMING_CPU_AND_MEMORY,
        [node("node1", 2000, 10000), node("node2", 2000, 2000)],
        [],
        DEFAULT,
        # node1: cpu 3000/2000 → 1, memory 0.5 → std 0.25 → 75; node2: both capped at 1 → 100
        {"node1": 75, "node2": 100},
    ),
]


@pytest.mark.parametrize("p, nodes, existing, resources, want", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_balanced_allocation(p: Any, nodes: Any, existing: Any, resources: Any, want: dict[str, int]) -> None:
    got = score_nodes(NodeResourcesBalancedAllocation, p, nodes, args={"resources": resources}, pods=existing)
    assert got == want


def test_best_effort_pod_is_skipped_in_pre_score() -> None:
    plugin = NodeResourcesBalancedAllocation(None)
    nodes = as_node_infos([node("node1", 4000, 10000), node("node2", 4000, 10000)])
    status = plugin.pre_score(CycleState(), as_pod_info(pod()), nodes)
    assert status is not None and status.code == Code.SKIP


def test_pod_with_only_default_requests_is_best_effort() -> None:
    # A container without requests asks for nothing here: non-zero defaults are not used.
    plugin = NodeResourcesBalancedAllocation(None)
    status = plugin.pre_score(CycleState(), make_pod("p").container().info(), [])
    assert status is not None and status.code == Code.SKIP


def test_score_without_pre_score() -> None:
    plugin = NodeResourcesBalancedAllocation(None)
    nodes = as_node_infos([node("node1", 10000, 20000), node("node2", 10000, 20000)], SCHEDULED)
    state = CycleState()
    p = as_pod_info(INCOMING_CPU_AND_MEMORY)
    assert [plugin.score(state, p, n) for n in nodes] == [82, 95]
    assert [plugin.score(state, as_pod_info(pod()), n) for n in nodes] == [0, 0]


SCORER = [
    ("no resources", [], [], 100),
    ("one resource", [3], [4], 100),
    ("two resources: half the difference", [3000, 5000], [4000, 10000], 87),
    ("zero allocatable is left out", [3000, 5000, 1], [4000, 10000, 0], 87),
    ("three resources: population std", [3000, 5000, 4], [3500, 40000, 8], 70),
]


@pytest.mark.parametrize("requested, allocatable, want", [c[1:] for c in SCORER], ids=[c[0] for c in SCORER])
def test_balanced_resource_scorer(requested: list[int], allocatable: list[int], want: int) -> None:
    assert balanced_resource_scorer(requested, allocatable, [1] * len(requested)) == want


# --- Args -----------------------------------------------------------------------------------------


def test_args_defaults() -> None:
    assert [(r.name, r.weight) for r in NodeResourcesBalancedAllocation.Args().resources] == [("cpu", 1), ("memory", 1)]
    empty = NodeResourcesBalancedAllocation.Args.model_validate({"resources": []})
    assert [r.name for r in empty.resources] == ["cpu", "memory"]
    zero = NodeResourcesBalancedAllocation.Args.model_validate({"resources": [{"name": GPU, "weight": 0}]})
    assert [(r.name, r.weight) for r in zero.resources] == [(GPU, 1)]


BAD_ARGS = [
    (
        "weight other than one",
        {"resources": [{"name": "cpu", "weight": 2}]},
        "resources[0].weight: Invalid value: 2: must be 1",
    ),
    (
        "duplicate resource",
        {"resources": [{"name": "cpu"}, {"name": "memory"}, {"name": "cpu"}]},
        'resources[2].name: Duplicate value: "cpu"',
    ),
]


@pytest.mark.parametrize("raw, message", [c[1:] for c in BAD_ARGS], ids=[c[0] for c in BAD_ARGS])
def test_args_validation_names_the_field(raw: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError) as info:
        NodeResourcesBalancedAllocation.Args.model_validate(raw)
    errors = info.value.errors()
    assert any(e["loc"] == ("resources",) and message in e["msg"] for e in errors), errors
