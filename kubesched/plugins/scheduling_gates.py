"""SchedulingGates: keeps pods that carry ``spec.schedulingGates`` out of activeQ."""

from __future__ import annotations

from typing import Any

from kubesched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource, QueueingHint
from kubesched.framework.interface import Handle
from kubesched.framework.status import Code, Status
from kubesched.framework.types import PodInfo

#: The pod's own update that removed its last gate.
GATES_ELIMINATED = ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED)


class SchedulingGates:
    """PreEnqueue: a gated pod stays gated (UnschedulableAndUnresolvable, listing its gates)
    until an update of the pod removes every gate."""

    name = "SchedulingGates"

    def __init__(self, args: Any = None, handle: Handle | None = None) -> None:
        self.handle = handle

    def pre_enqueue(self, pod: PodInfo) -> Status | None:
        if not pod.scheduling_gates:
            return None
        gates = " ".join(str(g.get("name", "")) for g in pod.scheduling_gates)
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, f"waiting for scheduling gates: [{gates}]")

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(GATES_ELIMINATED, self.is_schedulable_after_gates_eliminated)]

    @staticmethod
    def is_schedulable_after_gates_eliminated(pod: Any, old: Any, new: Any) -> QueueingHint:
        """The event is only ever about the gated pod itself, and its gates are gone: retry."""
        return QueueingHint.QUEUE
