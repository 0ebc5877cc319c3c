"""What ``kubesched.testing`` exports: a deliberate list, each name documented."""

from __future__ import annotations

import inspect

import kubesched.testing

#: Changing this list is a deliberate act: the docs' "Testing your plugin" relies on it.
EXPORTED = {
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
}


def test_the_exported_set_is_pinned() -> None:
    assert set(kubesched.testing.__all__) == EXPORTED
    assert len(kubesched.testing.__all__) == len(EXPORTED)


def test_every_exported_name_exists_and_has_a_docstring() -> None:
    undocumented = {name for name in EXPORTED if not inspect.getdoc(getattr(kubesched.testing, name))}
    assert undocumented == set()


def test_every_public_method_of_the_drivers_is_documented_or_a_sync_twin() -> None:
    """A synchronous method without a docstring of its own has an ``a``-prefixed twin that has one."""
    cls = kubesched.testing.PluginFramework
    missing = set()
    for name, member in inspect.getmembers(cls, inspect.isfunction):
        if name.startswith("_") or member.__doc__:
            continue
        twin = getattr(cls, f"a{name}", None)
        if twin is None or not twin.__doc__:
            missing.add(name)
    assert missing == set()
