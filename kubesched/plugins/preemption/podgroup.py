"""Workload-aware preemption (kube-scheduler 1.37, ``GenericWorkload``): a pod group that fits
nowhere preempts as one preemptor, with victims chosen across the whole cluster.

DefaultPreemption's PodGroupPostFilter hands the group here:

1. The preemptor is the group — a PodGroup, or a CompositePodGroup hierarchy as one (its pods
   every leaf's, its dry run the composite algorithm): its priority (the PodGroup's ``spec.priority``, else its members'),
   its preemption policy (the PodGroup's with ``PodGroupPreemptionPolicy``, else the first
   member's). ``Never`` is not eligible; nor is a group whose member's nominated node still has
   a lower-priority pod terminating by preemption.
2. Victims are *units*: a lower-priority pod, or — when its PodGroup's ``disruptionMode`` is
   ``all``, or a CompositePodGroup's above it — every placed pod under the topmost such group,
   which goes as one. A pod of a group counts with its
   group's priority. None: ``No preemption victims found for incoming preemptor``.
3. Every unit is taken off the snapshot and the group's placement is run again (the
   ``schedule`` the cycle gives); failing even so, that is the answer.
4. Units are then put back one by one — those with a pod whose eviction would violate a
   PodDisruptionBudget first, then the rest, each part the most important first (higher
   priority; a group before a single pod; more pods; earlier start): a unit with which every
   proposed member still passes Filter on its node, and its Reserve plugins with the members
   before it reserved, is spared, else it is taken off again and preempted.
5. The victims get the ``DisruptionTarget`` condition and are deleted (with
   SchedulerAsyncPreemption in the background, the members held at DefaultPreemption's
   PreEnqueue meanwhile), and every member is nominated to its proposed node; the Success says
   ``found a placement for podgroup, preempting K victims``, which the cycle adds to the
   group's message.

Groups with a topology constraint are refused, as 1.37 refuses them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from kubesched.framework.interface import CycleState, Handle
from kubesched.framework.podgroup import (
    GroupKey,
    PodGroupAssignments,
    PodGroupInfo,
    PodGroupPostFilterResult,
    PodGroupView,
)
from kubesched.framework.preemption_candidates import filter_pods_with_pdb_violation
from kubesched.framework.status import Code, Status
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.plugins.helper import feature_enabled
from kubesched.plugins.preemption.units import unit_key

NO_VICTIMS = "No preemption victims found for incoming preemptor"
TOPOLOGY_NOT_SUPPORTED = "not supported with topology constraints"
NOT_ELIGIBLE_NEVER = "not eligible due to preemptionPolicy=Never."
NOT_ELIGIBLE_TERMINATING = "not eligible due to a terminating pod on the nominated node."


def found_group_placement_message(victims: Sequence[PodInfo]) -> str:
    """What a successful preemption for a group says (1.37), once its victims are preempted: how
    many pods it preempts. It is added to the group's reasons, so the PodGroup's condition and
    its waiting members' messages end with it (after ``pod group preemption:``)."""
    return f"found a placement for podgroup, preempting {len(victims)} victims"


@runtime_checkable
class EditableSnapshot(Protocol):
    """A snapshot that takes tentative changes (the scheduler's does): pods taken off and put
    back on their nodes in it alone, as the pod group's cycle places its members."""

    def get(self, name: str) -> NodeInfo: ...

    def add_pod(self, pod: PodInfo) -> None: ...

    def remove_pod(self, pod: PodInfo) -> bool: ...


#: ``await schedule()``: the group's placement on the snapshot as it is now.
ScheduleFn = Callable[[], Awaitable[tuple[PodGroupAssignments | None, Status | None]]]


@dataclass(eq=False)
class Unit:
    """A victim as preemption counts them: one pod (``key`` its UID), or a whole group
    (disruptionMode ``all``; ``key`` the group's)."""

    key: str | GroupKey
    priority: int
    pods: list[PodInfo] = field(default_factory=list)
    is_group: bool = False

    def start(self) -> float:
        return min((p.creation or 0.0) for p in self.pods) if self.pods else 0.0

    def importance(self) -> tuple[int, int, int, float, str]:
        """Sort key, most important first."""
        return (-self.priority, 0 if self.is_group else 1, -len(self.pods), self.start(), str(self.key))


class PodGroupPreemption:
    """The evaluator of one DefaultPreemption instance (``handle`` is its profile)."""

    def __init__(self, handle: Handle, terminating: Callable[[dict[str, Any]], bool]) -> None:
        self.handle = handle
        self.terminating = terminating

    def preemptor_priority(self, group: PodGroupInfo) -> int:
        p = group.priority
        if p is not None:
            return p
        return max((pi.priority for pi in group.all_pods()), default=0)

    def preemption_policy(self, group: PodGroupInfo) -> str:
        gates = getattr(self.handle, "feature_gates", None)
        if gates is not None and gates.enabled("PodGroupPreemptionPolicy"):
            policy = group.view.preemption_policy
            if policy:
                return policy
        pods = group.all_pods()
        return pods[0].preemption_policy if pods else "PreemptLowerPriority"

    def eligible(self, group: PodGroupInfo, priority: int) -> str:
        """Why the group may not preempt (``""``: it may)."""
        if self.preemption_policy(group) == "Never":
            return NOT_ELIGIBLE_NEVER
        snapshot = self.handle.snapshot()
        for pi in group.all_pods():
            nominated = pi.nominated_node_name
            if not nominated:
                continue
            try:
                node = snapshot.get(nominated)
            except KeyError:
                continue
            for p in node.pods:
                if p.priority < priority and self.terminating(p.pod):
                    return NOT_ELIGIBLE_TERMINATING
        return ""

    def victim_units(self, group: PodGroupInfo, priority: int) -> list[Unit]:
        """Every lower-priority unit on the snapshot's nodes (the preemptor's own pods aside): a
        pod alone, or with every placed pod under the topmost group of its chain that says
        ``disruptionMode: all`` (:mod:`kubesched.plugins.preemption.units`)."""
        groups = self.handle.pod_groups
        composites = feature_enabled(self.handle, "CompositePodGroup")
        units: dict[str | GroupKey, Unit] = {}
        own = {leaf.name for leaf in group.leaves()}
        #: Each group's priority (``None``: unset) and unit, read once per group.
        per_group: dict[tuple[str, str], tuple[int | None, GroupKey | None]] = {}
        for node in self.handle.snapshot().list():
            for p in node.pods:
                group_prio: int | None = None
                group_unit: GroupKey | None = None
                if p.pod_group:
                    if p.namespace == group.namespace and p.pod_group in own:
                        continue
                    where = (p.namespace, p.pod_group)
                    found = per_group.get(where)
                    if found is None:
                        view = PodGroupView(groups.get(*where))
                        found = per_group[where] = (view.priority, unit_key(groups, *where, composites))
                    group_prio, group_unit = found
                prio = p.priority if group_prio is None else group_prio
                if prio >= priority:
                    continue
                if group_unit is not None:
                    unit = units.setdefault(group_unit, Unit(group_unit, prio, is_group=True))
                else:
                    unit = units.setdefault(p.uid, Unit(p.uid, prio))
                unit.pods.append(p)
        return sorted(units.values(), key=Unit.importance)

    async def preempt(
        self, state: CycleState, group: PodGroupInfo, schedule: ScheduleFn
    ) -> tuple[PodGroupPostFilterResult | None, Status, list[PodInfo]]:
        """The nominations, the outcome, and the pods to preempt (most important first)."""
        if group.topology_key:
            return None, Status(Code.UNSCHEDULABLE, TOPOLOGY_NOT_SUPPORTED), []
        priority = self.preemptor_priority(group)
        why = self.eligible(group, priority)
        if why:
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, why), []
        units = self.victim_units(group, priority)
        if not units:
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, NO_VICTIMS), []
        snapshot = self.handle.snapshot()
        if not isinstance(snapshot, EditableSnapshot):
            return None, Status.as_error("pod group preemption: the snapshot cannot be changed"), []
        for unit in units:
            for p in unit.pods:
                snapshot.remove_pod(p)
        assignments, status = await schedule()
        if status is not None and not status.is_success():
            return None, Status(status.code if status.code is Code.ERROR else Code.UNSCHEDULABLE, status.message()), []
        if assignments is None or not assignments.assignments:
            return None, Status(Code.UNSCHEDULABLE, "no member could be placed even without the victims"), []
        spared: list[PodInfo] = []
        victims: list[PodInfo] = []
        for unit in self.reprieve_order(units):
            for p in unit.pods:
                snapshot.add_pod(p)
            if await self._still_fits(snapshot, assignments, [*spared, *unit.pods]):
                spared.extend(unit.pods)
            else:
                for p in unit.pods:
                    snapshot.remove_pod(p)
                victims.extend(unit.pods)
        nominated = {a.pod.key: a.node_name for a in assignments.assignments}
        return PodGroupPostFilterResult(nominated), Status(Code.SUCCESS), victims

    def reprieve_order(self, units: list[Unit]) -> list[Unit]:
        """The order units are put back in: those whose eviction would violate a
        PodDisruptionBudget first (best-effort reprieve of PDB-protected victims, KEP-5710), each
        part most important first, as a single pod's reprieve goes."""
        pdbs = list(self.handle.listers.list("PodDisruptionBudget"))
        if not pdbs:
            return units
        violating, _ = filter_pods_with_pdb_violation([p for u in units for p in u.pods], pdbs)
        protected = {p.uid for p in violating}
        return sorted(units, key=lambda u: 0 if any(p.uid in protected for p in u.pods) else 1)

    async def _still_fits(
        self, snapshot: EditableSnapshot, assignments: PodGroupAssignments, present: Sequence[PodInfo]
    ) -> bool:
        """Whether every proposed member passes Filter on its node (with the pods nominated there,
        as upstream's reprieve filters), in order, with ``present`` (victims put back) told to
        its PreFilter state and the earlier members placed and reserved: as 1.37's reprieve, the
        Reserve plugins run for each member placed, so a plugin that keeps its own account (a
        quota, a device) sees the members before it; every one is unreserved afterwards."""
        fw = self.handle
        #: The members placed on the snapshot so far, each with the state it was reserved with.
        placed: list[tuple[CycleState, PodInfo, str]] = []
        try:
            for a in assignments.assignments:
                base: CycleState = a.state if a.state is not None else CycleState()
                state = base.clone()
                if fw.pre_filter_extensions_in_play(state):
                    for v in present:
                        node: NodeInfo = snapshot.get(v.node_name)
                        status = await fw.run_pre_filter_add_pod(state, a.pod, v, node)
                        if status is not None and not status.is_success():
                            return False
                # With the pods nominated there counted, as the search counted them: a victim is
                # spared only where the member fits beside what others were promised.
                status = await fw.run_filter_with_nominated_pods(state, a.pod, snapshot.get(a.node_name))
                if status is not None and not status.is_success():
                    return False
                tentative = a.pod.with_node(a.node_name)
                snapshot.add_pod(tentative)
                # A failed Reserve is unreserved too, as a cycle's is: its plugins may have
                # counted part of the pod before one refused it.
                placed.append((state, tentative, a.node_name))
                status = await fw.run_reserve(state, tentative, a.node_name)
                if status is not None and not status.is_success():
                    return False
            return True
        finally:
            # Undone last first, each unreserved and then taken off, as the cycle reverts its
            # tentative placements.
            for placed_state, p, node_name in reversed(placed):
                await fw.run_unreserve(placed_state, p, node_name)
                snapshot.remove_pod(p)
