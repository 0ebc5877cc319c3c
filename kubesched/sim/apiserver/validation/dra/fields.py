"""The fields the resource.k8s.io kinds share, checked as kube-apiserver v1.37 checks them: names
(drivers, pools, attributes and capacities), device taints, binding conditions; and the small
makers of causes and readers of loose values the checks of each kind use."""

from __future__ import annotations

import re
from typing import Any

from kubesched.framework.names import dns1123_label_errors, dns1123_subdomain_errors, label_value_errors
from kubesched.objects import Obj
from kubesched.sim.apiserver.validation.meta import (
    Cause,
    invalid_cause,
    not_supported_cause,
    required_cause,
    validate_label_name,
)

#: Device taint effects (validDeviceTaintEffects, as NotSupported lists them: sorted).
DEVICE_TAINT_EFFECTS = ("NoExecute", "NoSchedule", "None")
#: The bounds of k8s.io/api/resource/v1 (types.go).
DRIVER_NAME_MAX = 63
POOL_NAME_MAX = 253
MAX_BINDING_CONDITIONS = 4
MAX_ID_LENGTH = 32
_C_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def indexed_dicts(items: Any) -> list[tuple[int, Obj]]:
    return [(i, x) for i, x in enumerate(items or ()) if isinstance(x, dict)]


def as_str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def as_obj(value: Any) -> Obj:
    return value if isinstance(value, dict) else {}


def too_many(path: str, count: int, limit: int) -> Cause:
    return (path, "FieldValueTooMany", f"Too many: {count}: must have at most {limit} items")


def too_long(path: str, limit: int) -> Cause:
    return (path, "FieldValueTooLong", f"Too long: may not be more than {limit} bytes")


def duplicate(path: str, value: Any) -> Cause:
    return (path, "FieldValueDuplicate", f'Duplicate value: "{value}"')


# --- names --------------------------------------------------------------------------------------


def validate_driver_name(name: Any, path: str) -> list[Cause]:
    """A DRA driver's name, checked as a CSI driver's: required, at most 63 characters, a DNS
    subdomain once lowercased."""
    text = as_str(name)
    causes: list[Cause] = []
    if not text:
        causes.append(required_cause(path))
    if len(text) > DRIVER_NAME_MAX:
        causes.append(too_long(path, DRIVER_NAME_MAX))
    return causes + [invalid_cause(path, text, m) for m in dns1123_subdomain_errors(text.lower())]


def validate_pool_name(name: Any, path: str) -> list[Cause]:
    """Required, at most 253 characters, each ``/``-separated part a DNS subdomain."""
    text = as_str(name)
    if not text:
        return [required_cause(path)]
    causes = [too_long(path, POOL_NAME_MAX)] if len(text) > POOL_NAME_MAX else []
    for part in text.split("/"):
        causes += [invalid_cause(path, part, m) for m in dns1123_subdomain_errors(part)]
    return causes


def dns_label(value: Any, path: str) -> list[Cause]:
    text = as_str(value)
    return [invalid_cause(path, text, m) for m in dns1123_label_errors(text)]


def _c_identifier(value: str, path: str) -> list[Cause]:
    causes = [too_long(path, MAX_ID_LENGTH)] if len(value) > MAX_ID_LENGTH else []
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


# --- taints and binding conditions --------------------------------------------------------------


def validate_device_taint(taint: Obj, path: str, old: Obj | None = None) -> list[Cause]:
    """validateDeviceTaint: key a label name, value a label value, effect required and known
    (an unchanged effect of a stored object is not checked again)."""
    causes = validate_label_name(as_str(taint.get("key")), f"{path}.key")
    value = as_str(taint.get("value"))
    if value:
        causes += [invalid_cause(f"{path}.value", value, m) for m in label_value_errors(value)]
    effect = as_str(taint.get("effect"))
    if old is None or as_str(old.get("effect")) != effect:
        if not effect:
            causes.append(required_cause(f"{path}.effect"))
        elif effect not in DEVICE_TAINT_EFFECTS:
            causes.append(not_supported_cause(f"{path}.effect", effect, DEVICE_TAINT_EFFECTS))
    return causes


def validate_binding_conditions(device: Obj, path: str) -> list[Cause]:
    """validateDeviceBindingParameters: at most four of each, label names, no duplicates, no
    overlap, and the two only together."""
    causes: list[Cause] = []
    conditions = [c for c in device.get("bindingConditions") or () if isinstance(c, str)]
    failures = [c for c in device.get("bindingFailureConditions") or () if isinstance(c, str)]
    for field, values in (("bindingConditions", conditions), ("bindingFailureConditions", failures)):
        if len(values) > MAX_BINDING_CONDITIONS:
            causes.append(too_many(f"{path}.{field}", len(values), MAX_BINDING_CONDITIONS))
            continue
        seen: set[str] = set()
        for i, value in enumerate(values):
            causes += validate_label_name(value, f"{path}.{field}[{i}]")
            if value in seen:
                causes.append(duplicate(f"{path}.{field}[{i}]", value))
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
