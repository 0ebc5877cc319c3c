"""KubeSchedulerConfiguration v1: defaults, plugin-set merging, multiPoint expansion, errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

import pytest
import yaml
from pydantic import BaseModel, ConfigDict

from kubesched.config import (
    ConfigError,
    SchedulerConfig,
    effective_config,
    expand_plugins,
    format_config_yaml,
    load_config,
    merge_plugin_set,
    parse_config,
)
from kubesched.config.defaults import UPSTREAM_DEFAULT_MULTIPOINT, default_plugin_names, upstream_default_multipoint
from kubesched.config.models import Plugins, PluginSet, format_go_duration, parse_go_duration
from kubesched.config.profiles import Entry, score_weights
from kubesched.framework.features import FeatureGates
from kubesched.runtime.registry import NOT_YET_IMPLEMENTED, Registry, default_registry

FIXTURES = Path(__file__).parent / "fixtures"
HEADER = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}


def cfg(**fields: Any) -> dict[str, Any]:
    return {**HEADER, **fields}


def load(data: dict[str, Any], registry: Registry | None = None) -> SchedulerConfig:
    return parse_config(data, registry=registry)


def errors_of(data: dict[str, Any], registry: Registry | None = None) -> list[str]:
    with pytest.raises(ConfigError) as info:
        parse_config(data, registry=registry)
    return info.value.errors


def workload_registry() -> Registry:
    """The installed plugins, plus the pod-group plugins of this checkout when the installed
    metadata predates them (an editable install reads entry points from its last install)."""
    from kubesched.plugins.gangscheduling import GangScheduling
    from kubesched.plugins.podgrouppodscount import PodGroupPodsCount
    from kubesched.plugins.topologyaware import TopologyPlacementGenerator

    reg = Registry()
    for e in default_registry().entries():
        reg.register(e.cls, e.name, e.distribution)
    for cls in (GangScheduling, TopologyPlacementGenerator, PodGroupPodsCount):
        if cls.name not in reg:
            reg.register(cls)
    return reg


def names(c: SchedulerConfig, point: str, profile: int = 0) -> list[str]:
    return [r.name for r in c.profiles[profile].plugins.get(point, [])]


def weighted(c: SchedulerConfig, point: str = "score", profile: int = 0) -> list[tuple[str, int]]:
    return [(r.name, r.weight) for r in c.profiles[profile].plugins.get(point, [])]


#: Upstream v1 ``getDefaultPlugins()`` multiPoint list with its weights, as 1.37 has it under its
#: default gates: DynamicResources (GA) before DefaultPreemption with weight 2, NodeDeclaredFeatures
#: (GA) appended by ``applyFeatureGates``; the removed in-tree volume-limit plugins are not in v1
#: any more.
UPSTREAM_DEFAULTS = [
    ("SchedulingGates", None),
    ("PrioritySort", None),
    ("NodeUnschedulable", None),
    ("NodeName", None),
    ("TaintToleration", 3),
    ("NodeAffinity", 2),
    ("NodePorts", None),
    ("NodeResourcesFit", 1),
    ("VolumeRestrictions", None),
    ("NodeVolumeLimits", None),
    ("VolumeBinding", None),
    ("VolumeZone", None),
    ("PodTopologySpread", 2),
    ("InterPodAffinity", 2),
    ("DynamicResources", 2),
    ("DefaultPreemption", None),
    ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1),
    ("DefaultBinder", None),
    ("NodeDeclaredFeatures", None),
]

#: Upstream's ExpandedPluginsV1 (apis/config/testing/defaults): the defaults after multiPoint expansion.
DEFAULT_POINTS = {
    "preEnqueue": ["SchedulingGates", "DynamicResources", "DefaultPreemption"],
    # Workload-aware preemption: run only in pod groups' cycles (GenericWorkload).
    "podGroupPostFilter": ["DefaultPreemption"],
    "queueSort": ["PrioritySort"],
    "preFilter": [
        "NodeAffinity",
        "NodePorts",
        "NodeResourcesFit",
        "VolumeRestrictions",
        "NodeVolumeLimits",
        "VolumeBinding",
        "VolumeZone",
        "PodTopologySpread",
        "InterPodAffinity",
        "DynamicResources",
        "NodeDeclaredFeatures",
    ],
    "filter": [
        "NodeUnschedulable",
        "NodeName",
        "TaintToleration",
        "NodeAffinity",
        "NodePorts",
        "NodeResourcesFit",
        "VolumeRestrictions",
        "NodeVolumeLimits",
        "VolumeBinding",
        "VolumeZone",
        "PodTopologySpread",
        "InterPodAffinity",
        "DynamicResources",
        "NodeDeclaredFeatures",
    ],
    "postFilter": ["DynamicResources", "DefaultPreemption"],
    "preScore": [
        "TaintToleration",
        "NodeAffinity",
        "NodeResourcesFit",
        "VolumeBinding",
        "PodTopologySpread",
        "InterPodAffinity",
        "NodeResourcesBalancedAllocation",
    ],
    "score": [
        "TaintToleration",
        "NodeAffinity",
        "NodeResourcesFit",
        "VolumeBinding",
        "PodTopologySpread",
        "InterPodAffinity",
        "DynamicResources",
        "NodeResourcesBalancedAllocation",
        "ImageLocality",
    ],
    "reserve": ["VolumeBinding", "DynamicResources"],
    "preBind": ["VolumeBinding", "DynamicResources"],
    "bind": ["DefaultBinder"],
    # NodeResourcesFit scores pod groups' placements too; multiPoint puts it there, as upstream's
    # expansion does (only a pod-group cycle with a PlacementGenerate plugin asks it).
    "placementScore": ["NodeResourcesFit"],
}
DEFAULT_SCORE = [
    ("TaintToleration", 3),
    ("NodeAffinity", 2),
    ("NodeResourcesFit", 1),
    ("VolumeBinding", 1),  # no weight in multiPoint: counts as 1
    ("PodTopologySpread", 2),
    ("InterPodAffinity", 2),
    ("DynamicResources", 2),
    ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1),
]
#: Plugins upstream appends default args for (its PluginConfigsV1).
DEFAULT_ARGS = [
    "DefaultPreemption",
    "DynamicResources",
    "InterPodAffinity",
    "NodeAffinity",
    "NodeResourcesBalancedAllocation",
    "NodeResourcesFit",
    "PodTopologySpread",
    "VolumeBinding",
]


# --- defaults ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "expected"),
    [
        ("parallelism", 16),
        ("percentageOfNodesToScore", None),
        ("podInitialBackoffSeconds", 1),
        ("podMaxBackoffSeconds", 10),
        ("enableProfiling", True),
        ("enableContentionProfiling", True),
        ("delayCacheUntilActive", False),
        ("leaderElection.leaderElect", True),
        ("leaderElection.leaseDuration", 15.0),
        ("leaderElection.renewDeadline", 10.0),
        ("leaderElection.retryPeriod", 2.0),
        ("leaderElection.resourceLock", "leases"),
        ("leaderElection.resourceName", "kube-scheduler"),
        ("leaderElection.resourceNamespace", "kube-system"),
        ("clientConnection.kubeconfig", ""),
        ("clientConnection.contentType", "application/vnd.kubernetes.protobuf"),
        ("clientConnection.qps", 50.0),
        ("clientConnection.burst", 100),
        ("profiles.0.schedulerName", "default-scheduler"),
    ],
    ids=lambda v: str(v),
)
def test_empty_config_defaults(field: str, expected: Any) -> None:
    value: Any = load(cfg()).model
    for part in field.split("."):
        value = value[int(part)] if part.isdigit() else getattr(value, part)
    assert value == expected


def test_empty_config_default_profile_expands_upstream_defaults() -> None:
    c = load(cfg())
    assert len(c.profiles) == 1
    spec = c.profiles[0]
    assert spec.scheduler_name == "default-scheduler"
    assert {p: [r.name for r in refs] for p, refs in spec.plugins.items()} == DEFAULT_POINTS
    assert weighted(c) == DEFAULT_SCORE
    assert all(r.weight == 0 for p, refs in spec.plugins.items() if p not in ("score", "placementScore") for r in refs)
    assert [(r.name, r.weight) for r in spec.plugins["placementScore"]] == [("NodeResourcesFit", 1)]
    # Plugins without pluginConfig get their default args, as upstream's defaulting appends them.
    assert sorted(spec.plugin_args) == DEFAULT_ARGS
    args = spec.plugin_args
    assert args["NodeResourcesFit"].scoring_strategy.type == "LeastAllocated"
    assert (
        args["DefaultPreemption"].min_candidate_nodes_percentage,
        args["DefaultPreemption"].min_candidate_nodes_absolute,
    ) == (10, 100)
    assert args["InterPodAffinity"].hard_pod_affinity_weight == 1
    assert args["PodTopologySpread"].defaultingType == "System"
    assert args["VolumeBinding"].bindTimeoutSeconds == 600


def test_load_config_none_equals_empty_config() -> None:
    assert effective_config(load_config(None)) == effective_config(load(cfg()))


def test_default_set_is_upstreams_in_upstream_order() -> None:
    upstream = [n for n, _ in UPSTREAM_DEFAULT_MULTIPOINT]
    ours = default_plugin_names()
    # Every plugin of upstream's default set is implemented, in upstream's order.
    assert not set(ours) & NOT_YET_IMPLEMENTED
    assert ours == [*upstream, "NodeDeclaredFeatures"]
    assert upstream_default_multipoint() == UPSTREAM_DEFAULTS
    # Upstream places DynamicResources right before DefaultPreemption.
    assert upstream.index("DynamicResources") + 1 == upstream.index("DefaultPreemption")
    multi = load(cfg()).model.profiles[0].plugins
    assert multi is not None
    assert [(p.name, p.weight) for p in multi.multiPoint.enabled] == UPSTREAM_DEFAULTS


#: Upstream's TestApplyFeatureGates (1.37): what each gate adds to the default multiPoint list.
@pytest.mark.parametrize(
    ("gates", "added"),
    [
        ({}, [("NodeDeclaredFeatures", None)]),
        (
            {"InPlacePodVerticalScalingSchedulerPreemption": True},
            [("DeferredPodScheduling", None), ("NodeDeclaredFeatures", None)],
        ),
        ({"GenericWorkload": True}, [("NodeDeclaredFeatures", None), ("GangScheduling", None)]),
        (
            {"TopologyAwareWorkloadScheduling": True},
            [("NodeDeclaredFeatures", None), ("TopologyPlacementGenerator", None), ("PodGroupPodsCount", 1)],
        ),
    ],
    ids=["default gates", "InPlacePodVerticalScalingSchedulerPreemption", "GenericWorkload", "TopologyAware"],
)
def test_feature_gates_add_default_plugins(gates: dict[str, bool], added: list[tuple[str, int | None]]) -> None:
    plugins = upstream_default_multipoint(FeatureGates(gates))
    assert [p for p in plugins if p not in UPSTREAM_DEFAULT_MULTIPOINT] == added
    assert [p for p in plugins if p in UPSTREAM_DEFAULT_MULTIPOINT] == list(UPSTREAM_DEFAULT_MULTIPOINT)
    names_ = [n for n, _ in plugins]
    appended = [n for n, _ in added if n != "DeferredPodScheduling"]
    assert names_[-len(appended) :] == appended
    if "DeferredPodScheduling" in names_:
        # Right before NodeResourcesFit, so its rejection is recorded first.
        assert names_.index("DeferredPodScheduling") + 1 == names_.index("NodeResourcesFit")


def test_a_gate_adding_a_plugin_not_implemented_yet_is_refused_naming_it() -> None:
    """InPlacePodVerticalScalingSchedulerPreemption adds DeferredPodScheduling, which kubesched
    does not implement: the default profile is refused, naming it; disabled, it loads."""
    gates = FeatureGates({"InPlacePodVerticalScalingSchedulerPreemption": True})
    with pytest.raises(ConfigError) as info:
        parse_config(cfg(), feature_gates=gates)
    (error, *_) = [e for e in info.value.errors if "DeferredPodScheduling" in e]
    assert error == (
        "profiles[0].plugins.multiPoint: default plugin 'DeferredPodScheduling': plugin 'DeferredPodScheduling' is "
        "an upstream plugin that kubesched does not implement yet; disable it in this profile"
    )
    disabled = cfg(profiles=[{"plugins": {"multiPoint": {"disabled": [{"name": "DeferredPodScheduling"}]}}}])
    assert parse_config(disabled, feature_gates=gates).profiles


#: What the workload-aware gates' default profile runs at the pod-group points (1.37).
WORKLOAD_GATES_POINTS = [
    (
        {"GenericWorkload": True},
        {
            "placementFeasible": ["GangScheduling"],
            "placementScore": ["NodeResourcesFit"],
            "podGroupPostFilter": ["DefaultPreemption"],
        },
    ),
    (
        {"GenericWorkload": True, "TopologyAwareWorkloadScheduling": True},
        {
            "placementGenerate": ["TopologyPlacementGenerator"],
            "placementFeasible": ["GangScheduling"],
            "placementScore": ["NodeResourcesFit", "PodGroupPodsCount"],
            "podGroupPostFilter": ["DefaultPreemption"],
        },
    ),
    (
        {"TopologyAwareWorkloadScheduling": True},
        {
            "placementGenerate": ["TopologyPlacementGenerator"],
            "placementScore": ["NodeResourcesFit", "PodGroupPodsCount"],
            "podGroupPostFilter": ["DefaultPreemption"],
        },
    ),
]


@pytest.mark.parametrize(
    ("gates", "points"),
    WORKLOAD_GATES_POINTS,
    ids=["GenericWorkload", "GenericWorkload+TopologyAware", "TopologyAwareWorkloadScheduling"],
)
def test_the_workload_aware_gates_default_profile_loads_with_its_pod_group_plugins(
    gates: dict[str, bool], points: dict[str, list[str]]
) -> None:
    (spec,) = parse_config(cfg(), registry=workload_registry(), feature_gates=FeatureGates(gates)).profiles
    pod_group_points = ("placementGenerate", "placementFeasible", "placementScore", "podGroupPostFilter")
    assert {p: [r.name for r in spec.plugins[p]] for p in pod_group_points if p in spec.plugins} == points
    # Both placement scorers weigh 1 by default (the "Topology-Aware Workload Scheduling" page).
    assert all(r.weight == 1 for r in spec.plugins["placementScore"])
    if gates.get("GenericWorkload"):
        assert "GangScheduling" in [r.name for r in spec.plugins["preEnqueue"]]
    # The per-pod points are upstream's defaults: the pod-group plugins add none.
    assert [r.name for r in spec.plugins["filter"]] == DEFAULT_POINTS["filter"]
    assert not {"TopologyPlacementGenerator", "PodGroupPodsCount"} & set(spec.plugin_args)


def test_placement_score_weights_can_be_changed() -> None:
    """``plugins.placementScore.enabled`` reweighs the placement scorers (not ``score``)."""
    gates = FeatureGates({"GenericWorkload": True, "TopologyAwareWorkloadScheduling": True})
    data = cfg(
        profiles=[
            {
                "plugins": {
                    "placementScore": {
                        "enabled": [
                            {"name": "NodeResourcesFit", "weight": 2},
                            {"name": "PodGroupPodsCount", "weight": 5},
                        ]
                    }
                }
            }
        ]
    )
    (spec,) = parse_config(data, registry=workload_registry(), feature_gates=gates).profiles
    assert [(r.name, r.weight) for r in spec.plugins["placementScore"]] == [
        ("NodeResourcesFit", 2),
        ("PodGroupPodsCount", 5),
    ]
    assert ("NodeResourcesFit", 1) in weighted_refs(spec.plugins["score"])


def weighted_refs(refs: Any) -> list[tuple[str, int]]:
    return [(r.name, r.weight) for r in refs]


@pytest.mark.parametrize("plugin", ["GangScheduling", "TopologyPlacementGenerator", "PodGroupPodsCount"])
def test_the_pod_group_plugins_take_no_args(plugin: str) -> None:
    """Upstream registers them without args: enabled, they load; given args, they are refused."""
    reg = workload_registry()
    assert load(cfg(profiles=[{"plugins": {"multiPoint": {"enabled": [{"name": plugin}]}}}]), registry=reg).profiles
    errors = errors_of(cfg(profiles=[{"pluginConfig": [{"name": plugin, "args": {"x": 1}}]}]), registry=reg)
    assert errors == [f"profiles[0].pluginConfig[0].args: plugin {plugin!r} takes no args"]


def test_enabling_deferred_pod_scheduling_is_refused_until_it_arrives() -> None:
    errors = errors_of(cfg(profiles=[{"plugins": {"multiPoint": {"enabled": [{"name": "DeferredPodScheduling"}]}}}]))
    assert errors == [
        "profiles[0].plugins.multiPoint.enabled[0].name: plugin 'DeferredPodScheduling' is an upstream plugin that "
        "kubesched does not implement yet; disable it in this profile"
    ]
    # Its pluginConfig (upstream gives it no args) is accepted while it is not enabled.
    assert load(cfg(profiles=[{"pluginConfig": [{"name": "DeferredPodScheduling", "args": {}}]}])).profiles


# --- plugin args defaulted and checked by feature gate ------------------------------------------


def test_gated_args_get_1_37_defaults() -> None:
    args = load(cfg()).profiles[0].plugin_args
    assert args["DynamicResources"].bindingTimeout == "10m0s"
    assert args["DynamicResources"].filterTimeout == "10s"
    assert [(p.utilization, p.score) for p in args["VolumeBinding"].shape] == [(0, 10), (100, 0)]
    # Given args keep what they give and get the gated defaults for the rest.
    given = load(cfg(profiles=[{"pluginConfig": [{"name": "VolumeBinding", "args": {"bindTimeoutSeconds": 30}}]}]))
    vb = given.profiles[0].plugin_args["VolumeBinding"]
    assert vb.bindTimeoutSeconds == 30 and [(p.utilization, p.score) for p in vb.shape] == [(0, 10), (100, 0)]


def test_gated_args_are_not_defaulted_with_their_gate_off() -> None:
    gates = FeatureGates({"DRADeviceBindingConditions": False, "StorageCapacityScoring": False})
    args = parse_config(cfg(), feature_gates=gates).profiles[0].plugin_args
    assert args["DynamicResources"].bindingTimeout is None
    assert args["VolumeBinding"].shape is None


def _args(plugin: str, **args: Any) -> dict[str, Any]:
    return cfg(profiles=[{"pluginConfig": [{"name": plugin, "args": args}]}])


@pytest.mark.parametrize(
    ("data", "gates", "error"),
    [
        (
            _args("DynamicResources", bindingTimeout="500ms"),
            {},
            'profiles[0].pluginConfig[0].args.bindingTimeout: Invalid value: "500ms": must be at least 1 second',
        ),
        (
            _args("DynamicResources", bindingTimeout="5m"),
            {"DRADeviceBindingConditions": False},
            "profiles[0].pluginConfig[0].args.bindingTimeout: Forbidden: DRADeviceBindingConditions or "
            "DRAResourceClaimDeviceStatus feature gate is disabled",
        ),
        (
            _args("DynamicResources", filterTimeout="5s"),
            {"DRASchedulerFilterTimeout": False},
            "profiles[0].pluginConfig[0].args.filterTimeout: Forbidden: DRASchedulingFilterTimeout feature gate is disabled",
        ),
        (
            _args("VolumeBinding", shape=[{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]),
            {"StorageCapacityScoring": False},
            "profiles[0].pluginConfig[0].args.shape: Invalid value: 2 point(s): unexpected field `shape`, remove it "
            "or turn on the feature gate StorageCapacityScoring",
        ),
        (
            _args("VolumeBinding", shape=[]),
            {},
            "profiles[0].pluginConfig[0].args.shape: Required value: at least one point must be specified",
        ),
    ],
    ids=[
        "bindingTimeout under a second",
        "bindingTimeout with its gate off",
        "filterTimeout with its gate off",
        "shape with StorageCapacityScoring off",
        "empty shape",
    ],
)
def test_gated_args_are_checked_as_upstream(data: dict[str, Any], gates: dict[str, bool], error: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_config(data, feature_gates=FeatureGates(gates))
    assert info.value.errors == [error]


def test_gated_args_within_bounds_load() -> None:
    c = load(_args("DynamicResources", bindingTimeout="1s", filterTimeout="0"))
    assert c.profiles[0].plugin_args["DynamicResources"].bindingTimeout == "1s"
    shape = [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]
    vb = load(_args("VolumeBinding", shape=shape)).profiles[0].plugin_args["VolumeBinding"]
    assert [(p.utilization, p.score) for p in vb.shape] == [(0, 0), (100, 10)]


# --- a real config --------------------------------------------------------------------------------

UPSTREAM_STYLE = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: /etc/kubernetes/scheduler.conf
leaderElection:
  leaderElect: true
  leaseDuration: 1m30s
  renewDeadline: 1m
  retryPeriod: 5s
percentageOfNodesToScore: 50
profiles:
  - schedulerName: default-scheduler
    pluginConfig:
      - name: NodeResourcesFit
        args:
          apiVersion: kubescheduler.config.k8s.io/v1
          kind: NodeResourcesFitArgs
          scoringStrategy:
            type: MostAllocated
            resources:
              - name: cpu
                weight: 1
              - name: memory
                weight: 1
  - schedulerName: no-scoring-scheduler
    percentageOfNodesToScore: 10
    plugins:
      preScore:
        disabled:
          - name: '*'
      score:
        disabled:
          - name: '*'
    pluginConfig:
      - name: PodTopologySpread
        args:
          apiVersion: kubescheduler.config.k8s.io/v1
          kind: PodTopologySpreadArgs
          defaultingType: List
"""


@pytest.fixture()
def upstream_style(tmp_path: Any) -> SchedulerConfig:
    path = tmp_path / "scheduler.yaml"
    path.write_text(UPSTREAM_STYLE)
    return load_config(path)


def test_upstream_style_config_loads(upstream_style: SchedulerConfig) -> None:
    c = upstream_style
    assert [p.scheduler_name for p in c.profiles] == ["default-scheduler", "no-scoring-scheduler"]
    assert c.model.leaderElection.leaseDuration == 90.0
    assert c.model.leaderElection.renewDeadline == 60.0
    assert c.model.percentageOfNodesToScore == 50
    assert c.profiles[1].percentage_of_nodes_to_score == 10
    assert c.profiles[0].plugin_args["NodeResourcesFit"].scoring_strategy.type == "MostAllocated"
    assert c.profiles[1].plugin_args["NodeResourcesFit"].scoring_strategy.type == "LeastAllocated"
    assert weighted(c, profile=0) == DEFAULT_SCORE
    assert "score" not in c.profiles[1].plugins and "preScore" not in c.profiles[1].plugins
    assert names(c, "filter", 1) == DEFAULT_POINTS["filter"]
    assert names(c, "postFilter", 1) == ["DynamicResources", "DefaultPreemption"]
    assert c.profiles[1].plugin_args["PodTopologySpread"].defaultingType == "List"
    assert c.profiles[0].plugin_args["PodTopologySpread"].defaultingType == "System"


def test_effective_config_prints_like_write_config_to(upstream_style: SchedulerConfig) -> None:
    out = effective_config(upstream_style)
    assert out["leaderElection"]["leaseDuration"] == "1m30s"
    assert out["leaderElection"]["renewDeadline"] == "1m0s"
    prof = out["profiles"][1]
    assert [p["name"] for p in prof["plugins"]["multiPoint"]["enabled"]] == default_plugin_names()
    assert prof["plugins"]["score"] == {"disabled": [{"name": "*"}]}
    assert prof["plugins"]["preScore"] == {"disabled": [{"name": "*"}]}
    assert prof["plugins"]["filter"] == {}
    # Upstream keeps the profile's own pluginConfig entries first, then appends defaults sorted by name.
    assert [pc["name"] for pc in prof["pluginConfig"]] == ["PodTopologySpread"] + [
        n for n in DEFAULT_ARGS if n != "PodTopologySpread"
    ]
    assert prof["pluginConfig"][0]["args"] == {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "PodTopologySpreadArgs",
        "defaultConstraints": [],
        "defaultingType": "List",
    }
    first = out["profiles"][0]["pluginConfig"]
    assert [pc["name"] for pc in first] == ["NodeResourcesFit"] + [n for n in DEFAULT_ARGS if n != "NodeResourcesFit"]
    fit = first[0]["args"]
    assert fit["kind"] == "NodeResourcesFitArgs"
    assert fit["scoringStrategy"]["type"] == "MostAllocated"
    preemption = next(pc["args"] for pc in first if pc["name"] == "DefaultPreemption")
    assert (preemption["minCandidateNodesPercentage"], preemption["minCandidateNodesAbsolute"]) == (10, 100)


def test_printed_config_loads_back_to_the_same(upstream_style: SchedulerConfig) -> None:
    again = load(yaml.safe_load(format_config_yaml(upstream_style)))
    assert effective_config(again) == effective_config(upstream_style)
    assert [(p.scheduler_name, p.plugins) for p in again.profiles] == [
        (p.scheduler_name, p.plugins) for p in upstream_style.profiles
    ]


def test_json_file_loads(tmp_path: Any) -> None:
    path = tmp_path / "scheduler.json"
    path.write_text(json.dumps(cfg(parallelism=4, profiles=[{"schedulerName": "json-scheduler"}])))
    c = load_config(path)
    assert c.model.parallelism == 4
    assert c.profiles[0].scheduler_name == "json-scheduler"


def test_errors_from_file_carry_its_name(tmp_path: Any) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(cfg(parallelism=0, podMaxBackoffSeconds=0)))
    with pytest.raises(ConfigError) as info:
        load_config(path)
    lines = str(info.value).splitlines()
    assert len(lines) == 2
    assert all(line.startswith(f"{path}: ") for line in lines)
    assert info.value.errors[0].startswith("parallelism: ")


# --- merging with the defaults ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("plugins", "point", "expected"),
    [
        pytest.param({"score": {"disabled": [{"name": "*"}]}}, "score", [], id="disable-star-at-score"),
        pytest.param(
            {"score": {"disabled": [{"name": "*"}], "enabled": [{"name": "ImageLocality", "weight": 4}]}},
            "score",
            [("ImageLocality", 4)],
            id="disable-star-then-enable-one",
        ),
        pytest.param(
            {"score": {"disabled": [{"name": "NodeAffinity"}]}},
            "score",
            [
                ("TaintToleration", 3),
                ("NodeResourcesFit", 1),
                ("VolumeBinding", 1),
                ("PodTopologySpread", 2),
                ("InterPodAffinity", 2),
                ("DynamicResources", 2),
                ("NodeResourcesBalancedAllocation", 1),
                ("ImageLocality", 1),
            ],
            id="disable-one-at-score",
        ),
        pytest.param(
            {"multiPoint": {"enabled": [{"name": "NodeAffinity", "weight": 7}]}},
            "score",
            [
                ("TaintToleration", 3),
                ("NodeAffinity", 7),
                ("NodeResourcesFit", 1),
                ("VolumeBinding", 1),
                ("PodTopologySpread", 2),
                ("InterPodAffinity", 2),
                ("DynamicResources", 2),
                ("NodeResourcesBalancedAllocation", 1),
                ("ImageLocality", 1),
            ],
            id="reconfigured-default-keeps-its-place",
        ),
        pytest.param(
            {"score": {"enabled": [{"name": "ImageLocality", "weight": 5}]}},
            "score",
            [
                ("ImageLocality", 5),
                ("TaintToleration", 3),
                ("NodeAffinity", 2),
                ("NodeResourcesFit", 1),
                ("VolumeBinding", 1),
                ("PodTopologySpread", 2),
                ("InterPodAffinity", 2),
                ("DynamicResources", 2),
                ("NodeResourcesBalancedAllocation", 1),
            ],
            id="specific-score-entry-overrides-multipoint-and-goes-first",
        ),
        pytest.param(
            {"multiPoint": {"enabled": [{"name": "TaintToleration", "weight": 0}]}},
            "score",
            [
                ("TaintToleration", 1),
                ("NodeAffinity", 2),
                ("NodeResourcesFit", 1),
                ("VolumeBinding", 1),
                ("PodTopologySpread", 2),
                ("InterPodAffinity", 2),
                ("DynamicResources", 2),
                ("NodeResourcesBalancedAllocation", 1),
                ("ImageLocality", 1),
            ],
            id="weight-zero-counts-as-one",
        ),
        pytest.param(
            {"filter": {"disabled": [{"name": "NodePorts"}]}},
            "filter",
            [(n, 0) for n in DEFAULT_POINTS["filter"] if n != "NodePorts"],
            id="disable-at-one-point-only",
        ),
        pytest.param(
            {"multiPoint": {"disabled": [{"name": "NodePorts"}]}},
            "preFilter",
            [
                ("NodeAffinity", 0),
                ("NodeResourcesFit", 0),
                ("VolumeRestrictions", 0),
                ("NodeVolumeLimits", 0),
                ("VolumeBinding", 0),
                ("VolumeZone", 0),
                ("PodTopologySpread", 0),
                ("InterPodAffinity", 0),
                ("DynamicResources", 0),
                ("NodeDeclaredFeatures", 0),
            ],
            id="disable-default-in-multipoint",
        ),
        pytest.param(
            {"multiPoint": {"disabled": [{"name": "VolumeBinding"}]}},
            "reserve",
            [("DynamicResources", 0)],
            id="disable-in-multipoint-removes-every-point",
        ),
        pytest.param(
            {"preBind": {"disabled": [{"name": "VolumeBinding"}]}},
            "reserve",
            [("VolumeBinding", 0), ("DynamicResources", 0)],
            id="disable-at-prebind-keeps-reserve",
        ),
        pytest.param(
            {"postFilter": {"disabled": [{"name": "*"}]}},
            "postFilter",
            [],
            id="no-preemption",
        ),
        pytest.param(
            {"multiPoint": {"enabled": [{"name": "PodTopologySpread", "weight": 5}]}},
            "preScore",
            [(n, 0) for n in DEFAULT_POINTS["preScore"]],
            id="reweighted-default-stays-at-every-point",
        ),
    ],
)
def test_profile_merging(plugins: dict[str, Any], point: str, expected: list[tuple[str, int]]) -> None:
    c = load(cfg(profiles=[{"plugins": plugins}]))
    assert weighted(c, point) == expected


def test_disable_at_point_keeps_other_points() -> None:
    c = load(cfg(profiles=[{"plugins": {"filter": {"disabled": [{"name": "NodePorts"}]}}}]))
    assert names(c, "preFilter") == DEFAULT_POINTS["preFilter"]
    assert "NodePorts" not in names(c, "filter")
    c = load(cfg(profiles=[{"plugins": {"score": {"disabled": [{"name": "InterPodAffinity"}]}}}]))
    assert names(c, "preScore") == DEFAULT_POINTS["preScore"]
    assert names(c, "filter") == DEFAULT_POINTS["filter"]
    assert "InterPodAffinity" not in names(c, "score")


@pytest.mark.parametrize(
    ("default", "custom", "enabled", "disabled"),
    [
        pytest.param(["A", "B", "C"], {"enabled": [{"name": "D"}]}, ["A", "B", "C", "D"], [], id="append-custom"),
        pytest.param(["A", "B", "C"], {"disabled": [{"name": "B"}]}, ["A", "C"], ["B"], id="disable-one"),
        pytest.param(
            ["A", "B", "C"], {"disabled": [{"name": "*"}], "enabled": [{"name": "C"}]}, ["C"], ["*"], id="disable-all"
        ),
        pytest.param(
            ["A", "B", "C"],
            {"enabled": [{"name": "D"}, {"name": "B", "weight": 4}]},
            ["A", "B:4", "C", "D"],
            [],
            id="replace-in-place",
        ),
        pytest.param(
            ["A"],
            {"enabled": [{"name": "D"}, {"name": "D"}]},
            ["A", "D", "D"],
            [],
            id="duplicates-left-for-the-framework",
        ),
    ],
)
def test_merge_plugin_set(default: list[str], custom: dict[str, Any], enabled: list[str], disabled: list[str]) -> None:
    merged = merge_plugin_set(
        PluginSet.model_validate({"enabled": [{"name": n} for n in default]}), PluginSet.model_validate(custom)
    )
    assert [p.name + (f":{p.weight}" if p.weight else "") for p in merged.enabled] == enabled
    assert [p.name for p in merged.disabled] == disabled


# --- multiPoint expansion, the cases of upstream's TestNewFrameworkMultiPointExpansion ----------------


class _Base:
    name = ""

    def __init__(self, args: Any, handle: Any) -> None:
        self.args = args


class FakeTestPlugin(_Base):
    """Implements every point but PreEnqueue, like upstream's test plugin."""

    name = "test-plugin"

    def less(self, a: Any, b: Any) -> bool:
        return False

    def pre_filter(self, *a: Any) -> None: ...
    def filter(self, *a: Any) -> None: ...
    def post_filter(self, *a: Any) -> None: ...
    def pre_score(self, *a: Any) -> None: ...
    def score(self, *a: Any) -> int:
        return 0

    def reserve(self, *a: Any) -> None: ...
    def permit(self, *a: Any) -> None: ...
    def pre_bind(self, *a: Any) -> None: ...
    def bind(self, *a: Any) -> None: ...
    def post_bind(self, *a: Any) -> None: ...


class FakeQueueSort(_Base):
    name = "no-op-queue-sort-plugin"

    def less(self, a: Any, b: Any) -> bool:
        return False


class FakeBind(_Base):
    name = "bind-plugin"

    def bind(self, *a: Any) -> None: ...


class FakeScore1(_Base):
    name = "score-plugin-1"

    def pre_score(self, *a: Any) -> None: ...
    def score(self, *a: Any) -> int:
        return 0


class FakeScore2(FakeScore1):
    name = "score-plugin-2"


class FakeScoreWithNormalize(_Base):
    name = "score-with-normalize-plugin-1"

    def score(self, *a: Any) -> int:
        return 0

    def normalize_score(self, *a: Any) -> None: ...


class LocalArgs(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    class Strategy(BaseModel):
        model_config = ConfigDict(extra="forbid")
        type: Literal["LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"] = "LeastAllocated"

    scoringStrategy: Strategy = Strategy()
    limit: int = 3


class FakeWithArgs(_Base):
    name = "with-args"
    Args = LocalArgs

    def filter(self, *a: Any) -> None: ...


@pytest.fixture()
def fake_registry() -> Registry:
    reg = Registry()
    for cls in (FakeTestPlugin, FakeQueueSort, FakeBind, FakeScore1, FakeScore2, FakeScoreWithNormalize, FakeWithArgs):
        reg.register(cls)
    return reg


T, QS, B, S1, S2, SN = (
    "test-plugin",
    "no-op-queue-sort-plugin",
    "bind-plugin",
    "score-plugin-1",
    "score-plugin-2",
    "score-with-normalize-plugin-1",
)
ALL_BUT_SCORE = ("queueSort", "preFilter", "filter", "postFilter", "reserve", "permit", "preBind", "bind", "postBind")


def _t_everywhere(pre_score: list[str] | None, score: list[tuple[str, int]] | None) -> dict[str, list[tuple[str, int]]]:
    out: dict[str, list[tuple[str, int]]] = {p: [(T, 0)] for p in ALL_BUT_SCORE}
    if pre_score is not None:
        out["preScore"] = [(n, 0) for n in pre_score]
    if score is not None:
        out["score"] = score
    return out


EXPANSION_CASES = [
    pytest.param(
        {"multiPoint": {"enabled": [{"name": T, "weight": 5}]}}, _t_everywhere([T], [(T, 5)]), id="plugin-expansion"
    ),
    pytest.param(
        {
            "multiPoint": {"enabled": [{"name": T}]},
            "preScore": {"disabled": [{"name": T}]},
            "score": {"disabled": [{"name": T}]},
        },
        _t_everywhere(None, None),
        id="disable-multipoint-plugin-at-some-points",
    ),
    pytest.param(
        {"multiPoint": {"enabled": [{"name": T}, {"name": S1}]}},
        _t_everywhere([T, S1], [(T, 1), (S1, 1)]),
        id="multiple-multipoint-plugins",
    ),
    pytest.param(
        {"multiPoint": {"enabled": [{"name": T}, {"name": S1}]}, "preScore": {"disabled": [{"name": "*"}]}},
        _t_everywhere(None, [(T, 1), (S1, 1)]),
        id="disable-multipoint-extension",
    ),
    pytest.param(
        {
            "multiPoint": {"enabled": [{"name": SN}, {"name": T}, {"name": S1}]},
            "score": {"enabled": [{"name": S1}, {"name": T}]},
        },
        _t_everywhere([T, S1], [(S1, 1), (T, 1), (SN, 1)]),
        id="reorder-specified-extension-takes-precedence",
    ),
    pytest.param(
        {
            "multiPoint": {"enabled": [{"name": T}, {"name": S1}]},
            "score": {"enabled": [{"name": SN}, {"name": S1}, {"name": T}]},
        },
        _t_everywhere([T, S1], [(S1, 1), (T, 1), (SN, 1)]),
        id="reorder-only-when-in-multipoint",
    ),
    pytest.param(
        {
            "multiPoint": {"enabled": [{"name": T}, {"name": S1}]},
            "score": {"enabled": [{"name": S1, "weight": 5}, {"name": T, "weight": 3}]},
        },
        _t_everywhere([T, S1], [(S1, 5), (T, 3)]),
        id="override-multipoint-weights",
    ),
    pytest.param(
        {"multiPoint": {"enabled": [{"name": QS}, {"name": B}, {"name": S1}], "disabled": [{"name": "*"}]}},
        {"queueSort": [(QS, 0)], "preScore": [(S1, 0)], "score": [(S1, 1)], "bind": [(B, 0)]},
        id="disable-and-enable-with-star",
    ),
    pytest.param(
        {"multiPoint": {"enabled": [{"name": B}, {"name": QS}, {"name": S1}], "disabled": [{"name": S1}]}},
        {"queueSort": [(QS, 0)], "preScore": [(S1, 0)], "score": [(S1, 1)], "bind": [(B, 0)]},
        id="disable-and-enable-by-name",
    ),
    pytest.param(
        {
            "multiPoint": {"enabled": [{"name": T}, {"name": S1}]},
            "score": {"enabled": [{"name": S1, "weight": 5}, {"name": S2, "weight": 5}, {"name": T, "weight": 3}]},
        },
        _t_everywhere([T, S1], [(S1, 5), (T, 3), (S2, 5)]),
        id="override-weights-and-load-once",
    ),
]


@pytest.mark.parametrize(("plugins", "expected"), EXPANSION_CASES)
def test_multipoint_expansion(
    fake_registry: Registry, plugins: dict[str, Any], expected: dict[str, list[tuple[str, int]]]
) -> None:
    got = expand_plugins(Plugins.model_validate(plugins), fake_registry)
    assert {p: [(r.name, r.weight) for r in refs] for p, refs in got.items()} == expected


def test_multipoint_double_registration(fake_registry: Registry) -> None:
    with pytest.raises(ConfigError) as info:
        expand_plugins(Plugins.model_validate({"multiPoint": {"enabled": [{"name": T}, {"name": T}]}}), fake_registry)
    assert info.value.errors == [
        "plugins.multiPoint.enabled[1]: plugin 'test-plugin' already registered as 'PreFilterPlugin'"
    ]


def test_expansion_through_parse_config(fake_registry: Registry) -> None:
    """Upstream's first case as a user writes it: the defaults switched off with '*' in multiPoint."""
    c = load(
        cfg(
            profiles=[{"plugins": {"multiPoint": {"enabled": [{"name": T, "weight": 5}], "disabled": [{"name": "*"}]}}}]
        ),
        fake_registry,
    )
    assert weighted(c) == [(T, 5)]
    assert names(c, "postBind") == [T]
    assert "preEnqueue" not in c.profiles[0].plugins


def test_score_weight_overflow() -> None:
    entries = [Entry("a", 2**61, "x.a"), Entry("b", 2**61, "x.b")]
    weights, errs = score_weights(entries, {"a": {"score"}, "b": {"score"}})
    assert errs == ["x.a: total score of Score plugins could overflow"]
    assert score_weights([Entry("a", 0), Entry("a", 9)], {"a": {"score"}}) == ({"a": 1}, [])


# --- plugin args ----------------------------------------------------------------------------------


def _star_profile(extra: dict[str, Any] | None = None, **plugins: Any) -> dict[str, Any]:
    return {
        "plugins": {
            "multiPoint": {
                "enabled": [{"name": QS}, {"name": B}, *plugins.get("enabled", [])],
                "disabled": [{"name": "*"}],
            }
        },
        **(extra or {}),
    }


@pytest.mark.parametrize(
    ("plugin_config", "expected_limit", "expected_type"),
    [
        pytest.param([], 3, "LeastAllocated", id="defaults-without-config"),
        pytest.param([{"name": "with-args", "args": {"limit": 7}}], 7, "LeastAllocated", id="explicit"),
        pytest.param(
            [
                {
                    "name": "with-args",
                    "args": {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "with-argsArgs", "limit": 1},
                }
            ],
            1,
            "LeastAllocated",
            id="apiVersion-and-kind-dropped",
        ),
        pytest.param([{"name": "with-args", "args": None}], 3, "LeastAllocated", id="null-args"),
    ],
)
def test_plugin_args(
    fake_registry: Registry, plugin_config: list[Any], expected_limit: int, expected_type: str
) -> None:
    c = load(
        cfg(profiles=[_star_profile({"pluginConfig": plugin_config}, enabled=[{"name": "with-args"}])]), fake_registry
    )
    args = c.profiles[0].plugin_args["with-args"]
    assert isinstance(args, LocalArgs)
    assert (args.limit, args.scoringStrategy.type) == (expected_limit, expected_type)


# --- errors ---------------------------------------------------------------------------------------


def _two(p1: dict[str, Any]) -> dict[str, Any]:
    return cfg(profiles=[{"schedulerName": "a"}, {"schedulerName": "b", **p1}])


ERROR_CASES = [
    pytest.param(
        _two(
            {
                "pluginConfig": [
                    {
                        "name": "NodeResourcesFit",
                        "args": {"kind": "NodeResourcesFitArgs", "scoringStrategy": {"type": "Least"}},
                    }
                ]
            }
        ),
        None,
        "profiles[1].pluginConfig[0].args.scoringStrategy.type: 'Least' is not one of LeastAllocated, MostAllocated, RequestedToCapacityRatio",
        id="scoring-strategy-type",
    ),
    pytest.param(
        _two(
            {
                "pluginConfig": [{"name": "with-args", "args": {"scoringStrategy": {"type": "Least"}}}],
                **_star_profile(enabled=[{"name": "with-args"}]),
            }
        ),
        "fake",
        "profiles[1].pluginConfig[0].args.scoringStrategy.type: 'Least' is not one of LeastAllocated, MostAllocated, RequestedToCapacityRatio",
        id="scoring-strategy-type-local-plugin",
    ),
    pytest.param(cfg(profiles=[{"pluginz": {}}]), None, "profiles[0].pluginz: unknown field", id="unknown-field"),
    pytest.param(
        cfg(leaderElection={"leaderElekt": True}),
        None,
        "leaderElection.leaderElekt: unknown field",
        id="unknown-nested-field",
    ),
    pytest.param(
        _two({"pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategyy": {}}}]}),
        None,
        "profiles[1].pluginConfig[0].args.scoringStrategyy: unknown field",
        id="unknown-args-field",
    ),
    pytest.param(
        cfg(profiles=[{"plugins": {"filter": {"enabled": [{"weight": 1}]}}}]),
        None,
        "profiles[0].plugins.filter.enabled[0].name: required field is missing",
        id="missing-name",
    ),
    pytest.param(cfg(parallelism="16"), None, "parallelism: must be an integer, got '16'", id="string-for-int"),
    pytest.param(
        cfg(parallelism=0),
        None,
        "parallelism: should be an integer value greater than zero (got 0)",
        id="parallelism-zero",
    ),
    pytest.param(
        cfg(profiles=[{"plugins": {"score": {"enabled": [{"name": "NodeAffinty"}]}}}]),
        None,
        "profiles[0].plugins.score.enabled[0].name: unknown plugin 'NodeAffinty' (did you mean 'NodeAffinity'?); "
        "known plugins: ",
        id="unknown-plugin",
    ),
    pytest.param(
        cfg(profiles=[{"plugins": {"queueSort": {"enabled": [{"name": "qossort"}]}}}]),
        None,
        "profiles[0].plugins.queueSort.enabled[0].name: unknown plugin 'qossort' (did you mean 'QOSSort'?)",
        id="unknown-plugin-case",
    ),
    pytest.param(
        cfg(profiles=[{"plugins": {"score": {"enabled": [{"name": "Zzzzz"}]}}}]),
        None,
        "profiles[0].plugins.score.enabled[0].name: unknown plugin 'Zzzzz': a plugin of your own is found when its "
        "package is installed (`pip install` it; it declares the class under the 'kubesched.plugins' entry points) "
        "or named on the command line (`--plugin my_module:MyPlugin` or `--plugin path/to/file.py:MyPlugin`); "
        "known plugins: ",  # the in-tree ones and whatever plugin packages this environment holds
        id="unknown-plugin-nothing-close",
    ),
    pytest.param(
        cfg(profiles=[{"pluginConfig": [{"name": "DynamicResources", "args": {"filterTimeout": "-1s"}}]}]),
        None,
        "profiles[0].pluginConfig[0].args.filterTimeout",
        id="dynamic-resources-bad-filter-timeout",
    ),
    pytest.param(
        cfg(profiles=[{"pluginConfig": [{"name": "NodeAffinty", "args": {}}]}]),
        None,
        "profiles[0].pluginConfig[0].name: unknown plugin 'NodeAffinty'",
        id="unknown-plugin-in-pluginconfig",
    ),
    pytest.param(
        cfg(profiles=[{"pluginConfig": [{"name": "NodeName", "args": {"foo": 1}}]}]),
        None,
        "profiles[0].pluginConfig[0].args: plugin 'NodeName' takes no args",
        id="args-for-plugin-without-args",
    ),
    pytest.param(
        cfg(profiles=[{"pluginConfig": [{"name": "NodeAffinity"}, {"name": "NodeAffinity"}]}]),
        None,
        "profiles[0].pluginConfig[1]: duplicate pluginConfig for plugin 'NodeAffinity'",
        id="duplicate-pluginconfig",
    ),
    pytest.param(
        cfg(profiles=[{"schedulerName": "s"}, {"schedulerName": "s"}]),
        None,
        "profiles[1].schedulerName: duplicate value 's' (already used by profiles[0].schedulerName)",
        id="duplicate-scheduler-name",
    ),
    pytest.param(
        cfg(profiles=[{"schedulerName": "s"}, {}]),
        None,
        "profiles[1].schedulerName: required field is missing",
        id="unnamed-second-profile",
    ),
    pytest.param(
        cfg(podInitialBackoffSeconds=5, podMaxBackoffSeconds=2),
        None,
        "podMaxBackoffSeconds: must be greater than or equal to podInitialBackoffSeconds (2 < 5)",
        id="max-backoff-below-initial",
    ),
    pytest.param(
        cfg(podInitialBackoffSeconds=0),
        None,
        "podInitialBackoffSeconds: must be greater than 0 (got 0)",
        id="initial-backoff-zero",
    ),
    pytest.param(
        cfg(percentageOfNodesToScore=101),
        None,
        "percentageOfNodesToScore: not in valid range [0-100] (got 101)",
        id="percentage-range",
    ),
    pytest.param(
        cfg(profiles=[{"percentageOfNodesToScore": -1}]),
        None,
        "profiles[0].percentageOfNodesToScore: not in valid range [0-100] (got -1)",
        id="profile-percentage-range",
    ),
    pytest.param(
        cfg(leaderElection={"leaseDuration": "10s", "renewDeadline": "10s"}),
        None,
        "leaderElection.leaseDuration: must be greater than renewDeadline (10s <= 10s)",
        id="lease-not-above-renew",
    ),
    pytest.param(
        cfg(leaderElection={"renewDeadline": "2s", "retryPeriod": "2s"}),
        None,
        "leaderElection.renewDeadline: must be greater than retryPeriod*JitterFactor (2s <= 2s*1.2)",
        id="renew-not-above-retry-jitter",
    ),
    pytest.param(
        cfg(leaderElection={"leaseDuration": 15}),
        None,
        'leaderElection.leaseDuration: must be a duration string such as "15s"',
        id="duration-number",
    ),
    pytest.param(
        cfg(leaderElection={"leaseDuration": "15 seconds"}),
        None,
        "leaderElection.leaseDuration: invalid duration '15 seconds'",
        id="duration-garbage",
    ),
    pytest.param(
        cfg(leaderElection={"resourceLock": "endpointsleases"}),
        None,
        'leaderElection.resourceLock: resourceLock value must be "leases"',
        id="resource-lock",
    ),
    pytest.param(
        cfg(profiles=[{"plugins": {"score": {"enabled": [{"name": "PrioritySort", "weight": 2}]}}}]),
        None,
        "profiles[0].plugins.score.enabled[0]: plugin 'PrioritySort' does not implement ScorePlugin (it has no score() method)",
        id="plugin-at-wrong-point",
    ),
    pytest.param(
        cfg(profiles=[{"plugins": {"score": {"enabled": [{"name": "ImageLocality", "weight": -1}]}}}]),
        None,
        "profiles[0].plugins.score.enabled[0].weight: must be greater than or equal to 0 (got -1)",
        id="negative-weight",
    ),
    pytest.param(
        cfg(profiles=[{"plugins": {"queueSort": {"disabled": [{"name": "*"}]}}}]),
        None,
        "profiles[0].plugins.queueSort: only one queue sort plugin required for profile with scheduler name 'default-scheduler', but got 0",
        id="no-queue-sort",
    ),
    pytest.param(
        cfg(profiles=[{"plugins": {"bind": {"disabled": [{"name": "DefaultBinder"}]}}}]),
        None,
        "profiles[0].plugins.bind: at least one bind plugin is needed",
        id="no-bind",
    ),
    pytest.param(
        cfg(extenders=[{"urlPrefix": "http://e", "prioritizeVerb": "prioritize"}]),
        None,
        "extenders[0].weight: must have a positive weight applied to it (got 0)",
        id="extender-weight",
    ),
    pytest.param(
        cfg(extenders=[{"urlPrefix": "http://a", "bindVerb": "bind"}, {"urlPrefix": "http://b", "bindVerb": "bind"}]),
        None,
        "extenders: only one extender can implement bind, found 2",
        id="two-binding-extenders",
    ),
    pytest.param(
        cfg(extenders=[{"urlPrefix": "http://a", "managedResources": [{"name": "cpu"}]}]),
        None,
        "extenders[0].managedResources[0].name: 'cpu' is an invalid extended resource name",
        id="extender-native-resource",
    ),
    pytest.param(
        {"apiVersion": "kubescheduler.config.k8s.io/v1beta3", "kind": "KubeSchedulerConfiguration"},
        None,
        "apiVersion: 'kubescheduler.config.k8s.io/v1beta3' is not supported; only 'kubescheduler.config.k8s.io/v1' is (v1beta versions are not supported",
        id="v1beta3",
    ),
    pytest.param(
        {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "Pod"},
        None,
        "kind: 'Pod' is not supported",
        id="wrong-kind",
    ),
    pytest.param(
        {"kind": "KubeSchedulerConfiguration"}, None, "apiVersion: required field is missing", id="missing-api-version"
    ),
]


@pytest.mark.parametrize(("data", "registry", "expected"), ERROR_CASES)
def test_config_errors(fake_registry: Registry, data: dict[str, Any], registry: str | None, expected: str) -> None:
    errs = errors_of(data, fake_registry if registry == "fake" else None)
    assert any(e.startswith(expected) for e in errs), errs


def test_all_errors_reported_at_once() -> None:
    errs = errors_of(
        cfg(
            parallelism=0,
            podInitialBackoffSeconds=5,
            podMaxBackoffSeconds=1,
            profiles=[{"schedulerName": "s"}, {"schedulerName": "s"}],
        )
    )
    assert [e.split(":")[0] for e in errs] == ["parallelism", "profiles[1].schedulerName", "podMaxBackoffSeconds"]


def test_dynamic_resources_args_are_read() -> None:
    c = load(cfg(profiles=[{"pluginConfig": [{"name": "DynamicResources", "args": {"filterTimeout": "30s"}}]}]))
    assert c.profiles[0].plugin_args["DynamicResources"].filterTimeout == "30s"
    assert sorted(c.profiles[0].plugin_args) == DEFAULT_ARGS


def test_args_of_newly_implemented_defaults_are_applied() -> None:
    c = load(
        cfg(
            profiles=[
                {
                    "pluginConfig": [
                        {"name": "InterPodAffinity", "args": {"hardPodAffinityWeight": 5}},
                        {"name": "DefaultPreemption", "args": {"minCandidateNodesAbsolute": 7}},
                        {"name": "VolumeBinding", "args": {"bindTimeoutSeconds": 30}},
                    ]
                }
            ]
        )
    )
    args = c.profiles[0].plugin_args
    assert args["InterPodAffinity"].hard_pod_affinity_weight == 5
    # A partly given args object is defaulted field by field.
    assert (
        args["DefaultPreemption"].min_candidate_nodes_percentage,
        args["DefaultPreemption"].min_candidate_nodes_absolute,
    ) == (10, 7)
    assert args["VolumeBinding"].bindTimeoutSeconds == 30


def test_null_values_mean_unset() -> None:
    c = load(cfg(parallelism=None, leaderElection=None, profiles=[{"plugins": None, "pluginConfig": None}]))
    assert c.model.parallelism == 16
    assert c.model.leaderElection.leaseDuration == 15.0
    assert weighted(c) == DEFAULT_SCORE


def test_deprecated_bind_addresses_accepted_and_printed() -> None:
    c = load(cfg(healthzBindAddress="0.0.0.0:10251", metricsBindAddress="0.0.0.0:10251"))
    assert effective_config(c)["healthzBindAddress"] == "0.0.0.0:10251"
    assert "healthzBindAddress" not in effective_config(load(cfg()))


def test_registry_defaults_to_entry_points() -> None:
    assert load(cfg()).profiles[0].plugins["bind"][0].name in default_registry()


# --- durations ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "seconds", "printed"),
    [
        ("15s", 15.0, "15s"),
        ("1m30s", 90.0, "1m30s"),
        ("90s", 90.0, "1m30s"),
        ("1h", 3600.0, "1h0m0s"),
        ("1.5s", 1.5, "1.5s"),
        ("500ms", 0.5, "500ms"),
        ("2m0.25s", 120.25, "2m0.25s"),
        ("0", 0.0, "0s"),
        ("1h2m3s", 3723.0, "1h2m3s"),
    ],
    ids=lambda v: str(v),
)
def test_go_durations(text: str, seconds: float, printed: str) -> None:
    assert parse_go_duration(text) == pytest.approx(seconds)
    assert format_go_duration(seconds) == printed


def test_durations_print_back_as_strings() -> None:
    c = load(cfg(leaderElection={"leaseDuration": "90s", "renewDeadline": "1m", "retryPeriod": "500ms"}))
    out = effective_config(c)["leaderElection"]
    assert (out["leaseDuration"], out["renewDeadline"], out["retryPeriod"]) == ("1m30s", "1m0s", "500ms")


def test_profile_specs_build_frameworks(upstream_style: SchedulerConfig) -> None:
    from kubesched.runtime.framework import Framework

    frameworks = [Framework(spec, default_registry()) for spec in upstream_style.profiles]
    assert [b.name for b in frameworks[0].score_plugins] == [n for n, _ in DEFAULT_SCORE]
    assert [b.weight for b in frameworks[0].score_plugins] == [w for _, w in DEFAULT_SCORE]
    assert frameworks[1].score_plugins == []


def test_an_uninstalled_repository_plugin_is_named_with_its_package() -> None:
    from kubesched.runtime.registry import unknown_plugin_message

    msg = unknown_plugin_message("QOSSort", ["PrioritySort", "NodeName"])
    assert msg.startswith("unknown plugin 'QOSSort': it is provided by the kubesched-qos-sort package")
    assert "pip install ./plugins/qos-sort" in msg
    assert msg.endswith("known plugins: NodeName, PrioritySort")
    assert "did you mean 'PrioritySort'" in unknown_plugin_message("PrioritySrot", ["PrioritySort"])
    for name in ("GpuShare", "FGD", "RandomScore"):
        assert "`pip install ./plugins/gpushare`" in unknown_plugin_message(name, ["NodeName"])


def test_a_kube_scheduler_1_37_default_config_loads_unchanged() -> None:
    """What kube-scheduler 1.37 prints with --write-config-to is kubesched's default configuration."""
    c = load_config(FIXTURES / "kube-scheduler-1.37-default.yaml")
    (spec,) = c.profiles
    assert {p: [r.name for r in refs] for p, refs in spec.plugins.items()} == DEFAULT_POINTS
    assert (
        spec.plugin_args["DynamicResources"].filterTimeout,
        spec.plugin_args["DynamicResources"].bindingTimeout,
    ) == (
        "10s",
        "10m0s",
    )
    assert effective_config(c) == effective_config(load_config(None))
    printed = yaml.safe_load((FIXTURES / "kube-scheduler-1.37-default.yaml").read_text())
    ours = effective_config(load_config(None))
    assert [pc["name"] for pc in ours["profiles"][0]["pluginConfig"]] == [
        pc["name"] for pc in printed["profiles"][0]["pluginConfig"]
    ]
    assert ours["profiles"][0]["plugins"]["multiPoint"] == printed["profiles"][0]["plugins"]["multiPoint"]
    assert {k: ours[k] for k in printed if k != "profiles"} == {k: v for k, v in printed.items() if k != "profiles"}


def test_a_config_printed_by_kube_scheduler_1_34_still_loads_and_gets_what_1_37_adds() -> None:
    """An upgrade keeping a 1.34 --write-config-to file: its own entries win (DynamicResources'
    weight 0), and what 1.37 adds by default (NodeDeclaredFeatures, the gated args) is merged in."""
    c = load_config(FIXTURES / "kube-scheduler-1.34-default.yaml")
    (spec,) = c.profiles
    assert {p: [r.name for r in refs] for p, refs in spec.plugins.items()} == DEFAULT_POINTS
    multi = c.model.profiles[0].plugins
    assert multi is not None
    assert [(p.name, p.weight) for p in multi.multiPoint.enabled][-2:] == [
        ("DefaultBinder", 0),
        ("NodeDeclaredFeatures", None),
    ]
    assert ("DynamicResources", 0) in [(p.name, p.weight) for p in multi.multiPoint.enabled]
    assert spec.plugin_args["DynamicResources"].bindingTimeout == "10m0s"
    assert [(p.utilization, p.score) for p in spec.plugin_args["VolumeBinding"].shape] == [(0, 10), (100, 0)]


@pytest.mark.parametrize(
    ("point", "plugin", "kind"),
    [
        ("placementGenerate", "TopologyPlacementGenerator", "PlacementGeneratePlugin"),
        ("placementScore", "PodGroupPodsCount", "PlacementScorePlugin"),
        ("podGroupPostFilter", "DefaultPreemption", "PodGroupPostFilterPlugin"),
    ],
)
def test_pod_group_extension_points_take_the_plugins_that_implement_them(
    point: str, plugin: str | None, kind: str
) -> None:
    """1.37's pod-group extension points: a file disabling plugins there loads; a plugin that
    implements the point is run there; one that does not is refused, naming the point's kind."""
    reg = workload_registry()
    assert load(cfg(profiles=[{"plugins": {point: {"disabled": [{"name": "*"}]}}}]), registry=reg).profiles
    if plugin is not None:
        (spec,) = load(cfg(profiles=[{"plugins": {point: {"enabled": [{"name": plugin}]}}}]), registry=reg).profiles
        assert plugin in [r.name for r in spec.plugins[point]]
    errors = errors_of(cfg(profiles=[{"plugins": {point: {"enabled": [{"name": "NodeName"}]}}}]), registry=reg)
    method = {"placementGenerate": "generate_placements", "placementScore": "score_placement"}.get(
        point, "pod_group_post_filter"
    )
    assert errors == [
        f"profiles[0].plugins.{point}.enabled[0]: plugin 'NodeName' does not implement {kind} (it has no {method}() method)"
    ]


@pytest.mark.parametrize("plugin_set", [{"enabled": [{"name": "GangScheduling"}]}, {"disabled": [{"name": "*"}]}])
def test_placement_feasible_is_not_a_field_of_the_v1_plugins(plugin_set: dict[str, Any]) -> None:
    """1.37's v1 ``Plugins`` has placementGenerate, placementScore and podGroupPostFilter but no
    placementFeasible (a 1.38 field): strict decoding refuses it as an unknown field, listed with
    the file's other problems. PlacementFeasible plugins come from multiPoint alone, and the
    printed configuration has no such field either."""
    data = cfg(
        profiles=[{"plugins": {"placementFeasible": plugin_set}}, {"schedulerName": "b", "pluginz": {}}],
    )
    assert errors_of(data, registry=workload_registry()) == [
        "profiles[0].plugins.placementFeasible: unknown field",
        "profiles[1].pluginz: unknown field",
    ]
    gates = FeatureGates({"GenericWorkload": True})
    loaded = parse_config(cfg(), registry=workload_registry(), feature_gates=gates)
    assert [r.name for r in loaded.profiles[0].plugins["placementFeasible"]] == ["GangScheduling"]
    printed = effective_config(loaded)["profiles"][0]["plugins"]
    assert "placementFeasible" not in printed
    assert {"placementGenerate", "placementScore", "podGroupPostFilter"} <= set(printed)


def test_a_misspelt_disabled_plugin_is_refused_with_the_name_it_meant() -> None:
    """A misspelling in a disabled list would leave the plugin enabled: refused, naming it."""
    data = cfg(profiles=[{"plugins": {"score": {"disabled": [{"name": "NodeResourcesBalancedAlocation"}]}}}])
    (error,) = errors_of(data)
    assert error.startswith(
        "profiles[0].plugins.score.disabled[0].name: unknown plugin 'NodeResourcesBalancedAlocation' "
        "(did you mean 'NodeResourcesBalancedAllocation'?)"
    )
    # "*" and real names are fine, as are upstream plugins kubesched lacks (disabling them is how
    # a profile that gets one by default loads).
    ok = cfg(profiles=[{"plugins": {"score": {"disabled": [{"name": "*"}, {"name": "ImageLocality"}]}}}])
    assert load(ok).profiles
    assert load(cfg(profiles=[{"plugins": {"multiPoint": {"disabled": [{"name": "DeferredPodScheduling"}]}}}])).profiles


def test_a_weight_nothing_reads_is_refused() -> None:
    data = cfg(profiles=[{"plugins": {"filter": {"enabled": [{"name": "NodeName", "weight": 3}]}}}])
    assert errors_of(data) == [
        "profiles[0].plugins.filter.enabled[0].weight: a weight is read only under score and placementScore "
        "(and multiPoint); remove it here"
    ]
    multi = cfg(profiles=[{"plugins": {"multiPoint": {"enabled": [{"name": "NodeName", "weight": 2}]}}}])
    assert errors_of(multi) == [
        "profiles[0].plugins.multiPoint.enabled[0].weight: plugin 'NodeName' scores neither nodes nor placements, "
        "so its weight would be ignored; remove it"
    ]
    scored = cfg(profiles=[{"plugins": {"multiPoint": {"enabled": [{"name": "ImageLocality", "weight": 2}]}}}])
    assert load(scored).profiles
