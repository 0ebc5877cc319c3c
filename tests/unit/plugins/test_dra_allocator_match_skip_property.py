"""Property: the search passes over a pool none of whose devices can join a ``matchAttribute``
constraint that holds a device already (each would be refused one by one) — and that changes
no answer: the same devices, and the same error where a selector fails on a device."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.plugins.dynamicresources import search
from kubesched.plugins.dynamicresources.allocator import AllocationError
from tests.unit.plugins.dra_allocator_cases import (
    ALL_NODES,
    CLASS_A,
    DRIVER_A,
    Case,
    allocator_for,
    attrs,
    claim,
    device,
    klass,
    match,
    node,
    request,
    sel,
    slice_,
)

NUMA = f"{DRIVER_A}/numa"


@st.composite
def cases(draw: Any) -> Case:
    slices = []
    for p in range(draw(st.integers(1, 5))):
        devices = []
        for d in range(draw(st.integers(1, 4))):
            kind = draw(st.sampled_from(["int", "int", "int", "none", "string", "bool"]))
            value = draw(st.integers(0, 2))
            a = {
                "int": attrs(numa=value),
                "none": {},
                "string": attrs(numa=str(value)),
                "bool": attrs(numa=bool(value)),
            }[kind]
            devices.append(device(f"d{p}-{d}", attributes=a))
        slices.append(slice_(f"slice-{p}", ALL_NODES, f"pool-{p}", DRIVER_A, *devices))
    cls = klass(CLASS_A, DRIVER_A)
    if draw(st.booleans()):
        # Fails on a device without the attribute: an error when the search reaches one.
        cls["spec"]["selectors"].append(sel(f'device.attributes["{DRIVER_A}"].numa >= 0'))
    requests = [request(f"req-{r}", CLASS_A, draw(st.integers(1, 3))) for r in range(draw(st.integers(1, 2)))]
    constraints = [match(NUMA)] if draw(st.booleans()) else [match(NUMA, "req-0")]
    claims = [claim("claim-0", *requests, constraints=constraints)]
    return Case(claims=claims, classes=[cls], slices=slices)


def answer(case: Case) -> Any:
    try:
        got = allocator_for(case).allocate(*node())
    except AllocationError as exc:
        return ("error", str(exc))
    return None if got is None else [[(r["pool"], r["device"]) for r in res["devices"]["results"]] for res in got]


@settings(max_examples=300, deadline=None)
@given(cases())
def test_passing_over_pools_that_cannot_match_changes_no_answer(case: Case) -> None:
    skipping = answer(case)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(search, "none_can_match", lambda pool, fixed: False)
        visiting = answer(case)
    assert skipping == visiting
