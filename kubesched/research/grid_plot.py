"""A sweep's grid as one picture: for every workload, each policy's unallocated GPUs when the
arrived GPU demand reaches the cluster's capacity — the comparison the FGD paper draws for its
workload families.

One marker per workload and policy at the mean over the seeds, a bar from the lowest to the
highest seed; workloads along the x axis in the grid's order (the pod list's stem without
``openb_pod_list_``), policies in the grid's order, each its colour. Written as SVG, which needs
nothing beyond Python (``kubesched sweep --plot grid.svg``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import escape

from kubesched.research.errors import ReplayError
from kubesched.research.plot import COLOURS
from kubesched.research.sweep import ExperimentOutcome

#: What a workload's label drops (the trace's file stems all begin so).
STEM_PREFIX = "openb_pod_list_"


@dataclass(frozen=True)
class GridPoint:
    """One policy on one workload: the unallocated GPU share (percent of capacity) at arrived
    100% for each seed that gave one."""

    workload: str
    policy: str
    values: tuple[float, ...]

    @property
    def mean(self) -> float:
        return sum(self.values) / len(self.values)


def grid_points(rows: Iterable[tuple[str, str, float | None]]) -> list[GridPoint]:
    """``(workload, policy, allocation % at arrived 100)`` per experiment, gathered per workload
    and policy in the order they first appear; experiments without the figure (failed, or a
    replay that never reached 100% arrived) are left out."""
    gathered: dict[tuple[str, str], list[float]] = {}
    for workload, policy, at_100 in rows:
        if at_100 is not None:
            gathered.setdefault((workload, policy), []).append(100.0 - float(at_100))
    return [GridPoint(w, p, tuple(v)) for (w, p), v in gathered.items()]


def outcome_rows(outcomes: Iterable[ExperimentOutcome]) -> list[tuple[str, str, float | None]]:
    """What :func:`grid_points` takes, from a sweep's outcomes (failed ones give ``None``)."""
    return [
        (o.experiment.workload, o.experiment.policy, o.summary.get("gpuAllocationAt100") if o.ok else None)
        for o in outcomes
    ]


def _label(workload: str) -> str:
    return workload.removeprefix(STEM_PREFIX)


def _ordered(values: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(values))


def grid_svg(points: Sequence[GridPoint], title: str = "") -> str:
    """The picture of :mod:`this module <kubesched.research.grid_plot>` as SVG text."""
    workloads = _ordered(p.workload for p in points)
    policies = _ordered(p.policy for p in points)
    top_value = max((max(p.values) for p in points), default=0.0)
    step = 5 if top_value > 20 else 2 if top_value > 8 else 1
    y_max = max(step, math.ceil(top_value / step) * step)
    width = max(720, 90 + 48 * len(workloads) + 170)
    height = 480
    left, right, top, bottom = 70, 170, 40, 110
    pw, ph = width - left - right, height - top - bottom
    slot = pw / max(1, len(workloads))

    def x(workload: int, policy: int) -> float:
        spread = slot * 0.7
        offset = 0.0 if len(policies) == 1 else spread * (policy / (len(policies) - 1) - 0.5)
        return left + slot * (workload + 0.5) + offset

    def y(v: float) -> float:
        return top + ph * (1 - v / y_max)

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
        f'<rect x="0" y="0" width="{width}" height="{height}" fill="white"/>',
    ]
    for v in range(0, y_max + 1, step):
        out.append(f'<line x1="{left}" y1="{y(v):.1f}" x2="{left + pw}" y2="{y(v):.1f}" stroke="#e5e5e5"/>')
        out.append(f'<text x="{left - 8}" y="{y(v) + 4:.1f}" text-anchor="end">{v}</text>')
    for i, workload in enumerate(workloads):
        if i:
            gx = left + slot * i
            out.append(f'<line x1="{gx:.1f}" y1="{top}" x2="{gx:.1f}" y2="{top + ph}" stroke="#f0f0f0"/>')
        lx, ly = left + slot * (i + 0.5), top + ph + 12
        out.append(
            f'<text x="{lx:.1f}" y="{ly}" text-anchor="end" transform="rotate(-40 {lx:.1f} {ly})">'
            f"{escape(_label(workload))}</text>"
        )
    out.append(f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="#333"/>')
    out.append(
        f'<text transform="translate(20 {top + ph / 2:.1f}) rotate(-90)" text-anchor="middle">'
        "Unallocated GPUs at arrived 100% (% of capacity)</text>"
    )
    if title:
        out.append(f'<text x="{left + pw / 2:.1f}" y="24" text-anchor="middle" font-size="14">{escape(title)}</text>')
    where = {workload: i for i, workload in enumerate(workloads)}
    for j, policy in enumerate(policies):
        colour = COLOURS[j % len(COLOURS)]
        for p in points:
            if p.policy != policy:
                continue
            px = x(where[p.workload], j)
            low, high = min(p.values), max(p.values)
            tip = (
                f"{_label(p.workload)} / {policy}: {p.mean:.2f} "
                f"({low:.2f}–{high:.2f}, {len(p.values)} seed{'s' if len(p.values) != 1 else ''})"
            )
            out.append(
                f'<line x1="{px:.1f}" y1="{y(low):.1f}" x2="{px:.1f}" y2="{y(high):.1f}" stroke="{colour}" '
                'stroke-width="1.5"/>'
            )
            out.append(
                f'<circle cx="{px:.1f}" cy="{y(p.mean):.1f}" r="3.5" fill="{colour}">'
                f"<title>{escape(tip)}</title></circle>"
            )
        ly = top + 16 + 20 * j
        out.append(f'<circle cx="{left + pw + 27}" cy="{ly}" r="4" fill="{colour}"/>')
        out.append(f'<text x="{left + pw + 40}" y="{ly + 4}">{escape(policy)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def require_svg(path: Path) -> None:
    """Refuse a ``path`` :func:`write_grid_plot` cannot write (before a sweep starts)."""
    if path.suffix.lower() != ".svg":
        raise ReplayError(f"{path}: sweep --plot writes .svg files, not {path.suffix or 'files without a suffix'}")


def write_grid_plot(path: Path, points: Sequence[GridPoint], title: str = "") -> None:
    """Write :func:`grid_svg` to ``path`` (an ``.svg`` file)."""
    require_svg(path)
    try:
        path.write_text(grid_svg(points, title), encoding="utf-8")
    except OSError as exc:
        raise ReplayError(f"{path}: cannot write: {exc.strerror or exc}") from None


__all__ = ["STEM_PREFIX", "GridPoint", "grid_points", "grid_svg", "outcome_rows", "require_svg", "write_grid_plot"]
