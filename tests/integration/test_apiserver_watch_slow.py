"""A watch whose client does not read is closed, as kube-apiserver's cacher closes one whose
buffer stays full: the server holds a bounded amount for it, and the writer, the other watches
and ``/healthz`` go on unaffected (real HTTP; the normal watcher is the kubernetes_asyncio client)."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import secrets
import socket
import time
import tracemalloc
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from kubernetes_asyncio import client, watch

from kubesched.cluster.store import Store
from kubesched.sim.apiserver.server import APIServer

#: pods written, each created and deleted
PODS = 300
#: bytes of annotation on each, so that what a stuck watch would hold is plain to see
PAD = 64 * 1024


@pytest.fixture
def store() -> Store:
    # A short history: what the server keeps for a watch is then its own, not the history's.
    return Store(history=200)


def _pod(name: str) -> Any:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "annotations": {"pad": secrets.token_hex(PAD // 2)}},
        "spec": {"containers": [{"name": "c", "image": "i"}]},
    }


async def _stuck_watch(port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A watch over a raw socket whose client never reads (its receive buffer kept small)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.setblocking(False)
    await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", port))
    reader, writer = await asyncio.open_connection(sock=sock)
    writer.write(b"GET /api/v1/namespaces/default/pods?watch=true HTTP/1.1\r\nHost: x\r\n\r\n")
    await writer.drain()
    return reader, writer


async def _until(cond: Any, seconds: float = 10) -> None:
    deadline = time.monotonic() + seconds
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError("not reached")
        await asyncio.sleep(0.02)


async def _healthz_seconds(session: aiohttp.ClientSession, url: str) -> float:
    start = time.monotonic()
    async with session.get(url + "/healthz") as r:
        assert r.status == 200
        await r.read()
    return time.monotonic() - start


async def _read_to_end(reader: asyncio.StreamReader) -> bytes:
    """What the server sent until it ended the stream or closed the connection."""
    got = b""
    with contextlib.suppress(ConnectionResetError):
        while chunk := await reader.read(1 << 20):
            got += chunk
    return got


@pytest.fixture
async def traced() -> AsyncIterator[None]:
    tracemalloc.start()
    try:
        yield
    finally:
        tracemalloc.stop()


async def test_a_watch_that_is_not_read_is_closed_and_holds_bounded_memory(
    server: APIServer, api: client.ApiClient, traced: None
) -> None:
    server.watches.terminated_grace = 0.5
    v1 = client.CoreV1Api(api)
    rv = (await v1.list_namespaced_pod("default")).metadata.resource_version
    stuck_reader, stuck_writer = await _stuck_watch(server.port)
    w = watch.Watch()
    seen: list[tuple[str, str]] = []

    async def follow() -> None:
        async for ev in w.stream(v1.list_namespaced_pod, "default", resource_version=rv):
            seen.append((ev["type"], ev["raw_object"]["metadata"]["name"]))

    follower = asyncio.create_task(follow())
    await _until(lambda: len(server.watches._open) == 2)
    gc.collect()
    before, _ = tracemalloc.get_traced_memory()
    slowest_healthz = 0.0
    async with aiohttp.ClientSession() as s:
        for i in range(PODS):
            await v1.create_namespaced_pod("default", _pod(f"p{i}"))
            await v1.delete_namespaced_pod(f"p{i}", "default")
            if i % 25 == 0:
                slowest_healthz = max(slowest_healthz, await _healthz_seconds(s, server.url))
        # The watch that is not read is closed; the normal one goes on.
        await _until(lambda: len(server.watches._open) == 1)
        assert server.watches.terminated == 1  # the normal watch was never closed for being slow
        expected = [(t, f"p{i}") for i in range(PODS) for t in ("ADDED", "DELETED")]
        await _until(lambda: len(seen) >= len(expected), 30)
        assert seen == expected
        slowest_healthz = max(slowest_healthz, await _healthz_seconds(s, server.url))
    assert slowest_healthz < 1.0
    # Nothing the stuck watch was handed is held past the grace for the bytes already written,
    # though its client is still connected: 600 changes of 64 KiB held would be ~70 MB.
    await asyncio.sleep(server.watches.terminated_grace + 0.3)
    gc.collect()
    after, _ = tracemalloc.get_traced_memory()
    assert after - before < 16 * 1024 * 1024, f"{(after - before) / 1e6:.1f} MB more held"
    # What the stuck client reads ends (a clean end of the stream, or the connection reset),
    # short of every event.
    got = await asyncio.wait_for(_read_to_end(stuck_reader), 10)
    assert got.count(b'"type":"ADDED"') + got.count(b'"type": "ADDED"') < PODS
    stuck_writer.close()
    w.stop()
    follower.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await follower


async def _raw(port: int, request: bytes) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(request)
    try:
        return await asyncio.wait_for(reader.read(), 10)
    finally:
        writer.close()


async def test_a_watch_over_http_1_0_streams_until_the_close(server: APIServer, store: Store) -> None:
    # HTTP/1.0 has no chunks: the events come as they are, and the stream ends with the connection
    # (it was a 500, aiohttp refusing to chunk for HTTP/1.0).
    store.create("Pod", {"metadata": {"name": "a", "namespace": "default"}, "spec": {"containers": []}})
    got = await _raw(server.port, b"GET /api/v1/namespaces/default/pods?watch=true&timeoutSeconds=1 HTTP/1.0\r\n\r\n")
    head, _, body = got.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.0 200") or head.startswith(b"HTTP/1.1 200"), head
    assert b"chunked" not in head.lower()
    events = [line for line in body.split(b"\n") if line]
    assert len(events) == 1 and b'"type":"ADDED"' in events[0] and b'"name":"a"' in events[0], body[:300]
    # Over HTTP/1.1 the same watch is chunked.
    got = await _raw(
        server.port,
        b"GET /api/v1/namespaces/default/pods?watch=true&timeoutSeconds=1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    )
    assert b"transfer-encoding: chunked" in got.partition(b"\r\n\r\n")[0].lower()
