"""A handle for the pod-group plugins' unit tests: a real Cache (bound and assumed pods), the
PodGroupIndex the scheduler builds over it, and a snapshot of the cache's nodes."""

from __future__ import annotations

from typing import Any

from kubesched.backend.cache import Cache, Snapshot
from kubesched.backend.pod_groups import PodGroupIndex
from kubesched.framework.features import FeatureGates
from kubesched.framework.types import PodInfo


def pod_group(
    name: str,
    namespace: str = "default",
    min_count: int | None = None,
    topology_key: str | None = None,
    parent: str | None = None,
) -> dict[str, Any]:
    """A ``scheduling.k8s.io/v1beta1`` PodGroup: gang with ``min_count``, else basic."""
    policy: dict[str, Any] = {"gang": {"minCount": min_count}} if min_count is not None else {"basic": {}}
    spec: dict[str, Any] = {"schedulingPolicy": policy}
    if topology_key is not None:
        spec["schedulingConstraints"] = {"topology": [{"key": topology_key}]}
    if parent is not None:
        spec["parentCompositePodGroupName"] = parent
    return {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": namespace, "uid": f"pg-{namespace}-{name}"},
        "spec": spec,
    }


def composite_pod_group(
    name: str,
    namespace: str = "default",
    min_group_count: int | None = None,
    parent: str | None = None,
    topology_key: str | None = None,
) -> dict[str, Any]:
    """A ``scheduling.k8s.io/v1alpha3`` CompositePodGroup: gang with ``min_group_count``, else
    basic."""
    policy: dict[str, Any] = (
        {"gang": {"minGroupCount": min_group_count}} if min_group_count is not None else {"basic": {}}
    )
    spec: dict[str, Any] = {"schedulingPolicy": policy}
    if topology_key is not None:
        spec["schedulingConstraints"] = {"topology": [{"key": topology_key}]}
    if parent is not None:
        spec["parentCompositePodGroupName"] = parent
    return {
        "apiVersion": "scheduling.k8s.io/v1alpha3",
        "kind": "CompositePodGroup",
        "metadata": {"name": name, "namespace": namespace, "uid": f"cpg-{namespace}-{name}"},
        "spec": spec,
    }


def grouped_pod(
    name: str, group: str | None, namespace: str = "default", node: str = "", **requests: str
) -> dict[str, Any]:
    """A pod (UID = name) of ``group`` (none when ``None``), bound to ``node`` when given."""
    spec: dict[str, Any] = {"containers": [{"name": "c", "resources": {"requests": dict(requests)}}]}
    if group is not None:
        spec["schedulingGroup"] = {"podGroupName": group}
    if node:
        spec["nodeName"] = node
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "uid": name},
        "spec": spec,
    }


class PodGroupHandle:
    """The part of the plugin handle the pod-group plugins read."""

    def __init__(self, composite: bool = False) -> None:
        #: The scheduler's gates: ``composite`` turns CompositePodGroup on.
        self.feature_gates = FeatureGates().replace(GenericWorkload=True, CompositePodGroup=composite)
        self.cache = Cache()
        self.pod_groups = PodGroupIndex()
        self.pod_groups.follow(self.cache)
        self._snapshot = Snapshot()

    def add_nodes(self, *nodes: dict[str, Any]) -> None:
        for n in nodes:
            self.cache.add_node(n)

    def add_groups(self, *groups: dict[str, Any]) -> None:
        for g in groups:
            if g.get("kind") == "CompositePodGroup":
                self.pod_groups.put_composite(g)
            else:
                self.pod_groups.put_group(g)

    def add_pod(self, pod: dict[str, Any]) -> PodInfo:
        """A member the informers delivered: bound ones enter the cache too."""
        pi = PodInfo(pod)
        self.pod_groups.put_pod(pi)
        if pi.node_name:
            self.cache.add_pod(pi)
        return pi

    def assume(self, pod: dict[str, Any], node: str) -> PodInfo:
        """A pending member the scheduler assumed on ``node``."""
        pi = PodInfo(pod)
        self.pod_groups.put_pod(pi)
        self.cache.assume_pod(pi.with_node(node), node)
        return pi

    def snapshot(self) -> Snapshot:
        """The cache's nodes, brought up to date."""
        self.cache.update_snapshot(self._snapshot)
        return self._snapshot
