"""Coscheduling: place a group of pods all together, or none of them (gang scheduling).

The scheduler-plugins ``Coscheduling`` plugin, driven by pod labels. A pod belongs to a group
when it carries a group name and the group's minimum size::

    metadata:
      labels:
        pod-group.scheduling.sigs.k8s.io/name: train          # or scheduling.x-k8s.io/pod-group: train
        pod-group.scheduling.sigs.k8s.io/min-available: "3"

How the group is held together, point by point:

* **QueueSort** — higher priority first; then the group's timestamp (the creation time of the
  first member the plugin saw) or, for a pod outside any group, its own creation time; then the
  group (or pod) key. Members of a group share one sort key, so they leave the queue back to back.
* **PreEnqueue** — never gates; it lets the plugin learn of pending members as they arrive.
* **PreFilter** — a member is UnschedulableAndUnresolvable while fewer than min-available pods
  of its group are known (pending or assigned), or while its group backs off.
* **PostFilter** — when a member fits nowhere, the members waiting at Permit are rejected so the
  group gives back the room it holds (unless the group is already, or almost, complete).
* **Permit** — a member waits until min-available members are assumed, bound or waiting; the
  one that completes the group allows all waiting siblings.
* **Reserve/Unreserve** — when a member is unreserved (Permit timeout, rejection, failed bind),
  its waiting siblings are rejected too: the group is released as a whole.

A pod that names an upstream pod group (``spec.schedulingGroup.podGroupName``, the 1.37 workload
API that kube-scheduler's GangScheduling places) is left to that mechanism: for this plugin it
is a pod outside any label group at every point above, whatever its labels say, and it is never
counted as, waited for or rejected with a member of a label group.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from kubesched import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    CycleState,
    EventResource,
    GroupVersionResource,
    Handle,
    PodInfo,
    QueuedPodInfo,
    QueueingHint,
    Status,
)

#: The group label of current scheduler-plugins releases (its PodGroup CRD's label).
POD_GROUP_LABEL = "scheduling.x-k8s.io/pod-group"
#: The group label of the label-based (lightweight) Coscheduling of older releases.
POD_GROUP_NAME_LABEL = "pod-group.scheduling.sigs.k8s.io/name"
#: The minimum number of members that must be placed together.
MIN_AVAILABLE_LABEL = "pod-group.scheduling.sigs.k8s.io/min-available"
#: scheduler-plugins' PodGroup custom resource (``config/crds/scheduling.x-k8s.io_podgroups.yaml``):
#: a group's ``spec.minMember`` when its pods carry no min-available label.
POD_GROUPS = GroupVersionResource("scheduling.x-k8s.io", "v1alpha1", "podgroups")

#: Upstream's PostFilter leaves a group alone when at most this share of its quorum is missing:
#: a later member may still complete it.
_SMALL_GAP = 0.1


class CoschedulingArgs(BaseModel):
    """``pluginConfig`` args, as upstream's ``CoschedulingArgs``."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    #: How long a member waits at Permit for the rest of its group.
    permit_waiting_time_seconds: int = Field(60, alias="permitWaitingTimeSeconds")
    #: After a group fails (PostFilter), how long its members are refused at PreFilter; 0: never.
    pod_group_backoff_seconds: int = Field(0, alias="podGroupBackoffSeconds")

    @field_validator("permit_waiting_time_seconds")
    @classmethod
    def _permit_not_negative(cls, v: int) -> int:
        if v < 0:
            raise ValueError("permitWaitingTimeSeconds cannot be negative")
        return v

    @field_validator("pod_group_backoff_seconds")
    @classmethod
    def _backoff_not_negative(cls, v: int) -> int:
        if v < 0:
            raise ValueError("podGroupBackoffSeconds cannot be negative")
        return v


class InvalidPodGroup(ValueError):
    """A pod whose group labels cannot be read (a min-available that is not a number)."""


@dataclass(frozen=True)
class PodGroupRef:
    """The group a pod belongs to: ``namespace/name`` and its min-available."""

    namespace: str
    name: str
    min_available: int

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


MinMemberLookup = Callable[[str, str], int | None]


def group_name(labels: Mapping[str, str]) -> str:
    """The group name a pod's labels give, the current label winning over the older one."""
    return labels.get(POD_GROUP_LABEL) or labels.get(POD_GROUP_NAME_LABEL) or ""


def pod_group_of(
    namespace: str, labels: Mapping[str, str], min_member: MinMemberLookup | None = None
) -> PodGroupRef | None:
    """The group of a pod with these labels, or ``None`` for a pod scheduled on its own.

    The minimum comes from the min-available label, else from ``min_member(namespace, name)``
    (a PodGroup object's ``spec.minMember``, when the scheduler knows PodGroups). A group name
    without a minimum, or a minimum below 1, is no gang. Raises :class:`InvalidPodGroup` when
    the label is not an integer.
    """
    name = group_name(labels)
    if not name:
        return None
    raw = labels.get(MIN_AVAILABLE_LABEL, "")
    if raw:
        try:
            minimum = int(raw)
        except ValueError:
            raise InvalidPodGroup(
                f"pod group {namespace}/{name}: label {MIN_AVAILABLE_LABEL} must be an integer, got {raw!r}"
            ) from None
    else:
        found = min_member(namespace, name) if min_member is not None else None
        if found is None:
            return None
        minimum = found
    if minimum < 1:
        return None
    return PodGroupRef(namespace, name, minimum)


def _pod_meta(pod: Mapping[str, Any]) -> tuple[str, str, str, Mapping[str, str]]:
    """``(namespace, name, uid, labels)`` of a pod dict, defaulted as PodInfo does."""
    meta = pod.get("metadata") or {}
    ns = meta.get("namespace") or "default"
    name = meta.get("name", "")
    return ns, name, meta.get("uid") or f"{ns}/{name}", meta.get("labels") or {}


def scheduling_group_of(pod: Mapping[str, Any]) -> str:
    """The upstream PodGroup a pod names in ``spec.schedulingGroup.podGroupName`` (``""`` when
    none): such a pod is gang-scheduled by kube-scheduler's own mechanism, never by this plugin."""
    group = (pod.get("spec") or {}).get("schedulingGroup")
    name = group.get("podGroupName") if isinstance(group, Mapping) else None
    return name if isinstance(name, str) else ""


def label_group_name(pod: Mapping[str, Any]) -> str:
    """The label group a pod dict belongs to for this plugin: its labels' group name, or ``""``
    when it has none or when it names an upstream PodGroup (which wins over the labels)."""
    if scheduling_group_of(pod):
        return ""
    return group_name(_pod_meta(pod)[3])


def _in_group(pod: Mapping[str, Any], ref: PodGroupRef) -> bool:
    return _pod_meta(pod)[0] == ref.namespace and label_group_name(pod) == ref.name


def _terminal(pod: Mapping[str, Any]) -> bool:
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


def _now() -> float:
    """The event loop's clock (the one Permit timeouts run on), so fake-time tests agree."""
    try:
        return asyncio.get_running_loop().time()
    except RuntimeError:
        return time.monotonic()


@dataclass
class _GroupState:
    #: The group's place in the queue; fixed at first sight so activeQ's order never shifts.
    timestamp: float
    #: Pending members seen (pod key → uid). Assigned members are read from the snapshot.
    members: dict[str, str] = field(default_factory=dict)
    backoff_until: float = 0.0


class Coscheduling:
    """Gang scheduling by pod labels (see the module docstring for each extension point)."""

    name = "Coscheduling"
    Args = CoschedulingArgs

    def __init__(self, args: CoschedulingArgs | None, handle: Handle) -> None:
        self.args = args if args is not None else CoschedulingArgs.model_validate({})
        self.handle = handle
        self._groups: dict[str, _GroupState] = {}
        #: scheduler-plugins' PodGroup objects, watched from the start (a handle without
        #: informers, as in some tests, has none: the labels then say everything).
        self._pod_groups: Any = None
        informer_for = getattr(handle, "informer_for", None)
        if informer_for is not None:
            self._pod_groups = informer_for(POD_GROUPS).lister

    # --- groups -----------------------------------------------------------------------------------
    def _min_member(self, namespace: str, name: str) -> int | None:
        """``spec.minMember`` of scheduler-plugins' PodGroup ``namespace/name``, if there is one
        (a ``scheduling.k8s.io`` PodGroup of the same name never counts)."""
        pg = self._pod_groups.get(namespace, name) if self._pod_groups is not None else None
        if pg is None:
            pg = self.handle.listers.get("PodGroup", namespace, name)
        if not pg or _is_upstream_pod_group(pg):
            return None
        value = (pg.get("spec") or {}).get("minMember")
        return int(value) if value is not None else None

    def group_of(self, pod: PodInfo) -> PodGroupRef | None:
        """The pod's group; raises :class:`InvalidPodGroup` on a malformed label. ``None`` for a
        pod of an upstream PodGroup (``spec.schedulingGroup``), whatever its labels."""
        if scheduling_group_of(pod.pod):
            return None
        return pod_group_of(pod.namespace, pod.labels, self._min_member)

    def _group_or_none(self, pod: PodInfo) -> PodGroupRef | None:
        try:
            return self.group_of(pod)
        except InvalidPodGroup:
            return None

    def _state(self, ref: PodGroupRef, first_seen: float) -> _GroupState:
        st = self._groups.get(ref.key)
        if st is None:
            st = self._groups[ref.key] = _GroupState(first_seen)
        return st

    def _note(self, ref: PodGroupRef, pod: PodInfo) -> _GroupState:
        st = self._state(ref, pod.creation)
        if not pod.node_name:
            st.members[pod.key] = pod.uid
        return st

    def _assigned(self, ref: PodGroupRef) -> list[PodInfo]:
        """Members assumed or bound: the pods of the group on the snapshot's nodes."""
        out = []
        for ni in self.handle.snapshot().list():
            for p in ni.pods:
                if p.namespace == ref.namespace and label_group_name(p.pod) == ref.name:
                    out.append(p)
        return out

    def _listed(self, ref: PodGroupRef, pod: PodInfo) -> set[str] | None:
        """Every live member, when the handle's listers know pods (as upstream's pod lister does);
        ``None`` when they do not (the pod being scheduled is then missing from the list)."""
        pods = self.handle.listers.list("Pod", ref.namespace)
        if not any(_pod_meta(p)[2] == pod.uid for p in pods):
            return None
        return {f"{_pod_meta(p)[0]}/{_pod_meta(p)[1]}" for p in pods if _in_group(p, ref) and not _terminal(p)}

    def total_members(self, ref: PodGroupRef, pod: PodInfo) -> int:
        """How many members of the group the scheduler knows: pending ones and assigned ones."""
        listed = self._listed(ref, pod)
        if listed is not None:
            return len(listed | {pod.key})
        # A member seen pending stays in the census even once assumed: an assumed member that is
        # unreserved goes back to pending without passing PreEnqueue again.
        keys = set(self._note(ref, pod).members)
        keys.update(p.key for p in self._assigned(ref))
        return len(keys)

    def _waiting_siblings(self, ref: PodGroupRef) -> list[Any]:
        return [wp for wp in self.handle.iterate_waiting_pods() if _in_group(wp.pod, ref)]

    def _reject_waiting(self, ref: PodGroupRef, message: str) -> None:
        for wp in self._waiting_siblings(ref):
            wp.reject(self.name, message)

    # --- QueueSort --------------------------------------------------------------------------------
    def _sort_key(self, pod: PodInfo) -> tuple[float, str]:
        ref = self._group_or_none(pod)
        if ref is None:
            return pod.creation, pod.key
        return self._state(ref, pod.creation).timestamp, ref.key

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        pa, pb = a.pod_info, b.pod_info
        if pa.priority != pb.priority:
            return pa.priority > pb.priority
        ka, kb = self._sort_key(pa), self._sort_key(pb)
        if ka != kb:
            return ka < kb
        if pa.key != pb.key:
            return pa.key < pb.key
        return a.timestamp < b.timestamp

    # --- PreEnqueue -------------------------------------------------------------------------------
    def pre_enqueue(self, pod: PodInfo) -> Status | None:
        """Always Success: records the pod as a pending member of its group."""
        ref = self._group_or_none(pod)
        if ref is not None:
            self._note(ref, pod)
        return None

    # --- PreFilter --------------------------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: PodInfo) -> Status | None:
        """UnschedulableAndUnresolvable (no preemption can help) while the group is too small
        or backing off; Success for pods outside any group."""
        try:
            ref = self.group_of(pod)
        except InvalidPodGroup as exc:
            return Status.unresolvable(str(exc))
        if ref is None:
            return None
        st = self._note(ref, pod)
        if st.backoff_until > _now():
            return Status.unresolvable(f"podGroup {ref.key} failed recently")
        total = self.total_members(ref, pod)
        if total < ref.min_available:
            return Status.unresolvable(
                f"pre-filter pod {pod.name} cannot find enough sibling pods, "
                f"current pods number: {total}, minMember of group: {ref.min_available}"
            )
        return None

    # --- PostFilter -------------------------------------------------------------------------------
    def post_filter(self, state: CycleState, pod: PodInfo, filtered_statuses: Mapping[str, Status]) -> Any:
        """A member fits nowhere: reject its waiting siblings so the group releases its room.

        Never nominates a node. For a pod outside any group it says nothing (upstream's
        "can not find pod group" would otherwise end every ordinary pod's failure message).
        """
        ref = self._group_or_none(pod)
        if ref is None:
            return None, Status.unschedulable()
        assigned = sum(1 for p in self._assigned(ref) if p.uid != pod.uid)
        if assigned >= ref.min_available:
            # The group is already complete; this pod is an extra member.
            return None, Status.unschedulable()
        if (ref.min_available - assigned) / ref.min_available <= _SMALL_GAP:
            # Almost there: a later member may still complete the group.
            return None, Status.unschedulable()
        # If one member fits nowhere, its siblings most likely will not either.
        self._reject_waiting(ref, "optimistic rejection in PostFilter")
        backoff = self.args.pod_group_backoff_seconds
        if backoff > 0 and self.total_members(ref, pod) >= ref.min_available:
            self._state(ref, pod.creation).backoff_until = _now() + backoff
        return None, Status.unschedulable(
            f"PodGroup {ref.key} gets rejected due to Pod {pod.name} is unschedulable even after PostFilter"
        )

    # --- Reserve / Unreserve ----------------------------------------------------------------------
    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        """Nothing to hold; enabled so that Unreserve runs."""
        return None

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        """A member lost its place: reject every waiting sibling, releasing the whole group."""
        ref = self._group_or_none(pod)
        if ref is not None:
            self._reject_waiting(ref, "rejection in Unreserve")

    # --- Permit -----------------------------------------------------------------------------------
    def permit(self, state: CycleState, pod: PodInfo, node_name: str) -> tuple[Status | None, float]:
        """Success once min-available members are assumed, bound or waiting (allowing the waiting
        ones); otherwise Wait for ``permitWaitingTimeSeconds``."""
        ref = self._group_or_none(pod)
        if ref is None:
            return None, 0.0
        uids = {p.uid for p in self._assigned(ref)}
        waiting = self._waiting_siblings(ref)
        uids.update(_pod_meta(wp.pod)[2] for wp in waiting)
        uids.discard(pod.uid)
        if len(uids) + 1 < ref.min_available:
            return Status.wait(), float(self.args.permit_waiting_time_seconds)
        for wp in waiting:
            wp.allow(self.name)
        return None, 0.0

    # --- queueing ---------------------------------------------------------------------------------
    def events_to_register(self) -> list[ClusterEventWithHint]:
        """A member rejected here may fit once a sibling appears or changes."""
        hint = _sibling_event
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.POD, ActionType.ADD | ActionType.UPDATE), hint),
            ClusterEventWithHint(ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.ADD | ActionType.UPDATE), hint),
            ClusterEventWithHint(
                ClusterEvent(POD_GROUPS.event_resource, ActionType.ADD | ActionType.UPDATE), _group_event
            ),
        ]


def _sibling_event(
    pod: Mapping[str, Any], old: Mapping[str, Any] | None, new: Mapping[str, Any] | None
) -> QueueingHint:
    """Queue ``pod`` only for an event about a pod of its own label group (a pod of an upstream
    PodGroup is in none, neither as the pod waiting nor as the pod the event is about)."""
    ns = _pod_meta(pod)[0]
    name = label_group_name(pod)
    for obj in (new, old):
        if obj is not None and name:
            if _pod_meta(obj)[0] == ns and label_group_name(obj) == name:
                return QueueingHint.QUEUE
    return QueueingHint.SKIP


def _group_event(pod: Mapping[str, Any], old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> QueueingHint:
    """Queue ``pod`` for a change of the scheduler-plugins PodGroup its label names (its
    ``minMember`` is the group's minimum when no label gives one)."""
    ns = _pod_meta(pod)[0]
    name = label_group_name(pod)
    for obj in (new, old):
        meta = (obj or {}).get("metadata") or {}
        if name and meta.get("name") == name and (meta.get("namespace") or "default") == ns:
            return QueueingHint.QUEUE
    return QueueingHint.SKIP


def _is_upstream_pod_group(obj: Mapping[str, Any]) -> bool:
    """A scheduling.k8s.io PodGroup (1.37's API, which the listers hold under ``PodGroup``), not
    a scheduler-plugins one: its ``spec.schedulingPolicy`` is no ``spec.minMember``."""
    api_version = str(obj.get("apiVersion") or "")
    return api_version.startswith("scheduling.k8s.io/") or "schedulingPolicy" in (obj.get("spec") or {})
