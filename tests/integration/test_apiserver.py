"""The embedded API server over real HTTP, driven by the real kubernetes_asyncio client:
CRUD, defaulting, binding, status and patches, selectors, list-then-watch, bookmarks, 410 after
compaction, dropped watches, the two Event APIs, and upstream's error Statuses."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp
import pytest
from kubernetes_asyncio import client, watch
from kubernetes_asyncio.client.exceptions import ApiException

from kubesched.sim.apiserver.server import APIServer
from kubesched.testing import make_node, make_pod

Obj = dict[str, Any]


def pod_body(name: str, **kw: Any) -> Obj:
    """A pod as a client would send it: builder output without server-owned fields."""
    b = make_pod(name)
    for key, value in kw.items():
        getattr(b, key)(**value) if isinstance(value, dict) else getattr(b, key)(value)
    obj = b.obj()
    obj["metadata"].pop("uid", None)
    obj.pop("status", None)
    if not obj["spec"]["containers"]:
        obj["spec"]["containers"] = [{"name": "c", "image": "registry.k8s.io/pause:3.10"}]
    return obj


def node_body(name: str) -> Obj:
    return make_node(name).capacity(cpu="4", memory="8Gi", pods="110").obj()


async def raw(server: APIServer, method: str, path: str, body: Any = None, ctype: str = "application/json") -> Any:
    async with aiohttp.ClientSession() as s:
        data = json.dumps(body) if body is not None and not isinstance(body, str) else body
        async with s.request(method, server.url + path, data=data, headers={"Content-Type": ctype}) as r:
            return r.status, await r.json(content_type=None), r.headers


# --- CRUD ---------------------------------------------------------------------------------------


def _crud_cases() -> list[Any]:
    def pods(c: client.ApiClient) -> Any:
        v1 = client.CoreV1Api(c)
        return (
            lambda b: v1.create_namespaced_pod("default", b),
            lambda n: v1.read_namespaced_pod(n, "default"),
            lambda n, b: v1.replace_namespaced_pod(n, "default", b),
            lambda: v1.list_namespaced_pod("default"),
            lambda n: v1.delete_namespaced_pod(n, "default"),
        )

    def nodes(c: client.ApiClient) -> Any:
        v1 = client.CoreV1Api(c)
        return (v1.create_node, v1.read_node, v1.replace_node, v1.list_node, v1.delete_node)

    def namespaces(c: client.ApiClient) -> Any:
        v1 = client.CoreV1Api(c)
        return (v1.create_namespace, v1.read_namespace, v1.replace_namespace, v1.list_namespace, v1.delete_namespace)

    def priorityclasses(c: client.ApiClient) -> Any:
        s = client.SchedulingV1Api(c)
        return (
            s.create_priority_class,
            s.read_priority_class,
            s.replace_priority_class,
            s.list_priority_class,
            s.delete_priority_class,
        )

    def leases(c: client.ApiClient) -> Any:
        co = client.CoordinationV1Api(c)
        return (
            lambda b: co.create_namespaced_lease("kube-system", b),
            lambda n: co.read_namespaced_lease(n, "kube-system"),
            lambda n, b: co.replace_namespaced_lease(n, "kube-system", b),
            lambda: co.list_namespaced_lease("kube-system"),
            lambda n: co.delete_namespaced_lease(n, "kube-system"),
        )

    lease = {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": "kubesched"},
        "spec": {"holderIdentity": "a", "leaseDurationSeconds": 15},
    }
    pc = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000}
    ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}}
    return [
        pytest.param(pods, pod_body("p1"), "p1", id="pods"),
        pytest.param(nodes, node_body("n1"), "n1", id="nodes"),
        pytest.param(namespaces, ns, "team-a", id="namespaces"),
        pytest.param(priorityclasses, pc, "high", id="priorityclasses"),
        pytest.param(leases, lease, "kubesched", id="leases"),
    ]


@pytest.mark.parametrize(("ops", "body", "name"), _crud_cases())
async def test_create_read_replace_list_delete(api: client.ApiClient, ops: Any, body: Obj, name: str) -> None:
    create, read, replace, list_, delete = ops(api)
    created = await create(body)
    assert created.metadata.name == name and created.metadata.uid and created.metadata.resource_version
    got = api.sanitize_for_serialization(await read(name))
    got["metadata"].setdefault("labels", {})["touched"] = "yes"
    replaced = await replace(name, got)
    assert replaced.metadata.labels["touched"] == "yes"
    assert int(replaced.metadata.resource_version) > int(created.metadata.resource_version)
    assert name in [i.metadata.name for i in (await list_()).items]
    await delete(name)
    with pytest.raises(ApiException) as err:
        await read(name)
    assert err.value.status == 404


# --- defaulting and admission -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("builder", "qos", "requests"),
    [
        pytest.param(make_pod("q").container(), "BestEffort", {}, id="best-effort"),
        pytest.param(make_pod("q").req(cpu="100m"), "Burstable", {"cpu": "100m"}, id="burstable"),
        pytest.param(
            make_pod("q").lim(cpu="1", memory="1Gi"), "Guaranteed", {"cpu": "1", "memory": "1Gi"}, id="limits-only"
        ),
    ],
)
async def test_pod_create_defaults_like_the_api_server(
    api: client.ApiClient, builder: Any, qos: str, requests: Obj
) -> None:
    v1 = client.CoreV1Api(api)
    body = builder.obj()
    body["metadata"].pop("uid")
    body.pop("status")
    body["metadata"].pop("namespace")
    body["spec"].pop("schedulerName")
    for c in body["spec"]["containers"]:
        c.setdefault("image", "nginx")
    pod = api.sanitize_for_serialization(await v1.create_namespaced_pod("default", body))
    assert pod["metadata"]["namespace"] == "default"
    assert pod["spec"]["schedulerName"] == "default-scheduler"
    assert pod["spec"]["priority"] == 0
    assert pod["status"] == {"phase": "Pending", "qosClass": qos}
    assert (pod["spec"]["containers"][0]["resources"].get("requests") or {}) == requests
    assert pod["metadata"]["creationTimestamp"]


async def test_priority_class_resolves_into_pod_priority(api: client.ApiClient) -> None:
    await client.SchedulingV1Api(api).create_priority_class(
        {"metadata": {"name": "high"}, "value": 1000, "preemptionPolicy": "Never"}
    )
    body = pod_body("p")
    body["spec"]["priorityClassName"] = "high"
    pod = await client.CoreV1Api(api).create_namespaced_pod("default", body)
    assert (pod.spec.priority, pod.spec.preemption_policy) == (1000, "Never")


# --- errors -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path", "body", "code", "reason", "message"),
    [
        pytest.param(
            "GET",
            "/api/v1/namespaces/default/pods/nope",
            None,
            404,
            "NotFound",
            'pods "nope" not found',
            id="not-found",
        ),
        pytest.param(
            "GET",
            "/apis/scheduling.k8s.io/v1/priorityclasses/x",
            None,
            404,
            "NotFound",
            'priorityclasses.scheduling.k8s.io "x" not found',
            id="not-found-in-group",
        ),
        pytest.param(
            "POST",
            "/api/v1/namespaces/default/pods",
            {"metadata": {"name": "bad"}, "spec": {"containers": []}},
            422,
            "Invalid",
            'Pod "bad" is invalid: spec.containers: Required value',
            id="no-containers",
        ),
        pytest.param(
            "POST",
            "/api/v1/namespaces/default/pods",
            {"metadata": {"name": "bad"}, "spec": {"containers": [{"name": "c"}]}},
            422,
            "Invalid",
            "spec.containers[0].image: Required value",
            id="no-image",
        ),
        pytest.param(
            "POST",
            "/api/v1/namespaces/default/pods",
            {
                "metadata": {"name": "p"},
                "spec": {"priorityClassName": "gold", "containers": [{"name": "c", "image": "x"}]},
            },
            403,
            "Forbidden",
            "no PriorityClass with name gold was found",
            id="unknown-priority-class",
        ),
        pytest.param(
            "POST",
            "/api/v1/namespaces/default/pods",
            {"metadata": {"name": "p", "namespace": "other"}, "spec": {"containers": [{"name": "c", "image": "x"}]}},
            400,
            "BadRequest",
            "does not match the namespace sent on the request",
            id="namespace-mismatch",
        ),
        pytest.param(
            "POST",
            "/api/v1/namespaces/missing/pods",
            {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "x"}]}},
            404,
            "NotFound",
            'namespaces "missing" not found',
            id="missing-namespace",
        ),
        pytest.param(
            "POST",
            "/api/v1/namespaces/default/pods?fieldValidation=Strict",
            {"metadata": {"name": "p"}, "spec": {"containerz": [], "containers": [{"name": "c", "image": "x"}]}},
            400,
            "BadRequest",
            'strict decoding error: unknown field "spec.containerz"',
            id="strict-unknown-field",
        ),
        pytest.param("PUT", "/api/v1/namespaces/default/pods", {}, 405, "MethodNotAllowed", "", id="put-collection"),
        pytest.param(
            "GET",
            "/api/v1/pods?fieldSelector=spec.color%3Dred",
            None,
            400,
            "BadRequest",
            "field label not supported: spec.color",
            id="unsupported-field-selector",
        ),
    ],
)
async def test_errors_are_status_objects(
    server: APIServer, method: str, path: str, body: Any, code: int, reason: str, message: str
) -> None:
    status, got, _ = await raw(server, method, path, body)
    assert status == code
    assert (got["kind"], got["status"], got["code"], got["reason"]) == ("Status", "Failure", code, reason)
    assert message in got["message"]


async def test_create_twice_is_already_exists_and_stale_update_conflicts(api: client.ApiClient) -> None:
    v1 = client.CoreV1Api(api)
    first = await v1.create_namespaced_pod("default", pod_body("p"))
    with pytest.raises(ApiException) as err:
        await v1.create_namespaced_pod("default", pod_body("p"))
    assert (err.value.status, json.loads(err.value.body)["reason"]) == (409, "AlreadyExists")
    await v1.patch_namespaced_pod("p", "default", {"metadata": {"labels": {"a": "1"}}})
    stale = api.sanitize_for_serialization(first)
    stale["metadata"]["labels"] = {"b": "2"}
    with pytest.raises(ApiException) as err:
        await v1.replace_namespaced_pod("p", "default", stale)
    body = json.loads(err.value.body)
    assert (err.value.status, body["reason"]) == (409, "Conflict")
    assert "the object has been modified" in body["message"]


# --- binding and status -------------------------------------------------------------------------


async def test_binding_sets_node_once_then_conflicts(api: client.ApiClient, server: APIServer) -> None:
    v1 = client.CoreV1Api(api)
    await v1.create_node(node_body("n1"))
    await v1.create_namespaced_pod("default", pod_body("p"))
    binding = {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": "p"},
        "target": {"kind": "Node", "name": "n1"},
    }
    # The answer is a Status, not a Binding, so the raw response is read (as clients must).
    resp = await v1.create_namespaced_pod_binding("p", "default", binding, _preload_content=False)
    assert resp.status == 201
    # Byte for byte the Status every binding is answered with (compact, in its members' order).
    assert await resp.read() == b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","code":201}'
    pod = await v1.read_namespaced_pod("p", "default")
    assert pod.spec.node_name == "n1"
    assert [(c.type, c.status) for c in pod.status.conditions] == [("PodScheduled", "True")]
    resp = await v1.create_namespaced_pod_binding("p", "default", binding, _preload_content=False)
    body = await resp.json()
    assert (resp.status, body["reason"]) == (409, "Conflict")
    assert 'already assigned to node "n1"' in body["message"]


async def test_status_subresource_patches_conditions_by_type(api: client.ApiClient) -> None:
    v1 = client.CoreV1Api(api)
    await v1.create_namespaced_pod("default", pod_body("p"))
    unschedulable = {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "0/3 nodes"}
    await v1.patch_namespaced_pod_status("p", "default", {"status": {"conditions": [unschedulable]}})
    ready = {"type": "Ready", "status": "False"}
    pod = await v1.patch_namespaced_pod_status(
        "p", "default", {"status": {"conditions": [ready], "nominatedNodeName": "n2"}}
    )
    assert {c.type: c.reason for c in pod.status.conditions} == {"PodScheduled": "Unschedulable", "Ready": None}
    assert pod.status.nominated_node_name == "n2"
    # The main resource ignores status; the status subresource ignores the rest.
    pod = await v1.patch_namespaced_pod("p", "default", {"status": {"phase": "Running"}})
    assert pod.status.phase == "Pending"
    pod = await v1.patch_namespaced_pod_status("p", "default", {"metadata": {"labels": {"x": "y"}}})
    assert not pod.metadata.labels
    read = await v1.read_namespaced_pod_status("p", "default")
    assert len(read.status.conditions) == 2


@pytest.mark.parametrize(
    ("ctype", "patch", "want_containers", "want_labels"),
    [
        pytest.param(
            "application/strategic-merge-patch+json",
            {"spec": {"containers": [{"name": "b", "image": "b:2"}]}, "metadata": {"labels": {"x": "1"}}},
            [("a", "a:1"), ("b", "b:2")],
            {"app": "w", "x": "1"},
            id="strategic-merges-containers-by-name",
        ),
        pytest.param(
            "application/strategic-merge-patch+json",
            {"spec": {"containers": [{"name": "a", "$patch": "delete"}]}},
            [("b", "b:1")],
            {"app": "w"},
            id="strategic-delete-directive",
        ),
        pytest.param(
            "application/merge-patch+json",
            {"spec": {"containers": [{"name": "c", "image": "c:1"}]}, "metadata": {"labels": {"app": None}}},
            [("c", "c:1")],
            None,
            id="merge-replaces-lists",
        ),
        pytest.param(
            "application/json-patch+json",
            [
                {"op": "replace", "path": "/spec/containers/1/image", "value": "b:9"},
                {"op": "add", "path": "/metadata/labels/j", "value": "2"},
            ],
            [("a", "a:1"), ("b", "b:9")],
            {"app": "w", "j": "2"},
            id="json-patch",
        ),
    ],
)
async def test_patch_types(
    server: APIServer, ctype: str, patch: Any, want_containers: list[tuple[str, str]], want_labels: Obj | None
) -> None:
    body = {
        "metadata": {"name": "w", "labels": {"app": "w"}},
        "spec": {"containers": [{"name": "a", "image": "a:1"}, {"name": "b", "image": "b:1"}]},
    }
    assert (await raw(server, "POST", "/api/v1/namespaces/default/pods", body))[0] == 201
    status, pod, _ = await raw(server, "PATCH", "/api/v1/namespaces/default/pods/w", patch, ctype)
    assert status == 200, pod
    assert [(c["name"], c["image"]) for c in pod["spec"]["containers"]] == want_containers
    assert (pod["metadata"].get("labels") or None) == want_labels


async def test_server_side_apply_creates_then_merges(server: APIServer) -> None:
    doc = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: s\n  labels: {a: '1'}\nspec:\n  containers:\n  - {name: c, image: x}\n"
    path = "/api/v1/namespaces/default/pods/s?fieldManager=test"
    status, created, _ = await raw(server, "PATCH", path, doc, "application/apply-patch+yaml")
    assert status == 201 and created["spec"]["schedulerName"] == "default-scheduler"
    status, merged, _ = await raw(
        server, "PATCH", path, doc.replace("{a: '1'}", "{b: '2'}"), "application/apply-patch+yaml"
    )
    assert status == 200 and merged["metadata"]["labels"] == {"a": "1", "b": "2"}
    status, err, _ = await raw(
        server, "PATCH", "/api/v1/namespaces/default/pods/s", doc, "application/apply-patch+yaml"
    )
    assert status == 422 and "fieldManager" in err["message"]


# --- selectors ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("label_selector", "field_selector", "want"),
    [
        pytest.param("app=web", "", ["a", "b"], id="label-equality"),
        pytest.param("app!=web", "", ["c", "d"], id="label-inequality-includes-unlabelled"),
        pytest.param("tier in (fe, be)", "", ["a", "c"], id="label-set-in"),
        pytest.param("app,tier notin (fe)", "", ["b"], id="label-exists-and-notin"),
        pytest.param("!tier", "", ["b", "d"], id="label-does-not-exist"),
        pytest.param("", "spec.nodeName=n1", ["a"], id="field-node-name"),
        pytest.param("", "spec.nodeName=", ["b", "c", "d"], id="field-unassigned"),
        pytest.param("", "spec.schedulerName=other", ["d"], id="field-scheduler-name"),
        pytest.param("", "status.phase!=Pending,metadata.name!=zzz", [], id="field-phase-negated"),
        pytest.param("app=web", "metadata.name=b", ["b"], id="both"),
    ],
)
async def test_list_selectors(api: client.ApiClient, label_selector: str, field_selector: str, want: list[str]) -> None:
    v1 = client.CoreV1Api(api)
    pods = [
        pod_body("a", labels={"app": "web", "tier": "fe"}),
        pod_body("b", labels={"app": "web"}),
        pod_body("c", labels={"tier": "be"}),
        pod_body("d", scheduler="other"),
    ]
    for p in pods:
        await v1.create_namespaced_pod("default", p)
    await v1.create_node(node_body("n1"))
    await v1.create_namespaced_pod_binding(
        "a", "default", {"metadata": {"name": "a"}, "target": {"name": "n1"}}, _preload_content=False
    )
    got = await v1.list_pod_for_all_namespaces(label_selector=label_selector, field_selector=field_selector)
    assert sorted(p.metadata.name for p in got.items) == want


# --- watch --------------------------------------------------------------------------------------


async def collect(w: watch.Watch, stream: Any, n: int, timeout: float = 5) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []

    async def run() -> None:
        async for ev in stream:
            out.append((ev["type"], ev["raw_object"]))
            if len(out) >= n:
                w.stop()
                return

    await asyncio.wait_for(run(), timeout)
    return out


async def test_list_then_watch_from_resource_version(api: client.ApiClient) -> None:
    v1 = client.CoreV1Api(api)
    await v1.create_namespaced_pod("default", pod_body("old"))
    listed = await v1.list_namespaced_pod("default")
    assert [p.metadata.name for p in listed.items] == ["old"]
    rv = listed.metadata.resource_version

    async def writes() -> None:
        await asyncio.sleep(0.05)
        await v1.create_namespaced_pod("default", pod_body("new"))
        await v1.patch_namespaced_pod("new", "default", {"metadata": {"labels": {"x": "1"}}})
        await v1.delete_namespaced_pod("new", "default")

    w = watch.Watch()
    task = asyncio.create_task(writes())
    events = await collect(w, w.stream(v1.list_namespaced_pod, "default", resource_version=rv, timeout_seconds=10), 3)
    await task
    assert [(t, o["metadata"]["name"]) for t, o in events] == [
        ("ADDED", "new"),
        ("MODIFIED", "new"),
        ("DELETED", "new"),
    ]
    assert events[1][1]["metadata"]["labels"] == {"x": "1"}
    assert events[0][1]["kind"] == "Pod" and events[0][1]["apiVersion"] == "v1"


async def test_watch_without_version_starts_with_current_objects_and_applies_selectors(api: client.ApiClient) -> None:
    v1 = client.CoreV1Api(api)
    await v1.create_namespaced_pod("default", pod_body("a", labels={"app": "web"}))
    await v1.create_namespaced_pod("default", pod_body("b"))

    async def writes() -> None:
        await asyncio.sleep(0.05)
        await v1.patch_namespaced_pod("b", "default", {"metadata": {"labels": {"app": "web"}}})  # enters selection
        await v1.patch_namespaced_pod("a", "default", {"metadata": {"labels": {"app": "db"}}})  # leaves it

    w = watch.Watch()
    task = asyncio.create_task(writes())
    events = await collect(
        w, w.stream(v1.list_namespaced_pod, "default", label_selector="app=web", timeout_seconds=10), 3
    )
    await task
    assert [(t, o["metadata"]["name"]) for t, o in events] == [("ADDED", "a"), ("ADDED", "b"), ("DELETED", "a")]


async def test_bookmarks_carry_the_current_resource_version(api: client.ApiClient, server: APIServer) -> None:
    server.bookmark_interval = 0.05
    v1 = client.CoreV1Api(api)
    await v1.create_namespaced_pod("default", pod_body("p"))
    rv = (await v1.list_namespaced_pod("default")).metadata.resource_version
    w = watch.Watch()
    stream = w.stream(
        v1.list_namespaced_pod, "default", resource_version=rv, allow_watch_bookmarks=True, timeout_seconds=10
    )
    events = await collect(w, stream, 1)
    assert events[0][0] == "BOOKMARK"
    assert events[0][1]["metadata"]["resourceVersion"] == str(server.store.resource_version)


async def test_watch_from_compacted_version_is_expired(api: client.ApiClient, server: APIServer) -> None:
    v1 = client.CoreV1Api(api)
    await v1.create_namespaced_pod("default", pod_body("p"))
    old = (await v1.list_namespaced_pod("default")).metadata.resource_version
    await v1.create_namespaced_pod("default", pod_body("q"))
    server.compact()
    w = watch.Watch()
    with pytest.raises(ApiException) as err:
        await collect(w, w.stream(v1.list_namespaced_pod, "default", resource_version=old, timeout_seconds=5), 1)
    assert err.value.status == 410 and "Expired" in str(err.value.reason)
    # The wire format: HTTP 200, then an ERROR event holding a 410 Status.
    async with aiohttp.ClientSession() as s:
        async with s.get(f"{server.url}/api/v1/pods?watch=true&resourceVersion={old}") as r:
            assert r.status == 200
            line = json.loads(await r.content.readline())
    assert line["type"] == "ERROR"
    assert (line["object"]["code"], line["object"]["reason"]) == (410, "Expired")


async def test_drop_watches_ends_streams_and_clients_resume(api: client.ApiClient, server: APIServer) -> None:
    v1 = client.CoreV1Api(api)
    rv = (await v1.list_namespaced_pod("default")).metadata.resource_version
    w_once = watch.Watch()
    ended = asyncio.create_task(
        collect(w_once, w_once.stream(v1.list_namespaced_pod, "default", resource_version=rv, timeout_seconds=60), 99)
    )
    w_forever = watch.Watch()
    resumed = asyncio.create_task(
        collect(w_forever, w_forever.stream(v1.list_namespaced_pod, "default", resource_version=rv), 2)
    )
    await asyncio.sleep(0.1)
    await v1.create_namespaced_pod("default", pod_body("before"))
    await asyncio.sleep(0.1)
    server.drop_watches()
    assert [t for t, _ in await asyncio.wait_for(ended, 5)] == ["ADDED"]
    await v1.create_namespaced_pod("default", pod_body("after"))
    # The re-watch resumed from the last version seen: nothing is repeated, nothing lost.
    assert [o["metadata"]["name"] for _, o in await resumed] == ["before", "after"]


# --- events -------------------------------------------------------------------------------------


async def test_events_v1_created_are_listed_by_core_with_converted_fields(api: client.ApiClient) -> None:
    ev = {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": "p.1", "namespace": "default"},
        "eventTime": "2024-01-01T00:00:00.000000Z",
        "reportingController": "kubesched",
        "reportingInstance": "kubesched-1",
        "action": "Scheduling",
        "reason": "FailedScheduling",
        "type": "Warning",
        "note": "0/3 nodes are available",
        "regarding": {"kind": "Pod", "namespace": "default", "name": "p", "uid": "u1"},
        "series": {"count": 4, "lastObservedTime": "2024-01-01T00:01:00.000000Z"},
    }
    await client.EventsV1Api(api).create_namespaced_event("default", ev)
    core = await client.CoreV1Api(api).list_namespaced_event(
        "default", field_selector="involvedObject.name=p,involvedObject.uid=u1,reason=FailedScheduling"
    )
    (got,) = core.items
    assert got.message == "0/3 nodes are available"
    assert (got.involved_object.kind, got.involved_object.name) == ("Pod", "p")
    assert (got.count, got.source.component, got.reporting_component) == (4, "kubesched", "kubesched")
    assert got.type == "Warning"


async def test_core_events_are_served_by_events_v1(api: client.ApiClient) -> None:
    ev = {
        "metadata": {"name": "p.2"},
        "involvedObject": {"kind": "Pod", "namespace": "default", "name": "p", "uid": "u2"},
        "reason": "Scheduled",
        "message": "Successfully assigned default/p to n1",
        "type": "Normal",
        "count": 2,
        "source": {"component": "default-scheduler"},
        "firstTimestamp": "2024-01-01T00:00:00Z",
        "lastTimestamp": "2024-01-01T00:00:05Z",
    }
    await client.CoreV1Api(api).create_namespaced_event("default", ev)
    got = await client.EventsV1Api(api).read_namespaced_event("p.2", "default")
    assert got.note == "Successfully assigned default/p to n1"
    assert (got.regarding.name, got.regarding.uid) == ("p", "u2")
    assert (got.deprecated_count, got.deprecated_source.component) == (2, "default-scheduler")
    assert got.reporting_controller == "default-scheduler"
    listed = await client.EventsV1Api(api).list_namespaced_event("default", field_selector="regarding.name=p")
    assert [e.metadata.name for e in listed.items] == ["p.2"]


# --- discovery ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "check"),
    [
        pytest.param(
            lambda c: client.VersionApi(c).get_code(),
            lambda v: v.git_version == "v1.37.0-kubesched" and v.minor == "37",
            id="version",
        ),
        pytest.param(
            lambda c: client.CoreV1Api(c).get_api_resources(),
            lambda r: (
                {x.name: (x.short_names, x.namespaced) for x in r.resources}["pods"] == (["po"], True)
                and "pods/binding" in {x.name for x in r.resources}
            ),
            id="core-resources",
        ),
        pytest.param(
            lambda c: client.ApisApi(c).get_api_versions(),
            lambda g: (
                {x.name for x in g.groups}
                == {
                    "events.k8s.io",
                    "coordination.k8s.io",
                    "scheduling.k8s.io",
                    "storage.k8s.io",
                    "policy",
                    "apps",
                    "batch",
                    "resource.k8s.io",
                    "rbac.authorization.k8s.io",
                    "apiextensions.k8s.io",
                    "metrics.k8s.io",
                }
            ),
            id="groups",
        ),
    ],
)
async def test_discovery(
    api: client.ApiClient, call: Callable[[Any], Awaitable[Any]], check: Callable[[Any], bool]
) -> None:
    assert check(await call(api))


async def test_aggregated_discovery_is_served_when_asked(server: APIServer) -> None:
    accept = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json"
    async with aiohttp.ClientSession() as s:
        async with s.get(server.url + "/apis", headers={"Accept": accept}) as r:
            assert r.headers["Content-Type"].startswith("application/json;g=apidiscovery.k8s.io;v=v2")
            doc = await r.json(content_type=None)
    assert doc["kind"] == "APIGroupDiscoveryList"
    groups = {i["metadata"]["name"]: i["versions"][0]["resources"] for i in doc["items"]}
    assert [r["shortNames"] for r in groups["scheduling.k8s.io"]] == [["pc"]]
