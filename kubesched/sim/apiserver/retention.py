"""What the API server keeps of objects that are gone: Events expire :data:`EVENT_TTL` seconds
after their last write, as kube-apiserver stores each Event with a TTL (``--event-ttl``, one
hour by default) that every write renews. So ``sim serve`` under a steady stream of pods created
and deleted holds each pod's ``Scheduled`` event an hour after the pod at most, not for ever.

The store's watch history is bounded by its own size. The fault injector's per-pod binding
counts (``/kubesched/stats``) go with their pods; its totals, which the HTTP benchmark reads as
running totals, and the names of pods bound more than once (the evidence of a double binding)
are kept for the server's life.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from kubesched.cluster.base import NotFound
from kubesched.cluster.store import Store
from kubesched.tasks import TaskSet

log = logging.getLogger(__name__)

#: Seconds an Event is kept after its last write (kube-apiserver's ``--event-ttl`` default).
EVENT_TTL = 3600.0


class Retention:
    """Expires Events (see the module docstring): :meth:`start` follows the store's writes and
    sweeps every ``every`` seconds (a tenth of the TTL at most); :meth:`expire` is one sweep."""

    def __init__(
        self,
        store: Store,
        ttl: float = EVENT_TTL,
        clock: Callable[[], float] = time.monotonic,
        every: float = 60.0,
    ) -> None:
        self.store = store
        self.ttl = ttl
        self.clock = clock
        self.every = min(every, ttl / 10)
        #: Each Event's key → its last write, oldest first (a write moves it to the end).
        self._written: OrderedDict[tuple[str, str], float] = OrderedDict()
        self._unsubscribe: Callable[[], None] | None = None
        self._tasks = TaskSet("API server retention", log)

    def start(self) -> None:
        """Follow the store from now on (the Events it holds already count as written now)."""
        if self._unsubscribe is not None:
            return
        now = self.clock()
        for event in self.store.list("Event")[0]:
            self._written[_key(event)] = now
        self._unsubscribe = self.store.subscribe(self._on_write)
        self._tasks.spawn(self._sweep(), name="event expiry")

    async def stop(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        await self._tasks.cancel()

    def _on_write(self, etype: str, kind: str, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
        if kind != "Event":
            return
        key = _key(obj)
        if etype == "DELETED":
            self._written.pop(key, None)
        else:
            self._written[key] = self.clock()
            self._written.move_to_end(key)

    def expire(self) -> int:
        """Delete every Event last written ``ttl`` seconds ago or more; returns how many."""
        deadline = self.clock() - self.ttl
        expired = 0
        while self._written:
            key, written = next(iter(self._written.items()))
            if written > deadline:
                break
            del self._written[key]
            try:
                self.store.delete("Event", key[0], key[1])
                expired += 1
            except NotFound:
                pass
        return expired

    async def _sweep(self) -> None:
        while True:
            await asyncio.sleep(self.every)
            self.expire()

    def __len__(self) -> int:
        """Events followed."""
        return len(self._written)


def _key(event: dict[str, Any]) -> tuple[str, str]:
    meta = event.get("metadata") or {}
    return meta.get("namespace") or "default", meta.get("name", "")
