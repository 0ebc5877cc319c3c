"""The DRA, pod-level-resources and batching workloads of ``python -m benchmarks.run``, read from
their shipped cases (dra.yaml, misc.yaml) and run at their small sizes on the catalogue's
in-memory backend: the scheduler places their pods as 1.37 would, so that a benchmark figure
measures scheduling, not pods that fail for a broken template or a missing object."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from benchmarks.backends import run_workload
from benchmarks.backends.ops import run_yaml
from benchmarks.catalogue import WORKLOADS, workload
from benchmarks.shipped import yaml_workload
from kubesched.bench.model import CreateResourceDriver
from kubesched.bench.render import driver_slice
from kubesched.bench.workload import SHIPPED_DIR
from kubesched.config import load_config
from kubesched.sim.run.simulate import simulate
from kubesched.sim.scenario.reading import parse_scenario
from tests.bench_shapes import op_node, op_objects, op_pod, reshaped

Obj = dict[str, Any]


@pytest.mark.parametrize(
    ("name", "scheduled", "unschedulable"),
    [
        # One DRA node of 10 devices: ten pods, each one device.
        ("SchedulingWithResourceClaimTemplateToleration/fast", 10, 0),
        # Ten classes back example.com/gpu-0..9 from the one node's ten devices.
        ("SchedulingWithExtendedResource/fast", 10, 0),
        # Two pools: init pods take each pool's preallocate device; a two-device claim fits on
        # each pool's rest (after backtracking).
        ("SchedulingWithResourceClaimTemplatePartitionable/fast", 2, 0),
        # Two pools of one shareable 80Gi device: a claim of 2 x 40Gi fills one.
        ("SchedulingWithResourceClaimTemplateConsumableCapacity/fast", 2, 0),
        # The first alternative matches no device, the second does: the node's two devices.
        ("SchedulingWithResourceClaimTemplateFirstAvailable/fast", 2, 0),
        # Pod-level requests on five default nodes: all fit.
        ("PodLevelResources/5Nodes", 10, 0),
        # 3-CPU pods on 4-CPU nodes: one a node.
        ("Batching/ResourceSaturation_5Nodes", 5, 0),
    ],
)
def test_a_small_size_places_its_pods(name: str, scheduled: int, unschedulable: int) -> None:
    w = workload(name)
    placements: dict[str, str] = {}
    # A pod that never gets its claim is never decided: a bound on the wait, not a hang.
    result = asyncio.run(asyncio.wait_for(run_workload(w, placements=placements), 60))
    assert (result.scheduled, result.unschedulable) == (scheduled, unschedulable), placements
    if name.startswith("Batching/"):  # its pods are all measured: one a node
        assert len(placements) == len(set(placements.values())) == scheduled


@pytest.mark.parametrize(
    ("name", "more"),
    [
        # A third pod finds every pool's rest taken, and no pool has two devices left.
        ("SchedulingWithResourceClaimTemplatePartitionable/fast", 1),
        # A third claim of 2 x 40Gi finds both 80Gi devices full.
        ("SchedulingWithResourceClaimTemplateConsumableCapacity/fast", 1),
        # The node's two devices are taken, and the first alternative's class has none.
        ("SchedulingWithResourceClaimTemplateFirstAvailable/fast", 2),
    ],
)
def test_past_the_devices_a_pod_fits_nowhere(name: str, more: int) -> None:
    w = workload(name)
    big = reshaped(yaml_workload(name), measured=w.measure_pods + more)
    result = asyncio.run(asyncio.wait_for(run_yaml(big), 60))
    assert (result.measure_pods, result.scheduled, result.unschedulable) == (
        w.measure_pods + more,
        w.measure_pods,
        more,
    )


def test_the_benchmark_workloads_of_these_cases_are_their_shipped_sizes() -> None:
    sizes = {
        "SchedulingWithExtendedResource/2000pods_100nodes": (100, 1000, 1000),
        "SchedulingWithResourceClaimTemplateToleration/1000pods_100nodes": (100, 500, 500),
        "SchedulingWithResourceClaimTemplatePartitionable/400pods_100nodes": (100, 200, 200),
        "SchedulingWithResourceClaimTemplateConsumableCapacity/500pods_100nodes": (100, 0, 500),
        "SchedulingWithResourceClaimTemplateFirstAvailable/1000pods_100nodes": (100, 0, 1000),
        "PodLevelResources/5000Nodes": (5000, 1000, 1000),
        "Batching/ResourceSaturation_5000Nodes": (5000, 0, 5000),
    }
    for name, counts in sizes.items():
        w = WORKLOADS[name]
        assert (w.nodes, w.init_pods, w.measure_pods) == counts, name
        assert w.yaml_source in ("dra.yaml", "misc.yaml")
    # A DRA workload's slices: one per node of the driver (ten devices each), beside the pools.
    # A DRA workload's driver: ten devices on each of its nodes.
    y = yaml_workload("SchedulingWithResourceClaimTemplateToleration/1000pods_100nodes")
    drivers = [op for op in y.ops if isinstance(op, CreateResourceDriver)]
    assert [(d.nodes, d.max_claims) for d in drivers] == [("scheduler-perf-dra-*", 10)]
    assert {op_node(y, i)["metadata"]["name"] for i in range(100)} == {f"scheduler-perf-dra-{i}" for i in range(100)}
    assert WORKLOADS["PodLevelResources/5000Nodes"].floor is not None


def _phases(docs: list[Obj]) -> list[str]:
    result = asyncio.run(simulate(load_config(None).profiles, parse_scenario(docs)))
    return [p["phase"] for p in result.pods]


def test_a_device_taint_rule_keeps_the_devices_from_pods_that_do_not_tolerate_it() -> None:
    y = yaml_workload("SchedulingWithResourceClaimTemplateToleration/fast")
    nodes = [op_node(y, i) for i in range(y.nodes)]
    driver = next(op for op in y.ops if isinstance(op, CreateResourceDriver))
    slices = [driver_slice(driver.driver, n["metadata"]["name"], driver.max_claims) for n in nodes]
    objects = op_objects(y) + slices
    intolerant = [o for o in objects if o["kind"] == "ResourceClaimTemplate" and o["metadata"]["namespace"] == "test"]
    assert len(intolerant) == 1
    del intolerant[0]["spec"]["spec"]["devices"]["requests"][0]["exactly"]["tolerations"]
    namespaces = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n}} for n in ("init", "test")]
    pod = op_pod(y, 0)
    assert pod["metadata"]["namespace"] == "test"
    assert _phases([*namespaces, *nodes, *objects, pod]) == ["Unschedulable"]


def test_pod_level_requests_are_what_the_node_counts() -> None:
    """Forty-one 100m pods at pod level do not fit a 4-CPU node: the fortieth fills it."""
    y = yaml_workload("PodLevelResources/5Nodes")
    pod = op_pod(y, 0)
    assert pod["spec"]["resources"]["requests"] == {"cpu": "100m", "memory": "500Mi"}
    assert all("resources" not in c for c in pod["spec"]["containers"])
    pods = [op_pod(y, i) for i in range(41)]
    phases = _phases([op_node(y, 0), *pods])
    assert phases.count("Scheduled") == 40 and phases.count("Unschedulable") == 1
    assert (SHIPPED_DIR / "templates" / "pod-with-pod-level-resources.yaml").is_file()
