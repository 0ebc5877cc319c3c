"""NodeResourceTopologyMatch's reserve caches and args (plugins/noderesourcetopology).

The over-reserve cache case for case as scheduler-plugins'
``pkg/noderesourcetopology/cache/overreserve_test.go`` (``TestDirtyNodesMarkDiscarded``,
``TestDirtyNodesNotUnmarkedOnReserve``, ``TestReserveSkipsWithoutNRT``,
``TestGetCachedNRTCopyReserve``, ``TestGetCachedNRTCopyReleaseNone``,
``TestGetCachedNRTCopyReserveRelease``); two pods in flight against a cell's last CPUs; the
resync; the discard-reserved cache; and the args of ``NodeResourceTopologyMatchArgs``."""

from __future__ import annotations

import sys
from fractions import Fraction
from typing import Any

import pytest
import yaml
from nrt_cases import NIC, PACKAGE, guaranteed, node_info, node_of, nrt, res_info, zone
from pydantic import ValidationError

from kubesched import Code, CycleState

sys.path.insert(0, str(PACKAGE))  # the package is not installed for the suite

from kubesched_noderesourcetopology import (
    DiscardReserved,
    NodeResourceTopologyMatch,
    NodeResourceTopologyMatchArgs,
    OverReserve,
)

Obj = dict[str, Any]


def default_test_topology(name: str = "node1", version: str = "1") -> Obj:
    """Upstream's ``makeDefaultTestTopology``."""
    obj = nrt(
        name,
        zone("node-0", res_info("cpu", "32", "30"), res_info("memory", "64Gi", "60Gi"), res_info(NIC, "16", "16")),
        zone("node-1", res_info("cpu", "32", "30"), res_info("memory", "64Gi", "60Gi"), res_info(NIC, "16", "16")),
        policies=["SingleNUMANodeContainerLevel"],
    )
    obj["metadata"]["resourceVersion"] = version
    return obj


class Cluster:
    """What the cluster holds, as a lookup."""

    def __init__(self, *objs: Obj) -> None:
        self.objs = {o["metadata"]["name"]: o for o in objs}

    def __call__(self, name: str) -> Obj | None:
        return self.objs.get(name)


POD = guaranteed({"cpu": "8", "memory": "16Gi"}).pod


def available(cache: OverReserve | DiscardReserved, node: str) -> list[dict[str, Fraction]]:
    topology = cache.get(node, POD).topology
    assert topology is not None
    return [{r.name: r.available for r in z.resources} for z in topology.zones]


GI = 1024**3


def test_dirty_nodes_mark_discarded() -> None:
    cache = OverReserve(Cluster(), 60)
    for node in ("node-1", "node-4"):
        cache.reserve(node, {})
    assert cache.maybe_over_reserved == {}
    for node in ("node-1", "node-4"):
        cache.node_maybe_over_reserved(node)
    assert sorted(cache.maybe_over_reserved) == ["node-1", "node-4"]


def test_dirty_nodes_not_unmarked_on_reserve() -> None:
    cache = OverReserve(Cluster(default_test_topology("node-1"), default_test_topology("node-4")), 60)
    for node in ("node-1", "node-4"):
        cache.reserve(node, {})
        cache.node_maybe_over_reserved(node)
    cache.reserve("node-4", {})
    assert len(cache.maybe_over_reserved) == 2


def test_reserve_skips_without_nrt() -> None:
    cache = OverReserve(Cluster(default_test_topology()), 60)
    cache.reserve("ghost-node", POD)
    assert cache.get("ghost-node", POD).topology is None
    assert cache.assumed == {}
    assert available(cache, "node1") == [{"cpu": 30, "memory": 60 * GI, NIC: 16}] * 2


def test_get_cached_nrt_copy_reserve() -> None:
    """The pod's request is taken from every cell: the scheduler cannot know which one the
    kubelet will pick."""
    cache = OverReserve(Cluster(default_test_topology()), 60)
    cache.reserve("node1", POD)
    assert available(cache, "node1") == [{"cpu": 22, "memory": 44 * GI, NIC: 16}] * 2


def test_get_cached_nrt_copy_release_none() -> None:
    cache = OverReserve(Cluster(default_test_topology()), 60)
    cache.unreserve("node1", POD)
    assert available(cache, "node1") == [{"cpu": 30, "memory": 60 * GI, NIC: 16}] * 2


def test_get_cached_nrt_copy_reserve_release() -> None:
    cache = OverReserve(Cluster(default_test_topology()), 60)
    cache.reserve("node1", POD)
    cache.unreserve("node1", POD)
    assert available(cache, "node1") == [{"cpu": 30, "memory": 60 * GI, NIC: 16}] * 2


def test_reserved_amounts_never_go_below_zero() -> None:
    cache = OverReserve(Cluster(default_test_topology()), 60)
    for i in range(5):
        cache.reserve("node1", guaranteed({"cpu": "8", "memory": "1Gi"}).pod | {"metadata": {"name": f"p{i}"}})
    assert [z["cpu"] for z in available(cache, "node1")] == [0, 0]


# --- two pods in flight ---------------------------------------------------------------------------
def one_cell_left() -> Obj:
    """Two cells; only cell 1 has 4 CPUs free."""
    return nrt(
        "worker",
        zone("node-0", res_info("cpu", "8", "0"), res_info("memory", "8Gi", "8Gi")),
        zone("node-1", res_info("cpu", "8", "4"), res_info("memory", "8Gi", "8Gi")),
        attributes={"topologyManagerPolicy": "single-numa-node", "topologyManagerScope": "pod"},
    )


def in_flight(args: dict[str, Any]) -> list[bool]:
    """Two 4-CPU Guaranteed pods, the first reserved (not bound) before the second is filtered."""
    plugin = NodeResourceTopologyMatch(NodeResourceTopologyMatchArgs.model_validate(args))
    topology = one_cell_left()
    plugin.add_topology(topology)
    node = node_info(node_of(topology))
    verdicts = []
    for name in ("first", "second"):
        pod = guaranteed({"cpu": "4", "memory": "1Gi"})
        pod.pod["metadata"]["name"] = name
        status = plugin.filter(CycleState(), pod, node)
        verdicts.append(status is None)
        if status is None:
            assert plugin.reserve(CycleState(), pod, "worker") is None
    return verdicts


def test_over_reserve_keeps_two_pods_in_flight_off_the_last_cpus() -> None:
    assert in_flight({"cacheResyncPeriodSeconds": 5}) == [True, False]


def test_without_the_cache_both_pods_in_flight_take_the_last_cpus() -> None:
    """Upstream's passthrough (the default): only the node's agent's next report tells."""
    assert in_flight({}) == [True, True]


def test_discard_reserved_refuses_a_node_with_a_pod_in_flight() -> None:
    plugin = NodeResourceTopologyMatch(NodeResourceTopologyMatchArgs.model_validate({"discardReservedNodes": True}))
    plugin.add_topology(one_cell_left())
    node = node_info(node_of(one_cell_left()))
    small = guaranteed({"cpu": "1", "memory": "1Gi"})
    plugin.reserve(CycleState(), small, "worker")
    status = plugin.filter(CycleState(), guaranteed({"cpu": "1", "memory": "1Gi"}), node)
    assert status is not None and status.code is Code.UNSCHEDULABLE
    assert status.message() == "invalid node topology data: a pod is reserved on the node and not bound yet"
    plugin.post_bind(CycleState(), small, "worker")
    assert plugin.filter(CycleState(), guaranteed({"cpu": "1", "memory": "1Gi"}), node) is None


def test_resync_takes_in_a_newer_report_for_a_refused_node_only() -> None:
    cluster = Cluster(default_test_topology(version="1"))
    now = [0.0]
    cache = OverReserve(cluster, 10, clock=lambda: now[0])
    cache.reserve("node1", POD)
    cache.node_maybe_over_reserved("node1")
    now[0] = 11
    assert available(cache, "node1")[0]["cpu"] == 22  # the same report: the reservation stands
    fresh = default_test_topology(version="2")
    fresh["zones"][0]["resources"][0]["available"] = "22"
    cluster.objs["node1"] = fresh
    now[0] = 22
    assert [z["cpu"] for z in available(cache, "node1")] == [22, 30]  # the agent's own view
    assert cache.assumed == {} and cache.maybe_over_reserved == {}


# --- args ---------------------------------------------------------------------------------------
def test_args_defaults_as_upstream() -> None:
    args = NodeResourceTopologyMatchArgs.model_validate({})
    assert args.scoring_strategy.type == "LeastAllocated"
    assert args.scoring_strategy.weights() == {"cpu": 1, "memory": 1}
    assert args.cache_resync_period_seconds == 0 and not args.discard_reserved_nodes
    assert (args.cache.foreign_pods_detect, args.cache.resync_method, args.cache.informer_mode) == (
        "All",
        "Autodetect",
        "Dedicated",
    )
    assert args.preemption_mode == "Disabled"


def test_args_scheduler_plugins_shape_loads_unchanged() -> None:
    args = NodeResourceTopologyMatchArgs.model_validate(
        {
            "scoringStrategy": {
                "type": "MostAllocated",
                "resources": [{"name": "cpu", "weight": 2}, {"name": "memory"}],
            },
            "cacheResyncPeriodSeconds": 5,
            "cache": {"foreignPodsDetect": "OnlyExclusiveResources", "resyncMethod": "All", "informerMode": "Shared"},
        }
    )
    assert args.scoring_strategy.weights() == {"cpu": 2, "memory": 1}
    assert isinstance(NodeResourceTopologyMatch(args).cache, OverReserve)


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        ({"scoringStrategy": {"type": "MostAllocatd"}}, "scoringStrategy.type"),
        ({"scoringStrategy": {"type": "MostAllocated", "weights": {}}}, "scoringStrategy.weights"),
        ({"cacheResyncPeriod": 5}, "cacheResyncPeriod"),
        ({"cache": {"informerMode": "Private"}}, "cache.informerMode"),
        ({"preemptionMode": "On"}, "preemptionMode"),
    ],
)
def test_args_refuse_what_they_do_not_know_naming_the_field(raw: dict[str, Any], field: str) -> None:
    with pytest.raises(ValidationError) as info:
        NodeResourceTopologyMatchArgs.model_validate(raw)
    locations = {".".join(str(p) for p in e["loc"]) for e in info.value.errors()}
    assert field in locations


def test_scheduler_plugins_manifest_profile_loads(tmp_path: Any) -> None:
    """scheduler-plugins' ``manifests/noderesourcetopology/scheduler-config.yaml``, its profile
    under ``kubescheduler.config.k8s.io/v1``, with Reserve enabled as its cache needs."""
    from kubesched.config import load_config
    from kubesched.testing import registry_with

    path = tmp_path / "config.yaml"
    points = {
        p: {"enabled": [{"name": "NodeResourceTopologyMatch"}]} for p in ("preFilter", "filter", "score", "reserve")
    }
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "kubescheduler.config.k8s.io/v1",
                "kind": "KubeSchedulerConfiguration",
                "leaderElection": {"leaderElect": False},
                "profiles": [
                    {
                        "schedulerName": "topo-aware-scheduler",
                        "plugins": points,
                        "pluginConfig": [
                            {
                                "name": "NodeResourceTopologyMatch",
                                "args": {"scoringStrategy": {"type": "LeastAllocated"}},
                            }
                        ],
                    }
                ],
            }
        )
    )
    (profile,) = load_config(path, registry_with(NodeResourceTopologyMatch)).profiles
    for point in ("preFilter", "filter", "score", "reserve"):
        assert "NodeResourceTopologyMatch" in [r.name for r in profile.plugins[point]], point


def test_a_changed_kubelet_configuration_is_taken_in_at_the_next_resync() -> None:
    """As upstream's attribute watch: the node need not have been refused."""
    cluster = Cluster(default_test_topology(version="1"))
    now = [0.0]
    cache = OverReserve(cluster, 10, clock=lambda: now[0])
    cache.reserve("node1", POD)
    assert available(cache, "node1")[0]["cpu"] == 22
    same_config = default_test_topology(version="2")
    cache.updated(same_config)
    assert cache.config_changed == set()  # only resources changed: nothing to do until marked
    reconfigured = default_test_topology(version="3")
    reconfigured["topologyPolicies"] = ["SingleNUMANodePodLevel"]
    cluster.objs["node1"] = reconfigured
    cache.updated(reconfigured)
    assert cache.config_changed == {"node1"}
    now[0] = 11
    assert available(cache, "node1")[0]["cpu"] == 30  # taken in afresh, reservations forgotten
    assert cache.config_changed == set() and cache.assumed == {}


def test_resync_scope_only_resources_leaves_a_reconfigured_node_alone() -> None:
    args = NodeResourceTopologyMatchArgs.model_validate(
        {"cacheResyncPeriodSeconds": 5, "cache": {"resyncScope": "OnlyResources"}}
    )
    plugin = NodeResourceTopologyMatch(args)
    plugin.add_topology(default_test_topology(version="1"))
    assert isinstance(plugin.cache, OverReserve)
    plugin.cache.reserve("node1", POD)
    reconfigured = default_test_topology(version="2")
    reconfigured["topologyPolicies"] = ["SingleNUMANodePodLevel"]
    plugin.add_topology(reconfigured)
    assert plugin.cache.config_changed == set()
