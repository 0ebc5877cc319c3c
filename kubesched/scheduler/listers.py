"""The cluster objects plugins read besides pods and nodes: :class:`ObjectCache`."""

from __future__ import annotations

from typing import Any


class ObjectCache:
    """The cluster objects plugins read besides pods and nodes (the handle's ``listers``)."""

    def __init__(self) -> None:
        self._objects: dict[str, dict[str, dict[str, Any]]] = {}

    @staticmethod
    def _key(obj: dict[str, Any]) -> str:
        meta = obj.get("metadata") or {}
        ns = meta.get("namespace")
        return f"{ns}/{meta.get('name', '')}" if ns else meta.get("name", "")

    def put(self, kind: str, obj: dict[str, Any]) -> None:
        self._objects.setdefault(kind, {})[self._key(obj)] = obj

    def remove(self, kind: str, obj: dict[str, Any]) -> None:
        self._objects.get(kind, {}).pop(self._key(obj), None)

    def get(self, kind: str, namespace: str | None, name: str) -> dict[str, Any] | None:
        objs = self._objects.get(kind, {})
        if namespace:
            found = objs.get(f"{namespace}/{name}")
            if found is not None:
                return found
        return objs.get(name)

    def list(self, kind: str, namespace: str | None = None) -> list[dict[str, Any]]:
        objs = self._objects.get(kind, {}).values()
        if namespace is None:
            return list(objs)
        return [o for o in objs if ((o.get("metadata") or {}).get("namespace") or "") == namespace]

    def namespace_labels(self, namespace: str) -> dict[str, str]:
        ns = self._objects.get("Namespace", {}).get(namespace)
        return dict(((ns or {}).get("metadata") or {}).get("labels") or {})
