"""BestFit: prefer the node the pod leaves with the least free CPU and GPU.

The artifact's formula: ``int(100 × (1 − ½ (cpuFree − cpu) / 128 CPUs − ½ (gpuFree − gpu) / 8 GPUs))``
with free = what the node has left and gpu the pod's total milli-GPU, then scaled to 0..100
across the nodes (lowest 0, highest 100). A node with less free than the pod asks is an error.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from kubesched import CycleState, NodeInfo, NodeScore, PodInfo

from .gpu import GpuAsk, NodeGpus, pod_cpu
from .scoring import (
    MAX_SPEC_CPU,
    MAX_SPEC_GPU,
    GpuScore,
    ScoreError,
    batch_table,
    min_max_normalize,
    min_max_normalize_array,
)


def best_fit_score(cpu_left: int, gpu_left: int, cpu: int, gpu: int) -> int:
    """The raw BestFit score (before normalization); raises :class:`ScoreError` when the node has
    less free than the pod asks."""
    if cpu_left < cpu or gpu_left < gpu:
        raise ScoreError(f"free resource not enough: free cpu {cpu_left}, gpu {gpu_left}; pod asks {cpu}, {gpu}")
    score = 0.0
    score += (cpu_left - cpu) / MAX_SPEC_CPU * 0.5
    score += (gpu_left - gpu) / MAX_SPEC_GPU * 0.5
    return int((1.0 - score) * 100.0)


class BestFit(GpuScore):
    name = "BestFit"

    def node_score(self, pod: PodInfo, ask: GpuAsk, node: NodeGpus) -> int:
        return best_fit_score(node.cpu_left, node.total_left, pod_cpu(pod), ask.total_milli)

    def score_nodes(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Any:
        found = batch_table(self.ledger, pod, nodes)
        if found is None:
            return None
        ask, batch, table = found
        cpu_free = table.cpu_left[batch.rows]
        gpu_free = table.total_left[batch.rows]
        cpu, gpu = pod_cpu(pod), ask.total_milli
        if (cpu_free < cpu).any() or (gpu_free < gpu).any():
            return None  # score() reports the error
        score = np.zeros(len(batch))
        score += (cpu_free - cpu) / MAX_SPEC_CPU * 0.5
        score += (gpu_free - gpu) / MAX_SPEC_GPU * 0.5
        return np.trunc((1.0 - score) * 100.0).astype(np.int64)

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: list[NodeScore]) -> None:
        min_max_normalize(scores)

    def normalize_scores(self, state: CycleState, pod: PodInfo, scores: Any) -> np.ndarray:
        return min_max_normalize_array(scores)
