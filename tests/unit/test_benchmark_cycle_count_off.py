"""A paired run (``--against``) compares whole processes' CPU with revisions that count no
reference cycles: both sides run with the count off, and with it off a run neither counts nor
runs the closing full collection (the harness's own CPU, not the scheduler's)."""

from __future__ import annotations

import asyncio
import gc
import json
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.against import FROZEN_EXIT, Side, run_once
from benchmarks.backends import run_workload
from benchmarks.catalogue import workload
from kubesched.bench.measure import NO_CYCLE_COUNT, CyclicGarbage


def test_with_the_count_off_nothing_is_counted_or_collected(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(NO_CYCLE_COUNT, "1")
    collections: list[int] = []

    def seen(phase: str, info: dict[str, int]) -> None:
        if phase == "stop":
            collections.append(info["generation"])

    gc.callbacks.append(seen)
    try:
        garbage = CyclicGarbage()
        garbage.start()
        gc.freeze()  # as the scheduler's pacer does mid-window: counting would collect all
        garbage.stop()
    finally:
        gc.callbacks.remove(seen)
        gc.unfreeze()
    assert garbage.count is None and 2 not in collections


def test_with_the_count_on_a_cycle_made_in_the_window_is_counted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(NO_CYCLE_COUNT, raising=False)
    gc.collect()
    garbage = CyclicGarbage()
    garbage.start()
    cycle: list[object] = []
    cycle.append(cycle)
    del cycle
    garbage.stop()
    assert garbage.count is not None and garbage.count >= 1


def test_a_run_with_the_count_off_reports_none(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(NO_CYCLE_COUNT, "1")
    result = asyncio.run(run_workload(workload("SchedulingBasic/5Nodes")))
    assert result.scheduled == 10 and result.cyclic_garbage is None


def test_both_sides_of_a_pair_run_with_the_count_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(NO_CYCLE_COUNT, raising=False)
    (tmp_path / "benchmarks").mkdir()
    (tmp_path / "benchmarks" / "__init__.py").write_text("")
    (tmp_path / "benchmarks" / "run.py").write_text(
        "import json, os\n"
        f"print(json.dumps([{{'measure_pods': 1, 'workload': os.environ.get({NO_CYCLE_COUNT!r}, '')}}]))\n"
    )
    row = run_once(Side("a revision", tmp_path, sys.executable), "W", "memory", True)
    assert row["workload"] == "1"


def test_both_sides_of_a_pair_end_with_everything_frozen(tmp_path: Path) -> None:
    """The interpreter's closing collection is the harness's: a side's run leaves every object
    frozen when it ends, whatever the revision does (here: unfreezes everything, as a runner
    that hands a long-lived process its objects back does)."""
    (tmp_path / "benchmarks").mkdir()
    (tmp_path / "benchmarks" / "__init__.py").write_text("")
    (tmp_path / "benchmarks" / "run.py").write_text(
        "import atexit, gc, json, sys\n"
        "gc.freeze(); gc.unfreeze()\n"
        "kept = [[] for _ in range(1000)]\n"
        # At exit, after the run: what the closing collection would walk (the frozen aside).
        "atexit.register(lambda: print('walked', sum(len(gc.get_objects(g)) for g in range(3)), file=sys.stderr))\n"
        "print(json.dumps([{'measure_pods': 1, 'workload': ' '.join(sys.argv[1:])}]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", FROZEN_EXIT, "-w", "W"], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    assert json.loads(out.stdout)[0]["workload"] == "-w W"
    walked = int(out.stderr.split()[-1])
    assert walked < 100, out.stderr
    row = run_once(Side("a revision", tmp_path, sys.executable), "W", "memory", True)
    assert row["workload"] == "-w W --json --in-process --backend memory"
