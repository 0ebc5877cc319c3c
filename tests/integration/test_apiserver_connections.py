"""The embedded API server's connections over real sockets on 127.0.0.1: a request head that
trickles in is cut at the header deadline and an idle connection at the idle timeout (as
kube-apiserver's ``ReadHeaderTimeout`` and ``IdleTimeout``); past the connection cap — or the
process's file descriptors — ``/healthz`` still answers; over ``--max-requests-inflight`` and
``--max-mutating-requests-inflight`` a request is answered kube-apiserver's 429."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator

import aiohttp
import pytest

import kubesched
from kubesched.cluster.store import Store
from kubesched.sim.apiserver.authn import UserInfo
from kubesched.sim.apiserver.connections import Limits
from kubesched.sim.apiserver.server import APIServer

POD = json.dumps(
    {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "image": "i"}]},
    }
)


async def _open(server: APIServer) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    return await asyncio.open_connection("127.0.0.1", server.port)


async def _closed_within(reader: asyncio.StreamReader, seconds: float) -> bytes | None:
    """What the server sent before closing, or None when it still holds the connection after ``seconds``."""
    try:
        return await asyncio.wait_for(reader.read(), seconds)
    except TimeoutError:
        return None
    except ConnectionResetError:
        return b""


async def _get(server: APIServer, path: str) -> tuple[int, str]:
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=5)) as s:
        async with s.get(server.url + path) as r:
            return r.status, await r.text()


@pytest.fixture
async def quick() -> AsyncIterator[APIServer]:
    """A server whose header deadline and idle timeout are half a second."""
    srv = APIServer(Store(), limits=Limits(read_header_timeout=0.5, idle_timeout=0.5))
    await srv.start()
    try:
        yield srv
    finally:
        await srv.stop()


# --- time ------------------------------------------------------------------------------------------


async def test_a_head_trickled_in_is_closed_at_the_header_deadline_without_an_answer(quick: APIServer) -> None:
    reader, writer = await _open(quick)
    writer.write(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
    started = time.monotonic()
    closed: bytes | None = None
    for i in range(40):  # a header line every 0.1 s: bytes keep coming, the head never ends
        writer.write(f"X-Slow-{i}: y\r\n".encode())
        closed = await _closed_within(reader, 0.1)
        if closed is not None:
            break
    writer.close()
    assert closed == b"", "the connection is closed, with no answer (as Go's server after ReadHeaderTimeout)"
    assert 0.4 <= time.monotonic() - started < 3


async def test_a_silent_connection_is_closed_at_the_header_deadline(quick: APIServer) -> None:
    reader, writer = await _open(quick)
    assert await _closed_within(reader, 4) == b""
    writer.close()


async def test_the_header_deadline_counts_from_a_heads_first_byte_not_from_the_last_answer() -> None:
    # Idle for longer than the header deadline (well within the idle timeout), then a whole request.
    srv = APIServer(Store(), limits=Limits(read_header_timeout=0.3, idle_timeout=30))
    async with srv:
        reader, writer = await _open(srv)
        for _ in range(2):
            writer.write(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\nok"), 5)
            assert head.startswith(b"HTTP/1.1 200")
            await asyncio.sleep(0.6)
        writer.close()


async def test_an_idle_keep_alive_connection_is_closed_at_the_idle_timeout(quick: APIServer) -> None:
    reader, writer = await _open(quick)
    writer.write(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
    answered = await _closed_within(reader, 4)
    writer.close()
    assert answered is not None and answered.startswith(b"HTTP/1.1 200"), answered


# --- number ----------------------------------------------------------------------------------------

_SERVE_WITH_FEW_FILES = """
import asyncio, resource, sys
resource.setrlimit(resource.RLIMIT_NOFILE, (160, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
from kubesched.cluster.store import Store
from kubesched.sim.apiserver.server import APIServer

async def main():
    async with APIServer(Store()) as srv:
        print(srv.port, flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)

asyncio.run(main())
"""


def test_with_every_file_descriptor_asked_for_healthz_still_answers() -> None:
    # The server may open 160 files; 400 idle connections are offered. The cap keeps descriptors
    # free, closing the oldest idle connection for each new one, so a probe is still accepted.
    env = {**os.environ, "PYTHONPATH": os.path.dirname(os.path.dirname(kubesched.__file__))}
    proc = subprocess.Popen(
        [sys.executable, "-c", _SERVE_WITH_FEW_FILES], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env
    )
    socks: list[socket.socket] = []
    try:
        assert proc.stdout is not None
        port = int(proc.stdout.readline())
        for _ in range(400):
            s = socket.socket()
            s.setblocking(False)
            s.connect_ex(("127.0.0.1", port))
            socks.append(s)
        time.sleep(1.0)
        probe = socket.create_connection(("127.0.0.1", port), timeout=5)
        probe.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        answer = b""
        while chunk := probe.recv(4096):
            answer += chunk
        probe.close()
        assert answer.startswith(b"HTTP/1.1 200") and answer.endswith(b"ok"), answer
    finally:
        for s in socks:
            s.close()
        proc.kill()
        proc.wait(5)


async def test_over_the_connection_cap_with_every_connection_busy_only_probes_are_answered() -> None:
    srv = APIServer(Store(), limits=Limits(max_connections=3))
    async with srv:
        async with aiohttp.ClientSession() as s:
            watches = [await s.get(srv.url + "/api/v1/pods?watch=true") for _ in range(3)]
            assert [w.status for w in watches] == [200] * 3
            assert await _get(srv, "/healthz") == (200, "ok")
            status, text = await _get(srv, "/api/v1/namespaces")
            assert (status, text) == (429, "Too many requests, please try again later.\n")
            for w in watches:
                w.close()
        # The watches gone, the cap has room again.
        for _ in range(50):
            if len(srv.watches._open) == 0:
                break
            await asyncio.sleep(0.05)
        assert (await _get(srv, "/api/v1/namespaces"))[0] == 200


# --- requests in flight ----------------------------------------------------------------------------


async def _hold_a_create(server: APIServer, token: str | None = None) -> asyncio.StreamWriter:
    """A create whose body has not all come: a mutating request in flight until closed."""
    reader, writer = await _open(server)
    auth = f"Authorization: Bearer {token}\r\n" if token else ""
    writer.write(
        f"POST /api/v1/namespaces/default/pods HTTP/1.1\r\nHost: x\r\n{auth}Content-Type: application/json\r\n"
        f"Content-Length: {len(POD) + 10}\r\n\r\n{POD}".encode()
    )
    await writer.drain()
    for _ in range(100):
        if server.inflight.serving[True]:
            break
        await asyncio.sleep(0.02)
    assert server.inflight.serving[True] == 1
    return writer


async def _create(server: APIServer, name: str, token: str | None = None) -> aiohttp.ClientResponse:
    body = POD.replace('"p"', json.dumps(name))
    headers = {"Content-Type": "application/json", **({"Authorization": f"Bearer {token}"} if token else {})}
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=5)) as s:
        async with s.post(server.url + "/api/v1/namespaces/default/pods", data=body, headers=headers) as r:
            await r.read()
            return r


async def test_over_the_mutating_limit_a_create_is_answered_429_with_retry_after() -> None:
    srv = APIServer(Store(), max_requests_inflight=1, max_mutating_requests_inflight=1)
    async with srv:
        held = await _hold_a_create(srv)
        async with aiohttp.ClientSession() as s:
            async with s.post(
                srv.url + "/api/v1/namespaces/default/pods", data=POD, headers={"Content-Type": "application/json"}
            ) as r:
                assert r.status == 429
                assert r.headers["Retry-After"] == "1"
                assert r.headers["Content-Type"] == "text/plain; charset=utf-8"
                assert await r.text() == "Too many requests, please try again later.\n"
            # Read-only requests are counted apart; watches, long-running, are not counted at all.
            watches = [await s.get(srv.url + "/api/v1/pods?watch=true") for _ in range(2)]
            assert [w.status for w in watches] == [200, 200]
            assert (await _get(srv, "/api/v1/pods"))[0] == 200
            for w in watches:
                w.close()
        held.close()
        for _ in range(100):
            if not srv.inflight.serving[True]:
                break
            await asyncio.sleep(0.02)
        assert (await _create(srv, "after")).status == 201


async def test_system_masters_are_served_over_the_limit() -> None:
    users = {"other-token": UserInfo("someone", groups=("system:authenticated",))}
    srv = APIServer(Store(), token="admin-token", users=users, max_mutating_requests_inflight=1)
    async with srv:
        held = await _hold_a_create(srv, "admin-token")
        assert (await _create(srv, "by-someone", "other-token")).status == 429
        assert (await _create(srv, "by-admin", "admin-token")).status == 201
        held.close()


async def _send(port: int, data: bytes, read: bool = True) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(data)
    try:
        return await asyncio.wait_for(reader.read(), 5) if read else b""
    finally:
        writer.close()


async def test_expect_is_answered_as_go_answers_it(server: APIServer) -> None:
    head = b"POST /api/v1/namespaces/default/pods HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
    body = POD.encode()
    got = await _send(
        server.port,
        head + b"Expect: 100-continue\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body),
    )
    assert got.startswith(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 "), got[:200]
    got = await _send(server.port, head + b"Expect: tea\r\nContent-Length: 2\r\n\r\n{}")
    status, _, rest = got.partition(b"\r\n")
    assert status == b"HTTP/1.1 417 Expectation Failed" and rest.endswith(b"\r\n\r\n"), got
    assert b"connection: close" in rest.lower()


async def test_a_client_gone_before_100_continue_is_nobodys_error(
    server: APIServer, caplog: pytest.LogCaptureFixture
) -> None:
    # The client sends its head and resets the connection at once: the 100 has no one to go to
    # (``OPTIONS *``: a target no route serves, answered by aiohttp's own handlers).
    heads = [
        b"POST /api/v1/namespaces/default/pods HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"
        b"Content-Length: 9\r\n\r\n",
        b"OPTIONS * HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 0\r\n\r\n",
    ]
    for i in range(40):
        head = heads[i % 2]
        sock = socket.create_connection(("127.0.0.1", server.port))
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        sock.sendall(head)
        sock.close()
    await asyncio.sleep(0.3)
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], caplog.text
