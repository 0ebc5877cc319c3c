"""Configuration errors as ``<field path>: <reason>`` lines, and the translation of pydantic's errors.

A path reads like upstream's field paths: ``profiles[1].pluginConfig[0].args.scoringStrategy.type``
(mapping keys joined with dots, list indexes in brackets). Every error a configuration can have,
whether pydantic found it (shape) or the semantic checks did (meaning), ends up as one such line,
so a user sees all of them at once and can fix the file in one go.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from pydantic import ValidationError

from kubesched.errors import ConfigurationError


class ConfigError(ConfigurationError):
    """A configuration that cannot be used. ``errors`` holds one ``"path: reason"`` per problem.

    ``str()`` lists them one per line, each prefixed with ``source`` (the file name) when the
    configuration came from a file.
    """

    def __init__(self, errors: Iterable[str], source: str = "") -> None:
        self.errors: list[str] = list(errors)
        self.source = source
        super().__init__(str(self))

    def __str__(self) -> str:
        prefix = f"{self.source}: " if self.source else ""
        return "\n".join(prefix + e for e in self.errors)


def join_path(base: str, *parts: str | int) -> str:
    """``join_path("profiles", 1, "plugins")`` → ``profiles[1].plugins``."""
    out = base
    for p in parts:
        if isinstance(p, int):
            out += f"[{p}]"
        elif not p.isprintable():
            out += f"[{p!r}]"  # a key with a newline or a control character: keep the line one line
        elif out:
            out += f".{p}"
        else:
            out = p
    return out


def show(value: Any) -> str:
    """A value as a user wrote it in YAML/JSON: strings quoted, booleans and null in YAML spelling."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return str(value)


# Tags pydantic puts into ``loc`` for validator wrappers and union members: not fields.
_TAG = re.compile(r"^(function-(before|after|wrap|plain)\[.*\]|.*\[.*\]|lax-or-strict|json-or-python)$")


def _loc_path(prefix: str, loc: Sequence[str | int]) -> str:
    parts = [p for p in loc if not (isinstance(p, str) and _TAG.match(p))]
    return join_path(prefix, *parts)


def _expected_list(expected: str) -> str:
    """pydantic's ``"'A', 'B' or 'C'"`` → ``"A, B, C"``."""
    text = re.sub(r"'((?:[^'\\]|\\.)*)'", r"\1", expected)
    return re.sub(r"\s+or\s+", ", ", text)


_TYPE_NAMES = {
    "int": "an integer",
    "float": "a number",
    "bool": "a boolean (true or false)",
    "string": "a string",
    "list": "a list",
    "dict": "a mapping",
    "model": "a mapping",
}


def reason_for(err: dict[str, Any]) -> str:
    """A readable reason for one pydantic error dict."""
    kind: str = err.get("type", "")
    ctx: dict[str, Any] = err.get("ctx") or {}
    value = err.get("input")
    if kind == "missing":
        return "required field is missing"
    if kind == "extra_forbidden":
        return "unknown field"
    if kind in ("literal_error", "enum"):
        return f"{show(value)} is not one of {_expected_list(str(ctx.get('expected', '')))}"
    bounds = {
        "greater_than_equal": ("greater than or equal to", "ge"),
        "greater_than": ("greater than", "gt"),
        "less_than_equal": ("less than or equal to", "le"),
        "less_than": ("less than", "lt"),
    }
    if kind in bounds:
        words, key = bounds[kind]
        return f"must be {words} {ctx.get(key)} (got {show(value)})"
    if kind == "int_from_float":
        return f"must be an integer, got {show(value)}"
    for prefix, noun in _TYPE_NAMES.items():
        if kind in (f"{prefix}_type", f"{prefix}_parsing", f"{prefix}_attributes_type"):
            return f"must be {noun}, got {show(value)}"
    if kind == "value_error":
        msg = str(err.get("msg", ""))
        return msg.removeprefix("Value error, ")
    if kind == "assertion_error":
        return str(err.get("msg", "")).removeprefix("Assertion failed, ")
    return str(err.get("msg", kind))


def format_validation_error(exc: ValidationError, prefix: str = "") -> list[str]:
    """One ``"path: reason"`` line per error of ``exc``, paths under ``prefix``."""
    lines: list[str] = []
    for err in exc.errors():
        loc = tuple(err.get("loc", ()))
        if err.get("type") == "invalid_key" or loc[-1:] == ("[key]",):
            # A mapping key that is not a string (YAML's `1:` or `null:`): name the mapping.
            parent = loc[:-1] if loc[-1:] != ("[key]",) else loc[:-2]
            path = _loc_path(prefix, parent)
            lines.append(f"{path or '<root>'}: key {show(err.get('input'))} is not a string; field names are strings")
            continue
        path = _loc_path(prefix, loc)
        lines.append(f"{path or '<root>'}: {reason_for(dict(err))}")
    return lines
