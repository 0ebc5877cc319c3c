"""The scenario loader (``kubesched.sim.scenario.reading``): documents, pods, errors and admission."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched.sim.scenario.reading import ScenarioError, admit_pod, load_scenario, parse_scenario
from kubesched.testing import make_node, make_pod

REPO = Path(__file__).resolve().parents[2]


def priority_class(name: str, value: Any, global_default: bool = False, policy: str | None = None) -> dict[str, Any]:
    pc: dict[str, Any] = {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name},
        "value": value,
    }
    if global_default:
        pc["globalDefault"] = True
    if policy:
        pc["preemptionPolicy"] = policy
    return pc


def namespace(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}


def _pod_without(field: str) -> dict[str, Any]:
    pod = make_pod("p").obj()
    if field == "containers":
        pod["spec"]["containers"] = []
    elif field == "spec":
        del pod["spec"]
    else:
        del pod["metadata"][field]
    return pod


def names(objs: list[dict[str, Any]]) -> list[str]:
    return [o["metadata"]["name"] for o in objs]


# --- documents ------------------------------------------------------------------------------------


def test_kinds_are_sorted_into_their_lists_in_document_order() -> None:
    docs = [
        namespace("team-a"),
        make_node("n2").capacity(cpu="4").obj(),
        priority_class("high", 1000),
        make_pod("b").obj(),
        make_node("n1").capacity(cpu="4").obj(),
        make_pod("a", "team-a").obj(),
        make_pod("c").obj(),
    ]
    sc = parse_scenario(docs, "s.yaml")
    assert names(sc.nodes) == ["n2", "n1"]
    assert names(sc.namespaces) == ["team-a"]
    assert names(sc.priority_classes) == ["high"]
    assert names(sc.pending_pods) == ["b", "a", "c"]
    assert sc.running_pods == []
    assert sc.source == "s.yaml"


def test_kind_list_is_flattened_in_place_and_nested_lists_too() -> None:
    docs = [
        make_pod("first").obj(),
        {
            "apiVersion": "v1",
            "kind": "List",
            "items": [
                make_node("n1").obj(),
                make_pod("second").obj(),
                {"kind": "List", "items": [make_pod("third").obj()]},
            ],
        },
        make_pod("fourth").obj(),
    ]
    sc = parse_scenario(docs)
    assert names(sc.nodes) == ["n1"]
    assert names(sc.pending_pods) == ["first", "second", "third", "fourth"]


def test_empty_documents_are_skipped() -> None:
    sc = parse_scenario([None, make_pod("p").obj(), None])
    assert names(sc.pending_pods) == ["p"]


def test_creation_timestamps_follow_document_order() -> None:
    sc = parse_scenario([make_pod(f"p{i}").obj() for i in range(5)])
    stamps = [p["metadata"]["creationTimestamp"] for p in sc.pending_pods]
    # RFC 3339 UTC strings of one fixed format compare in time order.
    assert stamps == sorted(stamps)
    assert len(set(stamps)) == len(stamps)
    assert stamps[0].startswith("2024-01-01T00:00:")


def test_an_explicit_creation_timestamp_is_kept() -> None:
    sc = parse_scenario([make_pod("p").created("2020-05-05T05:05:05Z").obj()])
    assert sc.pending_pods[0]["metadata"]["creationTimestamp"] == "2020-05-05T05:05:05Z"


def test_the_input_documents_are_not_modified() -> None:
    doc = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "image": "x"}]},
    }
    before = copy.deepcopy(doc)
    sc = parse_scenario([doc])
    assert doc == before
    assert sc.pending_pods[0]["metadata"]["namespace"] == "default"


# --- running vs pending ---------------------------------------------------------------------------


def test_pods_with_node_name_are_running_the_others_pending() -> None:
    bare = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "bare-running"},
        "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "x"}]},
    }
    bare_pending = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "bare-pending"},
        "spec": {"containers": [{"name": "c", "image": "x"}]},
    }
    sc = parse_scenario([make_pod("run").node("n1").obj(), bare, bare_pending, make_pod("wait").obj()])
    assert names(sc.running_pods) == ["run", "bare-running"]
    assert names(sc.pending_pods) == ["bare-pending", "wait"]
    assert [p["status"]["phase"] for p in sc.running_pods] == ["Running", "Running"]
    assert [p["status"]["phase"] for p in sc.pending_pods] == ["Pending", "Pending"]
    assert names(sc.pods) == ["run", "bare-running", "bare-pending", "wait"]


def test_pods_default_to_the_default_namespace() -> None:
    sc = parse_scenario([_pod_without("namespace")])
    assert sc.pending_pods[0]["metadata"]["namespace"] == "default"


# --- errors ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("docs", "expected"),
    [
        ([make_pod("p").obj(), make_pod("p").obj()], "s.yaml: document 2: duplicate Pod default/p"),
        ([_pod_without("namespace"), make_pod("p", "default").obj()], "document 2: duplicate Pod default/p"),
        ([make_node("n").obj(), make_node("n").obj()], "document 2: duplicate Node n"),
        ([priority_class("x", 1), priority_class("x", 2)], "document 2: duplicate PriorityClass x"),
        ([namespace("a"), {"kind": "List", "items": [namespace("a")]}], "document 2.items[0]: duplicate Namespace a"),
    ],
    ids=[
        "pod-twice",
        "implicit-and-explicit-default-namespace",
        "node-twice",
        "priority-class-twice",
        "namespace-in-list",
    ],
)
def test_duplicates_are_refused(docs: list[dict[str, Any]], expected: str) -> None:
    with pytest.raises(ScenarioError) as exc:
        parse_scenario(docs, "s.yaml")
    assert expected in str(exc.value)


@pytest.mark.parametrize(
    "docs",
    [
        [make_pod("p", "a").obj(), make_pod("p", "b").obj()],
        [make_node("x").obj(), make_pod("x").obj(), priority_class("x", 1), namespace("x")],
    ],
    ids=["same-pod-name-other-namespace", "same-name-other-kinds"],
)
def test_same_name_is_fine_in_another_namespace_or_kind(docs: list[dict[str, Any]]) -> None:
    sc = parse_scenario(docs)
    assert len(sc.nodes) + len(sc.pods) + len(sc.priority_classes) + len(sc.namespaces) == len(docs)


@pytest.mark.parametrize(
    ("docs", "expected"),
    [
        (
            [{"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "web"}}],
            "s.yaml: document 1.kind: 'CronJob' is not supported in scenarios; use one of Node, Pod, PriorityClass, Namespace",
        ),
        (
            [{"kind": "List", "items": [make_node("n").obj(), {"kind": "CronJob", "metadata": {"name": "cm"}}]}],
            "document 1.items[1].kind: 'CronJob' is not supported",
        ),
        ([{"metadata": {"name": "nokind"}}], "document 1.kind: None is not supported"),
        (["just a string"], "document 1: expected a Kubernetes object (a mapping), got str"),
        ([_pod_without("name")], "document 1.metadata.name: Required value (Pod)"),
        (
            [make_node("n").obj(), _pod_without("containers")],
            "document 2.spec.containers: Required value: a pod needs at least one container",
        ),
        ([_pod_without("spec")], "document 1.spec: Required value (Pod p)"),
        (
            [{"kind": "Pod", "metadata": {"name": "p"}, "spec": ["not", "a", "mapping"]}],
            "document 1.spec: must be a mapping (Pod p)",
        ),
        ([make_node("n").set("status", "ready").obj()], "document 1.status: must be a mapping (Node n)"),
        ([priority_class("pc", "1000")], "document 1.value: Required value: an integer priority (pc)"),
        (
            [{"kind": "PriorityClass", "metadata": {"name": "pc"}}],
            "document 1.value: Required value: an integer priority (pc)",
        ),
    ],
    ids=[
        "unsupported-kind",
        "unsupported-kind-in-list",
        "missing-kind",
        "not-a-mapping",
        "pod-without-name",
        "pod-without-containers",
        "pod-without-spec",
        "pod-spec-not-mapping",
        "node-status-not-mapping",
        "priority-value-string",
        "priority-value-missing",
    ],
)
def test_malformed_documents_are_refused_with_their_location(docs: list[Any], expected: str) -> None:
    with pytest.raises(ScenarioError) as exc:
        parse_scenario(docs, "s.yaml")
    assert expected in str(exc.value)


def test_a_node_without_status_is_accepted() -> None:
    node = make_node("n").obj()
    del node["status"]
    assert names(parse_scenario([node]).nodes) == ["n"]


# --- load_scenario --------------------------------------------------------------------------------


def test_load_scenario_reads_multi_document_yaml(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(
        yaml.safe_dump_all(
            [make_node("n1").capacity(cpu="4").obj(), make_pod("p").obj(), None, make_pod("q").node("n1").obj()]
        )
    )
    sc = load_scenario(path)
    assert sc.source == str(path)
    assert names(sc.nodes) == ["n1"]
    assert names(sc.pending_pods) == ["p"]
    assert names(sc.running_pods) == ["q"]


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (None, "cannot read scenario: No such file or directory"),
        ("kind: Pod\n  metadata: [\n", "not valid YAML"),
        ("kind: CronJob\nmetadata: {name: d}\n", "document 1.kind: 'CronJob' is not supported"),
    ],
    ids=["missing-file", "invalid-yaml", "unsupported-kind"],
)
def test_load_scenario_errors_name_the_file(tmp_path: Path, content: str | None, expected: str) -> None:
    path = tmp_path / "s.yaml"
    if content is not None:
        path.write_text(content)
    with pytest.raises(ScenarioError) as exc:
        load_scenario(path)
    message = str(exc.value)
    assert message.startswith(f"{path}: ")
    assert expected in message


def test_the_shipped_demo_scenario_loads() -> None:
    sc = load_scenario(REPO / "config" / "scenarios" / "demo.yaml")
    assert len(sc.nodes) == 37
    assert len(sc.running_pods) == 27
    assert len(sc.pending_pods) == 362
    assert names(sc.priority_classes) == ["high", "low"]
    assert {p["spec"]["nodeName"] for p in sc.running_pods} <= set(names(sc.nodes))
    classes = {pc["metadata"]["name"]: pc for pc in sc.priority_classes}
    admitted = [admit_pod(copy.deepcopy(p), classes) for p in sc.pending_pods]
    by_name = {p["metadata"]["name"]: p for p in admitted}
    assert by_name["train-00"]["spec"]["priority"] == 1000
    assert by_name["batch-000"]["spec"]["priority"] == -10
    assert "priority" not in by_name["web-000"]["spec"]


# --- admission ------------------------------------------------------------------------------------


CLASSES = {
    "high": priority_class("high", 1000),
    "never": priority_class("never", 500, policy="Never"),
    "low": priority_class("low", -10),
}


@pytest.mark.parametrize(
    ("pod", "classes", "priority", "policy"),
    [
        (make_pod("p").set("spec.priorityClassName", "high"), CLASSES, 1000, None),
        (make_pod("p").set("spec.priorityClassName", "low"), CLASSES, -10, None),
        (make_pod("p").set("spec.priorityClassName", "never"), CLASSES, 500, "Never"),
        (
            make_pod("p").set("spec.priorityClassName", "never").preemption_policy("PreemptLowerPriority"),
            CLASSES,
            500,
            "PreemptLowerPriority",
        ),
        (make_pod("p"), CLASSES, None, None),
        (make_pod("p"), {**CLASSES, "dflt": priority_class("dflt", 7, global_default=True)}, 7, None),
        (
            make_pod("p").set("spec.priorityClassName", "low"),
            {**CLASSES, "dflt": priority_class("dflt", 7, global_default=True)},
            -10,
            None,
        ),
        (make_pod("p").set("spec.priorityClassName", "high").priority(1000), CLASSES, 1000, None),
    ],
    ids=[
        "class-high",
        "class-negative",
        "class-preemption-policy",
        "pod-policy-kept",
        "no-class-no-default",
        "global-default",
        "named-class-beats-global-default",
        "explicit-priority-kept",
    ],
)
def test_admit_pod_resolves_the_priority_class(
    pod: Any, classes: dict[str, dict[str, Any]], priority: int | None, policy: str | None
) -> None:
    out = admit_pod(pod.obj(), classes)
    assert out["spec"].get("priority") == priority
    assert out["spec"].get("preemptionPolicy") == policy


def test_admit_pod_refuses_a_missing_priority_class() -> None:
    pod = make_pod("p", "team-a").set("spec.priorityClassName", "urgent").obj()
    with pytest.raises(ScenarioError) as exc:
        admit_pod(pod, CLASSES)
    assert str(exc.value) == "pod team-a/p: spec.priorityClassName: no PriorityClass with name urgent was found"


def test_admit_pod_defaults_the_scheduler_name() -> None:
    pod = make_pod("p").obj()
    del pod["spec"]["schedulerName"]
    assert admit_pod(pod, {})["spec"]["schedulerName"] == "default-scheduler"
    custom = make_pod("q").scheduler("bin-packing-scheduler").obj()
    assert admit_pod(custom, {})["spec"]["schedulerName"] == "bin-packing-scheduler"
