"""RandomScore: one feasible node, drawn at PreScore (seeded), scores 100, the others 0."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict

from kubesched import MAX_NODE_SCORE, MIN_NODE_SCORE, CycleState, Handle, NodeInfo, PodInfo, Status

STATE_KEY = "RandomScore/node"


class RandomScoreArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    seed: int = 0


class RandomScore:
    name = "RandomScore"
    Args = RandomScoreArgs

    def __init__(self, args: RandomScoreArgs | None, handle: Handle) -> None:
        self.rng = random.Random((args or RandomScoreArgs()).seed)

    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status | None:
        if len(nodes):
            state.write(STATE_KEY, nodes[self.rng.randrange(len(nodes))].name)
        return None

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Any:
        chosen = state.get(STATE_KEY)
        if chosen is None:
            return MIN_NODE_SCORE, Status.as_error(f"reading {STATE_KEY!r} from cycleState: not found")
        return MAX_NODE_SCORE if node.name == chosen else MIN_NODE_SCORE

    def score_nodes(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Any:
        chosen = state.get(STATE_KEY)
        if chosen is None:
            return None
        names = nodes.names() if hasattr(nodes, "names") else [n.name for n in nodes]
        return np.array([MAX_NODE_SCORE if n == chosen else MIN_NODE_SCORE for n in names], np.int64)
