"""The network-aware plugins as a user meets them against an API server: the package installed
with pip, ``kubesched sim serve`` serving the two definitions applied from the package's
``crds/`` with the real kubectl, the example's objects applied and listed by their short names, a
malformed AppGroup refused by the definition's schema, and ``kubesched run`` scheduling with the
example profile, reading AppGroups, NetworkTopologies and pods over HTTP through its informers."""

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
import yaml
from conftest import installed_package
from polling import eventually_sync

from kubesched.testing import sim_serve_process

KUBECTL = shutil.which("kubectl")
pytestmark = [pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed"), pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "plugins" / "network-aware"
EXAMPLES = PACKAGE / "examples"
CRDS = PACKAGE / "kubesched_network_aware" / "crds"

MALFORMED = """apiVersion: appgroup.diktyo.x-k8s.io/v1alpha1
kind: AppGroup
metadata: {name: too-far, namespace: default}
spec:
  numMembers: 0
  topologySortingAlgorithm: KahnSort
  workloads:
  - workload: {kind: Deployment, name: a, selector: a}
    dependencies:
    - workload: {kind: Deployment, name: b, selector: b}
      maxNetworkCost: 20000
"""


def example_objects() -> str:
    """The example's nodes, NetworkTopology, AppGroup and pods, its later pods created at once
    (no Steps: the API server holds objects, not a timeline)."""
    docs = [d for d in yaml.safe_load_all((EXAMPLES / "scenario.yaml").read_text()) if d]
    out: list[dict[str, Any]] = []
    for d in docs:
        if d["kind"] == "Steps":
            out.extend(p for step in d["steps"] for p in step["create"])
        elif d["kind"] != "CustomResourceDefinition":
            out.append(d)
    return yaml.safe_dump_all(out)


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

    def ok(self, *args: str, stdin: str | None = None) -> str:
        r = self.kubectl(*args, stdin=stdin)
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
                str(EXAMPLES / "network-aware-scheduler.yaml"),
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
    source = tmp_path / "network-aware"
    shutil.copytree(PACKAGE, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    with installed_package(source, "kubesched-network-aware"), sim_serve_process(tmp_path / "serve") as served:
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


def test_the_definitions_and_the_example_with_kubectl_and_kubesched_run(cluster: Cluster) -> None:
    applied = cluster.ok("apply", "-f", str(CRDS))
    assert "appgroups.appgroup.diktyo.x-k8s.io created" in applied, applied
    assert "networktopologies.networktopology.diktyo.x-k8s.io created" in applied, applied
    eventually_sync(
        lambda: cluster.kubectl("apply", "-f", "-", stdin=example_objects()).returncode == 0,
        "the example's objects applied",
        until=bool,
        timeout=30,
    )
    assert cluster.ok("get", "ag", "-o", "jsonpath={.items[*].metadata.name}").split() == ["online-shop"]
    assert cluster.ok("get", "nt", "-o", "jsonpath={.items[*].metadata.name}").split() == ["nt-default"]
    order = cluster.ok("get", "appgroup", "online-shop", "-o", "jsonpath={.status.topologyOrder[*].index}")
    assert order.split() == ["3", "2", "4", "1"]  # cart, catalog, frontend, redis: sorted by selector

    refused = cluster.kubectl("apply", "-f", "-", stdin=MALFORMED)
    assert refused.returncode != 0
    assert "spec.numMembers" in refused.stderr, refused.stderr
    assert "spec.workloads[0].dependencies[0].maxNetworkCost" in refused.stderr, refused.stderr

    cluster.start_scheduler()
    placed = eventually_sync(
        cluster.placements,
        "the carts bound",
        until=lambda p: "pending" not in (p.get("cart-0"), p.get("cart-1")),
        timeout=30,
    )
    assert placed["cart-0"] == placed["cart-1"] == "east-a", placed  # with redis, the only node near enough
