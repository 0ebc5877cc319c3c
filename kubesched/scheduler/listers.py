"""The cluster objects plugins read besides pods and nodes: :class:`ObjectCache`."""

from __future__ import annotations

from typing import Any

from kubesched.runtime.objects import ObjectIndex

_EMPTY = ObjectIndex()
#: The keys of changed objects (``ObjectIndex.changes``).
_Keys = list[str]


class ObjectCache:
    """The cluster objects plugins read besides pods and nodes (the handle's ``listers``), one
    :class:`~kubesched.runtime.objects.ObjectIndex` a kind."""

    def __init__(self) -> None:
        self._objects: dict[str, ObjectIndex] = {}

    def put(self, kind: str, obj: dict[str, Any]) -> None:
        index = self._objects.get(kind)
        if index is None:
            index = self._objects[kind] = ObjectIndex()
        index.put(obj)

    def remove(self, kind: str, obj: dict[str, Any]) -> None:
        self._objects.get(kind, _EMPTY).remove(obj)

    def get(self, kind: str, namespace: str | None, name: str) -> dict[str, Any] | None:
        return self._objects.get(kind, _EMPTY).get(namespace, name)

    def list(self, kind: str, namespace: str | None = None) -> list[dict[str, Any]]:
        return self._objects.get(kind, _EMPTY).list(namespace)

    def changes(self, kind: str, since: int | None) -> tuple[int, _Keys | None]:
        """See :class:`~kubesched.framework.interface.ListerChanges`."""
        index = self._objects.get(kind)
        if index is None:
            index = self._objects[kind] = ObjectIndex()
        return index.changes(since)

    def namespace_labels(self, namespace: str) -> dict[str, str]:
        ns = self._objects.get("Namespace", _EMPTY).get(None, namespace)
        return dict(((ns or {}).get("metadata") or {}).get("labels") or {})
