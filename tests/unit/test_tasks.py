"""The task owner: named tasks, crashes logged, close waits out the grace then cancels, a scope
ends its tasks; and the one race of a stop against work, another event or a timeout."""

from __future__ import annotations

import asyncio
import logging

import pytest

from kubesched.tasks import TaskSet, stop_or


async def test_a_crash_is_logged_with_the_task_name(caplog: pytest.LogCaptureFixture) -> None:
    tasks = TaskSet("owner-x")

    async def boom() -> None:
        raise ValueError("bad")

    with caplog.at_level(logging.ERROR, logger="kubesched.tasks"):
        tasks.spawn(boom(), name="boomer")
        await tasks.wait()
    assert len(tasks) == 0
    assert "owner-x: task boomer failed" in caplog.text
    assert "ValueError: bad" in caplog.text


async def test_close_lets_quick_tasks_finish_and_cancels_the_rest() -> None:
    tasks = TaskSet("owner")
    finished: list[str] = []
    cancelled: list[str] = []

    async def work(name: str, seconds: float) -> None:
        try:
            await asyncio.sleep(seconds)
            finished.append(name)
        except asyncio.CancelledError:
            cancelled.append(name)
            raise

    quick = tasks.spawn(work("quick", 0.01), name="quick")
    slow = tasks.spawn(work("slow", 60), name="slow")
    await tasks.close(grace=0.5)
    assert finished == ["quick"] and cancelled == ["slow"]
    assert quick.done() and slow.cancelled()
    assert len(tasks) == 0


async def test_a_closed_owner_refuses_new_tasks() -> None:
    tasks = TaskSet("owner")
    await tasks.close()

    async def nothing() -> None:
        return None

    with pytest.raises(RuntimeError, match="owner: cannot start 'late'"):
        tasks.spawn(nothing(), name="late")


async def test_leaving_the_scope_cancels_and_awaits_what_still_runs() -> None:
    ended: list[str] = []

    async def forever(name: str) -> None:
        try:
            await asyncio.Event().wait()
        finally:
            ended.append(name)

    async with TaskSet("scope") as tasks:
        a = tasks.spawn(forever("a"), name="a")
        b = tasks.spawn(forever("b"), name="b")
        await asyncio.sleep(0)
    assert sorted(ended) == ["a", "b"] and a.cancelled() and b.cancelled()
    assert len(tasks) == 0
    with pytest.raises(RuntimeError, match="scope: cannot start 'late'"):
        tasks.spawn(forever("late"), name="late")


async def test_leaving_the_scope_by_an_error_cancels_too_and_the_error_goes_on() -> None:
    async def forever() -> None:
        await asyncio.Event().wait()

    with pytest.raises(ValueError, match="body"):
        async with TaskSet("scope") as tasks:
            task = tasks.spawn(forever(), name="forever")
            await asyncio.sleep(0)
            raise ValueError("body")
    assert task.cancelled()


async def test_a_task_that_failed_in_the_scope_is_logged_by_name(caplog: pytest.LogCaptureFixture) -> None:
    async def boom() -> None:
        raise KeyError("gone")

    with caplog.at_level(logging.ERROR, logger="kubesched.tasks"):
        async with TaskSet("scope") as tasks:
            tasks.spawn(boom(), name="boomer")
            await asyncio.sleep(0)
    assert "scope: task boomer failed" in caplog.text and "KeyError: 'gone'" in caplog.text


# --- stop_or ---------------------------------------------------------------------------------


async def test_a_stop_cancels_the_work_and_waits_for_its_end() -> None:
    stop = asyncio.Event()
    ended: list[str] = []

    async def work() -> None:
        try:
            await asyncio.Event().wait()
        finally:
            await asyncio.sleep(0)  # its cleanup takes a turn of the loop: still awaited
            ended.append("work")

    asyncio.get_running_loop().call_later(0.01, stop.set)
    assert await stop_or(stop, work(), name="work") is True
    assert ended == ["work"]


async def test_work_that_ends_first_returns_false_and_the_stop_waiter_goes() -> None:
    stop = asyncio.Event()
    before = len(asyncio.all_tasks())

    async def work() -> int:
        await asyncio.sleep(0)
        return 7

    assert await stop_or(stop, work(), name="work") is False
    assert len(asyncio.all_tasks()) == before


async def test_the_work_s_error_is_raised_not_logged(caplog: pytest.LogCaptureFixture) -> None:
    async def work() -> None:
        raise ValueError("no cluster")

    with caplog.at_level(logging.ERROR), pytest.raises(ValueError, match="no cluster"):
        await stop_or(asyncio.Event(), work(), name="work")
    assert "no cluster" not in caplog.text


async def test_a_stop_already_set_does_not_start_the_work() -> None:
    stop = asyncio.Event()
    stop.set()
    started: list[str] = []

    async def work() -> None:
        started.append("work")

    assert await stop_or(stop, work(), name="work") is True
    assert started == []


async def test_a_timeout_without_work_is_a_sleep_a_stop_cuts_short() -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    assert await stop_or(stop, timeout=0.02) is False
    assert loop.time() - t0 >= 0.015
    loop.call_later(0.01, stop.set)
    t0 = loop.time()
    assert await stop_or(stop, timeout=30) is True
    assert loop.time() - t0 < 5


async def test_any_of_several_stops_ends_the_wait_and_another_event_races_as_work() -> None:
    stop, lost, other = asyncio.Event(), asyncio.Event(), asyncio.Event()
    asyncio.get_running_loop().call_later(0.01, lost.set)
    assert await stop_or((stop, lost), other.wait(), name="other") is True
    assert not stop.is_set()
    asyncio.get_running_loop().call_later(0.01, other.set)
    assert await stop_or(stop, other.wait(), name="other") is False


async def test_cancelling_the_caller_cancels_the_work_and_leaves_nothing_running() -> None:
    before = len(asyncio.all_tasks())
    cancelled: list[str] = []

    async def work() -> None:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.append("work")
            raise

    caller = asyncio.get_running_loop().create_task(stop_or(asyncio.Event(), work(), name="work"))
    await asyncio.sleep(0.01)
    caller.cancel()
    with pytest.raises(asyncio.CancelledError):
        await caller
    assert cancelled == ["work"]
    assert len(asyncio.all_tasks()) == before
