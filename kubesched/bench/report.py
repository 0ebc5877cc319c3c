"""The results table of ``python -m benchmarks.run`` and ``kubesched bench``.

Tables are rich tables rendered without colour at a fixed width, so their lines can be read by
scripts and tests (``│``-separated cells).
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.table import Table

from kubesched.bench.measure import Result

#: The columns of the results table, in order (``kubesched bench`` adds ``profile`` after ``workload``).
COLUMNS = (
    "workload",
    "nodes",
    "init",
    "measured",
    "scheduled",
    "unschedulable",
    "pods/s",
    "CPU ms/pod",
    "floor",
    "ours/floor",
    "p50 ms",
    "p90 ms",
    "p99 ms",
    "peak RSS MiB",
    "max loop lag ms",
    "loop",
)
_LEFT = ("workload", "profile", "loop")


def _cells(r: Result, borrowed: dict[str, str]) -> list[str]:
    floor = "-"
    if r.floor_pods_per_second is not None:
        floor = f"{r.floor_pods_per_second:g}"
        if r.floor_source != r.workload:
            floor += "*"
            borrowed[r.workload] = r.floor_source or ""
    return [
        str(r.nodes),
        str(r.init_pods),
        str(r.measure_pods),
        str(r.scheduled),
        str(r.unschedulable),
        f"{r.pods_per_second:.1f}",
        f"{r.cpu_ms_per_pod:.3f}" if r.cpu_ms_per_pod is not None else "-",
        floor,
        f"{r.floor_ratio:.2f}" if r.floor_ratio is not None else "-",
        f"{r.attempt_p50_ms:.3f}",
        f"{r.attempt_p90_ms:.3f}",
        f"{r.attempt_p99_ms:.3f}",
        f"{r.peak_rss_mib:.1f}",
        f"{r.loop_lag_max_ms:.1f}",
        r.loop,
    ]


def _table(title: str, columns: Sequence[str]) -> Table:
    t = Table(title=title)
    for col in columns:
        t.add_column(col, justify="left" if col in _LEFT else "right", no_wrap=col == "workload")
    return t


def _print_borrowed(console: Console, borrowed: dict[str, str]) -> None:
    if borrowed:
        console.print("floor: upstream scheduler_perf's threshold (pods/s); * from the upstream case of that test")
        console.print("with the same node count and more measured pods:")
        for ours, theirs in borrowed.items():
            console.print(f"  {ours}: {theirs}")


def _print_garbage(console: Console, results: Sequence[Result]) -> None:
    """Name the runs whose scheduling left reference cycles: memory a busy scheduler keeps."""
    for r in results:
        if r.cyclic_garbage:
            console.print(
                f"{r.workload}: the collector freed {r.cyclic_garbage} objects in reference cycles "
                f"while the measured pods were scheduled ({r.cyclic_garbage / max(r.measure_pods, 1):.0f} a pod); "
                "a busy scheduler keeps them until a full collection"
            )


def print_table(results: list[Result], title: str | None = None) -> None:
    """The results table, upstream's floor beside our pods/s; a floor borrowed from an upstream
    case of another size is starred and named under the table."""
    if title is None:
        backend = "in-memory cluster" if not results or results[0].backend == "memory" else "over HTTP"
        title = f"kubesched benchmarks ({backend}, default profile)"
    t = _table(title, COLUMNS)
    borrowed: dict[str, str] = {}
    for r in results:
        t.add_row(r.workload, *_cells(r, borrowed))
    console = Console(color_system=None, width=200)
    console.print(t)
    _print_borrowed(console, borrowed)
    _print_garbage(console, results)


def _ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}x" if b else "-"


def print_profiles(rows: list[tuple[str, Result]], baseline: str | None, title: str) -> None:
    """``kubesched bench``'s table: one row per (profile, result); with ``baseline`` (a profile
    named in ``rows``), under each workload a row ``<profile>/<baseline>`` of ratios: pods/s,
    the latency percentiles, peak RSS and loop lag of the other profile divided by the baseline's."""
    t = _table(title, (COLUMNS[0], "profile", *COLUMNS[1:]))
    borrowed: dict[str, str] = {}
    by_workload: dict[str, dict[str, Result]] = {}
    for profile, r in rows:
        by_workload.setdefault(r.workload, {})[profile] = r
    for workload, runs in by_workload.items():
        for profile, r in runs.items():
            t.add_row(workload, profile, *_cells(r, borrowed))
        base = runs.get(baseline) if baseline is not None else None
        if base is None:
            continue
        for profile, r in runs.items():
            if profile == baseline:
                continue
            t.add_row(
                workload,
                f"{profile}/{baseline}",
                "",
                "",
                "",
                "",
                "",
                _ratio(r.pods_per_second, base.pods_per_second),
                _ratio(r.cpu_ms_per_pod or 0.0, base.cpu_ms_per_pod or 0.0),
                "",
                "",
                _ratio(r.attempt_p50_ms, base.attempt_p50_ms),
                _ratio(r.attempt_p90_ms, base.attempt_p90_ms),
                _ratio(r.attempt_p99_ms, base.attempt_p99_ms),
                _ratio(r.peak_rss_mib, base.peak_rss_mib),
                _ratio(r.loop_lag_max_ms, base.loop_lag_max_ms),
                "",
            )
    console = Console(color_system=None, width=220)
    console.print(t)
    _print_borrowed(console, borrowed)
    _print_garbage(console, [r for _, r in rows])
