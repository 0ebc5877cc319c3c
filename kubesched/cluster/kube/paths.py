"""Where each kind lives in the Kubernetes API: its collection and its objects' paths."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote

from kubesched.cluster.kinds import builtin_kind
from kubesched.framework.informers import GroupVersionResource


@dataclass(frozen=True)
class ResourcePath:
    """One kind the scheduler watches: its ``apiVersion`` and its cluster-wide collection."""

    kind: str
    api_version: str
    path: str  # the cluster-wide collection
    #: A resource of no Kind this package knows (a CRD's): ``kind`` is then the name its
    #: objects are delivered with (``<plural>.<version>.<group>``), not their Kind.
    custom: bool = False

    def object_path(self, namespace: str | None, name: str) -> str:
        """The path of one object; ``namespace`` is None for a cluster-scoped kind."""
        if namespace is None:
            return f"{self.path}/{quote(name, safe='')}"
        base, plural = self.path.rsplit("/", 1)
        return f"{base}/namespaces/{quote(namespace, safe='')}/{plural}/{quote(name, safe='')}"


RESOURCES = {
    "Namespace": ResourcePath("Namespace", "v1", "/api/v1/namespaces"),
    "PriorityClass": ResourcePath(
        "PriorityClass", "scheduling.k8s.io/v1", "/apis/scheduling.k8s.io/v1/priorityclasses"
    ),
    "StorageClass": ResourcePath("StorageClass", "storage.k8s.io/v1", "/apis/storage.k8s.io/v1/storageclasses"),
    "CSINode": ResourcePath("CSINode", "storage.k8s.io/v1", "/apis/storage.k8s.io/v1/csinodes"),
    "CSIDriver": ResourcePath("CSIDriver", "storage.k8s.io/v1", "/apis/storage.k8s.io/v1/csidrivers"),
    "CSIStorageCapacity": ResourcePath(
        "CSIStorageCapacity", "storage.k8s.io/v1", "/apis/storage.k8s.io/v1/csistoragecapacities"
    ),
    "PersistentVolume": ResourcePath("PersistentVolume", "v1", "/api/v1/persistentvolumes"),
    "PersistentVolumeClaim": ResourcePath("PersistentVolumeClaim", "v1", "/api/v1/persistentvolumeclaims"),
    "PodDisruptionBudget": ResourcePath("PodDisruptionBudget", "policy/v1", "/apis/policy/v1/poddisruptionbudgets"),
    "Service": ResourcePath("Service", "v1", "/api/v1/services"),
    "ReplicationController": ResourcePath("ReplicationController", "v1", "/api/v1/replicationcontrollers"),
    "ReplicaSet": ResourcePath("ReplicaSet", "apps/v1", "/apis/apps/v1/replicasets"),
    "StatefulSet": ResourcePath("StatefulSet", "apps/v1", "/apis/apps/v1/statefulsets"),
    "DeviceClass": ResourcePath("DeviceClass", "resource.k8s.io/v1", "/apis/resource.k8s.io/v1/deviceclasses"),
    "ResourceSlice": ResourcePath("ResourceSlice", "resource.k8s.io/v1", "/apis/resource.k8s.io/v1/resourceslices"),
    "ResourceClaim": ResourcePath("ResourceClaim", "resource.k8s.io/v1", "/apis/resource.k8s.io/v1/resourceclaims"),
    "DeviceTaintRule": ResourcePath(
        "DeviceTaintRule", "resource.k8s.io/v1", "/apis/resource.k8s.io/v1/devicetaintrules"
    ),
    # Workload-aware scheduling (1.37), watched only with its gates (base.GATED_WATCHED_KINDS).
    "Workload": ResourcePath("Workload", "scheduling.k8s.io/v1beta1", "/apis/scheduling.k8s.io/v1beta1/workloads"),
    "PodGroup": ResourcePath("PodGroup", "scheduling.k8s.io/v1beta1", "/apis/scheduling.k8s.io/v1beta1/podgroups"),
    "CompositePodGroup": ResourcePath(
        "CompositePodGroup", "scheduling.k8s.io/v1alpha3", "/apis/scheduling.k8s.io/v1alpha3/compositepodgroups"
    ),
    "Node": ResourcePath("Node", "v1", "/api/v1/nodes"),
    "Pod": ResourcePath("Pod", "v1", "/api/v1/pods"),
}


def resource_for(gvr: GroupVersionResource) -> ResourcePath:
    """Where ``gvr`` lives, delivered as its Kind (a built-in) or as ``<plural>.<version>.<group>``."""
    kind = builtin_kind(gvr)
    if kind is not None:
        known = RESOURCES.get(kind)
        if known is not None:
            return known
        return ResourcePath(kind, gvr.api_version, gvr.collection_path)
    return ResourcePath(gvr.event_resource, gvr.api_version, gvr.collection_path, custom=True)


def ns_path(group_version: str, namespace: str, plural: str, name: str | None = None, sub: str | None = None) -> str:
    """The path of a namespaced collection, or of one object in it, or of its subresource."""
    root = "/api/v1" if group_version == "v1" else f"/apis/{group_version}"
    path = f"{root}/namespaces/{quote(namespace, safe='')}/{plural}"
    if name is not None:
        path += f"/{quote(name, safe='')}"
    if sub is not None:
        path += f"/{sub}"
    return path


__all__ = ["RESOURCES", "ResourcePath", "ns_path", "resource_for"]
