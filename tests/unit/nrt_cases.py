"""Builders for the NodeResourceTopologyMatch tests (plugins/noderesourcetopology): the objects
upstream's tests build (``MakeTopologyResInfo``, ``makePodByResourceList`` and its kin), as the
dicts the cluster holds."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import Any

from kubesched import NodeInfo, PodInfo, parse_quantity

#: The package's directory: tests put it on the path (the suite does not install it).
PACKAGE = Path(__file__).resolve().parents[2] / "plugins" / "noderesourcetopology"

Obj = dict[str, Any]
Res = dict[str, str]

CPU, MEMORY = "cpu", "memory"
EXTENDED = "namespace/extended"
HUGEPAGES_2MI = "hugepages-2Mi"
NIC = "vendor/nic1"
NOT_EXISTING_NIC = "vendor/notexistingnic"
NIC_NO_NUMA = "vendor.com/old-nic-model"


def res_info(name: str, capacity: str, available: str) -> Obj:
    """``MakeTopologyResInfo``: allocatable left out, as upstream's helper leaves it."""
    return {"name": name, "capacity": capacity, "allocatable": capacity, "available": available}


def zone(name: str, *resources: Obj, costs: dict[str, int] | None = None) -> Obj:
    z: Obj = {"name": name, "type": "Node", "resources": list(resources)}
    if costs is not None:
        z["costs"] = [{"name": k, "value": v} for k, v in costs.items()]
    return z


def nrt(name: str, *zones: Obj, policies: list[str] | None = None, attributes: dict[str, str] | None = None) -> Obj:
    obj: Obj = {
        "apiVersion": "topology.node.k8s.io/v1alpha2",
        "kind": "NodeResourceTopology",
        "metadata": {"name": name},
        "zones": list(zones),
    }
    if policies is not None:
        obj["topologyPolicies"] = policies
    if attributes is not None:
        obj["attributes"] = [{"name": k, "value": v} for k, v in attributes.items()]
    return obj


def _fmt(q: Fraction) -> str:
    return str(q.numerator) if q.denominator == 1 else f"{int(q * 1000)}m"


def node_of(topology: Obj, extra: Res | None = None) -> Obj:
    """``makeNodeFromNodeResourceTopology``: allocatable = the zones' available amounts summed."""
    total: dict[str, Fraction] = {}
    for z in topology["zones"]:
        for r in z["resources"]:
            total[r["name"]] = total.get(r["name"], Fraction(0)) + parse_quantity(r["available"])
    alloc = {k: _fmt(v) for k, v in total.items()}
    alloc.update(extra or {})
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": topology["metadata"]["name"]},
        "status": {"capacity": dict(alloc), "allocatable": alloc},
    }


def node_info(node: Obj) -> NodeInfo:
    return NodeInfo(node)


def container(requests: Res, limits: Res | None = None, name: str = "container1") -> Obj:
    resources: Obj = {}
    if requests:
        resources["requests"] = dict(requests)
    if limits:
        resources["limits"] = dict(limits)
    return {"name": name, "image": "pause", "resources": resources}


def pod(*containers: Obj, init: list[Obj] | None = None, name: str = "testpod") -> PodInfo:
    spec: Obj = {"containers": list(containers)}
    if init:
        spec["initContainers"] = init
    return PodInfo(
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"}, "spec": spec}
    )


def guaranteed(res: Res) -> PodInfo:
    """``makePodByResourceList``: one container, limits equal to requests."""
    return pod(container(res, res))


def with_requests(res: Res) -> PodInfo:
    """``makePodWithReqByResourceList``: requests only."""
    return pod(container(res))


def with_requests_and_limits(req: Res, lim: Res) -> PodInfo:
    """``makePodWithReqAndLimitByResourceList``."""
    return pod(container(req, lim))


def many_containers(res: Res, count: int) -> PodInfo:
    """``makePodByResourceListWithManyContainers``."""
    return pod(*(container(res, res, f"c{i}") for i in range(count)))


def multi(containers: list[Res], init: list[Res] | None = None) -> PodInfo:
    """``makePod`` with ``withMultiContainers`` / ``withMultiInitContainers``."""
    return pod(
        *(container(r, r, f"cnt-{i + 1}") for i, r in enumerate(containers)),
        init=[container(r, r, f"inCnt-{i + 1}") for i, r in enumerate(init or [])],
    )
