"""OpenAPI v2 and v3 documents of the served resources, and unknown-field detection.

kubectl reads them for three things: whether PATCH of a kind accepts the ``fieldValidation``
query parameter (then it leaves validation to the server), the schemas tagged with
``x-kubernetes-group-version-kind`` (to compute client-side apply patches with the
``x-kubernetes-patch-merge-key`` of each list), and ``kubectl explain``.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import json
from collections.abc import Sequence
from typing import Any

from kubesched.objects import Obj
from kubesched.sim.apiserver.discovery import RESOURCES, ServedResource
from kubesched.sim.apiserver.openapi.types import DEFINITIONS
from kubesched.sim.apiserver.patching import MERGE_KEYS, MERGE_PRIMITIVE_LISTS
from kubesched.sim.apiserver.version import GIT_VERSION

_DEF_OF_KIND: dict[tuple[str, str], str] = {
    ("", "Pod"): "io.k8s.api.core.v1.Pod",
    ("", "Node"): "io.k8s.api.core.v1.Node",
    ("", "Namespace"): "io.k8s.api.core.v1.Namespace",
    ("", "Event"): "io.k8s.api.core.v1.Event",
    ("", "Binding"): "io.k8s.api.core.v1.Binding",
    ("events.k8s.io", "Event"): "io.k8s.api.events.v1.Event",
    ("coordination.k8s.io", "Lease"): "io.k8s.api.coordination.v1.Lease",
    ("scheduling.k8s.io", "PriorityClass"): "io.k8s.api.scheduling.v1.PriorityClass",
    **{
        ("resource.k8s.io", kind): f"io.k8s.api.resource.v1.{kind}"
        for kind in ("DeviceClass", "ResourceSlice", "ResourceClaim", "ResourceClaimTemplate", "DeviceTaintRule")
    },
    ("", "ServiceAccount"): "io.k8s.api.core.v1.ServiceAccount",
    **{
        ("rbac.authorization.k8s.io", kind): f"io.k8s.api.rbac.v1.{kind}"
        for kind in ("ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding")
    },
    ("storage.k8s.io", "CSIDriver"): "io.k8s.api.storage.v1.CSIDriver",
    ("storage.k8s.io", "CSIStorageCapacity"): "io.k8s.api.storage.v1.CSIStorageCapacity",
    ("apiextensions.k8s.io", "CustomResourceDefinition"): (
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition"
    ),
    # bodies the server reads without storing them
    ("policy", "Eviction"): "io.k8s.api.policy.v1.Eviction",
    ("authorization.k8s.io", "SubjectAccessReview"): "io.k8s.api.authorization.v1.SubjectAccessReview",
    ("authentication.k8s.io", "TokenReview"): "io.k8s.api.authentication.v1.TokenReview",
}
_META = "io.k8s.apimachinery.pkg.apis.meta.v1."


#: Kinds served in more than one version with definitions of their own (the same fields):
#: kind -> (the storage version, the versions served).
_VERSIONED_KINDS: dict[tuple[str, str], tuple[str, tuple[str, ...]]] = {
    ("scheduling.k8s.io", "Workload"): ("v1beta1", ("v1beta1", "v1alpha3")),
    ("scheduling.k8s.io", "PodGroup"): ("v1beta1", ("v1beta1", "v1alpha3")),
    ("scheduling.k8s.io", "CompositePodGroup"): ("v1alpha3", ("v1alpha3",)),
}


def definition_of(kind: str, group: str, version: str = "") -> str | None:
    """The OpenAPI definition of ``kind`` in ``group`` (in ``version`` for a kind served in
    several; its storage version's when not given)."""
    versioned = _VERSIONED_KINDS.get((group, kind))
    if versioned is not None:
        stored, served = versioned
        return f"io.k8s.api.scheduling.{version if version in served else stored}.{kind}"
    return _DEF_OF_KIND.get((group, kind))


# --- unknown fields -----------------------------------------------------------------------------


def unknown_fields(kind: str, group: str, obj: Any) -> list[str]:
    """Paths of fields ``obj`` has that the kind's schema does not (``spec.containers[0].foo``)."""
    name = definition_of(kind, group)
    if name is None:
        return []
    out: list[str] = []
    _walk(f"#{name}", obj, "", out)
    return out


def _walk(typ: str, value: Any, path: str, out: list[str]) -> None:
    # Only a definition holds fields: a leaf type (and None) has nothing to look at, so it is
    # not walked into at all.
    if value is None:
        return
    if typ.startswith("#"):
        props = DEFINITIONS.get(typ[1:])
        if props is None or not isinstance(value, dict):
            return
        for key, sub in value.items():
            sub_typ = props.get(key)
            if sub_typ is None:
                out.append(f"{path}.{key}" if path else key)
            elif sub is not None and sub_typ[:1] in _CONTAINERS:
                _walk(sub_typ, sub, f"{path}.{key}" if path else key, out)
    elif typ.startswith("[") and isinstance(value, list):
        item_typ = typ[1:-1]
        if item_typ[:1] in _CONTAINERS:
            for i, item in enumerate(value):
                _walk(item_typ, item, f"{path}[{i}]", out)
    elif typ.startswith("{") and isinstance(value, dict):
        item_typ = typ[1:-1]
        if item_typ[:1] in _CONTAINERS:
            for key, item in value.items():
                _walk(item_typ, item, f"{path}[{key}]", out)


#: how a type that holds more starts: a definition, a list, a map
_CONTAINERS = frozenset("#[{")


# --- schemas ------------------------------------------------------------------------------------


def _gvk_of_definitions() -> dict[str, Obj]:
    out: dict[str, Obj] = {}
    for r in RESOURCES:
        name = definition_of(r.kind, r.group, r.version)
        if name is None:
            continue
        out[name] = {"group": r.group, "version": r.version, "kind": r.kind}
        if f"{name}List" in DEFINITIONS:
            out[f"{name}List"] = {"group": r.group, "version": r.version, "kind": f"{r.kind}List"}
    out[_META + "Status"] = {"group": "", "version": "v1", "kind": "Status"}
    out[_META + "DeleteOptions"] = {"group": "", "version": "v1", "kind": "DeleteOptions"}
    return out


def _schema(typ: str, ref_prefix: str, field: str = "") -> Obj:
    if typ == "string":
        return {"type": "string"}
    if typ == "integer":
        return {"type": "integer", "format": "int64"}
    if typ == "number":
        return {"type": "number", "format": "double"}
    if typ == "boolean":
        return {"type": "boolean"}
    if typ == "date-time":
        return {"type": "string", "format": "date-time"}
    if typ == "object":
        return {"type": "object"}
    if typ.startswith("#"):
        return {"$ref": ref_prefix + typ[1:]}
    if typ.startswith("["):
        item = typ[1:-1]
        schema: Obj = {"type": "array", "items": _schema(item, ref_prefix)}
        key = MERGE_KEYS.get(field)
        if key and item.startswith("#") and key in DEFINITIONS.get(item[1:], {}):
            schema["x-kubernetes-patch-merge-key"] = key
            schema["x-kubernetes-patch-strategy"] = "merge"
            schema["x-kubernetes-list-type"] = "map"
            schema["x-kubernetes-list-map-keys"] = [key]
        elif field in MERGE_PRIMITIVE_LISTS:
            schema["x-kubernetes-patch-strategy"] = "merge"
            schema["x-kubernetes-list-type"] = "set"
        return schema
    if typ.startswith("{"):
        return {"type": "object", "additionalProperties": _schema(typ[1:-1], ref_prefix)}
    return {}


def _definitions(ref_prefix: str, v3: bool) -> dict[str, Obj]:
    gvks = _gvk_of_definitions()
    out: dict[str, Obj] = {}
    for name, props in DEFINITIONS.items():
        schema: Obj = {
            "type": "object",
            "properties": {field: _schema(t, ref_prefix, field) for field, t in props.items()},
        }
        if name in gvks:
            schema["x-kubernetes-group-version-kind"] = [gvks[name]]
        out[name] = schema
    return out


# --- paths --------------------------------------------------------------------------------------


def _paths_of(r: ServedResource) -> list[tuple[str, str, bool]]:
    """(path, subresource, item) for the resource's URL forms."""
    root = f"/api/{r.version}" if not r.group else f"/apis/{r.group}/{r.version}"
    base = f"{root}/namespaces/{{namespace}}/{r.plural}" if r.namespaced else f"{root}/{r.plural}"
    paths = [(base, "", False), (f"{base}/{{name}}", "", True)]
    for sub in r.subresources:
        paths.append((f"{base}/{{name}}/{sub}", sub, True))
    if r.namespaced:
        paths.append((f"{root}/{r.plural}", "", False))
    return paths


def _param_v2(name: str, where: str = "query") -> Obj:
    p: Obj = {"name": name, "in": where, "type": "string", "uniqueItems": True}
    if where == "path":
        p["required"] = True
    return p


def _param_v3(name: str, where: str = "query") -> Obj:
    p: Obj = {"name": name, "in": where, "schema": {"type": "string", "uniqueItems": True}}
    if where == "path":
        p["required"] = True
    return p


_WRITE_PARAMS = ("dryRun", "fieldManager", "fieldValidation")
_ACTION_VERB = {"get": "get", "put": "update", "patch": "patch", "delete": "delete", "post": "create"}
_PATCH_TYPES = (
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
    "application/apply-patch+yaml",
)


def _operations(r: ServedResource, path: str, sub: str, item: bool) -> dict[str, str]:
    if r.plural == "bindings":
        return {"post": "create"} if not item else {}
    if sub == "binding":
        return {"post": "create"}
    if sub == "status":
        return {"get": "get", "put": "update", "patch": "patch"}
    if item:
        return {"get": "get", "put": "update", "patch": "patch", "delete": "delete"}
    if r.namespaced and "{namespace}" not in path:
        return {"get": "list"}
    return {"get": "list", "post": "create", "delete": "deletecollection"}


def _op_id(verb: str, r: ServedResource, sub: str, path: str) -> str:
    scope = "Namespaced" if "{namespace}" in path else ""
    words = "".join(w.capitalize() for w in (r.group.split(".")[0] or "core", r.version))
    suffix = sub.capitalize()
    if verb == "list" and r.namespaced and not scope:
        return f"list{words}{r.kind}ForAllNamespaces"
    return f"{verb}{words}{scope}{r.kind}{suffix}"


def _paths(r: ServedResource, v3: bool, ref_prefix: str) -> dict[str, Obj]:
    out: dict[str, Obj] = {}
    def_name = custom_definition_name(r) if r.custom is not None else definition_of(r.kind, r.group, r.version)
    has_list = def_name is not None and (r.custom is not None or f"{def_name}List" in DEFINITIONS)
    # A custom resource takes no strategic merge patch (kubectl then sends a merge patch).
    patch_types = _PATCH_TYPES if r.custom is None else tuple(t for t in _PATCH_TYPES if "strategic" not in t)
    for path, sub, item in _paths_of(r):
        ops: Obj = {}
        for method, verb in _operations(r, path, sub, item).items():
            kind = "Binding" if sub == "binding" else r.kind
            target = def_name if kind == r.kind else definition_of(kind, "", r.version)
            if verb in ("list", "deletecollection") and has_list:
                target = f"{def_name}List" if verb == "list" else _META + "Status"
            ref = {"$ref": ref_prefix + target} if target else {"type": "object"}
            params = [(_param_v3 if v3 else _param_v2)("pretty")]
            if method in ("post", "put", "patch"):
                params += [(_param_v3 if v3 else _param_v2)(p) for p in _WRITE_PARAMS]
            if method == "patch":
                params.append((_param_v3 if v3 else _param_v2)("force"))
            if verb in ("list",):
                params += [
                    (_param_v3 if v3 else _param_v2)(p)
                    for p in ("labelSelector", "fieldSelector", "watch", "resourceVersion", "timeoutSeconds", "limit")
                ]
            op: Obj = {
                "operationId": _op_id(verb, r, sub, path),
                "x-kubernetes-action": verb if verb != "create" or sub != "binding" else "post",
                "x-kubernetes-group-version-kind": {"group": r.group, "version": r.version, "kind": kind},
                "parameters": params,
            }
            if v3:
                op["responses"] = {"200": {"description": "OK", "content": {"application/json": {"schema": ref}}}}
                if method in ("post", "put"):
                    op["requestBody"] = {"content": {"*/*": {"schema": ref}}, "required": True}
                elif method == "patch":
                    op["requestBody"] = {
                        "content": {t: {"schema": {"$ref": ref_prefix + _META + "Patch"}} for t in patch_types},
                        "required": True,
                    }
            else:
                op["responses"] = {"200": {"description": "OK", "schema": ref}}
                op["produces"] = ["application/json", "application/yaml"]
                op["consumes"] = list(patch_types) if method == "patch" else ["*/*"]
                if method in ("post", "put", "patch"):
                    schema = {"$ref": ref_prefix + _META + "Patch"} if method == "patch" else ref
                    op["parameters"] = [{"name": "body", "in": "body", "required": True, "schema": schema}, *params]
            ops[method] = op
        if not ops:
            continue
        where = [(_param_v3 if v3 else _param_v2)("name", "path")] if item else []
        if "{namespace}" in path:
            where.append((_param_v3 if v3 else _param_v2)("namespace", "path"))
        ops["parameters"] = where
        out[path] = ops
    return out


_INFO = {"title": "Kubernetes", "version": GIT_VERSION}


# --- custom resources ---------------------------------------------------------------------------


def custom_definition_name(r: ServedResource) -> str:
    """The definition name of a custom resource's version, as the API server names it: the
    group reversed, the version, the kind (``io.x-k8s.scheduling.v1alpha1.ElasticQuota``)."""
    return f"{'.'.join(reversed(r.group.split('.')))}.{r.version}.{r.kind}"


def _custom_definitions(r: ServedResource, ref_prefix: str) -> dict[str, Obj]:
    """The schema of a custom resource's version (its ``openAPIV3Schema`` with ``apiVersion``,
    ``kind`` and ``metadata``) and of its list, tagged with their group, version and kind."""
    name = custom_definition_name(r)
    version = r.custom_version
    schema: Obj = copy.deepcopy(version.schema) if version is not None and version.schema else {}
    if not schema:
        schema = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    props = schema.setdefault("properties", {})
    props.setdefault("apiVersion", {"type": "string"})
    props.setdefault("kind", {"type": "string"})
    props["metadata"] = {"$ref": ref_prefix + _META + "ObjectMeta"}
    schema["x-kubernetes-group-version-kind"] = [{"group": r.group, "version": r.version, "kind": r.kind}]
    list_kind = r.custom.list_kind if r.custom is not None else f"{r.kind}List"
    listed: Obj = {
        "type": "object",
        "required": ["items"],
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "items": {"type": "array", "items": {"$ref": ref_prefix + name}},
            "metadata": {"$ref": ref_prefix + _META + "ListMeta"},
        },
        "x-kubernetes-group-version-kind": [{"group": r.group, "version": r.version, "kind": list_kind}],
    }
    return {name: schema, f"{name}List": listed}


_NOT_IN_V2 = ("nullable", "anyOf", "oneOf", "not")


def _v2_schema(schema: Any) -> Any:
    """A v3 schema as OpenAPI v2 can say it (as the API server publishes custom schemas in v2):
    without ``nullable``, ``anyOf``, ``oneOf`` and ``not``, and an int-or-string without a type.
    Each node is visited once: the time is linear in the schema's size, however deep it nests."""
    if isinstance(schema, list):
        return [_v2_schema(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out: Obj = {}
    for key, value in schema.items():
        if key in _NOT_IN_V2:
            continue
        if key == "properties" and isinstance(value, dict):
            # A map of field names to schemas: a field may be named "nullable" or "not".
            out[key] = {name: _v2_schema(sub) for name, sub in value.items()}
        else:
            out[key] = _v2_schema(value)
    if schema.get("x-kubernetes-int-or-string") is True:
        out.pop("type", None)
    return out


_CUSTOM_CACHE: list[Any] = [None, None]


def _custom_documents(custom: Sequence[ServedResource]) -> tuple[Obj, dict[str, Obj], dict[str, str]]:
    """The custom resources' share of the documents: (v2 paths and definitions, v3 documents by
    group/version, their hashes), built once per set of resources."""
    if _CUSTOM_CACHE[0] is custom and _CUSTOM_CACHE[1] is not None:
        cached: tuple[Obj, dict[str, Obj], dict[str, str]] = _CUSTOM_CACHE[1]
        return cached
    v2: Obj = {"paths": {}, "definitions": {}}
    docs: dict[str, Obj] = {}
    v3_prefix = "#/components/schemas/"
    static_schemas = _v3_schemas()
    for r in custom:
        v2["paths"].update(_paths(r, False, "#/definitions/"))
        v2["definitions"].update({k: _v2_schema(v) for k, v in _custom_definitions(r, "#/definitions/").items()})
        key = _group_key(r)
        doc = docs.setdefault(
            key, {"openapi": "3.0.0", "info": _INFO, "paths": {}, "components": {"schemas": dict(static_schemas)}}
        )
        doc["paths"].update(_paths(r, True, v3_prefix))
        doc["components"]["schemas"].update(_custom_definitions(r, v3_prefix))
    hashes = {
        key: hashlib.sha512(json.dumps(doc, sort_keys=True).encode()).hexdigest().upper() for key, doc in docs.items()
    }
    _CUSTOM_CACHE[0], _CUSTOM_CACHE[1] = custom, (v2, docs, hashes)
    return v2, docs, hashes


def v2_document(custom: Sequence[ServedResource] = ()) -> Obj:
    """The OpenAPI v2 document: the built-in resources and the ``custom`` ones."""
    static = _v2_static()
    if not custom:
        return static
    extra, _, _ = _custom_documents(custom)
    return {
        **static,
        "paths": {**static["paths"], **extra["paths"]},
        "definitions": {**static["definitions"], **extra["definitions"]},
    }


@functools.cache
def _v2_static() -> Obj:
    prefix = "#/definitions/"
    paths: dict[str, Obj] = {}
    for r in RESOURCES:
        paths.update(_paths(r, False, prefix))
    definitions = _definitions(prefix, v3=False)
    definitions[_META + "Patch"] = {"type": "object", "description": "A patch document in one of the patch formats."}
    return {"swagger": "2.0", "info": _INFO, "paths": paths, "definitions": definitions}


def _group_key(r: ServedResource) -> str:
    return f"api/{r.version}" if not r.group else f"apis/{r.group}/{r.version}"


@functools.cache
def _v3_schemas() -> dict[str, Obj]:
    schemas = _definitions("#/components/schemas/", v3=True)
    schemas[_META + "Patch"] = {"type": "object", "description": "A patch document in one of the patch formats."}
    return schemas


@functools.cache
def _v3_documents() -> dict[str, Obj]:
    prefix = "#/components/schemas/"
    schemas = _v3_schemas()
    docs: dict[str, Obj] = {}
    for r in RESOURCES:
        key = _group_key(r)
        doc = docs.setdefault(key, {"openapi": "3.0.0", "info": _INFO, "paths": {}, "components": {"schemas": schemas}})
        doc["paths"].update(_paths(r, True, prefix))
    return docs


@functools.cache
def _v3_hashes() -> dict[str, str]:
    return {
        key: hashlib.sha512(json.dumps(doc, sort_keys=True).encode()).hexdigest().upper()
        for key, doc in _v3_documents().items()
    }


def v3_index(custom: Sequence[ServedResource] = ()) -> Obj:
    """``/openapi/v3``: each group/version's document and its hash (the custom ones' too)."""
    hashes = dict(_v3_hashes())
    if custom:
        hashes.update(_custom_documents(custom)[2])
    return {"paths": {key: {"serverRelativeURL": f"/openapi/v3/{key}?hash={h}"} for key, h in hashes.items()}}


def v3_document(key: str, custom: Sequence[ServedResource] = ()) -> Obj | None:
    """The v3 document of one group/version (``apis/<group>/<version>``), built-in or custom."""
    if custom:
        doc = _custom_documents(custom)[1].get(key)
        if doc is not None:
            return doc
    return _v3_documents().get(key)
