"""Score of DynamicResources: a node scores by the ``firstAvailable`` alternatives its allocation
took (the earlier in a request's list, the more); every node scores 0 when no claim to allocate
lists alternatives."""

from __future__ import annotations

from typing import Any

import numpy as np

from kubesched.framework.columns import Array
from kubesched.framework.interface import MAX_NODE_SCORE, CycleState, NodeScore
from kubesched.framework.status import Status
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.plugins.dynamicresources.claims import requests_of
from kubesched.plugins.dynamicresources.plugin_base import DynamicResourcesBase
from kubesched.plugins.dynamicresources.state import STATE_KEY, State
from kubesched.plugins.helper import default_normalize_score, default_normalize_scores

#: Upstream's limit on a request's ``firstAvailable`` alternatives: the first one allocated
#: scores this much, each later one a point less.
FIRST_AVAILABLE_MAX_SIZE = 8


class Scoring(DynamicResourcesBase):
    """Score and NormalizeScore (see the module)."""

    # --- Score -----------------------------------------------------------------------------
    def _has_alternatives(self, s: State | None) -> bool:
        return s is not None and any(
            r.get("firstAvailable") for i in s.to_allocate for r in requests_of(s.claims[i]) or ()
        )

    def score_nodes(self, state: CycleState, pod: PodInfo, nodes: Any) -> Array | None:
        """Every node scores 0 unless a claim to allocate lists ``firstAvailable`` alternatives
        (then node by node): the cost of Score for most pods."""
        if self._has_alternatives(state.get(STATE_KEY)):
            return None
        return np.zeros(len(nodes), np.int64)

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> int:
        """As upstream: for each alternative the node's allocation took, the earlier it is in
        its request's ``firstAvailable`` list the more it scores (8 for the first, 7 for the
        second, ...)."""
        s: State | None = state.get(STATE_KEY)
        found = None if s is None else s.node_allocations.get(node.name)
        if found is None:
            return 0
        total = 0
        for claim, result in zip(found.claims, found.results, strict=False):
            taken = {r.get("request") for r in (result.get("devices") or {}).get("results") or ()}
            for request in requests_of(claim) or ():
                for i, sub in enumerate(request.get("firstAvailable") or ()):
                    if f"{request.get('name', '')}/{sub.get('name', '')}" in taken:
                        total += FIRST_AVAILABLE_MAX_SIZE - i
        return total

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: list[NodeScore]) -> Status | None:
        default_normalize_score(MAX_NODE_SCORE, False, scores)
        return None

    def normalize_scores(self, state: CycleState, pod: PodInfo, scores: Array) -> Array:
        return default_normalize_scores(MAX_NODE_SCORE, False, scores)
