"""``kubesched bench --backend http``: the workload's store behind the embedded API server.

The ops write into the store as they do on the in-memory cluster (the workload's setup is not
the scheduler's work), but the store is the storage of an embedded API server on loopback, and
the scheduler talks to it as ``kubesched run`` talks to a cluster: list and watch informers,
the binding subresource, events and status patches over HTTP, through the same client
(:class:`~kubesched.cluster.kube.cluster.KubeCluster`), not rate limited (``clientConnection.qps``
is the operator's choice; the default would make the run a measure of the limit). The server
shares the run's process and event loop, so its CPU is counted in the run's CPU per pod.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path

from kubesched.cluster.base import watched_kinds
from kubesched.cluster.kube.cluster import KubeCluster
from kubesched.cluster.store import Store
from kubesched.framework.features import FeatureGates
from kubesched.sim.apiserver import APIServer

#: The scheduler client's rate limit here: high enough never to be the bottleneck.
CLIENT_QPS = 100_000.0
#: The longest wait for the watches to bring a write (a bookmark brings every kind up to date
#: every few seconds, so only a broken server takes this long).
DELIVERY_TIMEOUT = 60.0


class ServedCluster:
    """An embedded API server over ``store`` on a free loopback port and a
    :class:`KubeCluster` to it (:attr:`cluster`, for the scheduler), from :meth:`start` to
    :meth:`stop`."""

    def __init__(self, store: Store, gates: FeatureGates) -> None:
        self.store = store
        self._home = tempfile.TemporaryDirectory(prefix="kubesched-bench-")
        self.kubeconfig = Path(self._home.name) / "kubeconfig"
        self.server = APIServer(store, feature_gates=gates)
        # The kubeconfig is read at the first request, once :meth:`start` has written it.
        self.cluster = KubeCluster(
            kubeconfig=str(self.kubeconfig),
            qps=CLIENT_QPS,
            burst=int(CLIENT_QPS),
            watched_kinds=watched_kinds(gates),
        )
        #: Per kind, the resourceVersion of the store's last write of it.
        self._written: dict[str, int] = {}
        self._unsubscribe = store.subscribe(self._on_write)

    def _on_write(self, etype: str, kind: str, obj: object, old: object) -> None:
        self._written[kind] = self.store.resource_version

    async def start(self) -> None:
        """Serve the store and write the kubeconfig the cluster reads."""
        await self.server.start()
        self.server.write_kubeconfig(self.kubeconfig)

    async def wait_delivered(self) -> None:
        """Return once every informer has seen the store's writes of its kind made so far (kinds
        the scheduler does not watch aside); later writes (the scheduler's binds) are not waited for."""
        targets = dict(self._written)
        deadline = time.monotonic() + DELIVERY_TIMEOUT
        while time.monotonic() < deadline:
            stats = self.cluster.informer_stats()
            if all(kind not in stats or int(stats[kind]["resourceVersion"] or 0) >= rv for kind, rv in targets.items()):
                return
            await asyncio.sleep(0.002)

    async def stop(self) -> None:
        """Close the client, then the server (its watches ended)."""
        self._unsubscribe()
        await self.cluster.stop()
        await self.server.stop()
        self._home.cleanup()


__all__ = ["CLIENT_QPS", "ServedCluster"]
