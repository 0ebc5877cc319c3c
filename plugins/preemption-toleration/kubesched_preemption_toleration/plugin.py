"""PreemptionToleration: default preemption, except for victims whose PriorityClass tolerates it.

scheduler-plugins' ``pkg/preemptiontoleration``: a PostFilter that runs the preemption evaluator
(the face's :class:`~kubesched.PreemptionEvaluator`, upstream's ``preemption.Evaluator``) with
DefaultPreemption's hooks, changed in one place. On each node, the potential victims are the pods
of lower priority than the preemptor that are not exempted from this preemption by their
PriorityClass's policy (:func:`~kubesched_preemption_toleration.policy.exempted_from_preemption`);
then, as DefaultPreemption does, they are taken off, the preemptor must fit, and they are given
back one by one (PodDisruptionBudget-violating ones first, each group most important first) while
it still does.

The rest as upstream's plugin has it: the preemption is made in the cycle (never
asynchronously); a pod is not eligible with ``preemptionPolicy: Never``, nor while a pod of lower
priority is being deleted on the node it is nominated to (unless that node is now
UnschedulableAndUnresolvable); the dry run starts at a random node and stops after
``max(potential nodes × minCandidateNodesPercentage / 100, minCandidateNodesAbsolute)``
candidates (at least one violating no PDB); the best candidate by kube-scheduler's criteria. The
time a toleration is measured against is taken once per PostFilter, from :attr:`clock`.
"""

from __future__ import annotations

import random
import time
import zlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from kubesched import Code, CycleState, NodeInfo, PodInfo, PostFilterResult, PreemptionEvaluator, Status

from .args import PreemptionTolerationArgs
from .policy import PriorityClassNotFound, exempted_from_preemption

NAME = "PreemptionToleration"

NOT_ELIGIBLE_NEVER = "not eligible due to preemptionPolicy=Never."
NOT_ELIGIBLE_TERMINATING = "not eligible due to a terminating pod on the nominated node."


def no_victims_message(node: NodeInfo, pod: PodInfo) -> str:
    """Why a node has no victim for the preemptor (upstream's wording for this plugin)."""
    return f"No victims found on node {node.name} for preemptor pod {pod.name}"


class PreemptionToleration(PreemptionEvaluator):
    """PostFilter: DefaultPreemption's preemption, sparing the victims whose PriorityClass
    tolerates the preemptor (see the module doc)."""

    name = NAME
    Args = PreemptionTolerationArgs

    def __init__(self, args: PreemptionTolerationArgs | None = None, handle: Any = None) -> None:
        super().__init__(NAME, handle, async_preemption=False)
        self.args = args if args is not None else PreemptionTolerationArgs.model_validate({})
        #: What "now" is for tolerations (seconds since the epoch; upstream's clock). The API
        #: server stamps ``PodScheduled`` with the wall clock, so this is the wall clock too.
        self.clock: Callable[[], float] = time.time
        #: ``offset_source(num_nodes)`` picks the node the dry run starts at (upstream: at random).
        #: By default random, seeded by the pod's uid and this instance's call count, so a run is
        #: reproducible; tests may replace it.
        self.offset_source: Callable[[int], int] | None = None
        self.now = 0.0
        self._calls = 0

    async def post_filter(
        self, state: CycleState, pod: PodInfo, filtered_statuses: Mapping[str, Status]
    ) -> tuple[PostFilterResult | None, Status]:
        """Preempt, tolerations considered: the nomination, or why there is none."""
        self.now = self.clock()
        return await self.preempt(state, pod, filtered_statuses)

    # --- the hooks (upstream's preemption.Interface) -------------------------------------------
    def get_offset_and_num_candidates(self, num_nodes: int, pod: PodInfo | None = None) -> tuple[int, int]:
        """A random node to start at, and how many candidates to gather (see the args)."""
        return self._offset(num_nodes, pod), self.args.num_candidates(num_nodes)

    def _offset(self, num_nodes: int, pod: PodInfo | None) -> int:
        if self.offset_source is not None:
            return self.offset_source(num_nodes)
        self._calls += 1
        uid = pod.uid if pod is not None else ""
        seed = (zlib.crc32(uid.encode()) << 32) | (self._calls & 0xFFFFFFFF)
        return random.Random(seed).randrange(num_nodes)

    def pod_eligible_to_preempt_others(self, pod: PodInfo, nominated_node_status: Status | None) -> tuple[bool, str]:
        """Not with ``preemptionPolicy: Never``; not while a lower-priority pod is being deleted
        on the node ``pod`` is nominated to, unless that node is UnschedulableAndUnresolvable
        now."""
        if pod.preemption_policy == "Never":
            return False, NOT_ELIGIBLE_NEVER
        nominated = (pod.pod.get("status") or {}).get("nominatedNodeName") or ""
        if nominated:
            if nominated_node_status is not None and nominated_node_status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return True, ""
            try:
                node = self.handle.snapshot().get(nominated)
            except Exception:  # noqa: BLE001 - the nominated node may be gone from the snapshot
                node = None
            if node is not None and any(p.deleting and p.priority < pod.priority for p in node.pods):
                return False, NOT_ELIGIBLE_TERMINATING
        return True, ""

    async def select_victims_on_node(
        self, state: CycleState, pod: PodInfo, node: NodeInfo, pdbs: Sequence[Mapping[str, Any]]
    ) -> tuple[list[PodInfo], int, Status | None]:
        """The fewest pods to evict from ``node`` (a copy, as is ``state``) for ``pod`` to fit,
        among those of lower priority that do not tolerate it; how many violate a PDB."""
        potential: list[PodInfo] = []
        listers = self.handle.listers
        for p in list(node.pods):
            if p.priority >= pod.priority:
                continue
            try:
                if exempted_from_preemption(p, pod, listers, self.now):
                    continue
            except PriorityClassNotFound as exc:
                return [], 0, Status(Code.ERROR, str(exc))
            potential.append(p)
            error = await self.remove_victims(state, pod, node, (p,))
            if error is not None:
                return [], 0, error
        if not potential:
            return [], 0, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, no_victims_message(node, pod))
        # Even without every potential victim the pod does not fit: preemption cannot help here.
        status = await self.handle.run_filter_with_nominated_pods(state, pod, node)
        if status is not None and not status.is_success():
            return [], 0, status
        return await self.reprieve_victims(state, pod, node, potential, pdbs)
