"""NodeResourcesAllocatable (plugins/noderesources-allocatable) as scheduler-plugins'
``pkg/noderesources/allocatable_test.go``: ``TestNodeResourcesAllocatable`` case for case, each
through the runtime's Score and NormalizeScore (the test kit's ``plugin_framework``, the plugin
alone with weight 1, as upstream's framework registers it); its args as
``apis/config/validation``'s ``TestValidateNodeResourcesAllocatableArgs`` and ``v1`` defaulting."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from kubesched import MAX_NODE_SCORE, MIN_NODE_SCORE, CycleState, NodeInfo, PodInfo
from kubesched.testing import NodeBuilder, PodBuilder, make_node, make_pod, plugin_framework

PACKAGE = Path(__file__).resolve().parents[2] / "plugins" / "noderesources-allocatable"
sys.path.insert(0, str(PACKAGE))  # the package is not installed for the suite

from kubesched_noderesources_allocatable import (  # noqa: E402
    NodeResourcesAllocatable,
    NodeResourcesAllocatableArgs,
    allocatable_of,
    go_div,
    is_scalar_resource,
)

MI = 1 << 20
#: 1 millicore weighted as 1 MiB (upstream's default set)
DEFAULT_SET = [{"name": "cpu", "weight": 1 << 20}, {"name": "memory", "weight": 1}]
#: 1 millicore weighted as 1 GiB
CPU_SET = [{"name": "cpu", "weight": 1 << 30}, {"name": "memory", "weight": 1}]
MID = (MIN_NODE_SCORE + MAX_NODE_SCORE) // 2


def machine(name: str, milli_cpu: int, memory: int) -> NodeBuilder:
    """upstream's ``makeNodeInfo``: capacity and allocatable alike."""
    return make_node(name).capacity(cpu=f"{milli_cpu}m", memory=str(memory), pods="110")


def no_resources() -> PodBuilder:
    return make_pod("p")


def cpu_and_memory() -> PodBuilder:
    return make_pod("cpuAndMemory").req(cpu="1000m", memory="1Gi")


def big_cpu() -> PodBuilder:
    return make_pod("bigCpu").req(cpu="8000m", memory="1Gi")


def labelled(name: str, node: str, **labels: str) -> PodBuilder:
    return make_pod(name).node(node).labels(**labels)


def scheduled_pod() -> PodBuilder:
    """Two containers asking 1 and 2 CPUs (and 0 memory), on machine1."""
    return (
        make_pod("scheduled")
        .node("machine1")
        .container("a", requests={"cpu": "1000m", "memory": "0"})
        .container("b", requests={"cpu": "2000m", "memory": "0"})
    )


CASES: list[tuple[str, Any, list[NodeBuilder], list[PodBuilder], dict[str, Any], dict[str, int]]] = [
    (
        "nothing scheduled, nothing requested",
        no_resources,
        [machine("machine1", 4000, 10000), machine("machine2", 4000, 10000)],
        [],
        {"resources": DEFAULT_SET, "mode": "Least"},
        {"machine1": MIN_NODE_SCORE, "machine2": MIN_NODE_SCORE},
    ),
    (
        "nothing scheduled, resources requested, differently sized machines, least mode",
        cpu_and_memory,
        [machine("machine1", 4000, 10000), machine("machine2", 6000, 10000)],
        [],
        {"resources": DEFAULT_SET, "mode": "Least"},
        {"machine1": MAX_NODE_SCORE, "machine2": MIN_NODE_SCORE},
    ),
    (
        "nothing scheduled, resources requested, differently sized machines, most mode",
        cpu_and_memory,
        [machine("machine1", 4000, 10000), machine("machine2", 6000, 10000)],
        [],
        {"resources": DEFAULT_SET, "mode": "Most"},
        {"machine1": MIN_NODE_SCORE, "machine2": MAX_NODE_SCORE},
    ),
    (
        "no resources requested, pods scheduled",
        no_resources,
        [machine("machine1", 4000, 10000), machine("machine2", 4000, 10000)],
        [
            labelled("a", "machine1", bar="foo", baz="blah"),
            labelled("b", "machine1", foo="bar", baz="blah"),
            labelled("c", "machine2", foo="bar", baz="blah"),
            labelled("d", "machine2", foo="bar", baz="blah"),
        ],
        {"resources": DEFAULT_SET, "mode": "Least"},
        {"machine1": MIN_NODE_SCORE, "machine2": MIN_NODE_SCORE},
    ),
    (
        "no resources requested, pods scheduled with resources",
        no_resources,
        [machine("machine1", 10000, 20000), machine("machine2", 10000, 20000)],
        [scheduled_pod()],
        {"resources": DEFAULT_SET, "mode": "Least"},
        {"machine1": MIN_NODE_SCORE, "machine2": MIN_NODE_SCORE},
    ),
    (
        "resources requested, pods scheduled with resources",
        cpu_and_memory,
        [machine("machine1", 10000, 20000), machine("machine2", 10000, 20000)],
        [scheduled_pod()],
        {"resources": DEFAULT_SET, "mode": "Least"},
        {"machine1": MIN_NODE_SCORE, "machine2": MIN_NODE_SCORE},
    ),
    (
        "resources requested with more than the node, differently sized machines, least mode",
        big_cpu,
        [machine("machine1", 4000, 1000), machine("machine2", 5000, 1000)],
        [],
        {"resources": DEFAULT_SET, "mode": "Least"},
        {"machine1": MAX_NODE_SCORE, "machine2": MIN_NODE_SCORE},
    ),
    (
        "resources requested with more than the node, differently sized machines, most mode",
        big_cpu,
        [machine("machine1", 4000, 1000), machine("machine2", 5000, 1000)],
        [],
        {"resources": DEFAULT_SET, "mode": "Most"},
        {"machine1": MIN_NODE_SCORE, "machine2": MAX_NODE_SCORE},
    ),
    (
        # upstream's name says "most mode"; its args say Least
        "nothing scheduled, resources requested, differently sized machines, cpu weighted, most mode",
        cpu_and_memory,
        [machine("machine1", 1000, 2000), machine("machine2", 1005, 1000)],
        [],
        {"resources": CPU_SET, "mode": "Least"},
        {"machine1": MAX_NODE_SCORE, "machine2": MIN_NODE_SCORE},
    ),
    (
        "nothing scheduled, resources requested, differently sized machines, cpu weighted, least mode",
        cpu_and_memory,
        [machine("machine1", 1000, 2000), machine("machine2", 1005, 1000)],
        [],
        {"resources": CPU_SET, "mode": "Most"},
        {"machine1": MIN_NODE_SCORE, "machine2": MAX_NODE_SCORE},
    ),
    (
        "nothing scheduled, resources requested, 3 differently sized machines, least mode",
        cpu_and_memory,
        [
            machine("machine1", 1000, 1000 * MI),
            machine("machine2", 2000, 2000 * MI),
            machine("machine3", 3000, 3000 * MI),
        ],
        [],
        {"resources": DEFAULT_SET, "mode": "Least"},
        {"machine1": MAX_NODE_SCORE, "machine2": MID, "machine3": MIN_NODE_SCORE},
    ),
    (
        "nothing scheduled, resources requested, 3 differently sized machines, most mode",
        cpu_and_memory,
        [
            machine("machine1", 1000, 1000 * MI),
            machine("machine2", 2000, 2000 * MI),
            machine("machine3", 3000, 3000 * MI),
        ],
        [],
        {"resources": DEFAULT_SET, "mode": "Most"},
        {"machine1": MIN_NODE_SCORE, "machine2": MID, "machine3": MAX_NODE_SCORE},
    ),
]


@pytest.mark.parametrize(("name", "pod", "nodes", "pods", "args", "expected"), CASES, ids=[c[0] for c in CASES])
def test_node_resources_allocatable(
    name: str,
    pod: Any,
    nodes: list[NodeBuilder],
    pods: list[PodBuilder],
    args: dict[str, Any],
    expected: dict[str, int],
) -> None:
    with plugin_framework(NodeResourcesAllocatable, args=args, nodes=nodes, pods=pods) as fw:
        assert fw.score(pod()) == expected, name


@pytest.mark.parametrize(
    ("resources", "message"),
    [
        (
            [{"name": "memory", "weight": -1}, {"name": "cpu", "weight": 1}],
            "resources[0].weight: Invalid value: -1: resource weight of memory should be a positive value, got :-1",
        ),
        (
            [{"name": "memory", "weight": 1}, {"name": "cpu", "weight": 0}],
            "resources[1].weight: Invalid value: 0: resource weight of cpu should be a positive value, got :0",
        ),
    ],
    ids=["resource with negative weight", "resource with zero weight"],
)
def test_a_weight_that_is_not_positive_is_refused_naming_it(resources: list[dict[str, Any]], message: str) -> None:
    with pytest.raises(Exception, match=r"\[?" + message.replace("[", r"\[").replace("]", r"\]")):
        plugin_framework(NodeResourcesAllocatable, args={"resources": resources}, nodes=[machine("m", 4000, 10000)])


# --- apis/config: TestValidateNodeResourcesAllocatableArgs, and v1 defaulting ---------------------
def test_valid_resources_and_mode() -> None:
    args = NodeResourcesAllocatableArgs.model_validate(
        {"resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 2}], "mode": "Least"}
    )
    assert args.weights() == {"cpu": 1, "memory": 2} and args.mode == "Least"


def test_every_bad_weight_is_reported_together() -> None:
    with pytest.raises(ValidationError) as err:
        NodeResourcesAllocatableArgs.model_validate(
            {"resources": [{"name": "cpu", "weight": 0}, {"name": "memory", "weight": -1}], "mode": "Least"}
        )
    assert (
        "[resources[0].weight: Invalid value: 0: resource weight of cpu should be a positive value, got :0, "
        "resources[1].weight: Invalid value: -1: resource weight of memory should be a positive value, got :-1]"
    ) in str(err.value)


def test_an_unknown_mode_is_refused() -> None:
    with pytest.raises(ValidationError, match='mode: Invalid value: "not existent": invalid support ModeType'):
        NodeResourcesAllocatableArgs.model_validate(
            {"resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 2}], "mode": "not existent"}
        )


@pytest.mark.parametrize("raw", [{}, {"resources": None, "mode": None}, {"resources": [], "mode": ""}])
def test_defaults(raw: dict[str, Any]) -> None:
    args = NodeResourcesAllocatableArgs.model_validate(raw)
    assert args.mode == "Least"
    assert args.weights() == {"cpu": 1 << 20, "memory": 1}


def test_unknown_fields_and_non_integer_weights_are_refused() -> None:
    with pytest.raises(ValidationError, match="extra"):
        NodeResourcesAllocatableArgs.model_validate({"resource": []})
    with pytest.raises(ValidationError, match="weight"):
        NodeResourcesAllocatableArgs.model_validate({"resources": [{"name": "cpu", "weight": "1"}]})


# --- what the score reads --------------------------------------------------------------------------
def test_the_raw_score_is_the_weighted_mean_truncated_toward_zero() -> None:
    plugin = NodeResourcesAllocatable(NodeResourcesAllocatableArgs.model_validate({"resources": DEFAULT_SET}))
    node = NodeInfo(machine("n", 1000, 0).obj())
    # -(1000 << 20) / (2**20 + 1) = -999.99..., truncated (Go), not floored
    assert plugin.score(CycleState(), PodInfo(make_pod("p").obj()), node) == -999
    node = NodeInfo(machine("n", 4000, 10000).obj())
    assert plugin.score(CycleState(), PodInfo(make_pod("p").obj()), node) == -((4000 * MI + 10000) // (MI + 1))
    assert go_div(-7, 2) == -3 and go_div(7, 2) == 3 and go_div(7, -2) == -3


def test_scalar_resources_count_and_other_names_count_zero() -> None:
    node = NodeInfo(
        make_node("n")
        .capacity(cpu="2", memory="1Gi", pods="110", **{"nvidia.com/gpu": "4", "hugepages-2Mi": "8"})
        .obj()
    )
    assert allocatable_of(node.allocatable, "nvidia.com/gpu") == 4
    assert allocatable_of(node.allocatable, "hugepages-2Mi") == 8
    assert allocatable_of(node.allocatable, "pods") == 0  # not scored, as upstream
    assert allocatable_of(node.allocatable, "cpu") == 2000
    assert is_scalar_resource("example.com/foo") and not is_scalar_resource("requests.example.com/foo")
    args = NodeResourcesAllocatableArgs.model_validate({"resources": [{"name": "nvidia.com/gpu", "weight": 1}]})
    assert NodeResourcesAllocatable(args).score(CycleState(), PodInfo(make_pod("p").obj()), node) == -4


def test_a_profile_loads_the_args_by_the_plugin_name() -> None:
    with plugin_framework(
        NodeResourcesAllocatable,
        args={"mode": "Most"},
        nodes=[machine("small", 1000, MI), machine("big", 8000, 8 * MI)],
    ) as fw:
        assert fw.score(make_pod("p")) == {"small": 0, "big": 100}
