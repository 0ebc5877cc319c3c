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
import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict

from kubesched import (
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    CycleState,
    Handle,
    NodeBatch,
    NodeColumns,
    NodeInfo,
    PodInfo,
    Status,
    columns_of,
)

#: Places one score distinguishes (0..100).
BASE = MAX_NODE_SCORE + 1
#: Weights of NodeOrder and NodeOrderFine, and the factor the policy's weights need.
COARSE_WEIGHT = BASE
FINE_WEIGHT = 1
POLICY_FACTOR = COARSE_WEIGHT * MAX_NODE_SCORE + FINE_WEIGHT * MAX_NODE_SCORE + 1

Array = np.ndarray


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
        #: NodeOrder and NodeOrderFine of one seed share the ranks of a cycle under this key.
        self.state_key = f"NodeOrder/{self.seed}"
        self._keys: dict[str, int] = {}
        self._by_columns: weakref.WeakKeyDictionary[NodeColumns, Array] = weakref.WeakKeyDictionary()

    def key(self, node_name: str) -> int:
        key = self._keys.get(node_name)
        if key is None:
            digest = hashlib.blake2b(f"{self.seed}/{node_name}".encode(), digest_size=8).digest()
            key = self._keys[node_name] = int.from_bytes(digest, "big") >> 1
        return key

    def _column_keys(self, columns: NodeColumns) -> tuple[Array, Array | None]:
        """The key of every row of ``columns`` (a snapshot's nodes: their names never change),
        and each row's place among all rows by key (``None`` when two rows share a key)."""
        held = self._by_columns.get(columns)
        if held is None:
            keys = np.fromiter((self.key(n) for n in columns.names), np.int64, columns.n)
            places = np.empty(len(keys), np.int64)
            places[np.argsort(keys, kind="stable")] = np.arange(len(keys))
            held = self._by_columns[columns] = (keys, places if len(np.unique(keys)) == len(keys) else None)
        return held

    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status | None:
        # NodeOrder and NodeOrderFine of one seed share the ranks of a cycle.
        state_key = self.state_key
        held: _Ranks | None = state.get(state_key)
        batch = columns_of(nodes)
        if held is not None and held.same(nodes, batch):
            return None
        ranks: Array | None = None
        if batch is not None:
            keys, places = self._column_keys(batch.columns)
            if places is not None:
                ranks = ranks_among(places, batch.rows)
            if ranks is None:
                keys = keys[batch.rows]
            ranked = _Ranks(None, batch)
        else:
            names = [n.name for n in nodes]
            keys = np.fromiter((self.key(n) for n in names), np.int64, len(names))
            ranked = _Ranks(names, None)
        if ranks is None:
            ranks = np.empty(len(keys), np.int64)
            ranks[np.argsort(keys, kind="stable")] = np.arange(len(keys))
        ranked.ranks = ranks
        state.write(state_key, ranked)
        return None

    def _digits(self, ranks: Any) -> Any:
        return MAX_NODE_SCORE - np.minimum(ranks // BASE, MAX_NODE_SCORE)

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Any:
        held: _Ranks | None = state.get(self.state_key)
        rank = held.rank_of().get(node.name) if held is not None else None
        if rank is None:
            return MIN_NODE_SCORE, Status.as_error(f"reading 'NodeOrder/{self.seed}' from cycleState: not found")
        return int(self._digits(np.int64(rank)))

    def score_nodes(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Any:
        held: _Ranks | None = state.get(self.state_key)
        if held is None:
            return None
        if held.same(nodes, columns_of(nodes)):
            return self._digits(held.ranks)
        ranks = held.rank_of()
        names = _names(nodes)
        if any(n not in ranks for n in names):
            return None
        return self._digits(np.array([ranks[n] for n in names], np.int64))


def ranks_among(places: Array, rows: Array) -> Array | None:
    """The rank of each of ``rows`` among them, given every row's place among all rows (distinct
    keys): the rows' places counted, not sorted — a cycle ranks a thousand nodes. ``None`` when a
    row comes twice (sorting ranks each copy apart)."""
    mine = places[rows]
    # Counted in int64 from the start: a cumulative sum of booleans converts them on the way.
    marked = np.zeros(len(places), np.int64)
    marked[mine] = 1
    below = marked.cumsum()
    if len(rows) and int(below[-1]) != len(rows):
        return None
    ranks: Array = below[mine] - 1
    return ranks


class _Ranks:
    """The ranks of one cycle's feasible nodes, in their order; their names are listed only
    when a per-node score or a different list of nodes asks."""

    __slots__ = ("_names", "batch", "ranks", "_by_name")

    def __init__(self, names: list[str] | None, batch: NodeBatch | None) -> None:
        self._names = names
        self.batch = batch
        self.ranks: Array = np.empty(0, np.int64)
        self._by_name: dict[str, int] | None = None

    def names(self) -> list[str]:
        if self._names is None:
            assert self.batch is not None
            self._names = self.batch.names()
        return self._names

    def same(self, nodes: Sequence[NodeInfo], batch: NodeBatch | None) -> bool:
        """Whether ``nodes`` are the nodes ranked, in the same order."""
        mine = self.batch
        if batch is not None and mine is not None and batch.columns is mine.columns:
            return batch.rows is mine.rows or bool(np.array_equal(batch.rows, mine.rows))
        return _names(nodes) == self.names()

    def rank_of(self) -> dict[str, int]:
        if self._by_name is None:
            self._by_name = dict(zip(self.names(), self.ranks.tolist()))
        return self._by_name


def _names(nodes: Sequence[NodeInfo]) -> list[str]:
    batch = columns_of(nodes)
    return batch.names() if batch is not None else [n.name for n in nodes]


class NodeOrderFine(NodeOrder):
    """The fine place of a node in the seeded order (see the module docstring)."""

    name = "NodeOrderFine"
    weight = FINE_WEIGHT

    def _digits(self, ranks: Any) -> Any:
        return MAX_NODE_SCORE - ranks % BASE


__all__ = ["COARSE_WEIGHT", "FINE_WEIGHT", "POLICY_FACTOR", "NodeOrder", "NodeOrderArgs", "NodeOrderFine"]
