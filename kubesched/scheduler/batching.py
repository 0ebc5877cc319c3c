"""Opportunistic batching (upstream's KEP-5598, as kube-scheduler 1.35 has it): identical pods
popped one after another reuse the first one's ranked nodes instead of filtering and scoring the
whole cluster again.

After a full scheduling cycle, the feasible nodes it scored (but the one it chose) are kept,
best first, with the pod's signature (:meth:`Framework.sign_pod`). The next cycle may take the
head of that list as a *hint* when all of these hold, else the batch is flushed and the cycle
runs in full:

* it is the very next scheduling cycle (of any profile: each profile keeps a batch of its own),
  and that cycle placed its pod with this profile;
* the pod has the same signature, and no nominated node;
* the batch is no older than :data:`MAX_BATCH_AGE`;
* the node the previous pod went to is still there and now *rejects* this pod. A node that
  still fits it would have to be scored again against the cached ones, which 1.35 does not do:
  batching helps where each node takes one such pod.

The hint is then filtered like a nominated node (with the pods nominated to it); if it passes it
is the pod's node, without scoring, and the batch lives on; if not, the cycle runs in full and
stores a fresh batch. Other cached nodes are never filtered again: the age limit bounds how stale
they may be.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from kubesched.framework.interface import CycleState
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.runtime.framework import Framework
from kubesched.scheduler.observer import Observer

#: Seconds a batch may be used after it was stored (upstream's maxBatchAge).
MAX_BATCH_AGE = 0.5

#: ``scheduler_batch_attempts_total`` results.
NO_HINT = "no_hint"
HINT_USED = "hint_used"
HINT_NOT_USED = "hint_not_used"


@dataclass
class _Batch:
    profile: str
    signature: bytes
    #: Node names, best first: the candidates not taken yet.
    nodes: list[str]
    #: The cycle that stored or last used the batch, and the node its pod went to.
    cycle: int
    node: str
    stored_at: float


@dataclass
class BatchStats:
    """Counts behind upstream's ``scheduler_batch_attempts_total`` and
    ``scheduler_batch_cache_flushed_total``, by result and by reason (all profiles)."""

    attempts: Counter[str] = field(default_factory=Counter)
    flushes: Counter[str] = field(default_factory=Counter)


class OpportunisticBatching:
    """The batch each profile keeps (see the module docstring)."""

    def __init__(self, clock: Callable[[], float], observer: Observer) -> None:
        self.clock = clock
        self.observer = observer
        self.batches: dict[str, _Batch] = {}
        self.stats = BatchStats()

    def flush(self, profile: str, reason: str) -> None:
        if self.batches.pop(profile, None) is not None:
            self.stats.flushes[reason] += 1
            self.observer.batch_flush(profile, reason)

    def _attempt(self, profile: str, result: str) -> None:
        self.stats.attempts[result] += 1
        self.observer.batch_attempt(profile, result)

    def hint(
        self,
        fw: Framework,
        state: CycleState,
        pod: PodInfo,
        signature: bytes | None,
        cycle: int,
        nominated: bool,
        node_of: Callable[[str], NodeInfo | None],
    ) -> NodeInfo | None:
        """The node to try first for ``pod`` (after its PreFilter ran), or ``None`` (counted as
        ``no_hint``, and the batch flushed with the reason)."""
        profile = fw.profile_name
        b = self.batches.get(profile)
        if b is None:
            return self._no_hint(profile)
        if signature is None:
            return self._no_hint(profile, "pod_not_batchable")
        if b.cycle + 1 != cycle:
            return self._no_hint(profile, "pod_skipped")
        if nominated:
            return self._no_hint(profile, "pod_nominated")
        if b.signature != signature:
            return self._no_hint(profile, "pod_incompatible")
        if self.clock() - b.stored_at > MAX_BATCH_AGE:
            return self._no_hint(profile, "expired")
        previous = node_of(b.node)
        if previous is None:
            return self._no_hint(profile, "node_missing")
        if fw.run_filter(state, pod, previous) is None:
            return self._no_hint(profile, "node_not_full")
        while b.nodes:
            node = node_of(b.nodes.pop(0))
            if node is not None:
                return node
        return self._no_hint(profile, "empty_list")

    def _no_hint(self, profile: str, flush: str | None = None) -> NodeInfo | None:
        """No hint for this pod (the batch flushed with ``flush``, when given): ``None``."""
        if flush is not None:
            self.flush(profile, flush)
        self._attempt(profile, NO_HINT)
        return None

    def hint_used(self, profile: str, cycle: int, node: str) -> None:
        """The hint was the pod's node: the batch carries on from this cycle."""
        self._attempt(profile, HINT_USED)
        b = self.batches.get(profile)
        if b is not None:
            b.cycle = cycle
            b.node = node

    def hint_not_used(self, profile: str) -> None:
        """The hint did not fit the pod: the cycle runs in full."""
        self._attempt(profile, HINT_NOT_USED)

    def store(
        self,
        fw: Framework,
        signature: bytes | None,
        cycle: int,
        nodes: Sequence[NodeInfo],
        totals: Sequence[int] | np.ndarray,
        chosen: str,
    ) -> None:
        """After a full cycle placed its pod on ``chosen``: keep the other scored nodes, best
        first (ties in the order they were scored)."""
        profile = fw.profile_name
        if signature is None or len(nodes) < 2:
            self.flush(profile, "pod_not_batchable" if signature is None else "empty_list")
            return
        scores = np.asarray(totals)
        order = np.argsort(-scores, kind="stable").tolist()
        names = [nodes[i].name for i in order]
        names.remove(chosen)
        self.batches[profile] = _Batch(profile, signature, names, cycle, chosen, self.clock())
