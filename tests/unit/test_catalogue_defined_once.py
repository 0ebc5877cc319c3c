"""Every benchmark workload is defined once: a workload of ``python -m benchmarks.run`` that is a
size of a case ``kubesched bench`` ships takes its counts, templates, churn, gates, pod groups and
floor from that YAML case (benchmarks/shipped.py), and no pod or node written in Python is a
shipped template written again."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from benchmarks import shipped
from benchmarks.backends.in_process import run_memory
from benchmarks.catalogue import WORKLOADS, Workload, workload
from benchmarks.launch import run_in_process
from benchmarks.run import main as run_main
from kubesched.bench.errors import WorkloadError
from kubesched.bench.model import Churn, CreateAny, CreateNodes, CreatePods, CreateResourceDriver
from kubesched.bench.render import driver_slice, node_object, node_template, render_any
from kubesched.bench.templates import is_templated, read_template
from kubesched.bench.workload import SHIPPED_DIR, shipped_workloads

SHIPPED = shipped_workloads()
TWINS = sorted(set(WORKLOADS) & set(SHIPPED))
#: Not a shipped case: the trace replays (simulate scenarios of the openb trace).
WRITTEN_HERE = {"OpenbGPU/default", "OpenbGPU/gpuspec33"}


def _plain(value: Any) -> Any:
    """``value`` with every scalar as a string: ``1`` and ``"1"`` are one quantity."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return str(value)


def _shape(obj: dict[str, Any]) -> Any:
    """What an object is, its name and namespace (which each side gives) aside."""
    labels = dict(obj["metadata"].get("labels") or {})
    labels.pop("kubernetes.io/hostname", None)
    return _plain([obj.get("kind"), labels, obj.get("spec") or {}, obj.get("status") or {}])


#: Cases of our own that the catalogue judges by another workload's floor.
BORROWED = {"PodLevelResources/5000Nodes": "SchedulingBasic/5000Nodes_10000Pods"}


def _object_ops(y: Any) -> list[CreateAny]:
    return [op for op in y.ops if isinstance(op, CreateAny) and op.kind is None]


def _with_namespace(obj: dict[str, Any], namespace: str) -> dict[str, Any]:
    if namespace:
        obj["metadata"]["namespace"] = namespace
    return obj


def _yaml_pod(op: CreatePods, i: int) -> dict[str, Any]:
    return read_template(op.template, "Pod", {**dict(op.params), "Index": i, "Count": op.count})


def test_the_catalogue_is_split_between_shipped_cases_and_the_workloads_written_here() -> None:
    assert set(WORKLOADS) - set(TWINS) == WRITTEN_HERE
    assert len(TWINS) >= 30


@pytest.mark.parametrize("name", TWINS)
def test_a_workload_with_a_shipped_case_takes_everything_from_it(name: str) -> None:
    c, y = WORKLOADS[name], SHIPPED[name]
    assert c.yaml_source == y.source
    assert (c.nodes, c.init_pods, c.measure_pods) == (y.nodes, y.init_pods, y.measured_pods)
    assert c.feature_gates == y.feature_gates
    assert c.floor == shipped.floor(BORROWED.get(name, name))
    if y.threshold is not None and name not in BORROWED:
        assert c.floor is not None and (c.floor.pods_per_second, c.floor.upstream) == (y.threshold, name)
    # The first and last node of each createNodes op, as kubesched bench makes them (numbered
    # over all the case's createNodes ops).
    assert c.make_node is not None
    first = 0
    for op in [op for op in y.ops if isinstance(op, CreateNodes)]:
        for i in {0, op.count - 1} if op.count else ():
            assert c.make_node(first + i) == node_object(node_template(op)(i), op, i, first + i)
        first += op.count
    # The cluster objects: each createAny op's, in its namespace, and a driver's slices.
    made = c.objects() if c.objects is not None and c.nodes <= 100 else []
    want = [_with_namespace(render_any(op, i), op.namespace) for op in _object_ops(y) for i in range(op.count)]
    assert [o for o in made if o["kind"] != "ResourceSlice" or "nodeName" not in o["spec"]] == want
    for op in [op for op in y.ops if isinstance(op, CreateResourceDriver)]:
        slices = [o for o in made if o["kind"] == "ResourceSlice" and "nodeName" in o["spec"]]
        assert slices and all(o == driver_slice(op.driver, o["spec"]["nodeName"], op.max_claims) for o in slices)
    # Each pod is its op's template rendered for its index, named by the catalogue.
    pods = [op for op in y.ops if isinstance(op, CreatePods)]
    makers = [c.make_init_pod, c.make_pod] if c.init_pods else [c.make_pod]
    assert len(pods) == len(makers)
    for op, make in zip(pods, makers, strict=True):
        assert make is not None
        for i in (0, op.count - 1):
            pod, want = make("x", i), _yaml_pod(op, i)
            assert pod["metadata"]["name"] == f"x-{i}"
            assert _shape(pod) == _shape(want) and pod["spec"] == want["spec"]
    churn = [op for op in y.ops if isinstance(op, Churn)]
    assert (c.make_churn_pod is not None) == bool(churn)
    if churn and c.make_churn_pod is not None:
        assert c.make_churn_pod("churn", 0)["spec"] == read_template(churn[0].templates[0], "Pod")["spec"]
        assert c.churn_interval == churn[0].interval


@pytest.mark.parametrize(
    "name", [n for n in TWINS if WORKLOADS[n].pod_groups is not None and WORKLOADS[n].nodes <= 100]
)
def test_the_pod_groups_are_the_shipped_cases_objects(name: str) -> None:
    c, y = WORKLOADS[name], SHIPPED[name]
    assert c.pod_groups is not None
    made = [o for o in c.pod_groups() if o["kind"] != "Namespace"]
    want = [render_any(op, i) for op in y.ops if isinstance(op, CreateAny) for i in range(op.count)]
    assert [(o["metadata"]["name"], o["spec"]) for o in made] == [(o["metadata"]["name"], o["spec"]) for o in want]
    assert c.groups == sum(1 for o in made if o["kind"] == "PodGroup") > 0


def _shipped_shapes() -> dict[Any, str]:
    """Every shipped pod and node template's object (templated ones as every shipped op fills
    them in, at index 0), by shape."""
    shapes: dict[Any, str] = {}
    for w in SHIPPED.values():
        for op in w.ops:
            if isinstance(op, CreatePods):
                shapes[repr(_shape(_yaml_pod(op, 0)))] = op.template.name
            elif isinstance(op, CreateNodes):
                shapes[repr(_shape(node_object(node_template(op)(0), op, 0, 0)))] = op.template.name
    for path in sorted((SHIPPED_DIR / "templates").glob("*.yaml")):
        if not is_templated(path):
            if re.search(r"^kind: Pod\s*$", path.read_text(), re.MULTILINE):
                shapes[repr(_shape(read_template(path, "Pod")))] = path.name
    return shapes


def _makers(w: Workload) -> list[tuple[str, Any]]:
    return [
        (field, maker)
        for field, maker in (
            ("make_node", w.make_node),
            ("make_pod", w.make_pod),
            ("make_init_pod", w.make_init_pod),
            ("make_churn_pod", w.make_churn_pod),
        )
        if maker is not None
    ]


def test_no_pod_or_node_written_in_python_is_a_shipped_template_again() -> None:
    shapes = _shipped_shapes()
    assert len(shapes) > 20
    again = []
    for w in WORKLOADS.values():
        for field, maker in _makers(w):
            if isinstance(maker, shipped.ShippedPod | shipped.ShippedNode):
                assert Path(maker.template).is_relative_to(SHIPPED_DIR), (w.name, field)
                continue  # rendered from the shipped template itself
            obj = maker(0) if field == "make_node" else maker("x", 0)
            if repr(_shape(obj)) in shapes:
                again.append(f"{w.name}.{field}: {shapes[repr(_shape(obj))]}")
    assert again == []


def test_the_duplicate_finder_finds_a_template_written_again() -> None:
    shapes = _shipped_shapes()
    written = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "x-0", "namespace": "default"},
        "spec": {
            "containers": [
                {
                    "name": "pause",
                    "image": "registry.k8s.io/pause:3.10",
                    "ports": [{"containerPort": 80}],
                    "resources": {
                        "requests": {"cpu": "100m", "memory": "500Mi"},
                        "limits": {"cpu": "100m", "memory": "500Mi"},
                    },
                }
            ]
        },
    }
    assert shapes.get(repr(_shape(written))) == "pod-default.yaml"
    written["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "3"
    assert repr(_shape(written)) not in shapes


def test_a_case_the_catalogue_cannot_run_is_refused_by_name() -> None:
    # SchedulingWhileGated deletes pods and waits at a barrier: not the catalogue's shape.
    with pytest.raises(shipped.ShippedShapeError, match=r"SchedulingWhileGated/1Node_10GatedPods"):
        shipped.workload_fields("SchedulingWhileGated/1Node_10GatedPods")
    # Claims allocated before the pods, then pods kept pending for a duration: kubesched bench's.
    with pytest.raises(
        shipped.ShippedShapeError,
        match=r"SteadyStateClusterResourceClaimTemplate/fast: workloadTemplate\[7\].*steadyState",
    ):
        shipped.workload_fields("SteadyStateClusterResourceClaimTemplate/fast")
    with pytest.raises(WorkloadError, match=r"Nope/1Node: no shipped workload"):
        shipped.workload_fields("Nope/1Node")


def test_any_shipped_size_of_the_catalogues_shape_runs_by_name() -> None:
    w = workload("SchedulingPodAntiAffinity/5000Nodes_2000Pods")
    assert (w.nodes, w.init_pods, w.measure_pods, w.yaml_source) == (5000, 1000, 2000, "affinity.yaml")
    assert w.floor is not None and (w.floor.pods_per_second, w.floor.upstream) == (60, w.name)
    preempting = workload("PreemptionBasic/5Nodes")
    assert (preempting.wait_bound, preempting.timing_dependent) == (True, True)
    assert workload("SchedulingBasic/500Nodes") is WORKLOADS["SchedulingBasic/500Nodes"]
    with pytest.raises(KeyError, match=r"Nope/1Node: no such workload"):
        workload("Nope/1Node")


def test_a_case_of_another_shape_runs_by_kubesched_bench_s_runner() -> None:
    """SchedulingWhileGated deletes pods and waits at a barrier: ``-w`` takes it all the same,
    run by kubesched bench's runner (--compare too), its floor borrowed as kubesched
    bench borrows it."""
    gated = workload("SchedulingWhileGated/1Node_10GatedPods")
    assert gated.by_ops and not workload("SchedulingPodAffinity/5Nodes").by_ops
    assert (gated.nodes, gated.init_pods, gated.measure_pods, gated.yaml_source) == (1, 20, 10, "misc.yaml")
    assert "at most one createPods op" in gated.description
    result = run_in_process("SchedulingWhileGated/1Node_10GatedPods")
    assert (result.workload, result.measure_pods, result.scheduled, result.unschedulable) == (gated.name, 10, 10, 0)
    assert result.cpu_ms_per_pod is not None and result.cpu_ms_per_pod > 0
    assert (result.floor_pods_per_second, result.floor_source) == (910, "SchedulingWhileGated/1Node_10000GatedPods")
    # Node by node and in batches, the same runner: the gated pods land alike.
    assert run_main(["--compare", "-w", "SchedulingWhileGated/1Node_10GatedPods"]) == 0


async def test_a_small_shipped_size_runs_on_the_catalogues_backend() -> None:
    w = workload("SchedulingPodAffinity/5Nodes")
    placements: dict[str, str] = {}
    result = await run_memory(w, placements=placements)
    assert (result.nodes, result.measure_pods, result.scheduled, result.unschedulable) == (5, 10, 10, 0)
    # Required affinity on one zone: every pod, init and measured, in sched-0 or sched-1 and bound.
    assert sorted(k.split("/", 1)[0] for k in placements) == ["sched-0"] * 5 + ["sched-1"] * 10


def test_a_workload_is_made_from_its_own_file_alone() -> None:
    """Running one workload reads the shipped file its case is in and no other: reading them all
    is set-up work a paired run would count per measured pod."""
    import subprocess
    import sys

    code = (
        "import benchmarks.shipped as s, kubesched.bench.workload as kw\n"
        "read = []\n"
        "load = kw.load_workloads\n"
        "s.load_workloads = kw.load_workloads = lambda p: (read.append(p.name), load(p))[1]\n"
        "from benchmarks.catalogue import workload\n"
        "w = workload('SchedulingBasic/500Nodes')\n"
        "print(w.nodes, w.measure_pods, sorted(set(read)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert out.stdout.split() == ["500", "1000", "['misc.yaml']"], out.stdout + out.stderr
