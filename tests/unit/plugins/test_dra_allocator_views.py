"""The allocator searches once for the nodes that see the same slices (NodeViews): they get the
same devices, each its own node selector and share IDs; a node that sees other slices (its own,
other labels, per-device node selection) is searched on its own."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.plugins.dynamicresources.allocator import AllocationError, Allocator, PoolCache
from tests.unit.plugins.dra_allocator_cases import (
    ALL_NODES,
    CLAIM0,
    CLASS_A,
    CLASS_B,
    CONSUMABLE,
    DEVICE1,
    DRIVER_A,
    DRIVER_B,
    NODE1,
    NODE2,
    PARTITIONABLE,
    PER_DEVICE,
    POOL1,
    POOL2,
    REGION1,
    REGION2,
    REGION_KEY,
    REQ0,
    REQ1,
    SLICE1,
    SLICE2,
    Case,
    all_request,
    allocator_for,
    attrs,
    claim,
    claim_with_request,
    device,
    evaluate_selector,
    klass,
    label_selector,
    node,
    request,
    sel,
    slice_,
)

A = klass(CLASS_A, DRIVER_A)


def _devices(results: list[dict] | None) -> list[list[str]]:
    assert results is not None
    return [[r["device"] for r in res["devices"]["results"]] for res in results]


def test_nodes_of_one_view_share_one_search_and_get_their_own_node_selector() -> None:
    shared = slice_(SLICE1, label_selector(REGION_KEY, REGION1), POOL1, DRIVER_A, device(DEVICE1, binds_to_node=True))
    allocator = allocator_for(Case(claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)], classes=[A], slices=[shared]))
    first = allocator.allocate(*node(NODE1))
    searched = allocator.invocations
    second = allocator.allocate(*node(NODE2))
    assert allocator.invocations == searched  # the second node's answer is the first's search
    assert _devices(first) == _devices(second) == [[DEVICE1]]
    assert first is not None and second is not None
    for got, name in ((first, NODE1), (second, NODE2)):
        term = got[0]["nodeSelector"]["nodeSelectorTerms"][0]
        assert term["matchFields"][0]["values"] == [name]


def test_the_other_nodes_of_a_view_get_their_results_when_asked() -> None:
    """Filter learns a node fits from the view's search; the node's own results (its node
    selector) are made when Reserve asks, in any order, each for its node — the node searched
    too."""
    shared = slice_(SLICE1, label_selector(REGION_KEY, REGION1), POOL1, DRIVER_A, device(DEVICE1, binds_to_node=True))
    allocator = allocator_for(Case(claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)], classes=[A], slices=[shared]))
    later = {name: allocator.allocate_later(*node(name)) for name in (NODE1, "node-3", NODE2, "node-4")}
    assert allocator.allocate_later(*node("node-5", REGION2)) is None
    for name in (NODE2, "node-4", NODE1, "node-3"):
        make = later[name]
        assert callable(make)
        got = make()
        assert _devices(got) == [[DEVICE1]]
        assert got[0]["nodeSelector"]["nodeSelectorTerms"][0]["matchFields"][0]["values"] == [name]


def test_other_labels_are_another_view() -> None:
    shared = slice_(SLICE1, label_selector(REGION_KEY, REGION1), POOL1, DRIVER_A, device(DEVICE1))
    allocator = allocator_for(Case(claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)], classes=[A], slices=[shared]))
    assert _devices(allocator.allocate(*node(NODE1))) == [[DEVICE1]]
    assert allocator.allocate(*node(NODE2, REGION2)) is None


def test_a_node_with_slices_of_its_own_is_searched_on_its_own() -> None:
    shared = slice_(SLICE1, ALL_NODES, POOL1, DRIVER_A)
    own = slice_(SLICE2, NODE2, POOL2, DRIVER_A, device("own-device"))
    allocator = allocator_for(
        Case(claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)], classes=[A], slices=[shared, own])
    )
    assert allocator.allocate(*node(NODE1)) is None
    assert _devices(allocator.allocate(*node(NODE2))) == [["own-device"]]


def test_per_device_node_selection_makes_each_view_its_own() -> None:
    per_device = slice_(
        SLICE1, PER_DEVICE, POOL1, DRIVER_A, device(DEVICE1, node_name=NODE2), device("elsewhere", all_nodes=True)
    )
    allocator = allocator_for(
        Case(
            claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)], classes=[A], slices=[per_device], features=PARTITIONABLE
        )
    )
    assert _devices(allocator.allocate(*node(NODE1))) == [["elsewhere"]]
    assert _devices(allocator.allocate(*node(NODE2))) == [[DEVICE1]]


def test_the_error_of_one_node_is_every_node_of_the_view() -> None:
    shared = slice_(SLICE1, ALL_NODES, POOL1, DRIVER_A, device(DEVICE1))
    broken = claim(CLAIM0, request(REQ0, CLASS_A, 1, sel("device.no_such_field ==")))
    allocator = allocator_for(Case(claims=[broken], classes=[A], slices=[shared]))
    for name in (NODE1, NODE2):
        with pytest.raises(AllocationError, match="CEL"):
            allocator.allocate(*node(name))


def test_each_node_of_a_view_gets_new_share_ids() -> None:
    shareable = device(DEVICE1, {"memory": "8Gi"}, multi=True)
    shared = slice_(SLICE1, ALL_NODES, POOL1, DRIVER_A, shareable)
    allocator = allocator_for(
        Case(
            claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)],
            classes=[klass(CLASS_A, DRIVER_A, multi=True)],
            slices=[shared],
            features=CONSUMABLE,
        )
    )
    first, second = allocator.allocate(*node(NODE1)), allocator.allocate(*node(NODE2))
    assert _devices(first) == _devices(second) == [[DEVICE1]]
    assert first is not None and second is not None
    ids = [got[0]["devices"]["results"][0]["shareID"] for got in (first, second)]
    assert ids[0] and ids[1] and ids[0] != ids[1]


def _allocator(slices: list[dict], cache: PoolCache, **kw: Any) -> Allocator:
    c = Case(claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)], classes=[A], **kw)
    return Allocator(c.claims, set(), {CLASS_A: A}, slices, evaluate_selector, features=c.features, pool_cache=cache)


def test_views_kept_across_cycles_follow_a_nodes_labels() -> None:
    # A pool with a duplicate device name (invalid) that reaches the node in region 1 only.
    in_region1 = device(DEVICE1, node_selector=label_selector(REGION_KEY, REGION1))
    per_device = slice_(SLICE1, PER_DEVICE, POOL1, DRIVER_A, in_region1, in_region1)
    cache, slices = PoolCache(), [per_device]
    with pytest.raises(AllocationError, match="invalid resource pools"):
        _allocator(slices, cache, features=PARTITIONABLE).allocate(*node(NODE1))
    assert _allocator(slices, cache, features=PARTITIONABLE).allocate(*node(NODE1, REGION2)) is None


def test_views_kept_across_cycles_follow_the_slices() -> None:
    cache = PoolCache()
    first = [slice_(SLICE1, label_selector(REGION_KEY, REGION1), POOL1, DRIVER_A, device(DEVICE1))]
    assert _devices(_allocator(first, cache).allocate(*node(NODE1))) == [[DEVICE1]]
    second = [slice_(SLICE1, label_selector(REGION_KEY, REGION2), POOL1, DRIVER_A, device(DEVICE1))]
    assert _allocator(second, cache).allocate(*node(NODE1)) is None
    third = [slice_(SLICE1, label_selector(REGION_KEY, REGION1), POOL1, DRIVER_A, device("other"))]
    assert _devices(_allocator(third, cache).allocate(*node(NODE1))) == [["other"]]


# --- a node whose own slices no request can use shares the view of nodes without any ----------
B = klass(CLASS_B, DRIVER_B)


def test_a_node_whose_own_devices_no_request_chooses_shares_the_search() -> None:
    shared = slice_(SLICE1, ALL_NODES, POOL1, DRIVER_A, device(DEVICE1))
    others = slice_(SLICE2, NODE2, POOL2, DRIVER_B, device("own-device"))  # class A chooses driver-a only
    allocator = allocator_for(
        Case(claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)], classes=[A, B], slices=[shared, others])
    )
    first = allocator.allocate(*node(NODE1))
    searched = allocator.invocations
    second = allocator.allocate(*node(NODE2))
    assert allocator.invocations == searched
    assert _devices(first) == _devices(second) == [[DEVICE1]]


def test_own_devices_a_request_chooses_keep_the_node_on_its_own() -> None:
    shared = slice_(SLICE1, ALL_NODES, POOL1, DRIVER_A, device(DEVICE1))
    own = slice_(SLICE2, NODE2, POOL2, DRIVER_B, device("own-device"))
    claims = [claim(CLAIM0, request(REQ0, CLASS_A), request(REQ1, CLASS_B))]
    allocator = allocator_for(Case(claims=claims, classes=[A, B], slices=[shared, own]))
    assert allocator.allocate(*node(NODE1)) is None  # no driver-b device reaches node 1
    assert _devices(allocator.allocate(*node(NODE2))) == [[DEVICE1, "own-device"]]


def test_an_own_pool_being_updated_keeps_the_node_on_its_own() -> None:
    shared = slice_(SLICE1, ALL_NODES, POOL1, DRIVER_A, device(DEVICE1))
    updating = slice_(SLICE2, NODE2, {"name": POOL2, "resourceSliceCount": 2, "generation": 1}, DRIVER_B, device("x"))
    claims = [claim(CLAIM0, all_request(REQ0, CLASS_A))]
    allocator = allocator_for(Case(claims=claims, classes=[A, B], slices=[shared, updating]))
    assert _devices(allocator.allocate(*node(NODE1))) == [[DEVICE1]]
    with pytest.raises(AllocationError, match="currently being updated"):
        allocator.allocate(*node(NODE2))


def test_a_selector_failing_on_an_own_device_is_that_nodes_error() -> None:
    # The own pool comes first in the search (pool-0), and the class's selector fails on its device.
    shared = slice_(SLICE1, ALL_NODES, POOL1, DRIVER_A, device(DEVICE1, attributes=attrs(numa=1)))
    own = slice_(SLICE2, NODE2, "pool-0", DRIVER_A, device("no-numa"))
    picky = klass(CLASS_A, DRIVER_A)
    picky["spec"]["selectors"] = [sel(f'device.attributes["{DRIVER_A}"].numa == 1')]
    case = Case(claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)], classes=[picky], slices=[shared, own])
    with pytest.raises(AllocationError, match="CEL runtime error"):
        allocator_for(case).allocate(*node(NODE2))  # node 2 alone
    allocator = allocator_for(case)
    assert _devices(allocator.allocate(*node(NODE1))) == [[DEVICE1]]
    with pytest.raises(AllocationError, match="CEL runtime error"):
        allocator.allocate(*node(NODE2))
