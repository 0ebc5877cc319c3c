"""Every in-tree Filter/Score plugin's upstream cases, run end to end as a user runs them.

Each case becomes a scenario (nodes, running pods, the pod under test and the storage objects it
needs) and a KubeSchedulerConfiguration whose only plugin besides PrioritySort and DefaultBinder
is the plugin under test. The bulk runs in-process through ``kubesched.sim.run.simulate.simulate``;
one case per plugin (and per NodeResourcesFit scoring strategy) also runs as
``python -m kubesched simulate --output json`` in a subprocess, and must report the same.

For every case the per-node verdicts must be upstream's words, the raw and final scores
upstream's numbers (final = normalized × weight), the chosen node the expected one, and all of
it the same as ``kubesched.testing.filter_nodes`` / ``score_nodes`` give on the same objects.

A scheduler with no Score plugin stops at the first feasible node, as upstream does, so for
Filter-only plugins the nodes after that one are never evaluated; the cases list the nodes
expected to be rejected first.
"""

from __future__ import annotations

import asyncio
import copy
import json
import subprocess
import sys
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched.config import parse_config
from kubesched.framework.interface import CycleState
from kubesched.framework.status import Status
from kubesched.plugins.image_locality import ImageLocality
from kubesched.plugins.interpodaffinity.inter_pod_affinity import InterPodAffinity
from kubesched.plugins.node_affinity import NodeAffinity
from kubesched.plugins.node_name import NodeName
from kubesched.plugins.node_ports import NodePorts
from kubesched.plugins.node_unschedulable import NodeUnschedulable
from kubesched.plugins.noderesources.balanced_allocation import NodeResourcesBalancedAllocation
from kubesched.plugins.noderesources.fit import NodeResourcesFit
from kubesched.plugins.podtopologyspread.pod_topology_spread import PodTopologySpread
from kubesched.plugins.taint_toleration import TaintToleration
from kubesched.plugins.volume.node_volume_limits import NodeVolumeLimits
from kubesched.plugins.volume.volume_binding import VolumeBinding
from kubesched.plugins.volume.volume_restrictions import VolumeRestrictions
from kubesched.plugins.volume.volume_zone import VolumeZone
from kubesched.sim.run.simulate import SimulationSettings, simulate
from kubesched.sim.scenario.reading import Scenario, parse_scenario
from kubesched.testing import (
    NodeBuilder,
    PodBuilder,
    as_node_infos,
    as_pod_info,
    filter_nodes,
    framework_for,
    make_node,
    make_pod,
    score_nodes,
)

Obj = dict[str, Any]
API = "kubescheduler.config.k8s.io/v1"
MAX_NODE_SCORE = 100
PASSED = "passed"
#: Expected verdict of a node that the plugin's PreFilterResult left out of filtering.
EXCLUDED = "excluded by PreFilterResult"
#: ``Case.chosen`` when any feasible node may be chosen (ties, or nothing to rank by).
ANY = "<any feasible node>"


@dataclass
class Case:
    id: str
    plugin: type
    pod: PodBuilder | Obj
    nodes: Sequence[NodeBuilder | Obj]
    #: Expected Filter verdict per node: None (passes), upstream's reason, or EXCLUDED.
    filter: dict[str, str | None] = field(default_factory=dict)
    pods: Sequence[PodBuilder | Obj] = field(default_factory=list)
    objects: Sequence[Obj] = field(default_factory=list)
    args: Obj | None = None
    weight: int = 1
    #: Upstream's PreFilter rejection, reported for every node.
    prefilter: str | None = None
    raw: dict[str, int] | None = None
    normalized: dict[str, int] | None = None
    #: The node the pod must land on; None: unschedulable; a set: one of these; ANY.
    chosen: str | set[str] | None = ANY
    #: Also run through ``python -m kubesched simulate`` in a subprocess.
    cli: bool = False

    @property
    def name(self) -> str:
        return self.plugin.name  # type: ignore[attr-defined]

    @property
    def scores(self) -> bool:
        return callable(getattr(self.plugin, "score", None))


# --- object builders --------------------------------------------------------------------------


def obj(x: PodBuilder | NodeBuilder | Obj) -> Obj:
    return x.obj() if isinstance(x, (PodBuilder, NodeBuilder)) else copy.deepcopy(x)


def bare_node(name: str, **labels: str) -> NodeBuilder:
    """A node with exactly ``labels`` (no hostname label), as upstream's test nodes."""
    return make_node(name).set("metadata.labels", dict(labels))


def alloc_node(name: str, **alloc: str) -> NodeBuilder:
    """A node with exactly this allocatable (plus room for pods, which scores never read)."""
    return make_node(name).set("status.allocatable", {"pods": "110", **alloc})


def containers_pod(name: str, *requests: Obj, node: str | None = None) -> PodBuilder:
    """A pod with one container per requests dict; ``{}`` is a container requesting an explicit
    zero, which counts exactly as upstream's container-less test pods do."""
    b = make_pod(name)
    for r in requests:
        b.container(image="pause", requests=dict(r) if r else {"cpu": "0", "memory": "0"})
    return b.node(node) if node else b


def expr(key: str, op: str, *values: str) -> Obj:
    e: Obj = {"key": key, "operator": op}
    if values:
        e["values"] = list(values)
    return e


def namespace(name: str, **labels: str) -> Obj:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}}


def pv(
    name: str,
    labels: dict[str, str] | None = None,
    storage_class: str = "",
    capacity: str | None = None,
    phase: str | None = None,
    hosts: list[str] | None = None,
    csi: tuple[str, str] | None = None,
    source: Obj | None = None,
) -> Obj:
    spec: Obj = dict(source or {})
    if storage_class:
        spec["storageClassName"] = storage_class
    if capacity:
        spec["capacity"] = {"storage": capacity}
    if hosts:
        spec["nodeAffinity"] = {
            "required": {"nodeSelectorTerms": [{"matchExpressions": [expr("kubernetes.io/hostname", "In", *hosts)]}]}
        }
    if csi:
        spec["csi"] = {"driver": csi[0], "volumeHandle": csi[1]}
    out: Obj = {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name, "labels": labels or {}}}
    out["spec"] = spec
    if phase:
        out["status"] = {"phase": phase}
    return out


def pvc(
    name: str,
    storage_class: str | None = None,
    volume_name: str = "",
    request: str | None = None,
    access_modes: list[str] | None = None,
) -> Obj:
    spec: Obj = {}
    if storage_class is not None:
        spec["storageClassName"] = storage_class
    if volume_name:
        spec["volumeName"] = volume_name
    if request:
        spec["resources"] = {"requests": {"storage": request}}
    if access_modes:
        spec["accessModes"] = access_modes
    meta = {"name": name, "namespace": "default", "uid": f"uid-{name}"}
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta, "spec": spec}


def storage_class(name: str, mode: str = "WaitForFirstConsumer", provisioner: str = "") -> Obj:
    out: Obj = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": name}}
    out["volumeBindingMode"] = mode
    if provisioner:
        out["provisioner"] = provisioner
    return out


def csi_node(name: str, drivers: dict[str, int], migrated: str = "") -> Obj:
    out: Obj = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSINode",
        "metadata": {"name": name},
        "spec": {"drivers": [{"name": d, "nodeID": name, "allocatable": {"count": c}} for d, c in drivers.items()]},
    }
    if migrated:
        out["metadata"]["annotations"] = {"storage.alpha.kubernetes.io/migrated-plugins": migrated}
    return out


def with_volumes(b: PodBuilder, *volumes: Obj) -> PodBuilder:
    return b.set("spec.volumes", list(volumes))


def claims(*names: str) -> list[Obj]:
    return [{"name": f"vol-{c}", "persistentVolumeClaim": {"claimName": c}} for c in names]


# --- NodeUnschedulable, NodeName -------------------------------------------------------------------

UNSCHEDULABLE = "node(s) were unschedulable"
UNSCHEDULABLE_TAINT = "node.kubernetes.io/unschedulable"

NODE_UNSCHEDULABLE = [
    Case(
        "does not schedule onto an unschedulable node",
        NodeUnschedulable,
        make_pod("p"),
        [make_node("n").unschedulable()],
        {"n": UNSCHEDULABLE},
        chosen=None,
        cli=True,
    ),
    Case(
        "toleration of the unschedulable taint admits the pod",
        NodeUnschedulable,
        make_pod("p").toleration(UNSCHEDULABLE_TAINT, effect="NoSchedule", operator="Exists"),
        [make_node("n").unschedulable()],
        {"n": None},
        chosen="n",
    ),
    Case(
        "toleration with another effect does not help",
        NodeUnschedulable,
        make_pod("p").toleration(UNSCHEDULABLE_TAINT, effect="NoExecute", operator="Exists"),
        [make_node("n").unschedulable()],
        {"n": UNSCHEDULABLE},
        chosen=None,
    ),
    Case(
        "schedules onto the normal node next to an unschedulable one",
        NodeUnschedulable,
        make_pod("p"),
        [make_node("n1").unschedulable(), make_node("n2")],
        {"n1": UNSCHEDULABLE, "n2": None},
        chosen="n2",
    ),
]

# A pod whose spec.nodeName is set is bound already: no scheduler ever sees it, so NodeName can
# only be observed end to end passing pods that name no node (see test_a_pod_naming_its_node_...).
NODE_NAME = [
    Case(
        "no host specified",
        NodeName,
        make_pod("p"),
        [make_node("foo"), make_node("bar")],
        {"foo": None, "bar": None},
        chosen="foo",
        cli=True,
    ),
]

# --- TaintToleration ---------------------------------------------------------------------------------

PNS, NS = "PreferNoSchedule", "NoSchedule"


def taints(name: str, *ts: tuple[str, str, str]) -> NodeBuilder:
    b = make_node(name)
    for key, value, effect in ts:
        b.taint(key, value, effect)
    return b


TAINT_TOLERATION = [
    Case(
        "no tolerations, node with a NoSchedule taint",
        TaintToleration,
        make_pod("pod1"),
        [taints("nodeA", ("dedicated", "user1", NS))],
        {"nodeA": "node(s) had untolerated taint(s)"},
        weight=3,
        chosen=None,
    ),
    Case(
        "key and value match but the (non-empty) effect does not",
        TaintToleration,
        make_pod("pod1").toleration("foo", "bar", PNS, "Equal"),
        [taints("nodeA", ("foo", "bar", NS))],
        {"nodeA": "node(s) had untolerated taint(s)"},
        weight=3,
        chosen=None,
    ),
    Case(
        "empty toleration effect tolerates NoSchedule",
        TaintToleration,
        make_pod("pod1").toleration("foo", "bar", "", "Equal"),
        [taints("nodeA", ("foo", "bar", NS))],
        {"nodeA": None},
        weight=3,
        chosen="nodeA",
    ),
    Case(
        "the more intolerable taints a node has, the lower its score",
        TaintToleration,
        make_pod("pod1").toleration("foo", "bar", PNS, "Equal"),
        [
            taints("nodeA"),
            taints("nodeB", ("cpu-type", "arm64", PNS)),
            taints("nodeC", ("cpu-type", "arm64", PNS), ("disk-type", "ssd", PNS)),
        ],
        {"nodeA": None, "nodeB": None, "nodeC": None},
        weight=3,
        raw={"nodeA": 0, "nodeB": 1, "nodeC": 2},
        normalized={"nodeA": 100, "nodeB": 50, "nodeC": 0},
        chosen="nodeA",
        cli=True,
    ),
    Case(
        "only PreferNoSchedule taints and tolerations count",
        TaintToleration,
        make_pod("pod1").toleration("cpu-type", "arm64", NS, "Equal").toleration("disk-type", "ssd", NS, "Equal"),
        [
            taints("nodeA"),
            taints("nodeB", ("cpu-type", "arm64", NS)),
            taints("nodeC", ("cpu-type", "arm64", PNS), ("disk-type", "ssd", PNS)),
        ],
        {"nodeA": None, "nodeB": None, "nodeC": None},
        weight=3,
        normalized={"nodeA": 100, "nodeB": 100, "nodeC": 0},
        chosen={"nodeA", "nodeB"},
    ),
    Case(
        "toleration without effect tolerates PreferNoSchedule",
        TaintToleration,
        make_pod("pod1").toleration("foo", operator="Exists"),
        [taints("nodeA", ("foo", "x", PNS)), taints("nodeB", ("bar", "x", PNS))],
        {"nodeA": None, "nodeB": None},
        weight=3,
        normalized={"nodeA": 100, "nodeB": 0},
        chosen="nodeA",
    ),
]

# --- NodeAffinity ------------------------------------------------------------------------------------

ERR_POD = "node(s) didn't match Pod's node affinity/selector"
ERR_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"


def required(*terms: Obj) -> PodBuilder:
    return make_pod("p").required_node_affinity({"nodeSelectorTerms": list(terms)})


def preferred(*terms: tuple[int, list[Obj]]) -> PodBuilder:
    prefs = [{"weight": w, "preference": {"matchExpressions": e}} for w, e in terms]
    return make_pod("p").set(
        "spec.affinity", {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": prefs}}
    )


FOO_BAR = [expr("foo", "In", "bar")]
KEY_VALUE = [expr("key", "In", "value")]
ALL_THREE = [expr("foo", "In", "bar"), expr("key", "In", "value"), expr("az", "In", "az1")]
LABEL5 = {"foo": "bar", "key": "value", "az": "az1"}

NODE_AFFINITY = [
    Case(
        "missing labels",
        NodeAffinity,
        make_pod("p").node_selector(foo="bar"),
        [bare_node("n")],
        {"n": ERR_POD},
        weight=2,
        chosen=None,
    ),
    Case(
        "matchFields In matches the node",
        NodeAffinity,
        required({"matchFields": [expr("metadata.name", "In", "node1")]}),
        [bare_node("node1"), bare_node("node2")],
        {"node1": None, "node2": EXCLUDED},
        weight=2,
        chosen="node1",
    ),
    Case(
        "two conflicting matchFields requirements",
        NodeAffinity,
        required({"matchFields": [expr("metadata.name", "In", "node1"), expr("metadata.name", "In", "node2")]}),
        [bare_node("node1"), bare_node("node2", foo="bar")],
        prefilter="pod affinity terms conflict",
        weight=2,
        chosen=None,
    ),
    Case(
        "does not match added affinity",
        NodeAffinity,
        make_pod("p"),
        [bare_node("node2", zone="foo")],
        {"node2": ERR_ENFORCED},
        args={
            "addedAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchExpressions": [expr("zone", "In", "bar")]}]
                }
            }
        },
        weight=2,
        chosen=None,
    ),
    Case(
        "multiple matchExpressions ANDed that match",
        NodeAffinity,
        required({"matchExpressions": [expr("GPU", "Exists"), expr("GPU", "NotIn", "AMD", "INTER")]}),
        [bare_node("n", GPU="NVIDIA-GRID-K1")],
        {"n": None},
        weight=2,
        chosen="n",
    ),
    Case(
        "all nodes match with different priorities",
        NodeAffinity,
        preferred((2, FOO_BAR), (4, KEY_VALUE), (5, ALL_THREE)),
        [bare_node("node1", foo="bar"), bare_node("node5", **LABEL5), bare_node("node2", key="value")],
        {"node1": None, "node5": None, "node2": None},
        weight=2,
        raw={"node1": 2, "node5": 11, "node2": 4},
        normalized={"node1": 18, "node5": 100, "node2": 36},
        chosen="node5",
        cli=True,
    ),
    Case(
        "added affinity and pod has preferred affinity",
        NodeAffinity,
        preferred((2, FOO_BAR)),
        [bare_node("node1", foo="bar"), bare_node("node2", key="value"), bare_node("node3", **LABEL5)],
        {"node1": None, "node2": None, "node3": None},
        args={
            "addedAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 3, "preference": {"matchExpressions": KEY_VALUE}}
                ]
            }
        },
        weight=2,
        normalized={"node1": 40, "node2": 60, "node3": 100},
        chosen="node3",
    ),
]

# --- NodePorts -------------------------------------------------------------------------------------------

PORTS = "node(s) didn't have free ports for the requested pod ports"


def ports(name: str, *specs: str, node: str | None = None) -> PodBuilder:
    """Host ports as ``PROTO/IP/PORT``, each in its own container."""
    b = make_pod(name)
    for spec in specs:
        proto, ip, port = spec.split("/")
        b.host_port(int(port), protocol=proto, host_ip=ip)
    return b.node(node) if node else b


def ports_case(id_: str, want: list[str], existing: list[str], conflict: bool, cli: bool = False) -> Case:
    return Case(
        id_,
        NodePorts,
        ports("p", *want),
        [make_node("m1")],
        {"m1": PORTS if conflict else None},
        pods=[ports("existing", *existing, node="m1")],
        chosen=None if conflict else "m1",
        cli=cli,
    )


NODE_PORTS = [
    ports_case("same udp port", ["UDP/127.0.0.1/8080"], ["UDP/127.0.0.1/8080"], True, cli=True),
    ports_case("different host ip", ["TCP/127.0.0.1/8080"], ["TCP/127.0.0.2/8080"], False),
    ports_case("first tcp port conflict due to 0.0.0.0 hostIP", ["TCP/0.0.0.0/8001"], ["TCP/127.0.0.1/8001"], True),
    ports_case(
        "UDP hostPort conflict due to 0.0.0.0 hostIP",
        ["UDP/127.0.0.1/8001"],
        ["TCP/0.0.0.0/8001", "UDP/0.0.0.0/8001"],
        True,
    ),
    ports_case("second different protocol", ["UDP/127.0.0.1/8001"], ["TCP/0.0.0.0/8001"], False),
]

# --- NodeResourcesFit ------------------------------------------------------------------------------------

EXT_A = "example.com/aaa"
HUGE_A = "hugepages-2Mi"
EXTENDED_RES = "abc.com/xyz"
DEFAULT_RESOURCES = [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]
EXTENDED_RESOURCE_SET = [*DEFAULT_RESOURCES, {"name": EXTENDED_RES, "weight": 1}]


def r(cpu: int = 0, mem: int = 0) -> Obj:
    """Requests as upstream's ``framework.Resource``: cpu in millicores, memory in bytes."""
    return {"cpu": f"{cpu}m", "memory": str(mem)}


def fit_node(milli_cpu: int, memory: int, pods: int, ext_a: int, storage: int, huge_a: int) -> NodeBuilder:
    """Upstream's ``makeAllocatableResources`` node ``n1``."""
    alloc = {
        "cpu": f"{milli_cpu}m",
        "memory": str(memory),
        "pods": str(pods),
        EXT_A: str(ext_a),
        "ephemeral-storage": str(storage),
        HUGE_A: str(huge_a),
    }
    return make_node("n1").set("status.allocatable", alloc)


def fit_filter(id_: str, p: PodBuilder, used: Obj, reasons: list[str], pods: int = 32, cli: bool = False) -> Case:
    return Case(
        id_,
        NodeResourcesFit,
        p,
        [fit_node(10, 20, pods, 5 if pods > 1 else 0, 20 if pods > 1 else 0, 5 if pods > 1 else 0)],
        {"n1": ", ".join(reasons) if reasons else None},
        pods=[containers_pod("existing", used, node="n1")],
        chosen=None if reasons else "n1",
        cli=cli,
    )


def cm(cpu: str, memory: str, **extra: str) -> Obj:
    return {"cpu": cpu, "memory": memory, **extra}


def strategy(kind: str, resources: list[Obj] | None = None, shape: list[Obj] | None = None) -> Obj:
    scoring: Obj = {"type": kind}
    if resources is not None:
        scoring["resources"] = resources
    if shape is not None:
        scoring["requestedToCapacityRatio"] = {"shape": shape}
    return {"scoringStrategy": scoring}


def fit_score(
    id_: str,
    args: Obj,
    p: PodBuilder,
    nodes: list[NodeBuilder],
    existing: list[PodBuilder],
    want: dict[str, int],
    chosen: str | set[str],
    cli: bool = False,
) -> Case:
    # No NormalizeScore: the raw score is upstream's final one.
    return Case(
        id_,
        NodeResourcesFit,
        p,
        list(nodes),
        {n: None for n in want},
        pods=list(existing),
        args=args,
        raw=want,
        normalized=want,
        chosen=chosen,
        cli=cli,
    )


TWO_CONTAINERS = containers_pod("p", cm("1000", "2000"), cm("2000", "3000"))
N4_6 = [alloc_node("node1", **cm("4000", "10000")), alloc_node("node2", **cm("6000", "10000"))]
N10_20 = [alloc_node("node1", **cm("10000", "20000")), alloc_node("node2", **cm("10000", "20000"))]
ON1_3000 = containers_pod("e1", cm("3000", "0"), node="node1")
ON2_3000_5000 = containers_pod("e3", cm("3000", "5000"), node="node2")
N6_EXT_4_10 = [
    alloc_node("node1", **cm("6000", "10000", **{EXTENDED_RES: "4"})),
    alloc_node("node2", **cm("6000", "10000", **{EXTENDED_RES: "10"})),
]
LEAST_SHAPE = [{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}]
LEAST, MOST = strategy("LeastAllocated"), strategy("MostAllocated")

NODE_RESOURCES_FIT = [
    fit_filter("no resources requested always fits", containers_pod("p", {}), r(10, 20), []),
    fit_filter(
        "too many resources fails",
        containers_pod("p", r(1, 1)),
        r(10, 20),
        ["Insufficient cpu", "Insufficient memory"],
        cli=True,
    ),
    fit_filter("one resource memory fits", containers_pod("p", r(2, 1)), r(9, 5), ["Insufficient cpu"]),
    fit_filter("equal edge case", containers_pod("p", r(5, 1)), r(5, 19), []),
    fit_filter(
        "extended resource capacity enforced",
        containers_pod("p", {**r(1, 1), EXT_A: "10"}),
        {**r(), EXT_A: "0"},
        [f"Insufficient {EXT_A}"],
    ),
    fit_filter(
        "too many pods comes before insufficient cpu",
        containers_pod("p", r(6, 1)),
        r(5, 19),
        ["Too many pods", "Insufficient cpu"],
        pods=1,
    ),
    # LeastAllocated
    fit_score(
        "least: nothing scheduled, resources requested, differently sized nodes",
        LEAST,
        TWO_CONTAINERS,
        N4_6,
        [],
        {"node1": 37, "node2": 50},
        "node2",
        cli=True,
    ),
    fit_score(
        "least: resources requested, pods scheduled with resources",
        LEAST,
        TWO_CONTAINERS,
        N10_20,
        [ON1_3000, ON2_3000_5000],
        {"node1": 57, "node2": 45},
        "node1",
    ),
    fit_score(
        "least: resources requested with different weight on CPU and memory",
        strategy("LeastAllocated", [{"name": "memory", "weight": 2}, {"name": "cpu", "weight": 1}]),
        TWO_CONTAINERS,
        N4_6,
        [],
        {"node1": 41, "node2": 50},
        "node2",
    ),
    # MostAllocated
    fit_score(
        "most: nothing scheduled, resources requested, differently sized nodes",
        MOST,
        TWO_CONTAINERS,
        N4_6,
        [],
        {"node1": 62, "node2": 50},
        "node1",
        cli=True,
    ),
    fit_score(
        "most: resources requested equal node capacity",
        MOST,
        containers_pod("p", cm("2000", "4000"), cm("3000", "5000")),
        [alloc_node("node1", **cm("5000", "10000")), alloc_node("node2", **cm("10000", "9000"))],
        [],
        {"node1": 95, "node2": 75},
        "node1",
    ),
    fit_score(
        "most: honor extended resource if the pod requests",
        strategy("MostAllocated", EXTENDED_RESOURCE_SET),
        containers_pod("p", cm("3000", "5000", **{EXTENDED_RES: "2"})),
        N6_EXT_4_10,
        [],
        {"node1": 50, "node2": 40},
        "node1",
    ),
    # RequestedToCapacityRatio
    fit_score(
        "ratio: nothing scheduled, nothing requested",
        strategy("RequestedToCapacityRatio", DEFAULT_RESOURCES, LEAST_SHAPE),
        containers_pod("p", {}),
        [alloc_node("node1", **cm("4000", "10000")), alloc_node("node2", **cm("4000", "10000"))],
        [containers_pod("e1", {}, node="node1"), containers_pod("e2", {}, node="node1")],
        {"node1": 100, "node2": 100},
        {"node1", "node2"},
    ),
    fit_score(
        "ratio: nothing scheduled, resources requested, differently sized nodes",
        strategy("RequestedToCapacityRatio", DEFAULT_RESOURCES, LEAST_SHAPE),
        TWO_CONTAINERS,
        N4_6,
        [containers_pod("e1", {}, node="node1"), containers_pod("e2", {}, node="node1")],
        {"node1": 38, "node2": 50},
        "node2",
        cli=True,
    ),
    fit_score(
        "ratio: no resources requested, pods scheduled with resources",
        strategy("RequestedToCapacityRatio", DEFAULT_RESOURCES, LEAST_SHAPE),
        containers_pod("p", {}),
        N4_6,
        [
            containers_pod("e1", cm("3000", "5000"), node="node1"),
            containers_pod("e2", cm("3000", "5000"), node="node2"),
        ],
        {"node1": 38, "node2": 50},
        "node2",
    ),
]

# --- NodeResourcesBalancedAllocation -------------------------------------------------------------------

GPU = "nvidia.com/gpu"


def balanced(
    id_: str,
    p: PodBuilder,
    nodes: list[NodeBuilder],
    existing: list[PodBuilder],
    want: dict[str, int],
    chosen: str,
    resources: list[Obj] | None = None,
    cli: bool = False,
) -> Case:
    return Case(
        id_,
        NodeResourcesBalancedAllocation,
        p,
        nodes,
        {n: None for n in want},
        pods=existing,
        args={"resources": resources or DEFAULT_RESOURCES},
        raw=want,
        normalized=want,
        chosen=chosen,
        cli=cli,
    )


def cpu_and_memory(name: str, node: str | None = None) -> PodBuilder:
    return containers_pod(name, cm("1000m", "2000"), cm("2000m", "3000"), node=node)


def cpu_only(name: str, node: str | None = None) -> PodBuilder:
    return containers_pod(name, cm("1000m", "0"), cm("2000m", "0"), node=node)


BALANCED_SCHEDULED = [cpu_only("e1", "node1"), cpu_and_memory("e2", "node2")]

NODE_RESOURCES_BALANCED_ALLOCATION = [
    balanced(
        "nothing scheduled, resources requested, differently sized nodes",
        cpu_and_memory("incoming"),
        [alloc_node("node1", cpu="4000m", memory="10000"), alloc_node("node2", cpu="6000m", memory="10000")],
        [],
        {"node1": 87, "node2": 100},
        "node2",
        cli=True,
    ),
    balanced(
        "resources requested, pods scheduled with resources",
        cpu_and_memory("incoming"),
        [alloc_node("node1", cpu="10000m", memory="20000"), alloc_node("node2", cpu="10000m", memory="20000")],
        BALANCED_SCHEDULED,
        {"node1": 82, "node2": 95},
        "node2",
    ),
    balanced(
        "requested resources at node capacity",
        cpu_only("incoming"),
        [alloc_node("node1", cpu="6000m", memory="10000"), alloc_node("node2", cpu="6000m", memory="10000")],
        BALANCED_SCHEDULED,
        {"node1": 50, "node2": 75},
        "node2",
    ),
    balanced(
        "include scalar resource on a node for balanced resource allocation",
        containers_pod("incoming", {"memory": "0", GPU: "1"}),
        [
            alloc_node("node1", cpu="3500m", memory="40000", **{GPU: "8"}),
            alloc_node("node2", cpu="3500m", memory="40000", **{GPU: "8"}),
        ],
        [
            cpu_and_memory("e1", "node2"),
            containers_pod("e2", cm("1000m", "2000"), cm("2000m", "3000", **{GPU: "3"}), node="node1"),
        ],
        {"node1": 70, "node2": 65},
        "node1",
        resources=[*DEFAULT_RESOURCES, {"name": GPU, "weight": 1}],
    ),
]

# --- ImageLocality ---------------------------------------------------------------------------------------

MB = 1024 * 1024


def images(name: str, *entries: tuple[int, list[str]]) -> NodeBuilder:
    b = make_node(name)
    for size_mb, names in entries:
        b.image(size_mb * MB, *names)
    return b


def image_pod(*imgs: str) -> PodBuilder:
    b = make_pod("p")
    for i in imgs:
        b.image(i)
    return b


NODE_40_300_2000 = (
    (40, ["gcr.io/40:latest", "gcr.io/40:v1", "gcr.io/40:v1"]),
    (300, ["gcr.io/300:latest", "gcr.io/300:v1"]),
    (2000, ["gcr.io/2000:latest"]),
)
NODE_250_10 = ((250, ["gcr.io/250:latest"]), (10, ["gcr.io/10:latest", "gcr.io/10:v1"]))
NODE_600_40_900 = ((600, ["gcr.io/600:latest"]), (40, ["gcr.io/40:latest"]), (900, ["gcr.io/900:latest"]))
NODE_300_600_900 = ((300, ["gcr.io/300:latest"]), (600, ["gcr.io/600:latest"]), (900, ["gcr.io/900:latest"]))


def image_case(
    id_: str, p: PodBuilder, nodes: list[NodeBuilder], want: dict[str, int], chosen: str, cli: bool = False
) -> Case:
    return Case(
        id_,
        ImageLocality,
        p,
        nodes,
        {n: None for n in want},
        weight=2,
        raw=want,
        normalized=want,
        chosen=chosen,
        cli=cli,
    )


IMAGE_LOCALITY = [
    image_case(
        "two images spread on two nodes, prefer the larger image one",
        image_pod("gcr.io/40", "gcr.io/250"),
        [images("machine1", *NODE_40_300_2000), images("machine2", *NODE_250_10)],
        {"machine1": 0, "machine2": 5},
        "machine2",
        cli=True,
    ),
    image_case(
        "two images on one node, prefer this node",
        image_pod("gcr.io/40", "gcr.io/300"),
        [images("machine1", *NODE_40_300_2000), images("machine2", *NODE_250_10)],
        {"machine1": 7, "machine2": 0},
        "machine1",
    ),
    image_case(
        "pods with multiple large images, node2 is preferred",
        image_pod("gcr.io/300", "gcr.io/600", "gcr.io/900"),
        [images("machine1", *NODE_600_40_900), images("machine2", *NODE_300_600_900), images("machine3")],
        {"machine1": 32, "machine2": 36, "machine3": 0},
        "machine2",
    ),
]

# --- PodTopologySpread ------------------------------------------------------------------------------------

SPREAD = "node(s) didn't match pod topology spread constraints"
SPREAD_LABEL = "node(s) didn't match pod topology spread constraints (missing required label)"
HOST = "kubernetes.io/hostname"
FOO_EXISTS = {"matchExpressions": [expr("foo", "Exists")]}
LIST = {"defaultingType": "List"}


def spread(max_skew: int, key: str, when: str) -> PodBuilder:
    c = {"maxSkew": max_skew, "topologyKey": key, "whenUnsatisfiable": when, "labelSelector": FOO_EXISTS}
    return make_pod("p").label("foo", "").set("spec.topologySpreadConstraints", [c])


def zn(name: str, zone: str) -> NodeBuilder:
    return bare_node(name, zone=zone, node=name)


def four_zone_nodes() -> list[NodeBuilder]:
    return [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-x", "zone2"), zn("node-y", "zone2")]


def foo_pods(spec: str) -> list[PodBuilder]:
    """Existing pods labelled foo: ``"a:2 b:1"`` → p-a1, p-a2 on node-a, p-b1 on node-b."""
    out = []
    for part in spec.split():
        n, count = part.split(":")
        out += [make_pod(f"p-{n}{i}").label("foo", "").node(f"node-{n}") for i in range(1, int(count) + 1)]
    return out


def hosts(*names: str) -> list[NodeBuilder]:
    return [bare_node(n, **{HOST: n}) for n in names]


POD_TOPOLOGY_SPREAD = [
    Case(
        "pods spread across nodes as 2/1/0/3, only node-x fits",
        PodTopologySpread,
        spread(1, "node", "DoNotSchedule"),
        four_zone_nodes(),
        {"node-a": SPREAD, "node-b": SPREAD, "node-x": None, "node-y": SPREAD},
        pods=foo_pods("a:2 b:1 y:3"),
        args=LIST,
        weight=2,
        chosen="node-x",
        cli=True,
    ),
    Case(
        "pods spread across zones as 1/2 due to absence of label 'zone' on node-b",
        PodTopologySpread,
        spread(1, "zone", "DoNotSchedule"),
        [
            zn("node-a", "zone1"),
            bare_node("node-b", zon="zone1", node="node-b"),
            zn("node-x", "zone2"),
            zn("node-y", "zone2"),
        ],
        {"node-a": None, "node-b": SPREAD_LABEL, "node-x": SPREAD, "node-y": SPREAD},
        pods=foo_pods("a:1 b:1 x:1 y:1"),
        args=LIST,
        weight=2,
        chosen="node-a",
    ),
    Case(
        "pod cannot be scheduled as all nodes don't have label 'rack'",
        PodTopologySpread,
        spread(1, "rack", "DoNotSchedule"),
        [zn("node-a", "zone1"), zn("node-x", "zone2")],
        {"node-a": SPREAD_LABEL, "node-x": SPREAD_LABEL},
        args=LIST,
        weight=2,
        chosen=None,
    ),
    Case(
        "one constraint on node, all 4 nodes are candidates",
        PodTopologySpread,
        spread(1, HOST, "ScheduleAnyway"),
        hosts("node-a", "node-b", "node-c", "node-d"),
        {"node-a": None, "node-b": None, "node-c": None, "node-d": None},
        pods=foo_pods("a:2 b:1 d:3"),
        weight=2,
        normalized={"node-a": 20, "node-b": 60, "node-c": 100, "node-d": 0},
        chosen="node-c",
    ),
    Case(
        "one constraint on node, all 4 nodes are candidates, maxSkew=2",
        PodTopologySpread,
        spread(2, HOST, "ScheduleAnyway"),
        hosts("node-a", "node-b", "node-c", "node-d"),
        {"node-a": None, "node-b": None, "node-c": None, "node-d": None},
        pods=foo_pods("a:2 b:1 d:3"),
        weight=2,
        normalized={"node-a": 33, "node-b": 66, "node-c": 100, "node-d": 16},
        chosen="node-c",
    ),
    Case(
        "one constraint on node, all 4 nodes are candidates, maxSkew=3",
        PodTopologySpread,
        spread(3, HOST, "ScheduleAnyway"),
        hosts("node-a", "node-b", "node-c", "node-d"),
        {"node-a": None, "node-b": None, "node-c": None, "node-d": None},
        pods=foo_pods("a:4 b:3 c:2 d:1"),
        weight=2,
        normalized={"node-a": 44, "node-b": 66, "node-c": 77, "node-d": 100},
        chosen="node-d",
    ),
]

# --- InterPodAffinity -------------------------------------------------------------------------------------

ERR_AFF = "node(s) didn't match pod affinity rules"
ERR_ANTI = "node(s) didn't match pod anti-affinity rules"
ERR_EXISTING = "node(s) didn't satisfy existing pods anti-affinity rules"


def term(*exprs: Obj, topo: str, namespaces: list[str] | None = None, ns_selector: Obj | None = None) -> Obj:
    t: Obj = {"labelSelector": {"matchExpressions": list(exprs)}, "topologyKey": topo}
    if namespaces is not None:
        t["namespaces"] = namespaces
    if ns_selector is not None:
        t["namespaceSelector"] = ns_selector
    return t


def affinity(
    aff: list[Obj] = (),  # type: ignore[assignment]
    anti: list[Obj] = (),  # type: ignore[assignment]
    paff: list[tuple[int, Obj]] = (),  # type: ignore[assignment]
    panti: list[tuple[int, Obj]] = (),  # type: ignore[assignment]
) -> Obj:
    out: Obj = {}
    for key, hard, soft in (("podAffinity", aff, paff), ("podAntiAffinity", anti, panti)):
        part: Obj = {}
        if hard:
            part["requiredDuringSchedulingIgnoredDuringExecution"] = list(hard)
        if soft:
            part["preferredDuringSchedulingIgnoredDuringExecution"] = [
                {"weight": w, "podAffinityTerm": t} for w, t in soft
            ]
        if part:
            out[key] = part
    return out


def ipa_pod(
    name: str = "p", ns: str = "default", node: str | None = None, labels: Obj | None = None, aff: Obj | None = None
) -> PodBuilder:
    b = make_pod(name, ns)
    if labels:
        b.labels(**labels)
    if aff:
        b.set("spec.affinity", aff)
    return b.node(node) if node else b


def numbered_nodes(*labels: Obj) -> list[NodeBuilder]:
    return [bare_node(f"node{i}", **lab) for i, lab in enumerate(labels, start=1)]


def on_many(*spec: tuple[int, Obj, Obj | None]) -> list[PodBuilder]:
    return [ipa_pod(f"e{i}", node=f"node{n}", labels=lab, aff=aff) for i, (n, lab, aff) in enumerate(spec)]


CHINA, CHINA_AZ1, INDIA, AZ1 = {"region": "China"}, {"region": "China", "az": "az1"}, {"region": "India"}, {"az": "az1"}
SEC_S1, SEC_S2 = {"security": "S1"}, {"security": "S2"}
STAY_S1_REGION = affinity(paff=[(5, term(expr("security", "In", "S1"), topo="region"))])
STAY_S2_REGION = affinity(paff=[(6, term(expr("security", "In", "S2"), topo="region"))])
HARD_AFFINITY = affinity(
    aff=[
        term(expr("security", "In", "S1", "value2"), topo="region"),
        term(expr("security", "Exists"), expr("wrongkey", "DoesNotExist"), topo="region"),
    ]
)
TEAM1 = {"matchExpressions": [expr("team", "In", "team1")]}
NS_SELECTOR_TERM = term(expr("security", "In", "S1"), topo="region", namespaces=["subteam2.team2"], ns_selector=TEAM1)
NAMESPACES = [
    namespace("subteam1.team1", team="team1"),
    namespace("subteam2.team1", team="team1"),
    namespace("subteam1.team2", team="team2"),
    namespace("subteam2.team2", team="team2"),
]

INTER_POD_AFFINITY = [
    Case(
        "nodes sharing the matching pod's region fit",
        InterPodAffinity,
        ipa_pod(aff=affinity(aff=[term(expr("foo", "In", "bar"), topo="region")])),
        numbered_nodes(CHINA, CHINA_AZ1, INDIA),
        {"node1": None, "node2": None, "node3": ERR_AFF},
        pods=[ipa_pod("p1", node="node1", labels={"foo": "bar"})],
        weight=2,
        chosen={"node1", "node2"},
    ),
    Case(
        "anti-affinity leaves the other region",
        InterPodAffinity,
        ipa_pod(aff=affinity(anti=[term(expr("foo", "In", "abc"), topo="region")])),
        [bare_node("nodeA", **CHINA), bare_node("nodeB", **CHINA_AZ1), bare_node("nodeC", **INDIA)],
        {"nodeA": ERR_ANTI, "nodeB": ERR_ANTI, "nodeC": None},
        pods=[ipa_pod("p1", node="nodeA", labels={"foo": "abc"})],
        weight=2,
        chosen="nodeC",
        cli=True,
    ),
    Case(
        "each existing pod's anti-affinity blocks the pod everywhere",
        InterPodAffinity,
        ipa_pod(labels={"foo": "", "bar": ""}),
        [
            bare_node("nodeA", region="r1", zone="z1", hostname="nodeA"),
            bare_node("nodeB", region="r1", zone="z2", hostname="nodeB"),
        ],
        {"nodeA": ERR_EXISTING, "nodeB": ERR_EXISTING},
        pods=[
            ipa_pod("p1", node="nodeA", aff=affinity(anti=[term(expr("foo", "Exists"), topo="zone")])),
            ipa_pod("p2", node="nodeA", aff=affinity(anti=[term(expr("bar", "Exists"), topo="region")])),
        ],
        weight=2,
        chosen=None,
    ),
    Case(
        "affinity: the matching pod's region scores highest",
        InterPodAffinity,
        ipa_pod(labels=SEC_S1, aff=STAY_S1_REGION),
        numbered_nodes(CHINA, INDIA, AZ1),
        {"node1": None, "node2": None, "node3": None},
        pods=on_many((1, SEC_S1, None), (2, SEC_S2, None), (3, SEC_S1, None)),
        objects=NAMESPACES,
        weight=2,
        normalized={"node1": 100, "node2": 0, "node3": 0},
        chosen="node1",
    ),
    Case(
        "anti-affinity symmetry with namespaceSelector",
        InterPodAffinity,
        ipa_pod(ns="subteam1.team1", labels=SEC_S1),
        numbered_nodes(CHINA, INDIA, AZ1),
        {"node1": None, "node2": None, "node3": None},
        pods=on_many((1, SEC_S1, affinity(panti=[(5, NS_SELECTOR_TERM)])), (2, SEC_S2, STAY_S2_REGION)),
        objects=NAMESPACES,
        weight=2,
        normalized={"node1": 0, "node2": 100, "node3": 100},
        chosen={"node2", "node3"},
    ),
    Case(
        "affinity symmetry: existing pods' required terms",
        InterPodAffinity,
        ipa_pod(labels=SEC_S1),
        numbered_nodes(CHINA, INDIA, AZ1),
        {"node1": None, "node2": None, "node3": None},
        pods=on_many((1, SEC_S1, HARD_AFFINITY), (2, SEC_S2, HARD_AFFINITY)),
        objects=NAMESPACES,
        weight=2,
        normalized={"node1": 100, "node2": 100, "node3": 0},
        chosen={"node1", "node2"},
    ),
]

# --- VolumeBinding ----------------------------------------------------------------------------------------

BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
CLASSES = [storage_class("immediate-sc", mode="Immediate"), storage_class("wait-sc")]
CAPACITY_SHAPE = [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]


def local_pv(name: str, capacity: str, host: str) -> Obj:
    return pv(name, storage_class="wait-sc", capacity=capacity, phase="Available", hosts=[host])


VOLUME_BINDING = [
    Case(
        "all bound",
        VolumeBinding,
        with_volumes(make_pod("pod-a"), *claims("pvc-a")),
        [make_node("node-a")],
        {"node-a": None},
        objects=[*CLASSES, pvc("pvc-a", "wait-sc", volume_name="pv-a"), pv("pv-a", storage_class="wait-sc")],
        chosen="node-a",
    ),
    Case(
        "PVC does not exist",
        VolumeBinding,
        with_volumes(make_pod("pod-a"), *claims("pvc-a")),
        [make_node("node-a")],
        prefilter='persistentvolumeclaim "pvc-a" not found',
        objects=CLASSES,
        chosen=None,
    ),
    Case(
        "immediate claims not bound",
        VolumeBinding,
        with_volumes(make_pod("pod-a"), *claims("pvc-a")),
        [make_node("node-a")],
        prefilter="pod has unbound immediate PersistentVolumeClaims",
        objects=[*CLASSES, pvc("pvc-a", "immediate-sc")],
        chosen=None,
    ),
    Case(
        "unbound claims no matches",
        VolumeBinding,
        with_volumes(make_pod("pod-a"), *claims("pvc-a")),
        [make_node("node-a")],
        {"node-a": BIND_CONFLICT},
        objects=[*CLASSES, pvc("pvc-a", "wait-sc")],
        chosen=None,
        cli=True,
    ),
    Case(
        "local volumes with close capacity are preferred",
        VolumeBinding,
        with_volumes(make_pod("pod-a"), *claims("pvc-a")),
        [make_node("node-a"), make_node("node-b"), make_node("node-c")],
        {"node-a": None, "node-b": None, "node-c": BIND_CONFLICT},
        objects=[
            *CLASSES,
            pvc("pvc-a", "wait-sc", request="50Gi"),
            local_pv("pv-a-0", "200Gi", "node-a"),
            local_pv("pv-a-1", "200Gi", "node-a"),
            local_pv("pv-b-0", "100Gi", "node-b"),
            local_pv("pv-b-1", "100Gi", "node-b"),
        ],
        args={"bindTimeoutSeconds": 300, "shape": CAPACITY_SHAPE},
        raw={"node-a": 25, "node-b": 50},
        normalized={"node-a": 25, "node-b": 50},
        chosen="node-b",
    ),
]

# --- VolumeRestrictions -----------------------------------------------------------------------------------

DISK = "node(s) had no available disk"
RWOP = "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode"


def gce(pd: str, ro: bool = False) -> Obj:
    return {"name": f"gce-{pd}", "gcePersistentDisk": {"pdName": pd, "readOnly": ro}}


def rbd(monitors: list[str], pool: str, image: str) -> Obj:
    return {"name": f"rbd-{image}", "rbd": {"monitors": monitors, "pool": pool, "image": image}}


def disk_case(id_: str, mine: list[Obj], theirs: list[Obj], conflict: bool, cli: bool = False) -> Case:
    return Case(
        id_,
        VolumeRestrictions,
        with_volumes(make_pod("new"), *mine),
        [make_node("n1")],
        {"n1": DISK if conflict else None},
        pods=[with_volumes(make_pod("existing"), *theirs).node("n1")],
        chosen=None if conflict else "n1",
        cli=cli,
    )


RWOP_OBJECTS = [pvc("claim-rwop", access_modes=["ReadWriteOncePod"]), pvc("claim-rwo", access_modes=["ReadWriteOnce"])]

VOLUME_RESTRICTIONS = [
    disk_case("gce one state", [gce("foo")], [gce("foo")], True, cli=True),
    disk_case("gce both read-only", [gce("foo", True)], [gce("foo", True)], False),
    disk_case("rbd same image", [rbd(["a", "b"], "pool1", "img")], [rbd(["b", "c"], "pool1", "img")], True),
    Case(
        "rwop claim used on another node",
        VolumeRestrictions,
        with_volumes(make_pod("new"), *claims("claim-rwop")),
        [make_node("n1"), make_node("n2")],
        {"n1": RWOP, "n2": RWOP},
        pods=[with_volumes(make_pod("user-0"), *claims("claim-rwop")).node("n2")],
        objects=RWOP_OBJECTS,
        chosen=None,
    ),
    Case(
        "rwo claim shared",
        VolumeRestrictions,
        with_volumes(make_pod("new"), *claims("claim-rwo")),
        [make_node("n1"), make_node("n2")],
        {"n1": None},
        pods=[with_volumes(make_pod("user-0"), *claims("claim-rwo")).node("n1")],
        objects=RWOP_OBJECTS,
        chosen="n1",
    ),
    Case(
        "claim not found",
        VolumeRestrictions,
        with_volumes(make_pod("new"), *claims("claim-missing")),
        [make_node("n1"), make_node("n2")],
        prefilter='persistentvolumeclaim "claim-missing" not found',
        objects=RWOP_OBJECTS,
        chosen=None,
    ),
]

# --- VolumeZone ---------------------------------------------------------------------------------------------

ZONE_CONFLICT = "node(s) had no available volume zone"
BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
ZONE_OBJECTS = [
    pv("Vol_1", {BETA_ZONE: "us-west1-a"}),
    pv("Vol_Stable_1", {ZONE: "us-west1-a"}),
    pv("Vol_Stable_3", {ZONE: "us-west1-a", REGION: "us-west1-a"}),
    pvc("PVC_1", volume_name="Vol_1"),
    pvc("PVC_4", volume_name="Vol_not_exist"),
    pvc("PVC_Stable_1", volume_name="Vol_Stable_1"),
    pvc("PVC_Stable_3", volume_name="Vol_Stable_3"),
    pvc("PVC_EmptySC"),
]


def zone_case(id_: str, claim: str, labels: dict[str, str], want: str | None, cli: bool = False) -> Case:
    return Case(
        id_,
        VolumeZone,
        with_volumes(make_pod("pod_1"), *claims(claim)),
        [bare_node("host1", **labels)],
        {"host1": want},
        objects=ZONE_OBJECTS,
        chosen=None if want else "host1",
        cli=cli,
    )


VOLUME_ZONE = [
    zone_case("beta zone label matched", "PVC_1", {BETA_ZONE: "us-west1-a", "uselessLabel": "none"}, None),
    zone_case(
        "zone label doesn't match",
        "PVC_Stable_1",
        {ZONE: "no_us-west1-a", "uselessLabel": "none"},
        ZONE_CONFLICT,
        cli=True,
    ),
    zone_case("pv with zone and region, node with only zone", "PVC_Stable_3", {ZONE: "us-west1-a"}, ZONE_CONFLICT),
    zone_case("pv with beta label, node with ga label, don't match", "PVC_1", {ZONE: "us-west1-b"}, ZONE_CONFLICT),
    Case(
        "unbound volume empty storage class",
        VolumeZone,
        with_volumes(make_pod("pod_1"), *claims("PVC_EmptySC")),
        [bare_node("host1", **{BETA_ZONE: "us-west1-a"})],
        prefilter="PersistentVolumeClaim had no pv name and storageClass name",
        objects=ZONE_OBJECTS,
        chosen=None,
    ),
    Case(
        "pv not found",
        VolumeZone,
        with_volumes(make_pod("pod_1"), *claims("PVC_4")),
        [bare_node("host1", **{BETA_ZONE: "us-west1-a"})],
        prefilter='persistentvolume "Vol_not_exist" not found',
        objects=ZONE_OBJECTS,
        chosen=None,
    ),
]

# --- NodeVolumeLimits ----------------------------------------------------------------------------------------

EXCEEDED = "node(s) exceed max volume count"
EBS = "ebs.csi.aws.com"
LIMIT_OBJECTS = [
    pv("csi-ebs-0", csi=(EBS, "vol-0")),
    pv("csi-ebs-1", csi=(EBS, "vol-1")),
    pv("csi-ebs-2", csi=(EBS, "vol-2")),
    pv("intree-ebs-0", source={"awsElasticBlockStore": {"volumeID": "aws-inline-0"}}),
    pvc("claim-ebs-0", volume_name="csi-ebs-0"),
    pvc("claim-ebs-1", volume_name="csi-ebs-1"),
    pvc("claim-ebs-2", volume_name="csi-ebs-2"),
    pvc("claim-intree-0", volume_name="intree-ebs-0"),
    pvc("claim-unbound-sc", storage_class="csi-sc"),
    storage_class("csi-sc", provisioner=EBS),
]


def limits_case(
    id_: str, mine: list[str], existing: list[list[str]], limit: int, migrated: str, want: str | None, cli: bool = False
) -> Case:
    return Case(
        id_,
        NodeVolumeLimits,
        with_volumes(make_pod("new"), *claims(*mine)),
        [make_node("n1")],
        {"n1": want},
        pods=[with_volumes(make_pod(f"e{i}"), *claims(*cs)).node("n1") for i, cs in enumerate(existing)],
        objects=[*LIMIT_OBJECTS, csi_node("n1", {EBS: limit}, migrated)],
        chosen=None if want else "n1",
        cli=cli,
    )


NODE_VOLUME_LIMITS = [
    limits_case("fits under the limit", ["claim-ebs-0"], [["claim-ebs-1"]], 4, "", None),
    limits_case("exceeds the limit", ["claim-ebs-0", "claim-ebs-1"], [["claim-ebs-2"]], 2, "", EXCEEDED, cli=True),
    limits_case("same volume is counted once", ["claim-ebs-0"], [["claim-ebs-0"]], 1, "", None),
    limits_case("unbound claim counts by its class", ["claim-unbound-sc"], [["claim-ebs-0"]], 1, "", EXCEEDED),
    limits_case(
        "in-tree pv migrated counts", ["claim-intree-0"], [["claim-ebs-0"]], 1, "kubernetes.io/aws-ebs", EXCEEDED
    ),
]

CASES = [
    *NODE_UNSCHEDULABLE,
    *NODE_NAME,
    *TAINT_TOLERATION,
    *NODE_AFFINITY,
    *NODE_PORTS,
    *NODE_RESOURCES_FIT,
    *NODE_RESOURCES_BALANCED_ALLOCATION,
    *IMAGE_LOCALITY,
    *POD_TOPOLOGY_SPREAD,
    *INTER_POD_AFFINITY,
    *VOLUME_BINDING,
    *VOLUME_RESTRICTIONS,
    *VOLUME_ZONE,
    *NODE_VOLUME_LIMITS,
]


def case_id(case: Case) -> str:
    return f"{case.name}: {case.id}"


CLI_CASES = [c for c in CASES if c.cli]


# --- running a case ------------------------------------------------------------------------------------


def config_doc(case: Case) -> Obj:
    """Only the plugin under test, besides the queue sort and the binder every profile needs."""
    entry: Obj = {"name": case.name}
    if case.scores:
        entry["weight"] = case.weight
    profile: Obj = {
        "schedulerName": "default-scheduler",
        "plugins": {
            "multiPoint": {
                "enabled": [{"name": "PrioritySort"}, {"name": "DefaultBinder"}, entry],
                "disabled": [{"name": "*"}],
            }
        },
    }
    if case.args is not None:
        profile["pluginConfig"] = [{"name": case.name, "args": case.args}]
    return {"apiVersion": API, "kind": "KubeSchedulerConfiguration", "profiles": [profile]}


def scenario_docs(case: Case) -> list[Obj]:
    pod = obj(case.pod)
    assert not pod["spec"].get("nodeName"), "the pod under test must be pending"
    return [
        *(copy.deepcopy(o) for o in case.objects),
        *(obj(n) for n in case.nodes),
        *(obj(p) for p in case.pods),
        pod,
    ]


def pod_under_test(result: Obj, case: Case) -> Obj:
    pods = result["pods"]
    assert len(pods) == 1, [p["name"] for p in pods]
    assert pods[0]["name"] == obj(case.pod)["metadata"]["name"]
    return pods[0]


def run_in_process(case: Case) -> tuple[Obj, Scenario]:
    cfg = parse_config(config_doc(case), source=case.id)
    scenario = parse_scenario(scenario_docs(case), source=case.id)
    result = asyncio.run(simulate(cfg.profiles, scenario, SimulationSettings(seed=0)))
    return pod_under_test(result.to_json(), case), scenario


def write_case(case: Case, directory: Path) -> tuple[Path, Path]:
    directory.mkdir(parents=True, exist_ok=True)
    config = directory / "config.yaml"
    scenario = directory / "scenario.yaml"
    config.write_text(yaml.safe_dump(config_doc(case), sort_keys=False))
    scenario.write_text(yaml.safe_dump_all(scenario_docs(case), sort_keys=False))
    return config, scenario


def run_cli(config: Path, scenario: Path) -> subprocess.CompletedProcess[str]:
    cmd = ["simulate", "--config", config, "--scenario", scenario, "--output", "json", "--no-progress"]
    return subprocess.run(
        [sys.executable, "-m", "kubesched", *map(str, cmd)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=scenario.parent,
    )


# --- what a result must show ---------------------------------------------------------------------------


def is_rejection(verdict: str | None) -> bool:
    return verdict is not None and verdict not in ("success", "skipped")


def verdicts(pod: Obj, case: Case) -> dict[str, str]:
    """Per node: "passed", the plugin's reason, or EXCLUDED — for the nodes the scheduler evaluated."""
    plugin = case.name
    pre = pod["preFilter"].get(plugin)
    node_names = [obj(n)["metadata"]["name"] for n in case.nodes]
    if is_rejection(pre):
        assert pod["filter"] == {}, "a PreFilter rejection filters no node"
        return {n: pre for n in node_names}
    if not callable(getattr(case.plugin, "filter", None)):
        assert pod["filter"] == {}, "no Filter plugin: every node is feasible unfiltered"
        return {n: PASSED for n in node_names}
    out: dict[str, str] = {}
    for n in node_names:
        trace = pod["filter"].get(n)
        if trace is None:
            continue
        if pre == "skipped":
            assert plugin not in trace, (n, trace)
            out[n] = PASSED
        else:
            assert set(trace) == {plugin}, (n, trace)
            out[n] = trace[plugin]
    if case.scores:
        # Every node is filtered when there is something to rank them by (below 100 nodes), so
        # a node missing here was left out by the plugin's PreFilterResult.
        for n in node_names:
            out.setdefault(n, EXCLUDED)
    return out


def plugin_scores(pod: Obj, table: str, plugin: str, nodes: list[str]) -> dict[str, int]:
    """A plugin whose PreScore skipped has no entries: upstream counts that as 0 on every node."""
    return {n: pod[table].get(n, {}).get(plugin, 0) for n in nodes}


def check_case(pod: Obj, case: Case) -> None:
    plugin = case.name
    node_names = [obj(n)["metadata"]["name"] for n in case.nodes]
    got = verdicts(pod, case)
    if case.prefilter is not None:
        assert pod["preFilter"][plugin] == case.prefilter
        assert got == {n: case.prefilter for n in node_names}
    else:
        assert not is_rejection(pod["preFilter"].get(plugin)), pod["preFilter"]
        want = {n: PASSED if v is None else v for n, v in case.filter.items()}
        if case.scores:
            assert got == want
        else:
            # Nothing to rank by: filtering stops at the first feasible node.
            assert got, "no node was filtered"
            assert {n: want[n] for n in got} == got
            assert [n for n, v in got.items() if v == PASSED] == ([pod["node"]] if pod["node"] else [])
            if not any(v == PASSED for v in want.values()):
                assert set(got) == set(node_names)
            assert {n for n, v in want.items() if v != PASSED} <= set(got), "list rejected nodes first"
    feasible = [n for n, v in got.items() if v == PASSED]

    # Placement.
    if not feasible:
        assert pod["node"] is None and pod["phase"] == "Unschedulable", pod["message"]
        assert pod["message"].startswith(f"0/{len(node_names)} nodes are available: ")
        for verdict in {v for v in got.values() if v not in (PASSED, EXCLUDED)}:
            for reason in verdict.split(", "):
                assert reason in pod["message"]
    else:
        assert pod["phase"] == "Scheduled" and pod["node"] in feasible, pod["message"]
    if case.chosen is None:
        assert pod["node"] is None
    elif isinstance(case.chosen, set):
        assert pod["node"] in case.chosen
    elif case.chosen != ANY:
        assert pod["node"] == case.chosen

    # Scores: only when there was a choice to make.
    if not case.scores or len(feasible) < 2:
        assert case.raw is None or len(case.raw) < 2
        assert pod["score"] == pod["finalScore"] == {}
        return
    assert set(pod["finalScore"]) <= set(feasible)
    raw = plugin_scores(pod, "score", plugin, feasible)
    final = plugin_scores(pod, "finalScore", plugin, feasible)
    if case.raw is not None:
        assert raw == case.raw
    for n, v in final.items():
        assert v % case.weight == 0 and 0 <= v <= MAX_NODE_SCORE * case.weight, (n, v)
    normalized = {n: v // case.weight for n, v in final.items()}
    if not callable(getattr(case.plugin, "normalize_score", None)):
        assert normalized == raw, "without NormalizeScore the final score is raw × weight"
    if case.normalized is not None:
        assert normalized == case.normalized
    best = max(final.values())
    assert final[pod["node"]] == best
    if case.chosen == ANY:
        assert pod["node"] in {n for n, v in final.items() if v == best}


def harness_message(status: Status | None) -> str:
    if status is None or status.is_success():
        return PASSED
    if status.message() == "node(s) didn't satisfy PreFilterResult":
        return EXCLUDED
    return status.message()


def score_after_filter(case: Case, incoming: Obj, nodes: list[Obj], objects: list[Obj]) -> tuple[Obj, Obj]:
    """PreFilter, Filter on every node, then PreScore/Score/NormalizeScore over the feasible
    ones, through ``kubesched.testing.framework_for``: the raw and weighted scores."""

    async def cycle() -> tuple[Obj, Obj]:
        infos = as_node_infos(nodes)
        fw = framework_for(case.plugin, case.args, infos, weight=case.weight, objects=objects)
        state = CycleState()
        pi = as_pod_info(incoming)
        _, status, _ = await fw.run_pre_filter(state, pi)
        assert status is None, status
        feasible = [ni for ni in infos if fw.run_filter(state, pi, ni) is None]
        assert await fw.run_pre_score(state, pi, feasible) is None
        raw: Obj = {}
        final: Obj = {}
        _, status = await fw.run_score(state, pi, feasible, raw, final)
        assert status is None, status
        return (
            {ni.name: raw.get(ni.name, {}).get(case.name, 0) for ni in feasible},
            {ni.name: final.get(ni.name, {}).get(case.name, 0) for ni in feasible},
        )

    return asyncio.run(cycle())


def check_against_harness(pod: Obj, case: Case, scenario: Scenario) -> None:
    """The same verdicts and scores from ``kubesched.testing`` on the very objects simulated."""
    (incoming,) = scenario.pending_pods
    objects = [*scenario.namespaces, *scenario.others]
    statuses = filter_nodes(
        case.plugin, incoming, scenario.nodes, args=case.args, pods=scenario.running_pods, objects=objects
    )
    got = verdicts(pod, case)
    assert {n: harness_message(statuses[n]) for n in got} == got
    feasible = [n for n, v in got.items() if v == PASSED]
    if not case.scores or len(feasible) < 2:
        return
    nodes = [n for n in scenario.nodes if n["metadata"]["name"] in feasible]
    if case.plugin is VolumeBinding:
        # Its Score reads what its Filter found on each node, and score_nodes runs no Filter.
        raw, final = score_after_filter(case, incoming, scenario.nodes, objects)
        assert {n: raw[n] for n in feasible} == plugin_scores(pod, "score", case.name, feasible)
        assert {n: final[n] for n in feasible} == plugin_scores(pod, "finalScore", case.name, feasible)
        return
    # The harness places pods only on the nodes it is given: nothing may sit on the others.
    assert all(p["spec"]["nodeName"] in feasible for p in scenario.running_pods)
    kw: dict[str, Any] = {"args": case.args, "pods": scenario.running_pods, "objects": objects}
    raw = score_nodes(case.plugin, incoming, nodes, normalize=False, **kw)
    normalized = score_nodes(case.plugin, incoming, nodes, **kw)
    assert raw == plugin_scores(pod, "score", case.name, feasible)
    assert {n: v * case.weight for n, v in normalized.items()} == plugin_scores(pod, "finalScore", case.name, feasible)


# --- the tests --------------------------------------------------------------------------------------------


def test_every_filter_or_score_plugin_has_at_least_three_cases() -> None:
    per_plugin: dict[str, int] = {}
    for case in CASES:
        per_plugin[case.name] = per_plugin.get(case.name, 0) + 1
    assert set(per_plugin) == {
        "NodeUnschedulable",
        "NodeName",
        "TaintToleration",
        "NodeAffinity",
        "NodePorts",
        "NodeResourcesFit",
        "NodeResourcesBalancedAllocation",
        "ImageLocality",
        "PodTopologySpread",
        "InterPodAffinity",
        "VolumeBinding",
        "VolumeRestrictions",
        "VolumeZone",
        "NodeVolumeLimits",
    }
    # NodeName: see test_a_pod_naming_its_node_is_never_scheduled.
    assert all(n >= 3 for p, n in per_plugin.items() if p != "NodeName"), per_plugin
    strategies = {(c.args or {}).get("scoringStrategy", {}).get("type") for c in NODE_RESOURCES_FIT if c.raw}
    assert strategies == {"LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"}
    cli = {c.name for c in CLI_CASES}
    assert cli == set(per_plugin)


@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
def test_simulate_gives_upstream_verdicts_and_scores(case: Case) -> None:
    pod, scenario = run_in_process(case)
    check_case(pod, case)
    check_against_harness(pod, case, scenario)


@pytest.fixture(scope="module")
def cli_results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, subprocess.CompletedProcess[str]]:
    """Every CLI case through ``python -m kubesched simulate``, a few subprocesses at a time."""
    base = tmp_path_factory.mktemp("via-cli")
    jobs = {case_id(c): write_case(c, base / f"case-{i}") for i, c in enumerate(CLI_CASES)}
    with ThreadPoolExecutor(max_workers=4) as pool:
        done = {key: pool.submit(run_cli, *paths) for key, paths in jobs.items()}
        return {key: fut.result() for key, fut in done.items()}


COMPARED = ("node", "phase", "message", "filter", "score", "finalScore", "preFilter", "postFilter")


@pytest.mark.parametrize("case", CLI_CASES, ids=[case_id(c) for c in CLI_CASES])
def test_the_command_line_reports_the_same(
    case: Case, cli_results: dict[str, subprocess.CompletedProcess[str]]
) -> None:
    proc = cli_results[case_id(case)]
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    result = json.loads(proc.stdout)
    assert result["summary"]["pods"] == 1
    assert result["summary"]["runningBefore"] == len(case.pods)
    pod = pod_under_test(result, case)
    check_case(pod, case)
    in_process, _ = run_in_process(case)
    assert {k: pod[k] for k in COMPARED} == {k: in_process[k] for k in COMPARED}


def test_a_pod_naming_its_node_is_never_scheduled(tmp_path: Path) -> None:
    """NodeName's rejections cannot happen end to end: a pod with spec.nodeName is bound already,
    so the scenario runs it there and no profile filters it."""
    case = NODE_NAME[0]
    named = make_pod("named").set("spec.nodeName", "baz")
    config, scenario = write_case(case, tmp_path)
    docs = [*scenario_docs(case)[:-1], obj(named)]
    scenario.write_text(yaml.safe_dump_all(docs, sort_keys=False))
    proc = run_cli(config, scenario)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["pods"] == []
    assert result["summary"]["pods"] == 0 and result["summary"]["runningBefore"] == 1


def test_case_ids_are_unique() -> None:
    ids = [case_id(c) for c in CASES]
    assert len(ids) == len(set(ids))


async def test_system_default_spreading_follows_the_owning_replicaset() -> None:
    """With the default profile, pods owned by a ReplicaSet (no constraints of their own) are spread
    over zones by PodTopologySpread's system defaults (zone maxSkew 5, hostname maxSkew 3); the
    ReplicaSet's selector decides which pods count."""
    from kubesched.config import load_config
    from kubesched.sim.run.simulate import simulate
    from kubesched.sim.scenario.reading import parse_scenario

    rs = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": "web", "namespace": "default", "uid": "rs-uid"},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": {"metadata": {"labels": {"app": "web"}}}},
    }
    nodes = [
        make_node(f"{z}-{i}").zone(z).capacity(cpu="8", memory="16Gi", pods="110") for z in ("a", "b") for i in range(2)
    ]
    pods = []
    for i in range(8):
        p = make_pod(f"web-{i}").label("app", "web").req(cpu="100m").obj()
        p["metadata"]["ownerReferences"] = [
            {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web", "uid": "rs-uid", "controller": True}
        ]
        pods.append(p)
    result = await simulate(load_config(None).profiles, parse_scenario([*(n.obj() for n in nodes), rs, *pods]))
    placed = {p["name"]: p["node"] for p in result.pods}
    assert all(placed.values())
    per_node = {n.obj()["metadata"]["name"]: 0 for n in nodes}
    for node in placed.values():
        per_node[node] += 1
    # Spread evenly: two per node, four per zone.
    assert sorted(per_node.values()) == [2, 2, 2, 2]
    web1 = next(p for p in result.pods if p["name"] == "web-1")
    assert all("PodTopologySpread" in scores for scores in web1["score"].values())
    # Without the ReplicaSet nothing selects the pods: no default constraints, no spread score.
    alone = await simulate(load_config(None).profiles, parse_scenario([*(n.obj() for n in nodes), *pods]))
    web1 = next(p for p in alone.pods if p["name"] == "web-1")
    assert not any("PodTopologySpread" in scores for scores in web1["score"].values())
