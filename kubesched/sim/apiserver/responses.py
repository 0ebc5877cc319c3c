"""What every handler of the API server answers with: JSON bodies, success Statuses and watch
event lines, encoded as the API server encodes them (compact JSON)."""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web

from kubesched.objects import Obj


def json_response(
    body: Any, status: int = 200, content_type: str = "application/json", headers: Any = None
) -> web.Response:
    """``body`` as a compact JSON response with ``status`` and any extra ``headers``."""
    return web.Response(
        body=json.dumps(body, separators=(",", ":")).encode(),
        status=status,
        headers={"Content-Type": content_type, **(headers or {})},
    )


def status_success(code: int = 200, details: Obj | None = None) -> Obj:
    """A ``Status`` of ``Success`` with ``code`` (and ``details`` when given)."""
    body: Obj = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": code}
    if details:
        body["details"] = details
    return body


def event_line(etype: str, obj: Obj) -> bytes:
    """One watch event, as the API server streams it: a JSON object and a newline."""
    return json.dumps({"type": etype, "object": obj}, separators=(",", ":")).encode() + b"\n"
