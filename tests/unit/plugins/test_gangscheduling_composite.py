"""GangScheduling with CompositePodGroup on: upstream's gangscheduling_test.go (1.37) cases that
run with the gate on — the hints' "matches the root CPG" cases, TestPreEnqueue's CPG-on runs
(group not yet created, quorum, the three stages of a CPG tree, a basic CPG root over gang
children) and PlacementFeasible over a composite's children (minGroupCount). The
CompositePodGroup Add hint's cases and Permit over a hierarchy are ours (upstream's tables for
them were not read; Permit follows upstream's permitPodForHierarchy)."""

from __future__ import annotations

from typing import Any

import pytest
from pod_group_fakes import PodGroupHandle, composite_pod_group, grouped_pod, pod_group

from kubesched.framework.events import ActionType, ClusterEvent, EventResource, QueueingHint
from kubesched.framework.interface import CycleState
from kubesched.framework.podgroup import COMPOSITE_POD_GROUP_KIND, PlacementProgress, PodGroupInfo
from kubesched.framework.status import Code, Status
from kubesched.framework.types import PodInfo
from kubesched.plugins.gangscheduling import GangScheduling

QUEUE, SKIP = QueueingHint.QUEUE, QueueingHint.SKIP


def plugin(*objs: dict[str, Any]) -> GangScheduling:
    h = PodGroupHandle(composite=True)
    h.add_groups(*objs)
    return GangScheduling(None, h)  # type: ignore[arg-type]


def pod(name: str, group: str | None, namespace: str = "default", node: str = "") -> dict[str, Any]:
    return grouped_pod(name, group, namespace=namespace, node=node)


def test_events_include_composite_pod_group_add() -> None:
    assert ClusterEvent(EventResource.COMPOSITE_POD_GROUP, ActionType.ADD) in [
        e.event for e in plugin().events_to_register()
    ]


# --- Test_isSchedulableAfterPodAdded (CPG enabled) -------------------------------------------

POD_ADDED = [
    ("add a newPod which matches the pod's scheduling group", [], pod("p", "pg"), pod("q", "pg"), QUEUE),
    ("add a newPod with NodeName set which matches", [], pod("p", "pg"), pod("q", "pg", node="node1"), QUEUE),
    (
        "add a newPod which doesn't match the pod's namespace",
        [pod_group("pg"), pod_group("pg", "foo")],
        pod("p", "pg"),
        pod("q", "pg", namespace="foo"),
        SKIP,
    ),
    (
        "add a newPod which doesn't match the pod's pod group name",
        [pod_group("pg1"), pod_group("pg2")],
        pod("p", "pg1"),
        pod("q", "pg2"),
        SKIP,
    ),
    (
        "add a newPod which belongs to a different scheduling group but matches the root CPG",
        [pod_group("pg1", parent="cpg-root"), pod_group("pg2", parent="cpg-root"), composite_pod_group("cpg-root")],
        pod("p1", "pg1"),
        pod("p2", "pg2"),
        QUEUE,
    ),
    (
        "add a newPod which belongs to a different scheduling group and does not match the root CPG",
        [
            pod_group("pg1", parent="cpg-root1"),
            pod_group("pg2", parent="cpg-root2"),
            composite_pod_group("cpg-root1"),
            composite_pod_group("cpg-root2"),
        ],
        pod("p1", "pg1"),
        pod("p2", "pg2"),
        SKIP,
    ),
]


@pytest.mark.parametrize(("objs", "target", "added", "want"), [c[1:] for c in POD_ADDED], ids=[c[0] for c in POD_ADDED])
def test_is_schedulable_after_pod_added(
    objs: list[dict[str, Any]], target: dict[str, Any], added: dict[str, Any], want: QueueingHint
) -> None:
    assert plugin(*objs).after_pod_added(target, None, added) is want


# --- Test_isSchedulableAfterPodGroupAdded (CPG enabled) --------------------------------------

GROUP_ADDED = [
    ("matches the pod's pod group name", [], pod("p", "pg"), pod_group("pg", min_count=1), QUEUE),
    ("doesn't match the name", [pod_group("pg1")], pod("p", "pg1"), pod_group("pg2", min_count=1), SKIP),
    (
        "doesn't match the namespace",
        [pod_group("pg", "ns1")],
        pod("p", "pg", namespace="ns1"),
        pod_group("pg", "ns2", min_count=1),
        SKIP,
    ),
    (
        "doesn't match the pod's scheduling group but matches the root CPG",
        [pod_group("pg1", parent="cpg-root"), composite_pod_group("cpg-root")],
        pod("p", "pg1"),
        pod_group("pg2", min_count=1, parent="cpg-root"),
        QUEUE,
    ),
    (
        "doesn't match the pod's scheduling group and doesn't match the root CPG",
        [pod_group("pg1", parent="cpg-root1"), composite_pod_group("cpg-root1"), composite_pod_group("cpg-root2")],
        pod("p", "pg1"),
        pod_group("pg2", min_count=1, parent="cpg-root2"),
        SKIP,
    ),
]


@pytest.mark.parametrize(
    ("objs", "target", "added", "want"), [c[1:] for c in GROUP_ADDED], ids=[c[0] for c in GROUP_ADDED]
)
def test_is_schedulable_after_pod_group_added(
    objs: list[dict[str, Any]], target: dict[str, Any], added: dict[str, Any], want: QueueingHint
) -> None:
    # The informers index the added group before the queue hears of it.
    assert plugin(*objs, added).after_pod_group_added(target, None, added) is want


def test_a_lowered_min_count_elsewhere_in_the_hierarchy_wakes_the_pod() -> None:
    objs = [pod_group("pg1", parent="root"), pod_group("pg2", min_count=3, parent="root"), composite_pod_group("root")]
    old, new = pod_group("pg2", min_count=3, parent="root"), pod_group("pg2", min_count=2, parent="root")
    assert plugin(*objs).after_pod_group_updated(pod("p", "pg1"), old, new) is QUEUE
    assert plugin(*objs).after_pod_group_updated(pod("p", "pg1"), new, old) is SKIP


def test_is_schedulable_after_composite_pod_group_added() -> None:
    objs = [pod_group("pg1", parent="sub"), composite_pod_group("sub", parent="root"), composite_pod_group("root")]
    pl = plugin(*objs)
    assert pl.after_composite_pod_group_added(pod("p", "pg1"), None, composite_pod_group("root")) is QUEUE
    assert pl.after_composite_pod_group_added(pod("p", "pg1"), None, composite_pod_group("sub", parent="root")) is QUEUE
    assert pl.after_composite_pod_group_added(pod("p", "pg1"), None, composite_pod_group("other")) is SKIP
    assert pl.after_composite_pod_group_added(pod("p", None), None, composite_pod_group("root")) is SKIP


# --- TestPreEnqueue (CPG enabled) -------------------------------------------------------------

CPG_ROOT = [
    composite_pod_group("cpg-root", "ns1", min_group_count=2),
    composite_pod_group("cpg-sub1", "ns1", min_group_count=2, parent="cpg-root"),
    composite_pod_group("cpg-sub2", "ns1", parent="cpg-root"),
    composite_pod_group("cpg-sub3", "ns1", min_group_count=2, parent="cpg-root"),
]
CPG_GROUPS = [
    pod_group("pg1-cpg", "ns1", 1, parent="cpg-sub1"),
    pod_group("pg2-cpg", "ns1", 1, parent="cpg-sub1"),
    pod_group("pg3-cpg", "ns1", 1, parent="cpg-sub1"),
    pod_group("pg4-cpg", "ns1", parent="cpg-sub2"),
    pod_group("pg5-cpg", "ns1", 1, parent="cpg-sub2"),
    pod_group("pg6-cpg", "ns1", 1, parent="cpg-sub3"),
    pod_group("pg7-cpg", "ns1", 1, parent="cpg-sub3"),
]
BASIC_ROOT = [
    composite_pod_group("cpg-basic-root", "ns1"),
    pod_group("pg-basic-1", "ns1", 2, parent="cpg-basic-root"),
    pod_group("pg-basic-2", "ns1", 2, parent="cpg-basic-root"),
]


def ns1(name: str, group: str | None) -> dict[str, Any]:
    return grouped_pod(name, group, namespace="ns1")


U = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
SNAPSHOT = "failed to build hierarchy snapshot: "


def _chain(leaf: str, *ancestors: str) -> list[dict[str, Any]]:
    """PodGroup ``leaf`` (minCount 1) under each of ``ancestors`` in turn, the last the root; an
    ancestor named ``missing`` is not created."""
    names = [leaf, *ancestors]
    out = [pod_group(leaf, "ns1", 1, parent=ancestors[0])]
    for i, name in enumerate(ancestors, start=1):
        if name != "missing":
            out.append(composite_pod_group(name, "ns1", parent=names[i + 1] if i + 1 < len(names) else None))
    return out


TREE = Status(U, 'waiting for composite pod group "cpg-root" tree to meet quorum')
PRE_ENQUEUE = [
    ("non-gang pod succeeds immediately", ns1("non-gang", None), [], [pod_group("pg3", "ns1")], None),
    ("basic policy pod succeeds immediately", ns1("basic-pod", "pg3"), [], [pod_group("pg3", "ns1")], None),
    (
        "gang pod fails PreEnqueue when pod group is not yet created",
        ns1("p1", "pg1"),
        [ns1("p2", "pg1"), ns1("p3", "pg1"), ns1("p4", "pg2"), ns1("p5", "pg2")],
        [],
        Status(U, "failed to build hierarchy snapshot: pod group object not found in state for podgroup/ns1/pg1"),
    ),
    (
        "gang pod fails PreEnqueue when quorum is not met",
        ns1("p1", "pg1"),
        [ns1("p2", "pg1"), ns1("p4", "pg2"), ns1("p5", "pg2")],
        [pod_group("pg1", "ns1", 3), pod_group("pg2", "ns1", 4)],
        Status(U, "waiting for minCount pods from a gang to appear in scheduling queue"),
    ),
    (
        "gang pod passes PreEnqueue",
        ns1("p1", "pg1"),
        [ns1("p2", "pg1"), ns1("p3", "pg1"), ns1("p4", "pg2"), ns1("p5", "pg2")],
        [pod_group("pg1", "ns1", 3), pod_group("pg2", "ns1", 4)],
        None,
    ),
    ("CPG Hierarchical Stage 1: No pods, tree not ready", ns1("p1-cpg", "pg1-cpg"), [], CPG_GROUPS + CPG_ROOT, TREE),
    (
        "CPG Hierarchical Stage 2: Add p6, cpg-sub1 ready but root not ready",
        ns1("p6-cpg", "pg6-cpg"),
        [ns1("p1-cpg", "pg1-cpg"), ns1("p2-cpg", "pg2-cpg")],
        CPG_GROUPS + CPG_ROOT,
        TREE,
    ),
    (
        "CPG Hierarchical Stage 3: Add p4, root becomes ready",
        ns1("p4-cpg", "pg4-cpg"),
        [ns1("p1-cpg", "pg1-cpg"), ns1("p2-cpg", "pg2-cpg"), ns1("p6-cpg", "pg6-cpg")],
        CPG_GROUPS + CPG_ROOT,
        None,
    ),
    (
        "CPG Basic With Gang Stage 1: pg1 ready, root ready",
        ns1("p2_1", "pg-basic-2"),
        [ns1("p1_1", "pg-basic-1"), ns1("p1_2", "pg-basic-1")],
        BASIC_ROOT,
        None,
    ),
    (
        "a parent composite not seen yet",
        ns1("p1", "orphan"),
        [],
        [pod_group("orphan", "ns1", 1, parent="missing")],
        Status(
            U,
            "failed to build hierarchy snapshot: composite pod group object not found in state for "
            "compositepodgroup/ns1/missing",
        ),
    ),
    # Beside upstream's table, how 1.37's hierarchy snapshot (cache.BuildHierarchySnapshotFromPod,
    # see PodGroupIndex.snapshot_top) ends for an ancestor unseen, a cycle and a deep hierarchy.
    (
        "an ancestor above the parent not seen: the snapshot names it",
        ns1("p1", "pg"),
        [],
        _chain("pg", "c1", "missing"),
        Status(U, SNAPSHOT + "composite pod group object not found in state for compositepodgroup/ns1/missing"),
    ),
    (
        "two composites each other's parent: a cycle",
        ns1("p1", "pg"),
        [],
        [
            pod_group("pg", "ns1", 1, parent="c1"),
            composite_pod_group("c1", "ns1", parent="c2"),
            composite_pod_group("c2", "ns1", parent="c1"),
        ],
        Status(U, SNAPSHOT + "cycle detected in composite pod group hierarchy: compositepodgroup/ns1/c2"),
    ),
    ("five levels: the root is reached", ns1("p1", "pg"), [], _chain("pg", "c1", "c2", "c3", "r"), None),
    (
        "six levels: the walk stops below the root, which the snapshot lacks",
        ns1("p1", "pg"),
        [],
        _chain("pg", "c1", "c2", "c3", "c4", "r"),
        Status(U, SNAPSHOT + "composite pod group object not found in state for compositepodgroup/ns1/c1"),
    ),
]


@pytest.mark.parametrize(
    ("target", "others", "groups", "want"), [c[1:] for c in PRE_ENQUEUE], ids=[c[0] for c in PRE_ENQUEUE]
)
def test_pre_enqueue(
    target: dict[str, Any], others: list[dict[str, Any]], groups: list[dict[str, Any]], want: Status | None
) -> None:
    h = PodGroupHandle(composite=True)
    h.add_groups(*groups)
    for p in others:
        h.add_pod(p)
    pi = h.add_pod(target)
    got = GangScheduling(None, h).pre_enqueue(pi)  # type: ignore[arg-type]
    if want is None:
        assert got is None
    else:
        assert got is not None and (got.code, got.reasons) == (want.code, want.reasons)


# --- TestPlacementFeasible, composite variant (minGroupCount over children) -----------------

S, W, X = Code.SUCCESS, Code.WAIT, Code.UNSCHEDULABLE
FEASIBLE = [
    ("All children succeed, minGroupCount met at end", 2, 2, [True, True], [W, S]),
    ("First child fails, minGroupCount not satisfiable", 3, 3, [False], [X]),
    ("Second child fails, minGroupCount not satisfiable", 2, 2, [True, False], [W, X]),
    ("Basic composite with 0 scheduled children fails", 0, 1, [False], [X]),
    ("Basic composite succeeds once 1 child is scheduled", 0, 1, [True], [S]),
    ("More children than minGroupCount, all succeed", 2, 3, [True, True, True], [W, S, S]),
    ("More children than minGroupCount, first fails", 2, 3, [False, True, True], [W, W, S]),
    ("More children than minGroupCount, not satisfiable", 2, 3, [False, False], [W, X]),
]


@pytest.mark.parametrize(
    ("need", "children", "outcomes", "want"), [c[1:] for c in FEASIBLE], ids=[c[0] for c in FEASIBLE]
)
def test_placement_feasible_counts_children(need: int, children: int, outcomes: list[bool], want: list[Code]) -> None:
    obj = composite_pod_group("cpg", min_group_count=need or None)
    kids = [PodGroupInfo("default", f"pg{i}", pod_group(f"pg{i}", parent="cpg")) for i in range(children)]
    group = PodGroupInfo("default", "cpg", obj, kind=COMPOSITE_POD_GROUP_KIND, children=kids)
    pl = plugin()
    scheduled = 0
    got: list[Code] = []
    for i, placed in enumerate(outcomes):
        scheduled += placed
        status = pl.placement_feasible(CycleState(), group, PlacementProgress(children - (i + 1), scheduled))
        got.append(Code.SUCCESS if status is None else status.code)
    assert got == want
    last = pl.placement_feasible(CycleState(), group, PlacementProgress(0, 0))
    assert (
        last is not None and last.message() == f"minCount ({need or 1}) cannot be satisfied: 0 scheduled, 0 remaining"
    )


# --- Permit over a hierarchy (upstream's permitPodForHierarchy) ------------------------------


class _Waiting:
    def __init__(self) -> None:
        self.allowed: list[str] = []

    def allow(self, plugin: str) -> None:
        self.allowed.append(plugin)


class _PermitHandle(PodGroupHandle):
    def __init__(self) -> None:
        super().__init__(composite=True)
        self.activated: list[str] = []
        self.waiting: dict[str, _Waiting] = {}

    def activate(self, pods: Any) -> None:
        self.activated.extend(p.name for p in pods)

    def get_waiting_pod(self, uid: str) -> Any:
        return self.waiting.get(uid)

    def iterate_waiting_pods(self) -> Any:
        return iter(self.waiting.values())


def _hierarchy(placed: list[str]) -> tuple[GangScheduling, _PermitHandle]:
    """root (minGroupCount 2) over gangs a and b of two: members a0 a1 b0 b1, ``placed`` assumed."""
    h = _PermitHandle()
    h.add_nodes({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}, "status": {}})
    h.add_groups(
        composite_pod_group("root", min_group_count=2),
        pod_group("a", min_count=2, parent="root"),
        pod_group("b", min_count=2, parent="root"),
    )
    for name in ("a0", "a1", "b0", "b1"):
        if name in placed:
            # assumed, and waiting at Permit for the tree
            h.waiting[h.assume(pod(name, name[0]), "n1").uid] = _Waiting()
        else:
            h.add_pod(pod(name, name[0]))
    return GangScheduling(None, h), h  # type: ignore[arg-type]


def test_permit_in_a_hierarchy_waits_for_the_tree_and_activates_its_pending_members() -> None:
    pl, h = _hierarchy(["a0", "a1", "b0"])
    status, timeout = pl.permit(CycleState(), PodInfo(pod("a0", "a")), "n1")
    assert status is not None and status.is_wait() and timeout == 300.0
    assert status.message() == 'waiting for composite pod group "root" tree to meet quorum'
    assert h.activated == ["b1"]


def test_permit_in_a_hierarchy_at_quorum_allows_every_placed_member() -> None:
    pl, h = _hierarchy(["a0", "a1", "b0", "b1"])
    status, _ = pl.permit(CycleState(), PodInfo(pod("b1", "b")), "n1")
    assert status is None
    assert sorted(uid for uid, w in h.waiting.items() if w.allowed == ["GangScheduling"]) == ["a0", "a1", "b0", "b1"]
