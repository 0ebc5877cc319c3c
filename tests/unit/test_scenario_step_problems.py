"""A step that cannot be carried out is reported and the run goes on: a Steps ``patch`` is checked
as the scenario loader checks a created object of its kind, a pod created twice is skipped, and
a Steps document counts toward a scenario's object limit."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from kubesched.cli.main import main
from kubesched.sim.scenario.reading import MAX_OBJECTS, ScenarioError, parse_scenario

NODE = """apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: p0}
spec: {containers: [{name: c, image: i, resources: {requests: {cpu: "1"}}}]}
---
kind: Steps
apiVersion: kubesched.io/v1
steps:
"""
LATE_POD = """- at: 30s
  create:
  - {apiVersion: v1, kind: Pod, metadata: {name: late}, spec: {containers: [{name: c, image: i}]}}
"""


def _simulate(tmp_path: Path, capsys: pytest.CaptureFixture[str], steps: str, *flags: str) -> tuple[str, str]:
    path = tmp_path / "s.yaml"
    path.write_text(NODE + steps + LATE_POD)
    assert main(["simulate", "--scenario", str(path), "--no-progress", *flags]) == 0
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return out, err


def test_a_patch_the_loader_would_refuse_is_reported_and_the_run_goes_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    steps = "- at: 10s\n  patch: [{kind: Node, name: n1, patch: {status: {allocatable: {cpu: lots}}}}]\n"
    out, err = _simulate(tmp_path, capsys, steps, "--output", "json")
    report = json.loads(out)
    (problem,) = report["summary"]["stepProblems"]
    assert {k: problem[k] for k in ("step", "at", "action", "object")} == {
        "step": 1,
        "at": 10.0,
        "action": "patch",
        "object": "Node n1",
    }
    assert problem["reason"].startswith("quantities must match the regular expression")
    events = [m["event"] for m in report["summary"]["timeline"]]
    assert events[1] == "step 1: patch Node n1; patch Node n1 refused"
    # The node keeps its 4 cpus, and the later step's pod is placed on it.
    pods = {p["name"]: p for p in report["pods"]}
    assert pods["late"]["node"] == "n1"
    assert report["nodes"][0]["allocatable"]["cpu"] == 4000
    assert "kubesched: note: step 1 at 10s: patch Node n1 refused: quantities must match" in err


def test_a_pod_created_twice_is_reported_and_the_run_keeps_its_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    steps = "- at: 20s\n  create:\n  - {apiVersion: v1, kind: Pod, metadata: {name: p0}, spec: {containers: [{name: c, image: i}]}}\n"
    out, err = _simulate(tmp_path, capsys, steps)
    assert re.search(r'step 1 at 20s +│ create Pod default/p0 refused: pods "p0" already exists', out)
    assert "step 1: create 1; create Pod default/p0 refused" in out
    assert "default/late" in out  # the report has the later step's pod
    assert 'kubesched: note: step 1 at 20s: create Pod default/p0 refused: pods "p0" already exists' in err


def test_a_valid_patch_is_still_applied(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    steps = "- at: 10s\n  patch: [{kind: Node, name: n1, patch: {spec: {unschedulable: true}}}]\n"
    out, _ = _simulate(tmp_path, capsys, steps, "--output", "json")
    report = json.loads(out)
    assert "stepProblems" not in report["summary"]
    assert {p["name"]: p["phase"] for p in report["pods"]}["late"] == "Unschedulable"


def test_steps_patches_and_deletes_count_toward_the_object_limit() -> None:
    steps = [{"patch": [{"kind": "Node", "name": "n1", "patch": {}}]} for _ in range(MAX_OBJECTS // 2 + 1)]
    with pytest.raises(ScenarioError, match=f"s.yaml: {MAX_OBJECTS + 2} objects, more than the limit of {MAX_OBJECTS}"):
        parse_scenario([{"kind": "Steps", "steps": steps}], "s.yaml")


def test_a_step_that_creates_nothing_has_no_scenario_of_its_own() -> None:
    sc = parse_scenario([{"kind": "Steps", "steps": [{"delete": [{"kind": "Node", "name": "n1"}]}, {"create": []}]}])
    assert [s.scenario for s in sc.steps] == [None, None]
