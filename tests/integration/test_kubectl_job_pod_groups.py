"""A Job applied with the real kubectl against the embedded API server, the simulated
controllers running as ``sim serve --feature-gates GenericWorkload=true,WorkloadWithJob=true`` runs them: the Job
controller makes its Workload and PodGroup, and kubectl reads the pods' scheduling group."""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from kubesched.cluster.store import Store
from kubesched.framework.features import FeatureGates
from kubesched.sim.apiserver.server import APIServer
from kubesched.sim.controllers import ControllerManager

KUBECTL = shutil.which("kubectl") or "/usr/bin/kubectl"
pytestmark = pytest.mark.skipif(
    not os.access(KUBECTL, os.X_OK), reason="kubectl is not installed (looked on PATH and at /usr/bin/kubectl)"
)

GANG_JOB = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: train
spec:
  parallelism: 8
  completions: 8
  completionMode: Indexed
  scheduling:
    schedulingPolicy:
      gang: {}
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: worker
        image: registry.k8s.io/pause:3.10
"""


class Kubectl:
    def __init__(self, kubeconfig: Path, tmp: Path) -> None:
        self.kubeconfig, self.tmp = kubeconfig, tmp

    async def ok(self, *args: str, stdin: str | None = None) -> str:
        proc = await asyncio.create_subprocess_exec(
            KUBECTL,
            "--kubeconfig",
            str(self.kubeconfig),
            "--cache-dir",
            str(self.tmp / "cache"),
            *args,
            stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env={**os.environ, "KUBECONFIG": str(self.kubeconfig), "HOME": str(self.tmp)},
        )
        out, err = await asyncio.wait_for(proc.communicate(stdin.encode() if stdin is not None else None), 30)
        assert proc.returncode == 0, f"kubectl {' '.join(args)} failed: {err.decode()}"
        return out.decode()


@pytest.fixture
async def cluster(tmp_path: Path) -> AsyncIterator[tuple[Store, Kubectl]]:
    store = Store()
    server = APIServer(store)
    await server.start()
    controllers = ControllerManager(store, FeatureGates({"GenericWorkload": True, "WorkloadWithJob": True}))
    controllers.start()
    try:
        yield store, Kubectl(server.write_kubeconfig(tmp_path / "kubeconfig"), tmp_path)
    finally:
        await controllers.stop()
        await server.stop()


async def settle(store: Store, kind: str, count: int) -> list[dict[str, Any]]:
    for _ in range(200):
        items, _ = store.list(kind, "default")
        if len(items) == count:
            return items
        await asyncio.sleep(0.02)
    raise AssertionError(f"{len(store.list(kind, 'default')[0])} {kind}(s), not {count}")


async def test_kubectl_applied_gang_job_gets_its_pod_group_and_kubectl_reads_it(
    cluster: tuple[Store, Kubectl],
) -> None:
    store, kubectl = cluster
    await kubectl.ok("apply", "-f", "-", stdin=GANG_JOB)
    pods = await settle(store, "Pod", 8)
    (wl,) = await settle(store, "Workload", 1)
    (pg,) = await settle(store, "PodGroup", 1)
    assert wl["spec"]["podGroupTemplates"] == [{"name": "train-pgt-0", "schedulingPolicy": {"gang": {"minCount": 8}}}]
    assert pg["spec"]["schedulingPolicy"] == {"gang": {"minCount": 8}}
    assert len(pods) == 8
    out = await kubectl.ok(
        "get",
        "pods",
        "-l",
        "job-name=train",
        "-o",
        "jsonpath={range .items[*]}{.spec.schedulingGroup.podGroupName}{'\\n'}{end}",
    )
    assert out.split() == [pg["metadata"]["name"]] * 8

    await kubectl.ok("delete", "job", "train")
    await settle(store, "Workload", 0)  # collected with its Job


async def test_kubectl_create_job_gets_a_basic_group(cluster: tuple[Store, Kubectl]) -> None:
    store, kubectl = cluster
    await kubectl.ok("create", "job", "batch", "--image=registry.k8s.io/pause:3.10")
    (pod,) = await settle(store, "Pod", 1)
    (pg,) = await settle(store, "PodGroup", 1)
    assert pg["spec"]["schedulingPolicy"] == {"basic": {}}
    assert pod["spec"]["schedulingGroup"] == {"podGroupName": pg["metadata"]["name"]}
