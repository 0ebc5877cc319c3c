"""Side writes under faults, over real HTTP: the scheduler (on KubeCluster) against the embedded
API server and its fault injector. A pod's failure report is retried through transient server
errors as kube-scheduler retries it; what still fails is one WARNING line naming the pod, no
traceback. The API server takes a client that hangs up mid-request quietly (DEBUG, no traceback)."""

from __future__ import annotations

import asyncio
import logging
import socket
import struct
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from polling import eventually

from kubesched.cluster.kube.cluster import KubeCluster
from kubesched.cluster.retry import DEFAULT_BACKOFF
from kubesched.cluster.store import Store
from kubesched.config import load_config
from kubesched.scheduler import Scheduler, SchedulerOptions
from kubesched.sim.apiserver.faults import parse_config
from kubesched.sim.apiserver.server import APIServer
from kubesched.testing import make_node, make_pod

Obj = dict[str, Any]

#: With this seed a rule of rate 0.5 fails the first three PATCHes of huge's status and lets
#: the fourth through: kube-scheduler's retry (four tries) still writes the condition.
THREE_FAILURES_SEED = 14


@pytest.fixture
async def scheduler(store: Store, server: APIServer, tmp_path: Path) -> AsyncIterator[Scheduler]:
    """The default profile on KubeCluster, running, over one node with 4 CPUs."""
    store.create("Node", make_node("n1").capacity(cpu="4", memory="8Gi", pods="110").obj())
    cluster = KubeCluster(kubeconfig=server.write_kubeconfig(tmp_path / "kc"))
    sched = Scheduler(load_config(None).profiles, cluster, SchedulerOptions(seed=1))
    runner = asyncio.create_task(sched.run())
    try:
        yield sched
    finally:
        await sched.stop(grace=5)
        runner.cancel()
        await asyncio.gather(runner, return_exceptions=True)
        await cluster.stop()


def status_patch_errors(server: APIServer, code: int, rate: float, seed: int = 0) -> None:
    rule = {"kind": "error", "code": code, "rate": rate, "verbs": ["patch"], "resources": ["pods/status"]}
    server.faults.configure(parse_config({"seed": seed, "faults": [rule]}))


def pod_scheduled(store: Store, name: str) -> Obj | None:
    conds = (store.get("Pod", "default", name).get("status") or {}).get("conditions") or []
    return next((c for c in conds if c["type"] == "PodScheduled"), None)


async def create_unschedulable_pod(scheduler: Scheduler, name: str = "huge") -> None:
    cluster = scheduler.cluster
    assert isinstance(cluster, KubeCluster)
    await eventually(lambda: scheduler.synced, what="informers synced", timeout=10)
    await cluster.request("POST", "/api/v1/namespaces/default/pods", body=make_pod(name).req(cpu="100").obj())


@pytest.fixture
async def cluster(server: APIServer, tmp_path: Path) -> AsyncIterator[KubeCluster]:
    c = KubeCluster(kubeconfig=server.write_kubeconfig(tmp_path / "kc"))
    try:
        yield c
    finally:
        await c.stop()


async def set_condition(cluster: KubeCluster, pod: Obj) -> None:
    await cluster.update_pod_condition(pod, {"type": "PodScheduled", "status": "False", "reason": "Unschedulable"})


async def nominate(cluster: KubeCluster, pod: Obj) -> None:
    await cluster.set_nominated_node_name(pod, "n1")


async def annotate(cluster: KubeCluster, pod: Obj) -> None:
    await cluster.patch_pod_annotations(pod, {"kubesched.io/result": "x"})


def condition_written(pod: Obj) -> bool:
    return any(c["type"] == "PodScheduled" for c in pod["status"].get("conditions") or ())


#: Each side write, the resource its PATCH goes to, a seed with which a rule of rate 0.5 fails
#: its first three tries and lets the fourth through, and what shows it was written.
SIDE_WRITES = [
    pytest.param(set_condition, "pods/status", 21, condition_written, id="condition"),
    pytest.param(
        nominate, "pods/status", 21, lambda pod: pod["status"].get("nominatedNodeName") == "n1", id="nominated"
    ),
    pytest.param(
        annotate, "pods", 12, lambda pod: "kubesched.io/result" in pod["metadata"]["annotations"], id="annotations"
    ),
]


@pytest.mark.parametrize(
    "fault",
    [{"kind": "error", "code": 500}, {"kind": "error", "code": 503}, {"kind": "reset"}],
    ids=["500", "503", "reset"],
)
@pytest.mark.parametrize(("write", "resource", "seed", "written"), SIDE_WRITES)
async def test_a_side_write_is_tried_again_through_transient_failures(
    store: Store,
    server: APIServer,
    cluster: KubeCluster,
    fault: Obj,
    write: Any,
    resource: str,
    seed: int,
    written: Any,
) -> None:
    pod = store.create("Pod", make_pod("p").annotation("keep", "1").obj())
    rule = {**fault, "rate": 0.5, "verbs": ["patch"], "resources": [resource]}
    server.faults.configure(parse_config({"seed": seed, "faults": [rule]}))
    await write(cluster, pod)
    assert written(store.get("Pod", "default", "p"))
    assert sum(server.faults.fired.values()) == 3


@pytest.mark.parametrize("code", [500, 503], ids=["500-internal-error", "503-service-unavailable"])
async def test_the_condition_is_written_through_a_few_server_errors(
    store: Store, server: APIServer, scheduler: Scheduler, code: int
) -> None:
    status_patch_errors(server, code, rate=0.5, seed=THREE_FAILURES_SEED)
    await create_unschedulable_pod(scheduler)
    cond = await eventually(lambda: pod_scheduled(store, "huge"), what="PodScheduled condition", timeout=10)
    assert (cond["status"], cond["reason"]) == ("False", "Unschedulable")
    assert server.faults.fired[f"error-{code}"] == 3


async def test_a_report_that_keeps_failing_is_one_warning_naming_the_pod(
    store: Store, server: APIServer, scheduler: Scheduler, caplog: pytest.LogCaptureFixture
) -> None:
    status_patch_errors(server, 500, rate=1.0)
    caplog.set_level(logging.DEBUG, logger="kubesched")
    await create_unschedulable_pod(scheduler)

    def warnings() -> list[logging.LogRecord]:
        return [r for r in caplog.records if r.levelno == logging.WARNING and "default/huge" in r.getMessage()]

    await eventually(warnings, what="a warning about default/huge", timeout=10)
    await scheduler.wait_for_bindings(timeout=5)  # the report's side task has ended
    [warning] = warnings()
    assert warning.name.startswith("kubesched")
    assert "PodScheduled condition" in warning.getMessage()
    assert "Internal error occurred" in warning.getMessage()
    assert warning.exc_info is None
    assert [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR] == []
    # Tried as kube-scheduler's PatchPodStatus tries (client-go's DefaultBackoff), then given up.
    assert server.faults.fired["error-500"] == DEFAULT_BACKOFF.steps
    assert pod_scheduled(store, "huge") is None


@pytest.mark.parametrize("how", ["close", "reset"])
async def test_a_client_that_hangs_up_mid_body_is_logged_at_debug_without_a_traceback(
    server: APIServer, caplog: pytest.LogCaptureFixture, how: str
) -> None:
    caplog.set_level(logging.DEBUG)
    reader, writer = await asyncio.open_connection(server.host, server.port)
    writer.write(
        b"POST /api/v1/namespaces/default/pods HTTP/1.1\r\n"
        + f"Host: {server.host}:{server.port}\r\n".encode()
        + b"Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n"
        + b'{"metadata": {"name": "p"'
    )
    await writer.drain()
    await asyncio.sleep(0.2)  # the server is reading the body
    if how == "reset":
        sock = writer.get_extra_info("socket")
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.close()
    await eventually(
        lambda: [r for r in caplog.records if "hung up" in r.getMessage() or r.exc_info],
        what="the server noticing the client is gone",
        timeout=10,
    )
    assert [r for r in caplog.records if r.exc_info or r.levelno >= logging.WARNING] == []
    [record] = [r for r in caplog.records if "hung up" in r.getMessage()]
    assert record.levelno == logging.DEBUG and "POST /api/v1/namespaces/default/pods" in record.getMessage()


async def test_a_scheduled_event_that_cannot_be_written_is_one_warning_naming_the_pod(
    store: Store, server: APIServer, scheduler: Scheduler, caplog: pytest.LogCaptureFixture
) -> None:
    cluster = scheduler.cluster
    assert isinstance(cluster, KubeCluster)
    cluster.event_retry_interval = 0.001  # the recorder's twelve tries, in about two seconds
    rule = {"kind": "error", "code": 503, "verbs": ["create"], "resources": ["events"]}
    server.faults.configure(parse_config({"faults": [rule]}))
    caplog.set_level(logging.DEBUG, logger="kubesched")
    await eventually(lambda: scheduler.synced, what="informers synced", timeout=10)
    await cluster.request("POST", "/api/v1/namespaces/default/pods", body=make_pod("p").req(cpu="1").obj())

    def warnings() -> list[logging.LogRecord]:
        return [r for r in caplog.records if r.levelno == logging.WARNING and "default/p" in r.getMessage()]

    await eventually(warnings, what="a warning about default/p", timeout=20)
    await scheduler.wait_for_bindings(timeout=5)
    assert store.get("Pod", "default", "p")["spec"]["nodeName"] == "n1"
    [warning] = warnings()
    assert "Scheduled event" in warning.getMessage() and warning.exc_info is None
    assert [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR] == []
