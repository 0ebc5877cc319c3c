"""/configz, /flagz and /statusz as kube-scheduler 1.37 serves them, and the flag helpers of
``kubesched run`` (Go durations, the debugging pages' gates, the deprecated client flags)."""

from __future__ import annotations

import argparse
import random
from collections.abc import AsyncIterator

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from kubesched.config import load_config
from kubesched.server.flags import apply_client_flags, go_duration, split_zpages_gates
from kubesched.server.zpages import DELIMITERS, ZPages, flagz_text, top_paths, unix_date, uptime

HEADER = (
    "\nkube-scheduler {page}\nWarning: This endpoint is not meant to be machine parseable, has no formatting "
    "compatibility guarantees and is for debugging purposes only.\n"
)


@pytest.fixture
async def client() -> AsyncIterator[TestClient[web.Request, web.Application]]:
    app = web.Application()
    pages = ZPages(
        {"kind": "KubeSchedulerConfiguration", "parallelism": 16},
        {"v": "2", "bind-address": "127.0.0.1"},
        paths=lambda: ["/configz", "/flagz", "/healthz", "/metrics", "/metrics/resources", "/statusz"],
        started=1_000_000.0,
        rng=random.Random(1),
    )
    pages.install(app)
    async with TestClient(TestServer(app)) as c:
        yield c


async def test_configz_is_the_componentconfig(client: TestClient[web.Request, web.Application]) -> None:
    r = await client.get("/configz")
    assert r.status == 200 and r.content_type == "application/json"
    assert await r.json() == {"componentconfig": {"kind": "KubeSchedulerConfiguration", "parallelism": 16}}


@pytest.mark.parametrize("accept", ["", "text/plain", "*/*", "text/plain;q=0.9, application/json"])
async def test_flagz_text(client: TestClient[web.Request, web.Application], accept: str) -> None:
    r = await client.get("/flagz", headers={"Accept": accept} if accept else {})
    assert r.status == 200 and r.headers["Content-Type"] == "text/plain; charset=utf-8"
    text = await r.text()
    assert text.startswith(HEADER.format(page="flagz"))
    body = text[len(HEADER.format(page="flagz")) :].splitlines()
    # Sorted by name, with one of upstream's separators.
    assert any(body == [f"bind-address{d}127.0.0.1", f"v{d}2"] for d in DELIMITERS), body


@pytest.mark.parametrize(
    ("version", "warning"),
    [
        ("v1beta1", None),
        ("v1alpha1", '299 - "This version of the flagz endpoint is deprecated. Please use a newer version."'),
    ],
)
async def test_flagz_structured(
    client: TestClient[web.Request, web.Application], version: str, warning: str | None
) -> None:
    r = await client.get("/flagz", headers={"Accept": f"application/json;as=Flagz;v={version};g=config.k8s.io"})
    assert r.status == 200
    assert await r.json() == {
        "kind": "Flagz",
        "apiVersion": f"config.k8s.io/{version}",
        "metadata": {"name": "kube-scheduler"},
        "flags": {"v": "2", "bind-address": "127.0.0.1"},
    }
    assert r.headers.get("Warning") == warning


@pytest.mark.parametrize(
    "accept", ["application/json", "application/yaml", "application/json;as=Statusz;v=v1beta1;g=config.k8s.io"]
)
async def test_flagz_refuses_what_it_cannot_give(client: TestClient[web.Request, web.Application], accept: str) -> None:
    r = await client.get("/flagz", headers={"Accept": accept})
    assert r.status == 406
    assert "application/json;as=Flagz;v=v1beta1;g=config.k8s.io" in await r.text()


async def test_statusz(client: TestClient[web.Request, web.Application]) -> None:
    r = await client.get("/statusz")
    text = await r.text()
    assert text.startswith(HEADER.format(page="statusz"))
    lines = text[len(HEADER.format(page="statusz")) :].splitlines()
    assert lines[0] == ""
    names = ("Started", "Up", "Go version", "Binary version", "Emulation version", "Paths")
    # Each line is a name, one of upstream's separators, a space and the value.
    fields = {n: line[len(n) :].lstrip(":= ") for line in lines[1:] for n in names if line.startswith(n)}
    assert fields["Started"] == unix_date(1_000_000.0)
    assert fields["Emulation version"] == "1.37"
    assert fields["Paths"] == "/configz /flagz /healthz /metrics"
    assert fields["Binary version"].startswith("kubesched ")
    s = await (
        await client.get("/statusz", headers={"Accept": "application/json;as=Statusz;v=v1beta1;g=config.k8s.io"})
    ).json()
    assert (s["kind"], s["apiVersion"], s["metadata"]) == (
        "Statusz",
        "config.k8s.io/v1beta1",
        {"name": "kube-scheduler"},
    )
    assert s["startTime"] == "1970-01-12T13:46:40Z" and s["uptimeSeconds"] > 0
    assert s["paths"] == ["/configz", "/flagz", "/healthz", "/metrics"]


async def test_pages_behind_their_gates_are_not_served() -> None:
    app = web.Application()
    ZPages({}, {}, paths=list).install(app, flagz=False, statusz=False)
    async with TestClient(TestServer(app)) as c:
        assert (await c.get("/configz")).status == 200
        assert (await c.get("/flagz")).status == 404
        assert (await c.get("/statusz")).status == 404


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0, "0 hr 00 min 00 sec"),
        (59, "0 hr 00 min 59 sec"),
        (3661, "1 hr 01 min 01 sec"),
        (90061, "25 hr 01 min 01 sec"),
    ],
)
def test_uptime(seconds: int, text: str) -> None:
    assert uptime(seconds) == text


def test_flagz_text_sorts_and_separates() -> None:
    assert flagz_text({"b": "2", "a": "1"}, "=") == HEADER.format(page="flagz") + "a=1\nb=2\n"


def test_top_paths() -> None:
    assert top_paths(["/metrics/resources", "/metrics", "/", "/healthz/ping"]) == ["/healthz", "/metrics"]


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(0, "0s"), (10, "10s"), (1.5, "1.5s"), (90, "1m30s"), (300, "5m0s"), (3600, "1h0m0s"), (5400.25, "1h30m0.25s")],
)
def test_go_duration(seconds: float, text: str) -> None:
    assert go_duration(seconds) == text


@pytest.mark.parametrize(
    ("given", "rest", "gates"),
    [
        (None, "", {"ComponentFlagz": True, "ComponentStatusz": True}),
        ("ComponentFlagz=false", "", {"ComponentFlagz": False, "ComponentStatusz": True}),
        (
            "OpportunisticBatching=false,ComponentStatusz=f",
            "OpportunisticBatching=false",
            {"ComponentFlagz": True, "ComponentStatusz": False},
        ),
        ("ComponentFlagz=maybe", "ComponentFlagz=maybe", {"ComponentFlagz": True, "ComponentStatusz": True}),
    ],
    ids=["defaults", "flagz off", "statusz off beside another gate", "not a boolean: left for the parser to refuse"],
)
def test_zpages_gates(given: str | None, rest: str, gates: dict[str, bool]) -> None:
    assert split_zpages_gates(given) == (rest, gates)


@pytest.mark.parametrize(
    ("config", "qps", "burst", "ignored"),
    [(None, 5.0, 7, []), ("kubesched.yaml", 50, 100, ["kube-api-qps", "kube-api-burst"])],
    ids=["without --config they act", "with --config upstream ignores them"],
)
def test_client_flags(config: str | None, qps: float, burst: int, ignored: list[str]) -> None:
    model = load_config(None).model
    args = argparse.Namespace(config=config, kube_api_qps=5.0, kube_api_burst=7)
    assert apply_client_flags(model, args) == ignored
    assert (model.clientConnection.qps, model.clientConnection.burst) == (qps, burst)
