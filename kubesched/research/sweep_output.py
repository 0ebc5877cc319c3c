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
import itertools
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from kubesched.research.grid import POINTS
from kubesched.research.sweep import Experiment, ExperimentOutcome

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


def _lines(rows: Iterable[Sequence[Any]]) -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    return out.getvalue()


def _write(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    return _lines(itertools.chain((header,), rows))


def allocation_row(o: ExperimentOutcome) -> list[Any] | None:
    """An experiment's row of the allocation table; none for a failed one."""
    return [*_key(o), o.summary["gpus"], *map(_cell, o.allocation)] if o.ok else None


def fragmentation_row(o: ExperimentOutcome) -> list[Any] | None:
    return [*_key(o), *map(_cell, o.fragmentation)] if o.ok else None


def summary_row(o: ExperimentOutcome) -> list[Any]:
    """Every experiment has one, a failed one with its error."""
    s = o.summary
    return [
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


def allocation_csv(outcomes: Sequence[ExperimentOutcome]) -> str:
    """One row per successful experiment, in the order given."""
    return _write(ALLOCATION_COLUMNS, filter(None, map(allocation_row, outcomes)))


def fragmentation_csv(outcomes: Sequence[ExperimentOutcome]) -> str:
    return _write(FRAGMENTATION_COLUMNS, filter(None, map(fragmentation_row, outcomes)))


def summary_csv(outcomes: Sequence[ExperimentOutcome]) -> str:
    """Every experiment, failed ones with their error."""
    return _write(SUMMARY_COLUMNS, map(summary_row, outcomes))


class GrowingTable:
    """A table rewritten as experiments complete: each row is formatted once, when its outcome
    arrives, and :meth:`text` joins the rows in the grid's order — so a sweep that saves after
    every experiment costs in proportion to its rows, not to their square."""

    def __init__(self, header: Sequence[str], row: Callable[[ExperimentOutcome], Sequence[Any] | None]) -> None:
        self.header = _lines((header,))
        self.row = row
        self._lines: dict[Experiment, str] = {}

    def add(self, outcome: ExperimentOutcome) -> None:
        row = self.row(outcome)
        if row is not None:
            self._lines[outcome.experiment] = _lines((row,))

    def text(self, experiments: Sequence[Experiment]) -> str:
        """The header, then the rows of ``experiments`` that have one, in that order."""
        return self.header + "".join(self._lines[e] for e in experiments if e in self._lines)


#: The tables ``kubesched sweep`` can write, by what they hold.
TABLES: dict[str, tuple[Sequence[str], Callable[[ExperimentOutcome], Sequence[Any] | None]]] = {
    "allocation": (ALLOCATION_COLUMNS, allocation_row),
    "fragmentation": (FRAGMENTATION_COLUMNS, fragmentation_row),
    "summary": (SUMMARY_COLUMNS, summary_row),
}


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
    "TABLES",
    "GrowingTable",
    "allocation_csv",
    "allocation_row",
    "format_report",
    "fragmentation_csv",
    "fragmentation_row",
    "summary_csv",
    "summary_row",
]
