"""The ``pattern`` of a custom resource schema, as kube-apiserver reads it: RE2 syntax (Go's
``regexp``), matched anywhere in the string (Go's ``MatchString``), in time linear in the
string's length whatever the pattern.

With the ``google-re2`` binding installed, patterns are compiled and matched by RE2; a pattern
RE2 refuses gives the error Go's ``regexp.Compile`` gives (``error parsing regexp: missing
closing ): `(```). Without it, Python's ``re`` stands in: its backtracking can take exponential
time on patterns such as ``^(a+)+$``, and its syntax differs in places.
"""

from __future__ import annotations

import re
from typing import Any

try:
    import re2 as _re2  # type: ignore[import-not-found, import-untyped, unused-ignore]
except ImportError:  # pragma: no cover - the binding is a declared dependency
    _re2 = None

#: whether patterns are matched by RE2 (linear time)
LINEAR = _re2 is not None

#: RE2's error texts and the codes Go's regexp/syntax reports for the same errors.
_GO_CODES = (
    ("missing )", "missing closing )"),
    ("unexpected )", "unexpected )"),
    ("missing ]", "missing closing ]"),
    ("no argument for repetition operator", "missing argument to repetition operator"),
    ("bad repetition operator", "invalid nested repetition operator"),
    ("invalid repetition size", "invalid repeat count"),
    ("invalid perl operator", "invalid or unsupported Perl syntax"),
    ("invalid named capture group", "invalid named capture"),
    ("trailing \\", "trailing backslash at end of expression"),
    ("invalid escape sequence", "invalid escape sequence"),
    ("invalid character class range", "invalid character class range"),
    ("invalid character class", "invalid character class"),
    ("invalid UTF-8", "invalid UTF-8"),
    ("bad named capture group", "invalid named capture"),
    ("pattern too large", "expression too large"),
)

_CACHE: dict[str, Any] = {}
_CACHE_SIZE = 1024


class PatternError(ValueError):
    """A pattern that does not compile; the text is Go's ``regexp.Compile`` error."""


def _go_error(pattern: str, detail: str) -> str:
    for re2_text, go_code in _GO_CODES:
        if detail.startswith(re2_text):
            arg = detail[len(re2_text) :].removeprefix(": ")
            return f"error parsing regexp: {go_code}: `{arg}`"
    return f"error parsing regexp: {detail}: `{pattern}`"


def compile_pattern(pattern: str) -> Any:
    """The compiled ``pattern`` (cached); :class:`PatternError` when it does not compile."""
    compiled = _CACHE.get(pattern)
    if compiled is not None:
        return compiled
    try:
        if _re2 is not None:
            options = _re2.Options()
            options.log_errors = False
            compiled = _re2.compile(pattern, options)
        else:
            compiled = re.compile(pattern)
    except Exception as exc:  # noqa: BLE001 - re2.error and re.error alike
        detail = exc.args[0] if exc.args else str(exc)
        if isinstance(detail, bytes):
            detail = detail.decode("utf-8", "replace")
        raise PatternError(_go_error(pattern, str(detail))) from None
    if len(_CACHE) >= _CACHE_SIZE:
        _CACHE.clear()
    _CACHE[pattern] = compiled
    return compiled


def matches(pattern: str, value: str) -> bool:
    """Whether ``value`` has a match of ``pattern`` (a pattern that does not compile matches:
    the definition's validation refuses such patterns before any object meets them)."""
    try:
        compiled = compile_pattern(pattern)
    except PatternError:
        return True
    return compiled.search(value) is not None
