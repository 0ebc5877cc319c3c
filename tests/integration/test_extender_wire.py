"""HTTPExtender against real HTTP servers on 127.0.0.1: the upstream extender wire format
(PascalCase ExtenderArgs / ExtenderFilterResult / HostPriorityList / ExtenderBindingArgs /
ExtenderPreemptionArgs), the server side from make_extender_app, and the scheduler-side loops."""

from __future__ import annotations

import asyncio
import base64
import json
import shutil
import ssl
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from kubesched.config.models import Extender
from kubesched.extender import (
    ExtenderError,
    ExtenderServer,
    HTTPExtender,
    Victims,
    make_extender_app,
    serve_extender,
)
from kubesched.framework.status import Code, Status
from kubesched.scheduler.extenders import (
    binder_for,
    find_nodes_that_pass_extenders,
    preempt_with_extenders,
    prioritize_with_extenders,
)
from kubesched.testing import as_node_infos, make_node, make_pod


def nodes(*names: str):
    return as_node_infos([make_node(n).capacity(cpu="4", memory="8Gi", pods="110") for n in names])


def extender(url: str, **fields: Any) -> HTTPExtender:
    return HTTPExtender(Extender.model_validate({"urlPrefix": url, **fields}))


class Canned:
    """A raw extender: records each request body by path and answers with a fixed reply, so the
    client is checked against the wire format itself rather than against our own server."""

    def __init__(self, replies: dict[str, Any], status: int = 200, delay: float = 0.0) -> None:
        self.replies = replies
        self.status = status
        self.delay = delay
        self.bodies: dict[str, Any] = {}

    def app(self) -> web.Application:
        app = web.Application()

        async def handle(request: web.Request) -> web.StreamResponse:
            verb = request.match_info["verb"]
            assert request.headers["Content-Type"].startswith("application/json")
            self.bodies[verb] = json.loads(await request.read())
            if self.delay:
                await asyncio.sleep(self.delay)
            reply = self.replies.get(verb)
            text = reply if isinstance(reply, str) else json.dumps(reply)
            return web.Response(status=self.status, text=text, content_type="application/json")

        app.router.add_post("/{verb}", handle)
        return app


@pytest.fixture
async def serve():
    servers: list[ExtenderServer] = []
    clients: list[HTTPExtender] = []

    async def start(app: web.Application, **kw: Any) -> str:
        srv = await serve_extender(app, "127.0.0.1", 0, **kw)
        servers.append(srv)
        return srv.url

    start.clients = clients  # type: ignore[attr-defined]
    yield start
    for c in clients:
        await c.close()
    for s in servers:
        await s.close()


def track(serve: Any, ext: HTTPExtender) -> HTTPExtender:
    serve.clients.append(ext)
    return ext


# --- filter ----------------------------------------------------------------------------------------


async def test_filter_sends_whole_nodes_and_maps_result_back(serve) -> None:
    canned = Canned({"filter": {"Nodes": {"items": [{"metadata": {"name": "n2"}}]}, "FailedNodes": {"n1": "no"}}})
    ext = track(serve, extender(await serve(canned.app()), filterVerb="filter"))
    pod = make_pod("p").req(cpu="1").info()
    infos = nodes("n1", "n2")

    feasible, failed, unresolvable = await ext.filter(pod, infos)

    body = canned.bodies["filter"]
    assert set(body) == {"Pod", "Nodes", "NodeNames"}
    assert body["NodeNames"] is None
    assert body["Pod"]["metadata"]["name"] == "p"
    assert [n["metadata"]["name"] for n in body["Nodes"]["items"]] == ["n1", "n2"]
    assert body["Nodes"]["items"][0]["status"]["capacity"]["cpu"] == "4"
    assert feasible == [infos[1]]
    assert failed == {"n1": "no"}
    assert unresolvable == {}


async def test_filter_node_cache_capable_sends_names_only(serve) -> None:
    canned = Canned({"filter": {"NodeNames": ["n3", "n1"], "FailedAndUnresolvableNodes": {"n2": "gone"}}})
    ext = track(serve, extender(await serve(canned.app()), filterVerb="filter", nodeCacheCapable=True))
    infos = nodes("n1", "n2", "n3")

    feasible, failed, unresolvable = await ext.filter(make_pod("p").info(), infos)

    body = canned.bodies["filter"]
    assert body["Nodes"] is None
    assert body["NodeNames"] == ["n1", "n2", "n3"]
    # The extender's order is kept, as upstream does.
    assert [n.name for n in feasible] == ["n3", "n1"]
    assert (failed, unresolvable) == ({}, {"n2": "gone"})


@pytest.mark.parametrize(
    ("cache", "reply", "error"),
    [
        (False, {"Error": "quota exhausted"}, "quota exhausted"),
        (True, {"NodeNames": ["n1", "elsewhere"]}, "claims a filtered node 'elsewhere'"),
        (False, {"Nodes": {"items": [{"metadata": {"name": "stranger"}}]}}, "claims a filtered node 'stranger'"),
        (False, "not json", "decoding the filter result"),
        (False, {"FailedNodes": ["n1"]}, "FailedNodes: expected an object"),
    ],
    ids=["error-field", "unknown-node-name", "unknown-node-object", "body-not-json", "failed-nodes-not-a-map"],
)
async def test_filter_bad_results_raise(serve, cache: bool, reply: Any, error: str) -> None:
    ext = track(
        serve, extender(await serve(Canned({"filter": reply}).app()), filterVerb="filter", nodeCacheCapable=cache)
    )
    with pytest.raises(ExtenderError, match=error) as info:
        await ext.filter(make_pod("p").info(), nodes("n1"))
    assert info.value.extender == ext.name
    assert info.value.verb == "filter"


async def test_filter_non_200_names_verb_url_and_code(serve) -> None:
    url = await serve(Canned({"filter": {}}, status=503).app())
    ext = track(serve, extender(url + "/", filterVerb="filter"))
    with pytest.raises(ExtenderError) as info:
        await ext.filter(make_pod("p").info(), nodes("n1"))
    # A trailing slash on urlPrefix is trimmed before the verb is appended.
    assert str(info.value) == f"failed filter with extender at URL {url}/filter, code 503"


async def test_result_keys_decode_case_insensitively_like_go(serve) -> None:
    canned = Canned({"filter": {"nodenames": ["n1"], "failednodes": {"n2": "x"}}})
    ext = track(serve, extender(await serve(canned.app()), filterVerb="filter", nodeCacheCapable=True))
    feasible, failed, _ = await ext.filter(make_pod("p").info(), nodes("n1", "n2"))
    assert [n.name for n in feasible] == ["n1"]
    assert failed == {"n2": "x"}


async def test_no_filter_verb_passes_every_node_without_a_call() -> None:
    ext = extender("http://127.0.0.1:9", prioritizeVerb="p", weight=1)
    infos = nodes("n1", "n2")
    assert await ext.filter(make_pod("p").info(), infos) == (infos, {}, {})
    assert (ext.is_filter(), ext.is_prioritizer(), ext.is_binder(), ext.supports_preemption()) == (
        False,
        True,
        False,
        False,
    )


def _label_filter(pod: dict, node_list: list[dict]):
    want = pod["metadata"]["labels"]["want"]
    keep = [n for n in node_list if n["metadata"]["name"].startswith(want)]
    failed = {n["metadata"]["name"]: "wrong prefix" for n in node_list if n not in keep}
    unresolvable = {"n-gone": "node is gone"} if any(n["metadata"]["name"] == "n-gone" for n in node_list) else {}
    return keep, failed, unresolvable


@pytest.mark.parametrize("cache", [False, True], ids=["Nodes", "NodeNames"])
async def test_make_extender_app_filter_roundtrip(serve, cache: bool) -> None:
    seen: list[list[dict]] = []

    async def record_then_filter(pod: dict, node_list: list[dict]):
        seen.append(node_list)
        return _label_filter(pod, node_list)

    url = await serve(make_extender_app(filter=record_then_filter))
    ext = track(serve, extender(url, filterVerb="filter", nodeCacheCapable=cache))
    infos = nodes("a1", "b1", "a2", "n-gone")

    feasible, failed, unresolvable = await ext.filter(make_pod("p").label("want", "a").info(), infos)

    assert [n.name for n in feasible] == ["a1", "a2"]
    assert feasible[0] is infos[0]
    assert failed == {"b1": "wrong prefix", "n-gone": "wrong prefix"}
    assert unresolvable == {"n-gone": "node is gone"}
    # With NodeNames the server hands the function name-only node dicts.
    if cache:
        assert seen[0][0] == {"metadata": {"name": "a1"}}
    else:
        assert seen[0][0]["status"]["capacity"]["cpu"] == "4"


async def test_make_extender_app_filter_exception_becomes_error_field(serve) -> None:
    def broken(pod: dict, node_list: list[dict]) -> list[dict]:
        raise RuntimeError("backend down")

    url = await serve(make_extender_app(filter=broken))
    ext = track(serve, extender(url, filterVerb="filter"))
    with pytest.raises(ExtenderError, match="^backend down$"):
        await ext.filter(make_pod("p").info(), nodes("n1"))


async def test_unserved_verb_is_an_error(serve) -> None:
    url = await serve(make_extender_app(filter=lambda pod, ns: ns))
    ext = track(serve, extender(url, filterVerb="filter", prioritizeVerb="prioritize", weight=1))
    with pytest.raises(ExtenderError, match="code 404"):
        await ext.prioritize(make_pod("p").info(), nodes("n1"))


# --- the scheduler-side filter loop ----------------------------------------------------------------


async def test_find_nodes_that_pass_extenders_records_statuses(serve) -> None:
    url = await serve(make_extender_app(filter=_label_filter))
    first = track(serve, extender(url, filterVerb="filter"))
    canned = Canned({"filter": {"NodeNames": ["a1"], "FailedNodes": {"a2": "second says no"}}})
    second = track(serve, extender(await serve(canned.app()), filterVerb="filter", nodeCacheCapable=True))
    infos = nodes("a1", "a2", "b1", "n-gone")
    statuses = {"b1": Status.unschedulable("plugin reason"), "n-gone": Status.unschedulable("earlier")}

    passed = await find_nodes_that_pass_extenders(
        [first, second], make_pod("p").label("want", "a").info(), infos, statuses
    )

    assert [n.name for n in passed] == ["a1"]
    # The second extender saw only what the first let through.
    assert canned.bodies["filter"]["NodeNames"] == ["a1", "a2"]
    assert statuses["b1"] == Status.unschedulable("plugin reason", "wrong prefix")
    # Unresolvable wins over failed for the same node, and keeps the reasons it had.
    assert statuses["n-gone"] == Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "earlier", "node is gone")
    assert statuses["a2"] == Status.unschedulable("second says no")


@pytest.mark.parametrize("ignorable", [True, False], ids=["ignorable-skipped", "not-ignorable-raises"])
async def test_find_nodes_that_pass_extenders_failing_extender(serve, ignorable: bool) -> None:
    url = await serve(Canned({"filter": {"Error": "down"}}).app())
    ext = track(serve, extender(url, filterVerb="filter", ignorable=ignorable))
    infos = nodes("n1", "n2")
    if ignorable:
        assert await find_nodes_that_pass_extenders([ext], make_pod("p").info(), infos, {}) == infos
    else:
        with pytest.raises(ExtenderError, match="down"):
            await find_nodes_that_pass_extenders([ext], make_pod("p").info(), infos, {})


# --- managed resources -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("managed", "build", "interested"),
    [
        ([], lambda: make_pod("p"), True),
        (["example.com/foo"], lambda: make_pod("p").req(cpu="1"), False),
        (["example.com/foo"], lambda: make_pod("p").req(cpu="1").req(example_com_foo="1"), True),
        (["example.com/foo"], lambda: make_pod("p").lim(example_com_foo="2"), True),
        (["example.com/foo"], lambda: make_pod("p").init_req(example_com_foo="1"), True),
        (["example.com/foo"], lambda: make_pod("p").req(example_com_bar="1"), False),
    ],
    ids=[
        "none-managed-all-pods",
        "plain-pod",
        "container-request",
        "container-limit",
        "init-container",
        "other-resource",
    ],
)
def test_is_interested(managed: list[str], build: Callable[[], Any], interested: bool) -> None:
    ext = extender("http://127.0.0.1:9", filterVerb="f", managedResources=[{"name": m} for m in managed])
    assert ext.is_interested(build().info()) is interested


async def test_uninterested_extender_is_not_called(serve) -> None:
    canned = Canned({"filter": {"NodeNames": []}, "prioritize": [{"Host": "n1", "Score": 10}]})
    url = await serve(canned.app())
    ext = track(
        serve,
        extender(
            url,
            filterVerb="filter",
            prioritizeVerb="prioritize",
            weight=1,
            nodeCacheCapable=True,
            managedResources=[{"name": "example.com/foo"}],
        ),
    )
    infos = nodes("n1")
    pod = make_pod("p").req(cpu="1").info()
    assert await find_nodes_that_pass_extenders([ext], pod, infos, {}) == infos
    assert await prioritize_with_extenders([ext], pod, infos) == {}
    assert canned.bodies == {}


# --- prioritize ------------------------------------------------------------------------------------


async def test_prioritize_scores_and_weight(serve) -> None:
    calls: list[list[str]] = []

    def by_length(pod: dict, node_list: list[dict]) -> dict[str, int]:
        calls.append([n["metadata"]["name"] for n in node_list])
        return {n["metadata"]["name"]: len(n["metadata"]["name"]) for n in node_list}

    url = await serve(make_extender_app(prioritize=by_length))
    ext = track(serve, extender(url, prioritizeVerb="prioritize", weight=3, nodeCacheCapable=True))
    scores, weight = await ext.prioritize(make_pod("p").info(), nodes("n1", "node2"))
    assert scores == [("n1", 2), ("node2", 5)]
    assert weight == 3
    assert calls == [["n1", "node2"]]


async def test_prioritize_wire_shape(serve) -> None:
    canned = Canned({"prioritize": [{"Host": "n1", "Score": 7}, {"Host": "n2", "Score": 0}]})
    ext = track(serve, extender(await serve(canned.app()), prioritizeVerb="prioritize", weight=2))
    assert await ext.prioritize(make_pod("p").info(), nodes("n1", "n2")) == ([("n1", 7), ("n2", 0)], 2)
    assert [n["metadata"]["name"] for n in canned.bodies["prioritize"]["Nodes"]["items"]] == ["n1", "n2"]


async def test_no_prioritize_verb_scores_zero_with_weight_zero() -> None:
    ext = extender("http://127.0.0.1:9", filterVerb="f")
    assert await ext.prioritize(make_pod("p").info(), nodes("n1", "n2")) == ([("n1", 0), ("n2", 0)], 0)


@pytest.mark.parametrize(
    ("reply", "error"),
    [({"Host": "n1"}, "expected a HostPriorityList"), ([{"Host": "n1", "Score": 2.5}], "expected an integer")],
    ids=["not-a-list", "fractional-score"],
)
async def test_prioritize_bad_results_raise(serve, reply: Any, error: str) -> None:
    url = await serve(Canned({"prioritize": reply}).app())
    ext = track(serve, extender(url, prioritizeVerb="prioritize", weight=1))
    with pytest.raises(ExtenderError, match=error):
        await ext.prioritize(make_pod("p").info(), nodes("n1"))


async def test_prioritize_with_extenders_scales_and_ignores_failures(serve) -> None:
    good = track(
        serve,
        extender(
            await serve(Canned({"prioritize": [{"Host": "n1", "Score": 10}, {"Host": "n2", "Score": 3}]}).app()),
            prioritizeVerb="prioritize",
            weight=2,
        ),
    )
    failing = track(serve, extender(await serve(Canned({}, status=500).app()), prioritizeVerb="prioritize", weight=5))
    out = await prioritize_with_extenders([good, failing], make_pod("p").info(), nodes("n1", "n2"))
    # score × weight × (MaxNodeScore 100 / MaxExtenderPriority 10)
    assert out == {"n1": [(good.name, 200)], "n2": [(good.name, 60)]}


async def test_prioritize_exception_is_http_500(serve) -> None:
    def broken(pod: dict, node_list: list[dict]) -> dict[str, int]:
        raise ValueError("nope")

    ext = track(
        serve, extender(await serve(make_extender_app(prioritize=broken)), prioritizeVerb="prioritize", weight=1)
    )
    with pytest.raises(ExtenderError, match="code 500"):
        await ext.prioritize(make_pod("p").info(), nodes("n1"))


# --- bind ------------------------------------------------------------------------------------------


async def test_bind_sends_binding_args(serve) -> None:
    bound: list[tuple[str, str, str, str]] = []

    async def bind(ns: str, name: str, uid: str, node: str) -> None:
        bound.append((ns, name, uid, node))

    ext = track(serve, extender(await serve(make_extender_app(bind=bind)), bindVerb="bind"))
    pod = make_pod("web", "shop").uid("u-1").info()
    assert binder_for([extender("http://x", filterVerb="f"), ext], pod) is ext
    await ext.bind(pod, "n7")
    assert bound == [("shop", "web", "u-1", "n7")]


async def test_bind_wire_shape_and_error(serve) -> None:
    canned = Canned({"bind": {"Error": "node full"}})
    ext = track(serve, extender(await serve(canned.app()), bindVerb="bind"))
    with pytest.raises(ExtenderError, match="^node full$"):
        await ext.bind(make_pod("web").uid("u-2").info(), "n1")
    assert canned.bodies["bind"] == {"PodName": "web", "PodNamespace": "default", "PodUID": "u-2", "Node": "n1"}


async def test_bind_exception_becomes_error_field(serve) -> None:
    def refuse(ns: str, name: str, uid: str, node: str) -> None:
        raise PermissionError("not allowed")

    ext = track(serve, extender(await serve(make_extender_app(bind=refuse)), bindVerb="bind"))
    with pytest.raises(ExtenderError, match="not allowed"):
        await ext.bind(make_pod("web").info(), "n1")


async def test_bind_without_verb_raises() -> None:
    with pytest.raises(ExtenderError, match="unexpected empty bindVerb"):
        await extender("http://127.0.0.1:9", filterVerb="f").bind(make_pod("p").info(), "n1")


# --- preemption ------------------------------------------------------------------------------------


def _preemption_world():
    v1 = make_pod("v1").uid("uid-v1").node("n1")
    v2 = make_pod("v2").uid("uid-v2").node("n1")
    v3 = make_pod("v3").uid("uid-v3").node("n2")
    infos = as_node_infos([make_node("n1"), make_node("n2")], pods=[v1, v2, v3])
    by_name = {ni.name: ni for ni in infos}
    pods = {p.name: p for ni in infos for p in ni.pods}
    victims = {"n1": Victims([pods["v1"], pods["v2"]], 1), "n2": Victims([pods["v3"]], 0)}
    return by_name, pods, victims


@pytest.mark.parametrize("cache", [True, False], ids=["NodeNameToMetaVictims", "NodeNameToVictims"])
async def test_process_preemption_args_and_result(serve, cache: bool) -> None:
    reply = {"NodeNameToMetaVictims": {"n1": {"Pods": [{"UID": "uid-v2"}], "NumPDBViolations": 0}}}
    canned = Canned({"preempt": reply})
    ext = track(serve, extender(await serve(canned.app()), preemptVerb="preempt", nodeCacheCapable=cache))
    by_name, pods, victims = _preemption_world()

    out = await ext.process_preemption(make_pod("hi").priority(100).info(), victims, by_name)

    body = canned.bodies["preempt"]
    assert set(body) == {"Pod", "NodeNameToVictims", "NodeNameToMetaVictims"}
    assert body["Pod"]["metadata"]["name"] == "hi"
    if cache:
        assert body["NodeNameToVictims"] is None
        assert body["NodeNameToMetaVictims"] == {
            "n1": {"Pods": [{"UID": "uid-v1"}, {"UID": "uid-v2"}], "NumPDBViolations": 1},
            "n2": {"Pods": [{"UID": "uid-v3"}], "NumPDBViolations": 0},
        }
    else:
        assert body["NodeNameToMetaVictims"] is None
        assert [p["metadata"]["name"] for p in body["NodeNameToVictims"]["n1"]["Pods"]] == ["v1", "v2"]
        assert body["NodeNameToVictims"]["n1"]["NumPDBViolations"] == 1
    assert set(out) == {"n1"}
    assert out["n1"].pods == [pods["v2"]]
    assert out["n1"].num_pdb_violations == 0


@pytest.mark.parametrize(
    ("reply", "error"),
    [
        (
            {"NodeNameToMetaVictims": {"n1": {"Pods": [{"UID": "uid-v3"}]}}},
            r"claims to preempt pod \(UID: uid-v3\) on node: n1",
        ),
        ({"NodeNameToMetaVictims": {"n9": {"Pods": []}}}, "nodeinfo not found for node name 'n9'"),
    ],
    ids=["victim-not-on-node", "unknown-node"],
)
async def test_process_preemption_inconsistent_result_raises(serve, reply: Any, error: str) -> None:
    ext = track(serve, extender(await serve(Canned({"preempt": reply}).app()), preemptVerb="preempt"))
    by_name, _, victims = _preemption_world()
    with pytest.raises(ExtenderError, match=error):
        await ext.process_preemption(make_pod("hi").info(), victims, by_name)


async def test_make_extender_app_preempt_and_loop(serve) -> None:
    seen: list[dict] = []

    def keep_n2(pod: dict, victims: dict) -> dict:
        seen.append(victims)
        return {k: v for k, v in victims.items() if k == "n2"}

    url = await serve(make_extender_app(preempt=keep_n2))
    ext = track(serve, extender(url, preemptVerb="preempt"))
    no_preempt = extender("http://127.0.0.1:9", filterVerb="f")
    by_name, pods, victims = _preemption_world()

    out = await preempt_with_extenders([no_preempt, ext], make_pod("hi").info(), victims, by_name)

    # Whole pods on the wire reach the function as UIDs.
    assert seen[0]["n1"] == {"Pods": [{"UID": "uid-v1"}, {"UID": "uid-v2"}], "NumPDBViolations": 1}
    assert list(out) == ["n2"]
    assert out["n2"].pods == [pods["v3"]]


async def test_process_preemption_without_verb_raises() -> None:
    by_name, _, victims = _preemption_world()
    with pytest.raises(ExtenderError, match="preempt verb is not defined"):
        await extender("http://127.0.0.1:9", filterVerb="f").process_preemption(make_pod("p").info(), victims, by_name)


# --- transport -------------------------------------------------------------------------------------


async def test_http_timeout(serve) -> None:
    url = await serve(Canned({"filter": {"NodeNames": []}}, delay=3.0).app())
    ext = track(serve, extender(url, filterVerb="filter", httpTimeout="300ms"))
    assert ext.timeout == pytest.approx(0.3)
    started = time.monotonic()
    with pytest.raises(ExtenderError, match=r"httpTimeout \(0.3s\)"):
        await ext.filter(make_pod("p").info(), nodes("n1"))
    assert 0.25 <= time.monotonic() - started < 2.0


def test_http_timeout_defaults_to_five_seconds() -> None:
    assert extender("http://x", filterVerb="f").timeout == 5.0
    assert extender("http://x", filterVerb="f", httpTimeout="0s").timeout == 5.0


async def test_connection_refused_is_extender_error(serve) -> None:
    srv = await serve_extender(make_extender_app(filter=lambda p, n: n))
    url = srv.url
    await srv.close()
    ext = track(serve, extender(url, filterVerb="filter"))
    with pytest.raises(ExtenderError, match=f'Post "{url}/filter"'):
        await ext.filter(make_pod("p").info(), nodes("n1"))


async def test_session_is_reused_and_reopened_after_close(serve) -> None:
    ext = track(serve, extender(await serve(make_extender_app(filter=lambda p, n: n)), filterVerb="filter"))
    await ext.filter(make_pod("p").info(), nodes("n1"))
    first = ext._session
    await ext.filter(make_pod("p").info(), nodes("n1"))
    assert ext._session is first
    await ext.close()
    assert first is not None and first.closed
    assert len((await ext.filter(make_pod("p").info(), nodes("n1")))[0]) == 1


# --- TLS -------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("openssl is not installed; TLS tests need it to make a certificate")
    d = tmp_path_factory.mktemp("tls")
    out: dict[str, Path] = {}
    for name in ("server", "other"):
        cert, key = d / f"{name}.crt", d / f"{name}.key"
        subprocess.run(
            [openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2"]
            + ["-keyout", str(key), "-out", str(cert), "-subj", "/CN=extender.test"]
            + ["-addext", "subjectAltName=IP:127.0.0.1,DNS:extender.test"],
            check=True,
            capture_output=True,
        )
        out[f"{name}.crt"], out[f"{name}.key"] = cert, key
    return out


async def _tls_server(serve, certs: dict[str, Path]) -> str:
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(certs["server.crt"], certs["server.key"])
    url = await serve(make_extender_app(filter=lambda pod, ns: ns), ssl_context=ctx)
    assert url.startswith("https://")
    return url


@pytest.mark.parametrize(
    ("tls", "ok"),
    [
        (lambda c: None, True),
        (lambda c: {"caData": base64.b64encode(c["server.crt"].read_bytes()).decode()}, True),
        (lambda c: {"caFile": str(c["server.crt"]), "serverName": "extender.test"}, True),
        (lambda c: {"caFile": str(c["other.crt"])}, False),
    ],
    ids=["https-without-ca-skips-verification", "ca-data", "ca-file-and-server-name", "wrong-ca-refused"],
)
async def test_tls(serve, certs: dict[str, Path], tls: Callable[[dict[str, Path]], Any], ok: bool) -> None:
    url = await _tls_server(serve, certs)
    ext = track(serve, extender(url, filterVerb="filter", enableHTTPS=True, tlsConfig=tls(certs)))
    if ok:
        feasible, _, _ = await ext.filter(make_pod("p").info(), nodes("n1"))
        assert [n.name for n in feasible] == ["n1"]
    else:
        with pytest.raises(ExtenderError, match="certificate"):
            await ext.filter(make_pod("p").info(), nodes("n1"))


@pytest.mark.parametrize(
    ("tls", "error"),
    [
        (lambda c: {"insecure": True, "caFile": str(c["server.crt"])}, "insecure flag is not allowed"),
        (lambda c: {"caFile": str(c["server.crt"]) + ".missing"}, "tlsConfig: .*No such file"),
        (lambda c: {"certFile": str(c["server.crt"])}, "needs both a certificate and a key"),
        (lambda c: {"caData": "%%%"}, "caData: not valid base64"),
    ],
    ids=["insecure-with-ca", "missing-ca-file", "cert-without-key", "ca-data-not-base64"],
)
def test_bad_tls_config_is_refused_at_construction(
    certs: dict[str, Path], tls: Callable[[dict[str, Path]], Any], error: str
) -> None:
    with pytest.raises(ExtenderError, match=error):
        extender("https://127.0.0.1:1", filterVerb="f", tlsConfig=tls(certs))
