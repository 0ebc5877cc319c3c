"""Custom objects against the structural schema of their version (``openAPIV3Schema``), as the
API server's apiextensions part treats them: unknown fields pruned, non-nullable nulls without a
default dropped, ``default`` values applied, then the value validations and the
``x-kubernetes-validations`` CEL rules, each failure a field error worded as upstream's.

The value validations are those of OpenAPI v3 as Kubernetes uses them: ``type`` (with
``nullable``, ``x-kubernetes-int-or-string`` and ``x-kubernetes-preserve-unknown-fields``),
``required``, ``enum``, ``minimum``/``maximum`` (and their exclusive forms), ``multipleOf``,
``pattern``, ``minLength``/``maxLength``, ``minItems``/``maxItems``, ``uniqueItems``,
``minProperties``/``maxProperties``, ``allOf``/``anyOf``/``oneOf``/``not``, and the
``x-kubernetes-list-type`` ``set`` and ``map`` uniqueness. ``format`` is not checked.
``pattern`` is matched as Go's ``regexp`` matches it, in linear time
(:mod:`kubesched.sim.apiserver.validation.patterns`).

CEL rules are evaluated with the ``cel`` library the DRA plugin uses, with ``self`` (and
``oldSelf`` on update, a rule using it skipped on create as upstream does for transition
rules). A rule the library cannot compile or evaluate is reported as a field error naming it;
the Kubernetes CEL extension libraries (``quantity``, ``url``, ``ip``...) are not provided. Each
evaluation is first bounded in cost (:mod:`kubesched.sim.apiserver.validation.celcost.runtime`):
past the per-call limit or the object's budget, it is not run.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from kubesched.objects import Obj
from kubesched.sim.apiserver.validation import patterns
from kubesched.sim.apiserver.validation.celcost.runtime import Budget
from kubesched.sim.apiserver.validation.meta import Cause, quote

Schema = dict[str, Any]

#: The fields an object's root keeps whatever its schema says.
ROOT_FIELDS = ("apiVersion", "kind", "metadata")

_PRESERVE = "x-kubernetes-preserve-unknown-fields"
_INT_OR_STRING = "x-kubernetes-int-or-string"
_EMBEDDED = "x-kubernetes-embedded-resource"


def _child(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _index(path: str, i: int) -> str:
    return f"{path}[{i}]"


def _properties(schema: Schema) -> dict[str, Schema]:
    props = schema.get("properties")
    return props if isinstance(props, dict) else {}


def _additional(schema: Schema) -> Schema | None:
    extra = schema.get("additionalProperties")
    return extra if isinstance(extra, dict) else None


def _items(schema: Schema) -> Schema | None:
    items = schema.get("items")
    return items if isinstance(items, dict) else None


# --- pruning --------------------------------------------------------------------------------------


def prune(obj: Obj, schema: Schema | None) -> list[str]:
    """Drop from ``obj`` (a whole custom object) every field its schema does not specify,
    keeping ``apiVersion``, ``kind`` and ``metadata`` at the root and in embedded resources;
    returns the paths dropped (``spec.foo``), as the API server reports unknown fields."""
    dropped: list[str] = []
    if schema is None:
        return dropped
    _prune(obj, schema, "", dropped, root=True)
    return dropped


def _prune(value: Any, schema: Schema | None, path: str, dropped: list[str], root: bool = False) -> None:
    if schema is None:
        return
    if isinstance(value, dict):
        props = _properties(schema)
        extra = _additional(schema)
        preserve = schema.get(_PRESERVE) is True or schema.get("additionalProperties") is True
        keep_meta = root or schema.get(_EMBEDDED) is True
        for key in list(value):
            if keep_meta and key in ROOT_FIELDS:
                continue
            if key in props:
                _prune(value[key], props[key], _child(path, key), dropped)
            elif extra is not None:
                _prune(value[key], extra, _child(path, key), dropped)
            elif not preserve:
                dropped.append(_child(path, key))
                del value[key]
    elif isinstance(value, list):
        items = _items(schema)
        for i, item in enumerate(value):
            _prune(item, items, _index(path, i), dropped)


def prune_nulls(value: Any, schema: Schema | None) -> None:
    """Drop the ``null`` values of fields neither nullable nor defaulted (upstream does so before
    defaulting; a defaulted one is defaulted instead)."""
    if schema is None:
        return
    if isinstance(value, dict):
        props, extra = _properties(schema), _additional(schema)
        for key in list(value):
            sub = props.get(key, extra)
            if value[key] is None and sub is not None and not sub.get("nullable") and "default" not in sub:
                del value[key]
            else:
                prune_nulls(value[key], sub)
    elif isinstance(value, list):
        items = _items(schema)
        for item in value:
            prune_nulls(item, items)


# --- defaulting -----------------------------------------------------------------------------------


def _null_to_default(value: Any, schema: Schema | None) -> bool:
    return value is None and schema is not None and not schema.get("nullable") and "default" in schema


def apply_defaults(value: Any, schema: Schema | None) -> None:
    """Fill in the ``default`` of each specified field absent from ``value`` (or ``null`` where
    not nullable), from the root down, as the API server defaults custom objects."""
    if schema is None:
        return
    if isinstance(value, dict):
        props, extra = _properties(schema), _additional(schema)
        for key, sub in props.items():
            if "default" in sub and (key not in value or _null_to_default(value[key], sub)):
                value[key] = json.loads(json.dumps(sub["default"]))
        for key in list(value):
            if key in props:
                apply_defaults(value[key], props[key])
            elif extra is not None:
                if _null_to_default(value[key], extra):
                    value[key] = json.loads(json.dumps(extra["default"]))
                apply_defaults(value[key], extra)
    elif isinstance(value, list):
        items = _items(schema)
        for i in range(len(value)):
            if _null_to_default(value[i], items):
                assert items is not None
                value[i] = json.loads(json.dumps(items["default"]))
            apply_defaults(value[i], items)


# --- validation -----------------------------------------------------------------------------------


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "integer" if value.is_integer() else "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _type_ok(typ: str, value: Any) -> bool:
    actual = _json_type(value)
    return actual == typ or (typ == "number" and actual == "integer")


def _number(value: Any) -> str:
    """A number as Go's ``%v`` prints it in these messages."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _go_value(value: Any) -> str:
    """A value in a field error as Go prints the decoded JSON value (``%#v`` for maps and lists)."""
    if isinstance(value, dict | list):
        return _go_literal(value)
    if isinstance(value, float):
        return _number(value)
    return quote(value)


def _go_literal(value: Any) -> str:
    if isinstance(value, dict):
        inner = ", ".join(f"{json.dumps(k)}:{_go_literal(v)}" for k, v in sorted(value.items()))
        return f"map[string]interface {{}}{{{inner}}}"
    if isinstance(value, list):
        return f"[]interface {{}}{{{', '.join(_go_literal(v) for v in value)}}}"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if value is None:
        return "interface {}(nil)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return f"{value}"
    return _number(value)


def _invalid(path: str, value: Any, detail: str) -> Cause:
    return (path, "FieldValueInvalid", f"Invalid value: {_go_value(value)}: {detail}")


def _type_invalid(path: str, value: Any, detail: str) -> Cause:
    return (path, "FieldValueTypeInvalid", f"Invalid value: {_go_value(value)}: {detail}")


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def validate(value: Any, schema: Schema | None, path: str = "") -> list[Cause]:
    """The field errors of ``value`` against ``schema``: OpenAPI value validations as the API
    server's validator reports them (``spec.replicas: Invalid value: "string": spec.replicas in
    body must be of type integer: "string"``)."""
    causes: list[Cause] = []
    if schema is not None:
        _validate(value, schema, path, causes, root=not path)
    return causes


def _where(path: str) -> str:
    return path or "body"


def _validate(value: Any, schema: Schema, path: str, causes: list[Cause], root: bool = False) -> None:
    name = _where(path)
    typ = schema.get("type")
    if value is None:
        if schema.get("nullable") or not typ:
            return
        causes.append(_type_invalid(path, "null", f'{name} in body must be of type {typ}: "null"'))
        return
    if schema.get(_INT_OR_STRING) is True:
        if not isinstance(value, int | str) or isinstance(value, bool):
            actual = _json_type(value)
            causes.append(_type_invalid(path, actual, f'{name} in body must be of type integer,string: "{actual}"'))
            return
    elif isinstance(typ, str) and typ and not _type_ok(typ, value):
        actual = _json_type(value)
        causes.append(_type_invalid(path, actual, f'{name} in body must be of type {typ}: "{actual}"'))
        return
    enum = schema.get("enum")
    if isinstance(enum, list) and enum and _canonical(value) not in {_canonical(e) for e in enum}:
        allowed = ", ".join(json.dumps(e if isinstance(e, str) else json.dumps(e)) for e in enum)
        causes.append(
            (path, "FieldValueNotSupported", f"Unsupported value: {_go_value(value)}: supported values: {allowed}")
        )
    if isinstance(value, int | float) and not isinstance(value, bool):
        _numeric(value, schema, path, name, causes)
    if isinstance(value, str):
        _string(value, schema, path, name, causes)
    if isinstance(value, list):
        _array(value, schema, path, name, causes)
    if isinstance(value, dict):
        _object(value, schema, path, name, causes, root)
    _combinators(value, schema, path, name, causes)


def _numeric(value: float, schema: Schema, path: str, name: str, causes: list[Cause]) -> None:
    low, high = schema.get("minimum"), schema.get("maximum")
    if isinstance(low, int | float):
        if schema.get("exclusiveMinimum") is True and value <= low:
            causes.append(_invalid(path, value, f"{name} in body should be greater than {_number(low)}"))
        elif value < low:
            causes.append(_invalid(path, value, f"{name} in body should be greater than or equal to {_number(low)}"))
    if isinstance(high, int | float):
        if schema.get("exclusiveMaximum") is True and value >= high:
            causes.append(_invalid(path, value, f"{name} in body should be less than {_number(high)}"))
        elif value > high:
            causes.append(_invalid(path, value, f"{name} in body should be less than or equal to {_number(high)}"))
    factor = schema.get("multipleOf")
    if isinstance(factor, int | float) and factor > 0 and (value / factor) != int(value / factor):
        causes.append(_invalid(path, value, f"{name} in body should be a multiple of {_number(factor)}"))


def _string(value: str, schema: Schema, path: str, name: str, causes: list[Cause]) -> None:
    short, long = schema.get("minLength"), schema.get("maxLength")
    if isinstance(long, int) and len(value) > long:
        causes.append((path, "FieldValueTooLong", f"Too long: may not be more than {long} bytes"))
    if isinstance(short, int) and len(value) < short:
        causes.append(_invalid(path, value, f"{name} in body should be at least {short} chars long"))
    pattern = schema.get("pattern")
    if isinstance(pattern, str) and pattern:
        if not patterns.matches(pattern, value):
            causes.append(_invalid(path, value, f"{name} in body should match '{pattern}'"))


def _array(value: list[Any], schema: Schema, path: str, name: str, causes: list[Cause]) -> None:
    few, many = schema.get("minItems"), schema.get("maxItems")
    if isinstance(many, int) and len(value) > many:
        causes.append((path, "FieldValueTooMany", f"Too many: {len(value)}: must have at most {many} items"))
    if isinstance(few, int) and len(value) < few:
        causes.append(_invalid(path, value, f"{name} in body should have at least {few} items"))
    if schema.get("uniqueItems") is True and len({_canonical(v) for v in value}) != len(value):
        causes.append(_invalid(path, value, f"{name} in body shouldn't contain duplicates"))
    items = _items(schema)
    if items is not None:
        for i, item in enumerate(value):
            _validate(item, items, _index(path, i), causes)
    list_type = schema.get("x-kubernetes-list-type")
    if list_type == "set":
        seen: set[str] = set()
        for i, item in enumerate(value):
            key = _canonical(item)
            if key in seen:
                causes.append((_index(path, i), "FieldValueDuplicate", f"Duplicate value: {_go_value(item)}"))
            seen.add(key)
    elif list_type == "map":
        keys = [k for k in schema.get("x-kubernetes-list-map-keys") or () if isinstance(k, str)]
        seen_keys: set[str] = set()
        for i, item in enumerate(value):
            if not isinstance(item, dict):
                continue
            entry = {k: item.get(k) for k in keys if k in item}
            key = _canonical(entry)
            if key in seen_keys:
                causes.append((_index(path, i), "FieldValueDuplicate", f"Duplicate value: {_go_literal(entry)}"))
            seen_keys.add(key)


def _object(value: Obj, schema: Schema, path: str, name: str, causes: list[Cause], root: bool) -> None:
    few, many = schema.get("minProperties"), schema.get("maxProperties")
    if isinstance(many, int) and len(value) > many:
        causes.append((path, "FieldValueTooMany", f"Too many: {len(value)}: must have at most {many} items"))
    if isinstance(few, int) and len(value) < few:
        causes.append(_invalid(path, len(value), f"{name} in body should have at least {few} properties"))
    for key in schema.get("required") or ():
        if isinstance(key, str) and key not in value:
            causes.append((_child(path, key), "FieldValueRequired", "Required value"))
    props, extra = _properties(schema), _additional(schema)
    embedded = schema.get(_EMBEDDED) is True
    for key, sub in value.items():
        if (root or embedded) and key in ROOT_FIELDS and key not in props:
            continue
        if key in props:
            _validate(sub, props[key], _child(path, key), causes)
        elif extra is not None:
            _validate(sub, extra, _child(path, key), causes)
    if embedded:
        for key in ("apiVersion", "kind"):
            if not value.get(key):
                causes.append((_child(path, key), "FieldValueRequired", "Required value: must not be empty"))


def _combinators(value: Any, schema: Schema, path: str, name: str, causes: list[Cause]) -> None:
    for sub in schema.get("allOf") or ():
        if isinstance(sub, dict):
            _validate(value, sub, path, causes)
    any_of = [s for s in schema.get("anyOf") or () if isinstance(s, dict)]
    if any_of and not any(not validate(value, s, path) for s in any_of):
        causes.append(_invalid(path, value, f"{name} in body must validate at least one schema (anyOf)"))
    one_of = [s for s in schema.get("oneOf") or () if isinstance(s, dict)]
    if one_of and sum(1 for s in one_of if not validate(value, s, path)) != 1:
        causes.append(_invalid(path, value, f"{name} in body must validate one and only one schema (oneOf)"))
    negated = schema.get("not")
    if isinstance(negated, dict) and not validate(value, negated, path):
        causes.append(_invalid(path, value, f"{name} in body must not validate the schema (not)"))


# --- CEL rules ------------------------------------------------------------------------------------

_OLD_SELF = re.compile(r"\boldSelf\b")


def validate_rules(value: Any, old: Any, schema: Schema | None, path: str = "") -> list[Cause]:
    """The ``x-kubernetes-validations`` rules of ``schema`` and its fields broken by ``value``
    (``old``, the stored object, for transition rules; ``None`` on create)."""
    causes: list[Cause] = []
    if schema is not None:
        largest = len(json.dumps([value, old], default=str))
        _rules(value, old, schema, path, causes, old is not None, Budget(largest))
    return causes


def _rules(value: Any, old: Any, schema: Schema, path: str, causes: list[Cause], has_old: bool, budget: Budget) -> None:
    if value is None or budget.stopped:
        return
    shared: dict[str, Any] = {}  # the field's values, handed to the library once for its rules
    for rule in schema.get("x-kubernetes-validations") or ():
        if isinstance(rule, dict) and isinstance(rule.get("rule"), str):
            if not _one_rule(rule, value, old, path, causes, has_old, (schema, budget, shared)):
                return
    if isinstance(value, dict):
        props, extra = _properties(schema), _additional(schema)
        for key, sub in value.items():
            sub_schema = props.get(key, extra)
            if sub_schema is not None:
                old_sub = old.get(key) if isinstance(old, dict) else None
                _rules(
                    sub,
                    old_sub,
                    sub_schema,
                    _child(path, key),
                    causes,
                    has_old and isinstance(old, dict) and key in old,
                    budget,
                )
    elif isinstance(value, list):
        items = _items(schema)
        if items is not None:
            for i, item in enumerate(value):
                # Old items are correlated only in a map list (by key), as upstream does.
                old_item = _correlate(item, old, schema) if isinstance(old, list) else None
                _rules(item, old_item, items, _index(path, i), causes, old_item is not None, budget)


def _correlate(item: Any, old: list[Any], schema: Schema) -> Any:
    if schema.get("x-kubernetes-list-type") != "map" or not isinstance(item, dict):
        return None
    keys = [k for k in schema.get("x-kubernetes-list-map-keys") or () if isinstance(k, str)]
    for candidate in old:
        if isinstance(candidate, dict) and all(candidate.get(k) == item.get(k) for k in keys):
            return candidate
    return None


def _one_rule(
    rule: Obj,
    value: Any,
    old: Any,
    path: str,
    causes: list[Cause],
    has_old: bool,
    scope: tuple[Schema, Budget, dict[str, Any]],
) -> bool:
    """Check ``rule``; whether later rules may still run (not when the budget ran out)."""
    expression = rule["rule"]
    uses_old = _OLD_SELF.search(expression) is not None
    if uses_old and not has_old:
        return True  # a transition rule: not checked on create (nor for a field new in the update)
    schema, budget, shared = scope
    resource, values = not path or schema.get(_EMBEDDED) is True, {"self": value, "oldSelf": old}
    shown = schema.get("type") if isinstance(schema.get("type"), str) else _cel_type(value)
    over = budget.charge(rule, schema, resource, values)
    if over is not None:
        causes.append((path or _NIL, "FieldValueInvalid", f"Invalid value: {quote(shown)}: {over}"))
        return False
    field = path
    extra = rule.get("fieldPath")
    if isinstance(extra, str) and extra:
        field = (path + extra if extra.startswith((".", "[")) else _child(path, extra)).lstrip(".")
    field = field or _NIL  # a rule at the root: upstream's nil path
    try:
        ctx = shared.get("ctx")
        if ctx is None:
            import cel  # lazily: see kubesched.plugins.dynamicresources.cel.LAZY_CEL

            ctx = shared["ctx"] = cel.Context()
            ctx.add_variable("self", value)
        if uses_old and "old" not in shared:
            ctx.add_variable("oldSelf", old)
            shared["old"] = True
        result = _compile(expression).execute(ctx)
    except Exception as exc:  # noqa: BLE001 - the binding raises its own error types
        causes.append(
            (
                field,
                "FieldValueInvalid",
                f'Invalid value: "object": rule {json.dumps(expression)} could not be evaluated: {str(exc).strip() or type(exc).__name__}',
            )
        )
        return True
    if result is True:
        return True
    over = budget.charge_message(rule, schema, resource, values)
    if over is not None:
        causes.append((path or _NIL, "FieldValueInvalid", f"Invalid value: {quote(shown)}: {over}"))
        return False
    message = _message_expression(rule, ctx) or rule.get("message")
    if not isinstance(message, str) or not message:
        message = f"failed rule: {expression}"
    reason = {
        "FieldValueRequired": "FieldValueRequired",
        "FieldValueDuplicate": "FieldValueDuplicate",
        "FieldValueForbidden": "FieldValueForbidden",
    }.get(str(rule.get("reason") or ""), "FieldValueInvalid")
    if reason == "FieldValueRequired":
        causes.append((field, reason, f"Required value: {message}"))
    elif reason == "FieldValueForbidden":
        causes.append((field, reason, f"Forbidden: {message}"))
    elif reason == "FieldValueDuplicate":
        causes.append((field, reason, f"Duplicate value: {message}"))
    else:
        causes.append((field, reason, f'Invalid value: "{_cel_type(value)}": {message}'))
    return True


def _message_expression(rule: Obj, ctx: Any) -> str | None:
    """The text of the rule's ``messageExpression`` (``None`` when it has none, or it fails or
    gives no text: then ``message`` is used, as upstream falls back)."""
    expression = rule.get("messageExpression")
    if not isinstance(expression, str) or not expression:
        return None
    try:
        text = _compile(expression).execute(ctx)
    except Exception:  # noqa: BLE001 - the binding raises its own error types
        return None
    return text if isinstance(text, str) and text.strip() else None


def _cel_type(value: Any) -> str:
    return {"object": "object", "array": "array", "string": "string", "boolean": "boolean"}.get(
        _json_type(value), _json_type(value)
    )


_COMPILED: dict[str, Any] = {}


def _compile(expression: str) -> Any:
    program = _COMPILED.get(expression)
    if program is None:
        import cel  # lazily: see kubesched.plugins.dynamicresources.cel.LAZY_CEL

        program = cel.compile(expression)
        if len(_COMPILED) > 1024:
            _COMPILED.clear()
        _COMPILED[expression] = program
    return program


# --- all together ---------------------------------------------------------------------------------


def normalize(obj: Obj, schema: Schema | None) -> list[str]:
    """Prune, drop non-nullable nulls and default ``obj`` in place; returns the pruned paths."""
    if schema is None:
        return []
    dropped = prune(obj, schema)
    prune_nulls(obj, schema)
    apply_defaults(obj, schema)
    return dropped


def check(obj: Obj, old: Obj | None, schema: Schema | None, skip: Callable[[str], bool] | None = None) -> list[Cause]:
    """The schema's value validations and CEL rules broken by ``obj``; ``skip`` leaves out the
    top-level fields it names (``status`` on a main-resource update, say)."""
    if schema is None:
        return []
    causes = validate(obj, schema)
    if skip is not None:
        causes = [c for c in causes if not skip(_top(c[0]))]
    if not has_rules(schema):
        return causes
    if any(reason in _BLOCKING for _, reason, _ in causes):
        # As upstream: rules are not evaluated on an object that does not have the schema's shape.
        causes.append((_NIL, "FieldValueInvalid", _UNCHECKED))
        return causes
    rules = validate_rules(obj, old, schema)
    if skip is not None:
        rules = [c for c in rules if not skip(_top(c[0]))]
    return causes + rules


def has_rules(schema: Any) -> bool:
    """Whether ``schema`` or any schema inside it has ``x-kubernetes-validations``."""
    if isinstance(schema, dict):
        if schema.get("x-kubernetes-validations"):
            return True
        return any(has_rules(v) for v in schema.values())
    if isinstance(schema, list):
        return any(has_rules(v) for v in schema)
    return False


def _top(path: str) -> str:
    return path.split(".", 1)[0].split("[", 1)[0]


_BLOCKING = frozenset(
    {"FieldValueNotSupported", "FieldValueRequired", "FieldValueTooLong", "FieldValueTooMany", "FieldValueTypeInvalid"}
)
_NIL = "<nil>"
_UNCHECKED = (
    'Invalid value: "null": some validation rules were not checked because the object was invalid; '
    "correct the existing errors to complete validation"
)
