"""The benchmark runner's reporting: upstream's throughput floors beside our pods/s, the slow
workload left out of a default run, and the --scaling summary. No workload is run here."""

from __future__ import annotations

from dataclasses import asdict

import pytest

from benchmarks import catalogue, run
from benchmarks.catalogue import WORKLOADS, default_names
from benchmarks.measure import Result, with_floor
from benchmarks.report import print_table, scaling_rows
from kubesched.bench.measure import LoopLag, make_result


def result(workload: str, pods_per_second: float, nodes: int = 5000, measured: int = 1000) -> Result:
    return Result(
        workload=workload,
        nodes=nodes,
        init_pods=0,
        measure_pods=measured,
        pods_per_second=pods_per_second,
        seconds=measured / pods_per_second,
        unschedulable=0,
        attempt_p50_ms=1.0,
        attempt_p90_ms=2.0,
        attempt_p99_ms=3.0,
        peak_rss_mib=100.0,
        scheduled=measured,
    )


@pytest.mark.parametrize(
    ("workload", "floor", "source"),
    [
        ("SchedulingBasic/500Nodes", None, None),
        ("SchedulingBasic/5000Nodes_10000Pods", 680, "SchedulingBasic/5000Nodes_10000Pods"),
        ("SchedulingBasic/5000Nodes", 680, "SchedulingBasic/5000Nodes_10000Pods"),
        ("SchedulingBasic/15000Nodes_50000Pods", None, None),
        ("SchedulingPodAntiAffinity/5000Nodes", 60, "SchedulingPodAntiAffinity/5000Nodes_2000Pods"),
        ("SchedulingPodAffinity/5000Nodes", 35, "SchedulingPodAffinity/5000Nodes_5000Pods"),
        ("SchedulingNodeAffinity/5000Nodes", 220, "SchedulingNodeAffinity/5000Nodes_10000Pods"),
        ("TopologySpreading/5000Nodes", 460, "TopologySpreading/5000Nodes_5000Pods"),
        ("PreemptionBasic/500Nodes", None, None),
        ("OpenbGPU/default", None, None),
    ],
    ids=lambda v: str(v),
)
def test_each_workload_carries_upstreams_floor_or_none(workload: str, floor: float | None, source: str | None) -> None:
    w = WORKLOADS[workload]
    assert (w.floor.pods_per_second if w.floor else None) == floor
    assert (w.floor.upstream if w.floor else None) == source


def test_ratio_is_ours_over_the_floor() -> None:
    r = with_floor(
        result("SchedulingBasic/5000Nodes_10000Pods", 340.0), WORKLOADS["SchedulingBasic/5000Nodes_10000Pods"].floor
    )
    assert (r.floor_pods_per_second, r.floor_ratio, r.floor_source) == (680, 0.5, "SchedulingBasic/5000Nodes_10000Pods")
    plain = with_floor(result("PreemptionBasic/500Nodes", 80.0, nodes=500), None)
    assert (plain.floor_pods_per_second, plain.floor_ratio, plain.floor_source) == (None, None, None)


def test_table_prints_floor_ratio_dash_and_names_a_borrowed_floor(capsys: pytest.CaptureFixture[str]) -> None:
    exact = with_floor(
        result("SchedulingBasic/5000Nodes_10000Pods", 340.0, measured=10000), catalogue.scheduling_basic_floor()
    )
    borrowed = with_floor(
        result("SchedulingPodAntiAffinity/5000Nodes", 150.0), WORKLOADS["SchedulingPodAntiAffinity/5000Nodes"].floor
    )
    none = with_floor(result("PreemptionBasic/500Nodes", 80.0, nodes=500), None)
    print_table([exact, borrowed, none])
    out = capsys.readouterr().out
    rows = {
        line.split("│")[1].strip(): [c.strip() for c in line.split("│")[1:-1]]
        for line in out.splitlines()
        if line.count("│") > 10
    }
    assert rows["SchedulingBasic/5000Nodes_10000Pods"][6:10] == ["340.0", "-", "680", "0.50"]
    assert rows["SchedulingPodAntiAffinity/5000Nodes"][8:10] == ["60*", "2.50"]
    assert rows["PreemptionBasic/500Nodes"][8:10] == ["-", "-"]
    assert "SchedulingPodAntiAffinity/5000Nodes: SchedulingPodAntiAffinity/5000Nodes_2000Pods" in out


def test_cpu_per_measured_pod_is_in_the_result_the_table_and_the_json(capsys: pytest.CaptureFixture[str]) -> None:
    r = make_result("W", 5, 0, 400, 2.0, [0.001], 0, 400, LoopLag(), cpu=1.5)
    assert (r.cpu_seconds, r.cpu_ms_per_pod) == (1.5, 3.75)
    assert asdict(r)["cpu_ms_per_pod"] == 3.75
    assert make_result("W", 5, 0, 400, 2.0, [0.001], 0, 400, LoopLag()).cpu_ms_per_pod is None
    print_table([r])
    [line] = [line for line in capsys.readouterr().out.splitlines() if "│ W " in line]
    assert [c.strip() for c in line.split("│")[1:-1]][6:8] == ["200.0", "3.750"]


def test_default_run_skips_the_slow_workload_but_all_and_w_include_it() -> None:
    assert "SchedulingBasic/15000Nodes_50000Pods" not in default_names()
    assert "SchedulingBasic/5000Nodes_10000Pods" in default_names()
    assert default_names(everything=True) == list(WORKLOADS)


def test_scaling_rows_give_time_per_pod_and_growth() -> None:
    rows = scaling_rows(
        [
            result("SchedulingBasic/500Nodes", 500.0, nodes=500),
            result("SchedulingBasic/5000Nodes_10000Pods", 250.0, measured=10000),
            result("SchedulingBasic/15000Nodes_50000Pods", 100.0, nodes=15000, measured=50000),
        ]
    )
    assert [(r["nodes"], r["ms_per_pod"], r["growth"]) for r in rows] == [
        (500, 2.0, 1.0),
        (5000, 4.0, 2.0),
        (15000, 10.0, 5.0),
    ]
    assert [r["workload"] for r in rows] == catalogue.SCALING


def test_scaling_refuses_to_combine_with_named_workloads(capsys: pytest.CaptureFixture[str]) -> None:
    assert run.main(["--scaling", "-w", "SchedulingBasic/500Nodes"]) == 2
    assert "--scaling" in capsys.readouterr().err


def test_list_names_every_workload_and_marks_the_slow_ones(capsys: pytest.CaptureFixture[str]) -> None:
    assert run.main(["--list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == list(WORKLOADS)
    slow = [line.split()[0] for line in lines if line.endswith("(slow: only with -w or --all)")]
    assert slow == [
        "SchedulingBasic/15000Nodes_50000Pods",
        "GangScheduling/5000Nodes_3Gangs_3000Pods_1000PerGroup",
        "TopologyAwareScheduling/5000Nodes_3Gangs_3000Pods_1000PerGroup",
        "CPGGangScheduling/5000Nodes_3CPGs_6Groups_3000Pods",
        "CPGGangScheduling/5000Nodes_3CPGs_6Groups_6000Pods",
        "CPGGangScheduling/5000Nodes_3CPGs_6Groups_9000Pods",
    ]


def test_an_unknown_workload_is_refused_before_anything_runs(capsys: pytest.CaptureFixture[str]) -> None:
    assert run.main(["-w", "SchedulingBasic/500Nodes", "-w", "NoSuch/1Node"]) == 2
    assert "unknown workload(s): NoSuch/1Node: no such workload (see --list" in capsys.readouterr().err


def test_the_table_names_a_run_whose_scheduling_left_reference_cycles(capsys: pytest.CaptureFixture[str]) -> None:
    clean, leaky = result("Clean/1", 100.0), result("Leaky/1", 100.0)
    leaky.cyclic_garbage = 5000
    print_table([clean, leaky])
    out = capsys.readouterr().out
    assert "Leaky/1: the collector freed 5000 objects in reference cycles" in out
    assert "(5 a pod)" in out
    assert "Clean/1: the collector" not in out
    assert asdict(leaky)["cyclic_garbage"] == 5000
