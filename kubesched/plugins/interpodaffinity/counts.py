"""Topology counts for InterPodAffinity, and their sums kept across cycles.

Counts are nested dicts ``{topologyKey: {topologyValue: count}}`` so Filter and Score touch only
the keys that matter, never every label of the node. PreFilter and PreScore sum per-node
contributions; :class:`NodeSums` keeps those sums across cycles, keyed by everything a
contribution depends on besides the node itself, and walks again only the nodes whose
``NodeInfo.generation`` changed since the last cycle.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any

import numpy as np

from kubesched.framework.columns import KeptCounts, NodeColumns, positions
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.plugins.helper import snapshot_columns
from kubesched.plugins.interpodaffinity.terms import ResolvedTerm

Counts = dict[str, dict[str, int]]


def bump(counts: Counts, labels: Mapping[str, str], key: str, delta: int) -> None:
    value = labels.get(key)
    if value is None:
        return
    by_value = counts.get(key)
    if by_value is None:
        by_value = counts[key] = {}
    n = by_value.get(value, 0) + delta
    if n == 0:
        # Counts go down on RemovePod; a zero entry must vanish so that "no pod matches
        # anywhere" (an empty map) stays detectable.
        by_value.pop(value, None)
        if not by_value:
            del counts[key]
    else:
        by_value[value] = n


def flatten(counts: Counts) -> dict[tuple[str, str], int]:
    """``{(topologyKey, topologyValue): count}``: upstream's shape, for tests and debugging."""
    return {(k, v): n for k, vals in counts.items() for v, n in vals.items()}


def clone_counts(counts: Counts) -> Counts:
    return {k: dict(v) for k, v in counts.items()}


#: One node's share of one or more count maps: ``(map, topologyKey, topologyValue, sum, touches)``,
#: ``map`` the index of the map it adds to and ``touches`` how many increments (of any size, zero
#: included) made up ``sum``.
Contribution = tuple[tuple[int, str, str, int, int], ...]
NOTHING: Contribution = ()


class Tally:
    """Increments gathered for one node, folded per map and topology pair."""

    __slots__ = ("acc",)

    def __init__(self) -> None:
        self.acc: dict[tuple[int, str, str], list[int]] = {}

    def add(self, labels: Mapping[str, str], key: str, delta: int, times: int = 1, into: int = 0) -> None:
        value = labels.get(key)
        if value is None:
            return
        slot = self.acc.get((into, key, value))
        if slot is None:
            self.acc[(into, key, value)] = [delta * times, times]
        else:
            slot[0] += delta * times
            slot[1] += times

    def result(self) -> Contribution:
        if not self.acc:
            return NOTHING
        return tuple((i, k, v, n, t) for (i, k, v), (n, t) in self.acc.items())


class NodeSums:
    """Per-node contributions summed over a node list, kept up to date across cycles.

    ``refresh`` recomputes only the nodes whose generation differs from the one their stored
    contribution was computed at, and drops nodes no longer listed; the result is the same maps
    a full walk would build. An entry exists once any increment touched it, even one summing
    to zero, as a full walk that adds into a fresh map would leave it.
    """

    __slots__ = ("per_node", "sums", "totals", "columns", "generation")

    def __init__(self, maps: int) -> None:
        self.per_node: dict[str, tuple[int, Contribution]] = {}
        #: ``sums`` without the touch counts: what callers read (and must not change).
        self.totals: list[Counts] = [{} for _ in range(maps)]
        #: The snapshot columns last seen, and the generation of each of their rows then.
        self.columns: NodeColumns | None = None
        self.generation: np.ndarray = np.empty(0, np.int64)
        #: One ``{topologyKey: {topologyValue: [sum, touches]}}`` per map.
        self.sums: list[dict[str, dict[str, list[int]]]] = [{} for _ in range(maps)]

    def _apply(self, contribution: Contribution, sign: int) -> None:
        for index, key, value, n, touches in contribution:
            sums = self.sums[index]
            totals = self.totals[index]
            by_value = sums.get(key)
            if by_value is None:
                by_value = sums[key] = {}
                totals[key] = KeptCounts()
            slot = by_value.get(value)
            if slot is None:
                by_value[value] = [n, touches]
                totals[key][value] = n
                continue
            slot[0] += sign * n
            slot[1] += sign * touches
            if slot[1] == 0:
                del by_value[value]
                del totals[key][value]
                if not by_value:
                    del sums[key]
                    del totals[key]
            else:
                totals[key][value] = slot[0]

    def refresh(self, nodes: Sequence[NodeInfo], compute: Callable[[NodeInfo], Contribution]) -> list[Counts]:
        """The sums over ``nodes``, one map per map index: kept up to date by later calls, so
        the caller must copy before changing them."""
        per_node = self.per_node
        for ni in nodes:
            entry = per_node.get(ni.name)
            generation = ni.generation
            if entry is not None:
                if entry[0] == generation:
                    continue
                self._apply(entry[1], -1)
            contribution = compute(ni)
            per_node[ni.name] = (generation, contribution)
            if contribution:
                self._apply(contribution, 1)
        if len(per_node) != len(nodes):
            listed = {ni.name for ni in nodes}
            for name in [n for n in per_node if n not in listed]:
                self._apply(per_node.pop(name)[1], -1)
        return self.totals

    def refresh_snapshot(
        self,
        snapshot: Any,
        nodes: Callable[[], Sequence[NodeInfo]],
        listed: Callable[[NodeInfo], bool],
        compute: Callable[[NodeInfo], Contribution],
    ) -> list[Counts]:
        """:meth:`refresh` over ``nodes()``, the nodes of ``snapshot`` for which ``listed`` holds.
        With the snapshot's columns, the nodes changed since the last call are found by
        comparing generations in one vector operation, and only those are visited."""
        cols = snapshot_columns(snapshot)
        if cols is None:
            return self.refresh(nodes(), compute)
        if self.columns is not cols:
            totals = self.refresh(nodes(), compute)
            self.columns = cols
            self.generation = cols.generation.copy()
            return totals
        per_node = self.per_node
        changed = positions(cols.generation != self.generation)
        for r in changed.tolist():
            ni = cols.node(r)
            entry = per_node.pop(ni.name, None)
            if entry is not None:
                self._apply(entry[1], -1)
            if listed(ni):
                contribution = compute(ni)
                per_node[ni.name] = (ni.generation, contribution)
                if contribution:
                    self._apply(contribution, 1)
        self.generation[changed] = cols.generation[changed]
        return self.totals


def every_node(ni: NodeInfo) -> bool:
    return True


def has_anti_affinity_pods(ni: NodeInfo) -> bool:
    return bool(ni.pods_with_required_anti_affinity)


def has_affinity_pods(ni: NodeInfo) -> bool:
    return bool(ni.pods_with_affinity)


class SumsCache:
    """A few :class:`NodeSums`, least recently used evicted, one per distinct key."""

    __slots__ = ("entries", "size", "maps")

    def __init__(self, maps: int = 1, size: int = 8) -> None:
        self.entries: dict[Hashable, NodeSums] = {}
        self.size = size
        self.maps = maps

    def get(self, key: Hashable) -> NodeSums:
        sums = self.entries.pop(key, None)
        if sums is None:
            sums = NodeSums(self.maps)
            if len(self.entries) >= self.size:
                del self.entries[next(iter(self.entries))]
        self.entries[key] = sums
        return sums


def terms_key(terms: Sequence[ResolvedTerm]) -> tuple[Hashable, ...]:
    """Everything of ``terms`` that decides which pods they match, and where they count."""
    return tuple(
        (
            t.namespaces,
            t.all_namespaces,
            None if t.selector is None else t.selector.requirements,
            t.topology_key,
            t.weight,
        )
        for t in terms
    )


def pod_key(pod: PodInfo, ns_labels: Mapping[str, str]) -> tuple[Hashable, ...]:
    """Everything of ``pod`` an existing pod's term looks at: namespace, labels, namespace labels."""
    return (pod.namespace, tuple(sorted(pod.labels.items())), tuple(sorted(ns_labels.items())))
