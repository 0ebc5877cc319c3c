"""VolumeZone: a pod's bound PersistentVolumes carry zone/region labels the node must share.

PreFilter collects the zone and region labels (GA and beta keys) of the PVs bound to the pod's
claims; claims still unbound in a ``WaitForFirstConsumer`` class are VolumeBinding's business
and skipped. Filter rejects a node with topology labels whose value is not among the volume's
(``node(s) had no available volume zone``, UnschedulableAndUnresolvable); a node without any
topology label accepts everything (single-zone clusters).
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
    BINDING_WAIT_FOR_FIRST_CONSUMER,
    LABEL_BETA_REGION,
    LABEL_BETA_ZONE,
    LABEL_REGION,
    LABEL_ZONE,
    labels_of,
    name_of,
    not_found,
    pod_claim_names,
    pvc_class,
    queue_if_pod_claim,
    spec,
    zones_to_set,
)

NAME = "VolumeZone"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME

ERR_REASON_CONFLICT = "node(s) had no available volume zone"

TOPOLOGY_LABELS = (LABEL_BETA_ZONE, LABEL_BETA_REGION, LABEL_ZONE, LABEL_REGION)
_TO_GA = {LABEL_BETA_REGION: LABEL_REGION, LABEL_BETA_ZONE: LABEL_ZONE}

PVTopology = tuple[str, str, frozenset[str]]  # (pv name, label key, allowed values)


def pv_topologies(pv: Mapping[str, Any]) -> list[PVTopology]:
    """The topology constraints of a PV, from its labels; malformed values are ignored."""
    out: list[PVTopology] = []
    lbl = labels_of(pv)
    for key in TOPOLOGY_LABELS:
        value = lbl.get(key)
        if value is None:
            continue
        zones = zones_to_set(value)
        if zones is None:
            continue
        out.append((name_of(pv), key, frozenset(zones)))
    return out


class _State:
    __slots__ = ("topologies",)

    def __init__(self, topologies: list[PVTopology]) -> None:
        self.topologies = topologies

    def clone(self) -> _State:
        return self


class VolumeZone:
    name = NAME

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        self.handle: Handle = handle

    def _pod_topologies(self, pod: PodInfo) -> tuple[list[PVTopology], Status | None]:
        listers = self.handle.listers
        out: list[PVTopology] = []
        for claim_name in pod_claim_names(pod.pod, include_ephemeral=False):
            if not claim_name:
                return [], Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "PersistentVolumeClaim had no name")
            pvc = listers.get("PersistentVolumeClaim", pod.namespace, claim_name)
            if pvc is None:
                return [], Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, not_found("PersistentVolumeClaim", claim_name))
            pv_name = spec(pvc).get("volumeName") or ""
            if not pv_name:
                sc_name = pvc_class(pvc)
                if not sc_name:
                    return [], Status(
                        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                        "PersistentVolumeClaim had no pv name and storageClass name",
                    )
                sc = listers.get("StorageClass", None, sc_name)
                if sc is None:
                    return [], Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, not_found("StorageClass", sc_name))
                # The API server defaults an absent binding mode to Immediate.
                if (sc.get("volumeBindingMode") or "Immediate") == BINDING_WAIT_FOR_FIRST_CONSUMER:
                    continue
                return [], Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "PersistentVolume had no name")
            pv = listers.get("PersistentVolume", None, pv_name)
            if pv is None:
                return [], Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, not_found("PersistentVolume", pv_name))
            out.extend(pv_topologies(pv))
        return out, None

    def pre_filter(self, state: CycleState, pod: PodInfo) -> Status | None:
        topologies, status = self._pod_topologies(pod)
        if status is not None:
            return status
        if not topologies:
            return Status(Code.SKIP)
        state.write(PRE_FILTER_STATE_KEY, _State(topologies))
        return None

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        if not pod.volumes:
            return None
        s: _State | None = state.get(PRE_FILTER_STATE_KEY)
        if s is None:
            topologies, status = self._pod_topologies(pod)
            if status is not None:
                return status
        else:
            topologies = s.topologies
        node_labels = node.labels
        if not any(k in node_labels for k in TOPOLOGY_LABELS):
            return None
        for _pv, key, values in topologies:
            v = node_labels.get(key)
            if v is None:
                v = node_labels.get(_TO_GA.get(key, key))
            if v is None or v not in values:
                return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_CONFLICT)
        return None

    def sign_pod(self, pod: PodInfo) -> dict[str, Any]:
        return volumes_fragment(pod)

    def events_to_register(self) -> list[ClusterEventWithHint]:
        add_or_update = ActionType.ADD | ActionType.UPDATE
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.STORAGE_CLASS, ActionType.ADD), is_schedulable_after_storage_class_added
            ),
            ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL)),
            ClusterEventWithHint(
                ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM, add_or_update), is_schedulable_after_pvc_change
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.PERSISTENT_VOLUME, add_or_update), is_schedulable_after_pv_change
            ),
        ]


def is_schedulable_after_pvc_change(pod: Any, old: Any, new: Any) -> QueueingHint:
    return queue_if_pod_claim(pod, new, include_ephemeral=False)


def is_schedulable_after_storage_class_added(pod: Any, old: Any, new: Any) -> QueueingHint:
    if not isinstance(new, Mapping):
        return QueueingHint.QUEUE
    if new.get("volumeBindingMode") != BINDING_WAIT_FOR_FIRST_CONSUMER:
        return QueueingHint.SKIP
    return QueueingHint.QUEUE


def is_schedulable_after_pv_change(pod: Any, old: Any, new: Any) -> QueueingHint:
    if not isinstance(old, Mapping) or not isinstance(new, Mapping):
        return QueueingHint.QUEUE
    if pv_topologies(old) != pv_topologies(new):
        return QueueingHint.QUEUE
    return QueueingHint.SKIP
