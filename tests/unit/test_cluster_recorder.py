"""The recorder of ``sim serve --record``: what it writes of the objects the importer saw, and
when, as a scenario the reader takes back."""

from __future__ import annotations

from typing import Any

import yaml

from kubesched.sim.scenario.reading import load_scenario
from kubesched.sim.scenario.recording import OBSERVED_NODE, Recorder

Obj = dict[str, Any]


class Wall:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def node(name: str) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"}, "conditions": [{"type": "Ready"}]},
    }


def pod(name: str, on: str | None = None, phase: str = "Pending") -> Obj:
    spec: Obj = {"containers": [{"name": "c", "image": "x"}]}
    if on:
        spec["nodeName"] = on
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "default",
            "creationTimestamp": "2026-01-01T00:00:00Z",
            "annotations": {"kubesched.io/filter-result": "{}", "team": "x"},
        },
        "spec": spec,
        "status": {"phase": phase},
    }


def test_the_start_is_plain_documents_and_changes_are_timed_steps(tmp_path: Any) -> None:
    wall = Wall()
    rec = Recorder(wall)
    rec.observe("ADDED", "Node", node("n1"))
    rec.observe("ADDED", "Pod", pod("old", on="n1"))
    rec.observe("ADDED", "Pod", pod("waiting"))
    rec.begin()
    wall.t += 1.5
    rec.observe("ADDED", "Pod", pod("new"))
    wall.t += 0.25
    rec.observe("MODIFIED", "Pod", pod("new", on="n1"))
    wall.t += 2
    rec.observe("DELETED", "Pod", pod("old", on="n1"))
    rec.observe("ADDED", "Node", node("n2"))
    wall.t += 1
    rec.observe("MODIFIED", "Pod", pod("new", on="n1", phase="Succeeded"))
    path = tmp_path / "rec.yaml"
    assert rec.write(path) == 4
    docs = list(yaml.safe_load_all(path.read_text()))
    kinds = [(d["kind"], (d.get("metadata") or {}).get("name")) for d in docs]
    assert kinds == [("Node", "n1"), ("Pod", "old"), ("Pod", "waiting"), ("Steps", None)]
    old = docs[1]
    assert old["spec"]["nodeName"] == "n1"  # running at the start
    assert old["metadata"]["annotations"] == {"team": "x", OBSERVED_NODE: "n1", "kubesched.io/observed-at": "0"}
    assert "status" not in old and "creationTimestamp" not in old["metadata"]
    assert "nodeName" not in docs[2]["spec"]
    assert docs[0]["status"] == {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"}}
    steps = docs[-1]["steps"]
    assert [s["at"] for s in steps] == [1.5, 3.75]
    (new,) = steps[0]["create"]
    assert new["metadata"]["name"] == "new" and "nodeName" not in new["spec"]  # the replay's scheduler places it
    assert new["metadata"]["annotations"][OBSERVED_NODE] == "n1"
    assert new["metadata"]["annotations"]["kubesched.io/lifetime"] == "3s"  # bound at 1.75, finished at 4.75
    assert steps[1]["delete"] == [{"kind": "Pod", "name": "old", "namespace": "default"}]
    assert steps[1]["create"][0]["metadata"]["name"] == "n2"
    scenario = load_scenario(path)
    assert [p["metadata"]["name"] for p in scenario.running_pods] == ["old"]
    assert [s.at for s in scenario.steps] == [1.5, 3.75]


def test_a_pod_made_again_under_its_name_is_two_lives(tmp_path: Any) -> None:
    wall = Wall()
    rec = Recorder(wall)
    rec.observe("ADDED", "Node", node("n1"))
    rec.begin()
    wall.t += 1
    rec.observe("ADDED", "Pod", pod("db-0", on="n1"))
    wall.t += 1
    rec.observe("DELETED", "Pod", pod("db-0", on="n1"))
    wall.t += 1
    rec.observe("ADDED", "Pod", pod("db-0"))
    path = tmp_path / "again.yaml"
    rec.write(path)
    scenario = load_scenario(path)
    assert [(s.at, [o["metadata"]["name"] for o in s.create], [r.name for r in s.delete]) for s in scenario.steps] == [
        (1.0, ["db-0"], []),
        (2.0, [], ["db-0"]),
        (3.0, ["db-0"], []),
    ]
    first, _, second = scenario.steps
    assert first.create[0]["spec"]["nodeName"] == "n1"
    assert "nodeName" not in second.create[0]["spec"]


def test_a_nodes_changes_are_patch_steps_that_rebuild_what_the_scheduler_read(tmp_path: Any) -> None:
    from kubesched.sim.apiserver.patching import merge_patch

    wall = Wall()
    rec = Recorder(wall)
    first = node("n1")
    first["metadata"]["labels"] = {"zone": "a", "old": "x"}
    rec.observe("ADDED", "Node", first)
    rec.begin()
    wall.t += 5
    cordoned = yaml.safe_load(yaml.safe_dump(first))
    cordoned["spec"] = {"unschedulable": True, "taints": [{"key": "k", "effect": "NoSchedule"}]}
    cordoned["status"]["conditions"] = [{"type": "Ready", "status": "False"}]  # not what a scheduler reads
    rec.observe("MODIFIED", "Node", cordoned)
    wall.t += 5
    relabelled = yaml.safe_load(yaml.safe_dump(cordoned))
    relabelled["metadata"]["labels"] = {"zone": "b"}
    relabelled["spec"] = {}
    rec.observe("MODIFIED", "Node", relabelled)
    rec.observe("MODIFIED", "Node", relabelled)  # no change: no step
    path = tmp_path / "rec.yaml"
    rec.write(path)
    docs = list(yaml.safe_load_all(path.read_text()))
    steps = docs[-1]["steps"]
    assert [s["at"] for s in steps] == [5.0, 10.0]
    assert steps[0]["patch"] == [
        {
            "kind": "Node",
            "name": "n1",
            "patch": {"spec": {"taints": [{"key": "k", "effect": "NoSchedule"}], "unschedulable": True}},
        }
    ]
    start = docs[0]
    for step in steps:
        for p in step["patch"]:
            start = merge_patch(start, p["patch"])
    assert start["metadata"]["labels"] == {"zone": "b"}
    assert start["spec"] == {"taints": [], "unschedulable": False}
    assert load_scenario(path).steps  # the reader takes the patches back
