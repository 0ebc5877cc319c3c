"""NodeResourceTopologyMatch's NUMA-cell arithmetic (plugins/noderesourcetopology), case for
case as scheduler-plugins' ``pkg/noderesourcetopology/numaresources_test.go``
(``TestIsHostLevelResource``, ``TestIsNUMAAffineResource``,
``TestSubtractResourcesFromNUMANodeList``, ``TestSubstractNUMA``) and ``pluginhelpers_test.go``
(``TestOnlyNonNUMAResources``)."""

from __future__ import annotations

import sys
from fractions import Fraction

import pytest
from nrt_cases import PACKAGE

from kubesched import parse_quantity

sys.path.insert(0, str(PACKAGE))  # the package is not installed for the suite

from kubesched_noderesourcetopology import NUMANode
from kubesched_noderesourcetopology.filter import subtract_from_numa_node
from kubesched_noderesourcetopology.score import subtract_from_numas
from kubesched_noderesourcetopology.topology import (
    is_host_level,
    is_numa_affine,
    only_non_numa_resources,
)

RESOURCES = [
    "cpu",
    "memory",
    "hugepages-1Gi",
    "storage",
    "ephemeral-storage",
    "vendor.io/fastest-nic",
    "awesome.com/gpu-for-ai",
]


HOST_LEVEL = [False, False, False, True, True, True, True]
AFFINE = [True, True, True, False, False, False, False]


@pytest.mark.parametrize(("resource", "host_level", "affine"), list(zip(RESOURCES, HOST_LEVEL, AFFINE, strict=True)))
def test_is_host_level_and_numa_affine_resource(resource: str, host_level: bool, affine: bool) -> None:
    assert is_host_level(resource) is host_level
    assert is_numa_affine(resource) is affine


def q(**res: str) -> dict[str, Fraction]:
    names = {"gpu": "vendor.io/gpu", "nic": "vendor.io/nic", "eph": "ephemeral-storage", "hp": "hugepages-1Gi"}
    return {names.get(k, k): parse_quantity(v) for k, v in res.items()}


SUBTRACT_CASES = [
    ("empty from empty", {}, 0, "Guaranteed", {}, {}, False),
    ("inconsistent numaID", {}, 2, "Guaranteed", {}, {}, False),
    ("empty from minimal", q(cpu="2", memory="4Gi"), 0, "Guaranteed", {}, q(cpu="2", memory="4Gi"), False),
    (
        "remove core resources (GU qos)",
        q(cpu="8", memory="16Gi"),
        0,
        "Guaranteed",
        q(cpu="2", memory="4Gi"),
        q(cpu="6", memory="12Gi"),
        False,
    ),
    (
        "remove only devices resources (BU qos)",
        q(cpu="8", memory="16Gi", gpu="4"),
        0,
        "Burstable",
        q(cpu="2", memory="4Gi", gpu="2"),
        q(cpu="8", memory="16Gi", gpu="2"),
        False,
    ),
    (
        "skip hostlevel resources (GU qos)",
        q(cpu="8", memory="16Gi", nic="4"),
        0,
        "Guaranteed",
        q(cpu="6", memory="12Gi", nic="2", eph="1Gi"),
        q(cpu="2", memory="4Gi", nic="2"),
        False,
    ),
    (
        "remove excessive core resources (GU qos)",
        q(cpu="8", memory="16Gi"),
        0,
        "Guaranteed",
        q(cpu="10", memory="20Gi"),
        q(cpu="8", memory="16Gi"),
        True,
    ),
    (
        "require missing resources (GU qos, device)",
        q(cpu="8", memory="16Gi"),
        0,
        "Guaranteed",
        q(cpu="4", memory="8Gi", gpu="2"),
        q(cpu="4", memory="8Gi"),
        False,
    ),
    (
        "require missing resources (GU qos, core)",
        q(cpu="8", memory="16Gi"),
        0,
        "Guaranteed",
        q(cpu="4", memory="8Gi", hp="2Gi"),
        q(cpu="4", memory="8Gi"),
        False,
    ),
]


@pytest.mark.parametrize(
    ("name", "cell", "numa_id", "qos", "requests", "want", "error"), SUBTRACT_CASES, ids=[c[0] for c in SUBTRACT_CASES]
)
def test_subtract_resources_from_numa_node_list(
    name: str,
    cell: dict[str, Fraction],
    numa_id: int,
    qos: str,
    requests: dict[str, Fraction],
    want: dict[str, Fraction],
    error: bool,
) -> None:
    cells = [NUMANode(0, dict(cell))]
    problem = subtract_from_numa_node(cells, numa_id, qos, requests)
    assert (problem is not None) is error, problem
    assert cells[0].resources == want


@pytest.mark.parametrize(
    ("name", "cells", "requests", "ids", "want"),
    [
        ("simple", [q(cpu="8", memory="10Gi")], q(cpu="2", memory="2Gi"), [0], [q(cpu="6", memory="8Gi")]),
        (
            "substract resources from 2 NUMA nodes",
            [q(cpu="8", memory="10Gi"), q(cpu="8", memory="10Gi")],
            q(cpu="12", memory="2Gi"),
            [0, 1],
            [q(cpu="0", memory="8Gi"), q(cpu="4", memory="10Gi")],
        ),
    ],
)
def test_substract_numa(
    name: str,
    cells: list[dict[str, Fraction]],
    requests: dict[str, Fraction],
    ids: list[int],
    want: list[dict[str, Fraction]],
) -> None:
    nodes = [NUMANode(i, dict(c)) for i, c in enumerate(cells)]
    subtract_from_numas(requests, nodes, ids)
    assert [n.resources for n in nodes] == want


ONLY_NON_NUMA_CELLS = [
    NUMANode(0, {"cpu": parse_quantity(8), "memory": parse_quantity("10Gi"), "gpu": parse_quantity(1)}),
    NUMANode(1, {"cpu": parse_quantity(8), "memory": parse_quantity("10Gi"), "nic": parse_quantity(1)}),
]


@pytest.mark.parametrize(
    ("name", "resources", "want"),
    [
        ("all resources missing in NUMANodeList", ["resource1", "resource2"], True),
        ("resource is present in both NUMA nodes", ["cpu"], False),
        ("more than resource is present in both NUMA nodes", ["cpu", "memory"], False),
        ("resource is present only in NUMA node 0", ["gpu"], False),
        ("resource is present only in NUMA node 1", ["nic"], False),
        ("two distinct resources from different NUMA nodes", ["nic", "gpu"], False),
    ],
)
def test_only_non_numa_resources(name: str, resources: list[str], want: bool) -> None:
    assert only_non_numa_resources(ONLY_NON_NUMA_CELLS, {r: parse_quantity(1) for r in resources}) is want


def test_substract_numa_finds_cells_by_their_id() -> None:
    """Cells 0, 2, 4, 6 (not upstream's case: its list is indexed by id)."""
    nodes = [NUMANode(i, q(cpu="4")) for i in (0, 2, 4, 6)]
    subtract_from_numas(q(cpu="6"), nodes, [4, 6])
    assert [n.resources["cpu"] for n in nodes] == [4, 4, 0, 2]
