"""What PodTopologySpread's PreFilter and PreScore leave in the cycle state, and the arithmetic
of its scores."""

from __future__ import annotations

import math

from kubesched.plugins.podtopologyspread.constraints import Constraint

MAX_INT32 = 2**31 - 1


class CriticalPaths:
    """The two topology values with the fewest matching pods, as upstream keeps them.

    ``paths[0]`` always holds the minimum; ``paths[1]`` is not guaranteed to be the second
    minimum after incremental updates (preemption evaluates each node on its own copy).
    """

    __slots__ = ("v0", "n0", "v1", "n1")

    def __init__(self, v0: str = "", n0: int = MAX_INT32, v1: str = "", n1: int = MAX_INT32) -> None:
        self.v0, self.n0, self.v1, self.n1 = v0, n0, v1, n1

    def update(self, value: str, num: int) -> None:
        if value == self.v0:
            self.n0 = num
        elif value == self.v1:
            self.n1 = num
        else:
            if num < self.n0:
                self.v1, self.n1 = self.v0, self.n0
                self.v0, self.n0 = value, num
            elif num < self.n1:
                self.v1, self.n1 = value, num
            return
        if self.n0 > self.n1:
            self.v0, self.n0, self.v1, self.n1 = self.v1, self.n1, self.v0, self.n0

    def pairs(self) -> tuple[tuple[str, int], tuple[str, int]]:
        return (self.v0, self.n0), (self.v1, self.n1)

    def copy(self) -> CriticalPaths:
        return CriticalPaths(self.v0, self.n0, self.v1, self.n1)

    def __repr__(self) -> str:
        return f"CriticalPaths({self.pairs()!r})"


class PreFilterState:
    """Hard constraints and, per constraint, matching pods per topology value.

    ``self_match[i]``: whether the incoming pod matches constraint ``i``'s selector (fixed for
    the cycle, so Filter does not re-evaluate it per node). ``shared``: ``counts`` are the
    cross-cycle cache's own dicts, copied before the first change (:meth:`own_counts`).
    """

    __slots__ = ("constraints", "self_match", "counts", "paths", "shared")

    def __init__(
        self,
        constraints: list[Constraint],
        self_match: list[int],
        counts: list[dict[str, int]],
        paths: list[CriticalPaths],
        shared: bool = False,
    ) -> None:
        self.constraints = constraints
        self.self_match = self_match
        self.counts = counts
        self.paths = paths
        self.shared = shared

    def min_match(self, i: int) -> int:
        """The global minimum for constraint ``i``: 0 while fewer domains than minDomains exist."""
        if len(self.counts[i]) < self.constraints[i].min_domains:
            return 0
        return self.paths[i].n0

    def own_counts(self) -> list[dict[str, int]]:
        """``counts``, safe to change."""
        if self.shared:
            self.counts = [dict(c) for c in self.counts]
            self.shared = False
        return self.counts

    def clone(self) -> PreFilterState:
        # Constraints never change during a cycle: share them.
        return PreFilterState(
            self.constraints, self.self_match, [dict(c) for c in self.counts], [p.copy() for p in self.paths]
        )


class PreScoreState:
    """Soft constraints, nodes left out of scoring, per-value counts and normalizing weights."""

    __slots__ = ("constraints", "ignored_nodes", "counts", "weights")

    def __init__(self) -> None:
        self.constraints: list[Constraint] = []
        self.ignored_nodes: set[str] = set()
        self.counts: list[dict[str, int]] = []
        self.weights: list[float] = []

    def clone(self) -> PreScoreState:
        return self


def topology_normalizing_weight(size: int) -> float:
    """Weight of a topology with ``size`` values: small topologies are not watered down by big ones."""
    return math.log(size + 2)


def score_for_count(count: int, max_skew: int, weight: float) -> float:
    """``maxSkew - 1`` is added so that a larger maxSkew tolerates more difference between domains."""
    return count * weight + (max_skew - 1)


def go_round(x: float) -> int:
    """Round half away from zero, as Go's ``math.Round``."""
    return int(math.floor(x + 0.5)) if x >= 0 else -int(math.floor(-x + 0.5))
