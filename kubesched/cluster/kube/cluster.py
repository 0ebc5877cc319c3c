"""The cluster protocol over a real Kubernetes API server, with kubernetes_asyncio.

This module (with :mod:`kubesched.cluster.leader`) is the only place that talks to a real
cluster. kubernetes_asyncio provides the configuration (kubeconfig, exec plugins, in-cluster
service account) and the authenticated HTTP session; we bypass its model classes and read
raw JSON, so that each object is deserialized exactly once, into the plain dicts the rest of
kubesched works with.

Informers, one per watched kind, follow client-go's reflector: list, deliver, then watch from
the list's resourceVersion with bookmarks and a server-side timeout, re-watch from the last
version seen; on ``410 Gone`` relist and deliver the difference; on connection failures
reconnect with capped, jittered exponential backoff. Every request, watches included, first
takes a token from one bucket (``qps`` / ``burst``, as ``clientConnection`` configures).

Failures leave this module only as the exceptions of :mod:`kubesched.cluster.base`.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import os
import random
import socket
import time
import urllib.parse
import urllib.request
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import aiohttp
from kubernetes_asyncio.client import ApiClient, Configuration
from kubernetes_asyncio.client.exceptions import OpenApiException
from kubernetes_asyncio.config import ConfigException, load_incluster_config, load_kube_config

from kubesched.cluster.base import WATCHED_KINDS, ClusterError, Conflict, EventHandler, Invalid, NotFound
from kubesched.cluster.leader import micro_time
from kubesched.cluster.store import now_rfc3339

log = logging.getLogger(__name__)

Obj = dict[str, Any]

#: A series of identical events continues while repeats come closer than this (client-go's
#: events broadcaster finishes a series after six minutes of silence).
EVENT_SERIES_WINDOW = 6 * 60.0
#: Distinct event series remembered for aggregation (client-go's cache holds 4096).
EVENT_CACHE_SIZE = 4096
LIST_PAGE_SIZE = 500
#: Listed objects delivered between two turns of the event loop.
DELIVER_BATCH = 256
#: The longest watch event read (one object): far above what the API server stores (1.5 MiB).
MAX_WATCH_EVENT_BYTES = 64 * 1024 * 1024
#: After this many watches in a row broke at the same resourceVersion, relist.
RELIST_AFTER_STUCK_WATCHES = 2
#: How often a request answered 429/5xx with Retry-After is sent again (client-go's default).
MAX_RETRIES = 10
#: How often an event write is tried when the transport or the server fails (client-go's).
EVENT_MAX_TRIES = 12
#: The longest wait between two tries of an event write (client-go's sleep between tries).
EVENT_RETRY_CAP = 10.0
#: An informer that has made no progress for this long makes the health checks fail.
INFORMER_STALL_SECONDS = 60.0


class Expired(ClusterError):
    """410 Gone: the resourceVersion asked for is older than the server's history."""

    def __init__(self, message: str) -> None:
        super().__init__(message, 410)


@dataclass(frozen=True)
class _Resource:
    kind: str
    api_version: str
    path: str  # the cluster-wide collection

    def object_path(self, namespace: str | None, name: str) -> str:
        if namespace is None:
            return f"{self.path}/{quote(name, safe='')}"
        base, plural = self.path.rsplit("/", 1)
        return f"{base}/namespaces/{quote(namespace, safe='')}/{plural}/{quote(name, safe='')}"


RESOURCES = {
    "Namespace": _Resource("Namespace", "v1", "/api/v1/namespaces"),
    "PriorityClass": _Resource("PriorityClass", "scheduling.k8s.io/v1", "/apis/scheduling.k8s.io/v1/priorityclasses"),
    "StorageClass": _Resource("StorageClass", "storage.k8s.io/v1", "/apis/storage.k8s.io/v1/storageclasses"),
    "CSINode": _Resource("CSINode", "storage.k8s.io/v1", "/apis/storage.k8s.io/v1/csinodes"),
    "PersistentVolume": _Resource("PersistentVolume", "v1", "/api/v1/persistentvolumes"),
    "PersistentVolumeClaim": _Resource("PersistentVolumeClaim", "v1", "/api/v1/persistentvolumeclaims"),
    "PodDisruptionBudget": _Resource("PodDisruptionBudget", "policy/v1", "/apis/policy/v1/poddisruptionbudgets"),
    "Service": _Resource("Service", "v1", "/api/v1/services"),
    "ReplicationController": _Resource("ReplicationController", "v1", "/api/v1/replicationcontrollers"),
    "ReplicaSet": _Resource("ReplicaSet", "apps/v1", "/apis/apps/v1/replicasets"),
    "StatefulSet": _Resource("StatefulSet", "apps/v1", "/apis/apps/v1/statefulsets"),
    "DeviceClass": _Resource("DeviceClass", "resource.k8s.io/v1", "/apis/resource.k8s.io/v1/deviceclasses"),
    "ResourceSlice": _Resource("ResourceSlice", "resource.k8s.io/v1", "/apis/resource.k8s.io/v1/resourceslices"),
    "ResourceClaim": _Resource("ResourceClaim", "resource.k8s.io/v1", "/apis/resource.k8s.io/v1/resourceclaims"),
    "Node": _Resource("Node", "v1", "/api/v1/nodes"),
    "Pod": _Resource("Pod", "v1", "/api/v1/pods"),
}


def _ns_path(group_version: str, namespace: str, plural: str, name: str | None = None, sub: str | None = None) -> str:
    root = "/api/v1" if group_version == "v1" else f"/apis/{group_version}"
    path = f"{root}/namespaces/{quote(namespace, safe='')}/{plural}"
    if name is not None:
        path += f"/{quote(name, safe='')}"
    if sub is not None:
        path += f"/{sub}"
    return path


def _key(obj: Obj) -> str:
    meta = obj.get("metadata") or {}
    ns = meta.get("namespace")
    return f"{ns}/{meta.get('name', '')}" if ns else str(meta.get("name", ""))


def _rv(obj: Obj) -> str:
    return str((obj.get("metadata") or {}).get("resourceVersion") or "")


def _uid(obj: Obj) -> str | None:
    return (obj.get("metadata") or {}).get("uid")


def api_error(status: int, body: bytes | str | None, what: str) -> ClusterError:
    """Our exception for an API error response (a ``Status`` object, when the server sent one)."""
    message = f"{what}: HTTP {status}"
    if body:
        try:
            st = json.loads(body)
        except ValueError:
            text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
            message = f"{what}: HTTP {status}: {text.strip()[:200]}"
        else:
            if isinstance(st, dict) and st.get("message"):
                message = str(st["message"])
    if status == 404:
        return NotFound(message)
    if status == 409:
        return Conflict(message)
    if status == 410:
        return Expired(message)
    if status == 422:
        return Invalid(message)
    return ClusterError(message, status)


# --- transport ------------------------------------------------------------------------------


def _environment_matters(url: str) -> bool:
    """Whether requests to ``url`` could be routed or authenticated by the environment: a proxy
    set for its scheme and not bypassed for its host, or a netrc file."""
    host = urllib.parse.urlsplit(url).hostname or ""
    proxies = urllib.request.getproxies()
    scheme = urllib.parse.urlsplit(url).scheme or "https"
    if (proxies.get(scheme) or proxies.get("all")) and not urllib.request.proxy_bypass(host):
        return True
    netrc = os.environ.get("NETRC") or os.path.expanduser("~/.netrc")
    return os.path.exists(netrc)


def _without_environment_lookups(api: ApiClient, host: str) -> aiohttp.ClientSession | None:
    """kubernetes_asyncio's session trusts the environment, and aiohttp then looks up proxies
    and netrc credentials in a worker thread on *every* request — two thread hops per bind,
    event and watch, which more than halves what one event loop gets through. Where the
    environment cannot matter (no proxy for this server, no netrc) the same connections are
    used by a session that does not look. Returns the replaced session, which owns the
    connections: close it after the client."""
    if _environment_matters(host):
        return None
    rest = api.rest_client
    trusting: aiohttp.ClientSession = rest.pool_manager
    rest.pool_manager = aiohttp.ClientSession(
        connector=trusting.connector,
        connector_owner=False,
        trust_env=False,
        read_bufsize=2**21,  # as kubernetes_asyncio's: watch events of large objects
    )
    return trusting


def _encode_body(body: Any) -> bytes | None:
    """A request body as sent: JSON for objects, bytes as they are (protobuf, YAML)."""
    if body is None:
        return None
    if isinstance(body, bytes):
        return body
    return json.dumps(body, separators=(",", ":")).encode()


# --- rate limiting ----------------------------------------------------------------------------


class TokenBucket:
    """client-go's token-bucket limiter: ``burst`` requests at once, then ``qps`` per second.

    Each caller reserves a token (the balance may go negative) and sleeps until its token
    exists, so waiters are served in arrival order without a lock. ``qps <= 0`` disables it.
    """

    def __init__(self, qps: float, burst: int, clock: Callable[[], float] | None = None) -> None:
        self.qps = float(qps)
        self.burst = max(1, int(burst))
        self._clock = clock
        self._tokens = float(self.burst)
        self._last: float | None = None

    def _now(self) -> float:
        return self._clock() if self._clock is not None else asyncio.get_running_loop().time()

    async def acquire(self) -> None:
        if self.qps <= 0:
            return
        now = self._now()
        if self._last is not None:
            self._tokens = min(float(self.burst), self._tokens + (now - self._last) * self.qps)
        self._last = now
        self._tokens -= 1.0
        if self._tokens >= 0:
            return
        try:
            await asyncio.sleep(-self._tokens / self.qps)
        except asyncio.CancelledError:
            self._tokens += 1.0  # the reservation is given back
            raise


def _retry_after(resp: aiohttp.ClientResponse) -> int | None:
    """Seconds to wait before sending the request again, when the server asked for it."""
    if resp.status != 429 and resp.status < 500:
        return None
    try:
        return max(0, int(resp.headers.get("Retry-After", "")))
    except ValueError:
        return None


# --- backoff ----------------------------------------------------------------------------------


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


# --- configuration ----------------------------------------------------------------------------


async def load_configuration(kubeconfig: str | None = None, context: str | None = None) -> Configuration:
    """A client configuration: the given kubeconfig, else ``$KUBECONFIG`` or ``~/.kube/config``,
    else the in-cluster service account when ``KUBERNETES_SERVICE_HOST`` is set."""
    cfg = Configuration()
    path = kubeconfig or os.environ.get("KUBECONFIG") or ""
    if not path:
        default = Path.home() / ".kube" / "config"
        if default.exists():
            path = str(default)
    try:
        if path:
            await load_kube_config(config_file=path, context=context, client_configuration=cfg, persist_config=False)
        elif os.environ.get("KUBERNETES_SERVICE_HOST"):
            load_incluster_config(client_configuration=cfg)
        else:
            raise ClusterError("no kubeconfig given, none at $KUBECONFIG or ~/.kube/config, and not in a cluster", 0)
    except (ConfigException, OSError, ValueError, KeyError) as exc:
        raise ClusterError(f"cannot load the client configuration from {path or 'the cluster'}: {exc}", 0) from exc
    return cfg


# --- informers --------------------------------------------------------------------------------


class _WatchBroke(ClusterError):
    """A watch that had started failed while its events were read."""


class _Informer:
    """List-then-watch of one kind, delivering adds/updates/deletes in order to the handler."""

    def __init__(
        self,
        cluster: KubeCluster,
        resource: _Resource,
        handler: EventHandler,
        deliver_after: asyncio.Event | None,
    ) -> None:
        self.cluster = cluster
        self.resource = resource
        self.kind = resource.kind
        self.handler = handler
        #: The initial list is delivered only after the previous kind's, so that a scheduler
        #: sees namespaces, priority classes and nodes before the pods that refer to them.
        self.deliver_after = deliver_after
        self.objects: dict[str, Obj] = {}
        self.resource_version = ""
        self.synced = asyncio.Event()
        self.backoff = Backoff(initial=cluster.backoff_initial, cap=cluster.backoff_cap)
        self.lists = 0
        self.watches = 0
        #: Since when every list and watch has failed without delivering anything (None while
        #: the informer makes progress), and the last failure: what health checks report.
        self.failing_since: float | None = None
        self.last_error = ""

    def _progressed(self) -> None:
        self.failing_since = None

    def _failed(self, exc: BaseException) -> None:
        if self.failing_since is None:
            self.failing_since = time.monotonic()
        self.last_error = str(exc) or type(exc).__name__

    # --- delivery -----------------------------------------------------------------------------
    def _call(self, method: str, *args: Any) -> None:
        try:
            getattr(self.handler, method)(self.kind, *args)
        except Exception:  # noqa: BLE001 - a handler bug must not stop the informer
            log.exception("%s handler failed on %s of %s", method, self.kind, _key(args[-1]))

    def _upsert(self, obj: Obj) -> None:
        key = _key(obj)
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
            page = await self.cluster.request("GET", self.resource.path, query=query)
            items.extend(page.get("items") or ())
            meta = page.get("metadata") or {}
            cont = meta.get("continue") or ""
            if not cont:
                return items, str(meta.get("resourceVersion") or "")

    async def relist(self) -> None:
        items, rv = await self._list()
        self.lists += 1
        fresh: dict[str, Obj] = {}
        for item in items:
            fresh[_key(item)] = self._complete(item)
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
        for key in [k for k in self.objects if k not in fresh]:
            old = self.objects.pop(key)
            self._call("on_delete", old)
        await self._deliver(fresh.values())
        self.resource_version = rv

    async def _deliver(self, objs: Iterable[Obj]) -> None:
        """Deliver listed objects, giving the loop back every :data:`DELIVER_BATCH` of them: a
        relist of ten thousand pods must not hold up binds, renewals and health checks."""
        for i, obj in enumerate(objs, 1):
            self._upsert(obj)
            if i % DELIVER_BATCH == 0:
                await asyncio.sleep(0)

    # --- watch --------------------------------------------------------------------------------
    async def watch(self) -> bool:
        """One watch request, consumed until the server ends it; ``True`` when it was healthy
        (lasted a while or delivered something) so the caller may reset its backoff."""
        timeout = self.cluster.watch_timeout()
        query = [
            ("watch", "true"),
            ("resourceVersion", self.resource_version),
            ("allowWatchBookmarks", "true"),
            ("timeoutSeconds", str(int(timeout))),
        ]
        started = time.monotonic()
        delivered = 0
        resp = await self.cluster.open(
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
                self._apply(event)
                delivered += 1
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
            old = self.objects.pop(_key(obj), None)
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
                    await self.relist()
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
            except Exception as exc:  # noqa: BLE001 - whatever broke, the informer must go on
                self._failed(exc)
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


# --- event aggregation ------------------------------------------------------------------------


@dataclass
class _Series:
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    name: str | None = None
    namespace: str = "default"
    api: str = ""
    count: int = 0
    last_seen: float = 0.0


# --- the cluster ------------------------------------------------------------------------------


class KubeCluster:
    """:class:`~kubesched.cluster.base.Cluster` over a Kubernetes API server.

    Nothing connects until the first request (:meth:`start`, a write, or a lease call).
    """

    def __init__(
        self,
        kubeconfig: str | None = None,
        context: str | None = None,
        *,
        qps: float = 50.0,
        burst: int = 100,
        configuration: Configuration | None = None,
        request_timeout: float = 30.0,
        min_watch_timeout: float = 300.0,
        backoff_initial: float = 0.5,
        backoff_cap: float = 30.0,
        hostname: str | None = None,
        user_agent: str = "kubesched",
        stall_seconds: float = INFORMER_STALL_SECONDS,
    ) -> None:
        self.kubeconfig = kubeconfig or None
        self.context = context or None
        self._configuration = configuration
        self.limiter = TokenBucket(qps, burst)
        #: The session that owns the client's connections, when the client uses another.
        self._connections: aiohttp.ClientSession | None = None
        self.request_timeout = request_timeout
        #: Watches ask the server to end them after [min, 2×min) seconds, as client-go does.
        self.min_watch_timeout = min_watch_timeout
        self.backoff_initial = backoff_initial
        self.backoff_cap = backoff_cap
        self.hostname = hostname or socket.gethostname()
        self.user_agent = user_agent
        self.stall_seconds = stall_seconds
        self._siblings: list[KubeCluster] = []
        self._events_sender: KubeCluster | None = None
        self.requests = 0
        #: Requests sent again because the server said Retry-After.
        self.retries = 0
        self._api: ApiClient | None = None
        self._api_lock = asyncio.Lock()
        self._informers: dict[str, _Informer] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._restarts: set[asyncio.TimerHandle] = set()
        self._stopping = False
        self._events: OrderedDict[tuple[str, ...], _Series] = OrderedDict()
        self._events_api: str | None = None  # "events.k8s.io" or "core", once known
        #: The first wait before an event write is tried again (doubling after, up to the cap).
        self.event_retry_interval = 1.0
        self._rng = random.Random()
        self._timeout = aiohttp.ClientTimeout(total=request_timeout)
        #: What every request carries besides its credentials, set when the client is made.
        self._headers: dict[str, str] = {}

    @classmethod
    def from_configuration(cls, configuration: Configuration, **kwargs: Any) -> KubeCluster:
        """A cluster over an existing kubernetes_asyncio ``Configuration`` (tests, embedding)."""
        return cls(configuration=configuration, **kwargs)

    # --- transport ----------------------------------------------------------------------------
    async def _client(self) -> ApiClient:
        if self._api is not None:
            return self._api
        async with self._api_lock:
            if self._api is None:
                if self._configuration is None:
                    self._configuration = await load_configuration(self.kubeconfig, self.context)
                api = ApiClient(configuration=self._configuration)
                api.user_agent = self.user_agent
                self._headers = {"Accept": "application/json", **api.default_headers}
                self._connections = _without_environment_lookups(api, self._configuration.host or "")
                self._api = api
        return self._api

    def watch_timeout(self) -> float:
        return self.min_watch_timeout * (1.0 + self._rng.random())

    async def open(
        self,
        method: str,
        path: str,
        *,
        query: list[tuple[str, str]] | None = None,
        body: Any = None,
        content_type: str = "application/json",
        timeout: float | aiohttp.ClientTimeout | None = None,
    ) -> aiohttp.ClientResponse:
        """Send one request (after taking a token); the response is returned unread.

        Error statuses are raised as our exceptions (the body read for the message). As
        client-go does, a 429 or 5xx answer that carries ``Retry-After`` (the server did not
        process the request: priority and fairness, or a server going away) is retried after
        that many seconds, up to :data:`MAX_RETRIES` times, whatever the verb."""
        api = await self._client()
        what = f"{method} {path}"
        payload = _encode_body(body)
        url = ((self._configuration.host if self._configuration else None) or "") + path
        if query:
            url += "?" + urllib.parse.urlencode(query)
        rest = api.rest_client
        if timeout is None:
            timeout = self._timeout
        elif not isinstance(timeout, aiohttp.ClientTimeout):
            timeout = aiohttp.ClientTimeout(total=timeout)
        for attempt in range(MAX_RETRIES + 1):
            await self.limiter.acquire()
            self.requests += 1
            headers = {**self._headers, "Content-Type": content_type}
            try:
                # Only the credentials are asked of kubernetes_asyncio per request (its hook
                # refreshes exec-plugin and service-account tokens); the request itself goes
                # straight to its authenticated session, without the model layer's walk over
                # every header and body (a third of the client's time per bind).
                await api.update_params_for_auth(headers, [], ["BearerToken"])
                resp: aiohttp.ClientResponse = await rest.pool_manager.request(
                    method,
                    url,
                    data=payload,
                    headers=headers,
                    timeout=timeout,
                    proxy=rest.proxy,
                    proxy_headers=rest.proxy_headers,
                    server_hostname=rest.server_hostname,
                )
            except TimeoutError as exc:
                raise ClusterError(f"{what}: timed out", 504) from exc
            except (aiohttp.ClientError, OSError) as exc:
                raise ClusterError(f"{what}: {exc}", 503) from exc
            except (OpenApiException, ConfigException) as exc:
                raise ClusterError(f"{what}: {exc}", 500) from exc
            if resp.status < 400:
                return resp
            wait = _retry_after(resp) if attempt < MAX_RETRIES else None
            try:
                data = await resp.read()
            except (aiohttp.ClientError, TimeoutError):
                data = b""
            finally:
                resp.release()
            if wait is None:
                raise api_error(resp.status, data, what)
            self.retries += 1
            log.debug("%s: %d, retrying after %ds", what, resp.status, wait)
            await asyncio.sleep(wait)
        raise AssertionError("unreachable")

    async def request(
        self,
        method: str,
        path: str,
        *,
        query: list[tuple[str, str]] | None = None,
        body: Any = None,
        content_type: str = "application/json",
        timeout: float | None = None,
    ) -> Obj:
        """One request, its JSON response decoded once."""
        resp = await self.open(method, path, query=query, body=body, content_type=content_type, timeout=timeout)
        try:
            data = await resp.read()
        except TimeoutError as exc:
            raise ClusterError(f"{method} {path}: timed out", 504) from exc
        except aiohttp.ClientError as exc:
            raise ClusterError(f"{method} {path}: {exc}", 503) from exc
        finally:
            resp.release()
        if not data:
            return {}
        try:
            out = json.loads(data)
        except ValueError as exc:
            raise ClusterError(f"{method} {path}: response is not JSON", resp.status) from exc
        return out if isinstance(out, dict) else {"items": out}

    # --- informers ----------------------------------------------------------------------------
    async def start(self, handler: EventHandler) -> None:
        if self._informers:
            raise RuntimeError("KubeCluster.start() called twice")
        await self._client()
        self._stopping = False
        previous: asyncio.Event | None = None
        for kind in WATCHED_KINDS:
            inf = _Informer(self, RESOURCES[kind], handler, previous)
            self._informers[kind] = inf
            previous = inf.synced
        for inf in self._informers.values():
            self._spawn(inf)
        await asyncio.gather(*(inf.synced.wait() for inf in self._informers.values()))

    def _spawn(self, inf: _Informer) -> None:
        if self._stopping:
            return
        task = asyncio.get_running_loop().create_task(inf.run(), name=f"informer {inf.kind}")
        self._tasks.add(task)
        task.add_done_callback(functools.partial(self._informer_done, inf))

    def _informer_done(self, inf: _Informer, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if self._stopping or task.cancelled():
            return
        delay = inf.backoff.next()
        exc = task.exception()
        inf._failed(exc or RuntimeError("informer ended"))
        if exc is not None:
            log.error("%s informer crashed; restarting in %.1fs", inf.kind, delay, exc_info=exc)
        else:
            log.error("%s informer ended; restarting in %.1fs", inf.kind, delay)
        handle: asyncio.TimerHandle | None = None

        def restart() -> None:
            if handle is not None:
                self._restarts.discard(handle)
            self._spawn(inf)

        handle = asyncio.get_running_loop().call_later(delay, restart)
        self._restarts.add(handle)

    def health_problems(self) -> list[str]:
        """What keeps this cluster's view from being current: one line per informer that has
        failed to list or watch for longer than ``stall_seconds`` (empty when all is well)."""
        now = time.monotonic()
        problems = []
        for kind, inf in self._informers.items():
            if inf.failing_since is not None and now - inf.failing_since >= self.stall_seconds:
                problems.append(f"{kind} informer: no progress for {now - inf.failing_since:.0f}s: {inf.last_error}")
        return problems

    def informer_stats(self) -> dict[str, dict[str, Any]]:
        """Per kind: lists and watches made, objects known, last resourceVersion (diagnostics)."""
        return {
            k: {
                "lists": i.lists,
                "watches": i.watches,
                "objects": len(i.objects),
                "resourceVersion": i.resource_version,
            }
            for k, i in self._informers.items()
        }

    async def stop(self) -> None:
        self._stopping = True
        for handle in self._restarts:
            handle.cancel()
        self._restarts.clear()
        tasks = list(self._tasks)
        for t in tasks:
            t.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        self._tasks.clear()
        self._informers.clear()
        api, self._api = self._api, None
        if api is not None:
            await api.close()
        connections, self._connections = self._connections, None
        if connections is not None:
            await connections.close()
        for own in self._siblings:
            await own.stop()
        self._siblings.clear()
        self._events_sender = None

    # --- writes -------------------------------------------------------------------------------
    async def bind(self, pod: Obj, node_name: str) -> None:
        meta = pod["metadata"]
        ns = meta.get("namespace") or "default"
        binding: Obj = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": meta["name"], "namespace": ns},
            "target": {"apiVersion": "v1", "kind": "Node", "name": node_name},
        }
        if meta.get("uid"):
            binding["metadata"]["uid"] = meta["uid"]
        await self.request("POST", _ns_path("v1", ns, "pods", meta["name"], "binding"), body=binding)

    async def get_pod(self, namespace: str, name: str) -> Obj:
        return await self.request("GET", _ns_path("v1", namespace, "pods", name))

    async def record_event(
        self, regarding: Obj, event_type: str, reason: str, action: str, message: str, reporting_controller: str
    ) -> None:
        meta = regarding.get("metadata") or {}
        ns = meta.get("namespace") or "default"
        ident = str(meta.get("uid") or f"{regarding.get('kind', 'Pod')}/{ns}/{meta.get('name', '')}")
        key = (ident, event_type, reason, action, message, reporting_controller)
        series = self._events.get(key)
        if series is None:
            series = self._events[key] = _Series(namespace=ns)
            while len(self._events) > EVENT_CACHE_SIZE:
                self._events.popitem(last=False)
        else:
            self._events.move_to_end(key)
        async with series.lock:
            now = asyncio.get_running_loop().time()
            if series.name is not None and now - series.last_seen <= EVENT_SERIES_WINDOW:
                try:
                    await self._continue_series(series)
                    series.last_seen = now
                    return
                except NotFound:
                    pass  # the event expired (TTL) or was deleted: start a new one
            await self._create_event(series, regarding, event_type, reason, action, message, reporting_controller)
            series.last_seen = now

    async def _write_event(self, method: str, path: str, body: Obj, content_type: str = "application/json") -> Obj:
        """One event write, through the event client, tried up to :data:`EVENT_MAX_TRIES` times
        when the transport or the server failed (5xx), as client-go's event sink retries. The
        waits start shorter than client-go's constant 10 s (:attr:`event_retry_interval`, the
        first randomized, then doubling up to :data:`EVENT_RETRY_CAP`), so that an event is
        seldom lost with its process. The same object, same name, each time: a create whose
        answer was lost comes back 409 AlreadyExists, and it was written."""
        for attempt in range(1, EVENT_MAX_TRIES + 1):
            try:
                return await self._event_client().request(method, path, body=body, content_type=content_type)
            except Conflict:
                if method == "POST" and attempt > 1:
                    return body
                raise
            except ClusterError as exc:
                if exc.code < 500 or attempt == EVENT_MAX_TRIES:
                    raise
                delay = min(EVENT_RETRY_CAP, self.event_retry_interval * 2 ** (attempt - 1))
                if attempt == 1:
                    delay *= self._rng.random()
                log.info("could not write an event (%s); trying again in %.1fs", exc, delay)
                await asyncio.sleep(delay)
        raise AssertionError("unreachable")

    async def _events_group_served(self) -> bool:
        try:
            await self._event_client().request("GET", "/apis/events.k8s.io/v1")
        except NotFound:
            return False
        return True

    async def _create_event(
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
        if self._events_api != "core":
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
                created = await self._write_event("POST", _ns_path("events.k8s.io/v1", ns, "events"), body)
            except NotFound:
                # A 404 on a collection is either the namespace or the whole group missing.
                if self._events_api == "events.k8s.io" or await self._events_group_served():
                    raise
                log.info("events.k8s.io/v1 is not served; writing core/v1 Events")
                self._events_api = "core"
            else:
                self._events_api = "events.k8s.io"
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
        created = await self._write_event("POST", _ns_path("v1", ns, "events"), core)
        series.name = (created.get("metadata") or {}).get("name") or name
        series.api, series.count = "core", 1

    async def _continue_series(self, series: _Series) -> None:
        assert series.name is not None
        count = series.count + 1
        if series.api == "events.k8s.io":
            path = _ns_path("events.k8s.io/v1", series.namespace, "events", series.name)
            patch: Obj = {"series": {"count": count, "lastObservedTime": micro_time()}}
        else:
            path = _ns_path("v1", series.namespace, "events", series.name)
            patch = {"count": count, "lastTimestamp": now_rfc3339()}
        await self._write_event("PATCH", path, patch, content_type="application/merge-patch+json")
        series.count = count

    async def update_pod_condition(self, pod: Obj, condition: Obj, nominated_node_name: str | None = None) -> None:
        meta = pod["metadata"]
        status: Obj = {"conditions": [condition]}
        if nominated_node_name is not None:
            status["nominatedNodeName"] = nominated_node_name or None
        patch: Obj = {"status": status}
        path = _ns_path("v1", meta.get("namespace") or "default", "pods", meta["name"], "status")
        try:
            await self.request("PATCH", path, body=patch, content_type="application/strategic-merge-patch+json")
        except NotFound:
            pass  # the pod was deleted meanwhile: nothing to report on

    async def patch_pod_annotations(self, pod: Obj, annotations: dict[str, str]) -> None:
        meta = pod["metadata"]
        path = _ns_path("v1", meta.get("namespace") or "default", "pods", meta["name"])
        try:
            await self.request(
                "PATCH",
                path,
                body={"metadata": {"annotations": annotations}},
                content_type="application/merge-patch+json",
            )
        except NotFound:
            pass

    async def delete_pod(self, pod: Obj) -> None:
        meta = pod["metadata"]
        await self.request("DELETE", _ns_path("v1", meta.get("namespace") or "default", "pods", meta["name"]))

    async def set_nominated_node_name(self, pod: Obj, node_name: str) -> None:
        meta = pod["metadata"]
        path = _ns_path("v1", meta.get("namespace") or "default", "pods", meta["name"], "status")
        try:
            await self.request(
                "PATCH",
                path,
                body={"status": {"nominatedNodeName": node_name or None}},
                content_type="application/merge-patch+json",
            )
        except NotFound:
            pass

    async def update_object(self, kind: str, obj: Obj, subresource: str | None = None) -> Obj:
        res = RESOURCES.get(kind)
        if res is None:
            raise ClusterError(f"kind {kind!r} is not known to this backend", 0)
        meta = obj["metadata"]
        from kubesched.cluster.store import CLUSTER_SCOPED

        namespace = None if kind in CLUSTER_SCOPED else (meta.get("namespace") or "default")
        path = res.object_path(namespace, meta["name"])
        return await self.request("PUT", f"{path}/{subresource}" if subresource else path, body=obj)

    # --- leases -------------------------------------------------------------------------------
    def leases(self, renew_deadline: float | None = None) -> KubeLeases:
        """The :class:`~kubesched.cluster.leader.LeaseClient` of this cluster, on a client of its own.

        As upstream gives leader election its own client, renewals never wait behind the
        scheduler's binds and events: their own connection pool, their own rate limit (same qps
        and burst), and a request timeout of max(1 s, renew_deadline / 2), so that one hung
        request cannot use up the whole renew deadline. Closed by :meth:`stop`."""
        timeout = self.request_timeout if renew_deadline is None else max(1.0, renew_deadline / 2)
        return KubeLeases(self.sibling("leader-election", request_timeout=timeout))

    def sibling(
        self,
        purpose: str,
        *,
        request_timeout: float | None = None,
        qps: float | None = None,
        burst: int | None = None,
    ) -> KubeCluster:
        """A client to the same cluster with its own connections and its own rate limit (this
        one's qps and burst unless given), for work that must not queue behind the scheduler's;
        its user agent names ``purpose``. Closed by :meth:`stop`."""
        own = KubeCluster(
            self.kubeconfig,
            self.context,
            qps=self.limiter.qps if qps is None else qps,
            burst=self.limiter.burst if burst is None else burst,
            configuration=self._configuration,
            request_timeout=self.request_timeout if request_timeout is None else request_timeout,
            hostname=self.hostname,
            user_agent=f"{self.user_agent}/{purpose}",
        )
        self._siblings.append(own)
        return own

    def _event_client(self) -> KubeCluster:
        """Events go through a client of their own, as upstream's event client: writing them
        never halves the rate of binds."""
        if self._events_sender is None:
            self._events_sender = self.sibling("events")
        return self._events_sender


class KubeLeases:
    """coordination.k8s.io/v1 Leases as raw dicts, through the (lease) cluster's client."""

    def __init__(self, cluster: KubeCluster) -> None:
        self.cluster = cluster

    async def get(self, namespace: str, name: str) -> Obj:
        return await self.cluster.request("GET", _ns_path("coordination.k8s.io/v1", namespace, "leases", name))

    async def create(self, lease: Obj) -> Obj:
        ns = (lease.get("metadata") or {}).get("namespace") or "default"
        return await self.cluster.request("POST", _ns_path("coordination.k8s.io/v1", ns, "leases"), body=lease)

    async def update(self, lease: Obj) -> Obj:
        meta = lease.get("metadata") or {}
        ns = meta.get("namespace") or "default"
        path = _ns_path("coordination.k8s.io/v1", ns, "leases", meta["name"])
        return await self.cluster.request("PUT", path, body=lease)


__all__ = [
    "EVENT_SERIES_WINDOW",
    "Backoff",
    "Expired",
    "KubeCluster",
    "KubeLeases",
    "TokenBucket",
    "api_error",
    "load_configuration",
]
