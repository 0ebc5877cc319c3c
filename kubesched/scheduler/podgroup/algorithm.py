"""Where a pod group's members go: upstream's pod-group scheduling algorithm (1.37).

Within one placement (the whole cluster, unless PlacementGenerate plugins propose node sets):

1. PlacementFeasible before any member is tried (``remaining`` = the members to place,
   ``scheduled`` = members bound or assumed before this cycle); Unschedulable ends it at once.
2. Each member in turn goes through the pod cycle's algorithm (PreFilter, Filter, PreScore,
   Score, select host; no PostFilter), restricted to the placement's nodes; a member that fits
   is assumed and reserved at once, so the next member sees it. A member that errs ends the
   evaluation (``failed to schedule other pod from a pod group: ...``).
3. PlacementFeasible after each member; Unschedulable stops the loop. A Wait left at the end is
   Unschedulable: the group's minimum was not reached.
4. Anything but Success reverts every reservation made (Unreserve, forget): all or nothing.

With placements, the one holding most of the members' nominated nodes (where preemption made
room) is tried first and taken if the group fits there; otherwise each is evaluated and reverted
in turn; none feasible makes the group
Unschedulable (``0/N placements are available, first placement status: ...``); several are
ranked by PlacementScore (ties broken at random); the winner's members are assumed and
reserved again. When every PlacementScore plugin gives bounds on its scores, placements are
evaluated highest bound first and the first where every member fits is taken as it is, the
rest unevaluated: the same choice, with the same chances (:mod:`.ranking`). A single placement
where the group fits is kept as its evaluation left it (it would win unscored: undoing and
redoing it changes nothing). Each member's cycle gets the
placement's nodes as they are now, their rows in the snapshot's columns looked up once per
evaluation; a placement of every node in the snapshot's order gets the snapshot's own list.

Members are placed tentatively in the snapshot alone (as upstream's newest algorithm), never in
the cache: the next member sees them, a revert takes them off again, and whatever a cycle leaves
in the snapshot is undone by its next update from the cache. Only a group that succeeds is
assumed in the cache, by the cycle that submits it.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from dataclasses import dataclass, field
from operator import itemgetter

import numpy as np

from kubesched.backend.pod_groups import PodGroupIndex
from kubesched.framework.columns import NodeSubset
from kubesched.framework.interface import CycleState
from kubesched.framework.podgroup import (
    Placement,
    PlacementProgress,
    PodGroupAssignments,
    PodGroupInfo,
    ProposedAssignment,
)
from kubesched.framework.status import Code, Status
from kubesched.framework.types import NodeInfo, PodInfo, QueuedPodInfo
from kubesched.runtime.framework import Framework
from kubesched.scheduler.context import SchedulerContext
from kubesched.scheduler.errors import CycleError, FitError
from kubesched.scheduler.podgroup.ranking import ranked
from kubesched.scheduler.results import PodResult
from kubesched.scheduler.schedule_one import PodPlacer, Tentative

log = logging.getLogger("kubesched.scheduler")

#: Members placed between two yields of the event loop (see :meth:`PodGroupAlgorithm._evaluate`).
YIELD_EVERY = 16


@dataclass(eq=False)
class MemberOutcome:
    """One member in one evaluation: placed (``node``), rejected (``fit`` or ``status``), or
    not tried (all ``None``)."""

    qpi: QueuedPodInfo
    record: PodResult | None = None
    node: str | None = None
    assumed: PodInfo | None = None
    state: CycleState | None = None
    fit: FitError | None = None
    status: Status | None = None


@dataclass(eq=False)
class GroupOutcome:
    """An evaluation's result: ``status`` None is Success (the placed members stay reserved)."""

    status: Status | None
    members: list[MemberOutcome]
    placement: Placement | None = None
    placement_state: CycleState | None = None
    placements_tried: int = 0
    #: Placements where the group fit (of those tried).
    feasible_placements: int = 0
    scores: dict[str, int] = field(default_factory=dict)

    def placed(self) -> list[MemberOutcome]:
        return [m for m in self.members if m.node is not None]


class PodGroupAlgorithm:
    """Evaluates placements for a group's members with the pod cycle's per-pod algorithm, which
    it uses through :class:`~kubesched.scheduler.schedule_one.PodPlacer` alone."""

    def __init__(self, ctx: SchedulerContext, pod_cycle: PodPlacer, rng: random.Random) -> None:
        self.ctx = ctx
        self.pod_cycle = pod_cycle
        self.cache = ctx.cache
        self.snapshot = ctx.snapshot
        self.pod_groups: PodGroupIndex = ctx.pod_groups
        self.rng = rng

    async def run(
        self, fw: Framework, group: PodGroupInfo, members: list[MemberOutcome], dry_run: bool = False
    ) -> GroupOutcome:
        """Place ``members`` (in order) or none of them; see the module docstring. A
        ``dry_run`` (preemption's) undoes even a success: only the outcome says where they went."""
        out = await self._run(fw, group, members, resync=not dry_run)
        if dry_run and out.status is None:
            await self.revert(fw, out.placed())
        return out

    async def _run(
        self, fw: Framework, group: PodGroupInfo, members: list[MemberOutcome], resync: bool = True
    ) -> GroupOutcome:
        if not fw.has_placement_plugins():
            return await self._run_one(fw, group, members, Placement("", []), restricted=False)
        return await self._run_placements(fw, group, members, resync=resync)

    async def run_within(
        self, fw: Framework, group: PodGroupInfo, members: list[MemberOutcome], parent: Placement
    ) -> GroupOutcome:
        """Place a leaf of a CompositePodGroup within its parent's placement: as :meth:`run`,
        but only on ``parent``'s nodes, without the nominated placement first (upstream keeps
        that to standalone groups), and leaving the snapshot as the hierarchy's evaluation has
        it (siblings placed before stay)."""
        if not fw.has_placement_plugins():
            return await self._run_one(fw, group, members, parent, restricted=True)
        return await self._run_placements(fw, group, members, parent)

    async def _run_one(
        self, fw: Framework, group: PodGroupInfo, members: list[MemberOutcome], placement: Placement, restricted: bool
    ) -> GroupOutcome:
        """The one placement there is (no PlacementGenerate plugin): evaluated, undone unless
        the group fits."""
        out = await self._evaluate(fw, group, members, placement, restricted)
        if out.status is not None:
            await self.revert(fw, out.placed())
        out.placements_tried = 1
        return out

    def current_nodes(self, names: list[str], rows_of: NodeSubset | None = None) -> NodeSubset:
        """The snapshot's nodes of ``names`` as they are now (tentative placements change them);
        ``rows_of``: the subset the same ``names`` gave before, whose rows it keeps."""
        found = self.snapshot.node_info_map
        if rows_of is None or len(rows_of) != len(names):
            rows_of = None
        try:
            if len(names) > 1:
                return NodeSubset(itemgetter(*names)(found), rows_of)
            return NodeSubset([found[n] for n in names], rows_of)
        except KeyError:
            return NodeSubset([found[n] for n in names if n in found])

    def _is_listed(self, placement: Placement) -> bool:
        """Whether ``placement`` holds the snapshot's nodes, all of them, in its order."""
        listed = self.snapshot.node_info_list
        if len(placement.nodes) != len(listed):
            return False
        # The very NodeInfos (compared by identity), else the same names.
        return placement.nodes == listed or placement.node_names() == self.snapshot.columns().names

    async def _run_placements(
        self,
        fw: Framework,
        group: PodGroupInfo,
        members: list[MemberOutcome],
        within: Placement | None = None,
        resync: bool = True,
    ) -> GroupOutcome:
        """Each placement evaluated and undone, the best reapplied. Unless ``resync`` is off (a
        preemption's dry run, whose caller has taken victims off the snapshot and puts them
        back itself), the snapshot is brought in step with the cache after the evaluations."""
        gstate = CycleState()
        gstate.pod_group = group
        if within is None:
            listed = self.snapshot.list()
            parent = Placement("", NodeSubset.at_rows(listed, self.snapshot.columns(), np.arange(len(listed))))
        else:
            parent = Placement(within.name, self.current_nodes(within.node_names()), within.data)
        placements, status = await fw.run_placement_generate(gstate, group, parent)
        if status is not None:
            return GroupOutcome(status, members)
        feasible: list[tuple[int, Placement, GroupOutcome]] = []
        first: tuple[int, GroupOutcome] | None = None
        nominated = self.nominated_placement(group, placements) if within is None else None
        if nominated is not None:
            # Where preemption made room for the members: tried first, and taken when the group
            # fits there, without scoring the others.
            placements = [nominated, *(p for p in placements if p is not nominated)]
        bounds = None
        if nominated is None and len(placements) > 1:
            bounds = fw.placement_score_bounds(gstate, group, placements, [m.qpi.pod_info for m in members])
        # Highest bound first, the first placement where the whole group fits taken (see ranking).
        order = range(len(placements)) if bounds is None else ranked(bounds, self.rng)
        for at in order:
            placement = placements[at]
            trial = [MemberOutcome(m.qpi, m.record) for m in members]
            started = time.perf_counter()
            out = await self._evaluate(fw, group, trial, placement, restricted=True)
            self.evaluated(fw, out.status, started)
            if out.status is None and (
                placement is nominated
                or len(placements) == 1
                or (bounds is not None and not feasible and len(out.placed()) == len(members))
            ):
                # Taken as it is: the nominated placement, the one placement there is (which
                # would win unscored), or the first where every member fits of the highest
                # bound reached. Undoing it to apply it again would change nothing.
                out.placements_tried = 1 if placement is nominated else len(placements)
                out.feasible_placements = 1
                return out
            await self.revert(fw, out.placed())
            if out.status is not None and out.status.code is Code.ERROR:
                out.placements_tried = len(placements)
                return out
            if out.status is None:
                feasible.append((at, placement, out))
            elif first is None or at < first[0]:
                first = (at, out)
        if within is None and resync:
            # Every evaluation was undone; bring the snapshot in step with the cache. Inside a
            # hierarchy the snapshot holds the siblings' tentative placements: keep it as is.
            self.cache.update_snapshot(self.snapshot)
        if not feasible:
            status = first[1].status if first is not None else None
            reason = status.message() if status is not None else "no placement"
            status = Status(
                Code.UNSCHEDULABLE,
                f"0/{len(placements)} placements are available, first placement status: {reason}",
                plugin=status.plugin if status is not None else "",
            )
            base = first[1].members if first is not None else members
            return GroupOutcome(status, base, placements_tried=len(placements))
        feasible.sort(key=itemgetter(0))
        best = feasible[0]
        scores: dict[str, int] = {}
        if len(feasible) > 1:
            proposals = [
                (
                    out.placement_state or CycleState(),
                    PodGroupAssignments(
                        p, [ProposedAssignment(m.qpi.pod_info, m.node or "", m.state) for m in out.placed()]
                    ),
                )
                for _, p, out in feasible
            ]
            totals, status = await fw.run_placement_score(gstate, group, proposals)
            if status is not None:
                return GroupOutcome(status, members, placements_tried=len(placements))
            top = max(totals)
            ties = [i for i, t in enumerate(totals) if t == top]
            best = feasible[ties[0] if len(ties) == 1 else ties[self.rng.randrange(len(ties))]]
            scores = {p.name: t for (_, p, _), t in zip(feasible, totals, strict=True)}
        _, placement, out = best
        status = await self._reapply(fw, out)
        if status is not None:
            return GroupOutcome(status, out.members, placement, placements_tried=len(placements))
        out.placements_tried = len(placements)
        out.feasible_placements = len(feasible)
        out.scores = scores
        return out

    def evaluated(self, fw: Framework, status: Status | None, started: float) -> None:
        """A candidate placement's evaluation, begun at ``started``, ended with ``status``:
        observed as feasible or infeasible with its latency (an error is neither, as upstream)."""
        if status is None or status.code is not Code.ERROR:
            self.ctx.observer.placement_evaluated(fw.profile_name, status is None, time.perf_counter() - started)

    @staticmethod
    def nominated_placement(group: PodGroupInfo, placements: list[Placement]) -> Placement | None:
        """The placement holding most of the members' nominated nodes (the first on a tie), if
        any member is nominated (a hierarchy's members: every leaf's)."""
        nodes = [p.nominated_node_name for p in group.all_pods()]
        wanted = [n for n in nodes if n]
        if not wanted:
            return None
        best: Placement | None = None
        most = 0
        for placement in placements:
            names = set(placement.node_names())
            count = sum(1 for n in wanted if n in names)
            if count > most:
                best, most = placement, count
        return best

    async def _evaluate(
        self, fw: Framework, group: PodGroupInfo, members: list[MemberOutcome], placement: Placement, restricted: bool
    ) -> GroupOutcome:
        pstate = CycleState()
        pstate.pod_group = group
        pstate.placement = placement
        mine = {m.qpi.pod_info.uid for m in members}
        before = self.pod_groups.state(group.namespace, group.name)
        progress = PlacementProgress(len(members), sum(1 for uid in before.scheduled if uid not in mine))
        out = GroupOutcome(None, members, placement, pstate)
        status = await fw.run_placement_feasible(pstate, group, progress)
        if status is not None and not status.is_wait():
            out.status = status
            return out
        # A placement of every node in the snapshot's order (a group without a topology
        # constraint) is handed the snapshot's own list, which it keeps current.
        whole = self.snapshot.node_info_list if restricted and self._is_listed(placement) else None
        names = placement.node_names() if restricted and whole is None else None
        nodes: list[NodeInfo] | None = None
        if restricted and isinstance(placement.nodes, NodeSubset):
            nodes = placement.nodes  # the first member's nodes take its rows
        pc = self.pod_cycle
        fw.set_snapshot(self.snapshot)
        for i, m in enumerate(members):
            if i and i % YIELD_EVERY == 0:
                # A large group is long CPU work on the loop that also carries binds, watch
                # events and lease renewals: give it back now and then, as between pods.
                await asyncio.sleep(0)
            pi = m.qpi.pod_info
            if whole is not None and self.snapshot.node_info_list is whole:
                nodes = whole
            elif restricted:
                if names is None:  # the snapshot was listed anew meanwhile
                    names = placement.node_names()
                nodes = self.current_nodes(names, nodes if isinstance(nodes, NodeSubset) else None)
            state = CycleState()
            state.pod_group = group
            state.placement = placement
            try:
                node = await pc.place(fw, state, pi, self.ctx.traces(m.record), nodes)
            except FitError as fit:
                m.fit = fit
            except CycleError as err:
                m.status = err.status
                if err.status.code is Code.ERROR:
                    out.status = Status(
                        Code.ERROR,
                        f"failed to schedule other pod from a pod group: {err.status.message()}",
                        plugin=err.status.plugin,
                        error=err.status.error,
                    )
                    return out
            else:
                status = await self.reserve(fw, m, state, node)
                if status is not None and status.code is Code.ERROR:
                    out.status = status
                    return out
            progress.remaining -= 1
            if m.node is not None:
                progress.scheduled += 1
            status = await fw.run_placement_feasible(pstate, group, progress)
            if status is not None and not status.is_wait():
                out.status = status
                return out
        if status is not None:  # still waiting: the minimum was not reached
            out.status = Status(Code.UNSCHEDULABLE, *status.reasons, plugin=status.plugin)
        elif not out.placed():
            out.status = Status(Code.UNSCHEDULABLE, "pod group is unschedulable")
        return out

    async def reserve(self, fw: Framework, m: MemberOutcome, state: CycleState, node: str) -> Status | None:
        """Place the member on ``node`` in the snapshot and run Reserve
        (:meth:`~kubesched.scheduler.schedule_one.PodPlacer.reserve_tentatively`); a failure is
        the member's (undone).

        A member placed is no longer counted as nominated anywhere, as upstream's assume takes a
        pod out of the nominator: else its own nomination would stand beside its placement and
        the next members would see it twice. Its nomination is decided again when the group's
        result is submitted (kept while it waits on preemption, cleared when it fails)."""
        assumed, status = await self.pod_cycle.reserve_tentatively(fw, state, m.qpi.pod_info, node)
        if status is not None:
            m.status = status
            return status
        m.node, m.assumed, m.state = node, assumed, state
        return None

    async def _reapply(self, fw: Framework, out: GroupOutcome) -> Status | None:
        """Assume and reserve again the members of the chosen placement; on a failure, undo
        those done and say why."""
        done: list[MemberOutcome] = []
        for m in out.placed():
            node, state = m.node, m.state
            assert node is not None and state is not None
            status = await self.reserve(fw, m, state, node)
            if status is not None:
                await self.revert(fw, done)
                return Status(
                    Code.ERROR, f"failed to assume pod group placement: {status.message()}", plugin=status.plugin
                )
            done.append(m)
        return None

    async def revert(self, fw: Framework, placed: list[MemberOutcome]) -> None:
        """Undo the reservations of ``placed`` (Unreserve in reverse order, then off the
        snapshot); the members keep their chosen nodes in the outcome. What was batched
        meanwhile is stale."""
        if not placed:
            return
        tentative: list[Tentative] = []
        for m in placed:
            assert m.assumed is not None and m.state is not None and m.node is not None
            tentative.append((m.state, m.assumed, m.node))
        await self.pod_cycle.revert_tentative(fw, tentative)
