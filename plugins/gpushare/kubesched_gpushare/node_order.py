"""NodeOrder and NodeOrderFine: ties between equally scored nodes broken by a seeded node order,
as the FGD paper's simulator breaks them.

Its scheduler (a kube-scheduler 1.20 fork) takes, among the nodes with the highest score, the one
whose name sorts first, and the simulator prefixes every node name with its place in a seeded
permutation: so ties always go to the same nodes, in an order fixed by the seed. kubesched's
scheduler breaks ties uniformly at random instead; these two scores give the artifact's order.

Each node gets a key from the seed and its name (a hash: the order does not depend on which
other nodes exist), and PreScore ranks the feasible nodes by key, 0 first. ``NodeOrder`` scores
``100 − rank // 101`` and ``NodeOrderFine`` ``100 − rank % 101``: with weights 101 and 1 their
sum is ``10200 − rank``, one step per place, for up to 10201 feasible nodes. Give the policy's
score plugins weights of at least 10201 times their own, so that a point of policy outweighs
any difference in order (``kubesched replay`` sets this up by itself).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict

from kubesched import MAX_NODE_SCORE, MIN_NODE_SCORE, CycleState, Handle, NodeInfo, PodInfo, Status

#: Places one score distinguishes (0..100).
BASE = MAX_NODE_SCORE + 1
#: Weights of NodeOrder and NodeOrderFine, and the factor the policy's weights need.
COARSE_WEIGHT = BASE
FINE_WEIGHT = 1
POLICY_FACTOR = COARSE_WEIGHT * MAX_NODE_SCORE + FINE_WEIGHT * MAX_NODE_SCORE + 1


class NodeOrderArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    seed: int = 0


class NodeOrder:
    """The coarse place of a node in the seeded order (see the module docstring)."""

    name = "NodeOrder"
    Args = NodeOrderArgs
    #: The weight this score needs, and the factor the policy's weights need beside it.
    weight = COARSE_WEIGHT
    policy_factor = POLICY_FACTOR

    def __init__(self, args: NodeOrderArgs | None, handle: Handle) -> None:
        self.seed = (args or NodeOrderArgs()).seed
        self._keys: dict[str, int] = {}

    def key(self, node_name: str) -> int:
        key = self._keys.get(node_name)
        if key is None:
            digest = hashlib.blake2b(f"{self.seed}/{node_name}".encode(), digest_size=8).digest()
            key = self._keys[node_name] = int.from_bytes(digest, "big") >> 1
        return key

    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status | None:
        names = list(nodes.names()) if hasattr(nodes, "names") else [n.name for n in nodes]
        # NodeOrder and NodeOrderFine of one seed share the ranks of a cycle.
        state_key = f"NodeOrder/{self.seed}"
        held = state.get(state_key)
        if held is not None and held[0] == names:
            return None
        keys = np.fromiter((self.key(n) for n in names), np.int64, len(names))
        ranks = np.empty(len(names), np.int64)
        ranks[np.argsort(keys, kind="stable")] = np.arange(len(names))
        # [names, their ranks, a name -> rank map made only when a per-node score asks]
        state.write(state_key, [names, ranks, None])
        return None

    def _ranks(self, state: CycleState) -> Any:
        held = state.get(f"NodeOrder/{self.seed}")
        if held is not None and held[2] is None:
            held[2] = dict(zip(held[0], held[1].tolist()))
        return held

    def _digits(self, ranks: Any) -> Any:
        return MAX_NODE_SCORE - np.minimum(ranks // BASE, MAX_NODE_SCORE)

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Any:
        held = self._ranks(state)
        if held is None or node.name not in held[2]:
            return MIN_NODE_SCORE, Status.as_error(f"reading 'NodeOrder/{self.seed}' from cycleState: not found")
        return int(self._digits(np.int64(held[2][node.name])))

    def score_nodes(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Any:
        held = state.get(f"NodeOrder/{self.seed}")
        if held is None:
            return None
        names = list(nodes.names()) if hasattr(nodes, "names") else [n.name for n in nodes]
        if names == held[0]:
            return self._digits(held[1])
        ranks = self._ranks(state)[2]
        if any(n not in ranks for n in names):
            return None
        return self._digits(np.array([ranks[n] for n in names], np.int64))


class NodeOrderFine(NodeOrder):
    """The fine place of a node in the seeded order (see the module docstring)."""

    name = "NodeOrderFine"
    weight = FINE_WEIGHT

    def _digits(self, ranks: Any) -> Any:
        return MAX_NODE_SCORE - ranks % BASE


__all__ = ["COARSE_WEIGHT", "FINE_WEIGHT", "POLICY_FACTOR", "NodeOrder", "NodeOrderArgs", "NodeOrderFine"]
