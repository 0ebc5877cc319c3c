"""TaintTolerationComparisonOperators end to end: ``sim serve --with-scheduler --feature-gates
TaintTolerationComparisonOperators=true`` and the real kubectl. The API server then accepts
``Lt``/``Gt`` tolerations (an integer value, as 1.37's validation asks) and the scheduler honours
them; without the gate (1.37's default) the API server refuses them, as kube-apiserver does."""

from __future__ import annotations

import asyncio
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

from kubesched.sim.apiserver.server import APIServer

KUBECTL = shutil.which("kubectl")
pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")

NODE = """\
apiVersion: v1
kind: Node
metadata:
  name: sla-950
spec:
  taints:
    - {key: example.com/sla, value: "950", effect: NoSchedule}
status:
  allocatable: {cpu: "4", memory: 8Gi, pods: "110"}
  capacity: {cpu: "4", memory: 8Gi, pods: "110"}
"""


def pod(name: str, op: str, value: str) -> str:
    return f"""\
apiVersion: v1
kind: Pod
metadata:
  name: {name}
spec:
  tolerations:
    - {{key: example.com/sla, operator: {op}, value: "{value}", effect: NoSchedule}}
  containers:
    - name: main
      image: registry.k8s.io/pause:3.10
      resources:
        requests: {{cpu: 100m, memory: 64Mi}}
"""


def run_kubectl(
    kubeconfig: Path, cache: Path, *args: str, input: str | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [KUBECTL or "kubectl", "--kubeconfig", str(kubeconfig), "--cache-dir", str(cache), *args],
        capture_output=True,
        text=True,
        input=input,
        timeout=60,
    )


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    tmp = tmp_path_factory.mktemp("serve-gates")
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
            "--feature-gates",
            "TaintTolerationComparisonOperators=true",
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
        if "scheduler running" in line or proc.poll() is not None:
            break
    assert re.search(r"embedded API server on https://127\.0\.0\.1:\d+", seen), seen
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


def test_gate_on_the_api_server_accepts_and_the_scheduler_honours_comparisons(served: tuple[Path, Path]) -> None:
    kubeconfig, cache = served
    out = run_kubectl(kubeconfig, cache, "apply", "-f", "-", input=NODE)
    assert out.returncode == 0, out.stderr
    for name, op, value in (("above-900", "Gt", "900"), ("above-960", "Gt", "960"), ("below-1000", "Lt", "1000")):
        out = run_kubectl(kubeconfig, cache, "apply", "-f", "-", input=pod(name, op, value))
        assert out.returncode == 0, out.stderr

    def node_of(name: str) -> str:
        out = run_kubectl(kubeconfig, cache, "get", "pod", name, "-o", "jsonpath={.spec.nodeName}")
        assert out.returncode == 0, out.stderr
        return out.stdout

    # taint 950 > 900 and 950 < 1000: tolerated; 950 > 960 does not hold.
    eventually_sync(lambda: node_of("above-900") == "sla-950", what="above-900 bound", timeout=30)
    eventually_sync(lambda: node_of("below-1000") == "sla-950", what="below-1000 bound", timeout=30)

    def reason(name: str) -> str:
        path = '{.status.conditions[?(@.type=="PodScheduled")].reason}'
        return run_kubectl(kubeconfig, cache, "get", "pod", name, "-o", f"jsonpath={path}").stdout

    eventually_sync(lambda: reason("above-960") == "Unschedulable", what="above-960 unschedulable", timeout=30)
    assert node_of("above-960") == ""


def test_gate_on_a_comparison_value_must_be_an_integer(served: tuple[Path, Path]) -> None:
    kubeconfig, cache = served
    out = run_kubectl(kubeconfig, cache, "apply", "-f", "-", input=pod("leading-zero", "Gt", "0950"))
    assert out.returncode != 0
    assert (
        'spec.tolerations[0].value: Invalid value: "0950": must be a valid decimal integer in canonical form'
        in out.stderr
    )


async def test_gate_off_the_api_server_refuses_comparisons(server: APIServer, tmp_path: Path) -> None:
    kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig")
    # The server runs on this event loop: kubectl must not block it.
    proc = await asyncio.create_subprocess_exec(
        KUBECTL or "kubectl",
        "--kubeconfig",
        str(kubeconfig),
        "--cache-dir",
        str(tmp_path / "cache"),
        "apply",
        "-f",
        "-",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    _, err = await asyncio.wait_for(proc.communicate(pod("p", "Gt", "900").encode()), 60)
    assert proc.returncode != 0
    assert (
        'spec.tolerations[0].operator: Unsupported value: "Gt": supported values: "Equal", "Exists", "Lt", "Gt"'
        in err.decode()
    )
