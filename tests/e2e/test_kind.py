"""End to end against a real kind cluster, kubesched running beside the default scheduler.

Needs Docker (a running engine), ``kind`` and ``kubectl`` on PATH. Where any is missing these
tests skip with the reason. ``KUBESCHED_E2E_CLUSTER=<name>`` reuses an existing kind cluster
instead of creating (and deleting) one.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from polling import eventually_sync

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]


def _docker_running() -> str | None:
    if shutil.which("docker") is None:
        return "docker is not installed"
    try:
        out = subprocess.run(
            ["docker", "info", "--format", "{{.ServerVersion}}"], capture_output=True, text=True, timeout=20
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"docker info failed: {exc}"
    if out.returncode != 0 or not out.stdout.strip():
        return "no Docker engine is running (docker info failed)"
    return None


def _why_skip() -> str | None:
    reason = _docker_running()
    if reason:
        return reason
    for tool in ("kind", "kubectl"):
        if shutil.which(tool) is None:
            return f"{tool} is not on PATH"
    return None


SKIP = _why_skip()
if SKIP:
    pytestmark = [pytest.mark.e2e, pytest.mark.skip(reason=f"e2e needs a kind cluster: {SKIP}")]


def kubectl(kubeconfig: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["kubectl", "--kubeconfig", str(kubeconfig), *args], capture_output=True, text=True, check=check, timeout=120
    )


@pytest.fixture(scope="module")
def kind_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    kubeconfig = tmp_path_factory.mktemp("kind") / "kubeconfig"
    existing = os.environ.get("KUBESCHED_E2E_CLUSTER")
    name = existing or f"kubesched-e2e-{uuid.uuid4().hex[:6]}"
    if not existing:
        subprocess.run(["kind", "create", "cluster", "--name", name, "--wait", "120s"], check=True, timeout=600)
    try:
        out = subprocess.run(["kind", "get", "kubeconfig", "--name", name], capture_output=True, text=True, check=True)
        kubeconfig.write_text(out.stdout)
        yield kubeconfig
    finally:
        if not existing:
            subprocess.run(["kind", "delete", "cluster", "--name", name], check=False, timeout=300)


@pytest.fixture(scope="module")
def kubesched(kind_cluster: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[subprocess.Popen[bytes]]:
    config = tmp_path_factory.mktemp("cfg") / "config.yaml"
    config.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\n"
        "kind: KubeSchedulerConfiguration\n"
        "leaderElection:\n  leaderElect: true\n  resourceName: kubesched-e2e\n  resourceNamespace: default\n"
        "profiles:\n  - schedulerName: kubesched\n"
    )
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "kubesched",
            "run",
            "--config",
            str(config),
            "--kubeconfig",
            str(kind_cluster),
            "--port",
            "0",
            "--record-results",
        ],
        cwd=ROOT,
    )
    try:
        yield proc
    finally:
        proc.terminate()
        proc.wait(timeout=60)


def test_pods_for_our_scheduler_are_bound_with_events(kind_cluster: Path, kubesched: subprocess.Popen[bytes]) -> None:
    name = f"e2e-{uuid.uuid4().hex[:6]}"
    manifest = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"schedulerName": "kubesched", "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}]},
    }
    subprocess.run(
        ["kubectl", "--kubeconfig", str(kind_cluster), "apply", "-f", "-"],
        input=json.dumps(manifest),
        text=True,
        check=True,
        timeout=60,
    )

    def node() -> str:
        pod = json.loads(kubectl(kind_cluster, "get", "pod", name, "-o", "json").stdout)
        return pod["spec"].get("nodeName", "")

    assert eventually_sync(node, f"{name} bound", timeout=120, interval=1)
    events = kubectl(kind_cluster, "get", "events", "--field-selector", f"involvedObject.name={name}").stdout
    assert "Scheduled" in events
    pod = json.loads(kubectl(kind_cluster, "get", "pod", name, "-o", "json").stdout)
    assert "kubesched.io/filter-result" in pod["metadata"].get("annotations", {})
    kubectl(kind_cluster, "delete", "pod", name, "--wait=false")


def test_unschedulable_pod_gets_failed_scheduling(kind_cluster: Path, kubesched: subprocess.Popen[bytes]) -> None:
    name = f"e2e-big-{uuid.uuid4().hex[:6]}"
    manifest = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "schedulerName": "kubesched",
            "containers": [
                {"name": "c", "image": "registry.k8s.io/pause:3.10", "resources": {"requests": {"cpu": "1000"}}}
            ],
        },
    }
    subprocess.run(
        ["kubectl", "--kubeconfig", str(kind_cluster), "apply", "-f", "-"],
        input=json.dumps(manifest),
        text=True,
        check=True,
        timeout=60,
    )

    def described() -> str:
        text = kubectl(kind_cluster, "describe", "pod", name).stdout
        return text if "FailedScheduling" in text else ""

    text = eventually_sync(described, f"FailedScheduling for {name}", timeout=120, interval=1)
    assert "Insufficient cpu" in text
    kubectl(kind_cluster, "delete", "pod", name, "--wait=false")


def test_pods_of_other_schedulers_are_left_alone(kind_cluster: Path, kubesched: subprocess.Popen[bytes]) -> None:
    pods = json.loads(kubectl(kind_cluster, "get", "pods", "-A", "-o", "json").stdout)["items"]
    for pod in pods:
        if pod["spec"].get("schedulerName", "default-scheduler") != "kubesched":
            annotations = pod["metadata"].get("annotations") or {}
            assert not any(k.startswith("kubesched.io/") for k in annotations)
