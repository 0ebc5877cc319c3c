import asyncio
from typing import Any

import pytest

from kubesched.framework import Code, CycleState
from kubesched.plugins.default_binder import DefaultBinder
from kubesched.testing import framework_for, make_pod


class FakeCluster:
    """Records bind calls; raises ``error`` when given one."""

    def __init__(self, error: BaseException | None = None) -> None:
        self.error = error
        self.calls: list[tuple[dict[str, Any], str]] = []

    async def bind(self, pod: dict[str, Any], node_name: str) -> None:
        self.calls.append((pod, node_name))
        if self.error is not None:
            raise self.error


@pytest.mark.parametrize(
    ("error", "code", "reason"),
    [
        (None, None, None),
        (RuntimeError("binding rejected"), Code.ERROR, "binding rejected"),
        (ConnectionError(), Code.ERROR, "ConnectionError"),
    ],
    ids=["successful", "binding error", "error without a message"],
)
def test_bind(error, code, reason) -> None:
    cluster = FakeCluster(error)
    fw = framework_for(DefaultBinder, cluster=cluster)
    pod = make_pod("foo", "ns").uid("foo").info()
    status = asyncio.run(fw.plugins["DefaultBinder"].bind(CycleState(), pod, "foohost.kubernetes.mydomain.com"))
    assert len(cluster.calls) == 1
    bound_pod, node = cluster.calls[0]
    assert node == "foohost.kubernetes.mydomain.com"
    assert bound_pod["metadata"]["namespace"] == "ns"
    assert bound_pod["metadata"]["name"] == "foo"
    assert bound_pod["metadata"]["uid"] == "foo"
    if code is None:
        assert status is None
    else:
        assert status is not None and status.code is code
        assert status.reasons == [reason]
        assert status.error is error


def test_cancellation_propagates() -> None:
    cluster = FakeCluster(asyncio.CancelledError())
    binder = DefaultBinder(None, framework_for(DefaultBinder, cluster=cluster))
    with pytest.raises(asyncio.CancelledError):
        asyncio.run(binder.bind(CycleState(), make_pod("p").info(), "n"))


def test_registers_no_events() -> None:
    assert DefaultBinder().events_to_register() == []


def test_run_bind_reports_the_failure_with_the_plugin_name() -> None:
    fw = framework_for(DefaultBinder, cluster=FakeCluster(RuntimeError("conflict")))
    status = asyncio.run(fw.run_bind(CycleState(), make_pod("p").info(), "n"))
    assert status is not None and status.code is Code.ERROR
    assert status.plugin == "DefaultBinder"
    assert "conflict" in status.message()
    assert (
        asyncio.run(
            framework_for(DefaultBinder, cluster=FakeCluster()).run_bind(CycleState(), make_pod("p").info(), "n")
        )
        is None
    )
