"""The event recorder: Events written as client-go's events broadcaster writes them.

A repeat of the same event about the same object within :data:`EVENT_SERIES_WINDOW` continues
its series (one PATCH of the count) instead of writing a new Event. ``events.k8s.io/v1`` is
used where the server serves it, ``core/v1`` Events otherwise. Writes go through a client of
their own, as upstream's event client: recording events never spends the binds' rate limit.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

from kubesched.cluster.base import ClusterError, Conflict, NotFound
from kubesched.cluster.kube.paths import ns_path
from kubesched.cluster.kube.transport import Transport
from kubesched.cluster.leader import micro_time
from kubesched.cluster.store import now_rfc3339
from kubesched.objects import Obj

log = logging.getLogger(__name__)

#: A series of identical events continues while repeats come closer than this (client-go's
#: events broadcaster finishes a series after six minutes of silence).
EVENT_SERIES_WINDOW = 6 * 60.0
#: Distinct event series remembered for aggregation (client-go's cache holds 4096).
EVENT_CACHE_SIZE = 4096
#: How often an event write is tried when the transport or the server fails (client-go's).
EVENT_MAX_TRIES = 12
#: The longest wait between two tries of an event write (client-go's sleep between tries).
EVENT_RETRY_CAP = 10.0
#: What the log says before the event (``namespace/name``) whose write is to be tried again.
EVENT_RETRY_LOG = "could not write the event"


def _event_named(path: str, body: Obj) -> str:
    """``namespace/name`` of the event a write creates (``body``) or patches (``path``'s tail)."""
    parts = path.rstrip("/").split("/")
    ns = parts[parts.index("namespaces") + 1] if "namespaces" in parts[:-1] else ""
    name = (body.get("metadata") or {}).get("name") if "metadata" in body else parts[-1]
    return f"{ns}/{name}"


@dataclass
class _Series:
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    name: str | None = None
    namespace: str = "default"
    api: str = ""
    count: int = 0
    last_seen: float = 0.0


class EventRecorder:
    """Writes Events through the transport ``client()`` gives (made on first use), aggregating
    repeats into series; ``hostname`` goes into ``reportingInstance``."""

    def __init__(self, client: Callable[[], Transport], hostname: str) -> None:
        self._client = client
        self.hostname = hostname
        self._series: OrderedDict[tuple[str, ...], _Series] = OrderedDict()
        self._api: str | None = None  # "events.k8s.io" or "core", once known
        #: The first wait before an event write is tried again (doubling after, up to the cap).
        self.retry_interval = 1.0
        self._rng = random.Random()

    async def record(
        self, regarding: Obj, event_type: str, reason: str, action: str, message: str, reporting_controller: str
    ) -> None:
        """Write an Event about ``regarding``, or continue the series of its last repeat."""
        meta = regarding.get("metadata") or {}
        ns = meta.get("namespace") or "default"
        ident = str(meta.get("uid") or f"{regarding.get('kind', 'Pod')}/{ns}/{meta.get('name', '')}")
        key = (ident, event_type, reason, action, message, reporting_controller)
        series = self._series.get(key)
        if series is None:
            series = self._series[key] = _Series(namespace=ns)
            while len(self._series) > EVENT_CACHE_SIZE:
                self._series.popitem(last=False)
        else:
            self._series.move_to_end(key)
        async with series.lock:
            now = asyncio.get_running_loop().time()
            if series.name is not None and now - series.last_seen <= EVENT_SERIES_WINDOW:
                try:
                    await self._continue_series(series)
                    series.last_seen = now
                    return
                except NotFound:
                    pass  # the event expired (TTL) or was deleted: start a new one
            await self._create(series, regarding, event_type, reason, action, message, reporting_controller)
            series.last_seen = now

    async def _write(self, method: str, path: str, body: Obj, content_type: str = "application/json") -> Obj:
        """One event write, tried up to :data:`EVENT_MAX_TRIES` times when the transport or the
        server failed (5xx), as client-go's event sink retries. The waits start shorter than
        client-go's constant 10 s (:attr:`retry_interval`, the first randomized, then doubling
        up to :data:`EVENT_RETRY_CAP`), so that an event is seldom lost with its process. The
        same object, same name, each time: a create whose answer was lost comes back 409
        AlreadyExists, and it was written."""
        for attempt in range(1, EVENT_MAX_TRIES + 1):
            try:
                return await self._client().request(method, path, body=body, content_type=content_type)
            except Conflict:
                if method == "POST" and attempt > 1:
                    return body
                raise
            except ClusterError as exc:
                if exc.code < 500 or attempt == EVENT_MAX_TRIES:
                    raise
                delay = min(EVENT_RETRY_CAP, self.retry_interval * 2 ** (attempt - 1))
                if attempt == 1:
                    delay *= self._rng.random()
                log.info("%s %s (%s); trying again in %.1fs", EVENT_RETRY_LOG, _event_named(path, body), exc, delay)
                await asyncio.sleep(delay)
        raise AssertionError("unreachable")

    async def _events_group_served(self) -> bool:
        try:
            await self._client().request("GET", "/apis/events.k8s.io/v1")
        except NotFound:
            return False
        return True

    async def _create(
        self,
        series: _Series,
        regarding: Obj,
        event_type: str,
        reason: str,
        action: str,
        message: str,
        controller: str,
    ) -> None:
        meta = regarding.get("metadata") or {}
        ns = series.namespace
        ref = {
            "kind": regarding.get("kind") or "Pod",
            "apiVersion": regarding.get("apiVersion") or "v1",
            "namespace": ns,
            "name": meta.get("name", ""),
            "uid": meta.get("uid", ""),
            "resourceVersion": meta.get("resourceVersion", ""),
        }
        name = f"{meta.get('name', 'unknown')}.{time.time_ns():x}"
        instance = f"{controller}-{self.hostname}"
        if self._api != "core":
            body: Obj = {
                "apiVersion": "events.k8s.io/v1",
                "kind": "Event",
                "metadata": {"name": name, "namespace": ns},
                "eventTime": micro_time(),
                "reportingController": controller,
                "reportingInstance": instance,
                "action": action,
                "reason": reason,
                "note": message,
                "type": event_type,
                "regarding": ref,
            }
            try:
                created = await self._write("POST", ns_path("events.k8s.io/v1", ns, "events"), body)
            except NotFound:
                # A 404 on a collection is either the namespace or the whole group missing.
                if self._api == "events.k8s.io" or await self._events_group_served():
                    raise
                log.info("events.k8s.io/v1 is not served; writing core/v1 Events")
                self._api = "core"
            else:
                self._api = "events.k8s.io"
                series.name = (created.get("metadata") or {}).get("name") or name
                series.api, series.count = "events.k8s.io", 1
                return
        now = now_rfc3339()
        core: Obj = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": name, "namespace": ns},
            "involvedObject": ref,
            "reason": reason,
            "message": message,
            "type": event_type,
            "action": action,
            "source": {"component": controller, "host": self.hostname},
            "reportingComponent": controller,
            "reportingInstance": instance,
            "firstTimestamp": now,
            "lastTimestamp": now,
            "count": 1,
        }
        created = await self._write("POST", ns_path("v1", ns, "events"), core)
        series.name = (created.get("metadata") or {}).get("name") or name
        series.api, series.count = "core", 1

    async def _continue_series(self, series: _Series) -> None:
        assert series.name is not None
        count = series.count + 1
        if series.api == "events.k8s.io":
            path = ns_path("events.k8s.io/v1", series.namespace, "events", series.name)
            patch: Obj = {"series": {"count": count, "lastObservedTime": micro_time()}}
        else:
            path = ns_path("v1", series.namespace, "events", series.name)
            patch = {"count": count, "lastTimestamp": now_rfc3339()}
        await self._write("PATCH", path, patch, content_type="application/merge-patch+json")
        series.count = count


__all__ = ["EVENT_SERIES_WINDOW", "EventRecorder"]
