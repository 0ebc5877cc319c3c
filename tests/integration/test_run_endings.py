"""How ``kubesched run`` ends besides SIGTERM, in process against the embedded API server over
real HTTP: a stop while it waits for the lease returns 0 at once, a lease it can no longer renew
stops the scheduling loop and returns 1, a cancellation while it waits for the lease ends it;
whichever way, nothing it started is left running."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from polling import eventually

from kubesched.cluster.store import Store
from kubesched.config import load_config
from kubesched.server.app import RunOptions, run
from kubesched.server.serving import ServingOptions
from kubesched.sim.apiserver.faults import parse_config as parse_faults
from kubesched.sim.apiserver.server import APIServer

TOKEN = "run-endings-admin"
CONFIG = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: true
  leaseDuration: 4s
  renewDeadline: 2s
  retryPeriod: 0.5s
  resourceName: run-endings
  resourceNamespace: kube-system
"""


def now_micro() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def held_by(holder: str, seconds: int) -> dict[str, Any]:
    return {
        "holderIdentity": holder,
        "leaseDurationSeconds": seconds,
        "acquireTime": now_micro(),
        "renewTime": now_micro(),
        "leaseTransitions": 0,
    }


def holder(store: Store) -> str:
    try:
        return str(store.get("Lease", "kube-system", "run-endings")["spec"].get("holderIdentity") or "")
    except Exception:  # noqa: BLE001 - not created yet
        return ""


@pytest.fixture
async def cluster(tmp_path: Path) -> Any:
    """The API server, the run's configuration and options; once the test and the server are
    done, no task is left that was not there before (the run's included)."""
    before = asyncio.all_tasks()
    store = Store()
    srv = APIServer(store, token=TOKEN)
    await srv.start()
    kubeconfig = srv.write_kubeconfig(str(tmp_path / "kubeconfig"))
    config = tmp_path / "config.yaml"
    config.write_text(CONFIG)
    opts = RunOptions(
        kubeconfig=kubeconfig, serving=ServingOptions(bind_address="127.0.0.1", secure_port=0), identity="me"
    )
    yield store, load_config(config), opts, srv
    await srv.stop()

    def left() -> set[tuple[str, str]]:
        return {
            (t.get_name(), getattr(t.get_coro(), "__qualname__", ""))
            for t in asyncio.all_tasks() - before - {asyncio.current_task()}
        }

    # The connections the server closed end their handlers within a few turns of the loop.
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 5
    while left() and loop.time() < deadline:
        await asyncio.sleep(0.05)
    assert left() == set()


async def test_a_stop_while_waiting_for_the_lease_returns_0_and_leaves_nothing_running(
    cluster: Any, caplog: pytest.LogCaptureFixture
) -> None:
    store, cfg, opts, _ = cluster
    caplog.set_level("INFO", logger="kubesched")
    store.create(
        "Lease",
        {"metadata": {"name": "run-endings", "namespace": "kube-system"}, "spec": held_by("someone-else", 3600)},
    )
    stop = asyncio.Event()
    task = asyncio.get_running_loop().create_task(run(cfg, opts, stop))
    await eventually(lambda: "waits; the leader is someone-else" in caplog.text, "the wait for the lease", timeout=20)
    stop.set()
    assert await asyncio.wait_for(task, 10) == 0
    assert "successfully acquired lease" not in caplog.text
    assert holder(store) == "someone-else"


async def test_a_lost_lease_stops_the_loop_and_returns_1(cluster: Any, caplog: pytest.LogCaptureFixture) -> None:
    store, cfg, opts, srv = cluster
    caplog.set_level("INFO", logger="kubesched")
    stop = asyncio.Event()
    task = asyncio.get_running_loop().create_task(run(cfg, opts, stop))
    await eventually(lambda: "successfully acquired lease" in caplog.text, "the lease", timeout=20)
    assert holder(store) == "me"
    # The API server refuses every lease write from now on: no renewal for renewDeadline.
    srv.faults.configure(parse_faults({"faults": [{"kind": "error", "code": 503, "resources": ["leases"]}]}))
    assert await asyncio.wait_for(task, 20) == 1
    assert "leaderelection lost" in caplog.text
    assert "shutting down" not in caplog.text
    assert not stop.is_set()


async def test_cancelled_while_waiting_for_the_lease_it_leaves_nothing_running(
    cluster: Any, caplog: pytest.LogCaptureFixture
) -> None:
    store, cfg, opts, _ = cluster
    caplog.set_level("INFO", logger="kubesched")
    store.create(
        "Lease",
        {"metadata": {"name": "run-endings", "namespace": "kube-system"}, "spec": held_by("someone-else", 3600)},
    )
    task = asyncio.get_running_loop().create_task(run(cfg, opts, asyncio.Event()))
    await eventually(lambda: "waits; the leader is someone-else" in caplog.text, "the wait for the lease", timeout=20)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 10)
    # The attempts to acquire the lease ended with the run (the fixture finds no task left).
    assert holder(store) == "someone-else"
