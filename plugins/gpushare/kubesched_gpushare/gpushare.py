"""GpuShare: place pods on individual GPUs, several pods sharing one GPU.

* **PreFilter** reads the pod's GPU ask (annotations, see :mod:`kubesched_gpushare.gpu`); a pod
  without one skips this plugin's Filter, a malformed ask is UnschedulableAndUnresolvable.
* **Filter** checks the node's GPUs one by one: a sharing pod needs one GPU with room for its
  milli-GPU, a whole-GPU pod needs ``count`` GPUs nobody uses, both of an accepted model.
* **Reserve** picks the GPU(s) by ``gpuSelection``: ``best`` (least room that fits), ``worst``,
  ``random`` (seeded), or ``FGD`` (the choice of the profile's FGD plugin). Whole-GPU pods take
  the lowest-indexed free GPUs under every policy. **Unreserve** gives them back.
* **PreBind** writes the chosen indices on the pod (``alibabacloud.com/gpu-index``).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from kubesched import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    EventResource,
    Handle,
    NodeInfo,
    PodInfo,
    Status,
    StatusTable,
    columns_of,
)

from .gpu import (
    GPU_INDEX_ANNOTATION,
    GpuAsk,
    GpuAskError,
    NodeGpus,
    best_fit_gpu,
    format_indices,
    gpu_ask_of,
    pod_cpu,
    random_gpu,
    whole_gpus,
    worst_fit_gpu,
)
from .ledger import GpuLedger, ledger_for

#: CycleState key of the pod's GPU ask, written at PreFilter.
STATE_KEY = "GpuShare/ask"

#: Filter reasons.
NO_GPU = "node(s) had no GPU"
TOO_FEW_GPUS = "node(s) had fewer GPUs than the pod asks for"
MODEL_MISMATCH = "node(s) didn't have the GPU model the pod asks for"
NO_GPU_ROOM = "node(s) didn't have a GPU with enough free milli-GPU"
NO_FREE_GPUS = "node(s) didn't have enough free GPUs"

_NO_GPU = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, NO_GPU)
_TOO_FEW = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, TOO_FEW_GPUS)
_MODEL = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, MODEL_MISMATCH)


class GpuShareArgs(BaseModel):
    """``pluginConfig`` args of GpuShare."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    #: How Reserve picks a sharing pod's GPU (the artifact's ``gpuSelMethod``).
    gpu_selection: Literal["best", "worst", "random", "FGD"] = Field("best", alias="gpuSelection")
    #: Seed of ``random`` GPU selection.
    seed: int = 0


def ask_of(state: CycleState, pod: PodInfo) -> GpuAsk:
    """The ask PreFilter stored, or the pod's own (a per-node call outside a cycle)."""
    ask = state.get(STATE_KEY)
    return ask if ask is not None else gpu_ask_of(pod.pod)


def check_node(node: NodeGpus, ask: GpuAsk) -> Status | None:
    """Whether ``node``'s GPUs can hold ``ask`` (None) or why not."""
    if node.count == 0:
        return _NO_GPU
    if not ask.accepts(node.model):
        return _MODEL
    if node.count < ask.count:
        return _TOO_FEW
    if ask.shared:
        if any(x >= ask.milli for x in node.left):
            return None
        return Status.unschedulable(NO_GPU_ROOM)
    if node.fully_free >= ask.count:
        return None
    return Status.unschedulable(NO_FREE_GPUS)


class GpuShare:
    """GPU sharing (see the module docstring)."""

    name = "GpuShare"
    Args = GpuShareArgs

    def __init__(self, args: GpuShareArgs | None, handle: Handle) -> None:
        self.args = args or GpuShareArgs.model_validate({})
        self.handle = handle
        self.ledger: GpuLedger = ledger_for(handle)
        self.rng = random.Random(self.args.seed)

    # --- PreFilter / Filter ----------------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: PodInfo) -> Status | None:
        try:
            ask = gpu_ask_of(pod.pod)
        except GpuAskError as exc:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, str(exc))
        state.write(STATE_KEY, ask)
        if not ask.wants_gpu:
            return Status.skip()
        return None

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        ask = ask_of(state, pod)
        if not ask.wants_gpu:
            return None
        return check_node(self.ledger.node(node), ask)

    def filter_nodes(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Any:
        batch = columns_of(nodes)
        if batch is None:
            return None
        ask = ask_of(state, pod)
        if not ask.wants_gpu:
            return np.ones(len(batch), bool)
        table = self.ledger.table(batch.columns)
        rows = batch.rows
        table.refresh(rows)
        count = table.count[rows]
        ok = count >= max(ask.count, 1)
        if ask.models is not None:
            accepted = self.ledger.accepting(ask.models)
            ok &= accepted[table.model[rows]]
        if ask.shared:
            ok &= table.max_left[rows] >= ask.milli
        else:
            ok &= table.fully_free[rows] >= ask.count
        return ok

    def filter_statuses(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Any:
        """:meth:`filter`'s Status for every node of a batch, from the GPU columns (a pod that fits
        nowhere needs one per node); nodes rejected alike share one Status."""
        batch = columns_of(nodes)
        if batch is None:
            return None
        ask = ask_of(state, pod)
        out: list[Status | None] = [None] * len(batch)
        if not ask.wants_gpu:
            return out
        table = self.ledger.table(batch.columns)
        rows = batch.rows
        table.refresh(rows)
        count = table.count[rows]
        accepted = np.ones(len(rows), bool)
        if ask.models is not None:
            accepted = self.ledger.accepting(ask.models)[table.model[rows]]
        if ask.shared:
            room = table.max_left[rows] >= ask.milli
            last = Status.unschedulable(NO_GPU_ROOM)
        else:
            room = table.fully_free[rows] >= ask.count
            last = Status.unschedulable(NO_FREE_GPUS)
        # The checks of check_node, in its order: the first that fails is the node's Status (each
        # check written over the later ones, the last check first).
        verdict = np.where(room, 0, 4)
        verdict[count < ask.count] = 3
        verdict[~accepted] = 2
        verdict[count == 0] = 1
        return StatusTable([None, _NO_GPU, _MODEL, _TOO_FEW, last], verdict)

    # --- Reserve / Unreserve ---------------------------------------------------------------------
    def choose(self, node: NodeGpus, ask: GpuAsk, cpu: int) -> tuple[int, ...] | None:
        """The GPUs this plugin's policy gives ``ask`` on ``node`` (None: it does not fit)."""
        if check_node(node, ask) is not None:
            return None
        if not ask.shared:
            return whole_gpus(node.left, ask.count)
        method = self.args.gpu_selection
        if method == "FGD":
            chooser = self.ledger.choosers.get(self.handle.profile_name)
            if chooser is None:
                raise LookupError(
                    f'gpuSelection "FGD" needs the FGD score plugin in profile "{self.handle.profile_name}"'
                )
            return chooser.choose_gpus(node, ask, cpu)
        if method == "best":
            i = best_fit_gpu(node.left, ask.milli)
        elif method == "worst":
            i = worst_fit_gpu(node.left, ask.milli)
        else:
            i = random_gpu(node.left, ask.milli, self.rng)
        return None if i is None else (i,)

    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        ask = ask_of(state, pod)
        if not ask.wants_gpu:
            return None
        node = self.ledger.node(self.handle.snapshot().get(node_name))
        try:
            chosen = self.choose(node, ask, pod_cpu(pod))
        except LookupError as exc:
            return Status.as_error(str(exc))
        if chosen is None:
            return Status.as_error(f'failed to allocate GPUs to pod "{pod.key}" on node "{node_name}"')
        self.ledger.reserve(pod.uid, node_name, chosen)
        return None

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        self.ledger.release(pod.uid, node_name)

    # --- PreBind ---------------------------------------------------------------------------------
    async def pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        indices = self.ledger.reservation(pod.uid, node_name)
        if indices is None:
            if ask_of(state, pod).wants_gpu:
                return Status.as_error(f'no GPUs reserved for pod "{pod.key}" on node "{node_name}"')
            return None
        cluster = self.handle.cluster
        if cluster is not None:
            try:
                await cluster.patch_pod_annotations(pod.pod, {GPU_INDEX_ANNOTATION: format_indices(indices)})
            except Exception as exc:  # noqa: BLE001 - any API failure fails the binding cycle
                return Status.as_error(f"recording the GPUs of pod {pod.key}: {exc}")
        return None

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            # A pod leaving gives its GPUs back.
            ClusterEventWithHint(ClusterEvent(EventResource.POD, ActionType.DELETE)),
            ClusterEventWithHint(
                ClusterEvent(
                    EventResource.NODE,
                    ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE | ActionType.UPDATE_NODE_LABEL,
                )
            ),
        ]


__all__ = ["GpuShare", "GpuShareArgs", "check_node"]
