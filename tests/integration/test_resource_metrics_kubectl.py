"""The resource metrics API (metrics.k8s.io/v1beta1) of the embedded API server, read by the real
``kubectl top`` and by kubernetes_asyncio's CustomObjectsApi over HTTPS with a bearer token, as
``sim serve`` serves by default: each running pod's usage (its ``kubesched.io/usage`` annotation,
else its requests), each node's the sum over its running pods."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from kubernetes_asyncio import client, config
from kubernetes_asyncio.client.exceptions import ApiException

from kubesched.cluster.store import Store
from kubesched.sim.apiserver.server import APIServer
from kubesched.testing import make_node, sim_serve_process

KUBECTL = shutil.which("kubectl")
needs_kubectl = pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")
TOKEN = "metrics-admin-token"
Obj = dict[str, Any]


def pod(name: str, node: str | None, containers: list[Obj], *, labels: Obj | None = None, usage: str = "") -> Obj:
    meta: Obj = {"name": name, "namespace": "default", "labels": labels or {}}
    if usage:
        meta["annotations"] = {"kubesched.io/usage": usage}
    spec: Obj = {"containers": containers}
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": {"phase": "Pending"}}


def container(name: str, cpu: str, memory: str) -> Obj:
    return {
        "name": name,
        "image": "registry.k8s.io/pause:3.10",
        "resources": {"requests": {"cpu": cpu, "memory": memory}},
    }


@dataclass
class Cluster:
    store: Store
    server: APIServer
    kubeconfig: str
    tmp: Path

    async def kubectl(self, *args: str) -> tuple[int, str, str]:
        assert KUBECTL is not None
        proc = await asyncio.create_subprocess_exec(
            KUBECTL,
            "--kubeconfig",
            self.kubeconfig,
            "--cache-dir",
            str(self.tmp / "cache"),
            *args,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env={**os.environ, "HOME": str(self.tmp)},
        )
        out, err = await asyncio.wait_for(proc.communicate(), 60)
        assert proc.returncode is not None
        return proc.returncode, out.decode(), err.decode()


@pytest.fixture
async def cluster(tmp_path: Path) -> AsyncIterator[Cluster]:
    """Two nodes (4 cpu, 8Gi) with load: on node-1 web-1 (its requests, 500m and 1Gi over two
    containers) and web-2 (its annotation, 1500m and 2Gi); on node-2 batch (its annotation per
    container); waiting (pending, unbound) asks for much and uses nothing; done (Succeeded)
    neither."""
    store = Store()
    for name in ("node-1", "node-2"):
        node = make_node(name).capacity(cpu="4", memory="8Gi", pods="110")
        node.set("status.conditions", [{"type": "Ready", "status": "True"}])
        node.set("metadata.labels", {"pool": "a" if name == "node-1" else "b"})
        store.create("Node", node.obj())
    store.create(
        "Pod",
        pod(
            "web-1",
            "node-1",
            [container("app", "400m", "768Mi"), container("log", "100m", "256Mi")],
            labels={"app": "web"},
        ),
    )
    store.create(
        "Pod",
        pod(
            "web-2",
            "node-1",
            [container("app", "100m", "64Mi")],
            labels={"app": "web"},
            usage='{"cpu": "1500m", "memory": "2Gi"}',
        ),
    )
    store.create(
        "Pod",
        pod(
            "batch",
            "node-2",
            [container("main", "1", "1Gi"), container("helper", "250m", "128Mi")],
            labels={"app": "batch"},
            usage='{"main": {"cpu": "3", "memory": "6Gi"}}',
        ),
    )
    store.create("Pod", pod("waiting", None, [container("app", "3", "7Gi")], labels={"app": "web"}))
    done = pod("done", "node-2", [container("app", "2", "4Gi")], labels={"app": "batch"})
    done["status"]["phase"] = "Succeeded"
    store.create("Pod", done)
    server = APIServer(store, token=TOKEN, tls=True)
    await server.start()
    try:
        yield Cluster(store, server, server.write_kubeconfig(tmp_path / "kubeconfig"), tmp_path)
    finally:
        await server.stop()


def table(out: str) -> dict[str, list[str]]:
    """kubectl's rows by their first column (the header left out)."""
    return {line.split()[0]: line.split()[1:] for line in out.splitlines()[1:] if line.strip()}


@needs_kubectl
async def test_kubectl_top_nodes_sums_running_pods(cluster: Cluster) -> None:
    code, out, err = await cluster.kubectl("top", "nodes")
    assert code == 0, err
    assert out.split("\n")[0].split() == ["NAME", "CPU(cores)", "CPU(%)", "MEMORY(bytes)", "MEMORY(%)"]
    # node-1: web-1's requests (500m, 1Gi) + web-2's annotation (1500m, 2Gi); node-2: batch's
    # main from its annotation (3, 6Gi) + helper's requests (250m, 128Mi); done and waiting nothing.
    assert table(out) == {
        "node-1": ["2000m", "50%", "3072Mi", "37%"],
        "node-2": ["3250m", "81%", "6272Mi", "76%"],
    }
    code, out, err = await cluster.kubectl("top", "nodes", "-l", "pool=b")
    assert code == 0, err
    assert list(table(out)) == ["node-2"]


@needs_kubectl
async def test_kubectl_top_pods_by_label_and_containers(cluster: Cluster) -> None:
    code, out, err = await cluster.kubectl("top", "pods")
    assert code == 0, err
    assert table(out) == {"batch": ["3250m", "6272Mi"], "web-1": ["500m", "1024Mi"], "web-2": ["1500m", "2048Mi"]}
    code, out, err = await cluster.kubectl("top", "pods", "-l", "app=web")
    assert code == 0, err
    assert list(table(out)) == ["web-1", "web-2"]
    code, out, err = await cluster.kubectl("top", "pod", "web-2", "--containers")
    assert code == 0, err
    # The annotation's pod-level figures shared out over the containers (one here).
    assert [line.split() for line in out.splitlines()[1:]] == [["web-2", "app", "1500m", "2048Mi"]]
    code, out, err = await cluster.kubectl("top", "pod", "batch", "--containers")
    assert code == 0, err
    assert sorted(line.split() for line in out.splitlines()[1:]) == [
        ["batch", "helper", "250m", "128Mi"],
        ["batch", "main", "3000m", "6144Mi"],
    ]
    code, out, err = await cluster.kubectl("top", "pods", "-A", "--no-headers")
    assert code == 0, err
    assert sorted(line.split()[1] for line in out.splitlines()) == ["batch", "web-1", "web-2"]


@needs_kubectl
async def test_kubectl_top_unknown_names_and_pods_without_metrics(cluster: Cluster) -> None:
    code, _, err = await cluster.kubectl("top", "node", "nope")
    assert code != 0
    assert 'node "nope" not found' in err
    code, _, err = await cluster.kubectl("top", "pod", "nope")
    assert code != 0
    assert 'pods "nope" not found' in err
    code, _, err = await cluster.kubectl("top", "pod", "waiting")
    assert code != 0
    assert 'podmetrics.metrics.k8s.io "default/waiting" not found' in err


@needs_kubectl
async def test_kubectl_get_shows_metrics_servers_columns(cluster: Cluster) -> None:
    code, out, err = await cluster.kubectl("get", "nodes.metrics.k8s.io")
    assert code == 0, err
    assert [line.split() for line in out.splitlines()] == [
        ["NAME", "CPU", "MEMORY", "WINDOW"],
        ["node-1", "2", "3Gi", "15s"],
        ["node-2", "3250m", "6272Mi", "15s"],
    ]
    code, out, err = await cluster.kubectl("get", "pods.metrics.k8s.io", "-l", "app=web")
    assert code == 0, err
    assert [line.split() for line in out.splitlines()] == [
        ["NAME", "CPU", "MEMORY", "WINDOW"],
        ["web-1", "500m", "1Gi", "15s"],
        ["web-2", "1500m", "2Gi", "15s"],
    ]


async def test_custom_objects_api_reads_metrics(cluster: Cluster, tmp_path: Path) -> None:
    cfg = client.Configuration()
    await config.load_kube_config(config_file=cluster.kubeconfig, client_configuration=cfg)
    async with client.ApiClient(cfg) as api_client:
        api = client.CustomObjectsApi(api_client)
        nodes = await api.list_cluster_custom_object("metrics.k8s.io", "v1beta1", "nodes")
        assert nodes["kind"] == "NodeMetricsList"
        assert [(n["metadata"]["name"], n["usage"]) for n in nodes["items"]] == [
            ("node-1", {"cpu": "2", "memory": "3Gi"}),
            ("node-2", {"cpu": "3250m", "memory": "6272Mi"}),
        ]
        assert nodes["items"][0]["window"] == "15s"
        assert nodes["items"][0]["metadata"]["labels"] == {"pool": "a"}
        one = await api.get_namespaced_custom_object("metrics.k8s.io", "v1beta1", "default", "pods", "web-1")
        assert one["kind"] == "PodMetrics"
        assert one["metadata"]["namespace"] == "default"
        assert one["metadata"]["labels"] == {"app": "web"}
        assert one["containers"] == [
            {"name": "app", "usage": {"cpu": "400m", "memory": "768Mi"}},
            {"name": "log", "usage": {"cpu": "100m", "memory": "256Mi"}},
        ]
        assert one["timestamp"].endswith("Z")
        listed = await api.list_namespaced_custom_object(
            "metrics.k8s.io", "v1beta1", "default", "pods", label_selector="app=batch"
        )
        assert [p["metadata"]["name"] for p in listed["items"]] == ["batch"]
        everywhere = await api.list_cluster_custom_object("metrics.k8s.io", "v1beta1", "pods")
        assert [p["metadata"]["name"] for p in everywhere["items"]] == ["batch", "web-1", "web-2"]
        with pytest.raises(ApiException) as caught:
            await api.get_cluster_custom_object("metrics.k8s.io", "v1beta1", "nodes", "nope")
        assert caught.value.status == 404
        assert caught.value.body is not None
        assert json.loads(caught.value.body)["message"] == 'node "nope" not found'
        with pytest.raises(ApiException) as caught:
            await api.delete_cluster_custom_object("metrics.k8s.io", "v1beta1", "nodes", "node-1")
        assert caught.value.status == 405


async def test_metrics_ask_for_the_token(cluster: Cluster) -> None:
    async with aiohttp.ClientSession() as session:
        url = f"{cluster.server.url}/apis/metrics.k8s.io/v1beta1/nodes"
        async with session.get(url, ssl=False) as resp:
            assert resp.status == 401
        async with session.get(url, ssl=False, headers={"Authorization": f"Bearer {TOKEN}"}) as resp:
            assert resp.status == 200


async def test_a_bad_usage_annotation_leaves_its_pod_and_node_out_with_a_warning(cluster: Cluster) -> None:
    cluster.store.create("Pod", pod("odd", "node-2", [container("app", "1", "1Gi")], usage='{"cpu": "lots"}'))
    async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {TOKEN}"}) as session:
        base = f"{cluster.server.url}/apis/metrics.k8s.io/v1beta1"
        async with session.get(f"{base}/nodes", ssl=False) as resp:
            body = await resp.json()
            warning = resp.headers.get("Warning", "")
        assert [n["metadata"]["name"] for n in body["items"]] == ["node-1"]
        assert "pod default/odd" in warning
        assert "metadata.annotations[kubesched.io/usage][cpu]" in warning
        async with session.get(f"{base}/nodes/node-2", ssl=False) as resp:
            assert resp.status == 404
            assert (await resp.json())["message"] == 'nodemetrics.metrics.k8s.io "node-2" not found'
    if KUBECTL is not None:
        code, out, err = await cluster.kubectl("top", "nodes")
        assert code == 0, err
        assert table(out)["node-2"] == ["<unknown>"] * 4
        assert "pod default/odd" in err  # the Warning header, as kubectl prints one


SCENARIO = """\
apiVersion: v1
kind: Node
metadata: {name: busy}
status: {allocatable: {cpu: "2", memory: 4Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata:
  name: hot
  annotations: {kubesched.io/usage: '{"cpu": "1500m", "memory": "1Gi"}'}
spec:
  nodeName: busy
  containers:
  - {name: app, image: registry.k8s.io/pause:3.10, resources: {requests: {cpu: 500m, memory: 512Mi}}}
"""


@needs_kubectl
def test_kubectl_top_nodes_against_sim_serve(tmp_path: Path) -> None:
    import subprocess

    (tmp_path / "scenario.yaml").write_text(SCENARIO)
    with sim_serve_process(tmp_path, "--scenario", str(tmp_path / "scenario.yaml")) as sim:
        assert KUBECTL is not None
        done = subprocess.run(
            [KUBECTL, "--kubeconfig", sim["kubeconfig"], "top", "nodes", "--no-headers"],
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "HOME": str(tmp_path)},
        )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["busy", "1500m", "75%", "1024Mi", "25%"]
