"""Property: searching once per view (the nodes that see the same slices, and nodes whose own
slices no request can use) gives every node the answer a search on that node alone gives — the
same devices, the same node selector, the same error."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.plugins.dynamicresources.allocator import AllocationError
from tests.unit.plugins.dra_allocator_cases import (
    ALL_NODES,
    CLASS_A,
    CLASS_B,
    DRIVER_A,
    DRIVER_B,
    REGION1,
    REGION2,
    REGION_KEY,
    Case,
    all_request,
    allocator_for,
    claim,
    device,
    klass,
    label_selector,
    node,
    request,
    slice_,
)

NODES = [(f"node-{i}", REGION1 if i % 2 else REGION2) for i in range(4)]
CLASSES = [klass(CLASS_A, DRIVER_A), klass(CLASS_B, DRIVER_B)]


@st.composite
def slices(draw: Any) -> list[dict[str, Any]]:
    out = []
    for i in range(draw(st.integers(0, 3))):  # cluster-wide
        reach = draw(st.sampled_from([ALL_NODES, label_selector(REGION_KEY, REGION1)]))
        driver = draw(st.sampled_from([DRIVER_A, DRIVER_B]))
        devices = [device(f"d{i}-{k}") for k in range(draw(st.integers(0, 3)))]
        out.append(slice_(f"shared-{i}", reach, f"pool-s{i}", driver, *devices))
    for name, _ in NODES:
        for j in range(draw(st.integers(0, 2))):  # the node's own
            driver = draw(st.sampled_from([DRIVER_A, DRIVER_B]))
            # Own pools sort before or after the shared ones; some are still being updated.
            pool = {
                "name": f"{draw(st.sampled_from(['a', 'z']))}-{name}-{j}",
                "resourceSliceCount": draw(st.sampled_from([1, 1, 2])),
                "generation": 1,
            }
            devices = [device(f"{name}-{j}-{k}") for k in range(draw(st.integers(0, 2)))]
            out.append(slice_(f"own-{name}-{j}", name, pool, driver, *devices))
    return out


@st.composite
def claims(draw: Any) -> list[dict[str, Any]]:
    out = []
    for c in range(draw(st.integers(1, 2))):
        requests = []
        for r in range(draw(st.integers(1, 2))):
            cls = draw(st.sampled_from([CLASS_A, CLASS_B]))
            if draw(st.integers(0, 4)) == 0:
                requests.append(all_request(f"req-{r}", cls))
            else:
                requests.append(request(f"req-{r}", cls, draw(st.integers(1, 2))))
        out.append(claim(f"claim-{c}", *requests))
    return out


def answer(allocator: Any, name: str, region: str) -> Any:
    try:
        got = allocator.allocate(*node(name, region))
    except AllocationError as exc:
        return ("error", type(exc).__name__, str(exc))
    if got is None:
        return None
    return [([(r["pool"], r["device"]) for r in res["devices"]["results"]], res.get("nodeSelector")) for res in got]


@settings(max_examples=200, deadline=None)
@given(slices(), claims(), st.permutations(range(len(NODES))))
def test_every_node_gets_the_answer_of_a_search_on_it_alone(
    the_slices: list[dict[str, Any]], the_claims: list[dict[str, Any]], order: list[int]
) -> None:
    case = Case(claims=the_claims, classes=CLASSES, slices=the_slices)
    together = allocator_for(case)
    for i in order:
        name, region = NODES[i]
        assert answer(together, name, region) == answer(alone(case), name, region), name


def alone(case: Case) -> Any:
    """An allocator that searches every node on its own, as when a slice has per-device node
    selection: no view is shared."""
    allocator = allocator_for(case)
    allocator.views.per_node = True
    return allocator
