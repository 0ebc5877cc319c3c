"""Property: the search that walks only the devices a request's selectors choose (with what it
asks of their capacity worked out once, kept across allocations while no slice changes) gives
the answers of the search that visits every device: the same devices, the same error where a
selector fails on a device or a capacity request is out of range — on the first allocation and
on later ones that reuse the kept walks with other devices in use, with the state as PreFilter
keeps it (pool versions, under which each pool's open devices and counters left are kept) or
added up anew."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.plugins.dynamicresources import search
from kubesched.plugins.dynamicresources.allocator import AllocationError, Allocator
from kubesched.plugins.dynamicresources.allocator_types import AllocatedState
from kubesched.plugins.dynamicresources.capacity import amount_of
from kubesched.plugins.dynamicresources.held_sum import HeldSum
from kubesched.plugins.dynamicresources.pools import PoolCache
from kubesched.plugins.dynamicresources.walks import Walk
from tests.unit.plugins.dra_allocator_cases import (
    ALL_NODES,
    CAPACITY0,
    CLASS_A,
    CLASS_B,
    DRIVER_A,
    PER_DEVICE,
    attrs,
    claim,
    consumes,
    counter_set,
    device,
    evaluate_selector,
    features,
    klass,
    match,
    node,
    pool,
    request,
    sel,
    slice_,
)

NUMA = f"{DRIVER_A}/numa"


@st.composite
def devices(draw: Any, pool: int, counters: bool) -> list[Any]:
    out = []
    for d in range(draw(st.integers(1, 4))):
        kw: dict[str, Any] = {}
        if counters and draw(st.integers(0, 3)) > 0:
            kw["consumes"] = [consumes("cs", c1=str(draw(st.integers(1, 2))))]
        if draw(st.booleans()):
            kw["attributes"] = attrs(numa=draw(st.integers(0, 2)))
        if draw(st.integers(0, 3)) == 0:
            kw["binding"] = ["ready"]
        if draw(st.booleans()):
            kw["capacity"] = {CAPACITY0: str(draw(st.integers(1, 8)))}
            kw["multi"] = draw(st.booleans())
        if draw(st.integers(0, 4)) == 0:
            kw["all_nodes"] = True
        out.append(device(f"d{pool}-{d}", **kw))
    return out


@st.composite
def scenarios(draw: Any) -> dict[str, Any]:
    slices = []
    for p in range(draw(st.integers(2, 5))):  # one pool of a few devices has no walk
        where = PER_DEVICE if draw(st.integers(0, 5)) == 0 else ALL_NODES
        counters = draw(st.booleans())
        name = pool(f"pool-{p}", 2 if counters else 1)
        slices.append(slice_(f"slice-{p}", where, name, DRIVER_A, *draw(devices(p, counters))))
        if counters:  # partitionable devices: the pool's counters in a slice of their own
            sets = [counter_set("cs", c1=str(draw(st.integers(1, 3))))]
            slices.append(slice_(f"counters-{p}", ALL_NODES, name, DRIVER_A, counters=sets))
    a = klass(CLASS_A, DRIVER_A)
    if draw(st.booleans()):
        # Fails on a device without the attribute: an error where the search reaches one.
        a["spec"]["selectors"].append(sel(f'device.attributes["{DRIVER_A}"].numa >= 0'))
    b = klass(CLASS_B, DRIVER_A, multi=True)
    requests = []
    for r in range(draw(st.integers(1, 3))):
        cls = draw(st.sampled_from([CLASS_A, CLASS_B]))
        capacity = draw(st.sampled_from([None, None, "1", "3", "9"]))
        admin = True if draw(st.integers(0, 5)) == 0 else None
        requests.append(request(f"req-{r}", cls, draw(st.integers(1, 2)), admin=admin, capacity=capacity))
    constraints = [match(NUMA)] if draw(st.integers(0, 3)) == 0 else []
    every = [d["name"] for s in slices for d in s["spec"].get("devices") or ()]

    def states() -> tuple[set[Any], dict[Any, Any]]:
        ids = [(DRIVER_A, f"pool-{name.split('-')[0][1:]}", name) for name in every]
        allocated = {i for i in ids if draw(st.integers(0, 2)) == 0}
        consumed = {i: {CAPACITY0: str(draw(st.integers(1, 8)))} for i in ids if draw(st.integers(0, 3)) == 0}
        return allocated, consumed

    return {
        "slices": slices,
        "classes": {CLASS_A: a, CLASS_B: b},
        "claims": [claim("claim-0", *requests, constraints=constraints)],
        "features": features(
            consumable_capacity=draw(st.booleans()),
            binding_conditions=draw(st.booleans()),
            partitionable_devices=draw(st.integers(0, 3)) > 0,
        ),
        "states": [states() for _ in range(3)],
    }


def answers(s: dict[str, Any], kept: bool) -> list[Any]:
    """The answer for each state in turn, the walks (where made) kept between them; ``kept``:
    the state as PreFilter keeps it, else added up (no versions: nothing kept per pool)."""
    cache = PoolCache()
    out = []
    held = HeldSum()
    for allocated, consumed in s["states"]:
        state = AllocatedState(
            set(allocated), set(), {d: {k: amount_of(v).value for k, v in m.items()} for d, m in consumed.items()}
        )
        if kept:
            held.update({"claims": state})
            state = held.snapshot()
        allocator = Allocator(
            copy.deepcopy(s["claims"]),
            state.devices,
            s["classes"],
            s["slices"],  # the same objects: the walks of the first allocation are reused
            evaluate_selector,
            features=s["features"],
            pool_cache=cache,
            state=state,
        )
        try:
            got = allocator.allocate(*node())
        except AllocationError as exc:
            out.append(("error", str(exc)))
            continue
        out.append(
            None
            if got is None
            else [
                [(r["pool"], r["device"], r.get("consumedCapacity")) for r in res["devices"]["results"]] for res in got
            ]
        )
    return out


@settings(max_examples=300, deadline=None)
@given(scenarios())
def test_walking_the_chosen_devices_changes_no_answer(s: dict[str, Any]) -> None:
    walking = answers(s, kept=True)
    assert answers(s, kept=False) == walking
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(search, "walk_for", lambda *args: None)
        visiting = answers(s, kept=False)
    assert walking == visiting


def test_a_walk_is_made_and_kept_where_it_gives_the_same_answers() -> None:
    """The property above compares nothing if no walk is ever made: one is, for plain pools,
    the second time a request over the same slices asks (the first is answered device by
    device), and the next allocation finds it kept; a pool selecting per device has none, nor
    has a view of one pool with a few devices."""
    cache = PoolCache()
    slices = [
        slice_("slice-0", ALL_NODES, "pool-0", DRIVER_A, device("d0"), device("d1")),
        slice_("slice-1", ALL_NODES, "pool-1", DRIVER_A, device("d2")),
    ]
    classes = {CLASS_A: klass(CLASS_A, DRIVER_A)}

    def allocate(taken: set[Any], slices: Any = slices) -> Any:
        a = Allocator(
            [claim("claim-0", request("req-0", CLASS_A))], taken, classes, slices, evaluate_selector, pool_cache=cache
        )
        return a, a.allocate(*node())

    a, got = allocate(set())
    assert got is not None and got[0]["devices"]["results"][0]["device"] == "d0"
    assert not any(isinstance(w, Walk) for w in a.layout.walks.values())
    a, got = allocate(set())
    (walk,) = a.layout.walks.values()
    assert walk.groups is not None and [[c.id[2] for c, _ in g[2]] for g in walk.groups] == [["d0", "d1"], ["d2"]]
    a2, got = allocate({(DRIVER_A, "pool-0", "d0"), (DRIVER_A, "pool-0", "d1")})
    assert list(a2.layout.walks.values()) == [walk]
    assert got is not None and got[0]["devices"]["results"][0]["device"] == "d2"

    per_device = [*slices, slice_("slice-2", PER_DEVICE, "pool-2", DRIVER_A, device("d3", all_nodes=True))]
    allocate(set(), per_device)
    a3, got = allocate(set(), per_device)
    assert got is not None
    (walk,) = a3.layout.walks.values()
    assert walk.groups is None

    few = slices[:1]
    allocate(set(), few)
    a4, got = allocate(set(), few)
    assert got is not None and not a4.layout.walks
