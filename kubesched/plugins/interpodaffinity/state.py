"""What InterPodAffinity's PreFilter and PreScore leave in the cycle state for Filter and Score."""

from __future__ import annotations

from collections.abc import Mapping
from typing import cast

import numpy as np

from kubesched.framework.columns import Categorical
from kubesched.framework.types import PodInfo
from kubesched.plugins.interpodaffinity.counts import Counts, bump, clone_counts
from kubesched.plugins.interpodaffinity.terms import ResolvedTerm, pod_matches_all_terms


class PreFilterState:
    """What Filter reads: the three count maps and the incoming pod's resolved terms."""

    __slots__ = (
        "existing_anti_affinity_counts",
        "affinity_counts",
        "anti_affinity_counts",
        "affinity_terms",
        "anti_affinity_terms",
        "pod",
        "namespace_labels",
        "matches_own_affinity",
        "shared",
        "_tables",
    )

    def __init__(
        self,
        pod: PodInfo,
        affinity_terms: list[ResolvedTerm],
        anti_affinity_terms: list[ResolvedTerm],
        namespace_labels: Mapping[str, str],
    ) -> None:
        self.pod = pod
        self.affinity_terms = affinity_terms
        self.anti_affinity_terms = anti_affinity_terms
        self.namespace_labels = namespace_labels
        self.existing_anti_affinity_counts: Counts = {}
        self.affinity_counts: Counts = {}
        self.anti_affinity_counts: Counts = {}
        self.matches_own_affinity = pod_matches_all_terms(affinity_terms, pod)
        #: The count maps are the cross-cycle sums' own: copied before the first change.
        self.shared = True
        self._tables: dict[tuple[int, str], np.ndarray] = {}

    def positive(self, which: int, key: str, col: Categorical, rows: np.ndarray) -> np.ndarray:
        """Whether each row's value of ``key`` (``col``) has a count above zero in map ``which``
        (0 existing anti-affinity, 1 affinity, 2 anti-affinity); the table by code is built once
        per cycle and map."""
        table = self._tables.get((which, key))
        if table is None or len(table) != len(col.values) + 1:
            maps = (self.existing_anti_affinity_counts, self.affinity_counts, self.anti_affinity_counts)
            table = self._tables[(which, key)] = col.by_code(maps[which].get(key) or {}) > 0
        return cast("np.ndarray", table[col.codes[rows]])

    def clone(self) -> PreFilterState:
        c = PreFilterState.__new__(PreFilterState)
        c.pod = self.pod
        c.affinity_terms = self.affinity_terms
        c.anti_affinity_terms = self.anti_affinity_terms
        c.namespace_labels = self.namespace_labels
        c.matches_own_affinity = self.matches_own_affinity
        c.shared = False
        c._tables = {}
        c.existing_anti_affinity_counts = clone_counts(self.existing_anti_affinity_counts)
        c.affinity_counts = clone_counts(self.affinity_counts)
        c.anti_affinity_counts = clone_counts(self.anti_affinity_counts)
        return c

    def update_with_pod(self, other: PodInfo, node_labels: Mapping[str, str], delta: int) -> None:
        """Account for ``other`` appearing on (``delta=1``) or leaving (``-1``) a node."""
        if self.shared:
            self.existing_anti_affinity_counts = clone_counts(self.existing_anti_affinity_counts)
            self.affinity_counts = clone_counts(self.affinity_counts)
            self.anti_affinity_counts = clone_counts(self.anti_affinity_counts)
            self.shared = False
        self._tables = {}
        incoming = self.pod
        ns_labels = self.namespace_labels
        for t in other.required_anti_affinity:
            if t.matches(incoming, ns_labels):
                bump(self.existing_anti_affinity_counts, node_labels, t.topology_key, delta)
        if pod_matches_all_terms(self.affinity_terms, other):
            for rt in self.affinity_terms:
                bump(self.affinity_counts, node_labels, rt.topology_key, delta)
        for rt in self.anti_affinity_terms:
            if rt.matches(other):
                bump(self.anti_affinity_counts, node_labels, rt.topology_key, delta)


class PreScoreState:
    """``{topologyKey: {topologyValue: score}}`` accumulated in PreScore, read by Score."""

    __slots__ = ("topology_score",)

    def __init__(self, topology_score: Counts) -> None:
        self.topology_score = topology_score

    def clone(self) -> PreScoreState:
        # Never modified after PreScore.
        return self
