"""Upstream scheduler_perf's DRA cases (dra.yaml) and pod-group cases (podgroups.yaml) as
kubesched bench ships them: each case's small size run through the real runner under the default
profile, what the case is about checked on the cluster it leaves (claims made and allocated from
the templates, slices per node, taints tolerated, groups placed), and the runner's additions for
them: createResourceDriver, allocResourceClaims, createPodGroups, waitForPodGroups, steady-state
createPods, countMultiplier and templateParams of createPods, template functions, per-topic
thresholds."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kubesched.bench.errors import WorkloadError
from kubesched.bench.model import CreatePods, Workload
from kubesched.bench.ops import OpRunner
from kubesched.bench.runner import default_subject
from kubesched.bench.templates import read_template
from kubesched.bench.workload import SHIPPED_DIR, load_workloads, parse_workloads, shipped_workloads
from kubesched.framework.features import FeatureGates

DRA_CASES = [
    "SchedulingWithResourceClaimTemplate",
    "SchedulingWithResourceClaimTemplateToleration",
    "SchedulingWithExtendedResource",
]
STEADY_CASES = ["SteadyStateClusterResourceClaimTemplate", "SteadyStateClusterResourceClaimTemplateFirstAvailable"]
POD_GROUP_CASES = [
    "GangScheduling",
    "BasicScheduling",
    "TopologyAwareScheduling",
    "CPGBasicScheduling",
    "CPGGangScheduling",
]


def _smallest(case: str) -> Workload:
    sizes = [w for n, w in shipped_workloads().items() if n.startswith(case + "/")]
    return min((w for w in sizes if "short" in w.labels), key=lambda w: w.measured_pods)


async def run_workload(w: Workload) -> OpRunner:
    """``w`` run through the bench's op runner under the default profile (120 s at most)."""
    gates = FeatureGates(w.feature_gates)
    cfg, profile = default_subject().load(gates)
    runner = OpRunner(w, cfg, profile, gates, timeout=120)
    await runner.run()
    return runner


def test_the_cases_are_shipped_with_upstreams_labels_and_thresholds() -> None:
    shipped = shipped_workloads()
    for case in DRA_CASES + STEADY_CASES:
        assert {w.source for n, w in shipped.items() if n.startswith(case + "/")} == {"dra.yaml"}
    for case in POD_GROUP_CASES:
        sizes = {n: w for n, w in shipped.items() if n.startswith(case + "/")}
        # GangScheduling also holds two sizes of ours (no upstream case), for benchmarks.run: 2000
        # nodes, and TopologyAwareScheduling's 750 gangs of 4 without their rack.
        assert {w.source for w in sizes.values()} == {"podgroups.yaml"}
        assert len(sizes) == (10 if case == "GangScheduling" else 8), case
        assert sum("short" in w.labels for w in sizes.values()) == 1
        assert sum("performance" in w.labels for w in sizes.values()) == 6
        assert not any(w.threshold for w in sizes.values())
    # Upstream's per-topic threshold (topic dra) on its one performance size.
    assert shipped["SchedulingWithResourceClaimTemplate/5000pods_500nodes"].threshold == 120
    assert shipped["SchedulingWithResourceClaimTemplate/5000pods_500nodes"].labels == ("performance",)
    assert shipped["SchedulingWithResourceClaimTemplate/2000pods_100nodes"].threshold is None
    assert shipped["SteadyStateClusterResourceClaimTemplate/empty_500nodes"].threshold == 64
    big = shipped["GangScheduling/5000Nodes_9Gangs_9000Pods_1000PerGroup"]
    assert (big.nodes, big.measured_pods) == (5000, 9000)


@pytest.mark.parametrize("case", DRA_CASES + POD_GROUP_CASES)
async def test_a_cases_small_size_binds_every_measured_pod(case: str) -> None:
    w = _smallest(case)
    runner = await run_workload(w)
    (result,) = runner.results
    assert result.measure_pods == w.measured_pods > 0
    assert (result.scheduled, result.unschedulable) == (w.measured_pods, 0)
    assert result.pods_per_second > 0


@pytest.mark.parametrize("case", STEADY_CASES)
async def test_a_steady_state_keeps_its_pods_coming_for_its_duration(case: str) -> None:
    """Ten pods pending for two seconds on one node of ten devices: each bound pod is deleted, its
    claim with it, so the devices come back and many more than ten pods bind."""
    w = _smallest(case)
    runner = await run_workload(w)
    (result,) = runner.results
    assert result.scheduled > 3 * 10 and result.unschedulable <= 10
    assert result.measure_pods == result.scheduled + result.unschedulable
    assert result.seconds >= 2.0
    pods, _ = runner.store.list("Pod", "test")
    assert len(pods) == 10  # the last ten; the others were deleted once bound
    claims, _ = runner.store.list("ResourceClaim", "test")
    assert len(claims) <= 10  # the deleted pods' claims went with them


async def test_alloc_resource_claims_takes_devices_before_the_pods_come(tmp_path: Path) -> None:
    (tmp_path / "templates").symlink_to(SHIPPED_DIR / "templates")
    case = {
        "name": "Alloc",
        "workloadTemplate": [
            {"opcode": "createNodes", "count": 1, "nodeTemplatePath": "templates/node-with-dra-test-driver.yaml"},
            {
                "opcode": "createResourceDriver",
                "driverName": "test-driver.cdi.k8s.io",
                "nodes": "scheduler-perf-dra-*",
                "maxClaimsPerNode": 10,
            },
            {"opcode": "createAny", "templatePath": "templates/deviceclass.yaml"},
            {
                "opcode": "createAny",
                "templatePath": "templates/resourceclaim.yaml",
                "namespace": "init",
                "countParam": "$claims",
            },
            {"opcode": "allocResourceClaims", "namespace": "init"},
            {"opcode": "createAny", "templatePath": "templates/resourceclaimtemplate.yaml", "namespace": "test"},
            {
                "opcode": "createPods",
                "namespace": "test",
                "count": 10,
                "podTemplatePath": "templates/pod-with-claim-template.yaml",
                "collectMetrics": True,
            },
        ],
        "workloads": [{"name": "four", "params": {"claims": 4}}, {"name": "eleven", "params": {"claims": 11}}],
    }
    four, eleven = parse_workloads([case], tmp_path, "alloc.yaml")
    runner = await run_workload(four)
    claims, _ = runner.store.list("ResourceClaim", "init")
    held = [r["device"] for c in claims for r in c["status"]["allocation"]["devices"]["results"]]
    assert len(held) == len(set(held)) == 4
    assert (runner.results[0].scheduled, runner.results[0].unschedulable) == (6, 4)
    with pytest.raises(WorkloadError, match=r"allocResourceClaims: ResourceClaim init/test-claim-10 fits on no node"):
        await run_workload(eleven)


async def test_claims_are_made_from_the_template_and_allocated_on_the_driver_node() -> None:
    runner = await run_workload(_smallest("SchedulingWithResourceClaimTemplate"))
    slices, _ = runner.store.list("ResourceSlice")
    # One node without DRA (node-0), one the driver serves: one slice, ten devices.
    assert [(s["spec"]["nodeName"], len(s["spec"]["devices"])) for s in slices] == [("scheduler-perf-dra-1", 10)]
    claims, _ = runner.store.list("ResourceClaim", "test")
    assert len(claims) == 10
    devices = {r["device"] for c in claims for r in c["status"]["allocation"]["devices"]["results"]}
    assert devices == {f"instance-{i}" for i in range(10)}  # the node's ten devices, one a pod
    pods, _ = runner.store.list("Pod", "test")
    assert {p["spec"]["nodeName"] for p in pods} == {"scheduler-perf-dra-1"}


async def test_without_the_toleration_the_tainted_devices_take_no_pod(tmp_path: Path) -> None:
    runner = await run_workload(_smallest("SchedulingWithResourceClaimTemplateToleration"))
    assert runner.results[0].scheduled == 10
    # The same case with the untolerating claim template: every device is tainted NoSchedule.
    text = (
        (SHIPPED_DIR / "dra.yaml")
        .read_text()
        .replace("resourceclaimtemplate-toleration.yaml", "resourceclaimtemplate.yaml")
    )
    (tmp_path / "dra.yaml").write_text(text)
    (tmp_path / "templates").symlink_to(SHIPPED_DIR / "templates")
    (w,) = [
        x
        for x in load_workloads(tmp_path / "dra.yaml")
        if x.name == "SchedulingWithResourceClaimTemplateToleration/fast"
    ]
    runner = await run_workload(w)
    assert (runner.results[0].scheduled, runner.results[0].unschedulable) == (0, 10)


async def test_gang_members_are_made_per_group_and_each_group_is_placed() -> None:
    runner = await run_workload(_smallest("GangScheduling"))
    groups, _ = runner.store.list("PodGroup", "gang-ns-0")
    assert sorted(g["metadata"]["name"] for g in groups) == ["gang-0", "gang-1", "gang-2"]
    assert {g["spec"]["schedulingPolicy"]["gang"]["minCount"] for g in groups} == {3}
    pods, _ = runner.store.list("Pod", "gang-ns-0")
    members: dict[str, int] = {}
    for p in pods:
        assert p["spec"].get("nodeName")
        group = p["spec"]["schedulingGroup"]["podGroupName"]
        members[group] = members.get(group, 0) + 1
    assert members == {"gang-0": 3, "gang-1": 3, "gang-2": 3}  # DivideInt .Index .podsPerGroup


async def test_topology_aware_gangs_are_placed_in_one_rack_of_the_templated_nodes() -> None:
    """podgroup/tas: the node template's zone and rack come from each node's index."""
    runner = await run_workload(_smallest("TopologyAwareScheduling"))
    nodes, _ = runner.store.list("Node")
    racks = {n["metadata"]["name"]: n["metadata"]["labels"]["topology.kubernetes.io/rack"] for n in nodes}
    assert racks == {f"node-{i}": "rack-0" for i in range(10)}
    groups, _ = runner.store.list("PodGroup", "tas-ns-0")
    assert {g["spec"]["schedulingConstraints"]["topology"][0]["key"] for g in groups} == {"topology.kubernetes.io/rack"}
    pods, _ = runner.store.list("Pod", "tas-ns-0")
    assert len(pods) == 9 and all(racks[p["spec"]["nodeName"]] == "rack-0" for p in pods)


async def test_composite_groups_hold_their_pod_groups() -> None:
    runner = await run_workload(_smallest("CPGGangScheduling"))
    cpgs, _ = runner.store.list("CompositePodGroup", "cpg-gang-ns-0")
    assert sorted(c["metadata"]["name"] for c in cpgs) == ["cpg-0", "cpg-1", "cpg-2"]
    groups, _ = runner.store.list("PodGroup", "cpg-gang-ns-0")
    parents = sorted((g["metadata"]["name"], g["spec"]["parentCompositePodGroupName"]) for g in groups)
    assert parents == [(f"gang-group-{i}", f"cpg-{i // 2}") for i in range(6)]
    pods, _ = runner.store.list("Pod", "cpg-gang-ns-0")
    assert len(pods) == 18 and all(p["spec"].get("nodeName") for p in pods)


# --- the runner's additions: bad input names the field ---------------------------------------


def _case(ops: list[dict[str, Any]], params: dict[str, Any] | None = None, threshold: Any = None) -> dict[str, Any]:
    workload: dict[str, Any] = {"name": "w", "params": params or {}}
    if threshold is not None:
        workload["threshold"] = threshold
    return {"name": "C", "workloadTemplate": ops, "workloads": [workload]}


MEASURE = {"opcode": "createPods", "count": 1, "collectMetrics": True}


def test_a_threshold_per_topic_is_read_for_the_files_topic() -> None:
    case = _case([MEASURE], threshold={"dra": 120, "other": 5})
    (w,) = parse_workloads([case], SHIPPED_DIR, "dra.yaml")
    assert w.threshold == 120
    (w,) = parse_workloads([case], SHIPPED_DIR, "misc.yaml")
    assert w.threshold is None
    (w,) = parse_workloads([_case([MEASURE], threshold=35)], SHIPPED_DIR, "misc.yaml")
    assert w.threshold == 35
    with pytest.raises(WorkloadError, match=r"workloads\[0\]\.threshold\.dra: expected a number of pods/s"):
        parse_workloads([_case([MEASURE], threshold={"dra": "fast"})], SHIPPED_DIR, "dra.yaml")
    with pytest.raises(WorkloadError, match=r"workloads\[0\]\.threshold: expected a number, or a mapping"):
        parse_workloads([_case([MEASURE], threshold=[1])], SHIPPED_DIR, "dra.yaml")


def test_count_multiplier_and_template_params_make_the_pods() -> None:
    op = {
        "opcode": "createPods",
        "countParam": "$groups",
        "countMultiplierParam": "$per",
        "podTemplatePath": "templates/gang-pod.yaml",
        "templateParams": {"podsPerGroup": "$per"},
        "collectMetrics": True,
    }
    (w,) = parse_workloads([_case([op], {"groups": 4, "per": 5})], SHIPPED_DIR, "t.yaml")
    (pods,) = [o for o in w.ops if isinstance(o, CreatePods)]
    assert pods.count == 20 and dict(pods.params) == {"podsPerGroup": 5}
    pod = read_template(pods.template, "Pod", {**dict(pods.params), "Index": 14, "Count": 20})
    assert pod["spec"]["schedulingGroup"]["podGroupName"] == "gang-2"
    with pytest.raises(WorkloadError, match=r"\(createPods\)\.countMultiplier: must not be negative"):
        parse_workloads([_case([{**op, "countMultiplierParam": "$per"}], {"groups": 1, "per": -1})], SHIPPED_DIR)
    with pytest.raises(WorkloadError, match=r"\(createPods\)\.countMultiplier: count times countMultiplier is"):
        parse_workloads([_case([op], {"groups": 1000, "per": 10_000})], SHIPPED_DIR)


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("{{DivideInt .Index .Zero}}", r"division by zero"),
        ("{{Sqrt .Index .Index}}", r"unknown template function 'Sqrt'"),
        ("{{DivideInt .Index .Name}}", r"DivideInt takes integers, got .Name = 'x'"),
        ("{{DivideInt .Index .Absent}}", r"names no template value"),
    ],
)
def test_a_template_function_refuses_what_it_cannot_compute(tmp_path: Path, text: str, error: str) -> None:
    path = tmp_path / "pod.yaml"
    path.write_text(f"kind: Pod\nmetadata: {{name: 'p-{text}'}}\nspec: {{}}\n")
    with pytest.raises(WorkloadError, match=error):
        read_template(path, "Pod", {"Index": 3, "Zero": 0, "Name": "x"})


def test_template_functions_compute_as_go_does(tmp_path: Path) -> None:
    path = tmp_path / "pod.yaml"
    path.write_text(
        "kind: Pod\nmetadata:\n  name: p\n  labels: {d: '{{DivideInt .A 4}}', m: '{{Mod .A 4}}', "
        "n: '{{DivideInt -7 2}}', x: '{{MultiplyInt .A .A}}', s: '{{ SubtractInt .A 1 }}'}\nspec: {}\n"
    )
    labels = read_template(path, "Pod", {"A": 11})["metadata"]["labels"]
    assert labels == {"d": "2", "m": "3", "n": "-3", "x": "121", "s": "10"}


@pytest.mark.parametrize(
    ("op", "error"),
    [
        (
            {"opcode": "createResourceDriver", "driverName": "d", "nodes": "n-*", "maxClaimsPerNode": 129},
            r"\(createResourceDriver\)\.maxClaimsPerNode: a ResourceSlice holds at most 128 devices, got 129",
        ),
        (
            {"opcode": "createResourceDriver", "nodes": "n-*", "maxClaimsPerNode": 1},
            r"\(createResourceDriver\)\.driverName: required",
        ),
        ({"opcode": "waitForPodGroups", "count": 1}, r"\(waitForPodGroups\)\.namespace: required"),
        (
            {"opcode": "createPodGroups", "namespace": "x", "templatePath": "templates/gang-podgroup.yaml"},
            r"\(createPodGroups\)\.count: required",
        ),
        (
            {"opcode": "createPods", "count": 1, "steadyState": True, "duration": "2s"},
            r"\(createPods\)\.steadyState: needs collectMetrics: true",
        ),
        (
            {"opcode": "createPods", "count": 1, "steadyState": True, "duration": "0s", "collectMetrics": True},
            r"\(createPods\)\.duration: steadyState needs a positive duration",
        ),
        (
            {"opcode": "createPods", "count": 1, "duration": "2s"},
            r"\(createPods\)\.duration: only with steadyState: true",
        ),
        ({"opcode": "allocResourceClaims"}, r"\(allocResourceClaims\)\.namespace: required"),
        ({"opcode": "updateAny"}, r"\.opcode: updateAny is not run by kubesched bench"),
    ],
)
def test_the_new_ops_name_the_field_they_refuse(op: dict[str, Any], error: str) -> None:
    with pytest.raises(WorkloadError, match=error):
        parse_workloads([_case([op, MEASURE])], SHIPPED_DIR)


async def test_create_pod_groups_refuses_a_template_of_another_kind() -> None:
    op = {"opcode": "createPodGroups", "count": 1, "namespace": "x", "templatePath": "templates/cpg-basic.yaml"}
    (w,) = parse_workloads([_case([op, MEASURE])], SHIPPED_DIR)
    with pytest.raises(
        WorkloadError, match=r"cpg-basic.yaml.kind: expected a PodGroup template, got 'CompositePodGroup'"
    ):
        await run_workload(w)


async def test_wait_for_pod_groups_says_when_they_are_too_few() -> None:
    ops = [
        {"opcode": "createAny", "count": 2, "namespace": "g", "templatePath": "templates/basic-podgroup.yaml"},
        {"opcode": "waitForPodGroups", "namespace": "g", "count": 3},
        MEASURE,
    ]
    (w,) = parse_workloads([_case(ops)], SHIPPED_DIR)
    with pytest.raises(WorkloadError, match=r"waitForPodGroups: 3 PodGroups wanted in g, there are 2"):
        await run_workload(w)
