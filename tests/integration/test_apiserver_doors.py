"""Every door of the embedded API server with the same limits and kube-apiserver's words, over
real HTTP: the simulator API's import as the pods endpoint (3 MiB bodies, 1.5 MiB objects), no
Python exception text in any answer, long values truncated in validation messages, and a
request's head as long as Go's server reads it."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest

from kubesched.cluster.store import Store
from kubesched.sim.apiserver.connections import MAX_HEAD_BYTES, MAX_HEADER_BYTES
from kubesched.sim.apiserver.errors import MAX_REQUEST_BODY_BYTES, MAX_STORED_OBJECT_BYTES
from kubesched.sim.apiserver.server import APIServer
from kubesched.sim.serve import _import, _reset
from kubesched.sim.simulator_api import SimulatorAPI

Obj = dict[str, Any]


@pytest.fixture
async def served() -> AsyncIterator[APIServer]:
    """An API server with the simulator API mounted as ``sim serve`` mounts it (no scheduler)."""
    store = Store()
    srv = APIServer(store)
    srv.simulator = SimulatorAPI(store, lambda: _reset(store, {}), lambda docs: _import(store, docs))
    await srv.start()
    try:
        yield srv
    finally:
        await srv.stop()


async def call(server: APIServer, method: str, path: str, body: bytes, ctype: str = "application/json") -> Any:
    async with aiohttp.ClientSession() as s:
        async with s.request(method, server.url + path, data=body, headers={"Content-Type": ctype}) as r:
            return r.status, await r.read()


def pod(name: str, padding: int = 0) -> Obj:
    # The bulk goes where nothing validates it, so only the size limits can refuse it.
    container: Obj = {"name": "c", "image": "nginx", "args": ["x" * padding] if padding else []}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": {"containers": [container]}}


# --- the same limits at every door ---------------------------------------------------------------


async def test_import_refuses_an_object_etcd_would_refuse_as_the_pods_endpoint_does(served: APIServer) -> None:
    big = pod("big", padding=MAX_STORED_OBJECT_BYTES + 1024)
    body = json.dumps({"apiVersion": "v1", "kind": "List", "items": [big]}).encode()
    assert len(body) < MAX_REQUEST_BODY_BYTES
    direct = await call(served, "POST", "/api/v1/namespaces/default/pods", json.dumps(big).encode())
    imported = await call(served, "POST", "/api/v1/import", body)
    for status, raw in (direct, imported):
        assert status == 413, raw[:300]
        answer = json.loads(raw)
        assert (answer["reason"], answer["message"]) == ("RequestEntityTooLarge", "etcdserver: request is too large")
    assert served.store.list("Pod")[0] == []


@pytest.mark.parametrize(
    "path",
    ["/api/v1/import", "/api/v1/schedulerconfiguration", "/api/v1/namespaces/default/pods"],
    ids=["import", "config", "pods"],
)
async def test_one_byte_over_3_mib_is_413_in_kube_apiservers_words_at_every_door(served: APIServer, path: str) -> None:
    status, raw = await call(served, "POST", path, b"#" * (MAX_REQUEST_BODY_BYTES + 1), "application/yaml")
    assert status == 413, raw[:300]
    answer = json.loads(raw)
    assert answer["message"] == f"Request entity too large: limit is {MAX_REQUEST_BODY_BYTES}"
    status, raw = await call(served, "POST", path, b"#" * MAX_REQUEST_BODY_BYTES, "application/yaml")
    assert status != 413, raw[:300]  # at the limit: read, and answered for what it holds


async def test_import_within_the_limits_still_imports(served: APIServer) -> None:
    body = json.dumps({"apiVersion": "v1", "kind": "List", "items": [pod("small", padding=1000)]}).encode()
    status, raw = await call(served, "POST", "/api/v1/import", body)
    assert status == 201, raw
    assert [p["metadata"]["name"] for p in served.store.list("Pod")[0]] == ["small"]


# --- no Python exception text reaches a client ---------------------------------------------------

#: What Python's own messages look like; none may reach a client.
PYTHON_WORDS = ("set_int_max_str_digits", "Exceeds the limit", "codec can't decode", "Traceback", "Error(")


class Exploding:
    """A mounted API whose handler fails with a bug's message (a handler bug cannot be caused
    through the real ones on purpose: this stands for it)."""

    paths = frozenset({"explode"})

    async def handle(self, method: str, rest: list[str], query: Any, body: bytes) -> tuple[int, Any, str]:
        raise KeyError("secret-internal-detail /srv/app/state.py line 12")


async def test_a_failing_handler_answers_kube_apiservers_500_and_logs_the_detail(
    caplog: pytest.LogCaptureFixture,
) -> None:
    srv = APIServer(Store())
    srv.simulator = Exploding()
    await srv.start()
    try:
        with caplog.at_level(logging.ERROR, logger="kubesched.sim.apiserver.server"):
            status, raw = await call(srv, "GET", "/api/v1/explode", b"")
    finally:
        await srv.stop()
    assert status == 500
    answer = json.loads(raw)
    assert (answer["reason"], answer["message"]) == (
        "InternalError",
        "This request caused apiserver to panic. Look in the logs for details.",
    )
    assert "secret-internal-detail" not in raw.decode()
    assert "secret-internal-detail" in caplog.text  # the operator still sees what failed


@pytest.mark.parametrize(
    ("body", "ctype"),
    [
        (b"apiVersion: v1\nkind: List\nitems:\n- {kind: Node, metadata: {name: n, x: " + b"9" * 5001 + b"}}\n", "yaml"),
        ('{"kind": "List", "items": []}'.encode("utf-16-be"), "json"),
        (b"kind: List\nitems: [\xff\xfe\xfd]\n", "yaml"),
    ],
    ids=["5001-digits", "utf-16", "bad-bytes"],
)
async def test_no_python_text_in_the_simulator_apis_answers(served: APIServer, body: bytes, ctype: str) -> None:
    status, raw = await call(served, "POST", "/api/v1/import", body, f"application/{ctype}")
    assert status >= 400
    text = raw.decode("utf-8", errors="replace")
    assert not [w for w in PYTHON_WORDS if w in text], text


# --- long values truncated in validation messages ------------------------------------------------


@pytest.mark.parametrize(
    ("where", "field"),
    [("label", "metadata.labels"), ("name", "metadata.name")],
    ids=["label", "name"],
)
async def test_a_1_mib_value_is_shown_truncated_not_echoed_whole(server: APIServer, where: str, field: str) -> None:
    value = "v" * (1024 * 1024)
    obj = pod("p")
    if where == "label":
        obj["metadata"]["labels"] = {"big": value}
    else:
        obj["metadata"]["name"] = value
    status, raw = await call(server, "POST", "/api/v1/namespaces/default/pods", json.dumps(obj).encode())
    assert status == 422
    # Whole at most once: a pod's name stays whole in the Status's details, as upstream has it.
    assert raw.count(value.encode()) == (1 if where == "name" else 0)
    assert len(raw) < len(value) + 8 * 1024, len(raw)
    answer = json.loads(raw)
    shown = '"' + "v" * 1024 + '"...TRUNCATED'
    assert f"is invalid: {field}: Invalid value: {shown}: " in answer["message"], answer["message"][:80]
    assert [c["message"].startswith(f"Invalid value: {shown}: ") for c in answer["details"]["causes"]] == [True]


async def test_a_short_bad_value_is_still_shown_whole(server: APIServer) -> None:
    obj = pod("p")
    obj["metadata"]["labels"] = {"k": "not ok!"}
    status, raw = await call(server, "POST", "/api/v1/namespaces/default/pods", json.dumps(obj).encode())
    assert status == 422
    assert 'metadata.labels: Invalid value: "not ok!": a valid label must be' in json.loads(raw)["message"]


# --- warnings as kube-apiserver writes them ------------------------------------------------------


async def warned(server: APIServer, spec_extra: Obj, name: str = "p") -> tuple[int, str]:
    obj = pod(name)
    obj["spec"].update(spec_extra)
    async with aiohttp.ClientSession() as s:
        async with s.post(server.url + "/api/v1/namespaces/default/pods", json=obj) as r:
            return r.status, r.headers.get("Warning", "")


async def test_a_warning_escapes_its_quotes_as_kube_apiserver_does(server: APIServer) -> None:
    assert await warned(server, {"colour": "red"}) == (201, '299 - "unknown field \\"spec.colour\\""')


async def test_warnings_are_bounded_so_that_a_client_can_read_the_answer(server: APIServer) -> None:
    status, header = await warned(server, {"k" * 20000: 1, "colour": "red"})
    assert status == 201
    # Past 4096 characters each warning is cut to its first 256 (the escapes come after).
    cut = ('unknown field "spec.' + "k" * 20000)[:256].replace('"', '\\"')
    assert header == f'299 - "{cut}", 299 - "unknown field \\"spec.colour\\""'


@pytest.mark.parametrize(
    ("body", "said"),
    [
        (b"a: b: c\n", "error converting YAML to JSON: yaml: line 1: mapping values are not allowed in this context"),
        (
            b"items:\n- x: " + b"9" * 5001 + b"\n",
            "error converting YAML to JSON: yaml: line 2: an integer of 5001 digits, more than the limit of 400",
        ),
    ],
    ids=["syntax", "5001-digits"],
)
async def test_a_yaml_body_that_does_not_parse_is_a_400_in_yamls_words(
    served: APIServer, body: bytes, said: str
) -> None:
    status, raw = await call(served, "POST", "/api/v1/import", body, "application/yaml")
    assert status == 400
    assert json.loads(raw)["message"] == f"the body is neither JSON nor YAML: {said}"


@pytest.mark.parametrize(
    "body",
    [
        # A ConfigMap whose name is not UTF-8.
        b"k8s\x00\x0a\x0f\x0a\x02v1\x12\x09ConfigMap\x12\x06\x0a\x04\x0a\x02\xff\xfe",
        # A content encoding that is not UTF-8.
        b"k8s\x00\x19\xaa\xa9\xaf\x8f\xb8\xc1",
    ],
    ids=["name-not-utf-8", "encoding-not-utf-8"],
)
async def test_protobuf_that_does_not_decode_is_refused_without_python_text(server: APIServer, body: bytes) -> None:
    status, raw = await call(
        server, "POST", "/api/v1/namespaces/default/configmaps", body, "application/vnd.kubernetes.protobuf"
    )
    assert status == 415, raw
    text = raw.decode()
    assert not [w for w in PYTHON_WORDS if w in text], text


@pytest.mark.parametrize(
    ("ops", "said"),
    [
        (
            [{"nop": "x" * 100_000}],
            "invalid JSON patch operation: " + ("map[nop:" + "x" * 100_000)[:1024] + "...TRUNCATED",
        ),
        ([{"op": "add", "path": "spec", "value": 1}], "invalid JSON pointer spec"),
        ([{"op": "remove", "path": "/nope/x"}], "doc is missing path: /nope/x: missing value"),
    ],
    ids=["bad-op", "bad-pointer", "missing-path"],
)
async def test_json_patch_errors_show_values_as_go_prints_them_not_python(
    server: APIServer, ops: list[Obj], said: str
) -> None:
    assert (await call(server, "POST", "/api/v1/namespaces/default/pods", json.dumps(pod("p")).encode()))[0] == 201
    body = json.dumps(ops).encode()
    status, raw = await call(server, "PATCH", "/api/v1/namespaces/default/pods/p", body, "application/json-patch+json")
    assert status == 422
    assert json.loads(raw)["message"] == said


async def test_an_unsupported_export_format_is_quoted_as_go_quotes_it(served: APIServer) -> None:
    status, raw = await call(served, "GET", "/api/v1/export?format=x'ml", b"")
    assert status == 400
    assert json.loads(raw)["message"] == 'format: Unsupported value: "x\'ml": supported values: "json", "yaml"'


# --- a request's head: as long as Go's server reads it, and Go's words past that -----------------


async def raw_request(server: APIServer, head: bytes) -> tuple[int, bytes, bytes]:
    """Send ``head`` as it is; (status, response headers, body) as the server wrote them."""
    reader, writer = await asyncio.open_connection(server.host, server.port)
    try:
        writer.write(head)
        await writer.drain()
        answer = await asyncio.wait_for(reader.read(), 10)
    finally:
        writer.close()
    top, _, body = answer.partition(b"\r\n\r\n")
    return int(top.split(b" ", 2)[1]), top, body


def get_head(path: str, *headers: str) -> bytes:
    lines = [f"GET {path} HTTP/1.1", "Host: localhost", "Connection: close", *headers, "", ""]
    return "\r\n".join(lines).encode()


@pytest.mark.parametrize("length", [9000, MAX_HEADER_BYTES], ids=["9000", "1MiB"])
async def test_a_long_url_within_gos_limit_is_served(served: APIServer, length: int) -> None:
    status, _, body = await raw_request(served, get_head("/api/v1/namespaces/" + "n" * length))
    assert status == 404
    assert json.loads(body)["reason"] == "NotFound"


@pytest.mark.parametrize(
    "head",
    [
        get_head("/api/v1/namespaces/" + "n" * MAX_HEAD_BYTES),
        get_head("/api/v1/namespaces", *(f"X-Pad-{i}: {'v' * 60_000}" for i in range(20))),
        get_head("/api/v1/namespaces", *(f"X-Pad-{i}: v" for i in range(200))),
    ],
    ids=["url", "headers-together", "many-headers"],
)
async def test_a_head_longer_than_go_reads_is_431_in_gos_words(
    served: APIServer, head: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        status, top, body = await raw_request(served, head)
    assert (status, body) == (431, b"431 Request Header Fields Too Large")
    assert b"Content-Type: text/plain; charset=utf-8" in top
    assert not caplog.records, caplog.text  # a client's error: nothing for the operator


async def test_a_request_that_does_not_parse_is_400_in_gos_words(
    served: APIServer, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        status, _, body = await raw_request(served, b"G@T / HTTP/1.1\r\nHost: localhost\r\n\r\n")
    assert (status, body) == (400, b"400 Bad Request")
    assert not caplog.records, caplog.text


# --- malformed bodies of the verbs that store nothing: the decoder's 400 -------------------------

ADMIN = "admin-token"


@pytest.fixture
async def guarded() -> AsyncIterator[APIServer]:
    """An API server with an admin token: a TokenReview of it authenticates."""
    srv = APIServer(Store(), token=ADMIN)
    await srv.start()
    try:
        yield srv
    finally:
        await srv.stop()


async def post(server: APIServer, path: str, body: Any) -> tuple[int, str]:
    headers = {"Authorization": f"Bearer {ADMIN}"} if server.token else {}
    async with aiohttp.ClientSession(headers=headers) as s:
        async with s.post(server.url + path, data=json.dumps(body).encode()) as r:
            return r.status, await r.text()


def decoding(kind: str, error: str) -> str:
    return f'{kind} in version "v1" cannot be handled as a {kind}: json: cannot unmarshal {error}'


SAR = "/apis/authorization.k8s.io/v1/subjectaccessreviews"
TOKEN_REVIEW = "/apis/authentication.k8s.io/v1/tokenreviews"


@pytest.mark.parametrize(
    ("body", "error"),
    [
        ({"metadata": 5}, "number into Go struct field Eviction.metadata of type v1.ObjectMeta"),
        ({"deleteOptions": 5}, "number into Go struct field Eviction.deleteOptions of type v1.DeleteOptions"),
        (
            {"deleteOptions": {"dryRun": "All"}},
            "string into Go struct field DeleteOptions.deleteOptions.dryRun of type []string",
        ),
    ],
    ids=["metadata", "deleteOptions", "dryRun"],
)
async def test_a_malformed_eviction_is_the_decoders_400(served: APIServer, body: Obj, error: str) -> None:
    assert (await call(served, "POST", "/api/v1/namespaces/default/pods", json.dumps(pod("p")).encode()))[0] == 201
    status, text = await post(served, "/api/v1/namespaces/default/pods/p/eviction", body)
    assert status == 400, text
    assert json.loads(text)["message"] == decoding("Eviction", error)
    assert served.store.get("Pod", "default", "p")  # not evicted


@pytest.mark.parametrize(
    ("path", "spec", "error"),
    [
        (
            SAR,
            {"user": "u", "groups": 5},
            "number into Go struct field SubjectAccessReviewSpec.spec.groups of type []string",
        ),
        (SAR, {"user": []}, "array into Go struct field SubjectAccessReviewSpec.spec.user of type string"),
        (
            SAR,
            {"user": "u", "nonResourceAttributes": 5},
            "number into Go struct field SubjectAccessReviewSpec.spec.nonResourceAttributes "
            "of type v1.NonResourceAttributes",
        ),
        (
            SAR,
            {"user": "u", "extra": 5},
            "number into Go struct field SubjectAccessReviewSpec.spec.extra of type map[string]v1.ExtraValue",
        ),
        (
            SAR,
            {"user": "u", "extra": {"scopes": "x"}},
            "string into Go struct field SubjectAccessReviewSpec.spec.extra of type v1.ExtraValue",
        ),
        (
            TOKEN_REVIEW,
            {"token": ADMIN, "audiences": 5},
            "number into Go struct field TokenReviewSpec.spec.audiences of type []string",
        ),
        (TOKEN_REVIEW, {"token": 5}, "number into Go struct field TokenReviewSpec.spec.token of type string"),
    ],
    ids=["sar-groups", "sar-user", "sar-non-resource", "sar-extra", "sar-extra-value", "tr-audiences", "tr-token"],
)
async def test_a_malformed_review_is_the_decoders_400(guarded: APIServer, path: str, spec: Obj, error: str) -> None:
    kind = "SubjectAccessReview" if path == SAR else "TokenReview"
    status, text = await post(guarded, path, {"kind": kind, "spec": spec})
    assert status == 400, text
    assert json.loads(text)["message"] == decoding(kind, error)


#: values of every JSON type, for fields of every type
WRONG = [5, 1.5, "x", True, [], [5], ["x"], {}, {"a": 5}, {"a": [5]}, None]
#: (path, kind, a body that is valid, the fields to set to each of WRONG)
REVIEWS = [
    (
        SAR,
        "SubjectAccessReview",
        {"spec": {"user": "u", "groups": ["g"], "nonResourceAttributes": {"path": "/healthz", "verb": "get"}}},
        [
            ("metadata",), ("status",), ("spec",), ("spec", "user"), ("spec", "uid"), ("spec", "groups"),
            ("spec", "extra"), ("spec", "nonResourceAttributes"), ("spec", "nonResourceAttributes", "path"),
            ("spec", "nonResourceAttributes", "verb"), ("spec", "resourceAttributes"),
        ],
    ),
    (
        SAR,
        "SubjectAccessReview",
        {"spec": {"user": "u", "resourceAttributes": {"verb": "get", "resource": "pods"}}},
        [
            ("spec", "resourceAttributes", "verb"), ("spec", "resourceAttributes", "namespace"),
            ("spec", "resourceAttributes", "fieldSelector"), ("spec", "resourceAttributes", "labelSelector"),
        ],
    ),
    (
        TOKEN_REVIEW,
        "TokenReview",
        {"spec": {"token": ADMIN, "audiences": ["api"]}},
        [("metadata",), ("status",), ("spec",), ("spec", "token"), ("spec", "audiences")],
    ),
]  # fmt: skip


async def test_reviews_with_fields_of_every_wrong_type_are_4xx_in_kube_apiservers_words(
    guarded: APIServer, caplog: pytest.LogCaptureFixture
) -> None:
    answers: dict[int, int] = {}
    with caplog.at_level(logging.ERROR):
        for path, kind, valid, fields in REVIEWS:
            for field in fields:
                for value in WRONG:
                    body = {"kind": kind, **json.loads(json.dumps(valid))}
                    where = body
                    for key in field[:-1]:
                        where = where[key]
                    where[field[-1]] = value
                    status, text = await post(guarded, path, body)
                    answers[status] = answers.get(status, 0) + 1
                    assert status in (201, 400, 422), (field, value, status, text)
                    assert not [w for w in PYTHON_WORDS if w in text], text
    assert not caplog.records, caplog.text  # no traceback in the log either
    assert answers[400] > 50 and answers[201] > 10  # the wrong types refused, the right ones answered
