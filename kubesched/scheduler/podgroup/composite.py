"""Where a CompositePodGroup hierarchy's members go (``CompositePodGroup``, alpha): upstream's
composite algorithm (kube-scheduler 1.37), over the leaf algorithm of
:mod:`kubesched.scheduler.podgroup.algorithm`.

A hierarchy is a root CompositePodGroup, composite groups below it and PodGroups (the leaves,
which alone have members). A composite group always goes through placements:

1. PlacementGenerate for the composite within its parent's placement (the whole cluster for the
   root; with no generator, the parent placement itself).
2. For each placement: PlacementFeasible over children (``remaining`` = children left,
   ``scheduled`` = children that succeeded) before the first child and after each; the children
   in order, each within the placement's nodes — a leaf through the leaf algorithm (its own
   placements inside this one), a composite child recursively. A child that fails is undone by
   itself and counted as not scheduled; a child's error aborts
   (``composite pod group evaluation failed due to child error: ...``). A final Wait is
   Unschedulable; anything but Success undoes every child's placements. Each placement's
   evaluation is undone before the next.
3. None feasible: Unschedulable ``0/N placements are available, first placement status: ...``
   with the first placement's results below it. Several: PlacementScore over them, each with the
   proposed assignments of every successful leaf under the composite; the winner's members are
   placed again so that the rest of the hierarchy sees them (``failed to assume the subtree: ...``).

At the root, the placement holding most of the hierarchy's nominated nodes (where its preemption
made room) is tried first and taken when the hierarchy fits there, without scoring the others,
as a standalone group's. A root that succeeds without placing any new pod is Unschedulable. A failed composite
invalidates its children's successes (their members fail with its status). Results are per leaf.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field

from kubesched.framework.interface import CycleState
from kubesched.framework.podgroup import (
    GroupKey,
    Placement,
    PlacementProgress,
    PodGroupAssignments,
    PodGroupInfo,
    ProposedAssignment,
)
from kubesched.framework.status import Code, Status
from kubesched.runtime.framework import Framework
from kubesched.scheduler.podgroup.algorithm import GroupOutcome, MemberOutcome, PodGroupAlgorithm

#: ``results`` value of a group that was evaluated and succeeded (a missing key: not evaluated).
Results = dict[GroupKey, Status | None]


@dataclass(eq=False)
class _Evaluated:
    """A group's evaluation inside the hierarchy: ``status`` None is Success; ``held`` are the
    members it leaves placed in the snapshot (empty unless it succeeded)."""

    status: Status | None
    any_scheduled: bool = False
    held: list[MemberOutcome] = field(default_factory=list)


@dataclass(eq=False)
class HierarchyOutcome:
    """The hierarchy's result: the root's status, every group's, and each leaf's outcome (every
    leaf has one). On Success the placed members of successful leaves stay in the snapshot."""

    status: Status | None
    results: Results
    leaves: dict[GroupKey, GroupOutcome]
    held: list[MemberOutcome] = field(default_factory=list)
    placements_tried: int = 0
    feasible_placements: int = 0


def _succeeded(results: Results, key: GroupKey) -> bool:
    return key in results and results[key] is None


def successful_leaves(
    group: PodGroupInfo, results: Results, leaves: dict[GroupKey, GroupOutcome]
) -> Iterator[GroupOutcome]:
    """The outcomes of the leaves under ``group`` that succeeded with every ancestor up to it."""
    if not _succeeded(results, group.key):
        return
    if not group.is_composite:
        out = leaves.get(group.key)
        if out is not None:
            yield out
        return
    for child in group.children:
        yield from successful_leaves(child, results, leaves)


class CompositeAlgorithm:
    """The composite algorithm (see the module docstring)."""

    def __init__(self, algorithm: PodGroupAlgorithm) -> None:
        self.algorithm = algorithm
        self.snapshot = algorithm.snapshot
        self._tried = 0
        self._feasible = 0
        #: The key of the hierarchy's root in the current run.
        self._root: GroupKey | None = None

    async def run(
        self, fw: Framework, root: PodGroupInfo, members: dict[GroupKey, list[MemberOutcome]]
    ) -> HierarchyOutcome:
        """Place the members of ``root``'s leaves (``members`` by leaf key, in order) or none."""
        self._tried = self._feasible = 0
        self._root = root.key
        results: Results = {}
        leaves: dict[GroupKey, GroupOutcome] = {}
        whole = Placement("", self.snapshot.list())
        top = await self._group(fw, root, whole, members, results, leaves)
        status = top.status
        if status is None and not top.any_scheduled:
            await self.algorithm.revert(fw, top.held)
            top.held = []
            status = Status(Code.UNSCHEDULABLE, "pod group is unschedulable")
        results[root.key] = status
        self._complete(root, None, results, leaves, members)
        return HierarchyOutcome(status, results, leaves, top.held, self._tried, self._feasible)

    async def _group(
        self,
        fw: Framework,
        group: PodGroupInfo,
        parent: Placement,
        members: dict[GroupKey, list[MemberOutcome]],
        results: Results,
        leaves: dict[GroupKey, GroupOutcome],
    ) -> _Evaluated:
        if not group.is_composite:
            trial = [MemberOutcome(m.qpi, m.record) for m in members.get(group.key, ())]
            out = await self.algorithm.run_within(fw, group, trial, parent)
            leaves[group.key] = out
            results[group.key] = out.status
            if out.status is not None:
                return _Evaluated(out.status)
            placed = out.placed()
            return _Evaluated(None, bool(placed), placed)
        return await self._composite(fw, group, parent, members, results, leaves)

    async def _composite(
        self,
        fw: Framework,
        group: PodGroupInfo,
        parent: Placement,
        members: dict[GroupKey, list[MemberOutcome]],
        results: Results,
        leaves: dict[GroupKey, GroupOutcome],
    ) -> _Evaluated:
        gstate = CycleState()
        gstate.pod_group = group
        within = Placement(parent.name, self.algorithm.current_nodes(parent.node_names()), parent.data)
        placements, status = await fw.run_placement_generate(gstate, group, within)
        if status is not None:
            results[group.key] = status
            return _Evaluated(status)
        successful: list[tuple[Placement, CycleState, _Evaluated, Results, dict[GroupKey, GroupOutcome]]] = []
        first: tuple[_Evaluated, Results, dict[GroupKey, GroupOutcome]] | None = None
        # At the root, the placement holding most of the hierarchy's nominated nodes (where its
        # preemption made room) is tried first, and taken when the hierarchy fits there, without
        # scoring the others: as a standalone group's.
        nominated = self.algorithm.nominated_placement(group, placements) if group.key == self._root else None
        if nominated is not None:
            placements = [nominated, *(p for p in placements if p is not nominated)]
        for placement in placements:
            sub_results: Results = {}
            sub_leaves: dict[GroupKey, GroupOutcome] = {}
            started = time.perf_counter()
            pstate, ev = await self._children(fw, group, placement, members, sub_results, sub_leaves)
            self.algorithm.evaluated(fw, ev.status, started)
            await self.algorithm.revert(fw, ev.held)
            self._tried += 1
            if ev.status is not None and ev.status.code is Code.ERROR:
                results.update(sub_results)
                leaves.update(sub_leaves)
                return _Evaluated(ev.status)
            if first is None:
                first = (ev, sub_results, sub_leaves)
            if ev.status is None:
                self._feasible += 1
                successful.append((placement, pstate, ev, sub_results, sub_leaves))
                if placement is nominated and ev.any_scheduled:
                    break
        if not successful:
            if first is not None:
                results.update(first[1])
                leaves.update(first[2])
                reason = first[0].status.message() if first[0].status is not None else ""
                plugin = first[0].status.plugin if first[0].status is not None else ""
                status = Status(
                    Code.UNSCHEDULABLE,
                    f"0/{len(placements)} placements are available, first placement status: {reason}",
                    plugin=plugin,
                )
            else:
                status = Status(Code.UNSCHEDULABLE, "0/0 placements are available")
            results[group.key] = status
            return _Evaluated(status)
        best = successful[0]
        if len(successful) > 1:
            proposals = [
                (
                    pstate,
                    PodGroupAssignments(
                        placement,
                        [
                            ProposedAssignment(m.qpi.pod_info, m.node or "", m.state)
                            for out in successful_leaves(group, sub_results, sub_leaves)
                            for m in out.placed()
                        ],
                    ),
                )
                for placement, pstate, _, sub_results, sub_leaves in successful
            ]
            totals, status = await fw.run_placement_score(gstate, group, proposals)
            if status is not None:
                results[group.key] = status
                return _Evaluated(status)
            top = max(totals)
            ties = [i for i, t in enumerate(totals) if t == top]
            best = successful[ties[0] if len(ties) == 1 else ties[self.algorithm.rng.randrange(len(ties))]]
        _, _, ev, sub_results, sub_leaves = best
        held: list[MemberOutcome] = []
        for out in successful_leaves(group, sub_results, sub_leaves):
            for m in out.placed():
                assert m.node is not None and m.state is not None
                failed = await self.algorithm.reserve(fw, m, m.state, m.node)
                if failed is not None:
                    await self.algorithm.revert(fw, held)
                    status = Status(
                        Code.ERROR, f"failed to assume the subtree: {failed.message()}", plugin=failed.plugin
                    )
                    results[group.key] = status
                    return _Evaluated(status)
                held.append(m)
        results.update(sub_results)
        leaves.update(sub_leaves)
        return _Evaluated(None, ev.any_scheduled, held)

    async def _children(
        self,
        fw: Framework,
        group: PodGroupInfo,
        placement: Placement,
        members: dict[GroupKey, list[MemberOutcome]],
        results: Results,
        leaves: dict[GroupKey, GroupOutcome],
    ) -> tuple[CycleState, _Evaluated]:
        """The composite's children within one of its placements (its default algorithm)."""
        pstate = CycleState()
        pstate.pod_group = group
        pstate.placement = placement
        progress = PlacementProgress(len(group.children), 0)
        status = await fw.run_placement_feasible(pstate, group, progress)
        if status is not None and not status.is_wait():
            results[group.key] = status
            return pstate, _Evaluated(status)
        held: list[MemberOutcome] = []
        any_scheduled = False
        for child in group.children:
            ev = await self._group(fw, child, placement, members, results, leaves)
            if ev.status is not None and ev.status.code is Code.ERROR:
                await self.algorithm.revert(fw, held)
                status = Status(
                    Code.ERROR,
                    f"composite pod group evaluation failed due to child error: {ev.status.message()}",
                    plugin=ev.status.plugin,
                    error=ev.status.error,
                )
                results[group.key] = status
                return pstate, _Evaluated(status)
            any_scheduled = any_scheduled or ev.any_scheduled
            held.extend(ev.held)
            progress.remaining -= 1
            if ev.status is None:
                progress.scheduled += 1
            status = await fw.run_placement_feasible(pstate, group, progress)
            if status is not None and not status.is_wait():
                break
        if status is not None and status.is_wait():
            status = Status(Code.UNSCHEDULABLE, *status.reasons, plugin=status.plugin)
        if status is not None:
            await self.algorithm.revert(fw, held)
            held, any_scheduled = [], False
        results[group.key] = status
        return pstate, _Evaluated(status, any_scheduled, held)

    def _complete(
        self,
        group: PodGroupInfo,
        parent_status: Status | None,
        results: Results,
        leaves: dict[GroupKey, GroupOutcome],
        members: dict[GroupKey, list[MemberOutcome]],
    ) -> None:
        """Give every group of the hierarchy a result: one never evaluated, or one that
        succeeded under a failed parent, takes the parent's status."""
        key = group.key
        if parent_status is not None and (key not in results or results[key] is None):
            results[key] = parent_status
            if not group.is_composite:
                out = leaves.get(key)
                if out is None:
                    leaves[key] = GroupOutcome(parent_status, list(members.get(key, ())))
                else:
                    out.status = parent_status
        elif key not in results:  # never expected: a group below a success is evaluated
            results[key] = Status(Code.UNSCHEDULABLE, "pod group is unschedulable")
        if not group.is_composite and key not in leaves:
            leaves[key] = GroupOutcome(results[key], list(members.get(key, ())))
        for child in group.children:
            self._complete(child, results[key], results, leaves, members)
