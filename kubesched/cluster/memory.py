"""The cluster protocol over the in-memory :class:`Store`: what ``kubesched simulate`` runs on.

Changes are delivered to the scheduler on the next turn of the event loop (never from inside
the write that caused them), as an informer would: the scheduler never re-enters itself.

Besides :data:`~kubesched.cluster.base.EVERY_WATCHED_KIND`, it delivers the objects of the
resources :meth:`InMemoryCluster.watch_resources` names (plugins' informers): those the Store
keeps under the resource's kind (:func:`~kubesched.cluster.kinds.store_kind`), delivered as
:func:`~kubesched.cluster.kinds.handler_kind`.
"""

from __future__ import annotations

import asyncio
import zlib
from typing import Any

from kubesched.cluster.base import EVERY_WATCHED_KIND, EventHandler, NotFound
from kubesched.cluster.kinds import handler_kind, named_resource, store_kind
from kubesched.cluster.store import Store, json_copy, now_rfc3339
from kubesched.cluster.termination import delete_pod
from kubesched.framework.informers import GroupVersionResource
from kubesched.objects import Obj

_WATCHED = frozenset(EVERY_WATCHED_KIND)


class InMemoryCluster:
    def __init__(self, store: Store | None = None) -> None:
        self.store = store if store is not None else Store()
        self._unsubscribe: Any = None
        #: Changes handed to the loop for the handler, and those the handler has had (in order).
        self._sent = 0
        self._delivered = 0
        #: Resources watched besides the usual kinds: the Store's kind → the kinds delivered.
        self._extra: dict[str, list[str]] = {}

    def listed(self, kind: str) -> list[Obj]:
        """The stored objects of ``kind`` (as an informer would hold them)."""
        items, _ = self.store.list(kind)
        return list(items)

    def watch_resources(self, gvrs: list[GroupVersionResource]) -> None:
        """Deliver the objects of these resources too (from :meth:`start` on): plugins'
        informers. Those among the kinds watched anyway change nothing."""
        for gvr in gvrs:
            kind = handler_kind(gvr)
            if kind in _WATCHED:
                continue
            kinds = self._extra.setdefault(store_kind(gvr), [])
            if kind not in kinds:
                kinds.append(kind)

    async def start(self, handler: EventHandler) -> None:
        loop = asyncio.get_running_loop()
        extra = self._extra
        # Plugins' resources before nodes and pods, as the gated kinds: a plugin knows its
        # objects before the pods it decides on arrive.
        head = EVERY_WATCHED_KIND[:-2]
        for stored in (*head, *extra, *EVERY_WATCHED_KIND[-2:]):
            items, _ = self.store.list(stored)
            for kind in extra.get(stored) or (stored,):
                for obj in items:
                    handler.on_add(kind, obj)

        def deliver(etype: str, kind: str, obj: Obj, old: Obj | None) -> None:
            if kind in _WATCHED:
                kinds: tuple[str, ...] | list[str] = (kind,)
            else:
                found = extra.get(kind)
                if found is None:
                    return
                kinds = found
            for delivered in kinds:
                self._sent += 1
                loop.call_soon(self._dispatch, handler, etype, delivered, obj, old)

        self._unsubscribe = self.store.subscribe(deliver)

    def _dispatch(self, handler: EventHandler, etype: str, kind: str, obj: Obj, old: Obj | None) -> None:
        try:
            if etype == "ADDED":
                handler.on_add(kind, obj)
            elif etype == "MODIFIED":
                handler.on_update(kind, old or obj, obj)
            else:
                handler.on_delete(kind, obj)
        finally:
            self._delivered += 1

    async def wait_delivered(self, meanwhile: bool = True) -> None:
        """Return once every change made so far has reached the handler, and (``meanwhile``)
        every change made while this waits too: no change is in flight when it returns (a test
        stepping the scheduler sees what its deliveries led to). ``meanwhile=False``: only the
        changes made before this call — waiting for a moment with none in flight while the
        scheduler runs beside it could wait as long as it keeps binding (a benchmark)."""
        target = self._sent
        # Deliveries are the loop's callbacks in the order they were made: one turn of the loop
        # runs those made before it.
        while self._delivered < (self._sent if meanwhile else target):
            await asyncio.sleep(0)
            if meanwhile and self._delivered == self._sent:
                # What the handler started on the last delivery (callbacks, tasks) gets two more
                # turns of the loop to make its changes before the count is looked at again.
                await asyncio.sleep(0)
                await asyncio.sleep(0)

    async def stop(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None

    # --- writes -------------------------------------------------------------------------------
    async def bind(self, pod: Obj, node_name: str) -> None:
        meta = pod["metadata"]
        self.store.bind(meta.get("namespace") or "default", meta["name"], node_name)

    async def get_pod(self, namespace: str, name: str) -> Obj:
        pod: Obj = json_copy(self.store.get("Pod", namespace, name))
        return pod

    async def record_event(
        self, regarding: Obj, event_type: str, reason: str, action: str, message: str, reporting_controller: str
    ) -> None:
        meta = regarding.get("metadata") or {}
        ns = meta.get("namespace") or "default"
        # Aggregate repeats of the same event about the same object into one with a count,
        # as the event recorder does, so a pod retried a hundred times is one event.
        digest = zlib.crc32(f"{meta.get('uid')}|{reason}|{message}".encode())
        name = f"{meta.get('name', '')}.{reason.lower()}.{digest:08x}"
        now = now_rfc3339()
        existing = self.store.find("Event", ns, name)
        if existing is not None:
            ev = json_copy(existing)
            ev["count"] = int(ev.get("count") or 1) + 1
            ev["lastTimestamp"] = now
            self.store.update("Event", ev)
            return
        self.store.create(
            "Event",
            {
                "apiVersion": "v1",
                "kind": "Event",
                "metadata": {"name": name, "namespace": ns},
                "involvedObject": {
                    "kind": regarding.get("kind", "Pod"),
                    "namespace": ns,
                    "name": meta.get("name", ""),
                    "uid": meta.get("uid", ""),
                    "apiVersion": regarding.get("apiVersion", "v1"),
                    "resourceVersion": meta.get("resourceVersion", ""),
                },
                "type": event_type,
                "reason": reason,
                "action": action,
                "message": message,
                "reportingComponent": reporting_controller,
                "reportingInstance": reporting_controller,
                "source": {"component": reporting_controller},
                "firstTimestamp": now,
                "lastTimestamp": now,
                "eventTime": None,
                "count": 1,
            },
            owned=True,  # made here of plain values: nothing else holds it
        )

    async def update_pod_condition(self, pod: Obj, condition: Obj, nominated_node_name: str | None = None) -> None:
        meta = pod["metadata"]

        def set_condition(p: Obj) -> None:
            status = p.setdefault("status", {})
            conds = [c for c in status.get("conditions") or () if c.get("type") != condition["type"]]
            conds.append(dict(condition))
            status["conditions"] = conds
            if nominated_node_name is not None:
                status["nominatedNodeName"] = nominated_node_name or None

        try:
            self.store.mutate("Pod", meta.get("namespace"), meta["name"], set_condition, members=("status",))
        except NotFound:
            pass  # the pod was deleted meanwhile: nothing to report on

    async def patch_pod_annotations(self, pod: Obj, annotations: dict[str, str]) -> None:
        meta = pod["metadata"]

        def annotate(p: Obj) -> None:
            # A new mapping: the stored one below metadata is shared with the object replaced.
            p["metadata"]["annotations"] = {**(p["metadata"].get("annotations") or {}), **annotations}

        try:
            self.store.mutate("Pod", meta.get("namespace"), meta["name"], annotate, members=("metadata",))
        except NotFound:
            pass

    async def delete_pod(self, pod: Obj) -> None:
        """DELETE as kube-apiserver answers it: gracefully when the store's ``pod_termination``
        says so (:mod:`kubesched.cluster.termination`)."""
        meta = pod["metadata"]
        delete_pod(self.store, meta.get("namespace"), meta["name"])

    async def set_nominated_node_name(self, pod: Obj, node_name: str) -> None:
        meta = pod["metadata"]

        def nominate(p: Obj) -> None:
            status = p.setdefault("status", {})
            if node_name:
                status["nominatedNodeName"] = node_name
            else:
                status.pop("nominatedNodeName", None)

        try:
            self.store.mutate("Pod", meta.get("namespace"), meta["name"], nominate, members=("status",))
        except NotFound:
            pass

    @staticmethod
    def _stored_as(kind: str) -> str:
        """The Store's kind for ``kind`` as the write methods take it: a Kind as it is, any other
        resource (``<plural>.<version>.<group>``) under ``<plural>.<group>``."""
        gvr = named_resource(kind)
        return kind if gvr is None else store_kind(gvr)

    async def update_object(self, kind: str, obj: Obj, subresource: str | None = None) -> Obj:
        return self.store.update(self._stored_as(kind), obj, check_version=True)

    async def create_object(self, kind: str, obj: Obj) -> Obj:
        return self.store.create(self._stored_as(kind), obj)

    async def delete_object(self, kind: str, namespace: str | None, name: str) -> None:
        self.store.delete(self._stored_as(kind), namespace, name)

    def events_for(self, pod: Obj) -> list[Obj]:
        """Events about ``pod`` (for tests and reports)."""
        uid = pod["metadata"].get("uid")
        items, _ = self.store.list("Event")
        return [e for e in items if e["involvedObject"].get("uid") == uid]
