"""TopologicalSort (plugins/network-aware) as scheduler-plugins'
``pkg/networkaware/topologicalsort``: ``topologicalsort_test.go``'s ``TestTopologicalSortLess``
case for case, through the test kit's ``plugin_framework`` (the AppGroup read through the
plugin's informer); then the default order it falls back to, the configured namespaces, and
the order of a whole queue."""

from __future__ import annotations

import pytest
from network_aware_cases import BASIC, ONLINE_BOUTIQUE, app_group, network_aware, pod

from kubesched import PodInfo, QueuedPodInfo
from kubesched.testing import plugin_framework

TopologicalSort = network_aware.TopologicalSort
find_pod_order = network_aware.find_pod_order
priority_less = network_aware.priority_less

# --- topologicalsort_test.go: TestTopologicalSortLess ------------------------------------------
LESS_CASES = [
    pytest.param(BASIC, pod("p1", "p1-deployment", "basic"), pod("p2", "p2-deployment", "basic"), True,
                 id="basic, same AppGroup, p1 order lower than p2"),
    pytest.param(ONLINE_BOUTIQUE, pod("p5", "p5-deployment", "onlineboutique"),
                 pod("p1", "p1-deployment", "onlineboutique"), False,
                 id="onlineboutique, same AppGroup, p5 order higher than p1"),
    pytest.param(BASIC, pod("p1", "p1-deployment", "basic"), pod("p5", "p5-deployment", "other"), False,
                 id="pods from different AppGroups... "),
]  # fmt: skip


@pytest.mark.parametrize(("group", "p1", "p2", "want"), LESS_CASES)
def test_topological_sort_less(group: dict[str, object], p1: object, p2: object, want: bool) -> None:
    with plugin_framework(TopologicalSort, objects=[group]) as fw:
        assert fw.less(p1, p2) is want  # type: ignore[arg-type]


# --- beyond upstream's table ---------------------------------------------------------------------
def test_same_index_is_less_both_ways_as_upstreams_less_or_equal() -> None:
    with plugin_framework(TopologicalSort, objects=[BASIC]) as fw:
        a, b = pod("p2", "a", "basic"), pod("p2", "b", "basic")
        assert fw.less(a, b) and fw.less(b, a)


def test_a_workload_missing_from_the_order_has_index_minus_one_and_goes_first() -> None:
    with plugin_framework(TopologicalSort, objects=[BASIC]) as fw:
        assert fw.less(pod("p9", "stranger", "basic"), pod("p1", "first", "basic"))
        assert not fw.less(pod("p1", "first", "basic"), pod("p9", "stranger", "basic"))


def test_pods_without_an_app_group_go_by_priority_then_time_in_the_queue() -> None:
    with plugin_framework(TopologicalSort, objects=[BASIC]) as fw:
        low = PodInfo(pod("p1", "low", "").priority(1).obj())
        high = PodInfo(pod("p3", "high", "").priority(10).obj())
        assert fw.less(QueuedPodInfo(high, 5.0), QueuedPodInfo(low, 1.0))
        assert not fw.less(QueuedPodInfo(low, 1.0), QueuedPodInfo(high, 5.0))
        early, late = QueuedPodInfo(low, 1.0), QueuedPodInfo(PodInfo(pod("p1", "l2", "").priority(1).obj()), 2.0)
        assert fw.less(early, late) and not fw.less(late, early)


def test_same_app_group_ignores_priority() -> None:
    """Upstream orders pods of one AppGroup by topology alone."""
    with plugin_framework(TopologicalSort, objects=[BASIC]) as fw:
        assert fw.less(pod("p1", "a", "basic", priority=0), pod("p3", "b", "basic", priority=1000))


def test_an_app_group_not_found_falls_back_to_the_default_order() -> None:
    with plugin_framework(TopologicalSort, objects=[]) as fw:
        first = QueuedPodInfo(PodInfo(pod("p3", "a", "basic").obj()), 1.0)
        second = QueuedPodInfo(PodInfo(pod("p1", "b", "basic").obj()), 2.0)
        assert fw.less(first, second) and not fw.less(second, first)


def test_the_app_group_is_looked_for_in_the_configured_namespaces_in_order() -> None:
    elsewhere = app_group("basic", {"p1": [], "p2": []}, ["p2", "p1"], namespace="apps")
    with plugin_framework(TopologicalSort, objects=[BASIC, elsewhere]) as fw:
        assert fw.less(pod("p1", "a", "basic"), pod("p2", "b", "basic"))  # default: BASIC's order
    with plugin_framework(TopologicalSort, args={"namespaces": ["apps", "default"]}, objects=[BASIC, elsewhere]) as fw:
        assert not fw.less(pod("p1", "a", "basic"), pod("p2", "b", "basic"))  # apps' order: p2 first
    with plugin_framework(TopologicalSort, args={"namespaces": ["other"]}, objects=[BASIC]) as fw:
        first = QueuedPodInfo(PodInfo(pod("p3", "a", "basic").obj()), 1.0)
        second = QueuedPodInfo(PodInfo(pod("p1", "b", "basic").obj()), 2.0)
        assert fw.less(first, second)  # not found there: by time in the queue


def test_a_queue_of_onlineboutique_pods_leaves_in_topology_order() -> None:
    pods = [pod(s, f"{s}-pod", "onlineboutique") for s in ("p11", "p2", "p5", "p1", "p10", "p8")]
    with plugin_framework(TopologicalSort, objects=[ONLINE_BOUTIQUE]) as fw:
        assert fw.sort_pods(pods) == ["p1-pod", "p10-pod", "p8-pod", "p5-pod", "p2-pod", "p11-pod"]


def test_find_pod_order_is_a_binary_search_over_the_stored_order() -> None:
    order = ONLINE_BOUTIQUE["status"]["topologyOrder"]  # type: ignore[index]
    assert [find_pod_order(order, s) for s in ("p1", "p10", "p11", "p2", "p9")] == [1, 2, 11, 10, 3]
    assert find_pod_order(order, "p12") == -1
    assert find_pod_order([], "p1") == -1


def test_priority_less_is_the_default_sort() -> None:
    a = QueuedPodInfo(PodInfo(pod("p1", "a", "").priority(5).obj()), 3.0)
    b = QueuedPodInfo(PodInfo(pod("p1", "b", "").priority(5).obj()), 3.0)
    assert not priority_less(a, b) and not priority_less(b, a)
