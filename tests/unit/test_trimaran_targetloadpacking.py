"""TargetLoadPacking (plugins/trimaran) as scheduler-plugins'
``pkg/trimaran/targetloadpacking/targetloadpacking_test.go``: ``TestTargetLoadPackingScoring``
case for case, and the pods placed since the measurements counted as upstream counts them."""

from __future__ import annotations

import sys

import pytest
from trimaran_cases import PACKAGE, answer, node, node_info, pod, pod_with_containers_and_overhead

from kubesched import CycleState, PodInfo

sys.path.insert(0, str(PACKAGE))  # the package is not installed for the suite

from kubesched_trimaran import Metric, TargetLoadPacking, TargetLoadPackingArgs


def plugin(**args: object) -> TargetLoadPacking:
    # upstream's test args: a watcher address, the default target and multiplier
    return TargetLoadPacking(TargetLoadPackingArgs.model_validate({"watcherAddress": "http://deadbeef:2020", **args}))


def cpu_latest(value: float) -> list[Metric]:
    return [Metric("CPU", "Latest", value)]


@pytest.mark.parametrize(
    ("test", "p", "nodes", "expected"),
    [
        ("new node", pod(), {"node-1": cpu_latest(0)}, 40),
        ("hot node", pod(), {"node-1": cpu_latest(40 + 10)}, 33),
        (
            "excess utilization returns min score",
            pod_with_containers_and_overhead(0, None, None, [1000]),
            {"node-1": cpu_latest(30)},
            0,
        ),
        ("404 resp from watcher", pod(), None, 0),
    ],
)
def test_target_load_packing_scoring(
    test: str, p: dict[str, object], nodes: dict[str, list[Metric]] | None, expected: int
) -> None:
    pl = plugin()
    pl.collector.set(answer(nodes))
    assert pl.score(CycleState(), PodInfo(p), node_info(node("node-1"))) == expected, test


def test_a_node_the_answer_does_not_have_scores_the_minimum() -> None:
    pl = plugin()
    pl.collector.set(answer({"node-2": cpu_latest(10)}))
    assert pl.score(CycleState(), PodInfo(pod()), node_info(node("node-1"))) == 0


def test_only_an_average_or_latest_cpu_metric_counts() -> None:
    pl = plugin()
    pl.collector.set(answer({"node-1": [Metric("CPU", "STD", 10), Metric("Memory", "AVG", 10)]}))
    assert pl.score(CycleState(), PodInfo(pod()), node_info(node("node-1"))) == 0
    pl.collector.set(answer({"node-1": [Metric("CPU", "AVG", 20)]}))
    assert pl.score(CycleState(), PodInfo(pod()), node_info(node("node-1"))) == 70  # 60 * 20 / 40 + 40


def test_predicted_utilisation_of_containers() -> None:
    """``PredictUtilisation``: the limit, else the request times the multiplier, else the
    default request."""
    pl = plugin(defaultRequestsMultiplier="2", defaultRequests={"cpu": "300m"})
    assert pl.predict_utilisation({"resources": {"limits": {"cpu": "500m"}, "requests": {"cpu": "100m"}}}) == 500
    assert pl.predict_utilisation({"resources": {"requests": {"cpu": "250m"}}}) == 500
    assert pl.predict_utilisation({}) == 300
    p = pod(
        containers=[{"name": "a"}, {"name": "b", "resources": {"requests": {"cpu": "100m"}}}], overhead={"cpu": "50m"}
    )
    assert pl.pod_usage(p) == 300 + 200 + 50


def test_the_score_around_the_target() -> None:
    pl = plugin(targetUtilization=50)
    assert [pl.score_for(u) for u in (0, 25, 50, 75, 100, 100.5)] == [50, 75, 100, 25, 0, 0]


def test_pods_placed_since_the_window_are_added() -> None:
    """A pod seen bound after the window's end, or less than the agent's reporting interval
    before it, is not measured yet: its predicted usage is added; an older one is not."""
    now = [1000.0]
    pl = TargetLoadPacking(TargetLoadPackingArgs.model_validate({"watcherAddress": "http://w"}), clock=lambda: now[0])
    pl.collector.set(answer({"node-1": cpu_latest(0)}, end=1000))
    busy = pod("busy", [{"name": "c", "resources": {"limits": {"cpu": "200m"}}}], nodeName="node-1")
    pl._added(dict(busy, metadata={"name": "listed", "uid": "u0"}))  # listed at start: measured already
    assert pl.score(CycleState(), PodInfo(pod()), node_info(node("node-1"))) == 40
    now[0] = 900.0  # 100 s before the window's end: measured already
    pl._added(busy)
    assert pl.score(CycleState(), PodInfo(pod()), node_info(node("node-1"))) == 40
    now[0] = 950.0  # 50 s before: not yet
    pl._added(dict(busy, metadata={"name": "busy-2", "uid": "u2"}))
    assert pl.score(CycleState(), PodInfo(pod()), node_info(node("node-1"))) == 70  # 20% of 1000m
    pl._deleted(dict(busy, metadata={"name": "busy-2", "uid": "u2"}))
    assert pl.score(CycleState(), PodInfo(pod()), node_info(node("node-1"))) == 40
    now[0] = 1010.0  # after the window
    pl._added(dict(busy, metadata={"name": "busy-3", "uid": "u3"}))
    assert pl.score(CycleState(), PodInfo(pod()), node_info(node("node-1"))) == 70
    pl._added(pod("pending"))  # not assigned: not kept
    assert [p.pod["metadata"]["name"] for p in pl.event_handler.pods_on("node-1")] == ["busy", "busy-3"]
