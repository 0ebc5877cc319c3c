"""NodeResourceTopologyMatch as a user meets it against an API server: the package installed
with pip, ``kubesched sim serve`` serving the example scenario (the shipped NodeResourceTopology
definition among its documents), the real kubectl reading the objects and having a malformed one
refused by the definition's schema, and ``kubesched run`` scheduling with the example profile,
reading the objects over HTTP through its informers."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import installed_package
from polling import eventually_sync

from kubesched.testing import sim_serve_process

KUBECTL = shutil.which("kubectl")
pytestmark = [pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed"), pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "plugins" / "noderesourcetopology"
EXAMPLES = PACKAGE / "examples"

MALFORMED = """apiVersion: topology.node.k8s.io/v1alpha2
kind: NodeResourceTopology
metadata: {name: worker-c}
zones:
- name: node-0
  resources:
  - {name: cpu, capacity: "4", allocatable: "4", available: four}
"""


class Cluster:
    def __init__(self, kubeconfig: str, tmp: Path) -> None:
        self.kubeconfig = kubeconfig
        self.tmp = tmp
        self.scheduler: subprocess.Popen[str] | None = None

    def kubectl(self, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [KUBECTL or "kubectl", "--kubeconfig", self.kubeconfig, "--cache-dir", str(self.tmp / "cache"), *args],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
            input=stdin,
        )

    def ok(self, *args: str) -> str:
        r = self.kubectl(*args)
        assert r.returncode == 0, f"kubectl {' '.join(args)} failed: {r.stderr}"
        return r.stdout

    def start_scheduler(self) -> None:
        self.scheduler = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "kubesched",
                "run",
                "--kubeconfig",
                self.kubeconfig,
                "--config",
                str(EXAMPLES / "numa-scheduler.yaml"),
                "--leader-elect=false",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd=self.tmp,
        )

    def placements(self) -> dict[str, str]:
        items = json.loads(self.ok("get", "pods", "-o", "json"))["items"]
        return {p["metadata"]["name"]: p["spec"].get("nodeName") or "pending" for p in items}


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Cluster]:
    source = tmp_path / "noderesourcetopology"
    shutil.copytree(PACKAGE, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    with (
        installed_package(source, "kubesched-noderesourcetopology"),
        sim_serve_process(tmp_path / "serve", "--scenario", str(EXAMPLES / "scenario.yaml")) as served,
    ):
        c = Cluster(served["kubeconfig"], tmp_path)
        try:
            yield c
        finally:
            if c.scheduler is not None:
                c.scheduler.send_signal(signal.SIGTERM)
                try:
                    c.scheduler.wait(10)
                except subprocess.TimeoutExpired:
                    c.scheduler.kill()
                    c.scheduler.wait()


def test_the_example_with_kubectl_and_kubesched_run(cluster: Cluster) -> None:
    names = cluster.ok("get", "node-res-topo", "-o", "jsonpath={.items[*].metadata.name}").split()
    assert names == ["worker-a", "worker-b"]
    refused = cluster.kubectl("apply", "-f", "-", stdin=MALFORMED)
    assert refused.returncode != 0
    assert "zones[0].type" in refused.stderr and "Required value" in refused.stderr, refused.stderr
    assert "zones[0].resources[0].available" in refused.stderr, refused.stderr

    cluster.start_scheduler()
    placed = eventually_sync(
        cluster.placements, "numa-job-0 bound", until=lambda p: p.get("numa-job-0") != "pending", timeout=30
    )
    assert placed["numa-job-0"] == "worker-b"  # worker-a has 6 CPUs free, no cell of 4
    eventually_sync(
        lambda: [
            e
            for e in json.loads(cluster.ok("get", "events", "-o", "json"))["items"]
            if e["involvedObject"]["name"] == "numa-job-1" and "cannot align pod" in e.get("message", "")
        ],
        "numa-job-1's FailedScheduling event",
        timeout=15,
    )
