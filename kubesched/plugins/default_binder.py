"""DefaultBinder: binds the pod through the cluster client (a ``pods/binding`` call).

As in 1.37, a binding that fails with a transient error (409 Conflict, 500, 503 — also a
connection refused or reset — and 504, a request that timed out) is sent again, with client-go's
``retry.DefaultBackoff``: at most 4 calls, 10, 50 and 250 ms apart (each wait lengthened by up
to a tenth). Any other failure, or the last one, becomes an ERROR status.

Each of those failures may have taken effect (a 409 says the pod is bound already, perhaps by
the very call that timed out), so before sending it again the pod is read: bound to this node,
the binding succeeded; bound elsewhere or gone, or when it cannot be read, the failure is
returned for the binding cycle to settle. A pod is never sent to be bound twice once it is.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from typing import Any

from kubesched.errors import ClusterError
from kubesched.framework.events import ClusterEventWithHint
from kubesched.framework.interface import CycleState, Handle
from kubesched.framework.status import Status
from kubesched.framework.types import PodInfo

#: Status codes of a failed binding worth sending again.
RETRIABLE_CODES = frozenset({409, 500, 503, 504})
#: client-go's ``retry.DefaultBackoff``: calls, first wait (seconds), factor, jitter.
BIND_ATTEMPTS = 4
FIRST_WAIT = 0.010
WAIT_FACTOR = 5.0
JITTER = 0.1


def retriable(exc: BaseException) -> bool:
    return isinstance(exc, ClusterError) and getattr(exc, "code", None) in RETRIABLE_CODES


class DefaultBinder:
    """Bind: ``handle.cluster.bind(pod, node_name)``, retried on transient errors; a failure
    becomes an ERROR status, so the binding cycle unreserves the pod and retries it."""

    name = "DefaultBinder"

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        self.handle: Handle = handle
        #: How the waits between attempts are taken and jittered (tests replace them).
        self.sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
        self.rng = random.Random()

    async def bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        wait = FIRST_WAIT
        for attempt in range(1, BIND_ATTEMPTS + 1):
            try:
                await self.handle.cluster.bind(pod.pod, node_name)
            except Exception as exc:  # noqa: BLE001 - every API failure is reported, never raised
                if attempt == BIND_ATTEMPTS or not retriable(exc):
                    return Status.as_error(exc)
                where = await self._bound_to(pod)
                if where == node_name:
                    return None
                if where is not None:
                    return Status.as_error(exc)
                await self.sleep(wait + self.rng.random() * JITTER * wait)
                wait *= WAIT_FACTOR
                continue
            return None
        return None  # not reached: the last attempt returns

    async def _bound_to(self, pod: PodInfo) -> str | None:
        """The node the server shows ``pod`` bound to; ``""`` when it is gone, replaced or cannot
        be read (not to be sent again); None while it is unbound."""
        try:
            live = await self.handle.cluster.get_pod(pod.namespace, pod.name)
        except Exception:  # noqa: BLE001 - unknown: the binding cycle reads it again itself
            return ""
        if not live or (live.get("metadata") or {}).get("uid") != pod.uid:
            return ""
        return (live.get("spec") or {}).get("nodeName") or None

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return []
