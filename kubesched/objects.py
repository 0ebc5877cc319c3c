"""What a Kubernetes object is to kubesched before it is read into a typed view: its JSON, a
``dict`` by field name. The one definition of the alias every module uses, and of the text an
object's namespace and name make together (:func:`namespaced_name`, :func:`object_key`)."""

from collections.abc import Mapping
from typing import Any

Obj = dict[str, Any]


def namespaced_name(namespace: str | None, name: str) -> str:
    """An object's namespace and name as one text: ``namespace/name``, or ``name`` alone without
    a namespace (a cluster-scoped object). What listers file objects under and what logs, events
    and results show; where the parts are needed, they are kept, not cut back out of it."""
    return f"{namespace}/{name}" if namespace else name


def object_key(obj: Mapping[str, Any]) -> str:
    """:func:`namespaced_name` of an object (its ``metadata``), as it says them: ``name`` alone
    when it names no namespace."""
    meta = obj.get("metadata") or {}
    return namespaced_name(meta.get("namespace"), str(meta.get("name", "")))
