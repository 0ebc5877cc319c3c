"""The Job controller's Workload and PodGroup (kube-controller-manager 1.37, KEP-5547) in the
simulated cluster, and their garbage collection; upstream's job_scheduling_manager_test.go
tables transcribed where the simulator has the same inputs."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubesched.cluster.store import Store
from kubesched.framework.features import FeatureGates
from kubesched.sim.controllers import ControllerManager
from kubesched.sim.controllers.workloads import (
    API_VERSION,
    GROUP_TEMPLATE_NAME_ANNOTATION,
    SchedulingBlocked,
    desired_pod_group,
    desired_workload,
    ensure_pod_group,
    manages_groups,
    pod_group_name,
    safe_encode,
    workload_name,
)

Obj = dict[str, Any]

ON = FeatureGates({"GenericWorkload": True, "WorkloadWithJob": True})


def job(name: str, parallelism: int | None = 4, scheduling: Obj | None = None, **spec: Any) -> Obj:
    body: Obj = {
        "template": {
            "metadata": {"labels": {"app": name}},
            "spec": {"containers": [{"name": "c", "image": "busybox"}], "restartPolicy": "Never"},
        },
        **spec,
    }
    if parallelism is not None:
        body["parallelism"] = parallelism
    if scheduling is not None:
        body["scheduling"] = scheduling
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name, "namespace": "default"}, "spec": body}


def gang(min_count: int | None = None) -> Obj:
    return {"schedulingPolicy": {"gang": {} if min_count is None else {"minCount": min_count}}}


def with_uid(obj: Obj, uid: str) -> Obj:
    obj = copy.deepcopy(obj)
    obj["metadata"]["uid"] = uid
    return obj


def listed(store: Store, kind: str) -> list[Obj]:
    return sorted(store.list(kind, "default")[0], key=lambda o: o["metadata"]["name"])


@pytest.fixture
def env() -> tuple[Store, ControllerManager]:
    store = Store()
    manager = ControllerManager(store, ON)
    manager.follow()
    return store, manager


# --- through the controller manager ------------------------------------------------------------
def test_a_gang_job_of_8_gets_one_workload_one_pod_group_and_8_grouped_pods(
    env: tuple[Store, ControllerManager],
) -> None:
    store, manager = env
    j = store.create("Job", job("train", 8, gang(), completions=8, completionMode="Indexed"))
    manager.run_pending()
    juid = j["metadata"]["uid"]
    job_ref = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "name": "train",
        "uid": juid,
        "controller": True,
        "blockOwnerDeletion": True,
    }

    (wl,) = listed(store, "Workload")
    assert wl["apiVersion"] == API_VERSION
    assert wl["metadata"]["name"] == workload_name(j) and wl["metadata"]["name"].startswith("train-")
    assert wl["metadata"]["ownerReferences"] == [job_ref]
    assert wl["spec"] == {
        "controllerRef": {"apiGroup": "batch", "kind": "Job", "name": "train"},
        "podGroupTemplates": [{"name": "train-pgt-0", "schedulingPolicy": {"gang": {"minCount": 8}}}],
    }

    (pg,) = listed(store, "PodGroup")
    assert pg["apiVersion"] == API_VERSION
    assert pg["metadata"]["name"] == pod_group_name(wl["metadata"]["name"], "train-pgt-0")
    assert pg["metadata"]["ownerReferences"] == [
        job_ref,
        {"apiVersion": API_VERSION, "kind": "Workload", "name": wl["metadata"]["name"], "uid": wl["metadata"]["uid"]},
    ]
    assert pg["spec"] == {
        "workloadRef": {"workloadName": wl["metadata"]["name"], "templateName": "train-pgt-0"},
        "schedulingPolicy": {"gang": {"minCount": 8}},
    }
    assert pg["metadata"]["finalizers"] == ["scheduling.k8s.io/podgroup-protection"]  # as admitted
    assert "status" not in pg  # the scheduler writes a PodGroup's conditions, no controller

    pods = listed(store, "Pod")
    assert len(pods) == 8
    for p in pods:
        assert p["spec"]["schedulingGroup"] == {"podGroupName": pg["metadata"]["name"]}
        assert [r["uid"] for r in p["metadata"]["ownerReferences"]] == [juid]

    # Settled: another pass makes nothing new.
    store.update("Job", store.get("Job", "default", "train"))
    manager.run_pending()
    assert len(listed(store, "Workload")) == 1 and len(listed(store, "PodGroup")) == 1
    assert len(listed(store, "Pod")) == 8


def test_a_job_without_spec_scheduling_gets_a_basic_group(env: tuple[Store, ControllerManager]) -> None:
    store, manager = env
    store.create("Job", job("batch", 3))
    manager.run_pending()
    (wl,) = listed(store, "Workload")
    (pg,) = listed(store, "PodGroup")
    assert wl["spec"]["podGroupTemplates"][0]["schedulingPolicy"] == {"basic": {}}
    assert pg["spec"]["schedulingPolicy"] == {"basic": {}}
    assert {p["spec"]["schedulingGroup"]["podGroupName"] for p in listed(store, "Pod")} == {pg["metadata"]["name"]}


@pytest.mark.parametrize(
    "gates",
    [FeatureGates(), FeatureGates({"GenericWorkload": True})],
    ids=["1.37's defaults: GenericWorkload off", "the API on, WorkloadWithJob off"],
)
def test_with_the_gate_off_nothing_changes(gates: FeatureGates) -> None:
    store = Store()
    manager = ControllerManager(store, gates)
    manager.follow()
    store.create("Job", job("train", 8, gang()))
    manager.run_pending()
    assert listed(store, "Workload") == [] and listed(store, "PodGroup") == []
    pods = listed(store, "Pod")
    assert len(pods) == 8 and all("schedulingGroup" not in p["spec"] for p in pods)


def test_deleting_the_job_collects_its_workload_and_pod_group(env: tuple[Store, ControllerManager]) -> None:
    store, manager = env
    store.create("Job", job("train", 4, gang()))
    store.create("Job", job("other", 2, gang()))
    manager.run_pending()
    assert len(listed(store, "Workload")) == 2 and len(listed(store, "PodGroup")) == 2
    store.delete("Job", "default", "train")
    manager.run_pending()
    other_wl = workload_name(store.get("Job", "default", "other"))
    assert [w["spec"]["controllerRef"]["name"] for w in listed(store, "Workload")] == ["other"]
    # The PodGroup is being deleted, held by its protection finalizer while pods use it: the
    # simulator collects no pods (docs/simulator.md), so the Job's pods stay until deleted.
    going, kept = sorted(listed(store, "PodGroup"), key=lambda g: g["spec"]["workloadRef"]["workloadName"] == other_wl)
    assert going["metadata"].get("deletionTimestamp") and "deletionTimestamp" not in kept["metadata"]
    train_pods = [p for p in listed(store, "Pod") if p["metadata"]["name"].startswith("train-")]
    assert len(train_pods) == 4
    for p in train_pods[:-1]:
        store.delete("Pod", "default", p["metadata"]["name"])
    manager.run_pending()
    assert len(listed(store, "PodGroup")) == 2  # one pod still names it
    store.delete("Pod", "default", train_pods[-1]["metadata"]["name"])
    manager.run_pending()
    assert [g["spec"]["workloadRef"]["workloadName"] for g in listed(store, "PodGroup")] == [other_wl]


def test_a_pod_group_whose_workload_alone_is_deleted_stays_while_its_job_exists(
    env: tuple[Store, ControllerManager],
) -> None:
    store, manager = env
    store.create("Job", job("train", 2, gang(), suspend=True))  # no pods: nothing holds the group
    manager.run_pending()
    (wl,) = listed(store, "Workload")
    store.delete("Workload", "default", wl["metadata"]["name"])
    manager.run_pending()
    (pg,) = listed(store, "PodGroup")  # the Job, its controller, is still there
    assert "deletionTimestamp" not in pg["metadata"]
    store.delete("Job", "default", "train")
    manager.run_pending()
    assert listed(store, "PodGroup") == []


def test_scaling_a_gang_job_without_min_count_resizes_the_gang(env: tuple[Store, ControllerManager]) -> None:
    store, manager = env
    store.create("Job", job("train", 4, gang()))
    manager.run_pending()
    j = store.get("Job", "default", "train")
    store.update("Job", {**j, "spec": {**j["spec"], "parallelism": 6}})
    manager.run_pending()
    (wl,) = listed(store, "Workload")
    (pg,) = listed(store, "PodGroup")
    assert wl["spec"]["podGroupTemplates"][0]["schedulingPolicy"] == {"gang": {"minCount": 6}}
    assert pg["spec"]["schedulingPolicy"] == {"gang": {"minCount": 6}}
    assert len(listed(store, "Pod")) == 6


def test_a_job_that_started_before_gets_no_objects_and_ungrouped_pods(env: tuple[Store, ControllerManager]) -> None:
    store, manager = env
    j = job("old", 2)
    j["status"] = {"startTime": "2026-01-01T00:00:00Z"}
    store.create("Job", j)
    manager.run_pending()
    assert listed(store, "Workload") == []
    assert all("schedulingGroup" not in p["spec"] for p in listed(store, "Pod"))


def test_a_workload_with_two_templates_blocks_the_jobs_pods(env: tuple[Store, ControllerManager]) -> None:
    store, manager = env
    j = store.create("Job", job("train", 3, gang(), suspend=True))
    manager.run_pending()
    (wl,) = listed(store, "Workload")
    tpl = wl["spec"]["podGroupTemplates"][0]
    wl["spec"]["podGroupTemplates"] = [tpl, {**tpl, "name": "extra"}]
    store.update("Workload", wl)
    store.update("Job", {**store.get("Job", "default", "train"), "spec": {**j["spec"], "suspend": False}})
    manager.run_pending()
    assert listed(store, "Pod") == []


# --- upstream's tables -----------------------------------------------------------------------------
PARENT_OWNER = [
    {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "name": "js", "uid": "js-uid", "controller": True}
]
CRONJOB_OWNER = [{"apiVersion": "batch/v1", "kind": "CronJob", "name": "cj", "uid": "cj-uid", "controller": True}]


def _tweak(obj: Obj, owners: list[Obj] | None = None, annotations: Obj | None = None, group: str | None = None) -> Obj:
    obj = copy.deepcopy(obj)
    if owners:
        obj["metadata"]["ownerReferences"] = owners
    if annotations:
        obj["metadata"]["annotations"] = annotations
    if group:
        obj["spec"]["template"]["spec"]["schedulingGroup"] = {"podGroupName": group}
    return obj


# TestShouldManageWorkloadForJob (the gate-off row is test_with_the_gate_off_nothing_changes).
@pytest.mark.parametrize(
    ("case", "subject", "managed"),
    [
        ("standalone Job -> managed", job("j", 4), True),
        ("basic single-pod Job -> still managed", job("j", 1), True),
        ("BYO PodGroup via pod template schedulingGroup -> not managed", _tweak(job("j"), group="existing-pg"), False),
        (
            "BYO schedulingGroup takes precedence over delegation annotation -> not managed",
            _tweak(job("j"), PARENT_OWNER, {GROUP_TEMPLATE_NAME_ANNOTATION: "workers"}, "existing-pg"),
            False,
        ),
        ("parent-owned Workload without delegation annotation -> not managed", _tweak(job("j"), PARENT_OWNER), False),
        (
            "parent-owned Workload with delegation annotation -> managed (delegated PodGroup)",
            _tweak(job("j"), PARENT_OWNER, {GROUP_TEMPLATE_NAME_ANNOTATION: "workers"}),
            True,
        ),
        ("CronJob-owned Job is treated as parent-owned (not managed)", _tweak(job("j"), CRONJOB_OWNER), False),
    ],
)
def test_should_manage_workload_for_job(case: str, subject: Obj, managed: bool) -> None:
    assert manages_groups(subject) is managed, case


# TestGenerateWorkload.
@pytest.mark.parametrize(
    ("case", "subject", "policy", "extra"),
    [
        ("nil scheduling defaults to Basic", job("basic-default", 4), {"basic": {}}, {}),
        ("scheduling set but policy nil defaults to Basic", job("basic-nil-policy", 4, {}), {"basic": {}}, {}),
        (
            "explicit basic policy",
            job("basic-explicit", 4, {"schedulingPolicy": {"basic": {}}}),
            {"basic": {}},
            {},
        ),
        ("gang with explicit minCount", job("gang", 4, gang(3)), {"gang": {"minCount": 3}}, {}),
        ("gang without minCount defaults to parallelism", job("gang-zero", 4, gang()), {"gang": {"minCount": 4}}, {}),
        (
            "gang without minCount and zero parallelism clamps to 1",
            job("gang-zero-parallelism", 0, gang()),
            {"gang": {"minCount": 1}},
            {},
        ),
        (
            "gang, topology, disruption, and claims passthrough",
            job(
                "full",
                4,
                {
                    **gang(4),
                    "schedulingConstraints": {"topology": [{"key": "topology.kubernetes.io/zone"}]},
                    "disruptionMode": {"all": {}},
                    "resourceClaims": [{"name": "gpu", "resourceClaimName": "my-claim"}],
                },
            ),
            {"gang": {"minCount": 4}},
            {
                "schedulingConstraints": {"topology": [{"key": "topology.kubernetes.io/zone"}]},
                "disruptionMode": {"all": {}},
                "resourceClaims": [{"name": "gpu", "resourceClaimName": "my-claim"}],
            },
        ),
    ],
)
def test_generate_workload(case: str, subject: Obj, policy: Obj, extra: Obj) -> None:
    subject = with_uid(subject, subject["metadata"]["name"] + "-uid")
    wl = desired_workload(subject)
    (tpl,) = wl["spec"]["podGroupTemplates"]
    assert tpl == {"name": subject["metadata"]["name"] + "-pgt-0", "schedulingPolicy": policy, **extra}, case
    assert wl["spec"]["controllerRef"] == {"apiGroup": "batch", "kind": "Job", "name": subject["metadata"]["name"]}


def test_generate_workload_copies_the_pod_templates_priority_class() -> None:
    subject = with_uid(job("prio", 4), "prio-uid")
    subject["spec"]["template"]["spec"]["priorityClassName"] = "high-priority"
    (tpl,) = desired_workload(subject)["spec"]["podGroupTemplates"]
    assert tpl["schedulingPolicy"] == {"basic": {}} and tpl["priorityClassName"] == "high-priority"


# TestComputeWorkloadName.
@pytest.mark.parametrize(("name", "uid"), [("my-job", "uid-123"), ("a" * 300, "uid-long")])
def test_compute_workload_name(name: str, uid: str) -> None:
    subject = {"metadata": {"name": name, "uid": uid}}
    result = workload_name(subject)
    assert len(result) <= 253
    assert len(result.split("-")) >= 2
    assert workload_name(subject) == result
    assert workload_name({"metadata": {"name": name, "uid": "different-uid"}}) != result


# TestComputePodGroupName.
@pytest.mark.parametrize(
    ("wl", "tpl"),
    [("my-workload", "my-template"), ("w" * 250, "tpl"), ("wl", "t" * 250), ("w" * 200, "t" * 200)],
)
def test_compute_pod_group_name(wl: str, tpl: str) -> None:
    result = pod_group_name(wl, tpl)
    assert len(result) <= 253
    assert len(result.split("-")) >= 3
    assert pod_group_name(wl, tpl) == result
    assert pod_group_name(wl, "other-template") != result


def test_pod_group_name_truncation_keeps_both_parts_and_a_short_workload_name() -> None:
    prefix = pod_group_name("w" * 200, "t" * 200).rsplit("-", 1)[0]
    assert "www" in prefix and "ttt" in prefix
    assert len(pod_group_name("w" * 200, "t" * 200)) == 253
    assert pod_group_name("wl", "t" * 250).startswith("wl-")


def test_names_use_upstreams_safe_alphabet() -> None:
    # rand.SafeEncodeString maps each byte: '0' (48) -> alphabet[48 % 27], the letter '4'.
    assert safe_encode("0123") == "4567"
    digest = workload_name({"metadata": {"name": "j", "uid": "u"}})[2:]
    assert digest and set(digest) <= set("bcdfghjklmnpqrstvwxz2456789")


# TestEnsureWorkloadAndPodGroup (the rows where the API server's create fails need a fault the
# simulated store cannot have, and are left out).
BASE = with_uid(job("test-job", 4, gang(4), completions=4, completionMode="Indexed"), "test-job-uid")
WL_NAME = workload_name(BASE)
TPL_NAME = "test-job-pgt-0"
PG_NAME = pod_group_name(WL_NAME, TPL_NAME)
JOB_CONTROLLER = {
    "apiVersion": "batch/v1",
    "kind": "Job",
    "name": "test-job",
    "uid": "test-job-uid",
    "controller": True,
    "blockOwnerDeletion": True,
}


def make_workload(name: str, owned: bool = True, templates: list[Obj] | None = None) -> Obj:
    return {
        "apiVersion": API_VERSION,
        "kind": "Workload",
        "metadata": {
            "name": name,
            "namespace": "default",
            **({"ownerReferences": [JOB_CONTROLLER]} if owned else {}),
        },
        "spec": {
            "controllerRef": {"apiGroup": "batch", "kind": "Job", "name": "test-job"},
            "podGroupTemplates": templates or [{"name": TPL_NAME, "schedulingPolicy": {"gang": {"minCount": 4}}}],
        },
    }


def make_pod_group(name: str, wl: str, owned: bool = True) -> Obj:
    return {
        "apiVersion": API_VERSION,
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": "default", **({"ownerReferences": [JOB_CONTROLLER]} if owned else {})},
        "spec": {
            "workloadRef": {"workloadName": wl, "templateName": TPL_NAME},
            "schedulingPolicy": {"gang": {"minCount": 4}},
        },
    }


DELEGATED = _tweak(
    BASE,
    [
        {
            "apiVersion": "jobset.x-k8s.io/v1alpha2",
            "kind": "JobSet",
            "name": "parent-js",
            "uid": "parent-js-uid",
            "controller": True,
        }
    ],
    {GROUP_TEMPLATE_NAME_ANNOTATION: "workers"},
)
DELEGATED_PG = pod_group_name("parent-workload", "workers")


def parent_workload(min_count: int) -> Obj:
    return {
        "apiVersion": API_VERSION,
        "kind": "Workload",
        "metadata": {"name": "parent-workload", "namespace": "default"},
        "spec": {
            "controllerRef": {"apiGroup": "jobset.x-k8s.io", "kind": "JobSet", "name": "parent-js"},
            "podGroupTemplates": [{"name": "workers", "schedulingPolicy": {"gang": {"minCount": min_count}}}],
        },
    }


def delegated_pod_group(min_count: int) -> Obj:
    return {
        "apiVersion": API_VERSION,
        "kind": "PodGroup",
        "metadata": {
            "name": DELEGATED_PG,
            "namespace": "default",
            "ownerReferences": [{**JOB_CONTROLLER}],
        },
        "spec": {
            "workloadRef": {"workloadName": "parent-workload", "templateName": "workers"},
            "schedulingPolicy": {"gang": {"minCount": min_count}},
        },
    }


def _status(**status: Any) -> Obj:
    return {**BASE, "status": status}


POD = {"metadata": {"name": "pod-0", "namespace": "default"}}


@pytest.mark.parametrize(
    ("case", "subject", "pods", "workloads", "groups", "want", "want_min"),
    [
        ("creates both Workload and PodGroup when no pods exist", BASE, [], [], [], PG_NAME, None),
        ("skips creation when Job has pods but no Workload", BASE, [POD], [], [], None, None),
        (
            "skips creation when Job has StartTime set",
            _status(startTime="2026-01-01T00:00:00Z"),
            [],
            [],
            [],
            None,
            None,
        ),
        ("skips creation when Job has succeeded pods", _status(succeeded=1), [], [], [], None, None),
        ("skips creation when Job has failed pods", _status(failed=1), [], [], [], None, None),
        (
            "skips creating Workload/PodGroup when Job was previously suspended",
            _status(conditions=[{"type": "Suspended", "status": "True"}]),
            [],
            [],
            [],
            None,
            None,
        ),
        (
            "discovers existing Workload and PodGroup",
            BASE,
            [],
            [make_workload(WL_NAME)],
            [make_pod_group(PG_NAME, WL_NAME)],
            PG_NAME,
            None,
        ),
        (
            "discovers existing objects even when pods exist",
            BASE,
            [POD],
            [make_workload(WL_NAME)],
            [make_pod_group(PG_NAME, WL_NAME)],
            PG_NAME,
            None,
        ),
        (
            "workload found but no PodGroup creates one",
            BASE,
            [],
            [make_workload("user-workload")],
            [],
            pod_group_name("user-workload", TPL_NAME),
            None,
        ),
        (
            "BYO Workload (no controller ownerRef) is ignored; controller creates its own",
            BASE,
            [],
            [make_workload("user-created-workload", owned=False)],
            [],
            PG_NAME,
            None,
        ),
        (
            "ambiguous Workloads fall back",
            BASE,
            [],
            [make_workload("workload-1"), make_workload("workload-2")],
            [],
            None,
            None,
        ),
        (
            "BYO PodGroup (no controller ownerRef) is ignored; controller creates its own",
            BASE,
            [],
            [make_workload(WL_NAME)],
            [make_pod_group("external-pg", WL_NAME, owned=False)],
            PG_NAME,
            None,
        ),
        (
            "ambiguous PodGroups fall back",
            BASE,
            [],
            [make_workload(WL_NAME)],
            [make_pod_group("pg-1", WL_NAME), make_pod_group("pg-2", WL_NAME)],
            None,
            None,
        ),
        (
            "delegated Job creates the PodGroup from the parent's template",
            DELEGATED,
            [],
            [parent_workload(4)],
            [],
            DELEGATED_PG,
            4,
        ),
        (
            "delegated PodGroup follows a parent Workload minCount change",
            DELEGATED,
            [],
            [parent_workload(7)],
            [delegated_pod_group(4)],
            DELEGATED_PG,
            7,
        ),
        (
            "delegated PodGroup already matching the parent template is left unchanged",
            DELEGATED,
            [],
            [parent_workload(4)],
            [delegated_pod_group(4)],
            DELEGATED_PG,
            4,
        ),
    ],
)
def test_ensure_workload_and_pod_group(
    case: str,
    subject: Obj,
    pods: list[Obj],
    workloads: list[Obj],
    groups: list[Obj],
    want: str | None,
    want_min: int | None,
) -> None:
    store = Store()
    for w in workloads:
        store.create("Workload", copy.deepcopy(w))
    for g in groups:
        store.create("PodGroup", copy.deepcopy(g))
    got = ensure_pod_group(store, copy.deepcopy(subject), pods)
    assert got == want, case
    if want is not None:
        pg = store.get("PodGroup", "default", want)
        if want_min is not None:
            assert pg["spec"]["schedulingPolicy"]["gang"]["minCount"] == want_min, case
        if subject is DELEGATED:
            # A parent's Workload is never linked as the PodGroup's owner.
            assert [r["kind"] for r in pg["metadata"]["ownerReferences"]] == ["Job"]
    if want is None:
        # Falling back makes nothing new.
        assert len(store.list("Workload", "default")[0]) == len(workloads), case
        assert len(store.list("PodGroup", "default")[0]) == len(groups), case


def test_ensure_blocks_on_a_workload_without_exactly_one_template() -> None:
    # "unsupported PodGroupTemplate count returns an error"
    store = Store()
    store.create("Workload", make_workload(WL_NAME, templates=[{"name": "group-a"}, {"name": "group-b"}]))
    with pytest.raises(SchedulingBlocked, match="2 pod group templates"):
        ensure_pod_group(store, copy.deepcopy(BASE), [])


# TestCreatePodGroup.
@pytest.mark.parametrize(
    ("case", "link", "owners"),
    [
        ("root Job links the Workload as a non-controller owner", True, 2),
        ("delegated Job does not link the parent-owned Workload", False, 1),
    ],
)
def test_create_pod_group(case: str, link: bool, owners: int) -> None:
    subject = with_uid(job("my-job", 4, gang(4)), "my-job-uid")
    tpl_name = "my-job-pgt-0"
    workload = {
        "metadata": {
            "name": "root-workload" if link else "delegated-workload",
            "namespace": "default",
            "uid": "wl-uid",
        },
        "spec": {
            "podGroupTemplates": [
                {
                    "name": tpl_name,
                    "schedulingPolicy": {"gang": {"minCount": 4}},
                    "priorityClassName": "high-priority",
                    "priority": 1000,
                }
            ]
        },
    }
    pg = desired_pod_group(subject, workload, workload["spec"]["podGroupTemplates"][0], link)
    assert pg["metadata"]["name"] == pod_group_name(workload["metadata"]["name"], tpl_name)
    assert len(pg["metadata"]["ownerReferences"]) == owners, case
    assert pg["spec"] == {
        "workloadRef": {"workloadName": workload["metadata"]["name"], "templateName": tpl_name},
        "schedulingPolicy": {"gang": {"minCount": 4}},
        "priorityClassName": "high-priority",
        "priority": 1000,
    }


# TestSyncGangMinCount.
@pytest.mark.parametrize(
    ("case", "current"),
    [
        ("controller-owned objects are resized to the Job's minCount", 2),
        ("already at desired minCount is left unchanged", 5),
    ],
)
def test_sync_gang_min_count(case: str, current: int) -> None:
    subject = with_uid(job("scale-job", 5, gang(5)), "scale-job-uid")
    owner = {**JOB_CONTROLLER, "name": "scale-job", "uid": "scale-job-uid"}
    wl_name = workload_name(subject)
    pg_name = pod_group_name(wl_name, "scale-job-pgt-0")
    store = Store()
    store.create(
        "Workload",
        {
            "metadata": {"name": wl_name, "namespace": "default", "ownerReferences": [owner]},
            "spec": {
                "controllerRef": {"apiGroup": "batch", "kind": "Job", "name": "scale-job"},
                "podGroupTemplates": [{"name": "scale-job-pgt-0", "schedulingPolicy": {"gang": {"minCount": current}}}],
            },
        },
    )
    store.create(
        "PodGroup",
        {
            "metadata": {"name": pg_name, "namespace": "default", "ownerReferences": [owner]},
            "spec": {
                "workloadRef": {"workloadName": wl_name, "templateName": "scale-job-pgt-0"},
                "schedulingPolicy": {"gang": {"minCount": current}},
            },
        },
    )
    before = store.resource_version
    assert ensure_pod_group(store, subject, [{"metadata": {"name": "p"}}]) == pg_name
    wl = store.get("Workload", "default", wl_name)
    pg = store.get("PodGroup", "default", pg_name)
    assert wl["spec"]["podGroupTemplates"][0]["schedulingPolicy"]["gang"]["minCount"] == 5, case
    assert pg["spec"]["schedulingPolicy"]["gang"]["minCount"] == 5, case
    assert (store.resource_version == before) is (current == 5), case  # no write when nothing changes


# TestPodGroupProtectionController (the rows about adding the finalizer say the controller adds
# none: the API server's admission does).
def pg_obj(finalizer: bool = False, deleted: bool = False) -> Obj:
    meta: Obj = {"name": "pg", "namespace": "default"}
    if finalizer:
        meta["finalizers"] = ["scheduling.k8s.io/podgroup-protection"]
    if deleted:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return {"apiVersion": API_VERSION, "kind": "PodGroup", "metadata": meta, "spec": {}}


def pod_obj(name: str, group: str | None = "pg", phase: str | None = None, node: str | None = "n1") -> Obj:
    spec: Obj = {"containers": [{"name": "c", "image": "busybox"}]}
    if group is not None:
        spec["schedulingGroup"] = {"podGroupName": group}
    if node is not None:
        spec["nodeName"] = node
    pod: Obj = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"}, "spec": spec}
    if phase is not None:
        pod["status"] = {"phase": phase}
    return pod


@pytest.mark.parametrize(
    ("case", "group", "pods", "delete", "finalizer"),
    [
        ("new PodGroup without finalizer, no action", pg_obj(), [], None, False),
        (
            "new PodGroup without finalizer, active pod exists, then no action",
            pg_obj(),
            [pod_obj("pod-1")],
            None,
            False,
        ),
        ("PodGroup with finalizer, not being deleted, then no action", pg_obj(True), [], None, True),
        (
            "deleted PodGroup with finalizer, no active pods, then finalizer is removed",
            pg_obj(True, True),
            [],
            None,
            False,
        ),
        (
            "deleted PodGroup with finalizer, active pod exists, then finalizer is kept",
            pg_obj(True, True),
            [pod_obj("pod-1")],
            None,
            True,
        ),
        (
            "deleted PodGroup with finalizer, only terminated pods, then finalizer is removed",
            pg_obj(True, True),
            [pod_obj("pod-1", phase="Succeeded")],
            None,
            False,
        ),
        (
            "deleted PodGroup with finalizer, mix of active and terminated pods, then finalizer is kept",
            pg_obj(True, True),
            [pod_obj("pod-active"), pod_obj("pod-done", phase="Succeeded")],
            None,
            True,
        ),
        ("PodGroup without finalizer, already deleted, then no action", pg_obj(False, True), [], None, False),
        (
            "PodGroup without finalizer, already deleted, active pods exist, then no action",
            pg_obj(False, True),
            [pod_obj("pod-1")],
            None,
            False,
        ),
        (
            "pod deleted, PodGroup being deleted with finalizer, was last active pod, finalizer is removed",
            pg_obj(True, True),
            [pod_obj("pod-1")],
            "pod-1",
            False,
        ),
        (
            "pod terminated failed, PodGroup being deleted with finalizer, was last active pod, then finalizer is removed",
            pg_obj(True, True),
            [pod_obj("pod-1", phase="Failed")],
            None,
            False,
        ),
        (
            "new unscheduled pod, PodGroup without finalizer, then no action",
            pg_obj(),
            [pod_obj("pod-1", node=None)],
            None,
            False,
        ),
        (
            "pod without schedulingGroup -> no PodGroup action",
            pg_obj(True),
            [pod_obj("pod-1", group=None)],
            None,
            True,
        ),
        (
            "terminated pod references non-existent PodGroup, controller handles gracefully",
            None,
            [pod_obj("pod-1", phase="Succeeded")],
            None,
            False,
        ),
    ],
)
def test_pod_group_protection_controller(
    env: tuple[Store, ControllerManager],
    case: str,
    group: Obj | None,
    pods: list[Obj],
    delete: str | None,
    finalizer: bool,
) -> None:
    store, manager = env
    for p in pods:
        store.create("Pod", copy.deepcopy(p))
    if group is not None:
        store.create("PodGroup", copy.deepcopy(group))
    manager.run_pending()
    if delete is not None:
        store.delete("Pod", "default", delete)
        manager.run_pending()
    found = store.list("PodGroup", "default")[0]
    has = bool(found) and "scheduling.k8s.io/podgroup-protection" in (found[0]["metadata"].get("finalizers") or ())
    assert has is finalizer, case
    if group is not None:
        # Its last finalizer taken off, a PodGroup being deleted goes; otherwise it stays.
        went = bool(group["metadata"].get("finalizers")) and not finalizer
        assert (found == []) is went, case


def test_pod_group_protection_controller_runs_only_with_generic_workload() -> None:
    store = Store()
    manager = ControllerManager(store)
    manager.follow()
    store.create("PodGroup", pg_obj(True, True))
    manager.run_pending()
    assert store.get("PodGroup", "default", "pg")["metadata"]["finalizers"] == ["scheduling.k8s.io/podgroup-protection"]


async def test_simulate_passes_its_gates_to_the_controllers() -> None:
    from kubesched.config import load_config
    from kubesched.sim.run.simulate import SimulationSettings, simulate
    from kubesched.sim.scenario.reading import parse_scenario
    from kubesched.testing import make_node

    node = make_node("n1").capacity(cpu="4", memory="8Gi", pods="20").obj()
    scenario = parse_scenario([node, job("train", 8, gang(), completions=8)])
    on = await simulate(load_config(None).profiles, scenario, SimulationSettings(feature_gates=ON))
    (pg,) = on.store.list("PodGroup", "default")[0]
    assert pg["spec"]["schedulingPolicy"] == {"gang": {"minCount": 8}}
    placed = [p for p in on.store.list("Pod", "default")[0] if p["spec"].get("nodeName") == "n1"]
    # The scheduler does not act on groups yet: the 8 pods are placed one by one.
    assert len(placed) == 8 and all(
        p["spec"]["schedulingGroup"] == {"podGroupName": pg["metadata"]["name"]} for p in placed
    )
    off = await simulate(load_config(None).profiles, parse_scenario([node, job("train", 8, gang(), completions=8)]))
    assert off.store.list("PodGroup", "default")[0] == [] and off.store.list("Workload", "default")[0] == []
