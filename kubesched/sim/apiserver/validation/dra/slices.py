"""ResourceSlice as kube-apiserver v1.37 validates it (validateResourceSliceSpec): its driver and
pool, exactly one way of naming its nodes, shared counters or devices; each device's name,
attributes, capacities with their request policies (consumable capacity), taints, counter
consumption (partitionable devices), own node selection and binding conditions."""

from __future__ import annotations

import re
from typing import Any

from kubesched.framework.names import dns1123_subdomain_errors
from kubesched.framework.resources import QuantityError, parse_quantity
from kubesched.objects import Obj
from kubesched.sim.apiserver.validation.core import validate_node_selector_term
from kubesched.sim.apiserver.validation.dra.fields import (
    as_obj,
    as_str,
    dns_label,
    duplicate,
    indexed_dicts,
    too_long,
    too_many,
    validate_binding_conditions,
    validate_device_taint,
    validate_driver_name,
    validate_pool_name,
    validate_qualified_name,
)
from kubesched.sim.apiserver.validation.meta import Cause, forbidden_cause, invalid_cause, required_cause
from kubesched.sim.apiserver.validation.resources import quantity_string

#: The bounds of k8s.io/api/resource/v1 (types.go).
MAX_DEVICES = 128
MAX_DEVICES_WITH_ADVANCED_FEATURES = 64
MAX_COUNTER_SETS = 8
MAX_COUNTERS_PER_SET = 32
MAX_COUNTER_CONSUMPTIONS_PER_DEVICE = 2
MAX_COUNTERS_PER_CONSUMPTION = 32
MAX_DEVICE_TAINTS = 16
MAX_ATTRIBUTES_AND_CAPACITIES = 32


def _quantity(value: Any) -> Any:
    try:
        return parse_quantity(value)
    except (QuantityError, TypeError, ValueError, ArithmeticError):
        return None


def _counters(counters: Any, limit: int, path: str) -> list[Cause]:
    if not isinstance(counters, dict) or not counters:
        return [required_cause(path)]
    if len(counters) > limit:
        return [too_many(path, len(counters), limit)]
    causes: list[Cause] = []
    for name, counter in counters.items():
        causes += dns_label(name, path)  # a key's error names the map, as validateMap has it
        if not isinstance(counter, dict) or counter.get("value") is None:
            causes.append(required_cause(f"{path}[{name}].value"))
    return causes


def _counter_set(counter_set: Obj, path: str) -> list[Cause]:
    name = as_str(counter_set.get("name"))
    causes = [required_cause(f"{path}.name")] if not name else dns_label(name, f"{path}.name")
    return causes + _counters(counter_set.get("counters"), MAX_COUNTERS_PER_SET, f"{path}.counters")


def _counter_consumption(consumption: Obj, path: str) -> list[Cause]:
    counter_set = as_str(consumption.get("counterSet"))
    causes = [required_cause(f"{path}.counterSet")] if not counter_set else dns_label(counter_set, f"{path}.counterSet")
    return causes + _counters(consumption.get("counters"), MAX_COUNTERS_PER_CONSUMPTION, f"{path}.counters")


def _request_policy(capacity: Any, policy: Obj, path: str) -> list[Cause]:
    """validateRequestPolicy: ``validValues`` or ``validRange`` (not both), each with a default
    that they allow, within the capacity."""
    causes: list[Cause] = []
    # Go writes a quantity in the format it was given (2Gi stays 2Gi): so do the messages.
    binary = any(
        isinstance(v, str) and v.rstrip().endswith("i")
        for v in [policy.get("default"), *(policy.get("validValues") or ()), *as_obj(policy.get("validRange")).values()]
    )

    def show(amount: Any) -> str:
        return quantity_string(amount, binary)

    values = [v for v in (policy.get("validValues") or ()) if _quantity(v) is not None]
    valid_range = policy.get("validRange")
    if values and isinstance(valid_range, dict):
        return [
            forbidden_cause(
                path,
                'exactly one policy can be specified, cannot specify "validValues" and "validRange" at the same time',
            )
        ]
    default = _quantity(policy.get("default"))
    if values:
        if default is None:
            return [required_cause(f"{path}.default", "required when validValues is defined")]
        amounts = [_quantity(v) for v in values]
        for i in range(len(amounts) - 1):
            if amounts[i] > amounts[i + 1]:
                causes.append(
                    invalid_cause(
                        f"{path}.validValues[{i + 1}]",
                        show(amounts[i + 1]),
                        "values must be sorted in ascending order",
                    )
                )
        seen: set[Any] = set()
        for i, amount in enumerate(amounts):
            if capacity is not None and amount > capacity:
                causes.append(
                    invalid_cause(
                        f"{path}.validValues[{i}]",
                        show(amount),
                        f"option is larger than capacity value: {show(capacity)}",
                    )
                )
            if amount in seen:
                causes.append(duplicate(f"{path}.validValues[{i}]", show(amount)))
            seen.add(amount)
        if default not in amounts:
            causes.append(
                invalid_cause(
                    f"{path}.validValues",
                    show(default),
                    "default value is not valid according to the requestPolicy",
                )
            )
    elif isinstance(valid_range, dict):
        if default is None:
            return [required_cause(f"{path}.default", "required when validRange is defined")]
        where = f"{path}.validRange"
        low = _quantity(valid_range.get("min"))
        if low is None:
            return [required_cause(f"{where}.min", "required when validRange is defined")]
        if capacity is not None and low > capacity:
            causes.append(
                invalid_cause(
                    f"{where}.min",
                    show(low),
                    f"min is larger than capacity value: {show(capacity)}",
                )
            )
        if default < low:
            causes.append(invalid_cause(f"{where}.default", show(default), f"default is less than min: {show(low)}"))
        high = _quantity(valid_range.get("max"))
        if high is not None:
            if low > high:
                causes.append(invalid_cause(f"{where}.max", show(low), f"min is larger than max: {show(high)}"))
            if capacity is not None and high > capacity:
                causes.append(
                    invalid_cause(
                        f"{where}.max",
                        show(high),
                        f"max is larger than capacity value: {show(capacity)}",
                    )
                )
            if default > high:
                causes.append(invalid_cause(f"{where}.max", show(default), f"default is more than max: {show(high)}"))
        step = _quantity(valid_range.get("step"))
        if step is not None and step <= 0:
            causes.append(invalid_cause(f"{where}.step", show(step), "must be greater than zero"))
        elif step:
            if capacity is not None and low + step > capacity:
                causes.append(
                    invalid_cause(
                        f"{where}.step",
                        show(step),
                        f"one step {show(low + step)} is larger than capacity value: {show(capacity)}",
                    )
                )
            for value in (default, high):
                if value is not None and (value - low) % step:
                    causes.append(
                        invalid_cause(
                            f"{where}.step",
                            show(value),
                            f"value is not a multiple of a given step ({show(step)}) from ({show(low)})",
                        )
                    )
    return causes


_SEMVER = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(-(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(\.(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*)?"
    r"(\+[0-9a-zA-Z-]+(\.[0-9a-zA-Z-]+)*)?$"
)
MAX_ATTRIBUTE_VALUE_LENGTH = 64


def _attribute(attribute: Any, path: str) -> list[Cause]:
    """validateDeviceAttribute: exactly one of ``bool``, ``int``, ``string``, ``version``; a
    string at most 64 characters, a version a semver.org 2.0.0 one of at most 64."""
    attribute = as_obj(attribute)
    causes: list[Cause] = []
    string, version = attribute.get("string"), attribute.get("version")
    if isinstance(string, str) and len(string) > MAX_ATTRIBUTE_VALUE_LENGTH:
        causes.append(too_long(f"{path}.string", MAX_ATTRIBUTE_VALUE_LENGTH))
    if isinstance(version, str):
        if not _SEMVER.match(version):
            causes.append(
                invalid_cause(f"{path}.version", version, "must be a string compatible with semver.org spec 2.0.0")
            )
        if len(version) > MAX_ATTRIBUTE_VALUE_LENGTH:
            causes.append(too_long(f"{path}.version", MAX_ATTRIBUTE_VALUE_LENGTH))
    kinds = [k for k in ("bool", "int", "string", "version") if attribute.get(k) is not None]
    lists = [k for k in ("bools", "ints", "strings", "versions") if attribute.get(k) is not None]
    if not kinds and not lists:
        causes.append(invalid_cause(path, "", "exactly one value must be specified"))
    elif len(kinds) + len(lists) > 1:
        causes.append((path, "FieldValueInvalid", "Invalid value: ...: exactly one value must be specified"))
    return causes


def _device(device: Obj, path: str, per_device_nodes: bool) -> list[Cause]:
    causes = dns_label(device.get("name"), f"{path}.name")
    attributes = as_obj(device.get("attributes"))
    capacity = as_obj(device.get("capacity"))
    if len(attributes) + len(capacity) > MAX_ATTRIBUTES_AND_CAPACITIES:
        causes.append(
            invalid_cause(
                path,
                len(attributes) + len(capacity),
                f"the total number of attributes and capacities must not exceed {MAX_ATTRIBUTES_AND_CAPACITIES}",
            )
        )
    for name, attribute in attributes.items():
        # a key's error names the map (validateMap), a value's the key
        causes += validate_qualified_name(str(name), f"{path}.attributes")
        causes += _attribute(attribute, f"{path}.attributes[{name}]")
    multiple = device.get("allowMultipleAllocations") is True
    for name, cap in capacity.items():
        where = f"{path}.capacity[{name}]"
        causes += validate_qualified_name(str(name), f"{path}.capacity")
        policy = cap.get("requestPolicy") if isinstance(cap, dict) else None
        if isinstance(policy, dict):
            if not multiple:
                causes.append(forbidden_cause(f"{where}.requestPolicy", "allowMultipleAllocations must be true"))
            else:
                causes += _request_policy(_quantity(cap.get("value")), policy, f"{where}.requestPolicy")
    taints = indexed_dicts(device.get("taints"))
    if len(taints) > MAX_DEVICE_TAINTS:
        causes.append(too_many(f"{path}.taints", len(taints), MAX_DEVICE_TAINTS))
    else:
        for i, taint in taints:
            causes += validate_device_taint(taint, f"{path}.taints[{i}]")
    consumptions = indexed_dicts(device.get("consumesCounters"))
    if len(consumptions) > MAX_COUNTER_CONSUMPTIONS_PER_DEVICE:
        causes.append(too_many(f"{path}.consumesCounters", len(consumptions), MAX_COUNTER_CONSUMPTIONS_PER_DEVICE))
    else:
        seen: set[str] = set()
        for i, consumption in consumptions:
            causes += _counter_consumption(consumption, f"{path}.consumesCounters[{i}]")
            counter_set = as_str(consumption.get("counterSet"))
            if counter_set in seen:
                causes.append(duplicate(f"{path}.consumesCounters[{i}]", counter_set))
            seen.add(counter_set)
    placed = [f"`{f}`" for f in ("nodeName", "nodeSelector", "allNodes") if device.get(f) not in (None,)]
    if per_device_nodes:
        if device.get("nodeName") == "":
            causes.append(invalid_cause(f"{path}.nodeName", "", "must not be empty"))
        if device.get("allNodes") is False:
            causes.append(invalid_cause(f"{path}.allNodes", False, "must be either unset or set to true"))
        chosen = [
            f
            for f, ok in (
                ("`nodeName`", bool(device.get("nodeName"))),
                ("`nodeSelector`", isinstance(device.get("nodeSelector"), dict)),
                ("`allNodes`", device.get("allNodes") is True),
            )
            if ok
        ]
        message = (
            "exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required when `perDeviceNodeSelection` "
            "is set to true in the ResourceSlice spec"
        )
        if not chosen:
            causes.append(required_cause(path, message))
        elif len(chosen) > 1:
            causes.append(invalid_cause(path, "{" + ", ".join(chosen) + "}", message))
    elif placed:
        causes.append(
            (
                path,
                "FieldValueInvalid",
                "Invalid value: null: `nodeName`, `nodeSelector` and `allNodes` can only be set if "
                "`perDeviceNodeSelection` is set to true in the ResourceSlice spec",
            )
        )
    return causes + validate_binding_conditions(device, path)


def validate_resource_slice(slice_: Obj) -> list[Cause]:
    """validateResourceSliceSpec: driver and pool, exactly one way of naming its nodes, shared
    counters or devices (not both), and each device."""
    spec = as_obj(slice_.get("spec"))
    causes = validate_driver_name(spec.get("driver"), "spec.driver")
    pool = as_obj(spec.get("pool"))
    causes += validate_pool_name(pool.get("name"), "spec.pool.name")
    count = pool.get("resourceSliceCount")
    if not isinstance(count, int) or count <= 0:
        causes.append(invalid_cause("spec.pool.resourceSliceCount", count or 0, "must be greater than zero"))
    generation = pool.get("generation")
    if isinstance(generation, int) and generation < 0:
        causes.append(invalid_cause("spec.pool.generation", generation, "must be greater than or equal to zero"))
    chosen: list[str] = []
    node_name = spec.get("nodeName")
    if node_name is not None:
        if node_name:
            chosen.append("`nodeName`")
            causes += [
                invalid_cause("spec.nodeName", node_name, m) for m in dns1123_subdomain_errors(as_str(node_name))
            ]
        else:
            causes.append(invalid_cause("spec.nodeName", "", "must be either unset or set to a non-empty string"))
    selector = spec.get("nodeSelector")
    if isinstance(selector, dict):
        chosen.append("`nodeSelector`")
        terms = indexed_dicts(selector.get("nodeSelectorTerms"))
        for i, term in terms:
            causes += validate_node_selector_term(term, f"spec.nodeSelector.nodeSelectorTerms[{i}]")
        if not terms:
            causes.append(
                required_cause("spec.nodeSelector.nodeSelectorTerms", "must have at least one node selector term")
            )
        if len(terms) != 1:
            shown = "[]core.NodeSelectorTerm(nil)" if not terms else f"[]core.NodeSelectorTerm{{...{len(terms)} terms}}"
            causes.append(
                (
                    "spec.nodeSelector.nodeSelectorTerms",
                    "FieldValueInvalid",
                    f"Invalid value: {shown}: must have exactly one node selector term",
                )
            )
    for field in ("allNodes", "perDeviceNodeSelection"):
        value = spec.get(field)
        if value is True:
            chosen.append(f"`{field}`")
        elif value is not None:
            causes.append(invalid_cause(f"spec.{field}", value, "must be either unset or set to true"))
    one_of = "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required"
    if not chosen:
        causes.append(required_cause("spec", one_of))
    elif len(chosen) > 1:
        causes.append(invalid_cause("spec", "{" + ", ".join(chosen) + "}", f"{one_of}, but multiple fields are set"))
    if spec.get("sharedCounters") is not None and spec.get("devices") is not None:
        causes.append(invalid_cause("spec", "", "only one of `sharedCounters` or `devices` is allowed"))
    devices = indexed_dicts(spec.get("devices"))
    advanced = any(d.get("taints") or d.get("consumesCounters") for _, d in devices)
    limit = MAX_DEVICES_WITH_ADVANCED_FEATURES if advanced else MAX_DEVICES
    if len(devices) > limit:
        causes.append(too_many("spec.devices", len(devices), limit))
    else:
        names: set[str] = set()
        for i, device in devices:
            causes += _device(device, f"spec.devices[{i}]", spec.get("perDeviceNodeSelection") is True)
            name = as_str(device.get("name"))
            if name in names:
                causes.append(duplicate(f"spec.devices[{i}]", name))
            names.add(name)
    counter_sets = indexed_dicts(spec.get("sharedCounters"))
    if len(counter_sets) > MAX_COUNTER_SETS:
        causes.append(too_many("spec.sharedCounters", len(counter_sets), MAX_COUNTER_SETS))
    else:
        names = set()
        for i, counter_set in counter_sets:
            causes += _counter_set(counter_set, f"spec.sharedCounters[{i}]")
            name = as_str(counter_set.get("name"))
            if name in names:
                causes.append(duplicate(f"spec.sharedCounters[{i}]", name))
            names.add(name)
    return causes
