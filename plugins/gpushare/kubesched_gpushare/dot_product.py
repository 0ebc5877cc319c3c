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

from kubesched.framework import MIN_NODE_SCORE, CycleState, Handle, NodeInfo, PodInfo

from .gpu import pod_cpu
from .ledger import GpuLedger, ledger_for
from .scoring import MAX_SPEC_CPU, MAX_SPEC_GPU, ScoreError, ask_and_node, batch_table, error


def dot_product_score(cpu_left: int, gpu_left: int, cpu: int, gpu: int) -> int:
    if cpu_left < cpu:
        return MIN_NODE_SCORE
    dot = 0.0
    dot += (cpu_left / MAX_SPEC_CPU) * (cpu / MAX_SPEC_CPU)
    dot += (gpu_left / MAX_SPEC_GPU) * (gpu / MAX_SPEC_GPU)
    return max(MIN_NODE_SCORE, int(100.0 * (1 - dot / 2.0)))


class DotProduct:
    name = "DotProduct"

    def __init__(self, args: Any, handle: Handle) -> None:
        self.ledger: GpuLedger = ledger_for(handle)

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Any:
        try:
            ask, ng = ask_and_node(self.ledger, pod, node, check_model=False)
        except ScoreError as exc:
            return error(exc)
        return dot_product_score(ng.cpu_left, ng.total_left, pod_cpu(pod), ask.total_milli)

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
