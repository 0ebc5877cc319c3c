"""Loading ``KubeSchedulerConfiguration`` (``kubescheduler.config.k8s.io/v1``) files.

    cfg = load_config("scheduler-config.yaml")      # or load_config(None) for the defaults
    for spec in cfg.profiles:                         # one ProfileSpec per profile, ready for Framework
        ...
    print(format_config_yaml(cfg))                    # what `kube-scheduler --write-config-to` prints

A file written for kube-scheduler loads unchanged. A wrong one raises :class:`ConfigError` with
every problem as ``path: reason``, before anything is scheduled.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import yaml
from pydantic import ValidationError

from kubesched.config.defaults import default_plugin_names, default_plugins
from kubesched.config.errors import ConfigError, format_validation_error, join_path
from kubesched.config.models import API_VERSION, KIND, KubeSchedulerConfiguration
from kubesched.config.profiles import (
    V1_PLUGIN_SETS,
    PluginSets,
    expand_plugins,
    expand_sets,
    lookup_plugins,
    merge_plugin_set,
    merge_plugins,
    merge_sets,
    user_set_problems,
)
from kubesched.config.validation import (
    document_problems,
    resolve_plugin_args,
    validate_configuration,
)
from kubesched.decoding import DecodeError, Limits, load_yaml_or_json, read_text
from kubesched.framework.features import FeatureGates
from kubesched.runtime.framework import ProfileSpec
from kubesched.runtime.registry import Registry, RegistryError, default_registry

__all__ = [
    "API_VERSION",
    "KIND",
    "ConfigError",
    "KubeSchedulerConfiguration",
    "SchedulerConfig",
    "default_plugin_names",
    "default_plugins",
    "effective_config",
    "expand_plugins",
    "format_config_yaml",
    "load_config",
    "merge_plugin_set",
    "merge_plugins",
    "parse_config",
]


@dataclass
class SchedulerConfig:
    """A validated configuration.

    ``model`` is the defaulted configuration (as upstream holds it after defaulting: profiles
    named, each profile's plugin sets merged with the defaults); ``profiles`` holds one
    :class:`ProfileSpec` per profile, in the same order, with multiPoint expanded, final score
    weights and every plugin's validated args.
    """

    model: KubeSchedulerConfiguration
    profiles: list[ProfileSpec]
    source: str = ""

    def profile(self, scheduler_name: str) -> ProfileSpec:
        for spec in self.profiles:
            if spec.scheduler_name == scheduler_name:
                return spec
        raise KeyError(scheduler_name)


#: A configuration file's bounds: kube-apiserver's body size (real files are a few kilobytes).
CONFIG_LIMITS = Limits(max_bytes=3 * 1024 * 1024)
#: Profiles in a configuration: kube-scheduler has no limit, real configurations have a handful,
#: and each profile builds a framework of its own.
MAX_PROFILES = 100
#: Plugin entries in one profile (enabled and disabled at every extension point), and pluginConfig
#: entries: the in-tree plugins listed at every point are a few hundred.
MAX_PLUGINS = 1000


def _check_counts(data: dict[str, Any], source: str) -> None:
    """Counts capped before anything is built from them, each error naming its limit."""
    profiles = data.get("profiles")
    if not isinstance(profiles, list):
        return
    if len(profiles) > MAX_PROFILES:
        raise ConfigError([f"profiles: {len(profiles)} profiles, more than the limit of {MAX_PROFILES}"], source)
    errors: list[str] = []
    for i, prof in enumerate(profiles):
        if not isinstance(prof, dict):
            continue
        plugins = prof.get("plugins")
        points = plugins.values() if isinstance(plugins, dict) else ()
        count = sum(
            len(entries)
            for point in points
            if isinstance(point, dict)
            for entries in (point.get("enabled"), point.get("disabled"))
            if isinstance(entries, list)
        )
        if count > MAX_PLUGINS:
            errors.append(f"profiles[{i}].plugins: {count} plugin entries, more than the limit of {MAX_PLUGINS}")
        config = prof.get("pluginConfig")
        if isinstance(config, list) and len(config) > MAX_PLUGINS:
            errors.append(f"profiles[{i}].pluginConfig: {len(config)} entries, more than the limit of {MAX_PLUGINS}")
    if errors:
        raise ConfigError(errors, source)


def _check_header(data: Any, source: str) -> None:
    if not isinstance(data, dict):
        what = "empty" if data is None else f"a {type(data).__name__}, not a mapping"
        raise ConfigError([f"<root>: the configuration is {what}; expected a {KIND} object"], source)
    errors: list[str] = []
    api = data.get("apiVersion")
    kind = data.get("kind")
    if api is None:
        errors.append(f"apiVersion: required field is missing (expected {API_VERSION!r})")
    elif api != API_VERSION:
        hint = (
            " (v1beta versions are not supported: migrate the file to v1)"
            if isinstance(api, str) and "v1beta" in api
            else ""
        )
        errors.append(f"apiVersion: {api!r} is not supported; only {API_VERSION!r} is{hint}")
    if kind is None:
        errors.append(f"kind: required field is missing (expected {KIND!r})")
    elif kind != KIND:
        errors.append(f"kind: {kind!r} is not supported; expected {KIND!r}")
    if errors:
        raise ConfigError(errors, source)


def parse_config(
    data: Any, source: str = "", registry: Registry | None = None, feature_gates: FeatureGates | None = None
) -> SchedulerConfig:
    """Validate and default a decoded configuration; ``registry`` defaults to the entry-point one.

    ``feature_gates`` (1.37's defaults when ``None``) decide, as upstream's gates do, which
    plugins the default profile has and which gated plugin args are defaulted or allowed.
    Raises :class:`ConfigError` listing every problem found.
    """
    _check_header(data, source)
    _check_counts(data, source)
    problems = document_problems(data)
    if problems:
        raise ConfigError(problems, source)
    try:
        model = KubeSchedulerConfiguration.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(format_validation_error(exc), source) from None
    if registry is None:
        try:
            registry = default_registry()
        except RegistryError as exc:
            raise ConfigError([f"<plugins>: {exc}"], source) from exc

    gates = feature_gates if feature_gates is not None else FeatureGates()
    defaults = PluginSets.from_model(default_plugins(gates))
    merged_sets: list[PluginSets] = []
    user_errors: list[str] = []
    for i, prof in enumerate(model.profiles):
        base = join_path("profiles", i, "plugins")
        user_errors.extend(user_set_problems(prof.plugins, registry, base))
        merged = merge_sets(defaults, PluginSets.from_model(prof.plugins, base))
        merged_sets.append(merged)
        prof.plugins = merged.to_model()

    errors = [*user_errors, *validate_configuration(model)]
    queue_sort_reported = any(".plugins.queueSort" in e for e in errors)
    specs: list[ProfileSpec] = []
    for i, (prof, merged) in enumerate(zip(model.profiles, merged_sets)):
        base = join_path("profiles", i, "plugins")
        entries, errs = lookup_plugins(merged, registry, base)
        needed = merged.names()
        expanded = expand_sets(merged, entries, base, prof.schedulerName or "") if not errs else None
        if expanded is not None:
            errs = expanded.errors
        args, _, arg_errs = resolve_plugin_args(prof, i, registry, needed, entries, gates)
        errors.extend(errs)
        errors.extend(arg_errs)
        if expanded is None or errs or arg_errs:
            continue
        specs.append(
            ProfileSpec(
                scheduler_name=prof.schedulerName or "",
                plugins=expanded.plugins,
                plugin_args=args,
                percentage_of_nodes_to_score=prof.percentageOfNodesToScore,
            )
        )
    if not errors and not queue_sort_reported:
        errors.extend(_one_queue_sort_each(specs))
    if errors:
        raise ConfigError(errors, source)
    return SchedulerConfig(model, specs, source)


def _one_queue_sort_each(specs: list[ProfileSpec]) -> list[str]:
    """Each profile sorts its pods with exactly one QueueSort plugin. Unlike kube-scheduler,
    profiles may name different ones (see kubesched.backend.queue: each sorts its own pods)."""
    errs: list[str] = []
    for i, spec in enumerate(specs):
        names = [ref.name for ref in spec.plugins.get("queueSort") or []]
        if len(names) != 1:
            errs.append(
                f"profiles[{i}].plugins.queueSort: exactly one queue sort plugin must be enabled "
                f"(got {len(names)}: {names})"
            )
    return errs


def load_config(
    path: str | os.PathLike[str] | None, registry: Registry | None = None, feature_gates: FeatureGates | None = None
) -> SchedulerConfig:
    """Read a YAML (or JSON) file and :func:`parse_config` it; ``None`` gives the default configuration."""
    if path is None:
        return parse_config({"apiVersion": API_VERSION, "kind": KIND}, registry=registry, feature_gates=feature_gates)
    source = os.fspath(path)
    try:
        text = read_text(source, CONFIG_LIMITS.max_bytes)
    except OSError as exc:
        raise ConfigError([f"<file>: cannot read: {exc.strerror or exc}"], source) from exc
    except DecodeError as exc:
        raise ConfigError([f"<file>: {exc}"], source) from None
    try:
        data = load_yaml_or_json(text, CONFIG_LIMITS)
    except (yaml.YAMLError, DecodeError) as exc:
        raise ConfigError([f"<file>: not valid YAML or JSON: {exc}"], source) from None
    return parse_config(data, source, registry, feature_gates)


def _plugin_set_out(ps: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if ps.enabled:
        out["enabled"] = [{"name": p.name, "weight": p.weight or 0} for p in ps.enabled]
    if ps.disabled:
        out["disabled"] = [{"name": p.name} for p in ps.disabled]
    return out


def _args_out(name: str, args: Any) -> dict[str, Any]:
    body = (
        args.model_dump(mode="json", by_alias=True, exclude_none=True)
        if hasattr(args, "model_dump")
        else dict(args or {})
    )
    return {"apiVersion": API_VERSION, "kind": f"{name}Args", **body}


def effective_config(cfg: SchedulerConfig) -> dict[str, Any]:
    """The fully defaulted configuration as ``kube-scheduler --write-config-to`` prints it.

    Each profile shows its merged plugin sets (the defaults in ``multiPoint.enabled``, as
    upstream prints them) and a ``pluginConfig`` entry with the defaulted args of every plugin it
    runs that takes args: the profile's own entries first, in their order, then the others sorted
    by name. Loading the result gives the same configuration.
    """
    m = cfg.model
    out: dict[str, Any] = m.model_dump(
        mode="json",
        exclude={"profiles", "extenders", "healthzBindAddress", "metricsBindAddress", "percentageOfNodesToScore"},
    )
    qps = m.clientConnection.qps
    if qps == int(qps):
        out["clientConnection"]["qps"] = int(qps)  # Go prints a whole float32 without ".0"
    # Upstream prints the defaulted 0, which means "adaptive" exactly as unset does.
    out["percentageOfNodesToScore"] = m.percentageOfNodesToScore or 0
    for deprecated in ("healthzBindAddress", "metricsBindAddress"):
        if getattr(m, deprecated) is not None:
            out[deprecated] = getattr(m, deprecated)
    if m.extenders:
        out["extenders"] = [e.model_dump(mode="json", exclude_none=True) for e in m.extenders]
    profiles = []
    for prof, spec in zip(m.profiles, cfg.profiles):
        p: dict[str, Any] = {"schedulerName": prof.schedulerName}
        if prof.percentageOfNodesToScore is not None:
            p["percentageOfNodesToScore"] = prof.percentageOfNodesToScore
        assert prof.plugins is not None
        p["plugins"] = {s: _plugin_set_out(getattr(prof.plugins, s)) for s in V1_PLUGIN_SETS}
        # Upstream keeps the user's entries first, in their order, then appends the defaulted
        # args of the other plugins sorted by name (v1 setDefaults_KubeSchedulerProfile).
        given = [pc.name for pc in prof.pluginConfig if pc.name in spec.plugin_args]
        order = [*dict.fromkeys(given), *sorted(set(spec.plugin_args) - set(given))]
        p["pluginConfig"] = [{"name": name, "args": _args_out(name, spec.plugin_args[name])} for name in order]
        profiles.append(p)
    out["profiles"] = profiles
    return out


def format_config_yaml(cfg: SchedulerConfig) -> str:
    """:func:`effective_config` as YAML (keys sorted, as upstream prints them)."""
    return yaml.safe_dump(effective_config(cfg), sort_keys=True, default_flow_style=False, allow_unicode=True)
