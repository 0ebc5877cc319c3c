"""A measured run is a fresh interpreter (``python -m benchmarks.run -w W --json --in-process``)
whose whole CPU time ``--against`` compares with a revision that does not measure its window: it
imports what running a workload needs, not the pairing, the comparison or the tables' rich."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from benchmarks.launch import ROOT

#: Modules the measured run does without (each cost its interpreter CPU time at start-up).
NOT_AT_START = ("rich", "tarfile", "statistics", "benchmarks.against", "benchmarks.compare")


def _modules_after(code: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


@pytest.mark.parametrize(
    "code",
    [
        pytest.param("import benchmarks.run", id="import"),
        pytest.param(
            "from benchmarks.run import parse, selected\nselected(parse(['-w', 'SchedulingBasic/500Nodes', '--json']))",
            id="workloads-selected",
        ),
    ],
)
def test_a_measured_run_starts_without_the_pairing_or_the_tables(code: str) -> None:
    loaded = _modules_after(code)
    found = sorted(m for m in loaded if m.split(".")[0] in NOT_AT_START or m in NOT_AT_START)
    assert found == []


def test_the_tables_still_import_rich_when_printed(capsys: pytest.CaptureFixture[str]) -> None:
    from benchmarks.report import print_scaling

    print_scaling(
        [
            {
                "workload": "SchedulingBasic/500Nodes",
                "nodes": 500,
                "measure_pods": 10,
                "pods_per_second": 100.0,
                "ms_per_pod": 10.0,
                "growth": 1.0,
                "attempt_p50_ms": 1.0,
                "peak_rss_mib": 1.0,
            }
        ]
    )
    assert "SchedulingBasic/500Nodes" in capsys.readouterr().out
