"""The kubelet's topology-manager configuration as NodeResourceTopologyMatch reads it
(plugins/noderesourcetopology), case for case as scheduler-plugins'
``pkg/noderesourcetopology/nodeconfig/topologymanager_test.go`` (``TestConfigFromAttributes``,
``TestConfigFromPolicies``, ``TestConfigFromNRT``: upstream starts the first two from an empty
configuration, here every case starts from the kubelet's defaults, container scope, policy none
and 8 NUMA nodes); then the filter's verdict across the policy × scope matrix."""

from __future__ import annotations

import sys

import pytest
from nrt_cases import PACKAGE, guaranteed, node_info, node_of, nrt, res_info, zone

from kubesched import Code, CycleState

sys.path.insert(0, str(PACKAGE))  # the package is not installed for the suite

from kubesched_noderesourcetopology import (
    NodeResourceTopologyMatch,
    NodeTopology,
    TopologyManager,
    topology_manager_of,
)

DEFAULT = TopologyManager()


def conf(policies: list[str] | None = None, **attributes: str) -> TopologyManager:
    return topology_manager_of(NodeTopology.of(nrt("n", policies=policies, attributes=attributes or None)))


@pytest.mark.parametrize(
    ("name", "attributes", "want"),
    [
        ("nil", {}, DEFAULT),
        ("no-policy", {"topologyManagerScope": "pod"}, TopologyManager(scope="pod")),
        ("no-scope", {"topologyManagerPolicy": "restricted"}, TopologyManager(policy="restricted")),
        (
            "complete-case-1",
            {"topologyManagerPolicy": "restricted", "topologyManagerScope": "container"},
            TopologyManager("restricted", "container"),
        ),
        (
            "complete-case-2",
            {"topologyManagerScope": "pod", "topologyManagerPolicy": "single-numa-node"},
            TopologyManager("single-numa-node", "pod"),
        ),
        (
            "error-case-1",
            {"topologyManagerScope": "Pod", "topologyManagerPolicy": "single-numa-node"},
            TopologyManager("single-numa-node"),
        ),
        (
            "error-case-2",
            {"topologyManagerScope": "Container", "topologyManagerPolicy": "restricted"},
            TopologyManager("restricted"),
        ),
        ("invalid-nodes-string", {"topologyManagerMaxNUMANodes": "A"}, DEFAULT),
        ("invalid-nodes-zero", {"topologyManagerMaxNUMANodes": "0"}, DEFAULT),
        ("invalid-nodes-negative", {"topologyManagerMaxNUMANodes": "-2"}, DEFAULT),
        ("valid-nodes", {"topologyManagerMaxNUMANodes": "16"}, TopologyManager(max_numa_nodes=16)),
        ("valid-nodes-upper-bound", {"topologyManagerMaxNUMANodes": "65535"}, TopologyManager(max_numa_nodes=1024)),
    ],
)
def test_config_from_attributes(name: str, attributes: dict[str, str], want: TopologyManager) -> None:
    assert conf(**attributes) == want


@pytest.mark.parametrize(
    ("name", "policies", "want"),
    [
        ("nil", None, DEFAULT),
        ("empty", [], DEFAULT),
        ("single-numa-pod", ["SingleNUMANodePodLevel"], TopologyManager("single-numa-node", "pod")),
        ("single-numa-container", ["SingleNUMANodeContainerLevel"], TopologyManager("single-numa-node", "container")),
        ("restricted-container", ["RestrictedContainerLevel"], TopologyManager("restricted", "container")),
        (
            "skip-policies",
            ["RestrictedContainerLevel", "SingleNUMANodePodLevel"],
            TopologyManager("restricted", "container"),
        ),
        ("error-unknown-policy", ["foobar"], DEFAULT),
    ],
)
def test_config_from_policies(name: str, policies: list[str] | None, want: TopologyManager) -> None:
    assert conf(policies) == want


@pytest.mark.parametrize(
    ("name", "policies", "attributes", "want"),
    [
        ("nil", None, {}, DEFAULT),
        ("policies-single", ["BestEffortPodLevel"], {}, TopologyManager("best-effort", "pod")),
        (
            "policies-ignore-after-first",
            ["RestrictedContainerLevel", "BestEffortPodLevel"],
            {},
            TopologyManager("restricted", "container"),
        ),
        (
            "attributes-partial-policy-only",
            None,
            {"topologyManagerPolicy": "restricted"},
            TopologyManager("restricted", "container"),
        ),
        (
            "attributes-overrides-policy-partial",
            ["BestEffortPodLevel"],
            {"topologyManagerScope": "container"},
            TopologyManager("best-effort", "container"),
        ),
        (
            "attributes-overrides-policy-full",
            ["BestEffortPodLevel"],
            {"topologyManagerScope": "container", "topologyManagerPolicy": "restricted"},
            TopologyManager("restricted", "container"),
        ),
    ],
)
def test_config_from_nrt(
    name: str, policies: list[str] | None, attributes: dict[str, str], want: TopologyManager
) -> None:
    assert conf(policies, **attributes) == want


# --- the filter's verdict, policy by scope -----------------------------------------------------------
def two_cells(policy: str, scope: str) -> dict[str, object]:
    """Two cells of 4 free CPUs each: 6 CPUs fit the node, not one cell."""
    return nrt(
        "worker",
        zone("node-0", res_info("cpu", "8", "4"), res_info("memory", "8Gi", "8Gi")),
        zone("node-1", res_info("cpu", "8", "4"), res_info("memory", "8Gi", "8Gi")),
        attributes={"topologyManagerPolicy": policy, "topologyManagerScope": scope},
    )


@pytest.mark.parametrize("scope", ["container", "pod"])
@pytest.mark.parametrize(
    ("policy", "refused"),
    [("single-numa-node", True), ("restricted", False), ("best-effort", False), ("none", False)],
)
def test_only_single_numa_node_refuses_a_pod_no_cell_can_hold(policy: str, scope: str, refused: bool) -> None:
    topology = two_cells(policy, scope)
    plugin = NodeResourceTopologyMatch()
    plugin.add_topology(topology)
    status = plugin.filter(CycleState(), guaranteed({"cpu": "6", "memory": "1Gi"}), node_info(node_of(topology)))
    if refused:
        assert status is not None and status.code is Code.UNSCHEDULABLE
        assert status.message() == f"cannot align {scope}"
    else:
        assert status is None
    fits = plugin.filter(CycleState(), guaranteed({"cpu": "4", "memory": "1Gi"}), node_info(node_of(topology)))
    assert fits is None


def test_a_node_without_topology_passes_and_unreadable_topology_is_refused() -> None:
    topology = two_cells("single-numa-node", "pod")
    plugin = NodeResourceTopologyMatch()
    pod = guaranteed({"cpu": "6", "memory": "1Gi"})
    assert plugin.filter(CycleState(), pod, node_info(node_of(topology))) is None
    topology["zones"][0]["resources"][0]["available"] = "four"  # type: ignore[index]
    plugin.add_topology(topology)
    status = plugin.filter(CycleState(), pod, node_info(node_of(two_cells("single-numa-node", "pod"))))
    assert status is not None and status.code is Code.UNSCHEDULABLE
    assert status.message() == (
        "invalid node topology data: NodeResourceTopology worker: zones[0].resources[0].available: "
        "not a quantity: 'four'"
    )
