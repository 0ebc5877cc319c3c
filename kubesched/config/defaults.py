"""The default plugin set: upstream v1 ``getDefaultPlugins()``, restricted to what kubesched implements.

Upstream enables its defaults through ``multiPoint`` only, each plugin at every extension point
it implements, in this order. The order matters: it is the order plugins run at each point.
"""

from __future__ import annotations

from kubesched.config.models import Plugin, Plugins, PluginSet
from kubesched.runtime.registry import NOT_YET_IMPLEMENTED

#: Upstream's default ``multiPoint.enabled`` list, in upstream order, with upstream weights
#: (``None``: no weight given; a score plugin then counts with weight 1).
#: Entries whose name is in ``kubesched.runtime.registry.NOT_YET_IMPLEMENTED`` are coming later
#: and are left out of :func:`default_plugins` until that set no longer lists them; they stay
#: here so that each lands in its upstream place.
#: Upstream's v1 also lists EBSLimits, GCEPDLimits and AzureDiskLimits after VolumeRestrictions on
#: older releases; v1 validation now rejects them, so they are not carried here.
UPSTREAM_DEFAULT_MULTIPOINT: tuple[tuple[str, int | None], ...] = (
    ("SchedulingGates", None),
    ("PrioritySort", None),
    ("NodeUnschedulable", None),
    ("NodeName", None),
    ("TaintToleration", 3),
    ("NodeAffinity", 2),
    ("NodePorts", None),
    ("NodeResourcesFit", 1),
    ("VolumeRestrictions", None),  # not yet implemented
    ("NodeVolumeLimits", None),  # not yet implemented
    ("VolumeBinding", None),  # not yet implemented
    ("VolumeZone", None),  # not yet implemented
    ("PodTopologySpread", 2),  # not yet implemented
    ("InterPodAffinity", 2),  # not yet implemented
    # Upstream (1.34, where its feature gate is GA and on) inserts DynamicResources just before
    # DefaultPreemption: deallocating an idle claim in PostFilter comes before evicting pods.
    ("DynamicResources", None),
    ("DefaultPreemption", None),  # not yet implemented
    ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1),
    ("DefaultBinder", None),
)

#: Plugins upstream v1 refuses by name (removed from the v1 API).
INVALID_IN_V1 = frozenset({"AzureDiskLimits", "CinderLimits", "EBSLimits", "GCEPDLimits"})


def default_plugin_names() -> list[str]:
    """The default ``multiPoint`` plugins kubesched enables, in upstream order."""
    return [name for name, _ in UPSTREAM_DEFAULT_MULTIPOINT if name not in NOT_YET_IMPLEMENTED]


def default_plugins() -> Plugins:
    """A fresh default :class:`Plugins`: everything in ``multiPoint.enabled``, nothing elsewhere."""
    enabled = [
        Plugin(name=name, weight=weight)
        for name, weight in UPSTREAM_DEFAULT_MULTIPOINT
        if name not in NOT_YET_IMPLEMENTED
    ]
    return Plugins(multiPoint=PluginSet(enabled=enabled))
