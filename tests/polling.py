"""One way for a test to wait: poll a condition until it holds, or fail saying what was awaited.

``eventually`` polls on the running event loop (its clock, so a fake ``looptime`` clock works
too); ``eventually_sync`` polls from plain code, between real sleeps, for tests that drive a
separate process. Both return the first value of ``cond()`` that ``until`` accepts (by default,
the first truthy one), so a test can wait for a value and use it. On timeout they raise
``AssertionError`` naming what was awaited, the timeout, and the last value (or the last
ignored exception) ``cond()`` gave.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, overload

T = TypeVar("T")


def _describe(cond: Callable[[], Any], what: str | None) -> str:
    if what is not None:
        return what
    try:
        return inspect.getsource(cond).strip()
    except (OSError, TypeError):
        return repr(cond)


def _timed_out(cond: Callable[[], Any], what: str | None, timeout: float, last: Any) -> AssertionError:
    return AssertionError(f"timed out after {timeout:g} s waiting for {_describe(cond, what)}; last seen: {last!r}")


@overload
async def eventually(
    cond: Callable[[], Awaitable[T]],
    what: str | None = ...,
    *,
    timeout: float = ...,
    interval: float = ...,
    until: Callable[[T], object] = ...,
    ignoring: tuple[type[BaseException], ...] = ...,
) -> T: ...


@overload
async def eventually(
    cond: Callable[[], T],
    what: str | None = ...,
    *,
    timeout: float = ...,
    interval: float = ...,
    until: Callable[[T], object] = ...,
    ignoring: tuple[type[BaseException], ...] = ...,
) -> T: ...


async def eventually(
    cond: Callable[[], Any],
    what: str | None = None,
    *,
    timeout: float = 5.0,
    interval: float = 0.01,
    until: Callable[[Any], object] = bool,
    ignoring: tuple[type[BaseException], ...] = (),
) -> Any:
    """Poll ``cond()`` (plain or async) every ``interval`` seconds of the loop's clock until
    ``until`` accepts its value, and return that value. An exception of a type in ``ignoring``
    counts as "not yet"; any other propagates. Fails after ``timeout`` seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    last: Any = None
    while True:
        try:
            value = cond()
            if inspect.isawaitable(value):
                value = await value
        except ignoring as exc:
            last = exc
        else:
            if until(value):
                return value
            last = value
        if loop.time() > deadline:
            raise _timed_out(cond, what, timeout, last)
        await asyncio.sleep(interval)


def eventually_sync(
    cond: Callable[[], T],
    what: str | None = None,
    *,
    timeout: float = 5.0,
    interval: float = 0.1,
    until: Callable[[T], object] = bool,
    ignoring: tuple[type[BaseException], ...] = (),
) -> T:
    """``eventually`` for code outside an event loop: sleeps ``interval`` seconds of wall time
    between calls of ``cond()``."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while True:
        try:
            value = cond()
        except ignoring as exc:
            last = exc
        else:
            if until(value):
                return value
            last = value
        if time.monotonic() > deadline:
            raise _timed_out(cond, what, timeout, last)
        time.sleep(interval)
