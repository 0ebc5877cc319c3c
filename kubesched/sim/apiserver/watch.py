"""Watches: newline-delimited JSON events over a chunked response.

A watch resumes from any resourceVersion still in the store's history; an older one gets an
``ERROR`` event carrying a 410 Expired Status, after which clients relist, exactly as against a
real API server. With ``allowWatchBookmarks`` an idle watch gets a ``BOOKMARK`` every
:attr:`Watches.bookmark_interval` seconds; an object that stops (or starts) matching the
selectors is sent as ``DELETED`` (or ``ADDED``).

A write costs the same however many watches are open: the store calls one subscriber, which
queues the change and wakes one dispatcher task; the dispatcher, off the writer's path, hands it
to the queue of each watch on the change's kind, and watches that show it alike (same resource
version, media and selector outcome) share one encoding of it.

A watch holds at most :data:`WATCH_QUEUE_LENGTH` changes not yet written, as kube-apiserver's
cacher bounds each watcher's buffer. When a watch is full (its client reads slower than the
changes come, or not at all), the dispatcher waits for room within a time budget shared by all
watches (kube-apiserver's: 50 ms more each second, 100 ms at most); a watch still full then is
closed — its held changes dropped, its stream ended after the write under way — and its client
re-watches from the last version it saw. A client that takes nothing more for
:data:`TERMINATED_GRACE` seconds has its connection closed, so that it holds nothing at all."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
from collections.abc import Callable, Iterable
from typing import Any

from aiohttp import web

from kubesched.cluster.custom_resources import CRD_KIND
from kubesched.cluster.store import Gone, Store
from kubesched.objects import Obj
from kubesched.sim.apiserver import tables as apitables
from kubesched.sim.apiserver.errors import APIError, bad_request, expired
from kubesched.sim.apiserver.handlers import view
from kubesched.sim.apiserver.requests import ResourceRequest, selector, truthy
from kubesched.sim.apiserver.responses import EncodedObjects, event_line, event_line_of
from kubesched.tasks import TaskSet

#: Changes a watch encodes between two turns of the event loop.
EMIT_BATCH = 256
#: Watches the dispatcher hands a change to between two turns of the event loop: each wakes a
#: watch's task, and a request that comes meanwhile waits behind the tasks already woken.
DISPATCH_BATCH = 32
#: The changes a watch holds not yet written to its client: kube-apiserver's bound on the
#: buffer of a watch its cacher serves without an index (``maxWatchChanSizeWithoutIndex``).
WATCH_QUEUE_LENGTH = 100
#: The dispatcher's budget of time to wait for room in full watches (kube-apiserver's
#: ``timeBudget``): it grows by this many seconds a second ...
BUDGET_REFILL_PER_SECOND = 0.05
#: ... up to this many (``maxBudget``).
BUDGET_MAX = 0.1
#: Seconds a closed slow watch has for the bytes already written to reach its client before its
#: connection is closed; a client that reads again in time sees its stream end cleanly.
TERMINATED_GRACE = 5.0

log = logging.getLogger(__name__)

#: One stored change as a watch receives it: (type, object, the object before, the lines already
#: encoded of it, shared by the watches that show it alike).
Change = tuple[str, Obj, Obj | None, dict[Any, bytes]]


class _TimeBudget:
    """Time the dispatcher may spend waiting on full watches: :meth:`take` all there is, and
    :meth:`give_back` what was not spent; it refills at :data:`BUDGET_REFILL_PER_SECOND`."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._left = BUDGET_MAX
        self._at = clock()

    def take(self) -> float:
        now = self._clock()
        taken = min(BUDGET_MAX, self._left + (now - self._at) * BUDGET_REFILL_PER_SECOND)
        self._left, self._at = 0.0, now
        return taken

    def give_back(self, unused: float) -> None:
        self._left = min(BUDGET_MAX, self._left + max(0.0, unused))


class _Watch:
    """One open watch stream on ``kind``, of the changes after ``since``, holding at most
    ``capacity`` changes not yet written; :meth:`close` ends it after those, :meth:`terminate`
    without them. ``definition`` names the CustomResourceDefinition serving ``kind``, if any."""

    def __init__(self, kind: str, since: int, definition: str | None, capacity: int) -> None:
        self.kind = kind
        self.since = since
        self.definition = definition
        self.capacity = capacity
        #: the changes handed to the watch, not yet taken to be written
        self.changes: collections.deque[Change] = collections.deque()
        #: set by close(): the stream ends once the changes held are written
        self.ending = False
        #: set when the stream's task is done with the connection
        self.finished = False
        #: the connection, closed if a terminated watch's client does not take what was written
        self.transport: asyncio.BaseTransport | None = None
        self._wake = asyncio.Event()
        self._room = asyncio.Event()
        self._room.set()

    def offer(self, change: Change) -> bool:
        """Hold ``change`` if there is room; whether there was. A watch that is ending takes no
        more: what came after its close is for the client's next watch."""
        if self.ending:
            return True
        if len(self.changes) >= self.capacity:
            return False
        self.changes.append(change)
        self._wake.set()
        return True

    async def put(self, change: Change, timeout: float) -> bool:
        """Hold ``change`` once there is room, waiting ``timeout`` seconds at most for it."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not self.ending and len(self.changes) >= self.capacity:
            left = deadline - loop.time()
            if left <= 0:
                return False
            self._room.clear()
            try:
                await asyncio.wait_for(self._room.wait(), left)
            except TimeoutError:
                return False
        return self.ending or self.offer(change)

    async def wait(self, timeout: float | None) -> bool:
        """Wait for changes or the end (``timeout`` seconds at most); whether either came."""
        if self.changes or self.ending:
            return True
        self._wake.clear()
        try:
            await asyncio.wait_for(self._wake.wait(), timeout)
        except TimeoutError:
            return False
        return True

    def take(self) -> list[Change]:
        """Every change held, to be written now."""
        batch = list(self.changes)
        self.changes.clear()
        self._room.set()
        return batch

    def close(self) -> None:
        self.ending = True
        self._wake.set()
        self._room.set()

    def terminate(self, grace: float) -> None:
        """End the stream without the changes held, after the write under way; past ``grace``
        seconds with that write not done, close the connection."""
        self.changes.clear()
        self.close()
        if grace >= 0:
            asyncio.get_running_loop().call_later(grace, self._let_go)

    def _let_go(self) -> None:
        if not self.finished and self.transport is not None:  # closing too: its bytes never leave
            log.debug("closing the connection of a closed %s watch: its client takes nothing", self.kind)
            abort = getattr(self.transport, "abort", None)
            if abort is not None:
                abort()
            else:
                self.transport.close()


class Watches:
    """The open watch streams on ``store``: :meth:`serve` streams one, :meth:`drop_all` ends
    them all (clients see the response end and must re-watch)."""

    def __init__(self, store: Store, encoded: EncodedObjects | None = None) -> None:
        self.store = store
        #: seconds between BOOKMARK events on watches that asked for them
        self.bookmark_interval = 5.0
        #: set at shutdown: a watch opened after it is refused with 503
        self.stopping = False
        #: the changes a watch may hold not yet written; one that stays full is closed
        self.queue_length = WATCH_QUEUE_LENGTH
        #: seconds a closed slow watch's client has to take what was already written
        self.terminated_grace = TERMINATED_GRACE
        #: slow watches closed so far (kube-apiserver's ``apiserver_terminated_watchers_total``)
        self.terminated = 0
        self._budget: _TimeBudget | None = None
        self._open: set[_Watch] = set()
        #: the open watches by kind, in the order they opened
        self._by_kind: dict[str, dict[_Watch, None]] = {}
        #: stored changes not yet handed to the watches: (resourceVersion, type, kind, object, before)
        self._pending: collections.deque[tuple[int, str, str, Obj, Obj | None]] = collections.deque()
        self._wake: asyncio.Event | None = None
        self._dispatcher: asyncio.Task[None] | None = None
        #: The dispatcher's owner: it runs from the first watch until :meth:`close`.
        self._tasks = TaskSet("watches", log)
        self._unsubscribe: Callable[[], None] | None = None
        #: the JSON of objects answered last (the server's handlers'), reused by the events
        self.encoded = encoded if encoded is not None else EncodedObjects()

    def drop_all(self) -> None:
        for w in list(self._open):
            w.close()

    def _on_write(self, etype: str, kind: str, obj: Obj, old: Obj | None) -> None:
        """The store's one subscriber for every watch: queue the change, wake the dispatcher."""
        if kind in self._by_kind or kind == CRD_KIND:
            self._pending.append((self.store.resource_version, etype, kind, obj, old))
            if self._wake is not None:
                self._wake.set()

    def _register(self, watch: _Watch) -> None:
        self._open.add(watch)
        self._by_kind.setdefault(watch.kind, {})[watch] = None
        if self._unsubscribe is None:
            self._unsubscribe = self.store.subscribe(self._on_write)
        if self._dispatcher is None or self._dispatcher.done():
            self._wake = asyncio.Event()
            self._dispatcher = self._tasks.spawn(self._dispatch(self._wake), name="watch dispatcher")

    async def close(self) -> None:
        """Stop following the store (at the server's stop, after :meth:`drop_all`)."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        await self._tasks.cancel()
        self._dispatcher = None
        self._pending.clear()

    def _unregister(self, watch: _Watch) -> None:
        self._open.discard(watch)
        watchers = self._by_kind.get(watch.kind)
        if watchers is not None:
            watchers.pop(watch, None)
            if not watchers:
                del self._by_kind[watch.kind]

    async def _dispatch(self, wake: asyncio.Event) -> None:
        """Hand each queued change to the queue of every watch on its kind opened before it."""
        while True:
            await wake.wait()
            wake.clear()
            handed = 0
            while self._pending:
                rv, etype, kind, obj, old = self._pending.popleft()
                if kind == CRD_KIND and etype == "DELETED":
                    # Its definition gone, the resource is no longer served: its watches end.
                    name = (obj.get("metadata") or {}).get("name")
                    for w in list(self._open):
                        if w.definition is not None and w.definition == name:
                            w.close()
                change: Change = (etype, obj, old, {})
                blocked: list[_Watch] = []
                for w in list(self._by_kind.get(kind, ())):
                    if rv > w.since and not w.offer(change):
                        blocked.append(w)
                    handed += 1
                    if handed % DISPATCH_BATCH == 0:
                        await asyncio.sleep(0)
                if blocked:
                    await self._wait_for_room(blocked, change)

    async def _wait_for_room(self, blocked: list[_Watch], change: Change) -> None:
        """Hand ``change`` to watches that were full, within the time budget; close those that
        stay full (their clients re-watch from the last version they saw)."""
        loop = asyncio.get_running_loop()
        if self._budget is None:
            self._budget = _TimeBudget(loop.time)
        start = loop.time()
        budget = self._budget.take()
        for w in blocked:
            if w not in self._open or w.ending:
                continue
            if not await w.put(change, budget - (loop.time() - start)):
                log.debug("closing a %s watch whose client does not keep up (%d changes held)", w.kind, len(w.changes))
                self.terminated += 1
                self._unregister(w)
                w.terminate(self.terminated_grace)
        self._budget.give_back(budget - (loop.time() - start))

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
        res = req.res
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
        initial: list[tuple[str, Obj, Obj | None]] = []
        error: APIError | None = None
        # History and registration are taken in one synchronous step: no write can fall between.
        since = self.store.resource_version
        if rv_param in ("", "0"):
            items, _ = self.store.list(kind, req.namespace if req.res.namespaced else None)
            initial = [("ADDED", o, None) for o in items]
        else:
            try:
                start = int(rv_param)
            except ValueError:
                raise bad_request(f"invalid resource version: {rv_param!r}") from None
            try:
                initial = [(etype, obj, old) for _, etype, _, obj, old in self.store.events_since(start, [kind])]
            except Gone as exc:
                error = expired(str(exc))
        definition = req.res.custom.name if req.res.custom is not None else None
        watch = _Watch(kind, since, definition, self.queue_length)
        watch.transport = request.transport
        if error is None:
            self._register(watch)
        # Chunked over HTTP/1.1; over HTTP/1.0 (no chunks there) the stream runs until the
        # connection closes, as Go's server streams a response of no known length.
        resp = web.StreamResponse(status=200, headers={"Content-Type": "application/json"})
        try:
            await resp.prepare(request)
            if error is not None:
                await resp.write(event_line("ERROR", error.status()))
                return resp

            def encode(etype: str, obj: Obj, old: Obj | None, lines: dict[Any, bytes] | None = None) -> bytes | None:
                """The line for one stored change, or None when this watch does not see it;
                ``lines`` holds the change's lines already encoded for other watches."""
                now = match(obj)
                before = old is not None and match(old)
                key = (res.group_version, res.kind, res.plural, as_table, include, now, before)
                if lines is not None and (line := lines.get(key)) is not None:
                    return line
                line = _encode(etype, obj, old, now, before)
                if lines is not None and line is not None:
                    lines[key] = line
                return line

            def _encode(etype: str, obj: Obj, old: Obj | None, now: bool, before: bool) -> bytes | None:
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
                # A stored object answered a moment ago (a pod just created) is not encoded again;
                # nor is what a change of one (a pod bound) left as it was.
                return event_line_of(etype, self.encoded.text(shown, remember=False, before=old))

            async def emit_all(changes: Iterable[tuple[Any, ...]]) -> None:
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
                if not await watch.wait(wait):
                    if bookmarks and (deadline is None or loop.time() < deadline):
                        bookmark = {
                            "kind": req.res.kind,
                            "apiVersion": req.res.group_version,
                            "metadata": {"resourceVersion": str(self.store.resource_version)},
                        }
                        await resp.write(event_line("BOOKMARK", bookmark))
                    continue
                # Whatever is held already goes out in the same write: a burst of changes costs
                # one write and one wake-up of the client, not one per change.
                await emit_all(watch.take())
                if watch.ending and not watch.changes:
                    break
        except (ConnectionResetError, ConnectionError):
            pass
        finally:
            self._unregister(watch)
        try:
            with contextlib.suppress(ConnectionResetError, ConnectionError):
                await resp.write_eof()
        finally:
            watch.finished = True
        return resp
