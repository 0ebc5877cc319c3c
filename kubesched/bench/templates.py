"""Template files of workloads: one object each, whose text may use Go text/template fields
(``{{.Index}}``, ``{{.Count}}``, an op's ``templateParams``) filled in before it is read, and
upstream scheduler_perf's integer functions of two of them or of numbers: ``{{DivideInt .Index
.podsPerGroup}}`` (as Go's ``/``), ``MultiplyInt``, ``AddInt``, ``SubtractInt``, ``Mod``.

Every file ``kubesched bench`` reads (a workload file, a template) is read within
:data:`BENCH_LIMITS` by :mod:`kubesched.decoding`: at most 3 MiB (kube-apiserver's limit of one
request), UTF-8, nested at most 200 levels, aliases bounded as kube-apiserver bounds them. A
template's text is checked again once its fields are filled in.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kubesched.bench.errors import WorkloadError
from kubesched.decoding import MAX_DOCUMENT_BYTES, DecodeError, Limits, load_yaml, read_text
from kubesched.objects import Obj

#: The bounds of every file bench reads, and of a template's text once filled in.
BENCH_LIMITS = Limits(max_bytes=MAX_DOCUMENT_BYTES)

#: A Go text/template field (``{{.Index}}``, ``{{ .Count }}``), or an integer function of two
#: fields or numbers (``{{DivideInt .Index .podsPerGroup}}``): group 1 the field, or groups 2-4 the
#: function and its arguments.
TEMPLATE_FIELD = re.compile(r"{{\s*(?:\.(\w+)|(\w+)\s+(\.\w+|-?\d+)\s+(\.\w+|-?\d+))\s*}}")

#: The integer functions a template may call, as upstream's (Go's integer division truncates).
TEMPLATE_FUNCS: dict[str, Callable[[int, int], int]] = {
    "AddInt": lambda a, b: a + b,
    "SubtractInt": lambda a, b: a - b,
    "MultiplyInt": lambda a, b: a * b,
    "DivideInt": lambda a, b: _go_div(a, b),
    "Mod": lambda a, b: a - b * _go_div(a, b),
}


def _go_div(a: int, b: int) -> int:
    """``a / b`` as Go divides integers: towards zero."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def is_templated(path: Path) -> bool:
    """Whether the template file at ``path`` uses a ``{{.Field}}``."""
    try:
        return TEMPLATE_FIELD.search(read_text(path, BENCH_LIMITS.max_bytes)) is not None
    except (OSError, DecodeError):
        return False  # read_template says why


def read_file(path: Path, what: str) -> str:
    """The text of the file at ``path`` (``what`` it is, for the message), within
    :data:`BENCH_LIMITS`; a WorkloadError naming the file and the reason otherwise."""
    try:
        return read_text(path, BENCH_LIMITS.max_bytes)
    except OSError as exc:
        raise WorkloadError(f"{path}: cannot read {what}: {exc.strerror or exc}") from None
    except DecodeError as exc:
        raise WorkloadError(f"{path}: cannot read {what}: {exc}") from None


def decode(text: str, path: Path, what: str) -> Any:
    """One YAML document of ``text`` (the file at ``path``, a ``what``: none for a workload
    file), within :data:`BENCH_LIMITS`."""
    try:
        return load_yaml(text, BENCH_LIMITS)
    except DecodeError as exc:
        raise WorkloadError(f"{path}: {what + ' is ' if what else ''}not valid YAML: {exc}") from None


def read_template(path: Path, kind: str, values: dict[str, Any] | None = None) -> Obj:
    """The object of the template file at ``path``, which must be a ``kind``; ``values`` fill
    its ``{{.Field}}`` fields (none: they stay as written)."""
    text = read_file(path, "template")
    if values is not None:
        text = _fill(text, values, path)
    obj = decode(text, path, "template")
    if not isinstance(obj, dict):
        raise WorkloadError(f"{path}: a template must be one object, got {type_name(obj)}")
    if obj.get("kind", kind) != kind:
        raise WorkloadError(f"{path}: expected a {kind} template, got kind {obj.get('kind')!r}")
    obj.setdefault("kind", kind)
    obj.setdefault("apiVersion", "v1")
    for part in ("metadata", "spec"):
        if obj.setdefault(part, {}) is None:
            obj[part] = {}
        if not isinstance(obj[part], dict):
            raise WorkloadError(f"{path}: {part}: expected a mapping, got {type_name(obj[part])}")
    if obj.get("status") is not None and not isinstance(obj["status"], dict):
        raise WorkloadError(f"{path}: status: expected a mapping, got {type_name(obj['status'])}")
    _check_meta(obj["metadata"], path)
    return obj


def _check_meta(meta: Obj, path: Path) -> None:
    """A template's metadata as the objects made from it need it: names are strings, labels and
    annotations mappings of strings."""
    for key in ("name", "generateName", "namespace"):
        if meta.get(key) is not None and not isinstance(meta[key], str):
            raise WorkloadError(f"{path}: metadata.{key}: expected a string, got {meta[key]!r}")
    for key in ("labels", "annotations"):
        value = meta.get(key)
        if value is None:
            if key in meta:
                meta[key] = {}  # written empty (``labels:``): none, as the API reads it
            continue
        if not isinstance(value, dict):
            raise WorkloadError(f"{path}: metadata.{key}: expected a mapping, got {type_name(value)}")
        for k, v in value.items():
            if not isinstance(k, str) or not isinstance(v, str):
                raise WorkloadError(f"{path}: metadata.{key}[{k!r}]: expected a string, got {v!r}")


def _fill(text: str, values: dict[str, Any], path: Path) -> str:
    """``text`` with its fields filled in from ``values``; refused as soon as it grows past
    :data:`BENCH_LIMITS` (a value put in many times, a large ``templateParams`` value)."""
    limit = BENCH_LIMITS.max_bytes
    size = len(text)

    def put(m: re.Match[str]) -> str:
        nonlocal size
        if m.group(1) is not None:
            value = _value(m.group(1), m.group(0))
        else:
            value = _call(m.group(2), m.group(3), m.group(4), m.group(0))
        out = value if isinstance(value, str) else str(value)
        size += len(out) - len(m.group(0))
        if size > limit:
            raise WorkloadError(
                f"{path}: template is more than the limit of {limit} bytes once {m.group(0)} is filled in"
            )
        return out

    def _value(name: str, text: str) -> Any:
        if name not in values:
            raise WorkloadError(f"{path}: {text} names no template value (there are: {', '.join(sorted(values))})")
        return values[name]

    def _call(func: str, a: str, b: str, text: str) -> int:
        fn = TEMPLATE_FUNCS.get(func)
        if fn is None:
            raise WorkloadError(
                f"{path}: {text}: unknown template function {func!r} (there are: {', '.join(sorted(TEMPLATE_FUNCS))})"
            )
        args = []
        for arg in (a, b):
            value = _value(arg[1:], text) if arg.startswith(".") else int(arg)
            if isinstance(value, bool) or not isinstance(value, int):
                raise WorkloadError(f"{path}: {text}: {func} takes integers, got {arg} = {value!r}")
            args.append(value)
        if func in ("DivideInt", "Mod") and args[1] == 0:
            raise WorkloadError(f"{path}: {text}: division by zero")
        return int(fn(args[0], args[1]))

    return TEMPLATE_FIELD.sub(put, text)


def read_any(path: Path, values: dict[str, Any]) -> Obj:
    """The object of the template file at ``path``, of any kind (a createAny template), its
    ``{{.Field}}`` fields filled from ``values``."""
    obj = decode(_fill(read_file(path, "template"), values, path), path, "template")
    if not isinstance(obj, dict) or not obj.get("kind") or not obj.get("apiVersion"):
        raise WorkloadError(f"{path}: a createAny template is one object with apiVersion and kind")
    return obj


def type_name(value: Any) -> str:
    """What ``value`` is, for a message: ``nothing`` for None, else its type's name."""
    return "nothing" if value is None else type(value).__name__
