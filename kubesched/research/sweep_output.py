"""What ``kubesched sweep`` writes: one row per experiment, shaped as the FGD artifact's analysis
tables (experiments/analysis/expected_results/analysis_allo_discrete.csv and
analysis_frag_discrete.csv), a summary of each experiment, and a readable report.

* allocation: ``workload, policy, tune, seed, total_gpus, 0, 1, ..., 130`` — the GPU allocation
  (percent of the cluster's GPU capacity) at each point of arrived GPU demand;
* fragmentation: ``workload, policy, tune, seed, 0, 1, ..., 130`` — the fragmented GPU as a
  percent of the capacity (the paper's "Frag / Total") at each point.

``policy`` is the artifact's ``sc_policy``, ``tune`` its inflation ratio. A point where the
replay has no sample nearby is an empty cell, as pandas writes the artifact's missing values.
Failed experiments have no row there; the summary lists them with their error.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from typing import Any

from kubesched.research.grid import POINTS
from kubesched.research.sweep import ExperimentOutcome

KEY_COLUMNS = ("workload", "policy", "tune", "seed")
POINT_COLUMNS = tuple(str(k) for k in POINTS)
ALLOCATION_COLUMNS = (*KEY_COLUMNS, "total_gpus", *POINT_COLUMNS)
FRAGMENTATION_COLUMNS = (*KEY_COLUMNS, *POINT_COLUMNS)
SUMMARY_COLUMNS = (
    *KEY_COLUMNS,
    "status",
    "total_gpus",
    "pods",
    "scheduled",
    "unscheduled",
    "alloc_at_100",
    "alloc_at_end",
    "seconds",
    "worker",
    "error",
)


def _cell(value: Any) -> Any:
    return "" if value is None else value


def _key(o: ExperimentOutcome) -> list[Any]:
    e = o.experiment
    return [e.workload, e.policy, f"{e.tune:g}", e.seed]


def _write(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue()


def allocation_csv(outcomes: Sequence[ExperimentOutcome]) -> str:
    """One row per successful experiment, in the order given."""
    rows = [[*_key(o), o.summary["gpus"], *map(_cell, o.allocation)] for o in outcomes if o.ok]
    return _write(ALLOCATION_COLUMNS, rows)


def fragmentation_csv(outcomes: Sequence[ExperimentOutcome]) -> str:
    rows = [[*_key(o), *map(_cell, o.fragmentation)] for o in outcomes if o.ok]
    return _write(FRAGMENTATION_COLUMNS, rows)


def summary_csv(outcomes: Sequence[ExperimentOutcome]) -> str:
    """Every experiment, failed ones with their error."""
    rows = []
    for o in outcomes:
        s = o.summary
        rows.append(
            [
                *_key(o),
                "ok" if o.ok else "failed",
                *(
                    _cell(s.get(k))
                    for k in (
                        "gpus",
                        "pods",
                        "scheduled",
                        "unscheduled",
                        "gpuAllocationAt100",
                        "gpuAllocation",
                        "seconds",
                        "worker",
                    )
                ),
                _cell(o.error),
            ]
        )
    return _write(SUMMARY_COLUMNS, rows)


def format_report(outcomes: Sequence[ExperimentOutcome], engine: str, wall_seconds: float, width: int = 120) -> str:
    """A table of the experiments (allocation at arrived 100 %, time), then the failures."""
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    console = Console(width=width, record=True, file=io.StringIO(), force_terminal=False, color_system=None)
    failed = [o for o in outcomes if not o.ok]
    table = Table(
        title=f"Sweep: {len(outcomes) - len(failed)} of {len(outcomes)} experiments done on {escape(engine)} "
        f"in {wall_seconds:.1f} s"
    )
    for col, justify in (
        ("workload", "left"),
        ("policy", "left"),
        ("inflate", "right"),
        ("seed", "right"),
        ("GPU alloc % at 100", "right"),
        ("pods", "right"),
        ("unscheduled", "right"),
        ("seconds", "right"),
    ):
        table.add_column(col, justify=justify)  # type: ignore[arg-type]
    for o in outcomes:
        e, s = o.experiment, o.summary
        if o.ok:
            at_100 = s.get("gpuAllocationAt100")
            cells = [
                "-" if at_100 is None else f"{at_100:g}",
                str(s["pods"]),
                str(s["unscheduled"]),
                f"{s['seconds']:g}",
            ]
        else:
            cells = ["failed", "", "", ""]
        table.add_row(escape(e.workload), escape(e.policy), f"{e.tune:g}", str(e.seed), *cells)
    console.print(table)
    for o in failed:
        console.print(f"FAILED {escape(o.experiment.label)}: {escape(o.error or '')}")
    return console.export_text()


__all__ = [
    "ALLOCATION_COLUMNS",
    "FRAGMENTATION_COLUMNS",
    "POINT_COLUMNS",
    "SUMMARY_COLUMNS",
    "allocation_csv",
    "format_report",
    "fragmentation_csv",
    "summary_csv",
]
