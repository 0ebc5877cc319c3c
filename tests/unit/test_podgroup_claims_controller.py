"""The simulated resource-claim controller for ResourceClaims shared by a PodGroup (KEP-5729,
DRAWorkloadResourceClaims): upstream's PodGroup cases of pkg/controller/resourceclaim
(controller_test.go TestSyncHandler) transcribed: one claim per group from its template, owned
by the group and named in its status; members whose entry matches the group's get no claim of
their own but the group's claim in their status; reservations of a group that is gone are
dropped; the group's claim goes with the group. And the API server keeps the fields only with the
gate."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubesched.cluster.store import Store
from kubesched.framework.features import FeatureGates
from kubesched.sim.apiserver.admission import admit_new, validate_update
from kubesched.sim.apiserver.errors import APIError
from kubesched.sim.controllers import ControllerManager
from kubesched.sim.controllers.resourceclaim import POD_CLAIM_NAME_ANNOTATION, reconcile_claim

Obj = dict[str, Any]
ON = FeatureGates().replace(GenericWorkload=True, DRAWorkloadResourceClaims=True)
OFF = FeatureGates().replace(GenericWorkload=True)


def template(name: str = "gpu-template") -> Obj:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}},
    }


def pod_group(name: str = "train", **claim: str) -> Obj:
    return {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "schedulingPolicy": {"gang": {"minCount": 2}},
            "resourceClaims": [{"name": "gpus", **(claim or {"resourceClaimTemplateName": "gpu-template"})}],
        },
    }


def member(name: str, group: str = "train", **claim: str) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "containers": [{"name": "c", "image": "pause"}],
            "schedulingGroup": {"podGroupName": group},
            "resourceClaims": [{"name": "gpus", **(claim or {"resourceClaimTemplateName": "gpu-template"})}],
        },
    }


def env(gates: FeatureGates) -> tuple[Store, ControllerManager]:
    store = Store()
    manager = ControllerManager(store, gates)
    manager.follow()
    return store, manager


def claims(store: Store) -> list[Obj]:
    return store.list("ResourceClaim", "default")[0]


def statuses(store: Store, kind: str, name: str) -> list[Obj]:
    return (store.get(kind, "default", name).get("status") or {}).get("resourceClaimStatuses") or []


def test_a_pod_group_gets_one_claim_from_its_template_owned_by_it() -> None:
    """Upstream's "create for PodGroup": ``<group>-<claim>-<5 letters>``, controlled by the PodGroup,
    annotated with the group's claim name, recorded in the group's status."""
    store, manager = env(ON)
    store.create("ResourceClaimTemplate", template())
    group = store.create("PodGroup", pod_group())
    manager.run_pending()
    (claim,) = claims(store)
    meta = claim["metadata"]
    assert meta["name"].startswith("train-gpus-") and len(meta["name"]) == len("train-gpus-") + 5
    assert meta["annotations"] == {POD_CLAIM_NAME_ANNOTATION: "gpus"}
    (ref,) = meta["ownerReferences"]
    assert (ref["apiVersion"], ref["kind"], ref["name"], ref["uid"], ref["controller"]) == (
        "scheduling.k8s.io/v1beta1",
        "PodGroup",
        "train",
        group["metadata"]["uid"],
        True,
    )
    assert claim["spec"] == template()["spec"]["spec"]
    assert statuses(store, "PodGroup", "train") == [{"name": "gpus", "resourceClaimName": meta["name"]}]
    manager.run_pending()
    assert len(claims(store)) == 1  # "nop for PodGroup"


def test_members_share_the_group_claim_and_get_none_of_their_own() -> None:
    """Upstream's "update Pod status with PodGroup claim": each member's status names the group's claim."""
    store, manager = env(ON)
    store.create("ResourceClaimTemplate", template())
    store.create("PodGroup", pod_group())
    for i in range(3):
        store.create("Pod", member(f"w{i}"))
    manager.run_pending()
    (claim,) = claims(store)
    name = claim["metadata"]["name"]
    for i in range(3):
        assert statuses(store, "Pod", f"w{i}") == [{"name": "gpus", "resourceClaimName": name}]


def test_members_wait_for_the_template_then_record_the_group_claim() -> None:
    """Upstream's "skip create for Pod with PodGroup before template exists": nothing is made for the
    member, which waits; the template's arrival makes the group's claim, then the member's
    status names it."""
    store, manager = env(ON)
    store.create("PodGroup", pod_group())
    store.create("Pod", member("w0"))
    manager.run_pending()
    assert claims(store) == [] and statuses(store, "Pod", "w0") == []
    store.create("ResourceClaimTemplate", template())
    manager.run_pending()
    (claim,) = claims(store)
    assert claim["metadata"]["ownerReferences"][0]["kind"] == "PodGroup"
    assert statuses(store, "Pod", "w0") == [{"name": "gpus", "resourceClaimName": claim["metadata"]["name"]}]


def test_an_entry_with_another_source_is_the_pods_own() -> None:
    """Only an exact match (same name, same source) is the group's claim."""
    store, manager = env(ON)
    store.create("ResourceClaimTemplate", template())
    store.create("ResourceClaimTemplate", template("other-template"))
    store.create("PodGroup", pod_group())
    store.create("Pod", member("w0", resourceClaimTemplateName="other-template"))
    manager.run_pending()
    owners = sorted(c["metadata"]["ownerReferences"][0]["kind"] for c in claims(store))
    assert owners == ["Pod", "PodGroup"]
    (mine,) = [c for c in claims(store) if c["metadata"]["ownerReferences"][0]["kind"] == "Pod"]
    assert statuses(store, "Pod", "w0") == [{"name": "gpus", "resourceClaimName": mine["metadata"]["name"]}]


def test_with_the_gate_off_each_member_gets_its_own_claim() -> None:
    """Upstream's "create ResourceClaim for Pod with PodGroup claim when feature is disabled"."""
    store, manager = env(OFF)
    store.create("ResourceClaimTemplate", template())
    store.create("PodGroup", pod_group())
    for i in range(2):
        store.create("Pod", member(f"w{i}"))
    manager.run_pending()
    assert sorted(c["metadata"]["ownerReferences"][0]["name"] for c in claims(store)) == ["w0", "w1"]
    assert statuses(store, "PodGroup", "train") == []


def test_an_existing_claim_of_the_group_is_found_again() -> None:
    """Upstream's "find-existing-claim-by-label-podgroup": a claim the group controls, annotated with the
    claim's name, is recorded rather than made again."""
    store, manager = env(ON)
    store.create("ResourceClaimTemplate", template())
    group = store.create("PodGroup", pod_group())
    made = store.create(
        "ResourceClaim",
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {
                "name": "train-gpus-abcde",
                "namespace": "default",
                "annotations": {POD_CLAIM_NAME_ANNOTATION: "gpus"},
                "ownerReferences": [
                    {
                        "apiVersion": "scheduling.k8s.io/v1beta1",
                        "kind": "PodGroup",
                        "name": "train",
                        "uid": group["metadata"]["uid"],
                        "controller": True,
                    }
                ],
            },
            "spec": {},
        },
    )
    manager.run_pending()
    assert [c["metadata"]["name"] for c in claims(store)] == [made["metadata"]["name"]]
    assert statuses(store, "PodGroup", "train") == [{"name": "gpus", "resourceClaimName": "train-gpus-abcde"}]


def test_the_group_claim_goes_with_the_group() -> None:
    store, manager = env(ON)
    store.create("ResourceClaimTemplate", template())
    store.create("PodGroup", pod_group())
    manager.run_pending()
    assert len(claims(store)) == 1
    store.delete("PodGroup", "default", "train")
    manager.run_pending()
    assert claims(store) == []


def reserved_claim(group_uid: str) -> Obj:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "shared", "namespace": "default"},
        "spec": {},
        "status": {
            "allocation": {"devices": {"results": []}},
            "reservedFor": [
                {"apiGroup": "scheduling.k8s.io", "resource": "podgroups", "name": "train", "uid": group_uid}
            ],
        },
    }


@pytest.mark.parametrize(
    ("gates", "cleared"),
    [(ON, True), (OFF, False)],
    ids=["clear-reserved-podgroup", "dont-clear-reserved-podgroup-feature-disabled"],
)
def test_a_reservation_for_a_group_that_is_gone_is_dropped(gates: FeatureGates, cleared: bool) -> None:
    store = Store()
    claim = store.create("ResourceClaim", reserved_claim("gone-uid"))
    reconcile_claim(store, claim, gates)
    status = store.get("ResourceClaim", "default", "shared")["status"]
    if cleared:
        assert "reservedFor" not in status and "allocation" not in status  # deallocated
    else:
        assert status == claim["status"]


def test_a_reservation_for_a_live_group_stays() -> None:
    store = Store()
    group = store.create("PodGroup", pod_group())
    claim = store.create("ResourceClaim", reserved_claim(group["metadata"]["uid"]))
    reconcile_claim(store, claim, ON)
    assert store.get("ResourceClaim", "default", "shared")["status"] == claim["status"]


# --- the API server's side: the fields exist with the gate ---------------------------------------


@pytest.mark.parametrize(("gates", "kept"), [(ON, True), (OFF, False)], ids=["gate on", "gate off"])
def test_the_api_server_keeps_a_groups_claims_only_with_the_gate(gates: FeatureGates, kept: bool) -> None:
    admitted = admit_new("PodGroup", "scheduling.k8s.io", pod_group(), {}, gates)
    assert ("resourceClaims" in admitted["spec"]) is kept


def test_the_api_server_takes_the_claim_statuses_of_a_group() -> None:
    old = admit_new_group()
    new = copy.deepcopy(old)
    new["status"] = {"resourceClaimStatuses": [{"name": "gpus", "resourceClaimName": "train-gpus-abcde"}]}
    validate_update("PodGroup", "scheduling.k8s.io", old, new, "status", ON)
    new["status"]["resourceClaimStatuses"][0]["name"] = "tpus"
    with pytest.raises(APIError, match="must match the name of an entry in `spec.resourceClaims`"):
        validate_update("PodGroup", "scheduling.k8s.io", old, new, "status", ON)


def admit_new_group() -> Obj:
    group = pod_group()
    group["metadata"].update({"uid": "pg-train", "resourceVersion": "1"})
    return admit_new("PodGroup", "scheduling.k8s.io", group, {}, ON)
