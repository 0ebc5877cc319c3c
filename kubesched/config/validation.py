"""The semantic checks of upstream's ``ValidateKubeSchedulerConfiguration``, and plugin args.

They run on the defaulted configuration (profiles named, plugin sets merged), as upstream's do.
Each returns ``"path: reason"`` lines; an empty list means valid.
"""

from __future__ import annotations

import math
import re
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from kubesched.config.defaults import INVALID_IN_V1, with_gated_defaults
from kubesched.config.errors import format_validation_error, join_path, show
from kubesched.config.models import (
    API_VERSION,
    INT64_MAX,
    Extender,
    KubeSchedulerConfiguration,
    KubeSchedulerProfile,
    LeaderElectionConfiguration,
    PluginSet,
    parse_go_duration,
)
from kubesched.config.models import format_go_duration as _d
from kubesched.framework import names
from kubesched.framework.features import FeatureGates
from kubesched.runtime.registry import NOT_YET_IMPLEMENTED, PluginEntry, Registry, RegistryError

#: client-go's leader election jitter: renewDeadline must exceed retryPeriod × this.
JITTER_FACTOR = 1.2


#: How deeply a document may nest. Real configurations nest a dozen levels; a limit keeps a
#: pathological file from exhausting the interpreter's stack in the checks that recurse.
MAX_DEPTH = 100


def document_problems(data: Any) -> list[str]:
    """Numbers no Go field can hold, and nesting too deep to check, anywhere in a decoded
    document (plugin args included). Iterative, so any depth is safe to inspect.

    Upstream decodes YAML through JSON: infinity and NaN do not survive that, and no field is
    wider than an int64.
    """
    errs: list[str] = []
    stack: list[tuple[Any, str, int]] = [(data, "", 0)]
    while stack:
        value, path, depth = stack.pop()
        if isinstance(value, dict | list):
            if depth >= MAX_DEPTH:
                errs.append(f"{path or '<root>'}: nested more than {MAX_DEPTH} levels deep")
                continue
            items = value.items() if isinstance(value, dict) else enumerate(value)
            children = [(v, join_path(path, k if isinstance(value, list) else str(k)), depth + 1) for k, v in items]
            stack.extend(reversed(children))
        elif isinstance(value, float) and not math.isfinite(value):
            errs.append(f"{path or '<root>'}: must be a finite number, got {value}")
        elif isinstance(value, int) and not isinstance(value, bool) and not -(2**63) <= value <= INT64_MAX:
            errs.append(f"{path or '<root>'}: must fit a 64-bit integer, got {value}")
    return errs


def validate_leader_election(le: LeaderElectionConfiguration, path: str = "leaderElection") -> list[str]:
    """component-base's checks, plus client-go's ``NewLeaderElector`` ones and the scheduler's lock rule."""
    if not le.leaderElect:
        return []
    errs: list[str] = []
    for name in ("leaseDuration", "renewDeadline", "retryPeriod"):
        if getattr(le, name) <= 0:
            errs.append(f"{path}.{name}: must be greater than zero (got {_d(getattr(le, name))})")
    if le.leaseDuration <= le.renewDeadline:
        errs.append(
            f"{path}.leaseDuration: must be greater than renewDeadline ({_d(le.leaseDuration)} <= {_d(le.renewDeadline)})"
        )
    if le.renewDeadline <= JITTER_FACTOR * le.retryPeriod:
        errs.append(
            f"{path}.renewDeadline: must be greater than retryPeriod*JitterFactor "
            f"({_d(le.renewDeadline)} <= {_d(le.retryPeriod)}*{JITTER_FACTOR})"
        )
    if le.resourceLock != "leases":
        errs.append(f'{path}.resourceLock: resourceLock value must be "leases" (got {show(le.resourceLock)})')
    return errs


def _percentage(path: str, value: int | None) -> list[str]:
    if value is not None and not 0 <= value <= 100:
        return [f"{path}: not in valid range [0-100] (got {value})"]
    return []


def validate_profiles(profiles: list[KubeSchedulerProfile]) -> list[str]:
    """Names, percentages, duplicate pluginConfig, and one queueSort set shared by all profiles."""
    errs: list[str] = []
    if not profiles:
        return ["profiles: at least one profile is required"]
    names: dict[str, int] = {}
    for i, prof in enumerate(profiles):
        path = join_path("profiles", i)
        if not prof.schedulerName:
            errs.append(f"{path}.schedulerName: required field is missing (needed when there are several profiles)")
        elif prof.schedulerName in names:
            errs.append(
                f"{path}.schedulerName: duplicate value {show(prof.schedulerName)} "
                f"(already used by profiles[{names[prof.schedulerName]}].schedulerName)"
            )
        else:
            names[prof.schedulerName] = i
        errs.extend(_percentage(f"{path}.percentageOfNodesToScore", prof.percentageOfNodesToScore))
        seen: set[str] = set()
        for j, pc in enumerate(prof.pluginConfig):
            if pc.name in seen:
                errs.append(f"{path}.pluginConfig[{j}]: duplicate pluginConfig for plugin {pc.name!r}")
            seen.add(pc.name)
    errs.extend(_common_queue_sort(profiles))
    return errs


def _common_queue_sort(profiles: list[KubeSchedulerProfile]) -> list[str]:
    """At most one QueueSort plugin enabled per profile. Profiles may differ (kubesched orders
    each profile's pods with its own; kube-scheduler requires them all the same)."""
    errs: list[str] = []
    for i, prof in enumerate(profiles):
        cur = prof.plugins.queueSort if prof.plugins else PluginSet()
        if len(cur.enabled) > 1:
            errs.append(
                f"profiles[{i}].plugins.queueSort.enabled: only one queue sort plugin can be enabled "
                f"(got {len(cur.enabled)})"
            )
    return errs


def _validate_extenders(extenders: list[Extender]) -> list[str]:
    errs: list[str] = []
    binders = 0
    managed: set[str] = set()
    for i, ext in enumerate(extenders):
        path = join_path("extenders", i)
        if ext.prioritizeVerb and ext.weight <= 0:
            errs.append(f"{path}.weight: must have a positive weight applied to it (got {ext.weight})")
        if ext.bindVerb:
            binders += 1
        for j, res in enumerate(ext.managedResources):
            rpath = f"{path}.managedResources[{j}].name"
            problem = extended_resource_name_problem(res.name)
            if problem:
                errs.append(f"{rpath}: {problem}")
            if res.name in managed:
                errs.append(f"{rpath}: duplicate extender managed resource name {show(res.name)}")
            managed.add(res.name)
    if binders > 1:
        errs.append(f"extenders: only one extender can implement bind, found {binders}")
    return errs


_QUALIFIED_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def extended_resource_name_problem(name: str) -> str:
    """Why ``name`` is not a valid extended resource name (``""`` when it is): a qualified name
    with a domain prefix outside ``kubernetes.io``, whose ``requests.`` form is qualified too."""
    prefix, _, short = name.rpartition("/")
    if not short or len(short) > 63 or not _QUALIFIED_NAME.match(short):
        return f"{show(name)} is not a qualified name (e.g. 'example.com/my-resource')"
    if prefix and (len(prefix) > 253 or not _DNS1123_SUBDOMAIN.match(prefix)):
        return f"{show(name)} has an invalid prefix: it must be a DNS subdomain"
    if not prefix or prefix == "kubernetes.io" or prefix.endswith(".kubernetes.io"):
        return f"{show(name)} is an invalid extended resource name"
    return ""


def validate_configuration(cfg: KubeSchedulerConfiguration) -> list[str]:
    """Upstream's configuration checks on a defaulted configuration (plugins aside)."""
    errs: list[str] = []
    if cfg.clientConnection.burst < 0:
        errs.append(f"clientConnection.burst: must be non-negative (got {cfg.clientConnection.burst})")
    errs.extend(validate_leader_election(cfg.leaderElection))
    if cfg.parallelism <= 0:
        errs.append(f"parallelism: should be an integer value greater than zero (got {cfg.parallelism})")
    errs.extend(validate_profiles(cfg.profiles))
    errs.extend(_percentage("percentageOfNodesToScore", cfg.percentageOfNodesToScore))
    if cfg.podInitialBackoffSeconds <= 0:
        errs.append(f"podInitialBackoffSeconds: must be greater than 0 (got {cfg.podInitialBackoffSeconds})")
    if cfg.podMaxBackoffSeconds < cfg.podInitialBackoffSeconds:
        errs.append(
            f"podMaxBackoffSeconds: must be greater than or equal to podInitialBackoffSeconds "
            f"({cfg.podMaxBackoffSeconds} < {cfg.podInitialBackoffSeconds})"
        )
    errs.extend(_validate_extenders(cfg.extenders))
    return errs


# --- plugin args ----------------------------------------------------------------------------------


def args_model(entry: PluginEntry) -> type[BaseModel] | None:
    model = getattr(entry.cls, "Args", None)
    return model if isinstance(model, type) and issubclass(model, BaseModel) else None


_M = TypeVar("_M", bound=BaseModel)


def validate_plugin_args(model: type[_M], raw: Any) -> _M:
    """``raw`` validated against a plugin's ``Args`` model with 1.37's strict decoding: a key the
    model does not know is refused (``unknown field``), at any depth, whatever ``extra`` the
    model declares, unless it declares ``extra="allow"`` (it then wants the keys it does not
    name). Raises pydantic's ``ValidationError``."""
    if model.model_config.get("extra") == "allow":
        return model.model_validate(raw)
    # pydantic's per-call ``extra`` (2.12 on, the lowest the dependency allows) reaches nested models
    return model.model_validate(raw, extra="forbid")


def _given(args: Any, field: str) -> Any:
    """The value of ``field`` when the user set it (not null), else ``None``."""
    return getattr(args, field, None) if field in getattr(args, "model_fields_set", ()) else None


def gated_args_problems(plugin: str, args: Any, gates: FeatureGates, path: str) -> list[str]:
    """Upstream's checks of plugin args that depend on feature gates: a field whose feature is
    off is refused (it would start to act when the gate is turned on), and one whose feature is
    on is held to that feature's bounds. ``path`` is the args' path."""
    errs: list[str] = []
    if plugin == names.DYNAMIC_RESOURCES:
        if _given(args, "filterTimeout") is not None and not gates.enabled("DRASchedulerFilterTimeout"):
            errs.append(f"{path}.filterTimeout: Forbidden: DRASchedulingFilterTimeout feature gate is disabled")
        binding = _given(args, "bindingTimeout")
        if binding is not None:
            if not (gates.enabled("DRADeviceBindingConditions") and gates.enabled("DRAResourceClaimDeviceStatus")):
                errs.append(
                    f"{path}.bindingTimeout: Forbidden: DRADeviceBindingConditions or "
                    "DRAResourceClaimDeviceStatus feature gate is disabled"
                )
            elif parse_go_duration(str(binding)) < 1:
                errs.append(f'{path}.bindingTimeout: Invalid value: "{binding}": must be at least 1 second')
    elif plugin == names.VOLUME_BINDING:
        shape = _given(args, "shape")
        if shape is not None and not gates.enabled("StorageCapacityScoring"):
            errs.append(
                f"{path}.shape: Invalid value: {len(shape)} point(s): unexpected field `shape`, "
                "remove it or turn on the feature gate StorageCapacityScoring"
            )
        elif shape is not None and not shape:
            errs.append(f"{path}.shape: Required value: at least one point must be specified")
    return errs


def resolve_plugin_args(
    profile: KubeSchedulerProfile,
    index: int,
    registry: Registry,
    needed: list[str],
    entries: dict[str, PluginEntry],
    gates: FeatureGates | None = None,
) -> tuple[dict[str, Any], dict[str, int], list[str]]:
    """Validated args for each plugin the profile runs: from ``pluginConfig`` when given, else the
    plugin's ``Args()`` defaults, as upstream appends default args for plugins without config.
    Fields upstream defaults only under a feature gate are filled in as ``gates`` (1.37's
    defaults when ``None``) say, and refused when given while their gate is off.

    Returns ``(args by plugin, pluginConfig index by plugin, errors)``. ``entries`` holds the
    registry entries of ``needed``; names that failed there are reported by the caller already.
    """
    base = join_path("profiles", index)
    gates = gates if gates is not None else FeatureGates()
    errs: list[str] = []
    explicit: dict[str, Any] = {}
    where: dict[str, int] = {}
    needed_set = set(needed)
    for j, pc in enumerate(profile.pluginConfig):
        path = join_path(base, "pluginConfig", j)
        if pc.name in where:
            continue  # reported as a duplicate by validate_profiles
        where[pc.name] = j
        if pc.name in INVALID_IN_V1:
            errs.append(
                f"{path}.name: {pc.name!r} was invalid in version {API_VERSION!r} (KubeSchedulerConfiguration is version {API_VERSION!r})"
            )
            continue
        entry = entries.get(pc.name)
        if entry is None:
            if pc.name in needed_set:
                continue
            try:
                entry = registry.get(pc.name)
            except RegistryError as exc:
                # Args for a coming-later plugin that this profile does not run are harmless: upstream
                # configs often tune PodTopologySpread or InterPodAffinity while leaving them enabled.
                if pc.name not in NOT_YET_IMPLEMENTED:
                    errs.append(f"{path}.name: {exc}")
                continue
        raw = dict(pc.args or {})
        api = raw.pop("apiVersion", None)
        kind = raw.pop("kind", None)
        model = args_model(entry)
        if model is None:
            if raw:
                errs.append(f"{path}.args: plugin {pc.name!r} takes no args")
            continue
        if (
            kind is not None
            and isinstance(api, str)
            and api.startswith("kubescheduler.config.k8s.io/")
            and kind != f"{pc.name}Args"
        ):
            errs.append(f"{path}.args.kind: must be {pc.name + 'Args'!r} for plugin {pc.name!r} (got {show(kind)})")
            continue
        try:
            explicit[pc.name] = validate_plugin_args(model, raw)
        except ValidationError as exc:
            errs.extend(format_validation_error(exc, f"{path}.args"))
            continue
        errs.extend(gated_args_problems(pc.name, explicit[pc.name], gates, f"{path}.args"))

    resolved: dict[str, Any] = {}
    for name in needed:
        entry = entries.get(name)
        if entry is None:
            continue
        if name in explicit:
            resolved[name] = with_gated_defaults(name, explicit[name], gates)
            continue
        model = args_model(entry)
        if model is None or name in where:
            continue
        try:
            resolved[name] = with_gated_defaults(name, model(), gates)
        except ValidationError as exc:
            errs.append(
                f"{base}.pluginConfig: plugin {name!r} has required args and no pluginConfig entry: {exc.error_count()} field(s) missing"
            )
    return resolved, where, errs
