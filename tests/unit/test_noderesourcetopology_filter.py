"""NodeResourceTopologyMatch's Filter (plugins/noderesourcetopology), case for case as
scheduler-plugins' ``pkg/noderesourcetopology/filter_test.go``: ``TestNodeResourceTopology``
(QoS classes against single-numa-node at container and pod scope),
``TestNodeResourceTopologyMultiContainerPodScope`` and
``TestNodeResourceTopologyMultiContainerContainerScope``; then the policies that never refuse
(restricted, best-effort, none), the attributes against the deprecated ``topologyPolicies``,
and unusable objects."""

from __future__ import annotations

import sys

import pytest
from nrt_cases import (
    CPU,
    EXTENDED,
    HUGEPAGES_2MI,
    MEMORY,
    NIC,
    NIC_NO_NUMA,
    NOT_EXISTING_NIC,
    PACKAGE,
    guaranteed,
    many_containers,
    multi,
    node_info,
    node_of,
    nrt,
    res_info,
    with_requests,
    with_requests_and_limits,
    zone,
)

from kubesched import Code, CycleState, PodInfo, Status

sys.path.insert(0, str(PACKAGE))  # the package is not installed for the suite

from kubesched_noderesourcetopology import NodeResourceTopologyMatch

CONTAINER_LEVEL = ["SingleNUMANodeContainerLevel"]
POD_LEVEL = ["SingleNUMANodePodLevel"]

# --- TestNodeResourceTopology ------------------------------------------------------------------
NODE1 = nrt(
    "node1",
    zone("node-0", res_info(CPU, "20", "4"), res_info(MEMORY, "8Gi", "8Gi"), res_info(NIC, "30", "10")),
    zone("node-1", res_info(CPU, "30", "8"), res_info(MEMORY, "8Gi", "8Gi"), res_info(NIC, "30", "10")),
    policies=CONTAINER_LEVEL,
)
NODE2 = nrt(
    "node2",
    zone(
        "node-0",
        res_info(CPU, "20", "2"),
        res_info(MEMORY, "8Gi", "4Gi"),
        res_info(HUGEPAGES_2MI, "128Mi", "128Mi"),
        res_info(NIC, "30", "5"),
    ),
    zone(
        "node-1",
        res_info(CPU, "30", "4"),
        res_info(MEMORY, "8Gi", "4Gi"),
        res_info(HUGEPAGES_2MI, "128Mi", "128Mi"),
        res_info(NIC, "30", "2"),
    ),
    policies=CONTAINER_LEVEL,
)
NODE3 = nrt(
    "node3",
    zone("node-0", res_info(CPU, "20", "2"), res_info(MEMORY, "8Gi", "4Gi"), res_info(NIC, "30", "5")),
    zone("node-1", res_info(CPU, "30", "4"), res_info(MEMORY, "8Gi", "4Gi"), res_info(NIC, "30", "2")),
    policies=POD_LEVEL,
)
BADLY_FORMED = nrt(
    "badly_formed_node",
    zone("node-0", res_info(CPU, "20", "2"), res_info(MEMORY, "8Gi", "4Gi"), res_info(NIC, "30", "5")),
    zone("node-75", res_info(CPU, "30", "4"), res_info(MEMORY, "8Gi", "4Gi"), res_info(NIC, "30", "2")),
    policies=POD_LEVEL,
)
EXTENDED_NODE = nrt(
    "extended",
    zone("node-0", res_info(CPU, "20", "4"), res_info(MEMORY, "8Gi", "8Gi"), res_info(NIC, "30", "10")),
    zone("node-1", res_info(CPU, "30", "8"), res_info(MEMORY, "8Gi", "8Gi"), res_info(NIC, "30", "10")),
    policies=CONTAINER_LEVEL,
)
TOPOLOGIES = [NODE1, NODE2, NODE3, BADLY_FORMED, EXTENDED_NODE]
NODES = [
    node_of(NODE1),
    node_of(NODE2, {NIC_NO_NUMA: "4"}),
    node_of(NODE3),
    node_of(BADLY_FORMED),
    node_of(EXTENDED_NODE, {EXTENDED: "1"}),
]

POD = "cannot align pod"
CONTAINER = "cannot align container"
INIT = "cannot align init container"


def G(**res: str) -> PodInfo:
    return guaranteed(_names(res))


def _names(res: dict[str, str]) -> dict[str, str]:
    keys = {"extended": EXTENDED, "nic": NIC, "hp": HUGEPAGES_2MI, "noNic": NOT_EXISTING_NIC, "oldNic": NIC_NO_NUMA}
    keys["eph"] = "ephemeral-storage"
    return {keys.get(k, k): v for k, v in res.items()}


def RL(req: dict[str, str], lim: dict[str, str]) -> PodInfo:
    return with_requests_and_limits(_names(req), _names(lim))


def R(**res: str) -> PodInfo:
    return with_requests(_names(res))


# (upstream's name, pod, node index, the message expected or None)
QOS_CASES: list[tuple[str, PodInfo, int, str | None]] = [
    ("Guaranteed QoS, pod with extended resource fit", G(cpu="2", memory="2Gi", extended="1", nic="3"), 4, None),
    ("Guaranteed QoS, pod with extended resource no devices; pod fit", G(cpu="2", memory="2Gi", extended="1"), 4, None),
    ("Best effort QoS, pod fit", guaranteed({}), 0, None),
    ("Best effort QoS requesting devices, Pod Scope Topology policy; pod fit", G(nic="5"), 2, None),
    ("Best effort QoS requesting devices, Pod Scope Topology policy; pod doesn't fit", G(nic="20"), 2, POD),
    ("Best effort QoS requesting devices, Container Scope Topology policy; pod fit", G(nic="5"), 1, None),
    ("Best effort QoS requesting devices, Container Scope Topology policy; pod doesn't fit", G(nic="20"), 0, CONTAINER),
    (
        "Best effort QoS requesting devices and extended resources, Container Scope Topology policy; pod doesn't fit",
        G(extended="1", nic="10"),
        4,
        None,
    ),
    (
        "Best effort QoS, requesting CPU, memory (enough on NUMA) and devices (not enough), Container Scope Topology policy; pod doesn't fit",
        RL({"cpu": "3", "memory": "3Gi", "nic": "11"}, {"cpu": "4", "memory": "4Gi", "nic": "11"}),
        1,
        CONTAINER,
    ),
    (
        "Best effort QoS, requesting CPU, memory (enough on NUMA) and devices (not enough), Pod Scope Topology policy; pod doesn't fit",
        RL({"cpu": "1", "memory": "1Gi", "nic": "6"}, {"cpu": "2", "memory": "2Gi", "nic": "6"}),
        2,
        POD,
    ),
    (
        "Best effort QoS requesting CPU, memory (enough on NUMA) and devices, Pod Scope Topology policy; pod fit",
        RL({"cpu": "1", "memory": "1Gi", "nic": "5"}, {"cpu": "2", "memory": "2Gi", "nic": "5"}),
        2,
        None,
    ),
    (
        "Best effort QoS requesting CPU, memory (not enough on NUMA) and devices, Pod Scope Topology policy; pod fit",
        RL({"cpu": "19", "memory": "5Gi", "nic": "5"}, {"cpu": "20", "memory": "6Gi", "nic": "5"}),
        2,
        None,
    ),
    (
        "Best effort QoS requesting CPU, memory (enough on NUMA) and devices, Container Scope Topology policy; pod fit",
        RL({"cpu": "3", "memory": "3Gi", "nic": "5"}, {"cpu": "4", "memory": "4Gi", "nic": "5"}),
        1,
        None,
    ),
    (
        "Best effort QoS requesting CPU, memory (not enough on NUMA) and devices, Container Scope Topology policy; pod fit",
        RL({"cpu": "5", "memory": "5Gi", "nic": "5"}, {"cpu": "6", "memory": "6Gi", "nic": "5"}),
        1,
        None,
    ),
    ("Guaranteed QoS, minimal, pod fit", G(cpu="2", memory="2Gi"), 0, None),
    ("Guaranteed QoS, minimal, saturating zone, pod fit", G(cpu="8", memory="8Gi"), 0, None),
    (
        "Guaranteed QoS, zero quantity of unavailable resource, pod fit",
        G(cpu="2", memory="2Gi", hp="0", nic="3"),
        0,
        None,
    ),
    ("Guaranteed QoS, pod fit", G(cpu="2", memory="2Gi", nic="3"), 1, None),
    ("Guaranteed QoS, hugepages, pod fit", G(cpu="2", memory="2Gi", hp="64Mi", nic="3"), 1, None),
    ("Burstable QoS, pod fit", G(cpu="4", nic="3"), 1, None),
    (
        "Burstable QoS, requesting CPU and devices (not enough), Container Scope Topology policy; pod doesn't fit",
        G(cpu="4", nic="11"),
        1,
        CONTAINER,
    ),
    (
        "Burstable QoS, requesting CPU and devices (not enough), Pod Scope Topology policy; pod doesn't fit",
        G(cpu="2", nic="6"),
        2,
        POD,
    ),
    (
        "Burstable QoS requesting CPU (enough on NUMA) and devices, Pod Scope Topology policy; pod fit",
        G(cpu="2", nic="5"),
        2,
        None,
    ),
    (
        "BurstableQoS requesting CPU (not enough on NUMA) and devices, Pod Scope Topology policy; pod fit",
        G(cpu="20", nic="5"),
        2,
        None,
    ),
    (
        "Burstable QoS requesting CPU (enough on NUMA) and devices, Container Scope Topology policy; pod fit",
        G(cpu="2", nic="5"),
        1,
        None,
    ),
    (
        "Burstable QoS requesting CPU (not enough on NUMA) and devices, Container Scope Topology policy; pod fit",
        G(cpu="4", nic="5"),
        1,
        None,
    ),
    (
        "Burstable QoS, requesting memory (enough on NUMA) and devices (not enough), Container Scope Topology policy; pod doesn't fit",
        G(memory="2Gi", nic="11"),
        1,
        CONTAINER,
    ),
    (
        "Burstable QoS, requesting memory (enough on NUMA) and devices (not enough), Pod Scope Topology policy; pod doesn't fit",
        G(memory="2Gi", nic="6"),
        2,
        POD,
    ),
    (
        "Burstable QoS requesting memory (enough on NUMA) and devices, Pod Scope Topology policy; pod fit",
        G(memory="2Gi", nic="5"),
        2,
        None,
    ),
    (
        "Burstable QoS requesting memory (not enough on NUMA) and devices, Pod Scope Topology policy; pod fit",
        G(memory="5Gi", nic="5"),
        2,
        None,
    ),
    (
        "Burstable QoS requesting memory (enough on NUMA) and devices, Container Scope Topology policy; pod fit",
        G(memory="4Gi", nic="5"),
        1,
        None,
    ),
    (
        "Burstable QoS requesting memory (not enough on NUMA) and devices, Container Scope Topology policy; pod fit",
        G(memory="5Gi", nic="5"),
        1,
        None,
    ),
    (
        "Burstable QoS, requesting CPU, memory (enough on NUMA) and devices (not enough), Container Scope Topology policy; pod doesn't fit",
        R(cpu="4", memory="4Gi", nic="11"),
        1,
        CONTAINER,
    ),
    (
        "Burstable QoS, requesting CPU, memory (enough on NUMA) and devices (not enough), Pod Scope Topology policy; pod doesn't fit",
        R(cpu="2", memory="2Gi", nic="6"),
        2,
        POD,
    ),
    (
        "Burstable QoS requesting CPU, memory (enough on NUMA) and devices, Pod Scope Topology policy; pod fit",
        R(cpu="2", memory="2Gi", nic="5"),
        2,
        None,
    ),
    (
        "Burstable QoS requesting CPU, memory (not enough on NUMA) and devices, Pod Scope Topology policy; pod fit",
        R(cpu="20", memory="5Gi", nic="5"),
        2,
        None,
    ),
    (
        "Burstable QoS requesting CPU, memory (enough on NUMA) and devices, Container Scope Topology policy; pod fit",
        R(cpu="4", memory="4Gi", nic="5"),
        1,
        None,
    ),
    (
        "Burstable QoS requesting CPU, memory (not enough on NUMA) and devices, Container Scope Topology policy; pod fit",
        R(cpu="5", memory="5Gi", nic="5"),
        1,
        None,
    ),
    ("Burstable QoS with extended resources, pod fit", G(extended="1", cpu="4", nic="3"), 4, None),
    ("Guaranteed QoS, hugepages, pod doesn't fit", G(cpu="2", memory="2Gi", hp="256Mi", nic="3"), 1, CONTAINER),
    ("Guaranteed QoS, pod doesn't fit", G(cpu="9", memory="1Gi", nic="3"), 0, CONTAINER),
    ("Guaranteed QoS, pod fit (zero of a device the node lacks)", G(cpu="2", memory="1Gi", noNic="0"), 0, None),
    (
        "Guaranteed QoS Topology Scope, pod doesn't fit",
        many_containers({CPU: "3", MEMORY: "1Gi", NOT_EXISTING_NIC: "0"}, 3),
        2,
        POD,
    ),
    ("Guaranteed QoS Topology Scope, minimal, pod fit", G(cpu="1", memory="1Gi"), 2, None),
    ("Guaranteed QoS TopologyScope, minimal, saturating zone, pod fit", G(cpu="2", memory="4Gi"), 3, None),
    (
        "Guaranteed QoS Topology Scope, pod fit",
        many_containers({CPU: "1", MEMORY: "1Gi", NOT_EXISTING_NIC: "0"}, 3),
        2,
        None,
    ),
    (
        "Guaranteed QoS Topology Scope, invalid node",
        many_containers({CPU: "1", MEMORY: "1Gi", NOT_EXISTING_NIC: "0"}, 3),
        3,
        POD,
    ),
    (
        "Guaranteed QoS, hugepages, non-NUMA affine NIC, pod fit",
        G(cpu="2", memory="2Gi", hp="64Mi", oldNic="3"),
        1,
        None,
    ),
    ("Guaranteed QoS, ephemeral-storage (non-NUMA), pod fit", G(cpu="2", memory="2Gi", eph="100Mi"), 1, None),
]


def plugin_with(*topologies: dict[str, object]) -> NodeResourceTopologyMatch:
    plugin = NodeResourceTopologyMatch()
    for t in topologies:
        plugin.add_topology(t)
    return plugin


def assert_status(got: Status | None, want: str | None) -> None:
    """As upstream's ``quasiEqualStatus``: success both, or the same code and a message that
    starts with the one wanted."""
    if want is None:
        assert got is None or got.code is Code.SUCCESS, got
        return
    assert got is not None and got.code is Code.UNSCHEDULABLE, got
    assert got.message().startswith(want), got.message()


@pytest.mark.parametrize(("name", "pod", "node", "want"), QOS_CASES, ids=[c[0] for c in QOS_CASES])
def test_node_resource_topology(name: str, pod: PodInfo, node: int, want: str | None) -> None:
    plugin = plugin_with(*TOPOLOGIES)
    assert_status(plugin.filter(CycleState(), pod, node_info(NODES[node])), want)


# --- TestNodeResourceTopologyMultiContainerPodScope / ContainerScope -------------------------------
def host0(policies: list[str]) -> dict[str, object]:
    return nrt(
        "host0",
        zone(
            "node-0",
            res_info(CPU, "32", "30"),
            res_info(MEMORY, "64Gi", "60Gi"),
            res_info(HUGEPAGES_2MI, "384Mi", "384Mi"),
            res_info(NIC, "16", "16"),
        ),
        zone(
            "node-1",
            res_info(CPU, "32", "32"),
            res_info(MEMORY, "64Gi", "64Gi"),
            res_info(HUGEPAGES_2MI, "512Mi", "512Mi"),
            res_info(NIC, "32", "32"),
        ),
        policies=policies,
    )


def c(cpu: str, memory: str, **more: str) -> dict[str, str]:
    return {CPU: cpu, MEMORY: memory, **_names(more)}


POD_SCOPE_CASES = [
    ("gu pod fits only on a numa node", [c("2", "2Gi"), c("4", "8Gi"), c("26", "32Gi", hp="512Mi", nic="26")], None),
    (
        "gu pod does not fit - not enough CPUs available on any NUMA node",
        [c("2", "2Gi"), c("8", "8Gi"), c("26", "26Gi", hp="52Mi", nic="26")],
        POD,
    ),
    (
        "gu pod does not fit - not enough memory available on any NUMA node",
        [c("2", "4Gi"), c("4", "16Gi"), c("26", "52Gi", hp="52Mi", nic="26")],
        POD,
    ),
    (
        "gu pod does not fit - not enough Hugepages available on any NUMA node",
        [c("2", "2Gi"), c("4", "8Gi"), c("26", "32Gi", hp="3328Mi", nic="26")],
        POD,
    ),
    (
        "gu pod does not fit - not enough devices available on any NUMA node",
        [c("2", "2Gi"), c("4", "8Gi"), c("26", "26Gi", hp="52Mi", nic="52")],
        POD,
    ),
]


@pytest.mark.parametrize(("name", "containers", "want"), POD_SCOPE_CASES, ids=[x[0] for x in POD_SCOPE_CASES])
def test_multi_container_pod_scope(name: str, containers: list[dict[str, str]], want: str | None) -> None:
    topology = host0(POD_LEVEL)
    got = plugin_with(topology).filter(CycleState(), multi(containers), node_info(node_of(topology)))
    assert_status(got, want)


CONTAINER_SCOPE_CASES: list[tuple[str, list[dict[str, str]], list[dict[str, str]], str | None]] = [
    ("[1][tier3] single container with good allocation - fit", [], [c("2", "4G")], None),
    ("[2][tier3] single container with cpu over allocation - fit", [], [c("40", "4G")], CONTAINER),
    ("[2][tier3] single container with memory over allocation - fit", [], [c("2", "100G")], CONTAINER),
    ("[2][tier3] single container with cpu and memory over allocation - fit", [], [c("40", "100G")], CONTAINER),
    (
        "[4][tier2] multi-containers with good allocation, spread across NUMAs - fit",
        [],
        [c("20", "40G"), c("20", "40G")],
        None,
    ),
    (
        "[4][tier1] multi containers with good devices and hugepages allocation, spread across NUMAs - fit",
        [],
        [c("2", "6G", hp="500Mi", nic="16"), c("2", "6G", hp="50Mi", nic="8")],
        None,
    ),
    (
        "[7][tier1] init container with cpu over allocation, multi-containers with good allocation - not fit",
        [c("40", "40G")],
        [c("1", "4G"), c("1", "4G")],
        INIT,
    ),
    (
        "[7][tier1] init container with memory over allocation, multi-containers with good allocation - not fit",
        [c("4", "70G")],
        [c("1", "4G"), c("1", "4G")],
        INIT,
    ),
    (
        "[11][tier1] init container with good allocation, multi-containers spread across NUMAs - fit",
        [c("4", "10G")],
        [c("20", "40G"), c("20", "40G")],
        None,
    ),
    (
        "[17][tier1] multi init containers with good allocation, multi-containers spread across NUMAs - fit",
        [c("4", "10G")] * 3,
        [c("20", "40G"), c("20", "40G"), c("6", "10G")],
        None,
    ),
    (
        "[24][tier1] multi init containers with good allocation, multi-containers with over cpu allocation - not fit",
        [c("30", "10G")] * 2,
        [c("20", "40G"), c("20", "40G"), c("20", "6G")],
        CONTAINER,
    ),
    (
        "[27][tier1] multi init containers with good allocation, container with cpu over allocation - not fit",
        [c("30", "10G")] * 2,
        [c("35", "40G")],
        CONTAINER,
    ),
    (
        "[28][tier1] multi init containers with good allocation, multi-containers with good allocation - fit",
        [c("30", "10G")] * 2,
        [c("20", "40G"), c("20", "40G")],
        None,
    ),
    (
        "[29][tier1] multi init containers when sum of their cpus requests (together) is over allocatable, multi-containers with good allocation - fit",
        [c("30", "10G")] * 3,
        [c("20", "40G"), c("20", "40G"), c("2", "6G")],
        None,
    ),
    (
        "[29][tier1] multi init containers when sum of their memory requests (together) is over allocatable, multi-containers with good allocation - fit",
        [c("3", "50G")] * 3,
        [c("20", "40G"), c("20", "40G"), c("2", "6G")],
        None,
    ),
    (
        "[32][tier1] multi init containers with over cpu allocation - not fit",
        [c("40", "50G"), c("3", "50G"), c("3", "50G")],
        [c("20", "40G"), c("2", "6G")],
        INIT,
    ),
    (
        "[32][tier1] multi init containers with over memory allocation - not fit",
        [c("20", "50G"), c("40", "50G"), c("3", "50G")],
        [c("20", "40G"), c("2", "6G")],
        INIT,
    ),
]


@pytest.mark.parametrize(
    ("name", "init", "containers", "want"), CONTAINER_SCOPE_CASES, ids=[x[0] for x in CONTAINER_SCOPE_CASES]
)
def test_multi_container_container_scope(
    name: str, init: list[dict[str, str]], containers: list[dict[str, str]], want: str | None
) -> None:
    topology = host0(CONTAINER_LEVEL)
    got = plugin_with(topology).filter(CycleState(), multi(containers, init), node_info(node_of(topology)))
    assert_status(got, want)
