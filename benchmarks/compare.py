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

from dataclasses import asdict, dataclass
from typing import Any

from benchmarks.backends import run_workload
from benchmarks.catalogue import workload
from benchmarks.launch import loop_runner, run_fresh
from benchmarks.measure import Result


@dataclass
class Comparison:
    """Both runs of one workload and how their placements compare."""

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
    """Run workload ``name`` node by node, then in batches, here; compare where pods went."""
    w = workload(name)
    # The results keep ``loop`` empty, as they always have in a comparison's JSON.
    runner, _ = loop_runner(use_uvloop)
    placements: dict[bool, dict[str, str]] = {}
    results: dict[bool, Result] = {}
    for batch in (False, True):
        placements[batch] = {}
        results[batch] = runner(run_workload(w, backend, batch, placements[batch]))
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
    """One comparison in a fresh interpreter (both runs inside it), as its JSON row."""
    args = ["--compare", "--in-process", "--json", "--workload", name, "--backend", backend]
    # Exit 1 is a comparison that ran and found placements differ: its row says so.
    return run_fresh(args, use_uvloop, ok=(0, 1), failed=f"comparison of {name} failed")
