"""GangScheduling: upstream's gangscheduling_test.go (1.37) transcribed, the cases that run with
CompositePodGroup off here; the cases with it on are in test_gangscheduling_composite.py. Pods'
``parentCompositePodGroupName`` is kept where upstream sets it: with the gate off it must change
nothing."""

from __future__ import annotations

from typing import Any

import pytest
from pod_group_fakes import PodGroupHandle, grouped_pod, pod_group

from kubesched.framework.events import ActionType, ClusterEvent, EventResource, QueueingHint
from kubesched.framework.interface import CycleState
from kubesched.framework.podgroup import PlacementProgress, PodGroupInfo
from kubesched.framework.status import Code, Status
from kubesched.framework.types import PodInfo
from kubesched.plugins.gangscheduling import GangScheduling

QUEUE, SKIP = QueueingHint.QUEUE, QueueingHint.SKIP


def pod(name: str = "", group: str | None = None, namespace: str = "default", node: str = "") -> dict[str, Any]:
    return grouped_pod(name or "p", group, namespace=namespace, node=node)


def plugin(h: PodGroupHandle | None = None) -> GangScheduling:
    return GangScheduling(None, h or PodGroupHandle())  # type: ignore[arg-type]


# --- Test_isSchedulableAfterPodAdded ----------------------------------------------------------


@pytest.mark.parametrize(
    ("target", "added", "want"),
    [
        (pod("p", "pg"), pod("", "pg"), QUEUE),
        (pod("p", "pg"), pod("", "pg", node="node1"), QUEUE),
        (pod("p", "pg"), pod("", "pg", namespace="foo"), SKIP),
        (pod("p", "pg1"), pod("", "pg2"), SKIP),
        # pg1 and pg2 under the same CompositePodGroup: with the gate off, different groups.
        (pod("p1", "pg1"), pod("p2", "pg2"), SKIP),
        (pod("p1", "pg1"), pod("p2", "pg2"), SKIP),
    ],
    ids=[
        "add a newPod which matches the pod's scheduling group",
        "add a newPod with NodeName set which matches the pod's scheduling group",
        "add a newPod which doesn't match the pod's namespace",
        "add a newPod which doesn't match the pod's pod group name",
        "add a newPod which belongs to a different scheduling group but matches the root CPG, but CPG is ignored",
        "add a newPod which belongs to a different scheduling group and does not match the root CPG",
    ],
)
def test_is_schedulable_after_pod_added(target: dict[str, Any], added: dict[str, Any], want: QueueingHint) -> None:
    assert plugin().after_pod_added(target, None, added) is want


def test_a_pod_outside_any_group_is_not_woken_by_pod_adds() -> None:
    assert plugin().after_pod_added(pod("p"), None, pod("q", "pg")) is SKIP
    assert plugin().after_pod_added(pod("p", "pg"), None, pod("q")) is SKIP


# --- Test_isSchedulableAfterPodGroupAdded -----------------------------------------------------


@pytest.mark.parametrize(
    ("target", "added", "want"),
    [
        (pod("p", "pg"), pod_group("pg", min_count=1), QUEUE),
        (pod("p", "pg1"), pod_group("pg2", min_count=1), SKIP),
        (pod("p", "pg", namespace="ns1"), pod_group("pg", namespace="ns2", min_count=1), SKIP),
        (pod("p", "pg1"), pod_group("pg2", min_count=1, parent="cpg-root"), SKIP),
        (pod("p", "pg1"), pod_group("pg2", min_count=1, parent="cpg-root2"), SKIP),
    ],
    ids=[
        "add a pod group which matches the pod's pod group name",
        "add a pod group which doesn't match the pod's scheduling group name",
        "add a pod group which doesn't match the pod's scheduling group namespace",
        "add a pod group which doesn't match the pod's scheduling group but matches the root CPG, but CPG is ignored",
        "add a pod group which doesn't match the pod's scheduling group and doesn't match the root CPG",
    ],
)
def test_is_schedulable_after_pod_group_added(
    target: dict[str, Any], added: dict[str, Any], want: QueueingHint
) -> None:
    assert plugin().after_pod_group_added(target, None, added) is want


# --- Test_isSchedulableAfterPodGroupUpdated ---------------------------------------------------


def workload_ref(pg: dict[str, Any]) -> dict[str, Any]:
    """Upstream's ``.WorkloadRef("t", "w")``: changes nothing the hint reads."""
    pg["spec"]["podGroupTemplateRef"] = {"workloadName": "w", "podGroupTemplateName": "t"}
    return pg


@pytest.mark.parametrize(
    ("target", "old", "new", "want"),
    [
        (
            pod("p", "pg", "ns1"),
            workload_ref(pod_group("pg", "ns1", 4)),
            workload_ref(pod_group("pg", "ns1", 3)),
            QUEUE,
        ),
        (pod("p", "pg", "ns1"), workload_ref(pod_group("pg", "ns1")), pod_group("pg", "ns1"), SKIP),
        (
            pod("p", "pg", "ns1"),
            workload_ref(pod_group("pg", "ns1", 3)),
            workload_ref(pod_group("pg", "ns1", 4)),
            SKIP,
        ),
        (
            pod("p", "pg", "ns1"),
            workload_ref(pod_group("pg", "ns1", 3)),
            workload_ref(pod_group("pg", "ns1", 3)),
            SKIP,
        ),
        (
            pod("p", "pg-other", "ns1"),
            workload_ref(pod_group("pg", "ns1", 4)),
            workload_ref(pod_group("pg", "ns1", 3)),
            SKIP,
        ),
        (
            pod("p", "pg", "ns-other"),
            workload_ref(pod_group("pg", "ns1", 4)),
            workload_ref(pod_group("pg", "ns1", 3)),
            SKIP,
        ),
        (
            pod("p", None, "ns1"),
            workload_ref(pod_group("pg", "ns1", 4)),
            workload_ref(pod_group("pg", "ns1", 3)),
            SKIP,
        ),
    ],
    ids=[
        "minCount decreased matches target pod",
        "update Basic policy",
        "minCount increased matches target pod",
        "minCount unchanged matches target pod",
        "minCount decreased but pod group name doesn't match target pod",
        "minCount decreased but pod group namespace doesn't match target pod",
        "pod without a scheduling group is skipped",
    ],
)
def test_is_schedulable_after_pod_group_updated(
    target: dict[str, Any], old: dict[str, Any], new: dict[str, Any], want: QueueingHint
) -> None:
    assert plugin().after_pod_group_updated(target, old, new) is want


def test_a_gang_turned_basic_or_basic_turned_gang_is_skipped() -> None:
    """Only a gang whose minCount went down can let members in (both policies must be gang)."""
    assert plugin().after_pod_group_updated(pod("p", "pg"), pod_group("pg", min_count=4), pod_group("pg")) is SKIP
    assert plugin().after_pod_group_updated(pod("p", "pg"), pod_group("pg"), pod_group("pg", min_count=1)) is SKIP


def test_events_to_register() -> None:
    """Unscheduled and assigned pod Add, PodGroup Add and Update; no CompositePodGroup event."""
    events = [e.event for e in plugin().events_to_register()]
    assert events == [
        ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.ADD),
        ClusterEvent(EventResource.POD, ActionType.ADD),
        ClusterEvent(EventResource.POD_GROUP, ActionType.ADD),
        ClusterEvent(EventResource.POD_GROUP, ActionType.UPDATE),
    ]


# --- TestPreEnqueue ---------------------------------------------------------------------------

GANG_PG1 = workload_ref(pod_group("pg1", "ns1", 3))
GANG_PG2 = workload_ref(pod_group("pg2", "ns1", 4))
BASIC_PG3 = workload_ref(pod_group("pg3", "ns1"))

CPG_GROUPS = [
    pod_group("pg1-cpg", "ns1", 1, parent="cpg-sub1"),
    pod_group("pg2-cpg", "ns1", 1, parent="cpg-sub1"),
    pod_group("pg3-cpg", "ns1", 1, parent="cpg-sub1"),
    pod_group("pg4-cpg", "ns1", parent="cpg-sub2"),
    pod_group("pg5-cpg", "ns1", 1, parent="cpg-sub2"),
    pod_group("pg6-cpg", "ns1", 1, parent="cpg-sub3"),
    pod_group("pg7-cpg", "ns1", 1, parent="cpg-sub3"),
]
BASIC_CPG_GROUPS = [
    pod_group("pg-basic-1", "ns1", 2, parent="cpg-basic-root"),
    pod_group("pg-basic-2", "ns1", 2, parent="cpg-basic-root"),
]


def ns1(name: str, group: str | None) -> dict[str, Any]:
    return grouped_pod(name, group, namespace="ns1")


WAITING_FOR_QUORUM = Status(
    Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "waiting for minCount pods from a gang to appear in scheduling queue"
)

PRE_ENQUEUE_CASES: list[tuple[str, dict[str, Any], list[dict[str, Any]], list[dict[str, Any]], Status | None]] = [
    ("non-gang pod succeeds immediately", ns1("non-gang", None), [], [GANG_PG1, GANG_PG2, BASIC_PG3], None),
    ("basic policy pod succeeds immediately", ns1("basic-pod", "pg3"), [], [GANG_PG1, GANG_PG2, BASIC_PG3], None),
    (
        "gang pod fails PreEnqueue when pod group is not yet created",
        ns1("p1", "pg1"),
        [ns1("p2", "pg1"), ns1("p3", "pg1"), ns1("p4", "pg2"), ns1("p5", "pg2")],
        [],
        Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, 'waiting for pod\'s pod group "pg1" to appear in scheduling queue'),
    ),
    (
        "gang pod fails PreEnqueue when quorum is not met",
        ns1("p1", "pg1"),
        [ns1("p2", "pg1"), ns1("p4", "pg2"), ns1("p5", "pg2")],
        [GANG_PG1, GANG_PG2],
        WAITING_FOR_QUORUM,
    ),
    (
        "gang pod passes PreEnqueue",
        ns1("p1", "pg1"),
        [ns1("p2", "pg1"), ns1("p3", "pg1"), ns1("p4", "pg2"), ns1("p5", "pg2")],
        [GANG_PG1, GANG_PG2],
        None,
    ),
    ("CPG Hierarchical Stage 1: No pods, ready, as CPGs are ignored", ns1("p1-cpg", "pg1-cpg"), [], CPG_GROUPS, None),
    (
        "CPG Hierarchical Stage 2: Add p6, already ready",
        ns1("p6-cpg", "pg6-cpg"),
        [ns1("p1-cpg", "pg1-cpg"), ns1("p2-cpg", "pg2-cpg")],
        CPG_GROUPS,
        None,
    ),
    (
        "CPG Hierarchical Stage 3: Add p4, already ready",
        ns1("p4-cpg", "pg4-cpg"),
        [ns1("p1-cpg", "pg1-cpg"), ns1("p2-cpg", "pg2-cpg"), ns1("p6-cpg", "pg6-cpg")],
        CPG_GROUPS,
        None,
    ),
    (
        "CPG Basic With Gang Stage 1: pg1 ready, root ready, pg2 not ready",
        ns1("p2_1", "pg-basic-2"),
        [ns1("p1_1", "pg-basic-1"), ns1("p1_2", "pg-basic-1")],
        BASIC_CPG_GROUPS,
        WAITING_FOR_QUORUM,
    ),
]


@pytest.mark.parametrize(
    ("target", "others", "groups", "want"), [c[1:] for c in PRE_ENQUEUE_CASES], ids=[c[0] for c in PRE_ENQUEUE_CASES]
)
def test_pre_enqueue(
    target: dict[str, Any], others: list[dict[str, Any]], groups: list[dict[str, Any]], want: Status | None
) -> None:
    h = PodGroupHandle()
    h.add_groups(*groups)
    for p in others:
        h.add_pod(p)
    pi = h.add_pod(target)
    got = plugin(h).pre_enqueue(pi)
    if want is None:
        assert got is None
    else:
        assert got is not None and (got.code, got.reasons) == (want.code, want.reasons)


def test_pre_enqueue_counts_bound_and_assumed_members_too() -> None:
    """The quorum counts every known member, placed or not."""
    h = PodGroupHandle()
    h.add_nodes({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}, "status": {}})
    h.add_groups(pod_group("pg", min_count=3))
    h.add_pod(pod("bound", "pg", node="n1"))
    h.assume(pod("assumed", "pg"), "n1")
    pi = h.add_pod(pod("new", "pg"))
    assert plugin(h).pre_enqueue(pi) is None


# --- TestPlacementFeasible --------------------------------------------------------------------

# (name, minCount (0: basic policy), members in the cycle, initially scheduled, each member's
#  outcome (True: placed), expected code after each)
S, W, U = Code.SUCCESS, Code.WAIT, Code.UNSCHEDULABLE
FEASIBLE_CASES: list[tuple[str, int, int, int, list[bool], list[Code]]] = [
    ("All pods succeed, minCount met at end", 2, 2, 0, [True, True], [W, S]),
    ("First pod fails, minCount not satisfiable", 3, 3, 0, [False], [U]),
    ("Second pod fails, minCount not satisfiable", 2, 2, 0, [True, False], [W, U]),
    ("Non-gang pod group with 0 scheduled pods fails", 0, 1, 0, [False], [U]),
    ("Non-gang pod group with succeeds once 1 pod is scheduled", 0, 1, 0, [True], [S]),
    ("Non-gang pod group with 1 initially scheduled pod succeeds", 0, 1, 1, [False], [S]),
    ("More than minCount pods, all succeed", 2, 3, 0, [True, True, True], [W, S, S]),
    ("More than minCount pods, first fails", 2, 3, 0, [False, True, True], [W, W, S]),
    ("More than minCount pods, minCount not satisfiable", 2, 3, 0, [False, False], [W, U]),
    ("1 pod scheduled, 2 unscheduled pods succeed, minCount 3 met", 3, 2, 1, [True, True], [W, S]),
    ("minCount already met by scheduled pods", 2, 1, 2, [False], [S]),
    ("1 pod scheduled, minCount 3, first unscheduled fails, not enough remaining", 3, 2, 1, [False], [U]),
    ("1 pod scheduled, minCount 4, first unscheduled succeeds, not enough remaining", 4, 2, 1, [True], [U]),
]


@pytest.mark.parametrize(
    ("min_count", "members", "initially", "outcomes", "want"),
    [c[1:] for c in FEASIBLE_CASES],
    ids=[c[0] for c in FEASIBLE_CASES],
)
def test_placement_feasible(
    min_count: int, members: int, initially: int, outcomes: list[bool], want: list[Code]
) -> None:
    obj = pod_group("test-pg", min_count=min_count or None, parent="cpg-root")
    group = PodGroupInfo("default", "test-pg", obj, [PodInfo(pod(f"p{i}", "test-pg")) for i in range(members)])
    pl = plugin()
    scheduled = initially
    got: list[Code] = []
    for i, placed in enumerate(outcomes):
        scheduled += placed
        status = pl.placement_feasible(CycleState(), group, PlacementProgress(members - (i + 1), scheduled))
        got.append(Code.SUCCESS if status is None else status.code)
    assert got == want


def test_placement_feasible_messages() -> None:
    group = PodGroupInfo("default", "g", pod_group("g", min_count=8))
    pl = plugin()
    wait = pl.placement_feasible(CycleState(), group, PlacementProgress(3, 5))
    assert wait is not None and wait.message() == "minCount (8) is not yet satisfied: 5 scheduled, 3 remaining"
    no = pl.placement_feasible(CycleState(), group, PlacementProgress(0, 7))
    assert no is not None and no.message() == "minCount (8) cannot be satisfied: 7 scheduled, 0 remaining"


# --- Permit: the barrier for members that reach it before their gang's minimum is placed -------


class _Groups:
    def __init__(self, obj: dict[str, Any] | None, members: dict[str, Any], scheduled: set[str]) -> None:
        self.obj, self.members, self.scheduled = obj, members, scheduled

    def get(self, namespace: str, name: str) -> dict[str, Any] | None:
        return self.obj

    def state(self, namespace: str, name: str) -> Any:
        from kubesched.framework.podgroup import PodGroupState

        return PodGroupState(self.members, {u: p for u, p in self.members.items() if u in self.scheduled})

    def scheduled_count(self, namespace: str, name: str) -> int:
        return len(self.scheduled)


class _Waiting:
    def __init__(self) -> None:
        self.allowed: list[str] = []

    def allow(self, plugin: str) -> None:
        self.allowed.append(plugin)


class _PermitHandle:
    def __init__(self, groups: _Groups) -> None:
        self.pod_groups = groups
        self.activated: list[str] = []
        self.waiting = {uid: _Waiting() for uid in groups.members}

    def activate(self, pods: Any) -> None:
        self.activated.extend(p.name for p in pods)

    def get_waiting_pod(self, uid: str) -> Any:
        return self.waiting.get(uid)

    def iterate_waiting_pods(self) -> Any:
        return iter(self.waiting.values())


def _permit_case(min_count: int | None, scheduled: set[str]) -> tuple[Any, _PermitHandle]:
    from kubesched.testing import make_pod

    members = {}
    for i in range(3):
        pod = make_pod(f"m{i}").obj()
        pod["spec"]["schedulingGroup"] = {"podGroupName": "g"}
        pod["metadata"]["uid"] = f"m{i}"
        members[f"m{i}"] = PodInfo(pod)
    policy = {"gang": {"minCount": min_count}} if min_count is not None else {"basic": {}}
    obj = {"metadata": {"name": "g", "namespace": "default"}, "spec": {"schedulingPolicy": policy}}
    handle = _PermitHandle(_Groups(obj, members, scheduled))
    plugin = GangScheduling(None, handle)
    return plugin.permit(CycleState(), members["m0"], "n1"), handle


def test_permit_waits_below_min_count_and_activates_the_pending_members() -> None:
    (status, timeout), handle = _permit_case(3, {"m0"})
    assert status is not None and status.is_wait()
    assert status.message() == "waiting for minCount pods from a gang to be scheduled"
    assert timeout == 300.0
    assert sorted(handle.activated) == ["m1", "m2"]


def test_permit_at_min_count_allows_every_waiting_member() -> None:
    (status, _), handle = _permit_case(2, {"m0", "m1"})
    assert status is None
    assert handle.waiting["m0"].allowed == ["GangScheduling"] and handle.waiting["m1"].allowed == ["GangScheduling"]
    assert handle.waiting["m2"].allowed == []


def test_permit_lets_a_basic_group_through() -> None:
    (status, _), handle = _permit_case(None, set())
    assert status is None and handle.activated == []
