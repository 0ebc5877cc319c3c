"""From a profile's plugin sets to the plugins that run at each extension point.

Three steps, each as upstream does it:

1. **merge** the user's sets into the defaults (v1 ``mergePlugins``/``mergePluginSet``): per set,
   the user's ``disabled`` names (or ``'*'``) drop defaults, a default the user enables again is
   replaced *in place* (keeping the default order), and the user's other plugins follow;
2. **expand** ``multiPoint`` at every extension point (framework ``expandMultiPointPlugins``):
   a plugin enabled at a specific point overrides its multiPoint entry, ``disabled`` at a point
   removes it there, ``'*'`` at a point skips multiPoint there, and a plugin twice in multiPoint
   is an error; the result is ordered overrides ▸ multiPoint ▸ other specific plugins;
3. **weigh** the Score plugins (``getScoreWeights``): a weight given at ``score`` wins over the
   multiPoint one, 0 or unset counts as 1, and the total may not overflow.

Every problem is reported as ``path: reason`` with the path where the user wrote the plugin.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kubesched.config.defaults import INVALID_IN_V1
from kubesched.config.errors import ConfigError, join_path
from kubesched.config.models import API_VERSION, Plugin, Plugins, PluginSet
from kubesched.framework.interface import EXTENSION_POINTS, MAX_NODE_SCORE, MAX_TOTAL_SCORE
from kubesched.runtime.framework import PluginRef
from kubesched.runtime.registry import (
    NOT_YET_IMPLEMENTED,
    PluginEntry,
    Registry,
    RegistryError,
    unknown_plugin_message,
)

MULTI_POINT = "multiPoint"
#: Every plugin set of a profile, in upstream's field order.
PLUGIN_SETS: tuple[str, ...] = (*EXTENSION_POINTS, MULTI_POINT)
#: Extension points 1.37's v1 ``Plugins`` has no field for: their plugins come from multiPoint
#: alone (``placementFeasible`` is a 1.38 field).
NOT_IN_V1: frozenset[str] = frozenset({"placementFeasible"})
#: The plugin sets a v1 file may name (the fields of :class:`~kubesched.config.models.Plugins`).
V1_PLUGIN_SETS: tuple[str, ...] = tuple(s for s in PLUGIN_SETS if s not in NOT_IN_V1)

#: Upstream's interface name per extension point, as its error messages spell it.
POINT_TYPES: dict[str, str] = {
    "preEnqueue": "PreEnqueuePlugin",
    "queueSort": "QueueSortPlugin",
    "preFilter": "PreFilterPlugin",
    "filter": "FilterPlugin",
    "postFilter": "PostFilterPlugin",
    "preScore": "PreScorePlugin",
    "score": "ScorePlugin",
    "reserve": "ReservePlugin",
    "permit": "PermitPlugin",
    "preBind": "PreBindPlugin",
    "bind": "BindPlugin",
    "postBind": "PostBindPlugin",
    "placementGenerate": "PlacementGeneratePlugin",
    "placementFeasible": "PlacementFeasiblePlugin",
    "placementScore": "PlacementScorePlugin",
    "podGroupPostFilter": "PodGroupPostFilterPlugin",
}

# The order upstream's framework fills and expands extension points; it decides which error comes first.
_BUILD_ORDER = (
    "preFilter",
    "filter",
    "postFilter",
    "reserve",
    "preScore",
    "score",
    "preBind",
    "bind",
    "postBind",
    "permit",
    "preEnqueue",
    "queueSort",
    "placementGenerate",
    "placementFeasible",
    "placementScore",
    "podGroupPostFilter",
)


@dataclass
class Entry:
    """A plugin in a set, with the path where it was written (``""`` for a default plugin)."""

    name: str
    weight: int | None = None
    path: str = ""


@dataclass
class PluginSets:
    """A profile's plugin sets with each plugin's origin; ``disabled`` keeps names only."""

    enabled: dict[str, list[Entry]] = field(default_factory=lambda: {s: [] for s in PLUGIN_SETS})
    disabled: dict[str, list[str]] = field(default_factory=lambda: {s: [] for s in PLUGIN_SETS})

    @classmethod
    def from_model(cls, plugins: Plugins | None, path: str = "") -> PluginSets:
        """Sets of ``plugins``; entry paths under ``path`` (empty path marks default plugins)."""
        out = cls()
        if plugins is None:
            return out
        for s in V1_PLUGIN_SETS:
            ps: PluginSet = getattr(plugins, s)
            out.enabled[s] = [
                Entry(p.name, p.weight, join_path(path, s, "enabled", i) if path else "")
                for i, p in enumerate(ps.enabled)
            ]
            out.disabled[s] = [p.name for p in ps.disabled]
        return out

    def to_model(self) -> Plugins:
        return Plugins(
            **{
                s: PluginSet(
                    enabled=[Plugin(name=e.name, weight=e.weight) for e in self.enabled[s]],
                    disabled=[Plugin(name=n) for n in self.disabled[s]],
                )
                for s in V1_PLUGIN_SETS
            }
        )

    def names(self) -> list[str]:
        """Every enabled plugin name, first occurrence order (multiPoint first)."""
        seen: dict[str, None] = {}
        for s in (MULTI_POINT, *EXTENSION_POINTS):
            for e in self.enabled[s]:
                seen.setdefault(e.name, None)
        return list(seen)


def _merge_set(
    default_enabled: list[Entry], default_disabled: list[str], enabled: list[Entry], disabled: list[str]
) -> tuple[list[Entry], list[str]]:
    disabled_out = [*disabled, *default_disabled]
    off = set(disabled_out)
    custom = {e.name: (i, e) for i, e in enumerate(enabled)}
    replaced: set[int] = set()
    out: list[Entry] = []
    if "*" not in off:
        for d in default_enabled:
            if d.name in off:
                continue
            if d.name in custom:
                # Re-configured default: take the user's entry at the default's position.
                i, e = custom[d.name]
                replaced.add(i)
                d = e
            out.append(d)
    # Duplicates among the user's own entries are kept: the expansion step reports them.
    out.extend(e for i, e in enumerate(enabled) if i not in replaced)
    return out, disabled_out


def merge_sets(defaults: PluginSets, custom: PluginSets) -> PluginSets:
    """Upstream v1 ``mergePlugins``: each set merged into its default set."""
    out = PluginSets()
    for s in PLUGIN_SETS:
        out.enabled[s], out.disabled[s] = _merge_set(
            defaults.enabled[s], defaults.disabled[s], custom.enabled[s], custom.disabled[s]
        )
    return out


def merge_plugins(defaults: Plugins, custom: Plugins | None) -> Plugins:
    """Upstream v1 ``mergePlugins`` on models (``custom=None`` keeps the defaults)."""
    if custom is None:
        return defaults.model_copy(deep=True)
    return merge_sets(PluginSets.from_model(defaults), PluginSets.from_model(custom)).to_model()


def merge_plugin_set(default: PluginSet, custom: PluginSet) -> PluginSet:
    """Upstream v1 ``mergePluginSet`` for one set."""
    enabled, disabled = _merge_set(
        [Entry(p.name, p.weight) for p in default.enabled],
        [p.name for p in default.disabled],
        [Entry(p.name, p.weight) for p in custom.enabled],
        [p.name for p in custom.disabled],
    )
    return PluginSet(
        enabled=[Plugin(name=e.name, weight=e.weight) for e in enabled], disabled=[Plugin(name=n) for n in disabled]
    )


@dataclass
class Expanded:
    """The plugins at each extension point (only points with plugins), with final weights."""

    plugins: dict[str, list[PluginRef]]
    errors: list[str]


def _where(entry: Entry, base: str) -> tuple[str, str]:
    """Error path for an entry and a note for default plugins, which the user did not write."""
    if entry.path:
        return entry.path, ""
    return join_path(base, MULTI_POINT), f"default plugin {entry.name!r}: "


def lookup_plugins(sets: PluginSets, registry: Registry, base: str) -> tuple[dict[str, PluginEntry], list[str]]:
    """Registry entries for every enabled plugin, and a ``path: reason`` per name that fails."""
    found: dict[str, PluginEntry] = {}
    errors: list[str] = []
    reported: set[str] = set()
    for s in (MULTI_POINT, *EXTENSION_POINTS):
        for e in sets.enabled[s]:
            if e.name in found or e.name in reported:
                continue
            path, note = _where(e, base)
            if e.name in INVALID_IN_V1:
                reported.add(e.name)
                errors.append(
                    f"{path}: {note}{e.name!r} was invalid in version {API_VERSION!r} (KubeSchedulerConfiguration is version {API_VERSION!r})"
                )
                continue
            try:
                found[e.name] = registry.get(e.name)
            except RegistryError as exc:
                reported.add(e.name)
                errors.append(f"{path if not e.path else join_path(path, 'name')}: {note}{exc}")
    return found, errors


#: The plugin sets whose entries take a weight (multiPoint passes it to score and placementScore).
WEIGHTED_SETS = ("score", "placementScore", MULTI_POINT)


def user_set_problems(plugins: Plugins | None, registry: Registry, base: str) -> list[str]:
    """What the user's own plugin sets get wrong that expansion would let pass: a name in a
    ``disabled`` list that no plugin has (a misspelling would leave the plugin enabled), and a
    weight where nothing reads it (a point other than score and placementScore, or a multiPoint
    plugin that scores nothing)."""
    if plugins is None:
        return []
    errors: list[str] = []
    for s in V1_PLUGIN_SETS:
        ps: PluginSet = getattr(plugins, s)
        for j, p in enumerate(ps.disabled):
            if p.name == "*" or p.name in registry or p.name in INVALID_IN_V1 or p.name in NOT_YET_IMPLEMENTED:
                continue
            errors.append(
                f"{join_path(base, s, 'disabled', j)}.name: {unknown_plugin_message(p.name, registry.names())}"
            )
        for j, p in enumerate(ps.enabled):
            if not p.weight:
                continue
            where = join_path(base, s, "enabled", j)
            if s not in WEIGHTED_SETS:
                errors.append(
                    f"{where}.weight: a weight is read only under score and placementScore (and multiPoint); "
                    f"remove it here"
                )
            elif s == MULTI_POINT and p.name in registry:
                points = set(registry.get(p.name).extension_points)
                if not points & {"score", "placementScore"}:
                    errors.append(
                        f"{where}.weight: plugin {p.name!r} scores neither nodes nor placements, so its weight "
                        "would be ignored; remove it"
                    )
    return errors


def expand_sets(
    sets: PluginSets, entries: dict[str, PluginEntry], base: str = "plugins", scheduler_name: str = ""
) -> Expanded:
    """Steps 2 and 3 of the module docstring on already merged sets.

    ``entries`` must hold a registry entry for every enabled name (see :func:`lookup_plugins`).
    """
    points_of = {name: set(entry.extension_points) for name, entry in entries.items()}
    result: dict[str, list[Entry]] = {}
    errors: list[str] = []

    for point in _BUILD_ORDER:
        kind = POINT_TYPES[point]
        seen: set[str] = set()
        chosen: list[Entry] = []
        for e in sets.enabled[point]:
            if point not in points_of[e.name]:
                errors.append(
                    f"{e.path or join_path(base, point)}: plugin {e.name!r} does not implement {kind} "
                    f"(it has no {EXTENSION_POINTS[point]}() method)"
                )
                continue
            if e.name in seen:
                errors.append(f"{e.path or join_path(base, point)}: plugin {e.name!r} already registered as {kind!r}")
                continue
            seen.add(e.name)
            chosen.append(e)
        result[point] = chosen

    multi = sets.enabled[MULTI_POINT]
    if multi and not errors:
        for point in _BUILD_ORDER:
            kind = POINT_TYPES[point]
            specific = result[point]
            specific_names = [e.name for e in specific]
            off = set(sets.disabled[point])
            if "*" in off:
                continue
            overrides: set[str] = set()
            from_multi: list[Entry] = []
            multi_names: set[str] = set()
            for e in multi:
                if point not in points_of[e.name] or e.name in off:
                    continue
                if e.name in specific_names:
                    # Enabled at this point too: the specific entry is the user's intent.
                    overrides.add(e.name)
                    continue
                if e.name in multi_names:
                    path, _ = _where(e, base)
                    errors.append(f"{path}: plugin {e.name!r} already registered as {kind!r}")
                    continue
                multi_names.add(e.name)
                from_multi.append(e)
            if errors:
                # Upstream stops at the first double registration; one report per mistake is enough.
                break
            first = [e for e in specific if e.name in overrides]
            rest = [e for e in specific if e.name not in overrides]
            result[point] = [*first, *from_multi, *rest]

    if errors:
        return Expanded({}, errors)

    label = f" for profile with scheduler name {scheduler_name!r}" if scheduler_name else ""
    if len(result["queueSort"]) != 1:
        errors.append(
            f"{join_path(base, 'queueSort')}: only one queue sort plugin required{label}, but got {len(result['queueSort'])}"
            + (f" ({', '.join(e.name for e in result['queueSort'])})" if result["queueSort"] else "")
        )
    if not result["bind"]:
        errors.append(f"{join_path(base, 'bind')}: at least one bind plugin is needed{label}")

    weights, weight_errors = score_weights([*sets.enabled["score"], *multi], points_of, base)
    errors.extend(weight_errors)
    placement_weights, weight_errors = score_weights(
        [*sets.enabled["placementScore"], *multi], points_of, base, "placementScore"
    )
    errors.extend(weight_errors)
    if errors:
        return Expanded({}, errors)
    weighted = {"score": weights, "placementScore": placement_weights}

    plugins = {
        point: [PluginRef(e.name, weighted[point][e.name] if point in weighted else 0) for e in result[point]]
        for point in EXTENSION_POINTS
        if result[point]
    }
    return Expanded(plugins, [])


def score_weights(
    entries: list[Entry], points_of: dict[str, set[str]], base: str = "plugins", point: str = "score"
) -> tuple[dict[str, int], list[str]]:
    """Upstream ``getScoreWeights``: the first weight seen per Score plugin (score set before
    multiPoint), 0/unset → 1, and the sum of ``weight × MaxNodeScore`` must fit an int64. The
    same for PlacementScore plugins with ``point="placementScore"``."""
    weights: dict[str, int] = {}
    total = 0
    for e in entries:
        if point not in points_of.get(e.name, ()) or e.name in weights:
            continue
        w = e.weight or 1
        weights[e.name] = w
        if w * MAX_NODE_SCORE > MAX_TOTAL_SCORE - total:
            kind = "Score" if point == "score" else "PlacementScore"
            return weights, [f"{e.path or base}: total score of {kind} plugins could overflow"]
        total += w * MAX_NODE_SCORE
    return weights, []


def expand_plugins(
    plugins: Plugins, registry: Registry, path: str = "plugins", scheduler_name: str = ""
) -> dict[str, list[PluginRef]]:
    """Expand ``plugins`` as given (no defaults merged) into the plugins per extension point.

    Raises :class:`ConfigError` listing every problem.
    """
    sets = PluginSets.from_model(plugins, path)
    entries, errors = lookup_plugins(sets, registry, path)
    if errors:
        raise ConfigError(errors)
    expanded = expand_sets(sets, entries, path, scheduler_name)
    if expanded.errors:
        raise ConfigError(expanded.errors)
    return expanded.plugins
