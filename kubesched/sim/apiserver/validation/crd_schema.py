"""A CustomResourceDefinition version's ``openAPIV3Schema`` as kube-apiserver validates it
before storing the definition (apiextensions validation and the structural schema rules).

Checked at every schema node, each visited once: ``type`` among OpenAPI v3's types; a
``pattern`` that compiles as Go's ``regexp`` (RE2 syntax); the ``x-kubernetes-validations``
rules present, compiling, with a usable message. The structural rules: a type at the root
(``object``), for every specified field and array item (unless ``x-kubernetes-int-or-string`` or
``x-kubernetes-preserve-unknown-fields`` stands for it); ``items`` for an array;
``additionalProperties`` neither at the root nor beside ``properties``; inside ``allOf``,
``anyOf``, ``oneOf`` and ``not`` no ``type``, ``default``, ``nullable``, ``additionalProperties``
or rules (``anyOf`` of ``integer`` and ``string`` allowed for an int-or-string). Each failure is a
field error worded and placed as upstream's (``spec.versions[0].schema.openAPIV3Schema.
properties[spec].type: Unsupported value: "bogus": supported values: ...``).

The estimated cost of the CEL rules is checked next, over a schema found valid here
(:mod:`kubesched.sim.apiserver.validation.celcost.limits`). Not checked: ``default`` values
against their schema, ``x-kubernetes-list-map-keys`` against the item schema, ``metadata``
restrictions.
"""

from __future__ import annotations

from typing import Any

from kubesched.sim.apiserver.validation.meta import (
    Cause,
    forbidden_cause,
    invalid_cause,
    not_supported_cause,
    required_cause,
)
from kubesched.sim.apiserver.validation.patterns import PatternError, compile_pattern

#: OpenAPI v3's types, as upstream lists them (sorted)
TYPES = ("array", "boolean", "integer", "number", "object", "string")

_ROOT, _ITEM, _FIELD = "root", "item", "field"
_EMPTY_TYPE = {
    _ROOT: "must not be empty at the root",
    _ITEM: "must not be empty for specified array items",
    _FIELD: "must not be empty for specified object fields",
}
_INT_OR_STRING_ANY_OF = [{"type": "integer"}, {"type": "string"}]
#: what a nested value validation (under allOf, anyOf, oneOf, not) must leave out, and upstream's words
_NESTED_FORBIDDEN = (
    ("type", "must be empty to be structural"),
    ("default", "must be undefined to be structural"),
    ("nullable", "must be false to be structural"),
    ("additionalProperties", "must be undefined to be structural"),
    ("x-kubernetes-preserve-unknown-fields", "must be false to be structural"),
    ("x-kubernetes-embedded-resource", "must be false to be structural"),
    ("x-kubernetes-int-or-string", "must be false to be structural"),
    ("x-kubernetes-list-type", "must be undefined to be structural"),
    ("x-kubernetes-map-type", "must be undefined to be structural"),
    ("x-kubernetes-validations", "must be empty to be structural"),
)


def validate_schema(schema: dict[str, Any], path: str) -> list[Cause]:
    """The field errors of an ``openAPIV3Schema`` found at ``path``."""
    causes: list[Cause] = []
    # (node, its path, its level; None for a node under a logic junctor)
    stack: list[tuple[Any, str, str | None]] = [(schema, path, _ROOT)]
    while stack:
        node, where, level = stack.pop()
        if not isinstance(node, dict):
            continue
        _check_node(node, where, level, causes)
        for key, sub in _mapping(node.get("properties")).items():
            # A field's schema given as null decodes, as in Go, to the empty schema (no type).
            sub = {} if sub is None else sub
            stack.append((sub, f"{where}.properties[{key}]", _FIELD if level is not None else None))
        items = node.get("items")
        if isinstance(items, dict):
            stack.append((items, f"{where}.items", _ITEM if level is not None else None))
        extra = node.get("additionalProperties")
        if isinstance(extra, dict) and level is not None:
            stack.append((extra, f"{where}.additionalProperties", _FIELD))
        int_or_string = node.get("anyOf") == _INT_OR_STRING_ANY_OF
        for key in ("allOf", "anyOf", "oneOf"):
            for i, sub in enumerate(_list(node.get(key))):
                if key == "anyOf" and int_or_string:
                    continue
                if key == "allOf" and i == 0 and isinstance(sub, dict) and sub.get("anyOf") == _INT_OR_STRING_ANY_OF:
                    sub = {k: v for k, v in sub.items() if k != "anyOf"}
                stack.append((sub, f"{where}.{key}[{i}]", None))
        if isinstance(node.get("not"), dict):
            stack.append((node["not"], f"{where}.not", None))
    return causes


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _check_node(node: dict[str, Any], where: str, level: str | None, causes: list[Cause]) -> None:
    typ = node.get("type")
    if isinstance(typ, str) and typ and typ not in TYPES:
        causes.append(not_supported_cause(f"{where}.type", typ, TYPES))
    pattern = node.get("pattern")
    if isinstance(pattern, str) and pattern:
        try:
            compile_pattern(pattern)
        except PatternError as exc:
            causes.append(
                invalid_cause(f"{where}.pattern", pattern, f"must be a valid regular expression, but isn't: {exc}")
            )
    if level is None:
        for key, detail in _NESTED_FORBIDDEN:
            if node.get(key) not in (None, False, "", []):
                causes.append(forbidden_cause(f"{where}.{key}", detail))
        if "metadata" in _mapping(node.get("properties")):
            causes.append(forbidden_cause(f"{where}.properties[metadata]", "must not be specified in a nested context"))
        return
    _check_structural(node, where, level, causes)
    _check_rules(node.get("x-kubernetes-validations"), where, causes)


def _check_structural(node: dict[str, Any], where: str, level: str, causes: list[Cause]) -> None:
    typ = node.get("type") or ""
    embedded = node.get("x-kubernetes-embedded-resource") is True
    if typ == "array" and node.get("items") is None:
        causes.append(required_cause(f"{where}.items", "must be specified"))
    extra = node.get("additionalProperties")
    if extra is not None and extra is not True:
        if level == _ROOT:
            causes.append(forbidden_cause(f"{where}.additionalProperties", "must not be used at the root"))
        if node.get("properties"):
            causes.append(
                forbidden_cause(
                    f"{where}.additionalProperties", "additionalProperties and properties are mutual exclusive"
                )
            )
    if embedded and typ != "object":
        detail = "must be object if x-kubernetes-embedded-resource is true"
        causes.append(invalid_cause(f"{where}.type", typ, detail) if typ else required_cause(f"{where}.type", detail))
    elif (
        not typ
        and node.get("x-kubernetes-int-or-string") is not True
        and node.get("x-kubernetes-preserve-unknown-fields") is not True
    ):
        causes.append(required_cause(f"{where}.type", _EMPTY_TYPE[level]))
    if level == _ROOT and typ and typ != "object":
        causes.append(invalid_cause(f"{where}.type", typ, "must be object at the root"))
    if node.get("x-kubernetes-int-or-string") is True and node.get("x-kubernetes-preserve-unknown-fields") is True:
        causes.append(
            invalid_cause(
                f"{where}.x-kubernetes-preserve-unknown-fields",
                True,
                "must be false if x-kubernetes-int-or-string is true",
            )
        )


def _check_rules(rules: Any, where: str, causes: list[Cause]) -> None:
    for i, rule in enumerate(rules if isinstance(rules, list) else ()):
        at = f"{where}.x-kubernetes-validations[{i}]"
        if not isinstance(rule, dict):
            continue
        expression = rule.get("rule")
        message = rule.get("message")
        if not isinstance(expression, str) or not expression.strip():
            causes.append(required_cause(f"{at}.rule", "rule is not specified"))
            continue
        if isinstance(message, str) and message and not message.strip():
            causes.append(invalid_cause(f"{at}.message", message, "message must be non-empty if specified"))
            continue
        if isinstance(message, str) and "\n" in message.strip():
            causes.append(invalid_cause(f"{at}.message", message, "message must not contain line breaks"))
            continue
        for key, text in (("rule", expression), ("messageExpression", rule.get("messageExpression"))):
            if not isinstance(text, str) or not text.strip():
                continue
            import cel  # lazily: see kubesched.plugins.dynamicresources.cel.LAZY_CEL

            try:
                cel.compile(text)
            except Exception as exc:  # noqa: BLE001 - the binding raises its own error types
                detail = str(exc).removeprefix(f"Failed to parse expression '{text}': ") or type(exc).__name__
                prefix = "messageExpression compilation failed" if key == "messageExpression" else "compilation failed"
                causes.append(invalid_cause(f"{at}.{key}", text, f"{prefix}: {detail}"))
