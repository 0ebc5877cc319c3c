"""Watches: newline-delimited JSON events over a chunked response.

A watch resumes from any resourceVersion still in the store's history; an older one gets an
``ERROR`` event carrying a 410 Expired Status, after which clients relist, exactly as against a
real API server. With ``allowWatchBookmarks`` an idle watch gets a ``BOOKMARK`` every
:attr:`Watches.bookmark_interval` seconds; an object that stops (or starts) matching the
selectors is sent as ``DELETED`` (or ``ADDED``)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterable
from typing import Any

from aiohttp import web

from kubesched.cluster.custom_resources import CRD_KIND
from kubesched.cluster.store import Gone, Store
from kubesched.sim.apiserver import tables as apitables
from kubesched.sim.apiserver.errors import APIError, bad_request, expired
from kubesched.sim.apiserver.handlers import view
from kubesched.sim.apiserver.requests import ResourceRequest, selector, truthy
from kubesched.sim.apiserver.responses import event_line

#: Changes a watch encodes between two turns of the event loop.
EMIT_BATCH = 256

Obj = dict[str, Any]
#: One stored change as a watch receives it: (type, kind, object, the object before).
Change = tuple[str, str, Obj, Obj | None]


class _Watch:
    """One open watch stream; :meth:`close` ends it from outside."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[Change | None] = asyncio.Queue()

    def close(self) -> None:
        self.queue.put_nowait(None)


class Watches:
    """The open watch streams on ``store``: :meth:`serve` streams one, :meth:`drop_all` ends
    them all (clients see the response end and must re-watch)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        #: seconds between BOOKMARK events on watches that asked for them
        self.bookmark_interval = 5.0
        #: set at shutdown: a watch opened after it is refused with 503
        self.stopping = False
        self._open: set[_Watch] = set()

    def drop_all(self) -> None:
        for w in list(self._open):
            w.close()

    async def serve(self, request: web.Request, req: ResourceRequest) -> web.StreamResponse:
        """Stream the changes of ``req``'s kind that match its selectors until the client
        goes, ``timeoutSeconds`` pass, or :meth:`drop_all`."""
        if self.stopping:
            raise web.HTTPServiceUnavailable(text="the server is shutting down")
        q = request.query
        match = selector(request, req)
        if req.name is not None:
            by_name = req.name
            base_match = match

            def match(obj: Obj) -> bool:
                return (obj.get("metadata") or {}).get("name") == by_name and base_match(obj)

        kind = req.res.stored_as
        as_table = apitables.wants_table(request.headers.get("Accept", ""))
        include = q.get("includeObject")
        bookmarks = truthy(q.get("allowWatchBookmarks"))
        timeout: float | None = None
        if q.get("timeoutSeconds"):
            try:
                timeout = max(0.0, float(q["timeoutSeconds"]))
            except ValueError:
                raise bad_request(f"invalid timeoutSeconds: {q['timeoutSeconds']!r}") from None
        rv_param = q.get("resourceVersion") or ""
        watch = _Watch()
        initial: list[tuple[str, Obj, Obj | None]] = []
        error: APIError | None = None
        # History and subscription are taken in one synchronous step: no write can fall between.
        if rv_param in ("", "0"):
            items, _ = self.store.list(kind, req.namespace if req.res.namespaced else None)
            initial = [("ADDED", o, None) for o in items]
        else:
            try:
                since = int(rv_param)
            except ValueError:
                raise bad_request(f"invalid resource version: {rv_param!r}") from None
            try:
                initial = [(etype, obj, old) for _, etype, _, obj, old in self.store.events_since(since, [kind])]
            except Gone as exc:
                error = expired(str(exc))
        unsubscribe: Callable[[], None] | None = None
        if error is None:
            definition = req.res.custom.name if req.res.custom is not None else None

            def deliver(etype: str, k: str, obj: Obj, old: Obj | None) -> None:
                if k == kind:
                    watch.queue.put_nowait((etype, k, obj, old))
                elif definition is not None and k == CRD_KIND and etype == "DELETED":
                    # Its definition gone, the resource is no longer served: the watch ends.
                    if (obj.get("metadata") or {}).get("name") == definition:
                        watch.close()

            unsubscribe = self.store.subscribe(deliver)
            self._open.add(watch)
        resp = web.StreamResponse(status=200, headers={"Content-Type": "application/json"})
        resp.enable_chunked_encoding()
        try:
            await resp.prepare(request)
            if error is not None:
                await resp.write(event_line("ERROR", error.status()))
                return resp

            def encode(etype: str, obj: Obj, old: Obj | None) -> bytes | None:
                """The line for one stored change, or None when this watch does not see it."""
                now = match(obj)
                before = old is not None and match(old)
                if etype == "MODIFIED" and now != before:
                    if now:
                        etype = "ADDED"
                    else:
                        etype = "DELETED"
                        obj = (
                            {
                                **old,
                                "metadata": {**old["metadata"], "resourceVersion": obj["metadata"]["resourceVersion"]},
                            }
                            if old
                            else obj
                        )
                elif not now:
                    return None
                shown = view(req.res, obj)
                if as_table:
                    shown = apitables.table(req.res, [shown], int(obj["metadata"].get("resourceVersion") or 0), include)
                return event_line(etype, shown)

            async def emit_all(changes: Iterable[tuple[str, Obj, Obj | None]]) -> None:
                # In writes of EMIT_BATCH changes, each followed by a turn of the loop: a watch
                # from "" or from an old version starts with thousands of them.
                lines: list[bytes] = []
                for i, change in enumerate(changes, 1):
                    if (line := encode(*change)) is not None:
                        lines.append(line)
                    if i % EMIT_BATCH == 0:
                        if lines:
                            await resp.write(b"".join(lines))
                            lines = []
                        await asyncio.sleep(0)
                if lines:
                    await resp.write(b"".join(lines))

            await emit_all(initial)
            loop = asyncio.get_running_loop()
            deadline = loop.time() + timeout if timeout is not None else None
            while True:
                wait = self.bookmark_interval if bookmarks else None
                if deadline is not None:
                    left = deadline - loop.time()
                    if left <= 0:
                        break
                    wait = left if wait is None else min(wait, left)
                try:
                    item = await asyncio.wait_for(watch.queue.get(), wait)
                except TimeoutError:
                    if bookmarks and (deadline is None or loop.time() < deadline):
                        bookmark = {
                            "kind": req.res.kind,
                            "apiVersion": req.res.group_version,
                            "metadata": {"resourceVersion": str(self.store.resource_version)},
                        }
                        await resp.write(event_line("BOOKMARK", bookmark))
                    continue
                if item is None:
                    break
                # Whatever else is queued already goes out in the same write: a burst of changes
                # costs one write and one wake-up of the client, not one per change.
                batch = [item]
                closing = False
                while not watch.queue.empty():
                    more = watch.queue.get_nowait()
                    if more is None:
                        closing = True
                        break
                    batch.append(more)
                await emit_all((etype, obj, old) for etype, _, obj, old in batch)
                if closing:
                    break
        except (ConnectionResetError, ConnectionError):
            pass
        finally:
            if unsubscribe is not None:
                unsubscribe()
            self._open.discard(watch)
        with contextlib.suppress(ConnectionResetError, ConnectionError):
            await resp.write_eof()
        return resp
