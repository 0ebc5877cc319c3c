"""The tests' one polling helper: it returns what it waited for, and a timeout says what was
awaited and what was last seen."""

from __future__ import annotations

import asyncio
import itertools

import pytest
from polling import eventually, eventually_sync


async def test_returns_the_first_accepted_value_of_a_plain_or_async_condition() -> None:
    counter = itertools.count()
    assert await eventually(lambda: next(counter) >= 3 and "done", "three polls") == "done"

    async def later() -> int:
        await asyncio.sleep(0)
        return next(counter)

    assert await eventually(later, "an even count", until=lambda n: n % 2 == 0) % 2 == 0


async def test_a_timeout_names_what_was_awaited_and_the_last_value() -> None:
    with pytest.raises(AssertionError, match=r"timed out after 0.05 s waiting for the answer; last seen: 41"):
        await eventually(lambda: 41, "the answer", until=lambda n: n == 42, timeout=0.05)


async def test_ignored_exceptions_count_as_not_yet_and_others_propagate() -> None:
    calls = itertools.count()

    def flaky() -> str:
        if next(calls) < 2:
            raise ConnectionError("refused")
        return "up"

    assert await eventually(flaky, "the server", ignoring=(ConnectionError,)) == "up"

    def down() -> str:
        raise ConnectionError("refused")

    with pytest.raises(AssertionError, match=r"last seen: ConnectionError\('refused'\)"):
        await eventually(down, "the server", ignoring=(ConnectionError,), timeout=0.02)
    empty: dict[str, int] = {}
    with pytest.raises(KeyError):
        await eventually(lambda: empty["missing"], "a key")


def test_the_blocking_form_polls_between_real_sleeps() -> None:
    counter = itertools.count()
    assert eventually_sync(lambda: next(counter) == 2, "two polls", interval=0.001)
    # Without a description, the message quotes the condition's source.
    with pytest.raises(AssertionError, match=r"waiting for .*lambda: \[\]"):
        eventually_sync(lambda: [], timeout=0.01, interval=0.001)
