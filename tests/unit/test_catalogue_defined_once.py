"""Every benchmark workload is defined once: a workload of ``python -m benchmarks.run`` that is a
size of a case ``kubesched bench`` ships runs from that YAML case's ops and takes its counts, gates,
pod groups and floor from it (benchmarks/shipped.py); the catalogue makes no object of its own,
and the default node and pod the soak makes are the shipped templates."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from benchmarks import shipped
from benchmarks.backends import run_workload
from benchmarks.catalogue import WORKLOADS, Workload, default_node, default_pod, workload
from benchmarks.launch import run_in_process
from benchmarks.run import main as run_main
from kubesched.bench.errors import WorkloadError
from kubesched.bench.model import CreateAny, CreateNodes
from kubesched.bench.render import node_object, node_template
from kubesched.bench.templates import read_template
from kubesched.bench.workload import DEFAULT_NODE_TEMPLATE, DEFAULT_POD_TEMPLATE, shipped_workloads

SHIPPED = shipped_workloads()
TWINS = sorted(set(WORKLOADS) & set(SHIPPED))


#: Cases of our own that the catalogue judges by another workload's floor.
BORROWED = {"PodLevelResources/5000Nodes": "SchedulingBasic/5000Nodes_10000Pods"}


def test_every_workload_of_the_catalogue_is_a_shipped_one() -> None:
    # The trace replays too (traces.yaml): none is written in Python.
    assert set(WORKLOADS) == set(TWINS)
    assert {"OpenbGPU/default", "OpenbGPU/gpuspec33"} <= set(TWINS)
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
    assert c.groups == sum(op.count for op in y.ops if isinstance(op, CreateAny) and op.kind == "PodGroup")


def test_the_catalogue_makes_no_object_of_its_own() -> None:
    """A workload is its name, its counts and how it is run and judged: no field holds an object
    or a maker of one (every object comes from the case's ops)."""
    callables = {f.name for f in dataclasses.fields(Workload) if "Callable" in str(f.type)}
    assert callables == {"unavailable"}
    for w in WORKLOADS.values():
        assert not [k for k, v in vars(w).items() if isinstance(v, dict | list) and k != "feature_gates"], w.name


def test_the_default_node_and_pod_are_the_shipped_templates() -> None:
    node = CreateNodes(1, DEFAULT_NODE_TEMPLATE)
    assert default_node(3) == node_object(node_template(node)(3), node, 3, 3)
    assert default_node(3)["metadata"]["name"] == "node-3"
    pod = default_pod("x", 7)
    assert (pod["metadata"]["name"], pod["metadata"]["namespace"]) == ("x-7", "default")
    assert pod["spec"] == read_template(DEFAULT_POD_TEMPLATE, "Pod")["spec"]
    # Each call a fresh object: the soak changes what it is given.
    pod["spec"]["containers"][0]["name"] = "changed"
    assert default_pod("x", 7)["spec"] == read_template(DEFAULT_POD_TEMPLATE, "Pod")["spec"]


def test_every_shipped_workload_is_taken_by_name() -> None:
    """Steady states, claims allocated before, barriers, deletes: any shipped case runs from its
    ops, so ``-w`` takes every shipped workload, its counts its case's."""
    for name, y in SHIPPED.items():
        w = workload(name)
        assert (w.nodes, w.init_pods, w.measure_pods, w.yaml_source) == (
            y.nodes,
            y.init_pods,
            y.measured_pods,
            y.source,
        )
    with pytest.raises(WorkloadError, match=r"Nope/1Node: no shipped workload"):
        shipped.workload_fields("Nope/1Node")


def test_any_shipped_size_of_the_catalogues_shape_runs_by_name() -> None:
    w = workload("SchedulingPodAntiAffinity/5000Nodes_2000Pods")
    assert (w.nodes, w.init_pods, w.measure_pods, w.yaml_source) == (5000, 1000, 2000, "affinity.yaml")
    assert w.floor is not None and (w.floor.pods_per_second, w.floor.upstream) == (60, w.name)
    assert workload("PreemptionBasic/5Nodes").timing_dependent
    assert workload("SchedulingBasic/500Nodes") is WORKLOADS["SchedulingBasic/500Nodes"]
    with pytest.raises(KeyError, match=r"Nope/1Node: no such workload"):
        workload("Nope/1Node")


def test_a_case_of_another_shape_runs_by_kubesched_bench_s_runner() -> None:
    """SchedulingWhileGated deletes pods and waits at a barrier: ``-w`` takes it all the same,
    run by kubesched bench's runner (--compare too), its floor borrowed as kubesched
    bench borrows it."""
    gated = workload("SchedulingWhileGated/1Node_10GatedPods")
    assert (gated.nodes, gated.init_pods, gated.measure_pods, gated.yaml_source) == (1, 20, 10, "misc.yaml")
    result = run_in_process("SchedulingWhileGated/1Node_10GatedPods")
    assert (result.workload, result.measure_pods, result.scheduled, result.unschedulable) == (gated.name, 10, 10, 0)
    assert result.cpu_ms_per_pod is not None and result.cpu_ms_per_pod > 0
    assert (result.floor_pods_per_second, result.floor_source) == (910, "SchedulingWhileGated/1Node_10000GatedPods")
    # Node by node and in batches, the same runner: the gated pods land alike.
    assert run_main(["--compare", "-w", "SchedulingWhileGated/1Node_10GatedPods"]) == 0


async def test_a_small_shipped_size_runs_on_the_catalogues_backend() -> None:
    w = workload("SchedulingPodAffinity/5Nodes")
    placements: dict[str, str] = {}
    result = await run_workload(w, placements=placements)
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
