"""Pods held at Permit: each waits until every plugin that said Wait allows it, one rejects it,
preemption takes it, or that plugin's timeout passes (upstream's waitingPod and waitingPodsMap)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Mapping
from typing import Any

from kubesched.framework.status import Code, Status
from kubesched.framework.types import PodInfo

#: Upstream caps how long a pod may wait at Permit.
MAX_PERMIT_TIMEOUT = 15 * 60.0


class WaitingPod:
    """A pod held at Permit by one or more plugins, each with its own timeout."""

    def __init__(self, pod: PodInfo, plugin_timeouts: Mapping[str, float], loop: asyncio.AbstractEventLoop) -> None:
        self.pod_info = pod
        self._future: asyncio.Future[Status] = loop.create_future()
        self._pending: dict[str, asyncio.TimerHandle] = {}
        for plugin, timeout in plugin_timeouts.items():
            self._pending[plugin] = loop.call_later(
                timeout,
                self.reject,
                plugin,
                f"rejected due to timeout after waiting {fmt_seconds(timeout)} at plugin {plugin}",
            )

    @property
    def pod(self) -> dict[str, Any]:
        return self.pod_info.pod

    def pending_plugins(self) -> list[str]:
        return list(self._pending)

    def allow(self, plugin: str) -> None:
        timer = self._pending.pop(plugin, None)
        if timer is not None:
            timer.cancel()
        if not self._pending and not self._future.done():
            self._future.set_result(Status(Code.SUCCESS))

    def reject(self, plugin: str, message: str) -> None:
        for timer in self._pending.values():
            timer.cancel()
        self._pending.clear()
        if not self._future.done():
            self._future.set_result(Status(Code.UNSCHEDULABLE, message, plugin=plugin))

    def preempt(self, plugin: str, message: str) -> bool:
        """Preemption takes the pod's place (1.36): unlike :meth:`reject`, the pod is not
        unschedulable; its binding cycle ends with an Error status, which sends it to backoffQ
        to be retried soon. Whether the word reached the pod: False when it was already allowed
        or rejected (the caller then deletes it as any other victim)."""
        if self._future.done():
            return False
        for timer in self._pending.values():
            timer.cancel()
        self._pending.clear()
        self._future.set_result(Status(Code.ERROR, message, plugin=plugin))
        return True

    async def wait(self) -> Status:
        return await self._future


def fmt_seconds(seconds: float) -> str:
    """Durations the way Go prints them in upstream's messages (``10s``, ``1.5s``, ``2m0s``)."""
    if seconds >= 60:
        m, s = divmod(seconds, 60)
        return f"{int(m)}m{s:g}s"
    return f"{seconds:g}s"


class WaitingPods:
    """Pods waiting at Permit, shared by every profile so any plugin can allow or reject them."""

    def __init__(self) -> None:
        self._pods: dict[str, WaitingPod] = {}

    def add(self, wp: WaitingPod) -> None:
        self._pods[wp.pod_info.uid] = wp

    def get(self, uid: str) -> WaitingPod | None:
        return self._pods.get(uid)

    def remove(self, uid: str) -> None:
        self._pods.pop(uid, None)

    def __iter__(self) -> Iterator[WaitingPod]:
        return iter(list(self._pods.values()))

    def __len__(self) -> int:
        return len(self._pods)
