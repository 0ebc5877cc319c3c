"""NodeResourcesBalancedAllocation: favour nodes whose resources stay evenly used.

The score is ``(1 - std) * MaxNodeScore`` over the fractions requested/allocatable (each capped
at 1) of the configured resources, counting the pod's and the node's *actual* requests (no
non-zero defaults; in-place resizes and pod-level requests counted as 1.37 counts them). A pod
that requests none of the configured resources (best-effort) is not scored at all: PreScore
returns Skip, so such pods do not all pile onto one "balanced" node.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator

from kubesched.framework.columns import Array, columns_of
from kubesched.framework.interface import CycleState, Handle
from kubesched.framework.pod_requests import Counting
from kubesched.framework.status import Status
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.plugins.helper import feature_gates_of, requests_fragment
from kubesched.plugins.noderesources.resource_allocation import (
    Entry,
    ResourceAllocationScorer,
    ResourceSpec,
    balanced_resource_scorer,
    compile_requests,
    counted_fragment,
    default_resources,
)
from kubesched.plugins.noderesources.resource_allocation_batch import balanced, batch_inputs

NAME = "NodeResourcesBalancedAllocation"
PRE_SCORE_KEY = "PreScore" + NAME


class NodeResourcesBalancedAllocationArgs(BaseModel):
    """Upstream ``NodeResourcesBalancedAllocationArgs``: the resources to balance, weight 1 each."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    resources: list[ResourceSpec] = Field(default_factory=default_resources)

    @field_validator("resources")
    @classmethod
    def _check_resources(cls, v: list[ResourceSpec]) -> list[ResourceSpec]:
        if not v:
            return default_resources()
        errs: list[str] = []
        seen: set[str] = set()
        for i, r in enumerate(v):
            if r.name in seen:
                errs.append(f'resources[{i}].name: Duplicate value: "{r.name}"')
            seen.add(r.name)
            if r.weight != 1:
                errs.append(f"resources[{i}].weight: Invalid value: {r.weight}: must be 1")
        if errs:
            raise ValueError("; ".join(errs))
        return v


class NodeResourcesBalancedAllocation:
    """PreScore and Score (see module docstring)."""

    name = NAME
    Args = NodeResourcesBalancedAllocationArgs

    def __init__(self, args: NodeResourcesBalancedAllocationArgs | None, handle: Handle | None = None) -> None:
        args = args if args is not None else NodeResourcesBalancedAllocationArgs()
        self.args = args
        self.handle = handle
        #: How the feature gates count a pod (pod-level resources, pod-level resizes).
        self.counting = Counting.of(feature_gates_of(handle))
        self.scorer = ResourceAllocationScorer(
            NAME, args.resources, balanced_resource_scorer, use_requested=True, counting=self.counting
        )

    def _entries(self, pod: PodInfo) -> tuple[Entry, ...] | None:
        """The compiled requests, or ``None`` for a pod requesting none of the resources."""
        requests = self.scorer.pod_requests(pod)
        if not any(requests):
            return None
        return compile_requests(self.scorer.resources, requests)

    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status | None:
        entries = self._entries(pod)
        if entries is None:
            return Status.skip()
        state.write(PRE_SCORE_KEY, entries)
        return None

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> int:
        entries: tuple[Entry, ...] | None = state.get(PRE_SCORE_KEY)
        if entries is None:
            entries = self._entries(pod)
            if entries is None:
                return 0
        return self.scorer.score(node, entries)

    def score_nodes(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Array | None:
        batch = columns_of(nodes)
        if batch is None:
            return None
        entries: tuple[Entry, ...] | None = state.get(PRE_SCORE_KEY)
        if entries is None:
            entries = self._entries(pod)
            if entries is None:
                return np.zeros(len(batch), np.int64)
        inputs = batch_inputs(entries, batch, self.scorer.use_requested)
        return None if inputs is None else balanced(*inputs)

    def sign_pod(self, pod: PodInfo) -> dict[str, Any]:
        return {**requests_fragment(pod), **counted_fragment(pod, self.counting)}
