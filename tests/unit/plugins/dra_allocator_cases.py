"""Builders for the allocator tests, after upstream's allocator test kit
(k8s.io/dynamic-resource-allocation/structured/internal/allocatortesting): the same names for
objects (claim-0, class-a, driver-a, pool-1, slice-1, device-1, node-1, ...) so that each case
reads like upstream's, and a runner that allocates on one node and compares as upstream's does
(results of a claim in any order, claims in any order, share IDs replaced by a fixed one)."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from kubesched.plugins.dynamicresources.allocator import (
    Allocator,
    CompileFailure,
    DeviceID,
    Features,
    RuntimeFailure,
)
from kubesched.plugins.dynamicresources.capacity import amount_of
from kubesched.plugins.dynamicresources.cel import CELError, compile_expression, device_variables, evaluate

Obj = dict[str, Any]

REGION1, REGION2 = "region-1", "region-2"
NODE1, NODE2 = "node-1", "node-2"
CLASS_A, CLASS_B = "class-a", "class-b"
DRIVER_A, DRIVER_B = "driver-a", "driver-b"
POOL1, POOL2, POOL3, POOL4 = "pool-1", "pool-2", "pool-3", "pool-4"
REQ0, REQ1, REQ2, REQ3 = "req-0", "req-1", "req-2", "req-3"
SUB0, SUB1 = "subReq-0", "subReq-1"
CLAIM0, CLAIM1 = "claim-0", "claim-1"
SLICE1, SLICE2, SLICE3, SLICE4 = "slice-1", "slice-2", "slice-3", "slice-4"
DEVICE0, DEVICE1, DEVICE2, DEVICE3, DEVICE4 = "device-0", "device-1", "device-2", "device-3", "device-4"
COUNTER_SET1, COUNTER_SET2 = "counter-set-1", "counter-set-2"
CAPACITY0 = "capacity-0"
FIXED_SHARE_ID = "aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa"
REGION_KEY, PLANET_KEY, EARTH = "region", "planet", "earth"
ALL_NODES, PER_DEVICE = "nodeSelectionAll", "nodeSelectionPerDevice"

INT_ATTRIBUTE = f"{DRIVER_A}/numa"
VERSION_ATTRIBUTE = f"{DRIVER_A}/driverVersion"
STRING_ATTRIBUTE = f"{DRIVER_A}/stringAttribute"
BOOL_ATTRIBUTE = f"{DRIVER_A}/boolAttribute"
NON_EXISTENT_ATTRIBUTE = f"{DRIVER_A}/NonExistentAttribute"

TAINT_KEY, TAINT_VALUE, TAINT_VALUE2 = "taint-key", "taint-value", "taint-value-2"
TAINT_NONE = {"key": TAINT_KEY, "value": TAINT_VALUE, "effect": "None"}
TAINT_NO_SCHEDULE = {"key": TAINT_KEY, "value": TAINT_VALUE, "effect": "NoSchedule"}
TAINT_NO_EXECUTE = {"key": TAINT_KEY, "value": TAINT_VALUE2, "effect": "NoExecute"}
TOLERATION_NO_SCHEDULE = {"operator": "Exists", "key": TAINT_KEY, "effect": "NoSchedule"}
TOLERATION_NO_EXECUTE = {"operator": "Equal", "key": TAINT_KEY, "value": TAINT_VALUE2, "effect": "NoExecute"}
TOLERATION_NO_SCHEDULE_KEY1 = {"operator": "Exists", "key": "key1", "effect": "NoSchedule"}

#: Upstream's test cases run with every optional allocator feature off unless they say so.
NO_FEATURES = Features(
    partitionable_devices=False,
    device_taints=False,
    device_taint_rules=False,
    binding_conditions=False,
    consumable_capacity=False,
    fractional_capacity_range=False,
)


def features(**on: bool) -> Features:
    return replace(NO_FEATURES, **on)


PARTITIONABLE = features(partitionable_devices=True)
TAINTS = features(device_taints=True, device_taint_rules=True)
BINDING = features(binding_conditions=True)
CONSUMABLE = features(consumable_capacity=True)


# --- objects ----------------------------------------------------------------------------------
def node(name: str = NODE1, region: str = REGION1) -> tuple[str, dict[str, str]]:
    return name, {REGION_KEY: region, PLANET_KEY: EARTH}


def sel(expression: str) -> Obj:
    return {"cel": {"expression": expression}}


def klass(name: str, driver: str, config_attribute: str | None = None, multi: bool | None = None) -> Obj:
    expression = f'device.driver == "{driver}"'
    if multi is not None:
        expression += f" && device.allowMultipleAllocations == {str(multi).lower()}"
    spec: Obj = {"selectors": [sel(expression)]}
    if config_attribute:
        spec["config"] = [device_configuration(driver, config_attribute)]
    return {"metadata": {"name": name}, "spec": spec}


def device_configuration(driver: str, attribute: str) -> Obj:
    return {"opaque": {"driver": driver, "parameters": {attribute: attribute + "Value"}}}


def request(
    name: str,
    class_name: str,
    count: int = 1,
    *selectors: Obj,
    mode: str = "ExactCount",
    admin: bool | None = None,
    tolerations: Sequence[Obj] = (),
    capacity: str | None = None,
) -> Obj:
    exactly: Obj = {"deviceClassName": class_name, "allocationMode": mode}
    if mode == "ExactCount":
        exactly["count"] = count
    if selectors:
        exactly["selectors"] = list(selectors)
    if admin is not None:
        exactly["adminAccess"] = admin
    if tolerations:
        exactly["tolerations"] = list(tolerations)
    if capacity is not None:
        exactly["capacity"] = {"requests": {CAPACITY0: capacity}}
    return {"name": name, "exactly": exactly}


def all_request(name: str, class_name: str, **kw: Any) -> Obj:
    return request(name, class_name, 0, mode="All", **kw)


def sub_request(
    name: str,
    class_name: str,
    count: int = 1,
    *selectors: Obj,
    mode: str = "ExactCount",
    tolerations: Sequence[Obj] = (),
    capacity: str | None = None,
) -> Obj:
    sub: Obj = {"name": name, "deviceClassName": class_name, "allocationMode": mode, "count": count}
    if selectors:
        sub["selectors"] = list(selectors)
    if tolerations:
        sub["tolerations"] = list(tolerations)
    if capacity is not None:
        sub["capacity"] = {"requests": {CAPACITY0: capacity}}
    return sub


def prioritized(name: str, *subs: Obj) -> Obj:
    return {"name": name, "firstAvailable": list(subs)}


def claim(name: str, *requests: Obj, constraints: Sequence[Obj] = (), config: Sequence[Obj] = ()) -> Obj:
    devices: Obj = {"requests": list(requests)}
    if constraints:
        devices["constraints"] = list(constraints)
    if config:
        devices["config"] = list(config)
    return {"metadata": {"name": name}, "spec": {"devices": devices}}


def claim_with_request(name: str, req: str, class_name: str, *constraints: Obj) -> Obj:
    return claim(name, request(req, class_name, 1), constraints=constraints)


def with_tolerations(c: Obj, *tolerations: Obj) -> Obj:
    c = copy.deepcopy(c)
    for r in c["spec"]["devices"]["requests"]:
        r["exactly"].setdefault("tolerations", []).extend(tolerations)
    return c


def match(attribute: str, *requests: str) -> Obj:
    c: Obj = {"matchAttribute": attribute}
    if requests:
        c["requests"] = list(requests)
    return c


def distinct(attribute: str, *requests: str) -> Obj:
    c: Obj = {"distinctAttribute": attribute}
    if requests:
        c["requests"] = list(requests)
    return c


def attrs(**values: Any) -> dict[str, Obj]:
    """Attributes by name: ``numa=1`` (int), ``stringAttribute="x"``, ``boolAttribute=True``,
    ``driverVersion=("version", "1.0.0")``; names with a domain through ``**{"a/b": ...}``."""
    out: dict[str, Obj] = {}
    for name, v in values.items():
        if isinstance(v, tuple):
            out[name] = {v[0]: v[1]}
        elif isinstance(v, bool):
            out[name] = {"bool": v}
        elif isinstance(v, int):
            out[name] = {"int": v}
        else:
            out[name] = {"string": v}
    return out


def device(
    name: str,
    capacity: Mapping[str, str] | None = None,
    attributes: Mapping[str, Obj] | None = None,
    *,
    taints: Sequence[Obj] = (),
    consumes: Sequence[Obj] = (),
    capacity_from_counters: bool = False,
    node_name: str | None = None,
    all_nodes: bool = False,
    node_selector: Obj | None = None,
    binding: Sequence[str] | None = None,
    failure: Sequence[str] | None = None,
    binds_to_node: bool | None = None,
    multi: bool = False,
    policy: Obj | None = None,
) -> Obj:
    d: Obj = {"name": name}
    if attributes:
        d["attributes"] = dict(attributes)
    if capacity:
        d["capacity"] = {k: {"value": v} for k, v in capacity.items()}
    if taints:
        d["taints"] = list(taints)
    if consumes:
        d["consumesCounters"] = list(consumes)
        if capacity_from_counters:
            d["capacity"] = {n: {"value": c["value"]} for cc in consumes for n, c in cc["counters"].items()}
    if node_name:
        d["nodeName"] = node_name
    if all_nodes:
        d["allNodes"] = True
    if node_selector is not None:
        d["nodeSelector"] = node_selector
    if binding is not None:
        d["bindingConditions"] = list(binding)
    if failure is not None:
        d["bindingFailureConditions"] = list(failure)
    if binds_to_node is not None:
        d["bindsToNode"] = binds_to_node
    if multi:
        d["allowMultipleAllocations"] = True
    if policy is not None:
        for c in d.get("capacity", {}).values():
            c["requestPolicy"] = copy.deepcopy(policy)
    return d


#: upstream's withCapacityRequestPolicyRange: default 2, min 2, step 2, max 4
RANGE_POLICY = {"default": "2", "validRange": {"min": "2", "step": "2", "max": "4"}}


def valid_values_policy(default: str, *more: str) -> Obj:
    return {"default": default, "validValues": [default, *more]}


def consumes(counter_set: str, **counters: str) -> Obj:
    return {"counterSet": counter_set, "counters": {k: {"value": v} for k, v in counters.items()}}


def counter_set(name: str, **counters: str) -> Obj:
    return {"name": name, "counters": {k: {"value": v} for k, v in counters.items()}}


def pool(name: str, count: int = 1, generation: int = 1) -> Obj:
    return {"name": name, "resourceSliceCount": count, "generation": generation}


def slice_(name: str, node_selection: Any, pool_: Any, driver: str, *devices: Obj, counters: Sequence[Obj] = ()) -> Obj:
    spec: Obj = {"driver": driver, "pool": pool(pool_) if isinstance(pool_, str) else dict(pool_)}
    if isinstance(node_selection, Mapping):
        spec["nodeSelector"] = node_selection
    elif node_selection == ALL_NODES:
        spec["allNodes"] = True
    elif node_selection == PER_DEVICE:
        spec["perDeviceNodeSelection"] = True
    else:
        spec["nodeName"] = node_selection
    if devices:
        spec["devices"] = list(devices)
    if counters:
        spec["sharedCounters"] = list(counters)
    return {"metadata": {"name": name}, "spec": spec}


def one_device(name: str, node_selection: Any, pool_: Any, driver: str) -> Obj:
    return slice_(name, node_selection, pool_, driver, device(DEVICE1))


def many_devices(name: str, node_selection: Any, pool_: Any, driver: str, count: int) -> Obj:
    return slice_(name, node_selection, pool_, driver, *(device(f"device-{i}") for i in range(count)))


def label_selector(key: str, *values: str) -> Obj:
    return {"nodeSelectorTerms": [{"matchExpressions": [{"key": key, "operator": "In", "values": list(values)}]}]}


def local(node_name: str) -> Obj:
    return {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}]}


def result(
    req: str,
    driver: str,
    pool_: str,
    dev: str,
    admin: bool = False,
    *tolerations: Obj,
    binding: Sequence[str] | None = None,
    failure: Sequence[str] | None = None,
    consumed: Mapping[str, str] | None = None,
    share: bool = False,
) -> Obj:
    r: Obj = {"request": req, "driver": driver, "pool": pool_, "device": dev}
    if admin:
        r["adminAccess"] = True
    if tolerations:
        r["tolerations"] = list(tolerations)
    if binding:
        r["bindingConditions"] = list(binding)
    if failure:
        r["bindingFailureConditions"] = list(failure)
    if share or consumed is not None:
        r["shareID"] = FIXED_SHARE_ID
    if consumed:
        r["consumedCapacity"] = dict(consumed)
    return r


def allocation(selector: Obj | None, *results: Obj, config: Sequence[Obj] | None = None) -> Obj:
    devices: Obj = {"results": list(results)}
    if config:
        devices["config"] = list(config)
    out: Obj = {"devices": devices}
    if selector is not None:
        out["nodeSelector"] = selector
    return out


def class_config(driver: str, attribute: str, *requests: str) -> Obj:
    c: Obj = {"source": "FromClass", **device_configuration(driver, attribute)}
    if requests:
        c["requests"] = list(requests)
    return c


def claim_config(driver: str, attribute: str, *requests: str) -> Obj:
    c: Obj = {"source": "FromClaim", **device_configuration(driver, attribute)}
    if requests:
        c["requests"] = list(requests)
    return c


def device_id(driver: str, pool_: str, dev: str) -> DeviceID:
    return (driver, pool_, dev)


# --- running ----------------------------------------------------------------------------------
def evaluate_selector(expression: str, driver: str, dev: Obj) -> bool:
    try:
        compile_expression(expression)
    except CELError as exc:
        raise CompileFailure(str(exc)) from None
    try:
        return evaluate(expression, device_variables(driver, dev))
    except CELError as exc:
        raise RuntimeFailure(str(exc)) from None


@dataclass
class Case:
    claims: Sequence[Obj] = ()
    classes: Sequence[Obj] = ()
    slices: Sequence[Obj] = ()
    node: tuple[str, dict[str, str]] = field(default_factory=node)
    features: Features = NO_FEATURES
    allocated: Iterable[DeviceID] = ()
    shared: Iterable[DeviceID] = ()
    consumed: Mapping[DeviceID, Mapping[str, str]] = field(default_factory=dict)
    rules: Sequence[Obj] = ()
    #: The allocations expected (one per claim, any order), or None when nothing fits.
    want: Sequence[Obj] | None = None
    #: A part of the AllocationError message expected.
    error: str | None = None
    #: The error is the node's own (AllocationFailedOnNode).
    node_error: bool = False
    #: How many times the search looked for one device (upstream's NumAllocateOneInvocations).
    invocations: int | None = None


def allocator_for(c: Case) -> Allocator:
    return Allocator(
        copy.deepcopy(list(c.claims)),
        set(c.allocated),
        {k["metadata"]["name"]: copy.deepcopy(k) for k in c.classes},
        copy.deepcopy(list(c.slices)),
        evaluate_selector,
        features=c.features,
        device_taint_rules=c.rules,
        shared=c.shared,
        consumed_capacity={d: {k: amount_of(v).value for k, v in m.items()} for d, m in c.consumed.items()},
    )


def _canonical(allocation_: Obj | None) -> str:
    a = copy.deepcopy(allocation_) or {}
    results = a.get("devices", {}).get("results") or []
    for r in results:
        if "shareID" in r:
            r["shareID"] = FIXED_SHARE_ID
    a.setdefault("devices", {})["results"] = sorted(results, key=lambda r: json.dumps(r, sort_keys=True))
    for term in (a.get("nodeSelector") or {}).get("nodeSelectorTerms") or ():
        for kind in ("matchExpressions", "matchFields"):
            reqs = term.get(kind) or []
            for r in reqs:
                r["values"] = sorted(r.get("values") or ())
            term[kind] = sorted(reqs, key=lambda r: json.dumps(r, sort_keys=True))
            if not term[kind]:
                del term[kind]
    return json.dumps(a, sort_keys=True)


def same_allocations(got: Sequence[Obj] | None, want: Sequence[Obj] | None) -> bool:
    if not got or not want:
        return not got and not want
    return sorted(map(_canonical, got)) == sorted(map(_canonical, want))
