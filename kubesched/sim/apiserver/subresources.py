"""The subresources that are verbs of their own: a pod's ``binding`` (and the ``bindings``
collection), a pod's ``eviction``, and a workload's ``scale``. ``status`` is an update of the
parent with a narrower admission, so :mod:`kubesched.sim.apiserver.handlers` serves it."""

from __future__ import annotations

import copy
from typing import Any

from aiohttp import web

from kubesched.cluster.base import ClusterError, Conflict, NotFound
from kubesched.cluster.store import Store
from kubesched.sim.apiserver.errors import (
    APIError,
    bad_request,
    conflict,
    method_not_allowed,
    not_found,
    unsupported_media_type,
)
from kubesched.sim.apiserver.eviction import evict
from kubesched.sim.apiserver.handlers import ResourceHandlers
from kubesched.sim.apiserver.patching import PatchError, json_patch, merge_patch
from kubesched.sim.apiserver.requests import JSON_PATCH, MERGE, STRATEGIC, ResourceRequest, read_body
from kubesched.sim.apiserver.responses import compact_json, json_response, status_success, text_response
from kubesched.sim.apiserver.scale import scale_view, scaled
from kubesched.sim.apiserver.validation.decode import check_decodable

#: A binding's answer, the same for every one: encoded once.
BOUND = compact_json(status_success(201))


def bind(store: Store, namespace: str, name: str, body: Any) -> web.Response:
    """Bind pod ``namespace/name`` to the node a Binding names: 201, or 404/409/422 as the
    API server refuses one (no target, another kind than Node, another pod's uid, already bound)."""
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
        pod = store.get("Pod", namespace, name)
        if uid and uid != pod["metadata"].get("uid"):
            raise conflict(
                "pods/binding",
                "",
                name,
                f"Precondition failed: UID in precondition: {uid}, UID in object meta: {pod['metadata'].get('uid')}",
            )
        store.bind(namespace, name, node)
    except NotFound:
        raise not_found("pods", "", name) from None
    except Conflict as exc:
        raise conflict("pods/binding", "", name, str(exc)) from None
    except ClusterError as exc:
        raise APIError(exc.code, "InternalError", str(exc)) from None
    return text_response(BOUND, 201)


async def bind_collection(store: Store, request: web.Request, req: ResourceRequest) -> web.Response:
    """``POST .../namespaces/<ns>/bindings``: the Binding's own metadata names the pod."""
    if request.method != "POST" or req.name is not None:
        raise method_not_allowed()
    body = await read_body(request)
    meta = body.get("metadata") if isinstance(body, dict) else None
    name = meta.get("name", "") if isinstance(meta, dict) else ""
    return bind(store, req.namespace or "default", name, body)


async def bind_pod(store: Store, request: web.Request, req: ResourceRequest) -> web.Response:
    """``POST .../pods/<name>/binding``."""
    assert req.name is not None
    if request.method != "POST":
        raise method_not_allowed()
    body = await read_body(request)
    return bind(store, req.namespace or "default", req.name, body)


async def evict_pod(handlers: ResourceHandlers, request: web.Request, req: ResourceRequest) -> web.Response:
    """``POST .../pods/<name>/eviction``: delete the pod unless a disruption budget forbids it."""
    assert req.name is not None
    if request.method != "POST":
        raise method_not_allowed()
    body = await read_body(request, "Eviction", "policy/v1")
    return json_response(evict(handlers.store, req.namespace or "default", req.name, body, handlers.remove), 201)


async def scale(handlers: ResourceHandlers, request: web.Request, req: ResourceRequest) -> web.Response:
    """GET, PUT or PATCH a workload's Scale: only ``spec.replicas`` can change."""
    stored = handlers.get(req)
    if request.method == "GET":
        return json_response(scale_view(stored))
    if request.method == "PUT":
        wanted = await read_body(request)
    elif request.method == "PATCH":
        ctype = (request.content_type or "").lower()
        if ctype not in (MERGE, STRATEGIC, JSON_PATCH):
            raise unsupported_media_type(ctype)
        patch = await read_body(request)
        try:
            if ctype == JSON_PATCH:
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
    updated = handlers.store_update(req, stored, new, request.query.get("dryRun") == "All")
    return json_response(scale_view(updated))
