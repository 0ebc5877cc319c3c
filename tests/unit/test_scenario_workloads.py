"""Scenarios with scheduling.k8s.io's Workload, PodGroup and CompositePodGroup (1.37): accepted in
the versions 1.37 serves and kept in their storage version, defaulted and validated as the API
server would, loaded into the store before the pods."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.cluster.store import Store
from kubesched.sim.scenario.loading import load_scenario_into
from kubesched.sim.scenario.reading import ScenarioError, parse_scenario
from kubesched.testing import make_node, make_pod

WORKLOAD: dict[str, Any] = {
    "apiVersion": "scheduling.k8s.io/v1alpha3",
    "kind": "Workload",
    "metadata": {"name": "train", "namespace": "ml"},
    "spec": {"podGroupTemplates": [{"name": "workers", "schedulingPolicy": {"gang": {"minCount": 2}}}]},
}
POD_GROUP: dict[str, Any] = {
    "apiVersion": "scheduling.k8s.io/v1beta1",
    "kind": "PodGroup",
    "metadata": {"name": "train-workers", "namespace": "ml"},
    "spec": {
        "workloadRef": {"workloadName": "train", "templateName": "workers"},
        "schedulingPolicy": {"gang": {"minCount": 2}},
    },
}


def _pod() -> dict[str, Any]:
    pod = make_pod("w-0").namespace("ml").req(cpu="1").obj()
    pod["spec"]["schedulingGroup"] = {"podGroupName": "train-workers"}
    return pod


def test_workloads_and_pod_groups_are_kept_in_their_storage_version_and_defaulted() -> None:
    sc = parse_scenario([make_node("n1").obj(), WORKLOAD, POD_GROUP, _pod()])
    kinds = {o["kind"]: o for o in sc.others}
    assert kinds["Workload"]["apiVersion"] == "scheduling.k8s.io/v1beta1"
    assert kinds["PodGroup"]["spec"]["disruptionMode"] == {"single": {}}
    assert sc.pending_pods[0]["spec"]["schedulingGroup"] == {"podGroupName": "train-workers"}
    store = Store()
    load_scenario_into(store, sc)
    assert store.get("PodGroup", "ml", "train-workers")["apiVersion"] == "scheduling.k8s.io/v1beta1"
    assert store.get("Workload", "ml", "train")["spec"]["podGroupTemplates"][0]["name"] == "workers"


@pytest.mark.parametrize(
    ("obj", "message"),
    [
        (
            {**WORKLOAD, "apiVersion": "scheduling.k8s.io/v1alpha2"},
            'document 1.apiVersion: Unsupported value: "scheduling.k8s.io/v1alpha2": supported values for Workload',
        ),
        (
            {**POD_GROUP, "spec": {**POD_GROUP["spec"], "schedulingPolicy": {"gang": {"minCount": -1}}}},
            "spec.schedulingPolicy.gang.minCount: Invalid value: -1: must be greater than or equal to 1",
        ),
        (
            {**POD_GROUP, "spec": {**POD_GROUP["spec"], "schedulingPolicy": {"gang": {"minCuont": 2}}}},
            'strict decoding error: unknown field "spec.schedulingPolicy.gang.minCuont"',
        ),
    ],
    ids=["unserved-version", "invalid-minCount", "unknown-field"],
)
def test_bad_workload_objects_are_refused_naming_the_field(obj: dict[str, Any], message: str) -> None:
    with pytest.raises(ScenarioError) as err:
        parse_scenario([obj])
    assert message in str(err.value)


def test_a_pods_scheduling_group_is_validated() -> None:
    pod = _pod()
    pod["spec"]["schedulingGroup"] = {"podGroupName": "Not_A_Name"}
    with pytest.raises(ScenarioError, match=r"spec.schedulingGroup.podGroupName: Invalid value: \"Not_A_Name\""):
        parse_scenario([pod])
