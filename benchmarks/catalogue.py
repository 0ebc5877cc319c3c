"""The workloads of ``python -m benchmarks.run``: what each is and how it is judged; none runs
anything (the backends, :mod:`benchmarks.backends`, do; :mod:`benchmarks.measure` turns a run
into a :class:`~benchmarks.measure.Result`).

Where a workload is defined: every workload is a size of a test case ``kubesched bench`` ships
(``kubesched/bench/workloads/*.yaml``, upstream scheduler_perf's YAML shape; the cases of our own
among them, each said so, the trace replays of ``traces.yaml`` too), run from that case's ops by
``kubesched bench``'s runner; the catalogue takes its counts, feature gates, pod groups, upstream's
floor and whether it can run here (a trace absent) from it, read by :mod:`benchmarks.shipped`
(``yaml_source`` names the file): to change one, change the YAML. The catalogue adds how
benchmarks.run runs it (a configuration of its own, a borrowed floor, placements that depend on
the wall clock).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks import shipped
from benchmarks.shipped import default_node, default_pod
from kubesched.bench.measure import Floor

__all__ = ["WORKLOADS", "Workload", "default_names", "default_node", "default_pod"]

#: This folder: the configurations a workload names live beside the catalogue.
HERE = Path(__file__).resolve().parent


#: Upstream's floor of SchedulingBasic (misc.yaml's 5000Nodes_10000Pods threshold), which
#: PodLevelResources (SchedulingBasic with pod-level requests, no upstream case) carries.
def scheduling_basic_floor() -> Floor | None:
    """SchedulingBasic/5000Nodes_10000Pods's floor (upstream's threshold), also borrowed by
    workloads with no upstream case of their own."""
    return shipped.floor("SchedulingBasic/5000Nodes_10000Pods")


@dataclass
class Workload:
    """One benchmark: ``nodes`` nodes, ``init_pods`` placed first (not measured), then
    ``measure_pods`` measured until each is decided, as its shipped case's ops make them. Made
    by :func:`from_yaml`."""

    name: str
    config: str | None = None
    description: str = ""
    #: Why the workload cannot run here (e.g. trace data absent), or None.
    unavailable: Callable[[], str | None] | None = None
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
    #: Upstream's ``featureGates`` of the case: the scheduler runs with them (and its default
    #: profile is the one they give).
    feature_gates: dict[str, bool] = field(default_factory=dict)
    #: The PodGroups the measured pods belong to (the case's createPodGroups ops make them).
    groups: int = 0
    #: The shipped workload file this workload is read from (``misc.yaml``).
    yaml_source: str = ""

    # The counts are the case's, read when asked: a trace replay's are its trace's rows, which
    # depend on the trace found then.
    @property
    def nodes(self) -> int:
        return shipped.yaml_workload(self.name).nodes

    @property
    def init_pods(self) -> int:
        return shipped.yaml_workload(self.name).init_pods

    @property
    def measure_pods(self) -> int:
        return shipped.yaml_workload(self.name).measured_pods


#: How benchmarks.run runs the sizes of a case, where not as the others: where preemptors land
#: depends on the wall clock.
RUN_AS: dict[str, dict[str, Any]] = {
    "PreemptionBasic": {"timing_dependent": True},
    "PreemptionAsync": {"timing_dependent": True},
}


def from_yaml(name: str, description: str = "", **run: Any) -> Workload:
    """Workload ``name`` as kubesched bench ships it (:func:`benchmarks.shipped.workload_fields`),
    run as :data:`RUN_AS` says for its case; ``run`` says what else benchmarks.run needs to know
    (``slow``, ``config``, a ``floor`` borrowed)."""
    fields = {**shipped.workload_fields(name), **RUN_AS.get(name.split("/", 1)[0], {}), **run}
    return Workload(name, description=description, unavailable=functools.partial(shipped.unavailable, name), **fields)


def _pod_groups(name: str, description: str = "", **run: Any) -> Workload:
    """A pod-group workload of podgroups.yaml, described by its counts unless ``description``."""
    w = from_yaml(name, description, **run)
    test = name.split("/", 1)[0]
    kind = "basic groups" if "Basic" in test else "gangs"
    parents = " under CompositePodGroups" if test.startswith("CPG") else ""
    if test == "TopologyAwareScheduling":
        parents = ", each in one rack (nodes in racks of 100)"
    w.description = w.description or (
        f"upstream {name}: {w.groups} {kind} of {w.measure_pods // max(w.groups, 1)} pods{parents}"
    )
    return w


#: Descriptions other than the counts: a size of an upstream case that upstream does not run.
NOTES = {
    "GangScheduling/2000Nodes_500Gangs_1500Pods": "GangScheduling at 2000 nodes (no upstream case), meant for "
    "--backend http: 500 gangs of 3 pods",
    "GangScheduling/5000Nodes_750Gangs_3000Pods": "GangScheduling in TopologyAwareScheduling's shape (no upstream "
    "case): 750 gangs of 4 pods, no topology constraint, to price the one",
}


#: The pod-group workloads (podgroups.yaml), and whether each is slow: each member's arrival
#: runs GangScheduling's PreEnqueue again for every member waiting, and with hundreds of members
#: a gang (or a hierarchy) that takes minutes.
POD_GROUP_WORKLOADS: dict[str, bool] = {
    "GangScheduling/10Nodes_3Gangs": False,
    "GangScheduling/100Nodes_10Gangs": False,
    "GangScheduling/5000Nodes_1000Gangs_3000Pods": False,
    "GangScheduling/5000Nodes_3Gangs_3000Pods_1000PerGroup": True,
    "GangScheduling/2000Nodes_500Gangs_1500Pods": False,
    "GangScheduling/5000Nodes_750Gangs_3000Pods": False,
    "TopologyAwareScheduling/10Nodes_3Gangs": False,
    "TopologyAwareScheduling/100Nodes_10Gangs": False,
    "TopologyAwareScheduling/5000Nodes_750Gangs_3000Pods": False,
    "TopologyAwareScheduling/5000Nodes_3Gangs_3000Pods_1000PerGroup": True,
    "BasicScheduling/10Nodes_3Groups": False,
    "BasicScheduling/100Nodes_10Groups": False,
    "BasicScheduling/5000Nodes_1000Groups_3000Pods": False,
    "BasicScheduling/5000Nodes_3Groups_3000Pods_1000PerGroup": False,
    **{
        f"{test}/{case}": test == "CPGGangScheduling" and per_group >= 500
        for test in ("CPGBasicScheduling", "CPGGangScheduling")
        for case, per_group in (
            ("10Nodes_3CPGs_6Groups_18Pods", 3),
            ("100Nodes_10CPGs_20Groups_60Pods", 3),
            ("5000Nodes_500CPGs_1000Groups_3000Pods", 3),
            ("5000Nodes_1000CPGs_2000Groups_6000Pods", 3),
            ("5000Nodes_1500CPGs_3000Groups_9000Pods", 3),
            ("5000Nodes_3CPGs_6Groups_3000Pods", 500),
            ("5000Nodes_3CPGs_6Groups_6000Pods", 1000),
            ("5000Nodes_3CPGs_6Groups_9000Pods", 1500),
        )
    },
}


class Catalogue(Mapping[str, Workload]):
    """Workloads by name, each made the first time it is asked for (then kept): a run reads the
    shipped file and the templates of the workloads it runs, not every one's (which would be CPU
    a paired run counts against the measured pods)."""

    def __init__(self, makers: Mapping[str, Callable[[], Workload]]) -> None:
        self._makers = dict(makers)
        self._made: dict[str, Workload] = {}

    def __getitem__(self, name: str) -> Workload:
        w = self._made.get(name)
        if w is None:
            w = self._made[name] = self._makers[name]()
            if w.name != name:
                raise AssertionError(f"the catalogue's entry {name!r} made workload {w.name!r}")
        return w

    def __iter__(self) -> Iterator[str]:
        return iter(self._makers)

    def __len__(self) -> int:
        return len(self._makers)


#: How to make each workload, by name: made when first asked for (:class:`Catalogue`), so a
#: run reads the shipped file and templates of the workloads it runs and no others.
_MAKERS: dict[str, Callable[[], Workload]] = {
    "SchedulingBasic/500Nodes": lambda: from_yaml("SchedulingBasic/500Nodes", "upstream SchedulingBasic, 500 nodes"),
    "SchedulingBasic/5000Nodes": lambda: from_yaml("SchedulingBasic/5000Nodes", "upstream SchedulingBasic, 5000 nodes"),
    "SchedulingBasic/5000Nodes_10000Pods": lambda: from_yaml(
        "SchedulingBasic/5000Nodes_10000Pods", "upstream SchedulingBasic, 5000 nodes, 10000 measured pods"
    ),
    "SchedulingBasic/15000Nodes_50000Pods": lambda: from_yaml(
        "SchedulingBasic/15000Nodes_50000Pods",
        "SchedulingBasic at 15000 nodes (no upstream case): init and measured as 5000Nodes_50000Pods",
        slow=True,
    ),
    "SchedulingPodAntiAffinity/5000Nodes": lambda: from_yaml(
        "SchedulingPodAntiAffinity/5000Nodes",
        "upstream SchedulingPodAntiAffinity: required anti-affinity on hostname",
    ),
    "SchedulingPodAffinity/5000Nodes": lambda: from_yaml(
        "SchedulingPodAffinity/5000Nodes", "upstream SchedulingPodAffinity: required affinity on zone"
    ),
    "SchedulingNodeAffinity/5000Nodes": lambda: from_yaml(
        "SchedulingNodeAffinity/5000Nodes", "upstream SchedulingNodeAffinity"
    ),
    "TopologySpreading/5000Nodes": lambda: from_yaml(
        "TopologySpreading/5000Nodes", "upstream TopologySpreading: maxSkew 5 over three zones, DoNotSchedule"
    ),
    "PreemptionBasic/500Nodes": lambda: from_yaml(
        "PreemptionBasic/500Nodes",
        "upstream PreemptionBasic: every measured pod must preempt",
    ),
    "PreemptionAsync/5000Nodes": lambda: from_yaml(
        "PreemptionAsync/5000Nodes",
        "upstream PreemptionAsync: default pods measured while a high-priority pod that "
        "must preempt arrives every 200 ms (async preemption, as upstream's default)",
    ),
    # Cases of our own in misc.yaml: the batching case runs under a configuration of its own
    # (no default spreading), which a shipped case cannot name; PodLevelResources, which has no
    # upstream case, is judged by SchedulingBasic's floor.
    "Batching/ResourceSaturation_5000Nodes": lambda: from_yaml(
        "Batching/ResourceSaturation_5000Nodes",
        "upstream batching/ResourceSaturation: 3-CPU pods on 4-CPU nodes (one per node), "
        "no default spreading (which makes pods unsignable)",
        config=str(HERE / "no-topology-defaults.yaml"),
    ),
    "PodLevelResources/5000Nodes": lambda: from_yaml(
        "PodLevelResources/5000Nodes",
        "SchedulingBasic with its requests at pod level (spec.resources, PodLevelResources; "
        "no upstream case: SchedulingBasic's floor)",
        floor=scheduling_basic_floor(),
    ),
    # DRA at 100 nodes (dra.yaml): upstream's cases at a size of ours, and (Partitionable,
    # ConsumableCapacity, FirstAvailable) upstream's steady-state clusters with their pods made
    # at once, which the HTTP backend builds too.
    **{
        name: functools.partial(from_yaml, name, description)
        for name, description in {
            "SchedulingWithExtendedResource/2000pods_100nodes": "upstream dra/extendedresource: 1000 classes "
            "backing example.com/gpu-<i>, 10 devices a node; the init pods take every device",
            "SchedulingWithResourceClaimTemplateToleration/1000pods_100nodes": "upstream dra/devicetaints at "
            "our size (upstream runs 2 nodes, 10 pods): a DeviceTaintRule taints every device, claims tolerate it",
            "SchedulingWithResourceClaimTemplatePartitionable/400pods_100nodes": "upstream "
            "dra/partitionabledevices' cluster at 200 pools, pods at once: each pool's preallocate device "
            "taken by an init pod, two devices of one pool per measured pod",
            "SchedulingWithResourceClaimTemplateConsumableCapacity/500pods_100nodes": "upstream "
            "dra/consumablecapacity's cluster at 500 pools, pods at once: a shareable 80Gi device a pool, "
            "each claim asking 40Gi twice",
            "SchedulingWithResourceClaimTemplateFirstAvailable/1000pods_100nodes": "upstream "
            "dra/prioritizedlist's cluster at our size, pods at once: firstAvailable whose first class "
            "matches no device",
        }.items()
    },
    **{
        name: functools.partial(_pod_groups, name, NOTES.get(name, ""), slow=slow)
        for name, slow in POD_GROUP_WORKLOADS.items()
    },
    # The openb trace (traces.yaml): where it is absent, skipped saying so.
    "OpenbGPU/default": lambda: from_yaml(
        "OpenbGPU/default",
        "Alibaba GPU trace: 1523 real nodes, 8152 real pods in arrival order (GPU sharing as gpu-milli)",
    ),
    "OpenbGPU/gpuspec33": lambda: from_yaml(
        "OpenbGPU/gpuspec33",
        "as OpenbGPU/default, a third of GPU pods constrained to GPU models (node affinity)",
    ),
}
#: Every workload by name (each made on first use).
WORKLOADS: Mapping[str, Workload] = Catalogue(_MAKERS)


#: SchedulingBasic at growing cluster sizes, for --scaling.
SCALING = ["SchedulingBasic/500Nodes", "SchedulingBasic/5000Nodes_10000Pods", "SchedulingBasic/15000Nodes_50000Pods"]


def workload(name: str) -> Workload:
    """Workload ``name``: the catalogue's, else any other size of a shipped case
    (``-w SchedulingPodAntiAffinity/5000Nodes_2000Pods``, ``-w SchedulingWhileGated/1Node_10GatedPods``),
    read as the catalogue reads its own. KeyError, saying why, when there is no such workload."""
    if name in WORKLOADS:
        return WORKLOADS[name]
    if name not in shipped.yaml_workloads():
        raise KeyError(f"{name}: no such workload (see --list, or kubesched bench --list)")
    return from_yaml(name, f"shipped {name}")


def default_names(everything: bool = False) -> list[str]:
    """The workloads a run without -w runs: all of them but the slow ones (all with ``everything``)."""
    return [w.name for w in WORKLOADS.values() if everything or not w.slow]
