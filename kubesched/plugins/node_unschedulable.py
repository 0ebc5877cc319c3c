"""NodeUnschedulable: keeps pods off cordoned nodes (``spec.unschedulable``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from kubesched.framework.columns import Array, columns_of
from kubesched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource, QueueingHint
from kubesched.framework.interface import CycleState, Handle
from kubesched.framework.selectors import tolerations_tolerate
from kubesched.framework.status import Code, Status
from kubesched.framework.types import NodeInfo, PodInfo, node_unschedulable
from kubesched.plugins.helper import pod_uid, tolerations_fragment

ERR_REASON_UNSCHEDULABLE = "node(s) were unschedulable"
TAINT_NODE_UNSCHEDULABLE = "node.kubernetes.io/unschedulable"

_UNSCHEDULABLE_TAINT = {"key": TAINT_NODE_UNSCHEDULABLE, "effect": "NoSchedule"}

NODE_ADD_OR_TAINT = ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_TAINT)
POD_TOLERATIONS = ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.UPDATE_POD_TOLERATIONS)


def tolerates_unschedulable(tolerations: Any) -> bool:
    """A pod that tolerates the ``node.kubernetes.io/unschedulable:NoSchedule`` taint also
    tolerates ``spec.unschedulable``."""
    return tolerations_tolerate(list(tolerations or ()), _UNSCHEDULABLE_TAINT)


class NodeUnschedulable:
    """Filter: an unschedulable node is rejected (UnschedulableAndUnresolvable) unless the pod
    tolerates the unschedulable taint."""

    name = "NodeUnschedulable"

    def __init__(self, args: Any = None, handle: Handle | None = None) -> None:
        self.handle = handle

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        if not node.unschedulable:
            return None
        if tolerates_unschedulable(pod.tolerations):
            return None
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_UNSCHEDULABLE)

    def filter_nodes(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Array | None:
        batch = columns_of(nodes)
        if batch is None:
            return None
        if tolerates_unschedulable(pod.tolerations):
            return np.ones(len(batch), bool)
        schedulable: Array = ~batch.columns.unschedulable[batch.rows]
        return schedulable

    def sign_pod(self, pod: PodInfo) -> dict[str, Any]:
        return tolerations_fragment(pod)

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(NODE_ADD_OR_TAINT, self.is_schedulable_after_node_change),
            ClusterEventWithHint(POD_TOLERATIONS, self.is_schedulable_after_pod_toleration_change),
        ]

    @staticmethod
    def is_schedulable_after_node_change(pod: Any, old: Any, new: Any) -> QueueingHint:
        """Queue when a schedulable node is added, or a node stops being unschedulable."""
        if not isinstance(new, Mapping):
            return QueueingHint.QUEUE
        if old is None:
            return QueueingHint.SKIP if node_unschedulable(new) else QueueingHint.QUEUE
        if node_unschedulable(old) and not node_unschedulable(new):
            return QueueingHint.QUEUE
        return QueueingHint.SKIP

    @staticmethod
    def is_schedulable_after_pod_toleration_change(pod: Any, old: Any, new: Any) -> QueueingHint:
        """Queue when the rejected pod itself gained a toleration of the unschedulable taint."""
        if not isinstance(new, Mapping) or not isinstance(old, Mapping):
            return QueueingHint.QUEUE
        if pod_uid(pod) != pod_uid(new):
            return QueueingHint.SKIP
        old_tol = (old.get("spec") or {}).get("tolerations")
        new_tol = (new.get("spec") or {}).get("tolerations")
        if not tolerates_unschedulable(old_tol) and tolerates_unschedulable(new_tol):
            return QueueingHint.QUEUE
        return QueueingHint.SKIP
