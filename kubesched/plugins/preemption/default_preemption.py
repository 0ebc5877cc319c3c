"""DefaultPreemption: when no node fits, evict lower-priority pods to make room (PostFilter).

Upstream's ``defaultpreemption`` plugin: a :class:`~kubesched.framework.preemption.PreemptionEvaluator`
(the generic flow, public in the face) with this plugin's hooks — eligibility, victim selection
with PodDisruptionBudgets and reprieve, and the sampled candidate search:

1. The preemptor must be eligible: not ``preemptionPolicy: Never``, and not already waiting for
   victims it preempted earlier to terminate on its nominated node.
2. Only nodes whose Filter status was Unschedulable are tried (UnschedulableAndUnresolvable
   means evicting pods cannot help). Starting at a random offset, each is dry-run on a copy of
   the cycle state and the node: every lower-priority pod is removed, the preemptor must then
   fit, and victims are reprieved one by one (PDB-violating first, each group most important
   first) as long as the preemptor still fits. The search stops once enough candidates are
   found (``minCandidateNodesPercentage`` / ``minCandidateNodesAbsolute``), counting at least
   one that violates no PodDisruptionBudget.
3. The best candidate is picked (see :func:`pick_one_node_for_preemption`), its victims are
   deleted (or, when waiting at Permit, preempted in memory: their binding cycle fails with an
   Error and they back off, as in 1.36) with a ``Preempted`` event each, and lower-priority
   pods nominated to that node lose their nomination.
4. The preemptor is nominated to the node; it is scheduled once the victims are gone.

With async preemption (upstream's SchedulerAsyncPreemption, on by default since 1.33) step 3
runs in the background: the cycle nominates the preemptor at once and moves on to the next pod.
Until the background work has deleted every victim but the last, the preemptor is held by this
plugin's PreEnqueue ("waiting for the preemption for this pod to be finished"); the last
victim's deletion is then the event that brings it back. When an API call fails, the preemptor
is activated so that it does not wait in the pool for an event that will not come.
"""

from __future__ import annotations

import logging
import random
import zlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from kubesched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource, QueueingHint
from kubesched.framework.interface import CycleState, PostFilterResult
from kubesched.framework.podgroup import GroupKey, PodGroupInfo, PodGroupPostFilterResult
from kubesched.framework.preemption import (
    DISRUPTION_TARGET,
    PREEMPTION_BY_SCHEDULER,
    PreemptionEvaluator,
    PreemptionInterface,
    VictimShortcut,
    pod_terminating_by_preemption,
)
from kubesched.framework.preemption_args import DefaultPreemptionArgs
from kubesched.framework.preemption_candidates import NO_VICTIMS_FOUND, Candidate
from kubesched.framework.status import Code, Status
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.plugins.helper import feature_enabled
from kubesched.plugins.preemption.arithmetic import ArithmeticVictims
from kubesched.plugins.preemption.podgroup import (
    PodGroupPreemption,
    ScheduleFn,
    found_group_placement_message,
)
from kubesched.plugins.preemption.units import reprieve_units, units_on_node

log = logging.getLogger(__name__)

NAME = "DefaultPreemption"

NOT_ELIGIBLE_NEVER = "not eligible due to preemptionPolicy=Never."
NOT_ELIGIBLE_TERMINATING = "not eligible due to a terminating pod on the nominated node."

WAITING_FOR_PREEMPTION = "waiting for the preemption for this pod to be finished"
WAITING_FOR_GROUP_PREEMPTION = "waiting for the preemption for this pod group to be finished"
#: A pod group preempts over the whole cluster: 1.37 names that candidate "cluster", and the
#: victims' events say so ("Preempted by podgroup <uid> on node cluster").
GROUP_DOMAIN = "cluster"

__all__ = [
    "DISRUPTION_TARGET",
    "NAME",
    "NOT_ELIGIBLE_NEVER",
    "NOT_ELIGIBLE_TERMINATING",
    "PREEMPTION_BY_SCHEDULER",
    "WAITING_FOR_PREEMPTION",
    "DefaultPreemption",
    "DefaultPreemptionArgs",
    "pod_terminating_by_preemption",
]


class DefaultPreemption(PreemptionEvaluator, PreemptionInterface):
    """PostFilter: nominate the pod to a node where evicting lower-priority pods makes it fit.

    The evaluator's flow (:class:`PreemptionEvaluator`) with this plugin's hooks: upstream's
    DefaultPreemption embeds the evaluator the same way."""

    name = NAME
    Args = DefaultPreemptionArgs

    def __init__(self, args: DefaultPreemptionArgs | None, handle: Any = None) -> None:
        super().__init__(NAME, handle)
        self.args = args if args is not None else DefaultPreemptionArgs()
        #: ``offset_source(num_nodes)`` picks where the candidate search starts. By default it is
        #: derived from the pod's uid and this instance's call count, so a run is reproducible
        #: yet successive attempts start at different nodes. Tests may replace it.
        self.offset_source: Callable[[int], int] | None = None
        self._calls = 0
        #: Per node name: (generation, the lowest priority of its pods).
        self._lowest: dict[str, tuple[int, int | None]] = {}

    # --- PreEnqueue -------------------------------------------------------------------------
    def pre_enqueue(self, pod: PodInfo) -> Status | None:
        """Hold a preemptor back while its preemption is still deleting victims."""
        if self.is_pod_running_preemption(pod.uid):
            why = WAITING_FOR_GROUP_PREEMPTION if pod.pod_group else WAITING_FOR_PREEMPTION
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, why)
        return None

    # --- PostFilter -------------------------------------------------------------------------
    async def post_filter(
        self, state: CycleState, pod: PodInfo, filtered_statuses: Mapping[str, Status]
    ) -> tuple[PostFilterResult | None, Status]:
        result, status = await self.preempt(state, pod, filtered_statuses)
        msg = status.message()
        if msg:
            return result, Status(status.code, f"preemption: {msg}")
        return result, status

    # --- PodGroupPostFilter (workload-aware preemption) ----------------------------------------
    async def pod_group_post_filter(
        self, state: CycleState, group: PodGroupInfo, schedule: ScheduleFn
    ) -> tuple[PodGroupPostFilterResult | None, Status]:
        """A pod group that fits nowhere preempts as one (see
        :mod:`kubesched.plugins.preemption.podgroup`); messages start ``pod group preemption:``,
        a success's too (``found a placement for podgroup, preempting K victims``)."""
        evaluator = PodGroupPreemption(self.handle, pod_terminating_by_preemption)
        result, status, victims = await evaluator.preempt(state, group, schedule)
        observer = getattr(self.handle, "observer", None)
        record = getattr(observer, "workload_preemption", None)
        if callable(record):
            record(status.code.upstream_name, len(victims) if status.is_success() else 0)
        if status.is_success() and victims:
            preemptor = group.all_pods()[0]
            if self._async_enabled():
                # As a single pod's: the members are held at PreEnqueue until every victim but
                # the last is deleted, in the background; the cycle nominates them at once.
                self.prepare_candidate_async(Candidate(GROUP_DOMAIN, list(victims)), preemptor, group)
            else:
                for victim in victims:
                    if victim.deleting:
                        continue
                    try:
                        await self.preempt_pod(Candidate(GROUP_DOMAIN, [victim]), preemptor, victim, group)
                    except Exception as exc:  # noqa: BLE001 - an API failure fails this attempt
                        return None, Status(Code.ERROR, f"pod group preemption: {exc}")
        if status.is_success():
            status = Status(Code.SUCCESS, found_group_placement_message(victims))
        msg = status.message()
        if msg:
            return result, Status(status.code, f"pod group preemption: {msg}")
        return result, status

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """With async preemption, pod deletions, hinted Skip: this plugin's PreEnqueue holds
        only preemptors, whose other rejecting plugins (the filters preemption works around)
        decide when a deletion lets them go. Without it the plugin rejects nothing."""
        if not self._async_enabled():
            return []
        return [ClusterEventWithHint(ClusterEvent(EventResource.POD, ActionType.DELETE), _skip)]

    # --- eligibility ----------------------------------------------------------------------------
    def pod_eligible_to_preempt_others(self, pod: PodInfo, nominated_node_status: Status | None) -> tuple[bool, str]:
        """Whether ``pod`` may preempt others now, and why not.

        Not with ``preemptionPolicy: Never``. Not while a lower-priority pod it preempted is
        still terminating on its nominated node (unless that node has become
        UnschedulableAndUnresolvable, in which case preempting elsewhere is the way forward).
        """
        if pod.preemption_policy == "Never":
            return False, NOT_ELIGIBLE_NEVER
        nominated = pod.nominated_node_name
        if nominated:
            if nominated_node_status is not None and nominated_node_status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return True, ""
            try:
                node = self.handle.snapshot().get(nominated)
            except Exception:  # noqa: BLE001 - the nominated node may be gone from the snapshot
                node = None
            if node is not None:
                for p in node.pods:
                    if self.is_preemption_allowed(node, p, pod) and pod_terminating_by_preemption(p.pod):
                        return False, NOT_ELIGIBLE_TERMINATING
        return True, ""

    def is_preemption_allowed(self, node: NodeInfo, victim: PodInfo, preemptor: PodInfo) -> bool:
        """Only pods of lower priority than the preemptor may be evicted."""
        return victim.priority < preemptor.priority

    def _lowest_priority(self, node: NodeInfo) -> int | None:
        """The lowest priority among the node's pods (None: it has none), cached by generation."""
        cached = self._lowest.get(node.name)
        if cached is not None and cached[0] == node.generation:
            return cached[1]
        lowest = min((p.priority for p in node.pods), default=None)
        self._lowest[node.name] = (node.generation, lowest)
        return lowest

    # --- finding candidates -------------------------------------------------------------------
    def victim_shortcut(self, state: CycleState, pod: PodInfo) -> VictimShortcut | None:
        """Where victims are chosen as here (a subclass may choose otherwise): a node whose pods
        all rank at least as high as the preemptor has none, known from its lowest priority; and
        where only resources are at stake, :class:`ArithmeticVictims` gives the answer. Neither
        copies node or state."""
        if type(self).select_victims_on_node is not DefaultPreemption.select_victims_on_node:
            return None
        lowest = (
            self._lowest_priority
            if type(self).is_preemption_allowed is DefaultPreemption.is_preemption_allowed
            else None
        )
        arithmetic = ArithmeticVictims.for_cycle(self.handle, state, pod, self.is_preemption_allowed, lowest)
        if arithmetic is None and lowest is None:
            return None
        priority = pod.priority
        grouped = feature_enabled(self.handle, "GenericWorkload")

        def shortcut(
            node: NodeInfo, pdbs: Sequence[Mapping[str, Any]]
        ) -> tuple[list[PodInfo], int, Status | None] | None:
            if grouped and self._units([p for p in node.pods if p.pod_group and p.priority < priority]) is not None:
                return None  # victims go by units here: the full search
            got = arithmetic.select(node, pdbs) if arithmetic is not None else None
            if got is None and lowest is not None and ((low := lowest(node)) is None or low >= priority):
                return [], 0, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, NO_VICTIMS_FOUND)
            return got

        return shortcut

    def calculate_num_candidates(self, num_nodes: int) -> int:
        """How many candidates to gather: the configured share of ``num_nodes``, at least the
        configured absolute number, never more than ``num_nodes``."""
        return self.args.num_candidates(num_nodes)

    def get_offset_and_num_candidates(self, num_nodes: int, pod: PodInfo | None = None) -> tuple[int, int]:
        return self._random_offset(num_nodes, pod), self.calculate_num_candidates(num_nodes)

    def _random_offset(self, num_nodes: int, pod: PodInfo | None) -> int:
        if self.offset_source is not None:
            return self.offset_source(num_nodes)
        self._calls += 1
        uid = pod.uid if pod is not None else ""
        seed = (zlib.crc32(uid.encode()) << 32) | (self._calls & 0xFFFFFFFF)
        return random.Random(seed).randrange(num_nodes)

    async def select_victims_on_node(
        self, state: CycleState, pod: PodInfo, node: NodeInfo, pdbs: Sequence[Mapping[str, Any]]
    ) -> tuple[list[PodInfo], int, Status | None]:
        """The fewest lower-priority pods to evict from ``node`` (a copy, as is ``state``) for
        ``pod`` to fit, most important first, and how many of them violate a PDB."""
        potential = [p for p in node.pods if self.is_preemption_allowed(node, p, pod)]
        error = await self.remove_victims(state, pod, node, potential)
        if error is not None:
            return [], 0, error
        if not potential:
            return [], 0, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, NO_VICTIMS_FOUND)

        # Even with every lower-priority pod gone the pod does not fit: preemption cannot help
        # here. (Affinity of the preemptor to one of the victims is deliberately not handled.)
        status = await self.handle.run_filter_with_nominated_pods(state, pod, node)
        if status is not None and status.code is not Code.SUCCESS:
            return [], 0, status
        units = self._units(potential)
        if units is not None:
            # A victim whose group (or composite above it) says disruptionMode all goes with
            # every placed pod of that group, on other nodes too (KEP-5710's units).
            return await reprieve_units(self, state, pod, node, potential, pdbs, units)
        return await self.reprieve_victims(state, pod, node, potential, pdbs)

    def _units(self, pods: Sequence[PodInfo]) -> dict[str, GroupKey] | None:
        """The unit of each of ``pods`` that is disrupted with its group, by uid (``None``:
        each goes alone, as always without GenericWorkload)."""
        if not feature_enabled(self.handle, "GenericWorkload"):
            return None
        return units_on_node(self.handle.pod_groups, pods, feature_enabled(self.handle, "CompositePodGroup"))


def _skip(pod: Any, old: Any, new: Any) -> QueueingHint:
    return QueueingHint.SKIP
