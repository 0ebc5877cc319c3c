"""The resource-allocation scorer shared by NodeResourcesFit and NodeResourcesBalancedAllocation.

Both plugins score a node from two numbers per configured resource: what the node can allocate,
and what would be requested on it once the pod lands. Upstream's rules for those numbers:

* the pod's requests are counted as 1.37 counts them for scoring (see
  :mod:`kubesched.framework.pod_requests`): an in-place resize in flight counts the larger of
  spec and allocation, pod-level requests (``spec.resources``) replace the containers' sum;
* cpu and memory count the *non-zero* requests (a container that asks for nothing counts as
  100m / 200Mi, unless pod-level requests set the amount) unless the scorer uses plain requests
  (BalancedAllocation does); the node's side is NodeInfo's non-zero total;
* ephemeral-storage and scalar resources (extended, hugepages, ``kubernetes.io/``-prefixed,
  attachable volumes) always count plain requests;
* a scalar resource the pod does not request is left out, so nodes are not ranked by devices
  the pod will never use; so is any resource the node cannot allocate at all;
* anything else (``pods``, unknown names) is left out.

Per pod, :func:`compile_requests` resolves the configured resources once into a tuple of
``(kind, name, weight, pod_request)``; per node, :meth:`ResourceAllocationScorer.score` only reads
integers off the NodeInfo. Arithmetic is integer and truncating where upstream's is (Go int64).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, field_validator

from kubesched.framework.interface import MAX_NODE_SCORE
from kubesched.framework.pod_requests import DEFAULT_COUNTING, Counting
from kubesched.framework.resources import CPU, EPHEMERAL_STORAGE, MEMORY, is_extended_resource, is_hugepages
from kubesched.framework.types import NodeInfo, PodInfo

KIND_CPU = 0
KIND_MEMORY = 1
KIND_EPHEMERAL = 2
KIND_SCALAR = 3

#: Upstream's ``MaxCustomPriorityScore``: shape scores are given on 0..10.
MAX_CUSTOM_PRIORITY_SCORE = 10
MAX_UTILIZATION = 100

#: One resolved resource: (kind, name, weight, what the pod requests of it).
Entry = tuple[int, str, int, int]
#: ``scorer(requested, allocatable, weights) -> score``; the lists hold only resources that count.
Scorer = Callable[[list[int], list[int], list[int]], int]


class ResourceSpec(BaseModel):
    """A resource to score and its weight (upstream ``ResourceSpec``)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    name: str
    weight: int = 1

    @field_validator("weight")
    @classmethod
    def _default_zero_weight(cls, v: int) -> int:
        # Upstream's defaulting turns an unset or explicit 0 weight into 1 before validation.
        return 1 if v == 0 else v


def default_resources() -> list[ResourceSpec]:
    """cpu and memory, weight 1 each: what both plugins score when no resources are configured."""
    return [ResourceSpec(name=CPU, weight=1), ResourceSpec(name=MEMORY, weight=1)]


def is_scalar_resource_name(name: str) -> bool:
    """Upstream ``IsScalarResourceName``: extended, hugepages, ``kubernetes.io/``-prefixed native,
    or attachable-volumes resources."""
    return (
        is_extended_resource(name)
        or is_hugepages(name)
        or "kubernetes.io/" in name
        or name.startswith("attachable-volumes-")
    )


def resource_kind(name: str) -> int | None:
    """How a resource is read off a NodeInfo; ``None`` for names upstream never scores."""
    if name == CPU:
        return KIND_CPU
    if name == MEMORY:
        return KIND_MEMORY
    if name == EPHEMERAL_STORAGE:
        return KIND_EPHEMERAL
    if is_scalar_resource_name(name):
        return KIND_SCALAR
    return None


def pod_request_list(
    pod: PodInfo, resources: Sequence[ResourceSpec], use_requested: bool, counting: Counting = DEFAULT_COUNTING
) -> list[int]:
    """The pod's request of each configured resource, in order (upstream
    ``calculatePodResourceRequestList``): non-zero requests unless ``use_requested``, in-place
    resizes and pod-level requests counted as ``counting`` says."""
    source = pod.score_requests(counting, non_zero=not use_requested)
    return [source.get(r.name) for r in resources]


def counted_fragment(pod: PodInfo, counting: Counting) -> dict[str, Any]:
    """The signature fragment of what Filter and the scorers count for a pod beyond
    ``requests_fragment`` (only pods with pod-level resources or resize status have any)."""
    if pod.counts_plainly:
        return {}
    return {
        "CountedRequests": [
            pod.fit_requests(counting).to_dict(),
            pod.score_requests(counting).to_dict(),
            pod.score_requests(counting, non_zero=True).to_dict(),
        ]
    }


def compile_requests(resources: Sequence[ResourceSpec], pod_requests: Sequence[int]) -> tuple[Entry, ...]:
    """Drop what can never count for this pod, keep the rest ready for per-node scoring."""
    out: list[Entry] = []
    for spec, req in zip(resources, pod_requests):
        kind = resource_kind(spec.name)
        if kind is None:
            continue
        if kind == KIND_SCALAR and req == 0:
            continue
        out.append((kind, spec.name, spec.weight, req))
    return tuple(out)


class ResourceAllocationScorer:
    """Reads allocatable and requested amounts off a node and hands them to ``scorer``."""

    __slots__ = ("name", "resources", "use_requested", "scorer", "counting")

    def __init__(
        self,
        name: str,
        resources: Sequence[ResourceSpec],
        scorer: Scorer,
        use_requested: bool,
        counting: Counting = DEFAULT_COUNTING,
    ) -> None:
        self.name = name
        self.resources = list(resources)
        self.scorer = scorer
        self.use_requested = use_requested
        self.counting = counting

    def pod_requests(self, pod: PodInfo) -> list[int]:
        return pod_request_list(pod, self.resources, self.use_requested, self.counting)

    def compile(self, pod: PodInfo) -> tuple[Entry, ...]:
        return compile_requests(self.resources, self.pod_requests(pod))

    def score(self, node: NodeInfo, entries: tuple[Entry, ...]) -> int:
        alloc_r = node.allocatable
        requested = node.requested
        base = requested if self.use_requested else node.non_zero_requested
        req_list: list[int] = []
        alloc_list: list[int] = []
        weights: list[int] = []
        for kind, name, weight, pod_req in entries:
            if kind == KIND_CPU:
                alloc = alloc_r.milli_cpu
                used = base.milli_cpu
            elif kind == KIND_MEMORY:
                alloc = alloc_r.memory
                used = base.memory
            elif kind == KIND_EPHEMERAL:
                alloc = alloc_r.ephemeral_storage
                used = requested.ephemeral_storage
            else:
                alloc = alloc_r.scalar.get(name, 0)
                used = requested.scalar.get(name, 0)
            if alloc == 0:
                continue
            req_list.append(used + pod_req)
            alloc_list.append(alloc)
            weights.append(weight)
        return self.scorer(req_list, alloc_list, weights)


# --- arithmetic as Go does it -------------------------------------------------------------------


def go_div(a: int, b: int) -> int:
    """Integer division truncating toward zero (Go's ``/`` on int64), not Python's floor."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def go_round(x: float) -> int:
    """Go's ``math.Round``: halves away from zero (Python's ``round`` rounds halves to even)."""
    if x < 0:
        return -go_round(-x)
    f = math.floor(x)
    return int(f + 1 if x - f >= 0.5 else f)


# --- the strategies -----------------------------------------------------------------------------


def least_requested_score(requested: int, capacity: int) -> int:
    """Unused share of ``capacity`` on 0..MaxNodeScore (0 when over-committed)."""
    if capacity == 0 or requested > capacity:
        return 0
    return ((capacity - requested) * MAX_NODE_SCORE) // capacity


def most_requested_score(requested: int, capacity: int) -> int:
    """Used share of ``capacity`` on 0..MaxNodeScore; over-commitment (non-zero defaults) caps at max."""
    if capacity == 0:
        return 0
    if requested > capacity:
        requested = capacity
    return (requested * MAX_NODE_SCORE) // capacity


def least_allocated_scorer(requested: list[int], allocatable: list[int], weights: list[int]) -> int:
    node_score = weight_sum = 0
    for req, alloc, w in zip(requested, allocatable, weights):
        node_score += least_requested_score(req, alloc) * w
        weight_sum += w
    return node_score // weight_sum if weight_sum else 0


def most_allocated_scorer(requested: list[int], allocatable: list[int], weights: list[int]) -> int:
    node_score = weight_sum = 0
    for req, alloc, w in zip(requested, allocatable, weights):
        node_score += most_requested_score(req, alloc) * w
        weight_sum += w
    return node_score // weight_sum if weight_sum else 0


def broken_linear_function(shape: Sequence[tuple[int, int]]) -> Callable[[int], int]:
    """Piecewise-linear f over ``(utilization, score)`` points sorted by utilization: the first
    score below the first point, the last above the last point, linear (Go-truncated) between."""
    points = tuple(shape)

    def f(p: int) -> int:
        prev_u, prev_s = points[0]
        if p <= prev_u:
            return prev_s
        for u, s in points[1:]:
            if p <= u:
                return prev_s + go_div((s - prev_s) * (p - prev_u), u - prev_u)
            prev_u, prev_s = u, s
        return points[-1][1]

    return f


def requested_to_capacity_ratio_scorer(shape: Sequence[tuple[int, int]]) -> Scorer:
    """Bin-packing by a user shape. ``shape`` holds ``(utilization 0..100, score 0..10)`` points;
    scores are scaled to MaxNodeScore. A resource scoring 0 does not count toward the average."""
    scale = MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE
    raw = broken_linear_function([(u, s * scale) for u, s in shape])
    at_max = raw(MAX_UTILIZATION)

    def scorer(requested: list[int], allocatable: list[int], weights: list[int]) -> int:
        node_score = weight_sum = 0
        for req, alloc, w in zip(requested, allocatable, weights):
            if alloc == 0 or req > alloc:
                resource_score = at_max
            else:
                resource_score = raw((req * MAX_UTILIZATION) // alloc)
            if resource_score > 0:
                node_score += resource_score * w
                weight_sum += w
        if weight_sum == 0:
            return 0
        return go_round(node_score / weight_sum)

    return scorer


def balanced_resource_scorer(requested: list[int], allocatable: list[int], weights: list[int]) -> int:
    """``(1 - std) * MaxNodeScore`` over the requested fractions (each capped at 1). With two
    resources the std is half their difference; with one or none it is 0."""
    fractions: list[float] = []
    total = 0.0
    for req, alloc in zip(requested, allocatable):
        if alloc == 0:
            continue
        fraction = req / alloc
        if fraction > 1:
            fraction = 1.0
        total += fraction
        fractions.append(fraction)
    std = 0.0
    n = len(fractions)
    if n == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif n > 2:
        mean = total / n
        acc = 0.0
        for fraction in fractions:
            acc = acc + (fraction - mean) * (fraction - mean)
        std = math.sqrt(acc / n)
    return int((1 - std) * float(MAX_NODE_SCORE))
