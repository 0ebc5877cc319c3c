"""NodeResourceTopologyMatch's Score (plugins/noderesourcetopology), case for case as
scheduler-plugins' ``pkg/noderesourcetopology/score_test.go``: ``TestNodeResourceScorePlugin``
(MostAllocated, BalancedAllocation, LeastAllocated: the node chosen and its score),
``TestNodeResourcePartialDataScorePlugin`` (nodes without data score 0) and
``TestNodeResourceScorePluginLeastNUMA`` (LeastNUMANodes with costs between cells)."""

from __future__ import annotations

import sys

import pytest
from nrt_cases import PACKAGE, container, guaranteed, node_info, node_of, nrt, pod, res_info, zone

from kubesched import CycleState, PodInfo

sys.path.insert(0, str(PACKAGE))  # the package is not installed for the suite

from kubesched_noderesourcetopology import NodeResourceTopologyMatch, NodeResourceTopologyMatchArgs

Obj = dict[str, object]
GPU = "gpu"


def default_numa_nodes(policy: str) -> list[Obj]:
    """Upstream's ``defaultNUMANodes(withPolicy(policy))``."""
    return [
        nrt(
            name,
            zone("node-0", res_info("cpu", cpu, cpu), res_info("memory", mem, mem)),
            zone("node-1", res_info("cpu", cpu, cpu), res_info("memory", mem, mem)),
            policies=[policy],
        )
        for name, cpu, mem in (("Node1", "4", "500Mi"), ("Node2", "2", "50Mi"), ("Node3", "6", "60Mi"))
    ]


def _costs(own: int) -> dict[str, int]:
    rows = {
        0: {"node-0": 10, "node-1": 12, "node-2": 20, "node-3": 20},
        1: {"node-0": 12, "node-1": 10, "node-2": 20, "node-3": 20},
        2: {"node-0": 20, "node-1": 20, "node-2": 10, "node-3": 12},
        3: {"node-0": 20, "node-1": 20, "node-2": 12, "node-3": 10},
    }
    return rows[own]


def four_numa_nodes() -> list[Obj]:
    """Upstream's ``fourNUMANodes``: GPUs on cells 0 and 1 of Node1, on cells 0 and 2 of Node2."""
    out = []
    for name, gpus in (("Node1", ("1", "1", "0", "0")), ("Node2", ("1", "0", "1", "0"))):
        zones = [
            zone(
                f"node-{i}",
                res_info("cpu", "2", "2"),
                res_info("memory", "50Mi", "50Mi"),
                res_info(GPU, g, g),
                costs=_costs(i),
            )
            for i, g in enumerate(gpus)
        ]
        out.append(nrt(name, *zones, policies=["BestEffortContainerLevel"]))
    return out


def plugin(topologies: list[Obj], strategy: str) -> NodeResourceTopologyMatch:
    args = NodeResourceTopologyMatchArgs.model_validate({"scoringStrategy": {"type": strategy}})
    p = NodeResourceTopologyMatch(args)
    for t in topologies:
        p.add_topology(t)
    return p


def scores(p: NodeResourceTopologyMatch, nodes: list[Obj], pi: PodInfo) -> dict[str, int]:
    out = {}
    for n in nodes:
        s, status = p.score(CycleState(), pi, node_info(n))
        assert status is None
        out[str(n["metadata"]["name"])] = s  # type: ignore[index]
    return out


def best(found: dict[str, int]) -> tuple[str, int]:
    name = max(found, key=lambda k: found[k])
    return name, found[name]


POD1 = guaranteed({"cpu": "2", "memory": str(20 * 1024 * 1024)})


@pytest.mark.parametrize(
    ("name", "strategy", "want"),
    [
        ("MostAllocated strategy", "MostAllocated", ("Node2", 70)),
        ("BalancedAllocation strategy", "BalancedAllocation", ("Node3", 100)),
        ("LeastAllocated strategy", "LeastAllocated", ("Node1", 73)),
    ],
)
def test_node_resource_score_plugin(name: str, strategy: str, want: tuple[str, int]) -> None:
    topologies = default_numa_nodes("SingleNUMANodeContainerLevel")
    nodes = [node_of(t) for t in topologies]
    assert best(scores(plugin(topologies, strategy), nodes, POD1)) == want


@pytest.mark.parametrize(
    ("name", "strategy", "only", "want"),
    [
        ("No data at all, MostAllocated strategy", "MostAllocated", None, None),
        ("No data at all, LeastAllocated strategy", "LeastAllocated", None, None),
        ("No data at all, BalancedAllocation strategy", "BalancedAllocation", None, None),
        ("One node with NRT data, MostAllocated strategy", "MostAllocated", "Node1", ("Node1", 27)),
        ("One node with NRT data, LeastAllocated strategy", "LeastAllocated", "Node1", ("Node1", 73)),
        ("One node with NRT data, BalancedAllocation strategy", "BalancedAllocation", "Node1", ("Node1", 89)),
    ],
)
def test_node_resource_partial_data_score_plugin(
    name: str, strategy: str, only: str | None, want: tuple[str, int] | None
) -> None:
    topologies = default_numa_nodes("SingleNUMANodeContainerLevel")
    nodes = [node_of(t) for t in topologies]
    given = [t for t in topologies if t["metadata"]["name"] == only]  # type: ignore[index]
    found = scores(plugin(given, strategy), nodes, POD1)
    if want is None:
        assert set(found.values()) == {0}  # no data: no preference
    else:
        assert best(found) == want
        assert all(s == 0 for n, s in found.items() if n != only)


def pod_of(requests: list[dict[str, str]]) -> PodInfo:
    """``makePodByResourceLists``: a container per request, limits equal to requests."""
    return pod(*(container(r, r, f"c{i}") for i, r in enumerate(requests)))


def cm(cpu: str, **more: str) -> dict[str, str]:
    return {"cpu": cpu, "memory": "50Mi", **more}


CONTAINER_BE = "BestEffortContainerLevel"
POD_BE = "BestEffortPodLevel"
LEAST_NUMA_CASES = [
    ("container scope, one container case 1", [cm("2")], CONTAINER_BE, {"Node1": 94, "Node2": 94, "Node3": 94}),
    ("container scope, one container case 2", [cm("4")], CONTAINER_BE, {"Node1": 94, "Node2": 82, "Node3": 94}),
    ("container scope, one container case 3", [cm("6")], CONTAINER_BE, {"Node1": 82, "Node2": 0, "Node3": 94}),
    (
        "container scope, two containers case 1",
        [cm("2"), cm("2")],
        CONTAINER_BE,
        {"Node1": 94, "Node2": 94, "Node3": 94},
    ),
    (
        "container scope, two containers case 2",
        [cm("1"), cm("3")],
        CONTAINER_BE,
        {"Node1": 94, "Node2": 82, "Node3": 94},
    ),
    (
        "container scope, two containers case 3",
        [cm("5"), cm("3")],
        CONTAINER_BE,
        {"Node1": 82, "Node2": 0, "Node3": 94},
    ),
    (
        "container scope, two containers non NUMA resource",
        [{"non-numa-resource": "1"}, {"non-numa-resource": "2"}],
        CONTAINER_BE,
        {"Node1": 100, "Node2": 100, "Node3": 100},
    ),
    ("pod scope, two containers case 1", [cm("2"), cm("2")], POD_BE, {"Node1": 94, "Node2": 82, "Node3": 82}),
    ("pod scope, two containers case 2", [cm("1"), cm("3")], POD_BE, {"Node1": 94, "Node2": 82, "Node3": 82}),
    ("pod scope, two containers case 3", [cm("5"), cm("3")], POD_BE, {"Node1": 82, "Node2": 0, "Node3": 82}),
    (
        "pod scope, one containers non NUMA resource",
        [{"non-numa-resource": "1"}],
        POD_BE,
        {"Node1": 100, "Node2": 100, "Node3": 100},
    ),
    ("container scope, one container, 4 NUMA nodes, 1 gpu ", [cm("2", gpu="1")], None, {"Node1": 94, "Node2": 94}),
    ("container scope, one container, 4 NUMA nodes, 2 gpu ", [cm("2", gpu="2")], None, {"Node1": 82, "Node2": 76}),
    (
        "container scope, 2 containers, 4 NUMA nodes, 2 gpu in one container ",
        [cm("2", gpu="2"), cm("2")],
        None,
        {"Node1": 82, "Node2": 76},
    ),
]


@pytest.mark.parametrize(("name", "requests", "policy", "want"), LEAST_NUMA_CASES, ids=[c[0] for c in LEAST_NUMA_CASES])
def test_node_resource_score_plugin_least_numa(
    name: str, requests: list[dict[str, str]], policy: str | None, want: dict[str, int]
) -> None:
    topologies = default_numa_nodes(policy) if policy else four_numa_nodes()
    nodes = [node_of(t) for t in topologies]
    assert scores(plugin(topologies, "LeastNUMANodes"), nodes, pod_of(requests)) == want


def test_only_guaranteed_pods_are_scored() -> None:
    """A Burstable pod scores the highest everywhere, whatever the cells hold."""
    topologies = default_numa_nodes("SingleNUMANodeContainerLevel")
    burstable = pod(container({"cpu": "2"}))
    assert set(scores(plugin(topologies, "MostAllocated"), [node_of(t) for t in topologies], burstable).values()) == {
        100
    }


def test_allocation_strategies_score_single_numa_node_policies_only() -> None:
    """Under best-effort the allocation strategies have no opinion (0); LeastNUMANodes does."""
    topologies = default_numa_nodes("BestEffortContainerLevel")
    nodes = [node_of(t) for t in topologies]
    assert set(scores(plugin(topologies, "MostAllocated"), nodes, POD1).values()) == {0}
    assert set(scores(plugin(topologies, "LeastNUMANodes"), nodes, POD1).values()) != {0}
