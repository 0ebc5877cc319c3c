"""DRA's CEL environment for device selectors, over the ``common-expression-language`` package.

A selector sees one variable, ``device``, as kube-scheduler 1.37's environment has it:
``device.driver``, ``device.allowMultipleAllocations`` (false unless the device says true),
``device.attributes[domain][name]`` (ints, bools, strings, semantic versions, and the list forms
``ints``, ``bools``, ``strings``, ``versions``) and ``device.capacity[domain][name]`` (quantities as
numbers). An attribute or capacity name without a domain belongs to the device's driver, as
upstream's. A domain the device has nothing in is an empty map, not an error:
``device.attributes["x"].foo`` fails only on ``foo`` (``no such key: foo``) and
``!("foo" in device.attributes["x"])`` is true, while ``"x" in device.attributes`` stays false.

Quantities compare through the functions of upstream's environment: ``quantity("1Gi")``,
``q.compareTo(other)``, ``q.isGreaterThan(other)``, ``q.isLessThan(other)``, ``q.asInteger()``,
``q.asApproximateFloat()``, ``q.sign()``, ``q.add(other)``, ``q.sub(other)``. Versions through
the Kubernetes ``semver`` library: ``semver("1.2.3")`` (``semver("v1.2", true)`` normalizes),
``isSemver(s)``, ``isSemver(s, true)``, ``v.major()``, ``v.minor()``, ``v.patch()``,
``v.isGreaterThan(w)``, ``v.isLessThan(w)``, ``v.compareTo(w)``. ``a.includes(x)`` (upstream's,
for list-type attributes) is true when list ``a`` holds ``x``, or scalar ``a`` equals it. Strings
have the string extension functions (``split``, ``join``, ``lowerAscii``, ``upperAscii``,
``replace``, ``trim``, ``indexOf``, ``lastIndexOf``, ``substring``, ``charAt``) besides CEL's own.

Each expression is compiled once (an LRU cache), and what it says of a device is remembered per
device version by the plugin, so the interpreter runs once per expression and device, not once
per pod.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from fractions import Fraction
from typing import Any, cast

from kubesched.framework.resources import parse_quantity
from kubesched.objects import Obj

#: Why ``cel`` is imported where an expression is first compiled or evaluated, not at the top:
#: the library's package imports its command-line tool (prompt_toolkit, rich) on the way, 0.2 to
#: 1 s of CPU at every start of ``simulate``, ``run`` or ``sim serve``, most of which never see a
#: CEL expression. (A name to point at from the other importers.)
LAZY_CEL = "cel"

#: Upstream's bound on the list ``includes`` looks through (ResourceSliceMaxAttributeValuesPerDevice).
MAX_ATTRIBUTE_VALUES = 48
#: The key of the map that stands for a semantic version inside the interpreter.
_SEMVER = "~semver"


class CELError(Exception):
    """An expression that does not compile, or fails on a device (``no such key: model``)."""


def _number(q: Fraction) -> int | float:
    return int(q) if q.denominator == 1 else float(q)


def _quantity(text: Any) -> int | float:
    try:
        return _number(parse_quantity(str(text)))
    except (ValueError, ZeroDivisionError) as exc:
        raise ValueError(f"invalid quantity {text!r}") from exc


# --- semantic versions (the Kubernetes CEL semver library) ------------------------------------
_SEMVER_RE = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*)(?:\.(?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*))*))?"
    r"(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?$"
)


def _normalize(text: str) -> str:
    """As the library's normalization: no ``v`` prefix, missing minor and patch are 0, no
    leading zeros in the numbers."""
    text = text.removeprefix("v")
    cut = min((i for i in (text.find("-"), text.find("+")) if i >= 0), default=len(text))
    core, rest = text[:cut], text[cut:]
    parts = core.split(".")
    while len(parts) < 3:
        parts.append("0")
    return ".".join(p.lstrip("0") or "0" if p.isdigit() else p for p in parts) + rest


def _parse_semver(text: Any, normalize: bool = False) -> tuple[int, int, int, str]:
    if not isinstance(text, str):
        raise ValueError("semver() requires a string")
    candidate = _normalize(text) if normalize else text
    m = _SEMVER_RE.match(candidate)
    if not m:
        raise ValueError(f"could not parse semver: {text}")
    return int(m.group(1)), int(m.group(2)), int(m.group(3)), m.group(4) or ""


def semver_value(text: str, normalize: bool = False) -> dict[str, str]:
    """A version as the interpreter holds it (raises ValueError when ``text`` is not one)."""
    major, minor, patch, pre = _parse_semver(text, normalize)
    return {_SEMVER: f"{major}.{minor}.{patch}" + (f"-{pre}" if pre else "")}


def _is_semver(value: Any) -> bool:
    return isinstance(value, Mapping) and _SEMVER in value


def _pre_key(pre: str) -> tuple[int, tuple[tuple[int, int, str], ...]]:
    if not pre:
        return (1, ())
    return (0, tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in pre.split(".")))


def _semver_key(value: Mapping[str, Any]) -> tuple[Any, ...]:
    major, minor, patch, pre = _parse_semver(value[_SEMVER])
    return (major, minor, patch, _pre_key(pre))


def _compare(a: Any, b: Any) -> int:
    if _is_semver(a) and _is_semver(b):
        ka, kb = _semver_key(a), _semver_key(b)
        return int(ka > kb) - int(ka < kb)
    if _is_semver(a) or _is_semver(b):
        raise TypeError("no such overload")
    return cast("int", (a > b) - (a < b))


def _part(index: int) -> Any:
    def get(v: Any) -> int:
        if not _is_semver(v):
            raise TypeError("no such overload")
        part: int = _semver_key(v)[index]
        return part

    return get


def _semver(text: Any, normalize: bool = False) -> dict[str, str]:
    return semver_value(text, bool(normalize))


def _is_semver_text(text: Any, normalize: bool = False) -> bool:
    try:
        _parse_semver(text, bool(normalize))
    except ValueError:
        return False
    return True


def _includes(target: Any, value: Any) -> bool:
    if isinstance(target, list):
        if len(target) > MAX_ATTRIBUTE_VALUES:
            raise ValueError(
                f"'includes' function cannot be applied to lists longer than {MAX_ATTRIBUTE_VALUES} values"
            )
        return any(item == value for item in target)
    return bool(target == value)


def _context() -> Any:
    import cel  # see LAZY_CEL

    ctx = cel.Context()
    ctx.add_function("quantity", _quantity)
    ctx.add_function("compareTo", _compare)
    ctx.add_function("isGreaterThan", lambda a, b: _compare(a, b) > 0)
    ctx.add_function("isLessThan", lambda a, b: _compare(a, b) < 0)
    ctx.add_function("asInteger", lambda a: int(a))
    ctx.add_function("asApproximateFloat", lambda a: float(a))
    ctx.add_function("sign", lambda a: _compare(a, 0))
    ctx.add_function("add", lambda a, b: a + b)
    ctx.add_function("sub", lambda a, b: a - b)
    ctx.add_function("semver", _semver)
    ctx.add_function("isSemver", _is_semver_text)
    ctx.add_function("major", _part(0))
    ctx.add_function("minor", _part(1))
    ctx.add_function("patch", _part(2))
    ctx.add_function("includes", _includes)
    for name, function in _STRING_FUNCTIONS.items():
        ctx.add_function(name, function)
    return ctx


def _split(text: str, separator: str, limit: int = -1) -> list[str]:
    if limit == 0:
        return []
    return text.split(separator, limit - 1 if limit > 0 else -1) if separator else list(text)


def _substring(text: str, start: int, end: int | None = None) -> str:
    if start < 0 or start > len(text) or (end is not None and (end < start or end > len(text))):
        raise ValueError(f"index out of range: {start}")
    return text[start:end]


#: The string extension functions of upstream's environment (cel-go's ext.Strings).
_STRING_FUNCTIONS: dict[str, Any] = {
    "split": _split,
    "join": lambda items, sep="": sep.join(items),
    "lowerAscii": lambda text: "".join(c.lower() if c.isascii() else c for c in text),
    "upperAscii": lambda text: "".join(c.upper() if c.isascii() else c for c in text),
    "replace": lambda text, old, new, limit=-1: text.replace(old, new, limit),
    "trim": lambda text: text.strip(),
    "indexOf": lambda text, sub, start=0: text.find(sub, start),
    "lastIndexOf": lambda text, sub: text.rfind(sub),
    "substring": _substring,
    "charAt": lambda text, i: text[i] if 0 <= i < len(text) else "",
}


# --- absent domains ---------------------------------------------------------------------------
#: ``device.attributes["domain"]`` or ``device.attributes.domain`` (the same for capacity), not
#: a method call on the map itself (``device.attributes.exists(...)``).
_DOMAIN_LOOKUP = re.compile(
    r"(?<![\w.])device\s*\.\s*(attributes|capacity)\s*"
    r"(?:\[\s*(\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*')\s*\]|\.\s*([A-Za-z_][A-Za-z0-9_]*)\b(?!\s*\())"
)
_STRING = re.compile(r"[rRbB]*(\"\"\"[\s\S]*?\"\"\"|'\'\'[\s\S]*?'\'\'|\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*')")


def with_empty_domains(expression: str) -> str:
    """``expression`` with each lookup of one domain of ``device.attributes`` or
    ``device.capacity`` made to give an empty map when the device has nothing in that domain, as
    upstream's environment does (its maps answer every missing key with an empty map, though
    ``in`` and ``size`` still see only the domains there are)."""
    strings = [m.span() for m in _STRING.finditer(expression)]

    def inside_string(pos: int) -> bool:
        return any(start <= pos < end for start, end in strings)

    out: list[str] = []
    last = 0
    for m in _DOMAIN_LOOKUP.finditer(expression):
        if inside_string(m.start()):
            continue
        field_name, literal, ident = m.group(1), m.group(2), m.group(3)
        key = literal if literal is not None else f'"{ident}"'
        out.append(expression[last : m.start()])
        out.append(f"({key} in device.{field_name} ? device.{field_name}[{key}] : {{}})")
        last = m.end()
    out.append(expression[last:])
    return "".join(out)


@functools.lru_cache(maxsize=256)
def compile_expression(expression: str) -> Any:
    """The compiled program of ``expression``; raises :class:`CELError` if it does not compile."""
    import cel  # see LAZY_CEL

    try:
        return cel.compile(with_empty_domains(expression))
    except Exception as exc:  # noqa: BLE001 - the binding raises its own parse errors
        raise CELError(str(exc).strip() or type(exc).__name__) from None


def _qualified(name: str, driver: str) -> tuple[str, str]:
    domain, sep, rest = name.rpartition("/")
    return (domain, rest) if sep else (driver, name)


def attribute_value(value: Mapping[str, Any]) -> Any:
    """The value of one DeviceAttribute as the interpreter holds it (ValueError for a version
    that is not one, ``None`` for a type unknown here)."""
    for key in ("int", "bool", "string"):
        if value.get(key) is not None:
            return value[key]
    if value.get("version") is not None:
        return semver_value(str(value["version"]))
    for key in ("ints", "bools", "strings"):
        if value.get(key) is not None:
            return list(value[key])
    if value.get("versions") is not None:
        return [semver_value(str(v)) for v in value["versions"]]
    return None


def device_variables(driver: str, device: Mapping[str, Any]) -> Obj:
    """The ``device`` variable of a ResourceSlice's device; raises :class:`CELError` for an
    attribute without a value of a known type, or a version that is not a semantic version."""
    attributes: dict[str, dict[str, Any]] = {}
    for name, value in (device.get("attributes") or {}).items():
        domain, short = _qualified(name, driver)
        try:
            v = attribute_value(value if isinstance(value, Mapping) else {})
        except ValueError as exc:
            raise CELError(f"attribute {name}: parse semantic version: {exc}") from None
        if v is None:
            # As upstream: a device with an attribute of no known type matches no selector.
            raise CELError(f"attribute {name}: unsupported attribute value")
        attributes.setdefault(domain, {})[short] = v
    capacity: dict[str, dict[str, Any]] = {}
    for name, value in (device.get("capacity") or {}).items():
        domain, short = _qualified(name, driver)
        raw = value.get("value") if isinstance(value, Mapping) else value
        try:
            capacity.setdefault(domain, {})[short] = _quantity(raw)
        except ValueError:
            continue
    return {
        "driver": driver,
        "allowMultipleAllocations": device.get("allowMultipleAllocations") is True,
        "attributes": attributes,
        "capacity": capacity,
    }


_CONTEXT: list[Any] = []

_CEL_TYPES = {bool: "bool", int: "int", float: "double", str: "string", bytes: "bytes", list: "list", dict: "map"}


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
        kind = "semver" if _is_semver(result) else _CEL_TYPES.get(type(result), type(result).__name__)
        raise CELError(f"CEL result of type {kind} could not be converted to bool")
    return result
