"""One owner for every asyncio task kubesched starts.

A :class:`TaskSet` owns tasks: every task is named, and a task that dies of an exception is
logged with its owner's and its own name when it dies (never silently dropped, whoever awaits
it or not). It is used in one of two ways:

* as an async context manager, where one call's scope bounds its tasks (``kubesched run``'s
  scheduling loop, ``sim serve``'s background work, the scheduling loop's periodic flush, an
  import's followers): leaving the ``async with`` block, normally or by an exception, refuses
  new tasks, cancels those still running and waits until each has ended, so none outlives the
  scope and none is left pending when the loop closes;
* held by an object whose tasks outlive the call that starts them (binding cycles, PreEnqueue
  gates, informers, lease renewals, the API server's watch dispatcher, plugins' background
  calls): the object's stop or close calls :meth:`TaskSet.close` or :meth:`TaskSet.cancel`.

:func:`stop_or` is the one race between a stop signal and something else (work, another event,
a timeout) that several loops need: wait for whichever comes first, and cancel the rest.

Nothing in kubesched calls ``asyncio.create_task`` or ``ensure_future`` outside this module
(tests/unit/test_house_tasks.py checks). Like :mod:`kubesched.errors`, this module is the
ground floor: it imports nothing of kubesched.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine, Iterable, Iterator
from types import TracebackType
from typing import Any, TypeVar

__all__ = ["TaskSet", "stop_or"]

T = TypeVar("T")

log = logging.getLogger("kubesched.tasks")


class TaskSet:
    """The tasks of one owner (``owner`` names it in logs), each named, crashes logged; as an
    ``async with`` scope, its tasks end when the scope is left."""

    def __init__(self, owner: str, logger: logging.Logger | None = None) -> None:
        self.owner = owner
        self._log = logger or log
        self._tasks: set[asyncio.Task[Any]] = set()
        self._closed = False

    def spawn(self, coro: Coroutine[Any, Any, T], *, name: str) -> asyncio.Task[T]:
        """Start ``coro`` as a task named ``name``, owned here until it finishes."""
        if self._closed:
            coro.close()
            raise RuntimeError(f"{self.owner}: cannot start {name!r}, the owner is closed")
        task = asyncio.get_running_loop().create_task(coro, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._done)
        return task

    def _done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if task.cancelled():
            return
        exc = task.exception()
        if exc is not None:
            self._log.error("%s: task %s failed", self.owner, task.get_name(), exc_info=exc)

    async def __aenter__(self) -> TaskSet:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        """Leaving the scope: refuse new tasks, cancel the running ones and wait until they have
        all ended (their failures were logged as they happened)."""
        await self.close()

    def __len__(self) -> int:
        return len(self._tasks)

    def __iter__(self) -> Iterator[asyncio.Task[Any]]:
        return iter(list(self._tasks))

    async def wait(self) -> None:
        """Wait until every task owned now, and any they start meanwhile, has finished."""
        while self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

    async def close(self, grace: float = 0.0) -> None:
        """Refuse new tasks, give the running ones ``grace`` seconds to finish, cancel the
        rest and wait until they have all ended."""
        self._closed = True
        if self._tasks and grace > 0:
            await asyncio.wait(list(self._tasks), timeout=grace)
        await self.cancel()

    async def cancel(self) -> None:
        """Cancel every task owned now and wait for each to end (the set stays open)."""
        while self._tasks:
            pending = list(self._tasks)
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)


async def stop_or(
    stop: asyncio.Event | Iterable[asyncio.Event],
    work: Coroutine[Any, Any, Any] | None = None,
    *,
    timeout: float | None = None,
    name: str = "work",
) -> bool:
    """Wait until ``stop`` is set (or any of several events, when given an iterable of them),
    ``work`` has ended, or ``timeout`` seconds have passed, whichever comes first.

    ``work`` runs as a task named ``name``; when it is not what ended the wait it is cancelled,
    and the call returns only once it has ended. If ``work`` ends with an exception, the
    exception is raised here (and not logged besides: raising is its report). Nothing is left
    running when the call returns, is cancelled or raises.

    Returns whether a stop event is set at the end: the caller needs no other test, whatever
    came first. An event already set returns at once, without starting ``work``. Without
    ``work`` and with a ``timeout`` it is a sleep cut short by a stop; with another event's
    ``wait()`` as ``work``, a race of two events."""
    events = (stop,) if isinstance(stop, asyncio.Event) else tuple(stop)
    if any(e.is_set() for e in events):
        if work is not None:
            work.close()  # never started: no "was never awaited" warning
        return True
    failed: list[Exception] = []

    async def run(coro: Coroutine[Any, Any, Any]) -> None:
        try:
            await coro
        except Exception as exc:  # noqa: BLE001 - raised to the caller below
            failed.append(exc)

    async with TaskSet(f"stop or {name}") as tasks:
        racers: list[asyncio.Task[Any]] = [tasks.spawn(e.wait(), name=f"{name}: wait for a stop") for e in events]
        if work is not None:
            racers.append(tasks.spawn(run(work), name=name))
        await asyncio.wait(racers, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    if failed:
        raise failed[0]
    return any(e.is_set() for e in events)
