"""`kubectl get nodes` against `kubesched sim serve`: a scenario's node without conditions is
Ready, as a kubelet would have it (not Unknown), one the step timeline adds too, and a node whose
conditions the scenario gives shows them."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from kubesched.testing import sim_serve_process

ROOT = Path(__file__).resolve().parents[2]
KUBECTL = shutil.which("kubectl")
pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")

SCENARIO = """\
apiVersion: v1
kind: Node
metadata: {name: plain}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: cordoned}
spec: {unschedulable: true}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: broken}
status:
  allocatable: {cpu: "4", memory: 8Gi, pods: "110"}
  conditions: [{type: Ready, status: "False", reason: KubeletNotReady}]
---
apiVersion: kubesched.io/v1
kind: Steps
steps:
- at: 0s
  create:
  - {apiVersion: v1, kind: Node, metadata: {name: later}, status: {allocatable: {cpu: "4", pods: "110"}}}
"""


def get_nodes(kubeconfig: str, home: Path) -> dict[str, str]:
    """kubectl's NAME -> STATUS columns."""
    done = subprocess.run(
        [str(KUBECTL), "--kubeconfig", kubeconfig, "get", "nodes", "--no-headers"],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
        env={**os.environ, "HOME": str(home)},
    )
    return {line.split()[0]: line.split()[1] for line in done.stdout.splitlines()}


def test_kubectl_shows_scenario_nodes_ready(tmp_path: Path) -> None:
    (tmp_path / "scenario.yaml").write_text(SCENARIO)
    with sim_serve_process(tmp_path, "--scenario", str(tmp_path / "scenario.yaml")) as sim:
        deadline = time.monotonic() + 30
        while "later" not in (shown := get_nodes(sim["kubeconfig"], tmp_path)):
            assert time.monotonic() < deadline, shown
            time.sleep(0.2)
    assert shown == {
        "plain": "Ready",
        "cordoned": "Ready,SchedulingDisabled",
        "broken": "NotReady",
        "later": "Ready",
    }
