"""Upstream's TestCompositePodGroupPreemption (test/integration/scheduler/preemption/podgroup/
podgrouppreemption_test.go), case by case (ids are its case names), on the real scheduler
(``running_scheduler``) with GenericWorkload, CompositePodGroup and
TopologyAwareWorkloadScheduling on, PodGroupPreemptionPolicy as the case says.

Upstream's profile: the recording Bind plugin and a PodGroupPostFilter that fails before
DefaultPreemption's (the kit's ``config``), with a preset score or a counting Reserve plugin
where the case has one. Each case creates its objects in upstream's order (``create_setup``:
temporarily removing every group while the preemptors arrive, or deleting one
CompositePodGroup first, where the case says so), then checks, reporting every miss as upstream
does: how many expected victims got a ``Preempted`` event (by a pod, a podgroup or a
compositepodgroup), who is unschedulable, who is bound, that each expected victim is preempted
(gone, terminating or ``DisruptionTarget``), and which preemptors carried a nominated node when
bound. The waits share one budget (the kit's TIMEOUT)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

import pytest
from upstream_workload_kit import (
    RECORD,
    TIMEOUT,
    CountingReserve,
    PresetScore,
    Setup,
    composite,
    config,
    create_setup,
    hostname_node,
    node,
    pdb,
    pod,
    pod_group,
    preempted,
    preempted_by,
    scheduled,
    scheduler,
    states,
    unschedulable,
    wait_all,
)

PREFIXES = ("Preempted by compositepodgroup", "Preempted by podgroup", "Preempted by pod")


@dataclass
class Case:
    setup: Setup
    scheduled: list[str]
    preempted: list[str] = field(default_factory=list)
    unschedulable: list[str] = field(default_factory=list)
    nominated: list[str] = field(default_factory=list)
    wap: int = 0
    policy_gate: bool = False
    scores: dict[str, int] | None = None
    reserve_max: int = 0


def two(cpu: str = "2", hostname: bool = False) -> list[dict[str, Any]]:
    if hostname:
        return [hostname_node(f"node{i}", cpu) for i in (1, 2)]
    return [node(f"node{i}", cpu) for i in (1, 2)]


def lows(group: str = "", on: str = "") -> list[dict[str, Any]]:
    return [pod(f"low-{i}", "1", 10, group=group, node=on) for i in (1, 2, 3)]


def highs(*groups: str, cpu: str = "1", policy: str = "", **kw: Any) -> list[dict[str, Any]]:
    return [pod(f"high-{i}", cpu, 100, group=g, preemption_policy=policy, **kw) for i, g in enumerate(groups, 1)]


H3 = ["high-1", "high-2", "high-3"]
L3 = ["low-1", "low-2", "low-3"]
NODE1 = {"kubernetes.io/hostname": "node1"}


def across_nodes(cpg_mode: str, pg_mode: str, pg2_parent: str = "cpg1", grandparent: str = "") -> Setup:
    """Two nodes of 2 CPUs: low-1 (pg1) on node1, low-2 (pg1) and low-3 (pg2) on node2; a plain
    pod of 2 CPUs (priority 100) must land on node1."""
    composites = [composite("cpg1", 10, disruption=cpg_mode)]
    parent = "cpg1"
    if grandparent:
        composites = [
            composite("cpg-grandparent", 10, disruption=grandparent),
            composite("cpg-parent", 10, disruption=cpg_mode, parent="cpg-grandparent"),
        ]
        parent = "cpg-parent"
    return Setup(
        two(hostname=True),
        [
            pod("low-1", "1", 10, group="pg1", node="node1"),
            pod("low-2", "1", 10, group="pg1", node="node2"),
            pod("low-3", "1", 10, group="pg2", node="node2"),
        ],
        [pod("high-1", "2", 100, node_selector=NODE1)],
        composites=composites,
        groups=[
            pod_group("pg1", 10, 2, disruption=pg_mode, parent=parent),
            pod_group("pg2", 10, 1, disruption=pg_mode, parent=pg2_parent),
        ],
    )


def pdb_case(mode: str) -> Setup:
    """One node of 3 CPUs: two pods of pg-pdb (app=foo, a PDB keeping 2) and one of pg-no-pdb."""
    if mode == "all":
        composites = [composite("cpg-pdb", 10, disruption="all"), composite("cpg-no-pdb", 10, disruption="all")]
        groups = [pod_group("pg-pdb", 10, 2, parent="cpg-pdb"), pod_group("pg-no-pdb", 10, 1, parent="cpg-no-pdb")]
    else:
        composites = [composite("cpg-single", 10, disruption="single")]
        groups = [
            pod_group("pg-pdb", 10, 2, disruption="single", parent="cpg-single"),
            pod_group("pg-no-pdb", 10, 1, disruption="single", parent="cpg-single"),
        ]
    return Setup(
        [node("node1", "3")],
        [
            pod("pod-pdb-1", "1", 10, group="pg-pdb", node="node1", labels={"app": "foo"}),
            pod("pod-pdb-2", "1", 10, group="pg-pdb", node="node1", labels={"app": "foo"}),
            pod("pod-no-pdb-1", "1", 10, group="pg-no-pdb", node="node1"),
        ],
        [pod("high-preemptor", "1", 100)],
        composites=composites,
        groups=groups,
        pdb=pdb("pdb", 2, app="foo"),
    )


def policy_three(policy: str, pod_policy: str) -> Setup:
    """One node of 3 CPUs, three low pods placed by the scheduler; high-1 and high-2 of pg1 (a
    gang of 2), high-3 of pg2 (a gang of 1), both under cpg1."""
    return Setup(
        [node("node1", "3")],
        lows(),
        highs("pg1", "pg1", "pg2", policy=pod_policy),
        composites=[composite("cpg1", 100, preemption_policy=policy)],
        groups=[
            pod_group("pg1", 100, 2, preemption_policy=policy, parent="cpg1"),
            pod_group("pg2", 100, 1, preemption_policy=policy, parent="cpg1"),
        ],
    )


def policy_two(policy: str, prefix: str) -> Setup:
    """One node of 3 CPUs holding three low pods; high-1 (2 CPUs) and high-2 of a gang of 2."""
    return Setup(
        [node("node1", "3")],
        lows(on="node1"),
        [
            pod("high-1", "2", 100, group=f"pg-{prefix}", preemption_policy=policy),
            pod("high-2", "1", 100, group=f"pg-{prefix}", preemption_policy=policy),
        ],
        composites=[composite(f"cpg-{prefix}", 100, preemption_policy=policy)],
        groups=[pod_group(f"pg-{prefix}", 100, 2, preemption_policy=policy, parent=f"cpg-{prefix}")],
    )


def preemptor_gang(nodes: list[dict[str, Any]], initial: dict[str, Any], **kw: Any) -> Setup:
    return Setup(
        nodes,
        [initial],
        [pod(f"preemptor-{i}", "1.5", 100, group="preemptor-pg", **kw) for i in (1, 2)],
        composites=[composite("preemptor-cpg", 100)],
        groups=[pod_group("preemptor-pg", 100, 2, parent="preemptor-cpg")],
    )


def victim_and_preemptor(min_group: int | None, temp_remove: bool, cpus: int = 4, one_node: bool = False) -> Setup:
    """cpg-victim (priority 10) over pg-victim, cpg-preemptor (100) over pg-preemptor."""
    n = 2 if one_node else cpus
    return Setup(
        [node("node1", "2")] if one_node else two(),
        [pod(f"low-{i}", "1", 10, group="pg-victim", node="node1" if one_node else f"node{i}") for i in (1, 2)],
        [pod(f"high-{i}", "1", 100, group="pg-preemptor") for i in range(1, n + 1)],
        composites=[composite("cpg-victim", 10, min_group), composite("cpg-preemptor", 100, min_group)],
        groups=[
            pod_group("pg-victim", 10, 2 if one_node else 4, parent="cpg-victim"),
            pod_group("pg-preemptor", 100, 2 if one_node else 4, parent="cpg-preemptor"),
        ],
        temp_remove=temp_remove,
    )


CASES: dict[str, tuple[Case, str | None]] = {
    "CPG Partial Preemption": (
        Case(
            Setup(
                two(),
                [pod("low-1", "2", 10, node="node1"), pod("low-2", "1", 10, node="node2")],
                highs("pg1", "pg1", "pg1"),
                composites=[composite("cpg1", 100)],
                groups=[pod_group("pg1", 100, 3, parent="cpg1")],
            ),
            [*H3, "low-2"],
            ["low-1"],
            wap=1,
            scores={"node1": 100, "node2": 0},
            policy_gate=True,
        ),
        None,
    ),
    "CPG Victim Across Multiple Nodes, CPG DisruptionModeAll": (
        Case(across_nodes("all", ""), ["high-1"], L3, wap=3),
        None,
    ),
    "CPG Victim Across Multiple Nodes, CPG DisruptionModeSingle": (
        Case(across_nodes("single", "single"), ["high-1", "low-2", "low-3"], ["low-1"], wap=1),
        None,
    ),
    "CPG Preemption aborted if victim yields insufficient resources": (
        Case(
            Setup(
                [node("node1", "2")],
                [pod("low-pod", "1", 10, group="pg-victim", node="node1")],
                [pod("high-preemptor", "3", 100)],
                composites=[composite("cpg-victim", 10)],
                groups=[pod_group("pg-victim", 10, 1, parent="cpg-victim")],
            ),
            [],
            unschedulable=["high-preemptor"],
        ),
        None,
    ),
    "CPG Tie-Breaking: PodGroup chosen over CompositePodGroup": (
        Case(
            Setup(
                [node("node1", "2")],
                [
                    pod("low-pg", "1", 10, group="pg-victim-standalone", node="node1"),
                    pod("low-cpg", "1", 10, group="pg-victim-child", node="node1"),
                ],
                [pod("high-preemptor", "1", 100, group="pg-preemptor")],
                composites=[composite("cpg-victim", 10, disruption="all")],
                groups=[
                    pod_group("pg-victim-standalone", 10, 1),
                    pod_group("pg-victim-child", 10, 1, parent="cpg-victim"),
                    pod_group("pg-preemptor", 100, 1),
                ],
            ),
            ["high-preemptor"],
            ["low-pg"],
            wap=1,
        ),
        None,
    ),
    "Scheduler targets lower-priority CPG over higher-priority CPG": (
        Case(
            Setup(
                [node("node1", "3")],
                [
                    pod("lower-pod", "1", 10, group="pg-lower", node="node1"),
                    pod("higher-pod", "1", 20, group="pg-higher", node="node1"),
                ],
                [pod("high-preemptor", "2", 100)],
                composites=[composite("cpg-lower", 10), composite("cpg-higher", 20)],
                groups=[
                    pod_group("pg-lower", 10, 1, parent="cpg-lower"),
                    pod_group("pg-higher", 20, 1, parent="cpg-higher"),
                ],
            ),
            ["high-preemptor", "higher-pod"],
            ["lower-pod"],
            wap=1,
        ),
        None,
    ),
    "PDB Violation reprieves the entire CPG victim (DisruptionModeAll)": (
        Case(pdb_case("all"), ["high-preemptor", "pod-pdb-1", "pod-pdb-2"], ["pod-no-pdb-1"], wap=1),
        None,
    ),
    "PDB Violation reprieves only the child PG (DisruptionModeSingle)": (
        Case(pdb_case("single"), ["high-preemptor", "pod-pdb-1", "pod-pdb-2"], ["pod-no-pdb-1"], wap=1),
        None,
    ),
    "3-Level Nested CPG resolves DisruptionMode up to the grandparent": (
        Case(across_nodes("single", "single", "cpg-parent", grandparent="all"), ["high-1"], L3, wap=3),
        None,
    ),
    "Hierarchical DisruptionMode - Grandparent Single, Parent All": (
        Case(
            across_nodes("all", "single", "cpg-grandparent", grandparent="single"),
            ["high-1", "low-3"],
            ["low-1", "low-2"],
            wap=2,
        ),
        None,
    ),
    "CPG with default preemption policy performs preemption, with PodGroupPreemptionPolicy enabled": (
        Case(
            Setup(
                [node("node1", "3")],
                lows(),
                highs("pg1", "pg1", "pg1"),
                composites=[composite("cpg1", 100)],
                groups=[pod_group("pg1", 100, 3, parent="cpg1")],
            ),
            H3,
            L3,
            wap=3,
            policy_gate=True,
        ),
        None,
    ),
    "CPG with PreemptNever Policy": (
        Case(policy_three("Never", "Never"), L3, unschedulable=H3, policy_gate=True),
        None,
    ),
    "CPG with PreemptLowerPriority Policy": (
        Case(
            policy_three("PreemptLowerPriority", "PreemptLowerPriority"),
            H3,
            L3,
            nominated=H3,
            wap=3,
            policy_gate=True,
        ),
        None,
    ),
    "CPG PreemptionPolicy PreemptNever prevents preemption": (
        Case(policy_two("Never", "preempt-never"), L3, unschedulable=["high-1", "high-2"], policy_gate=True),
        None,
    ),
    "CPG PreemptionPolicy PreemptLowerPriority allows preemption": (
        Case(
            policy_two("PreemptLowerPriority", "preempt-lower"),
            ["high-1", "high-2"],
            L3,
            nominated=["high-1", "high-2"],
            wap=3,
            policy_gate=True,
        ),
        None,
    ),
    "CPG with PreemptNever preemption policy in all pods does not perform preemption, with PodGroupPreemptionPolicy disabled": (
        Case(
            Setup(
                [node("node1", "3")],
                lows(),
                highs("pg1", "pg1", "pg1", policy="Never"),
                composites=[composite("cpg1", 100)],
                groups=[pod_group("pg1", 100, 3, parent="cpg1")],
            ),
            L3,
            unschedulable=H3,
        ),
        None,
    ),
    "CPG Gang scheduling: preemption with pod anti-affinity constraints": (
        Case(
            preemptor_gang(
                two(hostname=True),
                pod("initial-pod", "0.25", 10, node="node1", labels={"app": "initial"}),
                anti_affinity_key="app",
            ),
            ["preemptor-1", "preemptor-2"],
            ["initial-pod"],
            wap=1,
            policy_gate=True,
        ),
        None,
    ),
    "CPG Gang scheduling: preemption with pod node port": (
        Case(
            preemptor_gang(two(), pod("initial-pod", "0.25", 10, node="node1", host_port=8080), host_port=8080),
            ["preemptor-1", "preemptor-2"],
            ["initial-pod"],
            wap=1,
            policy_gate=True,
        ),
        None,
    ),
    "Reserve plugins are called during preemption simulation, so second pod fails": (
        Case(
            Setup(
                [node("node1", "2")],
                [pod(f"low-{i}", "1", 10, group="pg-victim", node="node1") for i in (1, 2)],
                [pod(f"high-{i}", "1", 100, group="pg-preemptor", labels={"test-plugin": "true"}) for i in (1, 2)],
                composites=[composite("cpg-victim", 10), composite("cpg-preemptor", 100)],
                groups=[
                    pod_group("pg-victim", 10, 2, parent="cpg-victim"),
                    pod_group("pg-preemptor", 100, 2, parent="cpg-preemptor"),
                ],
            ),
            [],
            unschedulable=["high-1", "high-2"],
            reserve_max=1,
        ),
        None,
    ),
    "Binding first before preemption for gang policy": (
        Case(victim_and_preemptor(1, True), ["high-1", "high-2", "high-3", "high-4"], ["low-1", "low-2"], wap=2),
        None,
    ),
    "Binding first before preemption for CPG": (
        Case(victim_and_preemptor(None, False), ["high-1", "high-2", "high-3", "high-4"], ["low-1", "low-2"], wap=2),
        None,
    ),
    "CPG Missing Parent Reference Fallback": (
        Case(
            Setup(
                [node("node1", "2")],
                [pod(f"low-{i}", "1", 10, group="pg-victim", node="node1") for i in (1, 2)],
                [pod(f"high-{i}", "1", 100, group="pg-preemptor") for i in (1, 2)],
                composites=[composite("cpg-victim", 10), composite("cpg-preemptor", 100)],
                groups=[
                    pod_group("pg-victim", 10, 2, parent="cpg-victim"),
                    pod_group("pg-preemptor", 100, 2, parent="cpg-preemptor"),
                ],
                remove_before="cpg-victim",
            ),
            ["high-1", "high-2"],
            ["low-1", "low-2"],
            wap=2,
        ),
        None,
    ),
}


def params() -> list[Any]:
    out = []
    for name, (case, why) in CASES.items():
        marks = [pytest.mark.xfail(strict=True, reason=why)] if why else []
        out.append(pytest.param(case, id=name, marks=marks))
    return out


@pytest.mark.parametrize("case", params())
async def test_composite_pod_group_preemption(case: Case) -> None:
    """TestCompositePodGroupPreemption: one case of its table."""
    gates = {
        "GenericWorkload": True,
        "CompositePodGroup": True,
        "TopologyAwareWorkloadScheduling": True,
        "PodGroupPreemptionPolicy": case.policy_gate,
    }
    extra = []
    if case.scores is not None:
        PresetScore.scores = case.scores
        extra.append("PresetScore")
    if case.reserve_max:
        CountingReserve.max_pods = case.reserve_max
        extra.append("CountingReserve")
    misses: list[str] = []
    loop = asyncio.get_running_loop()
    async with scheduler(gates, config(*extra)) as h:
        await create_setup(h, case.setup)
        deadline = loop.time() + TIMEOUT

        def left() -> float:
            """The waits share one budget, so that a case stays within TIMEOUT."""
            return max(0.05, deadline - loop.time())

        if case.wap:
            try:
                await h.wait_for(lambda: preempted_by(h, case.preempted, PREFIXES) == case.wap, left())
            except TimeoutError:
                misses.append(f"{preempted_by(h, case.preempted, PREFIXES)} of {case.wap} Preempted events")
        for check, names in ((unschedulable, case.unschedulable), (scheduled, case.scheduled)):
            try:
                await wait_all(h, check, names, left())
            except AssertionError as exc:
                misses.append(str(exc))
        missed = [n for n in case.preempted if not preempted(h, n)]
        if missed:
            misses.append(f"not preempted: {missed}")
        misses.extend(
            f"{n} had no nominated node when bound" for n in case.nominated if not RECORD.nominated_at_bind.get(n)
        )
        assert not misses, f"{misses}; {states(h, case.setup.names())}"
