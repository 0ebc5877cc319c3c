"""An embedded API server on an event loop of its own in a thread, for tests that drive it with
plain synchronous requests (the hypothesis fuzzers)."""

from __future__ import annotations

import asyncio
import threading
import urllib.error
import urllib.request
from typing import Any

from kubesched.cluster.store import Store
from kubesched.sim.apiserver.server import APIServer


class ServerThread:
    """An APIServer on its own event loop in a thread, so the synchronous fuzzer can drive it."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.server = APIServer(Store())
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)

    def __enter__(self) -> ServerThread:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self.server.start(), self.loop).result(10)
        return self

    def __exit__(self, *exc: Any) -> None:
        asyncio.run_coroutine_threadsafe(self.server.stop(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)
        self.loop.close()

    def request(
        self, method: str, path: str, body: bytes | None = None, ctype: str = "application/json", timeout: float = 10
    ) -> int:
        """The status of one request (a timeout raises)."""
        req = urllib.request.Request(self.server.url + path, data=body, method=method)
        req.add_header("Content-Type", ctype)
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                r.read()
                return int(r.status)
        except urllib.error.HTTPError as exc:
            exc.read()
            return int(exc.code)
