import asyncio
from typing import Any

import pytest

from kubesched.cluster.base import ClusterError
from kubesched.framework.interface import CycleState
from kubesched.framework.status import Code
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


class FlakyCluster:
    """Fails the first ``failures`` bind calls with ``error``, then binds; ``took_effect``: the
    failed calls bound the pod all the same (as a call that timed out may have). Reads show the
    pod as the calls left it."""

    def __init__(self, error: BaseException, failures: int, took_effect: bool = False) -> None:
        self.error = error
        self.failures = failures
        self.took_effect = took_effect
        self.calls = 0
        self.reads = 0
        self.node = ""

    async def bind(self, pod: dict[str, Any], node_name: str) -> None:
        self.calls += 1
        if self.calls <= self.failures:
            if self.took_effect:
                self.node = node_name
            raise self.error
        self.node = node_name

    async def get_pod(self, namespace: str, name: str) -> dict[str, Any]:
        self.reads += 1
        return {"metadata": {"name": name, "namespace": namespace, "uid": "p"}, "spec": {"nodeName": self.node}}


def _bind_with(cluster) -> tuple[Any, list[float], DefaultBinder]:
    binder = DefaultBinder(None, framework_for(DefaultBinder, cluster=cluster))
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    binder.sleep = sleep
    status = asyncio.run(binder.bind(CycleState(), make_pod("p").uid("p").info(), "n"))
    return status, waits, binder


@pytest.mark.parametrize(
    ("code", "failures", "calls", "ok"),
    [
        (500, 1, 2, True),
        (503, 3, 4, True),
        (409, 2, 3, True),
        (504, 4, 4, False),
        (404, 1, 1, False),
        (422, 1, 1, False),
    ],
    ids=[
        "500 once, then bound",
        "503 three times, bound at the last attempt",
        "409 twice, then bound",
        "504 every time: four attempts",
        "404 is not retried",
        "422 is not retried",
    ],
)
def test_bind_retries_transient_errors(code: int, failures: int, calls: int, ok: bool) -> None:
    error = ClusterError(f"status {code}", code)
    cluster = FlakyCluster(error, failures)
    status, waits, _ = _bind_with(cluster)
    assert cluster.calls == calls
    assert len(waits) == calls - 1
    if ok:
        assert status is None
    else:
        assert status is not None and status.code is Code.ERROR and status.error is error


def test_bind_retry_waits_follow_the_default_backoff() -> None:
    _, waits, _ = _bind_with(FlakyCluster(ClusterError("unavailable", 503), 10))
    assert len(waits) == 3
    for wait, base in zip(waits, (0.010, 0.050, 0.250), strict=True):
        assert base <= wait <= base * 1.1


def test_errors_without_a_status_are_not_retried() -> None:
    cluster = FlakyCluster(RuntimeError("boom"), 1)
    status, waits, _ = _bind_with(cluster)
    assert cluster.calls == 1 and waits == []
    assert status is not None and status.code is Code.ERROR


def test_a_failed_bind_that_took_effect_is_not_sent_again() -> None:
    """A 504 or a 409 may mean the call bound the pod: it is read before being sent again."""
    cluster = FlakyCluster(ClusterError("timed out", 504), 1, took_effect=True)
    status, waits, _ = _bind_with(cluster)
    assert status is None
    assert (cluster.calls, cluster.reads, waits) == (1, 1, [])


def test_a_pod_bound_elsewhere_is_the_binding_cycle_s_to_settle() -> None:
    cluster = FlakyCluster(ClusterError("conflict", 409), 1)
    cluster.node = "other"
    status, _, _ = _bind_with(cluster)
    assert status is not None and status.code is Code.ERROR
    assert cluster.calls == 1
