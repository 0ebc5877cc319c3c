"""Authentication is decided on the path the router serves: every spelling of a path that reaches
a route — doubled slashes, an encoded slash, ``.`` and ``..`` segments, a trailing slash, another
case — is refused without a token (and with a wrong one) unless the route itself is open.

The requests are written byte for byte on a socket, so no client library cleans a path first."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from kubesched.cluster.store import Store
from kubesched.sim.apiserver.paths import canonical_path
from kubesched.sim.apiserver.server import APIServer
from kubesched.sim.serve import _import, _reset
from kubesched.sim.simulator_api import SimulatorAPI

TOKEN = "the-right-token"

#: (method, path) of every kind of route: resources read and written, the simulator's API, the
#: fault and stats endpoints, discovery, OpenAPI and the review APIs
PROTECTED = [
    ("GET", "/api/v1/namespaces/default/secrets/s"),
    ("GET", "/api/v1/namespaces/default/pods"),
    ("POST", "/api/v1/namespaces/default/pods"),
    ("DELETE", "/api/v1/namespaces/default/pods/p"),
    ("PUT", "/api/v1/reset"),
    ("GET", "/api/v1/export"),
    ("GET", "/api/v1/results"),
    ("GET", "/api"),
    ("GET", "/apis"),
    ("GET", "/apis/scheduling.k8s.io/v1"),
    ("GET", "/openapi/v2"),
    ("GET", "/kubesched/faults"),
    ("GET", "/kubesched/stats"),
    ("POST", "/apis/authentication.k8s.io/v1/tokenreviews"),
]

#: open to anyone, as kube-apiserver's public-info paths, and the web view's page
OPEN = [("GET", "/healthz"), ("GET", "/livez"), ("GET", "/readyz"), ("GET", "/version"), ("GET", "/")]


def spellings(path: str) -> list[str]:
    """Other ways to write ``path`` that a server might clean into it."""
    inner = path[1:]
    out = [
        path,
        "/" + path,
        "//" + inner,
        "/%2F" + inner,
        "/%2f" + inner,
        "/./" + inner,
        "/x/../" + inner,
        "/../" + inner,
        "/healthz/../" + inner,
        "/ui/../" + inner,
        "/version/%2E%2E/" + inner,
        path + "/",
        path.replace("/", "//"),
        path.upper(),
    ]
    return list(dict.fromkeys(out))


@pytest.fixture
async def served() -> AsyncIterator[APIServer]:
    store = Store()
    srv = APIServer(store, token=TOKEN)
    srv.simulator = SimulatorAPI(store, lambda: _reset(store, {}), lambda docs: _import(store, docs))
    await srv.start()
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "data": {"k": "c2VjcmV0"}}
    await raw(srv, "POST", "/api/v1/namespaces/default/secrets", TOKEN, json.dumps(secret).encode())
    try:
        yield srv
    finally:
        await srv.stop()


async def raw(server: APIServer, method: str, target: str, token: str | None, body: bytes = b"") -> tuple[int, bytes]:
    """One HTTP/1.1 request with ``target`` sent exactly as given; the status and the body."""
    reader, writer = await asyncio.open_connection(server.host, server.port)
    head = [f"{method} {target} HTTP/1.1", f"Host: {server.host}", "Connection: close"]
    if token is not None:
        head.append(f"Authorization: Bearer {token}")
    if body:
        head += ["Content-Type: application/json", f"Content-Length: {len(body)}"]
    elif method in ("POST", "PUT"):
        head.append("Content-Length: 0")
    writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + body)
    await writer.drain()
    answer = await reader.read()
    writer.close()
    status_line, _, rest = answer.partition(b"\r\n")
    return int(status_line.split()[1]), rest.partition(b"\r\n\r\n")[2]


@pytest.mark.parametrize(("method", "path"), PROTECTED, ids=[f"{m} {p}" for m, p in PROTECTED])
async def test_every_spelling_of_a_protected_route_needs_the_token(served: APIServer, method: str, path: str) -> None:
    for target in spellings(path):
        for token in (None, "a-wrong-token", ""):
            status, body = await raw(served, method, target, token)
            assert status == 401, (method, target, token, status, body[:200])
            assert json.loads(body)["reason"] == "Unauthorized"


async def test_the_secret_is_read_with_the_token_only_through_every_spelling(served: APIServer) -> None:
    for target in spellings("/api/v1/namespaces/default/secrets/s"):
        status, body = await raw(served, "GET", target, None)
        assert status == 401 and b"c2VjcmV0" not in body, target
    # with the token, each spelling that cleans into the route is served as the route
    for target in (
        "//api/v1/namespaces/default/secrets/s",
        "/%2Fapi/v1/namespaces/default/secrets/s",
        "/./api/v1//namespaces/default/secrets/s/",
    ):
        status, body = await raw(served, "GET", target, TOKEN)
        assert status == 200 and json.loads(body)["data"] == {"k": "c2VjcmV0"}, target


@pytest.mark.parametrize(("method", "path"), OPEN, ids=[p for _, p in OPEN])
async def test_open_routes_stay_open_however_spelt(served: APIServer, method: str, path: str) -> None:
    for target in (path, "/" + path, "/./" + path[1:], path + "/"):
        status, _ = await raw(served, method, target, None)
        assert status == 200, target


async def test_an_anonymous_reset_through_a_doubled_slash_changes_nothing(served: APIServer) -> None:
    status, _ = await raw(served, "PUT", "//api/v1/reset", None)
    assert status == 401
    status, body = await raw(served, "GET", "/api/v1/namespaces/default/secrets/s", TOKEN)
    assert status == 200 and json.loads(body)["metadata"]["name"] == "s"


@pytest.mark.parametrize(
    ("path", "clean"),
    [
        ("/", "/"),
        ("", "/"),
        ("//api//v1/", "/api/v1"),
        ("/./a/./b", "/a/b"),
        ("/a/../../b", "/b"),
        ("/../..", "/"),
        ("/a/b/..", "/a"),
        ("/ui/..", "/"),
        ("/a:b/c@d", "/a:b/c@d"),
    ],
)
def test_a_path_is_cleaned_as_go_cleans_it(path: str, clean: Any) -> None:
    assert canonical_path(path) == clean
