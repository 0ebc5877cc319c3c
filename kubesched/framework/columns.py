"""Columnar node state: what the hot plugins read of every node, as numpy arrays.

Row ``i`` of :class:`NodeColumns` describes ``snapshot.list()[i]``. The snapshot builds the
columns once and then rewrites only the rows of the nodes that changed (the same dirty nodes it
re-clones), so a scheduling cycle reads every node's allocatable, requested and non-zero
requested amounts, pod count, cordon, taints, labels and host-port use without touching a
NodeInfo. Batch plugins (``filter_nodes`` / ``score_nodes``) receive a :class:`NodeBatch`: the
positions of the nodes to evaluate in these columns, and the NodeInfos themselves for whatever
the columns do not hold.

Labels and taints are categorical: each distinct value (a label value of one key, a node's whole
taint list) gets an integer code, and a plugin evaluates its predicate once per distinct value,
then indexes the verdicts by code (``table[codes]``). Few distinct values, many nodes: the
per-node cost is one array lookup, and the predicate is the very function the per-node path calls.

Amounts are int64. An amount of 2**52 or more (no real node has one) makes :attr:`NodeColumns.exact`
false: Python's integers and float division would then differ from int64 and float64, so batch
plugins leave such clusters to their per-node form.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from typing import Any, overload

import numpy as np

from kubesched.framework.types import NodeInfo

#: Amounts at or above this make the columns inexact (sums stay below 2**53, products below 2**63).
EXACT_LIMIT = 2**52

#: The code of a node without the label (``label_codes``) and of a node without taints.
MISSING = -1
NO_TAINTS = 0

Array = np.ndarray


def positions(mask: Array) -> Array:
    """The flat indices where ``mask`` is true (non-zero): ``np.flatnonzero(mask)`` for an
    array, without the two Python-level wrappers numpy goes through first (some 0.6 us a call,
    several calls in each scheduling cycle)."""
    return mask.ravel().nonzero()[0]


def _taint_key(taints: Sequence[Mapping[str, Any]]) -> Any:
    """A hashable identity of a taint list (the order matters: the first untolerated taint is
    the one reported). Values keep their type: ``null`` and ``"None"`` are different taints."""
    return tuple(json.dumps(t, sort_keys=True, default=repr) for t in taints)


class KeptCounts(dict[Any, int]):
    """A ``{value: count}`` map kept across cycles (a plugin's running sums), that keeps the
    table :meth:`Categorical.by_code` last made of it and the values set or deleted since: the
    next table redoes those alone. Any other change (``pop``, ``update``, ...) drops the table."""

    __slots__ = ("_changed", "_table", "_of", "_dtype", "_coded")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._changed: set[Any] = set()
        self._table: Array | None = None
        self._of: Categorical | None = None
        self._dtype: Any = None
        #: How many of the column's codes the table covers.
        self._coded = 0

    def __reduce__(self) -> tuple[Any, ...]:
        # A copy or a pickle is a plain map of the same counts, its table made anew.
        return (KeptCounts, (dict(self),))

    def __setitem__(self, key: Any, value: int) -> None:
        dict.__setitem__(self, key, value)
        if self._table is not None:
            self._changed.add(key)

    def __delitem__(self, key: Any) -> None:
        dict.__delitem__(self, key)
        if self._table is not None:
            self._changed.add(key)

    def _forget(self) -> None:
        self._table = None
        self._changed.clear()

    def pop(self, *args: Any) -> Any:
        self._forget()
        return dict.pop(self, *args)

    def popitem(self) -> tuple[Any, int]:
        self._forget()
        return dict.popitem(self)

    def clear(self) -> None:
        self._forget()
        dict.clear(self)

    def update(self, *args: Any, **kwargs: Any) -> None:
        self._forget()
        dict.update(self, *args, **kwargs)

    def setdefault(self, key: Any, default: Any = None) -> Any:
        self._forget()
        return dict.setdefault(self, key, default)

    def __ior__(self, other: Any) -> KeptCounts:  # type: ignore[override,misc]
        self._forget()
        dict.update(self, other)
        return self

    def table(self, column: Categorical, dtype: Any) -> Array:
        """:meth:`Categorical.by_code` of this map (read-only): the last one, brought up to date."""
        table = self._table
        n = len(column.values)
        if table is None or self._of is not column or self._dtype != dtype:
            table = column.table_of(self, dtype)
            self._of, self._dtype = column, dtype
        else:
            if n != self._coded:  # codes added since: values appended to the column
                grown = np.zeros(n + 1, dtype)
                grown[: self._coded] = table[: self._coded]
                keys = column.keys
                for added in range(self._coded, n):
                    grown[added] = self.get(keys[added], 0)
                table = grown
            for key in self._changed:
                code = column.code_of(key)
                if code is not None:
                    table[code] = self.get(key, 0)
        self._changed.clear()
        self._table = table
        self._coded = n
        out = table.view()
        out.flags.writeable = False
        return out


class Categorical:
    """One categorical column: an int32 code per row and the distinct values behind the codes."""

    __slots__ = ("codes", "values", "keys", "_code_of", "_tables")

    #: Verdict tables kept per column (see :meth:`table`); beyond this many the cache restarts.
    MAX_TABLES = 256

    def __init__(self, n: int) -> None:
        self.codes: Array = np.full(n, MISSING, dtype=np.int32)
        #: ``values[code]``: the value every row with that code has; ``keys[code]``: what it is
        #: known by (the value itself for labels).
        self.values: list[Any] = []
        self.keys: list[Any] = []
        self._code_of: dict[Any, int] = {}
        self._tables: dict[Hashable, Array] = {}

    def code(self, key: Any, value: Any) -> int:
        c = self._code_of.get(key)
        if c is None:
            c = self._code_of[key] = len(self.values)
            self.values.append(value)
            self.keys.append(key)
        return c

    def code_of(self, key: Any) -> int | None:
        """The code of a value, or ``None`` when no row ever had it."""
        return self._code_of.get(key)

    def table(self, predicate: Callable[[Any], Any], missing: bool = False, key: Hashable = None) -> Array:
        """``predicate(value)`` for every distinct value, indexable by code; the last entry is
        the verdict for a row without a value (code -1), ``missing``.

        With a ``key`` naming the predicate, the table is kept and, as codes are only ever
        added, later calls evaluate the predicate on new values alone.
        """
        old = self._tables.get(key) if key is not None else None
        done = 0 if old is None else len(old) - 1
        if done == len(self.values) and old is not None:
            return old
        out = np.empty(len(self.values) + 1, dtype=bool)
        if old is not None:
            out[:done] = old[:done]
        for i in range(done, len(self.values)):
            out[i] = bool(predicate(self.values[i]))
        out[-1] = missing
        if key is not None:
            if len(self._tables) >= self.MAX_TABLES:
                self._tables.clear()
            self._tables[key] = out
        return out

    def by_code(self, mapping: Mapping[Any, Any], dtype: Any = np.int64) -> Array:
        """``mapping[value]`` for every distinct value (0 for values it lacks), indexable by code;
        the last entry, 0, is what a row without a value (code -1) reads. A :class:`KeptCounts`
        gives its kept table, brought up to date (read-only)."""
        if type(mapping) is KeptCounts:
            return mapping.table(self, dtype)
        return self.table_of(mapping, dtype)

    def table_of(self, mapping: Mapping[Any, Any], dtype: Any) -> Array:
        """:meth:`by_code` made anew from every entry of ``mapping`` (writable, the caller's)."""
        out = np.zeros(len(self.values) + 1, dtype)
        for value, n in mapping.items():
            code = self._code_of.get(value)
            if code is not None:
                out[code] = n
        return out

    def mask(self, rows: Array, predicate: Callable[[Any], Any], missing: bool = False, key: Hashable = None) -> Array:
        """``predicate`` of each row's value (``missing`` where it has none)."""
        out: Array = self.table(predicate, missing, key)[self.codes[rows]]
        return out


class NodeColumns:
    """Arrays over the snapshot's nodes (see the module docstring)."""

    def __init__(self, nodes: Sequence[NodeInfo]) -> None:
        n = len(nodes)
        self.n = n
        self.names: list[str] = [ni.name for ni in nodes]
        self.index: dict[str, int] = {name: i for i, name in enumerate(self.names)}
        i64 = np.int64
        self.alloc_cpu = np.zeros(n, i64)
        self.alloc_memory = np.zeros(n, i64)
        self.alloc_ephemeral = np.zeros(n, i64)
        self.alloc_pods = np.zeros(n, i64)
        self.req_cpu = np.zeros(n, i64)
        self.req_memory = np.zeros(n, i64)
        self.req_ephemeral = np.zeros(n, i64)
        self.nz_cpu = np.zeros(n, i64)
        self.nz_memory = np.zeros(n, i64)
        self.num_pods = np.zeros(n, i64)
        #: ``NodeInfo.generation`` of each row: what changed since a plugin last looked.
        self.generation = np.zeros(n, i64)
        #: How many times each row was given a new NodeInfo (:meth:`set_row`): whoever keeps
        #: a row's NodeInfo knows it is still the snapshot's while this count stays.
        self.replaced = np.zeros(n, i64)
        self.unschedulable = np.zeros(n, bool)
        self.has_ports = np.zeros(n, bool)
        self.has_images = np.zeros(n, bool)
        self._inexact = np.zeros(n, bool)
        self._inexact_rows = 0
        #: Taint lists by code; code 0 is the empty list.
        self.taints = Categorical(n)
        self.taints.code((), [])
        self._scalar: dict[str, tuple[Array, Array]] = {}
        self._labels: dict[str, Categorical] = {}
        self._nodes = list(nodes)
        for i, ni in enumerate(nodes):
            self._fill(i, ni)

    @property
    def exact(self) -> bool:
        """Whether every amount is below :data:`EXACT_LIMIT` (int64 arithmetic equals Python's)."""
        return self._inexact_rows == 0

    def node(self, i: int) -> NodeInfo:
        return self._nodes[i]

    def set_row(self, i: int, ni: NodeInfo) -> None:
        """Row ``i`` now describes ``ni`` (a fresh clone of the same node)."""
        self._nodes[i] = ni
        self.replaced[i] += 1
        self._fill(i, ni)

    def _fill(self, i: int, ni: NodeInfo) -> None:
        a = ni.allocatable
        r = ni.requested
        nz = ni.non_zero_requested
        amounts: tuple[int, ...] = (
            a.milli_cpu,
            a.memory,
            a.ephemeral_storage,
            a.allowed_pod_number,
            r.milli_cpu,
            r.memory,
            r.ephemeral_storage,
            nz.milli_cpu,
            nz.memory,
        )
        inexact = any(abs(x) >= EXACT_LIMIT for x in amounts) or any(
            abs(x) >= EXACT_LIMIT for x in (*a.scalar.values(), *r.scalar.values())
        )
        if inexact != self._inexact[i]:
            self._inexact[i] = inexact
            self._inexact_rows += 1 if inexact else -1
        if inexact:
            amounts = tuple(0 for _ in amounts)
        (
            self.alloc_cpu[i],
            self.alloc_memory[i],
            self.alloc_ephemeral[i],
            self.alloc_pods[i],
            self.req_cpu[i],
            self.req_memory[i],
            self.req_ephemeral[i],
            self.nz_cpu[i],
            self.nz_memory[i],
        ) = amounts
        self.num_pods[i] = len(ni.pods)
        self.generation[i] = ni.generation
        self.unschedulable[i] = ni.unschedulable
        self.has_ports[i] = bool(ni.used_ports)
        self.has_images[i] = bool(ni.image_states)
        taints = ni.taints
        if taints:
            try:
                self.taints.codes[i] = self.taints.code(_taint_key(taints), taints)
            except TypeError:  # an unhashable field: give this list a code of its own
                self.taints.codes[i] = self.taints.code(object(), taints)
        else:
            self.taints.codes[i] = NO_TAINTS
        if self._scalar and not inexact:
            for name, (alloc, req) in self._scalar.items():
                alloc[i] = a.scalar.get(name, 0)
                req[i] = r.scalar.get(name, 0)
        labels = ni.labels
        for key, col in self._labels.items():
            v = labels.get(key)
            col.codes[i] = MISSING if v is None else col.code(v, v)

    def scalar(self, name: str) -> tuple[Array, Array]:
        """Allocatable and requested amounts of a scalar resource (extended, hugepages, ...)."""
        cols = self._scalar.get(name)
        if cols is None:
            alloc = np.zeros(self.n, np.int64)
            req = np.zeros(self.n, np.int64)
            for i, ni in enumerate(self._nodes):
                if not self._inexact[i]:
                    alloc[i] = ni.allocatable.scalar.get(name, 0)
                    req[i] = ni.requested.scalar.get(name, 0)
            cols = self._scalar[name] = (alloc, req)
        return cols

    def labels(self, key: str) -> Categorical:
        """The values of label ``key``: codes per row (-1 where the node lacks the label)."""
        col = self._labels.get(key)
        if col is None:
            col = self._labels[key] = Categorical(self.n)
            codes = col.codes
            for i, ni in enumerate(self._nodes):
                v = ni.labels.get(key)
                if v is not None:
                    codes[i] = col.code(v, v)
        return col


class NodeBatch(Sequence[NodeInfo]):
    """The nodes a batch plugin evaluates for one pod: a sequence of NodeInfos (what the
    per-node form reads) and ``rows``, their positions in ``columns``."""

    __slots__ = ("columns", "rows")

    def __init__(self, columns: NodeColumns, rows: Array) -> None:
        self.columns = columns
        self.rows = rows

    def __len__(self) -> int:
        return len(self.rows)

    @overload
    def __getitem__(self, i: int) -> NodeInfo: ...

    @overload
    def __getitem__(self, i: slice) -> Sequence[NodeInfo]: ...

    def __getitem__(self, i: int | slice) -> NodeInfo | Sequence[NodeInfo]:
        if isinstance(i, slice):
            return NodeBatch(self.columns, self.rows[i])
        return self.columns.node(int(self.rows[i]))

    def __iter__(self) -> Iterator[NodeInfo]:
        node = self.columns.node
        for r in self.rows.tolist():
            yield node(r)

    def names(self) -> list[str]:
        names = self.columns.names
        return [names[r] for r in self.rows.tolist()]


class NodeSubset(list[NodeInfo]):
    """Some of the snapshot's nodes, as a list, that keeps their rows in the columns once they
    have been looked up (:meth:`rows_in`): a pod group's placement hands the same nodes to each
    of its members' cycles, whose Filter would otherwise look up every node's row again."""

    __slots__ = ("_index", "_rows")

    def __init__(self, nodes: Sequence[NodeInfo] = (), rows_of: NodeSubset | None = None) -> None:
        """``nodes``; ``rows_of``: a subset of the same nodes in the same order, whose rows
        (once known) this one takes over."""
        super().__init__(nodes)
        self._index: dict[str, int] | None = rows_of._index if rows_of is not None else None
        self._rows: Array | None = rows_of._rows if rows_of is not None else None

    @classmethod
    def at_rows(cls, nodes: Sequence[NodeInfo], columns: NodeColumns, rows: Array) -> NodeSubset:
        """``nodes``, which are ``columns``' rows ``rows`` (in order): nothing to look up."""
        subset = cls(nodes)
        subset._index = columns.index
        subset._rows = rows
        return subset

    def rows_in(self, columns: NodeColumns) -> Array:
        """The rows of these nodes in ``columns``, looked up once per columns' name index."""
        if self._index is not columns.index or self._rows is None:
            index = columns.index
            self._rows = np.fromiter((index[ni.name] for ni in self), dtype=np.intp, count=len(self))
            self._index = index
        return self._rows


def columns_of(nodes: Sequence[NodeInfo]) -> NodeBatch | None:
    """``nodes`` as a batch over the snapshot's columns, when they are one; ``None`` for a plain
    list (a test, a preemption dry run on cloned nodes), which batch plugins must evaluate
    node by node."""
    return nodes if isinstance(nodes, NodeBatch) else None
