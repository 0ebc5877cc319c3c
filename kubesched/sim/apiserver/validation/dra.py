"""resource.k8s.io/v1 as kube-apiserver v1.37 validates it (pkg/apis/resource/validation): the
share of ResourceSlice, ResourceClaim (and its template), DeviceClass and DeviceTaintRule that the
scheduler's DynamicResources plugin reads — device taints and tolerations, shared counters and
the devices consuming them, binding conditions, consumable capacity and its request policy,
capacity requests, extended resource names — plus DeviceTaintRule's defaulting (``timeAdded``).

CEL selectors are not compiled here (the scheduler reports an expression it cannot evaluate);
attribute values other than their kinds are not checked either. Functions return causes
``(field, reason, message)`` with upstream's paths and words, as the rest of validation/.
"""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime
from typing import Any

from kubesched.framework.names import dns1123_label_errors, dns1123_subdomain_errors, label_value_errors
from kubesched.framework.resources import QuantityError, is_extended_resource, parse_quantity
from kubesched.sim.apiserver.validation.core import validate_node_selector_term
from kubesched.sim.apiserver.validation.meta import (
    Cause,
    forbidden_cause,
    invalid_cause,
    not_supported_cause,
    required_cause,
    validate_label_name,
)
from kubesched.sim.apiserver.validation.resources import quantity_string

Obj = dict[str, Any]

#: Device taint effects (validDeviceTaintEffects, as NotSupported lists them: sorted).
DEVICE_TAINT_EFFECTS = ("NoExecute", "NoSchedule", "None")
DEVICE_TOLERATION_OPERATORS = ("Equal", "Exists")
ALLOCATION_MODES = ("All", "ExactCount")
#: The bounds of k8s.io/api/resource/v1 (types.go).
DRIVER_NAME_MAX = 63
POOL_NAME_MAX = 253
MAX_DEVICES = 128
MAX_DEVICES_WITH_ADVANCED_FEATURES = 64
MAX_COUNTER_SETS = 8
MAX_COUNTERS_PER_SET = 32
MAX_COUNTER_CONSUMPTIONS_PER_DEVICE = 2
MAX_COUNTERS_PER_CONSUMPTION = 32
MAX_DEVICE_TAINTS = 16
MAX_BINDING_CONDITIONS = 4
MAX_ATTRIBUTES_AND_CAPACITIES = 32
MAX_REQUESTS = 32
MAX_SUBREQUESTS = 8
MAX_TOLERATIONS = 16
MAX_RULE_CONDITIONS = 8
MAX_ID_LENGTH = 32
_C_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _dicts(items: Any) -> list[tuple[int, Obj]]:
    return [(i, x) for i, x in enumerate(items or ()) if isinstance(x, dict)]


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _obj(value: Any) -> Obj:
    return value if isinstance(value, dict) else {}


def _too_many(path: str, count: int, limit: int) -> Cause:
    return (path, "FieldValueTooMany", f"Too many: {count}: must have at most {limit} items")


def _too_long(path: str, limit: int) -> Cause:
    return (path, "FieldValueTooLong", f"Too long: may not be more than {limit} bytes")


def _duplicate(path: str, value: Any) -> Cause:
    return (path, "FieldValueDuplicate", f'Duplicate value: "{value}"')


def _quantity(value: Any) -> Any:
    try:
        return parse_quantity(value)
    except (QuantityError, TypeError, ValueError, ArithmeticError):
        return None


# --- names --------------------------------------------------------------------------------------


def validate_driver_name(name: Any, path: str) -> list[Cause]:
    """A DRA driver's name, checked as a CSI driver's: required, at most 63 characters, a DNS
    subdomain once lowercased."""
    text = _str(name)
    causes: list[Cause] = []
    if not text:
        causes.append(required_cause(path))
    if len(text) > DRIVER_NAME_MAX:
        causes.append(_too_long(path, DRIVER_NAME_MAX))
    return causes + [invalid_cause(path, text, m) for m in dns1123_subdomain_errors(text.lower())]


def validate_pool_name(name: Any, path: str) -> list[Cause]:
    """Required, at most 253 characters, each ``/``-separated part a DNS subdomain."""
    text = _str(name)
    if not text:
        return [required_cause(path)]
    causes = [_too_long(path, POOL_NAME_MAX)] if len(text) > POOL_NAME_MAX else []
    for part in text.split("/"):
        causes += [invalid_cause(path, part, m) for m in dns1123_subdomain_errors(part)]
    return causes


def _dns_label(value: Any, path: str) -> list[Cause]:
    text = _str(value)
    return [invalid_cause(path, text, m) for m in dns1123_label_errors(text)]


def _c_identifier(value: str, path: str) -> list[Cause]:
    causes = [_too_long(path, MAX_ID_LENGTH)] if len(value) > MAX_ID_LENGTH else []
    if not _C_IDENTIFIER.match(value):
        causes.append(
            invalid_cause(
                path,
                value,
                "a valid C identifier must start with alphabetic character or '_', followed by a string of "
                "alphanumeric characters or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName', regex used for "
                "validation is '[A-Za-z_][A-Za-z0-9_]*')",
            )
        )
    return causes


def validate_qualified_name(name: str, path: str) -> list[Cause]:
    """An attribute's or a capacity's name: a C identifier, optionally behind a driver-name-like
    domain and a slash."""
    parts = name.split("/")
    if len(parts) == 1:
        return _c_identifier(parts[0], path)
    causes: list[Cause] = []
    domain, ident = parts[0], parts[1]
    causes += (
        [invalid_cause(path, "", "the domain must not be empty")] if not domain else validate_driver_name(domain, path)
    )
    causes += [invalid_cause(path, "", "the name must not be empty")] if not ident else _c_identifier(ident, path)
    return causes


# --- taints and tolerations ---------------------------------------------------------------------


def validate_device_taint(taint: Obj, path: str, old: Obj | None = None) -> list[Cause]:
    """validateDeviceTaint: key a label name, value a label value, effect required and known
    (an unchanged effect of a stored object is not checked again)."""
    causes = validate_label_name(_str(taint.get("key")), f"{path}.key")
    value = _str(taint.get("value"))
    if value:
        causes += [invalid_cause(f"{path}.value", value, m) for m in label_value_errors(value)]
    effect = _str(taint.get("effect"))
    if old is None or _str(old.get("effect")) != effect:
        if not effect:
            causes.append(required_cause(f"{path}.effect"))
        elif effect not in DEVICE_TAINT_EFFECTS:
            causes.append(not_supported_cause(f"{path}.effect", effect, DEVICE_TAINT_EFFECTS))
    return causes


def validate_device_toleration(toleration: Obj, path: str) -> list[Cause]:
    """validateDeviceToleration: key a label name when set; ``Exists`` with no value, ``Equal``
    with a label value; an effect, when set, one of the taint effects."""
    causes: list[Cause] = []
    key = _str(toleration.get("key"))
    if key:
        causes += validate_label_name(key, f"{path}.key")
    op, value = _str(toleration.get("operator")), _str(toleration.get("value"))
    if op == "Exists":
        if value:
            causes.append(invalid_cause(f"{path}.value", value, "must be empty for operator `Exists`"))
    elif op == "Equal":
        causes += [invalid_cause(f"{path}.value", value, m) for m in label_value_errors(value)]
    elif not op:
        causes.append(required_cause(f"{path}.operator"))
    else:
        causes.append(not_supported_cause(f"{path}.operator", op, DEVICE_TOLERATION_OPERATORS))
    effect = _str(toleration.get("effect"))
    if effect and effect not in DEVICE_TAINT_EFFECTS:
        causes.append(not_supported_cause(f"{path}.effect", effect, DEVICE_TAINT_EFFECTS))
    return causes


def _tolerations(items: Any, path: str) -> list[Cause]:
    listed = _dicts(items)
    if len(listed) > MAX_TOLERATIONS:
        return [_too_many(path, len(listed), MAX_TOLERATIONS)]
    causes: list[Cause] = []
    for i, t in listed:
        causes += validate_device_toleration(t, f"{path}[{i}]")
    return causes


# --- ResourceSlice ------------------------------------------------------------------------------


def _binding_conditions(device: Obj, path: str) -> list[Cause]:
    """validateDeviceBindingParameters: at most four of each, label names, no duplicates, no
    overlap, and the two only together."""
    causes: list[Cause] = []
    conditions = [c for c in device.get("bindingConditions") or () if isinstance(c, str)]
    failures = [c for c in device.get("bindingFailureConditions") or () if isinstance(c, str)]
    for field, values in (("bindingConditions", conditions), ("bindingFailureConditions", failures)):
        if len(values) > MAX_BINDING_CONDITIONS:
            causes.append(_too_many(f"{path}.{field}", len(values), MAX_BINDING_CONDITIONS))
            continue
        seen: set[str] = set()
        for i, value in enumerate(values):
            causes += validate_label_name(value, f"{path}.{field}[{i}]")
            if value in seen:
                causes.append(_duplicate(f"{path}.{field}[{i}]", value))
            seen.add(value)
            if field == "bindingFailureConditions" and value in conditions:
                causes.append(
                    invalid_cause(
                        f"{path}.{field}[{i}]",
                        value,
                        "bindingFailureConditions must not overlap with bindingConditions",
                    )
                )
    # Go shows the missing list as %#v shows a nil slice.
    if not conditions and failures:
        causes.append(
            (
                f"{path}.bindingConditions",
                "FieldValueInvalid",
                "Invalid value: []string(nil): bindingConditions are required to use bindingFailureConditions",
            )
        )
    if not failures and conditions:
        causes.append(
            (
                f"{path}.bindingFailureConditions",
                "FieldValueInvalid",
                "Invalid value: []string(nil): bindingFailureConditions are required to use bindingConditions",
            )
        )
    return causes


def _counters(counters: Any, limit: int, path: str) -> list[Cause]:
    if not isinstance(counters, dict) or not counters:
        return [required_cause(path)]
    if len(counters) > limit:
        return [_too_many(path, len(counters), limit)]
    causes: list[Cause] = []
    for name, counter in counters.items():
        causes += _dns_label(name, path)  # a key's error names the map, as validateMap has it
        if not isinstance(counter, dict) or counter.get("value") is None:
            causes.append(required_cause(f"{path}[{name}].value"))
    return causes


def _counter_set(counter_set: Obj, path: str) -> list[Cause]:
    name = _str(counter_set.get("name"))
    causes = [required_cause(f"{path}.name")] if not name else _dns_label(name, f"{path}.name")
    return causes + _counters(counter_set.get("counters"), MAX_COUNTERS_PER_SET, f"{path}.counters")


def _counter_consumption(consumption: Obj, path: str) -> list[Cause]:
    counter_set = _str(consumption.get("counterSet"))
    causes = (
        [required_cause(f"{path}.counterSet")] if not counter_set else _dns_label(counter_set, f"{path}.counterSet")
    )
    return causes + _counters(consumption.get("counters"), MAX_COUNTERS_PER_CONSUMPTION, f"{path}.counters")


def _request_policy(capacity: Any, policy: Obj, path: str) -> list[Cause]:
    """validateRequestPolicy: ``validValues`` or ``validRange`` (not both), each with a default
    that they allow, within the capacity."""
    causes: list[Cause] = []
    # Go writes a quantity in the format it was given (2Gi stays 2Gi): so do the messages.
    binary = any(
        isinstance(v, str) and v.rstrip().endswith("i")
        for v in [policy.get("default"), *(policy.get("validValues") or ()), *_obj(policy.get("validRange")).values()]
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
                causes.append(_duplicate(f"{path}.validValues[{i}]", show(amount)))
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
    attribute = _obj(attribute)
    causes: list[Cause] = []
    string, version = attribute.get("string"), attribute.get("version")
    if isinstance(string, str) and len(string) > MAX_ATTRIBUTE_VALUE_LENGTH:
        causes.append(_too_long(f"{path}.string", MAX_ATTRIBUTE_VALUE_LENGTH))
    if isinstance(version, str):
        if not _SEMVER.match(version):
            causes.append(
                invalid_cause(f"{path}.version", version, "must be a string compatible with semver.org spec 2.0.0")
            )
        if len(version) > MAX_ATTRIBUTE_VALUE_LENGTH:
            causes.append(_too_long(f"{path}.version", MAX_ATTRIBUTE_VALUE_LENGTH))
    kinds = [k for k in ("bool", "int", "string", "version") if attribute.get(k) is not None]
    lists = [k for k in ("bools", "ints", "strings", "versions") if attribute.get(k) is not None]
    if not kinds and not lists:
        causes.append(invalid_cause(path, "", "exactly one value must be specified"))
    elif len(kinds) + len(lists) > 1:
        causes.append((path, "FieldValueInvalid", "Invalid value: ...: exactly one value must be specified"))
    return causes


def _device(device: Obj, path: str, per_device_nodes: bool) -> list[Cause]:
    causes = _dns_label(device.get("name"), f"{path}.name")
    attributes = _obj(device.get("attributes"))
    capacity = _obj(device.get("capacity"))
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
    taints = _dicts(device.get("taints"))
    if len(taints) > MAX_DEVICE_TAINTS:
        causes.append(_too_many(f"{path}.taints", len(taints), MAX_DEVICE_TAINTS))
    else:
        for i, taint in taints:
            causes += validate_device_taint(taint, f"{path}.taints[{i}]")
    consumptions = _dicts(device.get("consumesCounters"))
    if len(consumptions) > MAX_COUNTER_CONSUMPTIONS_PER_DEVICE:
        causes.append(_too_many(f"{path}.consumesCounters", len(consumptions), MAX_COUNTER_CONSUMPTIONS_PER_DEVICE))
    else:
        seen: set[str] = set()
        for i, consumption in consumptions:
            causes += _counter_consumption(consumption, f"{path}.consumesCounters[{i}]")
            counter_set = _str(consumption.get("counterSet"))
            if counter_set in seen:
                causes.append(_duplicate(f"{path}.consumesCounters[{i}]", counter_set))
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
    return causes + _binding_conditions(device, path)


def validate_resource_slice(slice_: Obj) -> list[Cause]:
    """validateResourceSliceSpec: driver and pool, exactly one way of naming its nodes, shared
    counters or devices (not both), and each device."""
    spec = _obj(slice_.get("spec"))
    causes = validate_driver_name(spec.get("driver"), "spec.driver")
    pool = _obj(spec.get("pool"))
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
            causes += [invalid_cause("spec.nodeName", node_name, m) for m in dns1123_subdomain_errors(_str(node_name))]
        else:
            causes.append(invalid_cause("spec.nodeName", "", "must be either unset or set to a non-empty string"))
    selector = spec.get("nodeSelector")
    if isinstance(selector, dict):
        chosen.append("`nodeSelector`")
        terms = _dicts(selector.get("nodeSelectorTerms"))
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
    devices = _dicts(spec.get("devices"))
    advanced = any(d.get("taints") or d.get("consumesCounters") for _, d in devices)
    limit = MAX_DEVICES_WITH_ADVANCED_FEATURES if advanced else MAX_DEVICES
    if len(devices) > limit:
        causes.append(_too_many("spec.devices", len(devices), limit))
    else:
        names: set[str] = set()
        for i, device in devices:
            causes += _device(device, f"spec.devices[{i}]", spec.get("perDeviceNodeSelection") is True)
            name = _str(device.get("name"))
            if name in names:
                causes.append(_duplicate(f"spec.devices[{i}]", name))
            names.add(name)
    counter_sets = _dicts(spec.get("sharedCounters"))
    if len(counter_sets) > MAX_COUNTER_SETS:
        causes.append(_too_many("spec.sharedCounters", len(counter_sets), MAX_COUNTER_SETS))
    else:
        names = set()
        for i, counter_set in counter_sets:
            causes += _counter_set(counter_set, f"spec.sharedCounters[{i}]")
            name = _str(counter_set.get("name"))
            if name in names:
                causes.append(_duplicate(f"spec.sharedCounters[{i}]", name))
            names.add(name)
    return causes


# --- ResourceClaim and its template -------------------------------------------------------------


def _exact_request(request: Obj, path: str) -> list[Cause]:
    causes: list[Cause] = []
    cls = _str(request.get("deviceClassName"))
    if not cls:
        causes.append(required_cause(f"{path}.deviceClassName"))
    else:
        causes += [invalid_cause(f"{path}.deviceClassName", cls, m) for m in dns1123_subdomain_errors(cls)]
    mode, count = request.get("allocationMode"), request.get("count") or 0
    if mode == "All":
        if count:
            causes.append(invalid_cause(f"{path}.count", count, "must not be specified when allocationMode is 'All'"))
    elif mode == "ExactCount":
        if count <= 0:
            causes.append(invalid_cause(f"{path}.count", count, "must be greater than zero"))
    else:
        causes.append(not_supported_cause(f"{path}.allocationMode", _str(mode), ALLOCATION_MODES))
    causes += _tolerations(request.get("tolerations"), f"{path}.tolerations")
    capacity = request.get("capacity")
    if isinstance(capacity, dict) and isinstance(capacity.get("requests"), dict):
        for name in capacity["requests"]:
            causes += validate_qualified_name(str(name), f"{path}.capacity.requests[{name}]")
    return causes


def _default_request(request: Obj) -> None:
    """Defaulting: an exact or sub-request without an allocation mode asks for one device."""
    if not request.get("allocationMode"):
        request["allocationMode"] = "ExactCount"
        request.setdefault("count", 1)
    elif request["allocationMode"] == "ExactCount" and not request.get("count"):
        request["count"] = 1


def default_claim_spec(spec: Any) -> None:
    """The defaults kube-apiserver gives a claim's requests (``allocationMode: ExactCount`` with
    ``count: 1``, and ``operator: Equal`` for a device toleration without one)."""
    devices = spec.get("devices") if isinstance(spec, dict) else None
    if not isinstance(devices, dict):
        return
    for _, request in _dicts(devices.get("requests")):
        for request_part in [request.get("exactly"), *(sub for _, sub in _dicts(request.get("firstAvailable")))]:
            if isinstance(request_part, dict):
                _default_request(request_part)
                for _, toleration in _dicts(request_part.get("tolerations")):
                    toleration.setdefault("operator", "Equal")


def validate_claim_spec(spec: Any, path: str = "spec") -> list[Cause]:
    """validateDeviceClaim's requests: each named (a DNS label, unique) with exactly one of
    ``exactly`` and ``firstAvailable``, a device class, an allocation mode, tolerations and
    capacity requests as upstream checks them."""
    devices = spec.get("devices") if isinstance(spec, dict) else None
    if not isinstance(devices, dict):
        return []
    requests = _dicts(devices.get("requests"))
    where = f"{path}.devices.requests"
    if len(requests) > MAX_REQUESTS:
        return [_too_many(where, len(requests), MAX_REQUESTS)]
    causes: list[Cause] = []
    names: set[str] = set()
    for i, request in requests:
        at = f"{where}[{i}]"
        name = _str(request.get("name"))
        causes += _dns_label(name, f"{at}.name")
        if name in names:
            causes.append(_duplicate(at, name))
        names.add(name)
        exactly, first = request.get("exactly"), _dicts(request.get("firstAvailable"))
        if isinstance(exactly, dict) and first:
            causes.append(
                (
                    at,
                    "FieldValueInvalid",
                    "Invalid value: null: exactly one of `exactly` or `firstAvailable` is required, but multiple fields are set",
                )
            )
        elif isinstance(exactly, dict):
            causes += _exact_request(exactly, f"{at}.exactly")
        elif first:
            if len(first) > MAX_SUBREQUESTS:
                causes.append(_too_many(f"{at}.firstAvailable", len(first), MAX_SUBREQUESTS))
                continue
            sub_names: set[str] = set()
            for j, sub in first:
                sub_at = f"{at}.firstAvailable[{j}]"
                sub_name = _str(sub.get("name"))
                causes += _dns_label(sub_name, f"{sub_at}.name")
                if sub_name in sub_names:
                    causes.append(_duplicate(sub_at, sub_name))
                sub_names.add(sub_name)
                causes += _exact_request(sub, sub_at)
        else:
            causes.append(required_cause(at, "exactly one of `exactly` or `firstAvailable` is required"))
    return causes


def validate_claim_status(status: Any) -> list[Cause]:
    """The claim status fields 1.37 adds that a scheduler writes or reads: each device status's
    driver, pool, device and ``shareID`` (a lowercase RFC 4122 UUID)."""
    if not isinstance(status, dict):
        return []
    causes: list[Cause] = []
    for i, device in _dicts(status.get("devices")):
        at = f"status.devices[{i}]"
        causes += validate_driver_name(device.get("driver"), f"{at}.driver")
        causes += validate_pool_name(device.get("pool"), f"{at}.pool")
        causes += _dns_label(device.get("device"), f"{at}.device")
        share = device.get("shareID")
        if share is not None:
            causes += _validate_uid(_str(share), f"{at}.shareID")
    allocation = _obj(status.get("allocation"))
    results = _obj(allocation.get("devices")).get("results")
    for i, result in _dicts(results):
        at = f"status.allocation.devices.results[{i}]"
        share = result.get("shareID")
        if share is not None:
            causes += _validate_uid(_str(share), f"{at}.shareID")
        causes += _tolerations(result.get("tolerations"), f"{at}.tolerations")
        causes += (
            _binding_conditions(result, at)
            if result.get("bindingConditions") or result.get("bindingFailureConditions")
            else []
        )
    return causes


def _validate_uid(value: str, path: str) -> list[Cause]:
    try:
        uuid.UUID(value)
    except ValueError as exc:
        return [invalid_cause(path, value, f"error validating uid: {exc}")]
    if len(value) != 36 or value != value.lower():
        return [
            invalid_cause(
                path,
                value,
                "uid must be in RFC 4122 normalized form, `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` with lowercase hexadecimal characters",
            )
        ]
    return []


# --- DeviceClass --------------------------------------------------------------------------------


def validate_device_class(cls: Obj) -> list[Cause]:
    """``spec.extendedResourceName`` (DRAExtendedResource, GA in 1.37): an extended resource
    name, as a pod's containers would ask for it."""
    spec = _obj(cls.get("spec"))
    name = spec.get("extendedResourceName")
    if name is None:
        return []
    text = _str(name)
    if not text or not is_extended_resource(text) or validate_label_name(f"requests.{text}", ""):
        return [invalid_cause("spec.extendedResourceName", text, "must be a valid extended resource name")]
    return []


# --- DeviceTaintRule ----------------------------------------------------------------------------


def validate_device_taint_rule(rule: Obj, old: Obj | None = None) -> list[Cause]:
    """ValidateDeviceTaintRule (and its update): the selector's driver, pool and device names,
    and the taint."""
    spec = _obj(rule.get("spec"))
    old_spec = _obj(old.get("spec")) if old else {}
    causes: list[Cause] = []
    selector = spec.get("deviceSelector")
    if isinstance(selector, dict):
        if selector.get("driver") is not None:
            causes += validate_driver_name(selector["driver"], "spec.deviceSelector.driver")
        if selector.get("pool") is not None:
            causes += validate_pool_name(selector["pool"], "spec.deviceSelector.pool")
        if selector.get("device") is not None:
            causes += _dns_label(selector["device"], "spec.deviceSelector.device")
    taint = _obj(spec.get("taint"))
    old_taint = _obj(old_spec.get("taint")) if old is not None else None
    return causes + validate_device_taint(taint, "spec.taint", old_taint)


def validate_device_taint_rule_status(rule: Obj) -> list[Cause]:
    """ValidateDeviceTaintRuleStatusUpdate: at most eight conditions, each with a type, a
    status, a reason and a transition time (metav1 ValidateConditions' required fields)."""
    status = _obj(rule.get("status"))
    conditions = _dicts(status.get("conditions"))
    causes: list[Cause] = []
    if len(conditions) > MAX_RULE_CONDITIONS:
        causes.append(_too_many("status.conditions", len(conditions), MAX_RULE_CONDITIONS))
    seen: set[str] = set()
    for i, condition in conditions:
        at = f"status.conditions[{i}]"
        kind = _str(condition.get("type"))
        causes += validate_label_name(kind, f"{at}.type")
        if kind in seen:
            causes.append(_duplicate(f"{at}.type", kind))
        seen.add(kind)
        value = _str(condition.get("status"))
        if value not in ("True", "False", "Unknown"):
            causes.append(not_supported_cause(f"{at}.status", value, ("False", "True", "Unknown")))
        if not condition.get("lastTransitionTime"):
            causes.append(required_cause(f"{at}.lastTransitionTime", "must be set"))
        if not _str(condition.get("reason")):
            causes.append(required_cause(f"{at}.reason"))
    return causes


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def default_device_taint_rule(rule: Obj, old: Obj | None = None) -> None:
    """The strategy's defaulting: ``spec.taint.timeAdded`` set to now on create when missing,
    and on an update that changes the effect without changing the time (or drops it);
    ``metadata.generation`` 1 on create, one more on each change of the spec."""
    spec = rule.get("spec")
    if not isinstance(spec, dict):
        return
    taint = spec.get("taint")
    meta = rule.setdefault("metadata", {})
    if old is None:
        meta["generation"] = 1
        if isinstance(taint, dict) and not taint.get("timeAdded"):
            taint["timeAdded"] = _now()
        return
    old_spec = _obj(old.get("spec"))
    old_taint = _obj(old_spec.get("taint"))
    if isinstance(taint, dict):
        if not taint.get("timeAdded"):
            taint["timeAdded"] = old_taint.get("timeAdded") or _now()
        if taint.get("effect") != old_taint.get("effect") and taint.get("timeAdded") == old_taint.get("timeAdded"):
            taint["timeAdded"] = _now()
    generation = (old.get("metadata") or {}).get("generation") or 1
    meta["generation"] = generation + 1 if spec != old_spec else generation
