"""Property tests of scenarios: any set of documents either loads or is refused with a
:class:`ScenarioError` naming the document and field; a scenario that loads simulates to the
end, every pod Scheduled, Unschedulable or Error; and a malformed pod is reported on that pod
(Error, with a FailedScheduling event) while the others are scheduled.

The documents are objects of ``config/scenarios/demo.yaml`` (a few nodes and one pod of each
sort) plus a few that reach more of the pod spec, broken in one to three places
(:mod:`fuzzing`); files also get random text, YAML syntax errors, bytes that are not UTF-8,
deep nesting and overlong integers. Examples are derandomized so a failure here reproduces
everywhere. Below them, each traceback they found, pinned as an example.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import io
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from fuzzing import alias_bomb, alias_deep, field_names, fuzz_settings, hostile, mutated, spliced, values
from hypothesis import event, given
from hypothesis import strategies as st

from kubesched.cli import main
from kubesched.config import load_config
from kubesched.sim.run.simulate import SimulationResult, SimulationSettings, simulate
from kubesched.sim.scenario.openb import TraceError, load_openb
from kubesched.sim.scenario.reading import MAX_OBJECTS, SCENARIO_LIMITS, ScenarioError, load_scenario, parse_scenario

REPO = Path(__file__).resolve().parents[2]
PROFILES = load_config(REPO / "config" / "kubesched.yaml").profiles

_DEMO_OBJECTS = {
    "Namespace": {"team-a"},
    "PriorityClass": {"high", "low"},
    "StorageClass": {"local"},
    "PersistentVolume": {"local-pv-node-05"},
    "PersistentVolumeClaim": {"db-data"},
    "Node": {"node-00", "node-01", "gpu-0", "preempt-node", "cordoned-0"},
    "Pod": {
        "running-00",
        "filler-0",
        "web-000",
        "batch-000",
        "train-00",
        "zonal-0",
        "gpu-without-toleration",
        "gated",
        "spread-0",
        "db",
    },
}


def _pod(name: str, spec: dict[str, Any], labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": labels or {"app": name}},
        "spec": spec,
    }


_CONTAINER = {"name": "main", "image": "nginx", "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}

#: Pods reaching the parts of the spec the demo does not: pod (anti-)affinity, preferred node
#: affinity, host ports, init containers and sidecars, overhead, limits, priority.
_EXTRA_PODS = [
    _pod(
        "affine",
        {
            "containers": [{**_CONTAINER, "ports": [{"containerPort": 80, "hostPort": 8080, "protocol": "TCP"}]}],
            "initContainers": [
                {"name": "init", "image": "busybox", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}},
                {"name": "sidecar", "image": "envoy", "restartPolicy": "Always"},
            ],
            "overhead": {"cpu": "10m"},
            "affinity": {
                "nodeAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "weight": 10,
                            "preference": {
                                "matchExpressions": [
                                    {"key": "topology.kubernetes.io/zone", "operator": "NotIn", "values": ["zone-c"]}
                                ]
                            },
                        }
                    ]
                },
                "podAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "weight": 5,
                            "podAffinityTerm": {
                                "labelSelector": {"matchLabels": {"app": "web"}},
                                "topologyKey": "kubernetes.io/hostname",
                                "namespaces": ["team-a"],
                            },
                        }
                    ]
                },
                "podAntiAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "labelSelector": {
                                "matchExpressions": [{"key": "app", "operator": "In", "values": ["affine"]}]
                            },
                            "topologyKey": "kubernetes.io/hostname",
                        }
                    ]
                },
            },
        },
    ),
    _pod(
        "urgent",
        {
            "containers": [
                {**_CONTAINER, "resources": {"limits": {"cpu": "2", "memory": "2Gi", "example.com/foo": "1"}}}
            ],
            "priority": 1000,
            "priorityClassName": "high",
            "preemptionPolicy": "Never",
            "tolerations": [{"key": "demo", "operator": "Exists"}],
            "nodeSelector": {"demo": "preemption"},
        },
    ),
]


def _demo_base() -> list[dict[str, Any]]:
    docs = [d for d in yaml.safe_load_all((REPO / "config" / "scenarios" / "demo.yaml").read_text()) if d]
    picked = [d for d in docs if d["metadata"]["name"] in _DEMO_OBJECTS.get(d["kind"], ())]
    # The priority classes come as a `kind: List`, so that mutations reach a list's items too.
    classes = [d for d in picked if d["kind"] == "PriorityClass"]
    others = [d for d in picked if d["kind"] != "PriorityClass"]
    return [{"apiVersion": "v1", "kind": "List", "items": classes}, *others, *copy.deepcopy(_EXTRA_PODS)]


DEMO = _demo_base()
KEYS = field_names(DEMO)
VALUES = values(
    KEYS,
    extra=["Pod", "Node", "List", "Service", "Deployment", "In", "NotIn", "Exists", "Gt", "Lt", "Bogus", "NoSchedule",
           "DoNotSchedule", "500m", "1Gi", "1e9999", "99999999999999999999999Ei", "node-00", "high", "nosuch"],
)  # fmt: skip
DOCUMENTS = st.one_of(
    mutated(DEMO, VALUES, KEYS),
    # A few documents only, each possibly anything at all.
    st.lists(st.one_of(st.sampled_from(DEMO), VALUES), max_size=4),
)


PHASES = {"Scheduled", "Unschedulable", "Error"}


def run(scenario: Any) -> SimulationResult:
    # Plugin maps are not looked at here; without them a run is a little faster.
    return asyncio.run(simulate(PROFILES, scenario, SimulationSettings(plugin_results=False, horizon=60.0)))


def assert_clear(err: ScenarioError) -> None:
    message = str(err)
    assert message and "Traceback" not in message
    # Errors name the document (and field), or the pod admission refused.
    assert message.split(": ", 1)[0].startswith(("document ", "pod ")) or ": document " in message, message


def check_documents(docs: Any) -> None:
    docs = docs if isinstance(docs, list) else [docs]  # a file is always a list of documents
    try:
        scenario = parse_scenario(docs)
    except ScenarioError as err:
        assert_clear(err)
        event("refused")
        return
    event("loaded")
    result = run(scenario)
    assert len(result.pods) == len(scenario.pending_pods)
    assert {p["phase"] for p in result.pods} <= PHASES
    assert result.summary["scheduled"] + result.summary["unschedulable"] + result.summary["errors"] == len(result.pods)


@fuzz_settings(200)
@given(DOCUMENTS)
def test_any_scenario_loads_and_simulates_or_is_refused(docs: list[Any]) -> None:
    check_documents(docs)


# --- one bad pod among good ones -------------------------------------------------------------------

_BIG_NODE = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {"name": "big", "labels": {"kubernetes.io/hostname": "big", "topology.kubernetes.io/zone": "zone-a"}},
    "status": {"allocatable": {"cpu": "64", "memory": "256Gi", "pods": "110"}},
}
_GOOD = [_pod(f"good-{i}", {"containers": [copy.deepcopy(_CONTAINER)]}) for i in range(3)]
#: Pods to break: each pending pod of the scenario above, so every part of a pod spec is reached.
_VICTIMS = [d for d in DEMO if d["kind"] == "Pod" and not d["spec"].get("nodeName")]


@fuzz_settings(200)
@given(st.sampled_from(_VICTIMS).flatmap(lambda victim: mutated(victim, VALUES, KEYS)))
def test_a_malformed_pod_is_reported_on_that_pod_and_the_others_are_scheduled(bad: Any) -> None:
    bad = bad if isinstance(bad, dict) else {"value": bad}
    if not isinstance(bad.get("metadata"), dict):
        bad["metadata"] = {}
    # Keep the pod identifiable and pending, so that only its spec is broken.
    bad.update(kind="Pod", apiVersion="v1")
    bad["metadata"].update(name="bad", namespace="default")
    if isinstance(bad.get("spec"), dict):
        bad["spec"].pop("nodeName", None)
    docs = [copy.deepcopy(_BIG_NODE), *copy.deepcopy(_GOOD), bad]
    try:
        scenario = parse_scenario(docs)
    except ScenarioError as err:
        assert_clear(err)
        return
    result = run(scenario)
    by_name = {p["name"]: p for p in result.pods}
    outcome = by_name["bad"]
    event(f"bad pod {outcome['phase']}")
    assert outcome["phase"] in PHASES
    if outcome["phase"] == "Error" and "no profile has schedulerName" not in outcome["message"]:
        events = [
            e
            for e in result.store.list("Event")[0]
            if e["involvedObject"]["name"] == "bad" and e["reason"] == "FailedScheduling"
        ]
        assert events, "a pod in Error must get a FailedScheduling event"
    if outcome["phase"] != "Scheduled":
        assert [by_name[g["metadata"]["name"]]["phase"] for g in _GOOD] == ["Scheduled"] * len(_GOOD), result.pods


# --- files -----------------------------------------------------------------------------------------

TEXTS = st.one_of(
    mutated(DEMO[:6], VALUES, KEYS).map(
        lambda docs: yaml.safe_dump_all(docs if isinstance(docs, list) else [docs], allow_unicode=True)
    ),
    st.text(max_size=80),
    st.lists(
        st.sampled_from(
            [
                "kind: Pod\n",
                "metadata:\n",
                "  name: x\n",
                "---\n",
                "{",
                "]",
                ": ",
                "- ",
                "\t",
                "&a",
                "*a",
                "!!binary x\n",
                "\x00",
            ]
        ),
        max_size=10,
    ).map("".join),
)


@fuzz_settings(100)
@given(spliced(TEXTS))
def test_any_file_loads_or_is_refused(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "scenario.yaml"
        path.write_bytes(data)
        try:
            load_scenario(path)
        except ScenarioError as err:
            assert str(err).startswith(f"{path}: ")


# --- what the fuzzers found, pinned ---------------------------------------------------------------


def node(**status: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}, "status": status}


def pod(name: str = "p", **spec: Any) -> dict[str, Any]:
    return _pod(name, {"containers": [copy.deepcopy(_CONTAINER)], **spec})


def refused(docs: list[Any]) -> str:
    with pytest.raises(ScenarioError) as info:
        parse_scenario(docs)
    return str(info.value)


def deep(levels: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(levels - 1):
        value = [value]
    return value


def with_meta(obj: dict[str, Any], **meta: Any) -> dict[str, Any]:
    obj["metadata"].update(meta)
    return obj


_Q = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"


@pytest.mark.parametrize(
    ("docs", "expected"),
    [
        ([with_meta(pod(), name=["p"])], "document 1.metadata.name: must be a string, got list (Pod)"),
        ([with_meta(pod(), namespace={"a": 1})], "document 1.metadata.namespace: must be a string, got dict (Pod p)"),
        (
            [with_meta(pod(), labels=["app"])],
            "document 1: json: cannot unmarshal array into Go struct field ObjectMeta.metadata.labels of type "
            "map[string]string (Pod p)",
        ),
        (
            [pod(priorityClassName={"name": "high"})],
            "document 1.spec.priorityClassName: must be a string, got dict (Pod default/p)",
        ),
        ([pod(priority="high")], "document 1.spec.priority: must be an integer, got str (Pod default/p)"),
        (
            [pod(priorityClassName="gold")],
            "document 1: pod default/p: spec.priorityClassName: no PriorityClass with name gold was found",
        ),
        (
            [node(allocatable=True)],
            "document 1: json: cannot unmarshal bool into Go struct field NodeStatus.status.allocatable of type "
            "map[string]string (Node n)",
        ),
        ([node(allocatable={"cpu": {"a": 1}})], f"document 1: {_Q} (Node n)"),
        ([node(capacity={"cpu": float("inf")})], f"document 1: {_Q} (Node n)"),
        ([node(allocatable={"cpu": "1e99999999"})], f"document 1: {_Q} (Node n)"),
        (
            [node(images=[["nginx"]])],
            "document 1: json: cannot unmarshal array into Go struct field NodeStatus.status.images of type "
            "v1.ContainerImage (Node n)",
        ),
        (
            [node(images=[{"names": ["nginx"], "sizeBytes": {"a": 1}}])],
            "document 1: json: cannot unmarshal object into Go struct field ContainerImage.status.images.sizeBytes "
            "of type int64 (Node n)",
        ),
        (
            [{**node(), "spec": {"taints": [{"key": "k", "effect": ["NoSchedule"]}]}}],
            "document 1: json: cannot unmarshal array into Go struct field Taint.spec.taints.effect of type string "
            "(Node n)",
        ),
        ([pod(x=deep(150))], "document 1.spec.x" + "[0]" * 98 + ": nested more than 100 levels deep"),
        ([{"apiVersion": "v1", "kind": "List", "items": 5}], "document 1.items: must be a list, got int"),
    ],
    ids=[
        "name-a-list",
        "namespace-a-mapping",
        "labels-a-list",
        "priority-class-name-a-mapping",
        "priority-a-string",
        "priority-class-missing",
        "allocatable-a-boolean",
        "quantity-a-mapping",
        "quantity-infinite",
        "quantity-exponent-huge",
        "image-a-list",
        "image-size-a-mapping",
        "taint-effect-a-list",
        "nested-150-deep",
        "list-items-a-number",
    ],
)
def test_what_crashed_the_loader_or_the_simulation_is_refused_with_its_field(docs: list[Any], expected: str) -> None:
    """Each of these raised TypeError, AttributeError or QuantityError from parse_scenario (from its
    own checks or the API server's validation it runs) or, later, from the scheduler's cache in the
    middle of a simulation; a missing PriorityClass raised ScenarioError out of simulate(), a
    traceback in `kubesched simulate`. A wrong type is now refused as kube-apiserver's decoder
    refuses it (which, as upstream, does not say which quantity it could not parse)."""
    assert refused(docs) == expected


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            {"containers": [{**_CONTAINER, "ports": [{"containerPort": 80, "hostPort": 80, "protocol": {"TCP": 1}}]}]},
            "pod default/bad: containers[].ports[].protocol: must be a string, got {'TCP': 1}",
        ),
        (
            {"containers": [{**_CONTAINER, "resources": {"requests": {"cpu": "1e99999999"}}}]},
            "pod default/bad: spec.containers[0].resources.requests[cpu]: quantity '1e99999999' is out of range: the exponent must be within ±100",
        ),
        (
            {"containers": [_CONTAINER], "tolerations": "dedicated"},
            "pod default/bad: spec.tolerations: must be a list, got 'dedicated'",
        ),
        (
            {"containers": [_CONTAINER], "nodeSelector": ["ssd"]},
            "pod default/bad: spec.nodeSelector: must be a mapping, got a list",
        ),
        (
            {
                "containers": [_CONTAINER],
                "topologySpreadConstraints": [
                    {"maxSkew": [1], "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}
                ],
            },
            'running "PodTopologySpread" PreFilter plugin: int() argument must be a string, a bytes-like object or a '
            "real number, not 'list'",
        ),
    ],
    ids=[
        "host-port-protocol-a-mapping",
        "request-exponent-huge",
        "tolerations-a-string",
        "node-selector-a-list",
        "max-skew-a-list",
    ],
)
def test_a_pod_the_scheduler_cannot_read_is_reported_on_that_pod(spec: dict[str, Any], message: str) -> None:
    """The first raised TypeError from the cache's port table in the middle of the cycle; the
    second spent minutes computing 10**99999999 before any node was tried; the next two were
    scheduled or failed with a plugin's AttributeError instead of naming the field; the last
    raised TypeError out of the loader (the API server's checks it runs are for readable pods)."""
    result = run(parse_scenario([copy.deepcopy(_BIG_NODE), *copy.deepcopy(_GOOD), _pod("bad", spec)]))
    by_name = {p["name"]: p for p in result.pods}
    assert (by_name["bad"]["phase"], by_name["bad"]["message"]) == ("Error", message)
    events = [e for e in result.store.list("Event")[0] if e["involvedObject"]["name"] == "bad"]
    assert [(e["reason"], e["message"]) for e in events] == [("FailedScheduling", message)]
    assert {by_name[g["metadata"]["name"]]["phase"] for g in _GOOD} == {"Scheduled"}


def test_an_unquoted_creation_timestamp_is_read_as_the_apis_string(tmp_path: Path) -> None:
    """YAML reads it as a datetime, which the scheduler's time parsing choked on."""
    path = tmp_path / "s.yaml"
    path.write_text(
        "kind: Pod\nmetadata: {name: p, creationTimestamp: 2024-05-01T10:00:00Z}\nspec: {containers: [{name: c}]}\n"
        "---\nkind: Pod\nmetadata: {name: q, creationTimestamp: 2024-05-01 12:00:00}\nspec: {containers: [{name: c}]}\n",
        encoding="utf-8",
    )
    pods = load_scenario(path).pending_pods
    assert [p["metadata"]["creationTimestamp"] for p in pods] == ["2024-05-01T10:00:00Z", "2024-05-01T12:00:00Z"]


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (
            b"kind: Node\nmetadata: {name: n}\nvalue: " + b"9" * 5000,
            "not valid YAML: yaml: line 3: an integer of 5000 digits, more than the limit of 400",
        ),
        (b"kind: Node\nmetadata: {name: n}\n\xff\xfe", "not UTF-8 text: byte 31 cannot be decoded"),
        (
            b"kind: Node\nmetadata: {name: n}\nx: " + b"[" * 3000 + b"]" * 3000,
            "not valid YAML: yaml: line 3: nested too deeply: more than 200 levels",
        ),
    ],
    ids=["integer-of-5000-digits", "not-utf-8", "nested-3000-deep"],
)
def test_files_python_cannot_decode_are_refused(tmp_path: Path, content: bytes, expected: str) -> None:
    """These raised ValueError, UnicodeDecodeError and RecursionError out of load_scenario."""
    path = tmp_path / "s.yaml"
    path.write_bytes(content)
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    assert str(info.value).startswith(f"{path}: {expected}")


def test_simulate_refuses_a_missing_priority_class_before_running(tmp_path: Path) -> None:
    """`kubesched simulate` printed a traceback: admission raised half-way through the run."""
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump_all([_BIG_NODE, pod(priorityClassName="gold")]), encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["simulate", "--scenario", str(path), "--no-progress"])
    assert (code, out.getvalue()) == (2, "")
    assert err.getvalue() == (
        f"kubesched: {path}: document 2: pod default/p: spec.priorityClassName: no PriorityClass with name gold was found\n"
    )


def test_null_quantities_and_images_are_zero_values() -> None:
    """The API server decodes null as the zero value; the cache raised on a null quantity
    (QuantityError) and a null image (AttributeError) in the middle of a simulation."""
    big = copy.deepcopy(_BIG_NODE)
    big["status"]["allocatable"]["example.com/gpu"] = None
    big["status"]["images"] = [None, {"names": ["nginx"], "sizeBytes": 1000}]
    light = _pod("light", {"containers": [{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": None}}}]})
    result = run(parse_scenario([big, light]))
    assert [(p["name"], p["phase"]) for p in result.pods] == [("light", "Scheduled")]
    assert result.nodes[0]["allocatable"].get("example.com/gpu", 0) == 0


# --- hostile files: aliases, depth, counts, long numbers --------------------------------------------

_NODE_TEXT = "kind: Node\nmetadata: {name: n}\n"


@fuzz_settings(60)
@given(st.sampled_from(DEMO[:6]).map(lambda doc: yaml.safe_dump(doc, allow_unicode=True)).flatmap(hostile))
def test_hostile_files_load_or_are_refused_naming_the_file(data: bytes) -> None:
    """An object with an alias bomb, aliases or brackets nesting deep, an overlong integer or a
    long list put in: it loads or is a ScenarioError naming the file."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "scenario.yaml"
        path.write_bytes(data)
        try:
            load_scenario(path)
        except ScenarioError as err:
            assert str(err).startswith(f"{path}: ")


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (
            _NODE_TEXT + alias_bomb(),
            "not valid YAML: yaml: line 6: document contains excessive aliasing: aliases expand to 4630 of 4676 "
            "nodes (at most 99% may come from aliases)",
        ),
        (_NODE_TEXT + alias_deep(250), "not valid YAML: yaml: line 202: nested too deeply: more than 200 levels"),
    ],
    ids=["alias-bomb", "aliases-250-deep"],
)
def test_files_past_a_limit_are_refused_naming_it(tmp_path: Path, content: str, expected: str) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    assert str(info.value) == f"{path}: {expected}"


@pytest.mark.parametrize(
    "docs",
    [
        [{"kind": "List", "items": [{}] * (MAX_OBJECTS + 1)}],
        # a step counts as one object besides those it creates
        [{"kind": "Steps", "steps": [{"at": "1s", "create": [{}] * (MAX_OBJECTS - 1)}]}, {}],
    ],
    ids=["list-items", "steps-objects"],
)
def test_more_objects_than_the_limit_are_refused_before_any_is_read(docs: list[Any]) -> None:
    with pytest.raises(ScenarioError) as info:
        parse_scenario(docs, "import")
    assert str(info.value) == f"import: {MAX_OBJECTS + 1} objects, more than the limit of {MAX_OBJECTS}"


def test_a_file_over_the_size_limit_is_refused_unread(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    with path.open("wb") as fh:
        fh.truncate(SCENARIO_LIMITS.max_bytes + 1)  # sparse: nothing is written, nothing read
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    assert str(info.value) == (
        f"{path}: the document is {SCENARIO_LIMITS.max_bytes + 1} bytes, more than the limit of "
        f"{SCENARIO_LIMITS.max_bytes} bytes"
    )


def test_simulate_refuses_a_bomb_scenario_naming_the_file(tmp_path: Path) -> None:
    """`kubesched simulate` hung for minutes on this 9-level scenario."""
    path = tmp_path / "bomb.yaml"
    path.write_text(_NODE_TEXT + alias_bomb(), encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["simulate", "--scenario", str(path), "--no-progress"])
    assert (code, out.getvalue()) == (2, "")
    assert err.getvalue().startswith(
        f"kubesched: {path}: not valid YAML: yaml: line 6: document contains excessive aliasing"
    )


# --- the trace's CSV files ----------------------------------------------------------------------------

_NODES_HEAD = "sn,cpu_milli,memory_mib,gpu,model\n"
_PODS_HEAD = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time\n"


@pytest.mark.parametrize(
    ("nodes", "pods", "expected"),
    [
        (
            _NODES_HEAD.encode() + b"n0,1e999,1024,0,\n",
            _PODS_HEAD.encode() + b"p,1000,1024,0,0,,LS,Running,0,\n",
            "openb_node_list_all_node.csv row 2: column 'cpu_milli': not a finite number: '1e999'",
        ),
        (
            _NODES_HEAD.encode() + b"n0,1000,1024,0,\n",
            _PODS_HEAD.encode() + b"p," + b"9" * 5001 + b",1024,0,0,,LS,Running,0,\n",
            "openb_pod_list_default.csv row 2: column 'cpu_milli': a number of 5001 characters, more than the limit "
            "of 400",
        ),
        (
            _NODES_HEAD.encode() + b"n\xff,1000,1024,0,\n",
            _PODS_HEAD.encode(),
            "openb_node_list_all_node.csv: not UTF-8 text: byte 35 cannot be decoded",
        ),
        (
            _NODES_HEAD.encode() + b"n0,1000,1024,0," + b"x" * 200_000 + b"\n",
            _PODS_HEAD.encode(),
            "openb_node_list_all_node.csv: not a CSV file: field larger than field limit (131072)",
        ),
    ],
    ids=["infinite-cpu", "number-of-5001-digits", "not-utf-8", "a-200-kb-cell"],
)
def test_trace_files_python_cannot_read_are_a_trace_error(
    tmp_path: Path, nodes: bytes, pods: bytes, expected: str
) -> None:
    """These raised OverflowError, UnicodeDecodeError and csv.Error out of the trace reader."""
    (tmp_path / "openb_node_list_all_node.csv").write_bytes(nodes)
    (tmp_path / "openb_pod_list_default.csv").write_bytes(pods)
    with pytest.raises(TraceError) as info:
        load_openb(directory=tmp_path)
    assert str(info.value) == expected
