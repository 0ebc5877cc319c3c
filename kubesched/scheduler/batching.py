"""Opportunistic batching (upstream's KEP-5598, as kube-scheduler 1.37 has it, on by default):
identical pods popped one after another reuse the first one's ranked nodes instead of filtering
and scoring the whole cluster again.

After a full scheduling cycle places its pod, the feasible nodes it scored (but the one it chose)
are kept, best first, with their raw scores per Score plugin and the pod's signature
(:meth:`Framework.sign_pod`). Each profile keeps a batch of its own. The next cycle of that
profile asks for a *hint* (after its PreFilter); it gets none, and the batch is flushed with the
reason, unless all of these hold, in this order:

* it is the very next scheduling cycle, of any profile (``pod_skipped``: another profile's pod
  came between, or the previous pod failed and stored nothing);
* the pod has no nominated node (``pod_nominated``);
* it has the same signature (``pod_incompatible``);
* the batch is no older than :data:`MAX_BATCH_AGE` (``expired``);
* the node the previous pod went to is still there (``node_missing``) and its filters do not err
  (``filter_error``).

If that node still fits this pod, it is scored again for it (upstream's rescoring): PreScore over
the cached nodes and that node, its raw scores, then every Score plugin's NormalizeScore over
them all (``prescore_error``, ``rescore_error``, ``normalize_error``, or ``node_missing`` for a
cached node gone), and the list is sorted again — so pods may also share a node. The head of the
list is the hint. The scheduler filters it like a nominated node; if it passes, it is the pod's
node without scoring (``hint_used``, the batch lives on); if not, the cycle runs in full
(``hint_not_used``) and stores a fresh batch. A pod that got no hint counts ``no_hint``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from kubesched.framework.interface import CycleState
from kubesched.framework.status import Code
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.runtime.framework import Framework
from kubesched.scheduler.observer import Observer

#: Seconds a batch may be used after it was stored (upstream's maxBatchAge).
MAX_BATCH_AGE = 0.5

#: ``scheduler_batch_attempts_total`` results.
NO_HINT = "no_hint"
HINT_USED = "hint_used"
HINT_NOT_USED = "hint_not_used"

#: ``scheduler_store_schedule_results_total`` results.
STORED = "stored"
POD_NOT_BATCHABLE = "pod_not_batchable"
EMPTY_LIST = "empty_list"


@dataclass
class _Batch:
    profile: str
    signature: bytes
    #: Node names, best first: the candidates not taken yet.
    nodes: list[str]
    #: Each Score plugin's raw scores of ``nodes``, in their order.
    raw: dict[str, np.ndarray]
    stored_at: float

    def pop(self) -> str:
        self.raw = {plugin: values[1:] for plugin, values in self.raw.items()}
        return self.nodes.pop(0)


@dataclass
class _LastCycle:
    """The last cycle of a profile that placed its pod (upstream's lastCycle)."""

    cycle: int
    node: str


@dataclass
class BatchStats:
    """Counts behind upstream's ``scheduler_batch_attempts_total``,
    ``scheduler_batch_cache_flushed_total``, ``scheduler_store_schedule_results_total`` and
    ``scheduler_batch_rescore_attempts_total`` (all profiles)."""

    attempts: Counter[str] = field(default_factory=Counter)
    flushes: Counter[str] = field(default_factory=Counter)
    stores: Counter[str] = field(default_factory=Counter)
    rescores: int = 0


class OpportunisticBatching:
    """The batch each profile keeps (see the module docstring)."""

    def __init__(self, clock: Callable[[], float], observer: Observer) -> None:
        self.clock = clock
        self.observer = observer
        self.batches: dict[str, _Batch] = {}
        self.last: dict[str, _LastCycle] = {}
        self.stats = BatchStats()

    def flush(self, profile: str, reason: str) -> None:
        """Drop the profile's batch, counting the flush (if it had one)."""
        if self.batches.pop(profile, None) is not None:
            self.stats.flushes[reason] += 1
            self.observer.batch_flush(profile, reason)

    def _attempt(self, profile: str, result: str) -> None:
        self.stats.attempts[result] += 1
        self.observer.batch_attempt(profile, result)

    async def hint(
        self,
        fw: Framework,
        state: CycleState,
        pod: PodInfo,
        signature: bytes | None,
        cycle: int,
        nominated: bool,
        node_of: Callable[[str], NodeInfo | None],
    ) -> str | None:
        """The name of the node to try first for ``pod`` (after its PreFilter ran), or ``None``
        (counted as ``no_hint``, the batch flushed with the reason when there was one)."""
        profile = fw.profile_name
        hint = await self._hint(fw, state, pod, signature, cycle, nominated, node_of)
        if hint is None:
            self._attempt(profile, NO_HINT)
        return hint

    async def _hint(
        self,
        fw: Framework,
        state: CycleState,
        pod: PodInfo,
        signature: bytes | None,
        cycle: int,
        nominated: bool,
        node_of: Callable[[str], NodeInfo | None],
    ) -> str | None:
        profile = fw.profile_name
        b = self.batches.get(profile)
        last = self.last.get(profile)
        if b is None or not b.nodes or last is None:
            return None
        if last.cycle + 1 != cycle:
            self.flush(profile, "pod_skipped")
            return None
        if nominated:
            self.flush(profile, "pod_nominated")
            return None
        if signature is None or b.signature != signature:
            self.flush(profile, "pod_incompatible")
            return None
        if self.clock() - b.stored_at > MAX_BATCH_AGE:
            self.flush(profile, "expired")
            return None
        previous = node_of(last.node)
        if previous is None:
            self.flush(profile, "node_missing")
            return None
        status = fw.run_filter(state, pod, previous)
        if status is not None and status.code is Code.ERROR:
            self.flush(profile, "filter_error")
            return None
        if status is None and not await self._rescore(fw, state, pod, b, previous, node_of):
            return None
        return b.pop()

    async def _rescore(
        self,
        fw: Framework,
        state: CycleState,
        pod: PodInfo,
        b: _Batch,
        previous: NodeInfo,
        node_of: Callable[[str], NodeInfo | None],
    ) -> bool:
        """The previous pod's node still fits: score it again for this pod and let it compete
        with the cached nodes, all normalized afresh. False (and the batch flushed) on a failure."""
        profile = fw.profile_name
        self.stats.rescores += 1
        cached = [node_of(name) for name in b.nodes]
        if any(ni is None for ni in cached):
            self.flush(profile, "node_missing")
            return False
        candidates = [ni for ni in cached if ni is not None]
        candidates.append(previous)
        if await fw.run_pre_score(state, pod, candidates) is not None:
            self.flush(profile, "prescore_error")
            return False
        fresh, status = fw.run_raw_score(state, pod, previous)
        if status is not None:
            self.flush(profile, "rescore_error")
            return False
        names = [*b.nodes, previous.name]
        raw = {plugin: np.append(values, fresh[plugin]) for plugin, values in b.raw.items() if plugin in fresh}
        totals, status = await fw.normalize_raw_scores(state, pod, names, raw)
        if status is not None:
            self.flush(profile, "normalize_error")
            return False
        # Best first; among equal totals the cached nodes keep their order and the node scored
        # again comes last (upstream breaks such ties by a random number it never gave that node).
        order = np.argsort(-totals, kind="stable")
        b.nodes = [names[i] for i in order.tolist()]
        b.raw = {plugin: values[order] for plugin, values in raw.items()}
        return True

    def store(
        self,
        fw: Framework,
        signature: bytes | None,
        cycle: int,
        hint: str | None,
        chosen: str,
        nodes: Sequence[NodeInfo] = (),
        totals: Sequence[int] | np.ndarray = (),
        raw: Mapping[str, np.ndarray] | None = None,
    ) -> None:
        """After a cycle chose ``chosen`` for its pod (upstream's StoreScheduleResults): the hint
        was used, or the other scored ``nodes`` (with their ``totals`` and ``raw`` scores, in the
        same order) become the profile's batch, best first (ties in the order they were scored)."""
        profile = fw.profile_name
        self.last[profile] = _LastCycle(cycle, chosen)
        if hint is not None and hint == chosen:
            self._attempt(profile, HINT_USED)
            return
        if hint is not None:
            self._attempt(profile, HINT_NOT_USED)
        # Only a signed pod's nodes are looked at: reading the names of thousands of nodes for a
        # pod that cannot be batched would cost more than its cycle's scoring.
        others = 0 if signature is None else len(nodes) - (chosen in {ni.name for ni in nodes})
        if signature is None or others < 1:
            self.batches.pop(profile, None)
            result = POD_NOT_BATCHABLE if signature is None else EMPTY_LIST
        else:
            order = [i for i in np.argsort(-np.asarray(totals), kind="stable").tolist() if nodes[i].name != chosen]
            rows = np.asarray(order, dtype=np.intp)
            self.batches[profile] = _Batch(
                profile,
                signature,
                [nodes[i].name for i in order],
                {plugin: np.asarray(values)[rows] for plugin, values in (raw or {}).items()},
                self.clock(),
            )
            result = STORED
        self.stats.stores[result] += 1
