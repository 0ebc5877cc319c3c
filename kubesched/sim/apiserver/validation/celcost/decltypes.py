"""The CEL type a structural schema gives ``self``, with the bounds the cost estimate reads.

As kube-apiserver declares a schema to CEL: an ``object`` with ``properties`` is a message of
those fields (the root and embedded resources also get ``apiVersion``, ``kind`` and
``metadata.name``/``generateName``), with ``additionalProperties`` a map, an ``array`` a list,
``x-kubernetes-int-or-string`` a dynamic value; a field whose schema CEL cannot see (an array or
map of such, a type-less schema) is left out, as upstream leaves it out.

Each type carries the largest size a value of it can have (``max_elements``: a list's items, a
map's entries, a string's characters) and the smallest JSON it serializes to (``min_size``). A
declared ``maxItems``/``maxProperties`` bounds a list or map; without one, the bound is how many
of the smallest item fit in a request of :data:`MAX_REQUEST_BYTES`. A string is bounded by
``maxLength`` times four (a character may take four bytes), or the longest ``enum`` value, or a
fixed size for a ``duration``/``date``/``date-time`` format, or by the request size.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

#: the largest request kube-apiserver reads (3 MiB): what bounds an unbounded schema
MAX_REQUEST_BYTES = 3 * 1024 * 1024
#: serialized sizes upstream assumes: "" (a string), true, 0, a duration "0s" at least 3, ...
MIN_STRING, MIN_BOOL, MIN_NUMBER = 2, 4, 1
MIN_DURATION, DATE_SIZE, MIN_DATETIME = 3, 12, 21
MAX_DURATION, MAX_DATETIME = 32, 32


@dataclass(eq=False)
class DeclType:
    """A CEL type: ``kind`` one of object, map, list, string, bytes, int, uint, double, bool,
    null, dyn, timestamp, duration, type."""

    kind: str
    max_elements: int = 0
    min_size: int = 1
    elem: DeclType | None = None
    key: DeclType | None = None
    fields: dict[str, DeclType] = field(default_factory=dict)


DYN = DeclType("dyn")
INT = DeclType("int", min_size=MIN_NUMBER)
UINT = DeclType("uint", min_size=MIN_NUMBER)
DOUBLE = DeclType("double", min_size=MIN_NUMBER)
BOOL = DeclType("bool", min_size=MIN_BOOL)
STRING = DeclType("string", min_size=MIN_STRING)
BYTES = DeclType("bytes", min_size=MIN_STRING)
NULL = DeclType("null")
TYPE = DeclType("type")
DURATION = DeclType("duration")
TIMESTAMP = DeclType("timestamp")


#: names a property may not have in CEL as it is: escaped to ``__<name>__``
_RESERVED = frozenset(
    "true false null in as break const continue else for function if import let loop package namespace return"
    " var void while".split()
)
_ESCAPES = {"__": "__underscores__", ".": "__dot__", "-": "__dash__", "/": "__slash__"}
_ESCAPED = re.compile(r"__|[-./]|[^a-zA-Z0-9_]")
_UNESCAPED = re.compile(r"__(underscores|dot|dash|slash|[a-z]+)__")


def escape(name: str) -> str | None:
    """A property's name as CEL expressions name it (``x-y`` as ``x__dash__y``); ``None`` for a
    name CEL cannot spell (the property is then not shown to CEL)."""
    if not name or name[0].isdigit():
        return None
    if name in _RESERVED:
        return f"__{name}__"
    if any(c not in _ESCAPES and not (c.isascii() and (c.isalnum() or c == "_")) for c in name):
        return None
    return _ESCAPED.sub(lambda m: _ESCAPES[m.group()], name)


def unescape(name: str) -> str:
    """The property an escaped name stands for."""
    back = {"underscores": "__", "dot": ".", "dash": "-", "slash": "/"}
    return _UNESCAPED.sub(lambda m: back.get(m.group(1), m.group(1) if m.group(1) in _RESERVED else m.group()), name)


def list_of(elem: DeclType, max_items: int) -> DeclType:
    return DeclType("list", max_elements=max_items, min_size=2, elem=elem, key=INT)


def map_of(elem: DeclType, max_entries: int, key: DeclType = STRING) -> DeclType:
    return DeclType("map", max_elements=max_entries, min_size=2, elem=elem, key=key)


#: the largest bound a schema can declare (its fields are Go int64s)
_INT64_MAX = 2**63 - 1


def _bound(schema: dict[str, Any], key: str) -> int | None:
    value = schema.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
        return None
    if isinstance(value, float):
        return min(int(max(min(value, 2.0**63), 0.0)), _INT64_MAX)
    return max(min(value, _INT64_MAX), 0)


def _max_string(schema: dict[str, Any]) -> int:
    if schema.get("x-kubernetes-int-or-string") is True:
        return MAX_REQUEST_BYTES - 2
    fmt = schema.get("format")
    if fmt == "duration":
        return MAX_DURATION
    if fmt == "date":
        return DATE_SIZE
    if fmt == "date-time":
        return MAX_DATETIME
    return MAX_REQUEST_BYTES - 2


def _string_type(schema: dict[str, Any]) -> DeclType:
    fmt = schema.get("format")
    longest = _bound(schema, "maxLength")
    if fmt == "byte":
        return DeclType("bytes", longest if longest is not None else _max_string(schema), MIN_STRING)
    if fmt == "duration":
        return DeclType("duration", _max_string(schema), MIN_DURATION)
    if fmt in ("date", "date-time"):
        return DeclType("timestamp", _max_string(schema), DATE_SIZE if fmt == "date" else MIN_DATETIME)
    if longest is not None:
        return DeclType("string", longest * 4, MIN_STRING)
    enum = [v for v in schema.get("enum") or () if isinstance(v, str)] if isinstance(schema.get("enum"), list) else []
    if enum:
        return DeclType("string", max(len(v) for v in enum), MIN_STRING)
    return DeclType("string", _max_string(schema), MIN_STRING)


def _with_type_and_meta(schema: dict[str, Any]) -> dict[str, Any]:
    given = schema.get("properties")
    props: dict[str, Any] = dict(given) if isinstance(given, dict) else {}
    meta: dict[str, Any] = props["metadata"] if isinstance(props.get("metadata"), dict) else {}
    meta_props: dict[str, Any] = meta["properties"] if isinstance(meta.get("properties"), dict) else {}
    for key in ("kind", "apiVersion"):
        if not isinstance(props.get(key), dict) or props[key].get("type") != "string":
            props[key] = {"type": "string"}
    if meta.get("type") != "object" or not all(
        isinstance(meta_props.get(k), dict) and meta_props[k].get("type") == "string" for k in ("name", "generateName")
    ):
        props["metadata"] = {
            "type": "object",
            "properties": {"name": {"type": "string"}, "generateName": {"type": "string"}},
        }
    return {**schema, "properties": props}


def decl_type(schema: Any, resource_root: bool = False) -> DeclType | None:
    """The CEL type of values of ``schema`` (``None`` where CEL is not shown the value)."""
    if not isinstance(schema, dict):
        return None
    if schema.get("x-kubernetes-int-or-string") is True:
        longest = _bound(schema, "maxLength")
        return DeclType("dyn", longest * 4 if longest is not None else _max_string(schema), 1)
    if resource_root:
        schema = _with_type_and_meta(schema)
    typ = schema.get("type")
    if typ == "array":
        items = schema.get("items")
        item_type = decl_type(items, isinstance(items, dict) and items.get("x-kubernetes-embedded-resource") is True)
        if item_type is None:
            return None
        most = _bound(schema, "maxItems")
        if most is None:
            most = (MAX_REQUEST_BYTES - 2) // (item_type.min_size + 1)
        return list_of(item_type, most)
    if typ == "object":
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict):
            value_type = decl_type(extra, extra.get("x-kubernetes-embedded-resource") is True)
            if value_type is None:
                return None
            most = _bound(schema, "maxProperties")
            if most is None:
                most = (MAX_REQUEST_BYTES - 2) // (value_type.min_size + 6)
            return map_of(value_type, most)
        required = {r for r in schema.get("required") or () if isinstance(r, str)}
        fields: dict[str, DeclType] = {}
        min_size = 2
        props = schema.get("properties")
        for name, prop in (props if isinstance(props, dict) else {}).items():
            ftype = decl_type(prop, isinstance(prop, dict) and prop.get("x-kubernetes-embedded-resource") is True)
            if ftype is None:
                continue
            spelled = escape(name) if isinstance(name, str) else None
            if spelled is not None:
                fields[spelled] = ftype
            if name in required and "default" not in prop:
                min_size += len(name) + ftype.min_size + 4
        return DeclType("object", 0, min_size, fields=fields)
    if typ == "string":
        return _string_type(schema)
    if typ == "boolean":
        return BOOL
    if typ == "number":
        return DOUBLE
    if typ == "integer":
        return INT
    return None


def max_cardinality(min_size: int) -> int:
    """How often a value serialized to at least ``min_size`` bytes fits in one request (one
    comma between each): how often a rule under unbounded lists or maps may run."""
    return MAX_REQUEST_BYTES // (min_size + 1)
