"""Upstream's test/integration/scheduler/podgroup/podgroup_test.go, case by case, on the real
scheduler (``running_scheduler``): TestPodGroupScheduling's table of steps (ids are its case
names; the steps are stepsframework's: create pods or a PodGroup, delete pods, wait until pods
are gated at PreEnqueue, unschedulable, scheduled or removed, or until some of them are
scheduled, and check the PodGroup's condition) and TestWorkloadAwarePreemptionInvocation.

One node of 4 CPUs (zone1). Upstream runs each case with TopologyAwareWorkloadScheduling on and
off; here it runs once, with it on. GangScheduling and WorkloadAwarePreemption are no gates of
1.37's (GenericWorkload carries both)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from upstream_workload_kit import (
    TIMEOUT,
    exists,
    in_queue_waiting,
    node,
    pod,
    pod_group,
    preempted_event_messages,
    scheduled,
    scheduler,
    states,
    unschedulable,
    wait_all,
)

from kubesched.testing import Harness

Step = Callable[[Harness], Any]


def gang_pods(*names: str, group: str = "pg1", priority: int = 100) -> list[dict[str, Any]]:
    return [pod(n, "1", priority, group=group, grace=None) for n in names]


P1, P2, P3, P4 = "p1", "p2", "p3", "p4"
GANG = pod_group("pg1", 100, 3)
OTHER_GANG = pod_group("pg2", 100, 3)
BASIC = pod_group("pg1")
MID = pod_group("mid-pg", 50, 2)
MID_ZONED = pod_group("mid-pg", 50, 2, topology_key="topology.kubernetes.io/zone")
BLOCKER = pod("blocker", "2", 100)
SMALL_BLOCKER = pod("small-blocker", "1", 100)
LOW_BLOCKER = pod("low-priority-blocker", "2", 10)
LOWS = [pod(f"low-p{i}", "1", 10) for i in (1, 2, 3, 4)]
VERY_LOWS = [pod(f"very-low-p{i}", "1", 5) for i in (1, 2)]
MIDS = [pod(f"mid-p{i}", "1", 50, group="mid-pg", grace=None) for i in (1, 2)]
OTHERS = {n: pod(n, "1", 100, group="pg2", grace=None) for n in ("other-p1", "other-p2", "other-p3")}
PS = {n: p for n, p in zip((P1, P2, P3, P4), gang_pods(P1, P2, P3, P4), strict=True)}


# --- steps (stepsframework's, by name) -------------------------------------------------------------
def create(*objs: dict[str, Any]) -> Step:
    async def step(h: Harness) -> None:
        h.add(*objs)
        await h.cluster.wait_delivered()

    return step


def delete_pods(*names: str) -> Step:
    async def step(h: Harness) -> None:
        for n in names:
            h.delete("Pod", n)

    return step


def gated(*names: str) -> Step:
    async def step(h: Harness) -> None:
        await wait_all(h, in_queue_waiting, names)

    return step


def are_unschedulable(*names: str) -> Step:
    async def step(h: Harness) -> None:
        await wait_all(h, unschedulable, names)

    return step


def are_scheduled(*names: str) -> Step:
    async def step(h: Harness) -> None:
        await wait_all(h, scheduled, names)

    return step


def removed(*names: str) -> Step:
    async def step(h: Harness) -> None:
        await wait_all(h, lambda h, n: not exists(h, n), names)

    return step


def some_scheduled(names: list[str], n_scheduled: int, n_unschedulable: int) -> Step:
    """WaitForAnyPodsScheduled: exactly so many bound and so many unschedulable."""

    async def step(h: Harness) -> None:
        def reached() -> bool:
            bound = sum(scheduled(h, n) for n in names)
            stuck = sum(unschedulable(h, n) for n in names)
            return bound == n_scheduled and stuck == n_unschedulable

        try:
            await h.wait_for(reached, TIMEOUT)
        except TimeoutError:
            raise AssertionError(
                f"{n_scheduled} scheduled, {n_unschedulable} unschedulable: {states(h, names)}"
            ) from None

    return step


def condition(group: str, status: str, reason: str) -> Step:
    async def step(h: Harness) -> None:
        def reached() -> bool:
            cond = h.pod_group_condition(group) or {}
            return cond.get("status") == status and cond.get("reason") == reason

        try:
            await h.wait_for(reached, TIMEOUT)
        except TimeoutError:
            raise AssertionError(f"condition {status}/{reason}, got {h.pod_group_condition(group)}") from None

    return step


STEPS: dict[str, tuple[list[Step], bool, str]] = {
    "gang schedules when pod group and resources are available": (
        [
            create(GANG),
            create(PS[P1], PS[P2], PS[P3]),
            are_scheduled(P1, P2, P3),
            condition("pg1", "True", "Scheduled"),
        ],
        False,
        "",
    ),
    "gang waits for quorum to start, then schedules": (
        [create(GANG), create(PS[P1], PS[P2]), gated(P1, P2), create(PS[P3]), are_scheduled(P1, P2, P3)],
        False,
        "",
    ),
    "gang waits for pod group, then for resources, then schedules": (
        [
            create(BLOCKER),
            are_scheduled("blocker"),
            create(PS[P1], PS[P2], PS[P3]),
            gated(P1, P2, P3),
            create(GANG),
            are_unschedulable(P1, P2, P3),
            condition("pg1", "False", "Unschedulable"),
            delete_pods("blocker"),
            are_scheduled(P1, P2, P3),
            condition("pg1", "True", "Scheduled"),
        ],
        False,
        "",
    ),
    "minCount is scheduled, but one pod from a gang remain unschedulable until the blocked resources are released": (
        [
            create(SMALL_BLOCKER),
            are_scheduled("small-blocker"),
            create(*(PS[n] for n in (P1, P2, P3, P4))),
            create(GANG),
            some_scheduled([P1, P2, P3, P4], 3, 1),
            delete_pods("small-blocker"),
            are_scheduled(P1, P2, P3, P4),
        ],
        False,
        "",
    ),
    "two gangs competing for the same resources shouldn't deadlock, reversed order": (
        [
            create(GANG),
            create(OTHER_GANG),
            create(OTHERS["other-p3"], PS[P3], OTHERS["other-p2"], PS[P2], OTHERS["other-p1"], PS[P1]),
            are_scheduled("other-p1", "other-p2", "other-p3"),
            are_unschedulable(P1, P2, P3),
        ],
        False,
        "",
    ),
    "two gangs competing for the same resources shouldn't deadlock": (
        [
            create(GANG),
            create(OTHER_GANG),
            create(PS[P1], OTHERS["other-p1"], PS[P2], OTHERS["other-p2"], PS[P3], OTHERS["other-p3"]),
            are_scheduled(P1, P2, P3),
            are_unschedulable("other-p1", "other-p2", "other-p3"),
        ],
        False,
        "",
    ),
    "gang schedules with preemption": (
        [
            create(LOW_BLOCKER),
            are_scheduled("low-priority-blocker"),
            create(GANG),
            create(*(PS[n] for n in (P1, P2, P3, P4))),
            are_scheduled(P1, P2, P3, P4),
            condition("pg1", "True", "Scheduled"),
            removed("low-priority-blocker"),
        ],
        False,
        "",
    ),
    "basic group schedules when pod group and resources are available, without gang enforcement": (
        [create(BASIC), create(PS[P1]), are_scheduled(P1), create(PS[P2], PS[P3]), are_scheduled(P1, P2, P3)],
        False,
        "",
    ),
    "basic group waits for pod group, part of it waits for resources, then schedules": (
        [
            create(BLOCKER),
            are_scheduled("blocker"),
            create(PS[P1], PS[P2], PS[P3]),
            gated(P1, P2, P3),
            create(BASIC),
            some_scheduled([P1, P2, P3], 2, 1),
            delete_pods("blocker"),
            are_scheduled(P1, P2, P3),
        ],
        False,
        "",
    ),
    "basic group schedules with preemption": (
        [
            create(LOW_BLOCKER),
            are_scheduled("low-priority-blocker"),
            create(BASIC),
            create(*(PS[n] for n in (P1, P2, P3, P4))),
            are_scheduled(P1, P2, P3, P4),
            removed("low-priority-blocker"),
        ],
        False,
        "",
    ),
    "basic group schedules with workload-aware preemption": (
        [
            create(LOW_BLOCKER),
            are_scheduled("low-priority-blocker"),
            create(BASIC),
            create(*(PS[n] for n in (P1, P2, P3, P4))),
            are_scheduled(P1, P2, P3, P4),
            removed("low-priority-blocker"),
        ],
        False,
        "",
    ),
    "gang schedules with workload-aware preemption": (
        [
            create(*LOWS),
            are_scheduled("low-p1", "low-p2", "low-p3", "low-p4"),
            create(GANG),
            create(*(PS[n] for n in (P1, P2, P3, P4))),
            are_scheduled(P1, P2, P3, P4),
            removed("low-p1", "low-p2", "low-p3", "low-p4"),
        ],
        False,
        "",
    ),
    "gang schedules with partial workload-aware preemption": (
        [
            create(*VERY_LOWS, *LOWS[:2]),
            are_scheduled("very-low-p1", "very-low-p2", "low-p1", "low-p2"),
            create(MID),
            create(*MIDS),
            are_scheduled("mid-p1", "mid-p2", "low-p1", "low-p2"),
            removed("very-low-p1", "very-low-p2"),
        ],
        False,
        "",
    ),
    "tas gang with constraint does not use pod by pod preemption": (
        [
            create(*VERY_LOWS, *LOWS[:2]),
            are_scheduled("very-low-p1", "very-low-p2", "low-p1", "low-p2"),
            create(MID_ZONED),
            create(*MIDS),
            are_unschedulable("mid-p1", "mid-p2"),
        ],
        True,
        "",
    ),
    "tas gang with constraint does not use workload preemption": (
        [
            create(*VERY_LOWS, *LOWS[:2]),
            are_scheduled("very-low-p1", "very-low-p2", "low-p1", "low-p2"),
            create(MID_ZONED),
            create(*MIDS),
            are_unschedulable("mid-p1", "mid-p2"),
        ],
        True,
        "",
    ),
}


def params() -> list[Any]:
    out = []
    for name, (steps, _tas, why) in STEPS.items():
        marks = [pytest.mark.xfail(strict=True, reason=why)] if why else []
        out.append(pytest.param(steps, id=name, marks=marks))
    return out


@pytest.mark.parametrize("steps", params())
async def test_pod_group_scheduling(steps: list[Step]) -> None:
    """TestPodGroupScheduling: one case's steps, in order, on a 4-CPU node. The backoff is
    short but not none: a group that cannot fit backs off after each attempt (with none it
    would be retried back to back, and the loop's virtual time here would never move)."""
    gates = {"GenericWorkload": True, "TopologyAwareWorkloadScheduling": True}
    async with scheduler(gates, initial_backoff=0.1, max_backoff=0.1) as h:
        h.add(node("node", "4", **{"topology.kubernetes.io/zone": "zone1"}))
        for step in steps:
            await step(h)


async def test_workload_aware_preemption_invocation() -> None:
    """TestWorkloadAwarePreemptionInvocation: a gang of three (priority 100, disruptionMode
    PodGroup) over four 1-CPU pods of priority 10 on a 4-CPU node: a victim gets a Preempted
    event whose message starts "Preempted by podgroup"."""
    async with scheduler({"GenericWorkload": True}, initial_backoff=0.1, max_backoff=0.1) as h:
        h.add(node("node", "4"))
        lows = [pod(f"low-{i}", "1", 10, grace=None) for i in (1, 2, 3, 4)]
        h.add(*lows)
        await wait_all(h, scheduled, [f"low-{i}" for i in (1, 2, 3, 4)])
        h.add(pod_group("pg1", 100, 3, disruption="all"))
        h.add(*(pod(f"high-{i}", "1", 100, group="pg1", grace=None) for i in (1, 2, 3)))

        def invoked() -> bool:
            return any(
                m.startswith("Preempted by podgroup")
                for i in (1, 2, 3, 4)
                for m in preempted_event_messages(h, f"low-{i}")
            )

        try:
            await h.wait_for(invoked, TIMEOUT)
        except TimeoutError:
            msgs = {f"low-{i}": preempted_event_messages(h, f"low-{i}") for i in (1, 2, 3, 4)}
            raise AssertionError(f"Preempted events: {msgs}") from None
