"""The default plugin set and the plugin args defaulted by feature gate: upstream v1
``getDefaultPlugins()`` with ``applyFeatureGates()``, and the gated parts of ``defaults.go``, as
kube-scheduler 1.37 has them.

Upstream enables its defaults through ``multiPoint`` only, each plugin at every extension point
it implements, in this order. The order matters: it is the order plugins run at each point.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubesched.config.models import Plugin, Plugins, PluginSet
from kubesched.framework import names
from kubesched.framework.features import FeatureGates

#: Upstream's default ``multiPoint.enabled`` list in 1.37, in upstream order, with upstream
#: weights (``None``: no weight given; a score plugin then counts with weight 1), before the
#: feature gates add to it (:func:`upstream_default_multipoint`). DynamicResources (its gate GA
#: and locked on) comes just before DefaultPreemption: deallocating an idle claim in PostFilter
#: comes before evicting pods; its weight scores the prioritized list's choices.
#: Upstream's v1 also listed EBSLimits, GCEPDLimits and AzureDiskLimits after VolumeRestrictions
#: on older releases; v1 validation now rejects them, so they are not carried here.
UPSTREAM_DEFAULT_MULTIPOINT: tuple[tuple[str, int | None], ...] = (
    (names.SCHEDULING_GATES, None),
    (names.PRIORITY_SORT, None),
    (names.NODE_UNSCHEDULABLE, None),
    (names.NODE_NAME, None),
    (names.TAINT_TOLERATION, 3),
    (names.NODE_AFFINITY, 2),
    (names.NODE_PORTS, None),
    (names.NODE_RESOURCES_FIT, 1),
    (names.VOLUME_RESTRICTIONS, None),
    (names.NODE_VOLUME_LIMITS, None),
    (names.VOLUME_BINDING, None),
    (names.VOLUME_ZONE, None),
    (names.POD_TOPOLOGY_SPREAD, 2),
    (names.INTER_POD_AFFINITY, 2),
    (names.DYNAMIC_RESOURCES, 2),
    (names.DEFAULT_PREEMPTION, None),
    (names.NODE_RESOURCES_BALANCED_ALLOCATION, 1),
    (names.IMAGE_LOCALITY, 1),
    (names.DEFAULT_BINDER, None),
)

#: Plugins upstream v1 refuses by name (removed from the v1 API).
INVALID_IN_V1 = frozenset({"AzureDiskLimits", "CinderLimits", "EBSLimits", "GCEPDLimits"})


def upstream_default_multipoint(gates: FeatureGates | None = None) -> list[tuple[str, int | None]]:
    """Upstream's default ``multiPoint.enabled`` under ``gates`` (1.37's defaults when ``None``):
    :data:`UPSTREAM_DEFAULT_MULTIPOINT` with what ``applyFeatureGates`` adds.

    A gated plugin kubesched does not implement yet is listed all the same: a profile that gets
    it by default is refused, naming it, rather than run without it.
    """
    gates = gates if gates is not None else FeatureGates()
    plugins = list(UPSTREAM_DEFAULT_MULTIPOINT)
    if gates.enabled("NodeDeclaredFeatures"):
        plugins.append((names.NODE_DECLARED_FEATURES, None))
    if gates.enabled("InPlacePodVerticalScalingSchedulerPreemption"):
        # Right before NodeResourcesFit, so that a node refusing resize preemption is recorded
        # against DeferredPodScheduling first, for its queueing hint.
        at = [n for n, _ in plugins].index(names.NODE_RESOURCES_FIT)
        plugins.insert(at, (names.DEFERRED_POD_SCHEDULING, None))
    if gates.enabled("GenericWorkload"):
        plugins.append((names.GANG_SCHEDULING, None))
    if gates.enabled("TopologyAwareWorkloadScheduling"):
        plugins.append((names.TOPOLOGY_PLACEMENT_GENERATOR, None))
        plugins.append((names.POD_GROUP_PODS_COUNT, 1))
    return plugins


def default_plugin_names(gates: FeatureGates | None = None) -> list[str]:
    """The default ``multiPoint`` plugins, in upstream order."""
    return [name for name, _ in upstream_default_multipoint(gates)]


def default_plugins(gates: FeatureGates | None = None) -> Plugins:
    """A fresh default :class:`Plugins`: everything in ``multiPoint.enabled``, nothing elsewhere."""
    enabled = [Plugin(name=name, weight=weight) for name, weight in upstream_default_multipoint(gates)]
    return Plugins(multiPoint=PluginSet(enabled=enabled))


# --- plugin args defaulted by feature gate ----------------------------------------------------------

#: Upstream's ``DynamicResourcesBindingTimeoutDefault`` (10 minutes), as Go prints it.
DYNAMIC_RESOURCES_BINDING_TIMEOUT_DEFAULT = "10m0s"
#: Upstream's default VolumeBinding ``shape`` with StorageCapacityScoring: the emptier a node's
#: fitting volumes, the higher it scores.
VOLUME_BINDING_SHAPE_DEFAULT: tuple[Mapping[str, int], ...] = (
    {"utilization": 0, "score": 10},
    {"utilization": 100, "score": 0},
)

#: (plugin, field, gates that must all be on, default): args fields upstream's ``defaults.go``
#: sets only when their feature is on, and ``validation_pluginargs.go`` refuses when it is off.
GATED_ARG_DEFAULTS: tuple[tuple[str, str, tuple[str, ...], Any], ...] = (
    (
        names.DYNAMIC_RESOURCES,
        "bindingTimeout",
        ("DRADeviceBindingConditions", "DRAResourceClaimDeviceStatus"),
        DYNAMIC_RESOURCES_BINDING_TIMEOUT_DEFAULT,
    ),
    (names.VOLUME_BINDING, "shape", ("StorageCapacityScoring",), VOLUME_BINDING_SHAPE_DEFAULT),
)


def _given(args: Any, field: str) -> bool:
    return field in getattr(args, "model_fields_set", ()) and getattr(args, field, None) is not None


def with_gated_defaults(plugin: str, args: Any, gates: FeatureGates) -> Any:
    """``args`` with the fields upstream defaults for ``plugin`` under ``gates`` filled in, when
    not given (a new model of the same class; ``args`` itself is not changed)."""
    updates: dict[str, Any] = {}
    for name, field, needed, default in GATED_ARG_DEFAULTS:
        if name != plugin or not hasattr(args, field) or _given(args, field):
            continue
        if all(gates.enabled(g) for g in needed):
            updates[field] = [dict(p) for p in default] if isinstance(default, tuple) else default
    if not updates:
        return args
    given = args.model_dump(by_alias=True, exclude_unset=True)
    return type(args).model_validate({**given, **updates})
