"""GpuClustering: keep pods of a kind together — shared-GPU pods with shared-GPU pods, k-GPU
pods with k-GPU pods.

The artifact's bands: a node whose GPU pods are all of the pod's kind scores in (75, 100]; one
with that kind among others in (50, 75]; a node without GPU pods in (25, 50]; a node with only
other kinds in (0, 25]. Within a band, ``25 × (8000 − idle milli-GPU) / 8000`` (integer
arithmetic) prefers fuller nodes. A pod without GPUs scores 0. No normalization.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from kubesched import MAX_NODE_SCORE, MIN_NODE_SCORE, CycleState, NodeInfo, PodInfo

from .gpu import GpuAsk, NodeGpus
from .ledger import tag_column
from .scoring import MAX_SPEC_GPU, GpuScore, batch_table, trunc_div

_QUARTER = MAX_NODE_SCORE // 4


def gpu_clustering_score(node: NodeGpus, ask: GpuAsk) -> int:
    if not ask.wants_gpu:
        return MIN_NODE_SCORE
    base = int(trunc_div(_QUARTER * (MAX_SPEC_GPU - node.total_left), MAX_SPEC_GPU))
    if node.tags.get(ask.tag, 0) > 0:
        return base + (MAX_NODE_SCORE * 3 // 4 if len(node.tags) == 1 else MAX_NODE_SCORE * 2 // 4)
    return base + (_QUARTER if not node.tags else 0)


class GpuClustering(GpuScore):
    name = "GpuClustering"

    def node_score(self, pod: PodInfo, ask: GpuAsk, node: NodeGpus) -> int:
        return gpu_clustering_score(node, ask)

    def score_nodes(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Any:
        found = batch_table(self.ledger, pod, nodes)
        if found is None:
            return None
        ask, batch, table = found
        rows = batch.rows
        if not ask.wants_gpu:
            return np.full(len(rows), MIN_NODE_SCORE, np.int64)
        base = trunc_div(_QUARTER * (MAX_SPEC_GPU - table.total_left[rows]), MAX_SPEC_GPU)
        col = tag_column(ask)
        same = table.tags[rows, col] > 0 if col < table.tags.shape[1] else np.zeros(len(rows), bool)
        kinds = table.kinds[rows]
        band = np.where(
            same,
            np.where(kinds == 1, MAX_NODE_SCORE * 3 // 4, MAX_NODE_SCORE * 2 // 4),
            np.where(kinds == 0, _QUARTER, 0),
        )
        return (base + band).astype(np.int64)
