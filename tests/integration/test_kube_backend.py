"""KubeCluster against the embedded API server, over real HTTP: informers (sync, changes,
reconnects, 410 relists), writes and their error mapping, event aggregation, rate limiting,
leases, and the real scheduler running on top."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from polling import eventually

from kubesched.cluster.base import WATCHED_KINDS, ClusterError, Conflict, NotFound
from kubesched.cluster.kube import informer as kube
from kubesched.cluster.kube.cluster import KubeCluster
from kubesched.cluster.leader import LeaderElector
from kubesched.cluster.store import Store
from kubesched.config import load_config
from kubesched.scheduler import Scheduler, SchedulerOptions
from kubesched.sim.apiserver.server import APIServer
from kubesched.testing import make_node, make_pod

Obj = dict[str, Any]


class Recorder:
    """An EventHandler that remembers ``(op, kind, name)`` in delivery order."""

    def __init__(self) -> None:
        self.log: list[tuple[str, str, str]] = []
        self.objects: dict[tuple[str, str], Obj] = {}

    def on_add(self, kind: str, obj: Obj) -> None:
        self.log.append(("add", kind, obj["metadata"]["name"]))
        self.objects[(kind, obj["metadata"]["name"])] = obj

    def on_update(self, kind: str, old: Obj, new: Obj) -> None:
        self.log.append(("update", kind, new["metadata"]["name"]))
        self.objects[(kind, new["metadata"]["name"])] = new

    def on_delete(self, kind: str, obj: Obj) -> None:
        self.log.append(("delete", kind, obj["metadata"]["name"]))
        self.objects.pop((kind, obj["metadata"]["name"]), None)

    def of(self, kind: str, name: str) -> list[str]:
        return [op for op, k, n in self.log if k == kind and n == name]


@pytest.fixture
async def cluster(server: APIServer, tmp_path: Path) -> AsyncIterator[KubeCluster]:
    path = server.write_kubeconfig(tmp_path / "kubeconfig")
    c = KubeCluster(kubeconfig=path, backoff_initial=0.05, backoff_cap=0.5)
    try:
        yield c
    finally:
        await c.stop()


async def started(cluster: KubeCluster) -> Recorder:
    rec = Recorder()
    await asyncio.wait_for(cluster.start(rec), timeout=10)
    return rec


# --- informers ----------------------------------------------------------------------------------


async def test_start_delivers_existing_objects_in_kind_order_and_returns_synced(
    store: Store, cluster: KubeCluster
) -> None:
    store.create("Node", make_node("n1").capacity(cpu="4").obj())
    store.create("Node", make_node("n2").capacity(cpu="4").obj())
    store.create("Pod", make_pod("p1").req(cpu="1").obj())
    rec = await started(cluster)
    # Everything is there the moment start() returns: synced means delivered.
    assert {n for op, k, n in rec.log if k == "Node"} == {"n1", "n2"}
    assert rec.of("Pod", "p1") == ["add"]
    assert ("add", "Namespace", "default") in rec.log
    assert any(k == "PriorityClass" for _, k, _ in rec.log)
    kinds = [k for _, k, _ in rec.log]
    order = list(WATCHED_KINDS)
    assert kinds == sorted(kinds, key=order.index)
    pod = rec.objects[("Pod", "p1")]
    assert (pod["kind"], pod["apiVersion"]) == ("Pod", "v1")  # list items get their type back


@pytest.mark.parametrize(
    ("kind", "obj", "change"),
    [
        ("Pod", make_pod("w").req(cpu="1").obj(), ("metadata.labels", {"a": "b"})),
        ("Node", make_node("w").capacity(cpu="2").obj(), ("spec.unschedulable", True)),
        ("Namespace", {"metadata": {"name": "w"}}, ("metadata.labels", {"a": "b"})),
        ("PriorityClass", {"metadata": {"name": "w"}, "value": 10}, ("description", "changed")),
    ],
    ids=["pod", "node", "namespace", "priorityclass"],
)
async def test_changes_after_start_arrive_in_order(
    store: Store, cluster: KubeCluster, kind: str, obj: Obj, change: tuple[str, Any]
) -> None:
    rec = await started(cluster)
    created = store.create(kind, obj)
    path, value = change

    def apply(o: Obj) -> None:
        *parents, leaf = path.split(".")
        cur = o
        for p in parents:
            cur = cur.setdefault(p, {})
        cur[leaf] = value

    store.mutate(kind, created["metadata"].get("namespace"), "w", apply)
    store.delete(kind, created["metadata"].get("namespace"), "w")
    await eventually(
        lambda: rec.of(kind, "w") == ["add", "update", "delete"], what=f"{kind} add/update/delete", timeout=10
    )


async def test_reconnects_after_dropped_watches_and_misses_nothing(
    store: Store, server: APIServer, cluster: KubeCluster
) -> None:
    rec = await started(cluster)
    watches_before = cluster.informer_stats()["Pod"]["watches"]
    server.drop_watches()
    store.create("Pod", make_pod("during-drop").obj())
    await eventually(lambda: rec.of("Pod", "during-drop") == ["add"], what="pod created during the drop", timeout=10)
    store.create("Pod", make_pod("after-drop").obj())
    await eventually(lambda: rec.of("Pod", "after-drop") == ["add"], what="pod created after the drop", timeout=10)
    stats = cluster.informer_stats()["Pod"]
    assert stats["watches"] > watches_before
    assert stats["lists"] == 1  # resumed from its resourceVersion, no relist


class Proxy:
    """A TCP relay in front of the API server that can be cut (every connection refused or
    reset) and restored on the same port: a network outage under our control."""

    def __init__(self, upstream_port: int) -> None:
        self.upstream_port = upstream_port
        self.port = 0
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()

    async def up(self) -> None:
        self._server = await asyncio.start_server(self._relay, "127.0.0.1", self.port, reuse_address=True)
        self.port = self._server.sockets[0].getsockname()[1]

    async def down(self) -> None:
        assert self._server is not None
        self._server.close()
        for w in list(self._writers):
            w.transport.abort()
        await self._server.wait_closed()

    async def _relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.upstream_port)
        except OSError:
            writer.transport.abort()
            return
        self._writers |= {writer, up_writer}

        async def pump(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            try:
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            except (ConnectionError, OSError):
                pass
            finally:
                dst.transport.abort()

        await asyncio.gather(pump(reader, up_writer), pump(up_reader, writer))
        self._writers -= {writer, up_writer}


async def test_reconnects_with_backoff_after_a_network_outage(
    store: Store, server: APIServer, caplog: pytest.LogCaptureFixture
) -> None:
    from kubernetes_asyncio.client import Configuration

    proxy = Proxy(server.port)
    await proxy.up()
    c = KubeCluster.from_configuration(
        Configuration(host=f"http://127.0.0.1:{proxy.port}"), backoff_initial=0.05, backoff_cap=0.4
    )
    try:
        rec = await started(c)
        with caplog.at_level(logging.WARNING, logger="kubesched.cluster.kube.informer"):
            await proxy.down()
            store.create("Pod", make_pod("while-down").obj())
            await asyncio.sleep(1.0)  # several failed reconnects, backing off
            await proxy.up()  # same port
            await eventually(
                lambda: rec.of("Pod", "while-down") == ["add"], what="the pod created while down", timeout=10
            )
        retries = [r.getMessage() for r in caplog.records if r.getMessage().startswith("Pod informer")]
        assert len(retries) >= 2 and all("retrying in" in m for m in retries)
        assert c.informer_stats()["Pod"]["lists"] == 1  # resumed from its version: nothing missed
    finally:
        await c.stop()
        await proxy.down()


async def test_relists_on_410_and_delivers_what_changed_while_away(
    store: Store, server: APIServer, cluster: KubeCluster
) -> None:
    store.create("Pod", make_pod("stays").obj())
    store.create("Pod", make_pod("goes").obj())
    store.create("Pod", make_pod("changes").obj())
    store.create("Pod", make_pod("recreated").uid("uid-1").obj())
    rec = await started(cluster)
    # No await between these lines: the informer cannot re-watch before history is compacted.
    server.drop_watches()
    store.delete("Pod", "default", "goes")
    store.mutate("Pod", "default", "changes", lambda p: p["metadata"].setdefault("labels", {}).update(x="y"))
    store.create("Pod", make_pod("new").obj())
    store.delete("Pod", "default", "recreated")
    store.create("Pod", make_pod("recreated").uid("uid-2").obj())
    server.compact()
    await eventually(lambda: rec.of("Pod", "goes") == ["add", "delete"], what="the missed deletion", timeout=10)
    await eventually(lambda: rec.of("Pod", "changes") == ["add", "update"], what="the missed update", timeout=10)
    await eventually(lambda: rec.of("Pod", "new") == ["add"], what="the missed creation", timeout=10)
    assert rec.of("Pod", "stays") == ["add"]
    # Same name, another uid: the old pod is gone (the scheduler keys pods by uid).
    assert rec.of("Pod", "recreated") == ["add", "delete", "add"]
    assert rec.objects[("Pod", "recreated")]["metadata"]["uid"] == "uid-2"
    assert rec.objects[("Pod", "changes")]["metadata"]["labels"] == {"x": "y"}
    assert cluster.informer_stats()["Pod"]["lists"] == 2
    store.create("Pod", make_pod("later").obj())  # and it watches again afterwards
    await eventually(lambda: rec.of("Pod", "later") == ["add"], what="a change after the relist", timeout=10)


async def test_an_informer_that_fails_unexpectedly_is_logged_and_goes_on(
    store: Store, cluster: KubeCluster, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    rec = await started(cluster)
    original = kube._Informer._apply
    crashes: list[str] = []

    def apply_once_broken(self: Any, event: Obj) -> None:
        if self.kind == "Pod" and not crashes:
            crashes.append(event["object"]["metadata"]["name"])
            raise RuntimeError("bug in the informer")
        original(self, event)

    monkeypatch.setattr(kube._Informer, "_apply", apply_once_broken)
    with caplog.at_level(logging.ERROR, logger="kubesched.cluster.kube.informer"):
        store.create("Pod", make_pod("first").obj())
        # The restarted informer resumes from its last version: the event it died on comes again.
        await eventually(lambda: rec.of("Pod", "first") == ["add"], what="the event the informer died on", timeout=10)
    assert crashes == ["first"]
    assert any("Pod informer failed" in r.getMessage() for r in caplog.records)
    store.create("Pod", make_pod("second").obj())
    await eventually(lambda: rec.of("Pod", "second") == ["add"], what="a later event", timeout=10)


async def test_a_watch_event_larger_than_the_clients_buffer_is_delivered(store: Store, cluster: KubeCluster) -> None:
    rec = await started(cluster)
    # Stored directly: the API server itself would refuse an object this large; the informer
    # must not choke on one all the same.
    store.create("Pod", make_pod("huge").annotation("blob", "x" * (5 * 1024 * 1024)).obj())
    store.create("Pod", make_pod("after").obj())
    await eventually(lambda: rec.of("Pod", "after") == ["add"], what="the pod after the huge one", timeout=10)
    assert rec.of("Pod", "huge") == ["add"]
    assert len(rec.objects[("Pod", "huge")]["metadata"]["annotations"]["blob"]) == 5 * 1024 * 1024
    assert cluster.informer_stats()["Pod"]["lists"] == 1


async def test_a_watch_that_keeps_breaking_at_one_event_relists(
    store: Store, cluster: KubeCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(kube, "MAX_WATCH_EVENT_BYTES", 16 * 1024)
    rec = await started(cluster)
    # Every watch from before this pod breaks on it; only a relist gets past it.
    store.create("Pod", make_pod("unreadable").annotation("blob", "x" * (64 * 1024)).obj())
    store.create("Pod", make_pod("behind-it").obj())
    await eventually(
        lambda: rec.of("Pod", "behind-it") == ["add"], what="the pod behind the unreadable event", timeout=10
    )
    assert rec.of("Pod", "unreadable") == ["add"]
    assert cluster.informer_stats()["Pod"]["lists"] == 2
    store.delete("Pod", "default", "unreadable")
    store.create("Pod", make_pod("later").obj())
    await eventually(lambda: rec.of("Pod", "later") == ["add"], what="a pod after the relist", timeout=10)
    assert rec.of("Pod", "unreadable") == ["add", "delete"]
    assert cluster.health_problems() == []


async def test_an_informer_that_cannot_progress_fails_the_health_checks(store: Store, server: APIServer) -> None:
    from kubernetes_asyncio.client import Configuration

    from kubesched.server.health import HealthApp
    from kubesched.server.metrics import PrometheusObserver
    from kubesched.server.serving import Serving, ServingOptions

    proxy = Proxy(server.port)
    await proxy.up()
    c = KubeCluster.from_configuration(
        Configuration(host=f"http://127.0.0.1:{proxy.port}"), backoff_initial=0.05, backoff_cap=0.2, stall_seconds=0.5
    )
    health = Serving(
        HealthApp(PrometheusObserver(), ready=lambda: True, problems=c.health_problems).app,
        ServingOptions(bind_address="127.0.0.1", secure_port=None, port=0),
        None,
    )
    await health.start()

    async def get(path: str) -> tuple[int, str]:
        import aiohttp

        async with aiohttp.ClientSession() as s, s.get(f"http://127.0.0.1:{health.port}{path}") as r:
            return r.status, await r.text()

    try:
        await started(c)
        assert await get("/healthz") == (200, "ok")
        await proxy.down()
        await eventually(
            lambda: len(c.health_problems()) == len(WATCHED_KINDS), what="every informer stalled", timeout=10
        )
        for path in ("/healthz", "/livez", "/readyz"):
            status, text = await get(path)
            assert status == 500
            assert "[-]informer-progress failed: Pod informer: no progress for" in text
        await proxy.up()
        await eventually(lambda: c.health_problems() == [], what="the informers recovered", timeout=10)
        assert await get("/livez") == (200, "ok")
    finally:
        await health.stop()
        await c.stop()
        await proxy.down()


async def test_stop_cancels_every_informer(cluster: KubeCluster) -> None:
    await started(cluster)
    tasks = set(cluster._tasks)
    assert len(tasks) == len(WATCHED_KINDS)
    await cluster.stop()
    assert all(t.done() for t in tasks)
    assert not cluster._tasks


# --- writes -------------------------------------------------------------------------------------


async def test_bind_then_a_second_bind_conflicts(store: Store, cluster: KubeCluster) -> None:
    store.create("Node", make_node("n1").obj())
    pod = store.create("Pod", make_pod("p").obj())
    await cluster.bind(pod, "n1")
    assert store.get("Pod", "default", "p")["spec"]["nodeName"] == "n1"
    with pytest.raises(Conflict):
        await cluster.bind(pod, "n2")
    with pytest.raises(NotFound):
        await cluster.bind(make_pod("missing").obj(), "n1")


async def test_bind_to_a_recreated_pod_of_the_same_name_conflicts(store: Store, cluster: KubeCluster) -> None:
    old = store.create("Pod", make_pod("p").uid("uid-old").obj())
    store.delete("Pod", "default", "p")
    store.create("Pod", make_pod("p").uid("uid-new").obj())
    with pytest.raises(Conflict):
        await cluster.bind(old, "n1")
    assert not store.get("Pod", "default", "p")["spec"].get("nodeName")


async def events_about(cluster: KubeCluster, pod: Obj) -> list[Obj]:
    listed = await cluster.request("GET", "/apis/events.k8s.io/v1/namespaces/default/events")
    uid = pod["metadata"]["uid"]
    return [e for e in listed["items"] if (e.get("regarding") or {}).get("uid") == uid]


async def test_events_are_written_and_repeats_aggregated(store: Store, cluster: KubeCluster) -> None:
    pod = store.create("Pod", make_pod("p").obj())
    for _ in range(3):
        await cluster.record_event(pod, "Warning", "FailedScheduling", "Scheduling", "0/1 nodes", "my-scheduler")
    await cluster.record_event(pod, "Warning", "FailedScheduling", "Scheduling", "0/2 nodes", "my-scheduler")
    events = await events_about(cluster, pod)
    assert sorted(e["note"] for e in events) == ["0/1 nodes", "0/2 nodes"]
    repeated = next(e for e in events if e["note"] == "0/1 nodes")
    assert repeated["series"]["count"] == 3
    assert repeated["series"]["lastObservedTime"]
    assert repeated["reportingController"] == "my-scheduler"
    assert repeated["reportingInstance"] == f"my-scheduler-{cluster.hostname}"
    assert (repeated["type"], repeated["reason"], repeated["action"]) == ("Warning", "FailedScheduling", "Scheduling")
    assert repeated["regarding"]["name"] == "p"
    assert repeated["eventTime"].endswith("Z") and "." in repeated["eventTime"]
    single = next(e for e in events if e["note"] == "0/2 nodes")
    assert not single.get("series")


async def test_a_deleted_event_starts_a_new_series(store: Store, cluster: KubeCluster) -> None:
    pod = store.create("Pod", make_pod("p").obj())
    await cluster.record_event(pod, "Normal", "Scheduled", "Binding", "assigned", "s")
    (first,) = await events_about(cluster, pod)
    await cluster.request("DELETE", f"/apis/events.k8s.io/v1/namespaces/default/events/{first['metadata']['name']}")
    await cluster.record_event(pod, "Normal", "Scheduled", "Binding", "assigned", "s")
    (second,) = await events_about(cluster, pod)
    assert second["metadata"]["name"] != first["metadata"]["name"]


async def test_a_throttled_request_is_sent_again_after_retry_after(
    store: Store, server: APIServer, cluster: KubeCluster
) -> None:
    from kubesched.sim.apiserver.faults import parse_config as faults

    store.create("Node", make_node("n1").obj())
    pod = store.create("Pod", make_pod("p").obj())
    server.faults.configure(
        faults({"faults": [{"kind": "throttle", "retryAfter": 1, "verbs": ["create"], "resources": ["pods/binding"]}]})
    )
    bind = asyncio.create_task(cluster.bind(pod, "n1"))
    await asyncio.sleep(0.5)  # refused once (429, Retry-After: 1) and waiting
    assert not bind.done() and cluster.retries == 1
    server.faults.clear()
    await asyncio.wait_for(bind, timeout=5)
    assert store.get("Pod", "default", "p")["spec"]["nodeName"] == "n1"
    # A 500 without Retry-After is an answer, not an invitation: no retry.
    server.faults.configure(faults({"faults": [{"kind": "error", "code": 500, "verbs": ["get"]}]}))
    with pytest.raises(ClusterError) as err:
        await cluster.get_pod("default", "p")
    assert err.value.code == 500 and cluster.retries == 1


async def test_events_do_not_spend_the_schedulers_rate_limit(store: Store, cluster: KubeCluster) -> None:
    pod = store.create("Pod", make_pod("p").obj())
    before = cluster.requests
    for reason in ("Scheduled", "FailedScheduling", "Scheduled"):
        await cluster.record_event(pod, "Normal", reason, "Binding", "x", "s")
    assert cluster.requests == before  # the binds' budget is untouched
    assert cluster._event_client().requests >= 3
    items, _ = store.list("Event")
    assert sorted(e["reason"] for e in items) == ["FailedScheduling", "Scheduled"]


@pytest.mark.parametrize("phase", ["before", "after"], ids=["not-written", "written-answer-lost"])
async def test_an_event_write_the_server_failed_is_tried_again_and_written_once(
    store: Store, server: APIServer, cluster: KubeCluster, phase: str
) -> None:
    from kubesched.sim.apiserver.faults import parse_config as faults

    cluster.event_retry_interval = 0.3
    pod = store.create("Pod", make_pod("p").obj())
    server.faults.configure(
        faults(
            {"faults": [{"kind": "error", "code": 500, "phase": phase, "verbs": ["create"], "resources": ["events"]}]}
        )
    )
    write = asyncio.create_task(cluster.record_event(pod, "Normal", "Scheduled", "Binding", "assigned", "s"))
    await asyncio.sleep(0.15)  # the first try failed; the next one is due after ~0.3 s at most
    server.faults.clear()
    await asyncio.wait_for(write, timeout=5)
    items, _ = store.list("Event")
    assert [e["reason"] for e in items] == ["Scheduled"]


async def test_events_fall_back_to_core_v1_when_events_k8s_io_is_not_served(
    store: Store, cluster: KubeCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    events = cluster._event_client()  # events go through a client of their own
    real_request = events.request

    async def without_events_group(method: str, path: str, **kw: Any) -> Obj:
        if path.startswith("/apis/events.k8s.io"):
            raise NotFound("the server could not find the requested resource")
        return await real_request(method, path, **kw)

    monkeypatch.setattr(events, "request", without_events_group)
    pod = store.create("Pod", make_pod("p").obj())
    await cluster.record_event(pod, "Warning", "FailedScheduling", "Scheduling", "no fit", "s")
    await cluster.record_event(pod, "Warning", "FailedScheduling", "Scheduling", "no fit", "s")
    listed = await real_request("GET", "/api/v1/namespaces/default/events")
    mine = [e for e in listed["items"] if e["involvedObject"]["uid"] == pod["metadata"]["uid"]]
    assert len(mine) == 1
    assert (mine[0]["message"], mine[0]["count"], mine[0]["source"]["component"]) == ("no fit", 2, "s")


async def test_condition_patch_lands_in_status_keyed_by_type(store: Store, cluster: KubeCluster) -> None:
    pod = store.create("Pod", make_pod("p").set("status.conditions", [{"type": "Ready", "status": "False"}]).obj())
    cond = {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "first"}
    await cluster.update_pod_condition(pod, cond, nominated_node_name="n2")
    await cluster.update_pod_condition(pod, {**cond, "message": "second"})
    status = store.get("Pod", "default", "p")["status"]
    by_type = {c["type"]: c for c in status["conditions"]}
    assert set(by_type) == {"Ready", "PodScheduled"}
    assert by_type["PodScheduled"]["message"] == "second"
    assert status["nominatedNodeName"] == "n2"
    # A pod deleted meanwhile is not an error for the reporter.
    await cluster.update_pod_condition(make_pod("gone").obj(), cond)


async def test_annotations_patch_and_delete(store: Store, cluster: KubeCluster) -> None:
    pod = store.create("Pod", make_pod("p").annotation("keep", "1").obj())
    await cluster.patch_pod_annotations(pod, {"kubesched.io/x": "y"})
    assert store.get("Pod", "default", "p")["metadata"]["annotations"] == {"keep": "1", "kubesched.io/x": "y"}
    await cluster.delete_pod(pod)
    with pytest.raises(NotFound):
        store.get("Pod", "default", "p")
    with pytest.raises(NotFound):
        await cluster.delete_pod(pod)


async def test_unreachable_server_is_a_cluster_error() -> None:
    from kubernetes_asyncio.client import Configuration

    c = KubeCluster.from_configuration(Configuration(host="http://127.0.0.1:9"))
    try:
        with pytest.raises(ClusterError) as info:
            await c.bind(make_pod("p").obj(), "n1")
        assert info.value.code == 503
    finally:
        await c.stop()


async def test_a_hung_request_times_out_as_a_cluster_error() -> None:
    from kubernetes_asyncio.client import Configuration

    async def never_answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await asyncio.sleep(30)
        writer.close()

    srv = await asyncio.start_server(never_answer, "127.0.0.1", 0)
    port = srv.sockets[0].getsockname()[1]
    c = KubeCluster.from_configuration(Configuration(host=f"http://127.0.0.1:{port}"), request_timeout=0.2)
    try:
        with pytest.raises(ClusterError) as info:
            await c.bind(make_pod("p").obj(), "n1")
        assert info.value.code == 504
    finally:
        await c.stop()
        srv.close()


async def test_kubeconfig_from_the_environment(
    store: Store, server: APIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KUBECONFIG", server.write_kubeconfig(tmp_path / "env-kc"))
    store.create("Node", make_node("n1").obj())
    c = KubeCluster()
    try:
        rec = await started(c)
        assert rec.of("Node", "n1") == ["add"]
    finally:
        await c.stop()


async def test_no_configuration_anywhere_is_a_cluster_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    with pytest.raises(ClusterError, match="no kubeconfig"):
        await KubeCluster().start(Recorder())
    with pytest.raises(ClusterError, match="cannot load"):
        await KubeCluster(kubeconfig=str(tmp_path / "missing")).start(Recorder())


# --- rate limiting ------------------------------------------------------------------------------


@pytest.mark.looptime
@pytest.mark.parametrize(
    ("qps", "burst", "requests", "elapsed"),
    [(5, 1, 11, 2.0), (5, 5, 15, 2.0), (10, 1, 21, 2.0)],
    ids=["qps5-burst1", "qps5-burst5", "qps10-burst1"],
)
async def test_qps_spaces_requests(
    server: APIServer, tmp_path: Path, qps: float, burst: int, requests: int, elapsed: float
) -> None:
    c = KubeCluster(kubeconfig=server.write_kubeconfig(tmp_path / "kc"), qps=qps, burst=burst)
    try:
        await c.request("GET", "/api/v1/namespaces")  # connect (and spend one token) first
        await asyncio.sleep(10)  # the bucket refills
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        await asyncio.gather(*(c.request("GET", "/api/v1/namespaces") for _ in range(requests)))
        took = loop.time() - t0
        # ``burst`` go at once, each further one waits 1/qps.
        assert took == pytest.approx(elapsed, abs=0.05)
        assert c.requests == requests + 1
    finally:
        await c.stop()


# --- leases -------------------------------------------------------------------------------------


async def test_leader_election_over_the_api(store: Store, server: APIServer, tmp_path: Path) -> None:
    path = server.write_kubeconfig(tmp_path / "kc")
    a_cluster, b_cluster = KubeCluster(kubeconfig=path), KubeCluster(kubeconfig=path)
    try:
        a = LeaderElector(
            a_cluster.leases(), "a", "kube-system", "kubesched", retry_period=0.1, renew_deadline=1, lease_duration=2
        )
        b = LeaderElector(
            b_cluster.leases(), "b", "kube-system", "kubesched", retry_period=0.1, renew_deadline=1, lease_duration=2
        )
        async with a.leading():
            assert store.get("Lease", "kube-system", "kubesched")["spec"]["holderIdentity"] == "a"
            assert not await b.try_acquire_or_renew()
        await asyncio.wait_for(b.acquire(), timeout=5)
        spec = store.get("Lease", "kube-system", "kubesched")["spec"]
        assert (spec["holderIdentity"], spec["leaseTransitions"]) == ("b", 1)
    finally:
        await a_cluster.stop()
        await b_cluster.stop()


async def test_lease_renewals_do_not_wait_behind_the_schedulers_requests(
    store: Store, server: APIServer, tmp_path: Path
) -> None:
    # Five requests per second, and three hundred of the scheduler's queued: renewals through
    # that client would wait a minute. Leader election has a client (and a limit) of its own.
    cluster = KubeCluster(kubeconfig=server.write_kubeconfig(tmp_path / "kc"), qps=5, burst=1)
    lost: list[bool] = []
    try:
        backlog = [asyncio.create_task(cluster.request("GET", "/api/v1/namespaces")) for _ in range(300)]
        await asyncio.sleep(0.2)
        elector = LeaderElector(
            cluster.leases(renew_deadline=1.0),
            "a",
            "kube-system",
            "kubesched",
            retry_period=0.2,
            renew_deadline=1.0,
            lease_duration=2.0,
        )
        await asyncio.wait_for(elector.acquire(), timeout=2)
        elector.start_renewing(on_lost=lambda: lost.append(True))
        first = store.get("Lease", "kube-system", "kubesched")["spec"]["renewTime"]
        await asyncio.sleep(3)  # three renew deadlines
        assert not lost and elector.is_leader
        assert store.get("Lease", "kube-system", "kubesched")["spec"]["renewTime"] != first
        assert sum(t.done() for t in backlog) < 30  # the scheduler's requests are still waiting
        await elector.stop_renewing()
        for t in backlog:
            t.cancel()
        await asyncio.gather(*backlog, return_exceptions=True)
    finally:
        await cluster.stop()


# --- the scheduler on top -----------------------------------------------------------------------


async def test_the_scheduler_runs_over_the_api(store: Store, server: APIServer, tmp_path: Path) -> None:
    cfg = load_config(None)
    cluster = KubeCluster(kubeconfig=server.write_kubeconfig(tmp_path / "kc"))
    sched = Scheduler(cfg.profiles, cluster, SchedulerOptions(seed=1))
    for n in ("n1", "n2"):
        store.create("Node", make_node(n).capacity(cpu="4", memory="8Gi", pods="110").obj())
    store.create("Pod", make_pod("before").req(cpu="1").obj())
    runner = asyncio.create_task(sched.run())
    try:
        await eventually(
            lambda: bool(store.get("Pod", "default", "before")["spec"].get("nodeName")), what="bind", timeout=10
        )
        for i in range(4):
            await cluster.request("POST", "/api/v1/namespaces/default/pods", body=make_pod(f"p{i}").req(cpu="1").obj())
        await cluster.request("POST", "/api/v1/namespaces/default/pods", body=make_pod("huge").req(cpu="100").obj())

        def bound() -> int:
            items, _ = store.list("Pod")
            return sum(1 for p in items if p["spec"].get("nodeName"))

        await eventually(lambda: bound() == 5, what="all fitting pods bound", timeout=10)

        def huge_condition() -> Obj | None:
            conds = (store.get("Pod", "default", "huge").get("status") or {}).get("conditions") or []
            return next((c for c in conds if c["type"] == "PodScheduled"), None)

        await eventually(lambda: huge_condition() is not None, what="PodScheduled condition", timeout=10)
        cond = huge_condition()
        assert cond is not None
        assert (cond["status"], cond["reason"]) == ("False", "Unschedulable")
        assert "0/2 nodes are available" in cond["message"]
        huge = store.get("Pod", "default", "huge")
        events = await events_about(cluster, huge)
        assert [(e["reason"], e["type"]) for e in events] == [("FailedScheduling", "Warning")]
        assert events[0]["reportingController"] == "default-scheduler"
        # The Scheduled event follows p0's binding; give it the time a loaded machine may need.
        scheduled = await eventually(
            lambda: events_about(cluster, store.get("Pod", "default", "p0")), "p0's events", timeout=10, interval=0.05
        )
        assert [e["reason"] for e in scheduled] == ["Scheduled"]
        assert not store.get("Pod", "default", "huge")["spec"].get("nodeName")
    finally:
        await sched.stop(grace=5)
        runner.cancel()
        await asyncio.gather(runner, return_exceptions=True)
        await cluster.stop()


async def test_a_kind_the_server_does_not_serve_counts_as_none_until_it_appears(
    store: Store, server: APIServer, cluster: KubeCluster, caplog: pytest.LogCaptureFixture
) -> None:
    """A 1.36 API server does not serve resource.k8s.io/v1 DeviceTaintRules: its 404 must not
    keep the scheduler from starting. Once the kind is served (an upgrade), its objects arrive."""
    from kubesched.sim.apiserver.faults import parse_config as faults

    unserved = {"kind": "unserved", "resources": ["devicetaintrules"]}
    server.faults.configure(faults({"faults": [unserved]}))
    store.create("Node", make_node("n1").capacity(cpu="4").obj())
    claim = {"metadata": {"name": "c", "namespace": "default"}, "spec": {"devices": {"requests": []}}}
    store.create("ResourceClaim", claim)
    with caplog.at_level(logging.WARNING, logger="kubesched.cluster.kube.informer"):
        rec = await started(cluster)
    # The kinds after it were delivered, in order, and it was said once why it has nothing.
    assert rec.of("ResourceClaim", "c") == ["add"]
    warned = [r.getMessage() for r in caplog.records if "DeviceTaintRule" in r.getMessage()]
    assert len(warned) == 1 and "not served by this API server" in warned[0]
    assert cluster.health_problems() == []
    server.faults.clear()
    rule = {"metadata": {"name": "r"}, "spec": {"taint": {"key": "k", "effect": "NoSchedule"}}}
    store.create("DeviceTaintRule", rule)
    await eventually(lambda: rec.of("DeviceTaintRule", "r") == ["add"], timeout=10)
