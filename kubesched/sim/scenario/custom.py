"""CustomResourceDefinitions and custom objects in scenarios.

A scenario may hold CustomResourceDefinitions (``apiextensions.k8s.io/v1``) and, after one,
objects of its kind. Both are checked as the API server checks them (the definition's fields;
the object pruned, defaulted and validated against its version's schema); an object of a kind
no definition of the scenario serves is refused, naming its kind and itself.
"""

from __future__ import annotations

import copy

from kubesched import errors
from kubesched.cluster.custom_resources import (
    CRD_API_VERSION,
    CRD_GROUP,
    CRD_KIND,
    CustomResourceRegistry,
    split_api_version,
)
from kubesched.cluster.store import API_VERSIONS
from kubesched.objects import Obj
from kubesched.sim.apiserver.customresources import validate_definition
from kubesched.sim.apiserver.openapi.documents import unknown_fields
from kubesched.sim.apiserver.validation import structural
from kubesched.sim.apiserver.validation.decode import decode_error
from kubesched.sim.apiserver.validation.meta import go_quote, validate_object_meta

#: The API groups of the built-in kinds (a kind in another group is a custom resource's).
BUILT_IN_GROUPS = frozenset(split_api_version(v)[0] for v in API_VERSIONS.values()) - {CRD_GROUP}


class CustomObjectError(errors.ScenarioError):
    """A custom resource definition or object a scenario cannot hold; the message names it."""


def is_custom_kind(obj: Obj) -> bool:
    """Whether ``obj``'s ``apiVersion`` names a group no built-in kind is in."""
    api_version = obj.get("apiVersion")
    return isinstance(api_version, str) and split_api_version(api_version)[0] not in BUILT_IN_GROUPS


def _summary(causes: list[tuple[str, str, str]]) -> str:
    text = ", ".join(f"{f}: {m}" for f, _, m in causes)
    return f"[{text}]" if len(causes) > 1 else text


def read_custom(obj: Obj, definitions: CustomResourceRegistry, where: str) -> tuple[Obj, tuple[str, str, str]]:
    """A definition or custom object of a scenario as it is created, and the identity that must
    be unique in the scenario; a definition is added to ``definitions``. Raises
    :class:`CustomObjectError` (a ScenarioError) for what the API server would refuse."""
    kind = obj.get("kind")
    meta = obj.get("metadata")
    if not isinstance(meta, dict) or not meta.get("name"):
        raise CustomObjectError(f"{where}.metadata.name: Required value ({kind})")
    obj = copy.deepcopy(obj)
    meta = obj["metadata"]
    name = str(meta["name"])
    if kind == CRD_KIND:
        if obj.get("apiVersion") != CRD_API_VERSION:
            raise CustomObjectError(
                f"{where}.apiVersion: {obj.get('apiVersion')!r} is not served for {CRD_KIND}; use {CRD_API_VERSION}"
            )
        meta.pop("namespace", None)
        unknown = unknown_fields(CRD_KIND, CRD_GROUP, obj)
        if unknown:
            listed = ", ".join(f"unknown field {go_quote(f)}" for f in unknown)
            raise CustomObjectError(
                f'{where}: {CRD_KIND} in version "v1" cannot be handled as a {CRD_KIND}: strict decoding error: '
                f"{listed} ({CRD_KIND} {name})"
            )
        decoding = decode_error(CRD_KIND, CRD_GROUP, obj)
        if decoding is not None:
            raise CustomObjectError(f"{where}: {decoding} ({CRD_KIND} {name})")
        causes = validate_definition(obj, None)
        if causes:
            raise CustomObjectError(f'{where}: {CRD_KIND}.{CRD_GROUP} "{name}" is invalid: {_summary(causes)}')
        definitions.observe("ADDED", obj)
        return obj, (CRD_KIND, "", name)
    api_version = str(obj.get("apiVersion"))
    resource = definitions.by_kind(api_version, str(kind))
    if resource is None:
        raise CustomObjectError(
            f"{where}.kind: no CustomResourceDefinition of the scenario serves {kind} in {api_version} "
            f"({kind} {meta.get('namespace') + '/' if meta.get('namespace') else ''}{name}); list the definition "
            "before its objects"
        )
    version = resource.version(split_api_version(api_version)[1])
    schema = version.schema if version is not None else None
    if resource.namespaced:
        meta["namespace"] = meta.get("namespace") or "default"
    else:
        meta.pop("namespace", None)
    structural.normalize(obj, schema)
    causes = validate_object_meta(meta) + structural.check(obj, None, schema)
    if causes:
        raise CustomObjectError(f'{where}: {kind}.{resource.group} "{name}" is invalid: {_summary(causes)}')
    obj["apiVersion"] = f"{resource.group}/{resource.storage_version}"
    meta.setdefault("generation", 1)
    return obj, (resource.key, str(meta.get("namespace") or ""), name)
