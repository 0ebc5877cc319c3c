"""What every handler of the API server answers with: JSON bodies, success Statuses and watch
event lines, encoded as the API server encodes them (compact JSON)."""

from __future__ import annotations

import json
from collections.abc import Callable
from json import encoder as json_encoder
from typing import Any

from aiohttp import web

from kubesched.objects import Obj


def _compact_encoder() -> Callable[[Any], str]:
    """An encoder writing exactly what ``json.dumps(value, separators=(",", ":"))`` writes, made
    once: ``json.dumps`` with separators builds an encoder (and its C half) at every call. The
    objects served are trees decoded from JSON, never circular: no reference is tracked (one
    that was would fail as deep nesting does, with RecursionError, instead of ValueError)."""
    python = json.JSONEncoder(separators=(",", ":"))
    make = getattr(json_encoder, "c_make_encoder", None)  # CPython's C encoder, untyped
    if make is None:  # pragma: no cover - CPython has the C encoder
        return python.encode
    encode = make(None, python.default, json_encoder.encode_basestring_ascii, None, ":", ",", False, False, True)
    return lambda value: "".join(encode(value, 0))


#: ``value`` as compact JSON text (ASCII: non-ASCII characters escaped, as json.dumps escapes them).
compact_json: Callable[[Any], str] = _compact_encoder()


def json_response(
    body: Any, status: int = 200, content_type: str = "application/json", headers: Any = None
) -> web.Response:
    """``body`` as a compact JSON response with ``status`` and any extra ``headers``."""
    return web.Response(
        body=compact_json(body).encode(),
        status=status,
        headers={"Content-Type": content_type, **headers} if headers else {"Content-Type": content_type},
    )


def status_success(code: int = 200, details: Obj | None = None) -> Obj:
    """A ``Status`` of ``Success`` with ``code`` (and ``details`` when given)."""
    body: Obj = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": code}
    if details:
        body["details"] = details
    return body


def event_line(etype: str, obj: Obj) -> bytes:
    """One watch event, as the API server streams it: a JSON object and a newline."""
    return compact_json({"type": etype, "object": obj}).encode() + b"\n"
