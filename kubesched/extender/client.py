"""The client the scheduler calls: :class:`HTTPExtender`, one configured extender talking
upstream's wire format, and the types of its calls (:class:`Victims`, :class:`ExtenderError`).

Everything that goes wrong while talking to an extender (connection refused, timeout, non-200
answer, undecodable body, an ``Error`` in the result, an answer naming a node that was not asked
about) is an :class:`ExtenderError`. Whether it fails the pod is the caller's decision, made
with :meth:`HTTPExtender.is_ignorable`, as upstream does.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import json
import os
import ssl
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import aiohttp

from kubesched import errors
from kubesched.extender import wire
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.objects import Obj

__all__ = [
    "DEFAULT_EXTENDER_TIMEOUT",
    "ExtenderError",
    "ExtenderSpec",
    "HTTPExtender",
    "NodeInfoLister",
    "Victims",
]

DEFAULT_EXTENDER_TIMEOUT = 5.0
"""Seconds an extender call may take when ``httpTimeout`` is unset or zero (upstream's 5s)."""


class ExtenderError(errors.ExtenderError):
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
        error = wire.field(result, "Error")
        if error:
            raise ExtenderError(str(error), extender=self.name, verb=verb)
        try:
            names: list[str] | None = None
            node_names = wire.field(result, "NodeNames")
            node_list = wire.field(result, "Nodes")
            if self.node_cache_capable and node_names is not None:
                names = [str(n) for n in node_names]
            elif node_list is not None:
                names = [wire.node_name(n) for n in (wire.field(node_list, "items") or ())]
            failed = wire.string_map(wire.field(result, "FailedNodes"), "FailedNodes")
            unresolvable = wire.string_map(
                wire.field(result, "FailedAndUnresolvableNodes"), "FailedAndUnresolvableNodes"
            )
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
                (
                    str(wire.field(hp, "Host") or ""),
                    wire.as_int64(wire.field(hp, "Score") or 0, f"HostPriorityList[{i}].Score"),
                )
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
        error = wire.field(result, "Error")
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
            meta = wire.field(result, "NodeNameToMetaVictims") or {}
            if not isinstance(meta, dict):
                raise ValueError("NodeNameToMetaVictims: expected an object")
            decoded = {
                str(node): (
                    [str(wire.field(mp, "UID") or "") for mp in (wire.field(mv, "Pods") or ())],
                    wire.as_int64(wire.field(mv, "NumPDBViolations") or 0, f"{node}.NumPDBViolations"),
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
