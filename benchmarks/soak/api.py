"""The soak's client of the API server: bounded retries on throttling, 5xx and broken
connections, so the faults it injects are ridden out as a real client would."""

from __future__ import annotations

import asyncio
import json
import ssl
import time
from typing import Any

import aiohttp


class API:
    """Requests to the server with bounded retries on throttling, 5xx and broken connections."""

    def __init__(self, url: str, token: str | None, ca_pem: str | None, deadline: float) -> None:
        self.url = url
        self.deadline = deadline
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        tls = ssl.create_default_context(cadata=ca_pem) if ca_pem else None
        self.session = aiohttp.ClientSession(
            headers=headers,
            timeout=aiohttp.ClientTimeout(total=30),
            connector=aiohttp.TCPConnector(limit=64, ssl=tls if tls is not None else True),
        )
        self.retries = 0

    async def close(self) -> None:
        await self.session.close()

    async def call(
        self, method: str, path: str, body: Any = None, attempts: int = 10, **params: str
    ) -> tuple[int, Any]:
        """(status, decoded body) of the first answer that is not 429/5xx; after ``attempts``
        or past the deadline, the last one (status 0 when the connection never answered)."""
        last: tuple[int, Any] = (0, None)
        for attempt in range(attempts):
            if time.monotonic() > self.deadline:
                break
            wait = min(2.0, 0.1 * 2**attempt)
            try:
                async with self.session.request(method, self.url + path, json=body, params=params or None) as r:
                    text = await r.text()
                    try:
                        data = json.loads(text) if text else None
                    except ValueError:
                        data = text
                    last = (r.status, data)
                    if r.status != 429 and r.status < 500:
                        return last
                    if r.status == 429:
                        wait = float(r.headers.get("Retry-After", "1"))
            except (aiohttp.ClientError, TimeoutError) as exc:
                last = (0, repr(exc))
            self.retries += 1
            await asyncio.sleep(wait)
        return last
