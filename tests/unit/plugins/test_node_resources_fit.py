"""NodeResourcesFit: upstream's fit_test, least/most_allocated_test and
requested_to_capacity_ratio_test cases, plus Args validation and queueing hints."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from kubesched.framework.events import ActionType, EventResource, QueueingHint
from kubesched.framework.interface import CycleState
from kubesched.framework.status import Code
from kubesched.plugins.noderesources.fit import (
    NodeResourcesFit,
    is_schedulable_after_node_change,
    is_schedulable_after_pod_event,
)
from kubesched.plugins.noderesources.resource_allocation import broken_linear_function
from kubesched.testing import make_node, make_pod
from kubesched.testing.harness import filter_nodes, score_nodes

EXT_A = "example.com/aaa"
EXT_B = "example.com/bbb"
K8S_IO_A = "kubernetes.io/something"
K8S_IO_B = "subdomain.kubernetes.io/something"
HUGE_A = "hugepages-2Mi"
EXTENDED_RES = "abc.com/xyz"

DEFAULT_RESOURCES = [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]
EXTENDED_RESOURCE_SET = [*DEFAULT_RESOURCES, {"name": EXTENDED_RES, "weight": 1}]

Req = dict[str, Any]


def res(cpu: int = 0, mem: int = 0, eph: int = 0) -> Req:
    """A container's requests as upstream's ``framework.Resource`` lists them: cpu in millicores."""
    out: Req = {"cpu": f"{cpu}m", "memory": str(mem)}
    if eph:
        out["ephemeral-storage"] = str(eph)
    return out


def pod(
    *containers: Req,
    init: tuple[Req, ...] = (),
    sidecars: tuple[Req, ...] = (),
    overhead: Req | None = None,
    node: str = "",
    name: str = "p",
) -> dict[str, Any]:
    """A pod with exactly these containers (none at all when none are given, as ``st.MakePod()``)."""
    b = make_pod(name)
    if node:
        b.node(node)
    obj = b.obj()
    spec = obj["spec"]
    spec["containers"] = [
        {"name": f"c{i}", "image": "pause", "resources": {"requests": dict(r)}} for i, r in enumerate(containers)
    ]
    inits = [
        {"name": f"s{i}", "image": "pause", "restartPolicy": "Always", "resources": {"requests": dict(r)}}
        for i, r in enumerate(sidecars)
    ]
    inits += [{"name": f"i{i}", "image": "pause", "resources": {"requests": dict(r)}} for i, r in enumerate(init)]
    if inits:
        spec["initContainers"] = inits
    if overhead:
        spec["overhead"] = dict(overhead)
    return obj


def r(cpu: int = 0, mem: int = 0, eph: int = 0, scalar: dict[str, int] | None = None) -> Req:
    out = res(cpu, mem, eph)
    for k, v in (scalar or {}).items():
        out[k] = str(v)
    return out


def node(name: str, alloc: dict[str, str]) -> Any:
    return make_node(name).set("status.allocatable", dict(alloc))


def fit_node(milli_cpu: int, memory: int, pods: int, ext_a: int, storage: int, huge_a: int) -> Any:
    """Upstream's ``makeAllocatableResources``."""
    return node(
        "n1",
        {
            "cpu": f"{milli_cpu}m",
            "memory": str(memory),
            "pods": str(pods),
            EXT_A: str(ext_a),
            "ephemeral-storage": str(storage),
            HUGE_A: str(huge_a),
        },
    )


def run_filter(p: dict[str, Any], existing: dict[str, Any], n: Any, args: Any = None) -> Any:
    existing = dict(existing)
    existing["spec"] = dict(existing["spec"], nodeName="n1")
    return filter_nodes(NodeResourcesFit, p, [n], args=args, pods=[existing])["n1"]


U = Code.UNSCHEDULABLE
UU = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
CPU_R, MEM_R, EPH_R = "Insufficient cpu", "Insufficient memory", "Insufficient ephemeral-storage"

# (name, pod, existing pod's usage, args, expected code or None, expected reasons)
ENOUGH_REQUESTS = [
    ("no resources requested always fits", pod(), r(10, 20), None, None, []),
    ("too many resources fails", pod(r(1, 1)), r(10, 20), None, U, [CPU_R, MEM_R]),
    ("too many resources fails due to init container cpu", pod(r(1, 1), init=(r(3, 1),)), r(8, 19), None, U, [CPU_R]),
    (
        "too many resources fails due to highest init container cpu",
        pod(r(1, 1), init=(r(3, 1), r(2, 1))),
        r(8, 19),
        None,
        U,
        [CPU_R],
    ),
    (
        "too many resources fails due to init container memory",
        pod(r(1, 1), init=(r(1, 3),)),
        r(9, 19),
        None,
        U,
        [MEM_R],
    ),
    (
        "too many resources fails due to highest init container memory",
        pod(r(1, 1), init=(r(1, 3), r(1, 2))),
        r(9, 19),
        None,
        U,
        [MEM_R],
    ),
    ("init container fits because it's the max, not sum", pod(r(1, 1), init=(r(1, 1),)), r(9, 19), None, None, []),
    (
        "multiple init containers fit because it's the max, not sum",
        pod(r(1, 1), init=(r(1, 1), r(1, 1))),
        r(9, 19),
        None,
        None,
        [],
    ),
    ("both resources fit", pod(r(1, 1)), r(5, 5), None, None, []),
    ("one resource memory fits", pod(r(2, 1)), r(9, 5), None, U, [CPU_R]),
    ("one resource cpu fits", pod(r(1, 2)), r(5, 19), None, U, [MEM_R]),
    ("equal edge case", pod(r(5, 1)), r(5, 19), None, None, []),
    ("equal edge case for init container", pod(r(4, 1), init=(r(5, 1),)), r(5, 19), None, None, []),
    ("extended resource fits", pod(r(scalar={EXT_A: 1})), r(), None, None, []),
    ("extended resource fits for init container", pod(init=(r(scalar={EXT_A: 1}),)), r(), None, None, []),
    (
        "extended resource capacity enforced",
        pod(r(1, 1, scalar={EXT_A: 10})),
        r(scalar={EXT_A: 0}),
        None,
        UU,
        [f"Insufficient {EXT_A}"],
    ),
    (
        "extended resource capacity enforced for init container",
        pod(init=(r(1, 1, scalar={EXT_A: 10}),)),
        r(scalar={EXT_A: 0}),
        None,
        UU,
        [f"Insufficient {EXT_A}"],
    ),
    (
        "extended resource allocatable enforced",
        pod(r(1, 1, scalar={EXT_A: 1})),
        r(scalar={EXT_A: 5}),
        None,
        U,
        [f"Insufficient {EXT_A}"],
    ),
    (
        "extended resource allocatable enforced for init container",
        pod(init=(r(1, 1, scalar={EXT_A: 1}),)),
        r(scalar={EXT_A: 5}),
        None,
        U,
        [f"Insufficient {EXT_A}"],
    ),
    (
        "extended resource allocatable enforced for multiple containers",
        pod(r(1, 1, scalar={EXT_A: 3}), r(1, 1, scalar={EXT_A: 3})),
        r(scalar={EXT_A: 2}),
        None,
        UU,
        [f"Insufficient {EXT_A}"],
    ),
    (
        "extended resource allocatable admits multiple init containers",
        pod(init=(r(1, 1, scalar={EXT_A: 3}), r(1, 1, scalar={EXT_A: 3}))),
        r(scalar={EXT_A: 2}),
        None,
        None,
        [],
    ),
    (
        "extended resource allocatable enforced for multiple init containers",
        pod(init=(r(1, 1, scalar={EXT_A: 6}), r(1, 1, scalar={EXT_A: 3}))),
        r(scalar={EXT_A: 2}),
        None,
        UU,
        [f"Insufficient {EXT_A}"],
    ),
    (
        "extended resource allocatable enforced for unknown resource",
        pod(r(1, 1, scalar={EXT_B: 1})),
        r(),
        None,
        UU,
        [f"Insufficient {EXT_B}"],
    ),
    (
        "extended resource allocatable enforced for unknown resource for init container",
        pod(init=(r(1, 1, scalar={EXT_B: 1}),)),
        r(),
        None,
        UU,
        [f"Insufficient {EXT_B}"],
    ),
    (
        "kubernetes.io resource capacity enforced",
        pod(r(1, 1, scalar={K8S_IO_A: 10})),
        r(),
        None,
        UU,
        [f"Insufficient {K8S_IO_A}"],
    ),
    (
        "kubernetes.io resource capacity enforced for init container",
        pod(init=(r(1, 1, scalar={K8S_IO_B: 10}),)),
        r(),
        None,
        UU,
        [f"Insufficient {K8S_IO_B}"],
    ),
    (
        "hugepages resource capacity enforced",
        pod(r(1, 1, scalar={HUGE_A: 10})),
        r(scalar={HUGE_A: 0}),
        None,
        UU,
        [f"Insufficient {HUGE_A}"],
    ),
    (
        "hugepages resource capacity enforced for init container",
        pod(init=(r(1, 1, scalar={HUGE_A: 10}),)),
        r(scalar={HUGE_A: 0}),
        None,
        UU,
        [f"Insufficient {HUGE_A}"],
    ),
    (
        "hugepages resource allocatable enforced for multiple containers",
        pod(r(1, 1, scalar={HUGE_A: 3}), r(1, 1, scalar={HUGE_A: 3})),
        r(scalar={HUGE_A: 2}),
        None,
        UU,
        [f"Insufficient {HUGE_A}"],
    ),
    (
        "skip checking ignored extended resource",
        pod(r(1, 1, scalar={EXT_B: 1})),
        r(),
        {"ignoredResources": [EXT_B]},
        None,
        [],
    ),
    (
        "skip checking ignored extended resource via resource groups",
        pod(r(1, 1, scalar={EXT_B: 1})),
        r(),
        {"ignoredResourceGroups": ["example.com"]},
        None,
        [],
    ),
    (
        "ignoredResources does not exempt kubernetes.io resources",
        pod(r(1, 1, scalar={K8S_IO_A: 1})),
        r(),
        {"ignoredResources": [K8S_IO_A], "ignoredResourceGroups": ["kubernetes.io"]},
        UU,
        [f"Insufficient {K8S_IO_A}"],
    ),
    (
        "resources + pod overhead fits",
        pod(r(1, 1), overhead={"cpu": "3m", "memory": "13"}),
        r(5, 5),
        None,
        None,
        [],
    ),
    (
        "requests + overhead does not fit for memory",
        pod(r(1, 1), overhead={"cpu": "1m", "memory": "15"}),
        r(5, 5),
        None,
        U,
        [MEM_R],
    ),
    (
        "sidecar adds to containers and to later init containers",
        pod(r(1, 1), sidecars=(r(3, 1),), init=(r(2, 1),)),
        r(5, 5),
        None,
        None,
        [],
    ),
    (
        "sidecar plus init container exceeds what is left",
        pod(r(1, 1), sidecars=(r(3, 1),), init=(r(2, 1),)),
        r(6, 5),
        None,
        U,
        [CPU_R],
    ),
    (
        "every insufficient resource reported in order",
        pod(r(11, 1, 21, scalar={HUGE_A: 1, EXT_A: 1})),
        r(1, 20, scalar={HUGE_A: 5, EXT_A: 5}),
        None,
        UU,
        [CPU_R, MEM_R, EPH_R, f"Insufficient {HUGE_A}", f"Insufficient {EXT_A}"],
    ),
]


@pytest.mark.parametrize(
    "p, used, args, code, reasons", [c[1:] for c in ENOUGH_REQUESTS], ids=[c[0] for c in ENOUGH_REQUESTS]
)
def test_enough_requests(p: Any, used: Req, args: Any, code: Code | None, reasons: list[str]) -> None:
    status = run_filter(p, pod(used), fit_node(10, 20, 32, 5, 20, 5), args)
    if code is None:
        assert status is None
    else:
        assert status.code == code
        assert status.reasons == reasons


NOT_ENOUGH_PODS = [
    ("even without specified resources predicate fails when there's no space for additional pod", pod(), r(10, 20), []),
    ("even if both resources fit predicate fails when there's no space for additional pod", pod(r(1, 1)), r(5, 5), []),
    ("even for equal edge case predicate fails when there's no space for additional pod", pod(r(5, 1)), r(5, 19), []),
    (
        "even for equal edge case predicate fails when there's no space for additional pod due to init container",
        pod(r(5, 1), init=(r(5, 1),)),
        r(5, 19),
        [],
    ),
    ("too many pods comes before insufficient cpu", pod(r(6, 1)), r(5, 19), [CPU_R]),
]


@pytest.mark.parametrize("p, used, more", [c[1:] for c in NOT_ENOUGH_PODS], ids=[c[0] for c in NOT_ENOUGH_PODS])
def test_not_enough_pods(p: Any, used: Req, more: list[str]) -> None:
    status = run_filter(p, pod(used), fit_node(10, 20, 1, 0, 0, 0))
    assert status.code == Code.UNSCHEDULABLE
    assert status.reasons == ["Too many pods", *more]


STORAGE = [
    ("due to container scratch disk", pod(r(1, 1)), r(10, 10), U, [CPU_R]),
    ("pod fit", pod(r(1, 1)), r(2, 10), None, []),
    ("storage ephemeral local storage request exceeds allocatable", pod(r(eph=25)), r(2, 2), UU, [EPH_R]),
    ("ephemeral local storage is insufficient", pod(r(eph=15)), r(2, 2, eph=10), U, [EPH_R]),
    ("pod fits", pod(r(eph=10)), r(2, 2), None, []),
]


@pytest.mark.parametrize("p, used, code, reasons", [c[1:] for c in STORAGE], ids=[c[0] for c in STORAGE])
def test_storage_requests(p: Any, used: Req, code: Code | None, reasons: list[str]) -> None:
    status = run_filter(p, pod(used), fit_node(10, 20, 32, 5, 20, 5))
    if code is None:
        assert status is None
    else:
        assert (status.code, status.reasons) == (code, reasons)


def test_filter_without_pre_filter_is_an_error() -> None:
    plugin = NodeResourcesFit(None)
    status = plugin.filter(CycleState(), make_pod("p").info(), make_node("n1").info())
    assert status.code == Code.ERROR
    assert status.reasons == ['error reading "PreFilterNodeResourcesFit" from cycleState: not found']


# --- Score ----------------------------------------------------------------------------------------


def score(
    strategy: str, p: Any, nodes: list[Any], existing: Any = (), resources: Any = None, shape: Any = None
) -> dict[str, int]:
    scoring: dict[str, Any] = {"type": strategy}
    if resources is not None:
        scoring["resources"] = resources
    if shape is not None:
        scoring["requestedToCapacityRatio"] = {"shape": shape}
    return score_nodes(NodeResourcesFit, p, nodes, args={"scoringStrategy": scoring}, pods=list(existing))


def cm(cpu: str, memory: str) -> Req:
    return {"cpu": cpu, "memory": memory}


N4_10 = [node("node1", cm("4000", "10000")), node("node2", cm("4000", "10000"))]
N4_6 = [node("node1", cm("4000", "10000")), node("node2", cm("6000", "10000"))]
N10_20 = [node("node1", cm("10000", "20000")), node("node2", cm("10000", "20000"))]
N10_50 = [node("node1", cm("10000", "20000")), node("node2", cm("10000", "50000"))]
N6_EXT = [node("node1", cm("6000", "10000")), node("node2", {**cm("6000", "10000"), EXTENDED_RES: "4"})]
N6_EXT_4_10 = [
    node("node1", {**cm("6000", "10000"), EXTENDED_RES: "4"}),
    node("node2", {**cm("6000", "10000"), EXTENDED_RES: "10"}),
]
TWO_CONTAINERS = pod(cm("1000", "2000"), cm("2000", "3000"))
ON1_3000 = pod(cm("3000", "0"), node="node1", name="e1")
ON2_3000 = pod(cm("3000", "0"), node="node2", name="e2")
ON2_3000_5000 = pod(cm("3000", "5000"), node="node2", name="e3")
EMPTY_ON = [pod(node=n, name=f"e{i}") for i, n in enumerate(["node1", "node1", "node2", "node2"])]

LEAST = [
    ("nothing scheduled, nothing requested", pod(), N4_10, [], None, {"node1": 100, "node2": 100}),
    (
        "nothing scheduled, resources requested, differently sized nodes",
        TWO_CONTAINERS,
        N4_6,
        [],
        None,
        {"node1": 37, "node2": 50},
    ),
    ("no resources requested, pods scheduled", pod(), N4_10, EMPTY_ON, None, {"node1": 100, "node2": 100}),
    (
        "no resources requested, pods scheduled with resources",
        pod(),
        N10_20,
        [ON1_3000, pod(cm("3000", "0"), node="node1", name="e4"), ON2_3000, ON2_3000_5000],
        None,
        {"node1": 70, "node2": 57},
    ),
    (
        "resources requested, pods scheduled with resources",
        TWO_CONTAINERS,
        N10_20,
        [ON1_3000, ON2_3000_5000],
        None,
        {"node1": 57, "node2": 45},
    ),
    (
        "resources requested, pods scheduled with resources, differently sized nodes",
        TWO_CONTAINERS,
        N10_50,
        [ON1_3000, ON2_3000_5000],
        None,
        {"node1": 57, "node2": 60},
    ),
    (
        "requested resources exceed node capacity",
        pod(cm("3000", "0")),
        N4_10,
        [ON1_3000, ON2_3000_5000],
        None,
        {"node1": 50, "node2": 25},
    ),
    (
        "zero node resources, pods scheduled with resources",
        pod(),
        [node("node1", {}), node("node2", {})],
        [ON1_3000, ON2_3000_5000],
        None,
        {"node1": 0, "node2": 0},
    ),
    (
        "nothing scheduled, resources requested with different weight on CPU and memory, differently sized nodes",
        TWO_CONTAINERS,
        N4_6,
        [],
        [{"name": "memory", "weight": 2}, {"name": "cpu", "weight": 1}],
        {"node1": 41, "node2": 50},
    ),
    (
        "bypass extended resource if the pod does not request",
        TWO_CONTAINERS,
        N6_EXT,
        [],
        EXTENDED_RESOURCE_SET,
        {"node1": 50, "node2": 50},
    ),
    (
        "honor extended resource if the pod requests",
        pod({"cpu": "3000", "memory": "5000", EXTENDED_RES: "2"}),
        N6_EXT_4_10,
        [],
        EXTENDED_RESOURCE_SET,
        {"node1": 50, "node2": 60},
    ),
    (
        "if the node doesn't have a resource",
        pod(cm("3000", "4000")),
        N6_EXT,
        [],
        [{"name": EXTENDED_RES, "weight": 2}, {"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}],
        {"node1": 55, "node2": 55},
    ),
]


@pytest.mark.parametrize("p, nodes, existing, resources, want", [c[1:] for c in LEAST], ids=[c[0] for c in LEAST])
def test_least_allocated(p: Any, nodes: Any, existing: Any, resources: Any, want: dict[str, int]) -> None:
    assert score("LeastAllocated", p, nodes, existing, resources) == want


def test_least_allocated_is_the_default_strategy() -> None:
    got = score_nodes(NodeResourcesFit, TWO_CONTAINERS, N4_6)
    assert got == {"node1": 37, "node2": 50}


N250 = [node("node1", cm("250m", "1000Mi")), node("node2", cm("250m", "1000Mi"))]

MOST = [
    ("nothing scheduled, nothing requested", pod(), N4_10, [], None, {"node1": 0, "node2": 0}),
    (
        "nothing scheduled, resources requested, differently sized nodes",
        TWO_CONTAINERS,
        N4_6,
        [],
        None,
        {"node1": 62, "node2": 50},
    ),
    (
        "no resources requested, pods scheduled with resources",
        pod(),
        N10_20,
        [ON1_3000, pod(cm("3000", "0"), node="node1", name="e4"), ON2_3000, ON2_3000_5000],
        None,
        {"node1": 30, "node2": 42},
    ),
    (
        "resources requested, pods scheduled with resources",
        TWO_CONTAINERS,
        N10_20,
        [ON1_3000, ON2_3000_5000],
        None,
        {"node1": 42, "node2": 55},
    ),
    (
        "resources requested equal node capacity",
        pod(cm("2000", "4000"), cm("3000", "5000")),
        [node("node1", cm("5000", "10000")), node("node2", cm("10000", "9000"))],
        [],
        None,
        {"node1": 95, "node2": 75},
    ),
    (
        "nothing scheduled, resources requested with different weight on CPU and memory",
        TWO_CONTAINERS,
        N4_6,
        [],
        [{"name": "memory", "weight": 2}, {"name": "cpu", "weight": 1}],
        {"node1": 58, "node2": 50},
    ),
    (
        "no resources requested, pods scheduled, nonzero request for resource",
        make_pod("p").container(),
        N250,
        [make_pod("e1").container().node("node1"), make_pod("e2").container().node("node1")],
        None,
        {"node1": 80, "node2": 30},
    ),
    (
        "bypass extended resource if the pod does not request",
        TWO_CONTAINERS,
        N6_EXT,
        [],
        EXTENDED_RESOURCE_SET,
        {"node1": 50, "node2": 50},
    ),
    (
        "honor extended resource if the pod requests",
        pod({"cpu": "3000", "memory": "5000", EXTENDED_RES: "2"}),
        N6_EXT_4_10,
        [],
        EXTENDED_RESOURCE_SET,
        {"node1": 50, "node2": 40},
    ),
    (
        "if the node doesn't have a resource",
        pod(cm("3000", "4000")),
        N6_EXT,
        [],
        [{"name": EXTENDED_RES, "weight": 2}, {"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}],
        {"node1": 45, "node2": 45},
    ),
]


@pytest.mark.parametrize("p, nodes, existing, resources, want", [c[1:] for c in MOST], ids=[c[0] for c in MOST])
def test_most_allocated(p: Any, nodes: Any, existing: Any, resources: Any, want: dict[str, int]) -> None:
    assert score("MostAllocated", p, nodes, existing, resources) == want


LEAST_SHAPE = [{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}]
BIN_PACK_SHAPE = [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 1}]

RATIO = [
    (
        "nothing scheduled, nothing requested (default - least requested nodes have priority)",
        pod(),
        N4_10,
        [pod(node="node1", name="e1"), pod(node="node1", name="e2")],
        {"node1": 100, "node2": 100},
    ),
    (
        "nothing scheduled, resources requested, differently sized nodes (default - least requested nodes have priority)",
        TWO_CONTAINERS,
        N4_6,
        [pod(node="node1", name="e1"), pod(node="node1", name="e2")],
        {"node1": 38, "node2": 50},
    ),
    (
        "no resources requested, pods scheduled with resources (default - least requested nodes have priority)",
        pod(),
        N4_6,
        [pod(cm("3000", "5000"), node="node1", name="e1"), pod(cm("3000", "5000"), node="node2", name="e2")],
        {"node1": 38, "node2": 50},
    ),
]


@pytest.mark.parametrize("p, nodes, existing, want", [c[1:] for c in RATIO], ids=[c[0] for c in RATIO])
def test_requested_to_capacity_ratio(p: Any, nodes: Any, existing: Any, want: dict[str, int]) -> None:
    assert score("RequestedToCapacityRatio", p, nodes, existing, DEFAULT_RESOURCES, LEAST_SHAPE) == want


def ext_node(name: str, ext: dict[str, int]) -> Any:
    """Upstream's ``makeNode(name, 4000 millicores, 10000Mi, ext)``."""
    return node(name, {"cpu": "4", "memory": str(10000 * 1024 * 1024), **{k: str(v) for k, v in ext.items()}})


FOO, BAR = "intel.com/foo", "intel.com/bar"
SINGLE_NODES = [ext_node("node1", {FOO: 8}), ext_node("node2", {FOO: 4})]

SINGLE_EXTENDED = [
    ("nothing scheduled, nothing requested", pod(), [pod(name="x")], {"node1": 0, "node2": 0}),
    (
        "resources requested, pods scheduled with less resources",
        pod({FOO: "2"}),
        [pod(name="x")],
        {"node1": 2, "node2": 5},
    ),
    (
        "resources requested, pods scheduled with resources, on node with existing pod running",
        pod({FOO: "2"}),
        [pod({FOO: "2"}, node="node2", name="x")],
        {"node1": 2, "node2": 10},
    ),
    (
        "resources requested, pods scheduled with more resources",
        pod({FOO: "4"}),
        [pod(name="x")],
        {"node1": 5, "node2": 10},
    ),
]


@pytest.mark.parametrize("p, existing, want", [c[1:] for c in SINGLE_EXTENDED], ids=[c[0] for c in SINGLE_EXTENDED])
def test_bin_packing_single_extended(p: Any, existing: Any, want: dict[str, int]) -> None:
    got = score("RequestedToCapacityRatio", p, SINGLE_NODES, existing, [{"name": FOO, "weight": 1}], BIN_PACK_SHAPE)
    assert got == want


MULTI_NODES = [ext_node("node1", {FOO: 8, BAR: 4}), ext_node("node2", {FOO: 4, BAR: 8})]

MULTIPLE_EXTENDED = [
    ("nothing scheduled, nothing requested", pod(), [pod(name="x")], {"node1": 0, "node2": 0}),
    (
        "resources requested, pods scheduled with less resources",
        pod({FOO: "2", BAR: "2"}),
        [pod(name="x")],
        {"node1": 4, "node2": 3},
    ),
    (
        "resources requested, pods scheduled with resources, on node with existing pod running",
        pod({FOO: "2", BAR: "2"}),
        [pod({FOO: "4", BAR: "2"}, node="node2", name="x")],
        {"node1": 4, "node2": 7},
    ),
    (
        "resources requested, pods scheduled with more resources",
        pod({FOO: "4", BAR: "2"}),
        [pod(name="x")],
        {"node1": 5, "node2": 5},
    ),
]


@pytest.mark.parametrize("p, existing, want", [c[1:] for c in MULTIPLE_EXTENDED], ids=[c[0] for c in MULTIPLE_EXTENDED])
def test_bin_packing_multiple_extended(p: Any, existing: Any, want: dict[str, int]) -> None:
    resources = [{"name": FOO, "weight": 3}, {"name": BAR, "weight": 5}]
    got = score("RequestedToCapacityRatio", p, MULTI_NODES, existing, resources, BIN_PACK_SHAPE)
    assert got == want


BROKEN_LINEAR = [
    (
        "rising from 10 to 90",
        [(10, 1), (90, 9)],
        [(-10, 1), (0, 1), (9, 1), (10, 1), (15, 1), (19, 1), (20, 2), (89, 8), (90, 9), (99, 9), (100, 9), (110, 9)],
    ),
    (
        "up then down",
        [(0, 2), (40, 10), (100, 0)],
        [(-10, 2), (0, 2), (20, 6), (30, 8), (40, 10), (70, 5), (71, 5), (100, 0), (110, 0)],
    ),
    ("flat", [(0, 2), (40, 2), (100, 2)], [(-10, 2), (0, 2), (20, 2), (30, 2), (40, 2), (70, 2), (100, 2), (110, 2)]),
]


@pytest.mark.parametrize("points, assertions", [c[1:] for c in BROKEN_LINEAR], ids=[c[0] for c in BROKEN_LINEAR])
def test_broken_linear_function(points: list[tuple[int, int]], assertions: list[tuple[int, int]]) -> None:
    f = broken_linear_function(points)
    # (71, 5) in "up then down" pins Go's truncating division: floor division would give 4.
    assert [(p, f(p)) for p, _ in assertions] == assertions


# --- Args -----------------------------------------------------------------------------------------


def test_args_defaults() -> None:
    args = NodeResourcesFit.Args()
    assert args.scoring_strategy.type == "LeastAllocated"
    assert [(r.name, r.weight) for r in args.scoring_strategy.resources] == [("cpu", 1), ("memory", 1)]
    assert args.ignored_resources == [] and args.ignored_resource_groups == []


def test_args_zero_weight_defaults_to_one_and_empty_resources_to_cpu_memory() -> None:
    args = NodeResourcesFit.Args.model_validate(
        {"scoringStrategy": {"type": "MostAllocated", "resources": [{"name": "memory", "weight": 0}]}}
    )
    assert [(r.name, r.weight) for r in args.scoring_strategy.resources] == [("memory", 1)]
    args = NodeResourcesFit.Args.model_validate({"scoringStrategy": {"type": "MostAllocated", "resources": []}})
    assert [r.name for r in args.scoring_strategy.resources] == ["cpu", "memory"]


BAD_ARGS = [
    ("unknown strategy type", {"scoringStrategy": {"type": "Least"}}, "scoringStrategy.type", "LeastAllocated"),
    (
        "negative weight",
        {"scoringStrategy": {"resources": [{"name": "memory", "weight": -1}, {"name": "cpu", "weight": 1}]}},
        "scoringStrategy.resources",
        "resources[0].weight: Invalid value: -1: resource weight of memory not in valid range (0, 100]",
    ),
    (
        "weight larger than MaxNodeScore",
        {"scoringStrategy": {"resources": [{"name": "memory", "weight": 1}, {"name": "cpu", "weight": 101}]}},
        "scoringStrategy.resources",
        "resources[1].weight: Invalid value: 101: resource weight of cpu not in valid range (0, 100]",
    ),
    (
        "shape missing for RequestedToCapacityRatio",
        {"scoringStrategy": {"type": "RequestedToCapacityRatio"}},
        "scoringStrategy",
        "requestedToCapacityRatio: Required value: must be specified when type is RequestedToCapacityRatio",
    ),
    (
        "shape with no points",
        {"scoringStrategy": {"type": "RequestedToCapacityRatio", "requestedToCapacityRatio": {"shape": []}}},
        "scoringStrategy.requestedToCapacityRatio",
        "shape: Required value: at least one point must be specified",
    ),
    (
        "shape not sorted",
        {
            "scoringStrategy": {
                "type": "RequestedToCapacityRatio",
                "requestedToCapacityRatio": {
                    "shape": [{"utilization": 50, "score": 1}, {"utilization": 50, "score": 2}]
                },
            }
        },
        "scoringStrategy.requestedToCapacityRatio",
        "shape[1].utilization: Invalid value: 50: values must be sorted in increasing order",
    ),
    (
        "shape utilization out of range",
        {
            "scoringStrategy": {
                "type": "RequestedToCapacityRatio",
                "requestedToCapacityRatio": {"shape": [{"utilization": 101, "score": 1}]},
            }
        },
        "scoringStrategy.requestedToCapacityRatio",
        "shape[0].utilization: Invalid value: 101: not in valid range [0, 100]",
    ),
    (
        "shape score out of range",
        {
            "scoringStrategy": {
                "type": "RequestedToCapacityRatio",
                "requestedToCapacityRatio": {"shape": [{"utilization": 10, "score": 11}]},
            }
        },
        "scoringStrategy.requestedToCapacityRatio",
        "shape[0].score: Invalid value: 11: not in valid range [0, 10]",
    ),
    (
        "shape given for another strategy",
        {
            "scoringStrategy": {
                "type": "MostAllocated",
                "requestedToCapacityRatio": {"shape": [{"utilization": 1, "score": 1}]},
            }
        },
        "scoringStrategy",
        "requestedToCapacityRatio: Forbidden: must be nil when type is not RequestedToCapacityRatio",
    ),
    (
        "ignored resource not a label name",
        {"ignoredResources": ["example.com/a b"]},
        "ignoredResources",
        "ignoredResources[0]: Invalid value: 'example.com/a b': name part must consist of alphanumeric characters",
    ),
    (
        "ignored resource group with a slash",
        {"ignoredResourceGroups": ["example.com/aaa"]},
        "ignoredResourceGroups",
        "ignoredResourceGroups[0]: Invalid value: 'example.com/aaa': resource group name can't contain '/'",
    ),
    ("unknown field", {"ignoredResource": ["x"]}, "ignoredResource", "Extra inputs are not permitted"),
]


@pytest.mark.parametrize("raw, loc, message", [c[1:] for c in BAD_ARGS], ids=[c[0] for c in BAD_ARGS])
def test_args_validation_names_the_field(raw: dict[str, Any], loc: str, message: str) -> None:
    with pytest.raises(ValidationError) as info:
        NodeResourcesFit.Args.model_validate(raw)
    errors = info.value.errors()
    assert any(".".join(str(p) for p in e["loc"]) == loc and message in e["msg"] for e in errors), errors


def test_valid_ratio_args_build_a_scorer() -> None:
    args = NodeResourcesFit.Args.model_validate(
        {
            "ignoredResources": ["example.com/aaa"],
            "ignoredResourceGroups": ["example.com"],
            "scoringStrategy": {"type": "RequestedToCapacityRatio", "requestedToCapacityRatio": {"shape": LEAST_SHAPE}},
        }
    )
    plugin = NodeResourcesFit(args)
    assert plugin.scorer.name == "RequestedToCapacityRatio"
    assert plugin.ignored_resources == frozenset({"example.com/aaa"})


# --- events ---------------------------------------------------------------------------------------


def test_events_to_register() -> None:
    events = NodeResourcesFit(None).events_to_register()
    got = {(e.event.resource, e.event.action) for e in events}
    assert got == {
        (EventResource.POD, ActionType.DELETE | ActionType.UPDATE_POD_SCALE_DOWN),
        (EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE),
    }
    assert all(e.hint is not None for e in events)


TARGET = make_pod("target").req(cpu="2", memory="1Gi").obj()
Q, S = QueueingHint.QUEUE, QueueingHint.SKIP

NODE_HINTS = [
    ("added node fits", None, make_node("n").capacity(cpu="4", memory="4Gi", pods="10").obj(), Q),
    ("added node too small", None, make_node("n").capacity(cpu="1", memory="4Gi", pods="10").obj(), S),
    (
        "allocatable cpu grew",
        make_node("n").capacity(cpu="3", memory="4Gi", pods="10").obj(),
        make_node("n").capacity(cpu="4", memory="4Gi", pods="10").obj(),
        Q,
    ),
    (
        "only an unrequested resource grew",
        make_node("n").capacity(cpu="4", memory="4Gi", pods="10").obj(),
        make_node("n").capacity(cpu="4", memory="4Gi", pods="10", example_com_gpu="2").obj(),
        S,
    ),
    (
        "pod capacity grew",
        make_node("n").capacity(cpu="4", memory="4Gi", pods="10").obj(),
        make_node("n").capacity(cpu="4", memory="4Gi", pods="20").obj(),
        Q,
    ),
]


@pytest.mark.parametrize("old, new, want", [c[1:] for c in NODE_HINTS], ids=[c[0] for c in NODE_HINTS])
def test_node_change_hint(old: Any, new: Any, want: QueueingHint) -> None:
    assert is_schedulable_after_node_change(TARGET, old, new) is want


BIG = make_pod("other").req(cpu="3").node("n").obj()
SMALL = {**BIG, "spec": {**BIG["spec"], "containers": [{"name": "c0", "resources": {"requests": {"cpu": "1"}}}]}}
UNSCHEDULED = make_pod("pending").req(cpu="3").obj()

POD_HINTS = [
    ("scheduled pod deleted", BIG, None, Q),
    ("unscheduled pod deleted", UNSCHEDULED, None, S),
    ("scheduled pod scaled down cpu", BIG, SMALL, Q),
    ("scheduled pod scaled up", SMALL, BIG, S),
]


@pytest.mark.parametrize("old, new, want", [c[1:] for c in POD_HINTS], ids=[c[0] for c in POD_HINTS])
def test_pod_event_hint(old: Any, new: Any, want: QueueingHint) -> None:
    assert is_schedulable_after_pod_event(TARGET, old, new) is want
