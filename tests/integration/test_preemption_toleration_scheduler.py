"""PreemptionToleration (plugins/preemption-toleration) as a user runs the README's example: the
package installed with pip, ``simulate`` over the scenario (two full nodes of tolerant training
pods; a web pod below their minimum preemptable priority, then an urgent one above it) with the
default profile and with PreemptionToleration in place of DefaultPreemption, and ``compare``
over both."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import compare_metrics, installed_package

from kubesched.config import load_config

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "plugins" / "preemption-toleration"
EXAMPLES = PACKAGE / "examples"
SCENARIO = EXAMPLES / "scenario.yaml"
TOLERATION = EXAMPLES / "preemption-toleration-scheduler.yaml"
DEFAULT = EXAMPLES / "default-scheduler.yaml"


@pytest.fixture(scope="module")
def toleration_installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Installed from a copy: a build writes egg-info beside the sources."""
    source = tmp_path_factory.mktemp("toleration") / "preemption-toleration"
    shutil.copytree(PACKAGE, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    with installed_package(source, "kubesched-preemption-toleration"):
        yield


def pods_of(config: Path) -> dict[str, dict[str, Any]]:
    from kubesched.sim.run.simulate import simulate
    from kubesched.sim.scenario.reading import load_scenario

    result = asyncio.run(simulate(load_config(config).profiles, load_scenario(SCENARIO)))
    return {str(p["name"]): p for p in result.pods}


def test_simulate_spares_the_tolerant_pods_from_the_web_pod_not_from_the_urgent_one(
    toleration_installed: None,
) -> None:
    default = pods_of(DEFAULT)
    # DefaultPreemption: web-0 preempts a training pod, urgent-0 the other one
    assert {n: bool(p["node"]) for n, p in default.items()} == {
        "train-0": False,
        "train-1": False,
        "web-0": True,
        "urgent-0": True,
    }
    tolerant = pods_of(TOLERATION)
    # PreemptionToleration: web-0 (5000 < 10000) finds no victim; urgent-0 (20000) preempts one
    placed = {n for n, p in tolerant.items() if p["node"]}
    assert "urgent-0" in placed and "web-0" not in placed
    assert len(placed & {"train-0", "train-1"}) == 1
    reason = str(tolerant["web-0"]["message"])
    assert "No victims found on node node-a for preemptor pod web-0" in reason
    assert "No victims found on node node-b for preemptor pod web-0" in reason


def test_compare_shows_the_difference(toleration_installed: None) -> None:
    metrics = compare_metrics(SCENARIO, DEFAULT, TOLERATION)
    # both end with two pods placed, but not the same two: web-0 (1 CPU) and urgent-0 (2) by
    # default, urgent-0 and a training pod (2 each) with the toleration
    assert metrics["default-scheduler"]["scheduled"] == metrics["preemption-toleration-scheduler"]["scheduled"] == 2
    assert metrics["default-scheduler"]["allocation:cpu"] == 75
    assert metrics["preemption-toleration-scheduler"]["allocation:cpu"] == 100
