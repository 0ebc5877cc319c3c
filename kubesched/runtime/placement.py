"""The pod-group cycle's extension points over a profile's plugins: PlacementGenerate,
PlacementFeasible, PlacementScore (with its normalization, the 0..100 check and the weights)
and PodGroupPostFilter.

Semantics, as upstream's runner has them:

* PlacementGenerate: every plugin in order, each within the parent placement; their lists
  are concatenated. A non-success status is an error for the group.
* PlacementFeasible: every plugin is asked; an Error or an Unschedulable answer ends the
  evaluation at once (the first one wins); otherwise Wait if any plugin waits, else Success.
* PlacementScore: each plugin scores every feasible placement, normalizes its scores when it
  can, each score must then be within 0..100, and the weighted sum is the placement's total.
* PlacementScore bounds (:func:`placement_score_bounds`, kubesched's own): the weighted sum of
  every plugin's bound on each placement's score, when every plugin gives bounds and one
  promises partial placements score below theirs; else none (see
  :class:`~kubesched.framework.interface.PlacementScoreBounds`).
* PodGroupPostFilter: plugins in order until one succeeds or one says the group cannot be
  helped (UnschedulableAndUnresolvable); an Error ends it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from kubesched.framework.interface import MAX_NODE_SCORE, MIN_NODE_SCORE, CycleState
from kubesched.framework.podgroup import (
    Placement,
    PlacementProgress,
    PlacementScore,
    PodGroupAssignments,
    PodGroupInfo,
    PodGroupPostFilterResult,
)
from kubesched.framework.results import PodGroupSchedule
from kubesched.framework.status import Code, Status
from kubesched.framework.types import PodInfo
from kubesched.runtime.calls import (
    BoundMethod,
    placement_score_parts,
    placements_parts,
    plugin_error,
    pod_group_post_filter_parts,
    rejected_or_error,
    split_result,
)

#: ``await call(bound, point, state, *args)``: the Framework's timed plugin call.
PluginCall = Callable[..., Any]


def _failed(point: str, plugin: str, status: Status) -> Status:
    """A non-success answer where only Success goes on: an error naming the point and plugin."""
    return Status(Code.ERROR, f'running {point} plugin "{plugin}": {status.message()}', plugin=plugin)


async def run_placement_generate(
    plugins: Sequence[BoundMethod], call: PluginCall, state: CycleState, group: PodGroupInfo, parent: Placement
) -> tuple[list[Placement], Status | None]:
    """The placements every PlacementGenerate plugin proposes within ``parent``; with no plugin,
    ``parent`` alone."""
    if not plugins:
        return [parent], None
    out: list[Placement] = []
    for b in plugins:
        try:
            placements, status = placements_parts(await call(b, "PlacementGenerate", state, group, parent))
        except Exception as exc:  # noqa: BLE001 - a plugin's bug is the group's error
            return [], plugin_error("PlacementGenerate", b.name, exc)
        if status is not None and not status.is_success():
            return [], _failed("PlacementGenerate", b.name, status)
        out.extend(placements or ())
    return out, None


async def run_placement_feasible(
    plugins: Sequence[BoundMethod],
    call: PluginCall,
    state: CycleState,
    group: PodGroupInfo,
    progress: PlacementProgress,
) -> Status | None:
    """``None`` (Success), a Wait, an Unschedulable or an Error status (see the module)."""
    waiting: Status | None = None
    for b in plugins:
        try:
            status = split_result(await call(b, "PlacementFeasible", state, group, progress))[1]
        except Exception as exc:  # noqa: BLE001
            return plugin_error("PlacementFeasible", b.name, exc)
        if status is None or status.is_success():
            continue
        if status.is_wait():
            waiting = waiting or status.with_plugin(b.name)
            continue
        return rejected_or_error("PlacementFeasible", b.name, status)
    return waiting


async def run_placement_score(
    plugins: Sequence[BoundMethod],
    normalizers: Mapping[str, BoundMethod],
    call: PluginCall,
    state: CycleState,
    group: PodGroupInfo,
    proposals: Sequence[tuple[CycleState, PodGroupAssignments]],
    per_plugin: dict[str, list[int]] | None = None,
) -> tuple[list[int], Status | None]:
    """The weighted total of each proposal (placement state, assignments), in their order; or
    the error that ended scoring. ``per_plugin`` is filled with each plugin's final scores."""
    totals = [0] * len(proposals)
    for b in plugins:
        scores: list[PlacementScore] = []
        for pstate, assignments in proposals:
            try:
                value, status = placement_score_parts(await call(b, "PlacementScore", pstate, group, assignments))
            except Exception as exc:  # noqa: BLE001
                return [], plugin_error("PlacementScore", b.name, exc)
            if status is not None and not status.is_success():
                return [], _failed("PlacementScore", b.name, status)
            scores.append(PlacementScore(assignments.placement, int(value or 0)))
        norm = normalizers.get(b.name)
        if norm is not None and scores:
            try:
                status = split_result(await call(norm, "PlacementScore", state, group, scores))[1]
            except Exception as exc:  # noqa: BLE001
                return [], plugin_error("PlacementScore", b.name, exc)
            if status is not None and not status.is_success():
                return [], Status(
                    Code.ERROR,
                    f'running normalize placement score extension of plugin "{b.name}": {status.message()}',
                    plugin=b.name,
                )
        for s in scores:
            if not MIN_NODE_SCORE <= s.score <= MAX_NODE_SCORE:
                return [], Status(
                    Code.ERROR,
                    f'plugin "{b.name}" returns an invalid score {s.score} for placement {s.name!r}, it should be '
                    f"in the range of [{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after normalizing",
                    plugin=b.name,
                )
        weight = b.weight or 1
        for i, s in enumerate(scores):
            totals[i] += s.score * weight
        if per_plugin is not None:
            per_plugin[b.name] = [s.score * weight for s in scores]
    return totals, None


def placement_score_bounds(
    plugins: Sequence[BoundMethod],
    state: CycleState,
    group: PodGroupInfo,
    placements: Sequence[Placement],
    members: Sequence[PodInfo],
) -> list[int] | None:
    """The highest weighted total each placement can score, or ``None`` when they cannot be
    known: a plugin gives no bounds (or none this time), none promises that partial placements
    score below their bounds, or a plugin's bounds are not one per placement on 0..100 (or it
    raises -- its scoring, which every placement then goes through, reports what is wrong)."""
    if not plugins or not any(getattr(b.plugin, "partial_below_bound", False) for b in plugins):
        return None
    totals = [0] * len(placements)
    for b in plugins:
        fn = getattr(b.plugin, "placement_score_bounds", None)
        if not callable(fn):
            return None
        try:
            given = fn(state, group, placements, members)
        except Exception:  # noqa: BLE001 - scoring will report it
            return None
        if given is None:
            return None
        bounds = list(given)
        if len(bounds) != len(placements) or not all(MIN_NODE_SCORE <= x <= MAX_NODE_SCORE for x in bounds):
            return None
        weight = b.weight or 1
        for i, x in enumerate(bounds):
            totals[i] += int(x) * weight
    return totals


async def run_pod_group_post_filter(
    plugins: Sequence[BoundMethod],
    call: PluginCall,
    state: CycleState,
    group: PodGroupInfo,
    schedule: PodGroupSchedule,
) -> tuple[PodGroupPostFilterResult | None, Status]:
    """Plugins in order until one succeeds (its result), one cannot help at all, or one errs;
    when all reject, Unschedulable with their reasons."""
    reasons: list[str] = []
    rejectors: list[str] = []
    for b in plugins:
        try:
            result, status = pod_group_post_filter_parts(await call(b, "PodGroupPostFilter", state, group, schedule))
        except Exception as exc:  # noqa: BLE001
            return None, plugin_error("PodGroupPostFilter", b.name, exc)
        if status is None or status.is_success():
            # The plugin's message goes with it (preemption says how many it preempts).
            said = status.reasons if status is not None else []
            got = result if isinstance(result, PodGroupPostFilterResult) else None
            return got, Status(Code.SUCCESS, *said, plugin=b.name)
        status.with_plugin(b.name)
        if status.code in (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.ERROR):
            return None, status
        reasons.extend(status.reasons)
        rejectors.append(b.name)
    return None, Status(Code.UNSCHEDULABLE, *reasons, plugin=rejectors[0] if rejectors else "")
