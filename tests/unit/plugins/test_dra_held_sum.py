"""Property: the running sum of what allocated claims hold (HeldSum), after any sequence of
claims added, changed and taken away, is what adding up the claims there now gives — devices
used whole, devices shared, and the capacity consumed per device and name; and a pool's version
in two snapshots is the same only where what its devices hold is the same (what the search
keeps across attempts is kept under it)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.plugins.dynamicresources.allocator_types import AllocatedState
from kubesched.plugins.dynamicresources.held_sum import HeldSum

DEVICES = [f"device-{i}" for i in range(4)]
POOLS = ["p", "q"]


def holdings(state: AllocatedState, pool: str) -> Any:
    """What the devices of one pool hold in ``state``."""
    mine = {dev for dev in (*state.devices, *state.shared, *state.consumed) if dev[1] == pool}
    return (
        frozenset(mine & state.devices),
        frozenset(mine & state.shared),
        frozenset((dev, tuple(sorted(state.consumed[dev].items()))) for dev in mine if dev in state.consumed),
    )


@st.composite
def claim(draw: Any) -> dict[str, Any]:
    results = []
    for _ in range(draw(st.integers(0, 3))):
        pool = draw(st.sampled_from(POOLS))
        r: dict[str, Any] = {"driver": "d", "pool": pool, "device": draw(st.sampled_from(DEVICES))}
        if draw(st.booleans()):
            r["shareID"] = "s"
            names = draw(st.lists(st.sampled_from(["memory", "cores"]), max_size=2, unique=True))
            if names:
                r["consumedCapacity"] = {n: draw(st.sampled_from(["1", "2Gi", "500m", "0"])) for n in names}
        if draw(st.integers(0, 5)) == 0:
            r["adminAccess"] = True
        results.append(r)
    return {"status": {"allocation": {"devices": {"results": results}}}}


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.one_of(st.none(), claim())), max_size=25))
def test_the_sum_kept_up_to_date_is_the_sum_made_anew(steps: list[tuple[int, Any]]) -> None:
    total = HeldSum()
    claims: dict[int, dict[str, Any]] = {}
    states: dict[int, AllocatedState] = {}
    seen: dict[tuple[str, Any], Any] = {}
    for key, changed in steps:
        if changed is None:
            claims.pop(key, None)
            states.pop(key, None)
        else:
            claims[key] = changed
            states[key] = AllocatedState.from_claims([changed])
        total.update(dict(states))
        got, want = total.snapshot(), AllocatedState.from_claims(list(claims.values()))
        assert got.devices == want.devices
        assert got.shared == want.shared
        assert got.consumed == want.consumed
        assert got.versions is not None
        for pool in POOLS:
            have = holdings(got, pool)
            version = got.versions.get(("d", pool))
            if version is None:
                assert have == (frozenset(), frozenset(), frozenset())
            assert seen.setdefault((pool, version), have) == have


def test_a_snapshot_does_not_change_with_later_updates() -> None:
    share = {"driver": "d", "pool": "p", "device": "x", "shareID": "s", "consumedCapacity": {"memory": "1Gi"}}
    one = AllocatedState.from_claims([{"status": {"allocation": {"devices": {"results": [share]}}}}])
    total = HeldSum()
    total.update({1: one})
    before = total.snapshot()
    total.update(
        {1: one, 2: AllocatedState.from_claims([{"status": {"allocation": {"devices": {"results": [share]}}}}])}
    )
    assert before.consumed == {("d", "p", "x"): {"memory": 2**30}}
    assert total.snapshot().consumed == {("d", "p", "x"): {"memory": 2**31}}
