"""Upstream's TestPodGroupAsyncPreemption (test/integration/scheduler/preemption/, its
async-preemption scenarios run with GenericWorkload on), case by case (ids are its case names;
the second of its two cases of one name gets ``#01``, as Go names it), on the real scheduler
(``running_scheduler``) with SchedulerAsyncPreemption, SchedulerAsyncAPICalls and
GenericWorkload on. Every preemptor is the one pod of a gang of one.

Upstream drives one scheduling attempt per step and holds each preemption's API calls until the
case completes them. Here the scheduler runs on its own, so the steps become waits and holds:

* ``create``: objects added (victims are ``victim-<n>``, numbered as created; one node ``node``
  of 4 CPUs, ``node2`` alike when a case adds it);
* ``attempted``: the pod's attempt failed (PodScheduled False/Unschedulable) or the victims'
  deletions it started are being held;
* ``gated``: the pod waits in the queue, and activating it (as upstream's check does) leaves it
  there, gated at PreEnqueue;
* ``running``: DefaultPreemption reports the pod as running preemption;
* ``complete``: the held deletions go through, with those the preemptions start meanwhile;
* ``scheduled`` / ``unschedulable``: as the kit checks them;
* ``bind_started`` / ``resume_bind``: the Bind plugin holding ``pod-blocked-in-binding`` has it /
  lets it go."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from upstream_workload_kit import (
    TIMEOUT,
    node,
    pod,
    pod_group,
    scheduled,
    scheduler,
    states,
    unschedulable,
    wait_all,
)

from kubesched import Status
from kubesched.testing import Harness

BLOCKED = "pod-blocked-in-binding"
PRIORITY_MISMATCH = (
    "preemptor-mid-priority (priority 50) is in pg-second-preemptor (priority 100): the pod-group cycle refuses it "
    "with a SchedulerError ('all pods in a single pod group should have the same priority as the pod group's "
    "priority, got 50 and 100'), as 1.37's validatePodGroup reads, so it never preempts; upstream's case expects it "
    "to preempt and bind"
)
TAKES_NODE_AT_ONCE = (
    "once the held deletions go through, preemptor-mid-priority binds on node at once (the victim in binding "
    "forgotten with its deletion), where upstream keeps it gated until that victim's preemption ends, lets "
    "preemptor-high-priority take node and then preempts on node2"
)


class BlockingBinder:
    """Holds the binding of ``pod-blocked-in-binding`` until the case resumes it; lets
    DefaultBinder bind every pod."""

    name = "BlockingBinder"
    started = asyncio.Event()
    resume = asyncio.Event()

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    async def bind(self, state: Any, pod: Any, node_name: str) -> Status:
        if pod.name == BLOCKED:
            BlockingBinder.started.set()
            await BlockingBinder.resume.wait()
        return Status.skip()


CONFIG = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [
        {
            "schedulerName": "default-scheduler",
            "plugins": {
                "multiPoint": {
                    "enabled": [{"name": "BlockingBinder"}, {"name": "DefaultBinder"}],
                    "disabled": [{"name": "DefaultBinder"}],
                }
            },
        }
    ],
}


class Run:
    """One case's scheduler, with the cluster's pod deletions held until ``complete``."""

    def __init__(self, h: Harness) -> None:
        self.h = h
        self.release = asyncio.Event()
        self.pending = 0
        self.victims = 0
        real = h.cluster.delete_pod

        async def held(obj: dict[str, Any]) -> None:
            self.pending += 1
            try:
                await self.release.wait()
            finally:
                self.pending -= 1
            await real(obj)

        h.cluster.delete_pod = held  # type: ignore[method-assign]

    def uid(self, name: str) -> str:
        return str(self.h.pod(name)["metadata"]["uid"])


Step = Callable[[Run], Awaitable[None]]


def victims(count: int, cpu: str, on: str = "node") -> Step:
    async def step(r: Run) -> None:
        for _ in range(count):
            r.victims += 1
            r.h.add(pod(f"victim-{r.victims}", cpu, 1, node=on))
        await r.h.cluster.wait_delivered()

    return step


def create(*objs: dict[str, Any]) -> Step:
    async def step(r: Run) -> None:
        r.h.add(*objs)
        await r.h.cluster.wait_delivered()

    return step


def group(name: str, priority: int) -> Step:
    return create(pod_group(name, priority, 1))


def preemptor(name: str, cpu: str, priority: int, group_name: str = "pg-preemptor") -> Step:
    return create(pod(name, cpu, priority, group=group_name, grace=None))


async def wait(r: Run, what: str, cond: Callable[[], bool]) -> None:
    try:
        await r.h.wait_for(cond, TIMEOUT)
    except TimeoutError:
        names = [p["metadata"]["name"] for p in r.h.store.list("Pod")[0]]
        raise AssertionError(f"{what} not reached: {states(r.h, names)}; held deletions {r.pending}") from None


def attempted(name: str) -> Step:
    async def step(r: Run) -> None:
        await wait(r, f"{name} attempted", lambda: unschedulable(r.h, name) or r.pending > 0)

    return step


def gated(name: str) -> Step:
    """Upstream's check: the pod waits in the queue, and activating it leaves it there, held
    at PreEnqueue by the preemption it is running."""

    async def step(r: Run) -> None:
        queue = r.h.scheduler.queue
        await wait(r, f"{name} in the queue", lambda: queue.where(r.uid(name)) in ("unschedulable", "gated"))
        queue.activate([r.uid(name)])
        assert queue.where(r.uid(name)) == "gated", f"{name} went on after activation: {queue.where(r.uid(name))}"

    return step


def running(name: str) -> Step:
    async def step(r: Run) -> None:
        plugin = r.h.scheduler.frameworks["default-scheduler"].plugins["DefaultPreemption"]
        await wait(r, f"{name} running preemption", lambda: plugin.is_pod_running_preemption(r.uid(name)))

    return step


async def complete(r: Run) -> None:
    """The held deletions go through, and those the preemptions under way start meanwhile (the
    last victim's, started once the others are gone): upstream's completion lets every call of
    the preemption through. Deletions started after 0.2 s without one are held again."""
    r.release.set()
    loop = asyncio.get_running_loop()
    quiet_since = loop.time()
    while loop.time() - quiet_since < 0.2:
        await asyncio.sleep(0.01)
        if r.pending:
            quiet_since = loop.time()
    r.release = asyncio.Event()


def complete_for(name: str) -> Step:
    """Upstream completes one preemptor's calls; here every held deletion goes through."""
    del name
    return complete


def bound(name: str) -> Step:
    async def step(r: Run) -> None:
        await wait_all(r.h, scheduled, [name])

    return step


def stuck(name: str) -> Step:
    async def step(r: Run) -> None:
        await wait_all(r.h, unschedulable, [name])

    return step


async def bind_started(r: Run) -> None:
    await wait(r, f"{BLOCKED} in binding", BlockingBinder.started.is_set)


async def resume_bind(r: Run) -> None:
    BlockingBinder.resume.set()


def blocked_victim(cpu: str, grace: int = 0) -> Step:
    return create(pod(BLOCKED, cpu, 1, grace=grace))


H, S, M = "preemptor-high-priority", "preemptor-super-high-priority", "preemptor-mid-priority"

CASES: dict[str, tuple[list[Step], str | None, float]] = {
    "basic: async preemption happens expectedly": (
        [
            victims(2, "2"),
            group("pg-preemptor", 100),
            preemptor("preemptor", "4", 100),
            attempted("preemptor"),
            gated("preemptor"),
            running("preemptor"),
            complete_for("preemptor"),
            bound("preemptor"),
        ],
        None,
        0.0,
    ),
    "basic async preemption with 1 victim, preemptor gated until preemption API call finishes": (
        [
            victims(1, "1"),
            group("pg-preemptor", 100),
            preemptor("preemptor", "4", 100),
            attempted("preemptor"),
            gated("preemptor"),
            running("preemptor"),
            complete_for("preemptor"),
            bound("preemptor"),
        ],
        None,
        0.0,
    ),
    "Higher priority Pod takes over the place for lower priority Pod that is running the preemption": (
        [
            victims(4, "1"),
            group("pg-preemptor", 100),
            preemptor(H, "4", 100),
            attempted(H),
            gated(H),
            running(H),
            group("pg-preemptor-super-high-priority", 200),
            preemptor(S, "4", 200, "pg-preemptor-super-high-priority"),
            attempted(S),
            running(S),
            gated(S),
            complete_for(S),
            complete_for(H),
            bound(S),
            stuck(H),
        ],
        None,
        1.0,
    ),
    "Lower priority Pod can select the same place where the higher priority Pod is preempting if the node is big enough": (
        [
            victims(4, "1"),
            group("pg-preemptor", 100),
            preemptor(H, "2", 100),
            attempted(H),
            gated(H),
            running(H),
            group("pg-second-preemptor", 100),
            preemptor(M, "2", 50, "pg-second-preemptor"),
            attempted(M),
            gated(M),
            running(M),
            complete_for(M),
            complete_for(H),
            bound(H),
            attempted(M),
            running(M),
            complete_for(M),
            bound(M),
        ],
        PRIORITY_MISMATCH,
        0.0,
    ),
    "victim blocked in binding, preemptor pod gets scheduled after victim-in-binding is deleted": (
        [
            blocked_victim("2"),
            bind_started,
            group("pg-preemptor", 100),
            preemptor("preemptor", "4", 100),
            attempted("preemptor"),
            complete_for("preemptor"),
            bound("preemptor"),
            resume_bind,
        ],
        None,
        0.0,
    ),
    "victim blocked in binding, preemptor pod gets scheduled when victim-in-binding is under graceful termination": (
        [
            blocked_victim("2", 1000),
            bind_started,
            group("pg-preemptor", 100),
            preemptor("preemptor", "4", 100),
            attempted("preemptor"),
            complete_for("preemptor"),
            bound("preemptor"),
        ],
        None,
        0.0,
    ),
    "victim blocked in binding, preemptor pod gets scheduled when victim-in-binding is under graceful termination#01": (
        [
            blocked_victim("2", 1000),
            bind_started,
            group("pg-preemptor", 100),
            preemptor("preemptor", "4", 100),
            attempted("preemptor"),
            complete_for("preemptor"),
            bound("preemptor"),
            resume_bind,
        ],
        None,
        0.0,
    ),
    "While lower priority Pod is waiting for preemption, higher priority Pod takes its place on the node": (
        [
            victims(3, "1"),
            blocked_victim("1"),
            bind_started,
            group("pg-preemptor", 50),
            preemptor(M, "4", 50),
            attempted(M),
            complete_for(M),
            gated(M),
            create(node("node2", "4")),
            victims(4, "1", "node2"),
            group("pg-high-priority-preemptor", 100),
            preemptor(H, "2", 100, "pg-high-priority-preemptor"),
            bound(H),
            resume_bind,
            attempted(M),
            complete_for(M),
            bound(M),
        ],
        TAKES_NODE_AT_ONCE,
        0.0,
    ),
}


def params() -> list[Any]:
    out = []
    for name, (steps, why, backoff) in CASES.items():
        marks = [pytest.mark.xfail(strict=True, reason=why)] if why else []
        out.append(pytest.param(steps, backoff, id=name, marks=marks))
    return out


@pytest.mark.parametrize(("steps", "backoff"), params())
async def test_pod_group_async_preemption(steps: list[Step], backoff: float) -> None:
    """TestPodGroupAsyncPreemption: one case, its steps in order."""
    BlockingBinder.started = asyncio.Event()
    BlockingBinder.resume = asyncio.Event()
    gates = {"SchedulerAsyncPreemption": True, "SchedulerAsyncAPICalls": True, "GenericWorkload": True}
    async with scheduler(
        gates, CONFIG, plugins=[BlockingBinder], max_backoff=backoff or 1.0, initial_backoff=backoff
    ) as h:
        run = Run(h)
        h.add(node("node", "4"))
        try:
            for step in steps:
                await step(run)
        finally:
            run.release.set()
            BlockingBinder.resume.set()
