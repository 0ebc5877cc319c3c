"""Which resource a test's object is: what the kit needs to put custom objects (a plugin's own
kinds) where the scheduler and a plugin's informers find them.

A built-in object goes by its Kind. A custom object (an ElasticQuota, say) is found through a
CustomResourceDefinition among the test's objects, or without one by upstream's guess from kind
to resource (``ElasticQuota`` -> ``elasticquotas``, ``Policy`` -> ``policies``), as kubectl
guesses when discovery cannot tell.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kubesched.cluster.custom_resources import CRD_KIND, parse_definition, split_api_version
from kubesched.cluster.kinds import BUILTIN_RESOURCES
from kubesched.cluster.store import Store
from kubesched.framework.informers import GroupVersionResource
from kubesched.objects import Obj
from kubesched.runtime.informers import SharedInformers
from kubesched.sim.scenario.custom import is_custom_kind
from kubesched.testing.builders import NodeBuilder, PodBuilder


def guess_plural(kind: str) -> str:
    """Upstream's guess of a resource's plural from its Kind (``UnsafeGuessKindToResource``)."""
    singular = kind.lower()
    if not singular:
        return singular
    if singular.endswith(("s", "x", "z", "ch", "sh")):
        return singular + "es"
    if singular.endswith("y") and len(singular) > 1 and singular[-2] not in "aeiou":
        return singular[:-1] + "ies"
    return singular + "s"


def is_builtin(obj: Mapping[str, Any]) -> bool:
    """Whether ``obj`` is of a kind the store keeps by its Kind: a definition, or an object of
    a built-in group (scheduler-plugins' ``PodGroup``, in its own group, is not), as scenarios
    tell them apart (:func:`~kubesched.sim.scenario.custom.is_custom_kind`)."""
    return obj.get("kind") == CRD_KIND or not is_custom_kind(dict(obj))


def definitions_in(objects: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str], str]:
    """``(group, kind)`` -> plural, of the CustomResourceDefinitions among ``objects``."""
    out: dict[tuple[str, str], str] = {}
    for obj in objects:
        if obj.get("kind") == CRD_KIND:
            defined = parse_definition(obj)
            if defined is not None:
                out[(defined.group, defined.kind)] = defined.plural
    return out


def resource_of(obj: Mapping[str, Any], definitions: Mapping[tuple[str, str], str]) -> GroupVersionResource:
    """The group/version/resource of ``obj``: a built-in's by its Kind, a custom object's by its
    definition (in ``definitions``, see :func:`definitions_in`) or the guessed plural."""
    kind = str(obj.get("kind") or "")
    group, version = split_api_version(str(obj.get("apiVersion") or ""))
    known = BUILTIN_RESOURCES.get(kind)
    if known is not None and known.group == group:
        return GroupVersionResource(group, version or known.version, known.resource)
    return GroupVersionResource(group, version, definitions.get((group, kind)) or guess_plural(kind))


def store_kind_of(obj: Mapping[str, Any], definitions: Mapping[tuple[str, str], str]) -> str:
    """The kind the in-memory store keeps ``obj`` under: its Kind for a built-in, ``<plural>.<group>``
    for a custom object."""
    if is_builtin(obj):
        return str(obj["kind"])
    return resource_of(obj, definitions).qualified_name


def put_objects(store: Store, objs: Iterable[Any]) -> None:
    """Create ``objs`` (builders, or dicts with an ``apiVersion`` and a ``kind``) in ``store``:
    built-ins under their Kind, custom objects under ``<plural>.<group>`` (by a definition in the
    store or among ``objs``, else the guessed plural)."""
    for kind, obj in _where_kept(store, objs):
        store.create(kind, obj)


def replace_objects(store: Store, objs: Iterable[Any]) -> None:
    """Replace ``objs`` in ``store`` (as :func:`put_objects` finds where each is kept), as an
    update through the API would: their watchers see each change."""
    for kind, obj in _where_kept(store, objs):
        store.update(kind, obj)


def _where_kept(store: Store, objs: Iterable[Any]) -> list[tuple[str, Obj]]:
    """Each of ``objs`` (builders made into objects) with the kind ``store`` keeps it under."""
    made = [o.obj() if isinstance(o, (PodBuilder, NodeBuilder)) else o for o in objs]
    definitions = _known_definitions(store, made)
    return [(store_kind_of(obj, definitions), obj) for obj in made]


def _known_definitions(store: Store, objs: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str], str]:
    definitions = definitions_in(objs)
    for defined in store.custom_resources:
        definitions.setdefault((defined.group, defined.kind), defined.plural)
    return definitions


def feed_informers(informers: SharedInformers, objects: Iterable[Mapping[str, Any]]) -> None:
    """Deliver ``objects`` to the informers plugins asked for (``handle.informer_for``) whose
    resource they are, as the initial list, and mark every informer synced: a framework without
    a cluster sees the test's custom objects as a scheduler would."""
    made = list(objects)
    definitions = definitions_in(made)
    wanted = {(gvr.group, gvr.resource): informers.informer_for(gvr) for gvr in informers.resources()}
    for obj in made:
        gvr = resource_of(obj, definitions)
        informer = wanted.get((gvr.group, gvr.resource))
        if informer is not None:
            informer.added(dict(obj))
    informers.set_synced()


__all__ = [
    "definitions_in",
    "feed_informers",
    "guess_plural",
    "is_builtin",
    "put_objects",
    "resource_of",
    "store_kind_of",
]
