"""ResourceClaim and ResourceClaimTemplate as kube-apiserver v1.37 defaults and validates them: a
claim's requests (``exactly`` or ``firstAvailable``, device class, allocation mode, device
tolerations, capacity requests) and the status fields a scheduler writes (device statuses,
``shareID``, the allocation's tolerations and binding conditions)."""

from __future__ import annotations

import uuid
from typing import Any

from kubesched.framework.names import dns1123_subdomain_errors, label_value_errors
from kubesched.objects import Obj
from kubesched.sim.apiserver.validation.dra.fields import (
    DEVICE_TAINT_EFFECTS,
    as_obj,
    as_str,
    dns_label,
    duplicate,
    indexed_dicts,
    too_many,
    validate_binding_conditions,
    validate_driver_name,
    validate_pool_name,
    validate_qualified_name,
)
from kubesched.sim.apiserver.validation.meta import (
    Cause,
    invalid_cause,
    not_supported_cause,
    required_cause,
    validate_label_name,
)

DEVICE_TOLERATION_OPERATORS = ("Equal", "Exists")
ALLOCATION_MODES = ("All", "ExactCount")
#: The bounds of k8s.io/api/resource/v1 (types.go).
MAX_REQUESTS = 32
MAX_SUBREQUESTS = 8
MAX_TOLERATIONS = 16


def validate_device_toleration(toleration: Obj, path: str) -> list[Cause]:
    """validateDeviceToleration: key a label name when set; ``Exists`` with no value, ``Equal``
    with a label value; an effect, when set, one of the taint effects."""
    causes: list[Cause] = []
    key = as_str(toleration.get("key"))
    if key:
        causes += validate_label_name(key, f"{path}.key")
    op, value = as_str(toleration.get("operator")), as_str(toleration.get("value"))
    if op == "Exists":
        if value:
            causes.append(invalid_cause(f"{path}.value", value, "must be empty for operator `Exists`"))
    elif op == "Equal":
        causes += [invalid_cause(f"{path}.value", value, m) for m in label_value_errors(value)]
    elif not op:
        causes.append(required_cause(f"{path}.operator"))
    else:
        causes.append(not_supported_cause(f"{path}.operator", op, DEVICE_TOLERATION_OPERATORS))
    effect = as_str(toleration.get("effect"))
    if effect and effect not in DEVICE_TAINT_EFFECTS:
        causes.append(not_supported_cause(f"{path}.effect", effect, DEVICE_TAINT_EFFECTS))
    return causes


def _tolerations(items: Any, path: str) -> list[Cause]:
    listed = indexed_dicts(items)
    if len(listed) > MAX_TOLERATIONS:
        return [too_many(path, len(listed), MAX_TOLERATIONS)]
    causes: list[Cause] = []
    for i, t in listed:
        causes += validate_device_toleration(t, f"{path}[{i}]")
    return causes


def _exact_request(request: Obj, path: str) -> list[Cause]:
    causes: list[Cause] = []
    cls = as_str(request.get("deviceClassName"))
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
        causes.append(not_supported_cause(f"{path}.allocationMode", as_str(mode), ALLOCATION_MODES))
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
    for _, request in indexed_dicts(devices.get("requests")):
        for request_part in [request.get("exactly"), *(sub for _, sub in indexed_dicts(request.get("firstAvailable")))]:
            if isinstance(request_part, dict):
                _default_request(request_part)
                for _, toleration in indexed_dicts(request_part.get("tolerations")):
                    toleration.setdefault("operator", "Equal")


def validate_claim_spec(spec: Any, path: str = "spec") -> list[Cause]:
    """validateDeviceClaim's requests: each named (a DNS label, unique) with exactly one of
    ``exactly`` and ``firstAvailable``, a device class, an allocation mode, tolerations and
    capacity requests as upstream checks them."""
    devices = spec.get("devices") if isinstance(spec, dict) else None
    if not isinstance(devices, dict):
        return []
    requests = indexed_dicts(devices.get("requests"))
    where = f"{path}.devices.requests"
    if len(requests) > MAX_REQUESTS:
        return [too_many(where, len(requests), MAX_REQUESTS)]
    causes: list[Cause] = []
    names: set[str] = set()
    for i, request in requests:
        at = f"{where}[{i}]"
        name = as_str(request.get("name"))
        causes += dns_label(name, f"{at}.name")
        if name in names:
            causes.append(duplicate(at, name))
        names.add(name)
        exactly, first = request.get("exactly"), indexed_dicts(request.get("firstAvailable"))
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
                causes.append(too_many(f"{at}.firstAvailable", len(first), MAX_SUBREQUESTS))
                continue
            sub_names: set[str] = set()
            for j, sub in first:
                sub_at = f"{at}.firstAvailable[{j}]"
                sub_name = as_str(sub.get("name"))
                causes += dns_label(sub_name, f"{sub_at}.name")
                if sub_name in sub_names:
                    causes.append(duplicate(sub_at, sub_name))
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
    for i, device in indexed_dicts(status.get("devices")):
        at = f"status.devices[{i}]"
        causes += validate_driver_name(device.get("driver"), f"{at}.driver")
        causes += validate_pool_name(device.get("pool"), f"{at}.pool")
        causes += dns_label(device.get("device"), f"{at}.device")
        share = device.get("shareID")
        if share is not None:
            causes += _validate_uid(as_str(share), f"{at}.shareID")
    allocation = as_obj(status.get("allocation"))
    results = as_obj(allocation.get("devices")).get("results")
    for i, result in indexed_dicts(results):
        at = f"status.allocation.devices.results[{i}]"
        share = result.get("shareID")
        if share is not None:
            causes += _validate_uid(as_str(share), f"{at}.shareID")
        causes += _tolerations(result.get("tolerations"), f"{at}.tolerations")
        causes += (
            validate_binding_conditions(result, at)
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
