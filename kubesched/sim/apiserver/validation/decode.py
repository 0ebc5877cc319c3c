"""What Go's strict JSON decoding in kube-apiserver refuses, checked against the served schema.

kube-apiserver decodes a request body into Go structs before anything else looks at it: a string
where a list is expected, a number where a label value (a string) is expected, a fraction where an
integer is expected, an unparseable resource quantity — each fails decoding and the request is
answered 400 BadRequest with the decoder's message, which names the Go struct and the field path
(without indices or map keys), e.g.::

    Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal string into Go struct
    field PodSpec.spec.tolerations of type []v1.Toleration

:func:`check_stored_size` refuses, with 413, an object larger than etcd stores.

The schema is :data:`kubesched.sim.apiserver.openapi.types.DEFINITIONS`; kinds without a definition there
have their ``metadata`` checked as ``ObjectMeta`` and nothing else. ``null`` is accepted
anywhere, as Go leaves the zero value.
"""

from __future__ import annotations

import base64
import datetime
import math
from typing import Any

from kubesched.framework.resources import QuantityError, parse_quantity
from kubesched.sim.apiserver.errors import MAX_STORED_OBJECT_BYTES, bad_request, request_entity_too_large
from kubesched.sim.apiserver.openapi.documents import definition_of
from kubesched.sim.apiserver.openapi.types import DEFINITIONS
from kubesched.sim.apiserver.responses import compact_json
from kubesched.sim.apiserver.validation.schema_decode import SchemaDecodeError, check_schema, json_type

_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
#: served kinds whose Go type has no ``spec`` (there it is an unknown field, left to fieldValidation)
_KINDS_WITHOUT_SPEC = frozenset({"StorageClass"})
#: how deeply a request body may nest (real objects nest a dozen levels)
MAX_BODY_DEPTH = 100
_QUANTITY_ERROR = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
#: fields holding resource.Quantity values (maps of them, or one): numbers and strings both decode
_QUANTITY_FIELDS = frozenset(
    {
        ("io.k8s.api.core.v1.ResourceRequirements", "limits"),
        ("io.k8s.api.core.v1.ResourceRequirements", "requests"),
        ("io.k8s.api.core.v1.VolumeResourceRequirements", "limits"),
        ("io.k8s.api.core.v1.VolumeResourceRequirements", "requests"),
        ("io.k8s.api.core.v1.NodeStatus", "capacity"),
        ("io.k8s.api.core.v1.NodeStatus", "allocatable"),
        ("io.k8s.api.core.v1.PodSpec", "overhead"),
        ("io.k8s.api.core.v1.PodStatus", "allocatedResources"),
        ("io.k8s.api.core.v1.ContainerStatus", "allocatedResources"),
        ("io.k8s.api.core.v1.NodeAllocatableMappedResources", "quantity"),
        ("io.k8s.api.core.v1.NodeAllocatableOverheadResources", "perContainer"),
        ("io.k8s.api.core.v1.NodeAllocatableOverheadResources", "perPod"),
        ("io.k8s.api.core.v1.EmptyDirVolumeSource", "sizeLimit"),
        ("io.k8s.api.core.v1.ResourceFieldSelector", "divisor"),
        ("io.k8s.api.storage.v1.CSIStorageCapacity", "capacity"),
        ("io.k8s.api.storage.v1.CSIStorageCapacity", "maximumVolumeSize"),
        *(
            ("io.k8s.api.resource.v1." + definition, field)
            for definition, field in (
                ("CapacityRequestPolicy", "default"),
                ("CapacityRequestPolicy", "validValues"),
                ("CapacityRequestPolicyRange", "max"),
                ("CapacityRequestPolicyRange", "min"),
                ("CapacityRequestPolicyRange", "step"),
                ("CapacityRequirements", "requests"),
                ("Counter", "value"),
                ("DeviceCapacity", "value"),
                ("DeviceRequestAllocationResult", "consumedCapacity"),
                ("NodeAllocatableMapping", "capacityMultiplier"),
                ("NodeAllocatableMapping", "deviceMultiplier"),
                ("NodeAllocatableOverhead", "perContainer"),
                ("NodeAllocatableOverhead", "perPod"),
            )
        ),
    }
)
#: the quantity fields of each definition
_QUANTITIES_OF: dict[str, frozenset[str]] = {
    definition: frozenset(f for d, f in _QUANTITY_FIELDS if d == definition) for definition, _ in _QUANTITY_FIELDS
}
#: integer fields that are int64 in Go; the others are int32
_INT64_FIELDS = frozenset(
    {
        "activeDeadlineSeconds",
        "deletionGracePeriodSeconds",
        "expirationSeconds",
        "fsGroup",
        "generation",
        "int",
        "nodeAllocatableUpdatePeriodSeconds",
        "observedGeneration",
        "runAsGroup",
        "runAsUser",
        "seconds",
        "sizeBytes",
        "supplementalGroups",
        "terminationGracePeriodSeconds",
        "tolerationSeconds",
    }
)
#: fields typed ``object`` that are IntOrString in Go (the others are free-form)
_INT_OR_STRING_FIELDS = frozenset({"port", "targetPort", "maxUnavailable", "maxSurge", "minAvailable"})
_INT_RANGES = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}
#: list fields whose Go type has a name of its own: a user's ``extra`` values are ``ExtraValue``s
#: (``[]string``) in authentication/v1 and authorization/v1 alike
_NAMED_LISTS = {"extra": "v1.ExtraValue"}


class _DecodeError(Exception):
    pass


def _go_type(typ: str, field: str) -> str:
    if typ == "string":
        return "string"
    if typ == "integer":
        return "int64" if field in _INT64_FIELDS else "int32"
    if typ == "number":
        return "float64"
    if typ == "boolean":
        return "bool"
    if typ == "date-time":
        return "v1.Time"
    if typ.startswith("#"):
        return "v1." + typ.rsplit(".", 1)[-1]
    if typ.startswith("["):
        return _NAMED_LISTS.get(field) or "[]" + _go_type(typ[1:-1], field)
    if typ.startswith("{"):
        return "map[string]" + _go_type(typ[1:-1], field)
    return "interface {}"


def _fail(value: Any, struct: str, path: str, typ: str, field: str) -> _DecodeError:
    return _DecodeError(
        f"json: cannot unmarshal {json_type(value)} into Go struct field {struct}.{path} of type {_go_type(typ, field)}"
    )


def _check_quantity(value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise _DecodeError(_QUANTITY_ERROR)
    try:
        parse_quantity(value)
    except (QuantityError, TypeError, ValueError, ArithmeticError):
        raise _DecodeError(_QUANTITY_ERROR) from None


#: the int32 range: an integer within it fits every integer field
_INT32_LOW, _INT32_HIGH = _INT_RANGES["int32"]


def _leaf_ok(typ: str, value: Any) -> bool:
    """Whether ``value`` is plainly right for a field of leaf type ``typ`` (not a quantity): a
    string, a bool, an int32 as the field wants. False says only that :func:`_walk` must look."""
    cls = value.__class__
    if typ == "string":
        return cls is str
    if typ == "boolean":
        return cls is bool
    if typ == "integer":
        return cls is int and _INT32_LOW <= value <= _INT32_HIGH
    return False


def _walk(typ: str, value: Any, struct: str, path: str, field: str, quantity: bool) -> None:
    if value is None:
        return
    if quantity and not typ.startswith(("{", "[")):
        _check_quantity(value)
        return
    if typ == "string":
        if not isinstance(value, str):
            raise _fail(value, struct, path, typ, field)
    elif typ == "integer":
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise _fail(value, struct, path, typ, field)
        low, high = _INT_RANGES[_go_type(typ, field)]
        if isinstance(value, float) or not low <= value <= high:
            raise _DecodeError(
                f"json: cannot unmarshal number {value} into Go struct field {struct}.{path} "
                f"of type {_go_type(typ, field)}"
            )
    elif typ == "number":
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise _fail(value, struct, path, typ, field)
    elif typ == "boolean":
        if not isinstance(value, bool):
            raise _fail(value, struct, path, typ, field)
    elif typ == "date-time":
        if not isinstance(value, str):
            raise _DecodeError(f"json: cannot unmarshal {json_type(value)} into Go value of type string")
    elif typ == "object":
        if field in _INT_OR_STRING_FIELDS and (isinstance(value, bool) or not isinstance(value, str | int)):
            raise _DecodeError(f"json: cannot unmarshal {json_type(value)} into Go value of type int32")
    elif typ.startswith("#"):
        if not isinstance(value, dict):
            raise _fail(value, struct, path, typ, field)
        name = typ[1:]
        props = DEFINITIONS.get(name)
        if props is None:
            return
        inner = name.rsplit(".", 1)[-1]
        quantities = _QUANTITIES_OF.get(name, ())
        for key, sub in value.items():
            sub_typ = props.get(key)
            if sub_typ is None:
                continue  # unknown fields are fieldValidation's business
            if sub is None or (key not in quantities and _leaf_ok(sub_typ, sub)):
                continue  # what _walk would pass, without the path it would make
            _walk(sub_typ, sub, inner, f"{path}.{key}" if path else key, key, key in quantities)
    elif typ.startswith("["):
        if not isinstance(value, list):
            raise _fail(value, struct, path, typ, field)
        item_typ = typ[1:-1]
        for item in value:
            if item is None or (not quantity and _leaf_ok(item_typ, item)):
                continue
            _walk(item_typ, item, struct, path, field, quantity)
    elif typ.startswith("{"):
        if not isinstance(value, dict):
            raise _fail(value, struct, path, typ, field)
        item_typ = typ[1:-1]
        for item in value.values():
            if item is None or (not quantity and _leaf_ok(item_typ, item)):
                continue
            _walk(item_typ, item, struct, path, field, quantity)


def _check_json(value: Any, depth: int) -> None:
    """:func:`json_body`'s checks on a value decoded from JSON, in the same order with the same
    errors, without rebuilding it: JSON's keys are strings already, its values nothing to convert."""
    if depth > MAX_BODY_DEPTH:
        raise ValueError(f"nested more than {MAX_BODY_DEPTH} levels deep")
    children: Any
    if isinstance(value, dict):
        children = value.values()
    elif isinstance(value, list):
        children = value
    else:
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"unsupported value: {value}")
        return
    if depth + 1 > MAX_BODY_DEPTH and children:
        raise ValueError(f"nested more than {MAX_BODY_DEPTH} levels deep")
    for child in children:
        if isinstance(child, dict | list):
            _check_json(child, depth + 1)
        elif isinstance(child, float) and not math.isfinite(child):
            raise ValueError(f"unsupported value: {child}")


def json_body(value: Any, yaml_source: bool = False, depth: int = 0) -> Any:
    """A decoded request body as the JSON kube-apiserver decodes: refused (``ValueError``) when
    nested more than :data:`MAX_BODY_DEPTH` levels, which deep copies and responses could not
    handle; from YAML, timestamps and binary become the strings they are in JSON, keys become
    strings; NaN or an infinity is refused, as JSON has no such number."""
    if not yaml_source:
        _check_json(value, depth)
        return value
    if depth > MAX_BODY_DEPTH:
        raise ValueError(f"nested more than {MAX_BODY_DEPTH} levels deep")
    if isinstance(value, dict):
        return {
            (k if isinstance(k, str) else _yaml_key(k)): json_body(v, yaml_source, depth + 1) for k, v in value.items()
        }
    if isinstance(value, list):
        return [json_body(v, yaml_source, depth + 1) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        # JSON has no NaN or infinity (1e999 overflows into one): Go's decoder refuses them.
        raise ValueError(f"unsupported value: {value}")
    if isinstance(value, datetime.datetime):
        return value.isoformat().replace("+00:00", "Z")
    if isinstance(value, datetime.date):
        return value.isoformat()
    if isinstance(value, bytes):
        return base64.b64encode(value).decode()
    return value


def _yaml_key(key: Any) -> str:
    if isinstance(key, bool):
        return "true" if key else "false"
    if key is None:
        return "null"
    if isinstance(key, datetime.date | bytes | float | int):
        return str(json_body(key, True))
    raise ValueError(f"a mapping key must be a string, got {type(key).__name__}")


def decode_error(kind: str, group: str, obj: dict[str, Any]) -> str | None:
    """The decoder's message for the first field of ``obj`` its Go type refuses, or None."""
    name = definition_of(kind, group)
    try:
        if name is not None:
            _walk(f"#{name}", obj, "", "", "", False)
        else:
            _walk(f"#{_META}", obj.get("metadata"), kind, "metadata", "metadata", False)
            if kind not in _KINDS_WITHOUT_SPEC and obj.get("spec") is not None and not isinstance(obj["spec"], dict):
                raise _DecodeError(
                    f"json: cannot unmarshal {json_type(obj['spec'])} into Go struct field {kind}.spec "
                    f"of type v1.{kind}Spec"
                )
        if kind == "CustomResourceDefinition" and group == "apiextensions.k8s.io":
            _check_definition_schemas(obj)
    except (_DecodeError, SchemaDecodeError) as exc:
        return str(exc)
    return None


def _check_definition_schemas(crd: dict[str, Any]) -> None:
    """Each version's ``openAPIV3Schema`` as ``JSONSchemaProps`` decodes it."""
    spec = crd.get("spec")
    versions = spec.get("versions") if isinstance(spec, dict) else None
    for version in versions if isinstance(versions, list) else ():
        schema = version.get("schema") if isinstance(version, dict) else None
        if isinstance(schema, dict) and schema.get("openAPIV3Schema") is not None:
            check_schema(schema["openAPIV3Schema"])


def check_decodable(kind: str, group: str, version: str, obj: dict[str, Any]) -> None:
    """Raise the 400 kube-apiserver answers when ``obj`` does not decode into the kind's Go type."""
    error = decode_error(kind, group, obj)
    if error is not None:
        raise bad_request(f'{kind} in version "{version}" cannot be handled as a {kind}: {error}')


def check_stored_size(obj: dict[str, Any]) -> None:
    """Refuse an object whose JSON is over etcd's request limit (1.5 MiB) with 413.

    kube-apiserver passes etcd's "etcdserver: request is too large" through (as a 500 — upstream
    issue kubernetes#112152); the client sent the oversized object, so it is answered here as
    the client error it is."""
    check_stored_length(len(compact_json(obj)))  # ASCII: as many bytes as characters


def check_stored_length(size: int) -> None:
    """:func:`check_stored_size` for an object whose JSON is ``size`` bytes long."""
    if size > MAX_STORED_OBJECT_BYTES:
        raise request_entity_too_large("etcdserver: request is too large")
