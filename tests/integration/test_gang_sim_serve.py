"""A gang of 8 end to end, as a user drives it: separate processes, the real kubectl, real HTTP.

A Job of 8 asks for a gang (``spec.scheduling.schedulingPolicy.gang``); the simulated Job
controller (``WorkloadWithJob``) gives it a Workload and a PodGroup of minCount 8. The nodes hold
only 7 of its pods: none is bound, the FailedScheduling events say why (7 pods the group's
reason, the one that did not fit the nodes' reason), and the PodGroup's
PodGroupInitiallyScheduled condition is False/Unschedulable. A node more and all 8 bind, the
condition turns True. Twice: with the scheduler inside ``sim serve --with-scheduler``, and as
``kubesched run`` (its own process) against ``sim serve`` as its cluster."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from polling import eventually_sync

KUBECTL = shutil.which("kubectl")
pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")

ROOT = Path(__file__).resolve().parents[2]
#: The API server's gates: the PodGroup API and the Job controller's integration.
SERVER_GATES = "GenericWorkload=true,WorkloadWithJob=true"

#: The walk-through of docs/workloads.md uses these files: two nodes with room for 7 pods of 1 CPU, a third
#: node, and the Job of 8 asking for a gang.
EXAMPLES = ROOT / "config" / "examples"
NODES = (EXAMPLES / "gang-nodes.yaml").read_text()
THIRD_NODE = (EXAMPLES / "gang-more-room.yaml").read_text()
GANG_JOB = (EXAMPLES / "gang-job.yaml").read_text()

GROUP_REASON = "minCount (8) cannot be satisfied: 7 scheduled, 0 remaining, pod group preemption: No preemption victims found for incoming preemptor"
NODES_REASON = "0/2 nodes are available: 2 Insufficient cpu. pod group preemption: No preemption victims found for incoming preemptor"


@dataclass
class Cluster:
    kubeconfig: Path
    cache: Path
    logs: list[Path]

    def kubectl(self, *args: str, input: str | None = None) -> str:
        out = subprocess.run(
            [KUBECTL or "kubectl", "--kubeconfig", str(self.kubeconfig), "--cache-dir", str(self.cache), *args],
            capture_output=True,
            text=True,
            input=input,
            timeout=30,
        )
        assert out.returncode == 0, f"kubectl {' '.join(args)}: {out.stderr}"
        return out.stdout


def _start(args: list[str], log: Path, ready: str, cwd: Path) -> subprocess.Popen[bytes]:
    """``python -m kubesched <args>``, its output in ``log``; back once ``ready`` is logged."""
    with log.open("wb") as sink:
        proc = subprocess.Popen(
            [sys.executable, "-m", "kubesched", *args],
            cwd=cwd,
            stdout=sink,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
    deadline = time.monotonic() + 30
    while ready not in log.read_text(errors="replace"):
        assert proc.poll() is None, f"kubesched {args[0]} exited {proc.returncode}: {log.read_text()}"
        assert time.monotonic() < deadline, f"kubesched {args[0]} not ready: {log.read_text()}"
        time.sleep(0.05)
    return proc


def _stop(proc: subprocess.Popen[bytes]) -> int:
    proc.send_signal(signal.SIGTERM)
    try:
        return proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()


@pytest.fixture(params=["sim-serve-with-scheduler", "run-against-sim-serve"])
def cluster(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Cluster]:
    kubeconfig = tmp_path / "kubeconfig"
    serve = ["sim", "serve", "--port", "0", "--kubeconfig-out", str(kubeconfig)]
    procs: list[subprocess.Popen[bytes]] = []
    logs = [tmp_path / "serve.log"]
    try:
        if request.param == "sim-serve-with-scheduler":
            # One process: the scheduler's gate and the API server's are the same flag.
            serve += ["--with-scheduler", "--scheduler-port", "0", "--feature-gates", SERVER_GATES]
            procs.append(_start(serve, logs[0], "scheduler running", tmp_path))
        else:
            procs.append(_start([*serve, "--feature-gates", SERVER_GATES], logs[0], "kubeconfig written", tmp_path))
            logs.append(tmp_path / "run.log")
            run = [
                "run",
                "--kubeconfig",
                str(kubeconfig),
                "--feature-gates",
                "GenericWorkload=true",
                "--secure-port",
                "0",
                "--leader-elect=false",
            ]
            procs.append(_start(run, logs[1], "informers synced", ROOT))
        yield Cluster(kubeconfig, tmp_path / "kubectl-cache", logs)
    finally:
        codes = [_stop(p) for p in reversed(procs)]
    assert codes == [0] * len(procs), [log.read_text() for log in logs]


def failed_scheduling(cluster: Cluster) -> dict[str, str]:
    """The latest FailedScheduling message of each pod of the Job."""
    events = json.loads(cluster.kubectl("get", "events", "-o", "json"))["items"]
    events.sort(key=lambda e: e.get("lastTimestamp") or e.get("eventTime") or "")
    out: dict[str, str] = {}
    for e in events:
        name = e["involvedObject"].get("name", "")
        if e.get("reason") == "FailedScheduling" and name.startswith("train-"):
            out[name] = e["message"]
    return out


def nodes_of_pods(cluster: Cluster) -> dict[str, str]:
    pods = json.loads(cluster.kubectl("get", "pods", "-l", "job-name=train", "-o", "json"))["items"]
    return {p["metadata"]["name"]: p["spec"].get("nodeName") or "" for p in pods}


def initially_scheduled(cluster: Cluster, name: str) -> dict[str, Any]:
    pg = yaml.safe_load(cluster.kubectl("get", "podgroup", name, "-o", "yaml"))
    conditions = (pg.get("status") or {}).get("conditions") or []
    return next((c for c in conditions if c["type"] == "PodGroupInitiallyScheduled"), {})


def test_a_gang_of_8_whose_8th_pod_cannot_fit_binds_none_and_says_why(cluster: Cluster) -> None:
    cluster.kubectl("apply", "-f", "-", input=NODES)
    cluster.kubectl("apply", "-f", "-", input=GANG_JOB)

    # The Job controller made one PodGroup for the Job: a gang of minCount 8.
    group = eventually_sync(
        lambda: cluster.kubectl("get", "podgroups", "-o", "jsonpath={.items[*].metadata.name}").split(),
        what="the Job's PodGroup",
        timeout=15,
    )
    assert len(group) == 1 and group[0].startswith("train-"), group
    (name,) = group
    policy = cluster.kubectl("get", "podgroup", name, "-o", "jsonpath={.spec.schedulingPolicy}")
    assert json.loads(policy) == {"gang": {"minCount": 8}}

    reasons = eventually_sync(
        lambda: failed_scheduling(cluster),
        what="a FailedScheduling event for each of the 8 pods",
        until=lambda r: len(r) == 8,
        timeout=20,
    )
    assert sorted(reasons.values()) == sorted([GROUP_REASON] * 7 + [NODES_REASON]), reasons
    placed = nodes_of_pods(cluster)
    assert len(placed) == 8 and set(placed.values()) == {""}, placed  # none bound
    cond = eventually_sync(lambda: initially_scheduled(cluster, name), what="PodGroupInitiallyScheduled", timeout=10)
    assert (cond["status"], cond["reason"], cond["message"]) == ("False", "Unschedulable", GROUP_REASON)

    # Room for the 8th: the whole gang binds, and the condition turns True.
    cluster.kubectl("apply", "-f", "-", input=THIRD_NODE)
    placed = eventually_sync(
        lambda: nodes_of_pods(cluster),
        what="all 8 pods bound",
        until=lambda p: len(p) == 8 and "" not in p.values(),
        timeout=20,
    )
    assert all(re.fullmatch(r"node-[abc]", n) for n in placed.values()), placed
    per_node = {n: list(placed.values()).count(n) for n in ("node-a", "node-b", "node-c")}
    assert per_node["node-a"] <= 4 and per_node["node-b"] <= 3 and per_node["node-c"] <= 2, per_node
    cond = eventually_sync(
        lambda: initially_scheduled(cluster, name),
        what="PodGroupInitiallyScheduled True",
        until=lambda c: c.get("status") == "True",
        timeout=10,
    )
    assert cond["reason"] == "Scheduled"
