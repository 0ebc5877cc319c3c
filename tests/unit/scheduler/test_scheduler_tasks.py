"""Every task the scheduler starts has an owner: binding cycles and side tasks are named, a
crash is logged, and stop(grace) waits out the grace, then cancels what still runs."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
from conftest import make_harness, profile, registry_with

from kubesched.framework.status import Status
from kubesched.testing import make_node, make_pod

#: Set while a stuck plugin waits; cancelled waits are recorded.
STUCK: dict[str, Any] = {}


def _init(self: Any, args: Any, handle: Any) -> None:
    self.handle = handle


async def _stuck(self: Any, *args: Any) -> Status | None:
    STUCK["entered"] = True
    try:
        await asyncio.Event().wait()
    except asyncio.CancelledError:
        STUCK["cancelled"] = True
        raise
    return None


SlowPreBind = type("SlowPreBind", (), {"name": "SlowPreBind", "__init__": _init, "pre_bind": _stuck})
# A Permit that waits (10 minutes); the binding cycle then stays at WaitOnPermit.
WaitingPermit = type(
    "WaitingPermit",
    (),
    {"name": "WaitingPermit", "__init__": _init, "permit": lambda self, s, p, n: (Status.wait(), 600)},
)


@pytest.fixture(autouse=True)
def _reset() -> None:
    STUCK.clear()


def _scheduler_tasks() -> list[asyncio.Task[Any]]:
    """Tasks of this loop other than the test's own."""
    me = asyncio.current_task()
    return [t for t in asyncio.all_tasks() if t is not me and not t.done()]


@pytest.mark.looptime
@pytest.mark.parametrize(
    "point,plugin",
    [("preBind", SlowPreBind), ("permit", WaitingPermit)],
    ids=["stuck-in-prebind", "waiting-at-permit"],
)
async def test_stop_cancels_a_binding_cycle_that_outlives_the_grace(point: str, plugin: type) -> None:
    h = await make_harness(
        [profile(**{point: [plugin.name]})], registry_with(plugin), objs=[make_node("n1"), make_pod("p")]
    )
    sched = h.scheduler
    await h.cluster.wait_delivered()
    await sched.schedule_one(sched.queue.pop_nowait())
    await asyncio.sleep(0.1)
    assert sched.in_flight() == 1
    binding = next(iter(sched.ctx.bindings))
    assert binding.get_name() == "bind default/p"

    loop = asyncio.get_running_loop()
    t0 = loop.time()
    await sched.stop(grace=5)
    assert loop.time() - t0 == pytest.approx(5, abs=0.5)  # the grace, not the plugin's ten minutes
    assert binding.cancelled()
    assert sched.in_flight() == 0
    if point == "preBind":
        assert STUCK == {"entered": True, "cancelled": True}
    await h.cluster.stop()
    assert _scheduler_tasks() == []
    assert h.node_of("p") is None


@pytest.mark.looptime
async def test_stop_lets_binding_cycles_finish_within_the_grace() -> None:
    async def slow(self: Any, *args: Any) -> None:
        await asyncio.sleep(2)

    Slow = type("Slow", (), {"name": "Slow", "__init__": _init, "pre_bind": slow})
    h = await make_harness([profile(preBind=["Slow"])], registry_with(Slow), objs=[make_node("n1"), make_pod("p")])
    sched = h.scheduler
    await h.cluster.wait_delivered()
    await sched.schedule_one(sched.queue.pop_nowait())
    binding = next(iter(sched.ctx.bindings))
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    await sched.stop(grace=30)
    assert loop.time() - t0 == pytest.approx(2, abs=0.5)
    assert binding.done() and not binding.cancelled()
    await h.cluster.wait_delivered()
    assert h.node_of("p") == "n1"
    await h.cluster.stop()


async def test_a_crash_in_a_plugins_background_work_is_logged_with_its_name(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def crash() -> None:
        raise RuntimeError("background work broke")

    def post_bind(self: Any, state: Any, pod: Any, node: str) -> None:
        self.handle.run_in_background(crash())

    Crashing = type("Crashing", (), {"name": "Crashing", "__init__": _init, "post_bind": post_bind})
    h = await make_harness(
        [profile(postBind=["Crashing"])], registry_with(Crashing), objs=[make_node("n1"), make_pod("p")]
    )
    with caplog.at_level(logging.ERROR, logger="kubesched.scheduler"):
        assert await h.run_all() == 1
        await h.scheduler.wait_for_bindings()
    assert h.node_of("p") == "n1"
    assert "default-scheduler: test_a_crash_in_a_plugins_background_work_is_logged_with_its_name.<locals>.crash" in (
        caplog.text
    )
    assert "RuntimeError: background work broke" in caplog.text
    await h.scheduler.stop(grace=1)
    await h.cluster.stop()


async def test_a_crash_in_a_binding_cycle_is_logged_and_the_task_is_dropped(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    h = await make_harness([profile()], objs=[make_node("n1"), make_pod("p")])
    sched = h.scheduler

    async def broken(b: Any) -> None:
        raise RuntimeError("binding cycle broke")

    monkeypatch.setattr(sched.binding, "run", broken)
    await h.cluster.wait_delivered()
    with caplog.at_level(logging.ERROR, logger="kubesched.scheduler"):
        await sched.schedule_one(sched.queue.pop_nowait())
        await sched.wait_for_bindings()
        await asyncio.sleep(0)
    assert "binding cycles: task bind default/p failed" in caplog.text
    assert sched.in_flight() == 0
    await sched.stop(grace=1)
    await h.cluster.stop()


async def test_the_queue_flusher_is_a_named_task_that_ends_with_the_loop() -> None:
    h = await make_harness([profile()], objs=[make_node("n1")])
    sched = h.scheduler
    loop_task = asyncio.create_task(sched.run(start=False))
    await asyncio.sleep(0.05)
    assert [t.get_name() for t in _scheduler_tasks() if t is not loop_task] == ["queue-flush"]
    await sched.stop(grace=1)
    await loop_task
    await h.cluster.stop()
    assert _scheduler_tasks() == []
