"""Filter: would the node's kubelet admit the pod under its topology-manager policy?

Only the ``single-numa-node`` policy rejects a pod whose resources cannot come from one NUMA
cell, so only it is checked (``restricted``, ``best-effort`` and ``none`` let every pod through,
as upstream's filter does). With the ``container`` scope every container must fit one cell
(each init container on its own, since they run one after another; the app containers one by
one, each taking from the cell the kubelet would choose, the lowest-numbered that fits); with
the ``pod`` scope the pod's effective request must fit one cell.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction

from kubesched import Code, Status

from .topology import (
    GUARANTEED,
    MAX_NUMA_ID,
    POLICY_SINGLE_NUMA_NODE,
    SCOPE_POD,
    NUMANode,
    TopologyManager,
    app_containers,
    container_requests,
    init_containers,
    is_host_level,
    is_numa_affine,
    is_resource_set_suitable,
    pod_effective_request,
)

CANNOT_ALIGN_POD = "cannot align pod"
CANNOT_ALIGN_CONTAINER = "cannot align container"


def cannot_align_init_container(kind: str) -> str:
    return f"cannot align {kind} container"


@dataclass
class FilterInfo:
    """What a handler needs: the resources the node reports as a whole, the kubelet's
    configuration, the NUMA cells (changed as containers are placed) and the pod's QoS class."""

    node_resources: set[str]
    topology_manager: TopologyManager
    numa_nodes: list[NUMANode]
    qos: str


def resources_available_in_any_numa_node(info: FilterInfo, resources: Mapping[str, Fraction]) -> tuple[int, bool, str]:
    """The NUMA cell the kubelet would choose for ``resources``, whether there is one, and the
    resource that decided a refusal."""
    candidates = set(range(MAX_NUMA_ID))
    for name, quantity in resources.items():
        if quantity == 0:
            continue
        if name not in info.node_resources:
            return -1, False, name
        with_affinity = False
        fitting: set[int] = set()
        for node in info.numa_nodes:
            available = node.resources.get(name)
            if available is None:
                continue
            with_affinity = True
            if is_resource_set_suitable(info.qos, name, quantity, available):
                fitting.add(node.numa_id)
        if not with_affinity and is_host_level(name):
            continue  # known to the node, not to any cell: nothing to align
        candidates &= fitting
        if not candidates:
            return info.topology_manager.max_numa_nodes, False, name
    return min(candidates), True, "generic"


def subtract_from_numa_node(
    numa_nodes: list[NUMANode], numa_id: int, qos: str, requests: Mapping[str, Fraction]
) -> str | None:
    """Take a container's request from the cell chosen for it (a non-Guaranteed pod's CPUs,
    memory and hugepages come from the shared pool; what the cell does not report is left
    alone); a reason, and nothing more taken, when a request is more than the cell has."""
    for node in numa_nodes:
        if node.numa_id != numa_id:
            continue
        for name, quantity in requests.items():
            if qos != GUARANTEED and is_numa_affine(name):
                continue
            if quantity == 0 or name not in node.resources:
                continue
            left = node.resources[name] - quantity
            if left < 0:
                return (
                    f"resource {name!r} request {quantity} exceeds NUMA {numa_id} availability {node.resources[name]}"
                )
            node.resources[name] = left
    return None


def init_container_kind(container: Mapping[str, object]) -> str:
    """A restartable init container is a sidecar."""
    return "sidecar" if container.get("restartPolicy") == "Always" else "init"


def single_numa_container_level(pod: Mapping[str, object], info: FilterInfo) -> Status | None:
    for container in init_containers(pod):
        _, ok, _ = resources_available_in_any_numa_node(info, container_requests(container))
        if not ok:
            return Status(Code.UNSCHEDULABLE, cannot_align_init_container(init_container_kind(container)))
    for container in app_containers(pod):
        requests = container_requests(container)
        numa_id, ok, _ = resources_available_in_any_numa_node(info, requests)
        if not ok:
            return Status(Code.UNSCHEDULABLE, CANNOT_ALIGN_CONTAINER)
        problem = subtract_from_numa_node(info.numa_nodes, numa_id, info.qos, requests)
        if problem is not None:
            return Status(Code.ERROR, "inconsistent resource accounting: " + problem)
    return None


def single_numa_pod_level(pod: Mapping[str, object], info: FilterInfo) -> Status | None:
    _, ok, _ = resources_available_in_any_numa_node(info, pod_effective_request(pod))
    if not ok:
        return Status(Code.UNSCHEDULABLE, CANNOT_ALIGN_POD)
    return None


def check(pod: Mapping[str, object], info: FilterInfo) -> Status | None:
    """The node's verdict on the pod: None (fits) or an Unschedulable status."""
    conf = info.topology_manager
    if conf.policy != POLICY_SINGLE_NUMA_NODE:
        return None
    if conf.scope == SCOPE_POD:
        return single_numa_pod_level(pod, info)
    return single_numa_container_level(pod, info)
