"""The Trimaran plugins' shared computations (plugins/trimaran) as scheduler-plugins'
``pkg/trimaran/resourcestats_test.go`` (``TestCreateResourceStats``, ``TestGetResourceRequested``,
``TestGetResourceLimits``, ``TestGetMuSigma``, ``TestGetNodeRequestsAndLimits``) and
``handler_test.go`` (``TestHandlerCacheCleanup``), case for case."""

from __future__ import annotations

import copy
import sys

import pytest
from trimaran_cases import PACKAGE, node, pod, pod_with_containers_and_overhead, with_limits

sys.path.insert(0, str(PACKAGE))  # the package is not installed for the suite

from kubesched_trimaran import Metric, PodAssignEventHandler, ScheduledPod
from kubesched_trimaran.resourcestats import (
    NodeRequestsAndLimits,
    Res,
    ResourceStats,
    create_resource_stats,
    mu_sigma,
    node_requests_and_limits,
    resource_limits,
    resource_requested,
    set_max_limits,
)

METRICS = [
    Metric("CPU", "", 40, name="no_name"),
    Metric("CPU", "AVG", 40, name="cpu_running_avg"),
    Metric("CPU", "STD", 36, name="cpu_running_std"),
    Metric("Memory", "AVG", 20, name="mem_running_avg"),
    Metric("Memory", "STD", 10, name="mem_running_std"),
]
NODE0 = node("node0")
PR = Res(100, 1024 * 1024)


def test_create_resource_stats() -> None:
    assert create_resource_stats(METRICS, NODE0, PR, "cpu", "CPU") == ResourceStats(400, 360, 100, 1000)
    assert create_resource_stats(METRICS[3:], NODE0, PR, "cpu", "CPU") is None  # test-missing
    assert create_resource_stats(METRICS, NODE0, PR, "memory", "Memory") == ResourceStats(204.8, 102.4, 1, 1024)


def test_get_resource_requested() -> None:
    p = pod_with_containers_and_overhead(10, 100, 512, [1000, 500], [2048, 1024])
    assert resource_requested(p) == Res(1510, 3072)
    p = pod_with_containers_and_overhead(10, 2000, 4096, [1000, 500], [2048, 1024])
    assert resource_requested(p) == Res(2010, 4096)
    p = pod_with_containers_and_overhead(0, 0, 0, [0, 0, 1000], [0, 200 * 1024 * 1024, 400 * 1024 * 1024])
    assert resource_requested(p) == Res(1000, 600 * 1024 * 1024)


def test_get_resource_limits() -> None:
    p = with_limits(
        pod_with_containers_and_overhead(10, 100, 512, [1000, 500], [2048, 1024]), 2000, 4096, [1000, 500], [2048, 1024]
    )
    assert resource_limits(p) == Res(2010, 4096)
    p = with_limits(p, 2000, 4096, [4000], [2048, 1024])  # lengths differ: unchanged
    assert resource_limits(p) == Res(2010, 4096)
    p = with_limits(p, 2000, 4096, [1000, 2500], [4096, 2048])
    assert resource_limits(p) == Res(3510, 6144)
    p0 = with_limits(
        pod_with_containers_and_overhead(0, 100, 512, [1000, 500, 0], [2048, 1024, 0]),
        2000,
        4096,
        [0, 0, 1000],
        [0, 2048, 0],
    )
    assert resource_limits(p0) == Res(2000, 4096)


@pytest.mark.parametrize(
    ("name", "rs", "mu", "sigma"),
    [
        ("proper arguments", ResourceStats(400, 360, 100, 1000), 0.5, 0.36),
        ("zero arguments", ResourceStats(0, 0, 0, 0), 0, 0),
        ("large used", ResourceStats(1400, 300, 100, 1000), 1.0, 0.3),
        ("large deviation", ResourceStats(400, 1600, 100, 1000), 0.5, 1.0),
        ("large arguments", ResourceStats(1400, 1600, 0, 1000), 1.0, 1.0),
        ("negative used", ResourceStats(-100, 200, 0, 1000), 0.0, 0.2),
        ("negative deviation", ResourceStats(0, -200, 400, 1000), 0.4, 0.0),
    ],
)
def test_get_mu_sigma(name: str, rs: ResourceStats, mu: float, sigma: float) -> None:
    assert mu_sigma(rs) == (mu, sigma), name


def _pod(cpu_limits: list[int], mem_limits: list[int]) -> dict[str, object]:
    return with_limits(
        pod_with_containers_and_overhead(0, 100, 2048, [1000, 500], [512, 1024]), 500, 2048, cpu_limits, mem_limits
    )


def test_get_node_requests_and_limits() -> None:
    test_node = node("test-node", cpu="8000m", memory="6Ki")
    low = node("test-node", cpu="1600m", memory="6Ki")
    p = _pod([1500, 500], [1024, 1024])
    pod1, pod2 = copy.deepcopy(p), copy.deepcopy(p)
    pod3 = _pod([1000, 1000], [1024, 2048])
    pod4 = _pod([1000, 400], [1024, 2048])

    def totals(on_node: list[dict[str, object]], n: dict[str, object], q: dict[str, object]) -> NodeRequestsAndLimits:
        requests, limits = resource_requested(q), resource_limits(q)
        set_max_limits(requests, limits)
        return node_requests_and_limits(on_node, n, requests, limits)

    assert totals([pod1, pod2], test_node, p) == NodeRequestsAndLimits(
        Res(3 * 1500, 3 * 2048),
        Res(3 * 2000, 3 * 2048),
        Res(2 * 1500, 2 * 2048),
        Res(2 * 2000, 2 * 2048),
        Res(8000, 6 * 1024),
    )
    assert totals([pod3], test_node, p) == NodeRequestsAndLimits(
        Res(2 * 1500, 2 * 2048),
        Res(2 * 2000, 2 * 2048 + 1024),
        Res(1500, 2048),
        Res(2000, 2048 + 1024),
        Res(8000, 6 * 1024),
    )
    req, lim = resource_requested(p), resource_limits(p)
    assert totals([], low, p) == NodeRequestsAndLimits(
        Res(min(req.milli_cpu, 1600), min(req.memory, 6144)),
        Res(max(req.milli_cpu, lim.milli_cpu), max(req.memory, lim.memory)),
        Res(0, 0),
        Res(0, 0),
        Res(1600, 6144),
    )
    got = totals([], low, pod4)
    req4, lim4 = resource_requested(pod4), resource_limits(pod4)
    assert got.node_request == Res(min(req4.milli_cpu, 1600), min(req4.memory, 6144))
    assert got.node_limit == Res(
        min(max(req4.milli_cpu, lim4.milli_cpu), 1600), min(max(req4.memory, lim4.memory), 6144)
    )
    assert got.node_request.milli_cpu <= got.node_limit.milli_cpu and got.node_request.memory <= got.node_limit.memory


# --- handler_test.go ------------------------------------------------------------------------------
NOW = 10_000.0


def entry(name: str, age: float | None) -> ScheduledPod:
    """A kept pod, seen ``age`` seconds ago (``None``: Go's zero time, long ago)."""
    return ScheduledPod(-1e12 if age is None else NOW - age, pod(name))


@pytest.mark.parametrize(
    ("name", "kept", "to_update", "expected"),
    [
        (
            "OnUpdate doesn't add unassigned pods",
            [entry("Pod-1", None), entry("Pod-2", None), entry("Pod-3", None)],
            "Pod-4",
            ["Pod-4"],
        ),
        (
            "cleanupCache doesn't delete newly added pods",
            [entry("Pod-1", None), entry("Pod-2", None), entry("Pod-3", None), entry("Pod-4", 0)],
            "Pod-5",
            ["Pod-4", "Pod-5"],
        ),
        (
            "cleanupCache deletes old pods",
            [entry("Pod-1", 300), entry("Pod-2", 10), entry("Pod-3", 5)],
            "",
            ["Pod-2", "Pod-3"],
        ),
    ],
)
def test_handler_cache_cleanup(name: str, kept: list[ScheduledPod], to_update: str, expected: list[str]) -> None:
    h = PodAssignEventHandler(clock=lambda: NOW)
    h.scheduled_pods_cache["testNode"] = list(kept)
    if to_update:
        new = pod(to_update, nodeName="testNode")
        h.on_update(pod(to_update), new)
    h.cleanup()
    assert [e.pod["metadata"]["name"] for e in h.scheduled_pods_cache["testNode"]] == expected, name


def test_handler_drops_a_node_whose_pods_are_all_old_and_deleted_pods() -> None:
    h = PodAssignEventHandler(clock=lambda: NOW)
    h.scheduled_pods_cache["old"] = [entry("Pod-1", 120)]
    h.on_add(pod("Pod-2", nodeName="n"))
    h.on_add(pod("Pod-3", nodeName="n"))
    h.on_delete(pod("Pod-2", nodeName="n"))
    h.on_update(pod("Pod-3", nodeName="n"), pod("Pod-3", nodeName="n"))  # same node: nothing
    h.cleanup()
    assert "old" not in h.scheduled_pods_cache
    assert [e.pod["metadata"]["name"] for e in h.pods_on("n")] == ["Pod-3"]
