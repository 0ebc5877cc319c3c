"""DRA's CEL environment for device selectors, over the ``common-expression-language`` package.

A selector sees one variable, ``device``: ``device.driver``, ``device.attributes[domain][name]``
(ints, bools, strings; versions as strings) and ``device.capacity[domain][name]`` (quantities as
numbers). An attribute or capacity name without a domain belongs to the device's driver, as
upstream's. Quantities compare through the functions of upstream's environment:
``quantity("1Gi")``, ``q.compareTo(other)``, ``q.isGreaterThan(other)``, ``q.isLessThan(other)``,
``q.asInteger()``, ``q.asApproximateFloat()``, ``q.sign()``, ``q.add(other)``, ``q.sub(other)``.

Each expression is compiled once (an LRU cache), and what it says of a device is remembered per
device version by the plugin, so the interpreter runs once per expression and device, not once
per pod.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from fractions import Fraction
from typing import Any, cast

import cel

from kubesched.framework.resources import parse_quantity

Obj = dict[str, Any]


class CELError(Exception):
    """An expression that does not compile, or fails on a device (``no such key: model``)."""


def _number(q: Fraction) -> int | float:
    return int(q) if q.denominator == 1 else float(q)


def _quantity(text: Any) -> int | float:
    try:
        return _number(parse_quantity(str(text)))
    except (ValueError, ZeroDivisionError) as exc:
        raise ValueError(f"invalid quantity {text!r}") from exc


def _compare(a: Any, b: Any) -> int:
    return cast("int", (a > b) - (a < b))


def _context() -> Any:
    ctx = cel.Context()
    ctx.add_function("quantity", _quantity)
    ctx.add_function("compareTo", _compare)
    ctx.add_function("isGreaterThan", lambda a, b: a > b)
    ctx.add_function("isLessThan", lambda a, b: a < b)
    ctx.add_function("asInteger", lambda a: int(a))
    ctx.add_function("asApproximateFloat", lambda a: float(a))
    ctx.add_function("sign", lambda a: _compare(a, 0))
    ctx.add_function("add", lambda a, b: a + b)
    ctx.add_function("sub", lambda a, b: a - b)
    return ctx


@functools.lru_cache(maxsize=256)
def compile_expression(expression: str) -> Any:
    """The compiled program of ``expression``; raises :class:`CELError` if it does not compile."""
    try:
        return cel.compile(expression)
    except Exception as exc:  # noqa: BLE001 - the binding raises its own parse errors
        raise CELError(str(exc).strip() or type(exc).__name__) from None


def _qualified(name: str, driver: str) -> tuple[str, str]:
    domain, sep, rest = name.rpartition("/")
    return (domain, rest) if sep else (driver, name)


def device_variables(driver: str, device: Mapping[str, Any]) -> Obj:
    """The ``device`` variable of a ResourceSlice's device."""
    attributes: dict[str, dict[str, Any]] = {}
    for name, value in (device.get("attributes") or {}).items():
        domain, short = _qualified(name, driver)
        if not isinstance(value, Mapping):
            continue
        for key in ("int", "bool", "string", "version"):
            if key in value:
                attributes.setdefault(domain, {})[short] = value[key]
                break
    capacity: dict[str, dict[str, Any]] = {}
    for name, value in (device.get("capacity") or {}).items():
        domain, short = _qualified(name, driver)
        raw = value.get("value") if isinstance(value, Mapping) else value
        try:
            capacity.setdefault(domain, {})[short] = _quantity(raw)
        except ValueError:
            continue
    return {"driver": driver, "attributes": attributes, "capacity": capacity}


_CONTEXT: list[Any] = []


def evaluate(expression: str, variables: Obj) -> bool:
    """Whether the selector accepts the device; raises :class:`CELError` when it fails."""
    program = compile_expression(expression)
    if not _CONTEXT:
        _CONTEXT.append(_context())
    ctx = _CONTEXT[0]
    ctx.add_variable("device", variables)
    try:
        result = program.execute(ctx)
    except KeyError as exc:
        raise CELError(f"no such key: {exc.args[0] if exc.args else ''}") from None
    except Exception as exc:  # noqa: BLE001 - the binding's runtime errors have no common base
        raise CELError(str(exc).strip() or type(exc).__name__) from None
    if not isinstance(result, bool):
        raise CELError(f"expression must return a bool, got {type(result).__name__}")
    return result
