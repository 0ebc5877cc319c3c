"""A fuzzer of what ``kubesched bench`` reads: workload files (every op, with params) and the
templates they name (pods, nodes, namespaces, ``createAny`` objects, churn), broken in one to
three places (wrong types, huge counts, missing and unknown fields, :mod:`fuzzing`), or made
hostile (alias bombs, deep nesting, long numbers, bytes that are not UTF-8).

Every one loads and runs, or ends in a :class:`WorkloadError` naming the file (and, for a field,
the workload and the field) — never another exception — within a deadline. Examples are
derandomized so a failure here reproduces everywhere; ``KUBESCHED_FUZZ_EXAMPLES`` runs more.
"""

from __future__ import annotations

import asyncio
import copy
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from fuzzing import field_names, fuzz_settings, hostile, mutated, spliced, values
from hypothesis import event, given
from hypothesis import strategies as st

from kubesched.bench.errors import WorkloadError
from kubesched.bench.ops import OpRunner
from kubesched.bench.runner import default_subject
from kubesched.bench.templates import read_any, read_template
from kubesched.bench.workload import load_workloads
from kubesched.framework.features import FeatureGates

#: seconds a file may take to be read (and refused), and a workload to run (at the most)
READ_DEADLINE = 5.0
RUN_TIMEOUT = 3.0

TEMPLATES: dict[str, Any] = {
    "pod.yaml": {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"generateName": "p-", "labels": {"app": "web", "index": "i{{.Index}}"}},
        "spec": {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "100m"}}}]},
    },
    "node.yaml": {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"generateName": "n-", "labels": {"zone": "a"}},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
    },
    "ns.yaml": {"apiVersion": "v1", "kind": "Namespace", "metadata": {"labels": {"team": "a"}}},
    "cm.yaml": {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "cm-{{.Index}}"},
        "data": {"count": "{{.Count}}", "v": "{{.V}}"},
    },
}
#: a case with every op kubesched runs, each field used once
WORKLOADS: list[Any] = [
    {
        "name": "Fuzz",
        "featureGates": {"GenericWorkload": True},
        "defaultPodTemplatePath": "pod.yaml",
        "workloadTemplate": [
            {
                "opcode": "createNodes",
                "countParam": "$nodes",
                "nodeTemplatePath": "node.yaml",
                "labelNodePrepareStrategy": {"labelKey": "zone", "labelValues": ["a", "b"]},
            },
            {"opcode": "createNamespaces", "prefix": "ns", "count": 2, "namespaceTemplatePath": "ns.yaml"},
            {"opcode": "createAny", "templatePath": "cm.yaml", "namespace": "ns-0", "count": 2,
             "templateParams": {"V": "$v"}},
            {"opcode": "churn", "mode": "recreate", "number": 1, "templatePaths": ["pod.yaml"],
             "intervalMilliseconds": 100},
            {"opcode": "createPods", "count": 2, "namespace": "ns-0", "skipWaitToCompletion": True},
            {"opcode": "barrier", "namespaces": ["ns-0"], "stageRequirement": "Attempted"},
            {"opcode": "sleep", "durationParam": "$pause"},
            {"opcode": "startCollectingMetrics", "name": "window", "labelSelector": {"app": "web"}},
            {"opcode": "createPods", "countParam": "$measured", "podTemplatePath": "pod.yaml"},
            {"opcode": "stopCollectingMetrics"},
            {"opcode": "deletePods", "namespace": "ns-0", "labelSelector": {"app": "web"},
             "deletePodsPerSecond": 50},
        ],
        "workloads": [
            {"name": "w", "params": {"nodes": 3, "measured": 3, "v": "x", "pause": "10ms"}, "labels": ["short"],
             "threshold": 1, "featureGates": {"OpportunisticBatching": False}},
        ],
    }
]  # fmt: skip

KEYS = field_names([WORKLOADS, *TEMPLATES.values()])
VALUES = values(
    KEYS,
    extra=["$nodes", "$nosuch", "$", "createPods", "createNodes", "Scheduled", "Attempted", "create", "recreate",
           "pod.yaml", "../pod.yaml", "/dev/zero", "nosuch.yaml", "cm.yaml", "{{.Index}}", "{{.Nope}}", "500ms",
           "-1s", "1e999", 10**6, 10**9, 2**63],
)  # fmt: skip


def _write(folder: Path, workloads: Any, templates: dict[str, Any]) -> Path:
    for name, doc in templates.items():
        data = doc if isinstance(doc, bytes) else yaml.safe_dump(doc, allow_unicode=True).encode()
        (folder / name).write_bytes(data)
    path = folder / "fuzz.yaml"
    data = workloads if isinstance(workloads, bytes) else yaml.safe_dump(workloads, allow_unicode=True).encode()
    path.write_bytes(data)
    return path


def _clear(err: WorkloadError, folder: Path) -> None:
    """A refusal names the file it is about, or the workload (and says why)."""
    message = str(err)
    assert message and "Traceback" not in message
    assert message.startswith(("fuzz.yaml: ", str(folder), "Fuzz/w: ")), message
    assert len(message.split(": ", 1)[-1]) > 3, message


def _load_and_run(workloads: Any, templates: dict[str, Any]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        path = _write(folder, workloads, templates)
        started = time.monotonic()
        try:
            loaded = load_workloads(path)
        except WorkloadError as err:
            assert time.monotonic() - started < READ_DEADLINE
            _clear(err, folder)
            event("refused")
            return
        assert time.monotonic() - started < READ_DEADLINE
        event("loaded")
        for w in loaded:
            gates = FeatureGates(w.feature_gates)
            cfg, profile = default_subject().load(gates)
            started = time.monotonic()
            try:
                asyncio.run(OpRunner(w, cfg, profile, gates, timeout=RUN_TIMEOUT).run())
                event("ran")
            except WorkloadError as err:
                _clear(err, folder)
                event("refused while running")
            # The run's timeout holds, with a margin for the scheduler's start and stop.
            assert time.monotonic() - started < RUN_TIMEOUT + 10


@fuzz_settings(60)
@given(mutated(WORKLOADS, VALUES, KEYS))
def test_any_workload_file_runs_or_is_refused_naming_its_field(workloads: Any) -> None:
    _load_and_run(workloads, TEMPLATES)


@fuzz_settings(60)
@given(st.sampled_from(sorted(TEMPLATES)).flatmap(lambda n: st.tuples(st.just(n), mutated(TEMPLATES[n], VALUES, KEYS))))
def test_any_template_runs_or_is_refused_naming_the_template(broken: tuple[str, Any]) -> None:
    name, doc = broken
    _load_and_run(WORKLOADS, {**TEMPLATES, name: doc})


_WORKLOAD_TEXT = yaml.safe_dump(WORKLOADS[0]["workloads"][0]["params"])
_TEMPLATE_TEXTS = {name: yaml.safe_dump(doc) for name, doc in TEMPLATES.items()}


@fuzz_settings(60)
@given(
    st.one_of(
        hostile(yaml.safe_dump(copy.deepcopy(TEMPLATES["pod.yaml"]))),
        spliced(st.sampled_from(sorted(_TEMPLATE_TEXTS.values()))),
    ),
    st.sampled_from(["pod", "any"]),
)
def test_a_hostile_template_is_refused_naming_it_in_time(data: bytes, reader: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "t.yaml"
        path.write_bytes(data)
        started = time.monotonic()
        try:
            read_template(path, "Pod", {"Index": 0, "Count": 1}) if reader == "pod" else read_any(path, {"Index": 0})
            event("read")
        except WorkloadError as err:
            assert str(err).startswith(f"{path}: "), str(err)
            event("refused")
        assert time.monotonic() - started < READ_DEADLINE


@fuzz_settings(60)
@given(
    st.one_of(
        hostile("- name: C\n  workloadTemplate: []\n  workloads: []\n"),
        spliced(st.just(yaml.safe_dump(WORKLOADS))),
        st.binary(max_size=200),
    )
)
def test_a_hostile_workload_file_is_refused_naming_it_in_time(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "fuzz.yaml"
        path.write_bytes(data)
        started = time.monotonic()
        try:
            load_workloads(path)
            event("read")
        except WorkloadError as err:
            _clear(err, Path(tmp))
            event("refused")
        assert time.monotonic() - started < READ_DEADLINE


# --- what the fuzzer found, pinned: each was a TypeError, ValueError or AttributeError -----------


def _op_error(op: dict[Any, Any], tmp_path: Path) -> str:
    data = [{"name": "C", "workloadTemplate": [op, {"opcode": "createPods", "count": 1, "collectMetrics": True}],
             "workloads": [{"name": "w"}]}]  # fmt: skip
    with pytest.raises(WorkloadError) as err:
        load_workloads(_write(tmp_path, data, {}))
    return str(err.value)


def test_an_opcode_that_is_not_a_string_is_refused_naming_it(tmp_path: Path) -> None:
    assert "fuzz.yaml: C/w: workloadTemplate[0].opcode: expected an opcode (one of: " in _op_error(
        {"opcode": ["createPods"]}, tmp_path
    )


def test_an_op_field_that_is_not_a_string_is_refused_naming_it(tmp_path: Path) -> None:
    message = _op_error({"opcode": "createPods", 1: 2}, tmp_path)
    assert message.startswith("fuzz.yaml: C/w: workloadTemplate[0] (createPods).1: unknown field"), message


@pytest.mark.parametrize(
    ("name", "doc", "expected"),
    [
        ("pod.yaml", {**TEMPLATES["pod.yaml"], "metadata": ["x"]}, "pod.yaml: metadata: expected a mapping, got list"),
        ("pod.yaml", {**TEMPLATES["pod.yaml"], "spec": None, "metadata": {"generateName": 5}},
         "pod.yaml: metadata.generateName: expected a string, got 5"),
        ("pod.yaml", {**TEMPLATES["pod.yaml"], "metadata": {"labels": ["a"]}},
         "pod.yaml: metadata.labels: expected a mapping, got list"),
        ("node.yaml", {**TEMPLATES["node.yaml"], "spec": [1]}, "node.yaml: spec: expected a mapping, got list"),
        ("node.yaml", {**TEMPLATES["node.yaml"], "status": "up"}, "node.yaml: status: expected a mapping, got str"),
        ("ns.yaml", {"kind": "Namespace", "metadata": {"labels": {"team": True}}},
         "ns.yaml: metadata.labels['team']: expected a string, got True"),
        ("cm.yaml", {**TEMPLATES["cm.yaml"], "kind": ["ConfigMap"]}, "cm.yaml (object 0).kind: expected a kind"),
        ("cm.yaml", {**TEMPLATES["cm.yaml"], "metadata": None}, "cm.yaml (object 0).metadata: expected a mapping"),
        ("cm.yaml", {**TEMPLATES["cm.yaml"], "metadata": {"labels": {}}},
         "cm.yaml (object 0): ConfigMap: metadata.name: Required value"),
    ],
)  # fmt: skip
def test_a_template_of_the_wrong_shape_is_refused_naming_its_field(
    name: str, doc: dict[str, Any], expected: str, tmp_path: Path
) -> None:
    path = _write(tmp_path, WORKLOADS, {**TEMPLATES, name: doc})
    (w,) = load_workloads(path)
    gates = FeatureGates(w.feature_gates)
    cfg, profile = default_subject().load(gates)
    with pytest.raises(WorkloadError) as err:
        asyncio.run(OpRunner(w, cfg, profile, gates, timeout=RUN_TIMEOUT).run())
    assert str(err.value).startswith(str(tmp_path)) and expected in str(err.value), str(err.value)


def test_labels_written_empty_in_a_template_are_none(tmp_path: Path) -> None:
    # ``labels:`` with nothing after it is null: it was an AttributeError when a node got its labels.
    node = {**TEMPLATES["node.yaml"], "metadata": {"generateName": "n-", "labels": None, "annotations": None}}
    path = _write(tmp_path, WORKLOADS, {**TEMPLATES, "node.yaml": node})
    assert read_template(tmp_path / "node.yaml", "Node")["metadata"] == {
        "generateName": "n-",
        "labels": {},
        "annotations": {},
    }
    (w,) = load_workloads(path)
    gates = FeatureGates(w.feature_gates)
    cfg, profile = default_subject().load(gates)
    results = asyncio.run(OpRunner(w, cfg, profile, gates, timeout=RUN_TIMEOUT).run())
    assert results and (results[0].nodes, results[0].measure_pods) == (3, 3)
