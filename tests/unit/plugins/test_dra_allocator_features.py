"""The DRA allocator with kube-scheduler 1.37's gates: their defaults, DeviceTaintRules, toleration
matching (upstream's devicetoleration_test.go), the CEL environment (upstream's cel
compile_test.go, the cases this interpreter can run), consumable-capacity arithmetic with
DRAFractionalCapacityRange, the allocated state of claims, and the plugin's status for an
``allocationMode: All`` request that breaks its claim's constraint."""

from __future__ import annotations

import copy
import time
from fractions import Fraction
from types import SimpleNamespace
from typing import Any

import pytest
from dra_allocator_cases import (
    CAPACITY0,
    CLAIM0,
    CLASS_A,
    COUNTER_SET1,
    DEVICE1,
    DEVICE2,
    DRIVER_A,
    DRIVER_B,
    NODE1,
    POOL1,
    POOL2,
    REQ0,
    SLICE1,
    SLICE2,
    TAINT_KEY,
    TAINT_NO_SCHEDULE,
    TAINT_VALUE,
    TOLERATION_NO_SCHEDULE,
    Case,
    all_request,
    allocation,
    allocator_for,
    attrs,
    claim,
    claim_with_request,
    consumes,
    counter_set,
    device,
    klass,
    local,
    match,
    pool,
    request,
    result,
    same_allocations,
    sel,
    slice_,
    with_tolerations,
)

from kubesched.framework.features import FeatureGates
from kubesched.framework.interface import CycleState
from kubesched.framework.status import Code
from kubesched.plugins.dynamicresources import capacity as cap
from kubesched.plugins.dynamicresources.allocator import (
    AllocatedState,
    AllocationError,
    AllocationTimeout,
    Allocator,
    Features,
)
from kubesched.plugins.dynamicresources.cel import CELError, device_variables, evaluate, with_empty_domains
from kubesched.plugins.dynamicresources.dynamic_resources import DynamicResources
from kubesched.plugins.dynamicresources.taints import blocks, rule_selects, tolerates
from kubesched.testing import make_node
from kubesched.testing.harness import ObjectListers, as_node_infos, as_pod_info

A = klass(CLASS_A, DRIVER_A)


def allocate(c: Case, **kw: Any) -> list[dict] | None:
    allocator = allocator_for(c) if not kw else Allocator(**kw)
    name, labels = c.node
    return allocator.allocate(name, labels)


# --- 1.37's gates -------------------------------------------------------------------------------
def test_features_follow_the_gates_with_their_137_defaults() -> None:
    assert Features.from_gates(FeatureGates()) == Features()
    assert Features() == Features(
        partitionable_devices=True,
        device_taints=True,
        device_taint_rules=True,
        binding_conditions=True,
        consumable_capacity=True,
        fractional_capacity_range=True,
    )
    off = Features.from_gates(
        FeatureGates(
            {
                "DRAPartitionableDevices": False,
                "DRADeviceTaints": False,
                "DRADeviceBindingConditions": False,
                "DRAConsumableCapacity": False,
                "DRAFractionalCapacityRange": False,
            }
        )
    )
    assert off == Features(False, False, False, False, False, False)
    # Rules add taints only while device taints count at all.
    assert not Features.from_gates(FeatureGates({"DRADeviceTaintRules": False})).device_taint_rules


def test_prioritized_list_and_admin_access_cannot_be_switched_off_in_137() -> None:
    from kubesched.errors import ConfigurationError

    for gate in ("DRAPrioritizedList", "DRAAdminAccess"):
        with pytest.raises(ConfigurationError, match=f"cannot set feature gate {gate} to false"):
            FeatureGates({gate: False})


PARTITIONED = [
    slice_(
        SLICE1,
        NODE1,
        pool(POOL1, 2),
        DRIVER_A,
        device(DEVICE1, consumes=[consumes(COUNTER_SET1, memory="4Gi")]),
        device(DEVICE2, consumes=[consumes(COUNTER_SET1, memory="4Gi")]),
    ),
    slice_(SLICE2, NODE1, pool(POOL1, 2), DRIVER_A, counters=[counter_set(COUNTER_SET1, memory="6Gi")]),
]


@pytest.mark.parametrize(
    ("features", "want"),
    [
        pytest.param(None, [result(REQ0, DRIVER_A, POOL1, DEVICE1)], id="default-1.37-gates"),
        pytest.param(FeatureGates(), [result(REQ0, DRIVER_A, POOL1, DEVICE1)], id="feature-gates-object"),
        pytest.param(FeatureGates({"DRAPartitionableDevices": False}), None, id="DRAPartitionableDevices-off"),
    ],
)
def test_the_allocator_reads_feature_gates(features: Any, want: list[dict] | None) -> None:
    """Without ``features`` the allocator runs with 1.37's defaults: a device consuming shared
    counters is allocated; with DRAPartitionableDevices off it is not (its pool's counters are
    not even read)."""
    allocator = Allocator(
        [claim(CLAIM0, request(REQ0, CLASS_A, 1))],
        set(),
        {CLASS_A: A},
        copy.deepcopy(PARTITIONED),
        _evaluate,
        **({} if features is None else {"features": features}),
    )
    got = allocator.allocate(NODE1, {})
    assert same_allocations(got, [allocation(local(NODE1), *want)] if want else None), got


def test_counters_hold_across_claims_of_one_allocation_and_allocated_devices() -> None:
    """6Gi of counters, two 4Gi partitions: one claim gets one, the second claim gets none; with
    one partition already allocated, nothing is left for the first."""
    claims = [claim(CLAIM0, request(REQ0, CLASS_A, 1)), claim("claim-1", request(REQ0, CLASS_A, 1))]
    a = Allocator(claims, set(), {CLASS_A: A}, copy.deepcopy(PARTITIONED), _evaluate)
    assert a.allocate(NODE1, {}) is None
    a = Allocator(claims[:1], {(DRIVER_A, POOL1, DEVICE1)}, {CLASS_A: A}, copy.deepcopy(PARTITIONED), _evaluate)
    assert a.allocate(NODE1, {}) is None
    a = Allocator(claims[:1], set(), {CLASS_A: A}, copy.deepcopy(PARTITIONED), _evaluate)
    assert same_allocations(a.allocate(NODE1, {}), [allocation(local(NODE1), result(REQ0, DRIVER_A, POOL1, DEVICE1))])


def _evaluate(expression: str, driver: str, dev: dict) -> bool:
    from dra_allocator_cases import evaluate_selector

    return evaluate_selector(expression, driver, dev)


# --- tolerations (upstream's resourceclaim devicetoleration_test.go) ---------------------------
@pytest.mark.parametrize(
    ("toleration", "taint", "tolerated"),
    [
        pytest.param(
            {"key": "foo", "operator": "Exists", "effect": "NoSchedule"},
            {"key": "foo", "effect": "NoSchedule"},
            True,
            id="same-key-and-effect-Exists-taint-without-value",
        ),
        pytest.param(
            {"key": "foo", "operator": "Exists", "effect": "NoSchedule"},
            {"key": "foo", "value": "bar", "effect": "NoSchedule"},
            True,
            id="same-key-and-effect-Exists-taint-with-value",
        ),
        pytest.param(
            {"key": "", "operator": "Exists", "effect": "NoSchedule"},
            {"key": "foo", "value": "bar", "effect": "NoSchedule"},
            True,
            id="empty-key-Exists-matches-all-keys",
        ),
        pytest.param(
            {"key": "foo", "operator": "Equal", "value": "bar", "effect": "NoSchedule"},
            {"key": "foo", "value": "bar", "effect": "NoSchedule"},
            True,
            id="same-key-effect-value-Equal",
        ),
        pytest.param(
            {"key": "foo", "operator": "Equal", "value": "value1", "effect": "NoSchedule"},
            {"key": "foo", "value": "value2", "effect": "NoSchedule"},
            False,
            id="different-values-Equal",
        ),
        pytest.param(
            {"key": "foo", "operator": "Equal", "value": "bar", "effect": "NoSchedule"},
            {"key": "foo", "value": "bar", "effect": "NoExecute"},
            False,
            id="different-effects",
        ),
        # Ours: the defaults and an operator 1.37 does not know.
        pytest.param(
            {"key": "foo", "value": "bar"},
            {"key": "foo", "value": "bar", "effect": "NoExecute"},
            True,
            id="empty-operator-is-Equal-empty-effect-matches-all",
        ),
        pytest.param(
            {"key": "foo", "operator": "Gt", "value": "1"},
            {"key": "foo", "value": "2", "effect": "NoSchedule"},
            False,
            id="unknown-operator",
        ),
    ],
)
def test_toleration_matching(toleration: dict, taint: dict, tolerated: bool) -> None:
    assert tolerates(toleration, taint) is tolerated


def test_only_noschedule_and_noexecute_block() -> None:
    for effect, blocking in (("NoSchedule", True), ("NoExecute", True), ("None", False), ("PreferNoSchedule", False)):
        assert blocks([{"key": "k", "effect": effect}], []) is blocking


# --- DeviceTaintRules --------------------------------------------------------------------------
def rule(selector: dict | None, effect: str = "NoSchedule", name: str = "rule") -> dict:
    spec: dict = {"taint": {"key": TAINT_KEY, "value": TAINT_VALUE, "effect": effect}}
    if selector is not None:
        spec["deviceSelector"] = selector
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceTaintRule", "metadata": {"name": name}, "spec": spec}


@pytest.mark.parametrize(
    ("selector", "selected"),
    [
        pytest.param({}, True, id="empty-selector-all-devices"),
        pytest.param(None, False, id="no-selector-no-device"),
        pytest.param({"driver": DRIVER_A}, True, id="driver"),
        pytest.param({"driver": DRIVER_B}, False, id="other-driver"),
        pytest.param({"pool": POOL1}, True, id="pool"),
        pytest.param({"pool": POOL2}, False, id="other-pool"),
        pytest.param({"driver": DRIVER_A, "pool": POOL1, "device": DEVICE1}, True, id="driver-pool-device"),
        pytest.param({"driver": DRIVER_A, "pool": POOL1, "device": DEVICE2}, False, id="other-device"),
    ],
)
def test_device_taint_rule_selector(selector: dict | None, selected: bool) -> None:
    assert rule_selects(rule(selector), (DRIVER_A, POOL1, DEVICE1)) is selected


TWO = [slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1), device(DEVICE2))]


@pytest.mark.parametrize(
    ("rules", "gates", "tolerate", "want"),
    [
        pytest.param([], None, False, DEVICE1, id="no-rule"),
        pytest.param([rule({"device": DEVICE1})], None, False, DEVICE2, id="rule-taints-device-1"),
        pytest.param([rule({})], None, False, None, id="rule-taints-every-device"),
        pytest.param([rule({})], None, True, DEVICE1, id="rule-taint-tolerated"),
        pytest.param([rule({}, effect="None")], None, False, DEVICE1, id="rule-with-effect-None"),
        pytest.param([rule({}, effect="NoExecute")], None, False, None, id="rule-with-effect-NoExecute"),
        pytest.param([rule(None)], None, False, DEVICE1, id="rule-without-selector"),
        pytest.param([rule({})], {"DRADeviceTaintRules": False}, False, DEVICE1, id="DRADeviceTaintRules-off"),
        pytest.param([rule({})], {"DRADeviceTaints": False}, False, DEVICE1, id="DRADeviceTaints-off"),
    ],
)
def test_device_taint_rules_keep_devices_from_untolerating_requests(
    rules: list[dict], gates: dict | None, tolerate: bool, want: str | None
) -> None:
    c = claim_with_request(CLAIM0, REQ0, CLASS_A)
    toleration = {"key": TAINT_KEY, "operator": "Exists"}
    if tolerate:
        c = with_tolerations(c, toleration)
    allocator = Allocator(
        [c],
        set(),
        {CLASS_A: A},
        copy.deepcopy(TWO),
        _evaluate,
        features=FeatureGates(gates or {}),
        device_taint_rules=rules,
    )
    got = allocator.allocate(NODE1, {})
    expected = None
    if want:
        r = result(REQ0, DRIVER_A, POOL1, want, False, *([toleration] if tolerate else []))
        expected = [allocation(local(NODE1), r)]
    assert same_allocations(got, expected), got


def test_a_slice_taint_and_a_rule_taint_both_need_tolerating() -> None:
    slices = [slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, taints=[TAINT_NO_SCHEDULE]))]
    other = {"key": "other", "value": "x", "effect": "NoSchedule"}
    r = {"metadata": {"name": "r"}, "spec": {"deviceSelector": {}, "taint": other}}
    c = with_tolerations(claim_with_request(CLAIM0, REQ0, CLASS_A), TOLERATION_NO_SCHEDULE)
    a = Allocator([c], set(), {CLASS_A: A}, slices, _evaluate, device_taint_rules=[r])
    assert a.allocate(NODE1, {}) is None
    both = with_tolerations(c, {"key": "other", "operator": "Exists", "effect": "NoSchedule"})
    a = Allocator([both], set(), {CLASS_A: A}, slices, _evaluate, device_taint_rules=[r])
    assert a.allocate(NODE1, {}) is not None


# --- CEL (upstream's cel compile_test.go) ------------------------------------------------------
D = "dra.example.com"


@pytest.mark.parametrize(
    ("expression", "dev", "want"),
    [
        pytest.param("true", {}, True, id="true"),
        pytest.param("false", {}, False, id="false"),
        pytest.param(
            'device.attributes["no-such-domain"].noSuchAttr.isGreaterThan(quantity("0"))',
            {},
            CELError("no such key: noSuchAttr"),
            id="runtime-error-lookup-identifier",
        ),
        pytest.param(
            'device.attributes["no-such-domain"]["noSuchAttr"].isGreaterThan(quantity("0"))',
            {},
            CELError("no such key: noSuchAttr"),
            id="runtime-error-lookup-map",
        ),
        pytest.param('"no-such-domain" in device.attributes', {}, False, id="domain-check-negative"),
        pytest.param(
            f'"{D}" in device.attributes',
            {"attributes": {f"{D}/something": {"bool": True}}},
            True,
            id="domain-check-positive",
        ),
        pytest.param(f'device.driver == "{D}"', {}, True, id="real-driver-name"),
        pytest.param(
            f'device.attributes["{D}"].name', {"attributes": {"name": {"bool": True}}}, True, id="driver-name-qualifier"
        ),
        pytest.param(
            f'device.attributes["{D}"]["name"]',
            {"attributes": {"name": {"bool": True}}},
            True,
            id="driver-name-qualifier-map-lookup",
        ),
        pytest.param(
            'device.attributes["other.example.com"].name',
            {"attributes": {"other.example.com/name": {"bool": True}}},
            True,
            id="qualified-attribute-name",
        ),
        pytest.param(f'device.attributes["{D}"].name > 0', {"attributes": {"name": {"int": 1}}}, True, id="int"),
        pytest.param(
            f'device.attributes["{D}"].name == "fish"', {"attributes": {"name": {"string": "fish"}}}, True, id="string"
        ),
        pytest.param(
            f'device.attributes["{D}"].names',
            {"attributes": {"names": {"strings": ["fish", "bird"]}}},
            CELError("CEL result of type list could not be converted to bool"),
            id="list-result-type-causes-match-error",
        ),
        pytest.param(
            f'device.attributes["{D}"].name.includes("fish")',
            {"attributes": {"name": {"strings": ["fish", "bird"]}}},
            True,
            id="includes-function-can-evaluate",
        ),
        pytest.param(
            f'device.attributes["{D}"].names.size() == 2',
            {"attributes": {"names": {"bools": [True, False]}}},
            True,
            id="list-of-bool",
        ),
        pytest.param(
            f'device.attributes["{D}"].names.size() == 2',
            {"attributes": {"names": {"ints": [1, 2]}}},
            True,
            id="list-of-int",
        ),
        pytest.param(
            f'device.attributes["{D}"].names.size() == 2',
            {"attributes": {"names": {"versions": ["1.0.0", "2.0.0"]}}},
            True,
            id="list-of-semver",
        ),
        pytest.param(
            f'device.attributes["{D}"].names.exists(x, x > 0)',
            {"attributes": {"names": {"ints": [1, 2]}}},
            True,
            id="macro-on-list-of-int",
        ),
        pytest.param(
            f'device.attributes["{D}"].names.all(x, x.isGreaterThan(semver("0.0.1")))',
            {"attributes": {"names": {"versions": ["1.0.0", "2.0.0"]}}},
            True,
            id="macro-on-list-of-semver",
        ),
        pytest.param(
            f'device.attributes["{D}"].name.includes(true)',
            {"attributes": {"name": {"bool": False}}},
            False,
            id="includes-function-on-bool-scalar-negative",
        ),
        pytest.param(
            f'device.attributes["{D}"].name.includes(1)',
            {"attributes": {"name": {"ints": [1, 2]}}},
            True,
            id="includes-function-on-int-list-positive",
        ),
        pytest.param(
            f'device.attributes["{D}"].name.includes(3)',
            {"attributes": {"name": {"ints": [1, 2]}}},
            False,
            id="includes-function-on-int-list-negative",
        ),
        pytest.param(
            f'device.attributes["{D}"].name.includes(semver("1.0.0"))',
            {"attributes": {"name": {"version": "1.0.0"}}},
            True,
            id="includes-function-on-semver-scalar-positive",
        ),
        pytest.param(
            f'device.attributes["{D}"].name.includes(semver("3.0.0"))',
            {"attributes": {"name": {"versions": ["1.0.0", "2.0.0"]}}},
            False,
            id="includes-function-on-semver-list-negative",
        ),
        pytest.param(
            f'device.attributes["{D}"].name.includes("value-49")',
            {"attributes": {"name": {"strings": [f"value-{i}" for i in range(49)]}}},
            CELError("'includes' function cannot be applied to lists longer than 48 values"),
            id="includes-function-on-very-long-list-runtime-error",
        ),
        pytest.param(
            f'1 in device.attributes["{D}"].names',
            {"attributes": {"names": {"ints": [1, 2, 3]}}},
            True,
            id="in-operator-on-list",
        ),
        pytest.param(
            f'device.attributes["{D}"].name.isGreaterThan(semver("0.0.1"))',
            {"attributes": {"name": {"version": "1.0.0"}}},
            True,
            id="version",
        ),
        pytest.param(
            f'device.attributes["{D}"].name.isGreaterThan(semver("v0.0.1", true)) && isSemver("v1.0.0", true)',
            {"attributes": {"name": {"version": "1.0.0"}}},
            True,
            id="version_v",
        ),
        pytest.param(
            f'device.capacity["{D}"].name.isGreaterThan(quantity("1Ki"))',
            {"capacity": {"name": {"value": "1Mi"}}},
            True,
            id="quantity",
        ),
        pytest.param(
            f'"name" in device.capacity["{D}"] && device.capacity["{D}"].name.isGreaterThan(quantity("1Ki"))',
            {"capacity": {"name": {"value": "1Mi"}}},
            True,
            id="check-positive",
        ),
        pytest.param(
            f'!("name" in device.capacity["{D}"]) || device.capacity["{D}"].name.isGreaterThan(quantity("1Ki"))',
            {},
            True,
            id="check-negative",
        ),
        pytest.param(
            f'device.attributes.exists_one(x, x == "{D}")',
            {"attributes": {"services": {"string": "v"}}},
            True,
            id="check_attribute_domains",
        ),
        pytest.param(
            f'device.attributes["{D}"].exists_one(x, x == "services")',
            {"attributes": {"services": {"string": "v"}}},
            True,
            id="check_attribute_ids",
        ),
        pytest.param(
            f'device.attributes["{D}"].services.split("example").size() >= 2',
            {"attributes": {"services": {"string": "some_example_value"}}},
            True,
            id="split_attribute",
        ),
        pytest.param(
            f'device.attributes["{D}"].services.matches("[^a]?sym")',
            {"attributes": {"services": {"string": "asymetric"}}},
            True,
            id="regexp_attribute",
        ),
        pytest.param(
            f'device.capacity.exists_one(x, x == "{D}")',
            {"capacity": {"memory": {"value": "1Mi"}}},
            True,
            id="check_capacity_domains",
        ),
        pytest.param(
            "device.allowMultipleAllocations == true",
            {"allowMultipleAllocations": True},
            True,
            id="allow_multiple_allocations",
        ),
        pytest.param("device.allowMultipleAllocations == false", {}, True, id="allow_multiple_allocations_default"),
        # Ours: item 1 of 1.37's environment, an absent domain is an empty map.
        pytest.param(
            'device.attributes["x"].foo', {}, CELError("no such key: foo"), id="absent-domain-fails-on-the-attribute"
        ),
        pytest.param('!("foo" in device.attributes["x"])', {}, True, id="absent-domain-is-an-empty-map"),
        pytest.param("size(device.attributes) == 0", {}, True, id="absent-domains-are-not-listed"),
        pytest.param('!("mem" in device.capacity.x)', {}, True, id="absent-capacity-domain-by-field"),
        pytest.param(
            'semver("1.0.0-alpha").isLessThan(semver("1.0.0")) && semver("1.2.3").minor() == 2',
            {},
            True,
            id="semver-order-and-parts",
        ),
        pytest.param(
            'semver("01.0.0") == semver("1.0.0")', {}, CELError("could not parse semver: 01.0.0"), id="semver-strict"
        ),
        pytest.param(
            f'device.attributes["{D}"].v == semver("1.0.0")',
            {"attributes": {"v": {}}},
            CELError("attribute v: unsupported attribute value"),
            id="attribute-of-unknown-type",
        ),
    ],
)
def test_cel_environment(expression: str, dev: dict, want: bool | CELError) -> None:
    if isinstance(want, CELError):
        with pytest.raises(CELError) as info:
            evaluate(expression, device_variables(D, dev))
        assert str(want) in str(info.value)
        return
    assert evaluate(expression, device_variables(D, dev)) is want


def test_a_syntax_error_does_not_compile() -> None:
    from kubesched.plugins.dynamicresources.cel import compile_expression

    with pytest.raises(CELError, match="Syntax error"):
        compile_expression("?!")


def test_domain_lookups_in_string_literals_are_left_alone() -> None:
    e = '"device.attributes[\\"x\\"]" == device.driver && device.attributes.exists(d, true)'
    assert with_empty_domains(e) == e


def test_a_device_without_the_domain_is_allocated_by_a_negative_selector() -> None:
    """Item 1: ``!("foo" in device.attributes["x"])`` holds for a device with nothing in domain
    ``x``, so the device is allocated; ``device.attributes["x"].foo`` fails the attempt."""
    slices = [slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, None, attrs(model="a")))]
    ok = Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1, sel('!("foo" in device.attributes["x"])')))],
        classes=[A],
        slices=slices,
    )
    assert same_allocations(allocate(ok), [allocation(local(NODE1), result(REQ0, DRIVER_A, POOL1, DEVICE1))])
    bad = Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1, sel('device.attributes["x"].foo')))], classes=[A], slices=slices
    )
    with pytest.raises(
        AllocationError,
        match=r"claim claim-0: selector #0 on device driver-a/pool-1/device-1: CEL runtime error: no such key: foo",
    ):
        allocate(bad)


# --- consumable capacity arithmetic ------------------------------------------------------------
@pytest.mark.parametrize(
    ("requested", "capacity", "fractional", "want"),
    [
        pytest.param(None, {"value": "4"}, True, "4", id="no-request-no-policy-whole-value"),
        pytest.param(
            None, {"value": "4", "requestPolicy": {"default": "1"}}, True, "1", id="no-request-policy-default"
        ),
        pytest.param("3", {"value": "4"}, True, "3", id="no-policy-as-asked"),
        pytest.param("1", {"value": "8", "requestPolicy": {"validRange": {"min": "2"}}}, True, "2", id="below-min"),
        pytest.param(
            "3", {"value": "8", "requestPolicy": {"validRange": {"min": "2", "step": "2"}}}, True, "4", id="step"
        ),
        pytest.param(
            "3Gi",
            {"value": "8Gi", "requestPolicy": {"validRange": {"min": "1Gi", "step": "1Gi"}}},
            True,
            "3Gi",
            id="on-step-keeps-spelling",
        ),
        pytest.param(
            "2500Mi",
            {"value": "8Gi", "requestPolicy": {"validRange": {"min": "1Gi", "step": "1Gi"}}},
            True,
            "3Gi",
            id="step-binary",
        ),
        pytest.param(
            "2",
            {"value": "8", "requestPolicy": {"validValues": ["1", "4", "8"]}},
            True,
            "4",
            id="valid-values-round-up",
        ),
        pytest.param(
            "150m",
            {"value": "1", "requestPolicy": {"validRange": {"min": "100m", "step": "100m"}}},
            True,
            "200m",
            id="fractional-range-on",
        ),
        pytest.param(
            "150m",
            {"value": "1", "requestPolicy": {"validRange": {"min": "100m", "step": "100m"}}},
            False,
            "1",
            id="fractional-range-off",
        ),
    ],
)
def test_consumed_capacity(requested: str | None, capacity: dict, fractional: bool, want: str) -> None:
    got = cap.consumed(requested, capacity, fractional)
    assert got.text == want or cap.amount_of(got.text).value == cap.amount_of(want).value
    assert got.value == cap.amount_of(want).value


@pytest.mark.parametrize(
    ("amount", "policy", "violates"),
    [
        pytest.param("6", {"default": "2", "validRange": {"min": "2", "max": "4", "step": "2"}}, True, id="over-max"),
        pytest.param("3", {"default": "2", "validRange": {"min": "2", "step": "2"}}, True, id="off-step"),
        pytest.param("2", {"default": "2", "validRange": {"min": "2", "step": "2"}}, False, id="default"),
        pytest.param("3", {"default": "1", "validValues": ["1", "2"]}, True, id="not-a-valid-value"),
    ],
)
def test_capacity_policy(amount: str, policy: dict, violates: bool) -> None:
    assert cap.violates_policy(cap.amount_of(amount), policy, True) is violates


def test_a_fractional_range_shares_a_device_in_thousandths() -> None:
    """DRAFractionalCapacityRange (beta, on in 1.37): 0.15 of a device rounds up to 0.2 on a
    0.1 step, so five such requests fill a device of 1; with the gate off each takes 1."""
    policy = {"default": "100m", "validRange": {"min": "100m", "step": "100m"}}
    slices = [slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, {CAPACITY0: "1"}, multi=True, policy=policy))]
    claims = [claim(f"claim-{i}", request(REQ0, CLASS_A, 1, capacity="150m")) for i in range(5)]
    got = Allocator(claims, set(), {CLASS_A: A}, slices, _evaluate).allocate(NODE1, {})
    assert got is not None and {r["devices"]["results"][0]["consumedCapacity"][CAPACITY0] for r in got} == {"200m"}
    assert len({r["devices"]["results"][0]["shareID"] for r in got}) == 5
    six = [*claims, claim("claim-5", request(REQ0, CLASS_A, 1, capacity="150m"))]
    assert Allocator(six, set(), {CLASS_A: A}, slices, _evaluate).allocate(NODE1, {}) is None
    off = FeatureGates({"DRAFractionalCapacityRange": False})
    got = Allocator(claims[:1], set(), {CLASS_A: A}, slices, _evaluate, features=off).allocate(NODE1, {})
    assert got is not None and got[0]["devices"]["results"][0]["consumedCapacity"] == {CAPACITY0: "1"}


# --- the allocated state -----------------------------------------------------------------------
def _allocated(*results: dict) -> dict:
    return {"status": {"allocation": {"devices": {"results": list(results)}}}}


def test_allocated_state_of_claims() -> None:
    claims = [
        _allocated({"driver": "d", "pool": "p", "device": "whole"}),
        _allocated({"driver": "d", "pool": "p", "device": "admin", "adminAccess": True}),
        _allocated(
            {"driver": "d", "pool": "p", "device": "shared", "shareID": "s1", "consumedCapacity": {"mem": "1Gi"}},
        ),
        _allocated(
            {"driver": "d", "pool": "p", "device": "shared", "shareID": "s2", "consumedCapacity": {"mem": "512Mi"}},
            {"driver": "d", "pool": "p", "device": "no-capacity", "shareID": "s3"},
        ),
        {"status": {}},
    ]
    state = AllocatedState.from_claims(claims)
    assert state.devices == {("d", "p", "whole")}
    assert state.shared == {("d", "p", "shared"), ("d", "p", "no-capacity")}
    assert state.consumed == {("d", "p", "shared"): {"mem": Fraction(3 * 2**29)}}
    assert state.holds(("d", "p", "no-capacity")) and not state.holds(("d", "p", "admin"))
    # Without consumable capacity a share is a device used whole.
    assert AllocatedState.from_claims(claims, consumable_capacity=False).devices == {
        ("d", "p", "whole"),
        ("d", "p", "shared"),
        ("d", "p", "no-capacity"),
    }


def test_a_search_past_its_deadline_stops() -> None:
    """Upstream's "interrupt" case: five devices, six wanted; a deadline already past stops the
    search (the plugin's filterTimeout), none lets it finish with no allocation."""
    c = Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 6))],
        classes=[A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, *(device(f"device-{i}") for i in range(1, 6)))],
    )
    with pytest.raises(AllocationTimeout):
        allocator_for(c).allocate(NODE1, {}, time.monotonic() - 1)
    assert allocator_for(c).allocate(NODE1, {}) is None


# --- through the plugin --------------------------------------------------------------------------
def test_all_devices_breaking_a_constraint_is_the_attempts_error() -> None:
    """Item 2: ``allocationMode: All`` over devices that break the claim's ``matchAttribute`` is
    upstream's error, and the pod's Filter status an Error with its message."""
    c = claim(CLAIM0, all_request(REQ0, CLASS_A), constraints=[match(f"{DRIVER_A}/numa")])
    c["metadata"].update({"namespace": "default", "uid": "uid-c"})
    s = slice_(
        SLICE1,
        NODE1,
        POOL1,
        DRIVER_A,
        device(DEVICE1, None, attrs(numa=1)),
        device(DEVICE2, None, attrs(numa=2)),
    )
    objects = [
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", **c},
        {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", **A},
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", **s},
    ]
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default", "uid": "uid-p"},
        "spec": {"containers": [{"name": "c"}], "resourceClaims": [{"name": "r", "resourceClaimName": CLAIM0}]},
    }
    plugin = DynamicResources(None, SimpleNamespace(listers=ObjectListers(objects), cluster=None))
    state = CycleState()
    info = as_pod_info(pod)
    assert plugin.pre_filter(state, info) is None
    (node_info,) = as_node_infos([make_node(NODE1).capacity(cpu="1", pods="10")])
    status = plugin.filter(state, info, node_info)
    assert status is not None and status.code == Code.ERROR
    assert (
        "claim default/claim-0, request req-0: cannot add device driver-a/pool-1/device-2 because a claim constraint would not be satisfied"
        in status.message()
    )
