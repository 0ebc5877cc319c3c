"""The profile the pod-group placement tests share: GangScheduling's PreEnqueue and
PlacementFeasible, NodeResourcesFit's PreFilter and Filter, TopologyPlacementGenerator, and the
PlacementScore plugins a test names."""

from __future__ import annotations

from typing import Any

from kubesched.runtime.framework import ProfileSpec
from kubesched.testing.running import profile


def placement_profile(*scores: Any, **points: Any) -> ProfileSpec:
    """That profile, ``scores`` its PlacementScore entries (a name, or ``(name, weight)``) and
    ``points`` any other extension point's plugins."""
    return profile(
        preEnqueue=["GangScheduling"],
        preFilter=["NodeResourcesFit"],
        filter=["NodeResourcesFit"],
        placementGenerate=["TopologyPlacementGenerator"],
        placementFeasible=["GangScheduling"],
        placementScore=list(scores),
        **points,
    )
