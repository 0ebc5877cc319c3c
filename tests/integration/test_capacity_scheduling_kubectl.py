"""CapacityScheduling as a user meets it, following the package README: the package installed
with pip, ``kubesched sim serve`` serving the example cluster, the real kubectl applying
scheduler-plugins' ElasticQuota CRD (config/crds) and the quotas, ``kubesched run`` scheduling
with the example profile (reading the quotas over HTTP, through its informers), and kubectl
applying the pods, then watching the plugin hold pods back at its max and reclaim by
preemption."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import installed_package
from polling import eventually_sync

from kubesched.testing import sim_serve_process

KUBECTL = shutil.which("kubectl")
pytestmark = [pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed"), pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "plugins" / "capacity-scheduling"
EXAMPLES = PACKAGE / "examples"
CRD = ROOT / "config" / "crds" / "scheduling.x-k8s.io_elasticquotas.yaml"


class Kubectl:
    def __init__(self, kubeconfig: str, tmp: Path) -> None:
        self.kubeconfig = kubeconfig
        self.tmp = tmp
        self.scheduler: subprocess.Popen[str] | None = None

    def start_scheduler(self) -> None:
        """``kubesched run`` with the example profile, against the served cluster."""
        self.scheduler = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "kubesched",
                "run",
                "--kubeconfig",
                self.kubeconfig,
                "--config",
                str(EXAMPLES / "capacity-scheduler.yaml"),
                "--leader-elect=false",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd=self.tmp,
        )

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [KUBECTL or "kubectl", "--kubeconfig", self.kubeconfig, "--cache-dir", str(self.tmp / "cache"), *args],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    def ok(self, *args: str) -> str:
        r = self.run(*args)
        assert r.returncode == 0, f"kubectl {' '.join(args)} failed: {r.stderr}"
        return r.stdout

    def pods(self, namespace: str) -> dict[str, str]:
        """Each pod of the namespace: its node, or "pending"."""
        items = json.loads(self.ok("get", "pods", "-n", namespace, "-o", "json"))["items"]
        return {p["metadata"]["name"]: p["spec"].get("nodeName") or "pending" for p in items}

    def events(self, namespace: str) -> list[dict[str, Any]]:
        return list(json.loads(self.ok("get", "events", "-n", namespace, "-o", "json"))["items"])


def bound(pods: dict[str, str]) -> int:
    return sum(1 for node in pods.values() if node != "pending")


@pytest.fixture
def kubectl(tmp_path: Path) -> Iterator[Kubectl]:
    source = tmp_path / "capacity-scheduling"
    shutil.copytree(PACKAGE, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    with (
        installed_package(source, "kubesched-capacity-scheduling"),
        sim_serve_process(tmp_path / "serve", "--scenario", str(EXAMPLES / "cluster.yaml")) as served,
    ):
        k = Kubectl(served["kubeconfig"], tmp_path)
        try:
            yield k
        finally:
            if k.scheduler is not None:
                k.scheduler.send_signal(signal.SIGTERM)
                try:
                    k.scheduler.wait(10)
                except subprocess.TimeoutExpired:
                    k.scheduler.kill()
                    k.scheduler.wait()


def test_the_readme_walkthrough_with_kubectl(kubectl: Kubectl) -> None:
    kubectl.ok("apply", "-f", str(CRD))
    eventually_sync(lambda: kubectl.run("get", "eq", "-A").returncode == 0, "the CRD served", timeout=10)
    kubectl.ok("apply", "-f", str(EXAMPLES / "quotas.yaml"))
    assert kubectl.ok("get", "eq", "-A", "-o", "jsonpath={.items[*].metadata.name}").split() == ["quota1", "quota2"]
    kubectl.start_scheduler()

    # quota1 borrows up to its max: 3 of its 4 pods run, PreFilter refuses the 4th
    kubectl.ok("apply", "-f", str(EXAMPLES / "app1.yaml"))
    quota1 = eventually_sync(lambda: kubectl.pods("quota1"), "app1 borrows", until=lambda p: bound(p) == 3, timeout=20)
    assert quota1["app1-3"] == "pending"
    refused = "Pod quota1/app1-3 is rejected in PreFilter because ElasticQuota quota1 is more than Max"
    eventually_sync(
        lambda: [e for e in kubectl.events("quota1") if refused in e.get("message", "")],
        "app1-3's FailedScheduling event naming the max",
        timeout=10,
    )

    # quota2 takes back its min: one of quota1's pods is preempted, both of app2's run
    kubectl.ok("apply", "-f", str(EXAMPLES / "app2.yaml"))
    eventually_sync(lambda: kubectl.pods("quota2"), "app2 reclaims", until=lambda p: bound(p) == 2, timeout=30)
    quota1 = kubectl.pods("quota1")
    assert bound(quota1) == 2 and len(quota1) == 3 and quota1["app1-3"] == "pending", quota1
    preempted = [e for e in kubectl.events("quota1") if e.get("reason") == "Preempted"]
    assert len(preempted) == 1 and preempted[0]["involvedObject"]["name"] in ("app1-0", "app1-1", "app1-2")
