"""What Go's JSON decoding refuses in a CustomResourceDefinition's ``openAPIV3Schema``.

kube-apiserver decodes each version's schema into ``JSONSchemaProps`` before validating it: a
``properties`` that is not an object, a ``rule`` that is not a string, a ``minLength`` with a
fraction fail there, and the request is answered 400 with the decoder's message, e.g.::

    json: cannot unmarshal number into Go struct field
    JSONSchemaProps.spec.versions.schema.openAPIV3Schema.properties of type map[string]v1.JSONSchemaProps

The path names struct fields only (no map keys, no indices). ``items``, ``additionalProperties``
and ``additionalItems`` decode through a method of their own, so an error below them is reported
at them (Go's decoder puts the outer context on the inner error). Each schema node is visited
once, however deep.
"""

from __future__ import annotations

from typing import Any

#: Go types of JSONSchemaProps' fields, by JSON name (those not listed decode from anything)
_FIELD_TYPES = {
    **dict.fromkeys(
        (
            "id",
            "$schema",
            "$ref",
            "description",
            "type",
            "format",
            "title",
            "pattern",
            "x-kubernetes-list-type",
            "x-kubernetes-map-type",
        ),
        "string",
    ),
    **dict.fromkeys(("maximum", "minimum", "multipleOf"), "float64"),
    **dict.fromkeys(
        (
            "exclusiveMaximum",
            "exclusiveMinimum",
            "uniqueItems",
            "nullable",
            "x-kubernetes-preserve-unknown-fields",
            "x-kubernetes-embedded-resource",
            "x-kubernetes-int-or-string",
        ),
        "bool",
    ),
    **dict.fromkeys(
        ("maxLength", "minLength", "maxItems", "minItems", "maxProperties", "minProperties"),
        "int64",
    ),
    **dict.fromkeys(("required", "x-kubernetes-list-map-keys"), "[]string"),
    "enum": "[]v1.JSON",
    **dict.fromkeys(("properties", "patternProperties", "definitions"), "map[string]v1.JSONSchemaProps"),
    **dict.fromkeys(("allOf", "oneOf", "anyOf"), "[]v1.JSONSchemaProps"),
    "not": "v1.JSONSchemaProps",
    "x-kubernetes-validations": "v1.ValidationRules",
    "externalDocs": "v1.ExternalDocumentation",
}
_RULE_TYPES = {
    **dict.fromkeys(("rule", "message", "messageExpression", "reason", "fieldPath"), "string"),
    "optionalOldSelf": "bool",
}
_DOCS_TYPES = {"description": "string", "url": "string"}
#: fields decoded by a method of their own: the error context stops there
_OWN_DECODER = ("items", "additionalProperties", "additionalItems")


class SchemaDecodeError(Exception):
    """The decoder's message for a field of a schema its Go type refuses."""


def json_type(value: Any) -> str:
    """The JSON type Go's decoder names when it refuses ``value`` (``cannot unmarshal <type>``)."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _fits(typ: str, value: Any) -> bool:
    if value is None:
        return True
    if typ == "string":
        return isinstance(value, str)
    if typ == "bool":
        return isinstance(value, bool)
    if typ in ("float64", "int64"):
        return isinstance(value, int | float) and not isinstance(value, bool)
    if typ.startswith("[]") or typ == "v1.ValidationRules":
        return isinstance(value, list)
    return isinstance(value, dict)


def _fail(value: Any, struct: str, path: str, typ: str) -> SchemaDecodeError:
    if typ == "int64" and isinstance(value, int | float) and not isinstance(value, bool):
        shown = repr(value) if isinstance(value, float) else str(value)
        return SchemaDecodeError(
            f"json: cannot unmarshal number {shown} into Go struct field {struct}.{path} of type int64"
        )
    return SchemaDecodeError(
        f"json: cannot unmarshal {json_type(value)} into Go struct field {struct}.{path} of type {typ}"
    )


def _check_fields(obj: dict[str, Any], types: dict[str, str], struct: str, path: str, frozen: str | None) -> None:
    for key, value in obj.items():
        typ = types.get(key)
        if typ is None:
            continue
        bad = not _fits(typ, value)
        if not bad and typ == "int64" and isinstance(value, float) and not value.is_integer():
            bad = True
        elif not bad and typ == "[]string":
            bad = any(not isinstance(v, str) for v in value or ())
            if bad:
                item = next(v for v in value if not isinstance(v, str))
                raise _fail(item, *_where(struct, path, key, frozen), "string")
        if bad:
            raise _fail(value, *_where(struct, path, key, frozen), typ)


def _where(struct: str, path: str, key: str, frozen: str | None) -> tuple[str, str]:
    return ("JSONSchemaProps", frozen) if frozen is not None else (struct, f"{path}.{key}")


def check_schema(schema: Any, path: str = "spec.versions.schema.openAPIV3Schema") -> None:
    """Raise :class:`SchemaDecodeError` when ``schema`` does not decode into ``JSONSchemaProps``."""
    # (node, struct path of the node, path the error context froze at or None)
    stack: list[tuple[Any, str, str | None]] = [(schema, path, None)]
    while stack:
        node, where, frozen = stack.pop()
        if node is None:
            continue
        if not isinstance(node, dict):
            raise _fail(node, "JSONSchemaProps", frozen or where, "v1.JSONSchemaProps")
        _check_fields(node, _FIELD_TYPES, "JSONSchemaProps", where, frozen)
        for rule in node.get("x-kubernetes-validations") or ():
            field = f"{where}.x-kubernetes-validations"
            if not isinstance(rule, dict):
                raise _fail(
                    rule, *_where("JSONSchemaProps", where, "x-kubernetes-validations", frozen), "v1.ValidationRule"
                )
            _check_fields(rule, _RULE_TYPES, "ValidationRule", field, frozen)
        if isinstance(node.get("externalDocs"), dict):
            _check_fields(node["externalDocs"], _DOCS_TYPES, "ExternalDocumentation", f"{where}.externalDocs", frozen)
        for key in ("properties", "patternProperties", "definitions"):
            for sub in (node.get(key) or {}).values():
                stack.append((sub, f"{where}.{key}", frozen))
        for key in ("allOf", "oneOf", "anyOf"):
            for sub in node.get(key) or ():
                stack.append((sub, f"{where}.{key}", frozen))
        if node.get("not") is not None:
            stack.append((node["not"], f"{where}.not", frozen))
        for key in _OWN_DECODER:
            sub = node.get(key)
            inner_frozen = frozen if frozen is not None else f"{where}.{key}"
            if isinstance(sub, dict):
                stack.append((sub, f"{where}.{key}", inner_frozen))
            elif isinstance(sub, list) and key == "items":
                stack.extend((s, f"{where}.{key}", inner_frozen) for s in sub)
