"""The informers plugins ask their handle for (:meth:`Framework.informer_for`), shared.

:class:`SharedInformers` holds one :class:`SharedInformer` per resource, whoever asks for it
(two plugins, two profiles): one watch feeds them all. It does not watch anything itself. The
scheduler tells its cluster which resources to watch (:meth:`SharedInformers.resources`) and
hands each object the cluster delivers to the informer of its kind (:meth:`SharedInformers.get`),
on the scheduler's loop, in the order the cluster made the changes.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from kubesched.errors import PluginError
from kubesched.framework.informers import (
    AddHandler,
    DeleteHandler,
    GroupVersionResource,
    Lister,
    UpdateHandler,
)
from kubesched.objects import Obj, object_key
from kubesched.runtime.objects import ObjectIndex

log = logging.getLogger(__name__)

_Handlers = tuple[AddHandler | None, UpdateHandler | None, DeleteHandler | None]


class SharedInformer:
    """One resource's objects (its own :class:`~kubesched.framework.informers.Lister`) and the
    handlers plugins added, fed by the scheduler with what the cluster delivers for ``kind``."""

    def __init__(self, gvr: GroupVersionResource, kind: str) -> None:
        self._gvr = gvr
        #: The kind the cluster delivers its objects with (see :mod:`kubesched.cluster.kinds`).
        self.kind = kind
        self._objects = ObjectIndex()
        self._handlers: list[_Handlers] = []
        self._synced = False

    def __repr__(self) -> str:
        return f"SharedInformer({self._gvr}, {len(self._objects)} objects)"

    # --- Informer -------------------------------------------------------------------------------
    @property
    def gvr(self) -> GroupVersionResource:
        return self._gvr

    @property
    def lister(self) -> Lister:
        return self._objects

    def add_event_handler(
        self,
        on_add: AddHandler | None = None,
        on_update: UpdateHandler | None = None,
        on_delete: DeleteHandler | None = None,
    ) -> None:
        self._handlers.append((on_add, on_update, on_delete))
        if on_add is not None:
            for obj in self._objects.list():
                self._call(on_add, obj)

    def has_synced(self) -> bool:
        return self._synced

    # --- fed by the scheduler -------------------------------------------------------------------
    def added(self, obj: Obj) -> None:
        self._objects.put(obj)
        for on_add, _, _ in self._handlers:
            if on_add is not None:
                self._call(on_add, obj)

    def updated(self, old: Obj, new: Obj) -> None:
        self._objects.put(new)
        for _, on_update, _ in self._handlers:
            if on_update is not None:
                self._call(on_update, old, new)

    def deleted(self, obj: Obj) -> None:
        self._objects.remove(obj)
        for _, _, on_delete in self._handlers:
            if on_delete is not None:
                self._call(on_delete, obj)

    def set_synced(self) -> None:
        self._synced = True

    def _call(self, fn: Callable[..., None], *args: Obj) -> None:
        try:
            fn(*args)
        except Exception:  # a plugin's handler must not stop the others, nor the scheduler's
            log.exception("%s informer: handler %r failed on %s", self._gvr, fn, object_key(args[-1]))


class SharedInformers:
    """One :class:`SharedInformer` per resource, for every profile and plugin.

    ``kind_of(gvr)`` names the kind the cluster delivers a resource's objects with (the Kind
    of a built-in, :attr:`GroupVersionResource.event_resource` of any other; the default knows
    no built-ins). Two resources of one kind share one informer."""

    def __init__(self, kind_of: Callable[[GroupVersionResource], str] | None = None) -> None:
        self._kind_of = kind_of if kind_of is not None else (lambda gvr: gvr.event_resource)
        self._by_gvr: dict[GroupVersionResource, SharedInformer] = {}
        #: The informers by the kind their objects are delivered with.
        self.by_kind: dict[str, SharedInformer] = {}
        #: Set once the scheduler has told its cluster what to watch: no resource can be added.
        self.started = False

    def __bool__(self) -> bool:
        return bool(self._by_gvr)

    def informer_for(self, gvr: GroupVersionResource | str) -> SharedInformer:
        """The informer of ``gvr`` (made on first ask; the same one after)."""
        if isinstance(gvr, str):
            gvr = GroupVersionResource.parse(gvr)
        found = self._by_gvr.get(gvr)
        if found is not None:
            return found
        kind = self._kind_of(gvr)
        found = self.by_kind.get(kind)
        if found is None:
            if self.started:
                raise PluginError(
                    f"an informer for {gvr} was asked for after the scheduler started its informers: "
                    "ask for it in the plugin's constructor"
                )
            found = self.by_kind[kind] = SharedInformer(gvr, kind)
        self._by_gvr[gvr] = found
        return found

    def get(self, kind: str) -> SharedInformer | None:
        """The informer fed with the objects the cluster delivers as ``kind``, if any."""
        return self.by_kind.get(kind)

    def resources(self) -> list[GroupVersionResource]:
        """Every resource asked for, in the order asked (what the cluster must watch)."""
        return list(self._by_gvr)

    def set_synced(self) -> None:
        """The cluster has delivered its initial lists."""
        for informer in self.by_kind.values():
            informer.set_synced()


__all__ = ["SharedInformer", "SharedInformers"]
