"""GangScheduling (upstream's in-tree plugin of kube-scheduler 1.37, ``GenericWorkload``): a
PodGroup whose policy is ``gang`` is placed with at least ``minCount`` members, or not at all.

* **PreEnqueue** holds a member back until its PodGroup is known and, for a gang, until at
  least ``minCount`` of its members exist (pending, assumed or bound):
  ``waiting for pod's pod group "g" to appear in scheduling queue`` /
  ``waiting for minCount pods from a gang to appear in scheduling queue``. A pod outside any
  group, or in a ``basic`` group once the group exists, passes.
* **PlacementFeasible** in the group's cycle: with ``s`` members placed and ``r`` still to try,
  ``s + r < minCount`` cannot be met any more (Unschedulable,
  ``minCount (8) cannot be satisfied: 7 scheduled, 0 remaining``), ``s < minCount`` is not met
  yet (Wait), else Success. A basic group's minimum is 1.
* **Events**: a pod of the same group added (pending or bound), the PodGroup added, or a gang's
  ``minCount`` lowered.

* **Permit**, the barrier left for a member that reaches it while fewer than ``minCount``
  of its gang are placed (bound or assumed): the others still pending are activated and it waits
  (``waiting for minCount pods from a gang to be scheduled``, at most 5 minutes); once
  ``minCount`` are placed, every waiting member is allowed. The pod-group cycle assumes a whole
  gang before any member runs Permit, so there it lets every member through at once.
"""

from __future__ import annotations

from typing import Any, ClassVar

from kubesched.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    QueueingHint,
    Resource,
)
from kubesched.framework.interface import CycleState, Handle
from kubesched.framework.names import GANG_SCHEDULING
from kubesched.framework.podgroup import PlacementProgress, PodGroupInfo, pod_group_name
from kubesched.framework.status import Code, Status
from kubesched.framework.types import PodInfo

QUEUE, SKIP = QueueingHint.QUEUE, QueueingHint.SKIP

#: Why a member waits at PreEnqueue (upstream's words).
GROUP_NOT_FOUND = 'waiting for pod\'s pod group "{}" to appear in scheduling queue'
QUORUM_NOT_MET = "waiting for minCount pods from a gang to appear in scheduling queue"
#: Why a member waits at Permit, and for how long at most (upstream's fixed timeout).
WAITING_AT_PERMIT = "waiting for minCount pods from a gang to be scheduled"
PERMIT_TIMEOUT_SECONDS = 300.0


def _ns(obj: dict[str, Any] | None) -> str:
    return ((obj or {}).get("metadata") or {}).get("namespace") or "default"


def _name(obj: dict[str, Any] | None) -> str:
    return ((obj or {}).get("metadata") or {}).get("name") or ""


def gang_min_count(pod_group: dict[str, Any] | None) -> int | None:
    """A PodGroup's ``spec.schedulingPolicy.gang.minCount``; ``None`` when its policy is not gang."""
    gang = (((pod_group or {}).get("spec") or {}).get("schedulingPolicy") or {}).get("gang")
    if not isinstance(gang, dict):
        return None
    return int(gang.get("minCount") or 1)


class GangScheduling:
    """All of a gang's minimum, or nothing (see the module docstring)."""

    name: ClassVar[str] = GANG_SCHEDULING

    def __init__(self, args: Any, handle: Handle) -> None:
        self.handle = handle

    # --- PreEnqueue -----------------------------------------------------------------------------
    def pre_enqueue(self, pod: PodInfo) -> Status | None:
        if not pod.pod_group:
            return None
        groups = self.handle.pod_groups
        obj = groups.get(pod.namespace, pod.pod_group)
        if obj is None:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, GROUP_NOT_FOUND.format(pod.pod_group))
        min_count = gang_min_count(obj)
        if min_count is None:
            return None
        if groups.member_count(pod.namespace, pod.pod_group) < min_count:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, QUORUM_NOT_MET)
        return None

    # --- Permit ---------------------------------------------------------------------------------
    def permit(self, state: CycleState, pod: PodInfo, node_name: str) -> tuple[Status | None, float]:
        if not pod.pod_group:
            return None, 0.0
        groups = self.handle.pod_groups
        obj = groups.get(pod.namespace, pod.pod_group)
        if obj is None:
            return Status.as_error(f"failed to get podGroup {pod.namespace}/{pod.pod_group}: not found"), 0.0
        min_count = gang_min_count(obj)
        if min_count is None:
            return None, 0.0
        group = groups.state(pod.namespace, pod.pod_group)
        if len(group.scheduled) < min_count:
            self.handle.activate([p for uid, p in group.members.items() if uid not in group.scheduled])
            return Status(Code.WAIT, WAITING_AT_PERMIT), PERMIT_TIMEOUT_SECONDS
        for uid in group.scheduled:
            waiting = self.handle.get_waiting_pod(uid)
            if waiting is not None:
                waiting.allow(self.name)
        return None, 0.0

    # --- PlacementFeasible ----------------------------------------------------------------------
    def placement_feasible(self, state: CycleState, group: PodGroupInfo, progress: PlacementProgress) -> Status | None:
        need = group.min_count
        scheduled, remaining = progress.scheduled, progress.remaining
        if scheduled + remaining < need:
            return Status(
                Code.UNSCHEDULABLE,
                f"minCount ({need}) cannot be satisfied: {scheduled} scheduled, {remaining} remaining",
            )
        if scheduled < need:
            return Status(
                Code.WAIT, f"minCount ({need}) is not yet satisfied: {scheduled} scheduled, {remaining} remaining"
            )
        return None

    # --- events ---------------------------------------------------------------------------------
    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(ClusterEvent(Resource.UNSCHEDULED_POD, ActionType.ADD), self.after_pod_added),
            ClusterEventWithHint(ClusterEvent(Resource.POD, ActionType.ADD), self.after_pod_added),
            ClusterEventWithHint(ClusterEvent(Resource.POD_GROUP, ActionType.ADD), self.after_pod_group_added),
            ClusterEventWithHint(ClusterEvent(Resource.POD_GROUP, ActionType.UPDATE), self.after_pod_group_updated),
        ]

    @staticmethod
    def after_pod_added(pod: dict[str, Any], old: Any, new: dict[str, Any] | None) -> QueueingHint:
        """A pod of the same group appeared: the quorum may be met now."""
        group = pod_group_name(pod)
        if not group or new is None:
            return SKIP
        same = _ns(new) == _ns(pod) and pod_group_name(new) == group
        return QUEUE if same else SKIP

    @staticmethod
    def after_pod_group_added(pod: dict[str, Any], old: Any, new: dict[str, Any] | None) -> QueueingHint:
        """The pod's own PodGroup appeared."""
        group = pod_group_name(pod)
        if not group or new is None:
            return SKIP
        return QUEUE if _ns(new) == _ns(pod) and _name(new) == group else SKIP

    @staticmethod
    def after_pod_group_updated(
        pod: dict[str, Any], old: dict[str, Any] | None, new: dict[str, Any] | None
    ) -> QueueingHint:
        """The pod's gang asks for fewer members than before."""
        group = pod_group_name(pod)
        if not group or new is None or _ns(new) != _ns(pod) or _name(new) != group:
            return SKIP
        before, after = gang_min_count(old), gang_min_count(new)
        if before is None or after is None:
            return SKIP
        return QUEUE if after < before else SKIP
