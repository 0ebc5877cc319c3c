"""What the extension points return: the result classes, and per point the shapes a plugin's
method may return (the ``...Return`` aliases, which the point's Protocol declares).

A per-pod method may be ``async def``: each ``...Return`` admits an awaitable of the same shapes.
What the runtime reads of each shape is in the Protocol's docstring
(:mod:`kubesched.framework.interface`); ``None`` in a status's place is Success.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import SupportsInt, TypeAlias

from kubesched.framework.podgroup import Placement, PodGroupAssignments, PodGroupPostFilterResult
from kubesched.framework.status import Status


class PreFilterResult:
    """Which nodes a PreFilter plugin allows; ``node_names=None`` means all of them.

    The runtime intersects the results of all PreFilter plugins.
    """

    __slots__ = ("node_names",)

    def __init__(self, node_names: Iterable[str] | None = None) -> None:
        self.node_names: set[str] | None = None if node_names is None else set(node_names)

    def all_nodes(self) -> bool:
        return self.node_names is None

    def merge(self, other: PreFilterResult | None) -> PreFilterResult:
        if other is None or other.node_names is None:
            return PreFilterResult(self.node_names)
        if self.node_names is None:
            return PreFilterResult(other.node_names)
        return PreFilterResult(self.node_names & other.node_names)

    def __repr__(self) -> str:
        return f"PreFilterResult({sorted(self.node_names) if self.node_names is not None else 'all'})"


class NodeScore:
    """One node's score from one plugin; NormalizeScore rewrites ``score`` in place."""

    __slots__ = ("name", "score")

    def __init__(self, name: str, score: int) -> None:
        self.name = name
        self.score = score

    def __repr__(self) -> str:
        return f"NodeScore({self.name}={self.score})"


class PostFilterResult:
    """What PostFilter (preemption) achieved: the node the pod is nominated to. An empty name
    clears the pod's nomination (preemption can help nowhere); returning no result at all leaves
    the nomination as it is (upstream's ModeOverride and ModeNoop)."""

    __slots__ = ("nominated_node_name",)

    def __init__(self, nominated_node_name: str = "") -> None:
        self.nominated_node_name = nominated_node_name


# --- what each point's method returns ---------------------------------------------------------

#: PreFilter: ``(result, status)``; a bare Status (or ``None``) when it never narrows the nodes;
#: or a bare result (Success).
PreFilterShape: TypeAlias = tuple[PreFilterResult | None, Status | None] | PreFilterResult | Status | None
PreFilterReturn: TypeAlias = PreFilterShape | Awaitable[PreFilterShape]

#: PostFilter: ``(result, status)``, a bare Status, or a bare result (Success).
PostFilterShape: TypeAlias = tuple[PostFilterResult | None, Status | None] | PostFilterResult | Status | None
PostFilterReturn: TypeAlias = PostFilterShape | Awaitable[PostFilterShape]

#: Score (a plain function, per node): the score, or ``(score, status)``; anything ``int()`` takes.
ScoreReturn: TypeAlias = SupportsInt | tuple[SupportsInt, Status | None]

#: Permit: a bare Status (``None``: Success), or ``(status, timeout_seconds)`` for a Wait.
PermitShape: TypeAlias = tuple[Status | None, float | None] | Status | None
PermitReturn: TypeAlias = PermitShape | Awaitable[PermitShape]

#: PlacementGenerate: the list of placements, or ``(placements, status)``; a bare Status when it
#: fails.
PlacementGenerateShape: TypeAlias = tuple[list[Placement] | None, Status | None] | list[Placement] | Status | None
PlacementGenerateReturn: TypeAlias = PlacementGenerateShape | Awaitable[PlacementGenerateShape]

#: PlacementScore: the score, or ``(score, status)``; a bare Status when it fails (score 0).
PlacementScoreShape: TypeAlias = tuple[SupportsInt | None, Status | None] | SupportsInt | Status | None
PlacementScoreReturn: TypeAlias = PlacementScoreShape | Awaitable[PlacementScoreShape]

#: PodGroupPostFilter: ``(result, status)``, a bare Status, or a bare result (Success).
PodGroupPostFilterShape: TypeAlias = (
    tuple[PodGroupPostFilterResult | None, Status | None] | PodGroupPostFilterResult | Status | None
)
PodGroupPostFilterReturn: TypeAlias = PodGroupPostFilterShape | Awaitable[PodGroupPostFilterShape]

#: What PodGroupPostFilter is given to place the group again: ``await schedule()`` → the group's
#: assignments on the snapshot as it is now, and the status of that placement.
PodGroupSchedule: TypeAlias = Callable[[], Awaitable[tuple[PodGroupAssignments | None, Status | None]]]
