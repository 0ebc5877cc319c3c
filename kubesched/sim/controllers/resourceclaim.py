"""The resource-claim controller's job, as kube-controller-manager does it: a pod whose
``spec.resourceClaims[]`` names a ResourceClaimTemplate gets a ResourceClaim made from it
(``<pod>-<claim>-<5 letters>``, owned by the pod, annotated with the pod's claim name) and the
claim's name in ``status.resourceClaimStatuses``; a claim reserved for a pod that is gone loses
that reservation (and its allocation, once nobody is left), and a claim made for a pod that is
gone is deleted.

With DRAWorkloadResourceClaims (KEP-5729), a PodGroup whose ``spec.resourceClaims[]`` names a
template gets one claim for the whole group (``<group>-<claim>-<5 letters>``, owned by the
PodGroup, annotated with the group's claim name), recorded in the group's
``status.resourceClaimStatuses``. A member whose entry matches the group's exactly (same name,
same source) gets no claim of its own: once the group's claim exists, the member's status names
that claim (until then the member waits). A claim reserved for a PodGroup that is gone loses
that reservation, and a claim made for a PodGroup that is gone is deleted with it."""

from __future__ import annotations

import copy

from kubesched.cluster.base import ClusterError, NotFound
from kubesched.cluster.store import Store
from kubesched.framework.features import FeatureGates
from kubesched.framework.podgroup import pod_group_name
from kubesched.objects import Obj
from kubesched.sim.controllers.common import controller_ref, suffix

#: Upstream's annotation naming the pod's claim a generated ResourceClaim is for (a PodGroup's
#: generated claim carries it too, with the group's claim name).
POD_CLAIM_NAME_ANNOTATION = "resource.kubernetes.io/pod-claim-name"
#: Upstream keeps the generated name within 63 characters: at most 57 before ``-xxxxx``.
_MAX_BASE = 57
#: The feature gate of ResourceClaims shared by a PodGroup.
GATE = "DRAWorkloadResourceClaims"
#: The API a generated claim's owner reference names for a PodGroup.
POD_GROUP_API_VERSION = "scheduling.k8s.io/v1beta1"
#: How ``status.reservedFor`` names a PodGroup.
POD_GROUP_API_GROUP = "scheduling.k8s.io"


def _group_claims(gates: FeatureGates | None) -> bool:
    return gates is not None and gates.enabled(GATE)


def _same_claim(pod_claim: Obj, group_claim: Obj) -> bool:
    """A pod's entry is its group's claim when both have the same name and the same source."""
    return all(
        (pod_claim.get(k) or None) == (group_claim.get(k) or None)
        for k in ("name", "resourceClaimName", "resourceClaimTemplateName")
    )


def group_claim_of(store: Store, pod: Obj, pod_claim: Obj) -> Obj | None:
    """The pod's PodGroup when it lists ``pod_claim`` (same name, same source), else ``None``."""
    name = pod_group_name(pod)
    if not name:
        return None
    try:
        group = store.get("PodGroup", pod["metadata"].get("namespace") or "default", name)
    except NotFound:
        return None
    for entry in (group.get("spec") or {}).get("resourceClaims") or ():
        if _same_claim(pod_claim, entry):
            return group
    return None


def pod_needs_claims(pod: Obj) -> bool:
    """Whether a pod has a template claim without a generated claim in its status."""
    claims = (pod.get("spec") or {}).get("resourceClaims") or ()
    if not claims:
        return False
    done = {s.get("name") for s in (pod.get("status") or {}).get("resourceClaimStatuses") or ()}
    return any(c.get("resourceClaimTemplateName") and c.get("name") not in done for c in claims)


def pod_group_needs_claims(group: Obj) -> bool:
    """Whether a PodGroup has a template claim without a generated claim in its status."""
    done = {s.get("name") for s in (group.get("status") or {}).get("resourceClaimStatuses") or ()}
    return any(
        c.get("resourceClaimTemplateName") and c.get("name") not in done
        for c in (group.get("spec") or {}).get("resourceClaims") or ()
    )


def _terminal(pod: Obj) -> bool:
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


def reconcile_pod_claims(
    store: Store, pod: Obj, gates: FeatureGates | None = None, owners: ClaimOwners | None = None
) -> None:
    """Make the claims of the pod's templates that do not exist yet, and record them. With
    DRAWorkloadResourceClaims, an entry the pod's PodGroup shares gets no claim of its own: it
    is recorded with the group's claim once that exists."""
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
        group = group_claim_of(store, pod, pod_claim) if _group_claims(gates) else None
        if group is not None:
            existing = _group_claim(store, group, name, owners)
            if existing is None:
                continue  # the group's claim comes first; this member waits for it
        else:
            existing = _claim_for(store, pod, name, owners)
        if existing is None:
            existing = _make_claim(store, pod, {**pod, "apiVersion": "v1", "kind": "Pod"}, ns, name, template_name)
            if existing is None:
                continue  # retried when the template appears
        statuses.append({"name": name, "resourceClaimName": existing["metadata"]["name"]})
        added = True
    if added:
        _record_claim_statuses(store, "Pod", pod, statuses)


def reconcile_pod_group_claims(
    store: Store, group: Obj, gates: FeatureGates | None = None, owners: ClaimOwners | None = None
) -> None:
    """With DRAWorkloadResourceClaims: make the claims of the PodGroup's templates that do not
    exist yet (one per group, owned by it) and record them in its
    ``status.resourceClaimStatuses``."""
    if not _group_claims(gates) or (group.get("metadata") or {}).get("deletionTimestamp"):
        return
    ns = group["metadata"].get("namespace") or "default"
    statuses = list((group.get("status") or {}).get("resourceClaimStatuses") or ())
    done = {s.get("name") for s in statuses}
    added = False
    for entry in (group.get("spec") or {}).get("resourceClaims") or ():
        template_name = entry.get("resourceClaimTemplateName")
        name = entry.get("name", "")
        if not template_name or name in done:
            continue
        existing = _claim_for(store, group, name, owners)
        if existing is None:
            owner = {**group, "apiVersion": group.get("apiVersion") or POD_GROUP_API_VERSION, "kind": "PodGroup"}
            existing = _make_claim(store, group, owner, ns, name, template_name)
            if existing is None:
                continue  # retried when the template appears
        statuses.append({"name": name, "resourceClaimName": existing["metadata"]["name"]})
        added = True
    if added:
        _record_claim_statuses(store, "PodGroup", group, statuses)


def _make_claim(store: Store, obj: Obj, owner: Obj, ns: str, name: str, template_name: str) -> Obj | None:
    """The claim for ``obj``'s entry ``name`` made from its template (``owner``: ``obj`` with the
    apiVersion and kind its controller reference names); ``None`` while the template is absent."""
    try:
        template = store.get("ResourceClaimTemplate", ns, template_name)
    except NotFound:
        return None
    return store.create("ResourceClaim", _claim_from(owner, name, template, _fresh_name(store, obj, name)))


def _record_claim_statuses(store: Store, kind: str, obj: Obj, statuses: list[Obj]) -> None:
    """Write ``status.resourceClaimStatuses`` of a pod or a PodGroup; if the object changed
    meanwhile, its own write queues it again."""
    updated = copy.deepcopy(obj)
    updated.setdefault("status", {})["resourceClaimStatuses"] = statuses
    try:
        store.update(kind, updated, check_version=True)
    except ClusterError:
        pass


def _group_claim(store: Store, group: Obj, name: str, owners: ClaimOwners | None = None) -> Obj | None:
    """The claim made for the group's claim ``name``: the one its status names (when the group
    controls it), else one found by owner and annotation (a status write not seen yet)."""
    ns = group["metadata"].get("namespace") or "default"
    uid = group["metadata"].get("uid")
    for entry in (group.get("status") or {}).get("resourceClaimStatuses") or ():
        if entry.get("name") != name or not entry.get("resourceClaimName"):
            continue
        try:
            claim = store.get("ResourceClaim", ns, entry["resourceClaimName"])
        except NotFound:
            return None
        refs = (claim.get("metadata") or {}).get("ownerReferences") or ()
        return claim if any(r.get("controller") and r.get("uid") == uid for r in refs) else None
    return _claim_for(store, group, name, owners)


def claims_of_group(store: Store, group: Obj) -> list[Obj]:
    """The claims in the group's namespace that it controls or that are reserved for it."""
    meta = group.get("metadata") or {}
    uid = meta.get("uid")
    out = []
    for claim in store.list("ResourceClaim", meta.get("namespace") or "default")[0]:
        owners = (claim.get("metadata") or {}).get("ownerReferences") or ()
        reserved = (claim.get("status") or {}).get("reservedFor") or ()
        if any(r.get("uid") == uid for r in (*owners, *reserved)):
            out.append(claim)
    return out


def _claim_for(store: Store, owner: Obj, claim_name: str, owners: ClaimOwners | None = None) -> Obj | None:
    """A claim already generated for this pod's (or PodGroup's) claim (a previous status write
    was lost): among the claims ``owners`` says it owns, or else every claim of its namespace."""
    uid = owner["metadata"].get("uid")
    namespace = owner["metadata"].get("namespace") or "default"
    if owners is not None:
        items = owners.owned_by(store, namespace, str(uid))
    else:
        items, _ = store.list("ResourceClaim", namespace)
    for claim in items:
        cm = claim.get("metadata") or {}
        if (cm.get("annotations") or {}).get(POD_CLAIM_NAME_ANNOTATION) != claim_name:
            continue
        if any(r.get("controller") and r.get("uid") == uid for r in cm.get("ownerReferences") or ()):
            return claim
    return None


class ClaimOwners:
    """The ResourceClaims each owner (the uid of a pod or a PodGroup in their
    ``ownerReferences``) has, kept from the store's writes (:meth:`observe`): how the controller
    finds the claim it made for a pod without reading every claim of the namespace, as upstream's
    asks its claim informer's owner index. An owner's claims come in the order the store lists
    them (the order they were made)."""

    def __init__(self) -> None:
        self._claims: dict[str, set[tuple[str, str]]] = {}
        self._owners: dict[tuple[str, str], tuple[str, ...]] = {}
        #: When each claim was made, in the order of the store's list.
        self._made: dict[tuple[str, str], int] = {}
        self._next = 0

    def observe(self, etype: str, claim: Obj) -> None:
        meta = claim.get("metadata") or {}
        key = (meta.get("namespace") or "default", meta.get("name", ""))
        if etype == "DELETED":
            uids: tuple[str, ...] = ()
            self._made.pop(key, None)
        else:
            uids = tuple(str(r["uid"]) for r in meta.get("ownerReferences") or () if r.get("uid"))
            if key not in self._made:
                self._made[key] = self._next
                self._next += 1
        before = self._owners.get(key, ())
        if uids == before:
            return
        for uid in before:
            held = self._claims.get(uid)
            if held is not None:
                held.discard(key)
                if not held:
                    del self._claims[uid]
        if uids:
            self._owners[key] = uids
            for uid in uids:
                self._claims.setdefault(uid, set()).add(key)
        else:
            self._owners.pop(key, None)

    def owned_by(self, store: Store, namespace: str, uid: str) -> list[Obj]:
        """The claims of ``namespace`` whose owner references name ``uid``."""
        held = self._claims.get(uid)
        if not held:
            return []
        keys = sorted(held, key=self._made.__getitem__) if len(held) > 1 else list(held)
        out = []
        for ns, name in keys:
            if ns == namespace and (claim := store.find("ResourceClaim", ns, name)) is not None:
                out.append(claim)
        return out


def _fresh_name(store: Store, owner: Obj, claim_name: str) -> str:
    meta = owner["metadata"]
    base = f"{meta['name']}-{claim_name}"[:_MAX_BASE]
    n = 0
    while True:
        seed = "/".join((str(meta.get("uid")), claim_name, str(n)))
        name = f"{base}-{suffix(seed)}"
        try:
            store.get("ResourceClaim", meta.get("namespace") or "default", name)
        except NotFound:
            return name
        n += 1


def _claim_from(owner: Obj, claim_name: str, template: Obj, name: str) -> Obj:
    """The claim made from ``template`` for ``owner`` (a pod or a PodGroup, with its
    ``apiVersion`` and ``kind``): controlled by it, annotated with its claim's name."""
    tmeta = (template.get("spec") or {}).get("metadata") or {}
    annotations = dict(tmeta.get("annotations") or {})
    annotations[POD_CLAIM_NAME_ANNOTATION] = claim_name
    metadata: Obj = {
        "name": name,
        "namespace": owner["metadata"].get("namespace") or "default",
        "annotations": annotations,
        "ownerReferences": [controller_ref(owner)],
    }
    if tmeta.get("labels"):
        metadata["labels"] = dict(tmeta["labels"])
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": metadata,
        "spec": copy.deepcopy((template.get("spec") or {}).get("spec") or {}),
    }


def reconcile_claim(store: Store, claim: Obj, gates: FeatureGates | None = None) -> None:
    """Drop reservations of pods that are gone or finished (and, with DRAWorkloadResourceClaims,
    of PodGroups that are gone); deallocate a claim whose last consumer went so; delete a claim
    generated for a pod that is gone or finished, or for a PodGroup that is gone."""
    meta = claim["metadata"]
    ns = meta.get("namespace") or "default"

    def live(uid: str, name: str) -> bool:
        try:
            pod = store.get("Pod", ns, name)
        except NotFound:
            return False
        return pod["metadata"].get("uid") == uid and not _terminal(pod)

    def group_exists(uid: str, name: str) -> bool:
        try:
            group = store.get("PodGroup", ns, name)
        except NotFound:
            return False
        return bool(group["metadata"].get("uid") == uid)

    for ref in meta.get("ownerReferences") or ():
        if not ref.get("controller"):
            continue
        uid, name = ref.get("uid", ""), ref.get("name", "")
        kind = ref.get("kind")
        if (kind == "Pod" and not live(uid, name)) or (kind == "PodGroup" and not group_exists(uid, name)):
            try:
                store.delete("ResourceClaim", ns, meta["name"])
            except NotFound:
                pass
            return
    status = claim.get("status") or {}
    reserved = status.get("reservedFor") or []
    groups = _group_claims(gates)

    def keep(r: Obj) -> bool:
        if r.get("resource") == "pods" and not r.get("apiGroup"):
            return live(r.get("uid", ""), r.get("name", ""))
        if groups and r.get("resource") == "podgroups" and r.get("apiGroup") == POD_GROUP_API_GROUP:
            return group_exists(r.get("uid", ""), r.get("name", ""))
        return True

    kept = [r for r in reserved if keep(r)]
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
