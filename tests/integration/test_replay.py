"""kubesched replay end to end: the fragmentation measure on hand-computed nodes, NodeOrder's
tie-break, the command in the exact form scripts rely on (a small synthetic trace made here),
--plot, churn, clear errors, and a slice of the real openb trace where it is present."""

from __future__ import annotations

import asyncio
import csv
import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from gpushare_builders import gs

from kubesched.cli import main
from kubesched.framework.interface import CycleState
from kubesched.framework.types import PodInfo
from kubesched.research import ReplayError, ReplayOptions, replay
from kubesched.research.gpushare import Fragmentation, gpus_taken
from kubesched.research.metrics import ClusterGauge
from kubesched.research.trace import TraceNode, TracePod
from kubesched.sim.scenario.openb import TRACE_ABSENT, trace_dir
from kubesched.testing import as_node_infos, make_node, make_pod

ROOT = Path(__file__).resolve().parents[2]
FGD_CONFIG = ROOT / "config" / "gpushare" / "FGD.yaml"
TRACE = trace_dir()


def typical(*pods: tuple[int, int, int, float], model: str = "") -> list[Any]:
    """Typical pods from ``(cpu milli, gpu count, milli per GPU, share)``."""
    return [
        gs.TypicalPod.model_validate(
            {"cpu": f"{c}m", "gpuCount": n, "gpuMilli": m, "percentage": p, **({"model": model} if model else {})}
        )
        for c, n, m, p in pods
    ]


# --- the fragmentation measure ---------------------------------------------------------------------

HALF_AND_WHOLE = typical((1000, 1, 500, 0.5), (1000, 1, 1000, 0.5))

FRAGMENTATION_CASES = [
    # (id, typical pods, node model, cpu left, milli left per GPU, fragmented milli)
    ("empty GPUs serve every typical pod", HALF_AND_WHOLE, "V100", 8000, [1000, 1000], 0.0),
    # the 300 left on GPU 1 is too small for either typical pod
    ("a GPU too small for both", HALF_AND_WHOLE, "V100", 8000, [1000, 300], 300.0),
    # 700 left serves the half-GPU pod, not the whole-GPU one, which then finds no GPU: all 1000 idle count
    ("room for the half pod only", HALF_AND_WHOLE, "V100", 8000, [700, 300], 0.5 * 300 + 0.5 * 1000),
    ("no CPU left: every idle GPU counts", HALF_AND_WHOLE, "V100", 500, [1000, 300], 1300.0),
    ("a model the typical pods refuse", typical((1000, 1, 500, 1.0), model="T4"), "V100", 8000, [1000, 1000], 2000.0),
    (
        "a CPU pod never uses idle GPUs",
        typical((1000, 0, 0, 0.25), (1000, 1, 500, 0.75)),
        "V100",
        8000,
        [1000, 200],
        0.25 * 1200 + 0.75 * 200,
    ),
    ("two whole GPUs wanted, one free", typical((1000, 2, 1000, 1.0)), "V100", 8000, [1000, 900], 1900.0),
]


@pytest.mark.parametrize(
    ("pods", "model", "cpu_left", "left", "expected"),
    [c[1:] for c in FRAGMENTATION_CASES],
    ids=[c[0] for c in FRAGMENTATION_CASES],
)
def test_node_fragmentation_as_the_paper_defines_it(
    pods: list[Any], model: str, cpu_left: int, left: list[int], expected: float
) -> None:
    assert Fragmentation(pods)(model, cpu_left, left) == pytest.approx(expected)


def test_measures_of_one_typical_list_share_their_memo_and_answer_as_a_fresh_one(monkeypatch: Any) -> None:
    from kubesched.research import gpushare as research_gpushare

    monkeypatch.setattr(research_gpushare, "_MEMOS", {})
    states = [(model, cpu, left) for _, _, model, cpu, left, _ in FRAGMENTATION_CASES]
    first = Fragmentation(typical((1000, 1, 500, 0.5), (1000, 1, 1000, 0.5)))
    answers = [first(*state) for state in states]
    second = Fragmentation(typical((1000, 1, 500, 0.5), (1000, 1, 1000, 0.5)))  # equal, not the same objects
    assert second._memo is first._memo
    assert [second(*state) for state in states] == answers
    monkeypatch.setattr(research_gpushare, "_MEMOS", {})
    assert [Fragmentation(HALF_AND_WHOLE)(*state) for state in states] == answers
    other = Fragmentation(typical((1000, 1, 1000, 1.0)))
    assert other._memo is not first._memo


def test_cluster_fragmentation_is_the_sum_over_nodes_of_where_pods_went() -> None:
    nodes = [TraceNode(f"n{i}", 8000, 65536, 2, "V100", {}) for i in range(2)]
    gauge = ClusterGauge(nodes, Fragmentation(HALF_AND_WHOLE), gpus_taken)
    obj = {"metadata": {"name": "p", "annotations": {"alibabacloud.com/gpu-index": "1"}}}
    sharing = TracePod("p", 1000, 1024, 1, 700, None, None, obj)
    gauge.arrive(sharing)
    gauge.placed(sharing, "n1", obj)
    gauge.record()
    # n1 keeps [1000, 300]: 300 too small for both typical pods; n0 is whole
    assert gauge.samples.frag_gpu_milli == [pytest.approx(300.0)]
    assert gauge.samples.used_gpu_milli == [700]
    # without gpu-index (a configuration without GpuShare), best fit places it
    other = TracePod("q", 1000, 1024, 1, 200, None, None, {"metadata": {"name": "q"}})
    gauge.placed(other, "n1", other.obj)
    gauge.record()
    assert gauge.samples.frag_gpu_milli[-1] == pytest.approx(100.0)


# --- NodeOrder: ties broken by a seeded node order -------------------------------------------------


def test_node_order_scores_sum_to_one_step_per_place() -> None:
    infos = as_node_infos([make_node(f"node-{i:04d}").capacity(cpu="1") for i in range(250)])
    pod = PodInfo(make_pod("p").obj())
    coarse, fine = gs.NodeOrder(gs.NodeOrderArgs(seed=5), None), gs.NodeOrderFine(gs.NodeOrderArgs(seed=5), None)
    state = CycleState()
    assert coarse.pre_score(state, pod, infos) is None
    assert fine.pre_score(state, pod, infos) is None
    totals = [coarse.weight * coarse.score(state, pod, ni) + fine.weight * fine.score(state, pod, ni) for ni in infos]
    # 250 distinct places: 10200, 10199, ... one per node
    assert sorted(totals, reverse=True) == list(range(10200, 10200 - 250, -1))
    assert list(coarse.score_nodes(state, pod, infos)) == [coarse.score(state, pod, ni) for ni in infos]
    assert list(fine.score_nodes(state, pod, infos)) == [fine.score(state, pod, ni) for ni in infos]
    # the order depends on the seed, not on which nodes are there
    other = gs.NodeOrder(gs.NodeOrderArgs(seed=6), None)
    assert sorted(infos, key=lambda n: coarse.key(n.name)) != sorted(infos, key=lambda n: other.key(n.name))
    first_of_all = min(infos, key=lambda n: coarse.key(n.name))
    fewer = [ni for ni in infos if ni is not first_of_all][:100] + [first_of_all]
    state = CycleState()
    coarse.pre_score(state, pod, fewer)
    fine.pre_score(state, pod, fewer)
    best = max(fewer, key=lambda ni: 101 * coarse.score(state, pod, ni) + fine.score(state, pod, ni))
    assert best is first_of_all


# --- the command -------------------------------------------------------------------------------------


def write_trace(tmp_path: Path, gpu_nodes: int = 6, times: bool = False) -> tuple[Path, Path]:
    """A small cluster (GPU nodes of 4 or 8 GPUs, and one CPU node the protocol leaves out) and a
    workload of sharing, whole-GPU, multi-GPU and CPU pods."""
    nodes = tmp_path / "nodes.csv"
    with open(nodes, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["sn", "cpu_milli", "memory_mib", "gpu", "model"])
        for i in range(gpu_nodes):
            w.writerow(
                [f"node-{i}", 64000 if i % 2 else 96000, 262144, 4 if i % 2 else 8, "V100M32" if i % 3 else "P100"]
            )
        w.writerow(["cpu-node", 64000, 262144, 0, ""])
    pods = tmp_path / "pods.csv"
    kinds = [(1, 500), (1, 250), (1, 1000), (2, 1000), (0, 0), (1, 700), (4, 1000)]
    with open(pods, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(
            ["name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli", "gpu_spec", "creation_time", "deletion_time"]
        )
        for i in range(36):
            count, milli = kinds[i % len(kinds)]
            deleted = 10 * i + 35 if times and i % 2 == 0 else ""
            w.writerow(
                [
                    f"pod-{i:03d}",
                    4000 + 1000 * (i % 5),
                    8192,
                    count,
                    milli,
                    "P100" if i % 11 == 0 and count else "",
                    10 * i,
                    deleted,
                ]
            )
    return nodes, pods


def test_the_exact_command_prints_the_curve_and_a_summary(tmp_path: Path, gpushare_installed: None) -> None:
    nodes, pods = write_trace(tmp_path)
    cmd = [sys.executable, "-m", "kubesched", "replay", "--nodes", str(nodes), "--pods", str(pods)]
    cmd += ["--config", str(FGD_CONFIG), "--seed", "42", "--inflate", "1.3", "--output", "json"]
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert set(data) == {"curve", "summary"}
    curve, summary = data["curve"], data["summary"]
    assert [p["arrived"] for p in curve] == list(range(131))
    assert set(curve[0]) == {
        "arrived",
        "gpuAllocation",
        "gpuFragmentation",
        "gpuFragmentationRatio",
        "cpuAllocation",
        "memoryAllocation",
    }
    # 36 GPUs: a pod moves the arrived share by one to several points, so some points have no sample
    drawn = [p for p in curve if p["gpuAllocation"] is not None]
    assert len(drawn) > 40 and all(0 < p["gpuAllocation"] <= 100 for p in drawn)
    assert curve[100]["gpuAllocation"] == summary["gpuAllocationAt100"]
    capacity = 1000 * summary["gpus"]
    assert summary["nodes"] == 6 and summary["gpus"] == 36  # the CPU node is left out
    assert summary["workloadPods"] == 36 and summary["pods"] > 36
    # arrivals stop within one GPU of 1.3 x capacity; pods that got no node count as arrived
    assert 1.3 * capacity - 1000 < summary["arrivedGpuMilli"] <= 1.3 * capacity
    assert summary["unscheduled"] == sum(summary["unscheduledByKind"].values()) > 0
    assert summary["scheduled"] + summary["unscheduled"] == summary["pods"]
    assert summary["gpuAllocation"] <= 100
    assert summary["typicalPods"] > 0
    assert any("FGD: typicalPods of the workload" in c for c in summary["configChanged"])
    # the same seed gives the same experiment
    again = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert json.loads(again.stdout)["curve"] == curve


def test_plot_writes_the_figure_and_csv_the_curve(
    tmp_path: Path, gpushare_installed: None, capsys: pytest.CaptureFixture[str]
) -> None:
    nodes, pods = write_trace(tmp_path)
    figure = tmp_path / "alloc.svg"
    args = [
        "replay",
        "--nodes",
        str(nodes),
        "--pods",
        str(pods),
        "--config",
        str(ROOT / "config" / "gpushare" / "Random.yaml"),
    ]
    assert main([*args, "--seed", "3", "--output", "csv", "--plot", str(figure), "--no-progress"]) == 0
    rows = list(csv.reader(capsys.readouterr().out.splitlines()))
    assert rows[0][:3] == ["arrived", "gpuAllocation", "gpuFragmentation"] and len(rows) == 132
    svg = ET.fromstring(figure.read_text())
    (line,) = svg.findall("{http://www.w3.org/2000/svg}polyline")
    assert len(line.get("points", "").split()) == sum(1 for r in rows[1:] if r[1] != "")


def test_churn_gives_back_what_leaving_pods_held(tmp_path: Path, gpushare_installed: None) -> None:
    nodes, pods = write_trace(tmp_path, times=True)
    result = asyncio.run(replay(ReplayOptions(nodes, pods, FGD_CONFIG, seed=1, churn=True)))
    used = result.samples.used_gpu_milli
    assert result.summary["churn"] and result.summary["pods"] == 36
    assert any(b < a for a, b in zip(used, used[1:]))  # a deletion freed GPUs
    assert len(used) == 36 + 18  # every creation and every deletion is a sample
    with pytest.raises(ReplayError, match="--inflate does not apply to --churn"):
        asyncio.run(replay(ReplayOptions(nodes, pods, FGD_CONFIG, churn=True, inflate=1.3)))


def test_a_bad_csv_is_refused_naming_file_row_and_column(
    tmp_path: Path, gpushare_installed: None, capsys: pytest.CaptureFixture[str]
) -> None:
    nodes, pods = write_trace(tmp_path)
    lines = pods.read_text().splitlines()
    lines[5] = lines[5].replace("8192", "lots")
    pods.write_text("\n".join(lines) + "\n")
    rc = main(["replay", "--nodes", str(nodes), "--pods", str(pods), "--config", str(FGD_CONFIG), "--no-progress"])
    assert rc == 2
    assert f"{pods}: row 6, column 'memory_mib': not a number: 'lots'" in capsys.readouterr().err


def test_without_the_gpushare_package_replay_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    nodes, pods = write_trace(tmp_path)
    monkeypatch.setitem(sys.modules, "kubesched_gpushare", None)
    rc = main(["replay", "--nodes", str(nodes), "--pods", str(pods), "--config", str(FGD_CONFIG), "--no-progress"])
    assert rc == 2
    err = capsys.readouterr().err
    assert "gpushare plugin package" in err and "pip install ./plugins/gpushare" in err


# --- the real trace ----------------------------------------------------------------------------------


@pytest.mark.skipif(TRACE is None, reason=TRACE_ABSENT)
def test_a_slice_of_the_openb_trace(tmp_path: Path, gpushare_installed: None) -> None:
    assert TRACE is not None
    nodes, pods = tmp_path / "nodes.csv", tmp_path / "pods.csv"
    node_lines = (TRACE / "openb_node_list_gpu_node.csv").read_text().splitlines()
    nodes.write_text("\n".join(node_lines[:61]) + "\n")  # header + 60 GPU nodes
    pod_lines = (TRACE / "openb_pod_list_default.csv").read_text().splitlines()
    pods.write_text("\n".join(pod_lines[:401]) + "\n")  # header + 400 pods
    result = asyncio.run(replay(ReplayOptions(nodes, pods, FGD_CONFIG, seed=42)))
    s = result.summary
    assert s["nodes"] == 60 and s["workloadPods"] == 400
    assert s["arrived"] is not None and 129 < s["arrived"] <= 130
    assert s["gpuAllocationAt100"] is not None and 80 < s["gpuAllocationAt100"] <= 100
    assert result.curve[0]["gpuFragmentation"] > 0  # CPU pods among the typical pods: idle GPUs count


def test_compare_puts_configurations_side_by_side(
    tmp_path: Path, gpushare_installed: None, capsys: pytest.CaptureFixture[str]
) -> None:
    nodes, pods = write_trace(tmp_path)
    configs = [str(FGD_CONFIG), str(ROOT / "config" / "gpushare" / "Random.yaml")]
    figure = tmp_path / "compare.svg"
    args = ["compare", "--nodes", str(nodes), "--pods", str(pods), "--config", configs[0], "--config", configs[1]]
    assert main([*args, "--seeds", "1,2", "--output", "json", "--plot", str(figure), "--no-progress"]) == 0
    data = json.loads(capsys.readouterr().out)["configurations"]
    assert [c["name"] for c in data] == ["FGD", "Random"]
    assert all(c["seeds"] == [1, 2] and len(c["curve"]) == 131 for c in data)
    # each metric is the mean of the two seeds' replays
    one = [asyncio.run(replay(ReplayOptions(nodes, pods, FGD_CONFIG, seed=s))).summary for s in (1, 2)]
    assert data[0]["metrics"]["gpuAllocation"] == round((one[0]["gpuAllocation"] + one[1]["gpuAllocation"]) / 2, 2)
    assert data[0]["metrics"]["unscheduled"] == (one[0]["unscheduled"] + one[1]["unscheduled"]) / 2
    assert [p["gpuAllocationAt100"] for p in data[0]["perSeed"]] == [o["gpuAllocationAt100"] for o in one]
    titles = [t.text for t in ET.fromstring(figure.read_text()).iter("{http://www.w3.org/2000/svg}title")]
    assert titles == ["FGD", "Random"]
    assert main([*args, "--seeds", "x"]) == 2
    assert "--seeds: a comma-separated list of integers" in capsys.readouterr().err
