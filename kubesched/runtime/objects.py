"""One kind's cluster objects by namespace and name: what the scheduler's listers and plugins'
informers keep (Kubernetes JSON dicts, not to be changed)."""

from __future__ import annotations

from kubesched.objects import Obj, namespaced_name, object_key

#: The journal of changes keeps at least this many keys (and as many as there are objects).
_JOURNAL_MIN = 1024


class ObjectIndex:
    """One kind's objects; a :class:`~kubesched.framework.informers.Lister`, and the keys of
    the objects changed since a point (:meth:`changes`), for readers that keep something per
    object and would otherwise look at every object again."""

    def __init__(self) -> None:
        self._objects: dict[str, Obj] = {}
        #: The keys put or removed, in order; the first is change number ``_dropped``.
        self._journal: list[str] = []
        self._dropped = 0

    def __len__(self) -> int:
        return len(self._objects)

    def put(self, obj: Obj) -> None:
        key = object_key(obj)
        self._objects[key] = obj
        self._note(key)

    def remove(self, obj: Obj) -> None:
        key = object_key(obj)
        self._objects.pop(key, None)
        self._note(key)

    def _note(self, key: str) -> None:
        journal = self._journal
        journal.append(key)
        if len(journal) > 2 * max(len(self._objects), _JOURNAL_MIN):
            # Readers further behind than this look at every object again (changes: None).
            half = len(journal) // 2
            del journal[:half]
            self._dropped += half

    def changes(self, since: int | None) -> tuple[int, list[str] | None]:
        """The number of the next change, and the keys (object_key) of the objects put or
        removed since change ``since`` (a number this returned before), oldest first, a key once
        per change; ``None`` when ``since`` is ``None`` or too far back."""
        now = self._dropped + len(self._journal)
        if since is None or since < self._dropped or since > now:
            return now, None
        return now, self._journal[since - self._dropped :]

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
