"""kubesched.testing's Permit driver: waiting pods allowed by another plugin, by the test, or timed out."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kubesched import Status
from kubesched.framework.status import Code
from kubesched.testing import make_node, make_pod, plugin_framework


class Pair:
    """Holds each pod at Permit until a second pod of the same ``pair`` label arrives, which
    then allows the first (as a gang plugin does, through the handle)."""

    name = "Pair"

    def __init__(self, args: Any, handle: Any) -> None:
        self.handle = handle
        self.timeout = float((args or {}).get("timeout", 30))

    def permit(self, state: Any, pod: Any, node_name: str) -> tuple[Status | None, float]:
        pair = pod.labels.get("pair")
        if pair is None:
            return None, 0
        if pod.labels.get("deny"):
            return Status.unschedulable("denied"), 0
        for wp in self.handle.iterate_waiting_pods():
            if wp.pod_info.labels.get("pair") == pair:
                wp.allow(self.name)
                return None, 0
        return Status.wait("waiting for its pair"), self.timeout


class Veto:
    """Rejects pods waiting for a pair once a pod labelled ``veto`` comes to Permit."""

    name = "Veto"

    def __init__(self, args: Any, handle: Any) -> None:
        self.handle = handle

    def permit(self, state: Any, pod: Any, node_name: str) -> Status | None:
        if pod.labels.get("veto"):
            for wp in self.handle.iterate_waiting_pods():
                wp.reject(self.name, "vetoed")
        return None


def nodes() -> list[Any]:
    return [make_node("n1")]


def test_allowed_by_another_pods_permit() -> None:
    with plugin_framework(Pair, nodes=nodes()) as fw:
        a, b = make_pod("a").label("pair", "x"), make_pod("b").label("pair", "x")
        status = fw.permit(a, "n1")
        assert status is not None and status.is_wait()
        assert fw.waiting() == {"a"} and fw.pending_plugins(a) == ["Pair"]
        assert fw.permit(b, "n1") is None
        assert fw.wait_on_permit(a, timeout=1) is None
        assert fw.waiting() == set()


def test_rejected_by_another_plugin() -> None:
    with plugin_framework(Pair, Veto, nodes=nodes()) as fw:
        a = make_pod("a").label("pair", "x")
        assert fw.permit(a, "n1").is_wait()  # type: ignore[union-attr]
        assert fw.permit(make_pod("v").label("veto", "1"), "n1") is None
        status = fw.wait_on_permit(a, timeout=1)
        assert status is not None and status.code is Code.UNSCHEDULABLE
        assert status.plugin == "Veto" and status.reasons == ["vetoed"]


@pytest.mark.parametrize("decision", ["allow", "reject"])
def test_allowed_or_rejected_by_the_test(decision: str) -> None:
    with plugin_framework(Pair, nodes=nodes()) as fw:
        a = make_pod("a").label("pair", "x")
        fw.permit(a, "n1")
        if decision == "allow":
            fw.allow(a)
            assert fw.wait_on_permit(a) is None
        else:
            fw.reject(a, message="not today")
            status = fw.wait_on_permit(a)
            assert status is not None and status.reasons == ["not today"] and status.plugin == "Pair"


def test_timeout_rejects_with_upstreams_message() -> None:
    with plugin_framework(Pair, args={"timeout": 0.05}, nodes=nodes()) as fw:
        a = make_pod("a").label("pair", "x")
        fw.permit(a, "n1")
        status = fw.wait_on_permit(a, timeout=5)
        assert status is not None and status.code is Code.UNSCHEDULABLE
        assert status.reasons == ["rejected due to timeout after waiting 0.05s at plugin Pair"]


def test_a_rejection_at_permit_and_a_pod_not_held() -> None:
    with plugin_framework(Pair, nodes=nodes()) as fw:
        status = fw.permit(make_pod("d").label("pair", "x").label("deny", "1"), "n1")
        assert status is not None and status.code is Code.UNSCHEDULABLE and status.plugin == "Pair"
        assert fw.permit(make_pod("free"), "n1") is None
        assert fw.wait_on_permit(make_pod("free")) is None
        with pytest.raises(LookupError):
            fw.allow(make_pod("free"))


async def test_async_wait_allowed_concurrently() -> None:
    fw = plugin_framework(Pair, nodes=nodes())
    a, b = make_pod("a").label("pair", "x"), make_pod("b").label("pair", "x")
    assert (await fw.apermit(a, "n1")).is_wait()  # type: ignore[union-attr]
    waiter = asyncio.ensure_future(fw.await_permit(a, timeout=1))
    await asyncio.sleep(0)
    assert not waiter.done()
    assert await fw.apermit(b, "n1") is None
    assert await waiter is None
