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
"""

from __future__ import annotations

import logging
from typing import Any

from aiohttp import web
from aiohttp.http_exceptions import BadHttpMessage, HttpProcessingError, LineTooLong
from aiohttp.typedefs import Handler

log = logging.getLogger(__name__)

#: kube-apiserver's ``http.Server.MaxHeaderBytes``
MAX_HEADER_BYTES = 1 << 20
#: what Go's server reads of a request's head before it answers 431: MaxHeaderBytes and 4096
#: bytes of bufio slack
MAX_HEAD_BYTES = MAX_HEADER_BYTES + 4096
#: the longest header field aiohttp buffers (name and value): within Go's limit, and low enough
#: that a request's 128 fields cannot hold much memory before the head is refused
MAX_FIELD_BYTES = 64 * 1024
#: the limits of aiohttp's request parser (``web.AppRunner`` passes them to each connection)
PARSER_LIMITS: dict[str, Any] = {"max_line_size": MAX_HEAD_BYTES, "max_field_size": MAX_FIELD_BYTES}

HEAD_TOO_LARGE = "431 Request Header Fields Too Large"
BAD_REQUEST = "400 Bad Request"


def _plain(words: str) -> web.Response:
    """Go's answer to a request it could not read: the status line's words, then the connection closed."""
    resp = web.Response(status=int(words[:3]), text=words, content_type="text/plain", charset="utf-8")
    resp.force_close()
    return resp


def head_bytes(request: web.BaseRequest) -> int:
    """The bytes of the request's head as it came: the request line and each header line."""
    line = len(request.method) + len(request.raw_path) + len("HTTP/1.1") + 4
    return line + sum(len(name) + len(value) + 4 for name, value in request.raw_headers) + 2


@web.middleware
async def head_limit(request: web.Request, handler: Handler) -> web.StreamResponse:
    """431 for a head longer than Go reads (each line within aiohttp's limits, all together not)."""
    if head_bytes(request) > MAX_HEAD_BYTES:
        return _plain(HEAD_TOO_LARGE)
    return await handler(request)


class _Connection(web.RequestHandler):
    """aiohttp's connection, answering a request it cannot parse in Go's words, not Python's."""

    def handle_error(
        self,
        request: web.BaseRequest,
        status: int = 500,
        exc: BaseException | None = None,
        message: str | None = None,
    ) -> web.StreamResponse:
        if not isinstance(exc, HttpProcessingError) or request.writer.output_size > 0:
            return super().handle_error(request, status, exc, message)
        log.debug("unreadable request from %s: %s", request.remote, exc)
        too_large = isinstance(exc, LineTooLong) or (
            isinstance(exc, BadHttpMessage) and "Too many headers" in exc.message
        )
        return _plain(HEAD_TOO_LARGE if too_large else BAD_REQUEST)


class _Server(web.Server):
    """aiohttp's server, each of its connections a :class:`_Connection`."""

    def __call__(self) -> web.RequestHandler:
        return _Connection(self, loop=self._loop, **self._kwargs)


class APIRunner(web.AppRunner):
    """``web.AppRunner`` serving the application through :class:`_Server`, with
    :data:`PARSER_LIMITS`."""

    def __init__(self, app: web.Application, **kwargs: Any) -> None:
        super().__init__(app, **PARSER_LIMITS, **kwargs)

    async def _make_server(self) -> web.Server:
        made = await super()._make_server()
        return _Server(
            made.request_handler,
            request_factory=made.request_factory,
            handler_cancellation=made.handler_cancellation,
            loop=made._loop,
            **made._kwargs,
        )
