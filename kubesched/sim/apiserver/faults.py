"""Fault injection for the embedded API server: the failures a real API server shows under load,
switched on by tests and benchmarks to see whether a client survives them.

A configuration is a seed and a list of rules (YAML for ``sim serve --faults FILE``, JSON for
``PUT /kubesched/faults``)::

    seed: 7
    faults:
      - {kind: latency, seconds: 0.005, jitter: 0.02}          # every request, 5-25 ms later
      - {kind: error, rate: 0.01, code: 503, verbs: [create]}   # 1% of creates: 503 Status
      - {kind: throttle, rate: 0.02, retryAfter: 1}             # 429 + Retry-After, as APF does
      - {kind: conflict, rate: 0.05}                            # pods/binding: bound, yet 409
      - {kind: unserved, resources: [devicetaintrules]}         # 404: a kind an older server lacks
      - {kind: reset, rate: 0.005, resources: ["pods/binding"]} # connection reset (TCP RST)
      - {kind: watchDrop, rate: 1.0, after: [5, 30]}            # watches end after 5-30 s
      - {kind: gone, rate: 0.1}                                 # re-watch answered 410 Expired
      - {kind: stall, every: 30, seconds: 2}                    # every 30 s, 2 s of silence

Every rule but ``stall`` fires on a request with probability ``rate`` (default 1) and may be
narrowed to ``verbs`` (get, list, watch, create, update, patch, delete, deletecollection) and
``resources`` (RBAC-style: ``pods`` is the pod itself, ``pods/binding`` its subresource,
``pods/*`` every subresource, ``*`` everything; the API group is not part of the name). Only
resource requests are touched: discovery, OpenAPI, /version and health checks never are.

Rules compose in list order: each one that fires adds its latency, and the first that fires
with an answer of its own (throttle, unserved, gone, reset, error, conflict; with ``phase: after``, once
the request is done) answers it. Every ``watchDrop`` rule that fires on a watch draws its own
time, and the watch is dropped by the one whose time comes first, in that rule's ``mode``: a 50%
``reset`` rule before a 100% ``end`` rule resets the watches where the reset rule fires and
draws the earlier time, and ends the others.

``phase: before`` (the default) fails a request without doing it; ``phase: after`` does it and
then fails the response, as when the server commits a write but the reply is lost — the case a
client must not mistake for a failure.

Whether a rule fires is drawn from ``(seed, rule index, method, path, how many times this
method and path were requested)``: the same requests meet the same faults in every run,
however concurrent requests interleave.

The injector also counts bindings per pod (``GET /kubesched/stats``), so a soak test can prove
that no pod was bound twice. A pod's counts go with the pod (:meth:`FaultInjector.pod_deleted`),
so a server that creates and deletes pods for ever keeps the counts of the pods that exist; the
totals run on, and a pod bound more than once stays in ``podsBoundMoreThanOnce`` after it is gone.
"""

from __future__ import annotations

import asyncio
import random
import socket
import struct
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from kubesched.decoding import DecodeError, Limits, load_json, load_yaml, read_text
from kubesched.errors import ConfigurationError
from kubesched.objects import Obj
from kubesched.sim.apiserver.discovery import split_resource_path
from kubesched.sim.apiserver.errors import APIError
from kubesched.sim.apiserver.responses import compact_json, event_line

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

#: The prefix of the injector's own endpoints; requests under it are never faulted.
ENDPOINT = "/kubesched"
_UNDER_ENDPOINT = ENDPOINT + "/"

VERBS = ("get", "list", "watch", "create", "update", "patch", "delete", "deletecollection")


class FaultConfigError(ConfigurationError):
    """A fault configuration that cannot be used; the message names the field and the reason."""


# --- configuration ---------------------------------------------------------------------------------


class _Rule(BaseModel):
    model_config = ConfigDict(extra="forbid")

    rate: float = Field(1.0, ge=0.0, le=1.0)
    verbs: list[Literal["get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"]] = []
    resources: list[str] = []

    def matches(self, verb: str, resource: str) -> bool:
        if self.verbs and verb not in self.verbs:
            return False
        if not self.resources:
            return True
        main = resource.split("/", 1)[0]
        return any(
            r in ("*", resource) or (r.endswith("/*") and r[:-2] == main and "/" in resource) for r in self.resources
        )


class Latency(_Rule):
    """Answer ``seconds`` plus a uniform ``[0, jitter)`` later."""

    kind: Literal["latency"]
    seconds: float = Field(0.0, ge=0.0, le=600.0)
    jitter: float = Field(0.0, ge=0.0, le=600.0)


class ServerError(_Rule):
    """Answer 500 InternalError or 503 ServiceUnavailable with a Status body."""

    kind: Literal["error"]
    code: Literal[500, 503] = 500
    phase: Literal["before", "after"] = "before"


class Throttle(_Rule):
    """Answer 429 with ``Retry-After``, as priority-and-fairness rejects a request."""

    kind: Literal["throttle"]
    retryAfter: int = Field(1, ge=1, le=3600)


class Unserved(_Rule):
    """Answer 404 NotFound, as an API server that does not serve the resource at all (one older
    than the kind: a 1.36 server and resource.k8s.io/v1 DeviceTaintRules)."""

    kind: Literal["unserved"]


class BindConflict(_Rule):
    """Answer a binding (``pods/binding``, legacy ``bindings``) with 409 Conflict.

    ``after`` (the default) binds, then answers "pod P is already assigned to node N": what a
    client sees when it retries a binding whose first answer was lost. ``before`` does not bind
    and answers the optimistic-lock message; a real server's binding retries such write
    conflicts itself and never answers it, so this tests only that a client does not give up on
    a pod that a 409 left unbound."""

    kind: Literal["conflict"]
    phase: Literal["before", "after"] = "after"


class Reset(_Rule):
    """Reset the connection (TCP RST) instead of answering."""

    kind: Literal["reset"]
    phase: Literal["before", "after"] = "before"


class WatchDrop(_Rule):
    """End a watch after a uniform ``after[0]..after[1]`` seconds: ``end`` closes the stream
    cleanly (as the server's own watch timeout does), ``reset`` resets the connection."""

    kind: Literal["watchDrop"]
    after: tuple[float, float] = (1.0, 10.0)
    mode: Literal["end", "reset"] = "end"

    @model_validator(mode="after")
    def _ordered(self) -> WatchDrop:
        lo, hi = self.after
        if lo < 0 or hi < lo:
            raise ValueError(f"after must be [min, max] seconds with 0 <= min <= max, not [{lo}, {hi}]")
        return self


class Gone(_Rule):
    """Answer a watch that resumes from a resourceVersion with an ERROR event carrying a 410
    Expired Status ("too old resource version"), after which clients relist."""

    kind: Literal["gone"]


class Stall(BaseModel):
    """Every ``every`` seconds (counted from when the configuration was applied) hold every
    request and response — watch events included — for the last ``seconds`` of the period."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["stall"]
    every: float = Field(gt=0.0)
    seconds: float = Field(gt=0.0)

    @model_validator(mode="after")
    def _fits(self) -> Stall:
        if self.seconds >= self.every:
            raise ValueError(f"seconds ({self.seconds}) must be shorter than every ({self.every})")
        return self


Rule = Annotated[
    Latency | ServerError | Throttle | Unserved | BindConflict | Reset | WatchDrop | Gone | Stall,
    Field(discriminator="kind"),
]


class FaultConfig(BaseModel):
    """A seed and the rules, in the order they are checked."""

    model_config = ConfigDict(extra="forbid")

    seed: int = 0
    faults: list[Rule] = []


def parse_config(data: Any, source: str = "faults") -> FaultConfig:
    """Validate a fault configuration (a mapping); :class:`FaultConfigError` names the field."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise FaultConfigError(f"{source}: must be a mapping with 'seed' and 'faults', not {type(data).__name__}")
    try:
        return FaultConfig.model_validate(data)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            loc = ".".join(str(p) if not isinstance(p, int) else f"[{p}]" for p in err["loc"]).replace(".[", "[")
            problems.append(f"{loc or '(top)'}: {err['msg']}")
        raise FaultConfigError(f"{source}: " + "; ".join(problems)) from None


#: A fault configuration is a few rules: a small document, bounded like every input.
FAULT_CONFIG_LIMITS = Limits(max_bytes=1024 * 1024)


def load_config(path: str | Path) -> FaultConfig:
    """Read and validate a YAML (or JSON) fault configuration file."""
    try:
        text = read_text(path, FAULT_CONFIG_LIMITS.max_bytes)
    except OSError as exc:
        raise FaultConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except DecodeError as exc:
        raise FaultConfigError(f"{path}: {exc}") from None
    try:
        data = load_yaml(text, FAULT_CONFIG_LIMITS)
    except (yaml.YAMLError, DecodeError) as exc:
        raise FaultConfigError(f"{path}: not valid YAML: {exc}") from None
    return parse_config(data, str(path))


# --- requests --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RequestInfo:
    """The verb and resource of a resource request, as the API server's RequestInfo resolves them."""

    verb: str
    resource: str  # plural, or plural/subresource
    namespace: str | None
    name: str | None


def request_info(method: str, path: str, query: Any) -> RequestInfo | None:
    """The verb and resource of ``method path``, or None for a non-resource request."""
    parts = [p for p in path.split("/") if p]
    if len(parts) >= 2 and parts[0] == "api" and parts[1] == "v1":
        group, version, rest = "", "v1", parts[2:]
    elif len(parts) >= 3 and parts[0] == "apis":
        group, version, rest = parts[1], parts[2], parts[3:]
    else:
        return None
    watch, namespace, rest = split_resource_path(group, version, rest)
    if not rest:
        return None
    plural = rest[0]
    name = rest[1] if len(rest) > 1 else None
    resource = f"{plural}/{rest[2]}" if len(rest) > 2 else plural
    watch = watch or str(query.get("watch", "")).lower() in ("true", "1")
    if method in ("GET", "HEAD"):
        verb = "watch" if watch else "get" if name is not None else "list"
    elif method == "POST":
        verb = "create"
    elif method == "PUT":
        verb = "update"
    elif method == "PATCH":
        verb = "patch"
    elif method == "DELETE":
        verb = "delete" if name is not None else "deletecollection"
    else:
        return None
    return RequestInfo(verb, resource, namespace, name)


def _is_binding(info: RequestInfo) -> bool:
    return info.verb == "create" and info.resource in ("pods/binding", "bindings")


def _status(code: int, reason: str, message: str, details: Obj | None = None) -> Obj:
    body: Obj = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }
    if details:
        body["details"] = details
    return body


def _json(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> web.Response:
    return web.Response(
        body=compact_json(body).encode(),
        status=status,
        headers={"Content-Type": "application/json", **(headers or {})},
    )


def _reset_transport(request: web.Request) -> None:
    """Close the connection with a TCP RST (SO_LINGER 0), so the client sees a reset, not an EOF."""
    transport = request.transport
    if transport is None:
        return
    sock = transport.get_extra_info("socket")
    if sock is not None:
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        except OSError:
            pass
    transport.abort()


def _reset(request: web.Request) -> web.Response:
    """Reset the connection; the response returned is never sent (aiohttp finds the transport
    closed and drops it quietly)."""
    _reset_transport(request)
    return web.Response(status=500)


# --- the injector ----------------------------------------------------------------------------------


class FaultInjector:
    """Applies a :class:`FaultConfig` to the requests an aiohttp application hands to
    :meth:`serve` (its streamed answers gated by :meth:`install`)
    and serves ``/kubesched/faults`` and ``/kubesched/stats``.

    ``drop_watches`` ends every open watch (for ``POST /kubesched/faults/drop-watches``);
    ``resource_version`` tells the store's current resourceVersion (for 410 messages);
    ``authenticate`` checks a request to those endpoints and raises :class:`APIError` (401) to
    refuse it — whoever may switch faults on can break every client of the server.
    """

    def __init__(
        self,
        drop_watches: Callable[[], None] | None = None,
        resource_version: Callable[[], int] | None = None,
        authenticate: Callable[[web.Request], object] | None = None,
    ) -> None:
        self._drop_watches = drop_watches
        self._resource_version = resource_version
        self._authenticate = authenticate
        self.config = FaultConfig()
        self._since = time.monotonic()
        self._seen: Counter[str] = Counter()
        #: faults that fired, by kind
        self.fired: Counter[str] = Counter()
        self._stall_until = 0.0
        # Per pod ("namespace/name"), for the pods that exist: an entry goes with its pod.
        #: successful bindings per pod
        self.binds: Counter[str] = Counter()
        #: bindings the server itself refused with 409 (already assigned) per pod
        self.bind_conflicts: Counter[str] = Counter()
        #: wall-clock time of each pod's first successful binding
        self.first_bound: dict[str, float] = {}
        # For the server's life.
        #: successful bindings in all
        self.bind_total = 0
        #: pods bound at least once (a name created again, and bound again, counts again)
        self.bound_pods = 0
        #: bindings refused with 409 in all
        self.conflict_total = 0
        #: pods bound more than once that are gone: the evidence outlives them
        self.rebound_gone: set[str] = set()

    # --- switching -----------------------------------------------------------------------------
    def configure(self, config: FaultConfig) -> None:
        """Replace the rules; counters of fired faults and the per-path draws start again."""
        self.config = config
        self._since = time.monotonic()
        self._seen.clear()
        self.fired.clear()

    def clear(self) -> None:
        """No faults from now on (counters of bindings are kept)."""
        self.configure(FaultConfig())

    def stall(self, seconds: float) -> None:
        """Hold every request and response for ``seconds`` from now."""
        self._stall_until = max(self._stall_until, time.monotonic() + seconds)
        self.fired["stall"] += 1

    @property
    def active(self) -> bool:
        return bool(self.config.faults) or self._stall_until > time.monotonic()

    def install(self, app: web.Application) -> None:
        """Add the watch-stream gate to ``app`` (before it is started); the application hands
        every request to :meth:`serve`."""
        app.on_response_prepare.append(self._gate_stream)

    # --- stalls --------------------------------------------------------------------------------
    def _stall_left(self) -> float:
        now = time.monotonic()
        left = self._stall_until - now
        for rule in self.config.faults:
            if isinstance(rule, Stall):
                phase = (now - self._since) % rule.every
                start = rule.every - rule.seconds
                if phase >= start:
                    left = max(left, rule.every - phase)
        return left

    async def _wait_stall(self) -> bool:
        """Sleep out a stall in progress; True if there was one."""
        held = False
        while (left := self._stall_left()) > 0:
            held = True
            await asyncio.sleep(left)
        return held

    async def _gate_stream(self, request: web.Request, response: web.StreamResponse) -> None:
        # Watch events are written long after serve() let the request through: a stall
        # holds them at each write (of a streamed answer: chunked over HTTP/1.1, until the close
        # over HTTP/1.0; an answer whose body is whole goes out in one).
        if isinstance(response, web.Response):
            return
        write = response.write

        async def gated(data: bytes | bytearray | memoryview) -> None:
            if self._stall_until or self.config.faults:
                await self._wait_stall()
            await write(data)

        response.write = gated  # type: ignore[method-assign]

    # --- draws ---------------------------------------------------------------------------------
    def _draws(self, method: str, path: str) -> Callable[[int], random.Random]:
        key = f"{method} {path}"
        n = self._seen[key]
        self._seen[key] = n + 1
        seed = self.config.seed

        def rng(index: int) -> random.Random:
            return random.Random(f"{seed}/{index}/{key}/{n}")

        return rng

    # --- serving -------------------------------------------------------------------------------
    async def serve(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        """Answer ``request``: the injector's own endpoints here, any other request by
        ``handler``, the faults that fire applied and bindings counted."""
        path = request.path
        if path == ENDPOINT or path.startswith(_UNDER_ENDPOINT):
            return await self._endpoint(request)
        if not self.active:
            # Nothing to inject: only a binding (a create of pods/binding or bindings, whose
            # path names it) is looked at, to be counted.
            if request.method != "POST" or "binding" not in path:
                return await handler(request)
            info = request_info(request.method, path, request.query)
            if info is None:
                return await handler(request)
            return await self._observe(request, info, handler)
        info = request_info(request.method, path, request.query)
        if info is None:
            return await handler(request)
        return await self._inject(request, info, handler)

    async def _inject(self, request: web.Request, info: RequestInfo, handler: Handler) -> web.StreamResponse:
        if await self._wait_stall():
            self.fired["stalled-request"] += 1
        rng = self._draws(request.method, request.path)
        after: list[tuple[int, ServerError | BindConflict | Reset]] = []
        drop: tuple[float, str] | None = None
        for index, rule in enumerate(self.config.faults):
            if isinstance(rule, Stall) or not rule.matches(info.verb, info.resource):
                continue
            if isinstance(rule, BindConflict) and not _is_binding(info):
                continue
            if isinstance(rule, Gone) and not self._resumes(request, info):
                continue
            if isinstance(rule, WatchDrop) and info.verb != "watch":
                continue
            draw = rng(index)
            if draw.random() >= rule.rate:
                continue
            if isinstance(rule, Latency):
                self.fired["latency"] += 1
                await asyncio.sleep(rule.seconds + draw.random() * rule.jitter)
            elif isinstance(rule, Throttle):
                self.fired["throttle"] += 1
                return self._throttled(rule)
            elif isinstance(rule, Unserved):
                self.fired["unserved"] += 1
                return _json(_status(404, "NotFound", "the server could not find the requested resource"), 404)
            elif isinstance(rule, Gone):
                self.fired["gone"] += 1
                return await self._gone(request)
            elif isinstance(rule, WatchDrop):
                lo, hi = rule.after
                seconds = lo + draw.random() * (hi - lo)
                # Rules that fire are independent failures: the first to strike ends the watch,
                # its own way (a tie goes to the rule listed first).
                if drop is None or seconds < drop[0]:
                    drop = (seconds, rule.mode)
            elif rule.phase == "after" and info.verb != "watch":
                after.append((index, rule))
            elif isinstance(rule, Reset):
                self.fired["reset"] += 1
                return _reset(request)
            elif isinstance(rule, ServerError):
                self.fired[f"error-{rule.code}"] += 1
                return self._server_error(rule.code)
            elif isinstance(rule, BindConflict):
                self.fired["conflict"] += 1
                return self._conflict(info, await self._binding_name(request, info), None)
        if drop is not None:
            return await self._dropped_watch(request, handler, *drop)
        response = await self._observe(request, info, handler)
        for _, rule in after:
            if isinstance(rule, BindConflict):
                if response.status != 201:
                    continue  # the binding failed on its own: nothing to disguise
                self.fired["conflict-after"] += 1
                name = await self._binding_name(request, info)
                return self._conflict(info, name, await self._binding_node(request))
            if isinstance(rule, ServerError):
                self.fired[f"error-{rule.code}-after"] += 1
                return self._server_error(rule.code)
            self.fired["reset-after"] += 1
            return _reset(request)
        if await self._wait_stall():
            self.fired["stalled-response"] += 1
        return response

    async def _observe(self, request: web.Request, info: RequestInfo, handler: Handler) -> web.StreamResponse:
        """Run the request; count what a binding did."""
        response = await handler(request)
        if _is_binding(info):
            key = f"{info.namespace or 'default'}/{await self._binding_name(request, info)}"
            if response.status == 201:
                self.binds[key] += 1
                self.bind_total += 1
                if key not in self.first_bound:
                    self.first_bound[key] = time.time()
                    self.bound_pods += 1
            elif response.status == 409:
                self.bind_conflicts[key] += 1
                self.conflict_total += 1
        return response

    def pod_deleted(self, namespace: str, name: str) -> None:
        """Forget a deleted pod's counts, keeping the evidence if it was bound more than once."""
        key = f"{namespace or 'default'}/{name}"
        if self.binds.pop(key, 0) > 1:
            self.rebound_gone.add(key)
        self.bind_conflicts.pop(key, None)
        self.first_bound.pop(key, None)

    def on_store_write(self, etype: str, kind: str, obj: Obj, old: Obj | None) -> None:
        """A store subscriber (:meth:`kubesched.cluster.store.Store.subscribe`): a pod's counts
        go when the pod does."""
        if etype == "DELETED" and kind == "Pod":
            meta = obj.get("metadata") or {}
            self.pod_deleted(meta.get("namespace") or "default", meta.get("name", ""))

    @staticmethod
    def _resumes(request: web.Request, info: RequestInfo) -> bool:
        rv = request.query.get("resourceVersion") or ""
        return info.verb == "watch" and rv not in ("", "0")

    @staticmethod
    async def _body(request: web.Request) -> Obj:
        try:
            body = load_json(await request.read() or b"{}")
        except ValueError:
            return {}
        return body if isinstance(body, dict) else {}

    async def _binding_name(self, request: web.Request, info: RequestInfo) -> str:
        if info.resource == "pods/binding" and info.name:
            return info.name
        meta = (await self._body(request)).get("metadata")
        return str((meta.get("name") if isinstance(meta, dict) else "") or "")

    async def _binding_node(self, request: web.Request) -> str:
        target = (await self._body(request)).get("target")
        return str((target.get("name") if isinstance(target, dict) else "") or "")

    # --- fault responses -----------------------------------------------------------------------
    @staticmethod
    def _throttled(rule: Throttle) -> web.Response:
        # Priority-and-fairness answers with a plain-text body, not a Status.
        return web.Response(
            status=429,
            text="Too many requests, please try again later.\n",
            headers={"Retry-After": str(rule.retryAfter), "X-Content-Type-Options": "nosniff"},
            content_type="text/plain",
            charset="utf-8",
        )

    @staticmethod
    def _server_error(code: int) -> web.Response:
        if code == 503:
            body = _status(503, "ServiceUnavailable", "the server is currently unable to handle the request")
        else:
            cause = "etcdserver: request timed out"
            body = _status(500, "InternalError", f"Internal error occurred: {cause}", {"causes": [{"message": cause}]})
        return _json(body, code)

    @staticmethod
    def _conflict(info: RequestInfo, name: str, node: str | None) -> web.Response:
        why = (
            f'pod {name} is already assigned to node "{node}"'
            if node is not None
            else "the object has been modified; please apply your changes to the latest version and try again"
        )
        details = {"name": name, "kind": "pods/binding" if info.resource == "pods/binding" else "bindings"}
        message = f'Operation cannot be fulfilled on {details["kind"]} "{name}": {why}'
        return _json(_status(409, "Conflict", message, details), 409)

    async def _gone(self, request: web.Request) -> web.StreamResponse:
        rv = request.query.get("resourceVersion", "")
        oldest = self._resource_version() if self._resource_version is not None else 0
        status = _status(410, "Expired", f"too old resource version: {rv} ({oldest})")
        resp = web.StreamResponse(status=200, headers={"Content-Type": "application/json"})
        await resp.prepare(request)  # chunked over HTTP/1.1, until the close over HTTP/1.0
        await resp.write(event_line("ERROR", status))
        await resp.write_eof()
        return resp

    async def _dropped_watch(
        self, request: web.Request, handler: Handler, seconds: float, mode: str
    ) -> web.StreamResponse:
        self.fired[f"watch-drop-{mode}"] += 1
        if mode == "end":
            # The server's own watch timeout, shortened: the stream ends cleanly.
            asked = request.query.get("timeoutSeconds")
            try:
                seconds = min(seconds, float(asked)) if asked else seconds
            except ValueError:
                pass
            shortened = request.clone(rel_url=request.rel_url.update_query(timeoutSeconds=f"{seconds:.3f}"))
            return await handler(shortened)
        timer = asyncio.get_running_loop().call_later(seconds, _reset_transport, request)
        try:
            return await handler(request)
        finally:
            timer.cancel()

    # --- endpoints -----------------------------------------------------------------------------
    def snapshot(self) -> Obj:
        """What ``GET /kubesched/faults`` answers: the configuration and what fired."""
        return {
            **self.config.model_dump(mode="json"),
            "fired": dict(sorted(self.fired.items())),
            "stalledFor": round(max(0.0, self._stall_left()), 3),
        }

    def stats(self, per_pod: bool = True) -> Obj:
        """What ``GET /kubesched/stats`` answers: bindings per pod that exists (``?pods=false``:
        the totals alone, for a poller that must not cost the server work that grows with the
        pods). The totals count since the server started; ``podsBoundMoreThanOnce`` names the
        pods that were, deleted ones too."""
        pods: dict[str, Obj] = {}
        for key in sorted(set(self.binds) | set(self.bind_conflicts)) if per_pod else ():
            entry: Obj = {"binds": self.binds.get(key, 0), "conflicts": self.bind_conflicts.get(key, 0)}
            if key in self.first_bound:
                entry["firstBoundAt"] = self.first_bound[key]
            pods[key] = entry
        totals: Obj = {"binds": self.bind_total, "boundPods": self.bound_pods}
        if not per_pod:
            return totals
        return {
            **totals,
            "podsBoundMoreThanOnce": sorted({k for k, n in self.binds.items() if n > 1} | self.rebound_gone),
            "bindConflicts": self.conflict_total,
            "pods": pods,
        }

    async def _endpoint(self, request: web.Request) -> web.StreamResponse:
        if self._authenticate is not None:
            try:
                self._authenticate(request)
            except APIError as exc:
                return _json(exc.status(), exc.code)
        path = request.path.rstrip("/")
        method = request.method
        if path == f"{ENDPOINT}/faults":
            if method == "GET":
                return _json(self.snapshot())
            if method == "DELETE":
                self.clear()
                return _json(self.snapshot())
            if method == "PUT":
                try:
                    data = load_json(await request.read() or b"{}", FAULT_CONFIG_LIMITS)
                    self.configure(parse_config(data, "body"))
                except ValueError as exc:  # FaultConfigError, or JSON that does not parse
                    return _json(_status(422, "Invalid", f"invalid fault configuration: {exc}"), 422)
                return _json(self.snapshot())
        elif path == f"{ENDPOINT}/faults/stall" and method == "POST":
            try:
                seconds = float(request.query.get("seconds", ""))
                if not 0 < seconds <= 600:
                    raise ValueError
            except ValueError:
                return _json(_status(400, "BadRequest", "seconds: must be a number in (0, 600]"), 400)
            self.stall(seconds)
            return _json(self.snapshot())
        elif path == f"{ENDPOINT}/faults/drop-watches" and method == "POST":
            if self._drop_watches is not None:
                self._drop_watches()
            self.fired["watch-drop-all"] += 1
            return _json(self.snapshot())
        elif path == f"{ENDPOINT}/stats" and method == "GET":
            return _json(self.stats(per_pod=request.query.get("pods") != "false"))
        elif path in (f"{ENDPOINT}/faults", f"{ENDPOINT}/stats", f"{ENDPOINT}/faults/stall"):
            return _json(_status(405, "MethodNotAllowed", f"{method} is not allowed on {path}"), 405)
        return _json(_status(404, "NotFound", f"{path}: no such endpoint"), 404)
