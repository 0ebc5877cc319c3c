"""Template files of workloads: one object each, whose text may use Go text/template fields
(``{{.Index}}``, ``{{.Count}}``, a createAny op's ``templateParams``) filled in before it is read."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from kubesched.bench.errors import WorkloadError

Obj = dict[str, Any]


#: A Go text/template field (``{{.Index}}``, ``{{ .Count }}``).
TEMPLATE_FIELD = re.compile(r"{{\s*\.(\w+)\s*}}")


def is_templated(path: Path) -> bool:
    """Whether the template file at ``path`` uses a ``{{.Field}}``."""
    try:
        return TEMPLATE_FIELD.search(path.read_text(encoding="utf-8")) is not None
    except OSError:
        return False


def read_template(path: Path, kind: str, values: dict[str, Any] | None = None) -> Obj:
    """The object of the template file at ``path``, which must be a ``kind``; ``values`` fill
    its ``{{.Field}}`` fields (none: they stay as written)."""
    try:
        text = path.read_text(encoding="utf-8")
        if values is not None:
            text = _fill(text, values, path)
        obj = yaml.safe_load(text)
    except OSError as exc:
        raise WorkloadError(f"{path}: cannot read template: {exc.strerror or exc}") from None
    except yaml.YAMLError as exc:
        raise WorkloadError(f"{path}: template is not valid YAML: {exc}") from None
    if not isinstance(obj, dict):
        raise WorkloadError(f"{path}: a template must be one object, got {type_name(obj)}")
    if obj.get("kind", kind) != kind:
        raise WorkloadError(f"{path}: expected a {kind} template, got kind {obj.get('kind')!r}")
    obj.setdefault("kind", kind)
    obj.setdefault("apiVersion", "v1")
    obj.setdefault("metadata", {})
    obj.setdefault("spec", {})
    return obj


def _fill(text: str, values: dict[str, Any], path: Path) -> str:
    def put(m: re.Match[str]) -> str:
        if m.group(1) not in values:
            raise WorkloadError(
                f"{path}: {m.group(0)} names no template value (there are: {', '.join(sorted(values))})"
            )
        return str(values[m.group(1)])

    return TEMPLATE_FIELD.sub(put, text)


def read_any(path: Path, values: dict[str, Any]) -> Obj:
    """The object of the template file at ``path``, of any kind (a createAny template), its
    ``{{.Field}}`` fields filled from ``values``."""
    try:
        obj = yaml.safe_load(_fill(path.read_text(encoding="utf-8"), values, path))
    except OSError as exc:
        raise WorkloadError(f"{path}: cannot read template: {exc.strerror or exc}") from None
    except yaml.YAMLError as exc:
        raise WorkloadError(f"{path}: template is not valid YAML: {exc}") from None
    if not isinstance(obj, dict) or not obj.get("kind") or not obj.get("apiVersion"):
        raise WorkloadError(f"{path}: a createAny template is one object with apiVersion and kind")
    return obj


def type_name(value: Any) -> str:
    """What ``value`` is, for a message: ``nothing`` for None, else its type's name."""
    return "nothing" if value is None else type(value).__name__
