"""kubesched bench's workload files: upstream scheduler_perf's format read, params put in, and
every mistake refused with a message naming the file, the workload and the field."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched.bench.errors import WorkloadError
from kubesched.bench.model import (
    Barrier,
    Churn,
    CreateNamespaces,
    CreateNodes,
    CreatePods,
    Sleep,
    StartCollecting,
    StopCollecting,
)
from kubesched.bench.templates import read_template
from kubesched.bench.workload import (
    DEFAULT_POD_TEMPLATE,
    DEFAULT_WORKLOAD,
    SHIPPED_DIR,
    find_workloads,
    load_workloads,
    parse_workloads,
    shipped_files,
    shipped_workloads,
)
from kubesched.errors import KubeschedError

BASIC: list[dict[str, Any]] = [
    {
        "name": "Basic",
        "featureGates": {"GenericWorkload": True},
        "workloadTemplate": [
            {"opcode": "createNodes", "countParam": "$nodes"},
            {"opcode": "createPods", "countParam": "$init"},
            {"opcode": "createPods", "count": "$measured", "collectMetrics": True},
        ],
        "workloads": [
            {"name": "small", "params": {"nodes": 3, "init": 2, "measured": 4}, "labels": ["short"]},
            {
                "name": "big",
                "params": {"nodes": 30, "init": 20, "measured": 40},
                "featureGates": {"GenericWorkload": False, "OpportunisticBatching": False},
                "threshold": 100,
            },
        ],
    }
]


def _case(*ops: dict[str, Any], params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    return [{"name": "C", "workloadTemplate": list(ops), "workloads": [{"name": "w", "params": params or {}}]}]


MEASURE = {"opcode": "createPods", "count": 1, "collectMetrics": True}


def _error(data: Any, tmp_path: Path) -> str:
    with pytest.raises(WorkloadError) as err:
        parse_workloads(data, tmp_path, "mine.yaml")
    return str(err.value)


def test_params_are_put_into_each_workload_and_gates_merge_over_the_case(tmp_path: Path) -> None:
    small, big = parse_workloads(BASIC, tmp_path, "basic.yaml")
    assert (small.name, big.name) == ("Basic/small", "Basic/big")
    assert (small.nodes, small.init_pods, small.measured_pods) == (3, 2, 4)
    assert (big.nodes, big.init_pods, big.measured_pods) == (30, 20, 40)
    assert small.feature_gates == {"GenericWorkload": True}
    assert big.feature_gates == {"GenericWorkload": False, "OpportunisticBatching": False}
    assert (small.threshold, big.threshold) == (None, 100.0)
    assert small.labels == ("short",)
    nodes, init, measured = small.ops
    assert isinstance(nodes, CreateNodes) and nodes.count == 3
    # Upstream's default namespace of a createPods op: namespace-<its index>.
    assert isinstance(init, CreatePods) and (init.namespace, init.collect_metrics) == ("namespace-1", False)
    assert isinstance(measured, CreatePods) and (measured.namespace, measured.collect_metrics) == ("namespace-2", True)
    assert init.template == DEFAULT_POD_TEMPLATE


def test_every_op_kubesched_runs_is_read(tmp_path: Path) -> None:
    (tmp_path / "pod.yaml").write_text("kind: Pod\nmetadata: {generateName: p-}\nspec: {containers: [{name: c}]}\n")
    data = _case(
        {
            "opcode": "createNodes",
            "count": 4,
            "labelNodePrepareStrategy": {"labelKey": "zone", "labelValues": ["a", "b"]},
        },
        {"opcode": "createNamespaces", "prefix": "ns", "countParam": "$ns"},
        {"opcode": "churn", "mode": "create", "templatePaths": ["pod.yaml"], "intervalMilliseconds": 250},
        {
            "opcode": "createPods",
            "count": 2,
            "namespace": "ns-0",
            "podTemplatePath": "pod.yaml",
            "skipWaitToCompletion": True,
        },
        {"opcode": "barrier", "namespaces": ["ns-0"], "stageRequirement": "Attempted"},
        {"opcode": "sleep", "durationParam": "$pause"},
        {"opcode": "startCollectingMetrics", "name": "window"},
        {"opcode": "createPods", "count": 3},
        {"opcode": "stopCollectingMetrics"},
        params={"ns": 2, "pause": "250ms"},
    )
    (w,) = parse_workloads(data, tmp_path, "all.yaml")
    nodes, namespaces, churn, skipped, barrier, sleep, start, measured, stop = w.ops
    assert nodes == CreateNodes(4, nodes.template, ("zone", ("a", "b")), None)
    assert namespaces == CreateNamespaces("ns", 2)
    assert churn == Churn((tmp_path / "pod.yaml",), 0.25)
    assert isinstance(skipped, CreatePods) and skipped.skip_wait and skipped.template == tmp_path / "pod.yaml"
    assert barrier == Barrier(("ns-0",), "Attempted")
    assert sleep == Sleep(0.25)
    assert start == StartCollecting("window", ())
    assert isinstance(measured, CreatePods) and not measured.collect_metrics
    assert stop == StopCollecting()
    assert (w.init_pods, w.measured_pods) == (2, 3)


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({"not": "a list"}, "mine.yaml: expected a list of test cases, got dict"),
        (
            [{"workloadTemplate": [MEASURE], "workloads": [{"name": "w"}]}],
            "mine.yaml: [0].name: a test case needs a name",
        ),
        (
            _case({"opcode": "createNodez", "count": 1}, MEASURE),
            "C/w: workloadTemplate[0].opcode: unknown opcode 'createNodez'",
        ),
        (
            _case({"opcode": "createResourceClaims"}, MEASURE),
            "workloadTemplate[0].opcode: createResourceClaims is not run by kubesched bench",
        ),
        (
            _case({"opcode": "createNodes", "countParam": "$nodes"}, MEASURE),
            "C/w: workloadTemplate[0] (createNodes).countParam: parameter $nodes is not in the workload's params",
        ),
        (
            _case({"opcode": "createNodes", "countParam": 5}, MEASURE),
            "workloadTemplate[0] (createNodes).countParam: expected a parameter reference ($name), got 5",
        ),
        (
            _case({"opcode": "createNodes", "count": "five"}, MEASURE),
            "workloadTemplate[0] (createNodes).count: expected an int, got 'five'",
        ),
        (
            _case({"opcode": "createNodes", "count": 1, "nodeCount": 2}, MEASURE),
            "workloadTemplate[0] (createNodes).nodeCount: unknown field (fields of createNodes:",
        ),
        (_case({"opcode": "createNodes"}, MEASURE), "workloadTemplate[0] (createNodes).count: required"),
        (
            _case({"opcode": "createPods", "count": 1, "collectMetrics": True, "skipWaitToCompletion": True}),
            "workloadTemplate[0] (createPods): collectMetrics and skipWaitToCompletion cannot both be true",
        ),
        (
            _case({"opcode": "createPods", "count": 1, "podTemplatePath": "missing.yaml"}, MEASURE),
            "workloadTemplate[0] (createPods).podTemplatePath: no such template file: missing.yaml",
        ),
        (
            _case({"opcode": "churn", "mode": "recreate", "templatePaths": ["x.yaml"]}, MEASURE),
            "workloadTemplate[0] (churn).number: must be positive in recreate mode (at least 0 in create), got 0",
        ),
        (_case({"opcode": "sleep", "duration": "soon"}, MEASURE), "workloadTemplate[0] (sleep).duration:"),
        (_case({"opcode": "createPods", "count": 1}), "C/w: nothing is measured"),
        (
            _case({"opcode": "stopCollectingMetrics"}, MEASURE),
            "workloadTemplate[0]: stopCollectingMetrics without a start",
        ),
        (
            [{"name": "C", "workloadTemplate": [MEASURE], "workloads": [{"name": "w", "featureGates": {"X": "yes"}}]}],
            "C.workloads[0].featureGates: expected a mapping of gate names to true or false",
        ),
        (
            [{"name": "C", "workloadTemplate": [MEASURE], "workloads": [{"name": "w", "parms": {}}]}],
            "C.workloads[0].parms: unknown field",
        ),
        (
            [{"name": "C", "workloadTemplate": [MEASURE], "workloads": [{"name": "w"}, {"name": "w"}]}],
            "mine.yaml: C/w: defined twice",
        ),
    ],
)
def test_a_mistake_is_refused_naming_its_field(data: Any, expected: str, tmp_path: Path) -> None:
    assert expected in _error(data, tmp_path)


def test_the_error_is_a_kubesched_error_and_a_bad_file_is_named(tmp_path: Path) -> None:
    bad = tmp_path / "broken.yaml"
    bad.write_text("- name: [unclosed\n")
    with pytest.raises(KubeschedError, match=r"broken.yaml: not valid YAML"):
        load_workloads(bad)
    with pytest.raises(WorkloadError, match=r"cannot read"):
        load_workloads(tmp_path / "absent.yaml")
    with pytest.raises(WorkloadError, match=r"no workload file or shipped workload 'Nope'"):
        find_workloads("Nope")


def test_every_shipped_workload_parses_and_measures_something() -> None:
    files = shipped_files()
    assert {f.name for f in files} >= {"misc.yaml", "affinity.yaml", "topology_spreading.yaml"}
    shipped = shipped_workloads()
    assert sum(len(load_workloads(f)) for f in files) == len(shipped)
    assert DEFAULT_WORKLOAD in shipped
    for w in shipped.values():
        assert w.measured_pods > 0, w.name
        for op in w.ops:
            if isinstance(op, CreatePods | CreateNodes):
                assert op.template.is_file() and op.template.is_relative_to(SHIPPED_DIR), w.name


def test_workloads_are_found_by_name_case_file_and_file_entry() -> None:
    assert [w.name for w in find_workloads("SchedulingBasic/5Nodes")] == ["SchedulingBasic/5Nodes"]
    assert "SchedulingBasic/500Nodes" in [w.name for w in find_workloads("SchedulingBasic")]
    misc = str(SHIPPED_DIR / "misc.yaml")
    assert "PreemptionAsync/5000Nodes" in [w.name for w in find_workloads(misc)]
    assert [w.name for w in find_workloads(misc + ":PreemptionBasic/5Nodes")] == ["PreemptionBasic/5Nodes"]


def test_templates_are_one_object_of_the_kind_asked_for(tmp_path: Path) -> None:
    node = tmp_path / "node.yaml"
    node.write_text(yaml.safe_dump({"kind": "Node", "metadata": {"generateName": "n-"}}))
    assert read_template(node, "Node")["apiVersion"] == "v1"
    with pytest.raises(WorkloadError, match=r"expected a Pod template, got kind 'Node'"):
        read_template(node, "Pod")


def test_the_wheel_ships_every_workload_file_and_template() -> None:
    """pyproject's package-data globs cover each file under kubesched/bench/workloads."""
    import tomllib

    root = Path(__file__).resolve().parents[2]
    globs = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["kubesched"]
    shipped = {p for g in globs for p in (root / "kubesched").glob(g)}
    files = {p for p in SHIPPED_DIR.rglob("*") if p.is_file()}
    assert len(files) > 10
    assert files - shipped == set()
