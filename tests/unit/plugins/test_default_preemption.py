"""DefaultPreemption: upstream's default_preemption_test cases (TestPostFilter, TestDryRunPreemption,
TestSelectBestCandidate, TestPodEligibleToPreemptOthers, TestPreempt), Args validation, and the
preparation side effects (victims deleted or rejected, events, nominations cleared)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import pytest
from pydantic import ValidationError

from kubesched.backend.cache import Snapshot
from kubesched.cluster.memory import InMemoryCluster
from kubesched.cluster.store import Store
from kubesched.framework.features import FeatureGates
from kubesched.framework.interface import CycleState
from kubesched.framework.preemption_candidates import (
    Candidate,
    aggregate_errors,
    fit_error_message,
    pick_one_node_for_preemption,
)
from kubesched.framework.status import Code, Status
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.plugins.noderesources.fit import NodeResourcesFit
from kubesched.plugins.preemption.default_preemption import DefaultPreemption, DefaultPreemptionArgs
from kubesched.runtime.framework import Collaborators, Framework, PluginRef, ProfileSpec, WaitingPod
from kubesched.runtime.registry import Registry
from kubesched.testing import make_node, make_pod
from kubesched.testing.harness import ObjectListers, as_node_infos

Obj = dict[str, Any]

NEG, LOW, MID, HIGH, VERY_HIGH = -100, 0, 100, 1000, 10000
SMALL = {"cpu": "100m", "memory": "100"}
MEDIUM = {"cpu": "200m", "memory": "200"}
LARGE = {"cpu": "300m", "memory": "300"}
VERY_LARGE = {"cpu": "500m", "memory": "500"}
ONE_POD = {"pods": "1"}
NODE_RES = {"cpu": "200m", "memory": "400"}

VIOLATING_KEY = "test.kubernetes.io/is-violating-pdb"


def t(n: int) -> str:
    """A start time ``n`` seconds after the epoch (upstream uses nanoseconds; only order matters)."""
    return f"1970-01-01T00:00:{n:02d}Z"


def pod(
    name: str,
    priority: int | None = None,
    node: str = "",
    req: dict[str, str] | None = None,
    labels: dict[str, str] | None = None,
    start: str = "",
    namespace: str = "default",
) -> Obj:
    b = make_pod(name, namespace).uid(name)
    if priority is not None:
        b.priority(priority)
    if req:
        b.req(**req)
    if labels:
        b.labels(**labels)
    if node:
        b.node(node)
    if start:
        b.set("status.startTime", start)
    return b.obj()


def node(name: str, capacity: dict[str, str] | None = None, labels: dict[str, str] | None = None) -> Obj:
    """A node as upstream's ``st.MakeNode().Capacity(...)``: 32 pods unless said otherwise."""
    b = make_node(name).capacity(**{"pods": "32", **(capacity or {})})
    for k, v in (labels or {}).items():
        b.label(k, v)
    return b.obj()


def pdb(selector: dict[str, str], allowed: int = 0, disrupted: Iterable[str] = (), name: str = "pdb") -> Obj:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"selector": {"matchLabels": selector}},
        "status": {
            "disruptionsAllowed": allowed,
            "disruptedPods": {p: "2024-01-01T00:00:00Z" for p in disrupted},
        },
    }


# --- test plugins (upstream's testing/framework fakes) -------------------------------------------


class ErroringExtensions:
    """PreFilter extensions that fail on nodes labelled ``error=true`` (upstream's TestPlugin)."""

    name = "test-plugin"

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    def pre_filter(self, state: CycleState, pod: PodInfo) -> None:
        return None

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> None:
        return None

    def add_pod(self, state: CycleState, pod: PodInfo, to_add: PodInfo, node: NodeInfo) -> Status | None:
        if node.labels.get("error") == "true":
            return Status(Code.ERROR, f"failed to add pod: {pod.name}")
        return None

    def remove_pod(self, state: CycleState, pod: PodInfo, to_remove: PodInfo, node: NodeInfo) -> Status | None:
        if node.labels.get("error") == "true":
            return Status(Code.ERROR, f"failed to remove pod: {pod.name}")
        return None


class FakeFilter:
    """Counts Filter calls; rejects every node with ``rc`` when it is not Success."""

    name = "FakeFilter"
    rc = Code.SUCCESS
    calls = 0

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        type(self).calls += 1
        return None if self.rc is Code.SUCCESS else Status(self.rc)


class TrueFilter:
    name = "TrueFilter"

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        return None


class FalseFilter:
    name = "FalseFilter"

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        return Status(Code.UNSCHEDULABLE, "Nodes failed the fake plugin")


class MatchFilter:
    """Fits only on the node named like the pod."""

    name = "MatchFilter"

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        return None if pod.name == node.name else Status(Code.UNSCHEDULABLE, "Nodes failed the fake plugin")


class FakeNominator:
    def __init__(self, by_node: dict[str, list[PodInfo]]) -> None:
        self.by_node = by_node

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        return list(self.by_node.get(node_name, []))

    def has_nominated(self, node_name: str) -> bool:
        return bool(self.by_node.get(node_name))


# --- harness ------------------------------------------------------------------------------------


@dataclass
class Env:
    fw: Framework
    plugin: DefaultPreemption
    store: Store
    cluster: InMemoryCluster
    infos: list[NodeInfo]

    def pod_names(self) -> set[str]:
        items, _ = self.store.list("Pod")
        return {p["metadata"]["name"] for p in items}

    def stored(self, name: str) -> Obj:
        return self.store.get("Pod", "default", name)


def build(
    nodes: Sequence[Obj],
    pods: Sequence[Obj],
    *,
    preemptor: Obj | None = None,
    filters: Sequence[type] = (NodeResourcesFit,),
    pre_filter_only: Sequence[type] = (),
    args: dict[str, Any] | None = None,
    objects: Iterable[Obj] = (),
    async_preemption: bool = True,
) -> Env:
    """A partial profile: ``filters`` at PreFilter (when they have one) and Filter,
    ``pre_filter_only`` at PreFilter, DefaultPreemption at PostFilter; the pods stored in an
    in-memory cluster so that deleted victims can be observed."""
    store = Store()
    for p in [*([preemptor] if preemptor else []), *pods]:
        store.create("Pod", p)
    cluster = InMemoryCluster(store)
    registry = Registry()
    for cls in (DefaultPreemption, *filters, *pre_filter_only):
        registry.register(cls, cls.name)  # type: ignore[attr-defined]
    pre_filter = [c for c in (*filters, *pre_filter_only) if callable(getattr(c, "pre_filter", None))]
    points = {
        "preFilter": [PluginRef(c.name) for c in pre_filter],  # type: ignore[attr-defined]
        "filter": [PluginRef(c.name) for c in filters],  # type: ignore[attr-defined]
        "postFilter": [PluginRef(DefaultPreemption.name)],
    }
    plugin_args = {DefaultPreemption.name: DefaultPreemptionArgs.model_validate(args)} if args else {}
    fw = Framework(
        ProfileSpec("default-scheduler", points, plugin_args),
        registry,
        Collaborators(cluster=cluster),
        partial=True,
        feature_gates=FeatureGates({"SchedulerAsyncPreemption": async_preemption}),
    )
    infos = as_node_infos(nodes, pods)
    fw.set_snapshot(Snapshot(infos))
    fw.listers = ObjectListers(objects)
    plugin = fw.plugins[DefaultPreemption.name]
    return Env(fw, plugin, store, cluster, infos)


async def prefiltered(env: Env, preemptor: Obj) -> tuple[CycleState, PodInfo]:
    state = CycleState()
    pi = PodInfo(preemptor)
    _, status, _ = await env.fw.run_pre_filter(state, pi)
    assert status is None or status.is_success(), status
    return state, pi


async def run_post_filter(
    env: Env, preemptor: Obj, statuses: dict[str, Code] | None = None
) -> tuple[str | None, Status]:
    """PreFilter, then Filter on every node unless ``statuses`` gives each node's code, then
    PostFilter: ``(nominated node or None, status)``."""
    state, pi = await prefiltered(env, preemptor)
    if statuses is None:
        filtered: dict[str, Status] = {}
        for ni in env.infos:
            st = env.fw.run_filter(state, pi, ni)
            if st is not None:
                filtered[ni.name] = st
    else:
        filtered = {name: Status(code) for name, code in statuses.items()}
    result, status = await env.fw.run_post_filter(state, pi, filtered)
    await env.fw.wait_background()  # async preemption: the victims' deletion
    return (result.nominated_node_name if result is not None else None), status


# --- TestPostFilter -----------------------------------------------------------------------------

U, UU = Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE


def found(node: str, victims: int) -> Status:
    """A successful PostFilter's status (1.37): where preemption found room, and for how many."""
    return Status(
        Code.SUCCESS, f"preemption: found a potential placement for pod on node {node}, preempting {victims} victims"
    )


POST_FILTER_CASES = [
    pytest.param(
        pod("p", HIGH),
        [pod("p1", node="node1")],
        [node("node1", ONE_POD)],
        {"node1": U},
        [],
        "node1",
        found("node1", 1),
        id="pod with higher priority can be made schedulable",
    ),
    pytest.param(
        pod("p"),
        [pod("p1", node="node1")],
        [node("node1", ONE_POD)],
        {"node1": U},
        [],
        "",
        Status(U, "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."),
        id="pod with tied priority is still unschedulable",
    ),
    pytest.param(
        pod("p", HIGH),
        [pod("p1", node="node1")],
        [node("node1", ONE_POD)],
        {"node1": UU},
        [],
        "",
        Status(U, "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."),
        id="preemption should respect filteredNodesStatuses",
    ),
    pytest.param(
        pod("p", HIGH),
        [pod("p1", node="node1")],
        [node("node1", ONE_POD)],
        {},
        [],
        "",
        Status(U, "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."),
        id="absent status means UnschedulableAndUnresolvable",
    ),
    pytest.param(
        pod("p", MID),
        [pod("p1", HIGH, node="node1"), pod("p2", LOW, node="node2")],
        [node("node1", ONE_POD), node("node2", ONE_POD)],
        {"node1": U, "node2": U},
        [],
        "node2",
        found("node2", 1),
        id="pod can be made schedulable on one node",
    ),
    pytest.param(
        pod("p", VERY_HIGH),
        [
            pod("p1", HIGH, node="node1", labels={VIOLATING_KEY: "non-violating"}),
            pod("p2", LOW, node="node1", labels={VIOLATING_KEY: "violating"}),
            pod("p3", MID, node="node2", labels={VIOLATING_KEY: "violating"}),
        ],
        [node("node1", ONE_POD), node("node2", ONE_POD)],
        {"node1": U, "node2": U},
        [
            pdb({VIOLATING_KEY: "violating"}, allowed=0, name="violating-pdb"),
            pdb({VIOLATING_KEY: "non-violating"}, allowed=2**31 - 1, name="non-violating-pdb"),
        ],
        "node2",
        found("node2", 1),
        id="pod can be made schedulable on minHighestPriority node",
    ),
    pytest.param(
        pod("p", HIGH, req=LARGE),
        [pod("p1", node="node1"), pod("p2", node="node2")],
        [node("node1", NODE_RES), node("node2", NODE_RES)],
        {"node1": U, "node2": U},
        [],
        "",
        Status(U, "preemption: 0/2 nodes are available: 2 Insufficient cpu."),
        id="no candidate nodes found, no enough resource after removing low priority pods",
    ),
    pytest.param(
        pod("p", HIGH, req=LARGE),
        [pod("p1", HIGH, node="node1"), pod("p2", node="node2"), pod("p3", HIGH, node="node3")],
        [node("node1", ONE_POD), node("node2", NODE_RES), node("node3", ONE_POD)],
        {"node1": U, "node2": U, "node3": U},
        [],
        "",
        Status(
            U,
            "preemption: 0/3 nodes are available: 1 Insufficient cpu, 2 No preemption victims found for incoming pod.",
        ),
        id="no candidate nodes found with mixed reasons",
    ),
    pytest.param(
        pod("p", HIGH, req=LARGE),
        [pod("p1", node="node1"), pod("p2", node="node2")],
        [node(f"node{i}", NODE_RES) for i in range(1, 5)],
        {"node1": U, "node2": U, "node4": UU},
        [],
        "",
        Status(
            U, "preemption: 0/4 nodes are available: 2 Insufficient cpu, 2 Preemption is not helpful for scheduling."
        ),
        id="2 UnschedulableAndUnresolvable nodes and 2 nodes without enough CPU",
    ),
]


@pytest.mark.parametrize("preemptor,pods,nodes,statuses,pdbs,want_node,want_status", POST_FILTER_CASES)
async def test_post_filter(
    preemptor: Obj,
    pods: list[Obj],
    nodes: list[Obj],
    statuses: dict[str, Code],
    pdbs: list[Obj],
    want_node: str | None,
    want_status: Status,
) -> None:
    env = build(nodes, pods, preemptor=preemptor, pre_filter_only=[ErroringExtensions], objects=pdbs)
    got_node, got_status = await run_post_filter(env, preemptor, statuses)
    assert got_status == want_status
    # "": no candidate anywhere, and the pod's nomination is to be cleared (1.37's
    # PostFilterResult with an empty nominated node); None: leave it as it is.
    assert got_node == want_node
    if not want_node:
        assert env.pod_names() == {preemptor["metadata"]["name"]} | {p["metadata"]["name"] for p in pods}


async def test_post_filter_prefilter_extension_error_on_only_node() -> None:
    preemptor = pod("p", HIGH, req=LARGE)
    env = build(
        [node("node1", LARGE, labels={"error": "true"})],
        [pod("p1", node="node1")],
        preemptor=preemptor,
        pre_filter_only=[ErroringExtensions],
    )
    got_node, status = await run_post_filter(env, preemptor, {"node1": U})
    assert got_node is None
    assert status.code is Code.ERROR
    assert status.reasons == [
        'preemption: running RemovePod on PreFilter plugin "test-plugin": failed to remove pod: p'
    ]
    assert "p1" in env.pod_names()


async def test_post_filter_one_node_errors_the_other_is_nominated() -> None:
    preemptor = pod("p", HIGH, req=LARGE)
    env = build(
        [node("node1", LARGE, labels={"error": "true"}), node("node2", LARGE)],
        [pod("p1", node="node1"), pod("p2", node="node2", req=MEDIUM)],
        preemptor=preemptor,
        pre_filter_only=[ErroringExtensions],
    )
    got_node, status = await run_post_filter(env, preemptor, {"node1": U, "node2": U})
    assert (got_node, status) == ("node2", found("node2", 1))
    assert env.pod_names() == {"p", "p1"}


async def test_post_filter_preemption_policy_never() -> None:
    preemptor = make_pod("p").uid("p").priority(HIGH).preemption_policy("Never").obj()
    env = build([node("node1", ONE_POD)], [pod("p1", node="node1")], preemptor=preemptor)
    got_node, status = await run_post_filter(env, preemptor, {"node1": U})
    assert got_node is None
    assert status == Status(U, "preemption: not eligible due to preemptionPolicy=Never.")
    assert "p1" in env.pod_names()


# --- TestDryRunPreemption -------------------------------------------------------------------------


@dataclass
class DryRunCase:
    id: str
    nodes: list[str]
    preemptors: list[Obj]
    pods: list[Obj]
    expected: list[dict[str, tuple[list[str], int]]]
    filter_calls: list[int]
    filters: tuple[type, ...] = (NodeResourcesFit,)
    fake_rc: Code = Code.SUCCESS
    pdbs: tuple[Obj, ...] = ()
    args: dict[str, int] | None = None
    offsets: tuple[int, ...] = (0,)


FOO = {"app": "foo"}

DRY_RUN_CASES = [
    DryRunCase(
        "a pod that does not fit on any node",
        ["node1", "node2"],
        [pod("p", HIGH)],
        [pod("p1", MID, "node1"), pod("p2", MID, "node2")],
        [{}],
        [2],
        filters=(FalseFilter,),
    ),
    DryRunCase(
        "a pod that fits with no preemption",
        ["node1", "node2"],
        [pod("p", HIGH)],
        [pod("p1", MID, "node1"), pod("p2", MID, "node2")],
        [{}],
        [2],
        filters=(TrueFilter,),
        fake_rc=Code.UNSCHEDULABLE,
    ),
    DryRunCase(
        "a pod that fits on one node with no preemption",
        ["node1", "node2"],
        [pod("node1", HIGH)],
        [pod("p1", MID, "node1"), pod("p2", MID, "node2")],
        [{}],
        [2],
        filters=(MatchFilter,),
        fake_rc=Code.UNSCHEDULABLE,
    ),
    DryRunCase(
        "a pod that fits on both nodes when lower priority pods are preempted",
        ["node1", "node2"],
        [pod("p", HIGH, req=LARGE)],
        [pod("p1", MID, "node1", LARGE), pod("p2", MID, "node2", LARGE)],
        [{"node1": (["p1"], 0), "node2": (["p2"], 0)}],
        [4],
    ),
    DryRunCase(
        "other pods running are higher priority, no preemption would happen",
        ["node1", "node2"],
        [pod("p", LOW, req=LARGE)],
        [pod("p1", MID, "node1", LARGE), pod("p2", MID, "node2", LARGE)],
        [{}],
        [0],
    ),
    DryRunCase(
        "medium priority pod is preempted, but lower priority one stays as it is small",
        ["node1", "node2"],
        [pod("p", HIGH, req=LARGE)],
        [pod("p1.1", LOW, "node1", SMALL), pod("p1.2", MID, "node1", LARGE), pod("p2", MID, "node2", LARGE)],
        [{"node1": (["p1.2"], 0), "node2": (["p2"], 0)}],
        [5],
    ),
    DryRunCase(
        "mixed priority pods are preempted",
        ["node1", "node2"],
        [pod("p", HIGH, req=LARGE)],
        [
            pod("p1.1", MID, "node1", SMALL),
            pod("p1.2", LOW, "node1", SMALL),
            pod("p1.3", MID, "node1", MEDIUM),
            pod("p1.4", HIGH, "node1", SMALL),
            pod("p2", HIGH, "node2", LARGE),
        ],
        [{"node1": (["p1.2", "p1.3"], 0)}],
        [4],
    ),
    DryRunCase(
        "mixed priority pods are preempted, pick later StartTime one when priorities are equal",
        ["node1", "node2"],
        [pod("p", HIGH, req=LARGE)],
        [
            pod("p1.1", LOW, "node1", SMALL, start=t(5)),
            pod("p1.2", LOW, "node1", SMALL, start=t(4)),
            pod("p1.3", MID, "node1", MEDIUM, start=t(3)),
            pod("p1.4", HIGH, "node1", SMALL, start=t(2)),
            pod("p2", HIGH, "node2", LARGE, start=t(1)),
        ],
        [{"node1": (["p1.1", "p1.3"], 0)}],
        [4],
    ),
    DryRunCase(
        "get Unschedulable in the preemption phase when the filter plugins filtering the nodes",
        ["node1", "node2"],
        [pod("p", HIGH, req=LARGE)],
        [pod("p1", MID, "node1", LARGE), pod("p2", MID, "node2", LARGE)],
        [{}],
        [2],
        fake_rc=Code.UNSCHEDULABLE,
    ),
    DryRunCase(
        "preemption with violation of same pdb",
        ["node1"],
        [pod("p", HIGH, req=VERY_LARGE)],
        [pod("p1.1", MID, "node1", MEDIUM, FOO), pod("p1.2", MID, "node1", MEDIUM, FOO)],
        [{"node1": (["p1.1", "p1.2"], 1)}],
        [3],
        pdbs=(pdb(FOO, allowed=1),),
    ),
    DryRunCase(
        "pdb with a processed eviction of a pod that is not a victim",
        ["node1"],
        [pod("p", HIGH, req=VERY_LARGE)],
        [pod("p1.1", MID, "node1", MEDIUM, FOO), pod("p1.2", MID, "node1", MEDIUM, FOO)],
        [{"node1": (["p1.1", "p1.2"], 1)}],
        [3],
        pdbs=(pdb(FOO, allowed=1, disrupted=["p2"]),),
    ),
    DryRunCase(
        "pdb with a processed eviction of a victim",
        ["node1"],
        [pod("p", HIGH, req=VERY_LARGE)],
        [pod("p1.1", MID, "node1", MEDIUM, FOO), pod("p1.2", MID, "node1", MEDIUM, FOO)],
        [{"node1": (["p1.1", "p1.2"], 0)}],
        [3],
        pdbs=(pdb(FOO, allowed=1, disrupted=["p1.2"]),),
    ),
    DryRunCase(
        "the victim in DisruptedPods is treated as non-violating",
        ["node1"],
        [pod("p", HIGH, req=VERY_LARGE)],
        [
            pod("p1.1", MID, "node1", MEDIUM, FOO),
            pod("p1.2", MID, "node1", MEDIUM, FOO),
            pod("p1.3", MID, "node1", MEDIUM, FOO),
        ],
        [{"node1": (["p1.1", "p1.2", "p1.3"], 1)}],
        [4],
        pdbs=(pdb(FOO, allowed=1, disrupted=["p1.3"]),),
    ),
    DryRunCase(
        "all nodes are possible candidates, but DefaultPreemptionArgs limits to 2",
        [f"node{i}" for i in range(1, 6)],
        [pod("p", HIGH, req=LARGE)],
        [pod(f"p{i}", MID, f"node{i}", LARGE) for i in range(1, 6)],
        [{"node1": (["p1"], 0), "node5": (["p5"], 0)}],
        [4],
        args={"minCandidateNodesPercentage": 40, "minCandidateNodesAbsolute": 1},
        offsets=(4,),
    ),
    DryRunCase(
        "some nodes are not possible candidates, DefaultPreemptionArgs limits to 2",
        [f"node{i}" for i in range(1, 6)],
        [pod("p", HIGH, req=LARGE)],
        [pod(f"p{i}", VERY_HIGH if i in (2, 5) else MID, f"node{i}", LARGE) for i in range(1, 6)],
        [{"node1": (["p1"], 0), "node3": (["p3"], 0)}],
        [4],
        args={"minCandidateNodesPercentage": 40, "minCandidateNodesAbsolute": 1},
        offsets=(4,),
    ),
    DryRunCase(
        "preemption offset across multiple scheduling cycles and wrap around",
        [f"node{i}" for i in range(1, 6)],
        [pod("tp1", HIGH, req=LARGE), pod("tp2", HIGH, req=LARGE), pod("tp3", HIGH, req=LARGE)],
        [pod(f"p{i}", MID, f"node{i}", LARGE) for i in range(1, 6)],
        [
            {"node1": (["p1"], 0), "node5": (["p5"], 0)},
            {"node2": (["p2"], 0), "node3": (["p3"], 0)},
            {"node4": (["p4"], 0), "node5": (["p5"], 0)},
        ],
        [4, 4, 4],
        args={"minCandidateNodesPercentage": 40, "minCandidateNodesAbsolute": 1},
        offsets=(4, 1, 3),
    ),
    DryRunCase(
        "preemption looks past numCandidates until a non-PDB violating node is found",
        [f"node{i}" for i in range(1, 6)],
        [pod("p", HIGH, req=LARGE)],
        [pod(f"p{i}", MID, f"node{i}", LARGE, FOO if i in (1, 2, 5) else None) for i in range(1, 6)],
        [{"node1": (["p1"], 1), "node3": (["p3"], 0), "node5": (["p5"], 1)}],
        [8],
        pdbs=(pdb(FOO, allowed=0),),
        args={"minCandidateNodesPercentage": 40, "minCandidateNodesAbsolute": 2},
        offsets=(4,),
    ),
]


@pytest.mark.parametrize("case", DRY_RUN_CASES, ids=lambda c: c.id)
async def test_dry_run_preemption(case: DryRunCase) -> None:
    FakeFilter.calls = 0
    FakeFilter.rc = case.fake_rc
    nodes = [node(n, VERY_LARGE) for n in case.nodes]
    env = build(nodes, case.pods, filters=(FakeFilter, *case.filters), args=case.args)
    offsets = iter(case.offsets)
    env.plugin.offset_source = lambda n: next(offsets)
    infos = sorted(env.infos, key=lambda ni: ni.name)
    previous = 0
    for cycle, preemptor in enumerate(case.preemptors):
        state, pi = await prefiltered(env, preemptor)
        offset, num = env.plugin.get_offset_and_num_candidates(len(infos), pi)
        got, _, _ = await env.plugin.dry_run_preemption(state, pi, infos, list(case.pdbs), offset, num)
        candidates = {c.name: (sorted(v.name for v in c.victims), c.num_pdb_violations) for c in got}
        assert candidates == case.expected[cycle], f"cycle {cycle}"
        assert FakeFilter.calls - previous == case.filter_calls[cycle], f"cycle {cycle}"
        previous = FakeFilter.calls
    # The dry run works on copies: the snapshot still holds every pod.
    assert sum(len(ni.pods) for ni in env.infos) == len(case.pods)


async def test_dry_run_preemption_resolves_topology_spread() -> None:
    module = pytest.importorskip("kubesched.plugins.podtopologyspread.pod_topology_spread")
    spread = module.PodTopologySpread
    if not callable(getattr(spread, "add_pod", None)):
        pytest.skip("PodTopologySpread has no PreFilter extensions yet")
    foo = {"foo": ""}
    nodes = [
        node("node-a", VERY_LARGE, {"zone": "zone1", "hostname": "node-a"}),
        node("node-b", VERY_LARGE, {"zone": "zone1", "hostname": "node-b"}),
        node("node-x", VERY_LARGE, {"zone": "zone2", "hostname": "node-x"}),
    ]
    pods = [
        pod("pod-a1", MID, "node-a", labels=foo),
        pod("pod-a2", LOW, "node-a", labels=foo),
        pod("pod-b1", LOW, "node-b", labels=foo),
        pod("pod-x1", HIGH, "node-x", labels=foo),
        pod("pod-x2", HIGH, "node-x", labels=foo),
    ]
    selector = {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}
    preemptor = pod("p", HIGH, labels=foo)
    preemptor["spec"]["topologySpreadConstraints"] = [
        {"maxSkew": 1, "topologyKey": key, "whenUnsatisfiable": "DoNotSchedule", "labelSelector": selector}
        for key in ("zone", "hostname")
    ]
    FakeFilter.calls = 0
    FakeFilter.rc = Code.SUCCESS
    env = build(nodes, pods, filters=(FakeFilter, spread))
    state, pi = await prefiltered(env, preemptor)
    got, _, _ = await env.plugin.dry_run_preemption(state, pi, env.infos, [], 0, 3)
    assert {c.name: [v.name for v in c.victims] for c in got} == {"node-a": ["pod-a2"], "node-b": ["pod-b1"]}
    assert FakeFilter.calls == 5


async def test_dry_run_preemption_evicts_pod_with_anti_affinity() -> None:
    module = pytest.importorskip("kubesched.plugins.interpodaffinity.inter_pod_affinity")
    affinity = module.InterPodAffinity
    if not callable(getattr(affinity, "add_pod", None)):
        pytest.skip("InterPodAffinity has no PreFilter extensions yet")
    foo = {"foo": ""}
    anti = pod("p1.1", LOW, "node1", SMALL, labels=foo)
    anti["spec"]["affinity"] = {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {
                    "labelSelector": {"matchExpressions": [{"key": "foo", "operator": "Exists"}]},
                    "topologyKey": "hostname",
                }
            ]
        }
    }
    pods = [
        anti,
        pod("p1.2", MID, "node1", SMALL),
        pod("p1.3", HIGH, "node1", SMALL),
        pod("p2", HIGH, "node2", SMALL),
    ]
    nodes = [node(n, VERY_LARGE, {"hostname": n}) for n in ("node1", "node2")]
    FakeFilter.calls = 0
    FakeFilter.rc = Code.SUCCESS
    env = build(nodes, pods, filters=(FakeFilter, NodeResourcesFit, affinity))
    state, pi = await prefiltered(env, pod("p", HIGH, req=SMALL, labels=foo))
    got, _, _ = await env.plugin.dry_run_preemption(state, pi, env.infos, [], 0, 2)
    assert {c.name: [v.name for v in c.victims] for c in got} == {"node1": ["p1.1"]}
    assert FakeFilter.calls == 3


# --- TestSelectBestCandidate --------------------------------------------------------------------

SELECT_CASES = [
    pytest.param(
        ["node1", "node2"],
        pod("p", HIGH, req=LARGE),
        [pod("p1", MID, "node1", LARGE, start=t(0)), pod("p2", MID, "node2", LARGE, start=t(0))],
        {"node1", "node2"},
        id="a pod that fits on both nodes when lower priority pods are preempted",
    ),
    pytest.param(
        ["node1", "node2", "node3"],
        pod("p", HIGH, req=VERY_LARGE),
        [
            pod("p1.1", MID, "node1", MEDIUM, start=t(0)),
            pod("p1.2", MID, "node1", LARGE, start=t(0)),
            pod("p2.1", MID, "node2", MEDIUM, start=t(0)),
            pod("p2.2", LOW, "node2", MEDIUM, start=t(0)),
            pod("p3.1", LOW, "node3", MEDIUM, start=t(0)),
            pod("p3.2", LOW, "node3", MEDIUM, start=t(0)),
        ],
        {"node3"},
        id="node with min highest priority pod is picked",
    ),
    pytest.param(
        ["node1", "node2", "node3"],
        pod("p", HIGH, req=VERY_LARGE),
        [
            pod("p1.1", MID, "node1", MEDIUM, start=t(0)),
            pod("p1.2", MID, "node1", LARGE, start=t(0)),
            pod("p2.1", MID, "node2", LARGE, start=t(0)),
            pod("p2.2", LOW, "node2", MEDIUM, start=t(0)),
            pod("p3.1", MID, "node3", MEDIUM, start=t(0)),
            pod("p3.2", MID, "node3", MEDIUM, start=t(0)),
        ],
        {"node2"},
        id="when highest priorities are the same, minimum sum of priorities is picked",
    ),
    pytest.param(
        ["node1", "node2", "node3"],
        pod("p", HIGH, req=VERY_LARGE),
        [
            pod("p1.1", MID, "node1", SMALL, start=t(0)),
            pod("p1.2", NEG, "node1", SMALL, start=t(0)),
            pod("p1.3", MID, "node1", SMALL, start=t(0)),
            pod("p1.4", NEG, "node1", SMALL, start=t(0)),
            pod("p2.1", MID, "node2", LARGE, start=t(0)),
            pod("p2.2", NEG, "node2", MEDIUM, start=t(0)),
            pod("p3.1", MID, "node3", MEDIUM, start=t(0)),
            pod("p3.2", NEG, "node3", SMALL, start=t(0)),
            pod("p3.3", LOW, "node3", SMALL, start=t(0)),
        ],
        {"node2"},
        id="when highest priority and sum are the same, minimum number of pods is picked",
    ),
    pytest.param(
        ["node1", "node2", "node3"],
        pod("p", HIGH, req=VERY_LARGE),
        [
            pod("p1.1", MID, "node1", SMALL, start=t(0)),
            pod("p1.2", NEG, "node1", SMALL, start=t(0)),
            pod("p1.3", NEG, "node1", SMALL, start=t(0)),
            pod("p2.1", MID, "node2", LARGE, start=t(0)),
            pod("p2.2", NEG, "node2", MEDIUM, start=t(0)),
            pod("p3.1", MID, "node3", MEDIUM, start=t(0)),
            pod("p3.2", NEG, "node3", SMALL, start=t(0)),
            pod("p3.3", LOW, "node3", SMALL, start=t(0)),
        ],
        {"node2"},
        id="sum of adjusted priorities is considered",
    ),
    pytest.param(
        ["node1", "node2", "node3", "node4"],
        pod("p", VERY_HIGH, req=VERY_LARGE),
        [
            pod("p1.1", MID, "node1", SMALL, start=t(0)),
            pod("p1.2", LOW, "node1", SMALL, start=t(0)),
            pod("p1.3", LOW, "node1", SMALL, start=t(0)),
            pod("p2.1", HIGH, "node2", LARGE, start=t(0)),
            pod("p3.1", MID, "node3", MEDIUM, start=t(0)),
            pod("p3.2", LOW, "node3", SMALL, start=t(0)),
            pod("p3.3", LOW, "node3", SMALL, start=t(0)),
            pod("p3.4", LOW, "node3", MEDIUM, start=t(0)),
            pod("p4.1", MID, "node4", MEDIUM, start=t(0)),
            pod("p4.2", MID, "node4", SMALL, start=t(0)),
            pod("p4.3", MID, "node4", SMALL, start=t(0)),
            pod("p4.4", NEG, "node4", SMALL, start=t(0)),
        ],
        {"node1"},
        id="non-overlapping lowest high priority, sum priorities, and number of pods",
    ),
    pytest.param(
        ["node1", "node2", "node3"],
        pod("p", HIGH, req=VERY_LARGE),
        [
            pod("p1.1", MID, "node1", MEDIUM, start=t(2)),
            pod("p1.2", MID, "node1", MEDIUM, start=t(2)),
            pod("p2.1", MID, "node2", MEDIUM, start=t(3)),
            pod("p2.2", MID, "node2", MEDIUM, start=t(3)),
            pod("p3.1", MID, "node3", MEDIUM, start=t(1)),
            pod("p3.2", MID, "node3", MEDIUM, start=t(1)),
        ],
        {"node2"},
        id="same priority, same number of victims, different start time for each node's pod",
    ),
    pytest.param(
        ["node1", "node2", "node3"],
        pod("p", HIGH, req=VERY_LARGE),
        [
            pod("p1.1", MID, "node1", MEDIUM, start=t(4)),
            pod("p1.2", MID, "node1", MEDIUM, start=t(2)),
            pod("p2.1", MID, "node2", MEDIUM, start=t(5)),
            pod("p2.2", MID, "node2", MEDIUM, start=t(1)),
            pod("p3.1", MID, "node3", MEDIUM, start=t(3)),
            pod("p3.2", MID, "node3", MEDIUM, start=t(6)),
        ],
        {"node3"},
        id="same priority, same number of victims, different start time for all pods",
    ),
    pytest.param(
        ["node1", "node2", "node3"],
        pod("p", HIGH, req=VERY_LARGE),
        [
            pod("p1.1", LOW, "node1", MEDIUM, start=t(4)),
            pod("p1.2", MID, "node1", MEDIUM, start=t(2)),
            pod("p2.1", MID, "node2", MEDIUM, start=t(6)),
            pod("p2.2", LOW, "node2", MEDIUM, start=t(1)),
            pod("p3.1", LOW, "node3", MEDIUM, start=t(3)),
            pod("p3.2", MID, "node3", MEDIUM, start=t(5)),
        ],
        {"node2"},
        id="different priority, same number of victims, different start time for all pods",
    ),
]


@pytest.mark.parametrize("node_names,preemptor,pods,expected", SELECT_CASES)
async def test_select_best_candidate(
    node_names: list[str], preemptor: Obj, pods: list[Obj], expected: set[str]
) -> None:
    env = build([node(n, VERY_LARGE) for n in node_names], pods)
    state, pi = await prefiltered(env, preemptor)
    offset, num = env.plugin.get_offset_and_num_candidates(len(env.infos), pi)
    candidates, _, _ = await env.plugin.dry_run_preemption(state, pi, env.infos, [], offset, num)
    best = env.plugin.select_candidate(candidates)
    assert best is not None
    assert best.name in expected


def _victims(*specs: tuple[int, str]) -> list[PodInfo]:
    return [PodInfo(pod(f"v{i}", prio, start=start)) for i, (prio, start) in enumerate(specs)]


@pytest.mark.parametrize(
    "nodes_to_victims,expected",
    [
        pytest.param(
            {
                "a": Candidate("a", _victims((LOW, t(1))), 1),
                "b": Candidate("b", _victims((HIGH, t(1)), (MID, t(1))), 0),
            },
            "b",
            id="fewest PDB violations wins over everything else",
        ),
        pytest.param(
            {
                "a": Candidate("a", _victims((NEG, t(1)), (NEG, t(1)))),
                "b": Candidate("b", _victims((NEG, t(1)))),
            },
            "b",
            id="negative priorities do not make more victims look cheaper",
        ),
        pytest.param(
            {
                "a": Candidate("a", _victims((MID, t(1)))),
                "b": Candidate("b", _victims((MID, t(1)))),
            },
            "a",
            id="full tie picks the first node",
        ),
    ],
)
def test_pick_one_node_for_preemption(nodes_to_victims: dict[str, Candidate], expected: str) -> None:
    assert pick_one_node_for_preemption(nodes_to_victims) == expected


# --- TestPodEligibleToPreemptOthers ---------------------------------------------------------------


def _terminating(p: Obj, by_preemption: bool) -> Obj:
    p["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    if by_preemption:
        p["status"]["conditions"] = [{"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}]
    return p


def _nominated(p: Obj, node_name: str) -> Obj:
    p["status"]["nominatedNodeName"] = node_name
    return p


@pytest.mark.parametrize(
    "preemptor,pods,nodes,nominated_status,expected",
    [
        pytest.param(
            _nominated(pod("p_with_nominated_node", HIGH), "node1"),
            [_terminating(pod("p1", LOW, "node1"), by_preemption=True)],
            ["node1"],
            Status(UU, "node(s) had untolerated taint(s)"),
            (True, ""),
            id="pod with nominated node that became UnschedulableAndUnresolvable",
        ),
        pytest.param(pod("p_without_nominated_node", HIGH), [], [], None, (True, ""), id="pod without nominated node"),
        pytest.param(
            make_pod("p_never").uid("p").priority(HIGH).preemption_policy("Never").obj(),
            [],
            [],
            None,
            (False, "not eligible due to preemptionPolicy=Never."),
            id="pod with PreemptNever preemption policy",
        ),
        pytest.param(
            _nominated(pod("p_with_nominated_node", HIGH), "node1"),
            [_terminating(pod("p1", LOW, "node1"), by_preemption=True)],
            ["node1"],
            None,
            (False, "not eligible due to a terminating pod on the nominated node."),
            id="preemption victim terminating, as the DisruptionTarget condition says",
        ),
        pytest.param(
            _nominated(pod("p_with_nominated_node", HIGH), "node1"),
            [_terminating(pod("p1", LOW, "node1"), by_preemption=False)],
            ["node1"],
            None,
            (True, ""),
            id="non-victim pods terminating",
        ),
    ],
)
def test_pod_eligible_to_preempt_others(
    preemptor: Obj, pods: list[Obj], nodes: list[str], nominated_status: Status | None, expected: tuple[bool, str]
) -> None:
    env = build([node(n) for n in nodes], pods)
    assert env.plugin.pod_eligible_to_preempt_others(PodInfo(preemptor), nominated_status) == expected


# --- TestPreempt: preparation side effects ----------------------------------------------------------


@pytest.mark.parametrize("async_preemption", [True, False])
async def test_preempt_basic_deletes_victims_and_records_events(async_preemption: bool) -> None:
    preemptor = pod("p", HIGH, req=VERY_LARGE)
    pods = [
        pod("p1.1", LOW, "node1", SMALL),
        pod("p1.2", LOW, "node1", SMALL),
        pod("p2.1", HIGH, "node2", LARGE),
        pod("p3.1", MID, "node3", MEDIUM),
    ]
    env = build(
        [node(n, VERY_LARGE) for n in ("node1", "node2", "node3")],
        pods,
        preemptor=preemptor,
        async_preemption=async_preemption,
    )
    victim_uids = {"p1.1", "p1.2"}
    got_node, status = await run_post_filter(env, preemptor)
    assert (got_node, status) == ("node1", found("node1", 2))
    assert env.pod_names() == {"p", "p2.1", "p3.1"}
    items, _ = env.store.list("Event")
    preempted = {e["involvedObject"]["uid"]: e for e in items if e["reason"] == "Preempted"}
    assert set(preempted) == victim_uids
    assert {e["message"] for e in preempted.values()} == {"Preempted by pod p on node node1"}
    assert {e["type"] for e in preempted.values()} == {"Normal"}


@pytest.mark.parametrize("async_preemption", [True, False])
async def test_preempt_takes_a_victim_waiting_at_permit_in_memory_instead_of_deleting_it(
    async_preemption: bool,
) -> None:
    # 1.36: the waiting victim is preempted (an Error, so it backs off), not rejected, and not
    # deleted; the event says it happened in the scheduler's memory.
    preemptor = pod("p", HIGH, req=VERY_LARGE)
    victim = pod("v", LOW, "node1", VERY_LARGE)
    env = build([node("node1", VERY_LARGE)], [victim], preemptor=preemptor, async_preemption=async_preemption)
    waiting = WaitingPod(PodInfo(victim), {"Coscheduling": 60.0}, asyncio.get_running_loop())
    env.fw.waiting_pods.add(waiting)
    got_node, status = await run_post_filter(env, preemptor)
    assert (got_node, status) == ("node1", found("node1", 1))
    verdict = await asyncio.wait_for(waiting.wait(), 1)
    assert (verdict.code, verdict.reasons, verdict.plugin) == (Code.ERROR, ["preempted"], "DefaultPreemption")
    assert waiting.pending_plugins() == []
    assert "v" in env.pod_names()
    items, _ = env.store.list("Event")
    assert [e["message"] for e in items if e["reason"] == "Preempted"] == [
        "Preempted by pod p on node node1 (in kube-scheduler memory)."
    ]


@pytest.mark.parametrize("async_preemption", [True, False])
async def test_preempt_deletes_a_victim_whose_permit_wait_already_ended(async_preemption: bool) -> None:
    # Preempt reports False when the waiting pod was allowed meanwhile: it is deleted as any
    # other victim.
    preemptor = pod("p", HIGH, req=VERY_LARGE)
    victim = pod("v", LOW, "node1", VERY_LARGE)
    env = build([node("node1", VERY_LARGE)], [victim], preemptor=preemptor, async_preemption=async_preemption)
    waiting = WaitingPod(PodInfo(victim), {"Coscheduling": 60.0}, asyncio.get_running_loop())
    waiting.allow("Coscheduling")
    env.fw.waiting_pods.add(waiting)
    got_node, _ = await run_post_filter(env, preemptor)
    assert got_node == "node1"
    assert (await waiting.wait()).code is Code.SUCCESS
    assert "v" not in env.pod_names()
    items, _ = env.store.list("Event")
    assert [e["message"] for e in items if e["reason"] == "Preempted"] == ["Preempted by pod p on node node1"]


async def test_waiting_pod_preempt_is_an_error_and_only_once() -> None:
    loop = asyncio.get_running_loop()
    wp = WaitingPod(PodInfo(pod("v", LOW)), {"A": 60.0, "B": 60.0}, loop)
    assert wp.preempt("DefaultPreemption", "preempted") is True
    assert wp.pending_plugins() == []
    assert wp.preempt("DefaultPreemption", "again") is False
    wp.reject("A", "too late")
    verdict = await wp.wait()
    assert (verdict.code, verdict.message(), verdict.plugin) == (Code.ERROR, "preempted", "DefaultPreemption")
    rejected = WaitingPod(PodInfo(pod("w", LOW)), {"A": 60.0}, loop)
    rejected.reject("A", "no")
    assert rejected.preempt("DefaultPreemption", "preempted") is False
    assert (await rejected.wait()).code is Code.UNSCHEDULABLE


@pytest.mark.parametrize("async_preemption", [True, False])
async def test_preempt_clears_nomination_of_lower_priority_pods_on_the_node(async_preemption: bool) -> None:
    preemptor = pod("p", HIGH, req=VERY_LARGE)
    lower = _nominated(pod("lower", LOW, req=SMALL), "node1")
    higher = _nominated(pod("higher", VERY_HIGH), "node1")
    env = build(
        [node("node1", VERY_LARGE)],
        [pod("v", LOW, "node1", SMALL), lower, higher],
        preemptor=preemptor,
        async_preemption=async_preemption,
    )
    env.fw.nominator = FakeNominator({"node1": [PodInfo(lower), PodInfo(higher)]})
    got_node, _ = await run_post_filter(env, preemptor)
    assert got_node == "node1"
    assert "nominatedNodeName" not in env.stored("lower")["status"]
    assert env.stored("higher")["status"]["nominatedNodeName"] == "node1"
    assert "v" not in env.pod_names()


@pytest.mark.parametrize("async_preemption", [True, False])
async def test_preempt_skips_victims_already_being_deleted(async_preemption: bool) -> None:
    preemptor = pod("p", HIGH, req=VERY_LARGE)
    victim = _terminating(pod("v", LOW, "node1", SMALL), by_preemption=False)
    env = build(
        [node("node1", VERY_LARGE)],
        [victim, pod("w", LOW, "node1", SMALL)],
        preemptor=preemptor,
        async_preemption=async_preemption,
    )
    got_node, _ = await run_post_filter(env, preemptor)
    assert got_node == "node1"
    assert env.pod_names() == {"p", "v"}


async def test_preempt_uses_pdbs_from_the_listers() -> None:
    preemptor = pod("p", HIGH, req=LARGE)
    pods = [pod("p1", MID, "node1", LARGE, FOO), pod("p2", MID, "node2", LARGE)]
    env = build(
        [node("node1", VERY_LARGE), node("node2", VERY_LARGE)],
        pods,
        preemptor=preemptor,
        objects=[pdb(FOO, allowed=0)],
    )
    got_node, _ = await run_post_filter(env, preemptor)
    assert got_node == "node2"
    assert env.pod_names() == {"p", "p1"}


# --- Args, candidate count, messages -------------------------------------------------------------


def test_args_defaults() -> None:
    args = DefaultPreemptionArgs()
    assert (args.min_candidate_nodes_percentage, args.min_candidate_nodes_absolute) == (10, 100)
    assert DefaultPreemption(None, None).args == args


@pytest.mark.parametrize(
    "raw,messages",
    [
        pytest.param(
            {"minCandidateNodesPercentage": -1},
            ["minCandidateNodesPercentage: Invalid value: -1: not in valid range [0, 100]"],
            id="negative percentage",
        ),
        pytest.param(
            {"minCandidateNodesPercentage": 900},
            ["minCandidateNodesPercentage: Invalid value: 900: not in valid range [0, 100]"],
            id="percentage over 100",
        ),
        pytest.param(
            {"minCandidateNodesAbsolute": -1},
            ["minCandidateNodesAbsolute: Invalid value: -1: not in valid range [0, inf)"],
            id="negative absolute",
        ),
        pytest.param(
            {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0},
            [
                "minCandidateNodesPercentage: Invalid value: 0: cannot be zero at the same time as "
                "minCandidateNodesAbsolute",
                "minCandidateNodesAbsolute: Invalid value: 0: cannot be zero at the same time as "
                "minCandidateNodesPercentage",
            ],
            id="both zero",
        ),
    ],
)
def test_args_validation(raw: dict[str, int], messages: list[str]) -> None:
    with pytest.raises(ValidationError) as err:
        DefaultPreemptionArgs.model_validate(raw)
    for m in messages:
        assert m in str(err.value)


def test_args_unknown_field_refused() -> None:
    with pytest.raises(ValidationError):
        DefaultPreemptionArgs.model_validate({"minCandidateNodes": 3})


@pytest.mark.parametrize(
    "pct,absolute,num_nodes,expected",
    [
        pytest.param(10, 100, 10, 10, id="absolute capped at the node count"),
        pytest.param(10, 100, 1000, 100, id="absolute above the percentage"),
        pytest.param(10, 0, 1000, 100, id="percentage only"),
        pytest.param(50, 100, 5000, 2500, id="percentage above the absolute"),
        pytest.param(40, 1, 5, 2, id="upstream's limit to 2"),
        pytest.param(0, 1, 1000, 1, id="absolute only"),
    ],
)
def test_calculate_num_candidates(pct: int, absolute: int, num_nodes: int, expected: int) -> None:
    args = DefaultPreemptionArgs(minCandidateNodesPercentage=pct, minCandidateNodesAbsolute=absolute)
    assert DefaultPreemption(args, None).calculate_num_candidates(num_nodes) == expected


def test_offsets_are_reproducible_and_in_range() -> None:
    pi = PodInfo(pod("p", HIGH))
    a, b = DefaultPreemption(None, None), DefaultPreemption(None, None)
    seq_a = [a.get_offset_and_num_candidates(7, pi)[0] for _ in range(20)]
    seq_b = [b.get_offset_and_num_candidates(7, pi)[0] for _ in range(20)]
    assert seq_a == seq_b
    assert all(0 <= o < 7 for o in seq_a)
    assert len(set(seq_a)) > 1


@pytest.mark.parametrize(
    "num_nodes,statuses,expected",
    [
        pytest.param(1, {}, "0/1 nodes are available: 1 Preemption is not helpful for scheduling.", id="all absent"),
        pytest.param(
            12,
            {f"n{i}": Status(U, "Insufficient cpu") for i in range(10)},
            "0/12 nodes are available: 10 Insufficient cpu, 2 Preemption is not helpful for scheduling.",
            id="counts are sorted as strings",
        ),
        pytest.param(
            2,
            {"a": Status(U, "Insufficient cpu", "Insufficient memory"), "b": Status(UU)},
            "0/2 nodes are available: 1 Insufficient cpu, 1 Insufficient memory.",
            id="every reason of a node counts; a status without reasons adds none",
        ),
    ],
)
def test_fit_error_message(num_nodes: int, statuses: dict[str, Status], expected: str) -> None:
    assert fit_error_message(num_nodes, statuses) == expected


def test_aggregate_errors() -> None:
    assert aggregate_errors(["a"]) == "a"
    assert aggregate_errors(["a", "a"]) == "a"
    assert aggregate_errors(["a", "b", "a"]) == "[a, b]"


def test_events_to_register_is_empty() -> None:
    assert DefaultPreemption(None, None).events_to_register() == []


def test_args_are_the_faces_and_refuse_a_number_written_as_text() -> None:
    import kubesched

    assert kubesched.DefaultPreemptionArgs is DefaultPreemptionArgs
    with pytest.raises(ValidationError, match="minCandidateNodesPercentage"):
        DefaultPreemptionArgs.model_validate({"minCandidateNodesPercentage": "10"})


def test_args_with_two_errors_read_as_upstreams_aggregate() -> None:
    with pytest.raises(ValidationError) as err:
        DefaultPreemptionArgs.model_validate({"minCandidateNodesPercentage": 101, "minCandidateNodesAbsolute": -1})
    assert (
        "[minCandidateNodesPercentage: Invalid value: 101: not in valid range [0, 100], "
        "minCandidateNodesAbsolute: Invalid value: -1: not in valid range [0, inf)]"
    ) in str(err.value)
