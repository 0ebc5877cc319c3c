"""NodeResourcesFit and the resource scorers on pods as 1.37 counts them: pod-level resources
(``spec.resources``, gate PodLevelResources) and in-place resizes (what the kubelet allocated),
through the plugins, the cache, the queueing hints, signing and ``kubesched simulate``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched.backend.cache import Cache, Snapshot
from kubesched.framework.events import QueueingHint
from kubesched.framework.features import FeatureGates
from kubesched.framework.interface import CycleState
from kubesched.framework.pod_requests import Counting
from kubesched.framework.status import Code
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.plugins.noderesources.balanced_allocation import NodeResourcesBalancedAllocation
from kubesched.plugins.noderesources.fit import NodeResourcesFit, NodeResourcesFitArgs, is_schedulable_after_pod_event
from kubesched.testing import make_node, make_pod
from kubesched.testing.harness import filter_nodes, score_nodes

Obj = dict[str, Any]
INSUFFICIENT_CPU = "Insufficient cpu"


def pod_level(name: str = "p", cpu: str | None = "3", memory: str | None = None, container_cpu: str = "1m") -> Obj:
    """The report's pod: pod-level requests and a container asking for (almost) nothing."""
    obj = make_pod(name).req(cpu=container_cpu).obj()
    requests = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v is not None}
    obj["spec"]["resources"] = {"requests": requests}
    return obj


def resized(name: str, spec_cpu: str, allocated_cpu: str, node: str = "n1", infeasible: bool = False) -> Obj:
    """A pod on ``node`` whose container the kubelet runs at ``allocated_cpu`` (a resize in flight)."""
    obj = make_pod(name).node(node).req(cpu=spec_cpu).obj()
    obj["status"]["containerStatuses"] = [{"name": "c0", "allocatedResources": {"cpu": allocated_cpu}}]
    if infeasible:
        obj["status"]["conditions"] = [{"type": "PodResizePending", "status": "True", "reason": "Infeasible"}]
    return obj


def two_cpu_node(name: str = "n1") -> Obj:
    return make_node(name).capacity(cpu="2", memory="4Gi", pods="110").obj()


class Handle:
    """What the plugins read of a handle here: the feature gates."""

    def __init__(self, **gates: bool) -> None:
        self.feature_gates = FeatureGates(gates)


def filter_with(gates: dict[str, bool], p: Obj, nodes: list[Obj], running: tuple[Obj, ...] = ()) -> dict[str, Any]:
    """Fit's PreFilter and Filter under ``gates``, the node's pods accounted as the scheduler
    with those gates accounts them."""
    handle = Handle(**gates)
    counting = Counting.of(handle.feature_gates)
    plugin = NodeResourcesFit(NodeResourcesFitArgs(), handle)
    infos = {n["metadata"]["name"]: NodeInfo(n) for n in nodes}
    for r in running:
        infos[r["spec"]["nodeName"]].add_pod(PodInfo(r, counting))
    state = CycleState()
    pi = PodInfo(p, counting)
    assert plugin.pre_filter(state, pi) is None
    return {name: plugin.filter(state, pi, ni) for name, ni in infos.items()}


# --- Filter ---------------------------------------------------------------------------------------


def test_pod_level_request_larger_than_the_node_is_insufficient_cpu() -> None:
    """The report: 3 CPUs at the pod level, a 1m container, a node of 2 CPUs."""
    status = filter_nodes(NodeResourcesFit, pod_level(), [two_cpu_node()])["n1"]
    assert status is not None
    assert status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert status.reasons == [INSUFFICIENT_CPU]


def test_pod_level_resources_off_counts_the_containers() -> None:
    assert filter_with({"PodLevelResources": False}, pod_level(), [two_cpu_node()]) == {"n1": None}
    status = filter_with({}, pod_level(), [two_cpu_node()])["n1"]
    assert status is not None and status.reasons == [INSUFFICIENT_CPU]


@pytest.mark.parametrize(
    "p, running, want",
    [
        # 1.5 CPUs taken by a pod-level request, 1 wanted: short, but a preemption could help.
        (
            make_pod("p").req(cpu="1").obj(),
            [{**pod_level("r", "1500m"), "spec": {**pod_level("r", "1500m")["spec"], "nodeName": "n1"}}],
            (Code.UNSCHEDULABLE, [INSUFFICIENT_CPU]),
        ),
        # The pod-level memory request is what memory counts; the containers' cpu still counts.
        (
            pod_level("p", cpu=None, memory="5Gi", container_cpu="1"),
            [],
            (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ["Insufficient memory"]),
        ),
        (
            pod_level("p", cpu=None, memory="1Gi", container_cpu="3"),
            [],
            (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [INSUFFICIENT_CPU]),
        ),
        (pod_level("p", cpu="2", memory="4Gi"), [], None),
        # A running pod resized up to 1.5 CPUs (allocated, not yet in its spec) holds them.
        (make_pod("p").req(cpu="1").obj(), [resized("r", "500m", "1500m")], (Code.UNSCHEDULABLE, [INSUFFICIENT_CPU])),
        # ... and one resized down holds its spec until the kubelet says otherwise.
        (make_pod("p").req(cpu="1").obj(), [resized("r", "1500m", "500m")], (Code.UNSCHEDULABLE, [INSUFFICIENT_CPU])),
        # An infeasible resize: the spec is not what runs, the allocation is.
        (make_pod("p").req(cpu="1").obj(), [resized("r", "1500m", "500m", infeasible=True)], None),
    ],
    ids=[
        "pod-level request on the node",
        "pod-level memory too large",
        "pod-level memory, containers' cpu too large",
        "pod-level requests fill the node exactly",
        "resized up, not yet in spec",
        "resized down, in spec only",
        "infeasible resize counts the allocation",
    ],
)
def test_filter(p: Obj, running: list[Obj], want: tuple[Code, list[str]] | None) -> None:
    status = filter_nodes(NodeResourcesFit, p, [two_cpu_node()], pods=running)["n1"]
    got = None if status is None else (status.code, list(status.reasons))
    assert got == want


# --- scoring ----------------------------------------------------------------------------------------

NODES = [
    make_node("n1").capacity(cpu="4", memory="8Gi", pods="110").obj(),
    make_node("n2").capacity(cpu="8", memory="8Gi", pods="110").obj(),
]


def test_least_allocated_scores_the_pod_level_request() -> None:
    # 4 CPUs at the pod level: n1 would be full (cpu 0 of 100), n2 half; memory is the
    # containers' default 200Mi on both.
    p = pod_level("p", cpu="4")
    mem = (8192 - 200) * 100 // 8192
    assert score_nodes(NodeResourcesFit, p, NODES, normalize=False) == {"n1": (0 + mem) // 2, "n2": (50 + mem) // 2}
    off = NodeResourcesFit(NodeResourcesFitArgs(), Handle(PodLevelResources=False))
    pi = PodInfo(p, off.counting)
    state = CycleState()
    off.pre_score(state, pi, [])
    # Gate off: the 1m container is what is scored (its cpu is set, so no 100m default).
    assert off.score(state, pi, NodeInfo(NODES[0])) == ((4000 - 1) * 100 // 4000 + mem) // 2


def test_most_allocated_scores_the_resized_pods_on_the_node() -> None:
    running = [resized("r", "500m", "2", node="n1")]
    args = {"scoringStrategy": {"type": "MostAllocated"}}
    got = score_nodes(
        NodeResourcesFit, make_pod("p").req(cpu="1", memory="1Gi").obj(), NODES, args, running, normalize=False
    )
    # n1: 2 CPUs allocated to the resized pod + 1 = 75%; memory 200Mi default + 1Gi.
    mem_n1 = (200 + 1024) * 100 // 8192
    mem_n2 = 1024 * 100 // 8192
    assert got == {"n1": (75 + mem_n1) // 2, "n2": (12 + mem_n2) // 2}


def test_balanced_allocation_uses_pod_level_requests() -> None:
    # Pod-level 4 CPUs and 4Gi on n1 (4 CPUs, 8Gi): fractions 1 and 0.5, std 0.25.
    p = pod_level("p", cpu="4", memory="4Gi")
    got = score_nodes(NodeResourcesBalancedAllocation, p, NODES[:1], normalize=False)
    assert got == {"n1": 75}


# --- the cache, hints and signatures ---------------------------------------------------------------


def test_cache_accounts_and_frees_what_the_pod_counted() -> None:
    cache = Cache()
    cache.add_node(two_cpu_node())
    running = {**pod_level("r", "1500m"), "spec": {**pod_level("r", "1500m")["spec"], "nodeName": "n1"}}
    cache.add_pod(PodInfo(running))
    snapshot = Snapshot()
    cache.update_snapshot(snapshot)
    ni = snapshot.get("n1")
    assert ni.requested.milli_cpu == 1500 and ni.non_zero_requested.milli_cpu == 1500
    # The kubelet allocates a resize up: the informer's update replaces the pod's count.
    grown = {**running, "status": {"allocatedResources": {"cpu": "2"}, "resources": {"requests": {"cpu": "2"}}}}
    cache.update_pod(PodInfo(grown))
    cache.update_snapshot(snapshot)
    assert snapshot.get("n1").requested.milli_cpu == 2000
    assert cache.remove_pod(PodInfo(grown).uid) is not None
    cache.update_snapshot(snapshot)
    assert snapshot.get("n1").requested.milli_cpu == 0 and snapshot.get("n1").non_zero_requested.milli_cpu == 0


@pytest.mark.parametrize(
    "old, new, want",
    [
        (resized("r", "1", "2"), resized("r", "1", "1"), QueueingHint.QUEUE),
        (resized("r", "1", "1"), resized("r", "1", "2"), QueueingHint.SKIP),
        (
            {**pod_level("r", "2"), "spec": {**pod_level("r", "2")["spec"], "nodeName": "n1"}},
            {**pod_level("r", "1"), "spec": {**pod_level("r", "1")["spec"], "nodeName": "n1"}},
            QueueingHint.QUEUE,
        ),
    ],
    ids=["allocation shrank", "allocation grew", "pod-level request shrank"],
)
def test_scale_down_hint_sees_resizes(old: Obj, new: Obj, want: QueueingHint) -> None:
    target = make_pod("target").req(cpu="1").obj()
    assert is_schedulable_after_pod_event(target, old, new) is want


def test_signatures_tell_pod_level_requests_apart() -> None:
    plugin = NodeResourcesFit(NodeResourcesFitArgs())
    balanced = NodeResourcesBalancedAllocation(None)
    a, b = PodInfo(pod_level("a", "1")), PodInfo(pod_level("b", "2"))
    assert plugin.sign_pod(a) != plugin.sign_pod(b)
    assert balanced.sign_pod(a) != balanced.sign_pod(b)
    plain = PodInfo(make_pod("c").req(cpu="1").obj())
    assert "CountedRequests" not in plugin.sign_pod(plain)


# --- kubesched simulate ------------------------------------------------------------------------------


def test_simulate_reports_the_pod_level_request(tmp_path: Path) -> None:
    scenario = [
        two_cpu_node(),
        {**pod_level("big"), "apiVersion": "v1", "kind": "Pod"},
        {**make_pod("fits").req(cpu="1").obj(), "apiVersion": "v1", "kind": "Pod"},
    ]
    scenario[0] = {**scenario[0], "apiVersion": "v1", "kind": "Node"}
    path = tmp_path / "scenario.yaml"
    path.write_text(yaml.safe_dump_all(scenario))
    out = subprocess.run(
        [sys.executable, "-m", "kubesched", "simulate", "--scenario", str(path), "--output", "json", "--outcomes-only"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    pods = {p["name"]: p for p in json.loads(out.stdout)["pods"]}
    assert pods["big"]["phase"] == "Unschedulable"
    assert pods["big"]["message"].startswith("0/1 nodes are available: 1 Insufficient cpu.")
    assert pods["fits"]["node"] == "n1"
