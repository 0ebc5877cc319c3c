"""A plugin that reads a custom kind, shared by the tests of the kit and of ``kubesched bench``:
NeedsQuota admits a pod only in a namespace that has an ElasticQuota (scheduler-plugins' kind)."""

from __future__ import annotations

from typing import Any

from kubesched import GroupVersionResource, Status

QUOTAS = GroupVersionResource("scheduling.x-k8s.io", "v1alpha1", "elasticquotas")


class NeedsQuota:
    """PreFilter: a pod runs only in a namespace with an ElasticQuota."""

    name = "NeedsQuota"

    def __init__(self, args: Any, handle: Any) -> None:
        self.quotas = handle.informer_for(QUOTAS)

    def pre_filter(self, state: Any, pod: Any) -> Status | None:
        if not self.quotas.lister.list(pod.namespace):
            return Status.unschedulable(f"no ElasticQuota in namespace {pod.namespace}")
        return None


def quota(namespace: str, name: str = "q", cpu: str = "4") -> dict[str, Any]:
    """An ElasticQuota of ``namespace`` with a CPU max."""
    return {
        "apiVersion": QUOTAS.api_version,
        "kind": "ElasticQuota",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"max": {"cpu": cpu}},
    }
