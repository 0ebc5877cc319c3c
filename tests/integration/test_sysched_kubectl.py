"""SySched as a user meets it against an API server: the package installed with pip,
``kubesched sim serve`` serving the example scenario (the shipped SeccompProfile definition among
its documents), the real kubectl listing the profiles by their short name and having a malformed
one refused by the definition's schema, and ``kubesched run`` scheduling with the example profile,
reading the profiles and the running pods over HTTP through its informers."""

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
PACKAGE = ROOT / "plugins" / "sysched"
EXAMPLES = PACKAGE / "examples"

MALFORMED = """apiVersion: security-profiles-operator.x-k8s.io/v1beta1
kind: SeccompProfile
metadata: {name: broken, namespace: default}
spec:
  defaultAction: SCMP_ACT_ERRNO
  syscalls:
  - action: SCMP_ACT_PERMIT
    names: [read]
  - names: [write]
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
                str(EXAMPLES / "sysched-scheduler.yaml"),
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
    source = tmp_path / "sysched"
    shutil.copytree(PACKAGE, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    with (
        installed_package(source, "kubesched-sysched"),
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
    names = cluster.ok("get", "sp", "-o", "jsonpath={.items[*].metadata.name}").split()
    assert sorted(names) == ["full-seccomp", "memcached-seccomp", "nginx-seccomp", "redis-seccomp"]
    refused = cluster.kubectl("apply", "-f", "-", stdin=MALFORMED)
    assert refused.returncode != 0
    assert "spec.syscalls[0].action" in refused.stderr and "SCMP_ACT_PERMIT" in refused.stderr, refused.stderr
    assert "spec.syscalls[1].action" in refused.stderr and "Required value" in refused.stderr, refused.stderr

    cluster.start_scheduler()
    placed = eventually_sync(
        cluster.placements,
        "the three new pods bound",
        until=lambda p: all(p.get(n) not in (None, "pending") for n in ("nginx-1", "memcached-0", "nginx-2")),
        timeout=30,
    )
    assert (placed["nginx-1"], placed["memcached-0"], placed["nginx-2"]) == ("mynode-1", "mynode-2", "mynode-1")
    # the README's stand-in for a kubelet: the status subresource takes a host IP, twice
    for ip in ("10.0.0.1", "10.0.0.2"):
        cluster.ok(
            "patch",
            "pod",
            "nginx-1",
            "--subresource=status",
            "--type=merge",
            "-p",
            json.dumps({"status": {"hostIP": ip}}),
        )
    assert cluster.ok("get", "pod", "nginx-1", "-o", "jsonpath={.status.hostIP}") == "10.0.0.2"
