"""Scenarios with storage and disruption objects: parsing, defaults, binding state, loading."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kubesched.cluster.store import Store
from kubesched.config import load_config
from kubesched.sim.run.simulate import simulate
from kubesched.sim.scenario.loading import load_scenario_into
from kubesched.sim.scenario.reading import ScenarioError, parse_scenario
from kubesched.testing import make_node, make_pod


def sc(name: str, **extra: Any) -> dict[str, Any]:
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": name},
        "provisioner": "x",
        **extra,
    }


def pv(name: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": name},
        "spec": {"capacity": {"storage": "1Gi"}, **spec},
    }


def pvc(name: str, namespace: str | None = None, **spec: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta, "spec": spec}


def pdb(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name},
        "spec": {"minAvailable": 1},
    }


def csinode(name: str) -> dict[str, Any]:
    return {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": name}, "spec": {"drivers": []}}


def test_new_kinds_go_to_others_in_creation_order() -> None:
    docs = [
        pdb("budget"),
        pvc("claim"),
        pv("vol"),
        make_node("n1").obj(),
        csinode("n1"),
        sc("fast"),
        make_pod("p").obj(),
    ]
    scenario = parse_scenario(docs)
    assert [(o["kind"], o["metadata"]["name"]) for o in scenario.others] == [
        ("StorageClass", "fast"),
        ("CSINode", "n1"),
        ("PersistentVolume", "vol"),
        ("PersistentVolumeClaim", "claim"),
        ("PodDisruptionBudget", "budget"),
    ]
    assert [n["metadata"]["name"] for n in scenario.nodes] == ["n1"]
    assert [p["metadata"]["name"] for p in scenario.pending_pods] == ["p"]


@pytest.mark.parametrize(
    ("kind_obj", "expected_ns"),
    [(pvc("c"), "default"), (pvc("c", "team"), "team"), (pdb("b"), "default"), (pv("v"), None), (sc("s"), None)],
    ids=["pvc-default-ns", "pvc-own-ns", "pdb-default-ns", "pv-cluster-scoped", "sc-cluster-scoped"],
)
def test_namespaces_of_new_kinds(kind_obj: dict[str, Any], expected_ns: str | None) -> None:
    (obj,) = parse_scenario([kind_obj]).others
    assert obj["metadata"].get("namespace") == expected_ns


def test_duplicates_are_refused_per_namespace() -> None:
    parse_scenario([pvc("c"), pvc("c", "other")])
    with pytest.raises(ScenarioError, match="duplicate PersistentVolumeClaim default/c"):
        parse_scenario([pvc("c"), pvc("c")])
    with pytest.raises(ScenarioError, match="duplicate PersistentVolume v"):
        parse_scenario([pv("v"), pv("v")])


def test_pv_and_pvc_need_a_spec() -> None:
    with pytest.raises(ScenarioError, match=r"document 1\.spec: Required value \(PersistentVolumeClaim c\)"):
        parse_scenario([{"kind": "PersistentVolumeClaim", "metadata": {"name": "c"}}])


def test_storage_defaults_and_settled_binding() -> None:
    docs = [
        sc("fast"),
        pv("bound-pv", accessModes=["ReadWriteOnce"]),
        pv("free-pv"),
        pvc("claim", volumeName="bound-pv"),
        pvc("waiting"),
    ]
    others = {o["metadata"]["name"]: o for o in parse_scenario(docs).others}
    assert others["fast"]["volumeBindingMode"] == "Immediate"
    assert others["fast"]["reclaimPolicy"] == "Delete"
    assert others["bound-pv"]["spec"]["claimRef"] == {
        "kind": "PersistentVolumeClaim",
        "apiVersion": "v1",
        "namespace": "default",
        "name": "claim",
    }
    assert others["bound-pv"]["status"]["phase"] == "Bound"
    assert others["free-pv"]["status"]["phase"] == "Available"
    assert others["claim"]["metadata"]["annotations"]["pv.kubernetes.io/bind-completed"] == "yes"
    assert others["claim"]["status"] == {
        "phase": "Bound",
        "accessModes": ["ReadWriteOnce"],
        "capacity": {"storage": "1Gi"},
    }
    assert others["waiting"]["status"]["phase"] == "Pending"


def test_explicit_values_are_kept() -> None:
    docs = [sc("late", volumeBindingMode="WaitForFirstConsumer"), pv("gone", persistentVolumeReclaimPolicy="Delete")]
    docs[1]["status"] = {"phase": "Released"}
    others = {o["metadata"]["name"]: o for o in parse_scenario(docs).others}
    assert others["late"]["volumeBindingMode"] == "WaitForFirstConsumer"
    assert others["gone"]["status"]["phase"] == "Released"
    assert others["gone"]["spec"]["persistentVolumeReclaimPolicy"] == "Delete"


def test_claim_naming_a_volume_claimed_by_another_stays_pending() -> None:
    docs = [pv("v", claimRef={"namespace": "default", "name": "owner"}), pvc("intruder", volumeName="v")]
    others = {o["metadata"]["name"]: o for o in parse_scenario(docs).others}
    assert others["intruder"]["status"]["phase"] == "Pending"
    assert "annotations" not in others["intruder"]["metadata"]


def test_load_scenario_into_creates_the_new_kinds_before_nodes() -> None:
    scenario = parse_scenario(
        [make_node("n1").obj(), sc("fast"), pvc("claim", "team"), pdb("budget"), make_pod("p").obj()]
    )
    store = Store()
    order: list[str] = []
    store.subscribe(lambda etype, kind, obj, old: order.append(kind))
    load_scenario_into(store, scenario)
    assert store.get("StorageClass", None, "fast")["apiVersion"] == "storage.k8s.io/v1"
    assert store.get("PersistentVolumeClaim", "team", "claim")["metadata"]["namespace"] == "team"
    assert store.get("Namespace", None, "team")
    assert store.get("PodDisruptionBudget", "default", "budget")
    assert order.index("StorageClass") < order.index("Node") < order.index("Pod")
    assert order.index("PersistentVolumeClaim") < order.index("Node")


def test_simulate_runs_with_the_new_kinds_in_its_store() -> None:
    scenario = parse_scenario(
        [make_node("n1").obj(), sc("fast"), pv("v"), pvc("claim", volumeName="v"), make_pod("p").obj()]
    )
    result = asyncio.run(simulate(load_config(None).profiles, scenario))
    assert result.summary["scheduled"] == 1
    store = result.store
    assert store.get("StorageClass", None, "fast")["volumeBindingMode"] == "Immediate"
    assert store.get("PersistentVolume", None, "v")["spec"]["claimRef"]["name"] == "claim"
    assert store.get("PersistentVolumeClaim", "default", "claim")["status"]["phase"] == "Bound"
