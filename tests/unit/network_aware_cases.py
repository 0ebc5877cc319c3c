"""The objects of scheduler-plugins' ``pkg/networkaware`` tests, transcribed: the AppGroups
``basic`` and ``onlineboutique`` (``GetAppGroupCRBasic``, ``GetAppGroupCROnlineBoutique``), the
NetworkTopology ``nt-test`` (``GetNetworkTopologyCRBasic``), the eight nodes over two regions
and four zones, and the pods (``makePod``, ``makePodAllocated``)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from kubesched.testing import NodeBuilder, PodBuilder, make_node, make_pod

PACKAGE = Path(__file__).resolve().parents[2] / "plugins" / "network-aware"
sys.path.insert(0, str(PACKAGE))  # the package is not installed for the suite

import kubesched_network_aware as network_aware  # noqa: E402
from kubesched_network_aware import (  # noqa: E402
    APP_GROUP_LABEL,
    APP_GROUP_SELECTOR_LABEL,
    REGION_LABEL,
    ZONE_LABEL,
)

#: The package, imported from its folder (tests take its names from here).
__all__ = ["PACKAGE", "network_aware"]


def workload(selector: str) -> dict[str, Any]:
    return {
        "kind": "Deployment",
        "name": f"{selector}-deployment",
        "selector": selector,
        "apiVersion": "apps/v1",
        "namespace": "default",
    }


def app_group(
    name: str,
    workloads: dict[str, list[str | tuple[str, int]]],
    order: list[str],
    namespace: str = "default",
) -> dict[str, Any]:
    """An AppGroup: each workload with its dependencies (a selector, or (selector,
    maxNetworkCost)); ``order`` the topology order (index 1 first), stored sorted by selector as
    the AppGroup controller stores it (upstream's tests sort it so before creating the object)."""

    def dependency(d: str | tuple[str, int]) -> dict[str, Any]:
        if isinstance(d, tuple):
            return {"workload": workload(d[0]), "maxNetworkCost": d[1]}
        return {"workload": workload(d)}

    entries: list[dict[str, Any]] = []
    for selector, deps in workloads.items():
        entry: dict[str, Any] = {"workload": workload(selector)}
        if deps:
            entry["dependencies"] = [dependency(d) for d in deps]
        entries.append(entry)
    topology = [{"workload": workload(s), "index": i} for i, s in enumerate(order, start=1)]
    topology.sort(key=lambda t: t["workload"]["selector"])
    return {
        "apiVersion": "appgroup.diktyo.x-k8s.io/v1alpha1",
        "kind": "AppGroup",
        "metadata": {"name": name, "namespace": namespace, "uid": f"uid-{name}"},
        "spec": {"numMembers": len(workloads), "topologySortingAlgorithm": "KahnSort", "workloads": entries},
        "status": {"topologyOrder": topology},
    }


BASIC = app_group("basic", {"p1": ["p2"], "p2": ["p3"], "p3": []}, ["p1", "p2", "p3"])

ONLINE_BOUTIQUE = app_group(
    "onlineboutique",
    {
        "p1": ["p2", "p3", "p4", "p6", "p8", "p9", "p10"],  # frontend
        "p2": ["p11"],  # cartService
        "p3": [],  # productCatalogService
        "p4": [],  # currencyService
        "p5": [],  # paymentService
        "p6": [],  # shippingService
        "p7": [],  # emailService
        "p8": ["p2", "p3", "p4", "p5", "p6", "p7"],  # checkoutService
        "p9": ["p3"],  # recommendationService
        "p10": [],  # adService
        "p11": [],  # redis-cart
    },
    ["p1", "p10", "p9", "p8", "p7", "p6", "p5", "p4", "p3", "p2", "p11"],
)


def origin(name: str, **costs: int) -> dict[str, Any]:
    return {"origin": name, "costList": [{"destination": d, "networkCost": c} for d, c in costs.items()]}


def network_topology(
    name: str = "nt-test",
    weights_name: str = "UserDefined",
    regions: list[dict[str, Any]] | None = None,
    zones: list[dict[str, Any]] | None = None,
    namespace: str = "default",
) -> dict[str, Any]:
    topology_list = []
    if regions is not None:
        topology_list.append({"topologyKey": REGION_LABEL, "originList": regions})
    if zones is not None:
        topology_list.append({"topologyKey": ZONE_LABEL, "originList": zones})
    return {
        "apiVersion": "networktopology.diktyo.x-k8s.io/v1alpha1",
        "kind": "NetworkTopology",
        "metadata": {"name": name, "namespace": namespace, "uid": f"uid-{name}"},
        "spec": {
            "configmapName": "netperf-metrics",
            "weights": [{"name": weights_name, "topologyList": topology_list}],
        },
    }


#: ``GetNetworkTopologyCRBasic``: us-west-1 <-> us-east-1 cost 20; Z1 <-> Z2 5, Z3 <-> Z4 10.
NT_BASIC = network_topology(
    regions=[origin("us-west-1", **{"us-east-1": 20}), origin("us-east-1", **{"us-west-1": 20})],
    zones=[origin("Z1", Z2=5), origin("Z2", Z1=5), origin("Z3", Z4=10), origin("Z4", Z3=10)],
)


def node(name: str, region: str, zone: str) -> NodeBuilder:
    return make_node(name).label(REGION_LABEL, region).label(ZONE_LABEL, zone).capacity(cpu="8000m", memory="16Gi")


#: n-1, n-2: us-west-1/Z1; n-3, n-4: us-west-1/Z2; n-5, n-6: us-east-1/Z3; n-7, n-8: us-east-1/Z4.
NODES = [
    node("n-1", "us-west-1", "Z1"),
    node("n-2", "us-west-1", "Z1"),
    node("n-3", "us-west-1", "Z2"),
    node("n-4", "us-west-1", "Z2"),
    node("n-5", "us-east-1", "Z3"),
    node("n-6", "us-east-1", "Z3"),
    node("n-7", "us-east-1", "Z4"),
    node("n-8", "us-east-1", "Z4"),
]
NODE_NAMES = [f"n-{i}" for i in range(1, 9)]


def pod(selector: str, name: str, app: str, priority: int = 0) -> PodBuilder:
    """``makePod``: labelled with its AppGroup and workload selector."""
    return make_pod(name).label(APP_GROUP_LABEL, app).label(APP_GROUP_SELECTOR_LABEL, selector).priority(priority)


def allocated(selector: str, name: str, hostname: str, app: str) -> PodBuilder:
    """``makePodAllocated``: the same, bound to ``hostname``."""
    return pod(selector, name, app).node(hostname)
