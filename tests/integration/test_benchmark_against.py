"""``python -m benchmarks.run --against REV``: this checkout and another revision of it, run in
turn in fresh interpreters and paired round by round.

The pairing runs for real (a small gang workload, REV = this repository's HEAD unpacked into a
cache of the test's own, in this environment with ``--same-env``); building REV an environment
of its own installs from the package index and is left to the command itself."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.against import Pairing, cache_dir, resolve
from benchmarks.launch import ROOT

WORKLOAD = "GangScheduling/10Nodes_3Gangs"


def bench(*args: str, cache: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    return subprocess.run(
        [sys.executable, "-m", "benchmarks.run", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600
    )


@pytest.mark.skipif(not (ROOT / ".git").exists(), reason="needs the repository's git history")
def test_two_rounds_alternate_the_sides_and_pair_every_figure(tmp_path: Path) -> None:
    out = bench("--against", "HEAD", "--same-env", "--rounds", "2", "-w", WORKLOAD, "--json", cache=tmp_path)
    assert out.returncode == 0, out.stderr
    commit = resolve("HEAD")
    assert (tmp_path / "kubesched" / "against" / commit / "tree" / "benchmarks" / "run.py").exists()
    # The side that goes first alternates: this checkout in round 1, HEAD in round 2.
    runs = [line for line in out.stderr.splitlines() if line.startswith("[")]
    assert len(runs) == 4
    assert "round 1" in runs[0] and "this checkout" in runs[0] and "HEAD" in runs[1]
    assert "round 2" in runs[2] and "HEAD" in runs[2] and "this checkout" in runs[3]
    [row] = json.loads(out.stdout)
    assert row["workload"] == WORKLOAD and row["rounds"] == 2
    for key in ("cpu_ms_per_pod", "attempt_p50_ms", "attempt_p99_ms", "pods_per_second"):
        figure = row[key]
        assert figure["ours_median"] > 0 and figure["theirs_median"] > 0, key
        assert figure["ratio_min"] <= figure["ratio_median"] <= figure["ratio_max"], key


@pytest.mark.skipif(not (ROOT / ".git").exists(), reason="needs the repository's git history")
def test_the_table_names_the_revision_and_says_which_way_is_faster(tmp_path: Path) -> None:
    out = bench("--against", "HEAD", "--same-env", "--rounds", "1", "-w", WORKLOAD, cache=tmp_path)
    assert out.returncode == 0, out.stderr
    assert f"this checkout / HEAD ({resolve('HEAD')[:12]})" in out.stdout
    [line] = [line for line in out.stdout.splitlines() if WORKLOAD in line]
    cells = [c.strip() for c in line.strip("│ ").split("│")]
    assert cells[0] == WORKLOAD and cells[1] == "1"
    assert "below 1 is this checkout faster" in out.stdout


def test_a_revision_that_names_no_commit_is_refused_before_anything_runs(tmp_path: Path) -> None:
    out = bench("--against", "no-such-rev-xyz", "-w", WORKLOAD, cache=tmp_path)
    assert out.returncode == 2
    assert "--against: 'no-such-rev-xyz' names no commit" in out.stderr
    assert not (tmp_path / "kubesched").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--rounds", "0"], "--rounds must be at least 1, not 0"),
        (["--compare"], "--against pairs plain runs"),
    ],
)
def test_options_that_do_not_pair_are_refused(tmp_path: Path, args: list[str], message: str) -> None:
    out = bench("--against", "HEAD", "-w", WORKLOAD, *args, cache=tmp_path)
    assert out.returncode == 2 and message in out.stderr


def test_the_cache_follows_xdg_cache_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_dir() == tmp_path / "kubesched" / "against"


def row(cpu: float | None, process_cpu: float, p50: float, pods_per_second: float) -> dict[str, float | None]:
    return {
        "cpu_ms_per_pod": cpu,
        "process_cpu_ms_per_pod": process_cpu,
        "attempt_p50_ms": p50,
        "attempt_p99_ms": p50 * 3,
        "pods_per_second": pods_per_second,
    }


def test_ratios_are_paired_round_by_round() -> None:
    p = Pairing("W", ours=[row(1.0, 2.0, 0.5, 100), row(3.0, 6.0, 0.5, 50)], theirs=[row(2.0, 4.0, 1.0, 50)] * 2)
    out = p.to_json()
    assert out["cpu_measure"] == "cpu_ms_per_pod"
    assert out["cpu_ms_per_pod"] == {
        "ours_median": 2.0,
        "theirs_median": 2.0,
        "ratio_median": 1.0,
        "ratio_min": 0.5,
        "ratio_max": 1.5,
    }
    assert out["attempt_p50_ms"]["ratio_median"] == 0.5
    assert (out["pods_per_second"]["ratio_min"], out["pods_per_second"]["ratio_max"]) == (1.0, 2.0)


def test_a_side_without_the_windows_cpu_pairs_the_whole_process_for_both() -> None:
    p = Pairing("W", ours=[row(1.0, 2.0, 0.5, 100)], theirs=[row(None, 4.0, 1.0, 50)])
    out = p.to_json()
    assert out["cpu_measure"] == "process_cpu_ms_per_pod"
    assert out["cpu_ms_per_pod"]["ratio_median"] == 0.5
    assert (out["cpu_ms_per_pod"]["ours_median"], out["cpu_ms_per_pod"]["theirs_median"]) == (2.0, 4.0)
