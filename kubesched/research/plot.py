"""GPU allocation against arrived load, as a picture: SVG written here, PNG through matplotlib.

SVG needs nothing beyond Python, so ``--plot curve.svg`` always works and the tests can read
what was drawn; PNG (raster, for slides) is drawn by matplotlib, an optional extra:
``pip install 'kubesched[plot]'``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

from kubesched.research.errors import ReplayError

PLOT_EXTRA = "pip install 'kubesched[plot]'"
#: One colour per series, in order (colour-blind safe, Okabe and Ito).
COLOURS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442")
#: What a plot shows: ``(arrived from, arrived to, allocation from, allocation to)``, percent.
Window = tuple[int, int, int, int]
FULL: Window = (0, 130, 0, 100)
#: Where the policies part: from 80 % arrived, allocation 80..100 %.
ZOOM: Window = (80, 130, 80, 100)

Curve = Sequence[Mapping[str, Any]]


def write_plot(path: Path, series: Mapping[str, Curve], title: str = "", window: Window = FULL) -> None:
    """Draw ``gpuAllocation`` against ``arrived`` for each named curve into ``path`` (``.svg`` or
    ``.png``), with the diagonal every arrival would reach on an endless cluster; ``window``
    picks the part shown (:data:`FULL`, :data:`ZOOM`)."""
    suffix = path.suffix.lower()
    if suffix == ".svg":
        text = svg(series, title, window)
        try:
            path.write_text(text, encoding="utf-8")
        except OSError as exc:
            raise ReplayError(f"{path}: cannot write: {exc.strerror or exc}") from None
    elif suffix == ".png":
        _png(path, series, title, window)
    else:
        raise ReplayError(f"{path}: --plot writes .svg or .png files, not {suffix or 'files without a suffix'}")


def _points(curve: Curve, x0: float = 0, x1: float = float("inf")) -> list[tuple[float, float]]:
    return [
        (float(p["arrived"]), float(p["gpuAllocation"]))
        for p in curve
        if p.get("gpuAllocation") is not None and x0 <= p["arrived"] <= x1
    ]


def _step(span: int) -> int:
    return 10 if span > 50 else 5 if span > 20 else 2


def svg(series: Mapping[str, Curve], title: str = "", window: Window = FULL) -> str:
    width, height = 720, 480
    left, right, top, bottom = 70, 180, 40, 60
    pw, ph = width - left - right, height - top - bottom
    x0, x1, y0, y1 = window

    def x(v: float) -> float:
        return left + pw * (v - x0) / (x1 - x0)

    def y(v: float) -> float:
        return top + ph * (1 - (v - y0) / (y1 - y0))

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
        f'<rect x="0" y="0" width="{width}" height="{height}" fill="white"/>',
    ]
    out.append(f'<clipPath id="plot"><rect x="{left}" y="{top}" width="{pw}" height="{ph}"/></clipPath>')
    for v in range(x0, x1 + 1, _step(x1 - x0)):
        out.append(f'<line x1="{x(v):.1f}" y1="{top}" x2="{x(v):.1f}" y2="{top + ph}" stroke="#e5e5e5"/>')
        out.append(f'<text x="{x(v):.1f}" y="{top + ph + 18}" text-anchor="middle">{v}</text>')
    for v in range(y0, y1 + 1, _step(y1 - y0)):
        out.append(f'<line x1="{left}" y1="{y(v):.1f}" x2="{left + pw}" y2="{y(v):.1f}" stroke="#e5e5e5"/>')
        out.append(f'<text x="{left - 8}" y="{y(v) + 4:.1f}" text-anchor="end">{v}</text>')
    out.append(f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="#333"/>')
    out.append(
        f'<line x1="{x(0):.1f}" y1="{y(0):.1f}" x2="{x(100):.1f}" y2="{y(100):.1f}" '
        'stroke="#999" stroke-dasharray="4 4" clip-path="url(#plot)"/>'
    )
    out.append(
        f'<text x="{left + pw / 2:.1f}" y="{height - 15}" text-anchor="middle">'
        "Arrived workload (% of cluster GPU capacity)</text>"
    )
    out.append(
        f'<text transform="translate(20 {top + ph / 2:.1f}) rotate(-90)" text-anchor="middle">GPU allocation (%)</text>'
    )
    if title:
        out.append(f'<text x="{left + pw / 2:.1f}" y="24" text-anchor="middle" font-size="14">{escape(title)}</text>')
    for i, (label, curve) in enumerate(series.items()):
        colour = COLOURS[i % len(COLOURS)]
        pts = " ".join(f"{x(a):.1f},{y(b):.1f}" for a, b in _points(curve, x0, x1))
        out.append(
            f'<polyline fill="none" stroke="{colour}" stroke-width="2" clip-path="url(#plot)" points="{pts}">'
            f"<title>{escape(label)}</title></polyline>"
        )
        ly = top + 16 + 20 * i
        out.append(
            f'<line x1="{left + pw + 15}" y1="{ly}" x2="{left + pw + 40}" y2="{ly}" stroke="{colour}" stroke-width="2"/>'
        )
        out.append(f'<text x="{left + pw + 46}" y="{ly + 4}">{escape(label)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _png(path: Path, series: Mapping[str, Curve], title: str, window: Window) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ReplayError(
            f"{path}: drawing PNG needs matplotlib, which is not installed: {PLOT_EXTRA} (or write .svg, which needs nothing)"
        ) from None
    fig, ax = plt.subplots(figsize=(8, 5.5))
    ax.plot([0, 100], [0, 100], linestyle="--", color="#999999", linewidth=1)
    for i, (label, curve) in enumerate(series.items()):
        pts = _points(curve)
        ax.plot([a for a, _ in pts], [b for _, b in pts], label=label, color=COLOURS[i % len(COLOURS)], linewidth=2)
    ax.set_xlim(window[0], window[1])
    ax.set_ylim(window[2], window[3])
    ax.set_xlabel("Arrived workload (% of cluster GPU capacity)")
    ax.set_ylabel("GPU allocation (%)")
    if title:
        ax.set_title(title)
    ax.grid(True, color="#e5e5e5")
    ax.legend(loc="lower right")
    try:
        fig.savefig(path, dpi=120, bbox_inches="tight")
    except OSError as exc:
        raise ReplayError(f"{path}: cannot write: {exc.strerror or exc}") from None
    finally:
        plt.close(fig)


__all__ = ["FULL", "PLOT_EXTRA", "ZOOM", "Window", "svg", "write_plot"]
