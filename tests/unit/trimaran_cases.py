"""Shared by the Trimaran tests (plugins/trimaran): upstream's test objects as dicts — the nodes
of ``st.MakeNode().Capacity(...)`` (capacity and allocatable alike), the pods of
``getPodWithContainersAndOverhead`` and ``getPodWithLimits``, and load-watcher answers."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from kubesched import NodeInfo, PodInfo

PACKAGE = Path(__file__).resolve().parents[2] / "plugins" / "trimaran"
sys.path.insert(0, str(PACKAGE))  # the package is not installed for the suite

from kubesched_trimaran import Metric, WatcherMetrics, Window  # noqa: E402

Obj = dict[str, Any]
MEGA = 1024 * 1024


def node(name: str, cpu: str = "1000m", memory: str = "1Gi") -> Obj:
    resources = {"cpu": cpu, "memory": memory}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name},
        "status": {"capacity": dict(resources), "allocatable": dict(resources)},
    }


def node_info(obj: Obj, pods: list[Obj] = ()) -> NodeInfo:  # type: ignore[assignment]
    info = NodeInfo(obj)
    for p in pods:
        p.setdefault("spec", {})["nodeName"] = obj["metadata"]["name"]
        info.add_pod(PodInfo(p))
    return info


def pod(name: str = "p", containers: list[Obj] | None = None, **spec: Any) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
        "spec": {"containers": containers or [], **spec},
    }


def milli(v: int) -> str:
    return f"{v}m"


def pod_with_containers_and_overhead(
    overhead: int, init_cpu: int | None, init_mem: int | None, cpu: list[int], mem: list[int] | None = None
) -> Obj:
    """``getPodWithContainersAndOverhead``: containers with equal requests and limits (cpu in
    millicores, memory in bytes), an init container with requests (when given), a cpu overhead."""
    containers = []
    for i, c in enumerate(cpu):
        res: Obj = {"cpu": milli(c)}
        if mem is not None:
            res["memory"] = str(mem[i])
        containers.append({"name": f"test-container-{i}", "resources": {"requests": dict(res), "limits": dict(res)}})
    spec: Obj = {"overhead": {"cpu": milli(overhead)}}
    if init_cpu is not None:
        init: Obj = {"cpu": milli(init_cpu)}
        if init_mem is not None:
            init["memory"] = str(init_mem)
        spec["initContainers"] = [{"name": "test-init", "resources": {"requests": init}}]
    return pod("p", containers, **spec)


def with_limits(p: Obj, init_cpu: int, init_mem: int, cpu: list[int], mem: list[int]) -> Obj:
    """``getPodWithLimits``: the limits replaced (unchanged when the lengths differ)."""
    containers = p["spec"]["containers"]
    if len(cpu) != len(mem) or len(cpu) != len(containers):
        return p
    p["spec"]["initContainers"][0]["resources"]["limits"] = {"cpu": milli(init_cpu), "memory": str(init_mem)}
    for c, lc, lm in zip(containers, cpu, mem, strict=True):
        c["resources"]["limits"] = {"cpu": milli(lc), "memory": str(lm)}
    return p


def answer(nodes: dict[str, list[Metric]] | None, end: int = 0) -> WatcherMetrics:
    return WatcherMetrics(window=Window(end=end), nodes=nodes)
