"""The custom resources a store serves: what its CustomResourceDefinitions declare.

A store keeps CustomResourceDefinitions under the kind :data:`CRD_KIND` (cluster scoped) and the
objects of a custom resource under the kind key ``"<plural>.<group>"`` (:func:`store_key`, the
same for every version of the resource, as ``GroupVersionResource.qualified_name`` spells it).
The :class:`CustomResourceRegistry` a store holds follows the definitions it stores (the store
tells it of every write of one), and answers which key an ``apiVersion``/``kind`` or a
``group``/``version``/``plural`` is stored under, and whether that resource is namespaced.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from kubesched.objects import Obj

#: The kind (and store key) of the definitions themselves.
CRD_KIND = "CustomResourceDefinition"
CRD_GROUP = "apiextensions.k8s.io"
CRD_API_VERSION = "apiextensions.k8s.io/v1"
CRD_PLURAL = "customresourcedefinitions"


def store_key(group: str, plural: str) -> str:
    """The store kind key of the objects of resource ``plural`` in ``group``: ``plural.group``."""
    return f"{plural}.{group}"


def split_store_key(key: str) -> tuple[str, str]:
    """``(group, plural)`` of a store key made by :func:`store_key`."""
    plural, _, group = key.partition(".")
    return group, plural


def split_api_version(api_version: str) -> tuple[str, str]:
    """``(group, version)`` of an ``apiVersion`` (the core group is ``""``)."""
    group, _, version = api_version.rpartition("/")
    return group, version


@dataclass(frozen=True)
class CustomVersion:
    """One version of a custom resource as its definition declares it."""

    name: str
    served: bool
    storage: bool
    #: the version's ``schema.openAPIV3Schema`` (``None`` when it has none)
    schema: Obj | None
    #: whether the ``status`` subresource is declared
    status: bool
    #: whether the ``scale`` subresource is declared (its paths are not served)
    scale: bool
    #: the ``additionalPrinterColumns``
    printer_columns: tuple[Obj, ...]
    deprecated: bool = False
    deprecation_warning: str = ""
    #: the ``selectableFields``' paths (``spec.color``): what field selectors may name besides
    #: ``metadata.name`` and ``metadata.namespace``
    selectable_fields: tuple[str, ...] = ()


@dataclass(frozen=True)
class CustomResource:
    """A custom resource: the names, scope and versions its definition declares."""

    #: the definition's name, ``plural.group``
    name: str
    group: str
    plural: str
    singular: str
    kind: str
    list_kind: str
    namespaced: bool
    short_names: tuple[str, ...]
    categories: tuple[str, ...]
    versions: tuple[CustomVersion, ...]

    @property
    def key(self) -> str:
        """The kind key its objects are stored under."""
        return store_key(self.group, self.plural)

    @property
    def storage_version(self) -> str:
        """The version objects are stored in (the first when none is marked)."""
        for v in self.versions:
            if v.storage:
                return v.name
        return self.versions[0].name if self.versions else ""

    def version(self, name: str) -> CustomVersion | None:
        """The version ``name``, served or not."""
        for v in self.versions:
            if v.name == name:
                return v
        return None

    @property
    def served_versions(self) -> tuple[CustomVersion, ...]:
        return tuple(v for v in self.versions if v.served)


def _strings(value: Any) -> tuple[str, ...]:
    return tuple(str(v) for v in value) if isinstance(value, list) else ()


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def parse_definition(crd: Mapping[str, Any]) -> CustomResource | None:
    """The custom resource a CustomResourceDefinition declares (``None`` when it names no
    group, plural or kind). Reads leniently: the API server validates definitions."""
    spec = _mapping(crd.get("spec"))
    names = _mapping(spec.get("names"))
    group, plural, kind = spec.get("group"), names.get("plural"), names.get("kind")
    if not (isinstance(group, str) and isinstance(plural, str) and isinstance(kind, str) and group and plural and kind):
        return None
    versions = []
    for v in spec.get("versions") or ():
        v = _mapping(v)
        subs = _mapping(v.get("subresources"))
        schema = _mapping(v.get("schema")).get("openAPIV3Schema")
        versions.append(
            CustomVersion(
                name=str(v.get("name") or ""),
                served=v.get("served") is True,
                storage=v.get("storage") is True,
                schema=dict(schema) if isinstance(schema, Mapping) else None,
                status="status" in subs,
                scale="scale" in subs,
                printer_columns=tuple(
                    dict(c) for c in v.get("additionalPrinterColumns") or () if isinstance(c, Mapping)
                ),
                deprecated=v.get("deprecated") is True,
                deprecation_warning=str(v.get("deprecationWarning") or ""),
                selectable_fields=tuple(
                    str(f["jsonPath"]).lstrip(".")
                    for f in v.get("selectableFields") or ()
                    if isinstance(f, Mapping) and isinstance(f.get("jsonPath"), str)
                ),
            )
        )
    return CustomResource(
        name=str(_mapping(crd.get("metadata")).get("name") or f"{plural}.{group}"),
        group=group,
        plural=plural,
        singular=str(names.get("singular") or kind.lower()),
        kind=kind,
        list_kind=str(names.get("listKind") or f"{kind}List"),
        namespaced=spec.get("scope", "Namespaced") != "Cluster",
        short_names=_strings(names.get("shortNames")),
        categories=_strings(names.get("categories")),
        versions=tuple(versions),
    )


class CustomResourceRegistry:
    """The custom resources of one store, kept by the store as its definitions change."""

    def __init__(self) -> None:
        self._by_key: dict[str, CustomResource] = {}
        self._by_definition: dict[str, str] = {}
        #: bumped on every change: what a cache of documents built from the registry keys on
        self.generation = 0

    # --- following the store -----------------------------------------------------------------
    def observe(self, event: str, crd: Mapping[str, Any]) -> None:
        """Take in a write of a definition: ``ADDED``, ``MODIFIED`` or ``DELETED``."""
        name = str(_mapping(crd.get("metadata")).get("name") or "")
        old_key = self._by_definition.pop(name, None)
        if old_key is not None:
            self._by_key.pop(old_key, None)
        if event != "DELETED":
            resource = parse_definition(crd)
            if resource is not None:
                self._by_key[resource.key] = resource
                self._by_definition[name] = resource.key
        self.generation += 1

    # --- lookups ------------------------------------------------------------------------------
    def __iter__(self) -> Iterator[CustomResource]:
        return iter(list(self._by_key.values()))

    def __len__(self) -> int:
        return len(self._by_key)

    def by_key(self, key: str) -> CustomResource | None:
        """The resource whose objects are stored under ``key``."""
        return self._by_key.get(key)

    def by_definition(self, name: str) -> CustomResource | None:
        """The resource the definition named ``name`` declares."""
        key = self._by_definition.get(name)
        return self._by_key.get(key) if key is not None else None

    def lookup(self, group: str, version: str, plural: str) -> tuple[CustomResource, CustomVersion] | None:
        """The resource and served version a path ``/apis/group/version/plural`` names."""
        resource = self._by_key.get(store_key(group, plural))
        if resource is None:
            return None
        v = resource.version(version)
        return (resource, v) if v is not None and v.served else None

    def by_kind(self, api_version: str, kind: str) -> CustomResource | None:
        """The resource of objects with this ``apiVersion`` and ``kind`` (a served version)."""
        group, version = split_api_version(api_version)
        for resource in self._by_key.values():
            if resource.group == group and resource.kind == kind:
                v = resource.version(version)
                return resource if v is not None and v.served else None
        return None

    def store_key_for(self, api_version: str, kind: str) -> str | None:
        """The store key objects of ``apiVersion``/``kind`` are kept under, or ``None`` when no
        definition serves them."""
        resource = self.by_kind(api_version, kind)
        return resource.key if resource is not None else None

    def store_key_for_resource(self, group: str, version: str, plural: str) -> str | None:
        """The store key of ``/apis/group/version/plural`` when a definition serves that version."""
        found = self.lookup(group, version, plural)
        return found[0].key if found is not None else None

    def resource_for_key(self, key: str) -> tuple[str, str, str] | None:
        """``(group, storage version, plural)`` of the resource stored under ``key``."""
        resource = self._by_key.get(key)
        return (resource.group, resource.storage_version, resource.plural) if resource is not None else None

    def kind_for_key(self, key: str) -> tuple[str, str] | None:
        """``(apiVersion of the storage version, kind)`` of the resource stored under ``key``."""
        resource = self._by_key.get(key)
        if resource is None:
            return None
        return f"{resource.group}/{resource.storage_version}", resource.kind

    def is_namespaced(self, key: str) -> bool | None:
        """Whether the resource stored under ``key`` is namespaced (``None``: no such resource)."""
        resource = self._by_key.get(key)
        return resource.namespaced if resource is not None else None

    def is_cluster_scoped(self, key: str) -> bool:
        """Whether ``key`` is a custom resource of cluster scope."""
        resource = self._by_key.get(key)
        return resource is not None and not resource.namespaced
