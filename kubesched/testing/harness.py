"""Run one plugin's extension points against pods and nodes, through the real runtime.

    from kubesched.testing import make_node, make_pod, filter_nodes, score_nodes

    nodes = [make_node("n1").capacity(cpu="2"), make_node("n2").capacity(cpu="8")]
    assert filter_nodes("NodeResourcesFit", make_pod("p").req(cpu="4"), nodes)["n1"].reasons == ["Insufficient cpu"]
    assert score_nodes("NodeResourcesFit", make_pod("p").req(cpu="1"), nodes) == {"n1": 25, "n2": 46}

A plugin is named by its registered name, or given as a class (an unregistered one is fine).
``args`` is a dict validated by the plugin's ``Args`` model, or an ``Args`` instance.
The functions are synchronous (they run their own event loop); the ``a``-prefixed versions
are coroutines for async tests.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any

from kubesched.framework.features import FeatureGates
from kubesched.framework.status import Status
from kubesched.testing.partial_profile import (
    NodeLike,
    ObjectListers,
    PodLike,
    as_node_infos,
    as_pod_info,
    build_framework,
    framework_for,
    plugin_class,
)
from kubesched.testing.points import plugin_framework

#: The shared pieces live in :mod:`kubesched.testing.partial_profile`; imported from here as before.
__all__ = [
    "NodeLike",
    "ObjectListers",
    "PodLike",
    "afilter_nodes",
    "as_node_infos",
    "as_pod_info",
    "ascore_nodes",
    "build_framework",
    "filter_nodes",
    "framework_for",
    "plugin_class",
    "reasons",
    "score_nodes",
]


async def afilter_nodes(
    plugin: str | type,
    pod: PodLike,
    nodes: Iterable[NodeLike],
    args: Any = None,
    pods: Iterable[PodLike] = (),
    objects: Iterable[dict[str, Any]] = (),
    feature_gates: FeatureGates | None = None,
) -> dict[str, Status | None]:
    """PreFilter (if implemented) then Filter on every node: ``{node: None (fits) | Status}``.

    A PreFilter rejection is reported on every node, as upstream does; nodes outside a
    PreFilterResult get UnschedulableAndUnresolvable (``PluginFramework.afilter_all``).
    """
    fw = plugin_framework(plugin, args=args, nodes=nodes, pods=pods, objects=objects, feature_gates=feature_gates)
    return await fw.afilter_all(pod)


async def ascore_nodes(
    plugin: str | type,
    pod: PodLike,
    nodes: Iterable[NodeLike],
    args: Any = None,
    pods: Iterable[PodLike] = (),
    normalize: bool = True,
    objects: Iterable[dict[str, Any]] = (),
    feature_gates: FeatureGates | None = None,
) -> dict[str, int]:
    """PreScore (if implemented), Score and NormalizeScore over ``nodes``: ``{node: score}``.

    With ``normalize=False`` the raw Score results. Weight is 1. PreFilter and Filter run first,
    as in a real cycle (some plugins compute their scoring state there); Filter verdicts are not
    applied: every node given is scored (``PluginFramework.ascore``).
    """
    fw = plugin_framework(plugin, args=args, nodes=nodes, pods=pods, objects=objects, feature_gates=feature_gates)
    return await fw.ascore(pod, normalize=normalize)


def filter_nodes(
    plugin: str | type,
    pod: PodLike,
    nodes: Iterable[NodeLike],
    args: Any = None,
    pods: Iterable[PodLike] = (),
    objects: Iterable[dict[str, Any]] = (),
    feature_gates: FeatureGates | None = None,
) -> dict[str, Status | None]:
    """:func:`afilter_nodes`, on an event loop of its own."""
    return asyncio.run(afilter_nodes(plugin, pod, nodes, args, pods, objects, feature_gates))


def score_nodes(
    plugin: str | type,
    pod: PodLike,
    nodes: Iterable[NodeLike],
    args: Any = None,
    pods: Iterable[PodLike] = (),
    normalize: bool = True,
    objects: Iterable[dict[str, Any]] = (),
    feature_gates: FeatureGates | None = None,
) -> dict[str, int]:
    """:func:`ascore_nodes`, on an event loop of its own."""
    return asyncio.run(ascore_nodes(plugin, pod, nodes, args, pods, normalize, objects, feature_gates))


def reasons(statuses: dict[str, Status | None]) -> dict[str, list[str]]:
    """``{node: reasons}`` with ``[]`` for nodes that fit: handy in table tests."""
    return {n: ([] if s is None or s.is_success() else list(s.reasons)) for n, s in statuses.items()}
