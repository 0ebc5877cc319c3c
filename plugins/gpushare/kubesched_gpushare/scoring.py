"""What the score plugins of the package have in common: the pod's ask and the node's GPUs, the
artifact's normalization, and its yardsticks of a large node."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from kubesched import (
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    CycleState,
    Handle,
    NodeBatch,
    NodeInfo,
    NodeScore,
    PodInfo,
    Status,
    columns_of,
)

from .gpu import GpuAsk, GpuAskError, NodeGpus, gpu_ask_of
from .ledger import GpuLedger, GpuTable, ledger_for

#: The largest node the artifact's scores measure against: 128 CPUs, 8 GPUs.
MAX_SPEC_CPU = 128000
MAX_SPEC_GPU = 8000


class ScoreError(Exception):
    """A node the score cannot be computed for (the artifact's Error status)."""


def ask_and_node(ledger: GpuLedger, pod: PodInfo, node: NodeInfo, check_model: bool = True) -> tuple[GpuAsk, NodeGpus]:
    try:
        ask = gpu_ask_of(pod.pod)
    except GpuAskError as exc:
        raise ScoreError(str(exc)) from None
    ng = ledger.node(node)
    if check_model and ask.wants_gpu and not ask.accepts(ng.model):
        raise ScoreError(f'node "{node.name}" does not have the GPU model pod "{pod.key}" asks for')
    return ask, ng


def error(exc: ScoreError) -> tuple[int, Status]:
    return MIN_NODE_SCORE, Status.as_error(str(exc))


class GpuScore:
    """A score of the package over the GPU ledger: the per-node ``score`` (the contract) reads
    the pod's ask and the node's GPUs, and answers an Error status where the artifact's score
    does; subclasses say how a node scores (``node_score``) and add their batch form."""

    name = ""
    #: Whether a node of a model the pod does not accept is an error (DotProduct does not look).
    check_model = True

    def __init__(self, args: Any, handle: Handle) -> None:
        self.ledger: GpuLedger = ledger_for(handle)

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Any:
        try:
            ask, ng = ask_and_node(self.ledger, pod, node, check_model=self.check_model)
            return self.node_score(pod, ask, ng)
        except ScoreError as exc:
            return error(exc)

    def node_score(self, pod: PodInfo, ask: GpuAsk, node: NodeGpus) -> int:
        raise NotImplementedError


def batch_table(
    ledger: GpuLedger, pod: PodInfo, nodes: Sequence[NodeInfo], check_model: bool = True
) -> tuple[GpuAsk, NodeBatch, GpuTable] | None:
    """The pod's ask and the batch's rows brought up to date, or ``None`` where the batch form
    declines: not over the columns, or a node the per-node form reports an error for."""
    batch = columns_of(nodes)
    if batch is None:
        return None
    try:
        ask = gpu_ask_of(pod.pod)
    except GpuAskError:
        return None
    table = ledger.table(batch.columns)
    table.refresh(batch.rows)
    if check_model and ask.wants_gpu and ask.models is not None:
        accepted = ledger.accepting(ask.models)
        if not accepted[table.model[batch.rows]].all():
            return None
    return ask, batch, table


def min_max_normalize(scores: list[NodeScore]) -> None:
    """The artifact's NormalizeScore: the lowest score becomes 0, the highest 100 (all 0 when
    they are equal), integer arithmetic."""
    if not scores:
        return
    values = [s.score for s in scores]
    for s, v in zip(scores, min_max_normalize_array(np.array(values, np.int64)).tolist()):
        s.score = v


def min_max_normalize_array(values: Any) -> np.ndarray:
    values = np.asarray(values, np.int64)
    if not len(values):
        return values
    lo, hi = int(values.min()), int(values.max())
    if hi == lo:
        return np.full(len(values), MIN_NODE_SCORE, np.int64)
    return (values - lo) * (MAX_NODE_SCORE - MIN_NODE_SCORE) // (hi - lo) + MIN_NODE_SCORE


def trunc_div(a: Any, b: int) -> Any:
    """Integer division rounding toward zero, as Go divides (``b`` > 0)."""
    if isinstance(a, int):
        return a // b if a >= 0 else -(-a // b)
    return np.sign(a) * (np.abs(a) // b)
