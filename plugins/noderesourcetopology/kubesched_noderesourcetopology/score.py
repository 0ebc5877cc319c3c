"""Score: how well the pod's resources sit on the node's NUMA cells.

Four strategies (``scoringStrategy.type``):

* ``MostAllocated``, ``LeastAllocated``, ``BalancedAllocation`` score each NUMA cell for the
  request (weighted by ``scoringStrategy.resources``) and keep the lowest non-zero cell score;
  with the ``container`` scope the node's score is the mean over the containers (init and app).
  Only nodes whose kubelet runs the ``single-numa-node`` policy are scored (others get 0).
* ``LeastNUMANodes`` prefers nodes where the request needs the fewest NUMA cells, with a bonus
  when the cells chosen are the closest together (by the zones' ``costs``), under any policy.

Only Guaranteed pods are scored; the others get the highest score everywhere.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction

from kubesched import MAX_NODE_SCORE, MIN_NODE_SCORE

from .topology import (
    POLICY_SINGLE_NUMA_NODE,
    SCOPE_CONTAINER,
    SCOPE_POD,
    NUMANode,
    Quantities,
    TopologyManager,
    app_containers,
    container_requests,
    init_containers,
    is_resource_set_suitable,
    only_non_numa_resources,
    pod_effective_request,
    value_of,
)

MOST_ALLOCATED = "MostAllocated"
LEAST_ALLOCATED = "LeastAllocated"
BALANCED_ALLOCATION = "BalancedAllocation"
LEAST_NUMA_NODES = "LeastNUMANodes"
STRATEGIES = (MOST_ALLOCATED, BALANCED_ALLOCATION, LEAST_ALLOCATED, LEAST_NUMA_NODES)

#: The distance assumed between cells whose costs are not reported.
MAX_DISTANCE = 255

Weights = Mapping[str, int]
Strategy = Callable[[Quantities, Quantities, Weights], int]


def weight_of(weights: Weights, name: str) -> int:
    w = weights.get(name, 1)
    return w if w >= 1 else 1


def _go_div(a: int, b: int) -> int:
    """Integer division truncating toward zero."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def most_allocated_score(requested: Fraction, capacity: Fraction) -> int:
    if capacity == 0 or requested > capacity:
        return 0
    return _go_div(value_of(requested) * MAX_NODE_SCORE, value_of(capacity))


def least_allocated_score(requested: Fraction, capacity: Fraction) -> int:
    if capacity == 0 or requested > capacity:
        return 0
    return _go_div((value_of(capacity) - value_of(requested)) * MAX_NODE_SCORE, value_of(capacity))


def _weighted(per_resource: Callable[[Fraction, Fraction], int]) -> Strategy:
    def strategy(requested: Quantities, available: Quantities, weights: Weights) -> int:
        total = weight_sum = 0
        for name, quantity in requested.items():
            w = weight_of(weights, name)
            total += per_resource(quantity, available.get(name, Fraction(0))) * w
            weight_sum += w
        return _go_div(total, weight_sum) if weight_sum else 0

    return strategy


most_allocated = _weighted(most_allocated_score)
least_allocated = _weighted(least_allocated_score)


def fraction_of_capacity(requested: Fraction, capacity: Fraction) -> float:
    if value_of(capacity) == 0:
        return 1.0
    return value_of(requested) / value_of(capacity)


def _sample_variance(xs: Sequence[float]) -> float:
    if len(xs) < 2:
        return 0.0
    mean = sum(xs) / len(xs)
    return sum((x - mean) ** 2 for x in xs) / (len(xs) - 1)


def balanced_allocation(requested: Quantities, available: Quantities, weights: Weights) -> int:
    """``(1 - variance of the requested fractions) * 100``; 0 when a fraction passes 1. The
    variance is the sample variance (n - 1), as upstream's statistics library computes it."""
    fractions = []
    for name, quantity in requested.items():
        f = fraction_of_capacity(quantity, available.get(name, Fraction(0)))
        if f > 1:
            return 0
        fractions.append(f)
    return int((1 - _sample_variance(fractions)) * MAX_NODE_SCORE)


STRATEGY_FUNCTIONS: dict[str, Strategy] = {
    MOST_ALLOCATED: most_allocated,
    LEAST_ALLOCATED: least_allocated,
    BALANCED_ALLOCATION: balanced_allocation,
}


def score_for_each_numa_node(
    requested: Quantities, numa_nodes: Sequence[NUMANode], strategy: Strategy, weights: Weights
) -> int:
    """The lowest non-zero cell score (0 only when the first cells score 0)."""
    lowest = 0
    for node in numa_nodes:
        s = strategy(requested, node.resources, weights)
        if lowest == 0 or (s != 0 and s < lowest):
            lowest = s
    return lowest


def allocation_score(
    pod: Mapping[str, object],
    conf: TopologyManager,
    numa_nodes: Sequence[NUMANode],
    strategy: Strategy,
    weights: Weights,
) -> int:
    if conf.policy != POLICY_SINGLE_NUMA_NODE:
        return 0
    if conf.scope == SCOPE_POD:
        return score_for_each_numa_node(pod_effective_request(pod), numa_nodes, strategy, weights)
    containers = init_containers(pod) + app_containers(pod)
    if not containers:
        return 0
    scores = [score_for_each_numa_node(container_requests(c), numa_nodes, strategy, weights) for c in containers]
    return int(sum(scores) / len(scores))


# --- LeastNUMANodes ----------------------------------------------------------------------------


def normalize_score(numa_count: int, min_avg_distance: bool, max_numa_nodes: int) -> int:
    per_node = MAX_NODE_SCORE // max_numa_nodes
    score = MAX_NODE_SCORE - numa_count * per_node
    return score + per_node // 2 if min_avg_distance else score


def nodes_avg_distance(numa_nodes: Sequence[NUMANode], indexes: Sequence[int]) -> Fraction:
    if not indexes:
        return Fraction(MAX_DISTANCE)
    total = 0
    for i in indexes:
        for j in indexes:
            total += numa_nodes[i].costs.get(numa_nodes[j].numa_id, MAX_DISTANCE)
    return Fraction(total, len(indexes) ** 2)


def min_avg_distance(numa_nodes: Sequence[NUMANode], combinations: Sequence[Sequence[int]]) -> Fraction:
    """The smallest average distance among the combinations (of list indexes); 255 at most."""
    return min((nodes_avg_distance(numa_nodes, c) for c in combinations), default=Fraction(MAX_DISTANCE))


def _combined(numa_nodes: Sequence[NUMANode], indexes: Sequence[int]) -> Quantities:
    out: Quantities = {}
    for i in indexes:
        for name, q in numa_nodes[i].resources.items():
            out[name] = out.get(name, Fraction(0)) + q
    return out


def _fits(qos: str, resources: Quantities, combined: Quantities) -> bool:
    return all(
        q == 0 or is_resource_set_suitable(qos, name, q, combined.get(name, Fraction(0)))
        for name, q in resources.items()
    )


def numa_nodes_required(
    qos: str, numa_nodes: Sequence[NUMANode], resources: Quantities
) -> tuple[list[int] | None, bool]:
    """The NUMA ids of the smallest set of cells the request fits (every cell of it reporting
    every requested resource), the closest such set among those of that size; and whether it is
    as close as any set of that size could be."""
    for size in range(1, len(numa_nodes) + 1):
        combinations = list(itertools.combinations(range(len(numa_nodes)), size))
        min_avg = min_avg_distance(numa_nodes, combinations)
        best: tuple[int, ...] | None = None
        best_distance = Fraction(MAX_DISTANCE + 1)
        for combination in combinations:
            if any(name not in numa_nodes[i].resources for i in combination for name in resources):
                continue
            if not _fits(qos, resources, _combined(numa_nodes, combination)):
                continue
            distance = nodes_avg_distance(numa_nodes, combination)
            if distance == min_avg:
                return sorted(numa_nodes[i].numa_id for i in combination), True
            if distance < best_distance:
                best_distance, best = distance, combination
        if best is not None:
            return sorted(numa_nodes[i].numa_id for i in best), False
    return None, False


def subtract_from_numas(resources: Quantities, numa_nodes: Sequence[NUMANode], numa_ids: Sequence[int]) -> None:
    """Take the request from the cells of those NUMA ids, in order, each giving what it has."""
    by_id = {node.numa_id: node for node in numa_nodes}
    for name, quantity in resources.items():
        left = quantity
        for numa_id in numa_ids:
            if left == 0:
                break
            if numa_id not in by_id:
                continue
            cell = by_id[numa_id].resources
            if name in cell:
                if left >= cell[name]:
                    left -= cell[name]
                    cell[name] = Fraction(0)
                else:
                    cell[name] -= left
                    left = Fraction(0)


def least_numa_pod_scope(pod: Mapping[str, object], qos: str, conf: TopologyManager, numa_nodes: list[NUMANode]) -> int:
    resources = pod_effective_request(pod)
    if only_non_numa_resources(numa_nodes, resources):
        return MAX_NODE_SCORE
    ids, min_distance = numa_nodes_required(qos, numa_nodes, resources)
    if ids is None:
        return MIN_NODE_SCORE
    return normalize_score(len(ids), min_distance, conf.max_numa_nodes)


def least_numa_container_scope(
    pod: Mapping[str, object], qos: str, conf: TopologyManager, numa_nodes: list[NUMANode]
) -> int:
    most = 0
    all_min_distance = True
    for container in init_containers(pod) + app_containers(pod):
        requests = container_requests(container)
        if only_non_numa_resources(numa_nodes, requests):
            continue
        ids, min_distance = numa_nodes_required(qos, numa_nodes, requests)
        if ids is None:
            return MIN_NODE_SCORE
        all_min_distance = all_min_distance and min_distance
        most = max(most, len(ids))
        subtract_from_numas(requests, numa_nodes, ids)
    if most == 0:
        return MAX_NODE_SCORE
    return normalize_score(most, all_min_distance, conf.max_numa_nodes)


def least_numa_score(pod: Mapping[str, object], qos: str, conf: TopologyManager, numa_nodes: list[NUMANode]) -> int:
    if conf.scope == SCOPE_POD:
        return least_numa_pod_scope(pod, qos, conf, numa_nodes)
    if conf.scope == SCOPE_CONTAINER:
        return least_numa_container_scope(pod, qos, conf, numa_nodes)
    return 0
