"""The cluster protocol: everything the scheduler needs from a cluster, and nothing more.

Two implementations exist: :class:`~kubesched.cluster.memory.InMemoryCluster` over the
embedded object store (used by ``kubesched simulate`` and the tests), and the
kubernetes_asyncio backend for real clusters. The scheduler cannot tell them apart.

Objects cross this boundary as Kubernetes JSON dicts, named by kind: the Kinds of
:data:`WATCHED_KINDS` (``"Pod"``, ``"Node"``, ...), and those of the resources a cluster was asked
to watch besides (:class:`WatchesResources`, plugins' informers): a built-in one by its Kind
(``"ConfigMap"``), any other by ``<plural>.<version>.<group>``
(:mod:`kubesched.cluster.kinds`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol, runtime_checkable

from kubesched import errors
from kubesched.framework.informers import GroupVersionResource
from kubesched.objects import Obj

#: Delivered in this order at start: what pods refer to comes before the pods.
WATCHED_KINDS = (
    "Namespace",
    "PriorityClass",
    "StorageClass",
    "CSINode",
    # CSI drivers' opt-ins (storage capacity, scheduling only where installed) and the capacity
    # their deployments report per topology segment.
    "CSIDriver",
    "CSIStorageCapacity",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "PodDisruptionBudget",
    # What selects a pod (PodTopologySpread's system default constraints use their selectors).
    "Service",
    "ReplicationController",
    "ReplicaSet",
    "StatefulSet",
    # Dynamic resource allocation: what devices exist, their classes, and who claims them.
    "DeviceClass",
    "ResourceSlice",
    "DeviceTaintRule",
    "ResourceClaim",
    "Node",
    "Pod",
)

#: Kinds watched only while feature gates are on (each entry: the gates, all needed, and the
#: kinds), delivered after the kinds above but before nodes and pods: a pod's group is known
#: before the pod. kube-apiserver serves them only with those gates, and the scheduler acts on
#: them only with them.
GATED_WATCHED_KINDS: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = (
    (("GenericWorkload",), ("Workload", "PodGroup")),
    (("GenericWorkload", "CompositePodGroup"), ("CompositePodGroup",)),
)


def watched_kinds(gates: Mapping[str, bool] | None = None) -> tuple[str, ...]:
    """:data:`WATCHED_KINDS` and the kinds of :data:`GATED_WATCHED_KINDS` that ``gates`` (a
    :class:`~kubesched.framework.features.FeatureGates`) turn on, in delivery order."""
    extra = [
        kind
        for needed, kinds in GATED_WATCHED_KINDS
        if gates is not None and all(gates.get(g, False) for g in needed)
        for kind in kinds
    ]
    head = tuple(k for k in WATCHED_KINDS if k not in ("Node", "Pod"))
    return (*head, *extra, "Node", "Pod")


#: Every kind, the gated ones included: what an in-memory cluster delivers (a scheduler without
#: the gates keeps such objects among its listers and acts on none of them).
EVERY_WATCHED_KIND: tuple[str, ...] = watched_kinds({g: True for needed, _ in GATED_WATCHED_KINDS for g in needed})


class ClusterError(errors.ClusterError):
    """A request the cluster refused or could not complete; ``code`` is the HTTP-like status.

    The cluster family of :class:`~kubesched.errors.KubeschedError`: whatever a cluster (real or
    in memory) answered goes up as this or one of its subclasses below."""

    def __init__(self, message: str, code: int = 500) -> None:
        super().__init__(message)
        self.code = code


class NotFound(ClusterError):
    def __init__(self, message: str) -> None:
        super().__init__(message, 404)


class Conflict(ClusterError):
    """409: e.g. binding a pod that is already bound. The scheduler forgets it, no retry."""

    def __init__(self, message: str) -> None:
        super().__init__(message, 409)


class Invalid(ClusterError):
    def __init__(self, message: str) -> None:
        super().__init__(message, 422)


class EventHandler(Protocol):
    """Receives the cluster's objects: every existing one as an add at start, then changes."""

    def on_add(self, kind: str, obj: Obj) -> None: ...

    def on_update(self, kind: str, old: Obj, new: Obj) -> None: ...

    def on_delete(self, kind: str, obj: Obj) -> None: ...


class Cluster(Protocol):
    async def start(self, handler: EventHandler) -> None:
        """List every watched kind, deliver each object as an add, then keep delivering
        changes. Returns once the initial lists have been delivered (informers synced)."""

    async def stop(self) -> None: ...

    async def bind(self, pod: Obj, node_name: str) -> None:
        """Bind through the pods/binding subresource. Raises :class:`Conflict` when the pod is
        already bound, :class:`NotFound` when it is gone, :class:`ClusterError` otherwise."""

    async def get_pod(self, namespace: str, name: str) -> Obj:
        """Read one pod from the cluster itself, not from the informers (raises :class:`NotFound`).

        Used after a bind whose answer was lost (a timeout) to learn whether it took effect."""

    async def record_event(
        self, regarding: Obj, event_type: str, reason: str, action: str, message: str, reporting_controller: str
    ) -> None:
        """Write an Event about ``regarding``; repeats of the same event are aggregated."""

    async def update_pod_condition(self, pod: Obj, condition: Obj, nominated_node_name: str | None = None) -> None:
        """Set (or replace) one condition in ``status.conditions`` (and nominatedNodeName)."""

    async def patch_pod_annotations(self, pod: Obj, annotations: dict[str, str]) -> None: ...

    async def set_nominated_node_name(self, pod: Obj, node_name: str) -> None:
        """Set ``status.nominatedNodeName`` (``""`` clears it), as preemption does."""

    async def delete_pod(self, pod: Obj) -> None: ...

    # The write methods below take ``kind`` as a built-in Kind (``ResourceClaim``,
    # ``ConfigMap``) or any resource as its informer names it, ``<plural>.<version>.<group>``
    # (``handle.informer_for(...).gvr.event_resource``): a plugin writes its own custom objects.
    async def update_object(self, kind: str, obj: Obj, subresource: str | None = None) -> Obj:
        """Replace an object (optimistic concurrency on ``metadata.resourceVersion``: a stale one
        raises :class:`Conflict`), or with ``subresource="status"`` its status. Used by plugins
        that write, e.g. VolumeBinding's and DynamicResources' PreBind."""

    async def create_object(self, kind: str, obj: Obj) -> Obj:
        """Create an object (``metadata.generateName`` honoured) and return it as stored, e.g.
        the ResourceClaim DynamicResources' PreBind makes for a pod's extended resources."""

    async def delete_object(self, kind: str, namespace: str | None, name: str) -> None:
        """Delete an object (raises :class:`NotFound` when it is gone already)."""


@runtime_checkable
class WatchesResources(Protocol):
    """A :class:`Cluster` that can watch resources besides its own kinds (both clusters of this
    package can; a cluster without it delivers only :data:`WATCHED_KINDS`)."""

    def watch_resources(self, gvrs: list[GroupVersionResource]) -> None:
        """Before :meth:`Cluster.start`: list and watch these resources too, delivering their
        objects with the other kinds' (before nodes and pods at start) under
        :func:`~kubesched.cluster.kinds.handler_kind`. Those watched already change nothing; a
        resource the cluster does not serve (a CRD not installed) delivers nothing and is
        never an error."""
