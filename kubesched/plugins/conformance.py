"""Every in-tree plugin against the Protocol of each extension point it implements, for the type
checker: a plugin method that no longer takes what its point passes, or returns a shape the point
does not accept (:mod:`kubesched.framework.results`), fails ``mypy`` here. Nothing runs at import."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kubesched.framework.interface import (
        BindPlugin,
        FilterPlugin,
        PermitPlugin,
        PlacementFeasiblePlugin,
        PlacementGeneratePlugin,
        PlacementScorePlugin,
        PodGroupPostFilterPlugin,
        PostFilterPlugin,
        PreBindPlugin,
        PreEnqueuePlugin,
        PreFilterPlugin,
        PreScorePlugin,
        QueueSortPlugin,
        ReservePlugin,
        ScorePlugin,
    )
    from kubesched.plugins.default_binder import DefaultBinder
    from kubesched.plugins.dynamicresources.dynamic_resources import DynamicResources
    from kubesched.plugins.gangscheduling import GangScheduling
    from kubesched.plugins.image_locality import ImageLocality
    from kubesched.plugins.interpodaffinity.inter_pod_affinity import InterPodAffinity
    from kubesched.plugins.node_affinity import NodeAffinity
    from kubesched.plugins.node_declared_features import NodeDeclaredFeatures
    from kubesched.plugins.node_name import NodeName
    from kubesched.plugins.node_ports import NodePorts
    from kubesched.plugins.node_unschedulable import NodeUnschedulable
    from kubesched.plugins.noderesources.balanced_allocation import NodeResourcesBalancedAllocation
    from kubesched.plugins.noderesources.fit import NodeResourcesFit
    from kubesched.plugins.podgrouppodscount import PodGroupPodsCount
    from kubesched.plugins.podtopologyspread.pod_topology_spread import PodTopologySpread
    from kubesched.plugins.preemption.default_preemption import DefaultPreemption
    from kubesched.plugins.priority_sort import PrioritySort
    from kubesched.plugins.scheduling_gates import SchedulingGates
    from kubesched.plugins.taint_toleration import TaintToleration
    from kubesched.plugins.topologyaware import TopologyPlacementGenerator
    from kubesched.plugins.volume.node_volume_limits import NodeVolumeLimits
    from kubesched.plugins.volume.volume_binding import VolumeBinding
    from kubesched.plugins.volume.volume_restrictions import VolumeRestrictions
    from kubesched.plugins.volume.volume_zone import VolumeZone

    PRE_ENQUEUE: list[type[PreEnqueuePlugin]] = [DefaultPreemption, DynamicResources, GangScheduling, SchedulingGates]
    QUEUE_SORT: list[type[QueueSortPlugin]] = [PrioritySort]
    PRE_FILTER: list[type[PreFilterPlugin]] = [
        DynamicResources,
        InterPodAffinity,
        NodeAffinity,
        NodeDeclaredFeatures,
        NodePorts,
        NodeResourcesFit,
        NodeVolumeLimits,
        PodTopologySpread,
        VolumeBinding,
        VolumeRestrictions,
        VolumeZone,
    ]
    FILTER: list[type[FilterPlugin]] = [
        DynamicResources,
        InterPodAffinity,
        NodeAffinity,
        NodeDeclaredFeatures,
        NodeName,
        NodePorts,
        NodeResourcesFit,
        NodeUnschedulable,
        NodeVolumeLimits,
        PodTopologySpread,
        TaintToleration,
        VolumeBinding,
        VolumeRestrictions,
        VolumeZone,
    ]
    POST_FILTER: list[type[PostFilterPlugin]] = [DefaultPreemption, DynamicResources]
    PRE_SCORE: list[type[PreScorePlugin]] = [
        InterPodAffinity,
        NodeAffinity,
        NodeResourcesBalancedAllocation,
        NodeResourcesFit,
        PodTopologySpread,
        TaintToleration,
        VolumeBinding,
    ]
    SCORE: list[type[ScorePlugin]] = [
        DynamicResources,
        ImageLocality,
        InterPodAffinity,
        NodeAffinity,
        NodeResourcesBalancedAllocation,
        NodeResourcesFit,
        PodTopologySpread,
        TaintToleration,
        VolumeBinding,
    ]
    RESERVE: list[type[ReservePlugin]] = [DynamicResources, VolumeBinding]
    PERMIT: list[type[PermitPlugin]] = [GangScheduling]
    PRE_BIND: list[type[PreBindPlugin]] = [DynamicResources, VolumeBinding]
    BIND: list[type[BindPlugin]] = [DefaultBinder]
    PLACEMENT_GENERATE: list[type[PlacementGeneratePlugin]] = [TopologyPlacementGenerator]
    PLACEMENT_FEASIBLE: list[type[PlacementFeasiblePlugin]] = [GangScheduling]
    PLACEMENT_SCORE: list[type[PlacementScorePlugin]] = [NodeResourcesFit, PodGroupPodsCount]
    POD_GROUP_POST_FILTER: list[type[PodGroupPostFilterPlugin]] = [DefaultPreemption]
