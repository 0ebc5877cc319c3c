"""Fault injection in the embedded API server, seen by real clients over real HTTP (the
kubernetes_asyncio client, and aiohttp where the wire itself matters): each fault shows as a
real server shows it, only where its filter says, reproducibly from its seed; switching faults
off restores normal service."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from kubernetes_asyncio import client, watch
from kubernetes_asyncio.client.exceptions import ApiException

from kubesched.cluster.store import Store
from kubesched.sim.apiserver.faults import FaultConfigError, parse_config, request_info
from kubesched.sim.apiserver.server import APIServer
from kubesched.testing import make_node, make_pod

Obj = dict[str, Any]


@pytest.fixture
def v1(api: client.ApiClient) -> client.CoreV1Api:
    return client.CoreV1Api(api)


def pod_body(name: str) -> Obj:
    obj = make_pod(name).obj()
    obj["metadata"].pop("uid", None)
    obj.pop("status", None)
    obj["spec"]["containers"] = [{"name": "c", "image": "registry.k8s.io/pause:3.10"}]
    return obj


def binding(name: str, node: str = "n1") -> Obj:
    return {"metadata": {"name": name}, "target": {"kind": "Node", "name": node}}


async def faults(server: APIServer, method: str = "PUT", body: Any = None, path: str = "/kubesched/faults") -> Any:
    async with aiohttp.ClientSession() as s:
        async with s.request(method, server.url + path, json=body) as r:
            return r.status, await r.json()


async def switch(server: APIServer, *rules: Obj, seed: int = 0) -> None:
    status, body = await faults(server, "PUT", {"seed": seed, "faults": list(rules)})
    assert status == 200, body


async def bind(v1: client.CoreV1Api, name: str, node: str = "n1") -> None:
    """POST pods/binding; raise ApiException on an error status, as the client's other calls do
    (the raw response is read because a Status does not decode as a Binding)."""
    r = await v1.create_namespaced_pod_binding(name, "default", binding(name, node), _preload_content=False)
    body = await r.read()
    if r.status >= 300:
        exc = ApiException(status=r.status, reason=r.reason)
        exc.body = body.decode()
        raise exc


async def node_of(v1: client.CoreV1Api, name: str) -> str | None:
    return (await v1.read_namespaced_pod(name, "default")).spec.node_name


# --- each fault, as a client sees it ------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "reason", "message"),
    [
        (500, "InternalError", "Internal error occurred: etcdserver: request timed out"),
        (503, "ServiceUnavailable", "the server is currently unable to handle the request"),
    ],
    ids=["500", "503"],
)
async def test_server_errors_answer_a_status_only_for_the_filtered_verb(
    server: APIServer, v1: client.CoreV1Api, code: int, reason: str, message: str
) -> None:
    await switch(server, {"kind": "error", "code": code, "verbs": ["create"], "resources": ["pods"]})
    with pytest.raises(ApiException) as err:
        await v1.create_namespaced_pod("default", pod_body("a"))
    assert err.value.status == code
    body = json.loads(err.value.body)
    assert (body["kind"], body["code"], body["reason"], body["message"]) == ("Status", code, reason, message)
    assert (await v1.list_namespaced_pod("default")).items == []  # before: nothing was created
    await v1.create_node(make_node("n1").obj())  # another resource: untouched


async def test_error_after_the_write_leaves_the_write_done(server: APIServer, v1: client.CoreV1Api) -> None:
    await switch(server, {"kind": "error", "code": 500, "phase": "after", "verbs": ["create"]})
    with pytest.raises(ApiException) as err:
        await v1.create_namespaced_pod("default", pod_body("a"))
    assert err.value.status == 500
    assert [p.metadata.name for p in (await v1.list_namespaced_pod("default")).items] == ["a"]


async def test_throttle_answers_429_with_retry_after_as_priority_and_fairness(server: APIServer) -> None:
    await switch(server, {"kind": "throttle", "retryAfter": 3, "verbs": ["list"]})
    async with aiohttp.ClientSession() as s:
        async with s.get(server.url + "/api/v1/namespaces/default/pods") as r:
            assert r.status == 429
            assert r.headers["Retry-After"] == "3"
            assert r.headers["Content-Type"].startswith("text/plain")
            assert await r.text() == "Too many requests, please try again later.\n"
        async with s.get(server.url + "/api/v1/namespaces/default/pods/x") as r:
            assert r.status == 404  # a get, not a list: served


async def test_conflict_before_refuses_the_binding(server: APIServer, v1: client.CoreV1Api) -> None:
    await v1.create_namespaced_pod("default", pod_body("a"))
    await switch(server, {"kind": "conflict", "phase": "before"})
    with pytest.raises(ApiException) as err:
        await bind(v1, "a")
    body = json.loads(err.value.body)
    assert (err.value.status, body["reason"]) == (409, "Conflict")
    assert body["message"] == (
        'Operation cannot be fulfilled on pods/binding "a": the object has been modified; '
        "please apply your changes to the latest version and try again"
    )
    assert await node_of(v1, "a") is None
    await v1.create_namespaced_pod("default", pod_body("b"))  # only bindings conflict


async def test_conflict_after_binds_then_answers_already_assigned(server: APIServer, v1: client.CoreV1Api) -> None:
    await v1.create_namespaced_pod("default", pod_body("a"))
    await switch(server, {"kind": "conflict"})  # after, by default
    with pytest.raises(ApiException) as err:
        await bind(v1, "a", "n7")
    assert err.value.status == 409
    assert 'pod a is already assigned to node "n7"' in json.loads(err.value.body)["message"]
    assert await node_of(v1, "a") == "n7"
    _, stats = await faults(server, "GET", path="/kubesched/stats")
    assert stats["pods"]["default/a"]["binds"] == 1 and stats["boundPods"] == 1


@pytest.mark.parametrize("phase", ["before", "after"])
async def test_reset_aborts_the_connection(server: APIServer, phase: str) -> None:
    await switch(server, {"kind": "reset", "phase": phase, "verbs": ["create"]})
    async with aiohttp.ClientSession() as s:
        with pytest.raises(aiohttp.ClientOSError) as err:
            async with s.post(server.url + "/api/v1/namespaces/default/pods", json=pod_body("a")) as r:
                await r.read()
        assert isinstance(err.value, ConnectionResetError) or err.value.errno == 104
        async with s.get(server.url + "/api/v1/namespaces/default/pods") as r:
            names = [p["metadata"]["name"] for p in (await r.json())["items"]]
    assert names == ([] if phase == "before" else ["a"])


async def test_latency_delays_only_matching_requests(server: APIServer, v1: client.CoreV1Api) -> None:
    await switch(server, {"kind": "latency", "seconds": 0.3, "jitter": 0.1, "verbs": ["list"]})
    t0 = time.monotonic()
    await v1.list_namespaced_pod("default")
    listed = time.monotonic() - t0
    t0 = time.monotonic()
    await v1.read_namespace("default")
    got = time.monotonic() - t0
    assert 0.3 <= listed < 2.0
    assert got < 0.25


async def collect(stream: Any, w: watch.Watch, n: int = 99) -> list[tuple[str, str]]:
    out = []
    async for ev in stream:
        out.append((ev["type"], ev["raw_object"]["metadata"].get("name", "")))
        if len(out) >= n:
            w.stop()
    return out


async def test_watch_drop_ends_the_stream_early(server: APIServer, v1: client.CoreV1Api) -> None:
    await switch(server, {"kind": "watchDrop", "after": [0.3, 0.3], "resources": ["pods"]})
    await v1.create_namespaced_pod("default", pod_body("a"))
    w = watch.Watch()
    t0 = time.monotonic()
    events = await asyncio.wait_for(collect(w.stream(v1.list_namespaced_pod, "default", timeout_seconds=60), w), 10)
    assert events == [("ADDED", "a")]
    assert 0.3 <= time.monotonic() - t0 < 5  # not the 60 s asked for
    _, state = await faults(server, "GET")
    assert state["fired"] == {"watch-drop-end": 1}


async def test_watch_drop_reset_mode_breaks_the_connection(server: APIServer) -> None:
    await switch(server, {"kind": "watchDrop", "after": [0.2, 0.2], "mode": "reset"})
    async with aiohttp.ClientSession() as s:
        with pytest.raises(aiohttp.ClientPayloadError):
            async with s.get(server.url + "/api/v1/pods?watch=true&timeoutSeconds=30") as r:
                await asyncio.wait_for(r.read(), 10)


async def test_two_watch_drops_each_keep_their_own_mode(server: APIServer) -> None:
    # The reset rule strikes first: the watch is reset, though the end rule is listed after it.
    await switch(
        server,
        {"kind": "watchDrop", "after": [0.1, 0.1], "mode": "reset"},
        {"kind": "watchDrop", "after": [20, 20], "mode": "end"},
    )
    async with aiohttp.ClientSession() as s:
        with pytest.raises(aiohttp.ClientPayloadError):
            async with s.get(server.url + "/api/v1/pods?watch=true&timeoutSeconds=30") as r:
                await asyncio.wait_for(r.read(), 10)
    _, state = await faults(server, "GET")
    assert state["fired"] == {"watch-drop-reset": 1}


async def test_of_two_watch_drops_the_earlier_one_ends_the_watch_whatever_the_order(server: APIServer) -> None:
    await switch(
        server,
        {"kind": "watchDrop", "after": [20, 20], "mode": "reset"},
        {"kind": "watchDrop", "after": [0.1, 0.1], "mode": "end"},
    )
    async with aiohttp.ClientSession() as s:
        async with s.get(server.url + "/api/v1/pods?watch=true&timeoutSeconds=30") as r:
            await asyncio.wait_for(r.read(), 10)  # ends cleanly, long before the reset's 20 s
    _, state = await faults(server, "GET")
    assert state["fired"] == {"watch-drop-end": 1}


async def test_drop_watches_on_demand(server: APIServer, v1: client.CoreV1Api) -> None:
    w = watch.Watch()
    task = asyncio.create_task(collect(w.stream(v1.list_namespaced_pod, "default", timeout_seconds=60), w))
    await asyncio.sleep(0.2)
    status, state = await faults(server, "POST", path="/kubesched/faults/drop-watches")
    assert status == 200 and state["fired"]["watch-drop-all"] == 1
    assert await asyncio.wait_for(task, 5) == []


async def test_gone_answers_a_resumed_watch_with_410_expired(server: APIServer, v1: client.CoreV1Api) -> None:
    rv = (await v1.list_namespaced_pod("default")).metadata.resource_version
    await switch(server, {"kind": "gone"})
    w = watch.Watch()
    with pytest.raises(ApiException) as err:
        await asyncio.wait_for(
            collect(w.stream(v1.list_namespaced_pod, "default", resource_version=rv, timeout_seconds=5), w), 5
        )
    assert err.value.status == 410 and "Expired" in str(err.value.reason)
    async with aiohttp.ClientSession() as s:
        async with s.get(f"{server.url}/api/v1/pods?watch=true&resourceVersion={rv}") as r:
            assert r.status == 200
            line = json.loads(await r.content.readline())
    assert line["type"] == "ERROR"
    status = line["object"]
    assert (status["code"], status["reason"]) == (410, "Expired")
    assert status["message"].startswith(f"too old resource version: {rv} (")
    # A watch from "now" (no resourceVersion) cannot be too old: served.
    await v1.create_namespaced_pod("default", pod_body("a"))
    w2 = watch.Watch()
    got = await asyncio.wait_for(collect(w2.stream(v1.list_namespaced_pod, "default", timeout_seconds=5), w2, 1), 5)
    assert got == [("ADDED", "a")]


async def test_gone_answers_a_watch_over_http_1_0_without_chunks(server: APIServer, v1: client.CoreV1Api) -> None:
    # HTTP/1.0 has no chunks: the ERROR event comes as it is and the connection closes (a 500 before).
    rv = (await v1.list_namespaced_pod("default")).metadata.resource_version
    await switch(server, {"kind": "gone"})
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    writer.write(f"GET /api/v1/pods?watch=true&resourceVersion={rv} HTTP/1.0\r\n\r\n".encode())
    got = await asyncio.wait_for(reader.read(), 5)
    writer.close()
    head, _, body = got.partition(b"\r\n\r\n")
    assert b" 200 " in head.split(b"\r\n")[0] and b"chunked" not in head.lower(), head
    event = json.loads(body)
    assert (event["type"], event["object"]["code"]) == ("ERROR", 410)


async def test_stall_holds_requests_and_watch_events(server: APIServer, v1: client.CoreV1Api) -> None:
    w = watch.Watch()
    seen: list[float] = []

    async def watch_pods() -> None:
        async for _ in w.stream(v1.list_namespaced_pod, "default", timeout_seconds=30):
            seen.append(time.monotonic())
            w.stop()

    task = asyncio.create_task(watch_pods())
    await asyncio.sleep(0.2)
    status, state = await faults(server, "POST", path="/kubesched/faults/stall?seconds=0.6")
    assert status == 200 and state["stalledFor"] > 0.4
    t0 = time.monotonic()
    server.store.create("Pod", make_pod("a").obj())  # behind the API: only the watch event is held
    await v1.list_namespaced_pod("default")
    assert time.monotonic() - t0 >= 0.45
    await asyncio.wait_for(task, 5)
    assert seen[0] - t0 >= 0.45
    t0 = time.monotonic()
    await v1.list_namespaced_pod("default")
    assert time.monotonic() - t0 < 0.3  # the stall is over


async def test_periodic_stall(server: APIServer, v1: client.CoreV1Api) -> None:
    await switch(server, {"kind": "stall", "every": 0.5, "seconds": 0.4})
    await v1.list_namespaced_pod("default", _request_timeout=0.09)  # the stall ends each period
    await asyncio.sleep(0.15)
    t0 = time.monotonic()
    await v1.list_namespaced_pod("default")
    assert time.monotonic() - t0 >= 0.2
    _, state = await faults(server, "GET")
    assert state["fired"].get("stalled-request", 0) >= 1


# --- switching, filters, seeds -------------------------------------------------------------------

ALL_FAULTS = [
    {"kind": "error", "code": 503},
    {"kind": "throttle"},
    {"kind": "reset"},
    {"kind": "latency", "seconds": 1.0},
    {"kind": "stall", "every": 60, "seconds": 59.9},
]


@pytest.mark.parametrize("rule", ALL_FAULTS, ids=[r["kind"] for r in ALL_FAULTS])
async def test_switching_faults_off_restores_service(server: APIServer, v1: client.CoreV1Api, rule: Obj) -> None:
    await switch(server, rule)
    await asyncio.sleep(0.15)  # past the start of the stall
    with pytest.raises((ApiException, aiohttp.ClientError, asyncio.TimeoutError)):
        await v1.list_namespaced_pod("default", _request_timeout=0.5)
    status, state = await faults(server, "DELETE")
    assert status == 200 and state["faults"] == []
    t0 = time.monotonic()
    await v1.list_namespaced_pod("default")
    assert time.monotonic() - t0 < 0.3


async def test_switching_binding_and_watch_faults_off_restores_service(server: APIServer, v1: client.CoreV1Api) -> None:
    await v1.create_namespaced_pod("default", pod_body("a"))
    rv = (await v1.list_namespaced_pod("default")).metadata.resource_version
    await switch(
        server, {"kind": "conflict", "phase": "before"}, {"kind": "gone"}, {"kind": "watchDrop", "after": [0, 0]}
    )
    with pytest.raises(ApiException):
        await bind(v1, "a")
    await faults(server, "DELETE")
    await bind(v1, "a")
    assert await node_of(v1, "a") == "n1"
    w = watch.Watch()
    await v1.create_namespaced_pod("default", pod_body("b"))
    events = await asyncio.wait_for(
        collect(w.stream(v1.list_namespaced_pod, "default", resource_version=rv, timeout_seconds=5), w, 2), 5
    )
    assert [n for _, n in events] == ["a", "b"]


async def outcomes(server: APIServer, seed: int, n: int = 40) -> list[int]:
    await switch(server, {"kind": "error", "rate": 0.5, "verbs": ["get"]}, seed=seed)
    codes = []
    async with aiohttp.ClientSession() as s:
        for _ in range(n):
            async with s.get(server.url + "/api/v1/namespaces/default") as r:
                codes.append(r.status)
    return codes


async def test_the_seed_makes_faults_reproducible(server: APIServer) -> None:
    first = await outcomes(server, seed=7)
    assert sorted(set(first)) == [200, 500]
    assert await outcomes(server, seed=7) == first  # switching again starts the draws again
    assert await outcomes(server, seed=8) != first


async def test_draws_do_not_depend_on_other_objects_requests(server: APIServer) -> None:
    """A pod's faults depend on its own requests only: interleaving others changes nothing."""
    await switch(server, {"kind": "error", "rate": 0.5, "verbs": ["get"]}, seed=3)

    async def codes(names: list[str]) -> dict[str, list[int]]:
        out: dict[str, list[int]] = {}
        async with aiohttp.ClientSession() as s:
            for name in names:
                async with s.get(f"{server.url}/api/v1/namespaces/default/pods/{name}") as r:
                    out.setdefault(name, []).append(r.status)
        return out

    alone = await codes(["a"] * 10)
    await switch(server, {"kind": "error", "rate": 0.5, "verbs": ["get"]}, seed=3)
    mixed = await codes(["b", "a"] * 10)
    assert mixed["a"] == alone["a"]


async def test_bindings_are_counted_per_pod(server: APIServer, v1: client.CoreV1Api) -> None:
    for name in ("a", "b"):
        await v1.create_namespaced_pod("default", pod_body(name))
    await bind(v1, "a")
    with pytest.raises(ApiException) as err:
        await bind(v1, "a", "n2")  # a second bind is refused by the server itself
    assert err.value.status == 409
    _, stats = await faults(server, "GET", path="/kubesched/stats")
    assert stats["binds"] == 1 and stats["bindConflicts"] == 1
    assert stats["pods"]["default/a"]["binds"] == 1 and stats["pods"]["default/a"]["conflicts"] == 1
    assert stats["podsBoundMoreThanOnce"] == []
    assert "default/b" not in stats["pods"]
    await bind(v1, "b")
    _, totals = await faults(server, "GET", path="/kubesched/stats?pods=false")
    assert totals == {"binds": 2, "boundPods": 2}  # no per-pod table for a poller


async def stats_of(server: APIServer) -> Obj:
    status, stats = await faults(server, "GET", path="/kubesched/stats")
    assert status == 200
    return dict(stats)


async def test_stats_stay_bounded_over_create_bind_delete_cycles(server: APIServer, v1: client.CoreV1Api) -> None:
    """A pod's counts go with it; the totals run on."""
    kept = []
    for cycle in range(3):
        names = [f"c{cycle}-{i}" for i in range(40)]
        for name in names:
            await v1.create_namespaced_pod("default", pod_body(name))
            await bind(v1, name)
        with pytest.raises(ApiException):
            await bind(v1, names[0], "n2")  # refused: one conflict a cycle
        assert sorted((await stats_of(server))["pods"]) == sorted(f"default/{n}" for n in names)
        for name in names:
            await v1.delete_namespaced_pod(name, "default")
        stats = await stats_of(server)
        assert stats["pods"] == {}
        assert (len(server.faults.binds), len(server.faults.bind_conflicts), len(server.faults.first_bound)) == (
            0,
            0,
            0,
        )
        kept.append({k: v for k, v in stats.items() if k not in ("binds", "boundPods", "bindConflicts")})
    assert kept == [{"podsBoundMoreThanOnce": [], "pods": {}}] * 3  # nothing left behind but the totals
    assert (stats["binds"], stats["boundPods"], stats["bindConflicts"]) == (120, 120, 3)
    assert stats["podsBoundMoreThanOnce"] == []


async def test_a_pod_bound_twice_in_its_life_is_named_after_it_is_deleted(
    server: APIServer, store: Store, v1: client.CoreV1Api
) -> None:
    # The same name in two lives, bound once in each: not a double binding.
    await v1.create_namespaced_pod("default", pod_body("again"))
    await bind(v1, "again")
    await v1.delete_namespaced_pod("again", "default")
    await v1.create_namespaced_pod("default", pod_body("again"))
    await bind(v1, "again")
    stats = await stats_of(server)
    assert stats["podsBoundMoreThanOnce"] == [] and stats["pods"]["default/again"]["binds"] == 1
    # One life, bound twice: the server refuses a second binding itself, so its nodeName is
    # cleared in the store behind its back (standing for a server that lost it).
    await v1.create_namespaced_pod("default", pod_body("twice"))
    await bind(v1, "twice")
    store.mutate("Pod", "default", "twice", lambda p: p["spec"].pop("nodeName"))
    await bind(v1, "twice", "n2")
    assert (await stats_of(server))["podsBoundMoreThanOnce"] == ["default/twice"]
    await v1.delete_namespaced_pod("twice", "default")
    stats = await stats_of(server)
    assert stats["podsBoundMoreThanOnce"] == ["default/twice"]  # the evidence outlives the pod
    assert "default/twice" not in stats["pods"]
    assert (stats["binds"], stats["boundPods"]) == (4, 3)


@pytest.mark.parametrize(
    ("body", "error"),
    [
        ({"faults": [{"kind": "error", "rate": 1.5}]}, "faults[0].error.rate: Input should be less than or equal to 1"),
        ({"faults": [{"kind": "error", "code": 502}]}, "faults[0].error.code: Input should be 500 or 503"),
        ({"faults": [{"kind": "latency", "verbs": ["fetch"]}]}, "faults[0].latency.verbs[0]"),
        ({"faults": [{"kind": "flood"}]}, "faults[0]: Input tag 'flood'"),
        ({"faults": [{"kind": "stall", "every": 1, "seconds": 2}]}, "seconds (2.0) must be shorter than every"),
        ({"faults": [{"kind": "watchDrop", "after": [5, 1]}]}, "after must be [min, max]"),
        ({"faults": [{"kind": "gone", "ratio": 1}]}, "faults[0].gone.ratio: Extra inputs are not permitted"),
        ([1, 2], "must be a mapping"),
    ],
    ids=["rate", "code", "verb", "kind", "stall", "after", "extra", "not-a-mapping"],
)
async def test_bad_configuration_is_refused_naming_the_field(server: APIServer, body: Any, error: str) -> None:
    status, answer = await faults(server, "PUT", body)
    assert status == 422 and answer["reason"] == "Invalid"
    assert error in answer["message"]
    _, state = await faults(server, "GET")
    assert state["faults"] == []  # the previous configuration stays
    with pytest.raises(FaultConfigError):
        parse_config(body)


@pytest.mark.parametrize(
    ("method", "path", "query", "want"),
    [
        ("GET", "/api/v1/namespaces/default/pods", {}, ("list", "pods")),
        ("GET", "/api/v1/namespaces/default/pods", {"watch": "true"}, ("watch", "pods")),
        ("GET", "/api/v1/watch/namespaces/default/pods/a", {}, ("watch", "pods")),
        ("POST", "/api/v1/namespaces/default/pods/a/binding", {}, ("create", "pods/binding")),
        ("PATCH", "/api/v1/namespaces/default/pods/a/status", {}, ("patch", "pods/status")),
        ("GET", "/api/v1/namespaces/default", {}, ("get", "namespaces")),
        ("PUT", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/s", {}, ("update", "leases")),
        ("DELETE", "/api/v1/namespaces/default/pods", {}, ("deletecollection", "pods")),
        ("GET", "/version", {}, None),
        ("GET", "/apis/events.k8s.io/v1", {}, None),
    ],
    ids=[
        "list",
        "watch-param",
        "watch-path",
        "binding",
        "status",
        "namespace",
        "lease",
        "deletecollection",
        "version",
        "discovery",
    ],
)
def test_request_info(method: str, path: str, query: Obj, want: tuple[str, str] | None) -> None:
    info = request_info(method, path, query)
    assert (None if info is None else (info.verb, info.resource)) == want


@pytest.mark.parametrize(
    ("resources", "resource", "want"),
    [
        (["pods"], "pods", True),
        (["pods"], "pods/binding", False),
        (["pods/binding"], "pods/binding", True),
        (["pods/*"], "pods/status", True),
        (["pods/*"], "pods", False),
        (["*"], "leases", True),
        ([], "leases", True),
    ],
)
def test_resource_filters_follow_rbac_names(resources: list[str], resource: str, want: bool) -> None:
    rule = parse_config({"faults": [{"kind": "throttle", "resources": resources}]}).faults[0]
    assert rule.matches("create", resource) is want  # type: ignore[union-attr]


# --- the command line ---------------------------------------------------------------------------


def test_sim_serve_applies_a_fault_file_from_the_start(tmp_path: Path) -> None:
    rules = tmp_path / "faults.yaml"
    rules.write_text("seed: 5\nfaults:\n  - {kind: throttle, verbs: [list], resources: [nodes]}\n")
    kubeconfig = tmp_path / "kc"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "kubesched",
            "sim",
            "serve",
            "--port",
            "0",
            "--faults",
            str(rules),
            "--kubeconfig-out",
            str(kubeconfig),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert proc.stdout is not None
        lines = []
        url = None
        deadline = time.monotonic() + 30
        while url is None and time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            lines.append(line)
            if "embedded API server on " in line:
                url = line.split(" on ", 1)[1].strip()
        assert url, "".join(lines)
        assert any("fault injection: 1 rule(s), seed 5" in ln for ln in lines)
        import yaml

        token = yaml.safe_load(kubeconfig.read_text())["users"][0]["user"].get("token")
        headers = {"Authorization": f"Bearer {token}"} if token else {}

        async def probe() -> tuple[int, int, Obj, int]:
            async with aiohttp.ClientSession(headers=headers, connector=aiohttp.TCPConnector(ssl=False)) as s:
                async with s.get(url + "/api/v1/nodes") as r:
                    nodes = r.status
                async with s.get(url + "/api/v1/namespaces") as r:
                    namespaces = r.status
                async with s.get(url + "/kubesched/faults") as r:
                    state = await r.json()
                async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=False)) as anonymous:
                    async with anonymous.delete(url + "/kubesched/faults") as r:
                        anon = r.status
                return nodes, namespaces, state, anon

        nodes, namespaces, state, anon = asyncio.run(probe())
        assert (nodes, namespaces) == (429, 200)
        assert state["seed"] == 5 and state["fired"] == {"throttle": 1}
        assert anon == (401 if token else 200)  # with a token, switching faults needs it too
    finally:
        proc.terminate()
        proc.wait(10)


def test_sim_serve_refuses_a_bad_fault_file(tmp_path: Path) -> None:
    rules = tmp_path / "faults.yaml"
    rules.write_text("faults:\n  - {kind: error, rate: 3}\n")
    out = subprocess.run(
        [sys.executable, "-m", "kubesched", "sim", "serve", "--port", "0", "--faults", str(rules)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert out.returncode == 2
    assert "--faults" in out.stderr and "faults[0].error.rate: Input should be less than or equal to 1" in out.stderr
