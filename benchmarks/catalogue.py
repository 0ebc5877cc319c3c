"""The workloads: upstream scheduler_perf's cases as data, with their node and pod templates and
upstream's throughput floors.

A workload says what to create (nodes, init pods, measured pods, a churn) and how to judge it
(its floor); it runs nothing. The backends (:mod:`benchmarks.backends`) run it, :mod:`benchmarks.measure`
turns a run into a :class:`~benchmarks.measure.Result`.

The node and pod templates follow upstream's scheduler_perf defaults (node: 4 CPU, 32Gi, 110
pods; pod: 100m CPU, 500Mi memory).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks import dra, podgroups
from kubesched.bench.measure import Floor

#: This folder: the configurations a workload names live beside the catalogue.
HERE = Path(__file__).resolve().parent


# Thresholds of kubernetes/kubernetes test/integration/scheduler_perf, the newest stored versions
# of misc/, affinity/ and topology_spreading/performance-config.yaml (master after v1.34: the
# configs already name v1.35's NodeDeclaredFeatures gate). Upstream sets a threshold only on its
# large `performance` cases; a workload of ours with the same test and node count but fewer
# measured pods carries that case's floor, named, so the table can say the sizes differ.
# PreemptionBasic has no threshold upstream (570 belongs to PreemptionAsync: default pods measured
# while a high-priority pod preempts every 200 ms).
SCHEDULING_BASIC_FLOOR = Floor(680, "SchedulingBasic/5000Nodes_10000Pods")
ANTI_AFFINITY_FLOOR = Floor(60, "SchedulingPodAntiAffinity/5000Nodes_2000Pods")
AFFINITY_FLOOR = Floor(35, "SchedulingPodAffinity/5000Nodes_5000Pods")
NODE_AFFINITY_FLOOR = Floor(220, "SchedulingNodeAffinity/5000Nodes_10000Pods")
SPREADING_FLOOR = Floor(460, "TopologySpreading/5000Nodes_5000Pods")
PREEMPTION_ASYNC_FLOOR = Floor(570, "PreemptionAsync/5000Nodes")


@dataclass
class Workload:
    """One benchmark: ``nodes`` nodes, ``init_pods`` placed first (not measured), then
    ``measure_pods`` created at once and measured until each is decided (or, with
    ``wait_bound``, bound). Templates left None are upstream's defaults."""

    name: str
    nodes: int
    init_pods: int
    measure_pods: int
    make_node: Callable[[int], dict[str, Any]] | None = None
    make_pod: Callable[[str, int], dict[str, Any]] | None = None
    config: str | None = None
    description: str = ""
    #: A scenario (nodes + pending pods) instead of templates; its pods are all measured.
    scenario: Callable[[], Any] | None = None
    #: Why the workload cannot run here (e.g. trace data absent), or None.
    unavailable: Callable[[], str | None] | None = None
    #: Template of the init pods when it differs from the measured pods'.
    make_init_pod: Callable[[str, int], dict[str, Any]] | None = None
    #: Measure until every measured pod is bound (preemption: pods need a second attempt).
    wait_bound: bool = False
    #: Upstream's throughput floor for this workload, or None where upstream sets none.
    floor: Floor | None = None
    #: Takes minutes: run only when named (-w), with --all or by --scaling.
    slow: bool = False
    #: Upstream's OpportunisticBatching feature gate (on by default in 1.37, as upstream's
    #: scheduler_perf runs every case).
    opportunistic_batching: bool = True
    #: Where pods land depends on wall-clock timing (preemption: when a preemptor's backoff
    #: ends against when its victims are gone), so two runs may differ on any path.
    timing_dependent: bool = False
    #: Upstream's ``churn`` op in ``create`` mode: while the measured pods are scheduled, one pod
    #: of this template every ``churn_interval`` seconds (not measured; they may preempt).
    make_churn_pod: Callable[[str, int], dict[str, Any]] | None = None
    churn_interval: float = 0.2
    #: Cluster objects created before the init pods (DeviceClasses, ResourceSlices, claim
    #: templates, DeviceTaintRules: :mod:`benchmarks.dra`), with the namespaces ``init`` and
    #: ``test`` and the simulator's controllers running (claims made from templates).
    objects: Callable[[], list[dict[str, Any]]] | None = None
    #: Upstream's ``featureGates`` of the case: the scheduler runs with them (and its default
    #: profile is the one they give), as does the API server of the HTTP backend.
    feature_gates: dict[str, bool] = field(default_factory=dict)
    #: The namespace and PodGroups the measured pods belong to (:mod:`benchmarks.podgroups`),
    #: created before the init pods, no controllers running; ``groups`` of them are measured.
    pod_groups: Callable[[], list[dict[str, Any]]] | None = None
    groups: int = 0


def default_node(i: int) -> dict[str, Any]:
    name = f"node-{i}"
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "spec": {},
        "status": {
            "capacity": {"pods": "110", "cpu": "4", "memory": "32Gi"},
            "allocatable": {"pods": "110", "cpu": "4", "memory": "32Gi"},
        },
    }


def default_pod(prefix: str, i: int) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"{prefix}-{i}", "namespace": "default"},
        "spec": {
            "containers": [
                {
                    "name": "pause",
                    "image": "registry.k8s.io/pause:3.10",
                    "ports": [{"containerPort": 80}],
                    "resources": {
                        "requests": {"cpu": "100m", "memory": "500Mi"},
                        "limits": {"cpu": "100m", "memory": "500Mi"},
                    },
                }
            ]
        },
    }


def zoned_node(zones: list[str]) -> Callable[[int], dict[str, Any]]:
    """node-default with ``topology.kubernetes.io/zone`` cycling through ``zones`` (upstream's
    labelNodePrepareStrategy)."""

    def make(i: int) -> dict[str, Any]:
        node = default_node(i)
        node["metadata"]["labels"]["topology.kubernetes.io/zone"] = zones[i % len(zones)]
        return node

    return make


def _pod(
    namespace: str = "default", labels: dict[str, str] | None = None, cpu: str = "100m", **spec: Any
) -> Callable[[str, int], dict[str, Any]]:
    def make(prefix: str, i: int) -> dict[str, Any]:
        pod = default_pod(prefix, i)
        pod["metadata"]["namespace"] = namespace
        if labels:
            pod["metadata"]["labels"] = dict(labels)
        res = pod["spec"]["containers"][0]["resources"]
        res["requests"]["cpu"] = res["limits"]["cpu"] = cpu
        pod["spec"].update(spec)
        return pod

    return make


def _anti_affinity(namespace: str) -> Callable[[str, int], dict[str, Any]]:
    term = {
        "labelSelector": {"matchLabels": {"color": "green"}},
        "topologyKey": "kubernetes.io/hostname",
        "namespaces": ["sched-0", "sched-1"],
    }
    return _pod(
        namespace,
        {"color": "green"},
        affinity={"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}},
    )


def _affinity(namespace: str) -> Callable[[str, int], dict[str, Any]]:
    term = {
        "labelSelector": {"matchLabels": {"color": "blue"}},
        "topologyKey": "topology.kubernetes.io/zone",
        "namespaces": ["sched-0", "sched-1"],
    }
    return _pod(
        namespace,
        {"color": "blue"},
        affinity={"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}},
    )


NODE_AFFINITY_POD = _pod(
    affinity={
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["zone1", "zone2"]}
                        ]
                    }
                ]
            }
        }
    }
)
SPREADING_POD = _pod(
    labels={"color": "blue"},
    topologySpreadConstraints=[
        {
            "maxSkew": 5,
            "topologyKey": "topology.kubernetes.io/zone",
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"color": "blue"}},
        }
    ],
)
LOW_PRIORITY_POD = _pod(cpu="900m", terminationGracePeriodSeconds=0)
HIGH_PRIORITY_POD = _pod(cpu="3000m", priority=10)
SATURATING_POD = _pod(cpu="3")


def _openb(pods: str) -> Callable[[], Any]:
    def load() -> Any:
        from kubesched.sim.scenario.openb import load_openb

        return load_openb(pods=pods)

    return load


def _openb_missing() -> str | None:
    from kubesched.sim.scenario.openb import TRACE_ABSENT, trace_dir

    return None if trace_dir() is not None else TRACE_ABSENT


def _pod_group_workload(test: str, case: str, nodes: int, groups: int, per_group: int, **kw: Any) -> Workload:
    """Upstream's GangScheduling (gangs of ``minCount: per_group``) or BasicScheduling case
    ``case``: ``groups`` groups of ``per_group`` measured pods on ``nodes`` default nodes."""
    gang = test == "GangScheduling"
    kind = "gangs" if gang else "basic groups"
    kw.setdefault("description", f"upstream {test}/{case}: {groups} {kind} of {per_group} pods (GenericWorkload)")
    return Workload(
        f"{test}/{case}",
        nodes,
        0,
        groups * per_group,
        make_pod=podgroups.member_pod(gang, per_group),
        feature_gates=dict(podgroups.GATES),
        pod_groups=podgroups.pod_group_objects(gang, groups, per_group),
        groups=groups,
        **kw,
    )


def _cpg_workload(test: str, case: str, nodes: int, cpgs: int, groups: int, per_group: int, **kw: Any) -> Workload:
    """Upstream's ``cpg/`` CPGGangScheduling (composites of ``minGroupCount: groups // cpgs``
    over gangs of ``minCount: per_group``) or CPGBasicScheduling case ``case``: ``cpgs``
    CompositePodGroups over ``groups`` PodGroups of ``per_group`` measured pods on ``nodes``
    default nodes. ``groups`` counts the PodGroups (each hierarchy's cycle decides all of them)."""
    gang = test == "CPGGangScheduling"
    per_cpg = groups // cpgs
    kind = "gang" if gang else "basic"
    kw.setdefault(
        "description",
        f"upstream {test}/{case}: {cpgs} {kind} CompositePodGroups of {per_cpg} groups of {per_group} pods",
    )
    return Workload(
        f"{test}/{case}",
        nodes,
        0,
        groups * per_group,
        make_pod=podgroups.composite_member_pod(gang, per_group),
        feature_gates=dict(podgroups.CPG_GATES),
        pod_groups=podgroups.composite_objects(gang, cpgs, groups, per_cpg, per_cpg, per_group),
        groups=groups,
        **kw,
    )


#: Upstream's cpg/ shapes: (case, nodes, CompositePodGroups, PodGroups, pods per group); two
#: PodGroups per composite throughout, and gangs ask for all their members.
CPG_SHAPES: list[tuple[str, int, int, int, int]] = [
    ("10Nodes_3CPGs_6Groups_18Pods", 10, 3, 6, 3),
    ("100Nodes_10CPGs_20Groups_60Pods", 100, 10, 20, 3),
    ("5000Nodes_500CPGs_1000Groups_3000Pods", 5000, 500, 1000, 3),
    ("5000Nodes_1000CPGs_2000Groups_6000Pods", 5000, 1000, 2000, 3),
    ("5000Nodes_1500CPGs_3000Groups_9000Pods", 5000, 1500, 3000, 3),
    ("5000Nodes_3CPGs_6Groups_3000Pods", 5000, 3, 6, 500),
    ("5000Nodes_3CPGs_6Groups_6000Pods", 5000, 3, 6, 1000),
    ("5000Nodes_3CPGs_6Groups_9000Pods", 5000, 3, 6, 1500),
]


WORKLOADS: dict[str, Workload] = {
    w.name: w
    for w in [
        Workload("SchedulingBasic/500Nodes", 500, 500, 1000, description="upstream SchedulingBasic, 500 nodes"),
        Workload(
            "SchedulingBasic/5000Nodes",
            5000,
            1000,
            1000,
            floor=SCHEDULING_BASIC_FLOOR,
            description="upstream SchedulingBasic, 5000 nodes",
        ),
        Workload(
            "SchedulingBasic/5000Nodes_10000Pods",
            5000,
            1000,
            10000,
            floor=SCHEDULING_BASIC_FLOOR,
            description="upstream SchedulingBasic, 5000 nodes, 10000 measured pods",
        ),
        Workload(
            "SchedulingBasic/15000Nodes_50000Pods",
            15000,
            5000,
            50000,
            slow=True,
            description="SchedulingBasic at 15000 nodes (no upstream case): init and measured as 5000Nodes_50000Pods",
        ),
        Workload(
            "SchedulingPodAntiAffinity/5000Nodes",
            5000,
            1000,
            1000,
            make_init_pod=_anti_affinity("sched-0"),
            make_pod=_anti_affinity("sched-1"),
            floor=ANTI_AFFINITY_FLOOR,
            description="upstream SchedulingPodAntiAffinity: required anti-affinity on hostname",
        ),
        Workload(
            "SchedulingPodAffinity/5000Nodes",
            5000,
            5000,
            1000,
            make_node=zoned_node(["zone1"]),
            make_init_pod=_affinity("sched-0"),
            make_pod=_affinity("sched-1"),
            floor=AFFINITY_FLOOR,
            description="upstream SchedulingPodAffinity: required affinity on zone",
        ),
        Workload(
            "SchedulingNodeAffinity/5000Nodes",
            5000,
            5000,
            1000,
            make_node=zoned_node(["zone1"]),
            make_pod=NODE_AFFINITY_POD,
            floor=NODE_AFFINITY_FLOOR,
            description="upstream SchedulingNodeAffinity",
        ),
        Workload(
            "TopologySpreading/5000Nodes",
            5000,
            5000,
            2000,
            make_node=zoned_node(["moon-1", "moon-2", "moon-3"]),
            make_init_pod=default_pod,
            make_pod=SPREADING_POD,
            floor=SPREADING_FLOOR,
            description="upstream TopologySpreading: maxSkew 5 over three zones, DoNotSchedule",
        ),
        Workload(
            "PreemptionBasic/500Nodes",
            500,
            2000,
            500,
            make_init_pod=LOW_PRIORITY_POD,
            make_pod=HIGH_PRIORITY_POD,
            wait_bound=True,
            timing_dependent=True,
            description="upstream PreemptionBasic: every measured pod must preempt",
        ),
        Workload(
            "PreemptionAsync/5000Nodes",
            5000,
            20000,
            5000,
            make_init_pod=LOW_PRIORITY_POD,
            make_churn_pod=HIGH_PRIORITY_POD,
            churn_interval=0.2,
            wait_bound=True,
            timing_dependent=True,
            floor=PREEMPTION_ASYNC_FLOOR,
            description="upstream PreemptionAsync: default pods measured while a high-priority pod that "
            "must preempt arrives every 200 ms (async preemption, as upstream's default)",
        ),
        Workload(
            "Batching/ResourceSaturation_5000Nodes",
            5000,
            0,
            5000,
            make_pod=SATURATING_POD,
            config=str(HERE / "no-topology-defaults.yaml"),
            description="upstream batching/ResourceSaturation: 3-CPU pods on 4-CPU nodes (one per node), "
            "no default spreading (which makes pods unsignable)",
        ),
        Workload(
            "PodLevelResources/5000Nodes",
            5000,
            1000,
            1000,
            make_pod=dra.pod_level_resources_pod,
            floor=SCHEDULING_BASIC_FLOOR,
            description="SchedulingBasic with its requests at pod level (spec.resources, PodLevelResources; "
            "no upstream case: SchedulingBasic's floor)",
        ),
        Workload(
            "DRA/ExtendedResource_100Nodes",
            100,
            1000,
            1000,
            make_node=dra.dra_node,
            make_init_pod=dra.extended_resource_pod("init"),
            make_pod=dra.extended_resource_pod("test"),
            objects=dra.extended_resource_objects(100, 10, 1000),
            description="upstream dra/extendedresource SchedulingWithExtendedResource/2000pods_100nodes: "
            "1000 classes backing example.com/gpu-<i>, 10 devices a node; the init pods take every device",
        ),
        Workload(
            "DRA/DeviceTaints_100Nodes",
            100,
            500,
            500,
            make_node=dra.dra_node,
            make_init_pod=dra.claim_template_pod("init"),
            make_pod=dra.claim_template_pod("test"),
            objects=dra.device_taints_objects(100, 10),
            description="upstream dra/devicetaints SchedulingWithResourceClaimTemplateToleration at our size "
            "(upstream runs 2 nodes, 10 pods): a DeviceTaintRule taints every device, claims tolerate it",
        ),
        Workload(
            "DRA/PartitionableDevices_100Nodes",
            100,
            200,
            200,
            make_node=dra.dra_node,
            make_init_pod=dra.claim_template_pod("init"),
            make_pod=dra.claim_template_pod("test"),
            objects=dra.partitionable_objects(200),
            description="upstream dra/partitionabledevices (2000 slices, 2000 pods) at 200: each pool's "
            "preallocated device taken by an init pod, two devices of one pool per measured pod",
        ),
        Workload(
            "DRA/ConsumableCapacity_100Nodes",
            100,
            0,
            500,
            make_node=dra.dra_node,
            make_pod=dra.claim_template_pod("test"),
            objects=dra.consumable_capacity_objects(100),
            description="upstream dra/consumablecapacity (2000 slices, 2000 pods) at 100 slices, 500 pods: "
            "shareable devices of 80Gi, each claim asking 10Gi twice",
        ),
        Workload(
            "DRA/PrioritizedList_100Nodes",
            100,
            0,
            1000,
            make_node=dra.dra_node,
            make_pod=dra.claim_template_pod("test"),
            objects=dra.prioritized_list_objects(100, 10),
            description="upstream dra/prioritizedlist at our size (upstream runs 2 nodes, 10 pods): "
            "firstAvailable whose first class matches no device",
        ),
        _pod_group_workload("GangScheduling", "10Nodes_3Gangs", 10, 3, 3),
        _pod_group_workload("GangScheduling", "100Nodes_10Gangs", 100, 10, 3),
        _pod_group_workload("GangScheduling", "5000Nodes_1000Gangs_3000Pods", 5000, 1000, 3),
        # Minutes: each member's arrival runs GangScheduling's PreEnqueue again for every
        # member waiting, and that PreEnqueue counts the members the long way.
        _pod_group_workload("GangScheduling", "5000Nodes_3Gangs_3000Pods_1000PerGroup", 5000, 3, 1000, slow=True),
        _pod_group_workload(
            "GangScheduling",
            "2000Nodes_500Gangs_1500Pods",
            2000,
            500,
            3,
            description="GangScheduling at 2000 nodes (no upstream case), meant for --backend http: "
            "500 gangs of 3 pods",
        ),
        _pod_group_workload("BasicScheduling", "10Nodes_3Groups", 10, 3, 3),
        _pod_group_workload("BasicScheduling", "100Nodes_10Groups", 100, 10, 3),
        _pod_group_workload("BasicScheduling", "5000Nodes_1000Groups_3000Pods", 5000, 1000, 3),
        _pod_group_workload("BasicScheduling", "5000Nodes_3Groups_3000Pods_1000PerGroup", 5000, 3, 1000),
        *(_cpg_workload("CPGBasicScheduling", *shape) for shape in CPG_SHAPES),
        # Hundreds of members per gang: as GangScheduling's 1000PerGroup case, each arrival runs
        # the waiting members' PreEnqueue again (over the whole hierarchy).
        *(_cpg_workload("CPGGangScheduling", *shape, slow=shape[4] >= 500) for shape in CPG_SHAPES),
        Workload(
            "OpenbGPU/default",
            1523,
            0,
            8152,
            scenario=_openb("default"),
            unavailable=_openb_missing,
            description="Alibaba GPU trace: 1523 real nodes, 8152 real pods in arrival order (GPU sharing as gpu-milli)",
        ),
        Workload(
            "OpenbGPU/gpuspec33",
            1523,
            0,
            8152,
            scenario=_openb("gpuspec33"),
            unavailable=_openb_missing,
            description="as OpenbGPU/default, a third of GPU pods constrained to GPU models (node affinity)",
        ),
    ]
}


#: SchedulingBasic at growing cluster sizes, for --scaling.
SCALING = ["SchedulingBasic/500Nodes", "SchedulingBasic/5000Nodes_10000Pods", "SchedulingBasic/15000Nodes_50000Pods"]


def default_names(everything: bool = False) -> list[str]:
    """The workloads a run without -w runs: all of them but the slow ones (all with ``everything``)."""
    return [w.name for w in WORKLOADS.values() if everything or not w.slow]
