"""Pods of another scheduler on NodeResourceTopologyMatch's nodes (plugins/noderesourcetopology):
``IsForeignPod`` case for case as scheduler-plugins'
``pkg/noderesourcetopology/cache/foreign_pods_test.go``, and what the over-reserve cache does
with a node that has one (refused until the node's agent reports again)."""

from __future__ import annotations

import sys
from typing import Any

import pytest
from nrt_cases import PACKAGE, guaranteed, node_info, node_of, nrt, res_info, zone

from kubesched import Code, CycleState

sys.path.insert(0, str(PACKAGE))  # the package is not installed for the suite

from kubesched_noderesourcetopology import NodeResourceTopologyMatch, NodeResourceTopologyMatchArgs, OverReserve
from kubesched_noderesourcetopology import plugin as nrt_plugin

FPGA = "veryfast.io/fpga"


def pod(
    node: str = "", scheduler: str = "", init: bool = False, req: dict[str, str] | None = None, lim: bool = True
) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if node:
        spec["nodeName"] = node
    if scheduler:
        spec["schedulerName"] = scheduler
    if req is not None:
        resources: dict[str, Any] = {"requests": req}
        if lim:
            resources["limits"] = req
        spec["initContainers" if init else "containers"] = [{"name": "cnt", "resources": resources}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "pod", "namespace": "default"}, "spec": spec}


def random_node(*devices: str) -> dict[str, Any]:
    return nrt("random-node", zone("node-0", res_info("cpu", "8", "8"), *(res_info(d, "1", "1") for d in devices)))


CORE = {"cpu": "4", "memory": "2Gi"}
CASES = [
    ("empty", [], pod(), (), False, False),
    ("no-node-no-profile", ["secondary-scheduler"], pod(), (), False, False),
    ("node-no-profile-no-devs", ["secondary-scheduler"], pod("random-node", req=CORE), (), False, True),
    (
        "node-no-profile-no-devs (init container)",
        ["secondary-scheduler"],
        pod("random-node", init=True, req=CORE),
        (),
        False,
        True,
    ),
    ("node-no-profile-devs-only", ["secondary-scheduler"], pod("random-node", req={FPGA: "1"}), (), False, True),
    (
        "node-no-profile-devs-only (init container)",
        ["secondary-scheduler"],
        pod("random-node", init=True, req={FPGA: "1"}),
        (),
        False,
        True,
    ),
    ("node-profile", ["secondary-scheduler"], pod("random-node", "secondary-scheduler"), (), False, False),
    (
        "node-multi-profile",
        ["secondary-scheduler-A", "secondary-scheduler-B", "fancy-scheduler"],
        pod("random-node", "secondary-scheduler-B"),
        (),
        False,
        False,
    ),
    (
        "exclusive-only-dev-in-nrt",
        ["secondary-scheduler"],
        pod("random-node", req={FPGA: "1"}, lim=False),
        (FPGA,),
        True,
        True,
    ),
    (
        "exclusive-only-dev-not-in-nrt",
        ["secondary-scheduler"],
        pod("random-node", req={FPGA: "1"}, lim=False),
        (),
        True,
        False,
    ),
]


@pytest.mark.parametrize(
    ("name", "profiles", "the_pod", "devices", "exclusive_only", "foreign"), CASES, ids=[c[0] for c in CASES]
)
def test_is_foreign_pod(
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    profiles: list[str],
    the_pod: dict[str, Any],
    devices: tuple[str, ...],
    exclusive_only: bool,
    foreign: bool,
) -> None:
    monkeypatch.setattr(nrt_plugin, "PROFILE_NAMES", set(profiles))
    mode = "OnlyExclusiveResources" if exclusive_only else "All"
    plugin = NodeResourceTopologyMatch(
        NodeResourceTopologyMatchArgs.model_validate(
            {"cacheResyncPeriodSeconds": 5, "cache": {"foreignPodsDetect": mode}}
        )
    )
    plugin.add_topology(random_node(*devices))
    assert plugin.is_foreign(the_pod) is foreign


def test_a_node_with_a_foreign_pod_is_refused_until_its_agent_reports(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(nrt_plugin, "PROFILE_NAMES", {"default-scheduler"})
    plugin = NodeResourceTopologyMatch(NodeResourceTopologyMatchArgs.model_validate({"cacheResyncPeriodSeconds": 5}))
    topology = random_node()
    topology["metadata"]["resourceVersion"] = "1"
    plugin.add_topology(topology)
    cache = plugin.cache
    assert isinstance(cache, OverReserve)
    node = node_info(node_of(topology))
    small = guaranteed({"cpu": "1", "memory": "1Gi"})
    assert plugin.filter(CycleState(), small, node) is None

    plugin.pod_seen(pod("random-node", "other-scheduler", req={"cpu": "2", "memory": "1Gi"}))
    status = plugin.filter(CycleState(), small, node)
    assert status is not None and status.code is Code.UNSCHEDULABLE
    assert (
        status.message() == "invalid node topology data: pods of another scheduler run on the node (not accounted for)"
    )
    assert plugin.score(CycleState(), small, node) == (0, None)

    cache.resync()  # without a new report: nothing changes
    assert plugin.filter(CycleState(), small, node) is not None
    reported = random_node()
    reported["metadata"]["resourceVersion"] = "2"
    plugin.add_topology(reported)
    cache.resync()
    assert plugin.filter(CycleState(), small, node) is None


def test_foreign_pods_detect_none_and_the_passthrough_cache_do_not_track() -> None:
    for args in ({"cacheResyncPeriodSeconds": 5, "cache": {"foreignPodsDetect": "None"}}, {}):
        plugin = NodeResourceTopologyMatch(NodeResourceTopologyMatchArgs.model_validate(args))
        plugin.add_topology(random_node())
        plugin.pod_seen(pod("random-node", "other-scheduler", req=CORE))
        assert (
            plugin.filter(CycleState(), guaranteed({"cpu": "1", "memory": "1Gi"}), node_info(node_of(random_node())))
            is None
        )
