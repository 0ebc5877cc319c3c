"""Who owns the cluster's tasks: the informers belong to the cluster, the lease renewal to its
elector; stopping either cancels them and waits until they have ended."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from kubesched.cluster.base import WATCHED_KINDS
from kubesched.cluster.kube import informer
from kubesched.cluster.kube.cluster import KubeCluster
from kubesched.cluster.leader import LeaderElector, StoreLeaseClient
from kubesched.cluster.store import Store
from kubesched.sim.apiserver.server import APIServer
from kubesched.testing import make_pod

Obj = dict[str, Any]


class Names:
    """An EventHandler that keeps the names it was told about, per kind."""

    def __init__(self) -> None:
        self.added: dict[str, list[str]] = {}

    def on_add(self, kind: str, obj: Obj) -> None:
        self.added.setdefault(kind, []).append(obj["metadata"]["name"])

    def on_update(self, kind: str, old: Obj, new: Obj) -> None:
        pass

    def on_delete(self, kind: str, obj: Obj) -> None:
        pass


def running(prefix: str) -> list[asyncio.Task[Any]]:
    return [t for t in asyncio.all_tasks() if t.get_name().startswith(prefix) and not t.done()]


async def until(predicate: Any, timeout: float = 5.0) -> None:
    async with asyncio.timeout(timeout):
        while not predicate():
            await asyncio.sleep(0.01)


@pytest.fixture
async def cluster(server: APIServer, tmp_path: Path) -> AsyncIterator[KubeCluster]:
    c = KubeCluster(kubeconfig=server.write_kubeconfig(tmp_path / "kc"), backoff_initial=0.05, backoff_cap=0.2)
    try:
        yield c
    finally:
        await c.stop()


async def test_stop_cancels_every_informer_task_and_waits_for_it(cluster: KubeCluster) -> None:
    await asyncio.wait_for(cluster.start(Names()), 10)
    tasks = running("informer ")
    assert sorted(t.get_name() for t in tasks) == sorted(f"informer {kind}" for kind in WATCHED_KINDS)

    await cluster.stop()

    assert all(t.cancelled() for t in tasks)
    assert running("informer ") == []
    assert len(cluster._tasks) == 0


async def test_a_stopped_cluster_starts_again_with_fresh_informers(server: APIServer, cluster: KubeCluster) -> None:
    await asyncio.wait_for(cluster.start(Names()), 10)
    await cluster.stop()
    server.store.create("Pod", make_pod("later").obj())
    names = Names()
    await asyncio.wait_for(cluster.start(names), 10)
    assert names.added["Pod"] == ["later"]
    assert len(running("informer ")) == len(WATCHED_KINDS)


async def test_an_informer_that_crashes_is_restarted_in_its_task_and_still_cancelled_at_stop(
    server: APIServer, cluster: KubeCluster, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # A bug that escapes the informer's own loop cannot be caused through the API: inject one.
    real_run = informer._Informer.run
    crashed: list[str] = []

    async def run_once_broken(self: Any) -> None:
        if self.kind == "Pod" and not crashed:
            crashed.append(self.kind)
            raise RuntimeError("bug outside the watch loop")
        await real_run(self)

    monkeypatch.setattr(informer._Informer, "run", run_once_broken)
    server.store.create("Pod", make_pod("before").obj())
    names = Names()
    with caplog.at_level(logging.ERROR, logger="kubesched.cluster.kube.informer"):
        await asyncio.wait_for(cluster.start(names), 10)  # synced once the Pod informer restarted
    assert crashed == ["Pod"]
    assert any("Pod informer crashed; restarting in" in r.getMessage() for r in caplog.records)
    assert names.added["Pod"] == ["before"]
    tasks = running("informer ")
    assert len(tasks) == len(WATCHED_KINDS)  # restarted inside its own task, not beside it
    server.store.create("Pod", make_pod("after").obj())
    await until(lambda: names.added["Pod"] == ["before", "after"])

    await cluster.stop()
    assert all(t.cancelled() for t in tasks)
    assert running("informer ") == []


async def test_stop_renewing_cancels_the_renewal_over_the_api_and_waits_for_it(
    server: APIServer, cluster: KubeCluster
) -> None:
    elector = LeaderElector(
        cluster.leases(renew_deadline=1.0), "a", "kube-system", "kubesched", retry_period=0.1, renew_deadline=1.0
    )
    await asyncio.wait_for(elector.acquire(), 5)
    renewal = elector.start_renewing()
    assert renewal.get_name() == "lease-renew a"
    first = server.store.get("Lease", "kube-system", "kubesched")["spec"]["renewTime"]
    await until(lambda: server.store.get("Lease", "kube-system", "kubesched")["spec"]["renewTime"] != first)

    await elector.stop_renewing()

    assert renewal.cancelled()
    assert running("lease-renew ") == []
    assert elector.is_leader  # stopping the renewals is not giving the lease up


@pytest.mark.looptime
async def test_leaving_leading_cancels_the_renewal_and_releases_the_lease() -> None:
    store = Store()
    elector = LeaderElector(StoreLeaseClient(store), "a", "kube-system", "kube-scheduler")
    async with elector.leading():
        (renewal,) = running("lease-renew ")
        await asyncio.sleep(30)  # renewed every retry period meanwhile
        assert not renewal.done()
    assert renewal.cancelled()
    assert running("lease-renew ") == []
    assert store.get("Lease", "kube-system", "kube-scheduler")["spec"]["holderIdentity"] == ""
