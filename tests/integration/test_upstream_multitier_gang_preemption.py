"""Upstream's test/integration/scheduler/preemption/podgroup/multitier_gang_preemption_test.go,
case by case, on the real scheduler (``running_scheduler``), with GenericWorkload,
CompositePodGroup, TopologyAwareWorkloadScheduling and PodGroupPreemptionPolicy on:

* TestMultiTierCompositePodGroupPreemption_NestedDisruptionModes: victims in a three-level
  hierarchy (root CompositePodGroup, middle ones, leaf PodGroups) whose ``disruptionMode`` is
  ``all`` at one level; the preemptor, a gang under its own CompositePodGroup, needs node1;
  exactly the subtree under the highest ``all`` ancestor goes.
* TestPartialGangPreemption_PodGroupAndCompositePodGroup: a gang (or a CompositePodGroup of
  gangs) of which only ``minCount`` (``minGroupCount``) can be placed evicts only the victims
  those need.
* TestCompositePodGroupPreemption_CyclicReferencesAndEdgeCases: a plain pod preempts a victim
  whose group's ancestry loops or dangles, and the scheduler goes on.

Each case creates its objects in upstream's order (``create_setup``), then waits for the
expected bindings and preemptions (gone, terminating or ``DisruptionTarget``) and checks that the
pods expected to keep running are neither gone nor terminating."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from upstream_workload_kit import (
    Setup,
    composite,
    create_setup,
    hostname_node,
    pod,
    pod_group,
    preempted,
    running,
    scheduled,
    scheduler,
    states,
    wait_all,
)

GATES = {
    "GenericWorkload": True,
    "CompositePodGroup": True,
    "TopologyAwareWorkloadScheduling": True,
    "PodGroupPreemptionPolicy": True,
}
NODE1 = {"kubernetes.io/hostname": "node1"}
NODE2 = {"kubernetes.io/hostname": "node2"}


@dataclass
class Case:
    setup: Setup
    scheduled: list[str]
    preempted: list[str]
    running: list[str] = field(default_factory=list)


def victim(name: str, cpu: str, group: str, node_name: str) -> dict[str, Any]:
    return pod(name, cpu, 10, group=group, node=node_name)


def preemptor(name: str, group: str, selector: dict[str, str] = NODE1) -> dict[str, Any]:
    return pod(name, "2", 100, group=group, node_selector=selector)


def three_2cpu(n: int = 3) -> list[dict[str, Any]]:
    return [hostname_node(f"node{i}", "2") for i in range(1, n + 1)]


#: The preemptor of the nested cases: a gang of one under its own basic CompositePodGroup.
PREEMPTOR_CPG = [composite("cpg-preemptor", 100, disruption="single")]
PREEMPTOR_PG = [pod_group("pg-preemptor", 100, 1, parent="cpg-preemptor")]


def tiers(root: str, mid_a: str, mid_b: str = "single") -> list[dict[str, Any]]:
    return [
        composite("cpg-root", 10, disruption=root),
        composite("cpg-mid-a", 10, disruption=mid_a, parent="cpg-root"),
        composite("cpg-mid-b", 10, disruption=mid_b, parent="cpg-root"),
    ]


NESTED: dict[str, tuple[Case, str | None]] = {
    "3-Tier Hierarchy: Intermediate CPG has DisruptionModeAll, Root CPG and Leaf PGs have DisruptionModeSingle - only intermediate subtree is evicted": (
        Case(
            Setup(
                three_2cpu(),
                [
                    victim("victim-a1", "2", "pg-a1", "node1"),
                    victim("victim-a2", "2", "pg-a2", "node2"),
                    victim("victim-b1", "2", "pg-b1", "node3"),
                ],
                [preemptor("preemptor-1", "pg-preemptor")],
                composites=tiers("single", "all"),
                groups=[
                    pod_group("pg-a1", 10, 1, disruption="single", parent="cpg-mid-a"),
                    pod_group("pg-a2", 10, 1, disruption="single", parent="cpg-mid-a"),
                    pod_group("pg-b1", 10, 1, disruption="single", parent="cpg-mid-b"),
                ],
                preemptor_composites=PREEMPTOR_CPG,
                preemptor_groups=PREEMPTOR_PG,
            ),
            ["preemptor-1"],
            ["victim-a1", "victim-a2"],
            ["victim-b1"],
        ),
        None,
    ),
    "3-Tier Hierarchy: Leaf PG has DisruptionModeAll, Root CPG and Mid CPG have DisruptionModeSingle - only leaf PG pods are evicted": (
        Case(
            Setup(
                three_2cpu(),
                [
                    victim("victim-a1-1", "1", "pg-a1", "node1"),
                    victim("victim-a1-2", "1", "pg-a1", "node2"),
                    victim("victim-a2-1", "1", "pg-a2", "node2"),
                    pod("victim-filler-1", "1", 10, node="node1"),
                    victim("victim-b1", "2", "pg-b1", "node3"),
                ],
                [preemptor("preemptor-1", "pg-preemptor")],
                composites=tiers("single", "single"),
                groups=[
                    pod_group("pg-a1", 10, 2, disruption="all", parent="cpg-mid-a"),
                    pod_group("pg-a2", 10, 1, disruption="single", parent="cpg-mid-a"),
                    pod_group("pg-b1", 10, 1, disruption="single", parent="cpg-mid-b"),
                ],
                preemptor_composites=PREEMPTOR_CPG,
                preemptor_groups=PREEMPTOR_PG,
            ),
            ["preemptor-1"],
            ["victim-a1-1", "victim-a1-2", "victim-filler-1"],
            ["victim-a2-1", "victim-b1"],
        ),
        None,
    ),
    "3-Tier Hierarchy: Root CPG has DisruptionModeAll, Mid CPGs and Leaf PGs have DisruptionModeSingle - entire 3-tier tree is evicted atomically": (
        Case(
            Setup(
                three_2cpu(2),
                [victim("victim-a1", "2", "pg-a1", "node1"), victim("victim-b1", "2", "pg-b1", "node2")],
                [preemptor("preemptor-1", "pg-preemptor")],
                composites=tiers("all", "single"),
                groups=[
                    pod_group("pg-a1", 10, 1, disruption="single", parent="cpg-mid-a"),
                    pod_group("pg-b1", 10, 1, disruption="single", parent="cpg-mid-b"),
                ],
                preemptor_composites=PREEMPTOR_CPG,
                preemptor_groups=PREEMPTOR_PG,
            ),
            ["preemptor-1"],
            ["victim-a1", "victim-b1"],
        ),
        None,
    ),
}

PARTIAL: dict[str, tuple[Case, str | None]] = {
    "Partial PodGroup Gang Preemption: MinCount=2 with 3 preemptor pods, 3rd pod cannot fit - only victims for MinCount are evicted": (
        Case(
            Setup(
                three_2cpu(),
                [victim(f"victim-{i}", "2", f"pg-victim-{i}", f"node{i}") for i in (1, 2, 3)],
                [
                    preemptor("preemptor-1", "pg-preemptor-gang"),
                    preemptor("preemptor-2", "pg-preemptor-gang", NODE2),
                    preemptor("preemptor-3", "pg-preemptor-gang"),
                ],
                groups=[pod_group(f"pg-victim-{i}", 10, 1) for i in (1, 2, 3)],
                preemptor_groups=[pod_group("pg-preemptor-gang", 100, 2)],
            ),
            ["preemptor-1", "preemptor-2"],
            ["victim-1", "victim-2"],
            ["victim-3"],
        ),
        None,
    ),
    "Partial CompositePodGroup Gang Preemption: MinGroupCount=1 with 2 child PGs, 2nd child PG cannot fit - only victims for MinGroupCount are evicted": (
        Case(
            Setup(
                three_2cpu(2),
                [victim(f"victim-{i}", "2", f"pg-victim-{i}", f"node{i}") for i in (1, 2)],
                [
                    preemptor("c-preemptor-1", "pg-child-1"),
                    preemptor("c-preemptor-2a", "pg-child-2", NODE2),
                    preemptor("c-preemptor-2b", "pg-child-2", NODE2),
                ],
                groups=[pod_group(f"pg-victim-{i}", 10, 1) for i in (1, 2)],
                preemptor_composites=[composite("cpg-preemptor-cgang", 100, 1)],
                preemptor_groups=[
                    pod_group("pg-child-1", 100, 1, parent="cpg-preemptor-cgang"),
                    pod_group("pg-child-2", 100, 2, parent="cpg-preemptor-cgang"),
                ],
            ),
            ["c-preemptor-1"],
            ["victim-1"],
            ["victim-2"],
        ),
        None,
    ),
}


def params(table: dict[str, tuple[Case, str | None]]) -> list[Any]:
    out = []
    for name, (case, why) in table.items():
        marks = [pytest.mark.xfail(strict=True, reason=why)] if why else []
        out.append(pytest.param(case, id=name, marks=marks))
    return out


async def run(case: Case) -> None:
    async with scheduler(GATES) as h:
        await create_setup(h, case.setup)
        await wait_all(h, scheduled, case.scheduled)
        try:
            await wait_all(h, preempted, case.preempted)
        except AssertionError:
            raise AssertionError(f"{case.preempted} preempted awaited: {states(h, case.setup.names())}") from None
        kept = [n for n in case.running if not running(h, n)]
        assert not kept, f"expected running: {states(h, case.setup.names())}"


@pytest.mark.parametrize("case", params(NESTED))
async def test_nested_disruption_modes(case: Case) -> None:
    """TestMultiTierCompositePodGroupPreemption_NestedDisruptionModes: one case."""
    await run(case)


@pytest.mark.parametrize("case", params(PARTIAL))
async def test_partial_gang_preemption(case: Case) -> None:
    """TestPartialGangPreemption_PodGroupAndCompositePodGroup: one case."""
    await run(case)


def looped(*links: tuple[str, str]) -> list[dict[str, Any]]:
    """CompositePodGroups ``name -> parent``."""
    return [composite(name, 10, parent=parent) for name, parent in links]


CYCLIC: dict[str, tuple[list[dict[str, Any]], str, str, str | None]] = {
    "Cyclic CompositePodGroup references during preemption dry-run ancestor traversal": (
        looped(("cpg-cycle-a", "cpg-cycle-b"), ("cpg-cycle-b", "cpg-cycle-a")),
        "cpg-cycle-a",
        "cyclic",
        None,
    ),
    "Multi-level loop reference in CompositePodGroup hierarchy": (
        looped(("cpg-loop-1", "cpg-loop-2"), ("cpg-loop-2", "cpg-loop-3"), ("cpg-loop-3", "cpg-loop-1")),
        "cpg-loop-1",
        "loop",
        None,
    ),
    "Self-referencing CompositePodGroup handling": (looped(("cpg-self", "cpg-self")), "cpg-self", "self", None),
    "Dangling non-existent parent reference during preemption dry-run": ([], "cpg-nonexistent", "dangling", None),
}


def cyclic_params() -> list[Any]:
    out = []
    for name, (cpgs, parent, word, why) in CYCLIC.items():
        marks = [pytest.mark.xfail(strict=True, reason=why)] if why else []
        out.append(pytest.param(cpgs, parent, word, id=name, marks=marks))
    return out


@pytest.mark.parametrize(("cpgs", "parent", "word"), cyclic_params())
async def test_cyclic_references_and_edge_cases(cpgs: list[dict[str, Any]], parent: str, word: str) -> None:
    """TestCompositePodGroupPreemption_CyclicReferencesAndEdgeCases: a pod of 2 CPUs (priority
    100, no group) preempts the pod of ``pg-<word>`` (under ``parent``) on the one node of 2
    CPUs; in the first case a pod of no CPU is then bound too (the scheduler is not stuck)."""
    async with scheduler(GATES) as h:
        h.add(hostname_node("node1", "2"))
        h.add(*cpgs)
        h.add(pod_group(f"pg-{word}", 10, 1, parent=parent))
        h.add(pod(f"victim-{word}", "2", 10, group=f"pg-{word}", node="node1"))
        await wait_all(h, scheduled, [f"victim-{word}"])
        name = f"preemptor-{word}-test"
        h.add(pod(name, "2", 100))
        await wait_all(h, scheduled, [name])
        if word == "cyclic":
            h.add(pod("independent-pod-1", "0", 50))
            await wait_all(h, scheduled, ["independent-pod-1"])
