"""``simulate``'s output as a person reads it: the summary and the pods without a node first,
``--only`` to list one kind of pod, and every attempt of a pod kept (its result history)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from kubesched.scheduler.results import HISTORY_ANNOTATION, HISTORY_LIMIT, PodResult

NODE = """\
apiVersion: v1
kind: Node
metadata: {name: n1}
status:
  allocatable: {cpu: "1", memory: 8Gi, pods: "10"}
"""
POD = """\
apiVersion: v1
kind: Pod
metadata: {name: %s}
spec:
  %s
  containers: [{name: c, image: nginx, resources: {requests: {cpu: "%s"}}}]
"""


def simulate(tmp_path: Path, docs: list[str], *args: str) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "scenario.yaml"
    path.write_text("---\n".join(docs))
    return subprocess.run(
        [sys.executable, "-m", "kubesched", "simulate", "--scenario", str(path), *args],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )


def crowded(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return simulate(
        tmp_path,
        [
            NODE,
            POD % ("fits", "priority: 0", "600m"),
            POD % ("too-big", "priority: 0", "2"),
            POD % ("late", "priority: 0", "600m"),
        ],
        *args,
    )


def test_the_table_starts_with_the_summary_then_the_pods_without_a_node(tmp_path: Path) -> None:
    out = crowded(tmp_path).stdout
    summary, not_scheduled, pods, nodes = (out.index(t) for t in ("Summary", "Not scheduled", "Pods", "Nodes"))
    assert summary < not_scheduled < pods < nodes
    section = out[not_scheduled:pods]
    assert "default/too-big" in section and "default/late" in section and "default/fits" not in section
    assert "Insufficient cpu" in section


def test_only_lists_one_kind_of_pod(tmp_path: Path) -> None:
    listed = {
        p["name"] for p in json.loads(crowded(tmp_path, "--output", "json", "--only", "unschedulable").stdout)["pods"]
    }
    assert listed == {"too-big", "late"}
    report = json.loads(crowded(tmp_path, "--output", "json", "--only", "scheduled").stdout)
    assert {p["name"] for p in report["pods"]} == {"fits"}
    assert report["summary"]["unschedulable"] == 2  # the summary still counts every pod
    table = crowded(tmp_path, "--only", "scheduled").stdout
    pods = table[table.index("Pods") :]
    assert "default/fits" in pods and "default/late" not in pods


def test_every_attempt_of_a_preemptor_is_kept(tmp_path: Path) -> None:
    docs = [
        NODE,
        POD.replace("spec:\n", "spec:\n  nodeName: n1\n") % ("victim", "priority: 0", "1"),
        POD % ("preemptor", "priority: 100", "1"),
    ]
    report = json.loads(simulate(tmp_path, docs, "--output", "json").stdout)
    pod: dict[str, Any] = next(p for p in report["pods"] if p["name"] == "preemptor")
    assert pod["node"] == "n1"
    first, last = pod["history"]
    assert (first["attempt"], first["phase"], first["node"]) == (1, "Unschedulable", None)
    # DynamicResources runs first at PostFilter (as upstream 1.34) and has nothing to deallocate.
    assert first["postFilter"] == {"DynamicResources": "Unschedulable", "DefaultPreemption": "n1"}
    assert first["filter"]["n1"]["NodeResourcesFit"] == "Insufficient cpu"
    assert (last["attempt"], last["node"]) == (2, "n1")
    assert last["filter"]["n1"]["NodeResourcesFit"] == "passed"


def test_the_history_annotation_holds_every_attempt_up_to_the_limit() -> None:
    rec = PodResult("default", "p", "default-scheduler")
    for attempt in range(1, HISTORY_LIMIT + 4):
        rec.reset_attempt()
        rec.attempts = attempt
        rec.phase = "Unschedulable"
        rec.filter = {"n1": {"NodeResourcesFit": f"try {attempt}"}}
    history = json.loads(rec.annotations()[HISTORY_ANNOTATION])
    assert len(history) == HISTORY_LIMIT + 1  # the kept ones and the last attempt
    assert history[-1]["attempt"] == HISTORY_LIMIT + 3
    assert [h["attempt"] for h in history] == list(range(3, HISTORY_LIMIT + 4))
    assert history[-1]["filter"] == {"n1": {"NodeResourcesFit": f"try {HISTORY_LIMIT + 3}"}}


def test_a_scenario_where_no_pod_gets_an_attempt_says_so(tmp_path: Path) -> None:
    """Every pod names a scheduler no profile runs: no rate is printed (nothing was attempted),
    and the pods are listed under "Not scheduled" with why."""
    docs = [NODE, POD % ("a", "schedulerName: nobody", "100m"), POD % ("b", "schedulerName: nobody", "100m")]
    out = simulate(tmp_path, docs).stdout
    assert "- (no attempt)" in out
    section = out[out.index("Not scheduled") : out.index("Pods")]
    assert "default/a" in section and "no profile has schedulerName 'nobody'" in section
    report = json.loads(simulate(tmp_path, docs, "--output", "json").stdout)
    assert report["summary"]["podsPerSecond"] is None and report["summary"]["attempts"] == 0
