"""Upstream's test/integration/scheduler/preemption/podgroup/podgrouppreemption_nominatednodename_test.go
on the real scheduler (``running_scheduler``): TestPodGroupPreemption_ClearingNominatedNodeNameAfterBinding.

A gang, a basic group, or a CompositePodGroup of two gangs (priority 100) arrives on one node of
3 CPUs filled by three pods of priority 10 (placed by the scheduler). Upstream then checks, and
reports every miss (its checks do not stop at the first): each low pod got a ``Preempted`` event
saying ``Preempted by podgroup``/``compositepodgroup`` (exactly three of them), the high pods are
bound, exactly three low pods are preempted, each high pod carried a nominated node when the
recording Bind plugin (DefaultBinder disabled) saw it, and its ``status.nominatedNodeName`` is
cleared after binding with ClearingNominatedNodeNameAfterBinding on, kept with it off.

Upstream runs each case with CompositePodGroup on and off (on only for the case with a
CompositePodGroup), ClearingNominatedNodeNameAfterBinding on and off and SchedulerAsyncPreemption
on and off; so does this file (the ids say which). The last is kube-apiserver's gate: the
in-memory store follows it. PodLevelResources, GenericWorkload,
TopologyAwareWorkloadScheduling and PodGroupPreemptionPolicy are on."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

import pytest
from upstream_workload_kit import (
    RECORD,
    TIMEOUT,
    binder_config,
    composite,
    node,
    nominated,
    pod,
    pod_group,
    preempted,
    preempted_by,
    scheduled,
    scheduler,
    states,
    wait_all,
)

WAP_PREFIXES = ("Preempted by compositepodgroup", "Preempted by podgroup")
LOWS = [pod(f"low-{i}", "1", 10) for i in (1, 2, 3)]
LOW_NAMES = ["low-1", "low-2", "low-3"]
HIGH_NAMES = ["high-1", "high-2", "high-3"]


@dataclass
class Case:
    groups: list[dict[str, Any]]
    preemptors: list[dict[str, Any]]
    composites: list[dict[str, Any]] = field(default_factory=list)


def highs(*groups: str, policy: str = "") -> list[dict[str, Any]]:
    return [pod(n, "1", 100, group=g, preemption_policy=policy) for n, g in zip(HIGH_NAMES, groups, strict=True)]


CASES: dict[str, Case] = {
    "Full PodGroup Preemption": Case([pod_group("pg1", 100, 3)], highs("pg1", "pg1", "pg1")),
    "Full PodGroup Preemption for basic policy": Case([pod_group("pg1", 100)], highs("pg1", "pg1", "pg1")),
    "CPG with PreemptLowerPriority Policy": Case(
        [
            pod_group("pg1", 100, 2, preemption_policy="PreemptLowerPriority", parent="cpg1"),
            pod_group("pg2", 100, 1, preemption_policy="PreemptLowerPriority", parent="cpg1"),
        ],
        highs("pg1", "pg1", "pg2", policy="PreemptLowerPriority"),
        [composite("cpg1", 100, preemption_policy="PreemptLowerPriority")],
    ),
}


def variants() -> list[Any]:
    out = []
    for name, case in CASES.items():
        for cpg in (True, False):
            if case.composites and not cpg:
                continue
            for clear in (True, False):
                for asynchronous in (True, False):
                    marks: list[Any] = []
                    ident = f"{name} (CPG enabled: {cpg}, clear NNN after binding: {clear}, async preemption: {asynchronous})"
                    out.append(pytest.param(case, cpg, clear, asynchronous, id=ident, marks=marks))
    return out


@pytest.mark.parametrize(("case", "cpg", "clear", "asynchronous"), variants())
async def test_clearing_nominated_node_name_after_binding(
    case: Case, cpg: bool, clear: bool, asynchronous: bool
) -> None:
    """TestPodGroupPreemption_ClearingNominatedNodeNameAfterBinding: one case, one variant."""
    gates = {
        "PodLevelResources": True,
        "GenericWorkload": True,
        "TopologyAwareWorkloadScheduling": True,
        "PodGroupPreemptionPolicy": True,
        "CompositePodGroup": cpg,
        "SchedulerAsyncPreemption": asynchronous,
        "ClearingNominatedNodeNameAfterBinding": clear,
    }
    misses: list[str] = []
    loop = asyncio.get_running_loop()
    async with scheduler(gates, binder_config()) as h:
        h.add(node("node1", "3"))
        h.add(*case.composites)
        h.add(*case.groups)
        h.add(*LOWS)
        await wait_all(h, scheduled, LOW_NAMES)
        h.add(*case.preemptors)
        deadline = loop.time() + TIMEOUT

        def left() -> float:
            """The waits share one budget, so that a case stays within TIMEOUT."""
            return max(0.05, deadline - loop.time())

        try:
            await h.wait_for(lambda: preempted_by(h, LOW_NAMES, WAP_PREFIXES) == 3, left())
        except TimeoutError:
            misses.append(f"{preempted_by(h, LOW_NAMES, WAP_PREFIXES)} of 3 victims preempted by the group")
        try:
            await wait_all(h, scheduled, HIGH_NAMES, left())
        except AssertionError as exc:
            misses.append(str(exc))
        count = sum(preempted(h, n) for n in LOW_NAMES)
        if count != 3:
            misses.append(f"{count} of 3 low pods preempted")
        misses.extend(
            f"{n} had no nominated node when bound" for n in HIGH_NAMES if not RECORD.nominated_at_bind.get(n)
        )
        for n in HIGH_NAMES:
            if clear and nominated(h, n):
                misses.append(f"{n}: nominatedNodeName not cleared after binding")
            if not clear and not nominated(h, n):
                misses.append(f"{n}: nominatedNodeName cleared after binding")
        assert not misses, f"{misses}; {states(h, [*LOW_NAMES, *HIGH_NAMES])}"
