"""DotProduct: Tetris's alignment score, as the paper's experiments configure it (the GPUs of a
node as one dimension, amounts scaled by the largest node: 128 CPUs, 8 GPUs).

``int(100 × (1 − (cpuFree·cpu / 128000² + gpuFree·gpu / 8000²) / 2))``: the smaller the dot
product of what the node has free and what the pod asks, the higher; 0 where the CPU left is
less than the pod asks. No normalization.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from kubesched import MIN_NODE_SCORE, CycleState, NodeInfo, PodInfo

from .gpu import GpuAsk, NodeGpus, pod_cpu
from .scoring import MAX_SPEC_CPU, MAX_SPEC_GPU, GpuScore, batch_table


def dot_product_score(cpu_left: int, gpu_left: int, cpu: int, gpu: int) -> int:
    if cpu_left < cpu:
        return MIN_NODE_SCORE
    dot = 0.0
    dot += (cpu_left / MAX_SPEC_CPU) * (cpu / MAX_SPEC_CPU)
    dot += (gpu_left / MAX_SPEC_GPU) * (gpu / MAX_SPEC_GPU)
    return max(MIN_NODE_SCORE, int(100.0 * (1 - dot / 2.0)))


class DotProduct(GpuScore):
    name = "DotProduct"
    check_model = False

    def node_score(self, pod: PodInfo, ask: GpuAsk, node: NodeGpus) -> int:
        return dot_product_score(node.cpu_left, node.total_left, pod_cpu(pod), ask.total_milli)

    def score_nodes(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Any:
        found = batch_table(self.ledger, pod, nodes, check_model=False)
        if found is None:
            return None
        ask, batch, table = found
        cpu_free = table.cpu_left[batch.rows]
        gpu_free = table.total_left[batch.rows]
        cpu, gpu = pod_cpu(pod), ask.total_milli
        dot = np.zeros(len(batch))
        dot += (cpu_free / MAX_SPEC_CPU) * (cpu / MAX_SPEC_CPU)
        dot += (gpu_free / MAX_SPEC_GPU) * (gpu / MAX_SPEC_GPU)
        score = np.maximum(np.trunc(100.0 * (1 - dot / 2.0)), MIN_NODE_SCORE).astype(np.int64)
        score[cpu_free < cpu] = MIN_NODE_SCORE
        return score
