"""Scenarios in time: steps that create, patch and delete at simulated times, pods with a
lifetime, and the timeline ``simulate`` reports."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kubesched.config import load_config
from kubesched.sim.run.simulate import simulate
from kubesched.sim.scenario.openb import TRACE_ABSENT
from kubesched.sim.scenario.reading import ScenarioError, load_scenario, parse_scenario

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = ROOT / "config" / "scenarios" / "timeline.yaml"


def test_steps_and_lifetimes_change_the_cluster_over_time() -> None:
    result = asyncio.run(simulate(load_config(None).profiles, load_scenario(SCENARIO)))
    pods = {p["name"]: p for p in result.pods}
    assert pods["short"]["phase"] == "Completed" and pods["short"]["message"] == "ran on n1 from 0s to 60s"
    # It waited for room until `short` ended at 60s.
    assert pods["waits"]["node"] == "n1"
    assert pods["late"]["phase"] == "Unschedulable" and pods["late"]["message"] == "deleted at 120s by step 2"
    timeline = result.summary["timeline"]
    assert [(m["time"], m["running"], m["pending"]) for m in timeline] == [
        (0, 1, 1),
        (30, 2, 1),
        (60, 2, 0),
        (120, 1, 0),
    ]
    assert timeline[1]["event"] == "step 1: create 2"
    assert timeline[3]["cpuPercent"] == 66.7
    # The patch made n2 unschedulable.
    assert result.store.get("Node", None, "n2")["spec"]["unschedulable"] is True
    assert result.summary["completed"] == 1


def test_the_timeline_is_printed_and_in_the_json() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "kubesched", "simulate", "--scenario", str(SCENARIO)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout
    assert "Timeline" in out and "default/short ended on n1" in out
    report = json.loads(
        subprocess.run(
            [sys.executable, "-m", "kubesched", "simulate", "--scenario", str(SCENARIO), "--output", "json"],
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
        ).stdout
    )
    assert len(report["summary"]["timeline"]) == 4


def test_a_scenario_without_time_has_no_timeline() -> None:
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "n"},
        "status": {"allocatable": {"cpu": "1", "pods": "5"}},
    }
    result = asyncio.run(simulate(load_config(None).profiles, parse_scenario([node])))
    assert "timeline" not in result.summary


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ({"kind": "Steps", "steps": [{"at": "soon"}]}, "document 1.steps[0].at: Invalid value: 'soon'"),
        ({"kind": "Steps", "steps": [{"at": "-5s"}]}, "must not be negative"),
        (
            {"kind": "Steps", "steps": [{"delete": [{"name": "x"}]}]},
            "steps[0].delete[0]: Required value: kind and name",
        ),
        ({"kind": "Steps", "steps": [{"when": 3}]}, "steps[0]: unknown field 'when'"),
        ({"kind": "Steps", "steps": [{"create": [{"kind": "Pod", "metadata": {"name": "p"}}]}]}, "spec"),
    ],
    ids=["bad-duration", "negative", "ref-without-kind", "unknown-field", "bad-object"],
)
def test_bad_steps_are_refused_naming_the_field(doc: dict[str, Any], message: str) -> None:
    with pytest.raises(ScenarioError, match=message.replace("[", r"\[").replace("]", r"\]")):
        parse_scenario([doc])


def test_a_bad_lifetime_is_refused() -> None:
    pod = {
        "kind": "Pod",
        "metadata": {"name": "p", "annotations": {"kubesched.io/lifetime": "forever"}},
        "spec": {"containers": [{"name": "c", "image": "x"}]},
    }
    with pytest.raises(ScenarioError, match="kubesched.io/lifetime"):
        parse_scenario([pod])


def test_an_openb_trace_replays_with_churn() -> None:
    from kubesched.sim.scenario.openb import load_openb, trace_dir

    if trace_dir() is None:
        pytest.skip(TRACE_ABSENT)
    scenario = load_openb("default", node_limit=60, pod_limit=120, churn=True)
    assert scenario.pending_pods == [] and scenario.steps
    assert all(not (step.at < prev.at) for prev, step in zip(scenario.steps, scenario.steps[1:]))
    result = asyncio.run(simulate(load_config(None).profiles, scenario, settings=None))
    phases = {p["phase"] for p in result.pods}
    assert "Completed" in phases  # pods ran their traced lifetime and left
    timeline = result.summary["timeline"]
    assert timeline[0]["event"] == "start"
    assert any("ended on" in m["event"] for m in timeline)
    assert [m["time"] for m in timeline] == sorted(m["time"] for m in timeline)
