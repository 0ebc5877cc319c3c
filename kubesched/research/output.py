"""What ``kubesched replay`` writes: the curve as JSON or CSV, and a readable table."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from typing import Any

from .grid import COLUMNS
from .replay import ReplayResult

#: The points of the curve a table shows (the JSON and the CSV have every one).
TABLE_POINTS = (0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 100, 105, 110, 120, 130)


def to_json(result: ReplayResult) -> str:
    """``{"curve": [{"arrived": 0, ...}, ...], "summary": {...}}``, indented."""
    return json.dumps(result.to_json(), indent=2)


def curve_csv(curve: Sequence[dict[str, Any]]) -> str:
    """One row per point of the grid, the columns of :data:`kubesched.research.grid.COLUMNS`
    (an empty cell where the replay has no value)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for point in curve:
        writer.writerow(["" if point.get(c) is None else point[c] for c in COLUMNS])
    return out.getvalue()


def format_table(result: ReplayResult, width: int = 120) -> str:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    console = Console(width=width, record=True, file=io.StringIO(), force_terminal=False, color_system=None)
    s = result.summary
    summary = Table(title="Replay", show_header=False)
    summary.add_column("what")
    summary.add_column("value", justify="right")
    inflate = "churn (trace times)" if s["churn"] else f"{s['inflate']:g} x GPU capacity"
    for label, value in (
        ("configuration", s["config"]),
        ("score plugins", ", ".join(s["scorePlugins"])),
        ("nodes (GPUs)", f"{s['nodes']} ({s['gpus']})"),
        ("workload pods", s["workloadPods"]),
        ("arrivals", inflate),
        ("seed", s["seed"]),
        ("pods submitted", s["pods"]),
        ("scheduled", s["scheduled"]),
        ("unschedulable", s["unscheduled"]),
        ("arrived GPU demand %", s["arrived"]),
        ("GPU allocation % at arrived 100 %", s["gpuAllocationAt100"]),
        ("GPU allocation % at the end", s["gpuAllocation"]),
        ("GPU fragmentation % at the end", s["gpuFragmentation"]),
        ("wall seconds", s["seconds"]),
        ("pods/s", s["podsPerSecond"]),
    ):
        summary.add_row(label, escape(str(value)))
    console.print(summary)
    points = Table(title="Curve (percent of the cluster's GPU capacity, CPU and memory)")
    for col in COLUMNS:
        points.add_column(col, justify="right")
    for p in result.curve:
        if p["arrived"] in TABLE_POINTS:
            points.add_row(*("-" if p.get(c) is None else f"{p[c]:g}" for c in COLUMNS))
    console.print(points)
    return console.export_text()


__all__ = ["TABLE_POINTS", "curve_csv", "format_table", "to_json"]
