"""The scheduling cycle of a pod group (workload-aware scheduling, ``GenericWorkload``): a
group's pending members are placed together in one cycle, all of them or none.

The queue holds a group as one entity (:class:`~kubesched.framework.types.QueuedPodGroupInfo`)
and pops it whole; after the cycle the group goes back to the queue with its outcome
(:meth:`~kubesched.backend.queue.SchedulingQueue.add_attempted_pod_group`), which requeues the
members that failed and those that came meanwhile. The members are sorted (higher priority first, then the earlier first attempt, then the earlier
creation and the name), checked (one ``schedulerName``, the group's priority), and handed to
:class:`~kubesched.scheduler.podgroup.algorithm.PodGroupAlgorithm`. Then, as upstream submits
a group's result:

* Success: every placed member runs Permit and starts its own binding cycle, as a single pod
  does; a member that fit nowhere (a basic group, or a gang past its ``minCount``) is
  reported with its own reason.
* Unschedulable: every placed member was unreserved and is reported with the group's reason
  (e.g. ``minCount (8) cannot be satisfied: 7 scheduled, 0 remaining``); a member that fit
  nowhere with its own; a member never tried with the group's.
* Error: every member fails with its error, or the group's.

A group that fits nowhere runs the PodGroupPostFilter plugins (DefaultPreemption's
workload-aware preemption): when they make room, every member waits nominated to its node.

The PodGroup's ``PodGroupInitiallyScheduled`` condition says so (True once, never set back).
Members of a group do not run the per-pod PostFilter: a group preempts as one.

With ``CompositePodGroup`` (alpha), a member of a PodGroup under a CompositePodGroup brings the
pending members of every PodGroup of its hierarchy (all the leaves under its root), and the
hierarchy is placed by :class:`~kubesched.scheduler.podgroup.composite.CompositeAlgorithm`; the
result is submitted per leaf PodGroup as above (composite groups get no condition, as upstream).
Workload-aware preemption does not run for a hierarchy in kubesched.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Awaitable, Callable, Iterable

from kubesched.framework.interface import CycleState
from kubesched.framework.podgroup import (
    COMPOSITE_POD_GROUP_KIND,
    GroupKey,
    Placement,
    PodGroupAssignments,
    PodGroupInfo,
    PodGroupView,
    ProposedAssignment,
    group_key,
)
from kubesched.framework.status import Code, Status
from kubesched.framework.types import QueuedPodGroupInfo, QueuedPodInfo
from kubesched.runtime.framework import Framework
from kubesched.scheduler.binding_cycle import BindingCycle, PendingBinding
from kubesched.scheduler.context import SchedulerContext
from kubesched.scheduler.failures import FailureReporting
from kubesched.scheduler.podgroup.algorithm import GroupOutcome, MemberOutcome, PodGroupAlgorithm
from kubesched.scheduler.podgroup.composite import CompositeAlgorithm
from kubesched.scheduler.podgroup.condition import (
    REASON_SCHEDULED,
    REASON_SCHEDULER_ERROR,
    REASON_UNSCHEDULABLE,
    write_condition,
)
from kubesched.scheduler.results import PodResult
from kubesched.scheduler.schedule_one import PodPlacer

log = logging.getLogger("kubesched.scheduler")


def first_tried_together(members: list[QueuedPodInfo]) -> None:
    """Members tried for the first time in this cycle were first tried together: give them one
    first-attempt time, the earliest of theirs. The queue stamps the member it pops a moment
    before those taken with it, and which member it pops is up to timing; without this, the
    popped member would go first (and take the best node) in one run and not in another."""
    fresh = [q for q in members if q.attempts == 1 and q.initial_attempt_timestamp is not None]
    if len(fresh) > 1:
        t0 = min(q.initial_attempt_timestamp or 0.0 for q in fresh)
        for q in fresh:
            q.initial_attempt_timestamp = t0


def _nominated(q: QueuedPodInfo) -> bool:
    """Whether the member carries a nomination (which a failure clears)."""
    return bool(q.pod_info.nominated_node_name)


def member_order(q: QueuedPodInfo) -> tuple[int, float, float, str]:
    """The order members are tried in: higher priority, earlier first attempt, earlier creation,
    then the name (so that a cycle does not depend on the queue's shape)."""
    pi = q.pod_info
    return (-pi.priority, q.initial_attempt_timestamp or 0.0, pi.creation or 0.0, pi.name)


class PodGroupSchedulingCycle:
    """Pod groups' scheduling cycles, beside the pod's
    (:class:`~kubesched.scheduler.schedule_one.PodSchedulingCycle`, whose per-pod algorithm each
    member goes through, used as a :class:`~kubesched.scheduler.schedule_one.PodPlacer`) and
    sharing its binding cycle and failure reporting."""

    def __init__(
        self,
        ctx: SchedulerContext,
        pod_cycle: PodPlacer,
        binding: BindingCycle,
        failures: FailureReporting,
        rng: random.Random,
    ) -> None:
        self.ctx = ctx
        self.pod_cycle = pod_cycle
        self.binding = binding
        self.failures = failures
        self.options = ctx.options
        self.stats = ctx.stats
        self.observer = ctx.observer
        self.cache = ctx.cache
        self.queue = ctx.queue
        self.results = ctx.results
        self.pod_groups = ctx.pod_groups
        self.algorithm = PodGroupAlgorithm(ctx, pod_cycle, rng)
        self.composite = CompositeAlgorithm(self.algorithm)
        #: Whether PodGroups under a CompositePodGroup are placed as one hierarchy.
        self.hierarchies = ctx.options.feature_gates.enabled("CompositePodGroup")
        #: Groups scheduled, by outcome (``scheduled``, ``unschedulable``, ``error``).
        self.outcomes: dict[str, int] = {}

    def is_group_member(self, qpi: QueuedPodInfo) -> bool:
        """Whether ``qpi`` is decided by a pod group's cycle: a group the queue popped."""
        return isinstance(qpi, QueuedPodGroupInfo) and qpi.pod_info.scheduler_name in self.ctx.frameworks

    async def schedule(self, group: QueuedPodInfo) -> None:
        """Schedule the popped ``group``: its members together, or none of them; then hand it
        back to the queue with the outcome, which requeues what is left of it."""
        assert isinstance(group, QueuedPodGroupInfo)
        status: Status | None = Status.as_error("the pod group's cycle did not finish")
        try:
            status = await self._schedule(group)
        finally:
            self.queue.add_attempted_pod_group(group, status)

    async def _schedule(self, first: QueuedPodGroupInfo) -> Status | None:
        pi = first.pod_info
        fw = self.ctx.frameworks[pi.scheduler_name]
        ns, name = pi.namespace, pi.pod_group
        if self.hierarchies and PodGroupView(self.pod_groups.get(ns, name)).parent:
            return await self._schedule_hierarchy(fw, first)
        start = time.perf_counter()
        members = self._gather(first, self.pod_groups.members(ns, name))
        if not members:
            return None
        outcomes = [MemberOutcome(q, self._record(q)) for q in members]
        self.cache.update_snapshot(self.ctx.snapshot)
        fw.set_snapshot(self.ctx.snapshot)
        obj = self.pod_groups.get(ns, name)
        group = PodGroupInfo(ns, name, obj, [q.pod_info for q in members])
        problem = self._validate(group, members)
        if obj is None:
            problem = problem or Status(
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE, f"pod group {name!r} was not found in namespace {ns!r}"
            )
        nominated: dict[str, str] = {}
        if problem is not None:
            out = GroupOutcome(problem, outcomes)
        else:
            out = await self.algorithm.run(fw, group, outcomes)
            self._observe_algorithm(fw, start, out.placements_tried, out.feasible_placements)
            if out.status is not None and out.status.is_rejected() and fw.pod_group_post_filter_plugins:
                nominated = await self._post_filter(fw, group, out)
        await self._submit(fw, group, out, start, nominated)
        self._decided(fw, out.status, len(members), start)
        return out.status

    async def _schedule_hierarchy(self, fw: Framework, first: QueuedPodGroupInfo) -> Status | None:
        """Schedule the hierarchy of ``first``'s PodGroup (it names a CompositePodGroup): the
        pending members of every leaf under the root together, or none of them."""
        pi = first.pod_info
        ns = pi.namespace
        leaf = group_key(ns, pi.pod_group)
        root = self.pod_groups.root_of(leaf)
        keys = self.pod_groups.leaves_under(root) if root is not None else [leaf]
        uids = [uid for k in keys for uid in self.pod_groups.members(k.namespace, k.name)]
        start = time.perf_counter()
        taken = self._gather(first, uids)
        if not taken:
            return None
        members: dict[GroupKey, list[MemberOutcome]] = {}
        for q in taken:
            members.setdefault(group_key(ns, q.pod_info.pod_group), []).append(MemberOutcome(q, self._record(q)))
        self.cache.update_snapshot(self.ctx.snapshot)
        fw.set_snapshot(self.ctx.snapshot)
        problem: Status | None = None
        if root is None:
            problem = Status(
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                f"composite pod group {PodGroupView(self.pod_groups.get(ns, pi.pod_group)).parent!r} of pod group "
                f"{pi.pod_group!r} was not found in namespace {ns!r}",
            )
            tree = PodGroupInfo(ns, pi.pod_group, self.pod_groups.get(ns, pi.pod_group))
        else:
            tree = self._tree(root, members)
        other = next((q for q in taken if q.pod_info.scheduler_name != pi.scheduler_name), None)
        if problem is None and other is not None:
            # One hierarchy, one scheduler: its leaves are placed in one cycle of one profile.
            problem = Status.as_error(
                "all pods in a single pod group should have the same .spec.schedulerName set, "
                f"got: {pi.scheduler_name!r} and {other.pod_info.scheduler_name!r}"
            )
        for group in tree.leaves():
            own = members.get(group.key)
            if problem is None and own:
                problem = self._validate(group, [m.qpi for m in own])
        if problem is not None:
            results = {g.key: GroupOutcome(problem, members.get(g.key, [])) for g in tree.leaves()}
            status: Status | None = problem
        else:
            outcome = await self.composite.run(fw, tree, members)
            self._observe_algorithm(fw, start, outcome.placements_tried, outcome.feasible_placements)
            results, status = outcome.leaves, outcome.status
        nominated: dict[str, str] = {}
        if problem is None and status is not None and status.is_rejected() and fw.pod_group_post_filter_plugins:
            nominated = await self._post_filter_hierarchy(fw, tree, members, list(results.values()))
        if status is None:
            # Every leaf's placed members are in the cache before any runs Permit, which for a
            # member under a composite counts the whole hierarchy's placed members.
            for group in tree.leaves():
                self._assume_placed(results[group.key])
        for group in tree.leaves():
            await self._submit(fw, group, results[group.key], start, nominated, assumed=status is None)
        self._decided(fw, status, len(taken), start)
        return status

    def _gather(self, group: QueuedPodGroupInfo, uids: Iterable[str]) -> list[QueuedPodInfo]:
        """The popped group's members, and those among ``uids`` the queue holds in other groups
        (of the same hierarchy), in the order they are tried; those being deleted or assumed
        already are done with and left out."""
        popped = {m.pod_info.uid for m in group.members}
        queued = [*group.members, *self.queue.take_members(uid for uid in uids if uid not in popped)]
        members: list[QueuedPodInfo] = []
        for q in queued:
            if q.pod_info.deleting or self.cache.is_assumed(q.pod_info.uid):
                self.queue.done(q.pod_info.uid)
                continue
            members.append(q)
        first_tried_together(members)
        members.sort(key=member_order)
        return members

    def _observe_algorithm(self, fw: Framework, start: float, tried: int, feasible: int) -> None:
        """The placement's latency, and with placement plugins the placements it evaluated."""
        self.observer.pod_group_algorithm(time.perf_counter() - start)
        if fw.has_placement_plugins():
            self.observer.placements(fw.profile_name, tried, feasible, tried - feasible)

    def _decided(self, fw: Framework, status: Status | None, members: int, start: float) -> None:
        """A group's cycle is over: its members' attempts are counted once decided (the cycle
        gives the loop back between members, and what counts attempts — a benchmark, a test —
        must not take a group half placed for one decided), and the attempt is observed."""
        self.stats.attempts += members
        result = "scheduled" if status is None else "error" if status.code is Code.ERROR else "unschedulable"
        self.observer.pod_group_attempt(result, fw.profile_name, time.perf_counter() - start)

    def _tree(self, key: GroupKey, members: dict[GroupKey, list[MemberOutcome]]) -> PodGroupInfo:
        """The PodGroupInfo of ``key`` with its children (leaves with their members to place)."""
        obj = self.pod_groups.object(key)
        if key.is_composite:
            children = [self._tree(c, members) for c in self.pod_groups.children(key)]
            return PodGroupInfo(key.namespace, key.name, obj, kind=COMPOSITE_POD_GROUP_KIND, children=children)
        return PodGroupInfo(key.namespace, key.name, obj, [m.qpi.pod_info for m in members.get(key, ())])

    async def _post_filter(self, fw: Framework, group: PodGroupInfo, out: GroupOutcome) -> dict[str, str]:
        """PodGroupPostFilter (workload-aware preemption) for a group that fits nowhere: the
        node each member is nominated to, by ``namespace/name`` (empty when it cannot help). Its
        message, a success's too, is added to the group's reasons (so to the PodGroup's
        condition and the waiting members' messages), as upstream's."""

        async def schedule() -> tuple[PodGroupAssignments | None, Status | None]:
            trial = [MemberOutcome(m.qpi) for m in out.members]
            again = await self.algorithm.run(fw, group, trial, dry_run=True)
            if again.status is not None:
                return None, again.status
            placement = again.placement or Placement("", [])
            return (
                PodGroupAssignments(
                    placement, [ProposedAssignment(m.qpi.pod_info, m.node or "", m.state) for m in again.placed()]
                ),
                None,
            )

        return await self._run_post_filter(fw, group, schedule, [out])

    async def _post_filter_hierarchy(
        self, fw: Framework, tree: PodGroupInfo, members: dict[GroupKey, list[MemberOutcome]], outs: list[GroupOutcome]
    ) -> dict[str, str]:
        """PodGroupPostFilter for a CompositePodGroup hierarchy that fits nowhere: the hierarchy
        preempts as one preemptor (its root's priority and policy), its dry run the composite
        algorithm over every leaf's members, undone after; every leaf's outcome gets the message."""

        async def schedule() -> tuple[PodGroupAssignments | None, Status | None]:
            trial = {key: [MemberOutcome(m.qpi) for m in ms] for key, ms in members.items()}
            again = await self.composite.run(fw, tree, trial)
            if again.status is not None:
                return None, again.status
            held = list(again.held)
            await self.algorithm.revert(fw, held)
            proposed = [ProposedAssignment(m.qpi.pod_info, m.node or "", m.state) for m in held]
            return PodGroupAssignments(Placement("", []), proposed), None

        return await self._run_post_filter(fw, tree, schedule, outs)

    async def _run_post_filter(
        self,
        fw: Framework,
        group: PodGroupInfo,
        schedule: Callable[[], Awaitable[tuple[PodGroupAssignments | None, Status | None]]],
        outs: list[GroupOutcome],
    ) -> dict[str, str]:
        gstate = CycleState()
        gstate.pod_group = group
        t0 = time.perf_counter()
        result, status = await fw.run_pod_group_post_filter(gstate, group, schedule)
        self.ctx.extension_point("PodGroupPostFilter", status, fw, t0)
        if status.code is Code.ERROR:
            log.warning(
                "PodGroupPostFilter of pod group %s/%s failed: %s", group.namespace, group.name, status.message()
            )
        helped = status.is_success() and result is not None
        if helped:
            self.observer.preemption_attempt()
        if status.message():
            for out in outs:
                if out.status is None:
                    continue
                out.status = Status(out.status.code, *out.status.reasons, status.message(), plugin=out.status.plugin)
                if helped:
                    continue
                for m in out.members:
                    if m.fit is not None:
                        # As a single pod's: the member's own reasons, then why preemption did not help.
                        m.fit.diagnosis.post_filter_msg = status.message()
        return result.nominated if helped and result is not None else {}

    def _record(self, q: QueuedPodInfo) -> PodResult | None:
        if not self.options.record_results:
            return None
        pi = q.pod_info
        record = self.results.get(pi.key)
        if record is None:
            record = self.results[pi.key] = PodResult(pi.namespace, pi.name, pi.scheduler_name)
        record.reset_attempt()
        record.attempts = q.attempts
        return record

    def _validate(self, group: PodGroupInfo, members: list[QueuedPodInfo]) -> Status | None:
        """Upstream's checks of a group before it is placed: one scheduler, one priority."""
        pods = [q.pod_info for q in members]
        mine = {p.uid for p in pods}
        pods += [
            p for uid, p in self.pod_groups.state(group.namespace, group.name).scheduled.items() if uid not in mine
        ]
        first = pods[0]
        for p in pods[1:]:
            if p.scheduler_name != first.scheduler_name:
                return Status.as_error(
                    "all pods in a single pod group should have the same .spec.schedulerName set, "
                    f"got: {first.scheduler_name!r} and {p.scheduler_name!r}"
                )
        priority = group.priority
        if priority is not None:
            for p in pods:
                if p.priority != priority:
                    return Status.as_error(
                        "all pods in a single pod group should have the same priority as the pod group's "
                        f"priority, got {p.priority} and {priority}"
                    )
        return None

    def _assume_placed(self, out: GroupOutcome) -> None:
        """Assume a successful group's placed members in the cache (placed in the snapshot so
        far): from now on the cache holds them all, before any runs Permit (which, as
        GangScheduling's, may count the group's assumed pods)."""
        if out.status is not None:
            return
        for m in out.placed():
            assert m.assumed is not None and m.node is not None
            self.cache.assume_pod(m.assumed, m.node)
            self.ctx.nominator.delete(m.qpi.pod_info.uid)

    async def _submit(
        self,
        fw: Framework,
        group: PodGroupInfo,
        out: GroupOutcome,
        start: float,
        nominated: dict[str, str],
        assumed: bool = False,
    ) -> None:
        status = out.status
        if status is None:
            self.outcomes["scheduled"] = self.outcomes.get("scheduled", 0) + 1
            if not assumed:
                self._assume_placed(out)
            for m in out.members:
                if m.node is not None:
                    await self._bind(fw, m, start)
                else:
                    # Placed in part: the members left over go back to the group, requeued at
                    # once; their cycle runs the group's PostFilter (preemption) for them, as
                    # upstream binds first and preempts in the subsequent cycle.
                    self._fail_member(fw, m, None, start)
            self._condition(group, "True", REASON_SCHEDULED, "")
            return
        if status.code is Code.ERROR:
            self.outcomes["error"] = self.outcomes.get("error", 0) + 1
            for m in out.members:
                own = m.status if m.status is not None and m.status.code is Code.ERROR else status
                self.failures.fail(fw, m.qpi, own, m.record, start)
            self._condition(group, "False", REASON_SCHEDULER_ERROR, status.message())
            return
        outcome = "waiting_on_preemption" if nominated else "unschedulable"
        self.outcomes[outcome] = self.outcomes.get(outcome, 0) + 1
        # Members' nominations were counted where the others were tried, and the failure clears
        # them (the group is tried again after its backoff, as every failed group is).
        released = [] if nominated else [m.qpi.pod_info for m in out.members if _nominated(m.qpi)]
        for m in out.members:
            node = nominated.get(m.qpi.pod_info.key)
            if node:
                self._nominate(fw, m, status, node, start)
            else:
                self._fail_member(fw, m, status, start)
        # Other pods of lower or equal priority counted those nominations as placed: released,
        # they may fit now, as upstream retries them when a nominated pod is deleted.
        for pi in released:
            self.queue.assigned_pod_deleted(pi)
        self._condition(group, "False", REASON_UNSCHEDULABLE, status.message())

    def _nominate(self, fw: Framework, m: MemberOutcome, status: Status, node: str, start: float) -> None:
        """A member of a group that preemption made room for: it waits (Unschedulable, with the
        group's reason) nominated to ``node``, which the nominator holds for it meanwhile."""
        self.ctx.nominator.add(m.qpi.pod_info, node)
        rejectors = m.fit.diagnosis.unschedulable_plugins if m.fit is not None else {status.plugin} - {""}
        self._held(fw, m, status.message(), rejectors, start, node)

    def _held(
        self,
        fw: Framework,
        m: MemberOutcome,
        message: str,
        rejectors: set[str],
        start: float,
        nominated: str | None,
    ) -> None:
        """An unschedulable member: counted, recorded, back to its group in the queue with the
        plugins that rejected it, and reported with its nomination."""
        qpi = m.qpi
        seconds = time.perf_counter() - start
        self.stats.unschedulable += 1
        self.stats.attempt_durations.append(seconds)
        self.observer.schedule_attempt("unschedulable", fw.profile_name, seconds)
        if m.record is not None:
            m.record.phase = "Unschedulable"
            m.record.node = None
            m.record.message = message
        self.queue.add_unschedulable_if_not_present(qpi, rejectors)
        qpi.last_failure = message
        self.failures.report(fw, qpi.pod_info, "Unschedulable", message, m.record, nominated)

    async def _bind(self, fw: Framework, m: MemberOutcome, start: float) -> None:
        """A placed member of a group that fits (assumed already): Permit, then its own binding
        cycle."""
        assert m.node is not None and m.assumed is not None and m.state is not None
        state, node, assumed, qpi = m.state, m.node, m.assumed, m.qpi
        state.pod_group = None
        state.placement = None
        tr = self.ctx.traces(m.record)
        t0 = time.perf_counter()
        status = await fw.run_permit(state, assumed, node, tr.permit if tr else None)
        self.ctx.extension_point("Permit", status, fw, t0)
        if status is not None and not status.is_wait():
            await fw.run_unreserve(state, assumed, node)
            self.cache.forget_pod(assumed)
            self.failures.fail(fw, qpi, status, m.record, start, node=node)
            return
        self.stats.attempt_durations.append(time.perf_counter() - start)
        self.ctx.activate_requested(state)
        self.binding.spawn(PendingBinding(fw, state, qpi, assumed, node, m.record, start))

    def _fail_member(self, fw: Framework, m: MemberOutcome, group_status: Status | None, start: float) -> None:
        """A member left unplaced: with its own reason when it fit nowhere, else with the
        group's."""
        qpi = m.qpi
        if m.fit is not None:
            nominated: str | None = None
            if _nominated(qpi):
                nominated = ""  # cleared with the report, as a single pod's
                self.ctx.nominator.delete(qpi.pod_info.uid)
            self._held(fw, m, str(m.fit), m.fit.diagnosis.unschedulable_plugins, start, nominated)
            return
        status = m.status if m.status is not None and m.node is None else group_status
        if status is None:
            status = Status(Code.UNSCHEDULABLE, "pod group is unschedulable")
        self.failures.fail(fw, qpi, status, m.record, start)

    def _condition(self, group: PodGroupInfo, value: str, reason: str, message: str) -> None:
        """Set the PodGroup's ``PodGroupInitiallyScheduled`` condition (a side write)."""
        if group.obj is None or not self.options.report_to_cluster:
            return
        ns, name = group.namespace, group.name
        self.ctx.spawn_side(
            write_condition(self.ctx.cluster, lambda: self.pod_groups.get(ns, name), value, reason, message),
            name=f"condition of pod group {ns}/{name}",
        )
