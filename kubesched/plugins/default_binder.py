"""DefaultBinder: binds the pod through the cluster client (a ``pods/binding`` call)."""

from __future__ import annotations

from typing import Any

from kubesched.framework import ClusterEventWithHint, CycleState, PodInfo, Status


class DefaultBinder:
    """Bind: ``handle.cluster.bind(pod, node_name)``; any failure becomes an ERROR status, so the
    binding cycle unreserves the pod and retries it."""

    name = "DefaultBinder"

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        self.handle = handle

    async def bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        try:
            await self.handle.cluster.bind(pod.pod, node_name)
        except Exception as exc:  # noqa: BLE001 - every API failure is reported, never raised
            return Status.as_error(exc)
        return None

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return []
