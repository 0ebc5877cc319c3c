"""FGD: Fragmentation Gradient Descent, the score of the ATC'23 paper "Beware of Fragmentation".

A node's *fragmentation* is measured against the typical pods of the workload: for each typical
pod, the node's idle milli-GPU that this pod could not use, weighted by the pod's share —

* all of the node's idle GPU when the typical pod needs no GPU, does not accept the node's
  model, cannot find room on enough GPUs, or finds no CPU left;
* otherwise the idle milli-GPU of the GPUs too small for it.

FGD scores a node by how much placing the pod there changes that fragmentation:
``int(100 × sigmoid((before − after) / 1000))``, 50 for no change, above for a decrease. A
sharing pod is tried on each GPU with room, and the node scores its best GPU; that GPU (the
lowest-indexed among the best) is also FGD's choice at Reserve (GpuShare's ``gpuSelection:
FGD``). A pod without any requests scores 100 everywhere.
"""

from __future__ import annotations

import math
import weakref
from bisect import bisect_left
from collections.abc import Sequence
from itertools import accumulate
from operator import mul, sub
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_validator

from kubesched import MAX_NODE_SCORE, CycleState, Handle, NodeInfo, PodInfo, Status, columns_of

from .gpu import MILLI, GpuAsk, GpuAskError, NodeGpus, gpu_ask_of, has_requests, pod_cpu, whole_gpus
from .ledger import GpuLedger, GpuTable, ledger_for
from .typical import TypicalPod, TypicalPodTable, load_typical_pods

Array = np.ndarray


class FGDArgs(BaseModel):
    """``pluginConfig`` args of FGD: the typical pods of the workload, inline or in a file."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    typical_pods: list[TypicalPod] | None = Field(None, alias="typicalPods")
    #: A YAML or JSON file: a list of typical pods, or ``{typicalPods: [...]}``.
    typical_pods_file: str | None = Field(None, alias="typicalPodsFile")
    _table: TypicalPodTable | None = PrivateAttr(None)

    @model_validator(mode="after")
    def _one_source(self) -> FGDArgs:
        if (self.typical_pods is None) == (self.typical_pods_file is None):
            raise ValueError("FGD needs the workload's typical pods: give typicalPods or typicalPodsFile (one of them)")
        pods = self.typical_pods
        if pods is None:
            path = Path(self.typical_pods_file or "")
            if not path.is_file():
                raise ValueError(f"typicalPodsFile: no such file: {path}")
            pods = load_typical_pods(path)
        self._table = TypicalPodTable(pods)
        return self

    @property
    def table(self) -> TypicalPodTable:
        assert self._table is not None
        return self._table


def frag_terms(cpu_left: int, left: Sequence[int], model: str, tp: TypicalPodTable) -> list[int]:
    """Per typical pod, the node's idle milli-GPU it could not use (see the module docstring)."""
    total = sum(left)
    out = []
    # The GPUs too small for a pod asking m are the first bisect_left(ordered, m) in order of
    # room, their idle milli-GPU the sum of those (a bisection, not a walk over the GPUs per pod).
    ordered = sorted(left)
    below = [0, *accumulate(ordered)]
    gpus = len(ordered)
    # Typical pods asking the same milli-GPU see the same GPUs fit and the same idle ones too small.
    seen: dict[int, tuple[int, int]] = {}
    for ok, cpu, m, count in zip(tp.access_list(model), tp.cpu_list, tp.milli_list, tp.count_list):
        if ok and cpu_left >= cpu:
            fit_small = seen.get(m)
            if fit_small is None:
                small = bisect_left(ordered, m)
                fit_small = seen[m] = (gpus - small, below[small])
            if fit_small[0] >= count:
                out.append(fit_small[1])
                continue
        out.append(total)
    return out


def node_fragmentation(node: NodeGpus, tp: TypicalPodTable) -> float:
    """The node's fragmentation: its idle milli-GPU that typical pods cannot use, by share."""
    # Summed in order, from 0, as ``sum(p * f for ...)``.
    total: float = sum(map(mul, tp.shares, frag_terms(node.cpu_left, node.left, node.model, tp)))
    return total


def sigmoid_score(delta: float) -> int:
    """``int(100 × sigmoid(delta / 1000))``: 50 when nothing changes."""
    x = delta / 1000.0
    if x < -700.0:  # exp would overflow; the sigmoid is 0 to double precision anyway
        return 0
    return int(1.0 / (1.0 + math.exp(-x)) * float(MAX_NODE_SCORE))


def frag_delta(before: list[int], after: list[int], shares: list[float]) -> float:
    # Summed in order, from 0, as ``sum(p * (b - a) for ...)``.
    total: float = sum(map(mul, shares, map(sub, before, after)))
    return total


def fgd_choice(node: NodeGpus, ask: GpuAsk, cpu: int, tp: TypicalPodTable) -> tuple[int, tuple[int, ...] | None]:
    """FGD's score of ``node`` for a pod, and the GPUs it would give the pod there."""
    before = frag_terms(node.cpu_left, node.left, node.model, tp)
    if ask.wants_gpu and ask.shared:
        best: tuple[int, tuple[int, ...] | None] = (0, None)
        # GPUs with equal room leave the node equally fragmented: one score per amount of room.
        seen: dict[int, int] = {}
        for i, x in enumerate(node.left):
            if x < ask.milli:
                continue
            s = seen.get(x)
            if s is None:
                left = list(node.left)
                left[i] -= ask.milli
                after = frag_terms(node.cpu_left - cpu, left, node.model, tp)
                s = seen[x] = sigmoid_score(frag_delta(before, after, tp.shares))
            if best[1] is None or s > best[0]:
                best = (s, (i,))
        return best
    if cpu > node.cpu_left or ask.count > node.count:
        return sigmoid_score(0.0), None  # the artifact leaves such a node as it is
    left = list(node.left)
    chosen = whole_gpus(left, ask.count) if ask.count else ()
    taken = chosen if chosen is not None else tuple(i for i, x in enumerate(left) if x == MILLI)
    for i in taken:
        left[i] -= MILLI
    after = frag_terms(node.cpu_left - cpu, left, node.model, tp)
    return sigmoid_score(frag_delta(before, after, tp.shares)), chosen if ask.count else None


class RowTerms:
    """FGD's per-row arrays over one GpuTable: what each typical pod sees of the node now."""

    def __init__(self, table: GpuTable, tp: TypicalPodTable) -> None:
        n, t = len(table.generation), len(tp)
        self.generation = np.full(n, -1, np.int64)
        #: Idle milli-GPU on GPUs too small for each typical pod.
        self.small = np.zeros((n, t), np.int64)
        #: GPUs with room for each typical pod.
        self.fit = np.zeros((n, t), np.int64)
        #: frag_terms of the node as it is.
        self.before = np.zeros((n, t), np.int64)
        #: Scores kept per kind of pod (GPU count, milli-GPU, CPU).
        self._kept: dict[tuple[int, int, int], _Kept] = {}

    def kept(self, count: int, milli: int, cpu: int) -> _Kept:
        key = (count, milli, cpu)
        kept = self._kept.get(key)
        if kept is None:
            if len(self._kept) >= MAX_KEPT_KINDS:
                self._kept.clear()
            kept = self._kept[key] = _Kept(len(self.generation))
        return kept


#: Kinds of pods whose scores :class:`RowTerms` keeps at once (beyond, it starts again).
MAX_KEPT_KINDS = 1024


class _Kept:
    """FGD's score of every row for one kind of pod, and the node generation it was computed at."""

    __slots__ = ("generation", "scores")

    def __init__(self, n: int) -> None:
        self.generation = np.full(n, -1, np.int64)
        self.scores = np.zeros(n, np.int64)


#: Up to this many rows, :meth:`FGD.rows_scores` and :meth:`FGD._refresh` work in plain Python.
FEW_ROWS = 8


def candidate_diff(
    small: list[int],
    fit: list[int],
    before: list[int],
    access: list[bool],
    tp: TypicalPodTable,
    total: int,
    cpu_left: int,
    room: int,
    after_room: int,
    k: int,
) -> list[int]:
    """Per typical pod, ``before − after`` for one candidate of :meth:`FGD._scores` (its
    arithmetic term for term, on one row): ``k`` GPUs of ``room`` milli left each keep
    ``after_room``; the node keeps ``total`` idle milli-GPU and ``cpu_left``."""
    out = []
    for s, f, b, ok, m, count, cpu in zip(small, fit, before, access, tp.milli_list, tp.count_list, tp.cpu_list):
        if room < m:
            s -= k * room
        else:
            f -= k
        if after_room < m:
            s += k * after_room
        else:
            f += k
        out.append(b - (s if ok and f >= count and cpu_left >= cpu else total))
    return out


def sigmoid_scores(diffs: Array, shares: Array) -> Array:
    """``int(100 × sigmoid(Σ share × diff / 1000))`` for each row of ``diffs`` (int64)."""
    delta = diffs @ shares
    with np.errstate(over="ignore"):
        sig = 1.0 / (1.0 + np.exp(-(delta / 1000.0)))
    out: Array = (sig * float(MAX_NODE_SCORE)).astype(np.int64)
    return out


class FGD:
    """The FGD score (see the module docstring)."""

    name = "FGD"
    Args = FGDArgs

    def __init__(self, args: FGDArgs | None, handle: Handle) -> None:
        if args is None:
            raise ValueError("FGD needs the workload's typical pods: give typicalPods or typicalPodsFile")
        self.tp = args.table
        self.handle = handle
        self.ledger: GpuLedger = ledger_for(handle)
        # GpuShare's gpuSelection "FGD" asks this plugin of the same profile.
        self.ledger.choosers[handle.profile_name] = self
        self._rows: weakref.WeakKeyDictionary[GpuTable, RowTerms] = weakref.WeakKeyDictionary()
        # The accepted-model rows of the typical pods, by the ledger's model codes.
        self._access = np.zeros((0, len(self.tp)), bool)

    def choose_gpus(self, node: NodeGpus, ask: GpuAsk, cpu: int) -> tuple[int, ...] | None:
        return fgd_choice(node, ask, cpu, self.tp)[1]

    # --- Score -----------------------------------------------------------------------------------
    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Any:
        if not has_requests(pod):
            return MAX_NODE_SCORE
        try:
            ask = gpu_ask_of(pod.pod)
        except GpuAskError as exc:
            return 0, Status.as_error(str(exc))
        ng = self.ledger.node(node)
        if ask.wants_gpu and not ask.accepts(ng.model):
            return 0, Status.as_error(f'node "{node.name}" does not have the GPU model pod "{pod.key}" asks for')
        return fgd_choice(ng, ask, pod_cpu(pod), self.tp)[0]

    def score_nodes(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Any:
        batch = columns_of(nodes)
        if batch is None:
            return None
        if not has_requests(pod):
            return np.full(len(batch), MAX_NODE_SCORE, np.int64)
        try:
            ask = gpu_ask_of(pod.pod)
        except GpuAskError:
            return None
        table = self.ledger.table(batch.columns)
        rows = batch.rows
        table.refresh(rows)
        if ask.wants_gpu and ask.models is not None:
            accepted = self.ledger.accepting(ask.models)
            if not accepted[table.model[rows]].all():
                return None  # score() reports the error
        fr = self._refresh(table, rows)
        cpu = pod_cpu(pod)
        # A node's score for a kind of pod changes only with the node: scores are kept per kind
        # and recomputed for the rows whose node changed since.
        kept = fr.kept(ask.count, ask.milli, cpu)
        stale = rows[(kept.generation != table.generation)[rows]]
        if len(stale):
            kept.scores[stale] = self.rows_scores(table, fr, stale, ask, cpu)
            kept.generation[stale] = table.generation[stale]
        return kept.scores[rows]

    def rows_scores(self, table: GpuTable, fr: RowTerms, rows: Array, ask: GpuAsk, cpu: int) -> Array:
        """The score of each node row for a pod of ``ask`` taking ``cpu``."""
        if len(rows) <= FEW_ROWS:
            return self._few_rows_scores(table, fr, rows, ask, cpu)
        if ask.wants_gpu and ask.shared:
            # One candidate per distinct amount of room that fits: GPUs with equal room leave
            # the node equally fragmented.
            left = np.sort(table.left[rows], axis=1)
            distinct = np.ones(left.shape, bool)
            distinct[:, 1:] = left[:, 1:] != left[:, :-1]
            pos, col = np.nonzero(distinct & (left >= ask.milli))
            ones = np.ones(len(pos), np.int64)
            scores = self._scores(table, fr, rows[pos], left[pos, col], ask.milli, ones, ones * cpu)
            out = np.zeros(len(rows), np.int64)
            np.maximum.at(out, pos, scores)
            return out
        # Whole GPUs (or none): one way to place the pod; a node that cannot take it stays as it is.
        k = ask.count
        fits = (table.cpu_left[rows] >= cpu) & (table.count[rows] >= k)
        mult = np.where(fits, k, 0).astype(np.int64)
        cpus = np.where(fits, cpu, 0).astype(np.int64)
        return self._scores(table, fr, rows, np.full(len(rows), MILLI, np.int64), MILLI, mult, cpus)

    def _few_rows_scores(self, table: GpuTable, fr: RowTerms, rows: Array, ask: GpuAsk, cpu: int) -> Array:
        """:meth:`rows_scores` of a few rows, the same candidates in the same order, each one's
        terms worked out in plain Python: numpy's cost per call outweighs a handful of rows. The
        terms are integers, and their weighted sum is the same one product as in :meth:`_scores`."""
        tp = self.tp
        owner: list[int] = []
        diffs: list[list[int]] = []
        shared = ask.wants_gpu and ask.shared
        milli = ask.milli if shared else MILLI
        k = ask.count
        for i, r in enumerate(rows.tolist()):
            cpu_left = int(table.cpu_left[r])
            if shared:
                rooms = sorted({x for x in table.left[r].tolist() if x >= milli})
                mult, cpus = 1, cpu
            else:
                fits = cpu_left >= cpu and int(table.count[r]) >= k
                rooms = [MILLI]
                mult, cpus = (k, cpu) if fits else (0, 0)
            if not rooms:
                continue
            small, fit, before = fr.small[r].tolist(), fr.fit[r].tolist(), fr.before[r].tolist()
            access = self._access_list(int(table.model[r]))
            total = int(table.total_left[r]) - mult * milli
            cpu_after = cpu_left - cpus
            for room in rooms:
                owner.append(i)
                diffs.append(candidate_diff(small, fit, before, access, tp, total, cpu_after, room, room - milli, mult))
        out = [0] * len(rows)
        if diffs:
            for i, s in zip(owner, sigmoid_scores(np.array(diffs, np.int64), tp.p).tolist()):
                if s > out[i]:
                    out[i] = s
        return np.array(out, np.int64)

    def _scores(
        self, table: GpuTable, fr: RowTerms, rows: Array, room: Array, milli: int, mult: Array, cpu: Array
    ) -> Array:
        """The score of each candidate ``i``: node row ``rows[i]`` with ``mult[i]`` of its GPUs
        having ``room[i]`` milli left each give ``milli`` to the pod, which takes ``cpu[i]``."""
        tp = self.tp
        m = tp.milli[None, :]
        k = mult[:, None]
        room = room[:, None]
        after_room = room - milli
        small = fr.small[rows] - k * (room * (room < m)) + k * (after_room * (after_room < m))
        fit = fr.fit[rows] - k * (room >= m) + k * (after_room >= m)
        total = table.total_left[rows] - mult * milli
        cpu_left = table.cpu_left[rows] - cpu
        ok = self._access_rows(table.model[rows]) & (fit >= tp.count) & (cpu_left[:, None] >= tp.cpu)
        after = np.where(ok, small, total[:, None])
        return sigmoid_scores(fr.before[rows] - after, tp.p)

    def _access_list(self, code: int) -> list[bool]:
        return self.tp.access_list(self.ledger.models[code])

    def _access_rows(self, codes: Array) -> Array:
        models = self.ledger.models
        if len(self._access) < len(models):
            self._access = np.array([self.tp.access(model) for model in models], bool).reshape(-1, len(self.tp))
        return self._access[codes]

    def _refresh(self, table: GpuTable, rows: Array) -> RowTerms:
        fr = self._rows.get(table)
        if fr is None or len(fr.generation) != len(table.generation) or fr.small.shape[1] != len(self.tp):
            fr = self._rows[table] = RowTerms(table, self.tp)
        # As GpuTable.refresh: when no row of the table changed, none of the batch did.
        changed = fr.generation != table.generation
        if not changed.any():
            return fr
        stale = rows[changed[rows]]
        if len(stale) > FEW_ROWS:
            self.fill_rows(table, fr, stale)
        elif len(stale):
            self.fill_few_rows(table, fr, stale)
        return fr

    def fill_rows(self, table: GpuTable, fr: RowTerms, stale: Array) -> None:
        """What each typical pod sees of the nodes of rows ``stale`` now."""
        tp = self.tp
        left = table.left[stale][:, :, None]
        m = tp.milli[None, None, :]
        too_small = left < m
        small = (left * too_small).sum(axis=1)
        # GPUs beyond the node's count are zero: they never fit a typical pod asking GPUs.
        fit = (~too_small).sum(axis=1)
        ok = self._access_rows(table.model[stale]) & (fit >= tp.count) & (table.cpu_left[stale][:, None] >= tp.cpu)
        fr.small[stale] = small
        fr.fit[stale] = fit
        fr.before[stale] = np.where(ok, small, table.total_left[stale][:, None])
        fr.generation[stale] = table.generation[stale]

    def fill_few_rows(self, table: GpuTable, fr: RowTerms, stale: Array) -> None:
        """:meth:`fill_rows` of a few rows, in plain Python (integers: the same values)."""
        tp = self.tp
        width = table.left.shape[1]
        for r in stale.tolist():
            # The GPUs too small for a pod asking m (padding GPUs of 0 included, as above) are the
            # first bisect_left(ordered, m) in order of room, their idle milli-GPU the sum of those.
            ordered = sorted(table.left[r].tolist())
            below = [0, *accumulate(ordered)]
            cuts = [bisect_left(ordered, m) for m in tp.milli_list]
            small = [below[c] for c in cuts]
            fit = [width - c for c in cuts]
            cpu_left = int(table.cpu_left[r])
            total = int(table.total_left[r])
            access = self._access_list(int(table.model[r]))
            fr.small[r] = small
            fr.fit[r] = fit
            fr.before[r] = [
                s if ok and f >= count and cpu_left >= cpu else total
                for s, f, ok, count, cpu in zip(small, fit, access, tp.count_list, tp.cpu_list)
            ]
            fr.generation[r] = table.generation[r]
