"""Which Kind each built-in resource is, and the names a resource goes by inside kubesched.

A plugin names a resource by group, version and plural
(:class:`~kubesched.framework.informers.GroupVersionResource`); the clusters name objects by
kind. For a resource of this table the kind is its Kind (``ConfigMap``), the same in the
:class:`~kubesched.cluster.store.Store` and across the
:class:`~kubesched.cluster.base.EventHandler` boundary. Any other resource (a CRD's) is kept
in the Store under ``<plural>.<group>`` (:attr:`GroupVersionResource.qualified_name`: the
version does not change which objects they are) and crosses the handler boundary as
``<plural>.<version>.<group>`` (:attr:`GroupVersionResource.event_resource`).
"""

from __future__ import annotations

from kubesched.framework.informers import GroupVersionResource


def _gvr(api_version: str, plural: str) -> GroupVersionResource:
    group, _, version = api_version.rpartition("/")
    return GroupVersionResource(group, version, plural)


#: Built-in resources by group/version/resource: their Kind.
BUILTIN_KINDS: dict[GroupVersionResource, str] = {
    _gvr(api_version, plural): kind
    for kind, api_version, plural in (
        ("Pod", "v1", "pods"),
        ("Node", "v1", "nodes"),
        ("Namespace", "v1", "namespaces"),
        ("Event", "v1", "events"),
        ("Service", "v1", "services"),
        ("ReplicationController", "v1", "replicationcontrollers"),
        ("PersistentVolume", "v1", "persistentvolumes"),
        ("PersistentVolumeClaim", "v1", "persistentvolumeclaims"),
        ("ConfigMap", "v1", "configmaps"),
        ("Secret", "v1", "secrets"),
        ("PriorityClass", "scheduling.k8s.io/v1", "priorityclasses"),
        ("Lease", "coordination.k8s.io/v1", "leases"),
        ("StorageClass", "storage.k8s.io/v1", "storageclasses"),
        ("CSINode", "storage.k8s.io/v1", "csinodes"),
        ("CSIDriver", "storage.k8s.io/v1", "csidrivers"),
        ("CSIStorageCapacity", "storage.k8s.io/v1", "csistoragecapacities"),
        ("PodDisruptionBudget", "policy/v1", "poddisruptionbudgets"),
        ("ReplicaSet", "apps/v1", "replicasets"),
        ("StatefulSet", "apps/v1", "statefulsets"),
        ("Deployment", "apps/v1", "deployments"),
        ("DaemonSet", "apps/v1", "daemonsets"),
        ("Job", "batch/v1", "jobs"),
        ("DeviceClass", "resource.k8s.io/v1", "deviceclasses"),
        ("ResourceSlice", "resource.k8s.io/v1", "resourceslices"),
        ("DeviceTaintRule", "resource.k8s.io/v1", "devicetaintrules"),
        ("ResourceClaim", "resource.k8s.io/v1", "resourceclaims"),
        ("ResourceClaimTemplate", "resource.k8s.io/v1", "resourceclaimtemplates"),
        ("Workload", "scheduling.k8s.io/v1beta1", "workloads"),
        ("PodGroup", "scheduling.k8s.io/v1beta1", "podgroups"),
        ("CompositePodGroup", "scheduling.k8s.io/v1alpha3", "compositepodgroups"),
        ("CustomResourceDefinition", "apiextensions.k8s.io/v1", "customresourcedefinitions"),
    )
}


def builtin_kind(gvr: GroupVersionResource) -> str | None:
    """The Kind of a built-in resource, ``None`` for any other (a CRD's)."""
    return BUILTIN_KINDS.get(gvr)


def handler_kind(gvr: GroupVersionResource) -> str:
    """The kind ``gvr``'s objects cross the EventHandler boundary with (``on_add(kind, obj)``):
    the Kind of a built-in, ``<plural>.<version>.<group>`` of any other resource."""
    return BUILTIN_KINDS.get(gvr) or gvr.event_resource


def store_kind(gvr: GroupVersionResource) -> str:
    """The kind the Store keeps ``gvr``'s objects under: the Kind of a built-in,
    ``<plural>.<group>`` of any other resource."""
    return BUILTIN_KINDS.get(gvr) or gvr.qualified_name


#: Built-in Kinds: their group/version/resource.
BUILTIN_RESOURCES: dict[str, GroupVersionResource] = {kind: gvr for gvr, kind in BUILTIN_KINDS.items()}


def named_resource(kind: str) -> GroupVersionResource | None:
    """The resource ``kind`` names as the clusters' write methods take it: a built-in Kind
    (``ConfigMap``), or any resource as it crosses the handler boundary
    (``<plural>.<version>.<group>``, what :attr:`Informer.gvr.event_resource` gives); ``None``
    for neither."""
    known = BUILTIN_RESOURCES.get(kind)
    if known is not None:
        return known
    if "." not in kind or kind != kind.lower():
        return None
    try:
        return GroupVersionResource.parse(kind)
    except ValueError:
        return None


__all__ = ["BUILTIN_KINDS", "BUILTIN_RESOURCES", "builtin_kind", "handler_kind", "named_resource", "store_kind"]
