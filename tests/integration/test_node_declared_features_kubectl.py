"""NodeDeclaredFeatures in the default profile, over real HTTP: the scheduler (KubeCluster) and
the real kubectl against the embedded API server. A pod needing a feature no node declares stays
pending with upstream's reason; a kubelet declaring it (``kubectl patch --subresource=status``)
brings the pod back through the node event and its queueing hint."""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from polling import eventually

from kubesched.cluster.kube.cluster import KubeCluster
from kubesched.cluster.store import Store
from kubesched.config import load_config
from kubesched.scheduler import Scheduler, SchedulerOptions
from kubesched.sim.apiserver.server import APIServer
from kubesched.testing import make_node

KUBECTL = shutil.which("kubectl") or "/usr/bin/kubectl"
pytestmark = pytest.mark.skipif(
    not os.access(KUBECTL, os.X_OK), reason="kubectl is not installed (looked on PATH and at /usr/bin/kubectl)"
)

#: A pod on the host network in a user namespace: it needs UserNamespacesHostNetworkSupport.
POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: userns
spec:
  hostNetwork: true
  hostUsers: false
  containers:
  - name: main
    image: registry.k8s.io/pause:3.10
    resources:
      requests: {cpu: 100m, memory: 64Mi}
"""


async def kubectl(kubeconfig: str, tmp: Path, *args: str, stdin: str | None = None) -> str:
    proc = await asyncio.create_subprocess_exec(
        KUBECTL,
        "--kubeconfig",
        kubeconfig,
        "--cache-dir",
        str(tmp / "cache"),
        *args,
        stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "HOME": str(tmp)},
    )
    out, err = await asyncio.wait_for(proc.communicate(stdin.encode() if stdin is not None else None), 30)
    assert proc.returncode == 0, f"kubectl {' '.join(args)} failed: {err.decode()}"
    return out.decode()


def scheduled_condition(store: Store) -> dict[str, Any] | None:
    conds = (store.get("Pod", "default", "userns").get("status") or {}).get("conditions") or []
    return next((c for c in conds if c["type"] == "PodScheduled"), None)


async def test_a_pod_waits_for_a_node_declaring_what_it_needs(store: Store, server: APIServer, tmp_path: Path) -> None:
    store.create("Node", make_node("n1").capacity(cpu="4", memory="8Gi", pods="110").obj())
    kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig")
    cluster = KubeCluster(kubeconfig=kubeconfig)
    sched = Scheduler(load_config(None).profiles, cluster, SchedulerOptions(seed=1))
    runner = asyncio.create_task(sched.run())
    try:
        await kubectl(kubeconfig, tmp_path, "apply", "-f", "-", stdin=POD)
        await eventually(lambda: scheduled_condition(store) is not None, what="PodScheduled condition", timeout=10)
        cond = scheduled_condition(store)
        assert cond is not None and (cond["status"], cond["reason"]) == ("False", "Unschedulable")
        assert cond["message"].startswith("0/1 nodes are available: 1 node(s) didn't match Pod's required features.")

        await kubectl(
            kubeconfig,
            tmp_path,
            "patch",
            "node",
            "n1",
            "--subresource=status",
            "--type=merge",
            "-p",
            '{"status":{"declaredFeatures":["UserNamespacesHostNetworkSupport"]}}',
        )
        await eventually(
            lambda: store.get("Pod", "default", "userns")["spec"].get("nodeName") == "n1", what="bound", timeout=10
        )
    finally:
        await sched.stop(grace=5)
        runner.cancel()
        await asyncio.gather(runner, return_exceptions=True)
        await cluster.stop()
