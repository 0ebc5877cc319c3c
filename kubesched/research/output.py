"""What ``kubesched replay`` writes: the curve as JSON or CSV, and a readable table."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from typing import Any

from kubesched.research.compare import KINDS, METRICS, Compared
from kubesched.research.compare_scenario import ScenarioCompared
from kubesched.research.grid import COLUMNS
from kubesched.research.replay import ReplayResult

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


# --- compare --------------------------------------------------------------------------------------

#: Table headings of the compared metrics.
METRIC_LABELS = {
    "gpuAllocationAt100": "GPU alloc % at arrived 100 %",
    "gpuAllocation": "GPU alloc % at the end",
    "gpuFragmentation": "GPU frag % of capacity",
    "gpuFragmentationRatio": "GPU frag % of idle",
    "cpuAllocation": "CPU alloc %",
    "memoryAllocation": "memory alloc %",
    "unscheduled": "pods without a node",
    "gpuNodesUsed": "GPU nodes used",
    "gpuNodesFull": "GPU nodes full",
    "nodeGpuAllocationStdev": "stdev of node GPU alloc %",
}


def comparison_json(compared: Sequence[Compared]) -> str:
    """``{"configurations": [{"name", "config", "seeds", "metrics", "curve"}, ...]}``."""
    return json.dumps({"configurations": [c.to_json() for c in compared]}, indent=2)


def comparison_csv(compared: Sequence[Compared]) -> str:
    """One row per configuration: its name, the seeds, then each metric (means over the seeds)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["name", "config", "seeds", *METRICS, *(f"unscheduled_{k}" for k in KINDS), "seconds"])
    for c in compared:
        m = c.metrics
        writer.writerow(
            [
                c.name,
                str(c.config),
                " ".join(str(s["seed"]) for s in c.summaries),
                *("" if m.get(k) is None else m[k] for k in METRICS),
                *("" if m["unscheduledByKind"].get(k) is None else m["unscheduledByKind"][k] for k in KINDS),
                "" if m.get("seconds") is None else m["seconds"],
            ]
        )
    return out.getvalue()


def format_comparison(compared: Sequence[Compared], width: int = 160) -> str:
    """The metrics side by side, one column per configuration, the best of each row marked."""
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    console = Console(width=width, record=True, file=io.StringIO(), force_terminal=False, color_system=None)
    seeds = ", ".join(str(s["seed"]) for s in compared[0].summaries) if compared else ""
    table = Table(title=f"Compared (means over seeds {seeds}; * best)")
    table.add_column("metric")
    for c in compared:
        table.add_column(escape(c.name), justify="right")
    higher_is_better = {"gpuAllocationAt100", "gpuAllocation", "cpuAllocation", "memoryAllocation"}
    lower_is_better = {"gpuFragmentation", "gpuFragmentationRatio", "unscheduled"}
    for metric in METRICS:
        values = [c.metrics.get(metric) for c in compared]
        best: float | None = None
        known = [v for v in values if v is not None]
        if known and len(compared) > 1:
            best = max(known) if metric in higher_is_better else min(known) if metric in lower_is_better else None
        table.add_row(
            METRIC_LABELS[metric],
            *("-" if v is None else f"{v:g}{' *' if best is not None and v == best else ''}" for v in values),
        )
    for kind in KINDS:
        table.add_row(f"  without a node: {kind}", *(f"{c.metrics['unscheduledByKind'][kind]:g}" for c in compared))
    table.add_row("seconds per experiment", *(f"{c.metrics['seconds']:g}" for c in compared))
    console.print(table)
    return console.export_text()


def _scenario_label(metric: str) -> str:
    if metric.startswith("allocation:"):
        return f"{metric.split(':', 1)[1]} allocation %"
    return {
        "scheduled": "pods placed",
        "unschedulable": "pods without a node",
        "errors": "pods in error",
        "nodesUsed": "nodes used",
        "nodeCpuAllocationStdev": "stdev of node CPU alloc %",
        "zoneSkew": "zone skew (most - fewest pods)",
        "podGroupsPlaced": "pod groups placed whole",
        "podGroupsHeld": "pod groups held",
    }.get(metric, metric)


def scenario_comparison_json(path: str, compared: Sequence[ScenarioCompared]) -> str:
    return json.dumps({"scenario": path, "configurations": [c.to_json() for c in compared]}, indent=2)


def scenario_comparison_csv(compared: Sequence[ScenarioCompared]) -> str:
    metrics = list(dict.fromkeys(k for c in compared for k in c.metrics))
    kinds = sorted({k for c in compared for k in c.unscheduled_by_kind})
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["name", "config", "seeds", *metrics, *(f"unscheduled_{k}" for k in kinds)])
    for c in compared:
        writer.writerow(
            [
                c.name,
                str(c.config),
                " ".join(str(s) for s in c.seeds),
                *("" if c.metrics.get(m) is None else c.metrics[m] for m in metrics),
                *(c.unscheduled_by_kind.get(k, 0) for k in kinds),
            ]
        )
    return out.getvalue()


def format_scenario_comparison(path: str, compared: Sequence[ScenarioCompared], width: int = 160) -> str:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    console = Console(width=width, record=True, file=io.StringIO(), force_terminal=False, color_system=None)
    seeds = ", ".join(str(s) for s in compared[0].seeds) if compared else ""
    table = Table(title=escape(f"{path}: compared (means over seeds {seeds})"))
    table.add_column("metric")
    for c in compared:
        table.add_column(escape(c.name), justify="right")
    for metric in dict.fromkeys(k for c in compared for k in c.metrics):
        values = [c.metrics.get(metric) for c in compared]
        table.add_row(escape(_scenario_label(metric)), *("-" if v is None else f"{v:g}" for v in values))
    for kind in sorted({k for c in compared for k in c.unscheduled_by_kind}):
        table.add_row(
            f"  without a node: {escape(kind)}", *(f"{c.unscheduled_by_kind.get(kind, 0):g}" for c in compared)
        )
    console.print(table)
    return console.export_text()


__all__ = [
    "METRIC_LABELS",
    "TABLE_POINTS",
    "comparison_csv",
    "comparison_json",
    "curve_csv",
    "format_comparison",
    "format_scenario_comparison",
    "format_table",
    "scenario_comparison_csv",
    "scenario_comparison_json",
    "to_json",
]
