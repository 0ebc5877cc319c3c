"""What the risk-aware plugins compute from measurements and pods (upstream's
``resourcestats.go``): a resource's usage statistics on a node in absolute units, the mean and
deviation as fractions of capacity, a pod's effective CPU and memory requests and limits, and a
node's totals with and without the pod being scheduled.

CPU is counted in millicores, memory in MiB in :class:`ResourceStats` (``MegaFactor``) and in
bytes elsewhere, as upstream does.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from kubesched import milli_value, parse_quantity

from .metrics import Metric, resource_data

MEGA_FACTOR = 1.0 / 1024.0 / 1024.0
CPU = "cpu"
MEMORY = "memory"


@dataclass
class Res:
    """CPU (millicores) and memory (bytes): all of a pod's resources these plugins count."""

    milli_cpu: int = 0
    memory: int = 0

    def get(self, name: str) -> int:
        return self.milli_cpu if name == CPU else self.memory if name == MEMORY else 0


@dataclass
class ResourceStats:
    """A resource on a node: measured average and deviation used, the pod's request, the node's
    capacity (allocatable), all absolute."""

    used_avg: float = 0.0
    used_stdev: float = 0.0
    req: float = 0.0
    capacity: float = 0.0


def amount(name: str, value: Any) -> int:
    """A quantity of ``name``: millicores for cpu, bytes (rounded up) otherwise."""
    return milli_value(value) if name == CPU else math.ceil(parse_quantity(value))


def node_amount(node: Mapping[str, Any], where: str, name: str) -> int:
    """The node's ``status.<where>`` of ``name`` (millicores for cpu, bytes otherwise); 0 when
    not given."""
    value = ((node.get("status") or {}).get(where) or {}).get(name)
    return 0 if value is None else amount(name, value)


def create_resource_stats(
    metrics: list[Metric], node: Mapping[str, Any], request: Res, resource: str, resource_type: str
) -> ResourceStats | None:
    """The node's statistics of ``resource`` (``cpu`` / ``memory``) from the ``resource_type``
    (``CPU`` / ``Memory``) metrics, ``None`` without any (``CreateResourceStats``)."""
    util, std, found = resource_data(metrics, resource_type)
    if not found:
        return None
    rs = ResourceStats()
    capacity = node_amount(node, "allocatable", resource)
    if resource == CPU:
        rs.capacity = float(capacity)
        rs.req = float(request.milli_cpu)
    else:
        rs.capacity = capacity * MEGA_FACTOR
        rs.req = request.memory * MEGA_FACTOR
    rs.used_avg = util * rs.capacity / 100
    rs.used_stdev = std * rs.capacity / 100
    return rs


def mu_sigma(rs: ResourceStats) -> tuple[float, float]:
    """Mean (used plus requested) and deviation as fractions of capacity, each within [0, 1]
    (``GetMuSigma``); (0, 0) without capacity."""
    if rs.capacity <= 0:
        return 0.0, 0.0
    mu = max(min((rs.used_avg + rs.req) / rs.capacity, 1.0), 0.0)
    sigma = max(min(rs.used_stdev / rs.capacity, 1.0), 0.0)
    return mu, sigma


def _containers(spec: Mapping[str, Any], key: str) -> list[Mapping[str, Any]]:
    return [c for c in spec.get(key) or () if isinstance(c, Mapping)]


def effective_resource(pod: Mapping[str, Any], which: str) -> Res:
    """The pod's CPU and memory ``which`` (``requests`` / ``limits``): the sum over its
    containers, or the largest init container's where larger, plus the overhead
    (``GetEffectiveResource``)."""
    spec = pod.get("spec") or {}
    out = Res()
    for c in _containers(spec, "containers"):
        given = (c.get("resources") or {}).get(which) or {}
        out.milli_cpu += amount(CPU, given[CPU]) if CPU in given else 0
        out.memory += amount(MEMORY, given[MEMORY]) if MEMORY in given else 0
    for c in _containers(spec, "initContainers"):
        given = (c.get("resources") or {}).get(which) or {}
        if CPU in given:
            out.milli_cpu = max(out.milli_cpu, amount(CPU, given[CPU]))
        if MEMORY in given:
            out.memory = max(out.memory, amount(MEMORY, given[MEMORY]))
    overhead = spec.get("overhead") or {}
    out.milli_cpu += amount(CPU, overhead[CPU]) if CPU in overhead else 0
    out.memory += amount(MEMORY, overhead[MEMORY]) if MEMORY in overhead else 0
    return out


def resource_requested(pod: Mapping[str, Any]) -> Res:
    return effective_resource(pod, "requests")


def resource_limits(pod: Mapping[str, Any]) -> Res:
    return effective_resource(pod, "limits")


def set_max_limits(requests: Res, limits: Res) -> None:
    """Limits raised to the requests where below (``SetMaxLimits``)."""
    limits.milli_cpu = max(limits.milli_cpu, requests.milli_cpu)
    limits.memory = max(limits.memory, requests.memory)


@dataclass
class NodeRequestsAndLimits:
    """A node's requests and limits with the pod and without it (``...MinusPod``), requests
    capped by the capacity (allocatable)."""

    node_request: Res = field(default_factory=Res)
    node_limit: Res = field(default_factory=Res)
    node_request_minus_pod: Res = field(default_factory=Res)
    node_limit_minus_pod: Res = field(default_factory=Res)
    node_capacity: Res = field(default_factory=Res)


def node_requests_and_limits(
    pods_on_node: Iterable[Mapping[str, Any]], node: Mapping[str, Any], pod_requests: Res, pod_limits: Res
) -> NodeRequestsAndLimits:
    """The totals over the pods on the node, then with the pod being scheduled
    (``GetNodeRequestsAndLimits``): each pod's limits at least its requests; requests (not
    limits) capped by the capacity."""
    cap = Res(node_amount(node, "allocatable", CPU), node_amount(node, "allocatable", MEMORY))
    request, limit = Res(), Res()
    for p in pods_on_node:
        r, lim = resource_requested(p), resource_limits(p)
        set_max_limits(r, lim)
        request.milli_cpu += r.milli_cpu
        request.memory += r.memory
        limit.milli_cpu += lim.milli_cpu
        limit.memory += lim.memory
    request_minus, limit_minus = replace(request), replace(limit)
    request.milli_cpu += pod_requests.milli_cpu
    request.memory += pod_requests.memory
    limit.milli_cpu += pod_limits.milli_cpu
    limit.memory += pod_limits.memory
    for r in (request, request_minus):
        r.milli_cpu = min(r.milli_cpu, cap.milli_cpu)
        r.memory = min(r.memory, cap.memory)
    return NodeRequestsAndLimits(request, limit, request_minus, limit_minus, cap)
