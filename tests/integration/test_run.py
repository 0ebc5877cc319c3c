"""`kubesched run` as a user runs it: separate processes, the embedded API server over real HTTP
(kubernetes_asyncio on both sides of the wire), leader election between two replicas, metrics,
health, and a clean SIGTERM."""

from __future__ import annotations

import asyncio
import functools
import os
import re
import signal
import socket
import sys
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from polling import eventually

from kubesched.cluster.store import Store
from kubesched.sim.apiserver.server import APIServer
from kubesched.testing import make_node, make_pod

ROOT = Path(__file__).resolve().parents[2]
ADMIN_TOKEN = "test-admin-token"
LEASE_SECONDS = 4

CONFIG = f"""\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: true
  leaseDuration: {LEASE_SECONDS}s
  renewDeadline: 3s
  retryPeriod: 1s
  resourceName: kubesched-test
  resourceNamespace: kube-system
profiles:
  - schedulerName: kubesched
"""


class Replica:
    def __init__(self, proc: asyncio.subprocess.Process, identity: str) -> None:
        self.proc = proc
        self.identity = identity
        self.port: int | None = None
        self.lines: list[str] = []
        self._reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        assert self.proc.stderr is not None
        while True:
            line = await self.proc.stderr.readline()
            if not line:
                return
            text = line.decode(errors="replace")
            self.lines.append(text)
            m = re.search(r"serving securely on [^:]+:(\d+)", text)
            if m:
                self.port = int(m.group(1))

    def log(self) -> str:
        return "".join(self.lines)

    async def stop(self, sig: int = signal.SIGTERM) -> int:
        if self.proc.returncode is None:
            self.proc.send_signal(sig)
        code = await asyncio.wait_for(self.proc.wait(), 30)
        await asyncio.wait_for(self._reader, 5)
        return code


async def start_replica(kubeconfig: Path, config: Path, identity: str) -> Replica:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "kubesched",
        "run",
        "--config",
        str(config),
        "--kubeconfig",
        str(kubeconfig),
        "--bind-address",
        "127.0.0.1",
        "--secure-port",
        str(free_port()),
        "--identity",
        identity,
        cwd=ROOT,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    return Replica(proc, identity)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
async def server(tmp_path: Path) -> Any:
    store = Store()
    # The replicas' secure ports delegate to this server: the admin token may read their metrics.
    srv = APIServer(store, token=ADMIN_TOKEN)
    await srv.start()
    kubeconfig = Path(srv.write_kubeconfig(str(tmp_path / "kubeconfig")))
    config = tmp_path / "config.yaml"
    config.write_text(CONFIG)
    yield store, srv, kubeconfig, config
    await srv.stop()


def holder(store: Store) -> str:
    try:
        return store.get("Lease", "kube-system", "kubesched-test")["spec"].get("holderIdentity") or ""
    except Exception:  # noqa: BLE001 - not created yet
        return ""


def scheduled_events(store: Store, pod_name: str) -> int:
    items, _ = store.list("Event")
    return sum(1 for e in items if e["involvedObject"].get("name") == pod_name and e.get("reason") == "Scheduled")


def bound(store: Store, name: str) -> str | None:
    return store.get("Pod", "default", name)["spec"].get("nodeName")


async def test_two_replicas_one_leader_failover_and_clean_shutdown(server: Any) -> None:
    store, srv, kubeconfig, config = server
    for i in range(3):
        store.create("Node", make_node(f"n{i}").obj())
    a = await start_replica(kubeconfig, config, "replica-a")
    b = await start_replica(kubeconfig, config, "replica-b")
    replicas = {"replica-a": a, "replica-b": b}
    try:
        await eventually(lambda: holder(store) in replicas, "a leader", timeout=30)
        leader = replicas[holder(store)]
        follower = b if leader is a else a
        for i in range(5):
            store.create("Pod", make_pod(f"first-{i}").scheduler("kubesched").obj())
        await eventually(
            lambda: all(bound(store, f"first-{i}") for i in range(5)), "pods bound by the leader", timeout=30
        )
        assert "successfully acquired lease" in leader.log()
        assert "successfully acquired lease" not in follower.log()

        # Metrics and health of the leader, with upstream's names.
        # A slow machine may start the follower well after the leader: wait for its endpoints.
        await eventually(
            lambda: leader.port is not None and follower.port is not None, "both health endpoints", timeout=30
        )
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=False)) as http:
            admin = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
            async with http.get(f"https://127.0.0.1:{leader.port}/metrics", headers=admin) as r:
                text = await r.text()

            async def ready(port: int | None) -> bool:
                async with http.get(f"https://127.0.0.1:{port}/readyz") as r:
                    return r.status == 200

            for port in (leader.port, follower.port):
                async with http.get(f"https://127.0.0.1:{port}/healthz") as r:
                    assert r.status == 200
                # Ready once informers have synced, leader or not.
                await eventually(functools.partial(ready, port), f"/readyz of port {port}", timeout=10, interval=0.1)
        assert 'scheduler_schedule_attempts_total{profile="kubesched",result="scheduled"} 5.0' in text
        assert "scheduler_scheduling_attempt_duration_seconds_bucket" in text
        assert 'scheduler_pending_pods{queue="active"}' in text
        assert "scheduler_framework_extension_point_duration_seconds_bucket" in text
        assert "scheduler_pod_scheduling_sli_duration_seconds_bucket" in text
        assert "scheduler_queue_incoming_pods_total" in text
        assert "scheduler_pod_scheduling_attempts_count 5.0" in text
        assert 'scheduler_cache_size{type="nodes"} 3.0' in text and 'scheduler_cache_size{type="pods"} 5.0' in text
        assert "# TYPE scheduler_unschedulable_pods gauge" in text
        assert "# TYPE scheduler_preemption_victims histogram" in text
        assert "# TYPE scheduler_permit_wait_duration_seconds histogram" in text
        assert "_created" not in text

        await eventually(
            lambda: "attempting to acquire leader lease" in follower.log(), "the follower to wait", timeout=30
        )
        # Kill the leader outright (no lease release): the follower takes over once the lease
        # has gone unrenewed for leaseDuration, as it observes it. As in client-go, that is
        # within leaseDuration plus up to two jittered retry periods (1s x 2.2) of the kill.
        await leader.stop(signal.SIGKILL)
        loop = asyncio.get_running_loop()
        killed_at = loop.time()
        for i in range(3):
            store.create("Pod", make_pod(f"second-{i}").scheduler("kubesched").obj())
        await eventually(
            lambda: holder(store) == follower.identity, "the follower to take over", timeout=LEASE_SECONDS + 10
        )
        took = loop.time() - killed_at
        # (+2 s for a loaded machine: two processes and the server share two cores.)
        assert took <= LEASE_SECONDS + 2 * 2.2 + 2.0, f"took over after {took:.1f}s"
        assert took >= 1.0, f"took over after {took:.1f}s: before the lease could have expired"
        await eventually(
            lambda: all(bound(store, f"second-{i}") for i in range(3)), "pods bound by the new leader", timeout=30
        )
        names = [f"first-{i}" for i in range(5)] + [f"second-{i}" for i in range(3)]
        # The Scheduled event follows the binding: wait for it, then no pod may have two.
        await eventually(lambda: all(scheduled_events(store, n) >= 1 for n in names), "Scheduled events", timeout=20)
        for name in names:
            assert scheduled_events(store, name) == 1, f"{name} bound more than once"

        # SIGTERM: exit 0 and the lease released so a successor need not wait.
        assert await follower.stop(signal.SIGTERM) == 0, follower.log()
        lease = store.get("Lease", "kube-system", "kubesched-test")
        assert not lease["spec"].get("holderIdentity"), lease
    finally:
        for r in (a, b):
            if r.proc.returncode is None:
                r.proc.kill()
                await r.proc.wait()


async def test_broken_config_is_refused_before_anything_runs(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(CONFIG.replace("retryPeriod: 1s", "retryPeriod: 1s\n  bogus: 1"))
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "kubesched",
        "run",
        "--config",
        str(bad),
        "--kubeconfig",
        str(tmp_path / "none"),
        cwd=ROOT,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    _, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode != 0
    assert "leaderElection.bogus" in err.decode()


async def test_run_resyncs_after_dropped_watches_and_after_410(server: Any, tmp_path: Path) -> None:
    """`kubesched run` (in-process here, over real HTTP) keeps scheduling when the server drops
    every watch, and when it must relist because its resourceVersion was compacted away."""
    from kubesched.config import load_config
    from kubesched.server.app import RunOptions, run
    from kubesched.server.serving import ServingOptions

    store, srv, kubeconfig, _ = server
    config = tmp_path / "no-le.yaml"
    config.write_text(CONFIG.replace("leaderElect: true", "leaderElect: false"))
    store.create("Node", make_node("n1").obj())
    stop = asyncio.Event()
    task = asyncio.create_task(
        run(
            load_config(config),
            RunOptions(kubeconfig=str(kubeconfig), serving=ServingOptions(bind_address="127.0.0.1", secure_port=0)),
            stop,
        )
    )
    try:
        store.create("Pod", make_pod("before").scheduler("kubesched").obj())
        await eventually(lambda: bound(store, "before") == "n1", "the first pod bound", timeout=20)
        # The Scheduled event follows the binding.
        await eventually(lambda: scheduled_events(store, "before") == 1, "the Scheduled event", timeout=20)
        events = [e for e in store.list("Event")[0] if e["involvedObject"].get("name") == "before"]
        assert [e["reason"] for e in events] == ["Scheduled"]

        srv.drop_watches()
        store.create("Pod", make_pod("after-drop").scheduler("kubesched").obj())
        await eventually(
            lambda: bound(store, "after-drop") == "n1", "a pod created after the watches dropped", timeout=20
        )

        # Compact the history and drop the watches: resuming from the old resourceVersion gets
        # 410 Gone, so the informers relist; a pod deleted and one created meanwhile are seen.
        store.create("Pod", make_pod("unfit").scheduler("kubesched").req(cpu="100").obj())
        await eventually(
            lambda: bool(store.get("Pod", "default", "unfit")["status"].get("conditions")),
            "the unfit pod reported",
            timeout=20,
        )
        cond = store.get("Pod", "default", "unfit")["status"]["conditions"][0]
        assert (cond["type"], cond["status"], cond["reason"]) == ("PodScheduled", "False", "Unschedulable")
        srv.compact()
        srv.drop_watches()
        store.delete("Pod", "default", "unfit")
        store.create("Pod", make_pod("after-410").scheduler("kubesched").obj())
        await eventually(lambda: bound(store, "after-410") == "n1", "a pod created across a 410 relist", timeout=20)
    finally:
        stop.set()
        assert await asyncio.wait_for(task, 30) == 0
