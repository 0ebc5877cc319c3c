"""VolumeRestrictions: volumes that cannot be shared.

* GCE PD, AWS EBS, Ceph RBD and iSCSI disks already mounted by a pod on the node: a GCE PD, an
  RBD image or an iSCSI target may be shared only when every mount is read-only; an EBS volume
  never (``node(s) had no available disk``, Unschedulable).
* A ReadWriteOncePod claim already used by any scheduled pod (Unschedulable: preemption can
  free it). A claim that does not exist yet is UnschedulableAndUnresolvable at PreFilter.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubesched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource, QueueingHint
from kubesched.framework.interface import CycleState, Handle
from kubesched.framework.status import Code, Status
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.plugins.helper import volumes_fragment
from kubesched.plugins.volume.helpers import (
    READ_WRITE_ONCE_POD,
    namespace_of,
    not_found,
    pod_claim_names,
    pod_obj,
    pvc_key,
    queue_if_pod_claim,
    spec,
)

NAME = "VolumeRestrictions"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME

ERR_REASON_DISK_CONFLICT = "node(s) had no available disk"
ERR_REASON_RWOP_CONFLICT = (
    "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode"
)

_CONFLICT_SOURCES = ("gcePersistentDisk", "awsElasticBlockStore", "rbd", "iscsi")


def needs_restrictions_check(volume: Mapping[str, Any]) -> bool:
    return any(volume.get(k) is not None for k in _CONFLICT_SOURCES)


def _rbd_pool(src: Mapping[str, Any]) -> str:
    return src.get("pool") or "rbd"  # the API default


def is_volume_conflict(volume: Mapping[str, Any], other_pod: Mapping[str, Any]) -> bool:
    """Whether ``volume`` cannot be mounted alongside the volumes of ``other_pod``."""
    gce = volume.get("gcePersistentDisk")
    ebs = volume.get("awsElasticBlockStore")
    iscsi = volume.get("iscsi")
    rbd = volume.get("rbd")
    for existing in spec(other_pod).get("volumes") or ():
        e_gce = existing.get("gcePersistentDisk")
        if gce is not None and e_gce is not None:
            if gce.get("pdName") == e_gce.get("pdName") and not (gce.get("readOnly") and e_gce.get("readOnly")):
                return True
        e_ebs = existing.get("awsElasticBlockStore")
        if ebs is not None and e_ebs is not None and ebs.get("volumeID") == e_ebs.get("volumeID"):
            return True
        e_iscsi = existing.get("iscsi")
        if iscsi is not None and e_iscsi is not None:
            if iscsi.get("iqn") == e_iscsi.get("iqn") and not (iscsi.get("readOnly") and e_iscsi.get("readOnly")):
                return True
        e_rbd = existing.get("rbd")
        if rbd is not None and e_rbd is not None:
            if (
                set(rbd.get("monitors") or ()) & set(e_rbd.get("monitors") or ())
                and _rbd_pool(rbd) == _rbd_pool(e_rbd)
                and rbd.get("image") == e_rbd.get("image")
                and not (rbd.get("readOnly") and e_rbd.get("readOnly"))
            ):
                return True
    return False


def satisfy_volume_conflicts(pod: Mapping[str, Any], node: NodeInfo) -> bool:
    for v in spec(pod).get("volumes") or ():
        if not needs_restrictions_check(v):
            continue
        for existing in node.pods:
            if is_volume_conflict(v, existing.pod):
                return False
    return True


class _PreFilterState:
    """The pod's ReadWriteOncePod claims and how many scheduled pods use them."""

    __slots__ = ("rwop_claims", "conflicting_ref_count")

    def __init__(self, rwop_claims: frozenset[str], conflicting_ref_count: int) -> None:
        self.rwop_claims = rwop_claims
        self.conflicting_ref_count = conflicting_ref_count

    def update_with_pod(self, pod: PodInfo, multiplier: int) -> None:
        claims = pod_claim_names(pod.pod, include_ephemeral=False)
        self.conflicting_ref_count += multiplier * sum(1 for c in claims if c in self.rwop_claims)

    def clone(self) -> _PreFilterState:
        return _PreFilterState(self.rwop_claims, self.conflicting_ref_count)


class VolumeRestrictions:
    name = NAME

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        self.handle: Handle = handle

    def pre_filter(self, state: CycleState, pod: PodInfo) -> Status | None:
        obj = pod.pod
        needs_check = any(needs_restrictions_check(v) for v in spec(obj).get("volumes") or ())
        rwop: set[str] = set()
        for claim_name in pod_claim_names(obj, include_ephemeral=False):
            pvc = self.handle.listers.get("PersistentVolumeClaim", pod.namespace, claim_name)
            if pvc is None:
                return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, not_found("PersistentVolumeClaim", claim_name))
            if READ_WRITE_ONCE_POD in (spec(pvc).get("accessModes") or ()):
                rwop.add(claim_name)
        conflicting = 0
        if rwop:
            used = self._claims_in_use()
            # At most one pod can be using a ReadWriteOncePod claim.
            conflicting = sum(1 for c in rwop if pvc_key(pod.namespace, c) in used)
        if not needs_check and conflicting == 0:
            return Status(Code.SKIP)
        state.write(PRE_FILTER_STATE_KEY, _PreFilterState(frozenset(rwop), conflicting))
        return None

    def _claims_in_use(self) -> set[str]:
        used: set[str] = set()
        for ni in self.handle.snapshot().list():
            for p in ni.pods:
                for c in pod_claim_names(p.pod, include_ephemeral=False):
                    used.add(pvc_key(p.namespace, c))
        return used

    def add_pod(self, state: CycleState, pod: PodInfo, to_add: PodInfo, node: NodeInfo) -> Status | None:
        s: _PreFilterState | None = state.get(PRE_FILTER_STATE_KEY)
        if s is None:
            return Status.as_error(f'cannot read "{PRE_FILTER_STATE_KEY}" from cycleState')
        s.update_with_pod(to_add, 1)
        return None

    def remove_pod(self, state: CycleState, pod: PodInfo, to_remove: PodInfo, node: NodeInfo) -> Status | None:
        s: _PreFilterState | None = state.get(PRE_FILTER_STATE_KEY)
        if s is None:
            return Status.as_error(f'cannot read "{PRE_FILTER_STATE_KEY}" from cycleState')
        s.update_with_pod(to_remove, -1)
        return None

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        if not satisfy_volume_conflicts(pod.pod, node):
            return Status(Code.UNSCHEDULABLE, ERR_REASON_DISK_CONFLICT)
        s: _PreFilterState | None = state.get(PRE_FILTER_STATE_KEY)
        if s is None:
            return Status.as_error(f'cannot read "{PRE_FILTER_STATE_KEY}" from cycleState')
        if s.conflicting_ref_count > 0:
            return Status(Code.UNSCHEDULABLE, ERR_REASON_RWOP_CONFLICT)
        return None

    def sign_pod(self, pod: PodInfo) -> dict[str, Any]:
        return volumes_fragment(pod)

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            # Volumes of a pod are immutable: only deletions release them.
            ClusterEventWithHint(ClusterEvent(EventResource.POD, ActionType.DELETE), is_schedulable_after_pod_deleted),
            ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD)),
            ClusterEventWithHint(
                ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD), is_schedulable_after_pvc_added
            ),
        ]


def is_schedulable_after_pvc_added(pod: Any, old: Any, new: Any) -> QueueingHint:
    return queue_if_pod_claim(pod, new, include_ephemeral=False)


def is_schedulable_after_pod_deleted(pod: Any, old: Any, new: Any) -> QueueingHint:
    """Queue when the deleted pod held a disk the pod conflicts on, or used one of its claims."""
    p = pod_obj(pod)
    deleted = old if isinstance(old, Mapping) else new
    if not isinstance(deleted, Mapping):
        return QueueingHint.QUEUE
    if namespace_of(deleted) != namespace_of(p):
        return QueueingHint.SKIP
    for v in spec(p).get("volumes") or ():
        if needs_restrictions_check(v) and is_volume_conflict(v, deleted):
            return QueueingHint.QUEUE
    claims = set(pod_claim_names(p, include_ephemeral=False))
    if claims & set(pod_claim_names(deleted, include_ephemeral=False)):
        return QueueingHint.QUEUE
    return QueueingHint.SKIP
