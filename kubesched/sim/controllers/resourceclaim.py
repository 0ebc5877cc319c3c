"""The resource-claim controller's job, as kube-controller-manager does it: a pod whose
``spec.resourceClaims[]`` names a ResourceClaimTemplate gets a ResourceClaim made from it
(``<pod>-<claim>-<5 letters>``, owned by the pod, annotated with the pod's claim name) and the
claim's name in ``status.resourceClaimStatuses``; a claim reserved for a pod that is gone loses
that reservation (and its allocation, once nobody is left), and a claim made for a pod that is
gone is deleted."""

from __future__ import annotations

import copy

from kubesched.cluster.base import ClusterError, NotFound
from kubesched.cluster.store import Store
from kubesched.sim.controllers.common import Obj, controller_ref, suffix

#: Upstream's annotation naming the pod's claim a generated ResourceClaim is for.
POD_CLAIM_NAME_ANNOTATION = "resource.kubernetes.io/pod-claim-name"
#: Upstream keeps the generated name within 63 characters: at most 57 before ``-xxxxx``.
_MAX_BASE = 57


def pod_needs_claims(pod: Obj) -> bool:
    """Whether a pod has a template claim without a generated claim in its status."""
    claims = (pod.get("spec") or {}).get("resourceClaims") or ()
    if not claims:
        return False
    done = {s.get("name") for s in (pod.get("status") or {}).get("resourceClaimStatuses") or ()}
    return any(c.get("resourceClaimTemplateName") and c.get("name") not in done for c in claims)


def _terminal(pod: Obj) -> bool:
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


def reconcile_pod_claims(store: Store, pod: Obj) -> None:
    """Make the claims of the pod's templates that do not exist yet, and record them."""
    if _terminal(pod) or (pod.get("metadata") or {}).get("deletionTimestamp"):
        return
    meta = pod["metadata"]
    ns = meta.get("namespace") or "default"
    statuses = list((pod.get("status") or {}).get("resourceClaimStatuses") or ())
    done = {s.get("name") for s in statuses}
    added = False
    for pod_claim in (pod.get("spec") or {}).get("resourceClaims") or ():
        template_name = pod_claim.get("resourceClaimTemplateName")
        name = pod_claim.get("name", "")
        if not template_name or name in done:
            continue
        existing = _claim_for(store, pod, name)
        if existing is None:
            try:
                template = store.get("ResourceClaimTemplate", ns, template_name)
            except NotFound:
                continue  # retried when the template appears
            existing = store.create("ResourceClaim", _claim_from(pod, name, template, _fresh_name(store, pod, name)))
        statuses.append({"name": name, "resourceClaimName": existing["metadata"]["name"]})
        added = True
    if added:
        updated = copy.deepcopy(pod)
        updated.setdefault("status", {})["resourceClaimStatuses"] = statuses
        try:
            store.update("Pod", updated, check_version=True)
        except ClusterError:
            pass  # the pod changed meanwhile: its write queues it again


def _claim_for(store: Store, pod: Obj, pod_claim_name: str) -> Obj | None:
    """A claim already generated for this pod's claim (a previous status write was lost)."""
    uid = pod["metadata"].get("uid")
    items, _ = store.list("ResourceClaim", pod["metadata"].get("namespace") or "default")
    for claim in items:
        cm = claim.get("metadata") or {}
        if (cm.get("annotations") or {}).get(POD_CLAIM_NAME_ANNOTATION) != pod_claim_name:
            continue
        if any(r.get("controller") and r.get("uid") == uid for r in cm.get("ownerReferences") or ()):
            return claim
    return None


def _fresh_name(store: Store, pod: Obj, pod_claim_name: str) -> str:
    meta = pod["metadata"]
    base = f"{meta['name']}-{pod_claim_name}"[:_MAX_BASE]
    n = 0
    while True:
        seed = "/".join((str(meta.get("uid")), pod_claim_name, str(n)))
        name = f"{base}-{suffix(seed)}"
        try:
            store.get("ResourceClaim", meta.get("namespace") or "default", name)
        except NotFound:
            return name
        n += 1


def _claim_from(pod: Obj, pod_claim_name: str, template: Obj, name: str) -> Obj:
    tmeta = (template.get("spec") or {}).get("metadata") or {}
    annotations = dict(tmeta.get("annotations") or {})
    annotations[POD_CLAIM_NAME_ANNOTATION] = pod_claim_name
    metadata: Obj = {
        "name": name,
        "namespace": pod["metadata"].get("namespace") or "default",
        "annotations": annotations,
        "ownerReferences": [{**controller_ref({**pod, "apiVersion": "v1", "kind": "Pod"})}],
    }
    if tmeta.get("labels"):
        metadata["labels"] = dict(tmeta["labels"])
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": metadata,
        "spec": copy.deepcopy((template.get("spec") or {}).get("spec") or {}),
    }


def reconcile_claim(store: Store, claim: Obj) -> None:
    """Drop reservations of pods that are gone or finished; deallocate a claim whose last
    consumer went so; delete a claim generated for a pod that is gone or finished."""
    meta = claim["metadata"]
    ns = meta.get("namespace") or "default"

    def live(uid: str, name: str) -> bool:
        try:
            pod = store.get("Pod", ns, name)
        except NotFound:
            return False
        return pod["metadata"].get("uid") == uid and not _terminal(pod)

    for ref in meta.get("ownerReferences") or ():
        if ref.get("controller") and ref.get("kind") == "Pod" and not live(ref.get("uid", ""), ref.get("name", "")):
            try:
                store.delete("ResourceClaim", ns, meta["name"])
            except NotFound:
                pass
            return
    status = claim.get("status") or {}
    reserved = status.get("reservedFor") or []
    kept = [r for r in reserved if r.get("resource") != "pods" or live(r.get("uid", ""), r.get("name", ""))]
    if len(kept) == len(reserved):
        return
    updated = copy.deepcopy(claim)
    updated_status = updated.setdefault("status", {})
    if kept:
        updated_status["reservedFor"] = kept
    else:
        updated_status.pop("reservedFor", None)
        updated_status.pop("allocation", None)
    try:
        store.update("ResourceClaim", updated, check_version=True)
    except ClusterError:
        pass
