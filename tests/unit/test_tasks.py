"""The task owner: named tasks, crashes logged, close waits out the grace then cancels."""

from __future__ import annotations

import asyncio
import logging

import pytest

from kubesched.tasks import TaskSet


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
