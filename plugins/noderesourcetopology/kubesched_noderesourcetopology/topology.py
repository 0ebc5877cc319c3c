"""A NodeResourceTopology object read once: its NUMA zones, its topology-manager configuration,
and the resource arithmetic the filter and the scores share.

Quantities are exact fractions (``kubesched.parse_quantity``): ``2`` CPUs is ``Fraction(2)``,
``500m`` is ``Fraction(1, 2)``; a resource's *value* (what the scores divide) is its quantity
rounded up to a whole unit, as a Kubernetes quantity's ``Value()``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from kubesched import KubeschedError, parse_quantity

Obj = dict[str, Any]
Quantities = dict[str, Fraction]

#: The zone type of a NUMA cell.
ZONE_TYPE_NUMA_NODE = "Node"
#: NUMA ids past this are ignored (as upstream's plugin ignores them).
MAX_NUMA_ID = 64

# The kubelet's topology-manager policies and scopes.
POLICY_NONE = "none"
POLICY_BEST_EFFORT = "best-effort"
POLICY_RESTRICTED = "restricted"
POLICY_SINGLE_NUMA_NODE = "single-numa-node"
SCOPE_CONTAINER = "container"
SCOPE_POD = "pod"
POLICIES = (POLICY_NONE, POLICY_BEST_EFFORT, POLICY_RESTRICTED, POLICY_SINGLE_NUMA_NODE)
SCOPES = (SCOPE_CONTAINER, SCOPE_POD)

# The node-wide attributes that say how the kubelet's topology manager is configured.
ATTRIBUTE_SCOPE = "topologyManagerScope"
ATTRIBUTE_POLICY = "topologyManagerPolicy"
ATTRIBUTE_MAX_NUMA_NODES = "topologyManagerMaxNUMANodes"
#: The kubelet's default for how many NUMA nodes its topology manager considers.
DEFAULT_MAX_NUMA_NODES = 8
#: A reported topologyManagerMaxNUMANodes is capped at this.
LIMIT_NUMA_NODES = 1024

#: The deprecated ``topologyPolicies`` values, each a policy and a scope.
LEGACY_POLICIES: dict[str, tuple[str, str]] = {
    "SingleNUMANodePodLevel": (POLICY_SINGLE_NUMA_NODE, SCOPE_POD),
    "SingleNUMANodeContainerLevel": (POLICY_SINGLE_NUMA_NODE, SCOPE_CONTAINER),
    "BestEffortPodLevel": (POLICY_BEST_EFFORT, SCOPE_POD),
    "BestEffortContainerLevel": (POLICY_BEST_EFFORT, SCOPE_CONTAINER),
    "RestrictedPodLevel": (POLICY_RESTRICTED, SCOPE_POD),
    "RestrictedContainerLevel": (POLICY_RESTRICTED, SCOPE_CONTAINER),
}

GUARANTEED = "Guaranteed"
BEST_EFFORT = "BestEffort"


class TopologyDataError(KubeschedError, ValueError):
    """A NodeResourceTopology object that cannot be read (a quantity that is not one)."""


@dataclass(frozen=True)
class TopologyManager:
    """How the node's kubelet aligns resources: policy, scope, and how many NUMA nodes it sees."""

    policy: str = POLICY_NONE
    scope: str = SCOPE_CONTAINER
    max_numa_nodes: int = DEFAULT_MAX_NUMA_NODES

    def __str__(self) -> str:
        return f"policy={self.policy} scope={self.scope} maxNUMANodes={self.max_numa_nodes}"


@dataclass
class ZoneResource:
    name: str
    capacity: Fraction
    allocatable: Fraction
    available: Fraction


@dataclass
class Zone:
    name: str
    type: str
    resources: list[ZoneResource] = field(default_factory=list)
    costs: dict[str, int] = field(default_factory=dict)


@dataclass
class NodeTopology:
    """One NodeResourceTopology object, its quantities parsed."""

    name: str
    zones: list[Zone]
    attributes: list[tuple[str, str]]
    topology_policies: list[str]
    resource_version: str = ""

    @classmethod
    def of(cls, obj: Mapping[str, Any]) -> NodeTopology:
        meta = obj.get("metadata") or {}
        name = str(meta.get("name") or "")
        zones = []
        for zi, z in enumerate(obj.get("zones") or ()):
            resources = []
            for ri, r in enumerate(z.get("resources") or ()):
                where = f"NodeResourceTopology {name}: zones[{zi}].resources[{ri}]"
                resources.append(
                    ZoneResource(
                        str(r.get("name") or ""),
                        _quantity(r.get("capacity"), f"{where}.capacity"),
                        _quantity(r.get("allocatable"), f"{where}.allocatable"),
                        _quantity(r.get("available"), f"{where}.available"),
                    )
                )
            costs: dict[str, int] = {}
            for ci, c in enumerate(z.get("costs") or ()):
                try:
                    costs[str(c.get("name") or "")] = int(c.get("value") or 0)
                except (TypeError, ValueError):
                    raise TopologyDataError(
                        f"NodeResourceTopology {name}: zones[{zi}].costs[{ci}].value: not an integer: {c.get('value')!r}"
                    ) from None
            zones.append(Zone(str(z.get("name") or ""), str(z.get("type") or ""), resources, costs))
        attributes = [(str(a.get("name") or ""), str(a.get("value") or "")) for a in obj.get("attributes") or ()]
        policies = [str(p) for p in obj.get("topologyPolicies") or ()]
        return cls(name, zones, attributes, policies, str(meta.get("resourceVersion") or ""))

    def copy(self) -> NodeTopology:
        zones = [
            Zone(
                z.name,
                z.type,
                [ZoneResource(r.name, r.capacity, r.allocatable, r.available) for r in z.resources],
                z.costs,
            )
            for z in self.zones
        ]
        return NodeTopology(self.name, zones, self.attributes, self.topology_policies, self.resource_version)

    def resource_names(self) -> set[str]:
        return {r.name for z in self.zones for r in z.resources}


def _quantity(value: Any, where: str) -> Fraction:
    if value is None:
        return Fraction(0)
    try:
        return parse_quantity(value)
    except (ValueError, TypeError):
        raise TopologyDataError(f"{where}: not a quantity: {value!r}") from None


# --- the topology manager's configuration ---------------------------------------------------------


def topology_manager_of(nrt: NodeTopology) -> TopologyManager:
    """The deprecated ``topologyPolicies`` (its first entry) first, then the attributes, which
    win; values that are not a known policy, scope or a number above 1 are ignored."""
    policy, scope, max_numa = POLICY_NONE, SCOPE_CONTAINER, DEFAULT_MAX_NUMA_NODES
    if nrt.topology_policies:
        legacy = LEGACY_POLICIES.get(nrt.topology_policies[0])
        if legacy is not None:
            policy, scope = legacy
    for name, value in nrt.attributes:
        if name == ATTRIBUTE_SCOPE and value in SCOPES:
            scope = value
        elif name == ATTRIBUTE_POLICY and value in POLICIES:
            policy = value
        elif name == ATTRIBUTE_MAX_NUMA_NODES:
            try:
                number = int(value)
            except ValueError:
                continue
            if number > 1:
                max_numa = min(number, LIMIT_NUMA_NODES)
    return TopologyManager(policy, scope, max_numa)


# --- NUMA nodes ---------------------------------------------------------------------------------


@dataclass
class NUMANode:
    """A NUMA cell: its id, what is available on it, and its distance to each cell by id."""

    numa_id: int
    resources: Quantities
    costs: dict[int, int] = field(default_factory=dict)

    def copy(self) -> NUMANode:
        return NUMANode(self.numa_id, dict(self.resources), dict(self.costs))


def numa_id_of(name: str) -> int | None:
    """``node-3`` is NUMA cell 3; any other name is no NUMA cell."""
    prefix, sep, number = name.partition("-")
    if prefix != "node" or not sep or not number.isdigit():
        return None
    return int(number)


def numa_nodes_of(nrt: NodeTopology) -> list[NUMANode]:
    """The zones of type ``Node`` whose name reads as a NUMA id below the limit, with their
    available amounts and costs."""
    nodes: list[NUMANode] = []
    for zone in nrt.zones:
        if zone.type != ZONE_TYPE_NUMA_NODE:
            continue
        numa_id = numa_id_of(zone.name)
        if numa_id is None or numa_id >= MAX_NUMA_ID:
            continue
        costs: dict[int, int] = {}
        for cost_name, value in zone.costs.items():
            other = numa_id_of(cost_name)
            if other is not None and other < MAX_NUMA_ID:
                costs[other] = value
        nodes.append(NUMANode(numa_id, {r.name: r.available for r in zone.resources}, costs))
    return nodes


def only_non_numa_resources(numa_nodes: Iterable[NUMANode], resources: Mapping[str, Fraction]) -> bool:
    """No requested resource is reported by any NUMA cell."""
    return not any(name in node.resources for node in numa_nodes for name in resources)


# --- resources ----------------------------------------------------------------------------------


def is_native(name: str) -> bool:
    """A resource of Kubernetes itself: no domain, or a ``kubernetes.io/`` one."""
    return "/" not in name or "kubernetes.io/" in name


def is_hugepages(name: str) -> bool:
    return name.startswith("hugepages-")


def is_host_level(name: str) -> bool:
    """Accounted for the node as a whole: storage and resources that are not native."""
    return name in ("ephemeral-storage", "storage") or not is_native(name)


def is_numa_affine(name: str) -> bool:
    """CPUs, memory and hugepages: pinned to NUMA cells only for Guaranteed pods."""
    return name in ("cpu", "memory") or is_hugepages(name)


def is_resource_set_suitable(qos: str, name: str, quantity: Fraction, available: Fraction) -> bool:
    """A non-Guaranteed pod's CPUs, memory and hugepages come from the shared pool (always
    suitable); anything else must be available on the cell."""
    if qos != GUARANTEED and is_numa_affine(name):
        return True
    return available >= quantity


def value_of(quantity: Fraction) -> int:
    """The quantity in whole units, rounded up."""
    return math.ceil(quantity)


def container_requests(container: Mapping[str, Any]) -> Quantities:
    requests = ((container.get("resources") or {}).get("requests")) or {}
    return {str(k): parse_quantity(v) for k, v in requests.items()}


def init_containers(pod: Mapping[str, Any]) -> list[Obj]:
    return list((pod.get("spec") or {}).get("initContainers") or ())


def app_containers(pod: Mapping[str, Any]) -> list[Obj]:
    return list((pod.get("spec") or {}).get("containers") or ())


def pod_effective_request(pod: Mapping[str, Any]) -> Quantities:
    """Per resource: the larger of the app containers' sum and the largest init container's
    request, plus the pod overhead."""
    init: Quantities = {}
    for c in init_containers(pod):
        for name, q in container_requests(c).items():
            if name not in init or q > init[name]:
                init[name] = q
    total: Quantities = {}
    for c in app_containers(pod):
        for name, q in container_requests(c).items():
            total[name] = total.get(name, Fraction(0)) + q
    for name, q in init.items():
        if name not in total or q > total[name]:
            total[name] = q
    overhead = (pod.get("spec") or {}).get("overhead") or {}
    for name, v in overhead.items():
        total[str(name)] = total.get(str(name), Fraction(0)) + parse_quantity(v)
    return total


def includes_non_native(pod: Mapping[str, Any]) -> bool:
    """Some container (init or app) requests a resource that is not native (a device)."""
    return any(not is_native(n) for c in init_containers(pod) + app_containers(pod) for n in container_requests(c))


def is_exclusive(qos: str, name: str, quantity: Fraction, nrt_resources: set[str]) -> bool:
    """Whether the kubelet gives the request resources of their own: a device the node's
    NodeResourceTopology reports; for a Guaranteed pod, whole CPUs, memory and hugepages."""
    if not is_native(name):
        return name in nrt_resources
    if qos != GUARANTEED:
        return False
    if name == "cpu":
        return quantity.denominator == 1 and quantity > 0
    return (name == "memory" or is_hugepages(name)) and quantity > 0


def has_exclusive_resources(pod: Mapping[str, Any], qos: str, nrt_resources: set[str]) -> bool:
    """Some app container, or sidecar (restartable init container), requests exclusive resources."""
    sidecars = [c for c in init_containers(pod) if c.get("restartPolicy") == "Always"]
    return any(
        is_exclusive(qos, name, q, nrt_resources)
        for c in sidecars + app_containers(pod)
        for name, q in container_requests(c).items()
    )
