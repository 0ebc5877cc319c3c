"""kubesched sweep's picture of the grid: one marker per workload and policy at the mean over the
seeds of the unallocated GPUs at arrived 100%, a bar over the seeds' range; failed experiments and
replays without the figure left out; drawn where the axis says."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from kubesched.research.errors import ReplayError
from kubesched.research.grid_plot import grid_points, grid_svg, outcome_rows, write_grid_plot
from kubesched.research.sweep import Experiment, ExperimentOutcome

SVG = "{http://www.w3.org/2000/svg}"


def outcome(workload: str, policy: str, seed: int, at_100: float | None, ok: bool = True) -> ExperimentOutcome:
    e = Experiment(workload, policy, 1.3, seed)
    if not ok:
        return ExperimentOutcome(e, error="boom")
    return ExperimentOutcome(e, summary={"gpuAllocationAt100": at_100})


OUTCOMES = [
    outcome("openb_pod_list_default", "FGD", 42, 95.0),
    outcome("openb_pod_list_default", "FGD", 43, 93.0),
    outcome("openb_pod_list_default", "Random", 42, 80.0),
    outcome("openb_pod_list_default", "Random", 43, 70.0, ok=False),  # failed: left out
    outcome("openb_pod_list_cpu050", "FGD", 42, None),  # never reached 100%: left out
    outcome("openb_pod_list_cpu050", "FGD", 43, 91.5),
    outcome("openb_pod_list_cpu050", "Random", 42, 88.0),
]


def test_points_are_the_unallocated_share_per_workload_and_policy() -> None:
    points = grid_points(outcome_rows(OUTCOMES))
    assert [(p.workload, p.policy, p.values) for p in points] == [
        ("openb_pod_list_default", "FGD", (5.0, 7.0)),
        ("openb_pod_list_default", "Random", (20.0,)),
        ("openb_pod_list_cpu050", "FGD", (8.5,)),
        ("openb_pod_list_cpu050", "Random", (12.0,)),
    ]
    assert points[0].mean == 6.0


def test_the_svg_draws_each_mean_where_the_axis_says() -> None:
    points = grid_points(outcome_rows(OUTCOMES))
    text = grid_svg(points, "mean of 2 seeds")
    root = ET.fromstring(text)
    markers = [c for c in root.iter(f"{SVG}circle") if c.find(f"{SVG}title") is not None]
    tips = [c.find(f"{SVG}title").text for c in markers]  # type: ignore[union-attr]
    assert tips == [
        "default / FGD: 6.00 (5.00–7.00, 2 seeds)",
        "cpu050 / FGD: 8.50 (8.50–8.50, 1 seed)",
        "default / Random: 20.00 (20.00–20.00, 1 seed)",
        "cpu050 / Random: 12.00 (12.00–12.00, 1 seed)",
    ]
    # the y axis: its tick labels' positions map values to heights; each marker sits at its mean
    ticks = {
        float(t.text): float(t.get("y")) - 4  # type: ignore[arg-type]
        for t in root.iter(f"{SVG}text")
        if t.get("text-anchor") == "end" and t.get("transform") is None and re.fullmatch(r"\d+", t.text or "")
    }
    (v0, y0), (v1, y1) = min(ticks.items()), max(ticks.items())
    assert v0 == 0 and v1 >= 20
    for marker, mean in zip(markers, (6.0, 8.5, 20.0, 12.0), strict=True):
        assert float(marker.get("cy")) == pytest.approx(y0 + (y1 - y0) * mean / v1, abs=0.1)  # type: ignore[arg-type]
    # a policy's markers share its colour; the two policies differ, and each workload's policies stand apart
    colours = [m.get("fill") for m in markers]
    assert colours[0] == colours[1] != colours[2] == colours[3]
    assert float(markers[0].get("cx")) < float(markers[2].get("cx")) < float(markers[1].get("cx"))  # type: ignore[arg-type]
    labels = [t.text for t in root.iter(f"{SVG}text")]
    assert "default" in labels and "cpu050" in labels and "mean of 2 seeds" in labels


def test_only_svg_is_written(tmp_path: Path) -> None:
    points = grid_points(outcome_rows(OUTCOMES))
    write_grid_plot(tmp_path / "grid.svg", points)
    assert (tmp_path / "grid.svg").read_text().startswith("<svg")
    with pytest.raises(ReplayError, match=r"grid\.png: sweep --plot writes \.svg files, not \.png"):
        write_grid_plot(tmp_path / "grid.png", points)
