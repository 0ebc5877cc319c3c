"""The HTTP/1.1 connection, before any handler: how large a request's head may be, and what a
request that cannot be read is answered — as Go's ``net/http`` server answers for kube-apiserver.

kube-apiserver's server has ``MaxHeaderBytes: 1 << 20`` and Go reads a request's head (request
line and headers) through a limit of that plus 4096 bytes. A head over it is answered
``431 Request Header Fields Too Large`` in plain text (the status line's words are the body too)
and the connection is closed; Go's server has no 414, however long the URL. Any other request
that cannot be parsed is ``400 Bad Request`` in plain text. Go logs neither, and neither is
logged here above debug.

aiohttp reads the request line and each header field within limits of its own: the request line
may be as long as Go's whole head, a header field :data:`MAX_FIELD_BYTES`, and
:func:`head_limit` answers a head whose fields together pass Go's limit.

Time, as kube-apiserver's ``http.Server`` has it: a request's head must have come whole within
:data:`READ_HEADER_TIMEOUT` of its first byte (of the connection, for the first request), else
the connection is closed without an answer, as Go's server closes it; a connection with no
request for :data:`IDLE_TIMEOUT` is closed (aiohttp's keep-alive timeout).

``Expect: 100-continue`` on HTTP/1.1 is answered ``100 Continue`` before the body is read, any
other expectation ``417 Expectation Failed`` with no body and the connection closed, as Go's server
answers (:func:`expect_continue`); a client gone before the ``100`` is nobody's error.

Connections are counted: past :attr:`Limits.max_connections` (by default what the process may
open less a headroom of file descriptors) a new connection first closes the oldest one that is
waiting for a request; when every connection is busy, :data:`PROBE_RESERVE` more are let in to
answer ``/healthz``, ``/livez``, ``/readyz`` only (any other request there is answered 429 and
the connection closed), and one more still is closed at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import resource
from dataclasses import dataclass, field
from typing import Any

from aiohttp import hdrs, web
from aiohttp.http import HttpVersion11
from aiohttp.http_exceptions import BadHttpMessage, HttpProcessingError, LineTooLong

log = logging.getLogger(__name__)

#: kube-apiserver's ``http.Server.MaxHeaderBytes``
MAX_HEADER_BYTES = 1 << 20
#: what Go's server reads of a request's head before it answers 431: MaxHeaderBytes and 4096
#: bytes of bufio slack
MAX_HEAD_BYTES = MAX_HEADER_BYTES + 4096
#: the longest header field aiohttp buffers (name and value): within Go's limit, and low enough
#: that a request's 128 fields cannot hold much memory before the head is refused
MAX_FIELD_BYTES = 64 * 1024
#: the most header fields a request may have: aiohttp's parser's own limit
MAX_HEADER_FIELDS = 128
#: the limits of aiohttp's request parser (``web.AppRunner`` passes them to each connection)
PARSER_LIMITS: dict[str, Any] = {"max_line_size": MAX_HEAD_BYTES, "max_field_size": MAX_FIELD_BYTES}

#: kube-apiserver's ``ReadHeaderTimeout``: a little under its 34 s upper bound on a request's
#: time, so that a client trickling its head ties a connection down no longer than a request may run
READ_HEADER_TIMEOUT = 32.0
#: kube-apiserver's ``IdleTimeout``, client-go's (Go's ``DefaultTransport``) keep-alive timeout
IDLE_TIMEOUT = 90.0
#: file descriptors left free below the process's limit when the connection cap is derived from it:
#: at least this many, at least an eighth of the limit (the store's files, the scheduler's clients)
FD_HEADROOM = 64
#: connections let in past the cap, when none can be closed, to answer health probes
PROBE_RESERVE = 8
#: the paths an over-the-cap connection is answered
PROBE_PATHS = ("/healthz", "/livez", "/readyz")
#: kube-apiserver's words for a request refused for load, and the seconds it asks the client to wait
TOO_MANY_REQUESTS = "Too many requests, please try again later."
RETRY_AFTER = "1"

HEAD_TOO_LARGE = "431 Request Header Fields Too Large"
BAD_REQUEST = "400 Bad Request"


def _plain(words: str) -> web.Response:
    """Go's answer to a request it could not read: the status line's words, then the connection closed."""
    resp = web.Response(status=int(words[:3]), text=words, content_type="text/plain", charset="utf-8")
    resp.force_close()
    return resp


def default_max_connections() -> int:
    """The connections the process can hold and still open files: its descriptor limit less
    :data:`FD_HEADROOM` (or an eighth of the limit, if more) and :data:`PROBE_RESERVE`."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft <= 0:
        soft = 1 << 20
    return max(16, soft - max(FD_HEADROOM, soft // 8) - PROBE_RESERVE)


def too_many_requests(close: bool = False) -> web.Response:
    """kube-apiserver's 429 for load (``http.Error`` in its max-in-flight filter): plain text,
    ``Retry-After: 1``."""
    resp = web.Response(
        status=429,
        text=TOO_MANY_REQUESTS + "\n",
        content_type="text/plain",
        charset="utf-8",
        headers={"Retry-After": RETRY_AFTER, "X-Content-Type-Options": "nosniff"},
    )
    if close:
        resp.force_close()
    return resp


@dataclass
class Limits:
    """The connection limits of one server (see the module's text)."""

    read_header_timeout: float = READ_HEADER_TIMEOUT
    idle_timeout: float = IDLE_TIMEOUT
    max_connections: int = field(default_factory=default_max_connections)


def head_bytes(request: web.BaseRequest) -> int:
    """The bytes of the request's head as it came: the request line and each header line."""
    line = len(request.method) + len(request.raw_path) + len("HTTP/1.1") + 4
    return line + sum(len(name) + len(value) + 4 for name, value in request.raw_headers) + 2


def head_too_large(request: web.BaseRequest) -> bool:
    """Whether the request's head is longer than Go reads (each line within aiohttp's limits, all
    together not), or has more fields than aiohttp's parser takes (which the oldest aiohttp the
    bounds allow does not refuse itself: the same answer with every release)."""
    return len(request.raw_headers) > MAX_HEADER_FIELDS or head_bytes(request) > MAX_HEAD_BYTES


def head_too_large_answer() -> web.Response:
    """The 431 for a head :func:`head_too_large` refuses (Go's words, the connection closed)."""
    return _plain(HEAD_TOO_LARGE)


def probe_refused(request: web.BaseRequest) -> web.Response | None:
    """On a connection let in past the cap: None for a health probe (answered, then the
    connection closed), else the 429 that closes it."""
    path = request.path.rstrip("/")
    if not any(path == p or path.startswith(p + "/") for p in PROBE_PATHS):
        return too_many_requests(close=True)
    return None


def probes_only(request: web.BaseRequest) -> bool:
    """Whether the request came on a connection let in past the cap (health probes only)."""
    return bool(getattr(request.protocol, "probes_only", False))


async def expect_continue(request: web.Request) -> web.StreamResponse | None:
    """The route's answer to an ``Expect`` header, before the handler (see the module's text):
    None lets the handler answer."""
    if request.version != HttpVersion11:
        return None
    if request.headers.get(hdrs.EXPECT, "").lower() != "100-continue":
        resp = web.Response(status=417)
        resp.force_close()
        return resp
    transport = request.transport
    if transport is None or transport.is_closing():
        return None  # the client is gone: nobody to tell
    with contextlib.suppress(ConnectionResetError):
        await request.writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        request.writer.output_size = 0  # the answer's own bytes are still to come
    return None


class _Connection(web.RequestHandler):
    """aiohttp's connection, answering a request it cannot parse in Go's words, not Python's,
    and closed when a request's head takes longer than its server's ``read_header_timeout``."""

    def __init__(self, manager: _Server, **kwargs: Any) -> None:
        super().__init__(manager, **kwargs)
        self._server = manager
        #: closes the connection when the head being read is overdue
        self._head_timer: asyncio.TimerHandle | None = None
        #: let in past the cap: health probes only
        self.probes_only = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        self._arm_head_timer()  # Go counts the first head's time from the connection's accept
        self._server.admit(self)

    def data_received(self, data: bytes) -> None:
        before = self._request_count
        super().data_received(data)
        if self._request_count != before:
            self._disarm_head_timer()
        elif self._waiter is not None:  # the first bytes of the next request's head
            self._arm_head_timer()

    def connection_lost(self, exc: BaseException | None) -> None:
        self._disarm_head_timer()
        self._server.release(self)
        super().connection_lost(exc)

    @property
    def waiting(self) -> bool:
        """Whether the connection waits for a request (idle, or its head not yet whole)."""
        return self._waiter is not None and not self._waiter.done() and not self._messages

    def _arm_head_timer(self) -> None:
        timeout = self._server.limits.read_header_timeout
        if self._head_timer is None and timeout > 0:
            self._head_timer = self._loop.call_later(timeout, self._head_overdue)

    def _disarm_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_overdue(self) -> None:
        self._head_timer = None
        if self._request_count == 0 or self.waiting:
            log.debug(
                "request head not read within %ss: closing the connection", self._server.limits.read_header_timeout
            )
            self.force_close()

    def log_exception(self, *args: Any, **kw: Any) -> None:
        """A client's unreadable bytes are its fault, not the server's: at debug. (aiohttp before
        3.10 reports a malformed message after a finished one, a pipelined tail, here as an
        unhandled exception; newer releases answer 400 through :meth:`handle_error`.)"""
        exc = kw.get("exc_info")
        if isinstance(exc, HttpProcessingError):
            log.debug("unreadable bytes from a client: %s", exc)
            return
        super().log_exception(*args, **kw)

    def handle_error(
        self,
        request: web.BaseRequest,
        status: int = 500,
        exc: BaseException | None = None,
        message: str | None = None,
    ) -> web.StreamResponse:
        if isinstance(exc, ConnectionResetError) and (self.transport is None or self.transport.is_closing()):
            # The client hung up while something was written to it (the 100 of an ``Expect``
            # on a path no route serves, say): its choice, not the server's fault, and no one
            # is left to answer.
            log.debug("client %s gone: %s", request.remote, exc)
            gone = web.Response(status=499)
            gone.force_close()
            return gone
        if not isinstance(exc, HttpProcessingError) or request.writer.output_size > 0:
            return super().handle_error(request, status, exc, message)
        log.debug("unreadable request from %s: %s", request.remote, exc)
        too_large = isinstance(exc, LineTooLong) or (
            isinstance(exc, BadHttpMessage) and "Too many headers" in exc.message
        )
        return _plain(HEAD_TOO_LARGE if too_large else BAD_REQUEST)


class _Server(web.Server):
    """aiohttp's server, each of its connections a :class:`_Connection`, their number capped."""

    def __init__(self, *args: Any, limits: Limits, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.limits = limits
        #: the connections open now, oldest first
        self.live: dict[_Connection, None] = {}

    def __call__(self) -> web.RequestHandler:
        return _Connection(self, loop=self._loop, **self._kwargs)

    def admit(self, conn: _Connection) -> None:
        """Count ``conn`` in; past the cap, close the oldest connection waiting for a request,
        or let ``conn`` answer probes only, or close it."""
        self.live[conn] = None
        over = len(self.live) - self.limits.max_connections
        if over <= 0:
            return
        for other in self.live:
            if other is not conn and other.waiting:
                log.debug("%d connections: closing the oldest idle one", len(self.live))
                self.release(other)
                other.force_close()
                return
        if over <= PROBE_RESERVE:
            conn.probes_only = True
        else:
            log.debug("%d connections, none idle: refusing a new one", len(self.live))
            self.release(conn)
            conn.force_close()

    def release(self, conn: _Connection) -> None:
        self.live.pop(conn, None)


class APIRunner(web.AppRunner):
    """``web.AppRunner`` serving the application through :class:`_Server`, with
    :data:`PARSER_LIMITS` and ``limits``."""

    def __init__(self, app: web.Application, limits: Limits | None = None, **kwargs: Any) -> None:
        self.limits = limits if limits is not None else Limits()
        super().__init__(app, **PARSER_LIMITS, keepalive_timeout=self.limits.idle_timeout, **kwargs)

    async def _make_server(self) -> web.Server:
        # aiohttp's hook for the server a runner serves through (no public way to choose it):
        # the server its runner would have made, made again as a _Server with the same settings.
        made = await super()._make_server()
        loop, kwargs = connection_settings(made)
        return _Server(
            made.request_handler,
            request_factory=made.request_factory,
            handler_cancellation=made.handler_cancellation,
            loop=loop,
            limits=self.limits,
            **kwargs,
        )


def connection_settings(server: web.Server) -> tuple[asyncio.AbstractEventLoop, dict[str, Any]]:
    """The loop and the keyword arguments ``server`` makes each of its connections with.

    aiohttp's ``web.Server`` keeps both private and its runner gathers the arguments in private
    code (the runner's settings, the application's debug flag and handler arguments, the access
    logger), with no public accessor: this is the one place that reads them, allowed by name in
    ``tests/unit/test_no_private_reach.py``."""
    return server._loop, dict(server._kwargs)
