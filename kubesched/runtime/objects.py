"""One kind's cluster objects by namespace and name: what the scheduler's listers and plugins'
informers keep (Kubernetes JSON dicts, not to be changed)."""

from __future__ import annotations

from kubesched.objects import Obj, namespaced_name, object_key


class ObjectIndex:
    """One kind's objects; a :class:`~kubesched.framework.informers.Lister`."""

    def __init__(self) -> None:
        self._objects: dict[str, Obj] = {}

    def __len__(self) -> int:
        return len(self._objects)

    def put(self, obj: Obj) -> None:
        self._objects[object_key(obj)] = obj

    def remove(self, obj: Obj) -> None:
        self._objects.pop(object_key(obj), None)

    def get(self, namespace: str | None, name: str) -> Obj | None:
        """The object ``namespace/name``, or the cluster-scoped one ``name``."""
        if namespace:
            found = self._objects.get(namespaced_name(namespace, name))
            if found is not None:
                return found
        return self._objects.get(name)

    def list(self, namespace: str | None = None) -> list[Obj]:
        """Every object, or those of one namespace."""
        if namespace is None:
            return list(self._objects.values())
        return [o for o in self._objects.values() if ((o.get("metadata") or {}).get("namespace") or "") == namespace]


__all__ = ["ObjectIndex"]
