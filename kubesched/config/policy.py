"""Migrating a legacy scheduler ``Policy`` (removed in Kubernetes 1.23) to a v1 configuration.

    config, warnings = migrate_policy(json.load(open("policy.json")))

A Policy (``kind: Policy``, ``apiVersion: v1``) named predicates and priorities; kube-scheduler
1.22 turned each into framework plugins with a fixed table (``legacy_registry.go``). This module
applies that table and writes the result as a ``KubeSchedulerConfiguration`` v1 with one profile,
``default-scheduler``:

* ``preFilter``, ``filter``, ``preScore``, ``score``, ``reserve`` and ``preBind`` list exactly the
  plugins the Policy asked for, with ``disabled: [{name: '*'}]`` so that none of v1's defaults
  creep in; ``queueSort``, ``postFilter`` and ``bind`` keep v1's defaults (PrioritySort,
  DefaultPreemption, DefaultBinder), which is what kube-scheduler 1.22 added to every Policy;
* priority weights become Score weights (a plugin reached twice keeps the larger weight);
* arguments become ``pluginConfig`` (NodeResourcesFit scoring strategy, InterPodAffinity
  hardPodAffinityWeight, PodTopologySpread defaulting, NodeAffinity addedAffinity);
* extenders are copied with v1's field names (``enableHttps`` → ``enableHTTPS``,
  ``httpTimeout`` nanoseconds → a duration string).

The mandatory predicates (PodToleratesNodeTaints, CheckNodeUnschedulable) are always added, and
an absent ``predicates``/``priorities`` list means upstream's defaults, as kube-scheduler did.
Whatever has no v1 equivalent is left out and reported in the returned warnings, each naming the
Policy field it came from.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kubesched.config.models import API_VERSION, KIND, format_go_duration
from kubesched.errors import ConfigurationError

__all__ = ["PolicyError", "migrate_policy"]

PROFILE_NAME = "default-scheduler"

#: Extension points the migration writes out explicitly, in upstream field order.
EXPLICIT_POINTS = ("preFilter", "filter", "preScore", "score", "reserve", "preBind")


class PolicyError(ConfigurationError):
    """A document that is not a legacy Policy; the message says what is wrong."""


# --- upstream's tables (Kubernetes 1.22) ------------------------------------------------------------

#: The order predicates ran in; plugins are added to each extension point in this order.
PREDICATE_ORDER = (
    "CheckNodeUnschedulable",
    "GeneralPredicates",
    "HostName",
    "PodFitsHostPorts",
    "MatchNodeSelector",
    "PodFitsResources",
    "NoDiskConflict",
    "PodToleratesNodeTaints",
    "CheckNodeLabelPresence",
    "CheckServiceAffinity",
    "MaxEBSVolumeCount",
    "MaxGCEPDVolumeCount",
    "MaxCSIVolumeCountPred",
    "MaxAzureDiskVolumeCount",
    "MaxCinderVolumeCount",
    "CheckVolumeBinding",
    "NoVolumeZoneConflict",
    "EvenPodsSpread",
    "MatchInterPodAffinity",
)

MANDATORY_PREDICATES = frozenset({"PodToleratesNodeTaints", "CheckNodeUnschedulable"})

#: Used when a Policy has no ``predicates`` at all.
DEFAULT_PREDICATES = frozenset(
    {
        "NoVolumeZoneConflict",
        "MaxEBSVolumeCount",
        "MaxGCEPDVolumeCount",
        "MaxAzureDiskVolumeCount",
        "MaxCSIVolumeCountPred",
        "MatchInterPodAffinity",
        "NoDiskConflict",
        "GeneralPredicates",
        "PodToleratesNodeTaints",
        "CheckVolumeBinding",
        "CheckNodeUnschedulable",
        "EvenPodsSpread",
    }
)

#: Used when a Policy has no ``priorities`` at all.
DEFAULT_PRIORITIES: dict[str, int] = {
    "SelectorSpreadPriority": 1,
    "InterPodAffinityPriority": 1,
    "LeastRequestedPriority": 1,
    "BalancedResourceAllocation": 1,
    "NodePreferAvoidPodsPriority": 10000,
    "NodeAffinityPriority": 1,
    "TaintTolerationPriority": 1,
    "ImageLocalityPriority": 1,
    "EvenPodsSpreadPriority": 2,
}

_FIT = ("preFilter", "filter")

#: Predicate → the plugins (and the points) it became.
PREDICATE_PLUGINS: dict[str, tuple[tuple[str, tuple[str, ...]], ...]] = {
    "GeneralPredicates": (
        ("NodeResourcesFit", _FIT),
        ("NodeName", ("filter",)),
        ("NodePorts", _FIT),
        ("NodeAffinity", _FIT),
    ),
    "PodToleratesNodeTaints": (("TaintToleration", ("filter",)),),
    "PodFitsResources": (("NodeResourcesFit", _FIT),),
    "HostName": (("NodeName", ("filter",)),),
    "PodFitsHostPorts": (("NodePorts", _FIT),),
    "MatchNodeSelector": (("NodeAffinity", _FIT),),
    "CheckNodeUnschedulable": (("NodeUnschedulable", ("filter",)),),
    "CheckVolumeBinding": (("VolumeBinding", ("preFilter", "filter", "reserve", "preBind")),),
    "NoDiskConflict": (("VolumeRestrictions", _FIT),),
    "NoVolumeZoneConflict": (("VolumeZone", _FIT),),
    "MaxCSIVolumeCountPred": (("NodeVolumeLimits", _FIT),),
    "MatchInterPodAffinity": (("InterPodAffinity", _FIT),),
    "EvenPodsSpread": (("PodTopologySpread", _FIT),),
    # Needs its labelsPresence argument: handled apart (NodeAffinity addedAffinity).
    "CheckNodeLabelPresence": (("NodeAffinity", _FIT),),
}

#: Cloud-specific volume limits: their plugins are gone from v1; with CSI migration the
#: NodeVolumeLimits plugin counts those volumes.
CLOUD_VOLUME_PREDICATES = {
    "MaxEBSVolumeCount": "EBSLimits",
    "MaxGCEPDVolumeCount": "GCEPDLimits",
    "MaxAzureDiskVolumeCount": "AzureDiskLimits",
    "MaxCinderVolumeCount": "CinderLimits",
}

PREDICATE_ALIASES = {"PodFitsPorts": "PodFitsHostPorts"}
PRIORITY_ALIASES = {"ServiceSpreadingPriority": "SelectorSpreadPriority"}

#: Priority → the plugin whose Score (and PreScore, where v1's plugin has one) it became.
PRIORITY_PLUGINS: dict[str, tuple[str, tuple[str, ...]]] = {
    "LeastRequestedPriority": ("NodeResourcesFit", ("preScore", "score")),
    "MostRequestedPriority": ("NodeResourcesFit", ("preScore", "score")),
    "RequestedToCapacityRatioPriority": ("NodeResourcesFit", ("preScore", "score")),
    "BalancedResourceAllocation": ("NodeResourcesBalancedAllocation", ("preScore", "score")),
    "SelectorSpreadPriority": ("PodTopologySpread", ("preScore", "score")),
    "EvenPodsSpreadPriority": ("PodTopologySpread", ("preScore", "score")),
    "InterPodAffinityPriority": ("InterPodAffinity", ("preScore", "score")),
    "NodeAffinityPriority": ("NodeAffinity", ("preScore", "score")),
    "TaintTolerationPriority": ("TaintToleration", ("preScore", "score")),
    "ImageLocalityPriority": ("ImageLocality", ("score",)),
}

#: NodeResourcesFit scoring strategy per resource priority.
_STRATEGIES = {
    "LeastRequestedPriority": "LeastAllocated",
    "MostRequestedPriority": "MostAllocated",
    "RequestedToCapacityRatioPriority": "RequestedToCapacityRatio",
}

_DEFAULT_RESOURCES = [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]

_REMOVED_PRIORITIES = {
    "NodePreferAvoidPodsPriority": "no equivalent since v1.24 (NodePreferAvoidPods plugin removed)",
}

#: Legacy extender fields (decoded case-insensitively upstream) → v1 names.
_EXTENDER_FIELDS = {
    k.lower(): k
    for k in (
        "urlPrefix",
        "filterVerb",
        "preemptVerb",
        "prioritizeVerb",
        "weight",
        "bindVerb",
        "tlsConfig",
        "httpTimeout",
        "nodeCacheCapable",
        "managedResources",
        "ignorable",
    )
}
_EXTENDER_FIELDS["enablehttps"] = "enableHTTPS"
_TLS_FIELDS = {
    k.lower(): k for k in ("insecure", "serverName", "certFile", "keyFile", "caFile", "certData", "keyData", "caData")
}
_POLICY_FIELDS = (
    "kind",
    "apiVersion",
    "predicates",
    "priorities",
    "extenders",
    "hardPodAffinitySymmetricWeight",
    "alwaysCheckAllPredicates",
)


# --- the migration ----------------------------------------------------------------------------------


@dataclass
class _Builder:
    points: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: {p: [] for p in EXPLICIT_POINTS})
    args: dict[str, dict[str, Any]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    #: NodeResourcesFit scoring: (strategy, origin) of the first resource priority.
    fit_strategy: tuple[str, str] | None = None
    required_labels: list[dict[str, Any]] = field(default_factory=list)
    preferred_labels: list[dict[str, Any]] = field(default_factory=list)

    def add(self, plugin: str, points: tuple[str, ...], weight: int | None = None) -> None:
        for point in points:
            entries = self.points[point]
            w = weight if point == "score" else None
            for e in entries:
                if e["name"] == plugin:
                    # Upstream keeps the larger weight when two priorities map to one plugin.
                    if w is not None and w > e.get("weight", 0):
                        e["weight"] = w
                    break
            else:
                entries.append({"name": plugin, "weight": w} if w is not None else {"name": plugin})

    def enabled(self, point: str) -> list[str]:
        return [e["name"] for e in self.points[point]]

    def warn(self, origin: str, message: str) -> None:
        self.warnings.append(f"{origin}: {message}")


def migrate_policy(policy: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Convert a legacy ``Policy`` into a v1 ``KubeSchedulerConfiguration`` dict.

    Returns ``(config, warnings)``: ``warnings`` lists, field by field, what the configuration
    cannot express (each entry starts with the Policy field, e.g. ``predicates[3] CheckServiceAffinity``).
    Raises :class:`PolicyError` when ``policy`` is not a Policy document.
    """
    _check_header(policy)
    b = _Builder()
    for key in policy:
        if key not in _POLICY_FIELDS:
            b.warn(key, "not a Policy field; ignored")

    predicates = _predicate_keys(policy.get("predicates"), b)
    priorities = _priority_keys(policy.get("priorities"), b)

    for name in PREDICATE_ORDER:
        if name in predicates:
            _apply_predicate(name, predicates[name], b)
    for name in sorted(priorities):
        weight, origin, argument = priorities[name]
        _apply_priority(name, weight, origin, argument, b)

    _hard_pod_affinity(policy.get("hardPodAffinitySymmetricWeight"), b)
    if policy.get("alwaysCheckAllPredicates"):
        b.warn(
            "alwaysCheckAllPredicates",
            "no equivalent since v1.23 (the framework stops at the first Filter plugin that rejects a node)",
        )
    _node_affinity_args(b)

    plugins: dict[str, Any] = {}
    for point in EXPLICIT_POINTS:
        entry: dict[str, Any] = {}
        if b.points[point]:
            entry["enabled"] = b.points[point]
        entry["disabled"] = [{"name": "*"}]
        plugins[point] = entry
    profile: dict[str, Any] = {"schedulerName": PROFILE_NAME, "plugins": plugins}
    if b.args:
        profile["pluginConfig"] = [
            {"name": name, "args": {"apiVersion": API_VERSION, "kind": f"{name}Args", **args}}
            for name, args in sorted(b.args.items())
        ]
    config: dict[str, Any] = {"apiVersion": API_VERSION, "kind": KIND, "profiles": [profile]}
    extenders = [out for i, e in enumerate(policy.get("extenders") or []) if (out := _extender(e, i, b))]
    if extenders:
        config["extenders"] = extenders
    return config, b.warnings


def _check_header(policy: Any) -> None:
    if policy is None:
        raise PolicyError("the document is empty")
    if not isinstance(policy, dict):
        raise PolicyError(f"a Policy must be a mapping, got {type(policy).__name__}")
    kind, api = policy.get("kind"), policy.get("apiVersion")
    if kind is not None and kind != "Policy":
        hint = " (it is already a configuration)" if kind == KIND else ""
        raise PolicyError(f"kind: expected 'Policy', got {kind!r}{hint}")
    if api is not None and api != "v1":
        raise PolicyError(f"apiVersion: expected 'v1', got {api!r}")
    for key in ("predicates", "priorities", "extenders"):
        if policy.get(key) is not None and not isinstance(policy[key], list):
            raise PolicyError(f"{key}: expected a list, got {type(policy[key]).__name__}")


def _predicate_keys(items: list[Any] | None, b: _Builder) -> dict[str, tuple[str, dict[str, Any] | None]]:
    """Predicate key → (origin, argument); custom predicates fold into their kind, as upstream."""
    keys: dict[str, tuple[str, dict[str, Any] | None]] = {}
    if items is None:
        for name in DEFAULT_PREDICATES:
            keys[name] = ("predicates (not set, upstream default) " + name, None)
    else:
        for i, item in enumerate(items):
            if not isinstance(item, dict) or not item.get("name"):
                b.warn(f"predicates[{i}]", "expected {name, argument}; ignored")
                continue
            raw = str(item["name"])
            origin = f"predicates[{i}] {raw}"
            name = PREDICATE_ALIASES.get(raw, raw)
            argument = item.get("argument") or None
            if name not in PREDICATE_PLUGINS and name not in CLOUD_VOLUME_PREDICATES and name != "CheckServiceAffinity":
                if argument and argument.get("labelsPresence") is not None:
                    name = "CheckNodeLabelPresence"
                elif argument and argument.get("serviceAffinity") is not None:
                    name = "CheckServiceAffinity"
                else:
                    b.warn(origin, "unknown predicate with no labelsPresence/serviceAffinity argument; ignored")
                    continue
            if name == "CheckNodeLabelPresence":
                _labels_presence(origin, argument, b)
            if name not in keys:
                keys[name] = (origin, argument)
    for name in MANDATORY_PREDICATES:
        keys.setdefault(name, (f"predicates (mandatory) {name}", None))
    return keys


def _priority_keys(items: list[Any] | None, b: _Builder) -> dict[str, tuple[int, str, dict[str, Any] | None]]:
    """Priority key → (weight, origin, argument)."""
    keys: dict[str, tuple[int, str, dict[str, Any] | None]] = {}
    if items is None:
        for name, weight in DEFAULT_PRIORITIES.items():
            keys[name] = (weight, "priorities (not set, upstream default) " + name, None)
        return keys
    for i, item in enumerate(items):
        if not isinstance(item, dict) or not item.get("name"):
            b.warn(f"priorities[{i}]", "expected {name, weight, argument}; ignored")
            continue
        raw = str(item["name"])
        origin = f"priorities[{i}] {raw}"
        name = PRIORITY_ALIASES.get(raw, raw)
        argument = item.get("argument") or None
        given = item.get("weight")
        if name == "EqualPriority":
            b.warn(origin, "dropped: it gave every node the same score (kube-scheduler skipped it too)")
            continue
        if not isinstance(given, int) or isinstance(given, bool) or given <= 0:
            b.warn(origin, f"weight {given!r} is not a positive integer (kube-scheduler refused it); ignored")
            continue
        weight = given
        if name not in PRIORITY_PLUGINS and name not in _REMOVED_PRIORITIES:
            if argument and argument.get("requestedToCapacityRatioArguments") is not None:
                name = "RequestedToCapacityRatioPriority"
            elif argument and argument.get("labelPreference") is not None:
                _label_preference(origin, argument["labelPreference"], weight, b)
                continue
            elif argument and argument.get("serviceAntiAffinity") is not None:
                b.warn(origin, "no equivalent since v1.23 (ServiceAffinity plugin removed)")
                continue
            else:
                b.warn(origin, "unknown priority with no argument naming its kind; ignored")
                continue
        if name in keys:
            b.warn(origin, f"{name} is listed twice; the first entry ({keys[name][1]}) is kept")
            continue
        keys[name] = (weight, origin, argument)
    return keys


def _apply_predicate(name: str, spec: tuple[str, dict[str, Any] | None], b: _Builder) -> None:
    origin, _ = spec
    if name == "CheckServiceAffinity":
        b.warn(origin, "no equivalent since v1.23 (ServiceAffinity plugin removed)")
        return
    if name in CLOUD_VOLUME_PREDICATES:
        b.add("NodeVolumeLimits", _FIT)
        b.warn(
            origin,
            f"no equivalent in v1 ({CLOUD_VOLUME_PREDICATES[name]} plugin removed); NodeVolumeLimits is enabled "
            "instead, which counts these volumes once they are migrated to CSI",
        )
        return
    if name == "CheckNodeLabelPresence" and not b.required_labels:
        return  # its labels were missing; already reported
    for plugin, points in PREDICATE_PLUGINS[name]:
        b.add(plugin, points)


def _apply_priority(name: str, weight: int, origin: str, argument: dict[str, Any] | None, b: _Builder) -> None:
    if name in _REMOVED_PRIORITIES:
        b.warn(origin, _REMOVED_PRIORITIES[name])
        return
    plugin, points = PRIORITY_PLUGINS[name]
    if plugin == "NodeResourcesFit":
        strategy = _STRATEGIES[name]
        if b.fit_strategy is not None:
            b.warn(
                origin,
                f"not migrated: NodeResourcesFit already scores with {b.fit_strategy[0]} (from {b.fit_strategy[1]}); "
                "a v1 profile has one NodeResourcesFit scoring strategy",
            )
            return
        b.fit_strategy = (strategy, origin)
        scoring: dict[str, Any] = {"type": strategy, "resources": [dict(r) for r in _DEFAULT_RESOURCES]}
        if strategy == "RequestedToCapacityRatio":
            ratio = (argument or {}).get("requestedToCapacityRatioArguments") or {}
            scoring["requestedToCapacityRatio"] = {
                "shape": [
                    {"utilization": int(p.get("utilization", 0)), "score": int(p.get("score", 0))}
                    for p in ratio.get("shape") or []
                ]
            }
            if ratio.get("resources"):
                scoring["resources"] = [
                    {"name": r["name"], "weight": int(r.get("weight") or 1)} for r in ratio["resources"]
                ]
        # LeastAllocated over cpu and memory is v1's default: no pluginConfig needed for it.
        if strategy != "LeastAllocated":
            b.args["NodeResourcesFit"] = {"scoringStrategy": scoring}
    elif name == "SelectorSpreadPriority":
        b.warn(
            origin,
            "no equivalent since v1.23 (SelectorSpread plugin removed); PodTopologySpread with its system "
            "default constraints (defaultingType: System) spreads pods of a Service/ReplicaSet instead",
        )
        b.args["PodTopologySpread"] = {"defaultingType": "System"}
    elif name == "EvenPodsSpreadPriority":
        # Without SelectorSpread, 1.22 spread only by the pods' own constraints.
        b.args.setdefault("PodTopologySpread", {"defaultingType": "List"})
    b.add(plugin, points, weight)


def _labels_presence(origin: str, argument: dict[str, Any] | None, b: _Builder) -> None:
    presence = (argument or {}).get("labelsPresence")
    if not presence or not presence.get("labels"):
        b.warn(origin, "no labelsPresence labels given; nothing to check, ignored")
        return
    op = "Exists" if presence.get("presence") else "DoesNotExist"
    b.required_labels.extend({"key": label, "operator": op} for label in presence["labels"])


def _label_preference(origin: str, pref: dict[str, Any], weight: int, b: _Builder) -> None:
    label = pref.get("label")
    if not label:
        b.warn(origin, "labelPreference without a label; ignored")
        return
    op = "Exists" if pref.get("presence") else "DoesNotExist"
    b.preferred_labels.append(
        {"weight": min(weight, 100), "preference": {"matchExpressions": [{"key": label, "operator": op}]}}
    )
    b.add("NodeAffinity", ("preScore", "score"), weight)
    b.warn(
        origin,
        "approximated (NodeLabel plugin removed in v1.23): a NodeAffinity addedAffinity preferred term; its score "
        "is normalized together with the pods' own preferred node affinity",
    )


def _node_affinity_args(b: _Builder) -> None:
    added: dict[str, Any] = {}
    if b.required_labels:
        added["requiredDuringSchedulingIgnoredDuringExecution"] = {
            "nodeSelectorTerms": [{"matchExpressions": b.required_labels}]
        }
    if b.preferred_labels:
        added["preferredDuringSchedulingIgnoredDuringExecution"] = b.preferred_labels
    if added:
        b.args["NodeAffinity"] = {"addedAffinity": added}


def _hard_pod_affinity(value: Any, b: _Builder) -> None:
    if not value:
        return
    if "InterPodAffinity" not in b.enabled("score"):
        b.warn(
            "hardPodAffinitySymmetricWeight",
            "ignored: it only weighs InterPodAffinityPriority, which this Policy does not enable",
        )
        return
    b.args["InterPodAffinity"] = {"hardPodAffinityWeight": value}


def _extender(ext: Any, i: int, b: _Builder) -> dict[str, Any]:
    origin = f"extenders[{i}]"
    if not isinstance(ext, dict):
        b.warn(origin, "expected a mapping; ignored")
        return {}
    out: dict[str, Any] = {}
    for key, value in ext.items():
        name = _EXTENDER_FIELDS.get(str(key).lower())
        if name is None:
            b.warn(f"{origin}.{key}", "not an extender field; ignored")
            continue
        if name == "httpTimeout" and isinstance(value, (int, float)) and not isinstance(value, bool):
            # A Policy held a Go time.Duration: integer nanoseconds.
            value = format_go_duration(value / 1e9)
        elif name == "tlsConfig" and isinstance(value, dict):
            tls: dict[str, Any] = {}
            for tkey, tvalue in value.items():
                tname = _TLS_FIELDS.get(str(tkey).lower())
                if tname is None:
                    b.warn(f"{origin}.tlsConfig.{tkey}", "not a TLS config field; ignored")
                else:
                    tls[tname] = tvalue
            value = tls
        out[name] = value
    return out
