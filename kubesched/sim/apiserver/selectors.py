"""Label and field selectors as the API server parses them from ``?labelSelector=`` and
``?fieldSelector=`` query parameters.

Label selectors take both syntaxes upstream accepts: equality (``a=b``, ``a==b``, ``a!=b``) and
set-based (``a in (x,y)``, ``a notin (x)``, ``a``, ``!a``). Field selectors take ``=``, ``==`` and
``!=`` over the handful of fields each resource supports; any other field is refused, as the API
server refuses it, so that a client relying on server-side filtering learns it early.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from kubesched.objects import Obj


class SelectorSyntaxError(ValueError):
    """A selector the API server would reject with 400 BadRequest."""


@dataclass(frozen=True)
class Requirement:
    key: str
    op: str  # "=", "!=", "in", "notin", "exists", "!"
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        present = self.key in labels
        if self.op == "exists":
            return present
        if self.op == "!":
            return not present
        if self.op in ("=", "in"):
            return present and labels[self.key] in self.values
        # "!=" and "notin" match objects without the label too, as upstream does.
        return not present or labels[self.key] not in self.values


_KEY = r"[A-Za-z0-9]([-A-Za-z0-9_./]*[A-Za-z0-9])?"
_TOKEN = re.compile(
    r"\s*(?:(?P<not>!)\s*(?P<nkey>" + _KEY + r")"
    r"|(?P<key>" + _KEY + r")\s*"
    r"(?:(?P<setop>\s(?:in|notin))\s*\((?P<set>[^)]*)\)"
    r"|(?P<op>==|=|!=)\s*(?P<value>[-A-Za-z0-9_.]*)"
    r")?)\s*(?:,|$)"
)


def parse_label_selector(text: str | None) -> list[Requirement]:
    """Parse a label selector string; an empty one selects everything."""
    if not text or not text.strip():
        return []
    reqs: list[Requirement] = []
    pos = 0
    text = text.strip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            raise SelectorSyntaxError(f"unable to parse requirement: {text[pos:]!r}: found unexpected input")
        pos = m.end()
        if m.group("nkey"):
            reqs.append(Requirement(m.group("nkey"), "!"))
        elif m.group("setop"):
            values = tuple(v.strip() for v in m.group("set").split(",") if v.strip())
            reqs.append(Requirement(m.group("key"), m.group("setop").strip(), values))
        elif m.group("op"):
            op = "!=" if m.group("op") == "!=" else "="
            reqs.append(Requirement(m.group("key"), op, (m.group("value"),)))
        else:
            reqs.append(Requirement(m.group("key"), "exists"))
    return reqs


def labels_match(reqs: list[Requirement], obj: Obj) -> bool:
    labels = (obj.get("metadata") or {}).get("labels") or {}
    return all(r.matches(labels) for r in reqs)


# --- field selectors ---------------------------------------------------------------------------


def _path(*keys: str) -> Callable[[Obj], str]:
    def get(obj: Obj) -> str:
        cur: Any = obj
        for k in keys:
            if not isinstance(cur, dict):
                return ""
            cur = cur.get(k)
        if cur is None:
            return ""
        if isinstance(cur, bool):
            return "true" if cur else "false"
        return str(cur)

    return get


def _source(obj: Obj) -> str:
    src = obj.get("source") or {}
    return str(src.get("component") or obj.get("reportingComponent") or "")


_COMMON: dict[str, Callable[[Obj], str]] = {
    "metadata.name": _path("metadata", "name"),
    "metadata.namespace": _path("metadata", "namespace"),
}

_INVOLVED = ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath")
_EVENT_FIELDS: dict[str, Callable[[Obj], str]] = {f"involvedObject.{f}": _path("involvedObject", f) for f in _INVOLVED}
# events.k8s.io/v1 names the same data "regarding"; both spellings select the same Events.
_EVENT_FIELDS.update({k.replace("involvedObject.", "regarding."): v for k, v in list(_EVENT_FIELDS.items())})
_EVENT_FIELDS.update(
    {
        "reason": _path("reason"),
        "type": _path("type"),
        "source": _source,
        "reportingComponent": _path("reportingComponent"),
        "reportingController": _path("reportingComponent"),
    }
)

FIELDS_BY_KIND: dict[str, dict[str, Callable[[Obj], str]]] = {
    "Pod": {
        "spec.nodeName": _path("spec", "nodeName"),
        "spec.schedulerName": _path("spec", "schedulerName"),
        "spec.serviceAccountName": _path("spec", "serviceAccountName"),
        "spec.hostNetwork": lambda o: "true" if (o.get("spec") or {}).get("hostNetwork") else "false",
        "spec.restartPolicy": _path("spec", "restartPolicy"),
        "status.phase": _path("status", "phase"),
        "status.podIP": _path("status", "podIP"),
        "status.nominatedNodeName": _path("status", "nominatedNodeName"),
    },
    "Node": {"spec.unschedulable": lambda o: "true" if (o.get("spec") or {}).get("unschedulable") else "false"},
    "Namespace": {"status.phase": _path("status", "phase")},
    "Event": _EVENT_FIELDS,
}


@dataclass(frozen=True)
class FieldRequirement:
    field: str
    negate: bool
    value: str
    get: Callable[[Obj], str]

    def matches(self, obj: Obj) -> bool:
        return (self.get(obj) == self.value) != self.negate


def _split_unescaped(text: str, sep: str) -> list[str]:
    parts, cur, esc = [], [], False
    for ch in text:
        if esc:
            cur.append(ch)
            esc = False
        elif ch == "\\":
            cur.append(ch)
            esc = True
        elif ch == sep:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return parts


def _unescape(value: str) -> str:
    return re.sub(r"\\(.)", r"\1", value)


def selectable_field(path: str) -> Callable[[Obj], str]:
    """A custom resource's selectable field (``spec.color``) as a field selector reads it: a
    string, an integer or a boolean as its text, anything else (or nothing) as ``""``."""
    keys = path.split(".")

    def get(obj: Obj) -> str:
        value: Any = obj
        for key in keys:
            if not isinstance(value, dict):
                return ""
            value = value.get(key)
        if isinstance(value, bool):
            return "true" if value else "false"
        return str(value) if isinstance(value, str | int) else ""

    return get


def parse_field_selector(
    text: str | None, kind: str, extra: Mapping[str, Callable[[Obj], str]] | None = None
) -> list[FieldRequirement]:
    """Parse a field selector for objects of ``kind`` (``extra``: a custom resource's selectable
    fields); unknown fields raise SelectorSyntaxError."""
    if not text or not text.strip():
        return []
    known = {**_COMMON, **FIELDS_BY_KIND.get(kind, {}), **(extra or {})}
    reqs: list[FieldRequirement] = []
    for term in _split_unescaped(text, ","):
        term = term.strip()
        if not term:
            continue
        m = re.match(r"^([^=!]+?)\s*(==|!=|=)\s*(.*)$", term)
        if m is None:
            raise SelectorSyntaxError(f"invalid selector: '{text}'; can't understand '{term}'")
        field, op, value = m.group(1).strip(), m.group(2), _unescape(m.group(3).strip())
        get = known.get(field)
        if get is None:
            raise SelectorSyntaxError(f"field label not supported: {field}")
        reqs.append(FieldRequirement(field, op == "!=", value, get))
    return reqs


def fields_match(reqs: list[FieldRequirement], obj: Obj) -> bool:
    return all(r.matches(obj) for r in reqs)
