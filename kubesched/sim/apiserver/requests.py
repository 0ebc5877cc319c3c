"""Reading a resource request: the resource, namespace, name and subresource its path names,
its body (JSON, YAML or protobuf), the body checked against the URL, ``fieldValidation``, and
the label and field selectors of its query."""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import yaml
from aiohttp import web

from kubesched.decoding import Limits, check_depth, load_json, load_yaml
from kubesched.framework.features import FeatureGates
from kubesched.objects import Obj
from kubesched.sim.apiserver.discovery import ServedResource, find, split_resource_path
from kubesched.sim.apiserver.errors import (
    MAX_REQUEST_BODY_BYTES,
    APIError,
    bad_request,
    path_not_found,
    unsupported_media_type,
)
from kubesched.sim.apiserver.openapi import documents as openapi
from kubesched.sim.apiserver.protobuf.decode import ProtobufError, decode_object
from kubesched.sim.apiserver.selectors import (
    SelectorSyntaxError,
    fields_match,
    labels_match,
    parse_field_selector,
    parse_label_selector,
    selectable_field,
)
from kubesched.sim.apiserver.validation import structural
from kubesched.sim.apiserver.validation.decode import check_decodable, json_body
from kubesched.sim.apiserver.validation.meta import go_quote

MERGE = "application/merge-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"
JSON_PATCH = "application/json-patch+json"
APPLY = "application/apply-patch+yaml"
APPLY_CBOR = "application/apply-patch+cbor"


@dataclass(frozen=True)
class ResourceRequest:
    """A resource request, parsed from the URL: ``/api[s]/<group>/<version>[/watch]
    [/namespaces/<namespace>]/<plural>[/<name>[/<sub>]]``."""

    res: ServedResource
    namespace: str | None
    name: str | None
    sub: str | None
    watch: bool


def parse_resource_path(
    group: str, version: str, rest: list[str], gates: FeatureGates | None = None, custom: Sequence[ServedResource] = ()
) -> ResourceRequest:
    """The request the path after ``<group>/<version>`` names; a 404 for any other path (and for
    a resource whose gate is off in ``gates``). ``custom``: the custom resources served."""
    watch, namespace, rest = split_resource_path(group, version, rest, custom)
    if not rest:
        raise path_not_found()
    res = find(group, version, rest[0], gates, custom)
    if res is None or len(rest) > 3:
        raise path_not_found()
    name = rest[1] if len(rest) > 1 else None
    sub = rest[2] if len(rest) > 2 else None
    if sub is not None and sub not in res.subresources:
        raise path_not_found()
    if res.namespaced and namespace is None and name is not None:
        raise path_not_found()
    return ResourceRequest(res, namespace, name, sub, watch)


def truthy(value: str | None) -> bool:
    """A boolean query parameter as the API server reads it."""
    return value is not None and value.lower() in ("true", "1", "yes")


#: A body's decoding: kube-apiserver's size limit, and a deadline for what still takes long within
#: it (a 3 MiB YAML body takes seconds to parse in Python).
BODY_LIMITS = Limits(max_bytes=MAX_REQUEST_BODY_BYTES, deadline=20.0)
#: Bodies up to this size decode on the event loop: a few milliseconds at most, less than a hop
#: to a thread costs a burst of creates. Larger ones decode in a thread, so that a big YAML body
#: (seconds of parsing even within the bounds) leaves /healthz, watches and leases answering.
INLINE_BODY_BYTES = 64 * 1024


def _decode_body(raw: bytes, yaml_source: bool) -> Any:
    try:
        if yaml_source:
            return json_body(load_yaml(raw, BODY_LIMITS), yaml_source=True)
        value = load_json(raw, BODY_LIMITS, walk=False)
        try:
            return json_body(value)  # a walk over the value, far stricter on depth
        except ValueError:
            check_depth(value, BODY_LIMITS)  # load_json's own bound is the first word, as ever
            raise
    except (ValueError, yaml.YAMLError) as exc:
        # DecodeError (a ValueError) words its reason as Go's decoders do; json_body's are Go's too.
        raise bad_request(f"the object provided is unrecognized or malformed: {exc}") from None
    except RecursionError:
        raise bad_request("the object provided is unrecognized or malformed: nested too deeply") from None


async def read_body(request: web.Request, kind: str = "", api_version: str = "") -> Any:
    """The request's object: JSON, YAML, or (for the kinds kubectl's typed clients send
    that way) Kubernetes protobuf, read as ``kind``. JSON and YAML are decoded within
    :data:`BODY_LIMITS` (kubesched.decoding: size, depth, integer digits, aliases); a body that
    breaks one is a 400 naming the limit."""
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
    yaml_source = "yaml" in ctype
    if len(raw) <= INLINE_BODY_BYTES:
        return _decode_body(raw, yaml_source)
    return await asyncio.to_thread(_decode_body, raw, yaml_source)


def check_body(req: ResourceRequest, obj: Any) -> Obj:
    """``obj`` as the object the URL names: its kind, apiVersion, namespace and name agree with
    the URL (or are filled from it), else 400."""
    res = req.res
    if not isinstance(obj, dict):
        raise bad_request(f"the object provided is unrecognized: expected a {res.kind} object")
    kind, api_version = obj.get("kind"), obj.get("apiVersion")
    if (kind and kind != res.kind) or (api_version and api_version != res.group_version):
        raise bad_request(
            f"the API version in the data ({api_version}) does not match the expected API version ({res.group_version})"
            if api_version != res.group_version
            else f"the kind in the data ({kind}) does not match the expected kind ({res.kind})"
        )
    obj["kind"], obj["apiVersion"] = res.kind, res.group_version
    if res.custom is None:
        check_decodable(res.kind, res.group, res.version, obj)
    meta = obj.get("metadata")
    if meta is None:
        meta = obj["metadata"] = {}
    if not isinstance(meta, dict):
        raise bad_request("metadata must be an object")
    if res.namespaced:
        ns = meta.get("namespace")
        if ns and req.namespace and ns != req.namespace:
            raise bad_request("the namespace of the provided object does not match the namespace sent on the request")
        meta["namespace"] = req.namespace or ns or "default"
    else:
        meta.pop("namespace", None)
    if req.name is not None and meta.get("name") and meta["name"] != req.name:
        raise bad_request(f"the name of the object ({meta['name']}) does not match the name on the URL ({req.name})")
    if req.name is not None:
        meta["name"] = req.name
    return obj


def field_validation(request: web.Request, req: ResourceRequest, obj: Obj) -> list[str]:
    """Unknown and duplicate fields per ``fieldValidation`` (Strict refuses, Warn reports)."""
    mode = request.query.get("fieldValidation", "Warn")
    if mode not in ("Strict", "Warn", "Ignore"):
        raise bad_request(f"fieldValidation parameter unsupported: {mode}; must be one of Ignore, Warn, Strict")
    if mode == "Ignore":
        return []
    if req.res.custom is not None:
        unknown = structural.prune(
            copy.deepcopy(obj), req.res.custom_version.schema if req.res.custom_version else None
        )
    else:
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


def selector(request: web.Request, req: ResourceRequest) -> Callable[[Obj], bool]:
    """Whether an object is in the request's namespace and matches its label and field selectors."""
    try:
        labels = parse_label_selector(request.query.get("labelSelector"))
        version = req.res.custom_version
        extra = {f: selectable_field(f) for f in version.selectable_fields} if version is not None else None
        fields = parse_field_selector(
            request.query.get("fieldSelector"), req.res.kind if req.res.custom is None else "", extra
        )
    except SelectorSyntaxError as exc:
        raise bad_request(str(exc)) from None
    namespace = req.namespace if req.res.namespaced else None

    def match(obj: Obj) -> bool:
        if namespace is not None and (obj.get("metadata") or {}).get("namespace") != namespace:
            return False
        return labels_match(labels, obj) and fields_match(fields, obj)

    return match
