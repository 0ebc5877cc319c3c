"""GpuPacking: fill GPUs already in use, then nodes already in use, then untouched nodes.

The artifact's tiers, from the best:

1. the pod fits on GPUs already shared: ``max(100 − Σ⌊100·room/1000⌋ / 10, 50)`` over the GPUs it
   would use (the least roomy first);
2. it needs GPUs nobody uses, on a node with some GPU in use: ``max(50 − GPUs it takes, 33)``;
3. every GPU of the node is free: ``max(33 − free GPUs, free GPUs)``.

A pod without GPUs scores 0 everywhere. No normalization.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from kubesched import MAX_NODE_SCORE, MIN_NODE_SCORE, CycleState, NodeInfo, PodInfo

from .gpu import MILLI, GpuAsk, NodeGpus
from .scoring import GpuScore, ScoreError, batch_table

_THIRD = MAX_NODE_SCORE // 3
_HALF = MAX_NODE_SCORE // 2


def gpu_packing_score(node: NodeGpus, ask: GpuAsk) -> int:
    if not ask.wants_gpu:
        return MIN_NODE_SCORE
    free = node.fully_free
    if free == node.count:
        return max(_THIRD - free, free)
    need = ask.count
    used: list[int] = []
    free_used = 0
    for i in sorted(range(node.count), key=lambda i: node.left[i]):
        if need == 0:
            break
        if node.left[i] >= ask.milli:
            need -= 1
            used.append(i)
            free_used += node.left[i] == MILLI
    if need:
        raise ScoreError(f'no room for the pod\'s GPUs on node "{node.name}"')
    if free_used:
        return max(_HALF - free_used, _THIRD)
    room = sum(node.left[i] * 100 // MILLI for i in used)
    return max(MAX_NODE_SCORE - room // 10, _HALF)


class GpuPacking(GpuScore):
    name = "GpuPacking"

    def node_score(self, pod: PodInfo, ask: GpuAsk, node: NodeGpus) -> int:
        return gpu_packing_score(node, ask)

    def score_nodes(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Any:
        found = batch_table(self.ledger, pod, nodes)
        if found is None:
            return None
        ask, batch, table = found
        rows = batch.rows
        if not ask.wants_gpu:
            return np.full(len(rows), MIN_NODE_SCORE, np.int64)
        free = table.fully_free[rows]
        untouched = free == table.count[rows]
        if ask.shared:
            left = table.left[rows]
            tightest = np.where(left >= ask.milli, left, MILLI + 1).min(axis=1)
            if (tightest > MILLI).any() and not untouched[tightest > MILLI].all():
                return None  # score() reports the error
            shared = np.maximum(MAX_NODE_SCORE - (tightest * 100 // MILLI) // 10, _HALF)
            score = np.where(tightest == MILLI, max(_HALF - 1, _THIRD), shared)
        else:
            if (free < ask.count)[~untouched].any():
                return None
            score = np.full(len(rows), max(_HALF - ask.count, _THIRD), np.int64)
        return np.where(untouched, np.maximum(_THIRD - free, free), score).astype(np.int64)
