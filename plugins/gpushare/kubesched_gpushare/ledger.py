"""What the plugins of one scheduler share: the GPUs reserved for assumed pods, every node's
derived GPU usage (cached by node generation), and the same as numpy columns for batch forms.

Every profile of a scheduler sees one cluster, so the plugins of all its profiles share one
:class:`GpuLedger`: a pod reserved by one profile's GpuShare occupies its GPUs for the others.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from kubesched import Handle, NodeColumns, NodeInfo

from .gpu import GPU_INDEX_ANNOTATION, SHARE_TAG, NodeGpus, accepts_model, derive_node_gpus, parse_indices

if TYPE_CHECKING:
    from .gpu import GpuAsk

Array = np.ndarray


class GpuChooser(Protocol):
    """A policy that picks the GPUs of a pod on a node (FGD registers one per profile)."""

    def choose_gpus(self, node: NodeGpus, ask: GpuAsk, cpu: int) -> tuple[int, ...] | None: ...


class GpuLedger:
    """Reservations, derived node GPU usage, and its columns (see the module docstring)."""

    def __init__(self) -> None:
        #: pod uid → (node, GPU indices) from Reserve until the pod is seen annotated (or
        #: unreserved): an assumed pod carries no annotation yet.
        self.reserved: dict[str, tuple[str, tuple[int, ...]]] = {}
        self._nodes: dict[str, NodeGpus] = {}
        self._tables: weakref.WeakKeyDictionary[NodeColumns, GpuTable] = weakref.WeakKeyDictionary()
        #: GPU model → a small integer, the same in every table.
        self.model_codes: dict[str, int] = {}
        self.models: list[str] = []
        #: By profile, weakly: a chooser (a plugin) holds its handle, and so the cluster this
        #: ledger is kept for — held strongly, the ledger would keep its own key alive.
        self.choosers: weakref.WeakValueDictionary[str, GpuChooser] = weakref.WeakValueDictionary()
        #: :meth:`accepting`'s answers, by the set of models asked for.
        self._accepting: dict[frozenset[str] | None, Array] = {}

    # --- reservations ----------------------------------------------------------------------------
    def reserve(self, uid: str, node: str, indices: tuple[int, ...]) -> None:
        self.reserved[uid] = (node, indices)

    def release(self, uid: str, node: str) -> None:
        held = self.reserved.get(uid)
        if held is not None and held[0] == node:
            del self.reserved[uid]

    def reservation(self, uid: str, node: str) -> tuple[int, ...] | None:
        held = self.reserved.get(uid)
        return held[1] if held is not None and held[0] == node else None

    # --- nodes -----------------------------------------------------------------------------------
    def node(self, ni: NodeInfo) -> NodeGpus:
        """``ni``'s GPU usage, derived once per node generation."""
        cached = self._nodes.get(ni.name)
        if cached is not None and cached.generation == ni.generation:
            return cached
        derived = derive_node_gpus(ni, self.reserved)
        self._forget_seen(ni)
        self._nodes[ni.name] = derived
        return derived

    def _forget_seen(self, ni: NodeInfo) -> None:
        """Drop the reservations of pods that now carry their GPU indices themselves."""
        if not self.reserved:
            return
        for pi in ni.pods:
            held = self.reserved.get(pi.uid)
            if held is None or held[0] != ni.name:
                continue
            annotations = (pi.pod.get("metadata") or {}).get("annotations") or {}
            if parse_indices(annotations.get(GPU_INDEX_ANNOTATION)) == held[1]:
                del self.reserved[pi.uid]

    def model_code(self, model: str) -> int:
        code = self.model_codes.get(model)
        if code is None:
            code = self.model_codes[model] = len(self.models)
            self.models.append(model)
        return code

    def accepting(self, models: frozenset[str] | None) -> Array:
        """Per model code: whether a pod asking for one of ``models`` accepts a node of that model
        (read-only; kept per set of models, made anew once a model has been added)."""
        held = self._accepting.get(models)
        if held is None or len(held) != len(self.models):
            if len(self._accepting) >= _ACCEPTING_KEPT:
                self._accepting.clear()
            held = self._accepting[models] = np.array([accepts_model(models, m) for m in self.models], bool)
            held.flags.writeable = False
        return held

    def table(self, columns: NodeColumns) -> GpuTable:
        t = self._tables.get(columns)
        if t is None:
            t = self._tables[columns] = GpuTable(self, columns)
        return t


#: Sets of models :meth:`GpuLedger.accepting` keeps answers for at once (beyond, it starts again).
_ACCEPTING_KEPT = 256


class GpuTable:
    """Every node of one snapshot's columns as GPU arrays, row for row; :meth:`refresh` brings
    the rows of a batch up to date with their nodes' generations."""

    def __init__(self, ledger: GpuLedger, columns: NodeColumns, width: int = 8) -> None:
        n = columns.n
        self.ledger = ledger
        # Weakly: the ledger keeps this table by its columns, weakly, and a value that held its
        # key would keep both (and the snapshot behind them) for as long as the ledger lives.
        self._columns = weakref.ref(columns)
        self.width = width
        #: The node generation each row was derived from (-1: never).
        self.generation = np.full(n, -1, np.int64)
        self.cpu_left = np.zeros(n, np.int64)
        self.count = np.zeros(n, np.int64)
        self.model = np.zeros(n, np.int64)
        #: Milli left per GPU, zero beyond the node's GPUs.
        self.left = np.zeros((n, width), np.int64)
        self.total_left = np.zeros(n, np.int64)
        self.fully_free = np.zeros(n, np.int64)
        #: The most milli left on any one GPU (0 without GPUs): a GPU has room for m iff this ≥ m.
        self.max_left = np.zeros(n, np.int64)
        #: GPU pods per kind: column 0 shared, column k whole pods of k GPUs.
        self.tags = np.zeros((n, width + 1), np.int64)
        self.kinds = np.zeros(n, np.int64)

    @property
    def columns(self) -> NodeColumns:
        cols = self._columns()
        if cols is None:
            raise ReferenceError("the columns of this GPU table are gone")
        return cols

    def refresh(self, rows: Array) -> None:
        cols = self.columns
        # Most calls find every row current (only the last pod's node changed, and an earlier
        # call of the cycle caught it): one comparison of the whole columns says so, and says
        # which of the batch's rows are stale otherwise.
        if self.generation.shape != cols.generation.shape:
            stale = rows[self.generation[rows] != cols.generation[rows]]
        else:
            changed = self.generation != cols.generation
            if not changed.any():
                return
            stale = rows[changed[rows]]
        for r in stale.tolist():
            self._fill(r, self.ledger.node(cols.node(r)))

    def _fill(self, r: int, ng: NodeGpus) -> None:
        kinds = _tag_columns(ng.tags)
        need = max(ng.count, max(kinds, default=0))
        if need > self.width:
            self._widen(need)
        self.generation[r] = ng.generation
        self.cpu_left[r] = ng.cpu_left
        self.count[r] = ng.count
        self.model[r] = self.ledger.model_code(ng.model)
        row = self.left[r]
        row[:] = 0
        row[: ng.count] = ng.left
        self.total_left[r] = ng.total_left
        self.fully_free[r] = ng.fully_free
        self.max_left[r] = max(ng.left, default=0)
        tags = self.tags[r]
        tags[:] = 0
        for col, n in kinds.items():
            tags[col] = n
        self.kinds[r] = len(ng.tags)

    def _widen(self, width: int) -> None:
        n = len(self.generation)
        left = np.zeros((n, width), np.int64)
        left[:, : self.width] = self.left
        tags = np.zeros((n, width + 1), np.int64)
        tags[:, : self.width + 1] = self.tags
        self.left, self.tags, self.width = left, tags, width


def _tag_columns(tags: Mapping[str, int]) -> dict[int, int]:
    out: dict[int, int] = {}
    for tag, n in tags.items():
        out[0 if tag == SHARE_TAG else int(tag.split("-", 1)[0])] = n
    return out


def tag_column(ask: GpuAsk) -> int:
    return 0 if ask.shared else ask.count


_LEDGERS: weakref.WeakKeyDictionary[Any, GpuLedger] = weakref.WeakKeyDictionary()


def ledger_for(handle: Handle) -> GpuLedger:
    """The ledger of ``handle``'s cluster (of the handle itself when it has none, as in tests)."""
    owner: Any = handle.cluster if handle.cluster is not None else handle
    ledger = _LEDGERS.get(owner)
    if ledger is None:
        ledger = _LEDGERS[owner] = GpuLedger()
    return ledger


__all__ = ["GpuChooser", "GpuLedger", "GpuTable", "ledger_for", "tag_column"]
