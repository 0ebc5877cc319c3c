"""A custom resource schema's ``pattern`` is matched as Go's regexp matches it (RE2): in time
linear in the value, so ``^(a+)+$`` against 28 characters (exponential for a backtracking
engine, 15 s) is answered at once, over real HTTP."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from crds import thing_definition

from kubesched.cluster.store import Store
from kubesched.sim.apiserver.server import APIServer

pytest.importorskip("re2")

Obj = dict[str, Any]
TIMEOUT = aiohttp.ClientTimeout(total=5)
CRD: Obj = thing_definition(
    {
        "type": "object",
        "properties": {
            "s": {"type": "string", "pattern": "^(a+)+$"},
            # RE2 syntax, as Go's: \p{Greek} (Python's re has no \p)
            "g": {"type": "string", "pattern": "^\\p{Greek}+$"},
        },
    }
)


@pytest.fixture
async def served() -> AsyncIterator[APIServer]:
    srv = APIServer(Store())
    await srv.start()
    try:
        yield srv
    finally:
        await srv.stop()


async def call(server: APIServer, method: str, path: str, body: Obj) -> tuple[int, Any]:
    async with aiohttp.ClientSession(timeout=TIMEOUT) as s:
        headers = {"Content-Type": "application/json"}
        async with s.request(method, server.url + path, data=json.dumps(body).encode(), headers=headers) as r:
            return r.status, json.loads(await r.read())


def thing(**spec: str) -> Obj:
    return {"apiVersion": "example.io/v1", "kind": "Thing", "metadata": {"name": "t"}, "spec": spec}


async def test_a_catastrophic_pattern_is_matched_at_once(served: APIServer) -> None:
    status, body = await call(served, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", CRD)
    assert status == 201, body
    path = "/apis/example.io/v1/namespaces/default/things"
    status, body = await call(served, "POST", path, thing(s="a" * 28 + "!"))
    assert status == 422, body
    assert [(c["field"], c["message"]) for c in body["details"]["causes"]] == [
        ("spec.s", 'Invalid value: "' + "a" * 28 + "!\": spec.s in body should match '^(a+)+$'")
    ]
    status, body = await call(served, "POST", path, thing(g="αβγ", s="aaa"))
    assert status == 201, body
