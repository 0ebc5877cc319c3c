"""The transport's own keep-alive HTTP/1.1 connections: answers framed every way HTTP/1.1 frames
them, connections kept only while both sides allow it, and a request that failed or was cancelled
never leaving its connection for the next one. Against real sockets: the embedded API server,
and a scripted server for the framings it does not send."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from kubesched.cluster.base import ClusterError
from kubesched.cluster.kube.cluster import KubeCluster
from kubesched.cluster.kube.http1 import ConnectionPool, ProtocolError
from kubesched.cluster.store import Store
from kubesched.sim.apiserver import APIServer

#: What the scripted server answers, by request number (from 0): the raw bytes, or None to hang.
Script = Callable[[int], bytes | None]


class Scripted:
    """A TCP server on loopback answering each request head with what ``script`` says."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.connections = 0
        self.requests: list[bytes] = []
        self.port = 0
        self._server: asyncio.Server | None = None

    async def __aenter__(self) -> Scripted:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(
                    (
                        int(line.split(b":")[1])
                        for line in head.split(b"\r\n")
                        if line.lower().startswith(b"content-length:")
                    ),
                    0,
                )
                body = await reader.readexactly(length)
                n = len(self.requests)
                self.requests.append(head + body)
                answer = self.script(n)
                if answer is None:
                    await asyncio.sleep(3600)
                writer.write(answer)
                await writer.drain()
                if b"Connection: close" in answer or b"Content-Length" not in answer and b"chunked" not in answer:
                    writer.close()
                    return
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()


def ok(body: bytes, extra: str = "") -> bytes:
    return f"HTTP/1.1 200 OK\r\nContent-Length: {len(body)}\r\n{extra}\r\n".encode() + body


@pytest.fixture
async def pool_for() -> AsyncIterator[Callable[[Scripted], ConnectionPool]]:
    pools: list[ConnectionPool] = []

    def make(server: Scripted) -> ConnectionPool:
        pools.append(ConnectionPool("127.0.0.1", server.port, limit=2))
        return pools[-1]

    yield make
    for p in pools:
        p.close()


async def test_a_kept_connection_carries_request_after_request(pool_for) -> None:
    async with Scripted(lambda n: ok(b'{"n":%d}' % n)) as srv:
        pool = pool_for(srv)
        for n in range(5):
            reply = await pool.request("POST", f"/things/{n}", {"Content-Type": "application/json"}, b"{}")
            assert (reply.status, reply.body) == (200, b'{"n":%d}' % n)
        assert srv.connections == 1 and pool.opened == 1
        first = srv.requests[0]
        assert first.startswith(b"POST /things/0 HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n" % srv.port)
        assert b"Content-Length: 2\r\n" in first and first.endswith(b"\r\n\r\n{}")


async def test_a_chunked_answer_with_trailers_is_read_whole_and_the_connection_kept(pool_for) -> None:
    chunked = b"HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\nX-A: 1\r\nX-A: 2\r\n\r\n4;ext=1\r\nabcd\r\n3\r\nefg\r\n0\r\nTrailer: t\r\n\r\n"
    async with Scripted(lambda n: chunked if n == 0 else ok(b"next")) as srv:
        pool = pool_for(srv)
        reply = await pool.request("POST", "/x", {}, b"")
        assert (reply.status, reply.body, reply.headers["x-a"]) == (201, b"abcdefg", "1, 2")
        assert (await pool.request("DELETE", "/x", {})).body == b"next"
        assert srv.connections == 1


async def test_an_interim_answer_is_skipped(pool_for) -> None:
    async with Scripted(lambda n: b"HTTP/1.1 100 Continue\r\n\r\n" + ok(b"done")) as srv:
        reply = await pool_for(srv).request("PUT", "/x", {}, b"{}")
        assert (reply.status, reply.body) == (200, b"done")


async def test_connection_close_and_a_body_ended_by_closing_open_a_new_connection(pool_for) -> None:
    answers = [ok(b"a", "Connection: close\r\n"), b"HTTP/1.1 200 OK\r\n\r\nuntil-close", ok(b"c")]
    async with Scripted(lambda n: answers[n]) as srv:
        pool = pool_for(srv)
        bodies = [(await pool.request("PATCH", "/x", {}, b"{}")).body for _ in answers]
        assert bodies == [b"a", b"until-close", b"c"]
        assert srv.connections == 3


async def test_an_answer_cut_short_is_a_connection_error(pool_for) -> None:
    async with Scripted(lambda n: b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\nConnection: close\r\n\r\nabc") as srv:
        with pytest.raises(ProtocolError, match="before the answer's body ended"):
            await pool_for(srv).request("POST", "/x", {}, b"")


async def test_a_cancelled_request_never_hands_its_late_answer_to_the_next(pool_for) -> None:
    async with Scripted(lambda n: None if n == 0 else ok(b"second")) as srv:
        pool = pool_for(srv)
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(pool.request("POST", "/slow", {}, b""), 0.2)
        reply = await pool.request("POST", "/fast", {}, b"")
        assert reply.body == b"second"
        assert srv.connections == 2  # the first connection was closed, not reused


async def test_a_header_with_a_line_break_is_refused_before_anything_is_sent(pool_for) -> None:
    async with Scripted(lambda n: ok(b"")) as srv:
        with pytest.raises(ValueError, match="line break"):
            await pool_for(srv).request("POST", "/x", {"X-Evil": "a\r\nInjected: yes"}, b"")
        assert srv.requests == []


async def test_the_schedulers_writes_go_over_few_kept_connections(tmp_path: Path) -> None:
    store = Store()
    store.create("Namespace", {"metadata": {"name": "default"}})
    for i in range(20):
        store.create("Pod", {"metadata": {"name": f"p{i}", "namespace": "default"}, "spec": {"containers": []}})
    async with APIServer(store) as server:
        cluster = KubeCluster(kubeconfig=server.write_kubeconfig(tmp_path / "kc"))
        try:
            for i in range(20):
                pod = store.get("Pod", "default", f"p{i}")
                await cluster.bind(pod, "node-a")
                await cluster.record_event(pod, "Normal", "Scheduled", "Binding", f"assigned p{i}", "default-scheduler")
            pool = cluster.transport._pool
            assert pool is not None and pool.opened == 1
            assert all(store.get("Pod", "default", f"p{i}")["spec"]["nodeName"] == "node-a" for i in range(20))
            assert len(store.list("Event", "default")[0]) == 20
        finally:
            await cluster.stop()


async def test_over_tls_with_a_token_the_writes_use_the_clients_own_tls_context(tmp_path: Path) -> None:
    """Against a server that asks for a token over HTTPS (its self-signed CA in the kubeconfig):
    binds go over the transport's own connections, verified and authenticated as the client's."""
    store = Store()
    store.create("Namespace", {"metadata": {"name": "default"}})
    store.create("Pod", {"metadata": {"name": "p", "namespace": "default"}, "spec": {"containers": []}})
    async with APIServer(store, token="s3cret", tls=True) as server:
        cluster = KubeCluster(kubeconfig=server.write_kubeconfig(tmp_path / "kc"))
        try:
            await cluster.bind(store.get("Pod", "default", "p"), "node-a")
            pool = cluster.transport._pool
            assert pool is not None and pool.ssl_context is not None and pool.opened == 1
            assert store.get("Pod", "default", "p")["spec"]["nodeName"] == "node-a"
        finally:
            await cluster.stop()
        # A wrong token is refused over the same path: the credentials are the client's.
        (tmp_path / "bad").write_text((tmp_path / "kc").read_text().replace("s3cret", "wrong"))
        intruder = KubeCluster(kubeconfig=str(tmp_path / "bad"))
        try:
            with pytest.raises(ClusterError) as err:
                await intruder.bind(store.get("Pod", "default", "p"), "node-b")
            assert err.value.code == 401
        finally:
            await intruder.stop()


async def test_a_connection_whose_request_ends_after_the_pool_closed_is_closed_too(pool_for) -> None:

    async with Scripted(lambda n: ok(b"late")) as srv:
        pool = pool_for(srv)
        pending = asyncio.create_task(pool.request("POST", "/x", {}, b""))
        await asyncio.sleep(0)  # sent, not yet answered
        pool.close()
        assert (await pending).body == b"late"
        assert pool._idle == []


async def test_the_writes_connections_are_bounded_as_asked(tmp_path: Path) -> None:
    """At most ``connections`` at once when given (the benchmark's pod creator asks for 64),
    else as many as the client configuration's pool allows: requests beyond wait for one."""
    store = Store()
    store.create("Namespace", {"metadata": {"name": "default"}})
    async with APIServer(store) as server:
        kubeconfig = server.write_kubeconfig(tmp_path / "kc")
        default, wide = KubeCluster(kubeconfig=kubeconfig), KubeCluster(kubeconfig=kubeconfig, connections=3)
        try:
            pods = [
                {"metadata": {"name": f"p{i}"}, "spec": {"containers": [{"name": "c", "image": "i"}]}} for i in range(9)
            ]
            await asyncio.gather(*(wide.create_object("Pod", p) for p in pods))
            await default.create_object(
                "Pod", {"metadata": {"name": "q"}, "spec": {"containers": [{"name": "c", "image": "i"}]}}
            )
            assert wide.transport._pool is not None and default.transport._pool is not None
            assert wide.transport._pool.limit == 3 and 1 <= wide.transport._pool.opened <= 3
            assert default.transport._pool.limit == (await default._client()).configuration.connection_pool_maxsize
            assert len(store.list("Pod", "default")[0]) == 10
        finally:
            await default.stop()
            await wide.stop()
