"""Whole requests to one API server over keep-alive HTTP/1.1 connections of our own.

A scheduler's writes are many small requests with small answers: a bind and an Event per pod,
status patches. aiohttp's client spends three times the CPU of the request itself on what those
never use (its cookie jar, URL parsing and quoting, a task per body, tracing hooks, a timer per
request): with the scheduling loop and the watches sharing one core, that is a third of what the
scheduler costs a pod over HTTP. :class:`ConnectionPool` sends a request and reads its whole
answer, nothing more: one write of the head and body, the answer parsed as it arrives (a
``Content-Length`` body, a chunked one, or one the server ends by closing), the connection kept
for the next request unless either side said ``Connection: close``.

The pool opens at most ``limit`` connections (requests beyond wait for one to come free), uses
an idle connection for at most :data:`IDLE_SECONDS` (after that the server may be about to close
it), and closes a connection whose request failed or was cancelled mid-way: an answer that comes
late must not be read as the next request's. Nothing is retried here; the transport decides.
Watches and anything streamed stay on aiohttp (:mod:`kubesched.cluster.kube.transport`).
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import ssl
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import cast

from kubesched.cluster.base import ClusterError

#: An idle connection older than this is closed rather than used (aiohttp's keep-alive time).
IDLE_SECONDS = 15.0
#: The longest response head read: far above what an API server sends.
MAX_HEAD_BYTES = 1 << 20


class ProtocolError(ClusterError, ConnectionError):
    """The server's answer is not HTTP/1.1 we can read, or the connection ended before it did."""


@dataclass
class Reply:
    """A whole answer: its status, its header fields (names lower-cased; a repeated field's
    values joined with ``", "``) and its body."""

    status: int
    headers: dict[str, str]
    body: bytes


class _Connection(asyncio.Protocol):
    """One connection: one request at a time, its answer parsed as the bytes come."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.closed = False
        #: Whether the connection may carry another request after the current answer.
        self.reusable = True
        self.idle_since = 0.0
        self._buf = bytearray()
        self._waiter: asyncio.Future[Reply] | None = None
        self._head: tuple[int, dict[str, str]] | None = None
        #: The body's framing once the head is read: its length, -1 chunked, None until close.
        self._length: int | None = None
        self._chunks: list[bytes] = []
        self._eof = False

    # --- asyncio.Protocol ---------------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's is no subclass of it
        sock = transport.get_extra_info("socket")
        if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
            # Each request is one write: sent at once, never held back for an ACK (Nagle).
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def data_received(self, data: bytes) -> None:
        self._buf += data
        if self._waiter is None:
            # Bytes nobody asked for: the connection is out of step with its requests.
            self.reusable = False
            return
        self._parse()

    def eof_received(self) -> bool:
        self._eof = True
        self.reusable = False
        if self._waiter is not None:
            self._parse()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self.reusable = False
        if self._waiter is not None and not self._waiter.done():
            self._eof = True
            self._parse()
            if self._waiter is not None and not self._waiter.done():
                self._fail(ProtocolError(f"the server closed the connection before its answer ended: {exc or 'EOF'}"))

    # --- a request ----------------------------------------------------------------------------
    def send(self, data: bytes) -> asyncio.Future[Reply]:
        assert self.transport is not None and self._waiter is None
        self._waiter = asyncio.get_running_loop().create_future()
        self._head, self._length, self._chunks = None, None, []
        self.transport.write(data)
        return self._waiter

    def close(self) -> None:
        self.reusable = False
        if self.transport is not None and not self.closed:
            self.closed = True
            self.transport.close()

    def _fail(self, exc: Exception) -> None:
        self.reusable = False
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_exception(exc)

    def _done(self, body: bytes) -> None:
        assert self._head is not None
        status, headers = self._head
        waiter, self._waiter = self._waiter, None
        self._head = None
        if self._buf:
            self.reusable = False  # more than the answer came
        if waiter is not None and not waiter.done():
            waiter.set_result(Reply(status, headers, body))

    def _parse(self) -> None:
        try:
            while self._head is None:
                if not self._read_head():
                    return
            self._read_body()
        except ProtocolError as exc:
            self._fail(exc)
            self.close()

    def _read_head(self) -> bool:
        """Read the head when it is all there (an interim 1xx answer skipped); False until then."""
        end = self._buf.find(b"\r\n\r\n")
        if end < 0:
            if len(self._buf) > MAX_HEAD_BYTES:
                raise ProtocolError(f"the answer's head is longer than {MAX_HEAD_BYTES} bytes")
            if self._eof:
                raise ProtocolError("the server closed the connection without answering")
            return False
        lines = bytes(self._buf[:end]).decode("latin-1").split("\r\n")
        del self._buf[: end + 4]
        version, _, rest = lines[0].partition(" ")
        code = rest[:3]
        if not version.startswith("HTTP/1.") or not code.isdigit():
            raise ProtocolError(f"not an HTTP/1.1 answer: {lines[0][:80]!r}")
        status = int(code)
        headers: dict[str, str] = {}
        for line in lines[1:]:
            name, sep, value = line.partition(":")
            if not sep:
                raise ProtocolError(f"a malformed header line: {line[:80]!r}")
            key = name.strip().lower()
            value = value.strip()
            headers[key] = f"{headers[key]}, {value}" if key in headers else value
        if 100 <= status < 200:
            return True  # an interim answer (100 Continue): the real one follows
        connection = headers.get("connection", "").lower()
        if "close" in connection or (version == "HTTP/1.0" and "keep-alive" not in connection):
            self.reusable = False
        if "chunked" in headers.get("transfer-encoding", "").lower():
            self._length = -1
        elif "content-length" in headers:
            try:
                self._length = int(headers["content-length"])
            except ValueError:
                raise ProtocolError(f"a malformed Content-Length: {headers['content-length'][:40]!r}") from None
        elif status in (204, 304):
            self._length = 0
        else:
            self._length = None  # the body ends when the server closes the connection
            self.reusable = False
        self._head = (status, headers)
        return True

    def _read_body(self) -> None:
        length = self._length
        if length is None:
            if self._eof:
                body = bytes(self._buf)
                self._buf.clear()
                self._done(body)
            return
        if length >= 0:
            if len(self._buf) >= length:
                body = bytes(self._buf[:length])
                del self._buf[:length]
                self._done(body)
            elif self._eof:
                raise ProtocolError("the server closed the connection before the answer's body ended")
            return
        self._read_chunks()

    def _read_chunks(self) -> None:
        buf = self._buf
        while True:
            line_end = buf.find(b"\r\n")
            if line_end < 0:
                break
            size_text = bytes(buf[:line_end]).split(b";", 1)[0].strip()
            try:
                size = int(size_text, 16)
            except ValueError:
                raise ProtocolError(f"a malformed chunk size: {size_text[:20]!r}") from None
            if size == 0:
                # The last chunk, then trailer fields (ignored) up to an empty line.
                trailer_end = buf.find(b"\r\n\r\n", line_end)
                if trailer_end < 0:
                    break
                del buf[: trailer_end + 4]
                self._done(b"".join(self._chunks))
                return
            start = line_end + 2
            if len(buf) < start + size + 2:
                break
            if buf[start + size : start + size + 2] != b"\r\n":
                raise ProtocolError("a chunk does not end where its size says")
            self._chunks.append(bytes(buf[start : start + size]))
            del buf[: start + size + 2]
        if self._eof:
            raise ProtocolError("the server closed the connection before the chunked answer ended")


class ConnectionPool:
    """Keep-alive connections to ``host``:``port`` (TLS with ``ssl_context``), at most
    ``limit`` of them at once."""

    def __init__(
        self,
        host: str,
        port: int,
        *,
        ssl_context: ssl.SSLContext | None = None,
        server_hostname: str | None = None,
        limit: int = 10,
    ) -> None:
        self.host = host
        self.port = port
        self.ssl_context = ssl_context
        self.server_hostname = server_hostname
        self.limit = max(1, limit)
        #: The ``Host`` field: the port left out where it is the scheme's own.
        default_port = 443 if ssl_context is not None else 80
        shown = f"[{host}]" if ":" in host else host
        self.authority = shown if port == default_port else f"{shown}:{port}"
        #: Connections opened (diagnostics and tests).
        self.opened = 0
        self._idle: list[_Connection] = []
        self._slots: asyncio.Semaphore | None = None
        self._closed = False

    async def request(self, method: str, target: str, headers: Mapping[str, str], body: bytes | None = None) -> Reply:
        """Send ``method target`` with ``headers`` and ``body``; the whole answer. Raises
        ``OSError`` (connection failures, :class:`ProtocolError`); a timeout is the caller's
        to set (a request cancelled mid-way closes its connection)."""
        head = [f"{method} {target} HTTP/1.1\r\nHost: {self.authority}\r\n"]
        for name, value in headers.items():
            if "\r" in value or "\n" in value or "\r" in name or "\n" in name:
                raise ValueError(f"header {name!r}: a line break in a header field")
            head.append(f"{name}: {value}\r\n")
        if body is not None or method in ("POST", "PUT", "PATCH"):
            head.append(f"Content-Length: {len(body or b'')}\r\n")
        head.append("\r\n")
        data = "".join(head).encode("latin-1") + (body or b"")
        if self._slots is None:
            self._slots = asyncio.Semaphore(self.limit)
        async with self._slots:
            conn = self._take_idle() or await self._connect()
            try:
                reply = await conn.send(data)
            except BaseException:
                conn.close()
                raise
            if conn.reusable and not conn.closed and not self._closed:
                conn.idle_since = time.monotonic()
                self._idle.append(conn)
            else:
                conn.close()
            return reply

    def _take_idle(self) -> _Connection | None:
        now = time.monotonic()
        while self._idle:
            conn = self._idle.pop()
            if not conn.closed and conn.reusable and now - conn.idle_since < IDLE_SECONDS:
                return conn
            conn.close()
        return None

    async def _connect(self) -> _Connection:
        loop = asyncio.get_running_loop()
        if self.ssl_context is not None:
            _, conn = await loop.create_connection(
                _Connection,
                self.host,
                self.port,
                ssl=self.ssl_context,
                server_hostname=self.server_hostname or self.host,
            )
        else:
            _, conn = await loop.create_connection(_Connection, self.host, self.port)
        self.opened += 1
        return conn

    def close(self) -> None:
        """Close every idle connection (those in use close when their request ends)."""
        self._closed = True
        idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()


__all__ = ["IDLE_SECONDS", "ConnectionPool", "ProtocolError", "Reply"]
