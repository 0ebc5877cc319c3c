"""Property: what allocated claims hold, kept up to date from the claims the listers say changed
(HeldClaims), is what adding up every claim gives — the informer's claims, those PreBind wrote
(assumed) and those in flight counted in place of the informer's copy — after any sequence of
claims made, allocated, changed, deleted and made again under their names, with the journal of
changes cut short now and then (the claims are then all looked at again)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.plugins.dynamicresources.allocator_types import AllocatedState
from kubesched.plugins.dynamicresources.held_claims import HeldClaims
from kubesched.runtime import objects
from kubesched.scheduler.listers import ObjectCache
from kubesched.testing.partial_profile import ObjectListers

NAMES = ["a", "b", "c", "d"]
DEVICES = ["x", "y", "z"]


@st.composite
def claims(draw: Any) -> dict[str, Any]:
    name = draw(st.sampled_from(NAMES))
    claim: dict[str, Any] = {
        "kind": "ResourceClaim",
        "metadata": {
            "name": name,
            "namespace": draw(st.sampled_from(["ns", "other"])),
            "uid": f"{name}-{draw(st.integers(0, 1))}",
        },
    }
    if draw(st.booleans()):
        results = []
        for dev in draw(st.lists(st.sampled_from(DEVICES), max_size=2, unique=True)):
            r: dict[str, Any] = {"driver": "d", "pool": draw(st.sampled_from(["p", "q"])), "device": dev}
            if draw(st.booleans()):
                r["shareID"] = "s"
                r["consumedCapacity"] = {"memory": draw(st.sampled_from(["1", "2Gi"]))}
            results.append(r)
        claim["status"] = {"allocation": {"devices": {"results": results}}}
    return claim


steps = st.lists(
    st.tuples(
        st.sampled_from(["put", "put", "remove"]),
        claims(),
        st.lists(claims(), max_size=2),  # assumed
        st.lists(claims(), max_size=2),  # in flight
    ),
    max_size=20,
)


def made_anew(listed: list[Any], assumed: list[tuple[str, Any]], in_flight: list[Any]) -> AllocatedState:
    seen = {c["metadata"]["uid"] for c in in_flight}
    counted = list(in_flight)
    for uid, claim in assumed:
        if uid not in seen:
            seen.add(uid)
            counted.append(claim)
    counted += [c for c in listed if c["metadata"]["uid"] not in seen]
    return AllocatedState.from_claims(counted)


@settings(max_examples=300, deadline=None)
@given(steps, st.booleans())
def test_the_state_kept_from_the_changes_is_the_state_made_anew(sequence: Any, short: bool) -> None:
    cache = ObjectCache()
    kept, plain = HeldClaims(), HeldClaims()
    with pytest.MonkeyPatch.context() as mp:
        if short:
            mp.setattr(objects, "_JOURNAL_MIN", 1)
        for op, claim, assumed, in_flight in sequence:
            if op == "put":
                cache.put("ResourceClaim", claim)
            else:
                cache.remove("ResourceClaim", claim)
            listed = cache.list("ResourceClaim")
            pairs = [(c["metadata"]["uid"], c) for c in assumed]
            want = made_anew(listed, pairs, in_flight)
            for held, listers in ((kept, cache), (plain, ObjectListers(listed))):
                got = held.state(listers, pairs, in_flight, True)
                assert (got.devices, got.shared, got.consumed) == (want.devices, want.shared, want.consumed)


def test_the_listers_journal_names_what_changed_since_a_point() -> None:
    cache = ObjectCache()
    start, keys = cache.changes("ResourceClaim", None)
    assert keys is None  # no point yet: look at every object
    cache.put("ResourceClaim", {"metadata": {"name": "a", "namespace": "ns"}})
    cache.remove("ResourceClaim", {"metadata": {"name": "b", "namespace": "ns"}})
    now, keys = cache.changes("ResourceClaim", start)
    assert keys == ["ns/a", "ns/b"]
    assert cache.changes("ResourceClaim", now) == (now, [])
