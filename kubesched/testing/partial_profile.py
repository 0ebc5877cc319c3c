"""The pieces the test kit's drivers share: the pods and nodes they take (builders, objects or
infos) and the partial profile of a few plugins they run them through.

:mod:`kubesched.testing.harness` (the shortcuts), :mod:`kubesched.testing.points` and the drivers
beneath it build on this module, which imports none of them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kubesched.backend.cache import Cache, Snapshot
from kubesched.config.validation import validate_plugin_args
from kubesched.framework.features import FeatureGates
from kubesched.framework.interface import EXTENSION_POINTS
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.runtime.framework import Collaborators, Framework, PluginRef, ProfileSpec
from kubesched.runtime.registry import Registry, default_registry
from kubesched.testing.builders import NodeBuilder, PodBuilder
from kubesched.testing.resources import feed_informers

PodLike = PodBuilder | PodInfo | dict[str, Any]
NodeLike = NodeBuilder | NodeInfo | dict[str, Any]


def as_pod_info(pod: PodLike) -> PodInfo:
    """``pod`` (a builder, an object or a PodInfo) as a PodInfo."""
    if isinstance(pod, PodInfo):
        return pod
    if isinstance(pod, PodBuilder):
        return pod.info()
    return PodInfo(pod)


def as_node_infos(nodes: Iterable[NodeLike], pods: Iterable[PodLike] = ()) -> list[NodeInfo]:
    """NodeInfos for ``nodes``, with the bound ``pods`` (``spec.nodeName`` set) placed on them."""
    # Nodes given as objects go through a Cache, so derived cluster-wide state (image
    # spread across nodes) is filled in exactly as the scheduler fills it.
    cache = Cache()
    infos: list[NodeInfo] = []
    for n in nodes:
        if isinstance(n, NodeInfo):
            infos.append(n)
        else:
            obj = n.obj() if isinstance(n, NodeBuilder) else n
            infos.append(cache.add_node(obj))
    by_name = {ni.name: ni for ni in infos}
    for p in pods:
        pi = as_pod_info(p)
        if pi.node_name in by_name:
            by_name[pi.node_name].add_pod(pi)
    return infos


class _SoloPlugins(Registry):
    pass


class ObjectListers:
    """The handle's ``listers`` over a fixed list of objects (Namespaces, PVCs, PVs, ...)."""

    def __init__(self, objects: Iterable[dict[str, Any]] = ()) -> None:
        self._by_kind: dict[str, list[dict[str, Any]]] = {}
        for o in objects:
            self._by_kind.setdefault(o["kind"], []).append(o)

    def get(self, kind: str, namespace: str | None, name: str) -> dict[str, Any] | None:
        for o in self._by_kind.get(kind, []):
            meta = o.get("metadata") or {}
            if meta.get("name") == name and (namespace is None or (meta.get("namespace") or "default") == namespace):
                return o
        return None

    def list(self, kind: str, namespace: str | None = None) -> list[dict[str, Any]]:
        return [
            o
            for o in self._by_kind.get(kind, [])
            if namespace is None or ((o.get("metadata") or {}).get("namespace") or "default") == namespace
        ]

    def namespace_labels(self, namespace: str) -> dict[str, str]:
        ns = self.get("Namespace", None, namespace)
        return dict(((ns or {}).get("metadata") or {}).get("labels") or {})


def plugin_class(plugin: str | type) -> type:
    """The class of ``plugin``: given, or registered under that name."""
    if isinstance(plugin, str):
        cls: type = default_registry().get(plugin).cls
        return cls
    return plugin


def build_framework(
    plugins: Sequence[str | type],
    plugin_args: Mapping[str, Any] | None = None,
    weights: Mapping[str, int] | None = None,
    nodes: Sequence[NodeInfo] = (),
    cluster: Any = None,
    objects: Iterable[dict[str, Any]] = (),
    feature_gates: FeatureGates | None = None,
    pod_groups: Any = None,
) -> Framework:
    """A partial profile of ``plugins``, each at every point it implements, in the order given
    (a multiPoint profile of them alone). ``plugin_args`` maps a plugin's name to a dict its
    ``Args`` model validates or to an ``Args`` instance; ``weights`` a Score plugin's name to its
    weight (1 unless given). 1.37's feature gates unless ``feature_gates``; ``pod_groups``: the
    handle's pod groups (a ``PodGroupIndex``; none known unless given)."""
    objects = list(objects)
    classes = [plugin_class(p) for p in plugins]
    registry = _SoloPlugins()
    points: dict[str, list[PluginRef]] = {}
    args_out: dict[str, Any] = {}
    for cls in classes:
        name: str = cls.name  # type: ignore[attr-defined]
        registry.register(cls, name)
        for point, method in EXTENSION_POINTS.items():
            if callable(getattr(cls, method, None)):
                weight = (weights or {}).get(name, 1) if point in ("score", "placementScore") else 0
                points.setdefault(point, []).append(PluginRef(name, weight))
        given = (plugin_args or {}).get(name)
        if given is not None:
            model = getattr(cls, "Args", None)
            args_out[name] = (
                validate_plugin_args(model, given) if model is not None and isinstance(given, dict) else given
            )
    fw = Framework(
        ProfileSpec("test-scheduler", points, args_out),
        registry,
        Collaborators(cluster=cluster, listers=ObjectListers(objects), pod_groups=pod_groups),
        partial=True,
        feature_gates=feature_gates,
    )
    fw.set_snapshot(Snapshot(nodes))
    feed_informers(fw.informers, objects)
    return fw


def framework_for(
    plugin: str | type,
    args: Any = None,
    nodes: Sequence[NodeInfo] = (),
    weight: int = 1,
    cluster: Any = None,
    objects: Iterable[dict[str, Any]] = (),
    feature_gates: FeatureGates | None = None,
) -> Framework:
    """A partial profile holding only ``plugin`` at every point it implements (1.37's feature
    gates unless ``feature_gates``)."""
    name: str = plugin_class(plugin).name  # type: ignore[attr-defined]
    return build_framework(
        [plugin],
        {name: args} if args is not None else None,
        {name: weight},
        nodes,
        cluster=cluster,
        objects=objects,
        feature_gates=feature_gates,
    )
