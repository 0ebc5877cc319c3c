"""Every shipped workload's small (``integration-test``) size runs under the default profile on
the in-memory cluster, and the ops do what the workload says: nodes named and labelled, pods in
their namespaces with the profile's schedulerName, every measured pod bound."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from kubesched.bench.model import CreatePods, ReplayTrace
from kubesched.bench.ops import CHURN_PREFIX, OpRunner
from kubesched.bench.runner import default_subject
from kubesched.bench.workload import load_workloads, shipped_workloads
from kubesched.framework.features import FeatureGates

#: Upstream labels some large sizes integration-test too (SchedulingWithExtendedResource's 2000 and
#: 5000 pods): the small ones are those of at most 100 nodes and 100 measured pods. The steady-state
#: cases measure as many pods as their duration lets through (tests/unit/test_bench_dra_and_pod_group_cases.py).
SMALL = sorted(
    n
    for n, w in shipped_workloads().items()
    if "integration-test" in w.labels
    and w.nodes <= 100 >= w.measured_pods
    and not any(isinstance(op, CreatePods) and op.steady_seconds is not None for op in w.ops)
)
#: Cases upstream gives no integration-test size (tests/unit/test_bench_upstream_cases.py runs
#: them smaller).
NO_SMALL_UPSTREAM = {"EventHandlingNodeAdd", "EventHandlingPodAdd"}


def test_every_shipped_case_has_a_small_size() -> None:
    # A trace replay's size is its trace's, which is not shipped (tests/unit/test_bench_replay_trace.py
    # replays a small trace of its own).
    replays = {
        n.split("/", 1)[0] for n, w in shipped_workloads().items() if any(isinstance(op, ReplayTrace) for op in w.ops)
    }
    assert replays == {"OpenbGPU"}
    cases = {n.split("/", 1)[0] for n in shipped_workloads()} - replays
    small = {n.split("/", 1)[0] for n, w in shipped_workloads().items() if "integration-test" in w.labels}
    assert cases - NO_SMALL_UPSTREAM == small
    assert {n.split("/", 1)[0] for n in SMALL} <= small
    assert len(cases) >= 9


async def _run(name: str) -> OpRunner:
    w = shipped_workloads()[name]
    gates = FeatureGates(w.feature_gates)
    cfg, profile = default_subject().load(gates)
    runner = OpRunner(w, cfg, profile, gates, timeout=120)
    await runner.run()
    return runner


async def _run_file(path: Any) -> OpRunner:
    """The one workload of the file at ``path``, run under the default profile."""
    (w,) = load_workloads(path)
    gates = FeatureGates(w.feature_gates)
    cfg, profile = default_subject().load(gates)
    runner = OpRunner(w, cfg, profile, gates, timeout=60)
    await runner.run()
    return runner


@pytest.mark.parametrize("name", SMALL)
async def test_a_small_shipped_workload_binds_every_measured_pod(name: str) -> None:
    w = shipped_workloads()[name]
    runner = await _run(name)
    (result,) = runner.results
    assert (result.workload, result.nodes, result.init_pods) == (name, w.nodes, w.init_pods)
    assert (result.measure_pods, result.scheduled, result.unschedulable) == (w.measured_pods, w.measured_pods, 0)
    assert result.pods_per_second > 0
    pods, _ = runner.store.list("Pod")
    assert {p["spec"]["schedulerName"] for p in pods} == {"default-scheduler"}


async def test_nodes_get_their_labels_and_pods_their_namespaces() -> None:
    runner = await _run("TopologySpreading/5Nodes")
    nodes, _ = runner.store.list("Node")
    assert sorted(n["metadata"]["name"] for n in nodes) == [f"node-{i}" for i in range(5)]
    zones = Counter(n["metadata"]["labels"]["topology.kubernetes.io/zone"] for n in nodes)
    assert zones == {"moon-1": 2, "moon-2": 2, "moon-3": 1}
    assert all(n["metadata"]["labels"]["kubernetes.io/hostname"] == n["metadata"]["name"] for n in nodes)
    pods, _ = runner.store.list("Pod")
    # Upstream's default namespaces: namespace-<index of the createPods op>.
    assert Counter(p["metadata"]["namespace"] for p in pods) == {"namespace-1": 10, "namespace-2": 10}


async def test_a_daemonset_pod_lands_on_the_named_node() -> None:
    runner = await _run("SchedulingDaemonset/5Nodes")
    pods, _ = runner.store.list("Pod")
    assert len(pods) == 10 and {p["spec"]["nodeName"] for p in pods} == {"scheduler-perf-node"}


async def test_churn_pods_are_created_but_neither_measured_nor_waited_for() -> None:
    runner = await _run("Unschedulable/5Nodes/1Init/10Pods")
    pods, _ = runner.store.list("Pod")
    churn = [p for p in pods if p["metadata"]["name"].startswith(CHURN_PREFIX)]
    assert churn and not any(p["spec"].get("nodeName") for p in churn)
    assert runner.results[0].measure_pods == 10


async def test_delete_pods_takes_a_namespaces_labelled_pods_and_they_are_not_waited_for(tmp_path: Any) -> None:
    (tmp_path / "big.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {generateName: big-, labels: {size: big}}\n"
        "spec: {containers: [{name: c, image: x, resources: {requests: {cpu: '100'}}}]}\n"
    )
    (tmp_path / "w.yaml").write_text(
        """
- name: Deleting
  workloadTemplate:
  - {opcode: createNodes, count: 2}
  - {opcode: createPods, count: 3, namespace: a, podTemplatePath: big.yaml, skipWaitToCompletion: true}
  - {opcode: createPods, count: 2, namespace: a}
  - {opcode: deletePods, namespace: a, labelSelector: {size: big}, deletePodsPerSecond: 1000}
  - {opcode: barrier}
  - {opcode: createPods, count: 4, namespace: b, collectMetrics: true}
  workloads: [{name: w}]
"""
    )
    runner = await _run_file(tmp_path / "w.yaml")
    left, _ = runner.store.list("Pod", "a")
    assert len(left) == 2 and all(p["spec"].get("nodeName") for p in left)  # only the small ones stay
    (result,) = runner.results
    assert (result.measure_pods, result.scheduled) == (4, 4)


async def test_churn_in_recreate_mode_keeps_its_number_of_objects(tmp_path: Any) -> None:
    (tmp_path / "churn.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {generateName: churn-}\nspec: {containers: [{name: c, image: x}]}\n"
    )
    (tmp_path / "w.yaml").write_text(
        """
- name: Recreating
  workloadTemplate:
  - {opcode: createNodes, count: 1}
  - {opcode: churn, mode: recreate, number: 2, intervalMilliseconds: 5, templatePaths: [churn.yaml]}
  - {opcode: sleep, duration: 200ms}
  - {opcode: createPods, count: 1, collectMetrics: true}
  workloads: [{name: w}]
"""
    )
    runner = await _run_file(tmp_path / "w.yaml")
    pods, _ = runner.store.list("Pod")
    churn = sorted(
        int(p["metadata"]["name"][len(CHURN_PREFIX) :]) for p in pods if p["metadata"]["name"].startswith(CHURN_PREFIX)
    )
    assert len(churn) == 2 and churn[-1] >= 3  # more were made, two live: the newest
    assert churn[1] == churn[0] + 1
