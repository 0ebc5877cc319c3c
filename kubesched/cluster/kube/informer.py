"""Informers: list, then watch, one per watched kind, as client-go's reflector.

An informer lists its kind, delivers every object as an add, then watches from the list's
resourceVersion with bookmarks and a server-side timeout, re-watching from the last version
seen; on ``410 Gone`` it relists and delivers the difference; on connection failures it
reconnects with capped, jittered exponential backoff. The initial lists are delivered in the
order of :data:`~kubesched.cluster.base.WATCHED_KINDS`, so that a scheduler sees namespaces,
priority classes and nodes before the pods that refer to them.

Each informer runs in one task of the :class:`~kubesched.tasks.TaskSet` its owner gives (the
cluster's): stopping the owner cancels it and waits for it to end.
"""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import random
import time
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import aiohttp

from kubesched.cluster.base import WATCHED_KINDS, ClusterError, EventHandler, NotFound
from kubesched.cluster.kube.paths import RESOURCES, ResourcePath
from kubesched.cluster.kube.transport import Expired, Transport, api_error
from kubesched.objects import Obj, object_key
from kubesched.tasks import TaskSet

log = logging.getLogger(__name__)

LIST_PAGE_SIZE = 500
#: Listed objects delivered (or deleted) between two turns of the event loop; also the most
#: watch events handled in one turn.
DELIVER_BATCH = 256
#: Nor longer than this (seconds) between two turns: an event can cost its handlers much (a
#: member of a large gang re-holds the members already waiting), and /healthz, the lease and the
#: binds share the loop.
DELIVER_SECONDS = 0.02
#: The longest watch event read (one object): far above what the API server stores (1.5 MiB).
MAX_WATCH_EVENT_BYTES = 64 * 1024 * 1024
#: After this many watches in a row broke at the same resourceVersion, relist.
RELIST_AFTER_STUCK_WATCHES = 2
#: An informer that has made no progress for this long makes the health checks fail.
INFORMER_STALL_SECONDS = 60.0


@dataclass
class Backoff:
    """Exponential backoff with full jitter on top (delay × [1, 1 + jitter)), capped."""

    initial: float = 0.5
    cap: float = 30.0
    factor: float = 2.0
    jitter: float = 1.0
    rng: random.Random = field(default_factory=random.Random)
    _next: float = 0.0

    def next(self) -> float:
        base = self._next or self.initial
        self._next = min(self.cap, base * self.factor)
        return min(self.cap, base * (1.0 + self.rng.random() * self.jitter))

    def reset(self) -> None:
        self._next = 0.0


def _rv(obj: Obj) -> str:
    return str((obj.get("metadata") or {}).get("resourceVersion") or "")


def _uid(obj: Obj) -> str | None:
    return (obj.get("metadata") or {}).get("uid")


class _WatchBroke(ClusterError):
    """A watch that had started failed while its events were read."""


class _Informer:
    """List-then-watch of one kind, delivering adds/updates/deletes in order to the handler."""

    def __init__(
        self,
        transport: Transport,
        resource: ResourcePath,
        handler: EventHandler,
        deliver_after: asyncio.Event | None,
        backoff: Backoff,
        watch_timeout: Callable[[], float],
        keep_from_collector: bool = False,
        wait_until_served: bool = False,
    ) -> None:
        self.transport = transport
        #: A resource a plugin asked for (its CRD, say): until the server serves it the informer
        #: is not synced, so nothing is scheduled without what the plugin reads (as upstream
        #: waits for its dynamic informers). The scheduler's own kinds count as synced with none.
        self.wait_until_served = wait_until_served
        #: Freeze what is parsed as it arrives (:func:`_keep_from_full_collections`): only in a
        #: process whose collector is paced, since nothing else ever unfreezes.
        self.keep_from_collector = keep_from_collector
        self.resource = resource
        self.kind = resource.kind
        self.handler = handler
        #: The initial list is delivered only after the previous kind's, so that a scheduler
        #: sees namespaces, priority classes and nodes before the pods that refer to them.
        self.deliver_after = deliver_after
        self.objects: dict[str, Obj] = {}
        self.resource_version = ""
        self.synced = asyncio.Event()
        self.backoff = backoff
        self.watch_timeout = watch_timeout
        self.lists = 0
        self.watches = 0
        #: Since when every list and watch has failed without delivering anything (None while
        #: the informer makes progress), and the last failure: what health checks report.
        self.failing_since: float | None = None
        self.last_error = ""
        #: The server answered this kind's list with 404 (see :meth:`_not_served`).
        self.not_served = False

    def _progressed(self) -> None:
        self.failing_since = None

    def record_failure(self, exc: BaseException) -> None:
        """Count ``exc`` as a failure of the informer (its list or watch, or its loop's end):
        the time failing started, when this is the first since the last progress, and the
        error as health checks report it."""
        if self.failing_since is None:
            self.failing_since = time.monotonic()
        self.last_error = str(exc) or type(exc).__name__

    async def _not_served(self, exc: NotFound) -> bool:
        """The server does not serve this kind (404 on its list: an API server older than the
        kind, e.g. a 1.36 one without resource.k8s.io/v1 DeviceTaintRules). As none exist there,
        the informer counts as synced with none, says so once, and lists again now and then in
        case the API appears (an upgrade). A plugin's resource (``wait_until_served``) stays
        unsynced instead: scheduling waits for it."""
        if self.synced.is_set() and not self.not_served:
            return False  # served before: a relist's 404 is a failure like any other
        if not self.not_served:
            if self.wait_until_served:
                log.warning(
                    "%s: %s is not served by this API server (%s): scheduling waits until it is "
                    "(is its CustomResourceDefinition installed?)",
                    self.kind,
                    self.resource.path,
                    exc,
                )
            else:
                log.warning(
                    "%s: %s is not served by this API server (%s); scheduling goes on as if none existed",
                    self.kind,
                    self.resource.path,
                    exc,
                )
        self.not_served = True
        self._progressed()
        if not self.synced.is_set() and not self.wait_until_served:
            if self.deliver_after is not None:
                await self.deliver_after.wait()  # the kinds before it delivered first, as ever
            self.synced.set()
        return True

    # --- delivery -----------------------------------------------------------------------------
    def _call(self, method: str, *args: Any) -> None:
        try:
            getattr(self.handler, method)(self.kind, *args)
        except Exception:  # a handler's bug must not stop the informer (logged)
            log.exception("%s handler failed on %s of %s", method, self.kind, object_key(args[-1]))

    def _upsert(self, obj: Obj) -> None:
        key = object_key(obj)
        old = self.objects.get(key)
        self.objects[key] = obj
        if old is None:
            self._call("on_add", obj)
        elif _uid(old) != _uid(obj):
            # Same name, another object: the old one is gone, whatever we missed in between.
            self._call("on_delete", old)
            self._call("on_add", obj)
        elif _rv(old) != _rv(obj):
            self._call("on_update", old, obj)

    def _complete(self, obj: Obj) -> Obj:
        if not self.resource.custom:  # a custom resource's objects carry their Kind (unstructured)
            obj.setdefault("kind", self.kind)
        obj.setdefault("apiVersion", self.resource.api_version)
        return obj

    # --- list ---------------------------------------------------------------------------------
    async def _list(self) -> tuple[list[Obj], str]:
        items: list[Obj] = []
        cont = ""
        while True:
            query = [("limit", str(LIST_PAGE_SIZE))]
            if cont:
                query.append(("continue", cont))
            page = await self.transport.request("GET", self.resource.path, query=query)
            items.extend(page.get("items") or ())
            if self.keep_from_collector:
                _keep_from_full_collections()
            meta = page.get("metadata") or {}
            cont = meta.get("continue") or ""
            if not cont:
                return items, str(meta.get("resourceVersion") or "")

    async def relist(self) -> None:
        items, rv = await self._list()
        self.lists += 1
        self.not_served = False
        fresh: dict[str, Obj] = {}
        for item in items:
            fresh[object_key(item)] = self._complete(item)
        if not self.synced.is_set():
            if self.deliver_after is not None:
                await self.deliver_after.wait()
            self.objects = {}
            await self._deliver(fresh.values())
            self.resource_version = rv
            self.synced.set()
            log.debug("%s informer synced: %d objects at %s", self.kind, len(fresh), rv)
            return
        # Deletions first: whatever vanished while we were away frees what it held.
        for i, key in enumerate([k for k in self.objects if k not in fresh], 1):
            old = self.objects.pop(key)
            self._call("on_delete", old)
            if i % DELIVER_BATCH == 0:
                await asyncio.sleep(0)
        await asyncio.sleep(0)
        await self._deliver(fresh.values())
        self.resource_version = rv

    async def _deliver(self, objs: Iterable[Obj]) -> None:
        """Deliver listed objects, giving the loop back every :data:`DELIVER_BATCH` of them: a
        relist of ten thousand pods must not hold up binds, renewals and health checks."""
        for i, obj in enumerate(objs, 1):
            self._upsert(obj)
            if i % DELIVER_BATCH == 0:
                if self.keep_from_collector:
                    _keep_from_full_collections()
                await asyncio.sleep(0)

    # --- watch --------------------------------------------------------------------------------
    async def watch(self) -> bool:
        """One watch request, consumed until the server ends it; ``True`` when it was healthy
        (lasted a while or delivered something) so the caller may reset its backoff."""
        timeout = self.watch_timeout()
        query = [
            ("watch", "true"),
            ("resourceVersion", self.resource_version),
            ("allowWatchBookmarks", "true"),
            ("timeoutSeconds", str(int(timeout))),
        ]
        started = time.monotonic()
        delivered = 0
        turn = 0
        resp = await self.transport.open(
            "GET",
            self.resource.path,
            query=query,
            timeout=aiohttp.ClientTimeout(total=None, sock_connect=30, sock_read=timeout + 30),
        )
        self.watches += 1
        if self.resource_version:
            # Connected and current as of the version it resumes from.
            self._progressed()
        try:
            async for line in _lines(resp.content, MAX_WATCH_EVENT_BYTES):
                if not line.strip():
                    continue
                event = json.loads(line)
                if not turn:
                    turn_started = time.perf_counter()
                self._apply(event)
                delivered += 1
                turn += 1
                if turn >= DELIVER_BATCH or time.perf_counter() - turn_started >= DELIVER_SECONDS:
                    # One read can hold hundreds of events (a burst, or the backlog of a stall).
                    turn = 0
                    if self.keep_from_collector:
                        _keep_from_full_collections()
                    await asyncio.sleep(0)
        except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
            raise _WatchBroke(f"watch of {self.kind} broke: {exc!r}", 503) from exc
        finally:
            resp.close()
        healthy = delivered > 0 or time.monotonic() - started >= 1.0
        if healthy:
            self._progressed()
        return healthy

    def _apply(self, event: Obj) -> None:
        etype = event.get("type")
        obj = event.get("object") or {}
        if etype == "ERROR":
            code = int(obj.get("code") or 500)
            raise api_error(code, json.dumps(obj), f"watch of {self.kind}")
        rv = _rv(obj)
        if etype == "BOOKMARK":
            if rv:
                self.resource_version = rv
            return
        self._progressed()
        obj = self._complete(obj)
        if etype in ("ADDED", "MODIFIED"):
            self._upsert(obj)
        elif etype == "DELETED":
            old = self.objects.pop(object_key(obj), None)
            self._call("on_delete", obj if obj.get("metadata") else (old or obj))
        else:
            log.warning("%s watch: unknown event type %r", self.kind, etype)
        if rv:
            self.resource_version = rv

    # --- the loop -----------------------------------------------------------------------------
    async def run(self) -> None:
        need_list = not self.synced.is_set() or not self.resource_version
        expired_in_a_row = 0
        #: Watches in a row that broke without moving resourceVersion: the same event keeps
        #: breaking them (one the client cannot read, say), and only a relist gets past it.
        stuck = 0
        watched_from = ""
        while True:
            try:
                if need_list:
                    try:
                        await self.relist()
                    except NotFound as exc:
                        if not await self._not_served(exc):
                            raise
                        # A plugin's resource is looked for again soon (its CRD may be on its
                        # way), then at most every backoff cap; the scheduler's own every cap.
                        await asyncio.sleep(self.backoff.next() if self.wait_until_served else self.backoff.cap)
                        continue
                    self._progressed()
                    need_list = False
                    stuck = 0
                    self.backoff.reset()
                watched_from = self.resource_version
                if await self.watch():
                    stuck = 0
                    expired_in_a_row = 0
                    self.backoff.reset()
                    continue
                delay = self.backoff.next()
                log.info("%s watch ended at once; re-watching in %.1fs", self.kind, delay)
                await asyncio.sleep(delay)
            except Expired as exc:
                need_list = True
                expired_in_a_row += 1
                log.info("%s watch expired (%s); relisting", self.kind, exc)
                if expired_in_a_row > 1:
                    await asyncio.sleep(self.backoff.next())
            except Exception as exc:  # whatever broke, the informer goes on (logged)
                self.record_failure(exc)
                # Only a watch that broke while its events were read counts: one that could not
                # even connect says nothing about the events (an outage resumes from its version).
                if not need_list and (isinstance(exc, _WatchBroke) or not isinstance(exc, ClusterError)):
                    stuck = stuck + 1 if self.resource_version == watched_from else 0
                    if stuck >= RELIST_AFTER_STUCK_WATCHES:
                        log.warning(
                            "%s watch broke %d times at resourceVersion %s; relisting", self.kind, stuck, watched_from
                        )
                        need_list = True
                delay = self.backoff.next()
                if isinstance(exc, ClusterError):
                    log.warning("%s informer: %s; retrying in %.1fs", self.kind, exc, delay)
                else:
                    log.error("%s informer failed; retrying in %.1fs", self.kind, delay, exc_info=exc)
                await asyncio.sleep(delay)


def _keep_from_full_collections() -> None:
    """Move what the informers (and their handler) have allocated so far out of the garbage
    collector's sight, every :data:`DELIVER_BATCH` objects listed or watch events read.

    A relist of ten thousand pods allocates about a million objects at once, a burst as many
    over seconds. In a process that froze what it held at start-up (``kubesched run`` does),
    CPython then finds its long-lived generation small and runs a full collection every few
    tens of thousands of allocations, each walking everything made since: pauses of 100-300 ms,
    measured in a relist and in a standby replica's burst (which has no scheduling loop to pace
    the collector), that found nothing to free (parsed JSON and the handler's records hold no
    cycles). Frozen objects are still freed by their reference counts; a full collection that
    unfreezes (the scheduling loop's, when idle) sees the rest. So it is opt-in
    (``KubeCluster(keep_from_collector=True)``, what ``kubesched run`` asks for along with its
    collector pacing): in a process where nothing unfreezes, a reference cycle frozen here would
    never be collected."""
    gc.freeze()


async def _lines(stream: aiohttp.StreamReader, limit: int) -> AsyncIterator[bytes]:
    """The newline-separated lines of a watch stream, however long (up to ``limit`` bytes).

    aiohttp's own line iteration refuses lines over its buffer size; a watch event carries a
    whole object, and one large object must not break every watch of its kind."""
    buf = bytearray()
    async for chunk in stream.iter_any():
        buf += chunk
        start = 0
        while (end := buf.find(b"\n", start)) >= 0:
            if end - start > limit:
                break
            yield bytes(buf[start : end + 1])
            start = end + 1
        del buf[:start]
        if len(buf) > limit:
            raise ValueError(f"a watch event is longer than {limit} bytes")
    if buf:
        yield bytes(buf)


class Informers:
    """The informers of one cluster, one per watched kind, each run in a task of ``tasks``.

    ``min_watch_timeout``: watches ask the server to end them after [min, 2×min) seconds, as
    client-go does. ``backoff_initial`` / ``backoff_cap`` bound the waits between failed lists
    and watches. An informer stalled for ``stall_seconds`` is a health problem.
    """

    def __init__(
        self,
        transport: Transport,
        tasks: TaskSet,
        *,
        min_watch_timeout: float = 300.0,
        backoff_initial: float = 0.5,
        backoff_cap: float = 30.0,
        stall_seconds: float = INFORMER_STALL_SECONDS,
        keep_from_collector: bool = False,
        kinds: tuple[str, ...] = WATCHED_KINDS,
    ) -> None:
        self.transport = transport
        self.tasks = tasks
        #: the kinds watched, in delivery order (WATCHED_KINDS, and those the gates add)
        self.kinds = kinds
        self.keep_from_collector = keep_from_collector
        self.min_watch_timeout = min_watch_timeout
        self.backoff_initial = backoff_initial
        self.backoff_cap = backoff_cap
        self.stall_seconds = stall_seconds
        #: Resources watched besides ``kinds`` (plugins' informers), by the kind delivered.
        self.extra: dict[str, ResourcePath] = {}
        self._by_kind: dict[str, _Informer] = {}
        self._rng = random.Random()

    def __bool__(self) -> bool:
        return bool(self._by_kind)

    def watch_timeout(self) -> float:
        return self.min_watch_timeout * (1.0 + self._rng.random())

    def add_resources(self, resources: Iterable[ResourcePath]) -> None:
        """Watch these too, unless among the kinds watched already (before :meth:`start`)."""
        for res in resources:
            if res.kind not in self.kinds:
                self.extra.setdefault(res.kind, res)

    def _order(self) -> list[ResourcePath]:
        """What to list, in delivery order: the extra resources before nodes and pods."""
        order = [RESOURCES[k] for k in self.kinds]
        at = next((i for i, k in enumerate(self.kinds) if k in ("Node", "Pod")), len(order))
        order[at:at] = self.extra.values()
        return order

    async def start(self, handler: EventHandler) -> None:
        """Start one informer per watched kind; return once each has delivered its list (or
        found its resource not served: a plugin's resource must be served first)."""
        previous: asyncio.Event | None = None
        for resource in self._order():
            kind = resource.kind
            backoff = Backoff(initial=self.backoff_initial, cap=self.backoff_cap)
            inf = _Informer(
                self.transport,
                resource,
                handler,
                previous,
                backoff,
                self.watch_timeout,
                self.keep_from_collector,
                wait_until_served=kind in self.extra,
            )
            self._by_kind[kind] = inf
            previous = inf.synced
        for inf in self._by_kind.values():
            self.tasks.spawn(self._keep_running(inf), name=f"informer {inf.kind}")
        await asyncio.gather(*(inf.synced.wait() for inf in self._by_kind.values()))

    async def _keep_running(self, inf: _Informer) -> None:
        """Run ``inf`` until cancelled. Its loop outlives every failure of the API; should it
        end anyway (a bug), it starts again after its backoff, from the version it reached."""
        while True:
            try:
                await inf.run()
            except Exception as exc:  # a bug must not end the kind's view (logged)
                delay = inf.backoff.next()
                inf.record_failure(exc)
                log.error("%s informer crashed; restarting in %.1fs", inf.kind, delay, exc_info=exc)
            else:
                delay = inf.backoff.next()
                inf.record_failure(RuntimeError("informer ended"))
                log.error("%s informer ended; restarting in %.1fs", inf.kind, delay)
            await asyncio.sleep(delay)

    def listed(self, kind: str) -> list[Obj]:
        """The objects of ``kind`` its informer holds now (none when ``kind`` is not watched)."""
        inf = self._by_kind.get(kind)
        return list(inf.objects.values()) if inf is not None else []

    def clear(self) -> None:
        """Forget the informers (their tasks cancelled by their owner): ready to start again."""
        self._by_kind.clear()

    def health_problems(self) -> list[str]:
        """One line per informer that has failed to list or watch for ``stall_seconds``."""
        now = time.monotonic()
        problems = []
        for kind, inf in self._by_kind.items():
            if inf.failing_since is not None and now - inf.failing_since >= self.stall_seconds:
                problems.append(f"{kind} informer: no progress for {now - inf.failing_since:.0f}s: {inf.last_error}")
        return problems

    def not_served(self) -> list[str]:
        """One line per resource watched besides ``kinds`` (a plugin's) that the server does not
        serve (a CRD not installed yet): nothing is scheduled meanwhile, and it is listed again
        with backoff (up to every ``backoff_cap``)."""
        return [
            f"{kind}: {inf.resource.path} is not served by the API server"
            for kind, inf in self._by_kind.items()
            if kind in self.extra and inf.not_served
        ]

    def stats(self) -> dict[str, dict[str, Any]]:
        """Per kind: lists and watches made, objects known, last resourceVersion (diagnostics)."""
        return {
            k: {
                "lists": i.lists,
                "watches": i.watches,
                "objects": len(i.objects),
                "resourceVersion": i.resource_version,
                "served": not i.not_served,
            }
            for k, i in self._by_kind.items()
        }


__all__ = ["INFORMER_STALL_SECONDS", "Backoff", "Informers"]
