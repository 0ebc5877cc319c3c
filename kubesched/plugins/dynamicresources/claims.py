"""A pod's ResourceClaims as objects: their metadata, allocation and requests; who
``status.reservedFor`` names (the pod, or its PodGroup: KEP-5729's claims shared by a group);
which claim a ``spec.resourceClaims`` entry of a pod or a PodGroup stands for; and
:class:`ClaimProblem`, why a pod cannot use its claims now."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from kubesched.framework.podgroup import pod_group_name
from kubesched.objects import Obj
from kubesched.plugins.dynamicresources.allocator_types import claim_key

#: Upstream's finalizer on claims the scheduler allocated.
FINALIZER = "resource.kubernetes.io/delete-protection"
#: Upstream's limit on ``status.reservedFor`` (ResourceClaimReservedForMaxSize).
RESERVED_FOR_MAX_SIZE = 256
#: ResourceClaims shared by a PodGroup (KEP-5729, beta and off by default in 1.37).
WORKLOAD_CLAIMS_GATE = "DRAWorkloadResourceClaims"
#: How ``status.reservedFor`` names a PodGroup.
POD_GROUP_API_GROUP = "scheduling.k8s.io"
POD_GROUP_RESOURCE = "podgroups"


class ClaimProblem(Exception):
    """Why a pod cannot use its claims now (UnschedulableAndUnresolvable)."""


def meta_of(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


def uid_of(obj: Mapping[str, Any]) -> str:
    return str(meta_of(obj).get("uid") or claim_key(obj))


def allocation_of(claim: Mapping[str, Any]) -> Any:
    return (claim.get("status") or {}).get("allocation")


def reserved_for_pod(pod: Mapping[str, Any], claim: Mapping[str, Any], accept_group: bool = False) -> bool:
    """Whether ``claim.status.reservedFor`` lists the pod, or (``accept_group``: the
    DRAWorkloadResourceClaims gate) the pod's PodGroup, which upstream matches by name: a
    PodGroup cannot be deleted and made again under its name while members use it."""
    uid = meta_of(pod).get("uid")
    group = pod_group_name(pod) if accept_group else ""
    for r in (claim.get("status") or {}).get("reservedFor") or ():
        if r.get("uid") == uid:
            return True
        if group and is_group_ref(r) and r.get("name") == group:
            return True
    return False


def is_group_ref(ref: Mapping[str, Any]) -> bool:
    return ref.get("apiGroup") == POD_GROUP_API_GROUP and ref.get("resource") == POD_GROUP_RESOURCE


def pod_ref(pod: Mapping[str, Any]) -> Obj:
    meta = meta_of(pod)
    return {"resource": "pods", "name": meta.get("name", ""), "uid": meta.get("uid", "")}


def _group_ref(group: Mapping[str, Any]) -> Obj:
    meta = meta_of(group)
    return {
        "apiGroup": POD_GROUP_API_GROUP,
        "resource": POD_GROUP_RESOURCE,
        "name": meta.get("name", ""),
        "uid": meta.get("uid", ""),
    }


def _same_claim(pod_claim: Mapping[str, Any], group_claim: Mapping[str, Any]) -> bool:
    """A pod's ``spec.resourceClaims`` entry is its PodGroup's claim when it matches the group's
    entry exactly: the same name and the same source."""
    return all(
        (pod_claim.get(k) or None) == (group_claim.get(k) or None)
        for k in ("name", "resourceClaimName", "resourceClaimTemplateName")
    )


def bind_to(pod: Mapping[str, Any], group: Mapping[str, Any] | None, pod_claim: Mapping[str, Any]) -> Obj:
    """What ``status.reservedFor`` gets for one of the pod's claims (upstream's ``BindTo``): its
    PodGroup when the group lists the same claim, else the pod. Raises :class:`ClaimProblem`
    for an entry with no source, or a group that is not the pod's."""
    meta = meta_of(pod)
    ns = meta.get("namespace") or "default"
    if not pod_claim.get("resourceClaimName") and not pod_claim.get("resourceClaimTemplateName"):
        raise ClaimProblem(
            f"Pod {ns}/{meta.get('name', '')} claim {pod_claim.get('name', '')}: none of the supported fields are set"
        )
    if group is None:
        return pod_ref(pod)
    gmeta = meta_of(group)
    gns = gmeta.get("namespace") or "default"
    if gns != ns or gmeta.get("name") != pod_group_name(pod):
        raise ClaimProblem(
            f"Pod {ns}/{meta.get('name', '')} belongs to PodGroup {ns}/{pod_group_name(pod)}, "
            f"not PodGroup {gns}/{gmeta.get('name', '')}"
        )
    for group_claim in (group.get("spec") or {}).get("resourceClaims") or ():
        if _same_claim(pod_claim, group_claim):
            return _group_ref(group)
    return pod_ref(pod)


def reserved_by(claim: Mapping[str, Any], ref: Mapping[str, Any]) -> bool:
    """Whether ``status.reservedFor`` holds the consumer ``ref`` (by UID)."""
    return any(r.get("uid") == ref.get("uid") for r in (claim.get("status") or {}).get("reservedFor") or ())


def same_devices(a: Mapping[str, Any] | None, b: Mapping[str, Any] | None) -> bool:
    """Whether two allocations hold the same devices (their timestamps aside)."""
    if a is None or b is None:
        return False
    return (a.get("devices") or {}).get("results") == (b.get("devices") or {}).get("results")


def controlled_by_group(claim: Mapping[str, Any], name: str) -> bool:
    """Whether a PodGroup named ``name`` controls the claim (any version of the API group)."""
    for r in meta_of(claim).get("ownerReferences") or ():
        if not r.get("controller") or r.get("kind") != "PodGroup" or r.get("name") != name:
            continue
        if str(r.get("apiVersion") or "").split("/")[0] == POD_GROUP_API_GROUP:
            return True
    return False


def claim_statuses(obj: Mapping[str, Any]) -> dict[Any, str]:
    """``status.resourceClaimStatuses`` of a pod or a PodGroup: the claim made for each of its
    template entries, by entry name (``""``: none is needed)."""
    return {
        s.get("name"): s.get("resourceClaimName") or ""
        for s in (obj.get("status") or {}).get("resourceClaimStatuses") or ()
    }


def entry_claim_name(
    entry: Mapping[str, Any], statuses: Mapping[Any, str], owner: str, entry_label: str
) -> tuple[str, bool]:
    """The claim a ``spec.resourceClaims`` entry of ``owner`` (a pod or a PodGroup, as messages
    name it) stands for, and whether it was made from a template (its owner is then checked);
    ``""`` when the controller said no claim is needed. Raises :class:`ClaimProblem`."""
    if entry.get("resourceClaimName"):
        return str(entry["resourceClaimName"]), False
    if entry.get("resourceClaimTemplateName"):
        made = statuses.get(entry.get("name"))
        if made is None:
            raise ClaimProblem(f"{owner}: ResourceClaim not created yet")
        return made, True
    raise ClaimProblem(f"{owner}, spec.resourceClaim {entry_label}: none of the supported fields are set")


def unreserved(claim: Mapping[str, Any], uid: Any) -> Obj:
    """A copy of ``claim`` without the consumer ``uid`` (a pod, or a PodGroup) in
    ``status.reservedFor`` (the field dropped when no one is left)."""
    updated = copy.deepcopy(dict(claim))
    kept = [r for r in updated["status"].get("reservedFor") or () if r.get("uid") != uid]
    if kept:
        updated["status"]["reservedFor"] = kept
    else:
        updated["status"].pop("reservedFor", None)
    return updated


def can_be_reserved(claim: Mapping[str, Any]) -> bool:
    return len((claim.get("status") or {}).get("reservedFor") or ()) < RESERVED_FOR_MAX_SIZE


def requests_of(claim: Mapping[str, Any]) -> Any:
    return ((claim.get("spec") or {}).get("devices") or {}).get("requests")
