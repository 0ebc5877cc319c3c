"""Requests to a Kubernetes API server: configuration, credentials, rate limit, error mapping.

kubernetes_asyncio provides the configuration (kubeconfig, exec plugins, in-cluster service
account) and the authenticated HTTP session; we bypass its model classes and read raw JSON, so
that each object is deserialized exactly once, into the plain dicts the rest of kubesched works
with. Every request, watches included, first takes a token from one bucket (``qps`` /
``burst``, as ``clientConnection`` configures). The writes (binds, events, patches: whole
requests other than GETs) go over keep-alive connections of our own
(:mod:`~kubesched.cluster.kube.http1`) where no proxy is in the way, with the TLS context the
client's session has: a third of the CPU aiohttp's client spends on each.

Failures leave this module only as the exceptions of :mod:`kubesched.cluster.base`.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import ssl
import urllib.parse
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import aiohttp
from kubernetes_asyncio.client import ApiClient, Configuration
from kubernetes_asyncio.client.exceptions import OpenApiException
from kubernetes_asyncio.config import ConfigException, load_incluster_config, load_kube_config

from kubesched.cluster.base import ClusterError, Conflict, Invalid, NotFound
from kubesched.cluster.kube.http1 import ConnectionPool, Reply
from kubesched.objects import Obj

log = logging.getLogger(__name__)

#: How often a request answered 429/5xx with Retry-After is sent again (client-go's default).
MAX_RETRIES = 10


class Expired(ClusterError):
    """410 Gone: the resourceVersion asked for is older than the server's history."""

    def __init__(self, message: str) -> None:
        super().__init__(message, 410)


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


# --- the session ------------------------------------------------------------------------------


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


def client_tls_context(connector: Any) -> ssl.SSLContext | None:
    """The TLS context of the client session's ``connector`` (an aiohttp ``TCPConnector``), or
    None when it has no context of its own.

    kubernetes_asyncio builds that context from the configuration and hands it to the connector
    alone, and aiohttp's connector keeps it private with no public accessor: this is the one
    place that reads it, allowed by name in ``tests/unit/test_no_private_reach.py``."""
    context = getattr(connector, "_ssl", None)
    return context if isinstance(context, ssl.SSLContext) else None


def _own_connections(
    api: ApiClient, host: str, configuration: Configuration, limit: int | None = None
) -> ConnectionPool | None:
    """Connections of our own (:mod:`~kubesched.cluster.kube.http1`) for the requests whose whole
    answer is read, where nothing but the server and its TLS settings decide how they go: no
    proxy (the environment's or the kubeconfig's) and the TLS context the client's own
    connections use. None otherwise: everything then goes through the client's session."""
    rest = api.rest_client
    if rest.proxy or _environment_matters(host):
        return None
    url = urllib.parse.urlsplit(host)
    if url.scheme not in ("http", "https") or not url.hostname:
        return None
    context: ssl.SSLContext | None = None
    if url.scheme == "https":
        # The very context kubernetes_asyncio made from the configuration (CA, client
        # certificate, verification): the same TLS either way, or none of ours.
        context = client_tls_context(rest.pool_manager.connector)
        if context is None:
            return None
    return ConnectionPool(
        url.hostname,
        url.port or (443 if context is not None else 80),
        ssl_context=context,
        server_hostname=rest.server_hostname or None,
        limit=limit or int(configuration.connection_pool_maxsize or 10),
    )


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


def _retry_after(status: int, retry_after: str | None) -> int | None:
    """Seconds to wait before sending the request again, when the server asked for it."""
    if status != 429 and status < 500:
        return None
    try:
        return max(0, int(retry_after or ""))
    except ValueError:
        return None


# --- the transport ----------------------------------------------------------------------------


class Transport:
    """Requests to one API server with one client: its credentials, connections and rate limit.

    Nothing connects until the first request (or :meth:`connect`). :meth:`sibling` gives a
    transport to the same server with connections and a rate limit of its own, for work that
    must not queue behind this one's (events, lease renewals, delegated authentication);
    :meth:`close` closes those too.
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
        user_agent: str = "kubesched",
        connections: int | None = None,
    ) -> None:
        self.kubeconfig = kubeconfig or None
        #: The most of its own connections the writes use at once (None: the configuration's
        #: ``connection_pool_maxsize``, what the client's session allows).
        self.connections = connections
        self.context = context or None
        self._configuration = configuration
        self.limiter = TokenBucket(qps, burst)
        self.request_timeout = request_timeout
        self.user_agent = user_agent
        #: Requests sent, and those sent again because the server said Retry-After.
        self.requests = 0
        self.retries = 0
        self._api: ApiClient | None = None
        self._api_lock = asyncio.Lock()
        #: The session that owns the client's connections, when the client uses another.
        self._connections: aiohttp.ClientSession | None = None
        self._siblings: list[Transport] = []
        self._timeout = aiohttp.ClientTimeout(total=request_timeout)
        #: What every request carries besides its credentials, set when the client is made.
        self._headers: dict[str, str] = {}
        #: Our own connections for whole requests other than GETs, where they may be used.
        self._pool: ConnectionPool | None = None
        #: The server URL's path (a server behind a path prefix), which every request starts with.
        self._base_path = ""

    @property
    def session(self) -> aiohttp.ClientSession | None:
        """The session that owns the client's connections, when the client uses another (None
        until the client is made, and once closed): for diagnostics and tests."""
        return self._connections

    async def client(self) -> ApiClient:
        """The kubernetes_asyncio client, made on first use from the configuration (loaded then
        when none was given; raises :class:`ClusterError` when it cannot be)."""
        if self._api is not None:
            return self._api
        async with self._api_lock:
            if self._api is None:
                if self._configuration is None:
                    self._configuration = await load_configuration(self.kubeconfig, self.context)
                api = ApiClient(configuration=self._configuration)
                api.user_agent = self.user_agent
                self._headers = {"Accept": "application/json", **api.default_headers}
                host = self._configuration.host or ""
                self._connections = _without_environment_lookups(api, host)
                self._pool = _own_connections(api, host, self._configuration, self.connections)
                self._base_path = urllib.parse.urlsplit(host).path
                self._api = api
        return self._api

    async def connect(self) -> None:
        """Load the configuration and make the client now (raises :class:`ClusterError`)."""
        await self.client()

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
        api = await self.client()
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
            wait = _retry_after(resp.status, resp.headers.get("Retry-After")) if attempt < MAX_RETRIES else None
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
        """One request, its JSON response decoded once.

        GETs (lists among them: large answers, which the client's session asks compressed) go
        through the client's session; the other verbs, where they may, through our own
        connections (:func:`_own_connections`), with the same rate limit, credentials, retries
        after Retry-After, timeout and errors."""
        api = await self.client()
        if self._pool is not None and method != "GET":
            reply = await self._whole(api, self._pool, method, path, query, body, content_type, timeout)
            data, status = reply.body, reply.status
        else:
            resp = await self.open(method, path, query=query, body=body, content_type=content_type, timeout=timeout)
            status = resp.status
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
            raise ClusterError(f"{method} {path}: response is not JSON", status) from exc
        return out if isinstance(out, dict) else {"items": out}

    async def _whole(
        self,
        api: ApiClient,
        pool: ConnectionPool,
        method: str,
        path: str,
        query: list[tuple[str, str]] | None,
        body: Any,
        content_type: str,
        timeout: float | None,
    ) -> Reply:
        """:meth:`open`'s work for one whole request over ``pool``: a token, the credentials,
        Retry-After honoured, errors raised as ours; the answer read."""
        what = f"{method} {path}"
        payload = _encode_body(body)
        target = self._base_path + path
        if query:
            target += "?" + urllib.parse.urlencode(query)
        total = self.request_timeout if timeout is None else timeout
        for attempt in range(MAX_RETRIES + 1):
            await self.limiter.acquire()
            self.requests += 1
            headers = {**self._headers, "Content-Type": content_type}
            try:
                await api.update_params_for_auth(headers, [], ["BearerToken"])
                async with asyncio.timeout(total if total and total > 0 else None):
                    reply = await pool.request(method, target, headers, payload)
            except TimeoutError as exc:
                raise ClusterError(f"{what}: timed out", 504) from exc
            except OSError as exc:
                raise ClusterError(f"{what}: {exc}", 503) from exc
            except (OpenApiException, ConfigException) as exc:
                raise ClusterError(f"{what}: {exc}", 500) from exc
            if reply.status < 400:
                return reply
            wait = _retry_after(reply.status, reply.headers.get("retry-after")) if attempt < MAX_RETRIES else None
            if wait is None:
                raise api_error(reply.status, reply.body, what)
            self.retries += 1
            log.debug("%s: %d, retrying after %ds", what, reply.status, wait)
            await asyncio.sleep(wait)
        raise AssertionError("unreachable")

    def sibling(
        self,
        purpose: str,
        *,
        request_timeout: float | None = None,
        qps: float | None = None,
        burst: int | None = None,
    ) -> Transport:
        """A transport to the same server with its own connections and its own rate limit
        (this one's qps and burst unless given), for work that must not queue behind this
        one's; its user agent names ``purpose``. Closed by :meth:`close`."""
        own = Transport(
            self.kubeconfig,
            self.context,
            qps=self.limiter.qps if qps is None else qps,
            burst=self.limiter.burst if burst is None else burst,
            configuration=self._configuration,
            request_timeout=self.request_timeout if request_timeout is None else request_timeout,
            user_agent=f"{self.user_agent}/{purpose}",
        )
        self._siblings.append(own)
        return own

    async def close(self) -> None:
        """Close the client, the connections and every sibling (a closed transport may connect
        again on its next request)."""
        api, self._api = self._api, None
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.close()
        if api is not None:
            await api.close()
        connections, self._connections = self._connections, None
        if connections is not None:
            await connections.close()
        siblings, self._siblings = self._siblings, []
        for own in siblings:
            await own.close()


__all__ = [
    "MAX_RETRIES",
    "Expired",
    "TokenBucket",
    "Transport",
    "api_error",
    "client_tls_context",
    "load_configuration",
]
