"""The kit extender authors import: serve plain (or async) Python functions as an HTTP
extender that kube-scheduler (or kubesched) calls with upstream's wire format::

    app = make_extender_app(filter=my_filter, prioritize=my_prioritize)
    run_extender(app, "0.0.0.0", 8888)
"""

from __future__ import annotations

import inspect
import json
import ssl
from collections.abc import Callable, Mapping
from typing import Any

from aiohttp import web

from kubesched.extender import wire
from kubesched.objects import Obj

__all__ = ["ExtenderServer", "make_extender_app", "run_extender", "serve_extender"]

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
    names = wire.field(args, "NodeNames")
    if names is not None:
        return [{"metadata": {"name": str(n)}} for n in names], True
    return list(wire.field(wire.field(args, "Nodes"), "items") or ()), False


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
                out = await _call(filter_fn, wire.field(args, "Pod") or {}, nodes)
                unresolvable: Mapping[str, str] = {}
                failed: Mapping[str, str] = {}
                if isinstance(out, tuple):
                    passed, failed, *rest = out
                    unresolvable = rest[0] if rest else {}
                else:
                    passed = out
                if names_only:
                    result["NodeNames"] = [wire.node_name(n) for n in passed]
                else:
                    by_name = {wire.node_name(n): n for n in nodes}
                    result["Nodes"] = {
                        "items": [
                            by_name.get(n, {"metadata": {"name": n}}) if isinstance(n, str) else n for n in passed
                        ]
                    }
                result["FailedNodes"] = {str(k): str(v) for k, v in (failed or {}).items()}
                result["FailedAndUnresolvableNodes"] = {str(k): str(v) for k, v in (unresolvable or {}).items()}
                result["Error"] = ""
            except Exception as exc:  # noqa: BLE001 - the extender's own failure goes back on the wire
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
                out = await _call(prioritize_fn, wire.field(args, "Pod") or {}, nodes)
                pairs = out.items() if isinstance(out, Mapping) else out
                body = [{"Host": str(h), "Score": int(s)} for h, s in pairs]
            except Exception as exc:  # noqa: BLE001 - the extender's own failure is its HTTP 500 answer
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
                    str(wire.field(args, "PodNamespace") or ""),
                    str(wire.field(args, "PodName") or ""),
                    str(wire.field(args, "PodUID") or ""),
                    str(wire.field(args, "Node") or ""),
                )
                error = ""
            except Exception as exc:  # noqa: BLE001 - the extender's own failure goes back on the wire
                error = str(exc) or type(exc).__name__
            return _json({"Error": error})

        app.router.add_post("/" + bind_path.strip("/"), handle_bind)

    if preempt is not None:
        preempt_fn = preempt

        async def handle_preempt(request: web.Request) -> web.Response:
            args = await _read_json(request)
            given = wire.field(args, "NodeNameToMetaVictims")
            if given is None:
                given = {
                    node: {
                        "Pods": [
                            {"UID": ((p or {}).get("metadata") or {}).get("uid", "")}
                            for p in wire.field(v, "Pods") or ()
                        ],
                        "NumPDBViolations": wire.field(v, "NumPDBViolations") or 0,
                    }
                    for node, v in (wire.field(args, "NodeNameToVictims") or {}).items()
                }
            try:
                out = await _call(preempt_fn, wire.field(args, "Pod") or {}, given)
            except Exception as exc:  # noqa: BLE001 - the extender's own failure is its HTTP 500 answer
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
    addresses = runner.addresses  # the one site's sockets: the port the OS gave for port 0
    bound = addresses[0][1] if addresses else port
    scheme = "https" if ssl_context is not None else "http"
    shown = f"[{host}]" if ":" in host else host
    return ExtenderServer(runner, f"{scheme}://{shown}:{bound}")


def run_extender(
    app: web.Application, host: str = "0.0.0.0", port: int = 8888, *, ssl_context: ssl.SSLContext | None = None
) -> None:
    """Serve ``app`` until interrupted (blocking): the entry point of an extender program."""
    web.run_app(app, host=host, port=port, ssl_context=ssl_context)
