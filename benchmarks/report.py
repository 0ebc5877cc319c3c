"""What a run shows: the tables, the JSON and the saved file.

Tables are rich tables rendered without colour at a fixed width, so their lines can be read by
scripts and tests (``│``-separated cells); JSON rows are the dataclasses' fields, as
``--save`` writes them. rich is imported when a table is printed, not before: the fresh
interpreter each measured run starts prints JSON, and its whole CPU time is what ``--against``
compares with a revision that does not measure its window (importing rich cost it some 20 ms).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchmarks.catalogue import Workload
from benchmarks.measure import Result

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

__all__ = [
    "print_against",
    "print_comparisons",
    "print_json",
    "print_scaling",
    "print_table",
    "print_workloads",
    "save_json",
    "scaling_rows",
]


def print_workloads(workloads: list[Workload]) -> None:
    """``--list``: one line per workload, the slow ones marked."""
    for w in workloads:
        slow = " (slow: only with -w or --all)" if w.slow else ""
        print(f"{w.name:45s} nodes={w.nodes} init={w.init_pods} measured={w.measure_pods}  {w.description}{slow}")


def _table(title: str) -> Table:
    from rich.table import Table

    return Table(title=title)


def _console(width: int) -> Console:
    from rich.console import Console

    return Console(color_system=None, width=width)


def print_table(results: list[Result], title: str | None = None) -> None:
    """The results as ``kubesched bench`` shows them (:func:`kubesched.bench.report.print_table`)."""
    from kubesched.bench.report import print_table as table

    table(results, title)


def print_json(payload: Any) -> None:
    print(json.dumps(payload, indent=2))


def save_json(path: str, payload: Any) -> None:
    """Write ``payload`` to ``path`` as indented JSON, making its folder if need be."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps(payload, indent=2) + "\n")


def scaling_rows(results: list[Result]) -> list[dict[str, Any]]:
    """Time per measured pod at each size, and how many times the smallest size's it is."""
    rows: list[dict[str, Any]] = []
    for r in results:
        ms = 1000.0 / r.pods_per_second if r.pods_per_second else float("inf")
        base = rows[0]["ms_per_pod"] if rows else ms
        rows.append(
            {
                "workload": r.workload,
                "nodes": r.nodes,
                "measure_pods": r.measure_pods,
                "pods_per_second": r.pods_per_second,
                "ms_per_pod": round(ms, 3),
                "growth": round(ms / base, 2),
                "attempt_p50_ms": r.attempt_p50_ms,
                "peak_rss_mib": r.peak_rss_mib,
            }
        )
    return rows


def print_scaling(rows: list[dict[str, Any]]) -> None:
    """``--scaling``: the rows of :func:`scaling_rows` as a table."""
    t = _table("SchedulingBasic: time per pod as the cluster grows")
    for col in ("workload", "nodes", "measured", "pods/s", "ms per pod", "x smallest", "p50 ms", "peak RSS MiB"):
        t.add_column(col, justify="left" if col == "workload" else "right")
    for row in rows:
        t.add_row(
            row["workload"],
            str(row["nodes"]),
            str(row["measure_pods"]),
            f"{row['pods_per_second']:.1f}",
            f"{row['ms_per_pod']:.2f}",
            f"{row['growth']:.2f}",
            f"{row['attempt_p50_ms']:.3f}",
            f"{row['peak_rss_mib']:.1f}",
        )
    _console(150).print(t)


def _verdict(row: dict[str, Any]) -> str:
    if not row["same_placements"]:
        return f"NO: {row['placements_differ']} of {row['pods_compared']}"
    return "n/a: timing (same count bound)" if row.get("timing_dependent") else "yes"


def print_comparisons(rows: list[dict[str, Any]]) -> None:
    """``--compare``: both speeds and the placement verdict of each comparison row, then a few
    differing pods of each workload whose placements differ."""
    t = _table("per-node path vs batch path (one process, same seed)")
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
    console = _console(160)
    console.print(t)
    for row in rows:
        for example in row["examples"]:
            console.print(f"  {row['workload']}: {example}")


def _spread(figure: dict[str, Any]) -> str:
    if figure["ratio_median"] is None:
        return "-"
    return f"{figure['ratio_median']:.2f} ({figure['ratio_min']:.2f}-{figure['ratio_max']:.2f})"


def print_against(rows: list[dict[str, Any]], rev: str) -> None:
    """``--against``: per workload, this side's figures over REV's: the median ratio of the rounds
    with the lowest and highest round in brackets, and each side's median beside it."""
    t = _table(f"this checkout / {rev}: median ratio of the rounds (lowest-highest round)")
    for col in (
        "workload",
        "rounds",
        "CPU ms/pod ratio",
        "CPU ms/pod ours",
        "CPU ms/pod theirs",
        "p50 ratio",
        "p99 ratio",
        "pods/s ratio",
        "pods/s ours",
        "pods/s theirs",
    ):
        t.add_column(col, justify="left" if col == "workload" else "right", no_wrap=col == "workload")
    process_cpu = False
    for row in rows:
        cpu = row["cpu_ms_per_pod"]
        star = "" if row["cpu_measure"] == "cpu_ms_per_pod" else "*"
        process_cpu = process_cpu or bool(star)
        t.add_row(
            row["workload"],
            str(row["rounds"]),
            _spread(cpu) + star,
            f"{cpu['ours_median']:.3f}",
            f"{cpu['theirs_median']:.3f}",
            _spread(row["attempt_p50_ms"]),
            _spread(row["attempt_p99_ms"]),
            _spread(row["pods_per_second"]),
            f"{row['pods_per_second']['ours_median']:.1f}",
            f"{row['pods_per_second']['theirs_median']:.1f}",
        )
    console = _console(200)
    console.print(t)
    console.print("CPU and latency: below 1 is this checkout faster; pods/s: above 1 is.")
    if process_cpu:
        console.print(
            "* REV's runs do not measure CPU over the measured pods: the whole process's CPU per measured pod"
        )
        console.print("  (setup included) on both sides instead.")
