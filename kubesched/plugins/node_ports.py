"""NodePorts: a pod's host ports must be free on the node."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

import numpy as np

from kubesched.framework.columns import Array, columns_of
from kubesched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource, QueueingHint
from kubesched.framework.interface import CycleState, Handle
from kubesched.framework.status import Code, Status
from kubesched.framework.types import NodeInfo, PodInfo

ERR_REASON = "node(s) didn't have free ports for the requested pod ports"
PRE_FILTER_STATE_KEY = "PreFilterNodePorts"

ASSIGNED_POD_DELETE = ClusterEvent(EventResource.POD, ActionType.DELETE)
NODE_ADD = ClusterEvent(EventResource.NODE, ActionType.ADD)

HostPort = tuple[str, str, int]


def fits_ports(want: Sequence[HostPort], node: NodeInfo) -> bool:
    for ip, protocol, port in want:
        if node.port_in_use(ip, protocol, port):
            return False
    return True


def _conflict(a: Sequence[HostPort], b: Sequence[HostPort]) -> bool:
    """Whether any port of ``a`` collides with one of ``b`` (0.0.0.0 overlaps every address)."""
    for ip1, proto1, port1 in a:
        for ip2, proto2, port2 in b:
            if proto1 == proto2 and port1 == port2 and (ip1 == ip2 or "0.0.0.0" in (ip1, ip2)):
                return True
    return False


class NodePorts:
    """PreFilter records the pod's host ports (Skip when it has none); Filter rejects a node
    where one is taken (Unschedulable: preemption may free it)."""

    name = "NodePorts"

    def __init__(self, args: Any = None, handle: Handle | None = None) -> None:
        self.handle = handle

    def pre_filter(self, state: CycleState, pod: PodInfo) -> Status | None:
        if not pod.host_ports:
            return Status(Code.SKIP)
        state.write(PRE_FILTER_STATE_KEY, list(pod.host_ports))
        return None

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        want = state.get(PRE_FILTER_STATE_KEY)
        if want is None:
            return Status.as_error(f"reading {PRE_FILTER_STATE_KEY!r} from cycleState: not found")
        if not fits_ports(want, node):
            return Status(Code.UNSCHEDULABLE, ERR_REASON)
        return None

    def filter_nodes(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Array | None:
        """Nodes with no host port in use pass at once; the others are checked one by one."""
        batch = columns_of(nodes)
        want = state.get(PRE_FILTER_STATE_KEY)
        if batch is None or want is None:
            return None
        busy = batch.columns.has_ports[batch.rows]
        ok = ~busy
        for j in np.flatnonzero(busy).tolist():
            ok[j] = fits_ports(want, batch[j])
        return cast("np.ndarray | None", ok)

    def sign_pod(self, pod: PodInfo) -> dict[str, Any]:
        return {"HostPorts": sorted(set(pod.host_ports))}

    def events_to_register(self) -> list[ClusterEventWithHint]:
        # Ports of a pod cannot change (the field is immutable): only deletions free them.
        return [
            ClusterEventWithHint(ASSIGNED_POD_DELETE, self.is_schedulable_after_pod_deleted),
            ClusterEventWithHint(NODE_ADD),
        ]

    @staticmethod
    def is_schedulable_after_pod_deleted(pod: Any, old: Any, new: Any) -> QueueingHint:
        """Queue only when the deleted pod was placed and held a port the rejected pod wants."""
        if not isinstance(old, Mapping):
            return QueueingHint.QUEUE
        spec = old.get("spec") or {}
        status = old.get("status") or {}
        if not spec.get("nodeName") and not status.get("nominatedNodeName"):
            return QueueingHint.SKIP
        try:
            freed = PodInfo(dict(old)).host_ports
            wanted = pod.host_ports if isinstance(pod, PodInfo) else PodInfo(pod).host_ports
        except ValueError:
            return QueueingHint.QUEUE
        if not freed or not _conflict(wanted, freed):
            return QueueingHint.SKIP
        return QueueingHint.QUEUE
