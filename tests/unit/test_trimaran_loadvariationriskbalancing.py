"""LoadVariationRiskBalancing (plugins/trimaran) as scheduler-plugins'
``pkg/trimaran/loadvariationriskbalancing``: ``TestScore`` of
``loadvariationriskbalancing_test.go`` and ``TestComputeScore`` of ``analysis_test.go``, case
for case."""

from __future__ import annotations

import sys

import pytest
from trimaran_cases import MEGA, PACKAGE, answer, node, node_info, pod, pod_with_containers_and_overhead

from kubesched import CycleState, PodInfo

sys.path.insert(0, str(PACKAGE))  # the package is not installed for the suite

from kubesched_trimaran import LoadVariationRiskBalancing, LoadVariationRiskBalancingArgs, Metric
from kubesched_trimaran.base import go_round
from kubesched_trimaran.loadvariationriskbalancing import compute_score
from kubesched_trimaran.resourcestats import ResourceStats


def metrics(**values: float) -> list[Metric]:
    """``cpu_avg=50, mem_std=10`` -> the metrics."""
    types = {"cpu": "CPU", "mem": "Memory"}
    ops = {"avg": "AVG", "std": "STD"}
    out = []
    for key, value in values.items():
        t, op = key.split("_")
        out.append(Metric(types[t], ops[op], value))
    return out


@pytest.mark.parametrize(
    ("test", "p", "node_metrics", "expected"),
    [
        ("new node", pod(), metrics(cpu_avg=50), 75),
        ("hot node", pod(), metrics(cpu_avg=100), 50),
        (
            "average and stDev metrics",
            pod_with_containers_and_overhead(0, 0, 0, [200], [256 * MEGA]),
            metrics(cpu_avg=30, cpu_std=16),
            67,
        ),
        (
            "CPU and Memory metrics",
            pod_with_containers_and_overhead(0, 0, 0, [100], [512 * MEGA]),
            metrics(cpu_avg=40, cpu_std=16, mem_avg=50, mem_std=10),
            45,
        ),
        (
            "pick worst case: CPU or Memory",
            pod_with_containers_and_overhead(0, 0, 0, [100], [512 * MEGA]),
            metrics(cpu_avg=80, cpu_std=20, mem_avg=25, mem_std=15),
            45,
        ),
        ("404 resp from watcher", pod(), None, 0),
    ],
)
def test_score(test: str, p: dict[str, object], node_metrics: list[Metric] | None, expected: int) -> None:
    pl = LoadVariationRiskBalancing(LoadVariationRiskBalancingArgs.model_validate({"watcherAddress": "http://w"}))
    pl.collector.set(answer(None if node_metrics is None else {"node-1": node_metrics}))
    assert pl.score(CycleState(), PodInfo(p), node_info(node("node-1"))) == expected, test


@pytest.mark.parametrize(
    ("name", "margin", "sensitivity", "capacity", "used_avg", "used_stdev", "expected"),
    [
        ("valid data", 1, 1, 100, 40, 36, 57),
        ("zero capacity", 1, 2, 0, 40, 36, 0),
        ("negative usedAvg", 1, 2, 100, -40, 36, 65),
        ("large usedAvg", 1, 2, 100, 200, 36, 20),
        ("negative usedStdev", 1, 2, 100, 40, -36, 75),
        ("large usedStdev", 1, 2, 100, 40, 120, 25),
        ("negative margin", -1, 1, 100, 40, 36, 75),
        ("negative sensitivity", 1, -1, 100, 40, 36, 57),
        ("zero sensitivity", 1, 0, 100, 40, 36, 75),
    ],
)
def test_compute_score(
    name: str, margin: float, sensitivity: float, capacity: float, used_avg: float, used_stdev: float, expected: int
) -> None:
    rs = ResourceStats(used_avg=used_avg, used_stdev=used_stdev, req=10, capacity=capacity)
    assert go_round(compute_score(rs, margin, sensitivity)) == expected, name
