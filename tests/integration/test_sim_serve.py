"""`kubesched sim serve --with-scheduler` and the real kubectl, exactly as docs/simulator.md walks through it."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from polling import eventually_sync

ROOT = Path(__file__).resolve().parents[2]
KUBECTL = shutil.which("kubectl")
pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")

POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: hello
spec:
  containers:
    - name: web
      image: nginx:1.27
      resources:
        requests:
          cpu: 250m
          memory: 64Mi
"""

HUGE = POD.replace("name: hello", "name: huge").replace("cpu: 250m", "cpu: 500")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    tmp = tmp_path_factory.mktemp("serve")
    kubeconfig = tmp / "kubeconfig"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "kubesched",
            "sim",
            "serve",
            "--with-scheduler",
            "--port",
            "0",
            "--scenario",
            str(ROOT / "config" / "scenarios" / "demo.yaml"),
            "--kubeconfig-out",
            str(kubeconfig),
        ],
        cwd=tmp,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert proc.stdout is not None
    deadline = time.monotonic() + 60
    seen = ""
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        seen += line
        if "scheduler running" in line:
            break
        if proc.poll() is not None:
            break
    assert re.search(r"embedded API server on https://127\.0\.0\.1:\d+", seen), seen
    assert kubeconfig.is_file(), seen
    try:
        yield kubeconfig, tmp / "kubectl-cache"
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
    assert proc.returncode == 0


def kubectl(served: tuple[Path, Path], *args: str, input: str | None = None) -> str:
    kubeconfig, cache = served
    out = subprocess.run(
        [KUBECTL or "kubectl", "--kubeconfig", str(kubeconfig), "--cache-dir", str(cache), *args],
        capture_output=True,
        text=True,
        input=input,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_apply_then_get_shows_the_node(served: tuple[Path, Path]) -> None:
    assert "pod/hello created" in kubectl(served, "apply", "-f", "-", input=POD)

    def node() -> str:
        line = kubectl(served, "get", "pod", "hello", "-o", "wide", "--no-headers")
        fields = line.split()
        return fields[6] if len(fields) > 6 and fields[6].startswith(("node-", "gpu-")) else ""

    assert eventually_sync(node, "hello's node", timeout=30, interval=0.3).startswith("node-")
    events = eventually_sync(
        lambda: (lambda t: t if "pod/hello" in t else "")(kubectl(served, "get", "events")),
        "an event about pod/hello",
        timeout=30,
        interval=0.3,
    )
    assert re.search(r"Scheduled\s+pod/hello\s+Successfully assigned default/hello to node-", events), events


def test_describe_shows_why_a_pod_does_not_fit(served: tuple[Path, Path]) -> None:
    kubectl(served, "apply", "-f", "-", input=HUGE)
    text = eventually_sync(
        lambda: (lambda t: t if "FailedScheduling" in t else "")(kubectl(served, "describe", "pod", "huge")),
        "FailedScheduling in the description of huge",
        timeout=30,
        interval=0.3,
    )
    assert "0/37 nodes are available:" in text
    assert "Insufficient cpu" in text


def test_results_are_annotations_on_the_pod(served: tuple[Path, Path]) -> None:
    import json

    def annotated() -> str:
        text = kubectl(served, "get", "pod", "web-000", "-n", "team-a", "-o", "json")
        return text if "kubesched.io/selected-node" in text else ""

    pod = json.loads(eventually_sync(annotated, "web-000 annotated", timeout=30, interval=0.3))
    annotations = pod["metadata"]["annotations"]
    assert annotations["kubesched.io/selected-node"] == pod["spec"]["nodeName"]
    filters = json.loads(annotations["kubesched.io/filter-result"])
    assert filters[pod["spec"]["nodeName"]]["NodeResourcesFit"] == "passed"
    final = json.loads(annotations["kubesched.io/finalscore-result"])
    assert set(final[pod["spec"]["nodeName"]]) >= {"NodeResourcesFit", "TaintToleration"}


def test_top_shows_the_load_of_running_pods(served: tuple[Path, Path]) -> None:
    # hello asks for 250m and 64Mi and has no usage annotation: its requests are its usage.
    assert kubectl(served, "top", "pod", "hello", "--no-headers").split() == ["hello", "250m", "64Mi"]
    node = kubectl(served, "get", "pod", "hello", "-o", "jsonpath={.spec.nodeName}")
    rows = {line.split()[0]: line.split()[1:] for line in kubectl(served, "top", "nodes", "--no-headers").splitlines()}
    cpu = rows[node][0]
    assert cpu.endswith("m") and int(cpu[:-1]) >= 250, rows[node]


def test_delete_returns(served: tuple[Path, Path]) -> None:
    assert 'pod "hello" deleted' in kubectl(served, "delete", "pod", "hello")
    assert "hello" not in kubectl(served, "get", "pods", "--no-headers")


def test_insecure_serves_plain_http_without_a_token_on_loopback_only(tmp_path: Path) -> None:
    import json
    import urllib.request

    refused = subprocess.run(
        [sys.executable, "-m", "kubesched", "sim", "serve", "--insecure", "--address", "0.0.0.0", "--port", "0"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert refused.returncode == 2
    assert "--insecure: serves without authentication, so only on a loopback address, not 0.0.0.0" in refused.stderr
    proc = subprocess.Popen(
        [sys.executable, "-m", "kubesched", "sim", "serve", "--insecure", "--port", "0"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        match = re.search(r"embedded API server on (http://127\.0\.0\.1:\d+)", line)
        assert match, line
        with urllib.request.urlopen(f"{match.group(1)}/api/v1/namespaces", timeout=10) as resp:
            names = [ns["metadata"]["name"] for ns in json.load(resp)["items"]]
        assert "default" in names
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
    assert proc.returncode == 0
