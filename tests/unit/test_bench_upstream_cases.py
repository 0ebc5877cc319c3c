"""The upstream scheduler_perf cases kubesched bench ships beyond the basic ones: each small
(integration-test) size run in-process under the default profile, and what the case is about
checked on the cluster it leaves (where its pods went, which objects its ops made)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched.bench.errors import WorkloadError
from kubesched.bench.model import CreateNamespaces, CreatePods
from kubesched.bench.model import Workload as BenchWorkload
from kubesched.bench.ops import CHURN_PREFIX, OpRunner
from kubesched.bench.runner import default_subject
from kubesched.bench.workload import SHIPPED_DIR, load_workloads, parse_workloads, shipped_workloads
from kubesched.framework.features import FeatureGates

NEW_CASES = {
    # affinity/performance-config.yaml
    "SchedulingPodMatchingAntiAffinity": "affinity.yaml",
    "SchedulingPreferredPodAffinity": "affinity.yaml",
    "SchedulingPreferredPodAntiAffinity": "affinity.yaml",
    "MixedSchedulingBasePod": "affinity.yaml",
    "SchedulingRequiredPodAntiAffinityWithNSSelector": "affinity.yaml",
    "SchedulingPreferredAntiAffinityWithNSSelector": "affinity.yaml",
    "SchedulingRequiredPodAffinityWithNSSelector": "affinity.yaml",
    "SchedulingPreferredAffinityWithNSSelector": "affinity.yaml",
    "SchedulingGatedPodsWithPodAffinityImpactForThroughput": "affinity.yaml",
    # topology_spreading/performance-config.yaml
    "PreferredTopologySpreading": "topology_spreading.yaml",
    "DefaultTopologySpreading": "topology_spreading.yaml",
    "SchedulingWithNodeInclusionPolicy": "topology_spreading.yaml",
    # misc/performance-config.yaml
    "SchedulingWithMixedChurn": "misc.yaml",
    "SchedulingWhileGated": "misc.yaml",
    # volumes/performance-config.yaml
    "SchedulingSecrets": "volumes.yaml",
    "SchedulingInTreePVs": "volumes.yaml",
    "SchedulingMigratedInTreePVs": "volumes.yaml",
    "SchedulingCSIPVs": "volumes.yaml",
    "PreemptionPVs": "volumes.yaml",
    # event_handling/performance-config.yaml
    "EventHandlingNodeAdd": "event_handling.yaml",
    "EventHandlingPodAdd": "event_handling.yaml",
}
#: Cases upstream gives no threshold.
NO_THRESHOLD = {"PreemptionPVs", "EventHandlingNodeAdd", "EventHandlingPodAdd"}
#: Cases upstream gives no small (integration-test) size: run here at the params given.
SMALLER = {"EventHandlingNodeAdd": {"nodes": 2, "measurePods": 5}, "EventHandlingPodAdd": {"measurePods": 5}}


def _small(case: str) -> str:
    (name,) = [n for n, w in shipped_workloads().items() if n.startswith(case + "/") and "integration-test" in w.labels]
    return name


def _smaller(case: str) -> BenchWorkload:
    """The shipped case ``case`` with one workload of ``SMALLER``'s params."""
    file = SHIPPED_DIR / NEW_CASES[case]
    (data,) = [c for c in yaml.safe_load(file.read_text()) if c["name"] == case]
    data["workloads"] = [{"name": "tiny", "params": SMALLER[case]}]
    (w,) = parse_workloads([data], SHIPPED_DIR, file.name)
    return w


def _workload(case: str) -> BenchWorkload:
    return _smaller(case) if case in SMALLER else shipped_workloads()[_small(case)]


async def _run_workload(w: BenchWorkload) -> OpRunner:
    gates = FeatureGates(w.feature_gates)
    cfg, profile = default_subject().load(gates)
    runner = OpRunner(w, cfg, profile, gates, timeout=120)
    await runner.run()
    return runner


async def _run(case: str) -> tuple[OpRunner, list[dict[str, Any]]]:
    runner = await _run_workload(_workload(case))
    pods, _ = runner.store.list("Pod")
    return runner, pods


def _node_of(pods: list[dict[str, Any]], namespace: str) -> list[str]:
    return [p["spec"].get("nodeName", "") for p in pods if p["metadata"]["namespace"] == namespace]


def test_each_new_case_is_shipped_in_its_file_with_a_performance_size() -> None:
    shipped = shipped_workloads()
    for case, file in NEW_CASES.items():
        sizes = [w for n, w in shipped.items() if n.startswith(case + "/")]
        assert {w.source for w in sizes} == {file}, case
        assert any("performance" in w.labels for w in sizes), case
        assert any(w.threshold for w in sizes) == (case not in NO_THRESHOLD), case


@pytest.mark.parametrize("case", sorted(NEW_CASES))
async def test_a_new_cases_small_size_binds_every_measured_pod(case: str) -> None:
    w = _workload(case)
    runner = await _run_workload(w)
    (result,) = runner.results
    assert result.measure_pods == w.measured_pods > 0
    assert (result.scheduled, result.unschedulable) == (w.measured_pods, 0)


async def test_pods_labelled_for_an_anti_affinity_keep_off_its_node() -> None:
    runner, pods = await _run("SchedulingPodMatchingAntiAffinity")
    (held,) = _node_of(pods, "sched-0")
    measured = _node_of(pods, "sched-1")
    assert len(measured) == 4 and all(measured) and held not in measured


async def test_ns_selector_namespaces_carry_the_templates_labels_and_pod_sets_fill_them() -> None:
    runner, pods = await _run("SchedulingRequiredPodAntiAffinityWithNSSelector")
    namespaces, _ = runner.store.list("Namespace")
    labelled = {
        n["metadata"]["name"] for n in namespaces if (n["metadata"].get("labels") or {}).get("team") == "devops"
    }
    assert labelled == {"init-ns-0", "init-ns-1", "measure-ns-0"}
    assert Counter(p["metadata"]["namespace"] for p in pods) == {"init-ns-0": 2, "init-ns-1": 2, "measure-ns-0": 6}
    # The anti-affinity reaches across the selected namespaces: ten pods, ten nodes.
    assert len({p["spec"]["nodeName"] for p in pods}) == 10


async def test_node_inclusion_policy_spreads_one_pod_to_each_untainted_node() -> None:
    runner, pods = await _run("SchedulingWithNodeInclusionPolicy")
    nodes = sorted(p["spec"]["nodeName"] for p in pods)
    assert nodes == ["node-0", "node-1", "node-2", "node-3"]


async def test_default_spreading_runs_with_the_service_its_pods_are_selected_by() -> None:
    runner, pods = await _run("DefaultTopologySpreading")
    services, _ = runner.store.list("Service", "service-ns")
    assert [s["spec"]["selector"] for s in services] == [{"app": "scheduler-perf"}]
    assert len(_node_of(pods, "service-ns")) == 10


async def test_gated_pods_stay_gated_and_unbound_while_the_measured_ones_bind() -> None:
    for case, gated_ns, measured_ns in (
        ("SchedulingWhileGated", "namespace-1", "namespace-5"),
        ("SchedulingGatedPodsWithPodAffinityImpactForThroughput", "namespace-1", "namespace-3"),
    ):
        runner, pods = await _run(case)
        gated = [p for p in pods if p["metadata"]["namespace"] == gated_ns]
        assert len(gated) == 10 and all(p["spec"].get("schedulingGates") for p in gated), case
        assert not any(p["spec"].get("nodeName") for p in gated), case
        assert _node_of(pods, measured_ns) == ["scheduler-perf-node"] * 10, case


async def test_mixed_churn_keeps_one_node_one_pod_and_one_service_of_its_own() -> None:
    runner, pods = await _run("SchedulingWithMixedChurn")
    nodes, _ = runner.store.list("Node")
    services, _ = runner.store.list("Service")
    churn_nodes = [n for n in nodes if n["metadata"]["name"].startswith(CHURN_PREFIX)]
    churn_pods = [p for p in pods if p["metadata"]["name"].startswith(CHURN_PREFIX)]
    churn_services = [s for s in services if s["metadata"]["name"].startswith(CHURN_PREFIX)]
    assert (len(churn_nodes), len(churn_pods), len(churn_services)) == (1, 1, 1)
    assert churn_services[0]["metadata"]["namespace"] == "default"
    assert not churn_pods[0]["spec"].get("nodeName")  # it fits nowhere
    measured = _node_of(pods, "namespace-2")
    assert len(measured) == 100 and not any(n.startswith(CHURN_PREFIX) for n in measured)


async def test_churn_recreates_a_service_in_place(tmp_path: Path) -> None:
    (tmp_path / "svc.yaml").write_text(
        "apiVersion: v1\nkind: Service\nmetadata: {generateName: s-}\nspec: {selector: {app: x}, ports: [{port: 80}]}\n"
    )
    (tmp_path / "w.yaml").write_text(
        """
- name: ServiceChurn
  workloadTemplate:
  - {opcode: createNodes, count: 1}
  - {opcode: churn, mode: recreate, number: 2, intervalMilliseconds: 5, templatePaths: [svc.yaml]}
  - {opcode: sleep, duration: 100ms}
  - {opcode: createPods, count: 1, collectMetrics: true}
  workloads: [{name: w}]
"""
    )
    (w,) = load_workloads(tmp_path / "w.yaml")
    runner = await _run_workload(w)
    services, _ = runner.store.list("Service", "default")
    numbers = sorted(int(s["metadata"]["name"].rsplit("-", 1)[1]) for s in services)
    assert len(numbers) == 2 and numbers[-1] >= 3 and numbers[1] == numbers[0] + 1


async def test_churn_refuses_a_template_without_a_kind(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text("metadata: {name: x}\n")
    (tmp_path / "w.yaml").write_text(
        """
- name: Bad
  workloadTemplate:
  - {opcode: createNodes, count: 1}
  - {opcode: churn, mode: create, templatePaths: [bad.yaml]}
  - {opcode: createPods, count: 1, collectMetrics: true}
  workloads: [{name: w}]
"""
    )
    (w,) = load_workloads(tmp_path / "w.yaml")
    with pytest.raises(WorkloadError, match=r"bad.yaml: a churn template is one object with apiVersion and kind"):
        await _run_workload(w)


def test_create_pod_sets_runs_its_create_pods_op_once_per_namespace(tmp_path: Path) -> None:
    data = [
        {
            "name": "Sets",
            "workloadTemplate": [
                {"opcode": "createNodes", "count": 1},
                {"opcode": "createNamespaces", "prefix": "ns", "countParam": "$n"},
                {
                    "opcode": "createPodSets",
                    "countParam": "$n",
                    "namespacePrefix": "ns",
                    "createPodsOp": {"opcode": "createPods", "countParam": "$per"},
                },
                {"opcode": "createPods", "count": 2, "collectMetrics": True},
            ],
            "workloads": [{"name": "w", "params": {"n": 3, "per": 4}}],
        }
    ]
    (w,) = parse_workloads(data, tmp_path, "sets.yaml")
    sets = [op for op in w.ops if isinstance(op, CreatePods)]
    assert [(op.namespace, op.count) for op in sets] == [("ns-0", 4), ("ns-1", 4), ("ns-2", 4), ("namespace-3", 2)]
    assert (w.init_pods, w.measured_pods) == (12, 2)
    assert isinstance(w.ops[1], CreateNamespaces) and w.ops[1].template is None


@pytest.mark.parametrize(
    ("op", "message"),
    [
        (
            {"opcode": "createPodSets", "count": 1, "createPodsOp": {"opcode": "createPods", "count": 1}},
            "namespacePrefix: required",
        ),
        ({"opcode": "createPodSets", "count": 1, "namespacePrefix": "ns"}, "createPodsOp: required"),
        (
            {"opcode": "createPodSets", "count": 1, "namespacePrefix": "ns", "createPodsOp": {"opcode": "barrier"}},
            r"createPodsOp.opcode: must be createPods",
        ),
        (
            {"opcode": "createPodSets", "count": 1, "namespacePrefix": "ns", "createPodsOp": {"opcode": "createPods"}},
            r"\(createPodSets\).createPodsOp \(createPods\).count: required",
        ),
    ],
)
def test_create_pod_sets_mistakes_name_the_field(op: dict[str, Any], message: str, tmp_path: Path) -> None:
    data = [
        {
            "name": "C",
            "workloadTemplate": [op, {"opcode": "createPods", "count": 1, "collectMetrics": True}],
            "workloads": [{"name": "w"}],
        }
    ]
    with pytest.raises(WorkloadError, match=message):
        parse_workloads(data, tmp_path, "mine.yaml")


async def test_each_pod_with_volume_templates_mounts_its_own_claim_bound_to_its_own_volume() -> None:
    runner, pods = await _run("SchedulingCSIPVs")
    measured = sorted(
        (p for p in pods if p["metadata"]["namespace"] == "namespace-2"),
        key=lambda p: int(p["metadata"]["name"].rsplit("-", 1)[1]),
    )
    assert [p["spec"]["volumes"] for p in measured] == [
        [{"name": "vol", "persistentVolumeClaim": {"claimName": f"pvc-{i}"}}] for i in range(10)
    ]
    claim = runner.store.get("PersistentVolumeClaim", "namespace-2", "pvc-3")
    volume = runner.store.get("PersistentVolume", None, "namespace-2-vol-3")
    assert (claim["spec"]["volumeName"], claim["status"]["phase"]) == ("namespace-2-vol-3", "Bound")
    assert volume["spec"]["claimRef"]["name"] == "pvc-3" and volume["spec"]["claimRef"]["namespace"] == "namespace-2"
    assert volume["spec"]["csi"]["volumeHandle"] == "namespace-2-vol-3"
    csi_nodes, _ = runner.store.list("CSINode")
    assert len(csi_nodes) == 5
    assert all(
        c["spec"]["drivers"]
        == [{"name": "ebs.csi.aws.com", "nodeID": c["metadata"]["name"], "allocatable": {"count": 39}}]
        for c in csi_nodes
    )
    node = runner.store.get("Node", None, "node-0")
    assert node["status"]["allocatable"]["attachable-volumes-csi-ebs.csi.aws.com"] == "39"
    assert node["status"]["allocatable"]["cpu"] == "4"  # the template's allocatable kept


async def test_in_tree_volumes_get_their_volume_id_and_migrated_nodes_say_so() -> None:
    runner, _ = await _run("SchedulingMigratedInTreePVs")
    volume = runner.store.get("PersistentVolume", None, "namespace-1-vol-4")
    assert volume["spec"]["awsElasticBlockStore"]["volumeID"] == "vol-4"
    csi_node = runner.store.get("CSINode", None, "node-2")
    assert csi_node["metadata"]["annotations"] == {
        "storage.alpha.kubernetes.io/migrated-plugins": "kubernetes.io/aws-ebs"
    }


async def test_the_csi_node_limit_the_strategy_sets_is_the_one_the_scheduler_keeps(tmp_path: Path) -> None:
    templates = Path(__file__).resolve().parents[2] / "kubesched" / "bench" / "workloads" / "templates"
    (tmp_path / "w.yaml").write_text(
        f"""
- name: Limited
  workloadTemplate:
  - opcode: createNodes
    count: 2
    nodeAllocatableStrategy: {{csiNodeAllocatable: {{ebs.csi.aws.com: {{count: 1}}}}}}
  - opcode: createPods
    count: 3
    collectMetrics: true
    persistentVolumeTemplatePath: {templates / "pv-csi.yaml"}
    persistentVolumeClaimTemplatePath: {templates / "pvc.yaml"}
  workloads: [{{name: w}}]
"""
    )
    (w,) = load_workloads(tmp_path / "w.yaml")
    runner = await _run_workload(w)
    (result,) = runner.results
    assert (result.scheduled, result.unschedulable) == (2, 1)
    pods, _ = runner.store.list("Pod")
    assert sorted(p["spec"].get("nodeName", "") for p in pods) == ["", "node-0", "node-1"]


@pytest.mark.parametrize(
    ("op", "message"),
    [
        (
            {"opcode": "createPods", "count": 1, "persistentVolumeTemplatePath": "pv.yaml"},
            r"persistentVolumeClaimTemplatePath: required with",
        ),
        (
            {
                "opcode": "createNodes",
                "count": 1,
                "nodeAllocatableStrategy": {"csiNodeAllocatable": {"d": {"count": -1}}},
            },
            r"nodeAllocatableStrategy.csiNodeAllocatable.d.count: expected a count of volumes, got -1",
        ),
        (
            {"opcode": "createNodes", "count": 1, "nodeAllocatableStrategy": {"limits": {}}},
            r"nodeAllocatableStrategy.limits: unknown field",
        ),
    ],
)
def test_volume_and_allocatable_mistakes_name_the_field(op: dict[str, Any], message: str, tmp_path: Path) -> None:
    (tmp_path / "pv.yaml").write_text("kind: PersistentVolume\n")
    data = [
        {
            "name": "C",
            "workloadTemplate": [op, {"opcode": "createPods", "count": 1, "collectMetrics": True}],
            "workloads": [{"name": "w"}],
        }
    ]
    with pytest.raises(WorkloadError, match=message):
        parse_workloads(data, tmp_path, "mine.yaml")


async def test_node_add_unblocks_each_stage_on_the_nodes_made_for_it() -> None:
    runner, pods = await _run("EventHandlingNodeAdd")
    (result,) = runner.results
    assert (result.measure_pods, result.scheduled) == (30, 30)
    by_ns: dict[str, set[str]] = {}
    for p in pods:
        by_ns.setdefault(p["metadata"]["namespace"], set()).add(p["spec"]["nodeName"].rsplit("-", 1)[0])
    assert by_ns["tainttoleration"] == {"node-with-taint"}
    assert "node-unschedulable" not in by_ns["nodeunschedulable"]
    assert by_ns["nodeaffinity"] <= {"node-unblocker"}  # the only schedulable nodes labelled affinity: allow


async def test_pod_add_measures_the_selected_pods_and_renders_each_pods_index() -> None:
    runner, pods = await _run("EventHandlingPodAdd")
    (result,) = runner.results
    assert (result.measure_pods, result.scheduled) == (10, 10)  # the unblockers are not measured
    node_of = {p["metadata"]["name"]: p["spec"]["nodeName"] for p in pods}
    unblockers = {
        p["metadata"]["labels"]["color"]: p["spec"]["nodeName"]
        for p in pods
        if p["metadata"]["name"].startswith("pod-unblocker-affinity-")
    }
    assert sorted(unblockers) == [f"yellow-{i}" for i in range(5)]
    for p in pods:
        if p["metadata"]["name"].startswith("pod-interpodaffinity-"):
            term = p["spec"]["affinity"]["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0]
            wanted = term["labelSelector"]["matchLabels"]["color"]
            assert node_of[p["metadata"]["name"]] == unblockers[wanted]


async def test_a_barrier_with_a_label_selector_waits_for_those_pods_only(tmp_path: Path) -> None:
    (tmp_path / "stuck.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {generateName: stuck-, labels: {type: stuck}}\n"
        "spec: {containers: [{name: c, image: x, resources: {requests: {cpu: '100'}}}]}\n"
    )
    (tmp_path / "w.yaml").write_text(
        """
- name: Selected
  workloadTemplate:
  - {opcode: createNodes, count: 1}
  - {opcode: startCollectingMetrics, labelSelector: {type: stuck}}
  - {opcode: createPods, count: 2, podTemplatePath: stuck.yaml, skipWaitToCompletion: true}
  - {opcode: createPods, count: 3, skipWaitToCompletion: true}
  - {opcode: barrier, labelSelector: {type: stuck}, stageRequirement: Attempted}
  - {opcode: stopCollectingMetrics}
  workloads: [{name: w}]
"""
    )
    (w,) = load_workloads(tmp_path / "w.yaml")
    assert w.measured_pods == 2
    runner = await _run_workload(w)
    (result,) = runner.results
    assert (result.measure_pods, result.scheduled, result.unschedulable) == (2, 0, 2)
