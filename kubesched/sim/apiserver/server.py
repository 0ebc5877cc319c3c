"""The embedded Kubernetes API server: the in-memory :class:`Store` served over HTTP so that
kubectl and the Python Kubernetes clients work against the simulated cluster unchanged.

It serves core/v1 pods (with the ``binding`` and ``status`` subresources), nodes, namespaces and
events, events.k8s.io/v1 events (the same objects, converted), coordination.k8s.io/v1 leases and
scheduling.k8s.io/v1 priorityclasses; legacy and aggregated discovery; OpenAPI v2 and v3; the
verbs get, list, watch, create, update, patch (merge, strategic, JSON and server-side apply),
delete and deletecollection; label and field selectors; Table output for ``kubectl get``.

Watches are newline-delimited JSON over a chunked response. They resume from any
resourceVersion still in the store's history; an older one gets an ``ERROR`` event carrying a
410 Expired Status, after which clients relist, exactly as against a real API server.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import copy
import ipaddress
import json
import logging
import os
import socket
import ssl
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import yaml
from aiohttp import web

from kubesched.cluster.base import ClusterError, Conflict, NotFound
from kubesched.cluster.store import CLUSTER_SCOPED, Gone, Store
from kubesched.server.serving.certs import self_signed_certificate, ssl_context_from_pem
from kubesched.sim.apiserver import tables as apitables
from kubesched.sim.apiserver import webui
from kubesched.sim.apiserver.admission import (
    admit_new,
    event_core_view,
    event_from_v1,
    event_to_v1,
    prepare_update,
    validate_event_v1,
    validate_update,
)
from kubesched.sim.apiserver.authn import Authenticator, UserInfo, subject_access_review, token_review
from kubesched.sim.apiserver.discovery import (
    Resource,
    aggregated_discovery,
    api_group,
    api_group_list,
    api_resource_list,
    api_versions,
    find,
    split_resource_path,
    wants_aggregated,
)
from kubesched.sim.apiserver.errors import (
    MAX_REQUEST_BODY_BYTES,
    APIError,
    already_exists,
    bad_request,
    conflict,
    expired,
    method_not_allowed,
    not_found,
    request_entity_too_large,
    unsupported_media_type,
)
from kubesched.sim.apiserver.eviction import evict
from kubesched.sim.apiserver.faults import FaultInjector
from kubesched.sim.apiserver.openapi import documents as openapi
from kubesched.sim.apiserver.patching import PatchError, json_patch, merge_patch, strategic_merge_patch
from kubesched.sim.apiserver.protobuf.decode import ProtobufError, decode_object
from kubesched.sim.apiserver.scale import scale_view, scaled
from kubesched.sim.apiserver.selectors import (
    SelectorSyntaxError,
    fields_match,
    labels_match,
    parse_field_selector,
    parse_label_selector,
)
from kubesched.sim.apiserver.simulator_api import PATHS as SIMULATOR_PATHS
from kubesched.sim.apiserver.simulator_api import SimulatorAPI
from kubesched.sim.apiserver.validation.decode import check_decodable, check_stored_size, json_body
from kubesched.sim.apiserver.validation.meta import go_quote

log = logging.getLogger(__name__)

Obj = dict[str, Any]

GIT_VERSION = "v1.32.0-kubesched"
DEFAULT_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
SYSTEM_PRIORITY_CLASSES = (("system-node-critical", 2000001000), ("system-cluster-critical", 2000000000))

_MERGE = "application/merge-patch+json"
_STRATEGIC = "application/strategic-merge-patch+json"
_JSON_PATCH = "application/json-patch+json"
_APPLY = "application/apply-patch+yaml"
_APPLY_CBOR = "application/apply-patch+cbor"


def _json(body: Any, status: int = 200, content_type: str = "application/json", headers: Any = None) -> web.Response:
    return web.Response(
        body=json.dumps(body, separators=(",", ":")).encode(),
        status=status,
        headers={"Content-Type": content_type, **(headers or {})},
    )


def _status_success(code: int = 200, details: Obj | None = None) -> Obj:
    body: Obj = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": code}
    if details:
        body["details"] = details
    return body


def _no_json_constant(name: str) -> Any:
    # Python's json reads NaN and Infinity; JSON (and Go's decoder) has no such literals.
    raise ValueError(f"invalid character {name[0]!r} looking for beginning of value")


def _truthy(value: str | None) -> bool:
    return value is not None and value.lower() in ("true", "1", "yes")


def _event_line(etype: str, obj: Obj) -> bytes:
    """One watch event, as the API server streams it: a JSON object and a newline."""
    return json.dumps({"type": etype, "object": obj}, separators=(",", ":")).encode() + b"\n"


class _Watch:
    """One open watch stream; :meth:`close` ends it from outside."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[tuple[str, str, Obj, Obj | None] | None] = asyncio.Queue()

    def close(self) -> None:
        self.queue.put_nowait(None)


class _Request:
    """A resource request, parsed from the URL."""

    def __init__(self, res: Resource, namespace: str | None, name: str | None, sub: str | None, watch: bool) -> None:
        self.res = res
        self.namespace = namespace
        self.name = name
        self.sub = sub
        self.watch = watch


class APIServer:
    """An aiohttp application serving ``store`` as a Kubernetes API on ``host:port``
    (port 0 picks a free one; :attr:`url` tells which after :meth:`start`).

    With ``token`` (the admin's: user ``kubesched-admin`` in ``system:masters``) and/or ``users``
    (more bearer tokens, see :mod:`kubesched.sim.apiserver.authn`), every request but the health and version
    probes must carry one of those tokens, else 401. Without either — the default, for servers
    built in-process by tests and tools — no token is asked for. :meth:`write_kubeconfig` writes
    the admin token, if any. With ``tls`` it serves HTTPS with a self-signed certificate made at
    start (kubectl sends credentials only over TLS), which the kubeconfig carries as its CA."""

    def __init__(
        self,
        store: Store,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        token: str | None = None,
        users: Mapping[str, UserInfo] | None = None,
        tls: bool = False,
    ) -> None:
        self.store = store
        self.host = host
        self.port = port
        self.token = token
        self.tls = tls
        #: the self-signed serving certificate (PEM) when ``tls``, made at :meth:`start`
        self.certificate: bytes | None = None
        self.authn = Authenticator.with_admin(token, users) if token else Authenticator(users)
        #: seconds between BOOKMARK events on watches that asked for them
        self.bookmark_interval = 5.0
        self._stopping = False
        self._runner: web.AppRunner | None = None
        self._watches: set[_Watch] = set()
        #: fault injection and binding counts, served at /kubesched/faults and /kubesched/stats
        self.faults = FaultInjector(
            self.drop_watches,
            lambda: self.store.resource_version,
            lambda request: self.authn.check(request.path, request.headers.get("Authorization")),
        )
        #: The simulator's own API (kubesched.sim.apiserver.simulator_api), when ``sim serve`` sets one.
        self.simulator: SimulatorAPI | None = None

    # --- lifecycle ----------------------------------------------------------------------------
    @property
    def url(self) -> str:
        return f"{'https' if self.tls else 'http'}://{self.host}:{self.port}"

    async def start(self) -> None:
        self.ensure_defaults()
        # One byte over the limit is what tells a body at the limit from one beyond it.
        app = web.Application(client_max_size=MAX_REQUEST_BODY_BYTES + 1)
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self.faults.install(app)
        # A watch opened while stopping must not hold shutdown for aiohttp's default 60 s.
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=1.0)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port, ssl_context=self._ssl_context())
        await site.start()
        sockets = getattr(site._server, "sockets", None)
        if sockets:
            self.port = sockets[0].getsockname()[1]

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
        self._stopping = True
        self.drop_watches()
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
        for ns in DEFAULT_NAMESPACES:
            self._ensure("Namespace", {"metadata": {"name": ns}})
        for name, value in SYSTEM_PRIORITY_CLASSES:
            self._ensure(
                "PriorityClass",
                {
                    "metadata": {"name": name},
                    "value": value,
                    "description": "Used for system critical pods that must not be moved from their current node.",
                },
            )

    def _ensure(self, kind: str, obj: Obj) -> None:
        try:
            self.store.get(kind, None, obj["metadata"]["name"])
        except NotFound:
            pcs = self._priority_classes()
            self.store.create(kind, admit_new(kind, "", obj, pcs))

    def drop_watches(self) -> None:
        """End every open watch stream (clients see the response end and must re-watch)."""
        for w in list(self._watches):
            w.close()

    def compact(self) -> int:
        """Compact the store's history: watches from an older resourceVersion get 410 Expired."""
        return self.store.compact()

    def write_kubeconfig(self, path: str | os.PathLike[str], context: str = "kubesched-sim") -> str:
        """Write a kubeconfig pointing at this server (its CA with TLS; the admin token, if any); returns the path.

        The file holds a credential: it is created readable by its owner only."""
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
        text = yaml.safe_dump(config, sort_keys=False)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.fchmod(fd, 0o600)  # an existing file keeps its mode through O_TRUNC
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        return os.fspath(path)

    # --- dispatch -----------------------------------------------------------------------------
    async def _handle(self, request: web.Request) -> web.StreamResponse:
        try:
            self.authn.check(request.path, request.headers.get("Authorization"))
            return await self._route(request)
        except APIError as exc:
            return _json(exc.status(), exc.code)
        except web.HTTPRequestEntityTooLarge:
            too_large = request_entity_too_large(f"Request entity too large: limit is {MAX_REQUEST_BODY_BYTES}")
            return _json(too_large.status(), too_large.code)
        except (ConnectionResetError, asyncio.CancelledError):
            raise
        except Exception as exc:  # a bug here must answer 500, not drop the connection
            log.exception("API server error on %s %s", request.method, request.path)
            return _json(APIError(500, "InternalError", f"Internal error occurred: {exc}").status(), 500)

    async def _route(self, request: web.Request) -> web.StreamResponse:
        path = request.path.rstrip("/") or "/"
        parts = [p for p in path.split("/") if p]
        if path == "/version":
            return _json(
                {
                    "major": "1",
                    "minor": "32",
                    "gitVersion": GIT_VERSION,
                    "gitCommit": "0000000000000000000000000000000000000000",
                    "gitTreeState": "clean",
                    "buildDate": "2024-12-11T00:00:00Z",
                    "goVersion": "go1.23.3",
                    "compiler": "gc",
                    "platform": "linux/amd64",
                }
            )
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
            body = await self._body(request)
            review = token_review(self.authn, body) if "tokenreviews" in path else subject_access_review(body)
            return _json(review, 201)
        if webui.is_ui_path(path) and request.method == "GET":
            return webui.response(path)
        if not parts or parts[0] not in ("api", "apis"):
            raise APIError(404, "NotFound", "the server could not find the requested resource")
        if self.simulator is not None and parts[:2] == ["api", "v1"] and len(parts) > 2 and parts[2] in SIMULATOR_PATHS:
            status, body, ctype = await self.simulator.handle(
                request.method, parts[2:], request.query, await request.read()
            )
            if ctype == "application/json":
                return _json(body, status)
            return web.Response(text=body, status=status, content_type=ctype)
        accept = request.headers.get("Accept", "")
        if parts[0] == "api":
            if len(parts) == 1:
                media = wants_aggregated(accept)
                if media:
                    return _json(aggregated_discovery(True, media), content_type=media)
                return _json(api_versions(f"{self.host}:{self.port}"))
            if parts[1] != "v1":
                raise APIError(404, "NotFound", "the server could not find the requested resource")
            group, version, rest = "", "v1", parts[2:]
        else:
            if len(parts) == 1:
                media = wants_aggregated(accept)
                if media:
                    return _json(aggregated_discovery(False, media), content_type=media)
                return _json(api_group_list())
            if len(parts) == 2:
                doc = api_group(parts[1])
                if doc is None:
                    raise APIError(404, "NotFound", "the server could not find the requested resource")
                return _json(doc)
            group, version, rest = parts[1], parts[2], parts[3:]
        if not rest:
            doc = api_resource_list(group, version)
            if doc is None:
                raise APIError(404, "NotFound", "the server could not find the requested resource")
            return _json(doc)
        req = self._parse(group, version, rest)
        return await self._serve(request, req)

    def _parse(self, group: str, version: str, rest: list[str]) -> _Request:
        watch, namespace, rest = split_resource_path(group, version, rest)
        if not rest:
            raise APIError(404, "NotFound", "the server could not find the requested resource")
        res = find(group, version, rest[0])
        if res is None or len(rest) > 3:
            raise APIError(404, "NotFound", "the server could not find the requested resource")
        name = rest[1] if len(rest) > 1 else None
        sub = rest[2] if len(rest) > 2 else None
        if sub is not None and sub not in res.subresources:
            raise APIError(404, "NotFound", "the server could not find the requested resource")
        if res.namespaced and namespace is None and name is not None:
            raise APIError(404, "NotFound", "the server could not find the requested resource")
        return _Request(res, namespace, name, sub, watch)

    async def _serve(self, request: web.Request, req: _Request) -> web.StreamResponse:
        method = request.method
        q = request.query
        res = req.res
        if res.plural == "bindings":
            if method != "POST" or req.name is not None:
                raise method_not_allowed()
            body = await self._body(request)
            meta = body.get("metadata") if isinstance(body, dict) else None
            name = meta.get("name", "") if isinstance(meta, dict) else ""
            return self._bind(req.namespace or "default", name, body)
        if req.name is None:
            if method == "GET":
                if req.watch or _truthy(q.get("watch")):
                    return await self._watch(request, req)
                return self._list(request, req)
            if method == "POST":
                return await self._create(request, req)
            if method == "DELETE":
                return self._delete_collection(request, req)
            raise method_not_allowed()
        if req.watch:
            return await self._watch(request, req)
        if req.sub == "binding":
            if method != "POST":
                raise method_not_allowed()
            body = await self._body(request)
            return self._bind(req.namespace or "default", req.name, body)
        if req.sub == "scale":
            return await self._scale(request, req)
        if req.sub == "eviction":
            if method != "POST":
                raise method_not_allowed()
            body = await self._body(request, "Eviction", "policy/v1")
            return _json(evict(self.store, req.namespace or "default", req.name, body, self._remove), 201)
        if method == "GET":
            return self._respond(request, req, self._view(res, self._get(req)))
        if method == "PUT":
            return await self._update(request, req)
        if method == "PATCH":
            return await self._patch(request, req)
        if method == "DELETE":
            if req.sub is not None:
                raise method_not_allowed()
            return await self._delete(request, req)
        raise method_not_allowed()

    # --- helpers ------------------------------------------------------------------------------
    def _priority_classes(self) -> dict[str, Obj]:
        items, _ = self.store.list("PriorityClass")
        return {p["metadata"]["name"]: p for p in items}

    def _get(self, req: _Request) -> Obj:
        assert req.name is not None
        try:
            return self.store.get(req.res.stored_as, req.namespace, req.name)
        except NotFound:
            raise not_found(req.res.plural, req.res.group, req.name) from None

    @staticmethod
    def _view(res: Resource, obj: Obj) -> Obj:
        """The stored object as this endpoint serves it."""
        if res.group == "events.k8s.io":
            return event_to_v1(obj)
        if res.kind == "Event":
            return event_core_view(obj)
        if obj.get("kind") != res.kind or obj.get("apiVersion") != res.group_version:
            obj = {**obj, "kind": res.kind, "apiVersion": res.group_version}
        return obj

    @staticmethod
    def _unview(res: Resource, obj: Obj) -> Obj:
        if res.group == "events.k8s.io":
            return event_from_v1(obj)
        return obj

    async def _body(self, request: web.Request, kind: str = "", api_version: str = "") -> Any:
        """The request's object: JSON, YAML, or (for the kinds kubectl's typed clients send
        that way) Kubernetes protobuf, read as ``kind``."""
        raw = await request.read()
        ctype = (request.content_type or "application/json").lower()
        if not raw.strip():
            raise bad_request("the body of the request was empty")
        if "protobuf" in ctype and kind:
            try:
                return decode_object(raw, kind, api_version)
            except ProtobufError as exc:
                raise APIError(415, "UnsupportedMediaType", f"{unsupported_media_type(ctype).message}: {exc}") from None
        if "protobuf" in ctype or "cbor" in ctype:
            raise unsupported_media_type(ctype)
        try:
            if "yaml" in ctype:
                return json_body(yaml.safe_load(raw.decode()), yaml_source=True)
            return json_body(json.loads(raw, parse_constant=_no_json_constant))
        except (ValueError, yaml.YAMLError) as exc:
            raise bad_request(f"the object provided is unrecognized or malformed: {exc}") from None
        except RecursionError:
            raise bad_request("the object provided is unrecognized or malformed: nested too deeply") from None

    def _check_body(self, req: _Request, obj: Any) -> Obj:
        res = req.res
        if not isinstance(obj, dict):
            raise bad_request(f"the object provided is unrecognized: expected a {res.kind} object")
        kind, api_version = obj.get("kind"), obj.get("apiVersion")
        if (kind and kind != res.kind) or (api_version and api_version != res.group_version):
            raise bad_request(
                f"the API version in the data ({api_version}) does not match the expected API version "
                f"({res.group_version})"
                if api_version != res.group_version
                else f"the kind in the data ({kind}) does not match the expected kind ({res.kind})"
            )
        obj["kind"], obj["apiVersion"] = res.kind, res.group_version
        check_decodable(res.kind, res.group, res.version, obj)
        meta = obj.get("metadata")
        if meta is None:
            meta = obj["metadata"] = {}
        if not isinstance(meta, dict):
            raise bad_request("metadata must be an object")
        if res.namespaced:
            ns = meta.get("namespace")
            if ns and req.namespace and ns != req.namespace:
                raise bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request"
                )
            meta["namespace"] = req.namespace or ns or "default"
        else:
            meta.pop("namespace", None)
        if req.name is not None and meta.get("name") and meta["name"] != req.name:
            raise bad_request(
                f"the name of the object ({meta['name']}) does not match the name on the URL ({req.name})"
            )
        if req.name is not None:
            meta["name"] = req.name
        return obj

    def _field_validation(self, request: web.Request, req: _Request, obj: Obj) -> list[str]:
        """Unknown and duplicate fields per ``fieldValidation`` (Strict refuses, Warn reports)."""
        mode = request.query.get("fieldValidation", "Warn")
        if mode not in ("Strict", "Warn", "Ignore"):
            raise bad_request(f"fieldValidation parameter unsupported: {mode}; must be one of Ignore, Warn, Strict")
        if mode == "Ignore":
            return []
        unknown = openapi.unknown_fields(req.res.kind, req.res.group, obj)
        if not unknown:
            return []
        if mode == "Strict":
            listed = ", ".join(f"unknown field {go_quote(f)}" for f in unknown)
            raise bad_request(
                f'{req.res.kind} in version "{req.res.version}" cannot be handled as a {req.res.kind}: '
                f"strict decoding error: {listed}"
            )
        return [f"unknown field {go_quote(f)}" for f in unknown]

    def _check_namespace(self, req: _Request) -> None:
        if req.res.namespaced and req.namespace:
            try:
                self.store.get("Namespace", None, req.namespace)
            except NotFound:
                raise not_found("namespaces", "", req.namespace) from None

    def _respond(
        self, request: web.Request, req: _Request, obj: Obj, status: int = 200, warnings: list[str] | None = None
    ) -> web.Response:
        headers = {"Warning": ", ".join(f'299 - "{w}"' for w in warnings)} if warnings else None
        if apitables.wants_table(request.headers.get("Accept", "")):
            table = apitables.table(req.res, [obj], self.store.resource_version, request.query.get("includeObject"))
            return _json(table, status, headers=headers)
        return _json(obj, status, headers=headers)

    def _selectors(self, request: web.Request, req: _Request) -> Callable[[Obj], bool]:
        try:
            labels = parse_label_selector(request.query.get("labelSelector"))
            fields = parse_field_selector(request.query.get("fieldSelector"), req.res.kind)
        except SelectorSyntaxError as exc:
            raise bad_request(str(exc)) from None
        namespace = req.namespace if req.res.namespaced else None

        def match(obj: Obj) -> bool:
            if namespace is not None and (obj.get("metadata") or {}).get("namespace") != namespace:
                return False
            return labels_match(labels, obj) and fields_match(fields, obj)

        return match

    # --- verbs --------------------------------------------------------------------------------
    def _list(self, request: web.Request, req: _Request) -> web.Response:
        match = self._selectors(request, req)
        items, rv = self.store.list(req.res.stored_as, req.namespace if req.res.namespaced else None)
        selected = [self._view(req.res, o) for o in items if match(o)]
        selected.sort(key=lambda o: (o["metadata"].get("namespace", ""), o["metadata"].get("name", "")))
        if apitables.wants_table(request.headers.get("Accept", "")):
            return _json(apitables.table(req.res, selected, rv, request.query.get("includeObject")))
        return _json(
            {
                "kind": f"{req.res.kind}List",
                "apiVersion": req.res.group_version,
                "metadata": {"resourceVersion": str(rv)},
                "items": selected,
            }
        )

    def _admit(self, req: _Request, obj: Obj) -> Obj:
        res = req.res
        if res.group == "events.k8s.io":
            validate_event_v1(obj, obj["metadata"].get("name") or "")
            core = event_from_v1(obj)
            core["metadata"] = obj["metadata"]
            return admit_new("Event", "", core, {})
        return admit_new(res.kind, res.group, obj, self._priority_classes())

    def _store_create(self, req: _Request, obj: Obj, dry_run: bool) -> Obj:
        if dry_run:
            try:
                self.store.get(req.res.stored_as, obj["metadata"].get("namespace"), obj["metadata"].get("name", ""))
            except NotFound:
                pass
            else:
                raise already_exists(req.res.plural, req.res.group, obj["metadata"]["name"])
            obj = copy.deepcopy(obj)
            obj["metadata"].setdefault("uid", "00000000-0000-0000-0000-000000000000")
            return obj
        check_stored_size(obj)
        try:
            return self.store.create(req.res.stored_as, obj)
        except Conflict:
            raise already_exists(req.res.plural, req.res.group, obj["metadata"].get("name", "")) from None

    async def _create(self, request: web.Request, req: _Request) -> web.Response:
        obj = self._check_body(req, await self._body(request, req.res.kind, req.res.group_version))
        warnings = self._field_validation(request, req, obj)
        self._check_namespace(req)
        created = self._store_create(req, self._admit(req, obj), request.query.get("dryRun") == "All")
        return self._respond(request, req, self._view(req.res, created), 201, warnings)

    def _store_update(self, req: _Request, old: Obj, new: Obj, dry_run: bool) -> Obj:
        kind = req.res.stored_as
        new = prepare_update(kind, old, new, req.sub or "")
        validate_update(kind, req.res.group, old, new)
        name = old["metadata"]["name"]
        want = (new.get("metadata") or {}).get("resourceVersion")
        if want and want != old["metadata"].get("resourceVersion"):
            raise conflict(
                req.res.plural,
                req.res.group,
                name,
                "the object has been modified; please apply your changes to the latest version and try again",
            )
        for key in ("uid", "creationTimestamp"):
            if key in old["metadata"]:
                new["metadata"][key] = old["metadata"][key]
        if dry_run:
            return new
        check_stored_size(new)
        try:
            return self.store.update(kind, new, check_version=True)
        except NotFound:
            raise not_found(req.res.plural, req.res.group, name) from None
        except Conflict:
            raise conflict(req.res.plural, req.res.group, name, "the object has been modified") from None

    async def _update(self, request: web.Request, req: _Request) -> web.Response:
        obj = self._check_body(req, await self._body(request, req.res.kind, req.res.group_version))
        warnings = self._field_validation(request, req, obj)
        old = self._get(req)
        new = self._unview(req.res, obj)
        if req.res.group == "events.k8s.io":
            new["metadata"] = obj["metadata"]
        updated = self._store_update(req, old, new, request.query.get("dryRun") == "All")
        return self._respond(request, req, self._view(req.res, updated), 200, warnings)

    async def _patch(self, request: web.Request, req: _Request) -> web.Response:
        ctype = (request.content_type or "").lower()
        dry_run = request.query.get("dryRun") == "All"
        if ctype not in (_MERGE, _STRATEGIC, _JSON_PATCH, _APPLY):
            raise unsupported_media_type(ctype)
        patch = await self._body(request)
        assert req.name is not None
        if ctype == _APPLY:
            if not request.query.get("fieldManager"):
                raise APIError(
                    422,
                    "Invalid",
                    'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch',
                )
            applied = self._check_body(req, patch)
            warnings = self._field_validation(request, req, applied)
            try:
                stored = self.store.get(req.res.stored_as, req.namespace, req.name)
            except NotFound:
                if req.sub is not None:
                    raise not_found(req.res.plural, req.res.group, req.name) from None
                self._check_namespace(req)
                created = self._store_create(req, self._admit(req, applied), dry_run)
                return self._respond(request, req, self._view(req.res, created), 201, warnings)
            current = copy.deepcopy(self._view(req.res, stored))
            applied["metadata"].pop("resourceVersion", None)
            new = strategic_merge_patch(current, applied)
        else:
            stored = self._get(req)
            current = copy.deepcopy(self._view(req.res, stored))
            try:
                if ctype == _JSON_PATCH:
                    new = json_patch(current, patch)
                elif not isinstance(patch, dict):
                    raise bad_request("a merge patch must be a JSON object")
                elif ctype == _MERGE:
                    new = merge_patch(current, patch)
                else:
                    new = strategic_merge_patch(current, patch)
            except PatchError as exc:
                raise APIError(
                    422 if ctype == _JSON_PATCH else 400, "Invalid" if ctype == _JSON_PATCH else "BadRequest", str(exc)
                ) from None
            if not isinstance(new, dict):
                raise bad_request("the patch did not produce an object")
            check_decodable(req.res.kind, req.res.group, req.res.version, new)
            warnings = self._field_validation(request, req, new)
        meta = new.setdefault("metadata", {})
        if meta.get("name") != stored["metadata"]["name"] or (
            req.res.namespaced and meta.get("namespace") != stored["metadata"].get("namespace")
        ):
            raise bad_request("metadata.name and metadata.namespace may not be changed by a patch")
        new = self._unview(req.res, new)
        if req.res.group == "events.k8s.io":
            new["metadata"] = meta
        new["kind"], new["apiVersion"] = stored.get("kind", req.res.kind), stored.get("apiVersion")
        updated = self._store_update(req, stored, new, dry_run)
        return self._respond(request, req, self._view(req.res, updated), 200, warnings)

    async def _scale(self, request: web.Request, req: _Request) -> web.Response:
        """GET, PUT or PATCH a workload's Scale: only ``spec.replicas`` can change."""
        stored = self._get(req)
        if request.method == "GET":
            return _json(scale_view(stored))
        if request.method == "PUT":
            wanted = await self._body(request)
        elif request.method == "PATCH":
            ctype = (request.content_type or "").lower()
            if ctype not in (_MERGE, _STRATEGIC, _JSON_PATCH):
                raise unsupported_media_type(ctype)
            patch = await self._body(request)
            try:
                if ctype == _JSON_PATCH:
                    wanted = json_patch(scale_view(stored), patch)
                elif not isinstance(patch, dict):
                    raise bad_request("a merge patch must be a JSON object")
                else:
                    wanted = merge_patch(scale_view(stored), patch)
            except PatchError as exc:
                raise APIError(422, "Invalid", str(exc)) from None
        else:
            raise method_not_allowed()
        new = scaled(copy.deepcopy(stored), wanted)
        updated = self._store_update(req, stored, new, request.query.get("dryRun") == "All")
        return _json(scale_view(updated))

    async def _delete(self, request: web.Request, req: _Request) -> web.Response:
        assert req.name is not None
        stored = self._get(req)
        raw = await request.read()
        opts: Obj = {}
        if raw.strip():
            with contextlib.suppress(ValueError):
                opts = json.loads(raw) or {}
        if not isinstance(opts, dict) or not isinstance(opts.get("preconditions") or {}, dict):
            raise bad_request("the body of a delete must be DeleteOptions")
        pre = opts.get("preconditions") or {}
        meta = stored["metadata"]
        if pre.get("uid") and pre["uid"] != meta.get("uid"):
            raise conflict(
                req.res.plural,
                req.res.group,
                req.name,
                f"Precondition failed: UID in precondition: {pre['uid']}, UID in object meta: {meta.get('uid')}",
            )
        if pre.get("resourceVersion") and pre["resourceVersion"] != meta.get("resourceVersion"):
            raise conflict(
                req.res.plural,
                req.res.group,
                req.name,
                f"Precondition failed: ResourceVersion in precondition: {pre['resourceVersion']}, "
                f"ResourceVersion in object meta: {meta.get('resourceVersion')}",
            )
        if request.query.get("dryRun") == "All" or "All" in (opts.get("dryRun") or ()):
            return _json(self._view(req.res, stored))
        gone = self._remove(req.res.stored_as, req.namespace, req.name)
        return _json(self._view(req.res, gone))

    def _remove(self, kind: str, namespace: str | None, name: str) -> Obj:
        gone = self.store.delete(kind, namespace, name)
        if kind == "Namespace":
            # Namespace deletion takes everything in the namespace with it.
            for k in ("Pod", "Event", "Lease"):
                for obj in self.store.list(k, name)[0]:
                    with contextlib.suppress(NotFound):
                        self.store.delete(k, name, obj["metadata"]["name"])
        return gone

    def _delete_collection(self, request: web.Request, req: _Request) -> web.Response:
        match = self._selectors(request, req)
        items, _ = self.store.list(req.res.stored_as, req.namespace if req.res.namespaced else None)
        deleted = []
        for obj in [o for o in items if match(o)]:
            with contextlib.suppress(NotFound):
                deleted.append(
                    self._view(
                        req.res,
                        self._remove(req.res.stored_as, obj["metadata"].get("namespace"), obj["metadata"]["name"]),
                    )
                )
        return _json(
            {
                "kind": f"{req.res.kind}List",
                "apiVersion": req.res.group_version,
                "metadata": {"resourceVersion": str(self.store.resource_version)},
                "items": deleted,
            }
        )

    def _bind(self, namespace: str, name: str, body: Any) -> web.Response:
        if not isinstance(body, dict):
            raise bad_request("the body must be a Binding")
        check_decodable("Binding", "", "v1", body)
        target = body.get("target") or {}
        node = target.get("name")
        if not node:
            raise APIError(
                422,
                "Invalid",
                f'Binding "{name}" is invalid: target.name: Required value',
                {
                    "name": name,
                    "kind": "Binding",
                    "causes": [{"reason": "FieldValueRequired", "message": "Required value", "field": "target.name"}],
                },
            )
        if target.get("kind") not in (None, "", "Node"):
            raise APIError(
                422,
                "Invalid",
                f'Binding "{name}" is invalid: target.kind: Unsupported value: "{target["kind"]}": supported values: "Node"',
            )
        uid = (body.get("metadata") or {}).get("uid")
        try:
            pod = self.store.get("Pod", namespace, name)
            if uid and uid != pod["metadata"].get("uid"):
                raise conflict(
                    "pods/binding",
                    "",
                    name,
                    f"Precondition failed: UID in precondition: {uid}, UID in object meta: {pod['metadata'].get('uid')}",
                )
            self.store.bind(namespace, name, node)
        except NotFound:
            raise not_found("pods", "", name) from None
        except Conflict as exc:
            raise conflict("pods/binding", "", name, str(exc)) from None
        except ClusterError as exc:
            raise APIError(exc.code, "InternalError", str(exc)) from None
        return _json(_status_success(201), 201)

    # --- watch --------------------------------------------------------------------------------
    async def _watch(self, request: web.Request, req: _Request) -> web.StreamResponse:
        if self._stopping:
            raise web.HTTPServiceUnavailable(text="the server is shutting down")
        q = request.query
        match = self._selectors(request, req)
        if req.name is not None:
            by_name = req.name
            base_match = match

            def match(obj: Obj) -> bool:
                return (obj.get("metadata") or {}).get("name") == by_name and base_match(obj)

        kind = req.res.stored_as
        as_table = apitables.wants_table(request.headers.get("Accept", ""))
        include = q.get("includeObject")
        bookmarks = _truthy(q.get("allowWatchBookmarks"))
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

            def deliver(etype: str, k: str, obj: Obj, old: Obj | None) -> None:
                if k == kind:
                    watch.queue.put_nowait((etype, k, obj, old))

            unsubscribe = self.store.subscribe(deliver)
            self._watches.add(watch)
        resp = web.StreamResponse(status=200, headers={"Content-Type": "application/json"})
        resp.enable_chunked_encoding()
        try:
            await resp.prepare(request)
            if error is not None:
                await self._send(resp, "ERROR", error.status())
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
                view = self._view(req.res, obj)
                if as_table:
                    view = apitables.table(req.res, [view], int(obj["metadata"].get("resourceVersion") or 0), include)
                return _event_line(etype, view)

            async def emit_all(changes: Iterable[tuple[str, Obj, Obj | None]]) -> None:
                lines = [line for change in changes if (line := encode(*change)) is not None]
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
                        await self._send(
                            resp,
                            "BOOKMARK",
                            {
                                "kind": req.res.kind,
                                "apiVersion": req.res.group_version,
                                "metadata": {"resourceVersion": str(self.store.resource_version)},
                            },
                        )
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
            self._watches.discard(watch)
        with contextlib.suppress(ConnectionResetError, ConnectionError):
            await resp.write_eof()
        return resp

    @staticmethod
    async def _send(resp: web.StreamResponse, etype: str, obj: Obj) -> None:
        await resp.write(_event_line(etype, obj))

    # --- openapi ------------------------------------------------------------------------------
    def _openapi(self, rest: list[str]) -> web.Response:
        if rest == ["v2"]:
            return _json(openapi.v2_document())
        if rest == ["v3"]:
            return _json(openapi.v3_index())
        if len(rest) >= 2 and rest[0] == "v3":
            doc = openapi.v3_document("/".join(rest[1:]))
            if doc is not None:
                return _json(doc)
        raise APIError(404, "NotFound", "the server could not find the requested resource")


# --- CLI helpers -------------------------------------------------------------------------------


async def serve(store: Store, host: str = "127.0.0.1", port: int = 0) -> APIServer:
    """Start an API server over ``store`` and return it (call ``await server.stop()`` to end)."""
    server = APIServer(store, host, port)
    await server.start()
    return server


def load_scenario_into(store: Store, scenario: Any) -> None:
    """Create a parsed scenario's objects in ``store`` as the API server would admit them:
    namespaces (the defaults, the declared ones and any a pod or claim uses), priority classes,
    storage and disruption objects (``scenario.others``), nodes, running pods, then pending pods
    with priority admission."""
    from kubesched.sim.scenario.reading import admit_pod

    def ensure_ns(name: str, obj: Obj | None = None) -> None:
        try:
            store.get("Namespace", None, name)
        except NotFound:
            store.create(
                "Namespace", admit_new("Namespace", "", copy.deepcopy(obj or {"metadata": {"name": name}}), {})
            )

    for ns in DEFAULT_NAMESPACES:
        ensure_ns(ns)
    for ns_obj in scenario.namespaces:
        ensure_ns(ns_obj["metadata"]["name"], ns_obj)
    for pc in scenario.priority_classes:
        obj = copy.deepcopy(pc)
        obj.setdefault("apiVersion", "scheduling.k8s.io/v1")
        obj.setdefault("preemptionPolicy", "PreemptLowerPriority")
        store.create("PriorityClass", obj)
    for other in getattr(scenario, "others", ()):
        kind = other["kind"]
        if kind not in CLUSTER_SCOPED:
            ensure_ns(other["metadata"].get("namespace") or "default")
        store.create(kind, copy.deepcopy(other))
    for node in scenario.nodes:
        store.create("Node", node)
    classes = {p["metadata"]["name"]: p for p in store.list("PriorityClass")[0]}
    for pod in scenario.running_pods:
        ensure_ns(pod["metadata"].get("namespace") or "default")
        obj = admit_pod(copy.deepcopy(pod), classes)
        store.create("Pod", obj)
    for pod in scenario.pending_pods:
        ensure_ns(pod["metadata"].get("namespace") or "default")
        obj = admit_pod(copy.deepcopy(pod), classes)
        obj.setdefault("status", {}).setdefault("phase", "Pending")
        store.create("Pod", obj)
