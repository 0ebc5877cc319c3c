"""LeastNUMANodes' arithmetic (plugins/noderesourcetopology), case for case as scheduler-plugins'
``pkg/noderesourcetopology/least_numa_test.go``: ``TestNUMANodesRequired`` (the fewest cells,
closest together, ids not sorted nor sequential, cells lacking a resource), ``TestNormalizeScore``
and ``TestMinDistance``."""

from __future__ import annotations

import sys
from fractions import Fraction

import pytest
from nrt_cases import PACKAGE

from kubesched import parse_quantity

sys.path.insert(0, str(PACKAGE))  # the package is not installed for the suite

from kubesched_noderesourcetopology import NUMANode
from kubesched_noderesourcetopology.score import min_avg_distance, normalize_score, numa_nodes_required

GPU = "gpu"


def cell(numa_id: int, costs: dict[int, int] | None = None, **res: str) -> NUMANode:
    names = {"gpu": GPU}
    return NUMANode(numa_id, {names.get(k, k): parse_quantity(v) for k, v in res.items()}, dict(costs or {}))


def costs(*row: int, ids: tuple[int, ...] = (0, 1, 2, 3)) -> dict[int, int]:
    return dict(zip(ids, row, strict=True))


EIGHT = {
    0: (10, 20, 40, 30, 20, 30, 50, 40),
    3: (30, 40, 20, 10, 30, 20, 40, 50),
    5: (30, 20, 50, 20, 50, 10, 50, 40),
    7: (40, 50, 30, 50, 20, 40, 30, 10),
    1: (20, 10, 30, 40, 50, 20, 40, 50),
    6: (50, 40, 20, 40, 30, 50, 10, 30),
    2: (40, 30, 10, 20, 40, 50, 20, 30),
    4: (20, 50, 40, 30, 10, 50, 30, 20),
}
EVEN = (0, 2, 4, 6)


def eight(without_memory: tuple[int, ...] = ()) -> list[NUMANode]:
    """The 8 cells in upstream's order (0, 3, 5, 7, 1, 6, 2, 4), one GPU each."""
    out = []
    for numa_id, row in EIGHT.items():
        res = {"gpu": "1", "cpu": "4"} | ({} if numa_id in without_memory else {"memory": "5Gi"})
        out.append(cell(numa_id, costs(*row, ids=tuple(range(8))), **res))
    return out


def four(
    gpus: tuple[str, ...], rows: tuple[tuple[int, ...], ...], ids: tuple[int, ...] = (0, 1, 2, 3)
) -> list[NUMANode]:
    return [
        cell(i, costs(*row, ids=ids), gpu=g, cpu="4", memory="5Gi") for i, g, row in zip(ids, gpus, rows, strict=True)
    ]


NEAR_PAIRS = ((10, 12, 20, 20), (12, 10, 20, 20), (20, 20, 10, 12), (20, 20, 12, 10))
REQUIRED_CASES = [
    ("simple case, fit on 1 NUMA node", [cell(0, cpu="8", memory="10Gi")], {"cpu": "2", "memory": "2Gi"}, [0], True),
    (
        "simple case, fit on 2 NUMA node",
        [cell(0, cpu="8", memory="10Gi"), cell(1, cpu="8", memory="10Gi")],
        {"cpu": "12", "memory": "2Gi"},
        [0, 1],
        True,
    ),
    (
        "can't fit",
        [cell(0, cpu="8", memory="10Gi"), cell(1, cpu="8", memory="10Gi")],
        {"cpu": "22", "memory": "2Gi"},
        None,
        False,
    ),
    (
        "4 NUMA node optimal distance",
        four(("1", "1", "0", "0"), ((10, 12, 20, 20), (12, 10, 20, 20), (20, 20, 10, 12), (20, 20, 10, 12))),
        {"cpu": "2", "memory": "2Gi", GPU: "2"},
        [0, 1],
        True,
    ),
    (
        "4 NUMA node non optimal distance",
        four(("1", "0", "1", "0"), NEAR_PAIRS),
        {"cpu": "2", "memory": "2Gi", GPU: "2"},
        [0, 2],
        False,
    ),
    (
        "8 NUMA node optimal distance, not sorted ids",
        eight(),
        {"cpu": "3", "memory": "2Gi", GPU: "3"},
        [0, 1, 5],
        True,
    ),
    (
        "8 NUMA node non optimal distance, not sorted ids, odd digit NUMA node without memory",
        eight(without_memory=(1, 3, 5, 7)),
        {"cpu": "3", "memory": "2Gi", GPU: "3"},
        [2, 4, 6],
        False,
    ),
    (
        "4 NUMA node optimal distance, non sequential ids",
        four(("1", "1", "0", "0"), NEAR_PAIRS, EVEN),
        {"cpu": "2", "memory": "2Gi", GPU: "2"},
        [0, 2],
        True,
    ),
    (
        "4 NUMA node non optimal distance, non sequential ids",
        four(("1", "0", "0", "1"), NEAR_PAIRS, EVEN),
        {"cpu": "2", "memory": "2Gi", GPU: "2"},
        [0, 6],
        False,
    ),
    (
        "4 NUMA node non optimal distance, non sequential ids, NUMA node-2 and node-6 without memory",
        [
            cell(i, costs(*row, ids=EVEN), gpu="1", cpu="4", **({} if i in (2, 6) else {"memory": "5Gi"}))
            for i, row in zip(EVEN, NEAR_PAIRS, strict=True)
        ],
        {"cpu": "2", "memory": "2Gi", GPU: "2"},
        [0, 4],
        False,
    ),
]


@pytest.mark.parametrize(
    ("name", "cells", "request_", "want", "closest"), REQUIRED_CASES, ids=[c[0] for c in REQUIRED_CASES]
)
def test_numa_nodes_required(
    name: str, cells: list[NUMANode], request_: dict[str, str], want: list[int] | None, closest: bool
) -> None:
    requests = {k: parse_quantity(v) for k, v in request_.items()}
    assert numa_nodes_required("Guaranteed", cells, requests) == (want, closest)


@pytest.mark.parametrize(
    ("name", "count", "optimal", "want"),
    [
        ("1 numa node, non optimal distance", 1, False, 88),
        ("2 numa nodes, non optimal distance", 2, False, 76),
        ("8 numa nodes, non optimal distance", 8, False, 4),
        ("1 numa node, optimal distance", 1, True, 94),
        ("2 numa nodes, optimal distance", 2, True, 82),
        ("8 numa nodes, optimal distance", 8, True, 10),
    ],
)
def test_normalize_score(name: str, count: int, optimal: bool, want: int) -> None:
    assert normalize_score(count, optimal, 8) == want


WITH_COSTS = [cell(i, costs(*row)) for i, row in enumerate(NEAR_PAIRS)]
WITHOUT_COSTS = [cell(i) for i in range(4)]


@pytest.mark.parametrize(
    ("name", "combinations", "cells", "want"),
    [
        ("single numa node combination", [[0], [1], [2], [3]], WITH_COSTS, Fraction(10)),
        ("two numa node combination", [[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]], WITH_COSTS, Fraction(11)),
        ("three numa node combination", [[0, 1, 2], [1, 2, 3], [0, 2, 3]], WITH_COSTS, Fraction(134, 9)),
        ("two numa node combination, no costs", [[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]], WITHOUT_COSTS, 255),
    ],
)
def test_min_distance(name: str, combinations: list[list[int]], cells: list[NUMANode], want: Fraction) -> None:
    assert min_avg_distance(cells, combinations) == want  # 134/9: upstream's float32 14.888889
