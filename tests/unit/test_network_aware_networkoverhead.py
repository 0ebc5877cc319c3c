"""NetworkOverhead (plugins/network-aware) as scheduler-plugins'
``pkg/networkaware/networkoverhead``: ``networkoverhead_test.go``'s ``TestNetworkOverheadScore``
(scores before and after NormalizeScore) and ``TestNetworkOverheadFilter`` case for case,
through the test kit's ``plugin_framework`` (AppGroup, NetworkTopology and pods read through
the plugin's informers); then what the table leaves out: maxNetworkCost bounds, costs the
topology lacks, nodes without labels, NetperfCosts, the reasons PreFilter gives, missing
objects, and NormalizeScore's edge cases."""

from __future__ import annotations

from typing import Any

import pytest
from network_aware_cases import (
    BASIC,
    NODE_NAMES,
    NODES,
    NT_BASIC,
    allocated,
    app_group,
    make_node,
    network_aware,
    network_topology,
    node,
    origin,
    pod,
)

from kubesched import Code, CycleState, NodeScore, PodInfo, Status
from kubesched.testing import PodBuilder, plugin_framework

NetworkOverhead = network_aware.NetworkOverhead
PRE_FILTER_STATE_KEY = network_aware.PRE_FILTER_STATE_KEY
ARGS = {"namespaces": ["default"], "weightsName": "UserDefined", "networkTopologyName": "nt-test"}


def framework(pods: list[PodBuilder], group: dict[str, Any] = BASIC, topology: dict[str, Any] = NT_BASIC,
              nodes: list[Any] = NODES, args: dict[str, Any] | None = None) -> Any:  # fmt: skip
    objects = [group, topology, *(p.obj() for p in pods)]
    return plugin_framework(NetworkOverhead, args=ARGS if args is None else args, nodes=nodes, objects=objects)


# --- networkoverhead_test.go: TestNetworkOverheadScore ------------------------------------------
SCORE_PODS = [
    allocated("p1", "p1-deployment", "n-2", "basic"),
    allocated("p2", "p2-deployment", "n-5", "basic"),
    allocated("p3", "p3-deployment", "n-1", "basic"),
]
SCORE_CASES = [
    pytest.param(pod("p1", "p1-deployment", "basic"),
                 [20, 20, 20, 20, 0, 1, 10, 10], [0, 0, 0, 0, 100, 95, 50, 50],
                 id="AppGroup: basic, p1 to allocate, 8 nodes to score"),
    pytest.param(pod("p2", "p2-deployment", "basic"),
                 [0, 1, 5, 5, 20, 20, 20, 20], [100, 95, 75, 75, 0, 0, 0, 0],
                 id="AppGroup: basic, p2 to allocate, 8 nodes to score"),
    pytest.param(pod("p3", "p3-deployment", "basic"),
                 [0] * 8, [0] * 8,
                 id="AppGroup: basic, p3 to allocate, no dependency, 8 nodes to score"),
]  # fmt: skip


@pytest.mark.parametrize(("to_place", "before", "after"), SCORE_CASES)
def test_network_overhead_score(to_place: PodBuilder, before: list[int], after: list[int]) -> None:
    with framework(SCORE_PODS) as fw:
        outcome = fw.pre_filter(to_place)
        assert outcome.status is None or outcome.status.is_success(), outcome.status
        scores = fw.score_details(to_place)
        assert scores.status is None
        assert scores.raw["NetworkOverhead"] == dict(zip(NODE_NAMES, before))
        assert scores.final["NetworkOverhead"] == dict(zip(NODE_NAMES, after))


# --- networkoverhead_test.go: TestNetworkOverheadFilter -----------------------------------------
FILTER_PODS = [
    allocated("p1", "p1-deployment", "n-2", "basic"),
    allocated("p2", "p2-deployment", "n-5", "basic"),
    allocated("p3", "p3-deployment", "n-8", "basic"),
]


def not_met(node_name: str, satisfied: int, violated: int) -> str:
    return (
        f"Node {node_name} does not meet several network requirements from Workload dependencies: "
        f"Satisfied: {satisfied} Violated: {violated}"
    )


FILTER_CASES = [
    pytest.param(pod("p1", "p1-deployment", "basic"), "n-1", not_met("n-1", 0, 1),
                 id="AppGroup: basic, p1 to allocate, n-1 to filter: n-1 does not meet network requirements"),
    pytest.param(pod("p1", "p1-deployment", "basic"), "n-6", None,
                 id="AppGroup: basic, p1 to allocate, n-6 to filter: n-6 meets network requirements"),
    pytest.param(pod("p2", "p2-deployment", "basic"), "n-5", not_met("n-5", 0, 1),
                 id="AppGroup: basic, p2 to allocate, n-5 to filter: n-5 does not meet network requirements"),
    pytest.param(pod("p2", "p2-deployment", "basic"), "n-7", None,
                 id="AppGroup: basic, p2 to allocate, n-7 to filter: n-7 meets network requirements"),
    pytest.param(pod("p3", "p3-deployment", "basic"), "n-1", None,
                 id="AppGroup: basic, p3 to allocate, no dependencies, n-1 to filter: n-1 meets network requirements"),
    pytest.param(pod("p10", "p10-deployment", ""), "n-1", None,
                 id="AppGroup: basic, p10 to allocate, different AppGroup, n-1 to filter: "
                    "n-1 meets network requirements"),
    pytest.param(pod("p1", "p1-deployment", "basic"), "n-1", not_met("n-1", 0, 1),
                 id="AppGroup: basic, p1 to allocate, n-1 to filter, multiple dependencies: "
                    "n-1 does not meet network requirements"),
    pytest.param(pod("p1", "p1-deployment", "basic"), "n-6", None,
                 id="AppGroup: basic, p1 to allocate, n-6 to filter, multiple dependencies: "
                    "n-6 meets network requirements"),
]  # fmt: skip


@pytest.mark.parametrize(("to_place", "node_name", "want"), FILTER_CASES)
def test_network_overhead_filter(to_place: PodBuilder, node_name: str, want: str | None) -> None:
    with framework(FILTER_PODS) as fw:
        outcome = fw.pre_filter(to_place)
        assert outcome.status is None or outcome.status.is_success(), outcome.status
        got = fw.filter(to_place, node_name)
        if want is None:
            assert got is None
        else:
            assert got is not None and got.code == Code.UNSCHEDULABLE
            assert got.reasons == [want]
            assert got.plugin == "NetworkOverhead"


# --- beyond upstream's tables --------------------------------------------------------------------
def reason_of(fw: Any, to_place: PodBuilder) -> str:
    """What PreFilter said (upstream returns Success with a reason)."""
    state = CycleState()
    plugin = fw.framework.plugins["NetworkOverhead"]
    status = plugin.pre_filter(state, PodInfo(to_place.obj()))
    assert isinstance(status, Status)
    return " ".join(status.reasons) if status.is_success() else f"{status.code.name}: {' '.join(status.reasons)}"


def raw_scores(fw: Any, to_place: PodBuilder) -> dict[str, int]:
    """PreFilter, then Score over every node: the plugin's scores before NormalizeScore."""
    fw.pre_filter(to_place)
    scores: dict[str, int] = fw.score_details(to_place).raw["NetworkOverhead"]
    return scores


def test_pre_filter_reasons_as_upstream_words_them() -> None:
    with framework(SCORE_PODS) as fw:
        assert reason_of(fw, pod("p9", "x", "")) == "Pod does not belong to an AppGroup, return"
        assert reason_of(fw, pod("p3", "x", "basic")) == "Pod has no dependencies, return"
        assert reason_of(fw, pod("p1", "x", "basic")) == "PreFilter State updated"
    with framework([]) as fw:
        assert reason_of(fw, pod("p1", "x", "basic")) == "No pods yet allocated, return"
    with framework([pod("p2", "pending", "basic")]) as fw:
        assert reason_of(fw, pod("p1", "x", "basic")) == "Scheduled list is empty, return"


def test_a_missing_app_group_or_network_topology_is_an_error_naming_it() -> None:
    with framework(SCORE_PODS, args={"networkTopologyName": "nt-test", "namespaces": ["apps"]}) as fw:
        assert reason_of(fw, pod("p1", "x", "basic")) == "ERROR: AppGroup \"basic\" not found in namespaces ['apps']"
        outcome = fw.pre_filter(pod("p1", "x", "basic"))
        assert outcome.status is not None and outcome.status.code == Code.ERROR
    with framework(SCORE_PODS, args={}) as fw:  # the default name, nt-default, is not there
        assert reason_of(fw, pod("p1", "x", "basic")) == (
            "ERROR: NetworkTopology \"nt-default\" not found in namespaces ['default']"
        )


def test_a_placed_pod_on_an_unknown_node_fails_pre_filter() -> None:
    with framework([allocated("p2", "gone", "n-9", "basic")]) as fw:
        assert reason_of(fw, pod("p1", "x", "basic")) == (
            'ERROR: pod hostname not found: nodeinfo not found for node name "n-9"'
        )


def test_max_network_cost_decides_what_a_cost_satisfies() -> None:
    """p1 depends on p2 at a cost of at most 10: zone Z4 -> Z3 (10) satisfies, us-west-1 ->
    us-east-1 (20) violates."""
    group = app_group("basic", {"p1": [("p2", 10)], "p2": []}, ["p1", "p2"])
    with framework([allocated("p2", "p2-0", "n-5", "basic")], group=group) as fw:
        statuses = fw.filter_all(pod("p1", "x", "basic"))
        assert [n for n, s in statuses.items() if s is not None] == ["n-1", "n-2", "n-3", "n-4"]
        assert statuses["n-1"] is not None and statuses["n-1"].reasons == [not_met("n-1", 0, 1)]


def test_violated_must_exceed_satisfied_to_refuse() -> None:
    """Two placed pods of p2 (maxNetworkCost 0), on n-5 (us-east-1/Z3) and n-3 (us-west-1/Z2):
    a node in the zone of one of them satisfies one and violates the other, and passes; a node
    in neither zone violates both."""
    pods = [allocated("p2", "a", "n-5", "basic"), allocated("p2", "b", "n-3", "basic")]
    with framework(pods) as fw:
        statuses = fw.filter_all(pod("p1", "x", "basic"))
        assert [n for n, s in statuses.items() if s is None] == ["n-3", "n-4", "n-5", "n-6"]
        assert statuses["n-7"] is not None and statuses["n-7"].reasons == [not_met("n-7", 0, 2)]


def test_a_cost_the_topology_lacks_is_neither_satisfied_nor_violated_and_scores_max_cost() -> None:
    topology = network_topology(regions=[], zones=[])
    with framework([allocated("p2", "p2-0", "n-5", "basic")], topology=topology) as fw:
        assert fw.filter_all(pod("p1", "x", "basic")) == dict.fromkeys(NODE_NAMES)
        raw = raw_scores(fw, pod("p1", "x", "basic"))
        assert raw == {"n-1": 100, "n-2": 100, "n-3": 100, "n-4": 100, "n-5": 0, "n-6": 1, "n-7": 100, "n-8": 100}


def test_a_dependency_on_a_node_without_region_and_zone_is_violated_at_max_cost() -> None:
    nodes = [*NODES, make_node("bare").capacity(cpu="8", memory="16Gi")]
    with framework([allocated("p2", "p2-0", "bare", "basic")], nodes=nodes) as fw:
        statuses = fw.filter_all(pod("p1", "x", "basic"))
        assert statuses["bare"] is None  # the same node: satisfied
        assert statuses["n-1"] is not None and statuses["n-1"].reasons == [not_met("n-1", 0, 1)]
        raw = raw_scores(fw, pod("p1", "x", "basic"))
        assert raw["bare"] == 0 and raw["n-1"] == 100


def test_the_weights_are_those_named_by_weights_name() -> None:
    both = network_topology(regions=[origin("us-west-1", **{"us-east-1": 20})])
    both["spec"]["weights"].append(
        {
            "name": "NetperfCosts",
            "topologyList": [
                {
                    "topologyKey": "topology.kubernetes.io/region",
                    "originList": [origin("us-west-1", **{"us-east-1": 3})],
                }
            ],
        }
    )
    placed = [allocated("p2", "p2-0", "n-5", "basic")]
    with framework(placed, topology=both) as fw:
        assert raw_scores(fw, pod("p1", "x", "basic"))["n-1"] == 20
    with framework(placed, topology=both, args={**ARGS, "weightsName": "NetperfCosts"}) as fw:
        assert raw_scores(fw, pod("p1", "x", "basic"))["n-1"] == 3


def test_user_defined_weights_are_sorted_before_the_search_netperf_costs_are_not() -> None:
    """Origins out of order: found once sorted (UserDefined); NetperfCosts is searched as
    stored, so an origin the binary search passes over is not found (MaxCost)."""
    origins = [origin("us-west-1", **{"us-east-1": 20}), origin("eu-1", **{"us-east-1": 7}), origin("ap-1")]
    user = network_topology(regions=origins)
    netperf = network_topology(weights_name="NetperfCosts", regions=origins)
    placed = [allocated("p2", "p2-0", "n-5", "basic")]
    with framework(placed, topology=user) as fw:
        assert raw_scores(fw, pod("p1", "x", "basic"))["n-1"] == 20
    with framework(placed, topology=netperf, args={**ARGS, "weightsName": "NetperfCosts"}) as fw:
        assert raw_scores(fw, pod("p1", "x", "basic"))["n-1"] == 100


def test_pods_of_the_app_group_in_every_namespace_count() -> None:
    with framework([allocated("p2", "p2-0", "n-5", "basic").namespace("elsewhere")]) as fw:
        raw = raw_scores(fw, pod("p1", "x", "basic"))
        assert raw["n-5"] == 0 and raw["n-1"] == 20


def test_filter_and_score_without_pre_filter_state_are_errors_as_upstream_words_them() -> None:
    plugin = NetworkOverhead()
    info = node("n-1", "us-west-1", "Z1").info()
    status = plugin.filter(CycleState(), PodInfo(pod("p1", "x", "basic").obj()), info)
    assert status is not None and status.code == Code.ERROR
    assert status.reasons == ["not eligible due to failed to read from cycleState"]
    score, status = plugin.score(CycleState(), PodInfo(pod("p1", "x", "basic").obj()), info)
    assert score == 0 and status is not None and status.code == Code.ERROR
    assert status.reasons == ["not eligible due to failed to read from cycleState, return min score"]


def test_normalize_score_edge_cases() -> None:
    def normalized(values: list[int]) -> list[int]:
        scores = [NodeScore(f"n{i}", v) for i, v in enumerate(values)]
        network_aware.networkoverhead.normalize(scores)
        return [s.score for s in scores]

    assert normalized([0, 0, 0]) == [0, 0, 0]  # all at the minimum score: left as they are
    assert normalized([7, 7]) == [100, 100]  # max == min: no division
    assert normalized([0, 3]) == [100, 0]
    assert normalized([10, 11, 13]) == [100, 67, 0]  # 100 * 1/3 = 33.3 truncated
    assert normalized([]) == []


def test_the_pre_filter_state_is_shared_by_clones() -> None:
    with framework(SCORE_PODS) as fw:
        state = CycleState()
        plugin = fw.framework.plugins["NetworkOverhead"]
        plugin.pre_filter(state, PodInfo(pod("p1", "x", "basic").obj()))
        assert state.clone().read(PRE_FILTER_STATE_KEY) is state.read(PRE_FILTER_STATE_KEY)
