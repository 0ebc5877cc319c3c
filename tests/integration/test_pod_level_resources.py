"""Pods as kube-scheduler 1.37 counts them, over real HTTP: the scheduler (KubeCluster) and the
real kubectl against the embedded API server. A pod asking at the pod level for more CPUs than
the node has is ``Insufficient cpu``; a pod resized in place holds its node's CPUs until the
kubelet reports the smaller allocation, which brings a waiting pod back (UpdatePodScaleDown)."""

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
from kubesched.testing import make_node, make_pod

KUBECTL = shutil.which("kubectl") or "/usr/bin/kubectl"
pytestmark = pytest.mark.skipif(
    not os.access(KUBECTL, os.X_OK), reason="kubectl is not installed (looked on PATH and at /usr/bin/kubectl)"
)

#: The report: 3 CPUs asked at the pod level, a container of 1m.
BIG = """\
apiVersion: v1
kind: Pod
metadata:
  name: big
spec:
  resources:
    requests: {cpu: "3"}
  containers:
  - name: main
    image: registry.k8s.io/pause:3.10
    resources:
      requests: {cpu: 1m}
"""

WAITING = """\
apiVersion: v1
kind: Pod
metadata:
  name: waiting
spec:
  containers:
  - name: main
    image: registry.k8s.io/pause:3.10
    resources:
      requests: {cpu: "1"}
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


def scheduled_condition(store: Store, name: str) -> dict[str, Any] | None:
    conds = (store.get("Pod", "default", name).get("status") or {}).get("conditions") or []
    return next((c for c in conds if c["type"] == "PodScheduled"), None)


def allocated(cpu: str) -> dict[str, Any]:
    return {"status": {"containerStatuses": [{"name": "c0", "allocatedResources": {"cpu": cpu}}]}}


async def test_pod_level_requests_and_a_resize_through_kubectl(store: Store, server: APIServer, tmp_path: Path) -> None:
    store.create("Node", make_node("n1").capacity(cpu="2", memory="4Gi", pods="110").obj())
    hog = make_pod("hog").node("n1").req(cpu="1500m").obj()
    hog["status"].update(allocated("1500m")["status"])
    store.create("Pod", hog)
    kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig")
    cluster = KubeCluster(kubeconfig=kubeconfig)
    sched = Scheduler(load_config(None).profiles, cluster, SchedulerOptions(seed=1))
    runner = asyncio.create_task(sched.run())
    try:
        await kubectl(kubeconfig, tmp_path, "apply", "-f", "-", stdin=BIG)
        await kubectl(kubeconfig, tmp_path, "apply", "-f", "-", stdin=WAITING)
        for name in ("big", "waiting"):
            await eventually(lambda n=name: scheduled_condition(store, n) is not None, what=f"{name} reported")
            cond = scheduled_condition(store, name)
            assert cond is not None and (cond["status"], cond["reason"]) == ("False", "Unschedulable")
            assert cond["message"].startswith("0/1 nodes are available: 1 Insufficient cpu.")
        described = await kubectl(kubeconfig, tmp_path, "describe", "pod", "big")
        assert "Insufficient cpu" in described

        # The resize down is asked for (pods/resize): the kubelet still runs hog at 1.5 CPUs, which
        # still count.
        await kubectl(
            kubeconfig,
            tmp_path,
            "patch",
            "pod",
            "hog",
            "--subresource=resize",
            "--type=json",
            "-p",
            '[{"op":"replace","path":"/spec/containers/0/resources/requests/cpu","value":"500m"}]',
        )
        await asyncio.sleep(0.5)
        assert store.get("Pod", "default", "waiting")["spec"].get("nodeName") is None

        # The kubelet allocates the smaller size: a scale-down, and the waiting pod fits.
        await kubectl(
            kubeconfig,
            tmp_path,
            "patch",
            "pod",
            "hog",
            "--subresource=status",
            "--type=merge",
            "-p",
            '{"status":{"containerStatuses":[{"name":"c0","image":"pause","imageID":"","ready":true,'
            '"restartCount":0,"allocatedResources":{"cpu":"500m"}}]}}',
        )
        await eventually(
            lambda: store.get("Pod", "default", "waiting")["spec"].get("nodeName") == "n1", what="bound", timeout=10
        )
        assert store.get("Pod", "default", "big")["spec"].get("nodeName") is None
    finally:
        await sched.stop(grace=5)
        runner.cancel()
        await asyncio.gather(runner, return_exceptions=True)
        await cluster.stop()
