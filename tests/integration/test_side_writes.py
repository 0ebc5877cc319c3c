"""The API server takes a client that hangs up mid-request quietly (DEBUG, no traceback)."""

from __future__ import annotations

import asyncio
import logging
import socket
import struct
from typing import Any

import pytest
from polling import eventually

from kubesched.sim.apiserver.server import APIServer

Obj = dict[str, Any]


@pytest.mark.parametrize("how", ["close", "reset"])
async def test_a_client_that_hangs_up_mid_body_is_logged_at_debug_without_a_traceback(
    server: APIServer, caplog: pytest.LogCaptureFixture, how: str
) -> None:
    caplog.set_level(logging.DEBUG)
    reader, writer = await asyncio.open_connection(server.host, server.port)
    writer.write(
        b"POST /api/v1/namespaces/default/pods HTTP/1.1\r\n"
        + f"Host: {server.host}:{server.port}\r\n".encode()
        + b"Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n"
        + b'{"metadata": {"name": "p"'
    )
    await writer.drain()
    await asyncio.sleep(0.2)  # the server is reading the body
    if how == "reset":
        sock = writer.get_extra_info("socket")
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.close()
    await eventually(
        lambda: [r for r in caplog.records if "hung up" in r.getMessage() or r.exc_info],
        what="the server noticing the client is gone",
        timeout=10,
    )
    assert [r for r in caplog.records if r.exc_info or r.levelno >= logging.WARNING] == []
    [record] = [r for r in caplog.records if "hung up" in r.getMessage()]
    assert record.levelno == logging.DEBUG and "POST /api/v1/namespaces/default/pods" in record.getMessage()
