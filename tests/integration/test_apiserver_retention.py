"""The API server keeps what exists, not its history: Events expire an hour after their last
write, as kube-apiserver's --event-ttl has them."""

from __future__ import annotations

from typing import Any

import pytest
from kubernetes_asyncio import client as kube_client
from kubernetes_asyncio.client.exceptions import ApiException

from kubesched.sim.apiserver.retention import EVENT_TTL
from kubesched.sim.apiserver.server import APIServer


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def _event(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": name, "namespace": "default"},
        "involvedObject": {"kind": "Pod", "namespace": "default", "name": "p"},
        "reason": "Scheduled",
        "message": "assigned",
        "type": "Normal",
        "source": {"component": "default-scheduler"},
    }


async def test_events_expire_an_hour_after_their_last_write(server: APIServer, api: kube_client.ApiClient) -> None:
    clock = Clock()
    server.retention.clock = clock
    core = kube_client.CoreV1Api(api)
    await core.create_namespaced_event("default", _event("old"))
    await core.create_namespaced_event("default", _event("renewed"))
    clock.t += EVENT_TTL - 1
    await core.patch_namespaced_event("renewed", "default", {"count": 2})
    clock.t += 1
    assert server.retention.expire() == 1
    with pytest.raises(ApiException) as err:
        await core.read_namespaced_event("old", "default")
    assert err.value.status == 404
    assert (await core.read_namespaced_event("renewed", "default")).count == 2
    clock.t += EVENT_TTL
    assert server.retention.expire() == 1
    assert (await core.list_namespaced_event("default")).items == []
    assert len(server.retention) == 0
