"""The AppGroup as the network-aware plugins read it (``appgroup.diktyo.x-k8s.io/v1alpha1``).

A pod belongs to an AppGroup through the label ``appgroup.diktyo.x-k8s.io`` (the group's name)
and to one of its workloads through ``appgroup.diktyo.x-k8s.io.workload`` (the workload's
``selector``). The group's ``spec.workloads`` say which workloads each one depends on, and at
what largest network cost (``maxNetworkCost``, 0 when absent); its ``status.topologyOrder``
gives each workload the index TopologicalSort orders by. Objects are read as the cluster gives
them (Kubernetes JSON dicts); absent fields count as Go's zero values.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kubesched import GroupVersionResource

#: The label naming a pod's AppGroup (upstream's ``AppGroupLabel``).
APP_GROUP_LABEL = "appgroup.diktyo.x-k8s.io"
#: The label naming a pod's workload in its AppGroup (``AppGroupSelectorLabel``).
APP_GROUP_SELECTOR_LABEL = APP_GROUP_LABEL + ".workload"
#: The AppGroup resource.
APP_GROUPS = GroupVersionResource("appgroup.diktyo.x-k8s.io", "v1alpha1", "appgroups")

Obj = Mapping[str, Any]
#: Looks an object up by namespace and name (an informer's lister ``get``).
Getter = Callable[[str, str], Obj | None]


def labels_of(pod: Obj) -> Mapping[str, str]:
    return ((pod.get("metadata") or {}).get("labels")) or {}


def app_group_of(pod: Obj) -> str:
    """The pod's AppGroup name, ``""`` when it has none."""
    return str(labels_of(pod).get(APP_GROUP_LABEL) or "")


def selector_of(pod: Obj) -> str:
    """The pod's workload selector, ``""`` when it has none."""
    return str(labels_of(pod).get(APP_GROUP_SELECTOR_LABEL) or "")


def find_in_namespaces(get: Getter, namespaces: Iterable[str], name: str) -> Obj | None:
    """The object ``name`` in the first of ``namespaces`` that has one (upstream looks in each,
    in the order configured, and takes the first it finds)."""
    for namespace in namespaces:
        found = get(namespace, name)
        if found is not None:
            return found
    return None


def _selector(entry: Obj) -> str:
    return str((entry.get("workload") or {}).get("selector") or "")


def find_pod_order(topology_order: Sequence[Obj], selector: str) -> int:
    """The index of ``selector``'s workload in ``status.topologyOrder``, or -1: upstream's
    ``FindPodOrder``, a binary search by selector over the list as stored (the AppGroup
    controller writes it sorted by selector; an entry an unsorted list hides is not found)."""
    low, high = 0, len(topology_order) - 1
    while low <= high:
        mid = (low + high) // 2
        here = _selector(topology_order[mid])
        if here == selector:
            return int(topology_order[mid].get("index") or 0)
        if here < selector:
            low = mid + 1
        else:
            high = mid - 1
    return -1


def topology_order_of(app_group: Obj) -> list[Obj]:
    return list((app_group.get("status") or {}).get("topologyOrder") or [])


@dataclass(frozen=True)
class Dependency:
    """One dependency of a workload: the workload depended on and the largest network cost
    accepted to it."""

    selector: str
    max_network_cost: int


def dependencies_of(pod: Obj, app_group: Obj) -> list[Dependency]:
    """The dependencies of the pod's workload in ``app_group`` (``GetDependencyList``): of every
    ``spec.workloads`` entry whose selector is the pod's, in order."""
    selector = selector_of(pod)
    out: list[Dependency] = []
    for entry in (app_group.get("spec") or {}).get("workloads") or ():
        if _selector(entry) != selector:
            continue
        for dep in entry.get("dependencies") or ():
            out.append(Dependency(_selector(dep), int(dep.get("maxNetworkCost") or 0)))
    return out


@dataclass(frozen=True)
class Scheduled:
    """A pod of the AppGroup already on a node (``ScheduledInfo``)."""

    name: str
    selector: str
    hostname: str


def scheduled_of(pods: Iterable[Obj]) -> list[Scheduled]:
    """The pods among ``pods`` that have a node (``GetScheduledList``)."""
    out: list[Scheduled] = []
    for pod in pods:
        node = str((pod.get("spec") or {}).get("nodeName") or "")
        if node:
            out.append(Scheduled(str((pod.get("metadata") or {}).get("name") or ""), selector_of(pod), node))
    return out
