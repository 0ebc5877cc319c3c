"""client-go's retry.OnError as kubesched.cluster.retry.on_error: how many calls, which failures
are tried again, and the bound in time (on looptime's fake clock)."""

from __future__ import annotations

import asyncio
import random

import pytest

from kubesched.cluster.base import ClusterError, Conflict, Invalid, NotFound
from kubesched.cluster.retry import DEFAULT_BACKOFF, DEFAULT_RETRY, Backoff, on_error, retriable


class Flaky:
    """Fails with ``errors`` in turn, then answers "ok"; counts the calls."""

    def __init__(self, *errors: Exception) -> None:
        self.errors = list(errors)
        self.calls = 0

    async def __call__(self) -> str:
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return "ok"


def test_the_default_backoffs_are_client_gos() -> None:
    rng = random.Random(0)
    assert list(Backoff(4, 0.010, 5.0, 0.0).waits(rng)) == pytest.approx([0.010, 0.050, 0.250])
    waits = list(DEFAULT_BACKOFF.waits(rng))
    assert len(waits) == 3 and all(base <= w <= base * 1.1 for w, base in zip(waits, (0.010, 0.050, 0.250)))
    assert len(list(DEFAULT_RETRY.waits(rng))) == 4


@pytest.mark.parametrize(
    ("error", "again"),
    [
        (ClusterError("Internal error occurred", 500), True),
        (ClusterError("the server is currently unable to handle the request", 503), True),
        (ClusterError("GET /x: timed out", 504), True),
        (Conflict("the object has been modified"), True),
        (NotFound('pods "p" not found'), False),
        (Invalid("spec: Invalid value"), False),
        (ClusterError("forbidden", 403), False),
        (ClusterError("Too many requests", 429), False),
        (RuntimeError("a bug"), False),
    ],
    ids=["500", "503", "504-timeout", "409", "404", "422", "403", "429-without-retry-after", "bug"],
)
async def test_which_failures_are_tried_again(error: Exception, again: bool) -> None:
    assert retriable(error) is again
    call = Flaky(error)
    if again:
        assert await on_error(call) == "ok"
        assert call.calls == 2
    else:
        with pytest.raises(type(error)):
            await on_error(call)
        assert call.calls == 1


async def test_the_last_failure_is_raised_after_the_last_step() -> None:
    call = Flaky(*(ClusterError(f"failure {i}", 503) for i in range(1, 10)))
    with pytest.raises(ClusterError, match="failure 4"):
        await on_error(call)
    assert call.calls == DEFAULT_BACKOFF.steps


@pytest.mark.looptime
async def test_a_write_that_hangs_ends_at_the_deadline() -> None:
    async def hangs() -> None:
        await asyncio.sleep(3600)

    loop = asyncio.get_running_loop()
    t0 = loop.time()
    with pytest.raises(ClusterError, match="gave up after 60s") as err:
        await on_error(hangs, deadline=60)
    assert err.value.code == 504
    assert loop.time() - t0 == pytest.approx(60)
