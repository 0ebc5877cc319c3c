"""The queue owns its async PreEnqueue checks: closing it cancels them and waits for them."""

from __future__ import annotations

import asyncio
from typing import Any

from conftest import profile, registry_with

from kubesched.backend.queue import SchedulingQueue
from kubesched.framework.status import Status
from kubesched.runtime.framework import Framework
from kubesched.testing import make_pod


class SlowGate:
    """An async PreEnqueue that answers only when ``release`` is set (never, unless a test does)."""

    name = "SlowGate"
    started: asyncio.Event
    release: asyncio.Event
    cancelled: list[str]

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    async def pre_enqueue(self, pod: Any) -> Status | None:
        SlowGate.started.set()
        try:
            await SlowGate.release.wait()
        except asyncio.CancelledError:
            SlowGate.cancelled.append(pod.name)
            raise
        return None


def slow_queue() -> SchedulingQueue:
    SlowGate.started, SlowGate.release, SlowGate.cancelled = asyncio.Event(), asyncio.Event(), []
    fw = Framework(profile(preEnqueue=["SlowGate"]), registry_with(SlowGate))
    return SchedulingQueue({"default-scheduler": fw})


def gate_tasks() -> list[asyncio.Task[Any]]:
    return [t for t in asyncio.all_tasks() if t.get_name().startswith("pre-enqueue ")]


async def test_a_gate_stuck_in_a_slow_pre_enqueue_is_cancelled_and_awaited_at_close() -> None:
    q = slow_queue()
    q.add(make_pod("stuck").info())
    await asyncio.wait_for(SlowGate.started.wait(), 1)
    (task,) = gate_tasks()
    assert task.get_name() == "pre-enqueue default/stuck"
    assert q.counts()["gated"] == 1  # held in the pool while its gate has not answered

    await asyncio.wait_for(q.aclose(), 1)

    assert task.cancelled()
    assert SlowGate.cancelled == ["stuck"]
    assert gate_tasks() == []
    assert await q.pop() is None


async def test_close_alone_cancels_the_gates_and_starts_no_more() -> None:
    q = slow_queue()
    q.add(make_pod("first").info())
    await asyncio.wait_for(SlowGate.started.wait(), 1)
    q.close()
    q.add(make_pod("after-close").info())  # gated in the pool; its check is never started
    await asyncio.sleep(0)
    assert SlowGate.cancelled == ["first"]
    assert gate_tasks() == []
    assert q.counts()["gated"] == 2


async def test_a_gate_that_answers_before_close_places_its_pod() -> None:
    q = slow_queue()
    q.add(make_pod("quick").info())
    await asyncio.wait_for(SlowGate.started.wait(), 1)
    SlowGate.release.set()
    while gate_tasks():
        await asyncio.sleep(0)
    assert q.counts()["gated"] == 0
    popped = q.pop_nowait()
    assert popped is not None and popped.pod_info.name == "quick"
    await q.aclose()
    assert SlowGate.cancelled == []
