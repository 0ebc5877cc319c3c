"""Cluster events and queueing hints: what can make an unschedulable pod schedulable again.

A plugin that rejects pods says, through ``events_to_register``, which cluster events could
change its mind. The queue moves a rejected pod back only on those events, and only when the
optional hint function (``hint(pod, old, new) -> QueueingHint``) agrees.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Hashable
from dataclasses import dataclass, field
from enum import Enum, IntFlag
from typing import Any

from kubesched.framework.pod_requests import scaled_down


class ActionType(IntFlag):
    """What happened to an object, as upstream's ``framework.ActionType`` bits."""

    ADD = 1
    DELETE = 2
    UPDATE_NODE_ALLOCATABLE = 4
    UPDATE_NODE_LABEL = 8
    UPDATE_NODE_TAINT = 16
    UPDATE_NODE_CONDITION = 32
    UPDATE_NODE_ANNOTATION = 64
    UPDATE_POD_LABEL = 128
    UPDATE_POD_SCALE_DOWN = 256
    UPDATE_POD_TOLERATIONS = 512
    UPDATE_POD_SCHEDULING_GATES_ELIMINATED = 1024
    UPDATE_OTHER = 2048
    #: ``status.resourceClaimStatuses`` of a pod changed: the claims made from its templates.
    UPDATE_POD_GENERATED_RESOURCE_CLAIM = 4096
    #: ``status.declaredFeatures`` of a node changed (NodeDeclaredFeatures).
    UPDATE_NODE_DECLARED_FEATURE = 8192
    UPDATE = (
        UPDATE_NODE_ALLOCATABLE
        | UPDATE_NODE_LABEL
        | UPDATE_NODE_TAINT
        | UPDATE_NODE_CONDITION
        | UPDATE_NODE_ANNOTATION
        | UPDATE_POD_LABEL
        | UPDATE_POD_SCALE_DOWN
        | UPDATE_POD_TOLERATIONS
        | UPDATE_POD_SCHEDULING_GATES_ELIMINATED
        | UPDATE_OTHER
        | UPDATE_POD_GENERATED_RESOURCE_CLAIM
        | UPDATE_NODE_DECLARED_FEATURE
    )
    ALL = ADD | DELETE | UPDATE


class EventResource(str, Enum):
    """Kinds of objects events are about. ``POD`` means pods bound to a node (assigned)."""

    POD = "Pod"
    UNSCHEDULED_POD = "UnscheduledPod"
    NODE = "Node"
    NAMESPACE = "Namespace"
    PERSISTENT_VOLUME = "PersistentVolume"
    PERSISTENT_VOLUME_CLAIM = "PersistentVolumeClaim"
    STORAGE_CLASS = "StorageClass"
    CSI_NODE = "CSINode"
    CSI_DRIVER = "CSIDriver"
    CSI_STORAGE_CAPACITY = "CSIStorageCapacity"
    POD_DISRUPTION_BUDGET = "PodDisruptionBudget"
    RESOURCE_CLAIM = "ResourceClaim"
    RESOURCE_SLICE = "ResourceSlice"
    DEVICE_CLASS = "DeviceClass"
    #: scheduling.k8s.io PodGroups (workload-aware scheduling).
    POD_GROUP = "PodGroup"
    #: scheduling.k8s.io CompositePodGroups (``CompositePodGroup``, alpha).
    COMPOSITE_POD_GROUP = "CompositePodGroup"
    WILDCARD = "*"


_ALL_BITS = int(ActionType.ALL)


@dataclass(frozen=True)
class ClusterEvent:
    """Something that happened to objects of one resource. ``resource`` is a :class:`EventResource`
    for the kinds the scheduler knows, or upstream's name of any other resource,
    ``<resource>.<version>.<group>`` (``GroupVersionResource.event_resource``), e.g. a CRD's
    ``"elasticquotas.v1alpha1.scheduling.x-k8s.io"``."""

    resource: EventResource | str
    action: ActionType
    label: str = ""
    #: ``action`` as a plain int: flag arithmetic on IntFlag members is slow, and the queue
    #: matches every event against every registration of every pooled pod.
    bits: int = field(init=False, repr=False, compare=False, default=0)

    def __post_init__(self) -> None:
        object.__setattr__(self, "bits", int(self.action))

    def matches(self, other: ClusterEvent) -> bool:
        """Whether a registration (``self``) covers an event that happened (``other``)."""
        if self.resource is EventResource.WILDCARD:
            return self.bits == _ALL_BITS or bool(self.bits & other.bits)
        return self.resource == other.resource and bool(self.bits & other.bits)

    def __str__(self) -> str:
        resource = self.resource.value if isinstance(self.resource, EventResource) else self.resource
        return self.label or f"{resource}{self.action.name}"


class QueueingHint(Enum):
    QUEUE = "Queue"
    SKIP = "QueueSkip"


HintFn = Callable[[Any, Any, Any], QueueingHint]
"""``hint(pod, old_obj, new_obj)``: may the event make ``pod`` (a pod dict) schedulable?"""


ScreenFn = Callable[[Any, Any], Hashable | None]
"""``screen(old_obj, new_obj)``: a key of the event's object such that :attr:`hint` answers SKIP
for every pod whose :data:`PodKeysFn` does not hold it; None where it cannot say so."""

PodKeysFn = Callable[[Any], Collection[Hashable]]
"""``pod_keys(pod)``: the keys (see :data:`ScreenFn`) of the objects that may concern the pod (a
set, say: the queue indexes its waiting pods by them)."""


@dataclass(frozen=True)
class ClusterEventWithHint:
    event: ClusterEvent
    hint: HintFn | None = None
    #: With :attr:`pod_keys`, a promise about :attr:`hint` that lets the queue pass over a pod
    #: without asking it: where ``screen(old, new)`` gives a key that ``pod_keys(pod)`` lacks,
    #: the hint would answer SKIP for that pod. An event on one object among thousands of
    #: pending pods (a ResourceClaim made for one of them) then costs a set lookup per pod, not a
    #: hint call. Decisions are the hint's alone: the queue skips only what it would skip.
    screen: ScreenFn | None = None
    pod_keys: PodKeysFn | None = None


# Events upstream names, for reuse.
NODE_ADD = ClusterEvent(EventResource.NODE, ActionType.ADD, "NodeAdd")
NODE_DELETE = ClusterEvent(EventResource.NODE, ActionType.DELETE, "NodeDelete")
ASSIGNED_POD_ADD = ClusterEvent(EventResource.POD, ActionType.ADD, "AssignedPodAdd")
ASSIGNED_POD_UPDATE = ClusterEvent(EventResource.POD, ActionType.UPDATE, "AssignedPodUpdate")
ASSIGNED_POD_DELETE = ClusterEvent(EventResource.POD, ActionType.DELETE, "AssignedPodDelete")
UNSCHEDULED_POD_UPDATE = ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.UPDATE, "UnscheduledPodUpdate")
#: A pending pod of a pod group was added: its pooled fellow members hear of it (a gang's quorum).
UNSCHEDULED_POD_ADD = ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.ADD, "UnscheduledPodAdd")
WILDCARD_EVENT = ClusterEvent(EventResource.WILDCARD, ActionType.ALL, "WildCardEvent")
UNSCHEDULABLE_TIMEOUT = ClusterEvent(EventResource.WILDCARD, ActionType.ALL, "UnschedulableTimeout")
FORCE_ACTIVATE = ClusterEvent(EventResource.WILDCARD, ActionType.ALL, "ForceActivate")


def node_update_actions(old: dict[str, Any], new: dict[str, Any]) -> ActionType:
    """Which kinds of node update happened between two versions of a node."""
    actions = ActionType(0)
    o_meta, n_meta = old.get("metadata") or {}, new.get("metadata") or {}
    o_spec, n_spec = old.get("spec") or {}, new.get("spec") or {}
    o_st, n_st = old.get("status") or {}, new.get("status") or {}
    if o_st.get("allocatable") != n_st.get("allocatable"):
        actions |= ActionType.UPDATE_NODE_ALLOCATABLE
    if o_meta.get("labels") != n_meta.get("labels"):
        actions |= ActionType.UPDATE_NODE_LABEL
    if o_spec.get("taints") != n_spec.get("taints") or o_spec.get("unschedulable") != n_spec.get("unschedulable"):
        actions |= ActionType.UPDATE_NODE_TAINT
    if o_st.get("conditions") != n_st.get("conditions"):
        actions |= ActionType.UPDATE_NODE_CONDITION
    if o_meta.get("annotations") != n_meta.get("annotations"):
        actions |= ActionType.UPDATE_NODE_ANNOTATION
    if o_st.get("declaredFeatures") != n_st.get("declaredFeatures"):
        actions |= ActionType.UPDATE_NODE_DECLARED_FEATURE
    return actions


def pod_update_actions(old: dict[str, Any], new: dict[str, Any]) -> ActionType:
    """Which kinds of pod update happened between two versions of a pod."""
    actions = ActionType(0)
    o_meta, n_meta = old.get("metadata") or {}, new.get("metadata") or {}
    o_spec, n_spec = old.get("spec") or {}, new.get("spec") or {}
    if o_meta.get("labels") != n_meta.get("labels"):
        actions |= ActionType.UPDATE_POD_LABEL
    if o_spec.get("tolerations") != n_spec.get("tolerations"):
        actions |= ActionType.UPDATE_POD_TOLERATIONS
    if o_spec.get("schedulingGates") and not n_spec.get("schedulingGates"):
        actions |= ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED
    if scaled_down(old, new):
        actions |= ActionType.UPDATE_POD_SCALE_DOWN
    if (old.get("status") or {}).get("resourceClaimStatuses") != (new.get("status") or {}).get("resourceClaimStatuses"):
        actions |= ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM
    return actions or ActionType.UPDATE_OTHER
