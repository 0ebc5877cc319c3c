"""What a plugin author imports in tests.

* Builders: :func:`make_pod`, :func:`make_node`, :func:`make_pod_group` (:class:`PodBuilder`,
  :class:`NodeBuilder`, :class:`PodGroupBuilder`: a PodGroup and its members).
* One plugin's extension points, through the runtime: :func:`plugin_framework` gives a
  :class:`PluginFramework` with a method per point (``pre_enqueue``, ``sort_pods``/``less``,
  ``pre_filter``, ``add_pod``/``remove_pod``, ``filter``/``filter_all``, ``post_filter``,
  ``pre_score``/``score``, ``reserve``/``unreserve``, ``permit`` and the wait that follows,
  ``pre_bind``/``bind``/``post_bind``), and per point of a pod group's cycle
  (``placement_generate``, ``placement_feasible``/``placement_feasible_steps``,
  ``placement_scores``, ``pod_group_post_filter``: :class:`PlacementGenerateOutcome`,
  :class:`PlacementScoreOutcome`, :class:`PodGroupPostFilterOutcome`); the shortcuts
  :func:`filter_nodes` and :func:`score_nodes`.
* A whole scheduler over an in-memory cluster: :func:`running_scheduler` (a :class:`Harness`).
* A real ``kubesched sim serve`` process: :func:`sim_serve_process`.
* pytest fixtures for all of these (``kubesched_framework``, ``kubesched_scheduler``, ...):
  :mod:`kubesched.testing.pytest_plugin`, loaded by pytest wherever kubesched is installed.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kubesched.testing.builders import (
        NodeBuilder,
        PodBuilder,
        PodGroupBuilder,
        make_node,
        make_pod,
        make_pod_group,
    )
    from kubesched.testing.harness import (
        afilter_nodes,
        ascore_nodes,
        filter_nodes,
        reasons,
        score_nodes,
    )
    from kubesched.testing.partial_profile import as_node_infos, as_pod_info, framework_for
    from kubesched.testing.placement import (
        PlacementGenerateOutcome,
        PlacementScoreOutcome,
        PodGroupPostFilterOutcome,
    )
    from kubesched.testing.points import (
        PluginFramework,
        PostFilterOutcome,
        PreFilterOutcome,
        ScoreOutcome,
        plugin_framework,
    )
    from kubesched.testing.processes import sim_serve_process
    from kubesched.testing.running import (
        Harness,
        MemoryCluster,
        Recorder,
        make_harness,
        profile,
        registry_with,
        running_scheduler,
    )

#: Where each name lives: a name is imported when first used, so that pytest, which loads this
#: package's plugin wherever kubesched is installed, does not pay for the scheduler up front.
_WHERE = {
    "Harness": "kubesched.testing.running",
    "MemoryCluster": "kubesched.testing.running",
    "NodeBuilder": "kubesched.testing.builders",
    "PlacementGenerateOutcome": "kubesched.testing.placement",
    "PlacementScoreOutcome": "kubesched.testing.placement",
    "PluginFramework": "kubesched.testing.points",
    "PodBuilder": "kubesched.testing.builders",
    "PodGroupBuilder": "kubesched.testing.builders",
    "PodGroupPostFilterOutcome": "kubesched.testing.placement",
    "PostFilterOutcome": "kubesched.testing.points",
    "PreFilterOutcome": "kubesched.testing.points",
    "Recorder": "kubesched.testing.running",
    "ScoreOutcome": "kubesched.testing.points",
    "afilter_nodes": "kubesched.testing.harness",
    "as_node_infos": "kubesched.testing.partial_profile",
    "as_pod_info": "kubesched.testing.partial_profile",
    "ascore_nodes": "kubesched.testing.harness",
    "filter_nodes": "kubesched.testing.harness",
    "framework_for": "kubesched.testing.partial_profile",
    "make_harness": "kubesched.testing.running",
    "make_node": "kubesched.testing.builders",
    "make_pod": "kubesched.testing.builders",
    "make_pod_group": "kubesched.testing.builders",
    "plugin_framework": "kubesched.testing.points",
    "profile": "kubesched.testing.running",
    "reasons": "kubesched.testing.harness",
    "registry_with": "kubesched.testing.running",
    "running_scheduler": "kubesched.testing.running",
    "score_nodes": "kubesched.testing.harness",
    "sim_serve_process": "kubesched.testing.processes",
}

__all__ = [
    "Harness",
    "MemoryCluster",
    "NodeBuilder",
    "PlacementGenerateOutcome",
    "PlacementScoreOutcome",
    "PluginFramework",
    "PodBuilder",
    "PodGroupBuilder",
    "PodGroupPostFilterOutcome",
    "PostFilterOutcome",
    "PreFilterOutcome",
    "Recorder",
    "ScoreOutcome",
    "afilter_nodes",
    "as_node_infos",
    "as_pod_info",
    "ascore_nodes",
    "filter_nodes",
    "framework_for",
    "make_harness",
    "make_node",
    "make_pod",
    "make_pod_group",
    "plugin_framework",
    "profile",
    "reasons",
    "registry_with",
    "running_scheduler",
    "score_nodes",
    "sim_serve_process",
]


def __getattr__(name: str) -> Any:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(where), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
