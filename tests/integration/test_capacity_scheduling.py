"""The out-of-tree CapacityScheduling plugin (plugins/capacity-scheduling): scheduler-plugins'
``capacity_scheduling_test.go``, case for case, through kubesched's runtime."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from kubesched import ActionType, Code, CycleState, EventResource, PodInfo, PostFilterResult, Resource, Status
from kubesched.testing import as_node_infos, framework_for, make_node, make_pod

PACKAGE = Path(__file__).resolve().parents[2] / "plugins" / "capacity-scheduling"
sys.path.insert(0, str(PACKAGE))

from kubesched_capacity_scheduling import (  # noqa: E402
    ELASTIC_QUOTA_SNAPSHOT_KEY,
    LOWER_BOUND_OF_MIN,
    PRE_FILTER_STATE_KEY,
    UPPER_BOUND_OF_MAX,
    CapacityScheduling,
    ElasticQuotaInfo,
    ElasticQuotaInfos,
    ElasticQuotaSnapshotState,
    PreFilterState,
    QuotaPreemption,
    compute_pod_resource_request,
)
from kubesched_capacity_scheduling.capacity_scheduling import Candidate, select_candidate  # noqa: E402

GPU = "nvidia.com/gpu"
MID, HIGH = 100, 1000


def quota_pod(
    name: str, ns: str, mem: int, cpu: int, gpu: int, priority: int, uid: str, node: str = "", phase: str = ""
) -> PodInfo:
    """Upstream's makePod (and makePodWithStatus): one container requesting ``mem`` bytes,
    ``cpu`` millicores and ``gpu`` GPUs."""
    b = (
        make_pod(name, ns)
        .uid(uid)
        .priority(priority)
        .container(requests={"memory": str(mem), "cpu": f"{cpu}m", GPU: str(gpu)})
    )
    if node:
        b.node(node)
    if phase:
        b.set("status.phase", phase)
    return b.info()


def R(cpu: int = 0, mem: int = 0) -> Resource:
    return Resource(milli_cpu=cpu, memory=mem)


def mem_quota(ns: str, min_mem: int, max_mem: int, used_mem: int, pods: set[str] | None = None) -> ElasticQuotaInfo:
    return ElasticQuotaInfo(ns, min=R(mem=min_mem), max=R(mem=max_mem), used=R(mem=used_mem), pods=pods or set())


def elastic_quota(ns: str, name: str, max_: dict[str, Any] | None, min_: dict[str, Any] | None) -> dict[str, Any]:
    """Upstream's makeEQ: an ElasticQuota object."""
    spec: dict[str, Any] = {}
    if max_ is not None:
        spec["max"] = max_
    if min_ is not None:
        spec["min"] = min_
    return {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "ElasticQuota",
        "metadata": {"name": name, "namespace": ns},
        "spec": spec,
    }


def resource_list(cpu: int, mem: int) -> dict[str, Any]:
    return {"cpu": f"{cpu}m", "memory": str(mem)}


def node_a() -> Any:
    # upstream's st.MakeNode().Capacity(...) gives 32 pods besides the resources named
    return make_node("node-a").capacity(memory="150", pods="32")


def plugin(infos: dict[str, ElasticQuotaInfo] | None = None, nodes: Any = (), pods: Any = ()) -> CapacityScheduling:
    """The plugin over a framework holding NodeResourcesFit (PreFilter, Filter), as upstream's
    tests build it: the plugin is not itself in the framework."""
    fw = framework_for("NodeResourcesFit", nodes=as_node_infos(nodes, pods))
    cs = CapacityScheduling(None, fw)
    cs.elastic_quota_infos = ElasticQuotaInfos(infos or {})
    return cs


async def cycle_state(cs: CapacityScheduling, pod: PodInfo, infos: dict[str, ElasticQuotaInfo]) -> CycleState:
    """NodeResourcesFit's PreFilter run, and CapacityScheduling's state written by hand, each
    nominated total being the pod's own request (upstream's tests do the same)."""
    state = CycleState()
    _, status, _ = await cs.handle.run_pre_filter(state, pod)  # type: ignore[union-attr]
    assert status is None or status.is_success()
    req = compute_pod_resource_request(pod)
    state.write(PRE_FILTER_STATE_KEY, PreFilterState(req, req, req))
    state.write(ELASTIC_QUOTA_SNAPSHOT_KEY, ElasticQuotaSnapshotState(ElasticQuotaInfos(infos)))
    return state


UNSCHEDULABLE_ON_NODE_A = {"node-a": Status(Code.UNSCHEDULABLE)}


# --- TestPreFilter ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pods", "quotas", "expected"),
    [
        pytest.param(
            [("ns1-p1", "ns1", 500), ("ns1-p2", "ns1", 1800)],
            {"ns1": mem_quota("ns1", 1000, 2000, 300)},
            [Code.SUCCESS, Code.UNSCHEDULABLE],
            id="pod subjects to ElasticQuota",
        ),
        pytest.param(
            [("ns2-p1", "ns2", 500)],
            {"ns1": mem_quota("ns1", 1000, 2000, 1800), "ns2": mem_quota("ns2", 1000, 2000, 200)},
            [Code.UNSCHEDULABLE],
            id="the sum of used is bigger than the sum of min",
        ),
        pytest.param([("ns2-p1", "ns2", 500)], {}, [Code.SUCCESS], id="without elasticQuotaInfo"),
    ],
)
def test_pre_filter(
    pods: list[tuple[str, str, int]], quotas: dict[str, ElasticQuotaInfo], expected: list[Code]
) -> None:
    cs = plugin(quotas)
    state = CycleState()
    for (name, ns, mem), want in zip(pods, expected, strict=True):
        status = cs.pre_filter(state, quota_pod(name, ns, mem, 0, 0, 0, name))
        assert (status.code if status is not None else Code.SUCCESS) is want


def test_pre_filter_says_which_bound_rejected_the_pod() -> None:
    cs = plugin({"ns1": mem_quota("ns1", 1000, 2000, 1800), "ns2": mem_quota("ns2", 1000, 2000, 200)})
    over_max = cs.pre_filter(CycleState(), quota_pod("big", "ns1", 500, 0, 0, 0, "big"))
    over_min = cs.pre_filter(CycleState(), quota_pod("ns2-p1", "ns2", 500, 0, 0, 0, "ns2-p1"))
    assert over_max is not None and over_max.reasons == [
        "Pod ns1/big is rejected in PreFilter because ElasticQuota ns1 is more than Max"
    ]
    assert over_min is not None and over_min.reasons == [
        "Pod ns2/ns2-p1 is rejected in PreFilter because total ElasticQuota used is more than min"
    ]


def test_pre_filter_leaves_its_snapshot_and_the_requests_in_the_cycle_state() -> None:
    cs = plugin({"ns1": mem_quota("ns1", 1000, 2000, 300)})
    state = CycleState()
    assert cs.pre_filter(state, quota_pod("p", "ns1", 500, 0, 0, 0, "p")) is None
    pf = state.read(PRE_FILTER_STATE_KEY)
    assert pf.pod_req == R(mem=500) and pf.nominated_in_eq_with_pod_req == R(mem=500)
    snapshot = state.read(ELASTIC_QUOTA_SNAPSHOT_KEY).elastic_quota_infos
    snapshot["ns1"].used.memory += 1
    assert cs.elastic_quota_infos["ns1"].used == R(mem=300), "the snapshot is a copy"


# --- TestPostFilter ---------------------------------------------------------------------------------

EXISTING = [
    ("t1-p2", "ns1"),
    ("t1-p3", "ns2"),
    ("t1-p4", "ns2"),
]


@pytest.mark.parametrize(
    "quotas",
    [
        pytest.param(
            {"ns1": mem_quota("ns1", 50, 200, 50), "ns2": mem_quota("ns2", 200, 200, 100)}, id="in-namespace preemption"
        ),
        pytest.param(
            {"ns1": mem_quota("ns1", 150, 200, 50), "ns2": mem_quota("ns2", 50, 200, 100)},
            id="cross-namespace preemption",
        ),
        pytest.param({}, id="without elasticQuotas"),
    ],
)
async def test_post_filter(quotas: dict[str, ElasticQuotaInfo]) -> None:
    pod = quota_pod("t1-p1", "ns1", 50, 0, 0, HIGH, "t1-p1")
    existing = [quota_pod(name, ns, 50, 0, 0, MID, name, "node-a") for name, ns in EXISTING]
    cs = plugin(quotas, [node_a()], existing)
    state = await cycle_state(cs, pod, quotas)
    result, status = await cs.post_filter(state, pod, dict(UNSCHEDULABLE_ON_NODE_A))
    # The evaluator's success says where and for how many (1.37); CapacityScheduling gives it
    # as it is, without DefaultPreemption's "preemption: ".
    assert status == Status(Code.SUCCESS, "found a potential placement for pod on node node-a, preempting 1 victims")
    assert isinstance(result, PostFilterResult) and result.nominated_node_name == "node-a"


# --- TestReserve / TestUnreserve --------------------------------------------------------------------


def test_reserve() -> None:
    """Reserve pods: the pod of the namespace with a quota is counted, the other ignored."""
    cs = plugin({"ns1": mem_quota("ns1", 1000, 2000, 300)})
    expected = mem_quota("ns1", 1000, 2000, 350, {"t1-p1"})
    for name, ns in [("t1-p1", "ns1"), ("t1-p2", "ns2")]:
        assert cs.reserve(CycleState(), quota_pod(name, ns, 50, 0, 0, MID, name, "node-a"), "node-a") is None
        assert cs.elastic_quota_infos["ns1"] == expected
    assert "ns2" not in cs.elastic_quota_infos


def test_unreserve() -> None:
    """Unreserve pods: only a pod the quota counted is taken out."""
    cs = plugin({"ns1": mem_quota("ns1", 1000, 2000, 300, {"t1-p3", "t1-p4"})})
    expected = [
        mem_quota("ns1", 1000, 2000, 300, {"t1-p3", "t1-p4"}),
        mem_quota("ns1", 1000, 2000, 300, {"t1-p3", "t1-p4"}),
        mem_quota("ns1", 1000, 2000, 250, {"t1-p4"}),
    ]
    for (name, ns), want in zip([("t1-p1", "ns1"), ("t1-p2", "ns2"), ("t1-p3", "ns1")], expected, strict=True):
        cs.unreserve(CycleState(), quota_pod(name, ns, 50, 0, 0, MID, name, "node-a"), "node-a")
        assert cs.elastic_quota_infos["ns1"] == want


# --- TestDryRunPreemption ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("existing", "quotas", "victims"),
    [
        pytest.param(
            [("t1-p1", "ns1", MID), ("t1-p2", "ns2", MID), ("t1-p3", "ns2", MID)],
            {"ns1": mem_quota("ns1", 50, 200, 50), "ns2": mem_quota("ns2", 200, 200, 100)},
            ["t1-p1"],
            id="in-namespace preemption",
        ),
        pytest.param(
            [("t1-p1", "ns1", MID), ("t1-p2", "ns2", HIGH), ("t1-p3", "ns2", MID)],
            {"ns1": mem_quota("ns1", 150, 200, 50), "ns2": mem_quota("ns2", 50, 200, 100)},
            ["t1-p3"],
            id="cross-namespace preemption",
        ),
    ],
)
async def test_dry_run_preemption(
    existing: list[tuple[str, str, int]], quotas: dict[str, ElasticQuotaInfo], victims: list[str]
) -> None:
    pod = quota_pod("t1-p", "ns1", 50, 0, 0, HIGH, "t1-p")
    pods = [quota_pod(name, ns, 50, 0, 0, prio, name, "node-a") for name, ns, prio in existing]
    cs = plugin(quotas, [node_a()], pods)
    state = await cycle_state(cs, pod, quotas)
    nodes = list(cs.handle.snapshot().list())  # type: ignore[union-attr]
    candidates, _, errors = await QuotaPreemption(cs.handle, state).dry_run_preemption(pod, nodes, [])
    assert errors == []
    assert [(c.name, sorted(v.name for v in c.victims), c.num_pdb_violations) for c in candidates] == [
        ("node-a", victims, 0)
    ]


# --- TestPodEligibleToPreemptOthers -----------------------------------------------------------------


def preemptor(ns: str = "default", never: bool = False, nominated: bool = True) -> PodInfo:
    b = make_pod("t1-p1", ns).uid("t1-p1").priority(HIGH)
    if never:
        b.preemption_policy("Never")
    if nominated:
        b.set("status.nominatedNodeName", "node-a")
    return b.info()


def terminating(ns: str) -> PodInfo:
    return (
        make_pod("t1-p0", ns)
        .uid("t1-p0")
        .priority(MID)
        .node("node-a")
        .set("metadata.deletionTimestamp", "2026-01-01T00:00:00Z")
        .info()
    )


def limited(ns: str, used: int) -> ElasticQuotaInfo:
    return mem_quota(ns, 50, 150, used)


UNRESOLVABLE = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "node(s) had untolerated taint(s)")


@pytest.mark.parametrize(
    ("pod", "existing", "status", "quotas", "expected"),
    [
        pytest.param(
            preemptor(never=True, nominated=False),
            [quota_pod("t1-p0", "ns1", 50, 10, 0, MID, "t1-p1", "node-a")],
            UNRESOLVABLE,
            {"ns1": limited("ns1", 0)},
            False,
            id="Pod with PreemptNever preemption policy",
        ),
        pytest.param(
            preemptor(),
            [quota_pod("t1-p0", "ns1", 50, 10, 0, MID, "t1-p1", "node-a")],
            UNRESOLVABLE,
            {"ns1": limited("ns1", 0)},
            True,
            id="Pod with unschedulableAndUnresolvable nominated node",
        ),
        pytest.param(
            preemptor("ns1"),
            [terminating("ns1")],
            None,
            {"ns1": limited("ns1", 0)},
            False,
            id="Pod with terminating pod in the same namespace",
        ),
        pytest.param(
            preemptor("ns1"),
            [terminating("ns2")],
            None,
            {"ns1": limited("ns1", 0), "ns2": limited("ns2", 100)},
            False,
            id="Pod with terminating pod in another namespace",
        ),
        pytest.param(
            preemptor("ns1"),
            [terminating("ns2")],
            None,
            {},
            False,
            id="Pod without elasticQuotas and terminating pod exists in the same namespace",
        ),
        pytest.param(
            preemptor("ns1"),
            [terminating("ns2")],
            None,
            {"ns2": limited("ns2", 100)},
            True,
            id="Pod without ElasticQuotas and terminating pod exists in another namespace",
        ),
    ],
)
async def test_pod_eligible_to_preempt_others(
    pod: PodInfo,
    existing: list[PodInfo],
    status: Status | None,
    quotas: dict[str, ElasticQuotaInfo],
    expected: bool,
) -> None:
    cs = plugin(quotas, [node_a()], existing)
    state = await cycle_state(cs, pod, quotas)
    got, _ = QuotaPreemption(cs.handle, state).pod_eligible_to_preempt_others(pod, status)
    assert got is expected


# --- TestAddElasticQuota / TestUpdateElasticQuota / TestDeleteElasticQuota -------------------------

UNBOUNDED = Resource(UPPER_BOUND_OF_MAX, UPPER_BOUND_OF_MAX, UPPER_BOUND_OF_MAX)
NO_MIN = Resource(LOWER_BOUND_OF_MIN, LOWER_BOUND_OF_MIN, LOWER_BOUND_OF_MIN)


@pytest.mark.parametrize(
    ("quota", "expected"),
    [
        pytest.param(
            elastic_quota("ns1", "t1-eq1", resource_list(100, 1000), resource_list(10, 100)),
            ElasticQuotaInfo("ns1", min=R(10, 100), max=R(100, 1000)),
            id="Add ElasticQuota",
        ),
        pytest.param(
            elastic_quota("ns1", "t1-eq1", None, resource_list(10, 100)),
            ElasticQuotaInfo("ns1", min=R(10, 100), max=UNBOUNDED),
            id="Add ElasticQuota without Max",
        ),
        pytest.param(
            elastic_quota("ns1", "t1-eq1", resource_list(100, 1000), None),
            ElasticQuotaInfo("ns1", min=NO_MIN, max=R(100, 1000)),
            id="Add ElasticQuota without Min",
        ),
        pytest.param(
            elastic_quota("ns1", "t1-eq1", None, None),
            ElasticQuotaInfo("ns1", min=NO_MIN, max=UNBOUNDED),
            id="Add ElasticQuota without Max and Min",
        ),
    ],
)
def test_add_elastic_quota(quota: dict[str, Any], expected: ElasticQuotaInfo) -> None:
    cs = plugin()
    cs.add_elastic_quota(quota)
    assert cs.elastic_quota_infos["ns1"] == expected


def test_update_elastic_quota() -> None:
    """Update ElasticQuota without Used."""
    cs = plugin()
    old = elastic_quota("ns1", "t1-eq1", resource_list(100, 1000), resource_list(10, 100))
    new = elastic_quota("ns1", "t1-eq1", resource_list(300, 1000), resource_list(10, 100))
    cs.add_elastic_quota(old)
    cs.update_elastic_quota(old, new)
    assert cs.elastic_quota_infos["ns1"] == ElasticQuotaInfo("ns1", min=R(10, 100), max=R(300, 1000))


def test_update_elastic_quota_keeps_what_is_used() -> None:
    cs = plugin()
    old = elastic_quota("ns1", "t1-eq1", resource_list(100, 1000), resource_list(10, 100))
    cs.add_elastic_quota(old)
    cs.add_pod_to_quota(quota_pod("t1-p1", "ns1", 50, 10, 0, MID, "t1-p1", "node-a").pod)
    cs.update_elastic_quota(old, elastic_quota("ns1", "t1-eq1", resource_list(300, 1000), None))
    assert cs.elastic_quota_infos["ns1"] == ElasticQuotaInfo(
        "ns1", min=NO_MIN, max=R(300, 1000), used=R(10, 50), pods={"t1-p1"}
    )


def test_delete_elastic_quota() -> None:
    cs = plugin()
    quota = elastic_quota("ns1", "t1-eq1", resource_list(300, 1000), resource_list(10, 100))
    cs.add_elastic_quota(quota)
    cs.delete_elastic_quota(quota)
    assert "ns1" not in cs.elastic_quota_infos


# --- TestAddPod / TestUpdatePod / TestDeletePod -----------------------------------------------------

EQ1 = elastic_quota("ns1", "t1-eq1", resource_list(100, 1000), resource_list(10, 100))


def counted(cpu: int, mem: int, pods: set[str]) -> ElasticQuotaInfo:
    return ElasticQuotaInfo("ns1", min=R(10, 100), max=R(100, 1000), used=R(cpu, mem), pods=pods)


def test_add_pod() -> None:
    cs = plugin()
    cs.add_elastic_quota(EQ1)
    for name in ("t1-p1", "t1-p2", "t1-p3"):
        cs.add_pod_to_quota(quota_pod(name, "ns1", 50, 10, 0, MID, name, "node-a").pod)
    assert cs.elastic_quota_infos["ns1"] == counted(30, 150, {"t1-p1", "t1-p2", "t1-p3"})


@pytest.mark.parametrize(
    ("old_phase", "new_phase", "expected"),
    [
        pytest.param(
            "Succeeded",
            "Running",
            counted(30, 100, {"t1-p1"}),
            id="Update Pod With Pod Status PodSucceeded and PodRunning",
        ),
        pytest.param(
            "Pending", "Failed", counted(0, 0, set()), id="Update Pod With Pod Status PodPending and PodFailed"
        ),
    ],
)
def test_update_pod(old_phase: str, new_phase: str, expected: ElasticQuotaInfo) -> None:
    cs = plugin()
    cs.add_elastic_quota(EQ1)
    old = quota_pod("t1-p1", "ns1", 100, 30, 0, MID, "t1-p1", "node-a", phase=old_phase).pod
    new = quota_pod("t1-p1", "ns1", 100, 30, 0, HIGH, "t1-p1", "node-a", phase=new_phase).pod
    cs.add_pod_to_quota(old)
    cs.update_pod_in_quota(old, new)
    assert cs.elastic_quota_infos["ns1"] == expected


@pytest.mark.parametrize(
    ("deleted", "expected"),
    [
        pytest.param(["t1-p1", "t1-p2"], counted(0, 0, set()), id="Delete All Pods"),
        pytest.param(["t1-p1"], counted(30, 100, {"t1-p2"}), id="Delete one Pod"),
    ],
)
def test_delete_pod(deleted: list[str], expected: ElasticQuotaInfo) -> None:
    cs = plugin()
    cs.add_elastic_quota(EQ1)
    pods = {
        "t1-p1": quota_pod("t1-p1", "ns1", 100, 30, 0, MID, "t1-p1", "node-a").pod,
        "t1-p2": quota_pod("t1-p2", "ns1", 100, 30, 0, HIGH, "t1-p2", "node-a").pod,
    }
    for pod in pods.values():
        cs.add_pod_to_quota(pod)
    for name in deleted:
        cs.delete_pod_from_quota(pods[name])
    assert cs.elastic_quota_infos["ns1"] == expected


def test_events_to_register_name_pod_deletion_and_every_elastic_quota_change() -> None:
    events = [(e.event.resource, e.event.action) for e in CapacityScheduling().events_to_register()]
    assert events == [
        (EventResource.POD, ActionType.DELETE),
        ("elasticquotas.v1alpha1.scheduling.x-k8s.io", ActionType.ALL),
    ]


# --- beyond upstream's tables: nominated pods, budgets, the choice of node -------------------------


class Nominated:
    """A nominator holding fixed nominated pods per node."""

    def __init__(self, by_node: dict[str, list[PodInfo]]) -> None:
        self.by_node = by_node

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        return list(self.by_node.get(node_name, []))


@pytest.mark.parametrize(
    ("nominated", "quotas", "expected"),
    [
        pytest.param(
            [("n-high", "ns1", 1000, HIGH)],
            {"ns1": mem_quota("ns1", 1200, 2000, 300)},
            Code.UNSCHEDULABLE,
            id="a more important pod of its namespace, nominated, counts toward max",
        ),
        pytest.param(
            [("n-low", "ns1", 1000, 0)],
            {"ns1": mem_quota("ns1", 1200, 2000, 300)},
            Code.SUCCESS,
            id="a less important one does not",
        ),
        pytest.param(
            [("n-other", "ns2", 1000, 0)],
            {"ns1": mem_quota("ns1", 1200, 2000, 300), "ns2": mem_quota("ns2", 100, 2000, 0)},
            Code.UNSCHEDULABLE,
            id="a pod of a namespace within its min counts toward the sum of min",
        ),
        pytest.param(
            [("n-other", "ns2", 1000, 0)],
            {"ns1": mem_quota("ns1", 1200, 2000, 300), "ns2": mem_quota("ns2", 100, 2000, 200)},
            Code.SUCCESS,
            id="one of a namespace over its min does not",
        ),
    ],
)
def test_pre_filter_counts_nominated_pods_as_upstream(
    nominated: list[tuple[str, str, int, int]], quotas: dict[str, ElasticQuotaInfo], expected: Code
) -> None:
    cs = plugin(quotas, [node_a()])
    cs.handle.nominator = Nominated(  # type: ignore[union-attr]
        {"node-a": [quota_pod(name, ns, mem, 0, 0, prio, name) for name, ns, mem, prio in nominated]}
    )
    status = cs.pre_filter(CycleState(), quota_pod("p", "ns1", 800, 0, 0, MID, "p"))
    assert (status.code if status is not None else Code.SUCCESS) is expected


async def test_a_budget_protected_victim_is_counted_as_a_violation() -> None:
    pod = quota_pod("t1-p", "ns1", 150, 0, 0, HIGH, "t1-p")
    quotas = {"ns1": mem_quota("ns1", 50, 400, 100), "ns2": mem_quota("ns2", 300, 300, 50)}
    victims = [
        make_pod(name, "ns1").uid(name).priority(MID).label("app", "db").req(memory="50").node("node-a").info()
        for name in ("db-0", "db-1")
    ]
    budget = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "db", "namespace": "ns1"},
        "spec": {"selector": {"matchLabels": {"app": "db"}}},
        "status": {"disruptionsAllowed": 0},
    }
    cs = plugin(quotas, [node_a()], victims)
    state = await cycle_state(cs, pod, quotas)
    nodes = list(cs.handle.snapshot().list())  # type: ignore[union-attr]
    (candidate,), _, _ = await QuotaPreemption(cs.handle, state).dry_run_preemption(pod, nodes, [budget])
    assert (sorted(v.name for v in candidate.victims), candidate.num_pdb_violations) == (["db-0", "db-1"], 2)


def test_the_candidate_with_the_least_important_victims_is_chosen() -> None:
    low = quota_pod("low", "ns1", 50, 0, 0, 10, "low", "n1")
    mid = quota_pod("mid", "ns1", 50, 0, 0, MID, "mid", "n2")
    two_low = [quota_pod(f"low-{i}", "ns1", 50, 0, 0, 10, f"low-{i}", "n3") for i in range(2)]
    candidates = [Candidate("n2", [mid]), Candidate("n3", two_low), Candidate("n1", [low])]
    assert select_candidate(candidates).name == "n1"  # type: ignore[union-attr]
    assert select_candidate([Candidate("n2", [mid], 0), Candidate("n1", [low], 1)]).name == "n2"  # type: ignore[union-attr]
