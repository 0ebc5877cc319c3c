"""Informers for any kind, built-in or custom: what a plugin watches besides pods and nodes.

A plugin that keeps state in API objects of its own (an ElasticQuota, a reservation, a
NodeResourceTopology) asks its handle for an informer in its constructor::

    QUOTAS = GroupVersionResource("scheduling.x-k8s.io", "v1alpha1", "elasticquotas")

    def __init__(self, args, handle):
        self.quotas = handle.informer_for(QUOTAS)
        self.quotas.add_event_handler(on_add=self._added, on_delete=self._deleted)

The scheduler watches the resource with its other informers (the same way against a real
cluster and in the simulator) and has listed it before the first pod is scheduled. Events on
the resource reach the queue as ``ClusterEvent(QUOTAS.event_resource, ...)``, so
``events_to_register`` names them as upstream names a custom resource's events:
``"elasticquotas.v1alpha1.scheduling.x-k8s.io"``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from kubesched.errors import KubeschedError
from kubesched.objects import Obj


class ResourceNameError(KubeschedError, ValueError):
    """A group/version/resource that cannot be read."""


@dataclass(frozen=True)
class GroupVersionResource:
    """One API resource: its group (``""`` for the core group), version and plural name."""

    group: str
    version: str
    resource: str

    @classmethod
    def parse(cls, text: str) -> GroupVersionResource:
        """Read upstream's event-resource form ``<resource>.<version>.<group>`` (``pods.v1`` for
        the core group) or the path form ``<group>/<version>/<resource>`` (``v1/pods``)."""
        if "/" in text:
            parts = text.split("/")
            if len(parts) == 2 and all(parts):
                return cls("", parts[0], parts[1])
            if len(parts) == 3 and all(parts):
                return cls(parts[0], parts[1], parts[2])
            raise ResourceNameError(
                f"{text!r}: expected <group>/<version>/<resource> (v1/<resource> for the core group)"
            )
        parts = text.split(".", 2)
        if len(parts) < 2 or not all(parts):
            raise ResourceNameError(
                f"{text!r}: expected <resource>.<version>.<group> (<resource>.v1 for the core group), "
                "e.g. elasticquotas.v1alpha1.scheduling.x-k8s.io"
            )
        return cls(parts[2] if len(parts) == 3 else "", parts[1], parts[0])

    @property
    def api_version(self) -> str:
        """The ``apiVersion`` its objects carry: ``group/version``, or ``version`` for core."""
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def event_resource(self) -> str:
        """The name its events carry in ``ClusterEvent.resource`` (upstream's form)."""
        return f"{self.resource}.{self.version}.{self.group}" if self.group else f"{self.resource}.{self.version}"

    @property
    def qualified_name(self) -> str:
        """``<resource>.<group>`` (``<resource>`` for core), as ``kubectl get`` names it; the
        version does not matter to which objects it is."""
        return f"{self.resource}.{self.group}" if self.group else self.resource

    @property
    def collection_path(self) -> str:
        """The cluster-wide collection's path in the API."""
        root = "/api" if not self.group else f"/apis/{self.group}"
        return f"{root}/{self.version}/{self.resource}"

    def __str__(self) -> str:
        return self.event_resource


class Lister(Protocol):
    """Read access to the objects an informer holds (Kubernetes JSON dicts, not to be changed)."""

    def get(self, namespace: str | None, name: str) -> Obj | None:
        """One object (``namespace`` None for a cluster-scoped resource), or ``None``."""
        ...

    def list(self, namespace: str | None = None) -> list[Obj]:
        """Every object, or those of one namespace."""
        ...


AddHandler = Callable[[Obj], None]
UpdateHandler = Callable[[Obj, Obj], None]
DeleteHandler = Callable[[Obj], None]


class Informer(Protocol):
    """One resource's objects as the scheduler sees them, and their changes as they happen."""

    @property
    def gvr(self) -> GroupVersionResource: ...

    @property
    def lister(self) -> Lister: ...

    def add_event_handler(
        self,
        on_add: AddHandler | None = None,
        on_update: UpdateHandler | None = None,
        on_delete: DeleteHandler | None = None,
    ) -> None:
        """Call these on every change (plain functions, called on the scheduler's loop, in the
        order the cluster made the changes); objects already known are delivered as adds."""
        ...

    def has_synced(self) -> bool:
        """Whether the first list has been delivered."""
        ...


__all__ = ["GroupVersionResource", "Informer", "Lister", "ResourceNameError"]
