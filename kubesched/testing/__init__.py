"""What a plugin author imports in tests.

* Builders: :func:`make_pod`, :func:`make_node` (:class:`PodBuilder`, :class:`NodeBuilder`).
* One plugin's extension points, through the runtime: :func:`plugin_framework` gives a
  :class:`PluginFramework` with a method per point (``pre_enqueue``, ``sort_pods``/``less``,
  ``pre_filter``, ``add_pod``/``remove_pod``, ``filter``/``filter_all``, ``post_filter``,
  ``pre_score``/``score``, ``reserve``/``unreserve``, ``permit`` and the wait that follows,
  ``pre_bind``/``bind``/``post_bind``); the shortcuts :func:`filter_nodes` and
  :func:`score_nodes`.
* A whole scheduler over an in-memory cluster: :func:`running_scheduler` (a :class:`Harness`).
* A real ``kubesched sim serve`` process: :func:`sim_serve_process`.
* pytest fixtures for all of these (``kubesched_framework``, ``kubesched_scheduler``, ...):
  :mod:`kubesched.testing.pytest_plugin`, loaded by pytest wherever kubesched is installed.
"""

from kubesched.testing.builders import NodeBuilder, PodBuilder, make_node, make_pod
from kubesched.testing.harness import (
    afilter_nodes,
    as_node_infos,
    as_pod_info,
    ascore_nodes,
    filter_nodes,
    framework_for,
    reasons,
    score_nodes,
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

__all__ = [
    "Harness",
    "MemoryCluster",
    "NodeBuilder",
    "PluginFramework",
    "PodBuilder",
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
    "plugin_framework",
    "profile",
    "reasons",
    "registry_with",
    "running_scheduler",
    "score_nodes",
    "sim_serve_process",
]
