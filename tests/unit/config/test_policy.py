"""Legacy Policy → v1 KubeSchedulerConfiguration (kubesched.config.policy) and its CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched.cli import main
from kubesched.config import parse_config
from kubesched.config.policy import (
    EXPLICIT_POINTS,
    PREDICATE_PLUGINS,
    PRIORITY_PLUGINS,
    PolicyError,
    migrate_policy,
)
from kubesched.framework.interface import plugin_extension_points
from kubesched.runtime.registry import default_registry

MANDATORY_FILTERS = ["NodeUnschedulable", "TaintToleration"]


def policy(predicates: list[Any] | None = None, priorities: list[Any] | None = None, **extra: Any) -> dict[str, Any]:
    """A Policy; ``predicates``/``priorities`` default to empty lists (not upstream's defaults)."""
    return {
        "kind": "Policy",
        "apiVersion": "v1",
        "predicates": [] if predicates is None else predicates,
        "priorities": [] if priorities is None else priorities,
        **extra,
    }


def plugins_of(cfg: dict[str, Any]) -> dict[str, Any]:
    (profile,) = cfg["profiles"]
    assert profile["schedulerName"] == "default-scheduler"
    return profile["plugins"]


def enabled(cfg: dict[str, Any], point: str) -> list[str]:
    return [e["name"] for e in plugins_of(cfg)[point].get("enabled", [])]


def weights(cfg: dict[str, Any]) -> dict[str, int]:
    return {e["name"]: e["weight"] for e in plugins_of(cfg)["score"].get("enabled", [])}


def plugin_args(cfg: dict[str, Any]) -> dict[str, dict[str, Any]]:
    out = {}
    for pc in cfg["profiles"][0].get("pluginConfig", []):
        args = dict(pc["args"])
        assert args.pop("apiVersion") == "kubescheduler.config.k8s.io/v1"
        assert args.pop("kind") == f"{pc['name']}Args"
        out[pc["name"]] = args
    return out


def names_in(cfg: dict[str, Any]) -> set[str]:
    return {e["name"] for ps in plugins_of(cfg).values() for e in ps.get("enabled", [])}


# --- predicates ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "predicates, pre_filter, filters, warnings",
    [
        ([], [], MANDATORY_FILTERS, []),
        (
            [{"name": "GeneralPredicates"}],
            ["NodeResourcesFit", "NodePorts", "NodeAffinity"],
            ["NodeUnschedulable", "NodeResourcesFit", "NodeName", "NodePorts", "NodeAffinity", "TaintToleration"],
            [],
        ),
        (
            [{"name": "PodFitsResources"}, {"name": "HostName"}, {"name": "PodFitsPorts"}],
            ["NodePorts", "NodeResourcesFit"],
            ["NodeUnschedulable", "NodeName", "NodePorts", "NodeResourcesFit", "TaintToleration"],
            [],
        ),
        (
            [{"name": "MatchInterPodAffinity"}, {"name": "EvenPodsSpread"}, {"name": "MatchNodeSelector"}],
            ["NodeAffinity", "PodTopologySpread", "InterPodAffinity"],
            ["NodeUnschedulable", "NodeAffinity", "TaintToleration", "PodTopologySpread", "InterPodAffinity"],
            [],
        ),
        (
            [{"name": "NoDiskConflict"}, {"name": "NoVolumeZoneConflict"}, {"name": "MaxCSIVolumeCountPred"}],
            ["VolumeRestrictions", "NodeVolumeLimits", "VolumeZone"],
            ["NodeUnschedulable", "VolumeRestrictions", "TaintToleration", "NodeVolumeLimits", "VolumeZone"],
            [],
        ),
        (
            [{"name": "PodFitsResources"}, {"name": "CheckServiceAffinity"}],
            ["NodeResourcesFit"],
            ["NodeUnschedulable", "NodeResourcesFit", "TaintToleration"],
            ["predicates[1] CheckServiceAffinity: no equivalent since v1.23 (ServiceAffinity plugin removed)"],
        ),
        (
            [{"name": "zoneAffinity", "argument": {"serviceAffinity": {"labels": ["zone"]}}}],
            [],
            MANDATORY_FILTERS,
            ["predicates[0] zoneAffinity: no equivalent since v1.23 (ServiceAffinity plugin removed)"],
        ),
        (
            [{"name": "MaxEBSVolumeCount"}],
            ["NodeVolumeLimits"],
            ["NodeUnschedulable", "TaintToleration", "NodeVolumeLimits"],
            [
                "predicates[0] MaxEBSVolumeCount: no equivalent in v1 (EBSLimits plugin removed); NodeVolumeLimits "
                "is enabled instead, which counts these volumes once they are migrated to CSI"
            ],
        ),
        (
            [{"name": "NoSuchPredicate"}],
            [],
            MANDATORY_FILTERS,
            [
                "predicates[0] NoSuchPredicate: unknown predicate with no labelsPresence/serviceAffinity argument; ignored"
            ],
        ),
    ],
    ids=[
        "only-mandatory",
        "general-predicates",
        "resources-hostname-ports-alias",
        "affinity-spread-selector",
        "volumes",
        "service-affinity-removed",
        "custom-service-affinity-removed",
        "cloud-volume-limits",
        "unknown",
    ],
)
def test_predicates(predicates: list[Any], pre_filter: list[str], filters: list[str], warnings: list[str]) -> None:
    cfg, warns = migrate_policy(policy(predicates))
    assert enabled(cfg, "preFilter") == pre_filter
    assert enabled(cfg, "filter") == filters
    assert enabled(cfg, "score") == [] and enabled(cfg, "preScore") == []
    assert warns == warnings


def test_every_explicit_point_disables_the_v1_defaults() -> None:
    cfg, _ = migrate_policy(policy([{"name": "CheckVolumeBinding"}]))
    assert list(plugins_of(cfg)) == list(EXPLICIT_POINTS)
    for point in EXPLICIT_POINTS:
        assert plugins_of(cfg)[point]["disabled"] == [{"name": "*"}]
    assert enabled(cfg, "reserve") == ["VolumeBinding"] and enabled(cfg, "preBind") == ["VolumeBinding"]
    for kept in ("queueSort", "postFilter", "bind"):
        assert kept not in plugins_of(cfg)


@pytest.mark.parametrize(
    "predicates, expressions",
    [
        (
            [
                {
                    "name": "CheckNodeLabelPresence",
                    "argument": {"labelsPresence": {"labels": ["zone"], "presence": True}},
                }
            ],
            [{"key": "zone", "operator": "Exists"}],
        ),
        (
            [
                {"name": "hasZone", "argument": {"labelsPresence": {"labels": ["zone", "rack"], "presence": True}}},
                {"name": "notRetiring", "argument": {"labelsPresence": {"labels": ["retiring"], "presence": False}}},
            ],
            [
                {"key": "zone", "operator": "Exists"},
                {"key": "rack", "operator": "Exists"},
                {"key": "retiring", "operator": "DoesNotExist"},
            ],
        ),
    ],
    ids=["present", "custom-present-and-absent"],
)
def test_labels_presence_becomes_required_added_affinity(
    predicates: list[Any], expressions: list[dict[str, str]]
) -> None:
    cfg, warns = migrate_policy(policy(predicates))
    assert warns == []
    assert "NodeAffinity" in enabled(cfg, "filter") and "NodeAffinity" in enabled(cfg, "preFilter")
    added = plugin_args(cfg)["NodeAffinity"]["addedAffinity"]
    assert added == {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": expressions}]}
    }


def test_unset_predicates_mean_upstream_defaults() -> None:
    pol = policy()
    del pol["predicates"]
    cfg, warns = migrate_policy(pol)
    assert enabled(cfg, "filter") == [
        "NodeUnschedulable",
        "NodeResourcesFit",
        "NodeName",
        "NodePorts",
        "NodeAffinity",
        "VolumeRestrictions",
        "TaintToleration",
        "NodeVolumeLimits",
        "VolumeBinding",
        "VolumeZone",
        "PodTopologySpread",
        "InterPodAffinity",
    ]
    assert len([w for w in warns if "NodeVolumeLimits is enabled instead" in w]) == 3  # EBS, GCE PD, Azure disk


# --- priorities ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "priorities, score, pre_score, args, warnings",
    [
        (
            [{"name": "LeastRequestedPriority", "weight": 3}],
            {"NodeResourcesFit": 3},
            ["NodeResourcesFit"],
            {},
            [],
        ),
        (
            [{"name": "MostRequestedPriority", "weight": 2}, {"name": "BalancedResourceAllocation", "weight": 1}],
            {"NodeResourcesBalancedAllocation": 1, "NodeResourcesFit": 2},
            ["NodeResourcesBalancedAllocation", "NodeResourcesFit"],
            {
                "NodeResourcesFit": {
                    "scoringStrategy": {
                        "type": "MostAllocated",
                        "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}],
                    }
                }
            },
            [],
        ),
        (
            [
                {
                    "name": "RequestedToCapacityRatioPriority",
                    "weight": 5,
                    "argument": {
                        "requestedToCapacityRatioArguments": {
                            "shape": [{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}],
                            "resources": [{"name": "cpu", "weight": 2}, {"name": "nvidia.com/gpu"}],
                        }
                    },
                }
            ],
            {"NodeResourcesFit": 5},
            ["NodeResourcesFit"],
            {
                "NodeResourcesFit": {
                    "scoringStrategy": {
                        "type": "RequestedToCapacityRatio",
                        "resources": [{"name": "cpu", "weight": 2}, {"name": "nvidia.com/gpu", "weight": 1}],
                        "requestedToCapacityRatio": {
                            "shape": [{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}]
                        },
                    }
                }
            },
            [],
        ),
        (
            [{"name": "LeastRequestedPriority", "weight": 1}, {"name": "MostRequestedPriority", "weight": 4}],
            {"NodeResourcesFit": 1},
            ["NodeResourcesFit"],
            {},
            [
                "priorities[1] MostRequestedPriority: not migrated: NodeResourcesFit already scores with "
                "LeastAllocated (from priorities[0] LeastRequestedPriority); a v1 profile has one NodeResourcesFit "
                "scoring strategy"
            ],
        ),
        (
            [{"name": "SelectorSpreadPriority", "weight": 1}, {"name": "EvenPodsSpreadPriority", "weight": 2}],
            {"PodTopologySpread": 2},
            ["PodTopologySpread"],
            {"PodTopologySpread": {"defaultingType": "System"}},
            [
                "priorities[0] SelectorSpreadPriority: no equivalent since v1.23 (SelectorSpread plugin removed); "
                "PodTopologySpread with its system default constraints (defaultingType: System) spreads pods of a "
                "Service/ReplicaSet instead"
            ],
        ),
        (
            [{"name": "EvenPodsSpreadPriority", "weight": 2}],
            {"PodTopologySpread": 2},
            ["PodTopologySpread"],
            {"PodTopologySpread": {"defaultingType": "List"}},
            [],
        ),
        (
            [
                {"name": "NodeAffinityPriority", "weight": 2},
                {"name": "TaintTolerationPriority", "weight": 3},
                {"name": "ImageLocalityPriority", "weight": 1},
                {"name": "InterPodAffinityPriority", "weight": 4},
            ],
            {"ImageLocality": 1, "InterPodAffinity": 4, "NodeAffinity": 2, "TaintToleration": 3},
            ["InterPodAffinity", "NodeAffinity", "TaintToleration"],
            {},
            [],
        ),
        (
            [
                {"name": "EqualPriority", "weight": 1},
                {"name": "NodePreferAvoidPodsPriority", "weight": 10000},
                {"name": "spread-by-rack", "weight": 1, "argument": {"serviceAntiAffinity": {"label": "rack"}}},
                {"name": "ImageLocalityPriority", "weight": 0},
            ],
            {},
            [],
            {},
            [
                "priorities[0] EqualPriority: dropped: it gave every node the same score (kube-scheduler skipped it too)",
                "priorities[2] spread-by-rack: no equivalent since v1.23 (ServiceAffinity plugin removed)",
                "priorities[3] ImageLocalityPriority: weight 0 is not a positive integer (kube-scheduler refused it); "
                "ignored",
                "priorities[1] NodePreferAvoidPodsPriority: no equivalent since v1.24 (NodePreferAvoidPods plugin "
                "removed)",
            ],
        ),
    ],
    ids=[
        "least-requested",
        "most-requested-and-balanced",
        "requested-to-capacity-ratio",
        "one-fit-strategy",
        "selector-spread-system-defaults",
        "even-pods-spread-list-defaulting",
        "affinity-taint-image",
        "removed-and-invalid",
    ],
)
def test_priorities(
    priorities: list[Any],
    score: dict[str, int],
    pre_score: list[str],
    args: dict[str, Any],
    warnings: list[str],
) -> None:
    cfg, warns = migrate_policy(policy(priorities=priorities))
    assert weights(cfg) == score
    assert sorted(enabled(cfg, "preScore")) == pre_score
    assert plugin_args(cfg) == args
    assert warns == warnings
    assert enabled(cfg, "filter") == MANDATORY_FILTERS


def test_label_preference_becomes_preferred_added_affinity() -> None:
    cfg, warns = migrate_policy(
        policy(
            priorities=[
                {"name": "preferSSD", "weight": 3, "argument": {"labelPreference": {"label": "ssd", "presence": True}}},
                {"name": "NodeAffinityPriority", "weight": 1},
            ]
        )
    )
    assert weights(cfg) == {"NodeAffinity": 3}
    assert plugin_args(cfg)["NodeAffinity"]["addedAffinity"] == {
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 3, "preference": {"matchExpressions": [{"key": "ssd", "operator": "Exists"}]}}
        ]
    }
    assert len(warns) == 1 and warns[0].startswith("priorities[0] preferSSD: approximated")


def test_unset_priorities_mean_upstream_defaults() -> None:
    pol = policy()
    del pol["priorities"]
    cfg, warns = migrate_policy(pol)
    assert weights(cfg) == {
        "NodeResourcesBalancedAllocation": 1,
        "ImageLocality": 1,
        "InterPodAffinity": 1,
        "NodeResourcesFit": 1,
        "NodeAffinity": 1,
        "PodTopologySpread": 2,
        "TaintToleration": 1,
    }
    assert plugin_args(cfg) == {"PodTopologySpread": {"defaultingType": "System"}}
    assert [w.split(":")[0] for w in warns] == [
        "priorities (not set, upstream default) NodePreferAvoidPodsPriority",
        "priorities (not set, upstream default) SelectorSpreadPriority",
    ]


# --- other fields --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "extra, args, warnings",
    [
        (
            {"hardPodAffinitySymmetricWeight": 10},
            {"InterPodAffinity": {"hardPodAffinityWeight": 10}},
            [],
        ),
        ({"hardPodAffinitySymmetricWeight": 0}, {}, []),
        (
            {"alwaysCheckAllPredicates": True},
            {},
            [
                "alwaysCheckAllPredicates: no equivalent since v1.23 (the framework stops at the first Filter plugin "
                "that rejects a node)"
            ],
        ),
        ({"alwaysCheckAllPredicates": False, "unknownField": 1}, {}, ["unknownField: not a Policy field; ignored"]),
    ],
    ids=["hard-pod-affinity-weight", "hard-pod-affinity-unset", "always-check-all", "unknown-field"],
)
def test_top_level_fields(extra: dict[str, Any], args: dict[str, Any], warnings: list[str]) -> None:
    cfg, warns = migrate_policy(policy(priorities=[{"name": "InterPodAffinityPriority", "weight": 1}], **extra))
    assert plugin_args(cfg) == args
    assert warns == warnings


def test_hard_pod_affinity_weight_without_the_priority_is_reported() -> None:
    cfg, warns = migrate_policy(policy([{"name": "MatchInterPodAffinity"}], hardPodAffinitySymmetricWeight=5))
    assert plugin_args(cfg) == {}
    assert warns == [
        "hardPodAffinitySymmetricWeight: ignored: it only weighs InterPodAffinityPriority, which this Policy does "
        "not enable"
    ]


def test_extenders_are_copied_with_v1_field_names() -> None:
    ext = {
        "urlPrefix": "https://extender.example/scheduler",
        "filterVerb": "filter",
        "prioritizeVerb": "prioritize",
        "weight": 5,
        "BindVerb": "bind",
        "enableHttps": True,
        "TLSConfig": {"Insecure": True, "serverName": "extender"},
        "httpTimeout": 1_500_000_000,
        "nodeCacheCapable": True,
        "managedResources": [{"name": "example.com/foo", "ignoredByScheduler": True}],
        "ignorable": True,
        "bogus": 1,
    }
    cfg, warns = migrate_policy(policy(extenders=[ext]))
    assert cfg["extenders"] == [
        {
            "urlPrefix": "https://extender.example/scheduler",
            "filterVerb": "filter",
            "prioritizeVerb": "prioritize",
            "weight": 5,
            "bindVerb": "bind",
            "enableHTTPS": True,
            "tlsConfig": {"insecure": True, "serverName": "extender"},
            "httpTimeout": "1.5s",
            "nodeCacheCapable": True,
            "managedResources": [{"name": "example.com/foo", "ignoredByScheduler": True}],
            "ignorable": True,
        }
    ]
    assert warns == ["extenders[0].bogus: not an extender field; ignored"]


@pytest.mark.parametrize(
    "doc, message",
    [
        ([], "must be a mapping"),
        ({"kind": "KubeSchedulerConfiguration", "apiVersion": "v1"}, "already a configuration"),
        ({"kind": "Policy", "apiVersion": "v2"}, "apiVersion: expected 'v1'"),
        ({"kind": "Policy", "predicates": {"name": "HostName"}}, "predicates: expected a list"),
    ],
    ids=["not-a-mapping", "already-v1", "wrong-api-version", "predicates-not-a-list"],
)
def test_not_a_policy_is_refused(doc: Any, message: str) -> None:
    with pytest.raises(PolicyError, match=message):
        migrate_policy(doc)


# --- the result loads ----------------------------------------------------------------------------

LOADABLE = {
    "filters-only": policy([{"name": "GeneralPredicates"}, {"name": "PodToleratesNodeTaints"}]),
    "typical-1.20": policy(
        [
            {"name": "PodFitsResources"},
            {"name": "PodFitsHostPorts"},
            {"name": "MatchNodeSelector"},
            {"name": "HostName"},
        ],
        [
            {"name": "LeastRequestedPriority", "weight": 1},
            {"name": "BalancedResourceAllocation", "weight": 1},
            {"name": "NodeAffinityPriority", "weight": 2},
            {"name": "TaintTolerationPriority", "weight": 3},
            {"name": "ImageLocalityPriority", "weight": 1},
        ],
    ),
    "bin-packing": policy(
        [{"name": "GeneralPredicates"}],
        [
            {
                "name": "RequestedToCapacityRatioPriority",
                "weight": 2,
                "argument": {
                    "requestedToCapacityRatioArguments": {
                        "shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]
                    }
                },
            }
        ],
    ),
    "label-presence": policy(
        [{"name": "zoned", "argument": {"labelsPresence": {"labels": ["zone"], "presence": True}}}],
        [{"name": "ssd", "weight": 2, "argument": {"labelPreference": {"label": "ssd", "presence": True}}}],
    ),
    "affinity-and-spread": policy(
        [{"name": "MatchInterPodAffinity"}, {"name": "EvenPodsSpread"}],
        [{"name": "InterPodAffinityPriority", "weight": 1}, {"name": "SelectorSpreadPriority", "weight": 1}],
        hardPodAffinitySymmetricWeight=10,
    ),
    "upstream-defaults": {"kind": "Policy", "apiVersion": "v1"},
    "with-extender": policy(
        [{"name": "PodFitsResources"}],
        extenders=[{"urlPrefix": "http://127.0.0.1:8888", "filterVerb": "filter", "httpTimeout": 30_000_000_000}],
    ),
}


@pytest.mark.parametrize("doc", LOADABLE.values(), ids=LOADABLE.keys())
def test_migrated_config_loads(doc: dict[str, Any]) -> None:
    cfg, _ = migrate_policy(doc)
    # Only the v1 defaults outside the explicit points (PrioritySort, DefaultPreemption,
    # DefaultBinder, SchedulingGates) and what the Policy names may run.
    needed = names_in(cfg) | {"DefaultPreemption"}
    missing = sorted(n for n in needed if n not in default_registry())
    if missing:
        pytest.skip(f"not implemented yet: {', '.join(missing)}")
    loaded = parse_config(yaml.safe_load(yaml.safe_dump(cfg)))
    (spec,) = loaded.profiles
    for point in EXPLICIT_POINTS:
        assert [r.name for r in spec.plugins.get(point, [])] == enabled(cfg, point), point
    assert {r.name: r.weight for r in spec.plugins.get("score", [])} == weights(cfg)
    assert [r.name for r in spec.plugins["queueSort"]] == ["PrioritySort"]
    assert [r.name for r in spec.plugins["bind"]] == ["DefaultBinder"]
    for name in plugin_args(cfg):
        assert name in spec.plugin_args
    assert len(loaded.model.extenders) == len(cfg.get("extenders", []))


def test_the_point_tables_match_the_plugins_that_exist() -> None:
    """A plugin enabled at a point it does not implement would be refused: keep the tables honest."""
    used: dict[str, set[str]] = {}
    for entries in PREDICATE_PLUGINS.values():
        for plugin, points in entries:
            used.setdefault(plugin, set()).update(points)
    for plugin, points in PRIORITY_PLUGINS.values():
        used.setdefault(plugin, set()).update(points)
    checked = 0
    for plugin, points in used.items():
        if plugin not in default_registry():
            continue
        implemented = set(plugin_extension_points(default_registry().get(plugin).cls))
        assert points <= implemented, plugin
        # PreScore must come along wherever Score does (the '*' disables the defaults there).
        if "score" in points:
            assert ("preScore" in points) == ("preScore" in implemented), plugin
        checked += 1
    assert checked >= 8


# --- CLI -----------------------------------------------------------------------------------------


@pytest.fixture
def policy_file(tmp_path: Path) -> Path:
    path = tmp_path / "policy.json"
    path.write_text(
        json.dumps(
            policy(
                [{"name": "PodFitsResources"}, {"name": "CheckServiceAffinity"}],
                [{"name": "LeastRequestedPriority", "weight": 2}],
            )
        )
    )
    return path


def test_cli_prints_yaml_and_warnings(policy_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["config", "migrate-policy", str(policy_file)]) == 0
    out, err = capsys.readouterr()
    cfg = yaml.safe_load(out)
    assert cfg["kind"] == "KubeSchedulerConfiguration"
    assert weights(cfg) == {"NodeResourcesFit": 2}
    assert err.splitlines() == [
        "warning: predicates[1] CheckServiceAffinity: no equivalent since v1.23 (ServiceAffinity plugin removed)"
    ]


def test_cli_writes_the_output_file(policy_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "scheduler-config.yaml"
    assert main(["config", "migrate-policy", str(policy_file), "--output", str(target)]) == 0
    out, err = capsys.readouterr()
    assert out == ""
    assert "CheckServiceAffinity" in err
    cfg = yaml.safe_load(target.read_text())
    assert enabled(cfg, "filter") == ["NodeUnschedulable", "NodeResourcesFit", "TaintToleration"]
    assert main(["config", "validate", str(target)]) == 0


@pytest.mark.parametrize(
    "content, message",
    [
        (None, "cannot read"),
        ("{not json: [", "not valid JSON or YAML"),
        ('{"kind": "KubeSchedulerConfiguration"}', "not a scheduler Policy"),
    ],
    ids=["missing-file", "garbage", "not-a-policy"],
)
def test_cli_fails_clearly_on_bad_input(
    content: str | None, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "policy.json"
    if content is not None:
        path.write_text(content)
    assert main(["config", "migrate-policy", str(path)]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert message in err and str(path) in err
