"""What must hold of a pod group's placement when the PlacementScore plugins give bounds (the
first placement of the highest bound where every member fits is taken without evaluating the
rest, see kubesched.scheduler.podgroup.ranking): the group is placed exactly when the cycle
without bounds places it, and in a placement the cycle without bounds would choose -- one of
the feasible placements of the highest total it scores.

Racks of nodes of a few CPUs, some already running pods; a group of identical members with a
rack constraint (a gang or a basic group). Identical members make each rack's outcome the same
whichever node a member takes, so the set the cycle without bounds chooses among is fixed."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, ClassVar
from unittest.mock import patch

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from placement_profile import placement_profile

from kubesched.framework.features import FeatureGates
from kubesched.plugins.noderesources.fit import NodeResourcesFit
from kubesched.plugins.podgrouppodscount import PodGroupPodsCount
from kubesched.runtime.scheduling_points import SchedulingPoints
from kubesched.scheduler import SchedulerOptions
from kubesched.testing import make_node, make_pod
from kubesched.testing.running import make_harness, registry_with

GATES = FeatureGates().replace(GenericWorkload=True, TopologyAwareWorkloadScheduling=True)
RACK = "topology.kubernetes.io/rack"


class FitWithoutBounds(NodeResourcesFit):
    """NodeResourcesFit's placement score, without its bounds."""

    name: ClassVar[str] = "FitWithoutBounds"
    placement_score_bounds = None  # type: ignore[assignment]


class CountWithoutBounds(PodGroupPodsCount):
    """PodGroupPodsCount, without its bounds."""

    name: ClassVar[str] = "CountWithoutBounds"
    partial_below_bound: ClassVar[bool] = False
    placement_score_bounds = None  # type: ignore[assignment]


@dataclass
class Case:
    #: CPUs of each node, per rack
    racks: list[list[int]]
    #: CPUs already used on each node (same shape), by one running pod each
    used: list[list[int]]
    members: int
    cpu: int
    min_count: int | None
    seed: int


@st.composite
def cases(draw: st.DrawFn) -> Case:
    racks = draw(st.lists(st.lists(st.integers(1, 4), min_size=1, max_size=3), min_size=2, max_size=5))
    used = [[draw(st.integers(0, c)) for c in rack] for rack in racks]
    members = draw(st.integers(1, 4))
    min_count = draw(st.one_of(st.none(), st.integers(1, members)))
    return Case(racks, used, members, draw(st.integers(1, 2)), min_count, draw(st.integers(0, 2**16)))


def objects(case: Case) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for r, (rack, used) in enumerate(zip(case.racks, case.used, strict=True)):
        for i, (cpus, busy) in enumerate(zip(rack, used, strict=True)):
            name = f"r{r}n{i}"
            out.append(make_node(name).capacity(cpu=str(cpus), memory="64Gi", pods=20).label(RACK, f"r{r}").obj())
            if busy:
                out.append(make_pod(f"busy-{name}").req(cpu=str(busy)).node(name).obj())
    policy = {"gang": {"minCount": case.min_count}} if case.min_count is not None else {"basic": {}}
    out.append(
        {
            "apiVersion": "scheduling.k8s.io/v1beta1",
            "kind": "PodGroup",
            "metadata": {"name": "g", "namespace": "default", "uid": "pg-g", "generation": 1},
            "spec": {"schedulingPolicy": policy, "schedulingConstraints": {"topology": [{"key": RACK}]}},
        }
    )
    for i in range(case.members):
        pod = make_pod(f"m{i}").req(cpu=str(case.cpu), memory="1Gi").obj()
        pod["spec"]["schedulingGroup"] = {"podGroupName": "g"}
        out.append(pod)
    return out


async def first_cycle(case: Case, bounded: bool) -> tuple[str | None, list[dict[str, int]]]:
    """The rack the group's first cycle placed it in (``None``: nowhere), and the totals of
    every scoring of placements it made."""
    fit, count = ("NodeResourcesFit", "PodGroupPodsCount") if bounded else ("FitWithoutBounds", "CountWithoutBounds")
    prof = placement_profile((fit, 1), (count, 1))
    scorings: list[dict[str, int]] = []
    real = SchedulingPoints.run_placement_score

    async def recorded(self: Any, state: Any, group: Any, proposals: Any, per_plugin: Any = None) -> Any:
        totals, status = await real(self, state, group, proposals, per_plugin)
        scorings.append({a.placement.name: t for (_, a), t in zip(proposals, totals, strict=True)})
        return totals, status

    options = SchedulerOptions(seed=case.seed, record_results=True, feature_gates=GATES)
    reg = registry_with(FitWithoutBounds, CountWithoutBounds)
    with patch.object(SchedulingPoints, "run_placement_score", recorded):
        h = await make_harness([prof], registry=reg, options=options, objs=objects(case))
        try:
            await h.run_once()
            nodes = {h.node_of(f"m{i}") for i in range(case.members)} - {None}
        finally:
            await h.stop()
    racks = {n.split("n")[0] for n in nodes if n}
    assert len(racks) <= 1
    return (racks.pop() if racks else None), scorings


def fits(case: Case) -> dict[str, int]:
    """How many members each rack can hold (whichever nodes they take)."""
    return {
        f"r{r}": min(case.members, sum((c - u) // case.cpu for c, u in zip(rack, used, strict=True)))
        for r, (rack, used) in enumerate(zip(case.racks, case.used, strict=True))
    }


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_with_bounds_the_group_goes_where_the_cycle_without_them_could_put_it(case: Case) -> None:
    with_bounds, _ = asyncio.run(first_cycle(case, bounded=True))
    without, scorings = asyncio.run(first_cycle(case, bounded=False))
    need = case.min_count if case.min_count is not None else 1
    feasible = {rack for rack, n in fits(case).items() if n >= need}
    assert (with_bounds is None) == (without is None) == (not feasible)
    if with_bounds is None:
        return
    if len(feasible) == 1:
        assert with_bounds == without == next(iter(feasible))
        return
    (totals,) = scorings
    assert set(totals) == feasible
    best = max(totals.values())
    assert totals[with_bounds] == best
    assert totals[without] == best
