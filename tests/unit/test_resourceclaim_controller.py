"""The simulated resource-claim controller: claims made from a pod's ResourceClaimTemplates as
kube-controller-manager makes them, recorded in the pod's status, released when the pod goes."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kubesched.cluster.store import Store
from kubesched.sim.controllers import ControllerManager
from kubesched.sim.controllers.resourceclaim import POD_CLAIM_NAME_ANNOTATION

Obj = dict[str, Any]


def template(name: str = "gpu-template") -> Obj:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "metadata": {"labels": {"team": "ml"}},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}},
        },
    }


def pod(name: str = "trainer", **claim: str) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "containers": [{"name": "c", "image": "pause"}],
            "resourceClaims": [{"name": "gpus", **(claim or {"resourceClaimTemplateName": "gpu-template"})}],
        },
    }


@pytest.fixture
def env() -> tuple[Store, ControllerManager]:
    store = Store()
    manager = ControllerManager(store)
    manager.follow()
    return store, manager


def claims(store: Store) -> list[Obj]:
    return store.list("ResourceClaim", "default")[0]


def test_a_claim_is_made_from_the_template_and_recorded_on_the_pod(env: tuple[Store, ControllerManager]) -> None:
    store, manager = env
    store.create("ResourceClaimTemplate", template())
    p = store.create("Pod", pod())
    manager.run_pending()
    (claim,) = claims(store)
    meta = claim["metadata"]
    assert meta["name"].startswith("trainer-gpus-") and len(meta["name"]) == len("trainer-gpus-") + 5
    assert meta["annotations"] == {POD_CLAIM_NAME_ANNOTATION: "gpus"}
    assert meta["labels"] == {"team": "ml"}
    (ref,) = meta["ownerReferences"]
    assert (ref["kind"], ref["name"], ref["uid"], ref["controller"]) == ("Pod", "trainer", p["metadata"]["uid"], True)
    assert claim["spec"] == template()["spec"]["spec"]
    live = store.get("Pod", "default", "trainer")
    assert live["status"]["resourceClaimStatuses"] == [{"name": "gpus", "resourceClaimName": meta["name"]}]
    manager.run_pending()
    assert len(claims(store)) == 1  # made once


def test_a_pod_waits_for_its_template_then_gets_its_claim(env: tuple[Store, ControllerManager]) -> None:
    store, manager = env
    store.create("Pod", pod())
    manager.run_pending()
    assert claims(store) == []
    assert "resourceClaimStatuses" not in (store.get("Pod", "default", "trainer").get("status") or {})
    store.create("ResourceClaimTemplate", template())
    manager.run_pending()
    assert len(claims(store)) == 1


def test_a_pod_naming_a_claim_directly_gets_nothing_made(env: tuple[Store, ControllerManager]) -> None:
    store, manager = env
    store.create("ResourceClaimTemplate", template())
    store.create("Pod", pod(resourceClaimName="shared"))
    manager.run_pending()
    assert claims(store) == []


def test_a_deleted_pod_loses_its_generated_claim_and_its_reservations(env: tuple[Store, ControllerManager]) -> None:
    store, manager = env
    store.create("ResourceClaimTemplate", template())
    store.create("Pod", pod())
    user = store.create("Pod", pod("user", resourceClaimName="shared"))
    shared = store.create(
        "ResourceClaim",
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {"name": "shared", "namespace": "default"},
            "spec": {},
            "status": {
                "allocation": {"devices": {"results": []}},
                "reservedFor": [{"resource": "pods", "name": "user", "uid": user["metadata"]["uid"]}],
            },
        },
    )
    manager.run_pending()
    assert len(claims(store)) == 2
    store.delete("Pod", "default", "trainer")
    store.delete("Pod", "default", "user")
    manager.run_pending()
    (left,) = claims(store)
    assert left["metadata"]["name"] == "shared"
    assert shared["status"]["reservedFor"] and "reservedFor" not in left["status"]
    assert "allocation" not in left["status"]  # deallocated once nobody uses it


@pytest.mark.parametrize("follow_after_the_claims_are_made", [False, True])
def test_a_claim_whose_status_write_was_lost_is_found_by_its_owner_not_made_twice(
    follow_after_the_claims_are_made: bool,
) -> None:
    store = Store()
    manager = ControllerManager(store)
    if not follow_after_the_claims_are_made:
        manager.follow()
    store.create("ResourceClaimTemplate", template())
    p = store.create("Pod", pod())
    store.create("Pod", pod("other"))  # a claim of the same name, owned by another pod
    if follow_after_the_claims_are_made:
        first = ControllerManager(store)  # the claims are made by another manager, gone since
        first.follow()
        first.run_pending()
        asyncio.run(first.stop())
        manager.follow()
    manager.run_pending()
    (mine,) = [c for c in claims(store) if c["metadata"]["ownerReferences"][0]["uid"] == p["metadata"]["uid"]]
    # The status write is lost: the pod no longer names its claim. A claim of another namespace
    # names the pod's uid too: not the pod's.
    live = store.get("Pod", "default", "trainer")
    live["status"].pop("resourceClaimStatuses")
    store.update("Pod", live)
    store.create("ResourceClaim", {**mine, "metadata": {**mine["metadata"], "namespace": "elsewhere"}})
    manager.run_pending()
    assert len(claims(store)) == 2  # the pod's and the other pod's: none made again
    status = store.get("Pod", "default", "trainer")["status"]["resourceClaimStatuses"]
    assert status == [{"name": "gpus", "resourceClaimName": mine["metadata"]["name"]}]


def test_claim_owners_follow_creates_owner_changes_and_deletes_in_the_stores_order() -> None:
    from kubesched.sim.controllers.resourceclaim import ClaimOwners

    store = Store()
    owners = ClaimOwners()
    store.subscribe(lambda etype, kind, obj, old: owners.observe(etype, obj) if kind == "ResourceClaim" else None)

    def claim(name: str, *uids: str, namespace: str = "default") -> Obj:
        refs = [{"apiVersion": "v1", "kind": "Pod", "name": u, "uid": u} for u in uids]
        return {"metadata": {"name": name, "namespace": namespace, "ownerReferences": refs}, "spec": {}}

    def names(uid: str, namespace: str = "default") -> list[str]:
        return [c["metadata"]["name"] for c in owners.owned_by(store, namespace, uid)]

    for name in ("a", "b", "c"):
        store.create("ResourceClaim", claim(name, "u1"))
    store.create("ResourceClaim", claim("d", "u1", "u2"))
    store.create("ResourceClaim", claim("a", "u1", namespace="other"))
    assert names("u1") == ["a", "b", "c", "d"] and names("u2") == ["d"] and names("u1", "other") == ["a"]
    b = store.get("ResourceClaim", "default", "b")
    store.update("ResourceClaim", {**b, "spec": {"changed": True}})
    assert names("u1") == ["a", "b", "c", "d"]  # same owners: same place
    store.update(
        "ResourceClaim", {**store.get("ResourceClaim", "default", "c"), "metadata": claim("c", "u2")["metadata"]}
    )
    assert names("u1") == ["a", "b", "d"] and names("u2") == ["c", "d"]
    store.delete("ResourceClaim", "default", "d")
    assert names("u1") == ["a", "b"] and names("u2") == ["c"] and names("nobody") == []
