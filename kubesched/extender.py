"""HTTP scheduler extenders: the client the scheduler calls, and a server to write one with.

An extender is a web service that kube-scheduler consults over HTTP (``POST <urlPrefix>/<verb>``
with a JSON body) after its own Filter and Score plugins, and optionally for preemption and
binding. The wire format is upstream's ``k8s.io/kube-scheduler/extender/v1``: Go structs
without JSON tags, so every key is PascalCase (``Pod``, ``Nodes``, ``NodeNames``,
``FailedNodes`` ...) while the Kubernetes objects inside keep their usual camelCase.

Client side (what the scheduler uses)::

    ext = HTTPExtender(config.extenders[0])          # a validated config.models.Extender
    feasible, failed, unresolvable = await ext.filter(pod_info, node_infos)
    scores, weight = await ext.prioritize(pod_info, node_infos)   # scores: [(host, 0..10)]
    await ext.bind(pod_info, "node-1")
    victims = await ext.process_preemption(pod_info, {"node-1": Victims([...])}, snapshot)
    await ext.close()

plus the loops the scheduler runs over all extenders, with upstream's semantics:
:func:`find_nodes_that_pass_extenders`, :func:`prioritize_with_extenders`,
:func:`preempt_with_extenders` and :func:`binder_for`.

Server side (what an extender author uses)::

    app = make_extender_app(filter=my_filter, prioritize=my_prioritize)
    run_extender(app, "0.0.0.0", 8888)

Errors: everything that goes wrong while talking to an extender (connection refused, timeout,
non-200 answer, undecodable body, an ``Error`` in the result, an answer naming a node that was
not asked about) is an :class:`ExtenderError`. Whether it fails the pod is the caller's
decision, made with :meth:`HTTPExtender.is_ignorable`, as upstream does.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import inspect
import json
import os
import ssl
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import aiohttp
from aiohttp import web

from kubesched.framework import MAX_NODE_SCORE, Code, NodeInfo, PodInfo, Status

__all__ = [
    "DEFAULT_EXTENDER_TIMEOUT",
    "MAX_EXTENDER_PRIORITY",
    "MIN_EXTENDER_PRIORITY",
    "ExtenderError",
    "ExtenderServer",
    "ExtenderSpec",
    "HTTPExtender",
    "Victims",
    "binder_for",
    "find_nodes_that_pass_extenders",
    "make_extender_app",
    "preempt_with_extenders",
    "prioritize_with_extenders",
    "run_extender",
    "serve_extender",
]

DEFAULT_EXTENDER_TIMEOUT = 5.0
"""Seconds an extender call may take when ``httpTimeout`` is unset or zero (upstream's 5s)."""
MIN_EXTENDER_PRIORITY = 0
MAX_EXTENDER_PRIORITY = 10
"""An extender scores nodes 0..10; the scheduler scales that to its own 0..100 range."""

Obj = dict[str, Any]


class ExtenderError(Exception):
    """A call to an extender failed; ``extender`` is its name (urlPrefix), ``verb`` the call."""

    def __init__(self, message: str, *, extender: str = "", verb: str = "") -> None:
        super().__init__(message)
        self.extender = extender
        self.verb = verb


@dataclass
class Victims:
    """The pods a preemption would evict on one node (upstream ``extenderv1.Victims``)."""

    pods: list[PodInfo] = field(default_factory=list)
    num_pdb_violations: int = 0


class ExtenderTLSSpec(Protocol):
    """``tlsConfig`` of an extender entry (``kubesched.config.models.ExtenderTLSConfig``)."""

    insecure: bool
    serverName: str
    certFile: str
    keyFile: str
    caFile: str
    certData: str
    keyData: str
    caData: str


class ManagedResourceSpec(Protocol):
    name: str


class ExtenderSpec(Protocol):
    """One validated ``extenders[]`` entry: ``kubesched.config.models.Extender`` fits it.

    Taken as a protocol rather than imported, so the scheduling core may use this module without
    depending on the config package; ``httpTimeout`` is in seconds (``None`` or 0: the default).
    """

    urlPrefix: str
    filterVerb: str
    preemptVerb: str
    prioritizeVerb: str
    weight: int
    bindVerb: str
    enableHTTPS: bool
    tlsConfig: Any
    httpTimeout: float | None
    nodeCacheCapable: bool
    managedResources: Any
    ignorable: bool


class NodeInfoLister(Protocol):
    """Anything that finds a NodeInfo by node name: the cache Snapshot, or a plain dict."""

    def get(self, name: str, /) -> NodeInfo | None: ...


# --- wire helpers ----------------------------------------------------------------------------------


def _field(obj: Any, key: str) -> Any:
    """``obj[key]`` as Go's JSON decoder finds it: the exact key first, then case-insensitively."""
    if not isinstance(obj, dict):
        return None
    if key in obj:
        return obj[key]
    low = key.lower()
    for k, v in obj.items():
        if isinstance(k, str) and k.lower() == low:
            return v
    return None


def _string_map(value: Any, what: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ValueError(f"{what}: expected an object, got {type(value).__name__}")
    return {str(k): "" if v is None else str(v) for k, v in value.items()}


def _as_int64(value: Any, what: str) -> int:
    # Go decodes JSON numbers into int64 only when they are whole; anything else is an error.
    if isinstance(value, bool) or value is None:
        raise ValueError(f"{what}: expected an integer, got {value!r}")
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    raise ValueError(f"{what}: expected an integer, got {value!r}")


def _node_name(node: Any) -> str:
    if isinstance(node, str):
        return node
    meta = node.get("metadata") if isinstance(node, dict) else None
    return str((meta or {}).get("name", ""))


def _decode_bytes(text: str, what: str) -> bytes:
    """A ``[]byte`` config field: base64 in YAML; PEM text is taken as it is for convenience."""
    if "-----BEGIN" in text:
        return text.encode()
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ExtenderError(f"tlsConfig.{what}: not valid base64: {exc}") from exc


def _ssl_context(config: ExtenderSpec) -> ssl.SSLContext | None:
    """The TLS settings of upstream's ``makeTransport``: with ``enableHTTPS`` and no CA the
    server certificate is not verified; ``None`` means the default (system roots)."""
    tls: ExtenderTLSSpec | None = config.tlsConfig
    insecure = bool(tls and tls.insecure)
    ca_data = _decode_bytes(tls.caData, "caData") if tls and tls.caData else b""
    ca_file = tls.caFile if tls else ""
    has_ca = bool(ca_data or ca_file)
    if config.enableHTTPS and not has_ca:
        insecure = True
    cert_data = _decode_bytes(tls.certData, "certData") if tls and tls.certData else b""
    key_data = _decode_bytes(tls.keyData, "keyData") if tls and tls.keyData else b""
    cert_file = tls.certFile if tls else ""
    key_file = tls.keyFile if tls else ""
    has_cert = bool(cert_data or cert_file or key_data or key_file)
    if not (insecure or has_ca or has_cert or (tls and tls.serverName)):
        return None
    if insecure and has_ca:
        raise ExtenderError("specifying a root certificates file with the insecure flag is not allowed")
    ctx = ssl.create_default_context()
    if insecure:
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    elif has_ca:
        # Inline data wins over a file, as client-go's dataFromSliceOrFile decides.
        if ca_data:
            ctx.load_verify_locations(cadata=ca_data.decode())
        else:
            ctx.load_verify_locations(cafile=ca_file)
    if has_cert:
        _load_client_cert(ctx, cert_data, key_data, cert_file, key_file)
    return ctx


def _load_client_cert(ctx: ssl.SSLContext, cert_data: bytes, key_data: bytes, cert_file: str, key_file: str) -> None:
    if not (cert_data or cert_file) or not (key_data or key_file):
        raise ExtenderError("tlsConfig: a client certificate needs both a certificate and a key")
    if not cert_data and not key_data:
        ctx.load_cert_chain(cert_file, key_file)
        return
    # ssl only loads a key pair from files: write the inline data to a private temporary folder.
    with tempfile.TemporaryDirectory() as tmp:
        if cert_data:
            cert_file = os.path.join(tmp, "cert.pem")
            with open(cert_file, "wb") as f:
                f.write(cert_data)
        if key_data:
            key_file = os.path.join(tmp, "key.pem")
            with open(key_file, "wb") as f:
                f.write(key_data)
        ctx.load_cert_chain(cert_file, key_file)


# --- the client ------------------------------------------------------------------------------------


class HTTPExtender:
    """One configured extender (a validated ``extenders[]`` entry), talking upstream's wire format.

    The HTTP session is created lazily on first use inside the running event loop and closed by
    :meth:`close`; every call is bounded by ``httpTimeout`` (default 5s).
    """

    def __init__(self, config: ExtenderSpec) -> None:
        self.config = config
        self.url_prefix = config.urlPrefix
        self.filter_verb = config.filterVerb
        self.prioritize_verb = config.prioritizeVerb
        self.preempt_verb = config.preemptVerb
        self.bind_verb = config.bindVerb
        self.weight = config.weight
        self.node_cache_capable = config.nodeCacheCapable
        self.ignorable = config.ignorable
        self.managed_resources = frozenset(r.name for r in config.managedResources)
        self.timeout = config.httpTimeout or DEFAULT_EXTENDER_TIMEOUT
        self.server_name = config.tlsConfig.serverName if config.tlsConfig else ""
        try:
            self._ssl = _ssl_context(config)
        except ExtenderError as exc:
            raise ExtenderError(f"extender {self.name}: {exc}", extender=self.name) from exc
        except (OSError, ValueError) as exc:  # unreadable or invalid certificate files and data
            raise ExtenderError(f"extender {self.name}: tlsConfig: {exc}", extender=self.name) from exc
        self._session: aiohttp.ClientSession | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    # --- identity and capabilities ----------------------------------------------------------------
    @property
    def name(self) -> str:
        """The extender's name in logs and results: its urlPrefix, as upstream."""
        return self.url_prefix

    def is_ignorable(self) -> bool:
        """True when a failure of this extender must not fail the pod."""
        return self.ignorable

    def is_filter(self) -> bool:
        return bool(self.filter_verb)

    def is_prioritizer(self) -> bool:
        return bool(self.prioritize_verb)

    def is_binder(self) -> bool:
        return bool(self.bind_verb)

    def supports_preemption(self) -> bool:
        return bool(self.preempt_verb)

    def is_interested(self, pod_info: PodInfo | Obj) -> bool:
        """True when the extender manages no resource, or the pod requests or limits one of
        them in a container or an init container."""
        if not self.managed_resources:
            return True
        pod = pod_info.pod if isinstance(pod_info, PodInfo) else pod_info
        spec = pod.get("spec") or {}
        for key in ("containers", "initContainers"):
            for c in spec.get(key) or ():
                res = c.get("resources") or {}
                for names in (res.get("requests") or {}, res.get("limits") or {}):
                    if not self.managed_resources.isdisjoint(names):
                        return True
        return False

    def __repr__(self) -> str:
        return f"HTTPExtender({self.url_prefix!r})"

    # --- calls ------------------------------------------------------------------------------------
    def _args(self, pod_info: PodInfo, nodes: Sequence[NodeInfo]) -> Obj:
        """ExtenderArgs: node names for a node-cache-capable extender, whole nodes otherwise."""
        if self.node_cache_capable:
            return {"Pod": pod_info.pod, "Nodes": None, "NodeNames": [n.name for n in nodes]}
        items = [n.node if n.node is not None else {"metadata": {"name": n.name}} for n in nodes]
        return {"Pod": pod_info.pod, "Nodes": {"items": items}, "NodeNames": None}

    async def filter(
        self, pod_info: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[list[NodeInfo], dict[str, str], dict[str, str]]:
        """Ask the extender which of ``nodes`` fit the pod.

        Returns ``(feasible, failed, failed_and_unresolvable)``: the feasible nodes in the
        extender's order, and ``{node: reason}`` for nodes it rejected (the second map's nodes
        cannot be helped by preemption). Without a filterVerb every node passes.
        """
        if not self.filter_verb:
            return list(nodes), {}, {}
        by_name = {n.name: n for n in nodes}
        result = await self._send(self.filter_verb, self._args(pod_info, nodes))
        verb = self.filter_verb
        error = _field(result, "Error")
        if error:
            raise ExtenderError(str(error), extender=self.name, verb=verb)
        try:
            names: list[str] | None = None
            node_names = _field(result, "NodeNames")
            node_list = _field(result, "Nodes")
            if self.node_cache_capable and node_names is not None:
                names = [str(n) for n in node_names]
            elif node_list is not None:
                names = [_node_name(n) for n in (_field(node_list, "items") or ())]
            failed = _string_map(_field(result, "FailedNodes"), "FailedNodes")
            unresolvable = _string_map(_field(result, "FailedAndUnresolvableNodes"), "FailedAndUnresolvableNodes")
        except (TypeError, ValueError) as exc:
            raise ExtenderError(
                f"decoding the {verb} result of extender {self.name}: {exc}", **self._who(verb)
            ) from exc
        feasible: list[NodeInfo] = []
        for name in names or ():
            ni = by_name.get(name)
            if ni is None:
                raise ExtenderError(
                    f"extender {self.name!r} claims a filtered node {name!r} which is not found in the input node list",
                    **self._who(verb),
                )
            feasible.append(ni)
        return feasible, failed, unresolvable

    async def prioritize(self, pod_info: PodInfo, nodes: Sequence[NodeInfo]) -> tuple[list[tuple[str, int]], int]:
        """The extender's scores ``[(host, score 0..10)]`` and its weight. Without a
        prioritizeVerb every node scores 0 with weight 0."""
        if not self.prioritize_verb:
            return [(n.name, 0) for n in nodes], 0
        verb = self.prioritize_verb
        result = await self._send(verb, self._args(pod_info, nodes))
        try:
            if result is None:
                return [], self.weight
            if not isinstance(result, list):
                raise ValueError(f"expected a HostPriorityList (a JSON array), got {type(result).__name__}")
            scores = [
                (str(_field(hp, "Host") or ""), _as_int64(_field(hp, "Score") or 0, f"HostPriorityList[{i}].Score"))
                for i, hp in enumerate(result)
            ]
        except (TypeError, ValueError) as exc:
            raise ExtenderError(
                f"decoding the {verb} result of extender {self.name}: {exc}", **self._who(verb)
            ) from exc
        return scores, self.weight

    async def bind(self, pod_info: PodInfo | Obj, node_name: str) -> None:
        """Have the extender bind the pod to ``node_name``; raises on any failure."""
        if not self.bind_verb:
            raise ExtenderError("unexpected empty bindVerb in extender", extender=self.name, verb="bind")
        pod = pod_info.pod if isinstance(pod_info, PodInfo) else pod_info
        meta = pod.get("metadata") or {}
        args = {
            "PodName": meta.get("name", ""),
            "PodNamespace": meta.get("namespace") or "default",
            "PodUID": meta.get("uid", ""),
            "Node": node_name,
        }
        result = await self._send(self.bind_verb, args)
        error = _field(result, "Error")
        if error:
            raise ExtenderError(str(error), extender=self.name, verb=self.bind_verb)

    async def process_preemption(
        self,
        pod_info: PodInfo,
        node_to_victims: Mapping[str, Victims],
        node_infos: NodeInfoLister | Mapping[str, NodeInfo],
    ) -> dict[str, Victims]:
        """Let the extender narrow the preemption candidates and their victims.

        A node-cache-capable extender is sent only victim UIDs (``NodeNameToMetaVictims``), others
        whole pods (``NodeNameToVictims``). The answer is always UIDs, mapped back to the pods on
        each node through ``node_infos``; a UID not on its node is an error (the caches disagree).
        """
        if not self.preempt_verb:
            raise ExtenderError(
                f"preempt verb is not defined for extender {self.name} but run into ProcessPreemption",
                extender=self.name,
                verb="preempt",
            )
        verb = self.preempt_verb
        args: Obj = {"Pod": pod_info.pod, "NodeNameToVictims": None, "NodeNameToMetaVictims": None}
        if self.node_cache_capable:
            args["NodeNameToMetaVictims"] = {
                node: {"Pods": [{"UID": p.uid} for p in v.pods], "NumPDBViolations": v.num_pdb_violations}
                for node, v in node_to_victims.items()
            }
        else:
            args["NodeNameToVictims"] = {
                node: {"Pods": [p.pod for p in v.pods], "NumPDBViolations": v.num_pdb_violations}
                for node, v in node_to_victims.items()
            }
        result = await self._send(verb, args)
        try:
            meta = _field(result, "NodeNameToMetaVictims") or {}
            if not isinstance(meta, dict):
                raise ValueError("NodeNameToMetaVictims: expected an object")
            decoded = {
                str(node): (
                    [str(_field(mp, "UID") or "") for mp in (_field(mv, "Pods") or ())],
                    _as_int64(_field(mv, "NumPDBViolations") or 0, f"{node}.NumPDBViolations"),
                )
                for node, mv in meta.items()
            }
        except (TypeError, ValueError) as exc:
            raise ExtenderError(
                f"decoding the {verb} result of extender {self.name}: {exc}", **self._who(verb)
            ) from exc
        out: dict[str, Victims] = {}
        for node, (uids, pdb) in decoded.items():
            try:
                ni = node_infos.get(node)
            except KeyError:
                ni = None
            if ni is None:
                raise ExtenderError(f"nodeinfo not found for node name {node!r}", **self._who(verb))
            on_node = {p.uid: p for p in ni.pods}
            victims = Victims([], pdb)
            for uid in uids:
                pod = on_node.get(uid)
                if pod is None:
                    raise ExtenderError(
                        f"extender: {self.name} claims to preempt pod (UID: {uid}) on node: {node}, "
                        "but the pod is not found on that node",
                        **self._who(verb),
                    )
                victims.pods.append(pod)
            out[node] = victims
        return out

    # --- transport --------------------------------------------------------------------------------
    def _who(self, verb: str) -> dict[str, str]:
        return {"extender": self.name, "verb": verb}

    def _client(self) -> aiohttp.ClientSession:
        loop = asyncio.get_running_loop()
        if self._session is None or self._session.closed or self._loop is not loop:
            # A session belongs to the loop it was made in; a new loop (a new test, a restart)
            # gets a new one. The old one is unusable there, so it is just dropped.
            connector = aiohttp.TCPConnector(ssl=self._ssl if self._ssl is not None else True)
            self._session = aiohttp.ClientSession(
                connector=connector,
                timeout=aiohttp.ClientTimeout(total=self.timeout),
                json_serialize=lambda o: json.dumps(o, separators=(",", ":")),
            )
            self._loop = loop
        return self._session

    async def _send(self, verb: str, args: Any) -> Any:
        url = self.url_prefix.rstrip("/") + "/" + verb
        body = json.dumps(args, separators=(",", ":"), default=str)
        kwargs: dict[str, Any] = {}
        if self.server_name:
            kwargs["server_hostname"] = self.server_name
        try:
            async with self._client().post(
                url, data=body, headers={"Content-Type": "application/json"}, **kwargs
            ) as resp:
                if resp.status != 200:
                    raise ExtenderError(
                        f"failed {verb} with extender at URL {url}, code {resp.status}", extender=self.name, verb=verb
                    )
                raw = await resp.read()
        except ExtenderError:
            raise
        except TimeoutError as exc:
            raise ExtenderError(
                f'Post "{url}": no answer within httpTimeout ({self.timeout:g}s)', extender=self.name, verb=verb
            ) from exc
        except (aiohttp.ClientError, OSError, ssl.SSLError) as exc:
            raise ExtenderError(f'Post "{url}": {exc}', extender=self.name, verb=verb) from exc
        try:
            return json.loads(raw)
        except ValueError as exc:
            raise ExtenderError(
                f"decoding the {verb} result of extender {self.name}: {exc}", extender=self.name, verb=verb
            ) from exc

    async def close(self) -> None:
        """Close the HTTP session (a later call opens a new one)."""
        session, self._session = self._session, None
        if session is not None and not session.closed:
            await session.close()

    async def __aenter__(self) -> HTTPExtender:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


# --- what the scheduler runs over all extenders ----------------------------------------------------


async def find_nodes_that_pass_extenders(
    extenders: Iterable[HTTPExtender],
    pod_info: PodInfo,
    feasible: Sequence[NodeInfo],
    statuses: dict[str, Status],
    trace: dict[str, dict[str, str]] | None = None,
) -> list[NodeInfo]:
    """Run the interested extenders' filters one after the other on the nodes still feasible.

    Rejections are recorded in ``statuses`` (node name → Status): FailedAndUnresolvableNodes as
    UnschedulableAndUnresolvable (its reason appended to any reasons the node already had),
    FailedNodes as Unschedulable (appended to an existing status). A failing ignorable extender
    is skipped; a failing other one raises :class:`ExtenderError`, which fails the cycle.
    """
    nodes = list(feasible)
    for ext in extenders:
        if not nodes:
            break
        if not ext.is_interested(pod_info):
            continue
        try:
            passed, failed, unresolvable = await ext.filter(pod_info, nodes)
        except ExtenderError as exc:
            if trace is not None:
                for n in nodes:
                    trace.setdefault(n.name, {})[ext.name] = f"error: {exc}"
            if ext.is_ignorable():
                continue
            raise
        if trace is not None:
            for n in nodes:
                why = unresolvable.get(n.name) or failed.get(n.name)
                trace.setdefault(n.name, {})[ext.name] = why if why is not None else "passed"
        for node, msg in unresolvable.items():
            prev = statuses.get(node)
            reasons = [*prev.reasons, msg] if prev is not None else [msg]
            statuses[node] = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, *reasons)
        for node, msg in failed.items():
            if node in unresolvable:
                continue
            prev = statuses.get(node)
            # A new Status, never an append: statuses may be shared between nodes.
            statuses[node] = Status.unschedulable(*(prev.reasons if prev is not None else ()), msg)
        nodes = passed
    return nodes


async def prioritize_with_extenders(
    extenders: Iterable[HTTPExtender], pod_info: PodInfo, nodes: Sequence[NodeInfo]
) -> dict[str, list[tuple[str, int]]]:
    """Scores of the interested extenders, called concurrently: node → [(extender name, score)]
    with ``score = extender score × weight × (MaxNodeScore / MaxExtenderPriority)``, to be added
    to the node's total. A failing extender gives no score and is otherwise ignored, as upstream."""
    interested = [e for e in extenders if e.is_interested(pod_info)]
    if not interested or not nodes:
        return {}
    results = await asyncio.gather(*(e.prioritize(pod_info, nodes) for e in interested), return_exceptions=True)
    out: dict[str, list[tuple[str, int]]] = {}
    scale = MAX_NODE_SCORE // MAX_EXTENDER_PRIORITY
    for ext, res in zip(interested, results):
        if isinstance(res, BaseException):
            if not isinstance(res, ExtenderError):
                raise res
            continue
        scores, weight = res
        for host, score in scores:
            out.setdefault(host, []).append((ext.name, score * weight * scale))
    return out


async def preempt_with_extenders(
    extenders: Iterable[HTTPExtender],
    pod_info: PodInfo,
    node_to_victims: Mapping[str, Victims],
    node_infos: NodeInfoLister | Mapping[str, NodeInfo],
) -> dict[str, Victims]:
    """Pass the preemption candidates through every interested preempting extender in turn
    (upstream ``callExtenders``); an ignorable extender's failure is skipped, another's raises.
    Stops early once no candidate is left."""
    victims = dict(node_to_victims)
    if not victims:
        return victims
    for ext in extenders:
        if not ext.supports_preemption() or not ext.is_interested(pod_info):
            continue
        try:
            got = await ext.process_preemption(pod_info, victims, node_infos)
        except ExtenderError:
            if ext.is_ignorable():
                continue
            raise
        victims = got
        if not victims:
            break
    return victims


def binder_for(extenders: Iterable[HTTPExtender], pod_info: PodInfo) -> HTTPExtender | None:
    """The binding extender interested in the pod, if any: it binds instead of the Bind plugins."""
    for ext in extenders:
        if ext.is_binder() and ext.is_interested(pod_info):
            return ext
    return None


# --- the server: write an extender in Python ---------------------------------------------------------

FilterFn = Callable[[Obj, list[Obj]], Any]
PrioritizeFn = Callable[[Obj, list[Obj]], Any]
BindFn = Callable[[str, str, str, str], Any]
PreemptFn = Callable[[Obj, dict[str, Obj]], Any]


async def _call(fn: Callable[..., Any], *args: Any) -> Any:
    out = fn(*args)
    if inspect.isawaitable(out):
        out = await out
    return out


async def _read_json(request: web.Request) -> Any:
    try:
        return json.loads(await request.read())
    except ValueError as exc:
        raise web.HTTPBadRequest(text=f"request body is not JSON: {exc}") from exc


def _request_nodes(args: Any) -> tuple[list[Obj], bool]:
    """The candidate nodes of ExtenderArgs and whether they came as names only."""
    names = _field(args, "NodeNames")
    if names is not None:
        return [{"metadata": {"name": str(n)}} for n in names], True
    return list(_field(_field(args, "Nodes"), "items") or ()), False


def _json(obj: Any) -> web.Response:
    return web.json_response(obj, dumps=lambda o: json.dumps(o, separators=(",", ":")))


def make_extender_app(
    filter: FilterFn | None = None,
    prioritize: PrioritizeFn | None = None,
    bind: BindFn | None = None,
    preempt: PreemptFn | None = None,
    *,
    filter_path: str = "filter",
    prioritize_path: str = "prioritize",
    bind_path: str = "bind",
    preempt_path: str = "preempt",
) -> web.Application:
    """An aiohttp application serving the given functions as an extender (plain or async):

    * ``filter(pod, nodes) -> nodes | (nodes, {name: reason})
      | (nodes, {name: reason}, {name: unresolvable reason})``: the nodes that fit (node dicts or
      names). A request with ``NodeNames`` (nodeCacheCapable) gets node dicts holding only
      ``metadata.name`` and is answered with ``NodeNames``; one with ``Nodes`` with ``Nodes``.
    * ``prioritize(pod, nodes) -> {name: score} | [(name, score)]``, scores 0..10.
    * ``bind(pod_namespace, pod_name, pod_uid, node) -> None``.
    * ``preempt(pod, victims) -> victims``: ``victims`` is ``{node: {"Pods": [{"UID": ...}],
      "NumPDBViolations": n}}`` (whole pods are reduced to their UIDs), and so is the answer.

    Each is served at ``POST /<path>``; a verb given no function is not served (404). An
    exception in filter, bind or preempt is answered in the result's ``Error`` field; in
    prioritize (whose result has no such field) with HTTP 500.
    """
    app = web.Application()

    if filter is not None:
        filter_fn = filter

        async def handle_filter(request: web.Request) -> web.Response:
            args = await _read_json(request)
            nodes, names_only = _request_nodes(args)
            result: Obj = {"Nodes": None, "NodeNames": None, "FailedNodes": {}, "FailedAndUnresolvableNodes": {}}
            try:
                out = await _call(filter_fn, _field(args, "Pod") or {}, nodes)
                unresolvable: Mapping[str, str] = {}
                failed: Mapping[str, str] = {}
                if isinstance(out, tuple):
                    passed, failed, *rest = out
                    unresolvable = rest[0] if rest else {}
                else:
                    passed = out
                if names_only:
                    result["NodeNames"] = [_node_name(n) for n in passed]
                else:
                    by_name = {_node_name(n): n for n in nodes}
                    result["Nodes"] = {
                        "items": [
                            by_name.get(n, {"metadata": {"name": n}}) if isinstance(n, str) else n for n in passed
                        ]
                    }
                result["FailedNodes"] = {str(k): str(v) for k, v in (failed or {}).items()}
                result["FailedAndUnresolvableNodes"] = {str(k): str(v) for k, v in (unresolvable or {}).items()}
                result["Error"] = ""
            except Exception as exc:  # the extender's own failure goes back on the wire
                result = {"Nodes": None, "NodeNames": None, "FailedNodes": None, "FailedAndUnresolvableNodes": None}
                result["Error"] = str(exc) or type(exc).__name__
            return _json(result)

        app.router.add_post("/" + filter_path.strip("/"), handle_filter)

    if prioritize is not None:
        prioritize_fn = prioritize

        async def handle_prioritize(request: web.Request) -> web.Response:
            args = await _read_json(request)
            nodes, _ = _request_nodes(args)
            try:
                out = await _call(prioritize_fn, _field(args, "Pod") or {}, nodes)
                pairs = out.items() if isinstance(out, Mapping) else out
                body = [{"Host": str(h), "Score": int(s)} for h, s in pairs]
            except Exception as exc:
                return web.Response(status=500, text=str(exc) or type(exc).__name__)
            return _json(body)

        app.router.add_post("/" + prioritize_path.strip("/"), handle_prioritize)

    if bind is not None:
        bind_fn = bind

        async def handle_bind(request: web.Request) -> web.Response:
            args = await _read_json(request)
            try:
                await _call(
                    bind_fn,
                    str(_field(args, "PodNamespace") or ""),
                    str(_field(args, "PodName") or ""),
                    str(_field(args, "PodUID") or ""),
                    str(_field(args, "Node") or ""),
                )
                error = ""
            except Exception as exc:
                error = str(exc) or type(exc).__name__
            return _json({"Error": error})

        app.router.add_post("/" + bind_path.strip("/"), handle_bind)

    if preempt is not None:
        preempt_fn = preempt

        async def handle_preempt(request: web.Request) -> web.Response:
            args = await _read_json(request)
            given = _field(args, "NodeNameToMetaVictims")
            if given is None:
                given = {
                    node: {
                        "Pods": [
                            {"UID": ((p or {}).get("metadata") or {}).get("uid", "")} for p in _field(v, "Pods") or ()
                        ],
                        "NumPDBViolations": _field(v, "NumPDBViolations") or 0,
                    }
                    for node, v in (_field(args, "NodeNameToVictims") or {}).items()
                }
            try:
                out = await _call(preempt_fn, _field(args, "Pod") or {}, given)
            except Exception as exc:
                return web.Response(status=500, text=str(exc) or type(exc).__name__)
            return _json({"NodeNameToMetaVictims": out})

        app.router.add_post("/" + preempt_path.strip("/"), handle_preempt)

    return app


class ExtenderServer:
    """A running extender app: ``url`` is the urlPrefix to configure; ``await close()`` stops it."""

    def __init__(self, runner: web.AppRunner, url: str) -> None:
        self.runner = runner
        self.url = url

    async def close(self) -> None:
        await self.runner.cleanup()

    async def __aenter__(self) -> ExtenderServer:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


async def serve_extender(
    app: web.Application, host: str = "127.0.0.1", port: int = 0, *, ssl_context: ssl.SSLContext | None = None
) -> ExtenderServer:
    """Start ``app`` in the running loop (port 0 picks a free one) and return once it listens."""
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, host, port, ssl_context=ssl_context)
    await site.start()
    server = getattr(site, "_server", None)
    sockets = getattr(server, "sockets", None) or ()
    bound = sockets[0].getsockname()[1] if sockets else port
    scheme = "https" if ssl_context is not None else "http"
    shown = f"[{host}]" if ":" in host else host
    return ExtenderServer(runner, f"{scheme}://{shown}:{bound}")


def run_extender(
    app: web.Application, host: str = "0.0.0.0", port: int = 8888, *, ssl_context: ssl.SSLContext | None = None
) -> None:
    """Serve ``app`` until interrupted (blocking): the entry point of an extender program."""
    web.run_app(app, host=host, port=port, ssl_context=ssl_context)
