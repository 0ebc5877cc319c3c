"""``python -m benchmarks.run --compare``: the per-node path and the batch path on one workload,
in one process, back to back.

On a shared, noisy machine two runs minutes apart can differ by more than the change being
measured; two runs in one process a few seconds apart are the comparison that holds. Both runs
use the same seed, so the scheduler must place every pod (init and measured) on the same node:
a difference is a fidelity bug, and the comparison fails. Workloads whose placements depend on
wall-clock timing (preemption: a preemptor's backoff against its victims' deletion) differ from
run to run on either path; for them only the number of pods bound is compared.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from dataclasses import asdict, dataclass
from typing import Any

from benchmarks.run import ROOT, WORKLOADS, Result, runner_for


@dataclass
class Comparison:
    workload: str
    per_node: Result
    batch: Result
    #: Pods bound in both runs, and how many of them went to different nodes.
    pods_compared: int
    placements_differ: int
    #: A few of the differing pods: ``namespace/name: per-node node != batch node``.
    examples: list[str]
    #: Placements depend on timing: only the number bound is compared.
    timing_dependent: bool = False

    @property
    def speedup(self) -> float:
        return self.batch.pods_per_second / self.per_node.pods_per_second if self.per_node.pods_per_second else 0.0

    @property
    def same(self) -> bool:
        if self.per_node.scheduled != self.batch.scheduled:
            return False
        return self.timing_dependent or self.placements_differ == 0

    def to_json(self) -> dict[str, Any]:
        return {
            "workload": self.workload,
            "per_node": asdict(self.per_node),
            "batch": asdict(self.batch),
            "speedup": round(self.speedup, 2),
            "pods_compared": self.pods_compared,
            "placements_differ": self.placements_differ,
            "examples": [] if self.timing_dependent else self.examples,
            "timing_dependent": self.timing_dependent,
            "same_placements": self.same,
        }


def compare_in_process(name: str, use_uvloop: bool = True, backend: str = "memory") -> Comparison:
    w = WORKLOADS[name]
    run = runner_for(backend)
    runner: Any = asyncio.run
    if use_uvloop:
        try:
            import uvloop

            runner = uvloop.run
        except ImportError:
            pass
    placements: dict[bool, dict[str, str]] = {}
    results: dict[bool, Result] = {}
    for batch in (False, True):
        placements[batch] = {}
        results[batch] = runner(run(w, batch=batch, placements=placements[batch]))
    a, b = placements[False], placements[True]
    differ = sorted(k for k in a.keys() | b.keys() if a.get(k) != b.get(k))
    return Comparison(
        workload=name,
        per_node=results[False],
        batch=results[True],
        pods_compared=len(a.keys() | b.keys()),
        placements_differ=len(differ),
        examples=[f"{k}: {a.get(k)} != {b.get(k)}" for k in differ[:5]],
        timing_dependent=w.timing_dependent,
    )


def compare_isolated(name: str, use_uvloop: bool, backend: str = "memory") -> dict[str, Any]:
    """One comparison in a fresh interpreter (both runs inside it)."""
    cmd = [sys.executable, "-m", "benchmarks.run", "--compare", "--in-process", "--json", "--workload", name]
    cmd += ["--backend", backend]
    if not use_uvloop:
        cmd.append("--no-uvloop")
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False)
    if out.returncode not in (0, 1):
        raise RuntimeError(f"comparison of {name} failed:\n{out.stderr}")
    payload: dict[str, Any] = json.loads(out.stdout)[0]
    return payload


def _verdict(row: dict[str, Any]) -> str:
    if not row["same_placements"]:
        return f"NO: {row['placements_differ']} of {row['pods_compared']}"
    return "n/a: timing (same count bound)" if row.get("timing_dependent") else "yes"


def print_comparisons(rows: list[dict[str, Any]]) -> None:
    from rich.console import Console
    from rich.table import Table

    t = Table(title="per-node path vs batch path (one process, same seed)")
    for col in (
        "workload",
        "per-node pods/s",
        "batch pods/s",
        "batch / per-node",
        "per-node p50 ms",
        "batch p50 ms",
        "batch p99 ms",
        "same placements",
    ):
        t.add_column(col, justify="left" if col == "workload" else "right", no_wrap=col == "workload")
    for row in rows:
        t.add_row(
            row["workload"],
            f"{row['per_node']['pods_per_second']:.1f}",
            f"{row['batch']['pods_per_second']:.1f}",
            f"{row['speedup']:.2f}",
            f"{row['per_node']['attempt_p50_ms']:.3f}",
            f"{row['batch']['attempt_p50_ms']:.3f}",
            f"{row['batch']['attempt_p99_ms']:.3f}",
            _verdict(row),
        )
    console = Console(color_system=None, width=160)
    console.print(t)
    for row in rows:
        for example in row["examples"]:
            console.print(f"  {row['workload']}: {example}")
