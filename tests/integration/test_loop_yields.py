"""Large lists do not hold the event loop: the embedded API server pages a list as
kube-apiserver does (``limit`` and ``continue``, every page cut from one snapshot) and starts a
watch of thousands of objects in slices, and an informer's 410 relist of thousands of pods hands
the loop back while it delivers them.

Counted, not timed: a ticker task on the same loop counts its turns, and the relist's handler
calls are grouped by the turn they ran in."""

from __future__ import annotations

import asyncio
import gc
import itertools
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from kubernetes_asyncio import client
from kubernetes_asyncio.client.exceptions import ApiException
from polling import eventually

from kubesched.cluster import store as store_module
from kubesched.cluster.kube import informer
from kubesched.cluster.kube.cluster import KubeCluster
from kubesched.cluster.store import Store
from kubesched.sim.apiserver import watch as apiwatch
from kubesched.sim.apiserver.server import APIServer
from kubesched.testing import make_pod

Obj = dict[str, Any]
PODS = 3000


@pytest.fixture
def v1(api: client.ApiClient) -> client.CoreV1Api:
    return client.CoreV1Api(api)


def fill(store: Store, n: int, prefix: str = "p") -> None:
    for i in range(n):
        store.create("Pod", make_pod(f"{prefix}-{i:05d}").obj())


async def test_a_list_with_a_limit_comes_in_pages_of_one_snapshot(server: APIServer, v1: client.CoreV1Api) -> None:
    fill(server.store, 1200)
    first = await v1.list_namespaced_pod("default", limit=500)
    assert len(first.items) == 500 and first.metadata._continue
    rv = first.metadata.resource_version
    # Changes after the first page: the later pages still show the list as of the first.
    server.store.create("Pod", make_pod("p-00000-late").obj())
    server.store.delete("Pod", "default", "p-01199")
    names = [p.metadata.name for p in first.items]
    token = first.metadata._continue
    while token:
        page = await v1.list_namespaced_pod("default", limit=500, _continue=token)
        assert page.metadata.resource_version == rv
        names += [p.metadata.name for p in page.items]
        token = page.metadata._continue
    assert names == [f"p-{i:05d}" for i in range(1200)]
    everything = await v1.list_namespaced_pod("default")
    assert everything.metadata._continue is None and len(everything.items) == 1200


async def test_two_lists_at_one_version_page_through_side_by_side(server: APIServer, v1: client.CoreV1Api) -> None:
    fill(server.store, 30)
    a = await v1.list_namespaced_pod("default", limit=20)
    b = await v1.list_namespaced_pod("default", limit=20)
    assert a.metadata.resource_version == b.metadata.resource_version
    rest_a = await v1.list_namespaced_pod("default", limit=20, _continue=a.metadata._continue)
    rest_b = await v1.list_namespaced_pod("default", limit=20, _continue=b.metadata._continue)
    assert len(a.items + rest_a.items) == len(b.items + rest_b.items) == 30


async def test_a_paged_list_applies_its_selector_before_the_limit(server: APIServer, v1: client.CoreV1Api) -> None:
    for i in range(30):
        server.store.create("Pod", make_pod(f"p-{i:02d}").label("even", str(i % 2 == 0).lower()).obj())
    first = await v1.list_namespaced_pod("default", limit=10, label_selector="even=true")
    rest = await v1.list_namespaced_pod(
        "default", limit=10, label_selector="even=true", _continue=first.metadata._continue
    )
    assert [p.metadata.name for p in first.items + rest.items] == [f"p-{i:02d}" for i in range(0, 30, 2)]
    assert rest.metadata._continue is None  # nothing matches after the last page's objects


async def test_a_continue_token_is_checked_and_expires(
    server: APIServer, v1: client.CoreV1Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    fill(server.store, 20)
    with pytest.raises(ApiException) as bad:
        await v1.list_namespaced_pod("default", limit=5, _continue="bm90LWEtdG9rZW4")
    assert bad.value.status == 400 and "continue key is not valid" in bad.value.body
    monkeypatch.setattr(store_module, "LIST_SNAPSHOTS_KEPT", 1)
    old = await v1.list_namespaced_pod("default", limit=5)
    server.store.create("Pod", make_pod("newer").obj())
    await v1.list_namespaced_pod("default", limit=5)  # a later list's snapshot takes the only place
    with pytest.raises(ApiException) as gone:
        await v1.list_namespaced_pod("default", limit=5, _continue=old.metadata._continue)
    assert gone.value.status == 410 and "too old to display a consistent list result" in gone.value.body


class TurnRecorder:
    """An EventHandler noting, for each call after :attr:`armed`, the ticker's count then."""

    def __init__(self) -> None:
        self.ticks = 0
        self.armed = False
        self.turns: list[int] = []

    async def tick(self) -> None:
        while True:
            self.ticks += 1
            await asyncio.sleep(0)

    def _note(self, kind: str) -> None:
        if self.armed and kind == "Pod":
            self.turns.append(self.ticks)

    def on_add(self, kind: str, obj: Obj) -> None:
        self._note(kind)

    def on_update(self, kind: str, old: Obj, new: Obj) -> None:
        self._note(kind)

    def on_delete(self, kind: str, obj: Obj) -> None:
        self._note(kind)


@pytest.fixture
async def cluster(server: APIServer, tmp_path: Path) -> AsyncIterator[KubeCluster]:
    c = KubeCluster(
        kubeconfig=server.write_kubeconfig(tmp_path / "kubeconfig"), backoff_initial=0.05, keep_from_collector=True
    )
    try:
        yield c
    finally:
        await c.stop()


async def test_a_relist_of_thousands_of_pods_gives_the_loop_back_as_it_goes(
    server: APIServer, cluster: KubeCluster
) -> None:
    store = server.store
    fill(store, PODS)
    rec = TurnRecorder()
    ticker = asyncio.create_task(rec.tick())
    try:
        await asyncio.wait_for(cluster.start(rec), timeout=30)
        rec.armed = True
        # While the informer is away: most pods deleted, the rest changed, as many new ones;
        # then history compacted, so that it must relist (no await in between).
        server.drop_watches()
        for i in range(PODS):
            name = f"p-{i:05d}"
            if i % 3:
                store.delete("Pod", "default", name)
            else:
                store.mutate("Pod", "default", name, lambda p: p["metadata"].setdefault("labels", {}).update(x="y"))
        fill(store, PODS, prefix="q")
        server.compact()
        changes = PODS + PODS
        await eventually(lambda: len(rec.turns) >= changes, what="the relist's deliveries", timeout=60)
    finally:
        ticker.cancel()
    assert cluster.informer_stats()["Pod"]["lists"] == 2
    longest = max(len(list(run)) for _, run in itertools.groupby(rec.turns))
    assert longest <= informer.DELIVER_BATCH, f"{longest} handler calls in one turn of the loop"
    assert rec.turns[-1] - rec.turns[0] >= changes // informer.DELIVER_BATCH


async def test_a_watch_from_the_start_sends_thousands_of_objects_in_slices(
    server: APIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    fill(server.store, PODS)
    rec = TurnRecorder()
    original = apiwatch.view

    def noted(res: Any, obj: Obj) -> Obj:
        rec.turns.append(rec.ticks)  # each object the watch encodes, with the ticker's count then
        return original(res, obj)

    monkeypatch.setattr(apiwatch, "view", noted)
    ticker = asyncio.create_task(rec.tick())
    seen = 0
    try:
        async with aiohttp.ClientSession() as session:
            params = {"watch": "true", "resourceVersion": "", "timeoutSeconds": "30"}
            async with session.get(server.url + "/api/v1/namespaces/default/pods", params=params) as r:
                async for line in r.content:
                    seen += line.startswith(b'{"type":"ADDED"')
                    if seen == PODS:
                        break
    finally:
        ticker.cancel()
    longest = max(len(list(run)) for _, run in itertools.groupby(rec.turns))
    assert longest <= apiwatch.EMIT_BATCH, f"{longest} objects encoded in one turn of the loop"


async def test_what_a_relist_allocates_is_kept_from_full_collections(server: APIServer, cluster: KubeCluster) -> None:
    """CPython's full collections walk every object not frozen: a relist that leaves its
    thousands of pods in the collector's sight makes each of them a pause of 100 ms and more."""
    store = server.store
    fill(store, PODS)
    await asyncio.wait_for(cluster.start(TurnRecorder()), timeout=30)
    server.drop_watches()
    for i in range(PODS):
        store.mutate("Pod", "default", f"p-{i:05d}", lambda p: p["metadata"].setdefault("labels", {}).update(x="y"))
    server.compact()
    gc.collect()
    gc.freeze()  # as kubesched run does once synced: what is here now is out of sight anyway
    try:
        await eventually(lambda: cluster.informer_stats()["Pod"]["lists"] == 2, what="the relist", timeout=60)
        await asyncio.sleep(0)  # the relist's last delivery
        in_sight = len(gc.get_objects())
    finally:
        gc.unfreeze()
    # The informer holds PODS new pods, each a few objects the collector tracks (about 14000 in
    # all); those of the last batch may be left in sight.
    assert in_sight < PODS, f"{in_sight} objects in the collector's sight after a relist of {PODS} pods"


async def test_what_a_watch_delivers_is_kept_from_full_collections(server: APIServer, cluster: KubeCluster) -> None:
    """A standby replica has no scheduling loop to pace the collector: a burst of pods it only
    watches must not pile up in the collector's sight either."""
    rec = TurnRecorder()
    rec.armed = True
    await asyncio.wait_for(cluster.start(rec), timeout=30)
    gc.collect()
    gc.freeze()
    try:
        fill(server.store, PODS)
        await eventually(lambda: len(rec.turns) >= PODS, what="the burst's deliveries", timeout=60)
        in_sight = len(gc.get_objects())
    finally:
        gc.unfreeze()
    assert in_sight < PODS, f"{in_sight} objects in the collector's sight after a burst of {PODS} pods"


class SlowRecorder(TurnRecorder):
    """A handler that costs time for every pod (a member of a large gang re-holding the others)."""

    def _note(self, kind: str) -> None:
        super()._note(kind)
        if self.armed and kind == "Pod":
            until = time.perf_counter() + 0.004
            while time.perf_counter() < until:
                pass


async def test_a_watch_burst_with_costly_handlers_gives_the_loop_back_by_time(
    server: APIServer, cluster: KubeCluster
) -> None:
    """Not only every DELIVER_BATCH events: once a turn has spent DELIVER_SECONDS in handlers,
    the informer yields, so /healthz and the lease wait for a few events, not for hundreds."""
    rec = SlowRecorder()
    await asyncio.wait_for(cluster.start(rec), timeout=30)
    rec.armed = True
    ticker = asyncio.create_task(rec.tick())
    try:
        fill(server.store, 300)
        await eventually(lambda: len(rec.turns) >= 300, what="the burst's deliveries", timeout=60)
    finally:
        ticker.cancel()
    longest = max(len(list(run)) for _, run in itertools.groupby(rec.turns))
    # 4 ms a pod: a turn ends after the event that passes DELIVER_SECONDS (20 ms)
    assert informer.DELIVER_SECONDS <= 0.02
    assert longest <= 6, f"{longest} costly handler calls in one turn"
