"""``PUT /api/v1/reset`` with a scheduler: the cluster is reset while no scheduler runs. A
scheduler that still ran saw the deletions and the objects made again in any order (each kind is
a watch of its own) and once placed the start scenario's pod, made again, on a node the reset was
removing — the pod stayed bound to a node that no longer existed."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import kubesched.server.app as app
from kubesched.sim.serve import SchedulerSupervisor


class Runs:
    """Stands in for ``kubesched run`` (the supervisor's collaborator): records whether a
    scheduler is running and how many have started."""

    def __init__(self) -> None:
        self.running = False
        self.started = 0
        self.up = asyncio.Event()

    async def __call__(self, cfg: Any, options: Any, stop: asyncio.Event, signals: bool = True) -> int:
        self.running, self.started = True, self.started + 1
        self.up.set()
        await stop.wait()
        await asyncio.sleep(0.01)  # stopping takes a while: binding cycles finish
        self.running = False
        self.up.clear()
        return 0


@pytest.fixture
def runs(monkeypatch: pytest.MonkeyPatch) -> Runs:
    r = Runs()
    monkeypatch.setattr(app, "run", r)
    return r


async def test_the_reset_runs_after_the_scheduler_stopped_and_before_the_next_starts(runs: Runs) -> None:
    stop = asyncio.Event()
    sup = SchedulerSupervisor("start", None, stop)
    task = asyncio.create_task(sup.run())
    await asyncio.wait_for(runs.up.wait(), 5)
    seen: list[tuple[bool, int]] = []
    await asyncio.wait_for(sup.apply(None, lambda: seen.append((runs.running, runs.started))), 5)
    assert seen == [(False, 1)]  # called once, between the first scheduler and the second
    await asyncio.wait_for(runs.up.wait(), 5)
    assert runs.started == 2 and sup.cfg == "start"
    stop.set()
    assert await asyncio.wait_for(task, 5) == 0


async def test_what_the_reset_raises_reaches_its_caller_and_the_scheduler_starts_again(runs: Runs) -> None:
    stop = asyncio.Event()
    sup = SchedulerSupervisor("start", None, stop)
    task = asyncio.create_task(sup.run())
    await asyncio.wait_for(runs.up.wait(), 5)

    def broken() -> None:
        raise ValueError("store refused")

    with pytest.raises(ValueError, match="store refused"):
        await asyncio.wait_for(sup.apply("other", broken), 5)
    await asyncio.wait_for(runs.up.wait(), 5)
    assert runs.started == 2 and sup.cfg == "other"
    stop.set()
    await asyncio.wait_for(task, 5)


async def test_with_no_scheduler_running_the_reset_is_done_at_once(runs: Runs) -> None:
    sup = SchedulerSupervisor("start", None, asyncio.Event())
    done: list[int] = []
    await asyncio.wait_for(sup.apply(None, lambda: done.append(1)), 1)
    assert done == [1] and runs.started == 0


async def test_a_reset_asked_while_the_scheduler_ends_for_good_is_still_done(runs: Runs) -> None:
    stop = asyncio.Event()
    sup = SchedulerSupervisor("start", None, stop)
    task = asyncio.create_task(sup.run())
    await asyncio.wait_for(runs.up.wait(), 5)
    stop.set()  # the server stops: the supervisor will not start another scheduler
    done: list[int] = []
    await asyncio.wait_for(sup.apply(None, lambda: done.append(1)), 5)
    assert done == [1]
    await asyncio.wait_for(task, 5)
    assert runs.started == 1
