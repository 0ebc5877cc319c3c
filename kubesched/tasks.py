"""One owner for asyncio tasks that have no enclosing scope.

Where a scope exists (one coroutine waits for all of its children), use ``asyncio.TaskGroup``.
Where tasks outlive the call that starts them (binding cycles, PreEnqueue gates, informers,
lease renewals, plugins' background calls), a :class:`TaskSet` owns them: every task is named,
a task that dies of an exception is logged with its name (never silently dropped), and
:meth:`TaskSet.close` waits for what is running up to a grace period, then cancels the rest
and waits for them to finish, so nothing outlives its owner.

Like :mod:`kubesched.errors`, this module is the ground floor: it imports nothing of kubesched.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine, Iterator
from typing import Any, TypeVar

__all__ = ["TaskSet"]

T = TypeVar("T")

log = logging.getLogger("kubesched.tasks")


class TaskSet:
    """The tasks of one owner (``owner`` names it in logs), each named, crashes logged."""

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
