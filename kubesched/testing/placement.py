"""The pod-group cycle's extension points of a plugin (workload-aware scheduling), driven through
the runtime: PlacementGenerate, PlacementFeasible, PlacementScore (with its normalization and
weights) and PodGroupPostFilter.

    from kubesched.testing import make_node, make_pod, make_pod_group, plugin_framework

    group = make_pod_group("train", min_count=2, members=[make_pod("w0"), make_pod("w1")])
    with plugin_framework(ByRack, FewestNodes, nodes=[...]) as fw:
        placements = fw.placement_generate(group)                       # [Placement, ...]
        assert fw.placement_feasible(group, placements[0]) is None      # before the first member
        scores = fw.placement_scores(group, placements, assignments={"a": {"w0": "a0", "w1": "a1"}})

Each point runs as the scheduler's pod-group cycle runs it (the Framework's ``run_placement_*``,
i.e. :mod:`kubesched.runtime.placement`): several plugins' placements are concatenated, the
first Unschedulable or Error at PlacementFeasible wins, PlacementScore normalizes, checks the
0..100 range and weighs, a plugin's exception becomes an Error naming it. The calls for one group
share its cycle state (``state.pod_group`` set) until :meth:`PlacementPoints.new_group_cycle`;
each placement has a state of its own (``state.placement`` set too), which PlacementFeasible and
PlacementScore of that placement share, as in the cycle. Methods are synchronous; the
``a``-prefixed ones are their coroutines.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubesched.backend.pod_groups import PodGroupIndex
from kubesched.framework.interface import CycleState
from kubesched.framework.podgroup import (
    COMPOSITE_POD_GROUP_KIND,
    POD_GROUP_KIND,
    GroupKey,
    Placement,
    PlacementProgress,
    PodGroupAssignments,
    PodGroupInfo,
    PodGroupPostFilterResult,
    ProposedAssignment,
)
from kubesched.framework.status import Code, Status
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.runtime.framework import Framework
from kubesched.testing.builders import PodGroupBuilder
from kubesched.testing.driver import DriverBase
from kubesched.testing.partial_profile import PodLike, as_pod_info

#: A pod group as the kit takes it: a builder (the group and its members), the PodGroupInfo a
#: cycle would hand over, or a PodGroup object alone (no members).
GroupLike = PodGroupBuilder | PodGroupInfo | dict[str, Any]
#: ``await schedule()``: what PodGroupPostFilter plugins call to place the group again.
ScheduleFn = Callable[[], Awaitable[tuple[PodGroupAssignments | None, Status | None]]]
#: Where the members went in each placement: ``{placement name: {member name: node}}``.
AssignmentsByPlacement = Mapping[str, Mapping[str, str]]


@dataclass
class PlacementGenerateOutcome:
    """What PlacementGenerate said: the placements (every plugin's, concatenated) or the
    ``status`` (an Error) that ended it."""

    placements: list[Placement]
    status: Status | None

    @property
    def names(self) -> list[str]:
        """The placements' names, in order."""
        return [p.name for p in self.placements]

    @property
    def nodes(self) -> dict[str, list[str]]:
        """Each placement's node names, by placement name."""
        return {p.name: p.node_names() for p in self.placements}


@dataclass
class PlacementScoreOutcome:
    """Scores by placement name: ``totals`` (normalized, weighted, summed over the
    PlacementScore plugins) and ``final`` per plugin (``{plugin: {placement: score × weight}}``),
    or the ``status`` that stopped scoring."""

    totals: dict[str, int]
    final: dict[str, dict[str, int]] = field(default_factory=dict)
    status: Status | None = None

    @property
    def best(self) -> str | None:
        """The placement with the highest total (the first of a tie; the scheduler picks one of
        the tied at random), or ``None``."""
        return max(self.totals, key=lambda name: self.totals[name]) if self.totals else None


@dataclass
class PodGroupPostFilterOutcome:
    """What PodGroupPostFilter said: its result (the members' nominated nodes) and its status
    (Success when a plugin made room, else the rejection)."""

    result: PodGroupPostFilterResult | None
    status: Status

    @property
    def nominated(self) -> dict[str, str]:
        """The node each member (``namespace/name``) is nominated to (empty without a result)."""
        return dict(self.result.nominated) if self.result is not None else {}


class PlacementPoints(DriverBase):
    """The pod-group points of a driver's framework (mixed into
    :class:`~kubesched.testing.points.PluginFramework`)."""

    def __init__(self, framework: Framework, nodes: Sequence[NodeInfo]) -> None:
        super().__init__(framework, nodes)
        #: Each group's cycle state, by group key.
        self._group_states: dict[GroupKey, CycleState] = {}
        #: Each placement's state, by (group key, placement name).
        self._placement_states: dict[tuple[GroupKey, str], CycleState] = {}

    # --- groups, placements, their cycle states -------------------------------------------------
    def pod_group_info(self, group: GroupLike) -> PodGroupInfo:
        """The PodGroupInfo of ``group``; its members are the driver's PodInfos (the same objects
        the per-pod points see for the same pods). A CompositePodGroup with its children is
        given as a PodGroupInfo."""
        if isinstance(group, PodGroupInfo):
            return group
        if isinstance(group, PodGroupBuilder):
            return PodGroupInfo(group.namespace, group.name, group.obj(), [self.pod_info(p) for p in group.pods()])
        meta = group.get("metadata") or {}
        kind = COMPOSITE_POD_GROUP_KIND if group.get("kind") == COMPOSITE_POD_GROUP_KIND else POD_GROUP_KIND
        return PodGroupInfo(meta.get("namespace") or "default", meta.get("name", ""), group, kind=kind)

    def group_state(self, group: GroupLike) -> CycleState:
        """The group's cycle state (``state.pod_group`` set): PlacementGenerate, PlacementScore's
        normalization and PodGroupPostFilter share it until :meth:`new_group_cycle`."""
        info = self.pod_group_info(group)
        state = self._group_states.get(info.key)
        if state is None:
            state = self.new_group_cycle(info)
        state.pod_group = info
        return state

    def new_group_cycle(self, group: GroupLike) -> CycleState:
        """Start a new pod-group cycle for ``group``: a fresh group state, and fresh placement
        states."""
        info = self.pod_group_info(group)
        state = CycleState()
        state.pod_group = info
        self._group_states[info.key] = state
        for key in [k for k in self._placement_states if k[0] == info.key]:
            del self._placement_states[key]
        return state

    def placement_state(self, group: GroupLike, placement: Placement) -> CycleState:
        """The state of ``placement``'s evaluation in the group's cycle (``state.pod_group`` and
        ``state.placement`` set): its PlacementFeasible and PlacementScore calls share it."""
        info = self.pod_group_info(group)
        key = (info.key, placement.name)
        state = self._placement_states.get(key)
        if state is None:
            state = self._placement_states[key] = CycleState()
        state.pod_group = info
        state.placement = placement
        return state

    def whole_cluster(self) -> Placement:
        """The placement of every node the driver sees (``""``): the parent of a group at the
        top, and the one placement there is without a PlacementGenerate plugin."""
        return Placement("", self.nodes())

    # --- PlacementGenerate ----------------------------------------------------------------------
    async def aplacement_generate_details(
        self, group: GroupLike, parent: Placement | None = None, state: CycleState | None = None
    ) -> PlacementGenerateOutcome:
        """Run PlacementGenerate within ``parent`` (the whole cluster by default): every plugin's
        placements, or the Error that ended it. With no PlacementGenerate plugin, ``parent``."""
        info = self.pod_group_info(group)
        st = state if state is not None else self.group_state(info)
        placements, status = await self.framework.run_placement_generate(
            st, info, parent if parent is not None else self.whole_cluster()
        )
        return PlacementGenerateOutcome(list(placements), status)

    def placement_generate_details(
        self, group: GroupLike, parent: Placement | None = None, state: CycleState | None = None
    ) -> PlacementGenerateOutcome:
        """:meth:`aplacement_generate_details`, on the driver's loop."""
        return self.run(self.aplacement_generate_details(group, parent, state))

    async def aplacement_generate(
        self, group: GroupLike, parent: Placement | None = None, state: CycleState | None = None
    ) -> list[Placement]:
        """The placements PlacementGenerate proposes for ``group`` within ``parent`` (the whole
        cluster by default); a failure raises AssertionError (see
        :meth:`aplacement_generate_details` to look at it)."""
        outcome = await self.aplacement_generate_details(group, parent, state)
        if outcome.status is not None:
            raise AssertionError(f"PlacementGenerate failed: {outcome.status!r}")
        return outcome.placements

    def placement_generate(
        self, group: GroupLike, parent: Placement | None = None, state: CycleState | None = None
    ) -> list[Placement]:
        """:meth:`aplacement_generate`, on the driver's loop."""
        return self.run(self.aplacement_generate(group, parent, state))

    # --- PlacementFeasible ----------------------------------------------------------------------
    async def aplacement_feasible(
        self,
        group: GroupLike,
        placement: Placement | None = None,
        *,
        scheduled: int = 0,
        remaining: int | None = None,
        state: CycleState | None = None,
    ) -> Status | None:
        """Run PlacementFeasible once, at a point of ``placement``'s evaluation (the whole
        cluster by default): ``scheduled`` members placed, ``remaining`` still to try (by default
        the group's members: before the first one). ``None`` (Success), a Wait, an Unschedulable
        or an Error status."""
        info = self.pod_group_info(group)
        where = placement if placement is not None else self.whole_cluster()
        st = state if state is not None else self.placement_state(info, where)
        left = len(info.pods) if remaining is None else remaining
        return await self.framework.run_placement_feasible(st, info, PlacementProgress(left, scheduled))

    def placement_feasible(
        self,
        group: GroupLike,
        placement: Placement | None = None,
        *,
        scheduled: int = 0,
        remaining: int | None = None,
        state: CycleState | None = None,
    ) -> Status | None:
        """:meth:`aplacement_feasible`, on the driver's loop."""
        return self.run(
            self.aplacement_feasible(group, placement, scheduled=scheduled, remaining=remaining, state=state)
        )

    async def aplacement_feasible_steps(
        self,
        group: GroupLike,
        placement: Placement | None = None,
        placed: Sequence[bool] | None = None,
        already_scheduled: int = 0,
    ) -> list[Status | None]:
        """PlacementFeasible as a placement's evaluation asks it: before the first member, then
        after each one, ``placed[i]`` saying whether member ``i`` found a node (every member by
        default); ``already_scheduled`` members were placed before the cycle. The answers, in
        order; they stop after the first that is neither Success nor Wait, as the cycle does.
        Each call is a new evaluation of the placement: its state starts afresh."""
        info = self.pod_group_info(group)
        outcomes = list(placed) if placed is not None else [True] * len(info.pods)
        where = placement if placement is not None else self.whole_cluster()
        self._placement_states.pop((info.key, where.name), None)
        st = self.placement_state(info, where)
        progress = PlacementProgress(len(outcomes), already_scheduled)
        answers = [await self.framework.run_placement_feasible(st, info, progress)]
        for ok in outcomes:
            if answers[-1] is not None and not answers[-1].is_wait():
                break
            progress.remaining -= 1
            if ok:
                progress.scheduled += 1
            answers.append(await self.framework.run_placement_feasible(st, info, progress))
        return answers

    def placement_feasible_steps(
        self,
        group: GroupLike,
        placement: Placement | None = None,
        placed: Sequence[bool] | None = None,
        already_scheduled: int = 0,
    ) -> list[Status | None]:
        """:meth:`aplacement_feasible_steps`, on the driver's loop."""
        return self.run(self.aplacement_feasible_steps(group, placement, placed, already_scheduled))

    # --- PlacementScore -------------------------------------------------------------------------
    def proposal(
        self, group: GroupLike, placement: Placement | PodGroupAssignments, nodes: Mapping[str, str] | None = None
    ) -> PodGroupAssignments:
        """What a placement's evaluation proposes: each member named in ``nodes`` (``{member
        name: node}``) on its node, with the member's cycle state."""
        if isinstance(placement, PodGroupAssignments):
            return placement
        info = self.pod_group_info(group)
        members = {pi.name: pi for pi in info.pods}
        out: list[ProposedAssignment] = []
        for name, node in (nodes or {}).items():
            pi = members.get(name)
            if pi is None:
                raise KeyError(f"{name!r} is not a member of pod group {info.key} ({sorted(members)})")
            out.append(ProposedAssignment(pi, node, self.state(pi)))
        return PodGroupAssignments(placement, out)

    async def aplacement_score_details(
        self,
        group: GroupLike,
        placements: Iterable[Placement | PodGroupAssignments],
        assignments: AssignmentsByPlacement | None = None,
        state: CycleState | None = None,
    ) -> PlacementScoreOutcome:
        """Run PlacementScore (and each plugin's normalization, the range check and the weights)
        over ``placements`` — feasible ones, as the cycle scores only those. A placement is given
        as PodGroupAssignments, or as a Placement whose members' nodes ``assignments`` gives
        (``{placement name: {member name: node}}``; none proposed when left out)."""
        info = self.pod_group_info(group)
        st = state if state is not None else self.group_state(info)
        proposals: list[tuple[CycleState, PodGroupAssignments]] = []
        for p in placements:
            where = p.placement if isinstance(p, PodGroupAssignments) else p
            proposed = self.proposal(info, p, (assignments or {}).get(where.name))
            proposals.append((self.placement_state(info, where), proposed))
        per_plugin: dict[str, list[int]] = {}
        totals, status = await self.framework.run_placement_score(st, info, proposals, per_plugin)
        names = [a.placement.name for _, a in proposals]
        if status is not None:
            return PlacementScoreOutcome({}, {}, status)
        return PlacementScoreOutcome(
            dict(zip(names, totals, strict=True)),
            {plugin: dict(zip(names, scores, strict=True)) for plugin, scores in per_plugin.items()},
        )

    def placement_score_details(
        self,
        group: GroupLike,
        placements: Iterable[Placement | PodGroupAssignments],
        assignments: AssignmentsByPlacement | None = None,
        state: CycleState | None = None,
    ) -> PlacementScoreOutcome:
        """:meth:`aplacement_score_details`, on the driver's loop."""
        return self.run(self.aplacement_score_details(group, placements, assignments, state))

    async def aplacement_scores(
        self,
        group: GroupLike,
        placements: Iterable[Placement | PodGroupAssignments],
        assignments: AssignmentsByPlacement | None = None,
    ) -> dict[str, int]:
        """The weighted totals by placement name (see :meth:`aplacement_score_details`); a
        failure raises AssertionError."""
        outcome = await self.aplacement_score_details(group, placements, assignments)
        if outcome.status is not None:
            raise AssertionError(f"PlacementScore failed: {outcome.status!r}")
        return outcome.totals

    def placement_scores(
        self,
        group: GroupLike,
        placements: Iterable[Placement | PodGroupAssignments],
        assignments: AssignmentsByPlacement | None = None,
    ) -> dict[str, int]:
        """:meth:`aplacement_scores`, on the driver's loop."""
        return self.run(self.aplacement_scores(group, placements, assignments))

    # --- PodGroupPostFilter ---------------------------------------------------------------------
    def schedule_answer(
        self, group: GroupLike, fits: Mapping[str, str] | Status | None = None, placement: Placement | None = None
    ) -> ScheduleFn:
        """A ``schedule()`` for PodGroupPostFilter that answers the same each time: the members
        on the nodes ``fits`` gives (``{member name: node}``, in ``placement``, the whole
        cluster by default), or the failure ``fits`` is (by default Unschedulable: the group
        still fits nowhere)."""
        info = self.pod_group_info(group)
        if fits is None or isinstance(fits, Status):
            status = fits if fits is not None else Status(Code.UNSCHEDULABLE, "pod group is unschedulable")

            async def fails() -> tuple[PodGroupAssignments | None, Status | None]:
                return None, status

            return fails
        proposed = self.proposal(info, placement if placement is not None else self.whole_cluster(), fits)

        async def places() -> tuple[PodGroupAssignments | None, Status | None]:
            return proposed, None

        return places

    async def apod_group_post_filter(
        self,
        group: GroupLike,
        schedule: ScheduleFn | Mapping[str, str] | Status | None = None,
        state: CycleState | None = None,
    ) -> PodGroupPostFilterOutcome:
        """Run PodGroupPostFilter for a group that fits nowhere. ``schedule`` is what plugins
        call to place the group again (after making room): a coroutine function, or an answer
        for :meth:`schedule_answer` (``{member name: node}``, a failure Status, or ``None``:
        Unschedulable)."""
        info = self.pod_group_info(group)
        st = state if state is not None else self.group_state(info)
        fn = schedule if callable(schedule) else self.schedule_answer(info, schedule)
        result, status = await self.framework.run_pod_group_post_filter(st, info, fn)
        return PodGroupPostFilterOutcome(result, status)

    def pod_group_post_filter(
        self,
        group: GroupLike,
        schedule: ScheduleFn | Mapping[str, str] | Status | None = None,
        state: CycleState | None = None,
    ) -> PodGroupPostFilterOutcome:
        """:meth:`apod_group_post_filter`, on the driver's loop."""
        return self.run(self.apod_group_post_filter(group, schedule, state))


def pod_group_index(
    groups: Iterable[PodGroupBuilder | dict[str, Any]], pods: Iterable[PodLike] = ()
) -> PodGroupIndex | None:
    """What a handle's ``pod_groups`` knows for a test: the PodGroups (and CompositePodGroups)
    ``groups`` gives, the members of the builders among them and the ``pods`` that name a group
    (bound ones are placed). ``None`` when there is neither a group nor a member."""
    groups = list(groups)
    members = [as_pod_info(p) for p in pods]
    for g in groups:
        if isinstance(g, PodGroupBuilder):
            members.extend(PodInfo(p) for p in g.pods())
    members = [pi for pi in members if pi.pod_group]
    if not groups and not members:
        return None
    index = PodGroupIndex()
    for g in groups:
        obj = g.obj() if isinstance(g, PodGroupBuilder) else g
        if obj.get("kind") == COMPOSITE_POD_GROUP_KIND:
            index.put_composite(obj)
        else:
            index.put_group(obj)
    for pi in members:
        index.put_pod(pi)
    return index
