"""The DRA allocator against upstream's allocator test table (allocatortesting, shared by the
stable, incubating and experimental allocators of kube-scheduler 1.37), transcribed case by case
with upstream's names; then our own cases for the 1.37 gates' defaults and DeviceTaintRules."""

from __future__ import annotations

import pytest
from dra_allocator_cases import (
    ALL_NODES,
    BINDING,
    BOOL_ATTRIBUTE,
    CAPACITY0,
    CLAIM0,
    CLAIM1,
    CLASS_A,
    CLASS_B,
    CONSUMABLE,
    COUNTER_SET1,
    COUNTER_SET2,
    DEVICE0,
    DEVICE1,
    DEVICE2,
    DEVICE3,
    DEVICE4,
    DRIVER_A,
    DRIVER_B,
    EARTH,
    INT_ATTRIBUTE,
    NODE1,
    NODE2,
    NON_EXISTENT_ATTRIBUTE,
    PARTITIONABLE,
    PER_DEVICE,
    PLANET_KEY,
    POOL1,
    POOL2,
    POOL3,
    POOL4,
    RANGE_POLICY,
    REGION1,
    REGION2,
    REGION_KEY,
    REQ0,
    REQ1,
    REQ2,
    REQ3,
    SLICE1,
    SLICE2,
    SLICE3,
    SLICE4,
    STRING_ATTRIBUTE,
    SUB0,
    SUB1,
    TAINT_NO_EXECUTE,
    TAINT_NO_SCHEDULE,
    TAINT_NONE,
    TAINTS,
    TOLERATION_NO_EXECUTE,
    TOLERATION_NO_SCHEDULE,
    TOLERATION_NO_SCHEDULE_KEY1,
    VERSION_ATTRIBUTE,
    Case,
    all_request,
    allocation,
    allocator_for,
    attrs,
    claim,
    claim_config,
    claim_with_request,
    class_config,
    consumes,
    counter_set,
    device,
    device_configuration,
    distinct,
    features,
    klass,
    label_selector,
    local,
    many_devices,
    match,
    node,
    one_device,
    pool,
    prioritized,
    request,
    result,
    same_allocations,
    sel,
    slice_,
    sub_request,
    valid_values_policy,
    with_tolerations,
)

from kubesched.plugins.dynamicresources.allocator import (
    ALLOCATION_RESULTS_MAX_SIZE,
    AllocationError,
    AllocationFailedOnNode,
)


def run_case(c: Case) -> None:
    allocator = allocator_for(c)
    name, labels = c.node
    if c.error is not None:
        with pytest.raises(AllocationError) as info:
            allocator.allocate(name, labels)
        assert c.error in str(info.value)
        assert isinstance(info.value, AllocationFailedOnNode) == c.node_error
        return
    got = allocator.allocate(name, labels)
    assert same_allocations(got, c.want), got
    if c.invocations is not None:
        assert allocator.invocations == c.invocations


A, B = klass(CLASS_A, DRIVER_A), klass(CLASS_B, DRIVER_B)
MEM = 'device.capacity["driver-a"].memory.compareTo(quantity("{}")) >= 0'


def _with_pool(s: dict, **changes: int) -> dict:
    s["spec"]["pool"].update(changes)
    return s


BASIC = {
    "empty": Case(),
    "simple": Case(
        claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)],
        classes=[A],
        slices=[one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        want=[allocation(local(NODE1), result(REQ0, DRIVER_A, POOL1, DEVICE1))],
    ),
    "other-node": Case(
        claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)],
        classes=[A],
        slices=[one_device(SLICE1, NODE1, POOL1, DRIVER_B), one_device(SLICE2, NODE2, POOL2, DRIVER_A)],
        node=node(NODE2, REGION2),
        want=[allocation(local(NODE2), result(REQ0, DRIVER_A, POOL2, DEVICE1))],
    ),
    "small-and-large": Case(
        claims=[
            claim(
                CLAIM0,
                request(REQ0, CLASS_A, 1, sel(MEM.format("1Gi"))),
                request(REQ1, CLASS_A, 1, sel(MEM.format("2Gi"))),
            )
        ],
        classes=[A],
        slices=[
            slice_(
                SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, {"memory": "1Gi"}), device(DEVICE2, {"memory": "2Gi"})
            )
        ],
        want=[allocation(local(NODE1), result(REQ0, DRIVER_A, POOL1, DEVICE1), result(REQ1, DRIVER_A, POOL1, DEVICE2))],
    ),
    "small-and-large-backtrack-requests": Case(
        claims=[
            claim(
                CLAIM0,
                request(REQ0, CLASS_A, 1, sel(MEM.format("1Gi"))),
                request(REQ1, CLASS_A, 1, sel(MEM.format("2Gi"))),
            )
        ],
        classes=[A],
        slices=[
            slice_(
                SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE2, {"memory": "2Gi"}), device(DEVICE1, {"memory": "1Gi"})
            )
        ],
        want=[allocation(local(NODE1), result(REQ0, DRIVER_A, POOL1, DEVICE1), result(REQ1, DRIVER_A, POOL1, DEVICE2))],
    ),
    "small-and-large-backtrack-claims": Case(
        claims=[
            claim(CLAIM0, request(REQ0, CLASS_A, 1, sel(MEM.format("1Gi")))),
            claim(CLAIM1, request(REQ1, CLASS_A, 1, sel(MEM.format("2Gi")))),
        ],
        classes=[A],
        slices=[
            slice_(
                SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE2, {"memory": "2Gi"}), device(DEVICE1, {"memory": "1Gi"})
            )
        ],
        want=[
            allocation(local(NODE1), result(REQ0, DRIVER_A, POOL1, DEVICE1)),
            allocation(local(NODE1), result(REQ1, DRIVER_A, POOL1, DEVICE2)),
        ],
    ),
    "devices-split-across-different-slices": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 2))],
        classes=[A],
        slices=[one_device(SLICE1, NODE1, POOL1, DRIVER_A), one_device(SLICE2, NODE1, POOL2, DRIVER_A)],
        want=[allocation(local(NODE1), result(REQ0, DRIVER_A, POOL1, DEVICE1), result(REQ0, DRIVER_A, POOL2, DEVICE1))],
    ),
    "obsolete-slice": Case(
        claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)],
        classes=[A],
        slices=[
            slice_("slice-1-obsolete", NODE1, pool(POOL1, 2), DRIVER_A, device(DEVICE1)),
            slice_("slice-1-obsolete", NODE1, pool(POOL1, 2, generation=2), DRIVER_A, device(DEVICE2)),
        ],
        want=None,
    ),
    "duplicate-slice": Case(
        claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)],
        classes=[A],
        slices=[
            _with_pool(one_device(SLICE1, NODE1, POOL1, DRIVER_A), resourceSliceCount=2),
            _with_pool(one_device(SLICE1 + "-2", NODE1, POOL1, DRIVER_A), resourceSliceCount=2),
        ],
        error="invalid resource pools were encountered",
        node_error=True,
    ),
    "no-slices": Case(claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)], classes=[A]),
    "not-enough-suitable-devices": Case(
        claims=[claim_with_request(CLAIM0, REQ0, CLASS_A), claim_with_request(CLAIM0, REQ1, CLASS_A)],
        classes=[A],
        slices=[one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
    ),
    "no-classes": Case(
        claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)],
        slices=[one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        error="could not retrieve device class class-a",
    ),
    "unknown-class": Case(
        claims=[claim_with_request(CLAIM0, REQ0, "unknown-class")],
        classes=[A],
        slices=[one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        error="could not retrieve device class unknown-class",
    ),
    "empty-class": Case(
        claims=[claim_with_request(CLAIM0, REQ0, "")],
        classes=[A],
        slices=[one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        error="claim claim-0, request req-0: missing device class name (unsupported request type?)",
    ),
    "no-claims-to-allocate": Case(classes=[A], slices=[one_device(SLICE1, NODE1, POOL1, DRIVER_A)]),
    "all-devices-single": Case(
        claims=[claim(CLAIM0, all_request(REQ0, CLASS_A))],
        classes=[A],
        slices=[one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        want=[allocation(local(NODE1), result(REQ0, DRIVER_A, POOL1, DEVICE1))],
    ),
    "all-devices-many": Case(
        claims=[claim(CLAIM0, all_request(REQ0, CLASS_A))],
        classes=[A],
        slices=[one_device(SLICE1, NODE1, POOL1, DRIVER_A), one_device(SLICE1, NODE1, POOL2, DRIVER_A)],
        want=[allocation(local(NODE1), result(REQ0, DRIVER_A, POOL1, DEVICE1), result(REQ0, DRIVER_A, POOL2, DEVICE1))],
    ),
    "all-devices-of-the-incomplete-pool": Case(
        claims=[claim(CLAIM0, all_request(REQ0, CLASS_A))],
        classes=[A],
        slices=[_with_pool(one_device(SLICE1, NODE1, POOL1, DRIVER_A), resourceSliceCount=2)],
        error="claim claim-0, request req-0: asks for all devices, but resource pool driver-a/pool-1 is currently being updated",
    ),
    "all-devices-plus-another": Case(
        claims=[claim(CLAIM0, all_request(REQ0, CLASS_A)), claim(CLAIM1, request(REQ0, CLASS_B, 1))],
        classes=[A, B],
        slices=[one_device(SLICE1, NODE1, POOL1, DRIVER_A), one_device(SLICE1, NODE1, POOL1, DRIVER_B)],
        want=[
            allocation(local(NODE1), result(REQ0, DRIVER_A, POOL1, DEVICE1)),
            allocation(local(NODE1), result(REQ0, DRIVER_B, POOL1, DEVICE1)),
        ],
    ),
    "all-devices-plus-another-reversed": Case(
        claims=[claim(CLAIM1, request(REQ0, CLASS_B, 1)), claim(CLAIM0, all_request(REQ0, CLASS_A))],
        classes=[A, B],
        slices=[one_device(SLICE1, NODE1, POOL1, DRIVER_A), one_device(SLICE1, NODE1, POOL1, DRIVER_B)],
        want=[
            allocation(local(NODE1), result(REQ0, DRIVER_B, POOL1, DEVICE1)),
            allocation(local(NODE1), result(REQ0, DRIVER_A, POOL1, DEVICE1)),
        ],
    ),
    "all-devices-many-plus-another": Case(
        claims=[claim(CLAIM0, all_request(REQ0, CLASS_A)), claim(CLAIM1, request(REQ0, CLASS_B, 1))],
        classes=[A, B],
        slices=[
            slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1), device(DEVICE2)),
            one_device(SLICE1, NODE1, POOL1, DRIVER_B),
        ],
        want=[
            allocation(local(NODE1), result(REQ0, DRIVER_A, POOL1, DEVICE1), result(REQ0, DRIVER_A, POOL1, DEVICE2)),
            allocation(local(NODE1), result(REQ0, DRIVER_B, POOL1, DEVICE1)),
        ],
    ),
    "all-devices-many-plus-another-reversed": Case(
        claims=[claim(CLAIM1, request(REQ0, CLASS_B, 1)), claim(CLAIM0, all_request(REQ0, CLASS_A))],
        classes=[A, B],
        slices=[
            slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1), device(DEVICE2)),
            one_device(SLICE1, NODE1, POOL1, DRIVER_B),
        ],
        want=[
            allocation(local(NODE1), result(REQ0, DRIVER_B, POOL1, DEVICE1)),
            allocation(local(NODE1), result(REQ0, DRIVER_A, POOL1, DEVICE1), result(REQ0, DRIVER_A, POOL1, DEVICE2)),
        ],
    ),
    "all-devices-no-solution": Case(
        claims=[claim(CLAIM1, request(REQ0, CLASS_A, 1)), claim(CLAIM0, all_request(REQ0, CLASS_A))],
        classes=[A],
        slices=[one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
    ),
    "all-devices-no-solution-reversed": Case(
        claims=[claim(CLAIM0, all_request(REQ0, CLASS_A)), claim(CLAIM1, request(REQ0, CLASS_A, 1))],
        classes=[A],
        slices=[one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
    ),
    "all-devices-slice-without-devices": Case(
        claims=[claim(CLAIM0, all_request(REQ0, CLASS_A))],
        classes=[A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A)],
    ),
    "all-devices-no-slices": Case(claims=[claim(CLAIM0, all_request(REQ0, CLASS_A))], classes=[A]),
    "all-devices-some-allocated": Case(
        claims=[claim(CLAIM0, all_request(REQ0, CLASS_A))],
        allocated=[(DRIVER_A, POOL1, DEVICE1)],
        classes=[A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1), device(DEVICE2))],
    ),
    "all-devices-some-allocated-admin-access": Case(
        claims=[claim(CLAIM0, all_request(REQ0, CLASS_A, admin=True))],
        allocated=[(DRIVER_A, POOL1, DEVICE1)],
        classes=[A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1), device(DEVICE2))],
        want=[
            allocation(
                local(NODE1), result(REQ0, DRIVER_A, POOL1, DEVICE1, True), result(REQ0, DRIVER_A, POOL1, DEVICE2, True)
            )
        ],
    ),
    "all-devices-some-allocating-admin-access": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1, admin=True), all_request(REQ1, CLASS_A, admin=True))],
        classes=[A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1), device(DEVICE2))],
    ),
    "count-devices-some-allocated-admin-access": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 2, admin=True))],
        allocated=[(DRIVER_A, POOL1, DEVICE1)],
        classes=[A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1), device(DEVICE2))],
        want=[
            allocation(
                local(NODE1), result(REQ0, DRIVER_A, POOL1, DEVICE1, True), result(REQ0, DRIVER_A, POOL1, DEVICE2, True)
            )
        ],
    ),
    "separate-claims-share-device-admin-access": Case(
        claims=[
            claim(CLAIM0, request(REQ0, CLASS_A, 1, admin=True)),
            claim(CLAIM1, request(REQ0, CLASS_A, 1, admin=True)),
        ],
        classes=[A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1), device(DEVICE2))],
        want=[
            allocation(local(NODE1), result(REQ0, DRIVER_A, POOL1, DEVICE1, True)),
            allocation(local(NODE1), result(REQ0, DRIVER_A, POOL1, DEVICE1, True)),
        ],
    ),
    "admin-access-claims-device-allocating-for-non-admin-access": Case(
        claims=[claim_with_request(CLAIM0, REQ0, CLASS_A), claim(CLAIM1, request(REQ0, CLASS_A, 1, admin=True))],
        classes=[A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1), device(DEVICE2))],
        want=[
            allocation(local(NODE1), result(REQ0, DRIVER_A, POOL1, DEVICE1)),
            allocation(local(NODE1), result(REQ0, DRIVER_A, POOL1, DEVICE1, True)),
        ],
    ),
    "all-devices-slice-without-devices-prioritized-list": Case(
        claims=[
            claim(CLAIM0, prioritized(REQ0, sub_request(SUB0, CLASS_A, 0, mode="All"), sub_request(SUB1, CLASS_B, 1)))
        ],
        classes=[A, B],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A), one_device(SLICE2, NODE1, POOL2, DRIVER_B)],
        want=[allocation(local(NODE1), result(f"{REQ0}/{SUB1}", DRIVER_B, POOL2, DEVICE1))],
    ),
    "all-devices-no-slices-prioritized-list": Case(
        claims=[
            claim(CLAIM0, prioritized(REQ0, sub_request(SUB0, CLASS_A, 0, mode="All"), sub_request(SUB1, CLASS_B, 1)))
        ],
        classes=[A, B],
        slices=[one_device(SLICE2, NODE1, POOL2, DRIVER_B)],
        want=[allocation(local(NODE1), result(f"{REQ0}/{SUB1}", DRIVER_B, POOL2, DEVICE1))],
    ),
    "all-devices-some-allocated-prioritized-list": Case(
        claims=[
            claim(CLAIM0, prioritized(REQ0, sub_request(SUB0, CLASS_A, 0, mode="All"), sub_request(SUB1, CLASS_B, 1)))
        ],
        allocated=[(DRIVER_A, POOL1, DEVICE1)],
        classes=[A, B],
        slices=[
            slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1), device(DEVICE2)),
            one_device(SLICE2, NODE1, POOL2, DRIVER_B),
        ],
        want=[allocation(local(NODE1), result(f"{REQ0}/{SUB1}", DRIVER_B, POOL2, DEVICE1))],
    ),
    "network-attached-device": Case(
        claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)],
        classes=[A],
        slices=[one_device(SLICE1, label_selector(REGION_KEY, REGION1), POOL1, DRIVER_A)],
        want=[allocation(label_selector(REGION_KEY, REGION1), result(REQ0, DRIVER_A, POOL1, DEVICE1))],
    ),
    "unsuccessful-allocation-network-attached-device": Case(
        claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)],
        classes=[A],
        slices=[one_device(SLICE1, label_selector(REGION_KEY, REGION1), POOL1, DRIVER_A)],
        node=node(NODE2, REGION2),
    ),
    "many-network-attached-devices": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 4))],
        classes=[A],
        slices=[
            one_device(SLICE1, label_selector(REGION_KEY, REGION1), POOL1, DRIVER_A),
            one_device(SLICE1, ALL_NODES, POOL2, DRIVER_A),
            one_device(SLICE1, label_selector(PLANET_KEY, EARTH), POOL3, DRIVER_A),
            one_device(SLICE1, local(NODE1), POOL4, DRIVER_A),
        ],
        want=[
            allocation(
                {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {"key": REGION_KEY, "operator": "In", "values": [REGION1]},
                                {"key": PLANET_KEY, "operator": "In", "values": [EARTH]},
                            ],
                            "matchFields": [{"key": "metadata.name", "operator": "In", "values": [NODE1]}],
                        }
                    ]
                },
                result(REQ0, DRIVER_A, POOL1, DEVICE1),
                result(REQ0, DRIVER_A, POOL2, DEVICE1),
                result(REQ0, DRIVER_A, POOL3, DEVICE1),
                result(REQ0, DRIVER_A, POOL4, DEVICE1),
            )
        ],
    ),
    "local-and-network-attached-devices": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 2))],
        classes=[A],
        slices=[
            one_device(SLICE1, label_selector(REGION_KEY, REGION1), POOL1, DRIVER_A),
            one_device(SLICE1, NODE1, POOL2, DRIVER_A),
        ],
        want=[allocation(local(NODE1), result(REQ0, DRIVER_A, POOL1, DEVICE1), result(REQ0, DRIVER_A, POOL2, DEVICE1))],
    ),
    "several-different-drivers": Case(
        claims=[claim_with_request(CLAIM0, REQ0, CLASS_A), claim_with_request(CLAIM0, REQ0, CLASS_B)],
        classes=[A, B],
        slices=[
            slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1), device(DEVICE2)),
            one_device(SLICE1, NODE1, POOL1, DRIVER_B),
        ],
        want=[
            allocation(local(NODE1), result(REQ0, DRIVER_A, POOL1, DEVICE1)),
            allocation(local(NODE1), result(REQ0, DRIVER_B, POOL1, DEVICE1)),
        ],
    ),
    "already-allocated-devices": Case(
        claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)],
        allocated=[(DRIVER_A, POOL1, DEVICE1), (DRIVER_A, POOL1, DEVICE2)],
        classes=[A],
        slices=[one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
    ),
    "admin-access-enabled": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1, admin=True))],
        allocated=[(DRIVER_A, POOL1, DEVICE1), (DRIVER_A, POOL1, DEVICE2)],
        classes=[A],
        slices=[one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        want=[allocation(local(NODE1), result(REQ0, DRIVER_A, POOL1, DEVICE1, True))],
    ),
}

FOUR = attrs(driverVersion=("version", "1.0.0"), numa=1, stringAttribute="stringAttributeValue", boolAttribute=True)


def _two(attribute: str, first: object, second: object) -> list[dict]:
    return [
        slice_(
            SLICE1,
            NODE1,
            POOL1,
            DRIVER_A,
            device(DEVICE1, None, attrs(**{attribute: first})),
            device(DEVICE2, None, attrs(**{attribute: second})),
        )
    ]


CONSTRAINTS = {
    "with-constraint": Case(
        claims=[
            claim(
                CLAIM0,
                request(REQ0, CLASS_A, 1),
                request(REQ1, CLASS_A, 1),
                constraints=[
                    match(INT_ATTRIBUTE),
                    match(VERSION_ATTRIBUTE),
                    match(STRING_ATTRIBUTE),
                    match(BOOL_ATTRIBUTE),
                ],
            )
        ],
        classes=[A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, None, FOUR), device(DEVICE2, None, FOUR))],
        want=[allocation(local(NODE1), result(REQ0, DRIVER_A, POOL1, DEVICE1), result(REQ1, DRIVER_A, POOL1, DEVICE2))],
    ),
    "with-constraint-non-existent-attribute": Case(
        claims=[claim_with_request(CLAIM0, REQ0, CLASS_A, match(NON_EXISTENT_ATTRIBUTE))],
        classes=[A],
        slices=[one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
    ),
    "with-constraint-not-matching-int-attribute": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 2), constraints=[match(INT_ATTRIBUTE)])],
        classes=[A, B],
        slices=_two("numa", 1, 2),
    ),
    "with-constraint-not-matching-int-attribute-all-devices": Case(
        claims=[claim(CLAIM0, all_request(REQ0, CLASS_A), constraints=[match(INT_ATTRIBUTE)])],
        classes=[A, B],
        slices=_two("numa", 1, 2),
        error="claim claim-0, request req-0: cannot add device driver-a/pool-1/device-2 because a claim constraint would not be satisfied",
    ),
    "with-constraint-not-matching-string-attribute": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 2), constraints=[match(STRING_ATTRIBUTE)])],
        classes=[A, B],
        slices=_two("stringAttribute", "stringAttributeValue", "stringAttributeValue2"),
    ),
    "with-constraint-not-matching-bool-attribute": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 2), constraints=[match(BOOL_ATTRIBUTE)])],
        classes=[A, B],
        slices=_two("boolAttribute", True, False),
    ),
    "with-constraint-not-matching-version-attribute": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 2), constraints=[match(VERSION_ATTRIBUTE)])],
        classes=[A, B],
        slices=_two("driverVersion", ("version", "1.0.0"), ("version", "2.0.0")),
    ),
    "with-constraint-for-request": Case(
        claims=[
            claim(
                CLAIM0,
                request(REQ0, CLASS_A, 1),
                request(REQ1, CLASS_A, 1),
                constraints=[match(VERSION_ATTRIBUTE, REQ0)],
            )
        ],
        classes=[A, B],
        slices=_two("driverVersion", ("version", "1.0.0"), ("version", "2.0.0")),
        want=[allocation(local(NODE1), result(REQ0, DRIVER_A, POOL1, DEVICE1), result(REQ1, DRIVER_A, POOL1, DEVICE2))],
    ),
    "with-constraint-for-request-retry": Case(
        claims=[
            claim(
                CLAIM0,
                request(REQ0, CLASS_A, 1),
                request(REQ1, CLASS_A, 1),
                constraints=[match(VERSION_ATTRIBUTE, REQ0), match(STRING_ATTRIBUTE)],
            )
        ],
        classes=[A, B],
        slices=[
            slice_(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                device(DEVICE1, None, attrs(driverVersion=("version", "1.0.0"), stringAttribute="a")),
                device(DEVICE2, None, attrs(driverVersion=("version", "2.0.0"), stringAttribute="b")),
                device(DEVICE3, None, attrs(driverVersion=("version", "3.0.0"), stringAttribute="b")),
            )
        ],
        want=[allocation(local(NODE1), result(REQ0, DRIVER_A, POOL1, DEVICE2), result(REQ1, DRIVER_A, POOL1, DEVICE3))],
    ),
    "with-class-device-config": Case(
        claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)],
        classes=[klass(CLASS_A, DRIVER_A, "classAttribute")],
        slices=[one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        want=[
            allocation(
                local(NODE1),
                result(REQ0, DRIVER_A, POOL1, DEVICE1),
                config=[class_config(DRIVER_A, "classAttribute")],
            )
        ],
    ),
    "with-class-device-config-with-multiple-request-and-configs": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1), request(REQ1, CLASS_A, 1), request(REQ2, CLASS_B, 1))],
        classes=[klass(CLASS_A, DRIVER_A, "classAttribute-A"), klass(CLASS_B, DRIVER_B, "classAttribute-B")],
        slices=[many_devices(SLICE1, NODE1, POOL1, DRIVER_A, 2), one_device(SLICE2, NODE1, POOL1, DRIVER_B)],
        want=[
            allocation(
                local(NODE1),
                result(REQ0, DRIVER_A, POOL1, DEVICE0),
                result(REQ1, DRIVER_A, POOL1, DEVICE1),
                result(REQ2, DRIVER_B, POOL1, DEVICE1),
                config=[
                    class_config(DRIVER_A, "classAttribute-A", REQ0, REQ1),
                    class_config(DRIVER_B, "classAttribute-B", REQ2),
                ],
            )
        ],
    ),
    "with-claim-config-for-two-requests": Case(
        claims=[
            claim(
                CLAIM0,
                request(REQ0, CLASS_A, 1),
                request(REQ1, CLASS_A, 1),
                request(REQ2, CLASS_A, 1),
                config=[{"requests": [REQ0, REQ1], **device_configuration(DRIVER_A, "deviceAttribute")}],
            )
        ],
        classes=[A],
        slices=[many_devices(SLICE1, NODE1, POOL1, DRIVER_A, 3)],
        want=[
            allocation(
                local(NODE1),
                result(REQ0, DRIVER_A, POOL1, DEVICE0),
                result(REQ1, DRIVER_A, POOL1, DEVICE1),
                result(REQ2, DRIVER_A, POOL1, DEVICE2),
                config=[claim_config(DRIVER_A, "deviceAttribute", REQ0, REQ1)],
            )
        ],
    ),
    "claim-with-device-config": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1), config=[device_configuration(DRIVER_A, "deviceAttribute")])],
        classes=[A],
        slices=[one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        want=[
            allocation(
                local(NODE1),
                result(REQ0, DRIVER_A, POOL1, DEVICE1),
                config=[claim_config(DRIVER_A, "deviceAttribute")],
            )
        ],
    ),
    "unknown-selector": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1, {}))],
        classes=[A],
        slices=[one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        error="CEL expression empty (unsupported selector type?)",
    ),
    "unknown-allocation-mode": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1, mode="future-mode"))],
        classes=[A],
        slices=[one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        error="unsupported count mode future-mode",
    ),
    "unknown-constraint": Case(
        claims=[claim_with_request(CLAIM0, REQ0, CLASS_A, {})],
        classes=[A],
        slices=[one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        error="empty constraint (unsupported constraint type?)",
    ),
    # Upstream's CEL compiler names the unknown identifier an "undeclared reference" when the
    # expression compiles; ours finds it when it runs, and names it.
    "invalid-CEL-one-device": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1, sel("noSuchVar")))],
        classes=[A],
        slices=[one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        error="noSuchVar",
    ),
    "invalid-CEL-one-device-class": Case(
        claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)],
        classes=[{"metadata": {"name": CLASS_A}, "spec": {"selectors": [sel("noSuchVar")]}}],
        slices=[one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        error="noSuchVar",
    ),
    "invalid-CEL-all-devices": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 0, sel("noSuchVar"), mode="All"))],
        classes=[A],
        slices=[one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        error="noSuchVar",
    ),
    "too-many-devices-single-request": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 500))], classes=[A], error="exceeds the claim limit"
    ),
    "many-devices-okay": Case(claims=[claim(CLAIM0, request(REQ0, CLASS_A, ALLOCATION_RESULTS_MAX_SIZE))], classes=[A]),
    "too-many-devices-total": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, ALLOCATION_RESULTS_MAX_SIZE), request(REQ1, CLASS_A, 1))],
        classes=[A],
        slices=[many_devices(SLICE1, NODE1, POOL1, DRIVER_A, ALLOCATION_RESULTS_MAX_SIZE + 1)],
        error="exceeds the claim limit",
    ),
    "all-devices-invalid-CEL": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 500))], classes=[A], error="exceeds the claim limit"
    ),
}


@pytest.mark.parametrize("case", list(BASIC.values()), ids=list(BASIC))
def test_basic(case: Case) -> None:
    run_case(case)


@pytest.mark.parametrize("case", list(CONSTRAINTS.values()), ids=list(CONSTRAINTS))
def test_constraints_config_and_errors(case: Case) -> None:
    run_case(case)


def _mem(size: str) -> dict:
    return sel(MEM.format(size))


def _mem_device(name: str, size: str, version: str | None = None) -> dict:
    return device(name, {"memory": size}, attrs(driverVersion=("version", version)) if version else None)


R0S0, R0S1, R1S0, R1S1 = f"{REQ0}/{SUB0}", f"{REQ0}/{SUB1}", f"{REQ1}/{SUB0}", f"{REQ1}/{SUB1}"

PRIORITIZED = {
    "prioritized-list-first-unavailable": Case(
        claims=[claim(CLAIM0, prioritized(REQ0, sub_request(SUB0, CLASS_B, 1), sub_request(SUB1, CLASS_A, 1)))],
        classes=[A, B],
        slices=[one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        want=[allocation(local(NODE1), result(R0S1, DRIVER_A, POOL1, DEVICE1))],
    ),
    "prioritized-list-non-available": Case(
        claims=[claim(CLAIM0, prioritized(REQ0, sub_request(SUB0, CLASS_B, 2), sub_request(SUB1, CLASS_A, 2)))],
        classes=[A, B],
        slices=[one_device(SLICE1, NODE1, POOL1, DRIVER_A), one_device(SLICE2, NODE1, POOL2, DRIVER_B)],
    ),
    "prioritized-list-device-config": Case(
        claims=[
            claim(
                CLAIM0,
                prioritized(REQ0, sub_request(SUB0, CLASS_A, 1), sub_request(SUB1, CLASS_B, 2)),
                config=[
                    {"requests": [R0S0], **device_configuration(DRIVER_A, "foo")},
                    {"requests": [R0S1], **device_configuration(DRIVER_B, "bar")},
                ],
            )
        ],
        classes=[A, B],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_B, device(DEVICE1), device(DEVICE2))],
        want=[
            allocation(
                local(NODE1),
                result(R0S1, DRIVER_B, POOL1, DEVICE1),
                result(R0S1, DRIVER_B, POOL1, DEVICE2),
                config=[claim_config(DRIVER_B, "bar")],
            )
        ],
    ),
    "prioritized-list-class-config": Case(
        claims=[claim(CLAIM0, prioritized(REQ0, sub_request(SUB0, CLASS_A, 2), sub_request(SUB1, CLASS_B, 2)))],
        classes=[klass(CLASS_A, DRIVER_A, "foo"), klass(CLASS_B, DRIVER_B, "bar")],
        slices=[
            slice_(SLICE1, NODE1, POOL1, DRIVER_B, device(DEVICE1), device(DEVICE2)),
            slice_(SLICE2, NODE1, POOL2, DRIVER_A, device(DEVICE3)),
        ],
        want=[
            allocation(
                local(NODE1),
                result(R0S1, DRIVER_B, POOL1, DEVICE1),
                result(R0S1, DRIVER_B, POOL1, DEVICE2),
                config=[class_config(DRIVER_B, "bar")],
            )
        ],
    ),
    "claim-config-scoped-to-subrequests-of-one-request": Case(
        claims=[
            claim(
                CLAIM0,
                prioritized(REQ0, sub_request(SUB0, CLASS_A, 1), sub_request(SUB1, CLASS_B, 1)),
                request(REQ1, CLASS_A, 1),
                config=[{"requests": [R0S0, R0S1], **device_configuration(DRIVER_A, "scoped")}],
            )
        ],
        classes=[A, B],
        slices=[many_devices(SLICE1, NODE1, POOL1, DRIVER_A, 2)],
        want=[
            allocation(
                local(NODE1),
                result(R0S0, DRIVER_A, POOL1, DEVICE0),
                result(REQ1, DRIVER_A, POOL1, DEVICE1),
                config=[claim_config(DRIVER_A, "scoped", R0S0, R0S1)],
            )
        ],
    ),
    "claim-config-covering-all-requests-is-cleared": Case(
        claims=[
            claim(
                CLAIM0,
                prioritized(REQ0, sub_request(SUB0, CLASS_A, 1), sub_request(SUB1, CLASS_B, 1)),
                request(REQ1, CLASS_A, 1),
                config=[{"requests": [R0S0, REQ1], **device_configuration(DRIVER_A, "all")}],
            )
        ],
        classes=[A, B],
        slices=[many_devices(SLICE1, NODE1, POOL1, DRIVER_A, 2)],
        want=[
            allocation(
                local(NODE1),
                result(R0S0, DRIVER_A, POOL1, DEVICE0),
                result(REQ1, DRIVER_A, POOL1, DEVICE1),
                config=[claim_config(DRIVER_A, "all")],
            )
        ],
    ),
    "prioritized-list-subrequests-with-expressions": Case(
        claims=[
            claim(
                CLAIM0,
                request(REQ0, CLASS_A, 1, _mem("1Gi")),
                prioritized(
                    REQ1, sub_request(SUB0, CLASS_A, 1, _mem("4Gi")), sub_request(SUB1, CLASS_A, 2, _mem("2Gi"))
                ),
            )
        ],
        classes=[A],
        slices=[
            slice_(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                _mem_device(DEVICE1, "2Gi"),
                _mem_device(DEVICE2, "2Gi"),
                _mem_device(DEVICE3, "1Gi"),
            )
        ],
        want=[
            allocation(
                local(NODE1),
                result(REQ0, DRIVER_A, POOL1, DEVICE3),
                result(R1S1, DRIVER_A, POOL1, DEVICE1),
                result(R1S1, DRIVER_A, POOL1, DEVICE2),
            )
        ],
    ),
    "prioritized-list-subrequests-with-constraints-ref-parent-request": Case(
        claims=[
            claim(
                CLAIM0,
                request(REQ0, CLASS_A, 1, _mem("8Gi")),
                prioritized(
                    REQ1, sub_request(SUB0, CLASS_A, 1, _mem("2Gi")), sub_request(SUB1, CLASS_A, 1, _mem("1Gi"))
                ),
                constraints=[match(VERSION_ATTRIBUTE, REQ0, REQ1)],
            )
        ],
        classes=[A],
        slices=[
            slice_(SLICE1, NODE1, POOL1, DRIVER_A, _mem_device(DEVICE1, "8Gi", "1.0.0")),
            slice_(
                SLICE2,
                NODE1,
                POOL2,
                DRIVER_A,
                _mem_device(DEVICE2, "2Gi", "2.0.0"),
                _mem_device(DEVICE3, "1Gi", "1.0.0"),
            ),
        ],
        want=[allocation(local(NODE1), result(REQ0, DRIVER_A, POOL1, DEVICE1), result(R1S1, DRIVER_A, POOL2, DEVICE3))],
    ),
    "prioritized-list-subrequests-with-constraints-ref-sub-request": Case(
        claims=[
            claim(
                CLAIM0,
                request(REQ0, CLASS_A, 1, _mem("8Gi")),
                prioritized(
                    REQ1, sub_request(SUB0, CLASS_A, 1, _mem("2Gi")), sub_request(SUB1, CLASS_A, 1, _mem("1Gi"))
                ),
                constraints=[match(VERSION_ATTRIBUTE, REQ0, R1S0)],
            )
        ],
        classes=[A],
        slices=[
            slice_(SLICE1, NODE1, POOL1, DRIVER_A, _mem_device(DEVICE1, "8Gi", "1.0.0")),
            slice_(SLICE2, NODE1, POOL2, DRIVER_A, _mem_device(DEVICE2, "2Gi", "2.0.0")),
        ],
        want=[allocation(local(NODE1), result(REQ0, DRIVER_A, POOL1, DEVICE1), result(R1S1, DRIVER_A, POOL2, DEVICE2))],
    ),
    "prioritized-list-subrequests-with-allocation-mode-all": Case(
        claims=[
            claim(CLAIM0, prioritized(REQ0, sub_request(SUB0, CLASS_A, 0, mode="All"), sub_request(SUB1, CLASS_A, 1)))
        ],
        classes=[A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1), device(DEVICE2))],
        allocated=[(DRIVER_A, POOL1, DEVICE1)],
        want=[allocation(local(NODE1), result(R0S1, DRIVER_A, POOL1, DEVICE2))],
    ),
    "prioritized-list-allocation-mode-all-multiple-requests": Case(
        claims=[
            claim(
                CLAIM0,
                request(REQ0, CLASS_A, 1),
                prioritized(REQ1, sub_request(SUB0, CLASS_A, 0, mode="All"), sub_request(SUB1, CLASS_A, 1)),
            )
        ],
        classes=[A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1), device(DEVICE2))],
        want=[allocation(local(NODE1), result(REQ0, DRIVER_A, POOL1, DEVICE1), result(R1S1, DRIVER_A, POOL1, DEVICE2))],
    ),
    "prioritized-list-multi-request": Case(
        claims=[
            claim(
                CLAIM0,
                request(REQ1, CLASS_A, 1, _mem("8Gi")),
                prioritized(
                    REQ0, sub_request(SUB0, CLASS_A, 1, _mem("8Gi")), sub_request(SUB1, CLASS_A, 1, _mem("4Gi"))
                ),
            )
        ],
        classes=[A],
        slices=[
            slice_(SLICE1, NODE1, POOL1, DRIVER_A, _mem_device(DEVICE1, "8Gi")),
            slice_(SLICE2, NODE1, POOL2, DRIVER_A, _mem_device(DEVICE2, "4Gi")),
        ],
        want=[allocation(local(NODE1), result(REQ1, DRIVER_A, POOL1, DEVICE1), result(R0S1, DRIVER_A, POOL2, DEVICE2))],
    ),
    "prioritized-list-with-backtracking": Case(
        claims=[
            claim(
                CLAIM0,
                prioritized(
                    REQ0, sub_request(SUB0, CLASS_A, 1, _mem("8Gi")), sub_request(SUB1, CLASS_A, 1, _mem("4Gi"))
                ),
                request(REQ1, CLASS_A, 1, _mem("8Gi")),
            )
        ],
        classes=[A],
        slices=[
            slice_(SLICE1, NODE1, POOL1, DRIVER_A, _mem_device(DEVICE1, "8Gi")),
            slice_(SLICE2, NODE1, POOL2, DRIVER_A, _mem_device(DEVICE2, "4Gi")),
        ],
        want=[allocation(local(NODE1), result(R0S1, DRIVER_A, POOL2, DEVICE2), result(REQ1, DRIVER_A, POOL1, DEVICE1))],
    ),
    "prioritized-list-too-many-in-first-subrequest": Case(
        claims=[claim(CLAIM0, prioritized(REQ0, sub_request(SUB0, CLASS_B, 500), sub_request(SUB1, CLASS_A, 1)))],
        classes=[A, B],
        slices=[one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        want=[allocation(local(NODE1), result(R0S1, DRIVER_A, POOL1, DEVICE1))],
    ),
}


@pytest.mark.parametrize("case", list(PRIORITIZED.values()), ids=list(PRIORITIZED))
def test_prioritized_list(case: Case) -> None:
    run_case(case)


def cdev(name: str, *uses: dict, from_counters: bool = True, **kw: object) -> dict:
    """A device consuming counters (``uses``: :func:`consumes`), its capacity the counters'
    (upstream's ``fromCounters``) unless ``from_counters`` is false."""
    return device(name, consumes=uses, capacity_from_counters=from_counters, **kw)  # type: ignore[arg-type]


def counters_slice(name: str, node_selection: object, pool_: object, driver: str, *sets: dict) -> dict:
    return slice_(name, node_selection, pool_, driver, counters=sets)


def _gi(cs: str, size: str) -> dict:
    return consumes(cs, memory=size)


PARTITIONABLE_CASES = {
    "partitionable-devices-single-device": Case(
        features=PARTITIONABLE,
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1))],
        classes=[A],
        slices=[
            slice_(
                SLICE1, NODE1, pool(POOL1, 2), DRIVER_A, cdev(DEVICE1, _gi(COUNTER_SET1, "4Gi"), from_counters=False)
            ),
            counters_slice(SLICE2, NODE1, pool(POOL1, 2), DRIVER_A, counter_set(COUNTER_SET1, memory="8Gi")),
        ],
        want=[allocation(local(NODE1), result(REQ0, DRIVER_A, POOL1, DEVICE1))],
    ),
    "all-devices-with-consumed-counters": Case(
        features=PARTITIONABLE,
        claims=[claim(CLAIM0, all_request(REQ0, CLASS_A))],
        classes=[A],
        slices=[
            slice_(
                SLICE1, NODE1, pool(POOL1, 2), DRIVER_A, cdev(DEVICE1, _gi(COUNTER_SET1, "4Gi"), from_counters=False)
            ),
            counters_slice(SLICE2, NODE1, pool(POOL1, 2), DRIVER_A, counter_set(COUNTER_SET1, memory="8Gi")),
        ],
        want=[allocation(local(NODE1), result(REQ0, DRIVER_A, POOL1, DEVICE1))],
    ),
    "partitionable-devices-prioritized-list": Case(
        features=PARTITIONABLE,
        claims=[
            claim(
                CLAIM0,
                request(REQ0, CLASS_A, 1),
                prioritized(
                    REQ1, sub_request(SUB0, CLASS_A, 1, _mem("6Gi")), sub_request(SUB1, CLASS_A, 1, _mem("4Gi"))
                ),
            )
        ],
        classes=[A],
        slices=[
            slice_(
                SLICE1,
                NODE1,
                pool(POOL1, 2),
                DRIVER_A,
                cdev(DEVICE1, _gi(COUNTER_SET1, "4Gi")),
                cdev(DEVICE2, _gi(COUNTER_SET1, "6Gi")),
                cdev(DEVICE3, _gi(COUNTER_SET1, "4Gi")),
            ),
            counters_slice(SLICE2, NODE1, pool(POOL1, 2), DRIVER_A, counter_set(COUNTER_SET1, memory="8Gi")),
        ],
        want=[allocation(local(NODE1), result(REQ0, DRIVER_A, POOL1, DEVICE1), result(R1S1, DRIVER_A, POOL1, DEVICE3))],
    ),
    "partitionable-devices-multiple-devices": Case(
        features=PARTITIONABLE,
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1), request(REQ1, CLASS_A, 1))],
        classes=[A],
        slices=[
            slice_(
                SLICE1,
                NODE1,
                pool(POOL1, 2),
                DRIVER_A,
                cdev(DEVICE1, _gi(COUNTER_SET1, "4Gi")),
                cdev(DEVICE2, _gi(COUNTER_SET1, "6Gi")),
                cdev(DEVICE3, _gi(COUNTER_SET1, "4Gi")),
            ),
            counters_slice(SLICE2, NODE1, pool(POOL1, 2), DRIVER_A, counter_set(COUNTER_SET1, memory="8Gi")),
        ],
        want=[allocation(local(NODE1), result(REQ0, DRIVER_A, POOL1, DEVICE1), result(REQ1, DRIVER_A, POOL1, DEVICE3))],
    ),
    "partitionable-devices-multiple-capacity-pools": Case(
        features=PARTITIONABLE,
        claims=[
            claim(
                CLAIM0,
                request(REQ0, CLASS_A, 1),
                prioritized(
                    REQ1, sub_request(SUB0, CLASS_A, 1, _mem("6Gi")), sub_request(SUB1, CLASS_A, 1, _mem("4Gi"))
                ),
            )
        ],
        classes=[A],
        slices=[
            slice_(
                SLICE1,
                NODE1,
                pool(POOL1, 2),
                DRIVER_A,
                cdev(DEVICE1, _gi(COUNTER_SET1, "4Gi"), consumes(COUNTER_SET2, cpus="4")),
                cdev(DEVICE2, _gi(COUNTER_SET1, "6Gi"), consumes(COUNTER_SET2, cpus="6")),
                cdev(DEVICE3, _gi(COUNTER_SET1, "4Gi"), consumes(COUNTER_SET2, cpus="4")),
            ),
            counters_slice(
                SLICE2,
                NODE1,
                pool(POOL1, 2),
                DRIVER_A,
                counter_set(COUNTER_SET1, memory="18Gi"),
                counter_set(COUNTER_SET2, cpus="8"),
            ),
        ],
        want=[allocation(local(NODE1), result(REQ0, DRIVER_A, POOL1, DEVICE1), result(R1S1, DRIVER_A, POOL1, DEVICE3))],
    ),
    "partitionable-devices-multiple-counters": Case(
        features=PARTITIONABLE,
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1), request(REQ1, CLASS_A, 1))],
        classes=[A],
        slices=[
            slice_(
                SLICE1,
                NODE1,
                pool(POOL1, 2),
                DRIVER_A,
                cdev(
                    DEVICE1,
                    consumes(COUNTER_SET1, memory="4Gi", cpus="6"),
                    consumes(COUNTER_SET2, cpus="4", memory="2Gi"),
                ),
                cdev(
                    DEVICE2,
                    consumes(COUNTER_SET1, memory="6Gi", cpus="4"),
                    consumes(COUNTER_SET2, cpus="6", memory="6Gi"),
                ),
                cdev(
                    DEVICE3,
                    consumes(COUNTER_SET1, memory="4Gi", cpus="4"),
                    consumes(COUNTER_SET2, cpus="4", memory="4Gi"),
                ),
            ),
            counters_slice(
                SLICE2,
                NODE1,
                pool(POOL1, 2),
                DRIVER_A,
                counter_set(COUNTER_SET1, cpus="8", memory="18Gi"),
                counter_set(COUNTER_SET2, cpus="12", memory="18Gi"),
            ),
        ],
        want=[allocation(local(NODE1), result(REQ0, DRIVER_A, POOL1, DEVICE2), result(REQ1, DRIVER_A, POOL1, DEVICE3))],
    ),
    "partitionable-devices-multiple-pools": Case(
        features=PARTITIONABLE,
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1), request(REQ1, CLASS_A, 1))],
        classes=[A],
        slices=[
            slice_(
                SLICE1,
                NODE1,
                pool(POOL1, 2),
                DRIVER_A,
                cdev(DEVICE1, consumes(COUNTER_SET1, cpus="6", memory="4Gi")),
                cdev(DEVICE2, consumes(COUNTER_SET1, cpus="4", memory="6Gi")),
                cdev(DEVICE3, consumes(COUNTER_SET1, cpus="4", memory="4Gi")),
            ),
            counters_slice(SLICE2, NODE1, pool(POOL1, 2), DRIVER_A, counter_set(COUNTER_SET1, cpus="8", memory="18Gi")),
            slice_(
                SLICE3,
                NODE1,
                pool(POOL2, 2),
                DRIVER_A,
                cdev(DEVICE1, consumes(COUNTER_SET1, cpus="6", memory="4Gi")),
                cdev(DEVICE2, consumes(COUNTER_SET1, cpus="1", memory="7Gi")),
                cdev(DEVICE3, consumes(COUNTER_SET1, cpus="1", memory="7Gi")),
            ),
            counters_slice(SLICE4, NODE1, pool(POOL2, 2), DRIVER_A, counter_set(COUNTER_SET1, cpus="8", memory="18Gi")),
        ],
        allocated=[(DRIVER_A, POOL1, DEVICE2), (DRIVER_A, POOL1, DEVICE3), (DRIVER_A, POOL2, DEVICE1)],
        want=[allocation(local(NODE1), result(REQ0, DRIVER_A, POOL2, DEVICE2), result(REQ1, DRIVER_A, POOL2, DEVICE3))],
    ),
    "partitionable-devices-unused-counters-in-counter-set": Case(
        features=PARTITIONABLE,
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 2))],
        classes=[A],
        slices=[
            slice_(
                SLICE1,
                NODE1,
                pool(POOL1, 2),
                DRIVER_A,
                cdev(DEVICE1, _gi(COUNTER_SET1, "5Gi"), from_counters=False),
                cdev(DEVICE2, _gi(COUNTER_SET1, "4Gi"), from_counters=False),
                cdev(DEVICE3, _gi(COUNTER_SET1, "4Gi"), from_counters=False),
            ),
            counters_slice(
                SLICE2, NODE1, pool(POOL1, 2), DRIVER_A, counter_set(COUNTER_SET1, memory="8Gi", unused="1Gi")
            ),
        ],
        want=[allocation(local(NODE1), result(REQ0, DRIVER_A, POOL1, DEVICE2), result(REQ0, DRIVER_A, POOL1, DEVICE3))],
    ),
    "partitionable-devices-no-capacity-available": Case(
        features=PARTITIONABLE,
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1))],
        classes=[A],
        slices=[
            slice_(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                cdev(DEVICE1, _gi(COUNTER_SET1, "4Gi")),
                cdev(DEVICE2, _gi(COUNTER_SET1, "16Gi")),
            ),
            counters_slice(SLICE2, NODE1, POOL1, DRIVER_A, counter_set(COUNTER_SET1, memory="18Gi")),
        ],
        allocated=[(DRIVER_A, POOL1, DEVICE2)],
    ),
    "partitionable-devices-overallocated-capacity-pool": Case(
        features=PARTITIONABLE,
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1))],
        classes=[A],
        slices=[
            slice_(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                cdev(DEVICE1, _gi(COUNTER_SET1, "4Gi")),
                cdev(DEVICE2, _gi(COUNTER_SET1, "20Gi")),
            ),
            counters_slice(SLICE2, NODE1, POOL1, DRIVER_A, counter_set(COUNTER_SET1, memory="18Gi")),
        ],
        allocated=[(DRIVER_A, POOL1, DEVICE2)],
    ),
    "partitionable-devices-disabled-device-consumes-counters": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1))],
        classes=[A],
        slices=[
            slice_(SLICE1, NODE1, POOL1, DRIVER_A, cdev(DEVICE1, _gi(COUNTER_SET1, "4Gi"), from_counters=False)),
            counters_slice(SLICE2, NODE1, POOL1, DRIVER_A, counter_set(COUNTER_SET1, memory="18Gi")),
        ],
    ),
    "partitionable-devices-disabled-other-device-do-not-consume-counters": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1))],
        classes=[A],
        slices=[
            slice_(
                SLICE1,
                NODE1,
                pool(POOL1, 2),
                DRIVER_A,
                cdev(DEVICE1, _gi(COUNTER_SET1, "4Gi"), from_counters=False),
                device(DEVICE2),
            ),
            counters_slice(SLICE2, NODE1, pool(POOL1, 2), DRIVER_A, counter_set(COUNTER_SET1, memory="18Gi")),
        ],
        want=[allocation(local(NODE1), result(REQ0, DRIVER_A, POOL1, DEVICE2))],
    ),
    "partitionable-devices-disabled-per-device-node-selection": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1))],
        classes=[A],
        slices=[slice_(SLICE1, PER_DEVICE, POOL1, DRIVER_A, device(DEVICE2, node_name=NODE1))],
    ),
    "partitionable-devices-per-device-node-selection-nodename": Case(
        features=PARTITIONABLE,
        claims=[
            claim(
                CLAIM0,
                prioritized(
                    REQ0, sub_request(SUB0, CLASS_A, 1, _mem("6Gi")), sub_request(SUB1, CLASS_A, 1, _mem("4Gi"))
                ),
            )
        ],
        classes=[A],
        slices=[
            slice_(
                SLICE1,
                PER_DEVICE,
                pool(POOL1, 2),
                DRIVER_A,
                cdev(DEVICE1, _gi(COUNTER_SET1, "4Gi"), node_name=NODE1),
                cdev(DEVICE2, _gi(COUNTER_SET1, "6Gi"), node_name=NODE2),
            ),
            counters_slice(SLICE2, PER_DEVICE, pool(POOL1, 2), DRIVER_A, counter_set(COUNTER_SET1, memory="18Gi")),
        ],
        want=[allocation(local(NODE1), result(R0S1, DRIVER_A, POOL1, DEVICE1))],
    ),
    "partitionable-devices-per-device-node-selection-node-selector": Case(
        features=PARTITIONABLE,
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1))],
        classes=[A],
        slices=[
            slice_(
                SLICE1,
                PER_DEVICE,
                pool(POOL1, 2),
                DRIVER_A,
                cdev(DEVICE1, _gi(COUNTER_SET1, "4Gi"), node_selector=label_selector(REGION_KEY, REGION1)),
            ),
            counters_slice(SLICE2, PER_DEVICE, pool(POOL1, 2), DRIVER_A, counter_set(COUNTER_SET1, memory="18Gi")),
        ],
        want=[allocation(label_selector(REGION_KEY, REGION1), result(REQ0, DRIVER_A, POOL1, DEVICE1))],
    ),
    "partitionable-devices-per-device-node-selection-node-selector-multiple-devices": Case(
        features=PARTITIONABLE,
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 3), request(REQ1, CLASS_B, 3))],
        classes=[A, B],
        slices=[
            slice_(
                SLICE1,
                PER_DEVICE,
                pool(POOL1, 2),
                DRIVER_A,
                cdev(DEVICE1, _gi(COUNTER_SET1, "4Gi"), node_selector=label_selector(REGION_KEY, REGION1)),
                cdev(DEVICE2, _gi(COUNTER_SET1, "4Gi"), node_name=NODE1),
                cdev(DEVICE3, _gi(COUNTER_SET1, "4Gi"), all_nodes=True),
            ),
            counters_slice(SLICE2, PER_DEVICE, pool(POOL1, 2), DRIVER_A, counter_set(COUNTER_SET1, memory="18Gi")),
            slice_(
                SLICE3,
                NODE1,
                pool(POOL2, 2),
                DRIVER_B,
                cdev(DEVICE1, _gi(COUNTER_SET2, "4Gi")),
                cdev(DEVICE2, _gi(COUNTER_SET2, "4Gi")),
                cdev(DEVICE3, _gi(COUNTER_SET2, "4Gi")),
            ),
            counters_slice(SLICE4, NODE1, pool(POOL2, 2), DRIVER_B, counter_set(COUNTER_SET2, memory="12Gi")),
        ],
        want=[
            allocation(
                local(NODE1),
                result(REQ0, DRIVER_A, POOL1, DEVICE1),
                result(REQ0, DRIVER_A, POOL1, DEVICE2),
                result(REQ0, DRIVER_A, POOL1, DEVICE3),
                result(REQ1, DRIVER_B, POOL2, DEVICE1),
                result(REQ1, DRIVER_B, POOL2, DEVICE2),
                result(REQ1, DRIVER_B, POOL2, DEVICE3),
            )
        ],
    ),
}


@pytest.mark.parametrize("case", list(PARTITIONABLE_CASES.values()), ids=list(PARTITIONABLE_CASES))
def test_partitionable_devices(case: Case) -> None:
    run_case(case)


def _gen(value: str) -> dict:
    return sel(f'device.attributes["{DRIVER_A}"].generation == "{value}"')


def _results(req: str, driver: str, pool_: str, count: int, start: int = 0) -> list[dict]:
    return [result(req, driver, pool_, f"device-{i}") for i in range(start, start + count)]


TWO_TAINTED = [
    slice_(
        SLICE1,
        NODE1,
        POOL1,
        DRIVER_A,
        device(DEVICE1, taints=[TAINT_NO_SCHEDULE]),
        device(DEVICE2, taints=[TAINT_NO_EXECUTE]),
    )
]
MAX = ALLOCATION_RESULTS_MAX_SIZE

TAINT_CASES = {
    "tainted-two-devices": Case(
        features=TAINTS, claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)], classes=[A], slices=TWO_TAINTED
    ),
    "tainted-one-device-two-taints": Case(
        features=TAINTS,
        claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)],
        classes=[A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, taints=[TAINT_NO_SCHEDULE, TAINT_NO_EXECUTE]))],
    ),
    "tainted-two-devices-tolerated": Case(
        features=TAINTS,
        claims=[with_tolerations(claim_with_request(CLAIM0, REQ0, CLASS_A), TOLERATION_NO_EXECUTE)],
        classes=[A],
        slices=TWO_TAINTED,
        want=[allocation(local(NODE1), result(REQ0, DRIVER_A, POOL1, DEVICE2, False, TOLERATION_NO_EXECUTE))],
    ),
    "tainted-two-devices-prioritized-list-tolerated": Case(
        features=TAINTS,
        claims=[
            claim(
                CLAIM0,
                prioritized(
                    REQ0,
                    sub_request(SUB0, CLASS_A, 1),
                    sub_request(SUB1, CLASS_A, 1, tolerations=[TOLERATION_NO_EXECUTE]),
                ),
            )
        ],
        classes=[A],
        slices=TWO_TAINTED,
        want=[allocation(local(NODE1), result(R0S1, DRIVER_A, POOL1, DEVICE2, False, TOLERATION_NO_EXECUTE))],
    ),
    "tainted-no-effect": Case(
        features=TAINTS,
        claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)],
        classes=[A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, taints=[TAINT_NONE]))],
        want=[allocation(local(NODE1), result(REQ0, DRIVER_A, POOL1, DEVICE1))],
    ),
    "tainted-one-device-two-taints-both-tolerated": Case(
        features=TAINTS,
        claims=[
            with_tolerations(claim_with_request(CLAIM0, REQ0, CLASS_A), TOLERATION_NO_SCHEDULE, TOLERATION_NO_EXECUTE)
        ],
        classes=[A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, taints=[TAINT_NO_SCHEDULE, TAINT_NO_EXECUTE]))],
        want=[
            allocation(
                local(NODE1),
                result(REQ0, DRIVER_A, POOL1, DEVICE1, False, TOLERATION_NO_SCHEDULE, TOLERATION_NO_EXECUTE),
            )
        ],
    ),
    "tainted-disabled": Case(
        claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)],
        classes=[A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, taints=[TAINT_NO_SCHEDULE, TAINT_NO_EXECUTE]))],
        want=[allocation(local(NODE1), result(REQ0, DRIVER_A, POOL1, DEVICE1))],
    ),
    "tainted-prioritized-list": Case(
        features=TAINTS,
        claims=[claim(CLAIM0, prioritized(REQ0, sub_request(SUB0, CLASS_B, 1), sub_request(SUB1, CLASS_A, 1)))],
        classes=[A, B],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, taints=[TAINT_NO_SCHEDULE]))],
    ),
    "tainted-prioritized-list-disabled": Case(
        claims=[claim(CLAIM0, prioritized(REQ0, sub_request(SUB0, CLASS_B, 1), sub_request(SUB1, CLASS_A, 1)))],
        classes=[A, B],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, taints=[TAINT_NO_SCHEDULE]))],
        want=[allocation(local(NODE1), result(R0S1, DRIVER_A, POOL1, DEVICE1))],
    ),
    "tainted-admin-access": Case(
        features=TAINTS,
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1, admin=True))],
        allocated=[(DRIVER_A, POOL1, DEVICE1), (DRIVER_A, POOL1, DEVICE2)],
        classes=[A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, taints=[TAINT_NO_SCHEDULE]))],
    ),
    "tainted-admin-access-disabled": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1, admin=True))],
        allocated=[(DRIVER_A, POOL1, DEVICE1), (DRIVER_A, POOL1, DEVICE2)],
        classes=[A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, taints=[TAINT_NO_SCHEDULE]))],
        want=[allocation(local(NODE1), result(REQ0, DRIVER_A, POOL1, DEVICE1, True))],
    ),
    "tainted-all-devices-single": Case(
        features=TAINTS,
        claims=[claim(CLAIM0, all_request(REQ0, CLASS_A))],
        classes=[A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, taints=[TAINT_NO_SCHEDULE]))],
    ),
    "tainted-all-devices-single-disabled": Case(
        claims=[claim(CLAIM0, all_request(REQ0, CLASS_A))],
        classes=[A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, taints=[TAINT_NO_SCHEDULE]))],
        want=[allocation(local(NODE1), result(REQ0, DRIVER_A, POOL1, DEVICE1))],
    ),
}

MORE_PRIORITIZED = {
    "prioritized-list-allocation-mode-all": Case(
        claims=[
            claim(CLAIM0, prioritized(REQ0, sub_request(SUB0, CLASS_A, 0, mode="All"), sub_request(SUB1, CLASS_A, 1)))
        ],
        classes=[A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1), device(DEVICE2))],
        allocated=[(DRIVER_A, POOL1, DEVICE2)],
        want=[allocation(local(NODE1), result(R0S1, DRIVER_A, POOL1, DEVICE1))],
    ),
    "prioritized-list-allocation-mode-all-with-selectors": Case(
        claims=[
            claim(
                CLAIM0,
                prioritized(
                    REQ0,
                    sub_request(SUB0, CLASS_A, 0, _gen("v6"), mode="All"),
                    sub_request(SUB1, CLASS_A, 0, _gen("v5"), mode="All"),
                ),
            )
        ],
        classes=[A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, None, attrs(generation="v5")))],
        want=[allocation(local(NODE1), result(R0S1, DRIVER_A, POOL1, DEVICE1))],
    ),
    "prioritized-list-allocation-mode-all-with-selectors-multiple-pools": Case(
        claims=[
            claim(
                CLAIM0,
                prioritized(
                    REQ0,
                    sub_request(SUB0, CLASS_A, 0, _gen("v6"), mode="All"),
                    sub_request(SUB1, CLASS_A, 0, _gen("v5"), mode="All"),
                ),
            )
        ],
        classes=[A],
        slices=[
            slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, None, attrs(generation="v5"))),
            slice_(SLICE2, NODE1, POOL2, DRIVER_A, device(DEVICE1, None, attrs(generation="v5"))),
        ],
        want=[allocation(local(NODE1), result(R0S1, DRIVER_A, POOL1, DEVICE1), result(R0S1, DRIVER_A, POOL2, DEVICE1))],
    ),
    "prioritized-list-allocation-mode-all-with-selectors-multiple-pools-across-nodes": Case(
        claims=[
            claim(
                CLAIM0,
                prioritized(
                    REQ0,
                    sub_request(SUB0, CLASS_A, 0, _gen("v6"), mode="All"),
                    sub_request(SUB1, CLASS_A, 0, _gen("v5"), mode="All"),
                ),
            )
        ],
        classes=[A],
        slices=[
            slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, None, attrs(generation="v5"))),
            slice_(
                SLICE2,
                NODE2,
                POOL2,
                DRIVER_A,
                device(DEVICE1, None, attrs(generation="v5")),
                device(DEVICE2, None, attrs(generation="v6")),
            ),
        ],
        want=[allocation(local(NODE1), result(R0S1, DRIVER_A, POOL1, DEVICE1))],
    ),
    "prioritized-list-allocation-mode-all-with-selectors-deviceclass-subset": Case(
        claims=[
            claim(
                CLAIM0,
                prioritized(
                    REQ0,
                    sub_request(SUB0, CLASS_A, 0, _gen("v6"), mode="All"),
                    sub_request(SUB1, CLASS_A, 0, _gen("v5"), mode="All"),
                ),
            )
        ],
        classes=[
            {
                "metadata": {"name": CLASS_A},
                "spec": {
                    "selectors": [sel(f'device.driver == "{DRIVER_A}" && device.attributes["{DRIVER_A}"].selected')]
                },
            }
        ],
        slices=[
            slice_(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                device(DEVICE1, None, attrs(generation="v6", selected=False)),
                device(DEVICE2, None, attrs(generation="v5", selected=False)),
                device(DEVICE3, None, attrs(generation="v5", selected=True)),
            )
        ],
        want=[allocation(local(NODE1), result(R0S1, DRIVER_A, POOL1, DEVICE3))],
    ),
    "max-number-devices": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, MAX))],
        classes=[A],
        slices=[many_devices(SLICE1, NODE1, POOL1, DRIVER_A, MAX)],
        want=[allocation(local(NODE1), *_results(REQ0, DRIVER_A, POOL1, MAX))],
    ),
    "partitionable-devices-with-attribute-selector": Case(
        features=PARTITIONABLE,
        claims=[
            claim(
                CLAIM0,
                request(REQ0, CLASS_A, 2),
                request(REQ1, CLASS_A, 1, sel(f'device.attributes["{DRIVER_A}"].special')),
            )
        ],
        classes=[A],
        slices=[
            slice_(
                SLICE1,
                NODE1,
                pool(POOL1, 2),
                DRIVER_A,
                *(
                    device(
                        name,
                        None,
                        attrs(special=special),
                        consumes=[consumes(COUNTER_SET1, **{cpu: "1"}), consumes(COUNTER_SET2, mem="10Gi")],
                    )
                    for name, special, cpu in (
                        (DEVICE1, True, "cpu1"),
                        (DEVICE2, False, "cpu2"),
                        (DEVICE3, False, "cpu3"),
                    )
                ),
            ),
            counters_slice(
                SLICE2,
                NODE1,
                pool(POOL1, 2),
                DRIVER_A,
                counter_set(COUNTER_SET1, cpu1="1", cpu2="1", cpu3="1"),
                counter_set(COUNTER_SET2, mem="30Gi"),
            ),
        ],
        want=[
            allocation(
                local(NODE1),
                result(REQ0, DRIVER_A, POOL1, DEVICE2),
                result(REQ0, DRIVER_A, POOL1, DEVICE3),
                result(REQ1, DRIVER_A, POOL1, DEVICE1),
            )
        ],
    ),
    "prioritized-list-max-allocation-limit-request": Case(
        claims=[
            claim(
                CLAIM0,
                prioritized(REQ0, sub_request(SUB0, CLASS_A, MAX), sub_request(SUB1, CLASS_A, MAX // 2)),
                prioritized(REQ1, sub_request(SUB0, CLASS_A, MAX), sub_request(SUB1, CLASS_A, MAX // 2)),
            )
        ],
        classes=[A],
        slices=[many_devices(SLICE1, NODE1, POOL1, DRIVER_A, MAX * 2)],
        want=[
            allocation(
                local(NODE1),
                *_results(R0S1, DRIVER_A, POOL1, MAX // 2),
                *_results(R1S1, DRIVER_A, POOL1, MAX // 2, MAX // 2),
            )
        ],
        invocations=75,
    ),
    "prioritized-list-max-allocation-allocation-mode-all": Case(
        claims=[
            claim(
                CLAIM0,
                prioritized(REQ0, sub_request(SUB0, CLASS_A, 0, mode="All"), sub_request(SUB1, CLASS_A, 2)),
                request(REQ1, CLASS_B, 2),
            )
        ],
        classes=[A, B],
        slices=[many_devices(SLICE1, NODE1, POOL1, DRIVER_A, MAX - 1), many_devices(SLICE2, NODE1, POOL2, DRIVER_B, 2)],
        want=[
            allocation(
                local(NODE1),
                result(R0S1, DRIVER_A, POOL1, "device-0"),
                result(R0S1, DRIVER_A, POOL1, "device-1"),
                result(REQ1, DRIVER_B, POOL2, "device-0"),
                result(REQ1, DRIVER_B, POOL2, "device-1"),
            )
        ],
        invocations=42,
    ),
}


@pytest.mark.parametrize("case", list(TAINT_CASES.values()), ids=list(TAINT_CASES))
def test_device_taints(case: Case) -> None:
    run_case(case)


@pytest.mark.parametrize("case", list(MORE_PRIORITIZED.values()), ids=list(MORE_PRIORITIZED))
def test_all_mode_and_limits(case: Case) -> None:
    run_case(case)


def bdev(name: str, binding: str, failure: str, **kw: object) -> dict:
    return device(name, binding=[binding], failure=[failure], **kw)  # type: ignore[arg-type]


def bresult(req: str, dev: str, binding: str | None = None, failure: str | None = None, *tolerations: dict) -> dict:
    return result(
        req,
        DRIVER_A,
        POOL1,
        dev,
        False,
        *tolerations,
        binding=[binding] if binding else None,
        failure=[failure] if failure else None,
    )


PARTITIONABLE_BINDING = features(partitionable_devices=True, binding_conditions=True)
KEY1_TAINT = {"key": "key1", "value": "value1", "effect": "NoSchedule"}

BINDING_CASES = {
    "device-binding-conditions": Case(
        features=BINDING,
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1))],
        classes=[A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, bdev(DEVICE1, "IsPrepare", "BindingFailed"))],
        want=[allocation(local(NODE1), bresult(REQ0, DEVICE1, "IsPrepare", "BindingFailed"))],
    ),
    "binding-conditions-multiple-devices": Case(
        features=BINDING,
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 2), request(REQ1, CLASS_A, 1))],
        classes=[A],
        slices=[
            slice_(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                bdev(DEVICE1, "IsPrepare", "BindingFailed"),
                bdev(DEVICE2, "IsPrepare2", "BindingFailed2"),
                bdev(DEVICE3, "IsPrepare3", "BindingFailed3"),
            )
        ],
        want=[
            allocation(
                local(NODE1),
                bresult(REQ0, DEVICE1, "IsPrepare", "BindingFailed"),
                bresult(REQ0, DEVICE2, "IsPrepare2", "BindingFailed2"),
                bresult(REQ1, DEVICE3, "IsPrepare3", "BindingFailed3"),
            )
        ],
    ),
    "binding-conditions-with-and-without": Case(
        features=BINDING,
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1), request(REQ1, CLASS_A, 1))],
        classes=[A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1), bdev(DEVICE2, "IsPrepare", "BindingFailed"))],
        want=[allocation(local(NODE1), bresult(REQ0, DEVICE1), bresult(REQ1, DEVICE2, "IsPrepare", "BindingFailed"))],
    ),
    "binding-conditions-without-feature-gate": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1))],
        classes=[A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, bdev(DEVICE1, "IsPrepare", "BindingFailed"))],
    ),
    "node-restriction": Case(
        features=BINDING,
        claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)],
        classes=[A],
        slices=[
            slice_(SLICE1, label_selector(PLANET_KEY, EARTH), POOL1, DRIVER_A, device(DEVICE1, binds_to_node=True))
        ],
        want=[allocation(local(NODE1), result(REQ0, DRIVER_A, POOL1, DEVICE1))],
    ),
    "partitionable-devices-with-binding-conditions": Case(
        features=PARTITIONABLE_BINDING,
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1))],
        classes=[A],
        slices=[
            slice_(
                SLICE1,
                NODE1,
                pool(POOL1, 2),
                DRIVER_A,
                cdev(DEVICE1, _gi(COUNTER_SET1, "4Gi"), binding=["IsPrepare"], failure=["BindingFailed"]),
            ),
            counters_slice(SLICE2, NODE1, pool(POOL1, 2), DRIVER_A, counter_set(COUNTER_SET1, memory="8Gi")),
        ],
        want=[allocation(local(NODE1), bresult(REQ0, DEVICE1, "IsPrepare", "BindingFailed"))],
    ),
    "partitionable-devices-with-binding-conditions-multiple": Case(
        features=PARTITIONABLE_BINDING,
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 2))],
        classes=[A],
        slices=[
            slice_(
                SLICE1,
                NODE1,
                pool(POOL1, 2),
                DRIVER_A,
                cdev(DEVICE1, _gi(COUNTER_SET1, "4Gi"), binding=["IsPrepare"], failure=["BindingFailed"]),
                cdev(DEVICE2, _gi(COUNTER_SET1, "4Gi"), binding=["IsPrepare2"], failure=["BindingFailed2"]),
            ),
            counters_slice(SLICE2, NODE1, pool(POOL1, 2), DRIVER_A, counter_set(COUNTER_SET1, memory="8Gi")),
        ],
        want=[
            allocation(
                local(NODE1),
                bresult(REQ0, DEVICE1, "IsPrepare", "BindingFailed"),
                bresult(REQ0, DEVICE2, "IsPrepare2", "BindingFailed2"),
            )
        ],
    ),
    "partitionable-devices-with-binding-conditions-some-devices-no-conditions": Case(
        features=PARTITIONABLE_BINDING,
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 3))],
        classes=[A],
        slices=[
            slice_(
                SLICE1,
                NODE1,
                pool(POOL1, 2),
                DRIVER_A,
                cdev(DEVICE1, _gi(COUNTER_SET1, "2Gi"), binding=["IsPrepare"], failure=["BindingFailed"]),
                cdev(DEVICE2, _gi(COUNTER_SET1, "2Gi")),
                cdev(DEVICE3, _gi(COUNTER_SET1, "4Gi"), binding=["IsReady"], failure=["BindingTimeout"]),
            ),
            counters_slice(SLICE2, NODE1, pool(POOL1, 2), DRIVER_A, counter_set(COUNTER_SET1, memory="8Gi")),
        ],
        want=[
            allocation(
                local(NODE1),
                bresult(REQ0, DEVICE1, "IsPrepare", "BindingFailed"),
                bresult(REQ0, DEVICE2),
                bresult(REQ0, DEVICE3, "IsReady", "BindingTimeout"),
            )
        ],
    ),
    "partitionable-devices-with-binding-conditions-multi-slices": Case(
        features=PARTITIONABLE_BINDING,
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 2))],
        classes=[A],
        slices=[
            slice_(
                SLICE4,
                NODE1,
                pool(POOL1, 4),
                DRIVER_A,
                cdev(DEVICE1, _gi(COUNTER_SET1, "4Gi"), binding=["IsPrepare"], failure=["BindingFailed"]),
            ),
            counters_slice(SLICE3, NODE1, pool(POOL1, 4), DRIVER_A, counter_set(COUNTER_SET1, memory="8Gi")),
            slice_(SLICE2, NODE1, pool(POOL1, 4), DRIVER_A, cdev(DEVICE2, _gi(COUNTER_SET2, "4Gi"))),
            counters_slice(SLICE1, NODE1, pool(POOL1, 4), DRIVER_A, counter_set(COUNTER_SET2, memory="8Gi")),
        ],
        want=[allocation(local(NODE1), bresult(REQ0, DEVICE2), bresult(REQ0, DEVICE1, "IsPrepare", "BindingFailed"))],
    ),
    "partitionable-devices-with-binding-conditions-and-taints": Case(
        features=features(partitionable_devices=True, binding_conditions=True, device_taints=True),
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 2))],
        classes=[A],
        slices=[
            slice_(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                cdev(
                    DEVICE1,
                    _gi(COUNTER_SET1, "4Gi"),
                    binding=["IsPrepare"],
                    failure=["BindingFailed"],
                    taints=[KEY1_TAINT],
                ),
                cdev(DEVICE2, _gi(COUNTER_SET1, "4Gi")),
            ),
            counters_slice(SLICE2, NODE1, POOL1, DRIVER_A, counter_set(COUNTER_SET1, memory="8Gi")),
        ],
    ),
    "partitionable-devices-with-binding-conditions-and-taints-tolerated": Case(
        features=features(partitionable_devices=True, binding_conditions=True, device_taints=True),
        claims=[with_tolerations(claim(CLAIM0, request(REQ0, CLASS_A, 2)), TOLERATION_NO_SCHEDULE_KEY1)],
        classes=[A],
        slices=[
            slice_(
                SLICE1,
                NODE1,
                pool(POOL1, 2),
                DRIVER_A,
                cdev(
                    DEVICE1,
                    _gi(COUNTER_SET1, "4Gi"),
                    binding=["IsPrepare"],
                    failure=["BindingFailed"],
                    taints=[KEY1_TAINT],
                ),
                cdev(DEVICE2, _gi(COUNTER_SET1, "4Gi")),
            ),
            counters_slice(SLICE2, NODE1, pool(POOL1, 2), DRIVER_A, counter_set(COUNTER_SET1, memory="8Gi")),
        ],
        want=[
            allocation(
                local(NODE1),
                bresult(REQ0, DEVICE1, "IsPrepare", "BindingFailed", TOLERATION_NO_SCHEDULE_KEY1),
                bresult(REQ0, DEVICE2, None, None, TOLERATION_NO_SCHEDULE_KEY1),
            )
        ],
    ),
}


@pytest.mark.parametrize("case", list(BINDING_CASES.values()), ids=list(BINDING_CASES))
def test_binding_conditions(case: Case) -> None:
    run_case(case)


def mdev(name: str, value: str | None = None, policy: dict | None = None, **kw: object) -> dict:
    """A device allowing multiple allocations, with capacity ``capacity-0`` of ``value``."""
    return device(name, {CAPACITY0: value} if value else None, multi=True, policy=policy, **kw)  # type: ignore[arg-type]


def sresult(req: str, dev: str, consumed: str | None = None) -> dict:
    """A share of a device: its share ID and what it consumes of ``capacity-0``."""
    return result(req, DRIVER_A, POOL1, dev, consumed={CAPACITY0: consumed} if consumed else None, share=True)


MULTI_A = klass(CLASS_A, DRIVER_A, multi=True)
DEDICATED_A = klass(CLASS_A, DRIVER_A, multi=False)


def _one_claim(*requests: dict) -> list[dict]:
    return [claim(CLAIM0, *requests)]


def _two_claims(cap: str | None = None) -> list[dict]:
    return [
        claim(CLAIM0, request(REQ0, CLASS_A, 1, capacity=cap)),
        claim(CLAIM1, request(REQ0, CLASS_A, 1, capacity=cap)),
    ]


CONSUMABLE_CASES = {
    "consumable-capacity-disabled-feature": Case(
        features=BINDING,
        claims=_one_claim(request(REQ0, CLASS_A, 1, capacity="1")),
        classes=[A],
        slices=[one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        error="claim claim-0, request req-0: has capacity requests, but the DRAConsumableCapacity feature is disabled",
    ),
    "consumable-capacity-disabled-feature-with-prioritized-list": Case(
        features=BINDING,
        claims=_one_claim(
            prioritized(REQ0, sub_request(SUB0, CLASS_A, 1, capacity="1"), sub_request(SUB1, CLASS_A, 1, capacity="1"))
        ),
        classes=[A],
        slices=[one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        error="claim claim-0, subrequest subReq-0: has capacity requests, but the DRAConsumableCapacity feature is disabled",
    ),
    "consumable-capacity-multi-allocatable-device-with-missing-capacity-request": Case(
        features=CONSUMABLE,
        claims=_one_claim(request(REQ0, CLASS_A, 1, capacity="1")),
        classes=[A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, {"capacity-1": "1"}, multi=True))],
    ),
    "consumable-capacity-multi-allocatable-device-allocation-mode-all-with-missing-capacity-request": Case(
        features=CONSUMABLE,
        claims=_one_claim(all_request(REQ0, CLASS_A, capacity="1")),
        classes=[MULTI_A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, {"capacity-1": "1"}, multi=True))],
    ),
    "consumable-capacity-multi-allocatable-device-without-capacity-without-capacity-request": Case(
        features=CONSUMABLE,
        claims=_two_claims(),
        classes=[MULTI_A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, mdev(DEVICE1))],
        want=[allocation(local(NODE1), sresult(REQ0, DEVICE1)), allocation(local(NODE1), sresult(REQ0, DEVICE1))],
    ),
    "consumable-capacity-multi-allocatable-device-without-policy-without-capacity-request": Case(
        features=CONSUMABLE,
        claims=_two_claims(),
        classes=[MULTI_A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, mdev(DEVICE1, "1"), mdev(DEVICE2, "1"))],
        want=[
            allocation(local(NODE1), sresult(REQ0, DEVICE1, "1")),
            allocation(local(NODE1), sresult(REQ0, DEVICE2, "1")),
        ],
    ),
    "consumable-capacity-multi-allocatable-device-without-policy-without-capacity-request-block": Case(
        features=CONSUMABLE,
        claims=_two_claims(),
        classes=[MULTI_A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, mdev(DEVICE1, "2"))],
    ),
    "consumable-capacity-multi-allocatable-device-without-policy-with-capacity-request": Case(
        features=CONSUMABLE,
        claims=_two_claims("1"),
        classes=[MULTI_A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, mdev(DEVICE1, "2"))],
        want=[
            allocation(local(NODE1), sresult(REQ0, DEVICE1, "1")),
            allocation(local(NODE1), sresult(REQ0, DEVICE1, "1")),
        ],
    ),
    "consumable-capacity-multi-allocatable-device-with-policy-without-capacity-request": Case(
        features=CONSUMABLE,
        claims=_two_claims(),
        classes=[MULTI_A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, mdev(DEVICE1, "4", RANGE_POLICY))],
        want=[
            allocation(local(NODE1), sresult(REQ0, DEVICE1, "2")),
            allocation(local(NODE1), sresult(REQ0, DEVICE1, "2")),
        ],
    ),
    "consumable-capacity-multi-allocatable-device-with-zero-request-policy": Case(
        features=CONSUMABLE,
        claims=_two_claims(),
        classes=[MULTI_A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, mdev(DEVICE1, "1", valid_values_policy("0")))],
        want=[
            allocation(local(NODE1), sresult(REQ0, DEVICE1, "0")),
            allocation(local(NODE1), sresult(REQ0, DEVICE1, "0")),
        ],
    ),
    "consumable-capacity-multi-allocatable-device-violates-zero-request-policy": Case(
        features=CONSUMABLE,
        claims=_one_claim(request(REQ0, CLASS_A, 1, capacity="1")),
        classes=[MULTI_A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, mdev(DEVICE1, "1", valid_values_policy("0")))],
    ),
    "consumable-capacity-multi-allocatable-device-with-range-policy-with-capacity-request": Case(
        features=CONSUMABLE,
        claims=_two_claims("1"),
        classes=[MULTI_A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, mdev(DEVICE1, "4", RANGE_POLICY))],
        want=[
            allocation(local(NODE1), sresult(REQ0, DEVICE1, "2")),
            allocation(local(NODE1), sresult(REQ0, DEVICE1, "2")),
        ],
    ),
    "consumable-capacity-multi-allocatable-device-with-range-policy-step": Case(
        features=CONSUMABLE,
        claims=_one_claim(request(REQ0, CLASS_A, 1, capacity="3")),
        classes=[MULTI_A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, mdev(DEVICE1, "4", RANGE_POLICY))],
        want=[allocation(local(NODE1), sresult(REQ0, DEVICE1, "4"))],
    ),
    "consumable-capacity-multi-allocatable-device-with-valid-values-policy": Case(
        features=CONSUMABLE,
        claims=_one_claim(request(REQ0, CLASS_A, 1, capacity="2")),
        classes=[MULTI_A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, mdev(DEVICE1, "4", valid_values_policy("1", "2")))],
        want=[allocation(local(NODE1), sresult(REQ0, DEVICE1, "2"))],
    ),
    "consumable-capacity-multi-allocatable-device-with-valid-values-policy-round-up": Case(
        features=CONSUMABLE,
        claims=_one_claim(request(REQ0, CLASS_A, 1, capacity="2")),
        classes=[MULTI_A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, mdev(DEVICE1, "3", valid_values_policy("1", "3")))],
        want=[allocation(local(NODE1), sresult(REQ0, DEVICE1, "3"))],
    ),
    "consumable-capacity-multi-allocatable-device-with-exceeded-consumable-capacity-request": Case(
        features=CONSUMABLE,
        claims=[
            claim(CLAIM0, request(REQ0, CLASS_A, 1, capacity="1")),
            claim(CLAIM1, request(REQ0, CLASS_A, 1, capacity="2")),
        ],
        classes=[MULTI_A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, mdev(DEVICE1, "2", RANGE_POLICY))],
    ),
    "consumable-capacity-multi-allocatable-device-with-request-over-max-sharing-policy": Case(
        features=CONSUMABLE,
        claims=_one_claim(request(REQ0, CLASS_A, 1, capacity="6")),
        classes=[MULTI_A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, mdev(DEVICE1, "10", RANGE_POLICY))],
    ),
    "consumable-capacity-multi-allocatable-device-with-allocated-capacity-use-remaining": Case(
        features=CONSUMABLE,
        claims=_one_claim(request(REQ0, CLASS_A, 1, capacity="2")),
        consumed={(DRIVER_A, POOL1, DEVICE1): {CAPACITY0: "2"}},
        classes=[MULTI_A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, mdev(DEVICE1, "4", RANGE_POLICY))],
        want=[allocation(local(NODE1), sresult(REQ0, DEVICE1, "2"))],
    ),
    "consumable-capacity-multi-allocatable-device-with-allocated-capacity-next-device": Case(
        features=CONSUMABLE,
        claims=_one_claim(request(REQ0, CLASS_A, 1, capacity="2")),
        consumed={(DRIVER_A, POOL1, DEVICE1): {CAPACITY0: "2"}},
        classes=[MULTI_A],
        slices=[
            slice_(SLICE1, NODE1, POOL1, DRIVER_A, mdev(DEVICE1, "2", RANGE_POLICY), mdev(DEVICE2, "2", RANGE_POLICY))
        ],
        want=[allocation(local(NODE1), sresult(REQ0, DEVICE2, "2"))],
    ),
    "consumable-capacity-with-multi-allocatable-device-backtrack": Case(
        features=CONSUMABLE,
        claims=[
            claim(
                CLAIM0,
                request(REQ0, CLASS_A, 1, capacity="2"),
                request(REQ1, CLASS_A, 1, capacity="2"),
                constraints=[match(STRING_ATTRIBUTE)],
            ),
            claim(CLAIM1, request(REQ0, CLASS_A, 1, capacity="2")),
        ],
        classes=[A],
        slices=[
            slice_(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                mdev(DEVICE2, "2", RANGE_POLICY, attributes=attrs(stringAttribute="stringAttributeValue1")),
                mdev(DEVICE1, "4", RANGE_POLICY, attributes=attrs(stringAttribute="stringAttributeValue2")),
            )
        ],
        want=[
            allocation(local(NODE1), sresult(REQ0, DEVICE1, "2"), sresult(REQ1, DEVICE1, "2")),
            allocation(local(NODE1), sresult(REQ0, DEVICE2, "2")),
        ],
    ),
    "consumable-capacity-multi-allocatable-device-with-subrequest": Case(
        features=CONSUMABLE,
        claims=_one_claim(
            prioritized(
                REQ0,
                sub_request(SUB0, CLASS_A, 1, capacity="4"),
                sub_request(SUB1, CLASS_A, 1, capacity="2"),
                sub_request(SUB1, CLASS_A, 1),
            )
        ),
        classes=[MULTI_A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, mdev(DEVICE1, "2", RANGE_POLICY))],
        want=[allocation(local(NODE1), sresult(R0S1, DEVICE1, "2"))],
    ),
    "consumable-capacity-multi-allocatable-device-with-no-available-consumable-capacity": Case(
        features=CONSUMABLE,
        claims=_one_claim(request(REQ0, CLASS_A, 1, capacity="2")),
        consumed={(DRIVER_A, POOL1, DEVICE1): {CAPACITY0: "2"}},
        classes=[MULTI_A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, mdev(DEVICE1, "2", RANGE_POLICY))],
    ),
    "consumable-capacity-multi-allocatable-device-allocation-mode-all-filter-out-no-capacity": Case(
        features=CONSUMABLE,
        claims=_one_claim(all_request(REQ0, CLASS_A, capacity="2")),
        classes=[MULTI_A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, mdev(DEVICE1, "2"), mdev(DEVICE2))],
        want=[allocation(local(NODE1), sresult(REQ0, DEVICE1, "2"))],
    ),
    "consumable-capacity-multi-allocatable-device-allocation-mode-all-filter-out-insufficient-capacity": Case(
        features=CONSUMABLE,
        claims=_one_claim(all_request(REQ0, CLASS_A, capacity="2")),
        classes=[MULTI_A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, mdev(DEVICE1, "2"), mdev(DEVICE2, "1"))],
        want=[allocation(local(NODE1), sresult(REQ0, DEVICE1, "2"))],
    ),
    "consumable-capacity-multi-allocatable-device-allocation-mode-all-allocating-sufficient": Case(
        features=CONSUMABLE,
        claims=_one_claim(request(REQ0, CLASS_A, 1, capacity="1"), all_request(REQ1, CLASS_A, capacity="1")),
        classes=[A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, mdev(DEVICE1, "2"), mdev(DEVICE2, "1"))],
        want=[
            allocation(
                local(NODE1), sresult(REQ0, DEVICE1, "1"), sresult(REQ1, DEVICE1, "1"), sresult(REQ1, DEVICE2, "1")
            )
        ],
    ),
    "consumable-capacity-multi-allocatable-device-allocation-mode-all-in-use-sufficient": Case(
        features=CONSUMABLE,
        consumed={(DRIVER_A, POOL1, DEVICE1): {CAPACITY0: "1"}},
        claims=_one_claim(all_request(REQ0, CLASS_A, capacity="1")),
        classes=[A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, mdev(DEVICE1, "2"), mdev(DEVICE2, "1"))],
        want=[allocation(local(NODE1), sresult(REQ0, DEVICE1, "1"), sresult(REQ0, DEVICE2, "1"))],
    ),
    "consumable-capacity-multi-allocatable-device-allocation-mode-all-allocating-insufficient": Case(
        features=CONSUMABLE,
        claims=_one_claim(request(REQ0, CLASS_A, 1, capacity="1"), all_request(REQ1, CLASS_A, capacity="1")),
        classes=[A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, mdev(DEVICE1, "1"), mdev(DEVICE2, "1"))],
    ),
    "consumable-capacity-multi-allocatable-device-allocation-mode-all-in-use-insufficient": Case(
        features=CONSUMABLE,
        consumed={(DRIVER_A, POOL1, DEVICE1): {CAPACITY0: "1"}},
        claims=_one_claim(all_request(REQ0, CLASS_A, capacity="1")),
        classes=[A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, mdev(DEVICE1, "1"), mdev(DEVICE2, "1"))],
        want=[allocation(local(NODE1), sresult(REQ0, DEVICE2, "1"))],
    ),
    "consumable-capacity-dedicated-device-with-consumable-capacity-request": Case(
        features=CONSUMABLE,
        claims=_one_claim(request(REQ0, CLASS_A, 1, capacity="1")),
        classes=[DEDICATED_A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, {CAPACITY0: "1"}))],
        want=[allocation(local(NODE1), result(REQ0, DRIVER_A, POOL1, DEVICE1))],
    ),
    "consumable-capacity-dedicated-device-with-multiple-consumable-capacity-request": Case(
        features=CONSUMABLE,
        claims=_two_claims("1"),
        classes=[DEDICATED_A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, {CAPACITY0: "2"}, policy=RANGE_POLICY))],
    ),
}


@pytest.mark.parametrize("case", list(CONSUMABLE_CASES.values()), ids=list(CONSUMABLE_CASES))
def test_consumable_capacity(case: Case) -> None:
    run_case(case)


PCC = features(partitionable_devices=True, consumable_capacity=True)
R2S0 = f"{REQ2}/{SUB0}"


def _range_on(d: dict, name: str, value: str) -> dict:
    """Upstream's withCapacityRequestPolicyRange on capacity ``name`` only."""
    d.setdefault("capacity", {})[name] = {"value": value, "requestPolicy": dict(RANGE_POLICY)}
    return d


def _bool_first(*reqs: str) -> list[dict]:
    return [
        prioritized(
            r,
            sub_request(SUB0, CLASS_A, 1, sel(f'device.attributes["{DRIVER_A}"].boolAttribute')),
            sub_request(SUB1, CLASS_A, 1),
        )
        for r in reqs
    ]


SHARED_CASES = {
    "allow-multiple-allocations-exclude-multi-allocatable-device-by-class-selector": Case(
        features=CONSUMABLE,
        claims=_one_claim(request(REQ0, CLASS_A, 1, capacity="1")),
        classes=[DEDICATED_A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, mdev(DEVICE1, "1"))],
    ),
    "allow-multiple-allocations-not-allocate-multi-allocatable-device-which-already-dedicated": Case(
        features=CONSUMABLE,
        allocated=[(DRIVER_A, POOL1, DEVICE1)],
        claims=_one_claim(request(REQ0, CLASS_A, 1, capacity="1")),
        classes=[MULTI_A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, mdev(DEVICE1, "2", RANGE_POLICY))],
    ),
    "allow-multiple-allocations-not-allocate-dedicated-device-which-change-from-multi-allocatable": Case(
        features=CONSUMABLE,
        claims=_one_claim(request(REQ0, CLASS_A, 1, capacity="1")),
        consumed={(DRIVER_A, POOL1, DEVICE1): {CAPACITY0: "1"}},
        classes=[MULTI_A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, {CAPACITY0: "2"}, policy=RANGE_POLICY))],
    ),
    "allow-multiple-allocations-with-partitionable-device": Case(
        features=PCC,
        claims=_one_claim(
            request(REQ0, CLASS_A, 1),
            prioritized(REQ1, sub_request(SUB0, CLASS_A, 1, _mem("6Gi")), sub_request(SUB1, CLASS_A, 1, _mem("4Gi"))),
        ),
        classes=[MULTI_A],
        slices=[
            slice_(
                SLICE1,
                NODE1,
                pool(POOL1, 2),
                DRIVER_A,
                cdev(DEVICE1, _gi(COUNTER_SET1, "4Gi"), multi=True),
                cdev(DEVICE2, _gi(COUNTER_SET1, "6Gi"), multi=True),
                cdev(DEVICE3, _gi(COUNTER_SET1, "4Gi"), multi=True),
            ),
            counters_slice(SLICE2, NODE1, pool(POOL1, 2), DRIVER_A, counter_set(COUNTER_SET1, memory="8Gi")),
        ],
        want=[
            allocation(
                local(NODE1),
                result(REQ0, DRIVER_A, POOL1, DEVICE1, consumed={"memory": "4Gi"}),
                result(R1S1, DRIVER_A, POOL1, DEVICE3, consumed={"memory": "4Gi"}),
            )
        ],
    ),
    "allow-multiple-allocations-with-shared-device-counter-cross-cycle": Case(
        features=PCC,
        claims=_one_claim(request(REQ0, CLASS_A, 1, sel(f'device.attributes["{DRIVER_A}"].mode == "b"'), capacity="1")),
        shared=[(DRIVER_A, POOL1, DEVICE1)],
        consumed={(DRIVER_A, POOL1, DEVICE1): {CAPACITY0: "1"}},
        classes=[MULTI_A],
        slices=[
            slice_(
                SLICE1,
                NODE1,
                pool(POOL1, 2),
                DRIVER_A,
                cdev(DEVICE1, consumes(COUNTER_SET1, **{CAPACITY0: "1"}), attributes=attrs(mode="a"), multi=True),
                cdev(DEVICE2, consumes(COUNTER_SET1, **{CAPACITY0: "1"}), attributes=attrs(mode="b"), multi=True),
            ),
            counters_slice(SLICE2, NODE1, pool(POOL1, 2), DRIVER_A, counter_set(COUNTER_SET1, **{CAPACITY0: "1"})),
        ],
    ),
    "consumable-capacity-with-partitionable-device-multiple-capacity-pools": Case(
        features=PCC,
        claims=_one_claim(
            request(REQ0, CLASS_A, 1, capacity="1"),
            request(REQ2, CLASS_A, 1, capacity="2"),
            prioritized(
                REQ1,
                sub_request(
                    SUB0,
                    CLASS_A,
                    1,
                    sel(f'device.capacity["{DRIVER_A}"]["{CAPACITY0}"].compareTo(quantity("4")) >= 0'),
                    capacity="1",
                ),
                sub_request(
                    SUB1,
                    CLASS_A,
                    1,
                    sel(f'device.capacity["{DRIVER_A}"]["{CAPACITY0}"].compareTo(quantity("2")) >= 0'),
                    capacity="1",
                ),
            ),
        ),
        classes=[A],
        slices=[
            slice_(
                SLICE1,
                NODE1,
                pool(POOL1, 2),
                DRIVER_A,
                *(
                    _range_on(
                        cdev(
                            name,
                            consumes(COUNTER_SET1, **{CAPACITY0: c0}),
                            consumes(COUNTER_SET2, **{"capacity-1": "4"}),
                            multi=True,
                        ),
                        "capacity-1",
                        "4",
                    )
                    for name, c0 in ((DEVICE1, "2"), (DEVICE2, "4"), (DEVICE3, "2"))
                ),
            ),
            counters_slice(
                SLICE2,
                NODE1,
                pool(POOL1, 2),
                DRIVER_A,
                counter_set(COUNTER_SET1, **{CAPACITY0: "4"}),
                counter_set(COUNTER_SET2, **{"capacity-1": "8"}),
            ),
        ],
        want=[
            allocation(
                local(NODE1),
                result(REQ0, DRIVER_A, POOL1, DEVICE1, consumed={CAPACITY0: "1", "capacity-1": "2"}),
                result(REQ2, DRIVER_A, POOL1, DEVICE3, consumed={CAPACITY0: "2", "capacity-1": "2"}),
                result(R1S1, DRIVER_A, POOL1, DEVICE1, consumed={CAPACITY0: "1", "capacity-1": "2"}),
            )
        ],
    ),
    "with-distinct-constraints": Case(
        features=CONSUMABLE,
        claims=[
            claim(
                CLAIM0,
                request(REQ0, CLASS_A, 1),
                request(REQ1, CLASS_A, 1),
                request(REQ2, CLASS_A, 1),
                request(REQ3, CLASS_A, 1),
                constraints=[
                    distinct(BOOL_ATTRIBUTE, REQ0, REQ1),
                    distinct(VERSION_ATTRIBUTE, REQ0, REQ1, REQ2),
                    distinct(INT_ATTRIBUTE, REQ0, REQ1, REQ2, REQ3),
                ],
            )
        ],
        classes=[A],
        slices=[
            slice_(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                *(
                    mdev(name, attributes=attrs(driverVersion=("version", v), numa=n, boolAttribute=b))
                    for name, v, n, b in (
                        (DEVICE1, "1.0.0", 0, True),
                        (DEVICE2, "1.0.1", 1, False),
                        (DEVICE3, "1.0.2", 2, True),
                        (DEVICE4, "1.0.0", 3, True),
                    )
                ),
            )
        ],
        want=[
            allocation(
                local(NODE1),
                sresult(REQ0, DEVICE1),
                sresult(REQ1, DEVICE2),
                sresult(REQ2, DEVICE3),
                sresult(REQ3, DEVICE4),
            )
        ],
    ),
    "with-distinct-constraints-attribute-not-set": Case(
        features=CONSUMABLE,
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1), constraints=[distinct(BOOL_ATTRIBUTE, REQ0)])],
        classes=[A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, mdev(DEVICE1))],
    ),
    "with-distinct-constraints-unknown-type-attribute": Case(
        features=CONSUMABLE,
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1), constraints=[distinct(BOOL_ATTRIBUTE, REQ0)])],
        classes=[A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, mdev(DEVICE1, attributes={"boolAttribute": {}}))],
        error="unsupported attribute value",
    ),
    "with-distinct-constraints-with-subrequests": Case(
        features=CONSUMABLE,
        claims=[claim(CLAIM0, *_bool_first(REQ0, REQ1, REQ2), constraints=[distinct(BOOL_ATTRIBUTE, REQ0, REQ1)])],
        classes=[A],
        slices=[
            slice_(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                mdev(DEVICE1, attributes=attrs(boolAttribute=True)),
                mdev(DEVICE2, attributes=attrs(boolAttribute=False)),
            )
        ],
        want=[allocation(local(NODE1), sresult(R0S0, DEVICE1), sresult(R1S1, DEVICE2), sresult(R2S0, DEVICE1))],
    ),
    "distinct-constraint-one-multi-allocatable-device-with-distinct-constraint": Case(
        features=CONSUMABLE,
        claims=[
            claim(
                CLAIM0,
                request(REQ0, CLASS_A, 1, capacity="1"),
                request(REQ1, CLASS_A, 1, capacity="1"),
                constraints=[distinct(STRING_ATTRIBUTE)],
            )
        ],
        classes=[MULTI_A],
        slices=[
            slice_(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                mdev(DEVICE1, "2", RANGE_POLICY, attributes=attrs(stringAttribute="stringAttributeValue")),
            )
        ],
    ),
    "distinct-constraint-two-multi-allocatable-devices-with-distinct-constraint": Case(
        features=CONSUMABLE,
        claims=[
            claim(
                CLAIM0,
                request(REQ0, CLASS_A, 1, capacity="2"),
                request(REQ1, CLASS_A, 1, capacity="2"),
                constraints=[distinct(STRING_ATTRIBUTE)],
            )
        ],
        classes=[MULTI_A],
        slices=[
            slice_(
                SLICE1,
                NODE1,
                pool(POOL1, 2),
                DRIVER_A,
                mdev(DEVICE1, "4", RANGE_POLICY, attributes=attrs(stringAttribute="stringAttributeValue1")),
            ),
            slice_(
                SLICE1,
                NODE1,
                pool(POOL1, 2),
                DRIVER_A,
                mdev(DEVICE2, "4", RANGE_POLICY, attributes=attrs(stringAttribute="stringAttributeValue2")),
            ),
        ],
        want=[allocation(local(NODE1), sresult(REQ0, DEVICE1, "2"), sresult(REQ1, DEVICE2, "2"))],
    ),
}


@pytest.mark.parametrize("case", list(SHARED_CASES.values()), ids=list(SHARED_CASES))
def test_shared_devices_and_distinct_attributes(case: Case) -> None:
    run_case(case)


def gen_slice(name: str, node_name: str, dev: str, generation: int, count: int = 2) -> dict:
    return slice_(name, node_name, pool(POOL1, count, generation), DRIVER_A, device(dev))


POOL_CASES = {
    "allocation-mode-all-with-multi-host-resource-pool": Case(
        claims=[claim(CLAIM0, all_request(REQ0, CLASS_A))],
        classes=[A],
        slices=[
            slice_(SLICE1, NODE1, pool(POOL1, 2), DRIVER_A, device(DEVICE1)),
            slice_(SLICE2, NODE2, pool(POOL1, 2), DRIVER_A, device(DEVICE2)),
        ],
        want=[allocation(local(NODE1), result(REQ0, DRIVER_A, POOL1, DEVICE1))],
    ),
    "multi-host-resource-pool-with-stale-slice-for-current-node": Case(
        claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)],
        classes=[A],
        slices=[gen_slice(SLICE1, NODE1, DEVICE1, 1), gen_slice(SLICE2, NODE2, DEVICE2, 2)],
    ),
    "multi-host-resource-pool-complete-update-from-node-1-to-node-2": Case(
        claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)],
        classes=[A],
        slices=[
            gen_slice(SLICE1, NODE1, DEVICE1, 1),
            gen_slice(SLICE1, NODE1, DEVICE2, 1),
            gen_slice(SLICE2, NODE2, DEVICE1, 2),
            gen_slice(SLICE2, NODE2, DEVICE2, 2),
        ],
        want=[allocation(local(NODE1), result(REQ0, DRIVER_A, POOL1, DEVICE1))],
    ),
    "multi-host-resource-pool-complete-update-from-node-2-to-node-1": Case(
        claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)],
        classes=[A],
        slices=[
            gen_slice(SLICE1, NODE2, DEVICE1, 1),
            gen_slice(SLICE1, NODE2, DEVICE2, 1),
            gen_slice(SLICE2, NODE1, DEVICE1, 2),
            gen_slice(SLICE2, NODE1, DEVICE2, 2),
        ],
        want=[allocation(local(NODE1), result(REQ0, DRIVER_A, POOL1, DEVICE1))],
    ),
    "multi-host-resource-pool-incomplete-update-from-node-1-to-node-2": Case(
        claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)],
        classes=[A],
        slices=[
            gen_slice(SLICE1, NODE1, DEVICE1, 1),
            gen_slice(SLICE1, NODE1, DEVICE2, 1),
            gen_slice(SLICE2, NODE2, DEVICE1, 2),
        ],
        want=[allocation(local(NODE1), result(REQ0, DRIVER_A, POOL1, DEVICE1))],
    ),
    "multi-host-resource-pool-incomplete-update-from-node-2-to-node-1": Case(
        claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)],
        classes=[A],
        slices=[
            gen_slice(SLICE1, NODE2, DEVICE1, 1),
            gen_slice(SLICE1, NODE2, DEVICE2, 1),
            gen_slice(SLICE2, NODE1, DEVICE1, 2),
        ],
    ),
    "partitionable-devices-same-counter-set-name-in-different-resource-slices": Case(
        features=PARTITIONABLE,
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1))],
        classes=[A],
        slices=[
            slice_(SLICE1, NODE1, pool(POOL1, 4), DRIVER_A, device(DEVICE1)),
            counters_slice(SLICE2, NODE1, pool(POOL1, 4), DRIVER_A, counter_set(COUNTER_SET1)),
            slice_(SLICE3, NODE1, pool(POOL1, 4), DRIVER_A, device(DEVICE2)),
            counters_slice(SLICE4, NODE1, pool(POOL1, 4), DRIVER_A, counter_set(COUNTER_SET1)),
        ],
        error="invalid resource pools were encountered",
        node_error=True,
    ),
    "partitionable-devices-device-counter-consumption-references-unknown-counter-set": Case(
        features=PARTITIONABLE,
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1))],
        classes=[A],
        slices=[
            slice_(SLICE1, NODE1, pool(POOL1, 2), DRIVER_A, device(DEVICE1, consumes=[consumes(COUNTER_SET2)])),
            counters_slice(SLICE2, NODE1, pool(POOL1, 2), DRIVER_A, counter_set(COUNTER_SET1)),
        ],
        error="invalid resource pools were encountered",
        node_error=True,
    ),
    "partitionable-devices-device-counter-consumption-references-unknown-counter-in-counter-set": Case(
        features=PARTITIONABLE,
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1))],
        classes=[A],
        slices=[
            slice_(
                SLICE1, NODE1, pool(POOL1, 2), DRIVER_A, cdev(DEVICE1, _gi(COUNTER_SET1, "8Gi"), from_counters=False)
            ),
            counters_slice(
                SLICE2, NODE1, pool(POOL1, 2), DRIVER_A, counter_set(COUNTER_SET1, **{"other-memory": "8Gi"})
            ),
        ],
        error="invalid resource pools were encountered",
        node_error=True,
    ),
    "partitionable-devices-device-counter-consumption-references-counter-set-in-other-pool": Case(
        features=PARTITIONABLE,
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1))],
        classes=[A],
        slices=[
            slice_(SLICE1, NODE1, POOL1, DRIVER_A, cdev(DEVICE1, _gi(COUNTER_SET1, "8Gi"), from_counters=False)),
            counters_slice(SLICE2, NODE1, POOL2, DRIVER_A, counter_set(COUNTER_SET1, memory="8Gi")),
        ],
        error="invalid resource pools were encountered",
        node_error=True,
    ),
    "partitionable-devices-devices-on-different-nodes-consume-same-counter-set": Case(
        features=PARTITIONABLE,
        claims=[
            claim(
                CLAIM0,
                prioritized(
                    REQ0, sub_request(SUB0, CLASS_A, 1, _mem("6Gi")), sub_request(SUB1, CLASS_A, 1, _mem("2Gi"))
                ),
            )
        ],
        classes=[A],
        slices=[
            counters_slice(SLICE1, NODE1, pool(POOL1, 3), DRIVER_A, counter_set(COUNTER_SET1, memory="8Gi")),
            slice_(
                SLICE2,
                NODE1,
                pool(POOL1, 3),
                DRIVER_A,
                cdev(DEVICE1, _gi(COUNTER_SET1, "6Gi")),
                cdev(DEVICE2, _gi(COUNTER_SET1, "2Gi")),
            ),
            slice_(
                SLICE3, NODE2, pool(POOL1, 3), DRIVER_A, cdev(DEVICE3, _gi(COUNTER_SET1, "6Gi"), from_counters=False)
            ),
        ],
        allocated=[(DRIVER_A, POOL1, DEVICE3)],
        want=[allocation(local(NODE1), result(R0S1, DRIVER_A, POOL1, DEVICE2))],
    ),
    "partitionable-devices-devices-consume-counter-set-in-different-nodes": Case(
        features=PARTITIONABLE,
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1))],
        classes=[A],
        slices=[
            counters_slice(SLICE1, NODE1, pool(POOL1, 3), DRIVER_A, counter_set(COUNTER_SET1, memory="8Gi")),
            slice_(SLICE2, NODE1, pool(POOL1, 3), DRIVER_A, cdev(DEVICE1, _gi(COUNTER_SET1, "6Gi"))),
            slice_(
                SLICE3,
                NODE2,
                pool(POOL1, 3),
                DRIVER_A,
                cdev(DEVICE2, _gi(COUNTER_SET1, "6Gi")),
                cdev(DEVICE3, _gi(COUNTER_SET1, "2Gi")),
            ),
        ],
        allocated=[(DRIVER_A, POOL1, DEVICE1)],
        node=node(NODE2, REGION1),
        want=[allocation(local(NODE2), result(REQ0, DRIVER_A, POOL1, DEVICE3))],
    ),
    "partitionable-devices-validation-error-on-non-targeting-slice": Case(
        features=PARTITIONABLE,
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1))],
        classes=[A],
        slices=[
            counters_slice(SLICE1, NODE1, pool(POOL1, 3), DRIVER_A, counter_set(COUNTER_SET1, memory="8Gi")),
            slice_(SLICE2, NODE1, pool(POOL1, 3), DRIVER_A, cdev(DEVICE1, _gi(COUNTER_SET1, "6Gi"))),
            slice_(
                SLICE3, NODE2, pool(POOL1, 3), DRIVER_A, cdev(DEVICE3, _gi(COUNTER_SET2, "6Gi"), from_counters=False)
            ),
        ],
        error="invalid resource pools were encountered",
        node_error=True,
    ),
    "different-resourceslices-in-pool-can-target-different-nodes": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1))],
        classes=[A],
        slices=[
            slice_(SLICE1, NODE2, pool(POOL1, 2), DRIVER_A, device(DEVICE1)),
            slice_(SLICE2, NODE1, pool(POOL1, 2), DRIVER_A, device(DEVICE2)),
        ],
        want=[allocation(local(NODE1), result(REQ0, DRIVER_A, POOL1, DEVICE2))],
    ),
    "invalid-pool-is-ok-if-devices-can-be-allocated-from-other": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1))],
        classes=[A],
        slices=[
            slice_(SLICE1, NODE1, pool(POOL1, 2), DRIVER_A, device(DEVICE1)),
            slice_(SLICE2, NODE1, pool(POOL1, 2), DRIVER_A, device(DEVICE1)),
            slice_(SLICE3, NODE1, pool(POOL2, 1), DRIVER_A, device(DEVICE2)),
        ],
        want=[allocation(local(NODE1), result(REQ0, DRIVER_A, POOL2, DEVICE2))],
    ),
    "invalid-pool-is-error-if-no-other-device-can-be-allocated": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1))],
        classes=[A],
        slices=[
            slice_(SLICE1, NODE1, pool(POOL1, 2), DRIVER_A, device(DEVICE1)),
            slice_(SLICE2, NODE1, pool(POOL1, 2), DRIVER_A, device(DEVICE1)),
            slice_(SLICE3, NODE1, pool(POOL2, 1), DRIVER_A, device(DEVICE2)),
        ],
        allocated=[(DRIVER_A, POOL2, DEVICE2)],
        error="invalid resource pools were encountered",
        node_error=True,
    ),
    "no-allocation-from-incomplete-pools": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1))],
        classes=[A],
        slices=[slice_(SLICE1, NODE1, pool(POOL1, 2), DRIVER_A, device(DEVICE1))],
    ),
}


@pytest.mark.parametrize("case", list(POOL_CASES.values()), ids=list(POOL_CASES))
def test_pools(case: Case) -> None:
    run_case(case)


def _typed(name: str, kind: str, **kw: object) -> dict:
    return device(name, None, attrs(type=kind), **kw)  # type: ignore[arg-type]


def _is(kind: str) -> dict:
    return sel(f'device.attributes["{DRIVER_A}"].type == "{kind}"')


R2S1 = f"{REQ2}/{SUB1}"

COMBINATION_CASES = {
    "check-combinations-within-single-request-single-pool-single-slice": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 5))],
        classes=[A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, *(device(f"device-{i}") for i in range(1, 5)))],
        invocations=16,
    ),
    "check-combinations-within-single-request-single-pool-multiple-slices": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 5))],
        classes=[A],
        slices=[
            slice_(SLICE1, NODE1, pool(POOL1, 2), DRIVER_A, device(DEVICE1), device(DEVICE2)),
            slice_(SLICE2, NODE1, pool(POOL1, 2), DRIVER_A, device(DEVICE3), device(DEVICE4)),
        ],
        invocations=16,
    ),
    "check-combinations-within-single-request-multiple-pools-multiple-slices": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 5))],
        classes=[A],
        slices=[
            slice_(SLICE1, NODE1, pool(POOL1, 2), DRIVER_A, device(DEVICE1)),
            slice_(SLICE2, NODE1, pool(POOL1, 2), DRIVER_A, device(DEVICE2)),
            slice_(SLICE3, NODE1, POOL2, DRIVER_A, device(DEVICE3), device(DEVICE4)),
        ],
        invocations=16,
    ),
    "check-combinations-within-single-request-many-pools": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 5))],
        classes=[A],
        slices=[
            slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1)),
            slice_(SLICE2, NODE1, POOL2, DRIVER_A, device(DEVICE2)),
            slice_(SLICE3, NODE1, POOL3, DRIVER_A, device(DEVICE3)),
            slice_(SLICE4, NODE1, POOL4, DRIVER_A, device(DEVICE4)),
        ],
        invocations=16,
    ),
    "check-combinations-with-backtracking": Case(
        claims=[claim(CLAIM0, request(REQ1, CLASS_A, 2), request(REQ2, CLASS_A, 1, _is("X")))],
        classes=[A],
        slices=[
            slice_(SLICE1, NODE1, POOL1, DRIVER_A, _typed(DEVICE1, "X"), _typed(DEVICE2, "Y"), _typed(DEVICE3, "Y"))
        ],
        want=[
            allocation(
                local(NODE1),
                result(REQ1, DRIVER_A, POOL1, DEVICE2),
                result(REQ1, DRIVER_A, POOL1, DEVICE3),
                result(REQ2, DRIVER_A, POOL1, DEVICE1),
            )
        ],
        invocations=12,
    ),
    "check-combinations-with-backtracking-across-slices-and-pools": Case(
        features=BINDING,
        claims=[claim(CLAIM0, request(REQ1, CLASS_A, 2), request(REQ2, CLASS_A, 1, _is("X")))],
        classes=[A],
        slices=[
            slice_(SLICE1, NODE1, pool(POOL1, 2), DRIVER_A, _typed(DEVICE1, "X")),
            slice_(SLICE2, NODE1, pool(POOL1, 2), DRIVER_A, _typed(DEVICE2, "Y")),
            slice_(SLICE3, NODE1, POOL2, DRIVER_A, _typed(DEVICE3, "Y", binding=["IsPrepare"], failure=[])),
        ],
        want=[
            allocation(
                local(NODE1),
                result(REQ1, DRIVER_A, POOL1, DEVICE2),
                result(REQ1, DRIVER_A, POOL2, DEVICE3, binding=["IsPrepare"]),
                result(REQ2, DRIVER_A, POOL1, DEVICE1),
            )
        ],
        invocations=12,
    ),
    "check-combinations-with-prioritized-list": Case(
        claims=[
            claim(
                CLAIM0,
                prioritized(REQ1, sub_request(SUB0, CLASS_A, 3, _is("Y")), sub_request(SUB1, CLASS_A, 2)),
                prioritized(REQ2, sub_request(SUB0, CLASS_A, 2), sub_request(SUB1, CLASS_A, 1, _is("X"))),
            )
        ],
        classes=[A],
        slices=[
            slice_(SLICE1, NODE1, POOL1, DRIVER_A, _typed(DEVICE1, "X"), _typed(DEVICE2, "Y"), _typed(DEVICE3, "Y"))
        ],
        want=[
            allocation(
                local(NODE1),
                result(R1S1, DRIVER_A, POOL1, DEVICE2),
                result(R1S1, DRIVER_A, POOL1, DEVICE3),
                result(R2S1, DRIVER_A, POOL1, DEVICE1),
            )
        ],
        invocations=26,
    ),
}


@pytest.mark.parametrize("case", list(COMBINATION_CASES.values()), ids=list(COMBINATION_CASES))
def test_combinations_searched(case: Case) -> None:
    """Upstream's counts of search steps: each combination of devices is tried once, never
    each permutation."""
    run_case(case)
