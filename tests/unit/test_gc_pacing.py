"""GcPacer: survivors frozen while busy, everything collected when idle or after long load."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from kubesched.scheduler.gc_pacing import GcPacer


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


class Node:
    """An object that can sit in a reference cycle."""

    def __init__(self) -> None:
        self.other: Node | None = None


def cycle() -> weakref.ref[Node]:
    """A reference cycle nobody refers to: only a full collection frees it."""
    a, b = Node(), Node()
    a.other, b.other = b, a
    return weakref.ref(a)


@pytest.fixture(autouse=True)
def thawed() -> Iterator[None]:
    gc.collect()
    yield
    gc.unfreeze()  # leave the test process's collector as it was


def test_busy_ticks_freeze_survivors_so_collections_pass_them_by() -> None:
    clock = Clock()
    pacer = GcPacer(idle_every=60, busy_every=600, clock=clock, floor=0)
    garbage = cycle()
    clock.t = 1
    pacer.tick(idle=False)
    assert gc.get_freeze_count() > 0
    gc.collect()
    assert garbage() is not None  # frozen: even a full collection does not look at it
    assert pacer.full_collections == 0


def test_an_idle_tick_collects_everything_but_not_more_often_than_asked() -> None:
    clock = Clock()
    pacer = GcPacer(idle_every=60, busy_every=600, clock=clock, floor=0)
    garbage = cycle()
    clock.t = 1
    pacer.tick(idle=False)
    clock.t = 30
    pacer.tick(idle=True)  # idle, but a full collection ran less than a minute ago (start)
    assert garbage() is not None and pacer.full_collections == 0
    clock.t = 61
    pacer.tick(idle=True)
    assert garbage() is None
    assert pacer.full_collections == 1 and pacer.freed >= 2
    assert gc.get_freeze_count() > 0  # what is left is frozen again


def test_uninterrupted_load_still_collects_every_busy_interval() -> None:
    clock = Clock()
    pacer = GcPacer(idle_every=60, busy_every=600, clock=clock, floor=0)
    garbage = cycle()
    for t in range(1, 600):
        clock.t = t
        pacer.tick(idle=False)
    assert garbage() is not None
    clock.t = 600
    pacer.tick(idle=False)
    assert garbage() is None and pacer.full_collections == 1


def test_no_full_collection_until_the_heap_has_grown() -> None:
    """A full collection walks every object and holds the loop meanwhile: after one, the next
    waits until the objects it would walk have doubled, however idle the scheduler is."""
    clock = Clock()
    pacer = GcPacer(idle_every=60, busy_every=600, clock=clock, floor=0)
    clock.t = 61
    pacer.tick(idle=True)
    assert pacer.full_collections == 1
    live = gc.get_freeze_count()
    assert pacer.goal == 2 * live
    garbage = cycle()
    for t in range(122, 2000, 61):
        clock.t = t
        pacer.tick(idle=True)
    assert pacer.full_collections == 1 and garbage() is not None  # the heap has not doubled
    grown = [[] for _ in range(live + 1000)]  # a heap twice as large
    clock.t = 2100
    pacer.tick(idle=True)
    assert pacer.full_collections == 2 and garbage() is None
    assert pacer.goal >= 2 * len(grown)


def test_below_the_floor_nothing_is_walked() -> None:
    clock = Clock()
    pacer = GcPacer(idle_every=60, busy_every=600, clock=clock, floor=10**9)
    garbage = cycle()
    clock.t = 10_000
    pacer.tick(idle=True)
    pacer.tick(idle=False)
    assert pacer.full_collections == 0 and garbage() is not None


async def test_sim_serve_paces_the_collector_by_whether_requests_came() -> None:
    """sim serve without a scheduler of its own ticks a pacer once a period: busy while requests
    come, idle once they stop; nothing after it is told to stop."""
    import asyncio

    from kubesched.sim.serve import _pace_collector

    class Server:
        requests = 0

    class Pacer:
        def __init__(self) -> None:
            self.ticks: list[bool] = []

        def tick(self, idle: bool) -> None:
            self.ticks.append(idle)

    server, pacer, stop = Server(), Pacer(), asyncio.Event()
    task = asyncio.create_task(_pace_collector(server, stop, every=0.02, pacer=pacer))  # type: ignore[arg-type]
    for _ in range(8):
        server.requests += 1
        await asyncio.sleep(0.005)
    await asyncio.sleep(0.1)
    stop.set()
    await asyncio.wait_for(task, 1)
    ticks = len(pacer.ticks)
    await asyncio.sleep(0.05)
    assert len(pacer.ticks) == ticks
    assert False in pacer.ticks and pacer.ticks[-1] is True
    assert pacer.ticks.index(True) > pacer.ticks.index(False)
