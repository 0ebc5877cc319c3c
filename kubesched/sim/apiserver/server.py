"""The embedded Kubernetes API server: the in-memory :class:`Store` served over HTTP so that
kubectl and the Python Kubernetes clients work against the simulated cluster unchanged.

It serves core/v1 pods (with the ``binding`` and ``status`` subresources), nodes, namespaces and
events, events.k8s.io/v1 events (the same objects, converted), coordination.k8s.io/v1 leases and
scheduling.k8s.io/v1 priorityclasses; legacy and aggregated discovery; OpenAPI v2 and v3; the
verbs get, list, watch, create, update, patch (merge, strategic, JSON and server-side apply),
delete and deletecollection; label and field selectors; Table output for ``kubectl get``.

This module is the application: its lifecycle, authentication, and the routing of each path to
the part that answers it — :mod:`~kubesched.sim.apiserver.handlers` (the verbs),
:mod:`~kubesched.sim.apiserver.watch`, :mod:`~kubesched.sim.apiserver.subresources`, discovery,
OpenAPI, the reviews, the web view, the resource metrics API
(:mod:`~kubesched.sim.apiserver.resource_metrics`), and an API mounted beside (the simulator's).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import errno
import ipaddress
import logging
import os
import secrets
import socket
import ssl
from collections.abc import Callable, Mapping
from typing import Any, Protocol

import yaml
from aiohttp import __version__ as aiohttp_version
from aiohttp import web
from aiohttp.typedefs import Handler

from kubesched.cluster.base import NotFound
from kubesched.cluster.store import Store
from kubesched.framework.features import FeatureGates
from kubesched.objects import Obj
from kubesched.server.serving.certs import ServingError, self_signed_certificate, ssl_context_from_pem
from kubesched.server.serving.server import cannot_listen
from kubesched.sim.apiserver import resource_metrics, subresources, webui
from kubesched.sim.apiserver.admission import DEFAULT_NAMESPACES, SYSTEM_PRIORITY_CLASSES, admit_new
from kubesched.sim.apiserver.authn import Authenticator, UserInfo, subject_access_review, token_review
from kubesched.sim.apiserver.connections import (
    APIRunner,
    Limits,
    expect_continue,
    head_too_large,
    head_too_large_answer,
    probe_refused,
    probes_only,
    too_many_requests,
)
from kubesched.sim.apiserver.customresources import CustomResources
from kubesched.sim.apiserver.discovery import (
    ServedResource,
    aggregated_discovery,
    api_group,
    api_group_list,
    api_resource_list,
    api_versions,
    wants_aggregated,
)
from kubesched.sim.apiserver.errors import (
    MAX_REQUEST_BODY_BYTES,
    APIError,
    internal_error,
    method_not_allowed,
    path_not_found,
    request_entity_too_large,
)
from kubesched.sim.apiserver.faults import FaultInjector
from kubesched.sim.apiserver.handlers import ResourceHandlers, view, warning_header
from kubesched.sim.apiserver.inflight import (
    DEFAULT_MAX_MUTATING_REQUESTS_INFLIGHT,
    DEFAULT_MAX_REQUESTS_INFLIGHT,
    InFlightLimit,
    TooManyRequests,
)
from kubesched.sim.apiserver.openapi import documents as openapi
from kubesched.sim.apiserver.paths import canonical_request
from kubesched.sim.apiserver.requests import ResourceRequest, parse_resource_path, read_body, truthy
from kubesched.sim.apiserver.responses import json_response
from kubesched.sim.apiserver.retention import Retention
from kubesched.sim.apiserver.version import GIT_VERSION, version_info
from kubesched.sim.apiserver.watch import Watches

__all__ = [
    "DEFAULT_NAMESPACES",
    "GIT_VERSION",
    "SYSTEM_PRIORITY_CLASSES",
    "APIServer",
    "MountedAPI",
    "ensure_defaults",
    "host_port",
    "write_private_file",
]

log = logging.getLogger(__name__)


def _client_max_size(limit: int) -> int:
    """aiohttp's ``client_max_size`` that lets a body of ``limit`` bytes through and refuses one
    byte more: aiohttp before 3.14 refuses a body that reaches client_max_size, 3.14 and later
    only one that exceeds it."""
    major, minor = (int(p) for p in aiohttp_version.split(".")[:2])
    return limit if (major, minor) >= (3, 14) else limit + 1


def host_port(host: str, port: int) -> str:
    """``host:port`` as a URL or Go's ``net.JoinHostPort`` writes it: an IPv6 address bracketed."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def write_private_file(path: str | os.PathLike[str], text: str) -> str:
    """Write ``text`` to ``path``, readable by its owner only (0600), and return the path.

    The file may hold a credential, so nothing is written through a link: a ``path`` that is a
    symbolic link is refused (``IsADirectoryError`` for a directory, ``OSError`` with ``ELOOP``
    for a link), and the text goes to a new file beside it (``O_EXCL | O_NOFOLLOW``: never one
    that exists or a link planted meanwhile) that is then renamed over ``path`` — a rename
    replaces a link itself, never its target, and readers see the old file or the whole new one."""
    target = os.fspath(path)
    if os.path.islink(target):
        raise OSError(errno.ELOOP, "is a symbolic link; refusing to write through it", target)
    if os.path.isdir(target):
        raise IsADirectoryError(errno.EISDIR, "is a directory", target)
    folder = os.path.dirname(target) or "."
    tmp = os.path.join(folder, f".{os.path.basename(target)}.{secrets.token_hex(8)}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror, target) from None  # the file asked for, not the temporary one
    try:
        os.fchmod(fd, 0o600)  # whatever the umask
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return target


def ensure_defaults(store: Store, gates: FeatureGates | None = None) -> None:
    """Create in ``store`` the namespaces and system priority classes every cluster has (those
    missing): what the server starts with, and what ``PUT /api/v1/reset`` brings back."""
    for ns in DEFAULT_NAMESPACES:
        _ensure(store, "Namespace", {"metadata": {"name": ns}}, gates)
    for name, value in SYSTEM_PRIORITY_CLASSES:
        obj = {
            "metadata": {"name": name},
            "value": value,
            "description": "Used for system critical pods that must not be moved from their current node.",
        }
        _ensure(store, "PriorityClass", obj, gates)


def _ensure(store: Store, kind: str, obj: Obj, gates: FeatureGates | None) -> None:
    try:
        store.get(kind, None, obj["metadata"]["name"])
    except NotFound:
        store.create(kind, admit_new(kind, "", obj, {}, gates))


class MountedAPI(Protocol):
    """An API served beside the Kubernetes one, under ``/api/v1/<path>`` for each of its
    :attr:`paths` (the simulator's, :mod:`kubesched.sim.simulator_api`)."""

    @property
    def paths(self) -> frozenset[str]: ...

    async def handle(self, method: str, rest: list[str], query: Any, body: bytes) -> tuple[int, Any, str]:
        """``(status, body, content type)`` for ``/api/v1/<rest>``."""
        ...


def _client_gone(request: web.Request) -> bool:
    """Whether the client of ``request`` has closed its connection (or is closing it)."""
    transport = request.transport
    return transport is None or transport.is_closing()


class APIServer:
    """An aiohttp application serving ``store`` as a Kubernetes API on ``host:port``
    (port 0 picks a free one; :attr:`url` tells which after :meth:`start`).

    With ``token`` (the admin's: user ``kubesched-admin`` in ``system:masters``) and/or ``users``
    (more bearer tokens, see :mod:`kubesched.sim.apiserver.authn`), every request but the health and version
    probes must carry one of those tokens, else 401. Without either — the default, for servers
    built in-process by tests and tools — no token is asked for. :meth:`write_kubeconfig` writes
    the admin token, if any. With ``tls`` it serves HTTPS with a self-signed certificate made at
    start (kubectl sends credentials only over TLS), which the kubeconfig carries as its CA.

    ``limits`` bound its connections' time and number (:mod:`~kubesched.sim.apiserver.connections`);
    ``max_requests_inflight`` and ``max_mutating_requests_inflight`` the requests served at once,
    as kube-apiserver's flags of those names (:mod:`~kubesched.sim.apiserver.inflight`)."""

    def __init__(
        self,
        store: Store,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        token: str | None = None,
        users: Mapping[str, UserInfo] | None = None,
        tls: bool = False,
        feature_gates: FeatureGates | None = None,
        limits: Limits | None = None,
        max_requests_inflight: int = DEFAULT_MAX_REQUESTS_INFLIGHT,
        max_mutating_requests_inflight: int = DEFAULT_MAX_MUTATING_REQUESTS_INFLIGHT,
    ) -> None:
        self.store = store
        self.limits = limits if limits is not None else Limits()
        self.inflight = InFlightLimit(max_requests_inflight, max_mutating_requests_inflight)
        #: kube-apiserver's gates this server follows (the resources it serves, the fields it
        #: drops): ``sim serve --feature-gates``; 1.37's defaults when not given.
        self.feature_gates = feature_gates if feature_gates is not None else FeatureGates()
        self.host = host
        self.port = port
        self.token = token
        self.tls = tls
        #: the self-signed serving certificate (PEM) when ``tls``, made at :meth:`start`
        self.certificate: bytes | None = None
        self.authn = Authenticator.with_admin(token, users) if token else Authenticator(users)
        self.handlers = ResourceHandlers(store, self.feature_gates)
        #: the resources the store's CustomResourceDefinitions serve
        self.custom = CustomResources(store.custom_resources)
        self.watches = Watches(store, self.handlers.encoded)
        self._runner: web.AppRunner | None = None
        #: fault injection and binding counts, served at /kubesched/faults and /kubesched/stats
        self.faults = FaultInjector(
            self.drop_watches,
            lambda: self.store.resource_version,
            lambda request: self.authn.check(request.path, request.headers.get("Authorization")),
        )
        #: Events expire an hour after their last write, as kube-apiserver's --event-ttl.
        self.retention = Retention(store)
        #: ends the fault injector's following of the store (it forgets deleted pods' counts)
        self._unfollow: Callable[[], None] | None = None
        #: The simulator's own API (kubesched.sim.simulator_api), when ``sim serve`` sets one.
        self.simulator: MountedAPI | None = None
        #: Requests answered or being answered so far (what tells a busy server from an idle one).
        self.requests = 0
        self._besides_of: tuple[ServedResource, ...] | None = None
        self._besides: tuple[ServedResource, ...] = ()

    @property
    def bookmark_interval(self) -> float:
        """Seconds between BOOKMARK events on watches that asked for them."""
        return self.watches.bookmark_interval

    @bookmark_interval.setter
    def bookmark_interval(self, seconds: float) -> None:
        self.watches.bookmark_interval = seconds

    # --- lifecycle ----------------------------------------------------------------------------
    @property
    def url(self) -> str:
        """``scheme://host:port``, an IPv6 address in brackets (``https://[::1]:8080``)."""
        return f"{'https' if self.tls else 'http'}://{host_port(self.host, self.port)}"

    async def start(self) -> None:
        self.ensure_defaults()
        # A body of exactly the limit passes and one byte more is a 413, as kube-apiserver's
        # limitedReadBody has it — at every door (aiohttp's own limit, see _client_max_size).
        # Every request passes _front (one middleware: a path no route serves passes it too).
        app = web.Application(
            client_max_size=_client_max_size(MAX_REQUEST_BODY_BYTES),
            middlewares=[self._front],
        )
        app.router.add_route("*", "/{tail:.*}", self._handle, expect_handler=expect_continue)
        self.faults.install(app)
        # A watch opened while stopping must not hold shutdown for aiohttp's default 60 s.
        self._runner = APIRunner(app, self.limits, access_log=None, handle_signals=False, shutdown_timeout=1.0)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port, ssl_context=self._ssl_context())
        try:
            await site.start()
        except OSError as exc:
            await self._runner.cleanup()
            raise ServingError(f"sim serve: {cannot_listen(self.host, self.port, exc)}") from exc
        # The runner's one site: the port the OS gave when port 0 asked for a free one.
        addresses = self._runner.addresses
        if addresses:
            self.port = addresses[0][1]
        self.retention.start()
        self._unfollow = self.store.subscribe(self.faults.on_store_write)

    def _ssl_context(self) -> ssl.SSLContext | None:
        if not self.tls:
            return None
        ips = ["127.0.0.1", "::1"]
        with contextlib.suppress(ValueError):
            ips.append(str(ipaddress.ip_address(self.host)))
        dns = tuple({socket.gethostname(), self.host} - {"localhost", *ips})
        self.certificate, key = self_signed_certificate("localhost", ips=tuple(dict.fromkeys(ips)), dns=dns)
        return ssl_context_from_pem(self.certificate, key)

    async def stop(self) -> None:
        if self._unfollow is not None:
            self._unfollow()
            self._unfollow = None
        self.watches.stopping = True
        self.drop_watches()
        await self.watches.close()
        await self.retention.stop()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> APIServer:
        await self.start()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.stop()

    def ensure_defaults(self) -> None:
        """Create the namespaces and system priority classes every cluster has."""
        ensure_defaults(self.store, self.feature_gates)

    def drop_watches(self) -> None:
        """End every open watch stream (clients see the response end and must re-watch)."""
        self.watches.drop_all()

    def compact(self) -> int:
        """Compact the store's history: watches from an older resourceVersion get 410 Expired."""
        return self.store.compact()

    def write_kubeconfig(self, path: str | os.PathLike[str], context: str = "kubesched-sim") -> str:
        """Write a kubeconfig pointing at this server (its CA with TLS; the admin token, if any); returns the path.

        The file holds a credential: it is written as :func:`write_private_file` writes."""
        cluster: Obj = {"server": self.url, "insecure-skip-tls-verify": True}
        if self.certificate is not None:
            cluster = {"server": self.url, "certificate-authority-data": base64.b64encode(self.certificate).decode()}
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": context, "cluster": cluster}],
            "users": [{"name": context, "user": {"token": self.token} if self.token else {}}],
            "contexts": [{"name": context, "context": {"cluster": context, "user": context, "namespace": "default"}}],
            "current-context": context,
            "preferences": {},
        }
        return write_private_file(path, yaml.safe_dump(config, sort_keys=False))

    # --- dispatch -----------------------------------------------------------------------------
    @web.middleware
    async def _front(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        """What every request passes before its handler, in this order: a connection let in past
        the cap answers health probes only (then closes); a head is as long as Go's server
        reads it (:mod:`kubesched.sim.apiserver.connections`); the path is made canonical
        (:mod:`kubesched.sim.apiserver.paths`: authentication decides on the path the router
        serves); then the fault injector, which serves its own endpoints and hands the rest on."""
        capped = probes_only(request)
        if capped and (refused := probe_refused(request)) is not None:
            return refused
        if head_too_large(request):
            resp: web.StreamResponse = head_too_large_answer()
        else:
            resp = await self.faults.serve(canonical_request(request), handler)
        if capped:
            resp.force_close()
        return resp

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        self.requests += 1
        try:
            path = request.path
            user = self.authn.check(path, request.headers.get("Authorization"))
            # The path is canonical (_front): no empty segment but the root's.
            parts = path.split("/")[1:] if path != "/" else []
            counted = self.inflight.enter(request, user, parts)
            try:
                return await self._route(request, path, parts)
            finally:
                self.inflight.leave(counted)
        except TooManyRequests:
            return too_many_requests()
        except APIError as exc:
            return json_response(exc.status(), exc.code)
        except web.HTTPRequestEntityTooLarge:
            too_large = request_entity_too_large(f"Request entity too large: limit is {MAX_REQUEST_BODY_BYTES}")
            return json_response(too_large.status(), too_large.code)
        except ConnectionResetError:
            if not _client_gone(request):
                raise
            # The client hung up mid-request (its body cut short, or the connection closed while
            # the answer was written): the client's choice, not the server's fault, and nobody
            # is left to answer. aiohttp drops the response, finding the transport closed.
            log.debug("client hung up on %s %s", request.method, request.path)
            return web.Response(status=499)
        except asyncio.CancelledError:
            raise
        except Exception:  # a bug in a handler must answer 500, not drop the connection
            # The detail (and its traceback) goes to the log; the client gets kube-apiserver's
            # words for a handler that failed, never Python's text about this process's insides.
            log.exception("API server error on %s %s", request.method, request.path)
            return json_response(internal_error().status(), 500)

    async def _route(self, request: web.Request, path: str, parts: list[str]) -> web.StreamResponse:
        if path == "/version":
            return json_response(version_info())
        if path in ("/healthz", "/readyz", "/livez") or (parts and parts[0] in ("healthz", "readyz", "livez")):
            return web.Response(text="ok", content_type="text/plain")
        if parts and parts[0] == "openapi":
            return self._openapi(parts[1:])
        if path in (
            "/apis/authentication.k8s.io/v1/tokenreviews",
            "/apis/authorization.k8s.io/v1/subjectaccessreviews",
        ):
            if request.method != "POST":
                raise method_not_allowed()
            body = await read_body(request)
            review = token_review(self.authn, body) if "tokenreviews" in path else subject_access_review(body)
            return json_response(review, 201)
        if webui.is_ui_path(path) and request.method == "GET":
            return webui.response(path)
        if not parts or parts[0] not in ("api", "apis"):
            raise path_not_found()
        mounted = self.simulator
        if mounted is not None and parts[:2] == ["api", "v1"] and len(parts) > 2 and parts[2] in mounted.paths:
            status, body, ctype = await mounted.handle(request.method, parts[2:], request.query, await request.read())
            if ctype == "application/json":
                return json_response(body, status)
            return web.Response(text=body, status=status, content_type=ctype)
        return await self._discovery_or_resource(request, parts)

    async def _discovery_or_resource(self, request: web.Request, parts: list[str]) -> web.StreamResponse:
        """``/api...`` and ``/apis...``: a discovery document, or a resource request."""
        accept = request.headers.get("Accept", "")
        custom = self._served_besides()
        if parts[0] == "api":
            if len(parts) == 1:
                media = wants_aggregated(accept)
                if media:
                    return json_response(aggregated_discovery(True, media, self.feature_gates), content_type=media)
                return json_response(api_versions(host_port(self.host, self.port)))
            if parts[1] != "v1":
                raise path_not_found()
            group, version, rest = "", "v1", parts[2:]
        else:
            if len(parts) == 1:
                media = wants_aggregated(accept)
                if media:
                    return json_response(
                        aggregated_discovery(False, media, self.feature_gates, custom), content_type=media
                    )
                return json_response(api_group_list(custom))
            if len(parts) == 2:
                doc = api_group(parts[1], custom)
                if doc is None:
                    raise path_not_found()
                return json_response(doc)
            group, version, rest = parts[1], parts[2], parts[3:]
        if not rest:
            doc = api_resource_list(group, version, self.feature_gates, custom)
            if doc is None:
                raise path_not_found()
            return json_response(doc)
        return await self._serve(request, parse_resource_path(group, version, rest, self.feature_gates, custom))

    async def _serve(self, request: web.Request, req: ResourceRequest) -> web.StreamResponse:
        """The verb a method names on the resource (or subresource) a request names; a custom
        resource's deprecated version answers with its deprecation warning."""
        version = req.res.custom_version
        if version is None or not version.deprecated:
            return await self._verb(request, req)
        resp = await self._verb(request, req)
        if not resp.prepared:
            text = version.deprecation_warning or f"{req.res.group_version} {req.res.kind} is deprecated"
            resp.headers.add("Warning", warning_header([text]))
        return resp

    async def _verb(self, request: web.Request, req: ResourceRequest) -> web.StreamResponse:
        method = request.method
        handlers = self.handlers
        if isinstance(req.res, resource_metrics.MetricsResource):
            return resource_metrics.serve(self.store, self.feature_gates, request, req)
        if req.res.plural == "bindings":
            return await subresources.bind_collection(self.store, request, req)
        if req.name is None:
            if method == "GET":
                if req.watch or truthy(request.query.get("watch")):
                    return await self.watches.serve(request, req)
                return handlers.list_objects(request, req)
            if method == "POST":
                return await handlers.create(request, req)
            if method == "DELETE":
                return handlers.delete_collection(request, req)
            raise method_not_allowed()
        if req.watch:
            return await self.watches.serve(request, req)
        if req.sub == "binding":
            return await subresources.bind_pod(self.store, request, req)
        if req.sub == "scale":
            return await subresources.scale(handlers, request, req)
        if req.sub == "eviction":
            return await subresources.evict_pod(handlers, request, req)
        if method == "GET":
            return handlers.respond(request, req, view(req.res, handlers.get(req)))
        if method == "PUT":
            return await handlers.update(request, req)
        if method == "PATCH":
            return await handlers.patch(request, req)
        if method == "DELETE":
            if req.sub is not None:
                raise method_not_allowed()
            return await handlers.delete(request, req)
        raise method_not_allowed()

    def _served_besides(self) -> tuple[ServedResource, ...]:
        """The resources served besides the built-in ones: the custom resources, then the
        metrics API's (the tuple made again only when the custom resources change)."""
        resources = self.custom.resources()
        if resources is not self._besides_of:
            self._besides_of = resources
            self._besides = (*resources, *resource_metrics.METRICS_RESOURCES)
        return self._besides

    def _openapi(self, rest: list[str]) -> web.Response:
        custom = self.custom.resources()
        if rest == ["v2"]:
            return json_response(openapi.v2_document(custom))
        if rest == ["v3"]:
            return json_response(openapi.v3_index(custom))
        if len(rest) >= 2 and rest[0] == "v3":
            doc = openapi.v3_document("/".join(rest[1:]), custom)
            if doc is not None:
                return json_response(doc)
        raise path_not_found()
