"""``kubesched bench --backend http``: the workload's store behind the embedded API server.

The ops write into the store as they do on the in-memory cluster (the workload's setup is not
the scheduler's work), but the store is the storage of an embedded API server on loopback, and
the scheduler, in a process of its own (:class:`~kubesched.bench.scheduler_side.SchedulerProcess`),
talks to it as ``kubesched run`` talks to a cluster: list and watch informers, the binding
subresource, events and status patches over HTTP, through the same client, not rate limited.
The server shares the run's process and event loop: its CPU is the run's, the scheduler's is its
own process's.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from kubesched.cluster.store import Store
from kubesched.framework.features import FeatureGates
from kubesched.sim.apiserver import APIServer

#: The longest wait for the watches to bring a write (a bookmark brings every kind up to date
#: every few seconds, so only a broken server takes this long).
DELIVERY_TIMEOUT = 60.0


class ServedCluster:
    """An embedded API server over ``store`` on a free loopback port, and the kubeconfig to it
    (:attr:`kubeconfig`), from :meth:`start` to :meth:`stop`."""

    def __init__(self, store: Store, gates: FeatureGates) -> None:
        self.store = store
        self._home = tempfile.TemporaryDirectory(prefix="kubesched-bench-")
        self.kubeconfig = Path(self._home.name) / "kubeconfig"
        self.server = APIServer(store, feature_gates=gates)
        #: Per kind, the resourceVersion of the store's last write of it.
        self._written: dict[str, int] = {}
        self._unsubscribe = store.subscribe(self._on_write)

    def _on_write(self, etype: str, kind: str, obj: object, old: object) -> None:
        self._written[kind] = self.store.resource_version

    async def start(self) -> None:
        """Serve the store and write the kubeconfig to it."""
        await self.server.start()
        self.server.write_kubeconfig(self.kubeconfig)

    async def wait_delivered(self, seen: Callable[[], Awaitable[dict[str, int]]]) -> None:
        """Return once every informer has seen the store's writes of its kind made so far —
        ``seen()`` tells, per kind watched, the resourceVersion its informer has reached (kinds
        the scheduler does not watch aside); later writes (the scheduler's binds) are not waited for."""
        targets = dict(self._written)
        deadline = time.monotonic() + DELIVERY_TIMEOUT
        while time.monotonic() < deadline:
            versions = await seen()
            if all(kind not in versions or versions[kind] >= rv for kind, rv in targets.items()):
                return
            await asyncio.sleep(0.002)

    async def stop(self) -> None:
        """Close the server (its watches ended)."""
        self._unsubscribe()
        await self.server.stop()
        self._home.cleanup()


__all__ = ["ServedCluster"]
