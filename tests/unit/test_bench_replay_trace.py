"""The replayTrace op: a trace's nodes, then its pods all at once, run by ``kubesched bench``'s
runner (and so by ``python -m benchmarks.run``'s OpenbGPU workloads). A trace of a few rows in
the openb format is written here, so the runner is tried on every machine; where the real trace
is absent a workload that replays it is skipped by benchmarks.run and fails by name elsewhere."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from benchmarks.backends import run_workload
from benchmarks.backends.ops import run_yaml
from benchmarks.catalogue import workload
from benchmarks.run import main as run_main
from kubesched.bench.errors import WorkloadError
from kubesched.bench.model import ReplayTrace
from kubesched.bench.trace import trace_counts
from kubesched.bench.workload import parse_workloads
from kubesched.sim.scenario import openb


@pytest.fixture
def no_trace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No trace anywhere: KUBESCHED_TRACES unset and the shared folder looked in elsewhere."""
    monkeypatch.delenv("KUBESCHED_TRACES", raising=False)
    monkeypatch.setattr(openb, "DEFAULT_TRACE_DIR", tmp_path / "none")


def _case(op: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"name": "T", "workloadTemplate": [op], "workloads": [{"name": "w"}]}]


def test_the_op_is_read_with_its_lists_and_limits() -> None:
    [w] = parse_workloads(
        _case({"opcode": "replayTrace", "trace": "openb", "pods": "gpuspec33", "podLimit": 3, "collectMetrics": True}),
        Path("."),
        "t.yaml",
    )
    assert w.ops == [ReplayTrace("openb", "gpuspec33", "all_node", None, 3, True)]


@pytest.mark.parametrize(
    ("op", "message"),
    [
        ({"trace": "borg"}, r"replayTrace\)\.trace: the trace to replay, one of: openb; got 'borg'"),
        ({"trace": "openb", "pods": "../etc"}, r"\.pods: the name of one of the trace's pods lists"),
        ({"trace": "openb", "nodes": "a b"}, r"\.nodes: the name of one of the trace's nodes lists"),
        ({"trace": "openb", "podLimit": 0}, r"\.podLimit: must be at least 1, got 0"),
        ({"trace": "openb", "collectMetrics": False}, r"T/w: nothing is measured"),
        ({"trace": "openb", "speed": 2}, r"\.speed: unknown field \(fields of replayTrace:"),
    ],
)
def test_a_broken_op_is_refused_naming_the_field(op: dict[str, Any], message: str) -> None:
    with pytest.raises(WorkloadError, match=message):
        parse_workloads(_case({"opcode": "replayTrace", "collectMetrics": True, **op}), Path("."), "t.yaml")


def test_the_counts_are_the_trace_s_rows_within_the_limits(small_trace: Path) -> None:
    assert trace_counts("openb", "all_node", "default", None, None) == (2, 5)
    assert trace_counts("openb", "all_node", "default", 1, 3) == (1, 3)
    assert trace_counts("openb", "all_node", "nope", None, None) == (0, 0)
    w = workload("OpenbGPU/default")
    assert (w.nodes, w.init_pods, w.measure_pods, w.yaml_source) == (2, 0, 5, "traces.yaml")
    assert w.unavailable is not None and w.unavailable() is None


@pytest.mark.parametrize("batch", [True, False], ids=["batch", "per-node"])
def test_a_replay_places_the_trace_s_pods_in_order_of_creation(small_trace: Path, batch: bool) -> None:
    placements: dict[str, str] = {}
    result = asyncio.run(
        asyncio.wait_for(run_workload(workload("OpenbGPU/default"), batch=batch, placements=placements), 60)
    )
    assert (result.nodes, result.init_pods, result.measure_pods) == (2, 0, 5)
    assert (result.scheduled, result.unschedulable) == (3, 2)
    # Whole and shared GPUs only where there are GPUs; no T4 anywhere; 64 CPUs nowhere; the CPU
    # pod, created last, goes to the node with most room (and the GPU node's CPUs partly taken).
    assert placements == {
        "default/whole-gpu": "gpu-node",
        "default/shared-gpu": "gpu-node",
        "default/late-cpu": "cpu-node",
    }
    assert result.cpu_ms_per_pod is not None and result.cpu_ms_per_pod > 0


def test_limits_take_the_first_rows(small_trace: Path) -> None:
    [w] = parse_workloads(
        _case({"opcode": "replayTrace", "trace": "openb", "pods": "default", "podLimit": 2, "collectMetrics": True}),
        Path("."),
        "t.yaml",
    )
    placements: dict[str, str] = {}
    result = asyncio.run(asyncio.wait_for(run_yaml(w, placements=placements), 60))
    # The first two in order of creation (not the file's first rows): the whole GPU, the shared one.
    assert (result.nodes, result.measure_pods, result.scheduled) == (2, 2, 2)
    assert sorted(placements) == ["default/shared-gpu", "default/whole-gpu"]


def test_without_the_trace_benchmarks_run_skips_it_and_the_runner_names_it(
    no_trace: None, capsys: pytest.CaptureFixture[str]
) -> None:
    w = workload("OpenbGPU/gpuspec33")
    assert w.unavailable is not None and "the openb trace is absent" in str(w.unavailable())
    assert (w.nodes, w.measure_pods) == (0, 0)
    assert run_main(["--in-process", "-w", "OpenbGPU/gpuspec33", "-w", "SchedulingBasic/5Nodes", "--json"]) == 0
    out = capsys.readouterr()
    assert "skipping OpenbGPU/gpuspec33: the openb trace is absent" in out.err
    assert '"SchedulingBasic/5Nodes"' in out.out and "OpenbGPU" not in out.out
    with pytest.raises(
        WorkloadError, match=r"OpenbGPU/gpuspec33: workloadTemplate\[0\] \(replayTrace\): the openb trace is absent"
    ):
        asyncio.run(run_workload(w))
