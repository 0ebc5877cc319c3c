"""Filter over a batch of nodes: every Filter plugin of a profile, each on the nodes the plugins
before it let through, in one call per plugin where the plugin has ``filter_nodes``.

The per-node contract is unchanged: a node passes when every plugin's ``filter`` would return
success, in profile order, and a rejected node's Status is the one the first rejecting plugin's
``filter`` returns for it. A batch plugin only says *whether* each node passes; the Status of a
rejected node is asked of its per-node ``filter`` when someone needs it (a failed pod's
diagnosis, a recorded trace, a sampled metric), which for a scheduled pod is never. A plugin
with ``filter_statuses`` gives those statuses for many nodes in one call (a pod that fits
nowhere needs one per node).
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Callable, Sequence
from itertools import filterfalse
from typing import Any

import numpy as np

from kubesched.framework.columns import NodeBatch
from kubesched.framework.interface import CycleState
from kubesched.framework.status import Code, Status, StatusTable
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.runtime.calls import plugin_error

log = logging.getLogger(__name__)

#: ``(name, filter, filter_nodes or None, filter_statuses or None)`` of each Filter plugin, in
#: profile order.
FilterFns = Sequence[tuple[str, Callable[..., Any], Callable[..., Any] | None, Callable[..., Any] | None]]


def filter_verdict(plugin: str, status: Status) -> Status:
    """A non-success Filter status: Unschedulable(AndUnresolvable) goes on as it is (credited to
    ``plugin``); any other code becomes an error naming the plugin."""
    status.plugin = status.plugin or plugin
    if status.code not in (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE):
        return Status.as_error(f'running "{plugin}" filter plugin: {status.message()}', plugin)
    return status


class BatchFilterResult:
    """What Filter decided for each node of a batch (positions are the batch's)."""

    __slots__ = ("ok", "rejector", "statuses", "_fns", "_state", "_pod", "_batch")

    def __init__(self, fns: FilterFns, state: CycleState, pod: PodInfo, batch: NodeBatch) -> None:
        n = len(batch)
        #: Whether the node passed every Filter plugin.
        self.ok = np.empty(n, bool)
        self.ok.fill(True)
        #: The index in ``fns`` of the plugin that rejected the node first; -1 where it passed.
        self.rejector = np.empty(n, np.int16)
        self.rejector.fill(-1)
        #: Statuses already known: from plugins that ran node by node, and errors.
        self.statuses: dict[int, Status] = {}
        self._fns = fns
        self._state = state
        self._pod = pod
        self._batch = batch

    def rejected(self, positions: Sequence[int]) -> list[tuple[str, Status]]:
        """``(node name, status)`` of each rejected node at ``positions``."""
        names, statuses, _ = self.rejected_columns(positions)
        return list(zip(names, statuses, strict=True))

    def rejected_columns(self, positions: Sequence[int] | np.ndarray) -> tuple[list[str], list[Status], list[Status]]:
        """What :meth:`rejected` pairs, as lists: the names and the statuses of the rejected
        nodes at ``positions``, and the distinct statuses among them (each once; in the order
        they first appear where one is an error, in no set order otherwise).

        A pod that fits nowhere asks this for every node of the cluster, and nodes rejected
        alike share one Status: where each rejecting plugin's bulk form answers for all its
        nodes, its list is taken whole (no Python statement per node, no status kept per
        position); otherwise statuses are kept per position and what no bulk form gave is
        asked of the per-node ``filter``, in the order of ``positions``."""
        names, statuses, distinct, _ = self.rejected_counted(positions)
        return names, statuses, distinct

    def rejected_counted(
        self, positions: Sequence[int] | np.ndarray
    ) -> tuple[list[str], list[Status], list[Status], list[int] | None]:
        """:meth:`rejected_columns` and, where the bulk forms answered whole, how many of the
        nodes have each distinct status (aligned with it; ``None`` otherwise) — what a
        diagnosis's message counts, known here without another walk over the nodes."""
        at = np.asarray(positions, dtype=np.intp)
        deferred = self.rejected_deferred(at)
        if deferred is not None:
            distinct, counts, listed = deferred
            names, statuses = listed()
            return names, statuses, distinct, counts
        return *self.rejected_node_by_node(at), None

    def rejected_node_by_node(
        self, positions: Sequence[int] | np.ndarray
    ) -> tuple[list[str], list[Status], list[Status]]:
        """:meth:`rejected_columns` where :meth:`rejected_deferred` did not answer: each node's
        status kept per position (see :meth:`_per_position`), the distinct ones in the order they
        first appear."""
        at = np.asarray(positions, dtype=np.intp)
        rows = self._batch.rows[at].tolist()
        names = list(map(self._batch.columns.names.__getitem__, rows))
        statuses = self._per_position(at, rows)
        distinct = list(dict(zip(map(id, statuses), statuses, strict=True)).values())
        return names, statuses, distinct

    def rejected_deferred(
        self, positions: Sequence[int] | np.ndarray
    ) -> tuple[list[Status], list[int], Callable[[], tuple[list[str], list[Status]]]] | None:
        """Where every rejecting plugin's bulk form answers for all the nodes at ``positions``
        (none of their statuses known yet, none an error): the distinct statuses, how many of
        the nodes have each, and a callable listing the nodes' names and statuses when asked —
        a pod that fits nowhere mostly needs only the counts (its message). ``None`` otherwise
        (:meth:`rejected_counted` answers)."""
        if self.statuses:
            return None
        at = np.asarray(positions, dtype=np.intp)
        whole = self._whole(at)
        if whole is None:
            return None
        parts, distinct, counts = whole
        if any(status.code is Code.ERROR for status in distinct):
            # Which error ends the cycle is the first among the nodes: the per-position path.
            for sel, column in parts:
                self.statuses.update(zip(at[sel].tolist() if sel is not None else at.tolist(), _listed(column)))
            return None
        rows = self._batch.rows[at]
        names = self._batch.columns.names  # a snapshot's columns never rename their rows

        def listed() -> tuple[list[str], list[Status]]:
            if len(parts) == 1:
                statuses = _listed(parts[0][1])
            else:
                out = np.empty(len(rows), dtype=object)
                for sel, column in parts:
                    assert sel is not None
                    out[sel] = np.fromiter(_listed(column), dtype=object, count=len(sel))
                statuses = out.tolist()
            return list(map(names.__getitem__, rows.tolist())), statuses

        return distinct, counts, listed

    def _whole(self, at: np.ndarray) -> tuple[list[tuple[np.ndarray | None, _Column]], list[Status], list[int]] | None:
        """The statuses of the nodes at ``at`` (none known yet), each rejecting plugin's bulk
        answer taken whole — as ``(positions among at, or None for all; column)`` parts — the
        distinct ones and how many nodes have each; ``None`` when some plugin's bulk form leaves
        a node to its per-node ``filter`` (what it did answer is kept per position)."""
        if len(at) < 2:
            return None
        rejector = self.rejector[at]
        if rejector.min() < 0:
            return None  # a node no plugin of the batch rejected (a nominated pod's doing)
        # The plugins that rejected them, in profile order (np.unique costs more for so few).
        plugins = np.flatnonzero(np.bincount(rejector)).tolist()
        if len(plugins) == 1:
            got = self._bulk_plugin(plugins[0], at)
            return None if got is None else ([(None, got[0])], got[1], got[2])
        distinct: list[Status] = []
        counts: list[int] = []
        answered: list[tuple[np.ndarray | None, _Column]] = []
        for k in plugins:
            sel = np.flatnonzero(rejector == k)
            got = self._bulk_plugin(k, at[sel])
            if got is None:
                # Kept per position, the answers so far are not asked for again.
                for done, column in answered:
                    assert done is not None
                    self.statuses.update(zip(at[done].tolist(), _listed(column), strict=True))
                return None
            answered.append((sel, got[0]))
            distinct += got[1]
            counts += got[2]
        return answered, distinct, counts

    def _per_position(self, at: np.ndarray, rows: list[int]) -> list[Status]:
        """The statuses of the nodes at ``at``, kept per position: those known, then the bulk
        forms' answers, then each node's per-node ``filter``."""
        listed = at.tolist()
        known = self.statuses
        self._bulk(list(filterfalse(known.__contains__, listed)) if known else listed)
        if all(map(known.__contains__, listed)):
            return list(map(known.__getitem__, listed))
        cols = self._batch.columns
        statuses: list[Status] = []
        for pos, row in zip(listed, rows, strict=True):
            status = known.get(pos)
            if status is None:
                status = self._status(pos, int(self.rejector[pos]), cols.node(row))
            statuses.append(status)
        return statuses

    def status(self, pos: int) -> Status | None:
        """The node's Filter status (None: it passed), as the per-node path returns it."""
        if self.ok[pos]:
            return None
        known = self.statuses.get(pos)
        if known is not None:
            return known
        return self._status(pos, int(self.rejector[pos]), self._batch[pos])

    def _bulk(self, positions: Sequence[int]) -> None:
        """Fill in, from each rejecting plugin's ``filter_statuses``, the statuses of the nodes
        at ``positions``; what a plugin cannot answer is left to its per-node ``filter``."""
        if len(positions) < 2:
            return
        at = np.asarray(positions, dtype=np.intp)
        rejector = self.rejector[at]
        for k in np.unique(rejector).tolist():
            where = at[rejector == k]
            got = self._bulk_plugin(k, where)
            if got is not None:
                self.statuses.update(zip(where.tolist(), _listed(got[0]), strict=True))

    def _bulk_plugin(self, k: int, where: np.ndarray) -> tuple[_Column, list[Status], list[int]] | None:
        """Plugin ``k``'s bulk statuses of the nodes at ``where`` (all of which it rejected),
        each judged (:func:`filter_verdict`), the distinct ones and how many of the nodes have
        each; ``None`` when it has no bulk form or its form cannot answer for every one of
        them, having kept per position the answers it did give (a node it lets through is left
        to its per-node form: the contract)."""
        name, _, _, bulk = self._fns[k]
        if bulk is None:
            return None
        try:
            statuses = bulk(self._state, self._pod, NodeBatch(self._batch.columns, self._batch.rows[where]))
        except Exception:  # the per-node filter answers instead
            log.debug("%s: filter_statuses failed; asking node by node", name, exc_info=True)
            return None
        if statuses is None or len(statuses) != len(where):
            return None
        if isinstance(statuses, StatusTable):
            got = _judged_table(name, statuses)
            if got is not None:
                return got
            statuses = list(statuses)
        # Bulk forms share one Status among nodes rejected alike: judge each one once.
        ids = list(map(id, statuses))
        distinct = dict(zip(ids, statuses, strict=True))
        had_none = distinct.pop(id(None), 0) is None
        verdicts: dict[int, Status | None] = {
            key: None if status.code is Code.SUCCESS else filter_verdict(name, status)
            for key, status in distinct.items()
        }
        if not had_none and all(verdict is not None for verdict in verdicts.values()):
            counts = Counter(ids)
            tally = [counts[key] for key in distinct]
            if all(verdicts[key] is status for key, status in distinct.items()):
                return list(statuses), list(distinct.values()), tally
            rejected: dict[int, Status] = {key: v for key, v in verdicts.items() if v is not None}
            # Each distinct status judged once: the judged ones are as distinct, in that order.
            return list(map(rejected.__getitem__, ids)), list(rejected.values()), tally
        known = self.statuses
        for pos, key in zip(where.tolist(), ids, strict=True):
            verdict = verdicts.get(key)
            if verdict is not None:
                known[pos] = verdict
        return None

    def _status(self, pos: int, k: int, node: NodeInfo) -> Status:
        name, fn, _, _ = self._fns[k]
        try:
            status = fn(self._state, self._pod, node)
        except Exception as exc:  # noqa: BLE001
            status = plugin_error("filter", name, exc)
        if status is None or status.code is Code.SUCCESS:
            # The batch form and the per-node form disagree: the per-node form is the contract.
            status = Status.as_error(
                f'running "{name}" filter plugin: filter_nodes rejected node {node.name!r}, filter accepted it', name
            )
        else:
            status = filter_verdict(name, status)
        self.statuses[pos] = status
        return status

    def trace(self, pos: int) -> dict[str, str]:
        """Each plugin that ran on the node: ``"passed"``, or the rejecting one's reason."""
        skip = self._state.skip_filter_plugins
        last = int(self.rejector[pos])
        out: dict[str, str] = {}
        for k, (name, _, _, _) in enumerate(self._fns):
            if skip and name in skip:
                continue
            if k == last:
                status = self.status(pos)
                out[name] = status.message() if status is not None else "passed"
                break
            out[name] = "passed"
        return out


def _judged_table(name: str, statuses: StatusTable) -> tuple[_TableColumn, list[Status], list[int]] | None:
    """A :class:`StatusTable` judged (:func:`filter_verdict`): each node's status, the distinct
    ones (the table's rows in use, in table order) and how many nodes have each, counted at
    once; ``None`` where a row in use is a success, which the per-node form must answer."""
    table = statuses.table
    index = np.asarray(statuses.index, dtype=np.intp)
    used = np.bincount(index, minlength=len(table))
    rows = np.flatnonzero(used).tolist()
    judged: dict[int, Status] = {}
    for r in rows:
        status = table[r]
        if status is None or status.code is Code.SUCCESS:
            return None
        judged[r] = filter_verdict(name, status)
    return _TableColumn(judged, index), list(judged.values()), used[rows].tolist()


class _TableColumn:
    """A bulk answer's statuses in table form — each node's row of a few judged statuses —
    listed node by node only when asked (:meth:`listed`)."""

    __slots__ = ("judged", "index")

    def __init__(self, judged: dict[int, Status], index: np.ndarray) -> None:
        self.judged = judged
        self.index = index

    def listed(self) -> list[Status]:
        return list(map(self.judged.__getitem__, self.index.tolist()))


#: A bulk answer's statuses, node by node: a list, or a table listed when asked.
_Column = list[Status] | _TableColumn


def _listed(column: _Column) -> list[Status]:
    return column if isinstance(column, list) else column.listed()


def run_filter_batch(
    fns: FilterFns, state: CycleState, pod: PodInfo, batch: NodeBatch, observer: Any = None
) -> BatchFilterResult:
    """Run every (non-skipped) Filter plugin over ``batch``; ``observer`` (sampled cycles only)
    gets one ``plugin_execution`` per node and plugin, as the per-node path reports them."""
    result = BatchFilterResult(fns, state, pod, batch)
    ok = result.ok
    skip = state.skip_filter_plugins
    live = np.arange(len(batch))
    for k, (name, fn, batch_fn, _) in enumerate(fns):
        if skip and name in skip:
            continue
        if not len(live):
            break
        sub = batch if len(live) == len(batch) else NodeBatch(batch.columns, batch.rows[live])
        t0 = time.perf_counter() if observer is not None else 0.0
        passed = _batch_verdicts(name, batch_fn, state, pod, sub) if batch_fn is not None else None
        if passed is None:
            passed = np.ones(len(live), bool)
            for j, node in enumerate(sub):
                try:
                    status = fn(state, pod, node)
                except Exception as exc:  # noqa: BLE001
                    status = plugin_error("filter", name, exc)
                if status is not None and status.code is not Code.SUCCESS:
                    passed[j] = False
                    result.statuses[int(live[j])] = filter_verdict(name, status)
        everywhere = _all(passed)
        if not everywhere:
            rejected = live[~passed]
            ok[rejected] = False
            result.rejector[rejected] = k
        if observer is not None:
            per_call = (time.perf_counter() - t0) / len(live)
            for j in range(len(live)):
                label = "Success" if passed[j] else _label(result.status(int(live[j])))
                observer.plugin_execution(name, "Filter", label, per_call)
        if not everywhere:
            live = live[passed]
    return result


#: Whether every element is true, straight from the ufunc (``ndarray.all`` wraps it in Python).
_all = np.logical_and.reduce


def _batch_verdicts(
    name: str, batch_fn: Callable[..., Any], state: CycleState, pod: PodInfo, nodes: NodeBatch
) -> np.ndarray | None:
    """A plugin's ``filter_nodes`` as one bool per node, or ``None`` — it declined, raised, or
    answered for another number of nodes — to have its per-node ``filter`` decide (and report
    any error, node by node)."""
    try:
        verdicts = batch_fn(state, pod, nodes)
    except Exception:
        log.debug("%s: filter_nodes failed; filtering node by node", name, exc_info=True)
        return None
    if verdicts is None:
        return None
    passed = np.asarray(verdicts, dtype=bool)
    if passed.shape != (len(nodes),):
        log.warning(
            "%s: filter_nodes returned %s verdicts for %d nodes; filtering node by node", name, passed.shape, len(nodes)
        )
        return None
    return passed


def _label(status: Status | None) -> str:
    return "Success" if status is None else status.code.upstream_name


def rows_of(nodes: Sequence[NodeInfo], index: dict[str, int]) -> np.ndarray:
    """Positions of ``nodes`` in the columns whose name index is ``index``."""
    return np.fromiter((index[ni.name] for ni in nodes), dtype=np.intp, count=len(nodes))
