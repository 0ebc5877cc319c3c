"""PodGroupPodsCount (upstream's in-tree plugin of kube-scheduler 1.37,
``TopologyAwareWorkloadScheduling``): among a pod group's feasible placements, prefer the one
that holds more of its members.

PlacementScore, no args; weight 1 in the default profile.

* **Score** of a placement: the group's members already placed (bound or assumed before this
  cycle) plus the members the placement's evaluation proposes to place. Counting the placed ones
  too keeps the differences between placements relatively small, so a small difference in count
  makes a small difference in score.
* **Normalize**: each score becomes ``MinScore + score * (MaxScore - MinScore) / highest`` in
  integer arithmetic; the group's ``minCount`` deliberately plays no part (it would stretch small
  differences into large ones). When every score is 0 the plugin errs with
  ``no pods from pod group are assigned to any of the candidate placements`` (upstream relies
  on GangScheduling never letting an empty placement through).

**Bounds**: 100 for every placement (what a placement holding every member scores, as none can
hold more), and a placement holding only some scores below it whenever one holds every member
(``partial_below_bound``): ``some * 100 // all`` is below 100.

For a CompositePodGroup the placed members are those of every PodGroup below it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from kubesched.framework.interface import MAX_NODE_SCORE, MIN_NODE_SCORE, CycleState, Handle
from kubesched.framework.names import POD_GROUP_PODS_COUNT
from kubesched.framework.podgroup import Placement, PlacementScore, PodGroupAssignments, PodGroupInfo
from kubesched.framework.status import Code, Status
from kubesched.framework.types import PodInfo
from kubesched.plugins.helper import scheduled_pods

#: Why normalization fails when no placement places anyone (upstream's words).
NO_PODS_ASSIGNED = "no pods from pod group are assigned to any of the candidate placements"


class PodGroupPodsCount:
    """More members placed is better (see the module docstring)."""

    name: ClassVar[str] = POD_GROUP_PODS_COUNT
    partial_below_bound: ClassVar[bool] = True

    def __init__(self, args: Any, handle: Handle) -> None:
        self.handle = handle

    def score_placement(self, state: CycleState, group: PodGroupInfo, assignments: PodGroupAssignments) -> int:
        placed = len(scheduled_pods(self.handle.pod_groups, group))
        return placed + len(assignments.assignments)

    def placement_score_bounds(
        self, state: CycleState, group: PodGroupInfo, placements: Sequence[Placement], members: Sequence[PodInfo]
    ) -> list[int]:
        return [MAX_NODE_SCORE] * len(placements)

    def normalize_placement_scores(
        self, state: CycleState, group: PodGroupInfo, scores: list[PlacementScore]
    ) -> Status | None:
        highest = max((s.score for s in scores), default=0)
        if highest <= 0:
            return Status(Code.ERROR, NO_PODS_ASSIGNED)
        for s in scores:
            s.score = MIN_NODE_SCORE + s.score * (MAX_NODE_SCORE - MIN_NODE_SCORE) // highest
        return None
