"""Node selectors matched against a whole :class:`NodeBatch` at once.

Each requirement is evaluated once per distinct value of its label (with the very predicate the
per-node :meth:`NodeSelectorTerm.matches` uses), then looked up by code for every node; the
verdict tables are kept per label, so identical pods pay only for the lookups.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial

import numpy as np

from kubesched.framework.columns import Array, NodeBatch
from kubesched.framework.selectors import NodeSelector, NodeSelectorTerm, requirement_matches


def term_mask(term: NodeSelectorTerm, batch: NodeBatch) -> Array:
    """Whether each node matches ``term`` (its requirements ANDed; an empty term matches none)."""
    n = len(batch)
    if term.empty:
        return np.zeros(n, bool)
    cols = batch.columns
    rows = batch.rows
    ok = np.ones(n, bool)
    for key, op, values in term.labels:
        col = cols.labels(key)
        ok &= col.mask(
            rows, partial(requirement_matches, op, values), requirement_matches(op, values, None), (op, values)
        )
    for _key, op, values in term.fields:
        inside = np.zeros(n, bool)
        for name in values:
            row = cols.index.get(name)
            if row is not None:
                inside |= rows == row
        ok &= inside if op == "In" else ~inside
    return ok


def node_selector_mask(selector: NodeSelector, batch: NodeBatch) -> Array:
    """Whether each node matches any term of ``selector``."""
    ok = np.zeros(len(batch), bool)
    for term in selector.terms:
        ok |= term_mask(term, batch)
    return ok


def label_map_mask(selector: Mapping[str, str], batch: NodeBatch) -> Array:
    """Whether each node has every ``key: value`` of ``selector`` (``spec.nodeSelector``)."""
    ok = np.ones(len(batch), bool)
    for key, value in selector.items():
        col = batch.columns.labels(key)
        code = col.code_of(value)
        if code is None:
            return np.zeros(len(batch), bool)
        ok &= col.codes[batch.rows] == code
    return ok
