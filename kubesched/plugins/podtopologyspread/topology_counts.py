"""Matching pods per topology domain, kept across scheduling cycles for PodTopologySpread.

What one node contributes to a pod's spread constraints (its topology value and matching pods
per constraint, or that it does not count) depends on the node and on a key of everything else
(namespace, selectors, topology keys, inclusion policies). For each key (a few, least recently
used evicted) a :class:`Tally` holds every node's share and their sums per topology value. Each
cycle, only the nodes whose ``NodeInfo.generation`` changed since the last cycle are visited —
found by comparing the snapshot's generation column with the one the tally saw, in one vector
operation — so a cycle costs what changed, not the size of the cluster. A snapshot without
columns (a test's plain lister) is walked whole, every time.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Any

import numpy as np

from kubesched.framework.columns import NodeColumns, positions
from kubesched.framework.types import NodeInfo
from kubesched.plugins.helper import snapshot_columns

#: One node's share for one pod's constraints: per constraint ``(topologyValue, matchingPods)``,
#: or ``None`` where the node does not count for it; ``None`` as a whole when the node is skipped.
NodeCounts = tuple[tuple[str, int] | None, ...] | None


class Tally:
    """Per constraint: matching pods per topology value, and how many counted nodes have it
    (a value with none is no domain at all, and leaves the sums)."""

    __slots__ = ("columns", "generation", "shares", "sums", "nodes")

    def __init__(self, k: int, columns: NodeColumns | None = None) -> None:
        self.columns = columns
        #: The generation of each node (row) when its share was computed.
        self.generation: np.ndarray = np.empty(0, np.int64)
        self.shares: list[NodeCounts] = []
        self.sums: list[dict[str, int]] = [{} for _ in range(k)]
        self.nodes: list[dict[str, int]] = [{} for _ in range(k)]

    def add(self, shares: NodeCounts, sign: int) -> None:
        if shares is None:
            return
        for i, share in enumerate(shares):
            if share is None:
                continue
            value, n = share
            nodes = self.nodes[i]
            sums = self.sums[i]
            left = nodes.get(value, 0) + sign
            if left:
                nodes[value] = left
                sums[value] = sums.get(value, 0) + sign * n
            else:
                del nodes[value]
                del sums[value]

    def fill(self, nodes: Sequence[NodeInfo], compute: Callable[[NodeInfo], NodeCounts]) -> None:
        self.shares = [compute(ni) for ni in nodes]
        self.recount()

    def recount(self) -> None:
        """The sums again from every node's share, in node order."""
        for d in (*self.sums, *self.nodes):
            d.clear()
        for shares in self.shares:
            self.add(shares, 1)


def _values(shares: NodeCounts) -> tuple[str | None, ...] | None:
    """The domains a node's share counts in (not how many pods)."""
    if shares is None:
        return None
    return tuple(None if share is None else share[0] for share in shares)


class DomainCounts:
    """:class:`Tally` per key (see the module docstring)."""

    __slots__ = ("entries", "size")

    def __init__(self, size: int = 8) -> None:
        self.entries: dict[Hashable, Tally] = {}
        self.size = size

    def sums(
        self, key: Hashable, snapshot: Any, k: int, compute: Callable[[NodeInfo], NodeCounts]
    ) -> list[dict[str, int]]:
        """Per constraint, ``{topologyValue: matching pods}`` summed over every node of
        ``snapshot`` that counts. The dicts belong to the cache: copy before changing them."""
        nodes = snapshot.list()
        cols = snapshot_columns(snapshot)
        if cols is None:
            tally = Tally(k)
            tally.fill(nodes, compute)
            return tally.sums
        tally_or_none = self.entries.pop(key, None)
        if len(self.entries) >= self.size:
            del self.entries[next(iter(self.entries))]
        if tally_or_none is None or tally_or_none.columns is not cols:
            tally = Tally(k, cols)
            tally.fill(nodes, compute)
            tally.generation = cols.generation.copy()
        else:
            tally = tally_or_none
            seen = tally.generation
            changed = positions(cols.generation != seen)
            moved = False
            for r in changed.tolist():
                old = tally.shares[r]
                new = tally.shares[r] = compute(cols.node(r))
                moved = moved or _values(old) != _values(new)
                # The new share first: a domain the node stays in never drops out of the dicts.
                tally.add(new, 1)
                tally.add(old, -1)
            seen[changed] = cols.generation[changed]
            if moved:
                # A node left a domain or joined one: the dicts list domains in the order of
                # their first node, as a whole walk does, so that order is rebuilt.
                tally.recount()
        self.entries[key] = tally
        return tally.sums
