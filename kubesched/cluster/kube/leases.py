"""What leader election needs from the API: one Lease read, created and replaced.

:class:`KubeLeases` is the :class:`~kubesched.cluster.leader.LeaseClient` over a real API
server. Give it a transport of its own (``KubeCluster.leases()`` does), as upstream gives
leader election its own client: renewals must never wait behind the scheduler's binds.
"""

from __future__ import annotations

from kubesched.cluster.kube.paths import ns_path
from kubesched.cluster.kube.transport import Transport
from kubesched.objects import Obj

LEASES = "coordination.k8s.io/v1"


class KubeLeases:
    """coordination.k8s.io/v1 Leases as raw dicts, through ``transport``."""

    def __init__(self, transport: Transport) -> None:
        self.transport = transport

    async def get(self, namespace: str, name: str) -> Obj:
        return await self.transport.request("GET", ns_path(LEASES, namespace, "leases", name))

    async def create(self, lease: Obj) -> Obj:
        ns = (lease.get("metadata") or {}).get("namespace") or "default"
        return await self.transport.request("POST", ns_path(LEASES, ns, "leases"), body=lease)

    async def update(self, lease: Obj) -> Obj:
        meta = lease.get("metadata") or {}
        ns = meta.get("namespace") or "default"
        return await self.transport.request("PUT", ns_path(LEASES, ns, "leases", meta["name"]), body=lease)


__all__ = ["KubeLeases"]
