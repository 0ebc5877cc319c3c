"""NodeName: a pod that names its node (``spec.nodeName``) fits only that node."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

import numpy as np

from kubesched.framework.columns import Array, columns_of
from kubesched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource, QueueingHint
from kubesched.framework.interface import CycleState, Handle
from kubesched.framework.status import Code, Status
from kubesched.framework.types import NodeInfo, PodInfo

ERR_REASON = "node(s) didn't match the requested node name"

NODE_ADD = ClusterEvent(EventResource.NODE, ActionType.ADD)


class NodeName:
    """Filter: with ``spec.nodeName`` set, every other node is UnschedulableAndUnresolvable.

    Upstream has no PreFilter here (a proposal to narrow the nodes through a PreFilterResult was
    never merged), so neither do we.
    """

    name = "NodeName"

    def __init__(self, args: Any = None, handle: Handle | None = None) -> None:
        self.handle = handle

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        if not pod.node_name or pod.node_name == node.name:
            return None
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON)

    def filter_nodes(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Array | None:
        batch = columns_of(nodes)
        if batch is None:
            return None
        if not pod.node_name:
            return np.ones(len(batch), bool)
        return cast("np.ndarray | None", batch.rows == batch.columns.index.get(pod.node_name, -1))

    def sign_pod(self, pod: PodInfo) -> dict[str, Any]:
        return {"NodeName": pod.node_name}

    def events_to_register(self) -> list[ClusterEventWithHint]:
        # Only a new node can carry the requested name; updates never change the verdict.
        return [ClusterEventWithHint(NODE_ADD, self.is_schedulable_after_node_add)]

    @staticmethod
    def is_schedulable_after_node_add(pod: Any, old: Any, new: Any) -> QueueingHint:
        """Queue only when the added node is the one the pod asks for (or it asks for none)."""
        if not isinstance(new, Mapping):
            return QueueingHint.QUEUE
        wanted = ((pod or {}).get("spec") or {}).get("nodeName") or ""
        added = (new.get("metadata") or {}).get("name", "")
        return QueueingHint.QUEUE if not wanted or wanted == added else QueueingHint.SKIP
