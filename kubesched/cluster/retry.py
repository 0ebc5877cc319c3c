"""Writes tried again when the cluster failed for a reason that may pass, as client-go does.

:func:`on_error` is client-go's ``retry.OnError``: call, and while the failure is one
``retriable`` accepts, wait a backoff step and call again, at most ``backoff.steps`` calls; the
last failure is raised. :data:`DEFAULT_BACKOFF` and :data:`DEFAULT_RETRY` are client-go's
``retry.DefaultBackoff`` and ``retry.DefaultRetry``; :func:`retriable` is kube-scheduler's
``util.Retriable``, with which its ``PatchPodStatus`` writes a pod's condition and nominated
node. A 429 or 5xx that carries ``Retry-After`` is sent again by the transport itself (as
client-go's REST client does) before it ever reaches :func:`on_error`.

Unlike client-go, every call here is also bounded in time (``deadline``): a side write that
waits on a server which keeps answering ``Retry-After`` must end, too.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import TypeVar

from kubesched.cluster.base import ClusterError

__all__ = [
    "DEFAULT_BACKOFF",
    "DEFAULT_RETRY",
    "RETRIABLE_CODES",
    "SIDE_WRITE_DEADLINE",
    "Backoff",
    "on_error",
    "retriable",
]

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Backoff:
    """client-go's ``wait.Backoff``: ``steps`` calls at most; the first wait is ``duration``
    seconds, each next one ``factor`` times longer, each lengthened by up to ``jitter`` of itself."""

    steps: int
    duration: float
    factor: float
    jitter: float

    def waits(self, rng: random.Random) -> Iterator[float]:
        """The ``steps - 1`` waits between the calls."""
        duration = self.duration
        for _ in range(self.steps - 1):
            yield duration + rng.random() * self.jitter * duration if self.jitter > 0 else duration
            duration *= self.factor


#: client-go's ``retry.DefaultRetry``: 5 calls, 10 ms apart (a conflict among a few writers).
DEFAULT_RETRY = Backoff(steps=5, duration=0.010, factor=1.0, jitter=0.1)
#: client-go's ``retry.DefaultBackoff``: 4 calls, 10, 50 and 250 ms apart (kube-scheduler's
#: ``PatchPodStatus``).
DEFAULT_BACKOFF = Backoff(steps=4, duration=0.010, factor=5.0, jitter=0.1)

#: The longest a side write may take, retries and the transport's Retry-After waits included.
SIDE_WRITE_DEADLINE = 60.0

#: kube-scheduler's ``util.Retriable``: 500 InternalError, 503 ServiceUnavailable (also the
#: transport's code for a connection refused or reset), 409 Conflict; and 504, the transport's
#: code for a request that timed out (the writes retried here are idempotent patches).
RETRIABLE_CODES = frozenset({409, 500, 503, 504})


def retriable(exc: BaseException) -> bool:
    """Whether a failed write may succeed if sent again (see :data:`RETRIABLE_CODES`)."""
    return isinstance(exc, ClusterError) and exc.code in RETRIABLE_CODES


async def on_error(
    call: Callable[[], Awaitable[T]],
    *,
    backoff: Backoff = DEFAULT_BACKOFF,
    retry_if: Callable[[BaseException], bool] = retriable,
    deadline: float | None = SIDE_WRITE_DEADLINE,
    rng: random.Random | None = None,
) -> T:
    """``call()``, called again after each failure ``retry_if`` accepts, up to
    ``backoff.steps`` calls and ``deadline`` seconds in all; the last failure is raised (the
    deadline reached raises :class:`ClusterError` 504 naming it and the last failure)."""
    draws = rng or random.Random()
    last: list[BaseException] = []

    async def attempts() -> T:
        waits = backoff.waits(draws)
        while True:
            try:
                return await call()
            except Exception as exc:
                if not retry_if(exc):
                    raise
                wait = next(waits, None)
                if wait is None:
                    raise
                last[:] = [exc]
            await asyncio.sleep(wait)

    if deadline is None:
        return await attempts()
    try:
        async with asyncio.timeout(deadline):
            return await attempts()
    except TimeoutError as exc:
        after = f" (last: {last[0]})" if last else ""
        raise ClusterError(f"gave up after {deadline:g}s{after}", 504) from exc
