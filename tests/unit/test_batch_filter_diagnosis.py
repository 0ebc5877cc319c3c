"""The statuses a batch Filter gives for a pod's diagnosis are the per-node path's, node for node.

A pod that fits nowhere asks :meth:`BatchFilterResult.rejected_columns` for every node of the
cluster; it takes each plugin's bulk statuses whole where it can, and keeps them per position
where a bulk form leaves nodes to the per-node ``filter``. Whatever the plugins do — bulk forms
missing, declining, raising, answering short, letting nodes through, sharing Statuses or giving
each node its own, codes that become errors — the names, the statuses and the distinct statuses
must be those of the plain path: each node's first rejecting plugin's ``filter``, judged by
``filter_verdict``.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np
from fuzzing import fuzz_settings
from hypothesis import example, given
from hypothesis import strategies as st

from kubesched.backend.cache import Cache, Snapshot
from kubesched.framework.columns import NodeBatch
from kubesched.framework.interface import CycleState
from kubesched.framework.status import Code, Status, StatusTable
from kubesched.framework.types import PodInfo
from kubesched.runtime.batch_filter import filter_verdict, run_filter_batch
from kubesched.testing import make_node, make_pod

#: What a plugin's filter says of a node: pass, or one of a few reasons (with a code).
VERDICTS = [
    None,
    (Code.UNSCHEDULABLE, "too small"),
    (Code.UNSCHEDULABLE, "too busy"),
    (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "wrong kind"),
    (Code.ERROR, "broken"),
]
#: How a plugin's bulk form behaves.
#: "table": the shared statuses as a StatusTable (a row per verdict, a row number per node).
BULK = ["none", "shared", "own", "table", "declines", "raises", "short", "lets-through"]


def make_plugin(table: list[int], bulk: str, names: list[str]) -> tuple[Any, Any, Any]:
    """``(filter, filter_nodes, filter_statuses)`` of a plugin whose verdict on node ``n<i>`` is
    ``VERDICTS[table[i]]``; ``names``: the node name of each row of the columns."""

    def status_of(i: int) -> Status | None:
        verdict = VERDICTS[table[i]]
        return None if verdict is None else Status(verdict[0], verdict[1])

    def number(row: int) -> int:
        return int(names[row][1:])

    #: One Status per verdict, shared by the nodes rejected alike (as the in-tree bulk forms do).
    shared = [status_of_verdict(k) for k in range(len(VERDICTS))]

    def filter_(state: CycleState, pod: PodInfo, node: Any) -> Status | None:
        return status_of(int(node.name[1:]))

    def filter_nodes(state: CycleState, pod: PodInfo, nodes: NodeBatch) -> np.ndarray:
        return np.array([VERDICTS[table[number(r)]] is None for r in nodes.rows.tolist()], bool)

    def filter_statuses(state: CycleState, pod: PodInfo, nodes: NodeBatch) -> Any:
        at = [number(r) for r in nodes.rows.tolist()]
        if bulk == "declines":
            return None
        if bulk == "raises":
            raise ValueError("kaput")
        if bulk == "short":
            return [status_of(i) for i in at][1:]
        if bulk == "lets-through":
            # Every other node wrongly let through: those are left to the per-node filter.
            return [None if j % 2 else shared[table[i]] for j, i in enumerate(at)]
        if bulk == "own":
            return [status_of(i) for i in at]
        if bulk == "table":
            return StatusTable(shared, np.array([table[i] for i in at], np.intp))
        return [shared[table[i]] for i in at]

    return filter_, filter_nodes, (None if bulk == "none" else filter_statuses)


def status_of_verdict(k: int) -> Status | None:
    verdict = VERDICTS[k]
    return None if verdict is None else Status(verdict[0], verdict[1])


def summary(status: Status | None) -> Any:
    return None if status is None else (status.code, tuple(status.reasons), status.plugin)


@st.composite
def cases(draw: st.DrawFn) -> tuple[int, list[tuple[list[int], str, bool]], list[int]]:
    n = draw(st.integers(1, 12))
    plugins = draw(
        st.lists(
            st.tuples(
                st.lists(st.sampled_from(range(len(VERDICTS))), min_size=n, max_size=n),
                # Mostly bulk forms that answer for every node: the path that takes lists whole.
                st.one_of(st.sampled_from(["shared", "own", "table"]), st.sampled_from(BULK)),
                st.one_of(st.just(True), st.booleans()),  # whether it has filter_nodes at all
            ),
            min_size=1,
            max_size=3,
        )
    )
    order = draw(st.permutations(list(range(n))))
    return n, plugins, order


@fuzz_settings(300)
@given(cases())
# Two plugins reject nodes, each its own (its list placed back at its nodes), each an error
# (the first error by node order is the second plugin's).
@example((4, [([1, 0, 2, 0], "own", True), ([0, 1, 0, 2], "own", True)], [0, 1, 2, 3]))
@example((4, [([0, 0, 4, 0], "shared", True), ([0, 4, 0, 1], "shared", True)], [0, 1, 2, 3]))
def test_rejected_columns_are_the_per_node_statuses(
    case: tuple[int, list[tuple[list[int], str, bool]], list[int]],
) -> None:
    n, specs, order = case
    cache = Cache()
    for i in range(n):
        cache.add_node(make_node(f"n{i}").obj())
    snapshot = Snapshot()
    cache.update_snapshot(snapshot)
    cols = snapshot.columns()
    rows = np.array([cols.index[f"n{i}"] for i in order], np.intp)
    fns = []
    for k, (table, bulk, batched) in enumerate(specs):
        filter_, filter_nodes, filter_statuses = make_plugin(table, bulk, list(cols.names))
        fns.append((f"P{k}", filter_, filter_nodes if batched else None, filter_statuses))
    pod = PodInfo(make_pod("p").obj())
    result = run_filter_batch(fns, CycleState(), pod, NodeBatch(cols, rows))

    # The plain path: each node's first rejecting plugin's filter, judged.
    plain: list[Status | None] = []
    for r in rows.tolist():
        status = None
        for name, filter_, _, _ in fns:
            got = filter_(CycleState(), pod, cols.node(r))
            if got is not None:
                status = filter_verdict(name, got)
                break
        plain.append(status)
    assert result.ok.tolist() == [s is None for s in plain]
    failed = np.flatnonzero(~result.ok)
    names, statuses, distinct = result.rejected_columns(failed)
    assert names == [cols.names[int(rows[j])] for j in failed.tolist()]
    assert [summary(s) for s in statuses] == [summary(plain[j]) for j in failed.tolist()]
    # Each distinct status once; the first error among them is the first by node order.
    assert sorted(map(id, distinct)) == sorted(set(map(id, statuses)))
    errors = [s for s in statuses if s.code is Code.ERROR]
    if errors:
        assert next(s for s in distinct if s.code is Code.ERROR) is errors[0]
    # The pairs form says the same, and asking again gives the same objects.
    assert [(a, summary(b)) for a, b in result.rejected(failed.tolist())] == list(
        zip(names, map(summary, statuses), strict=True)
    )
    assert [result.status(j) for j in failed.tolist()] == statuses
    # Where the counts come with them, they are each distinct status's nodes.
    again = run_filter_batch(fns, CycleState(), pod, NodeBatch(cols, rows))
    names_c, statuses_c, distinct_c, counts = again.rejected_counted(failed)
    assert names_c == names
    assert [summary(s) for s in statuses_c] == [summary(s) for s in statuses]
    if counts is not None:
        assert len(counts) == len(distinct_c)
        assert sorted((id(s), n) for s, n in zip(distinct_c, counts, strict=True)) == sorted(
            Counter(map(id, statuses_c)).items()
        )
    elif len(failed) >= 2 and not errors and all(b in ("shared", "own", "table") and f for _, b, f in specs):
        raise AssertionError("bulk forms answered every node, yet no counts came with them")
