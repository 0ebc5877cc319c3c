"""The resource-allocation strategies over numpy columns: one call scores every node of a batch.

Each function here is the vectorized twin of a scorer in :mod:`.resource_allocation`, with the
same integer truncation and the same float operations in the same order, so every node gets the
score the per-node scorer gives it (the property tests hold them to it). Inputs per configured
resource ``k``: ``requested[k]`` (the node's requests plus the pod's), ``allocatable[k]``, the
weight, and ``counted[k]``, whether the resource counts on that node (its allocatable is not 0);
``n`` is the number of nodes (there may be no resource at all).
A function returns ``None`` where its order-dependent arithmetic cannot be vectorized for this
batch; the caller then scores node by node.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import cast

import numpy as np

from kubesched.framework.columns import EXACT_LIMIT, Array, NodeBatch
from kubesched.framework.interface import MAX_NODE_SCORE
from kubesched.plugins.noderesources.resource_allocation import (
    KIND_CPU,
    KIND_EPHEMERAL,
    KIND_MEMORY,
    MAX_CUSTOM_PRIORITY_SCORE,
    MAX_UTILIZATION,
    broken_linear_function,
)

BatchScorer = Callable[[int, Sequence[Array], Sequence[Array], Sequence[int], Sequence[Array]], Array | None]


def _weighted_average(
    scores: Sequence[Array], weights: Sequence[int], counted: Sequence[Array], n: int
) -> tuple[Array, Array]:
    total = np.zeros(n, np.int64)
    weight_sum = np.zeros(n, np.int64)
    for s, w, m in zip(scores, weights, counted):
        total += np.where(m, s * w, 0)
        weight_sum += np.where(m, w, 0)
    return total, weight_sum


def _floor_div_or_zero(a: Array, b: Array) -> Array:
    """``a // b`` where ``b`` is not 0, else 0 (both non-negative, so floor is Go's truncation)."""
    nonzero = b != 0
    if nonzero.all():
        return cast("np.ndarray", a // b)
    return np.where(nonzero, a // np.where(nonzero, b, 1), 0)


def _everywhere(counted: Sequence[Array]) -> bool:
    """Every resource counts on every node (no allocatable of 0): the common case, where the
    per-node guards against division by zero and uncounted resources have nothing to do."""
    return all(bool(m.all()) for m in counted)


def least_allocated(
    n: int, requested: Sequence[Array], allocatable: Sequence[Array], weights: Sequence[int], counted: Sequence[Array]
) -> Array:
    if _everywhere(counted):
        weights_total = sum(weights)
        if weights_total == 0:
            return np.zeros(n, np.int64)
        summed = np.zeros(n, np.int64)
        for req, cap, w in zip(requested, allocatable, weights):
            free = (cap - req) * MAX_NODE_SCORE // cap
            free[req > cap] = 0  # negative there; the node scores 0 for this resource
            summed += free * w
        return summed // weights_total
    scores = []
    for req, cap in zip(requested, allocatable):
        free = _floor_div_or_zero((cap - req) * MAX_NODE_SCORE, cap)
        scores.append(np.where((cap == 0) | (req > cap), 0, free))
    total, weight_sum = _weighted_average(scores, weights, counted, n)
    return _floor_div_or_zero(total, weight_sum)


def most_allocated(
    n: int, requested: Sequence[Array], allocatable: Sequence[Array], weights: Sequence[int], counted: Sequence[Array]
) -> Array:
    scores = [
        _floor_div_or_zero(np.minimum(req, cap) * MAX_NODE_SCORE, cap) for req, cap in zip(requested, allocatable)
    ]
    total, weight_sum = _weighted_average(scores, weights, counted, n)
    return _floor_div_or_zero(total, weight_sum)


def requested_to_capacity_ratio(shape: Sequence[tuple[int, int]]) -> BatchScorer:
    """The shape's function tabulated over utilizations 0..100 (the only ones it is asked)."""
    scale = MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE
    raw = broken_linear_function([(u, s * scale) for u, s in shape])
    table = np.array([raw(p) for p in range(MAX_UTILIZATION + 1)], np.int64)
    at_max = raw(MAX_UTILIZATION)

    def scorer(
        n: int,
        requested: Sequence[Array],
        allocatable: Sequence[Array],
        weights: Sequence[int],
        counted: Sequence[Array],
    ) -> Array:
        total = np.zeros(n, np.int64)
        weight_sum = np.zeros(n, np.int64)
        for req, cap, w, m in zip(requested, allocatable, weights, counted):
            over = (cap == 0) | (req > cap)
            utilization = np.where(over, 0, _floor_div_or_zero(req * MAX_UTILIZATION, cap))
            s = np.where(over, at_max, table[utilization])
            use = m & (s > 0)
            total += np.where(use, s * w, 0)
            weight_sum += np.where(use, w, 0)
        # Go's math.Round of a non-negative quotient: halves away from zero.
        quotient = total / np.where(weight_sum != 0, weight_sum, 1)
        floor = np.floor(quotient)
        rounded = (floor + (quotient - floor >= 0.5)).astype(np.int64)
        return np.where(weight_sum != 0, rounded, 0)

    return scorer


def balanced(
    n: int, requested: Sequence[Array], allocatable: Sequence[Array], weights: Sequence[int], counted: Sequence[Array]
) -> Array | None:
    """``(1 - std) * MaxNodeScore``. Which fractions enter the std depends on which resources
    count on each node; only batches where all of them count everywhere are vectorized."""
    if not all(bool(m.all()) for m in counted):
        return None
    fractions = [np.minimum(req / cap, 1.0) for req, cap in zip(requested, allocatable)]
    k = len(fractions)
    if k < 2:
        std = np.zeros(n)
    elif k == 2:
        std = np.abs((fractions[0] - fractions[1]) / 2)
    else:
        total = np.zeros(n)
        for f in fractions:
            total = total + f
        mean = total / k
        acc = np.zeros(n)
        for f in fractions:
            acc = acc + (f - mean) * (f - mean)
        std = np.sqrt(acc / k)
    return ((1 - std) * float(MAX_NODE_SCORE)).astype(np.int64)


def batch_inputs(
    entries: Sequence[tuple[int, str, int, int]], batch: NodeBatch, use_requested: bool
) -> tuple[int, list[Array], list[Array], list[int], list[Array]] | None:
    """What :meth:`ResourceAllocationScorer.score` reads off each node, for every node of
    ``batch`` at once: requested (node + pod), allocatable, weight and whether it counts, per
    compiled entry. ``None`` when an amount is too large for exact int64 arithmetic."""
    cols = batch.columns
    if not cols.exact:
        return None
    rows = batch.rows
    requested: list[Array] = []
    allocatable: list[Array] = []
    weights: list[int] = []
    counted: list[Array] = []
    for kind, name, weight, pod_req in entries:
        if abs(pod_req) >= EXACT_LIMIT:
            return None
        if kind == KIND_CPU:
            alloc = cols.alloc_cpu[rows]
            used = (cols.req_cpu if use_requested else cols.nz_cpu)[rows]
        elif kind == KIND_MEMORY:
            alloc = cols.alloc_memory[rows]
            used = (cols.req_memory if use_requested else cols.nz_memory)[rows]
        elif kind == KIND_EPHEMERAL:
            alloc = cols.alloc_ephemeral[rows]
            used = cols.req_ephemeral[rows]
        else:
            alloc_col, req_col = cols.scalar(name)
            alloc = alloc_col[rows]
            used = req_col[rows]
        requested.append(used + pod_req)
        allocatable.append(alloc)
        weights.append(weight)
        counted.append(alloc != 0)
    return len(rows), requested, allocatable, weights, counted
