"""Plugins' informers on ``run``'s kube backend over real HTTP against the embedded API server:
a built-in kind the scheduler does not watch by default (ConfigMaps) gets its own list and
watch, and its changes retry the pods a plugin rejected; a custom resource the server does not
serve leaves the scheduler running and healthy; with CRDs served, a custom resource's objects
do the same as the ConfigMaps. ``kubesched simulate`` feeds plugins' informers from the
scenario's objects."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer
from conftest import registry_with
from polling import eventually

from kubesched import ActionType, ClusterEvent, ClusterEventWithHint, GroupVersionResource, Status
from kubesched.cluster.base import ClusterError
from kubesched.cluster.kube.cluster import KubeCluster
from kubesched.cluster.store import Store
from kubesched.runtime.framework import PluginRef, ProfileSpec
from kubesched.scheduler import Scheduler, SchedulerOptions
from kubesched.server.health import HealthApp
from kubesched.server.metrics import PrometheusObserver
from kubesched.sim.apiserver.server import APIServer
from kubesched.testing import make_node, make_pod

CONFIG_MAPS = GroupVersionResource("", "v1", "configmaps")
QUOTAS = GroupVersionResource("scheduling.x-k8s.io", "v1alpha1", "elasticquotas")
OPTIONS = SchedulerOptions(seed=1, record_results=True, pod_initial_backoff=0.05, pod_max_backoff=0.1)


class Gate:
    """PreFilter: pods wait until an object named ``go`` exists in their namespace, of the
    resource the class names; registered for its adds."""

    name = "Gate"
    gvr = CONFIG_MAPS

    def __init__(self, args: Any, handle: Any) -> None:
        self.informer = handle.informer_for(self.gvr)
        self.seen: list[str] = []
        self.informer.add_event_handler(on_add=lambda o: self.seen.append(o["metadata"]["name"]))

    def pre_filter(self, state: Any, pod: Any) -> Status | None:
        if self.informer.lister.get(pod.namespace, "go") is None:
            return Status.unschedulable(f"no {self.gvr.resource} named go")
        return None

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(ClusterEvent(self.gvr.event_resource, ActionType.ADD))]


class QuotaGate(Gate):
    name = "QuotaGate"
    gvr = QUOTAS


def gated_profile(plugin: str) -> ProfileSpec:
    return ProfileSpec(
        "default-scheduler",
        {
            "queueSort": [PluginRef("PrioritySort")],
            "preFilter": [PluginRef(plugin)],
            "bind": [PluginRef("DefaultBinder")],
        },
    )


def node_of(store: Store, name: str) -> str | None:
    return store.get("Pod", "default", name)["spec"].get("nodeName")


class Running:
    def __init__(self, sched: Scheduler, cluster: KubeCluster) -> None:
        self.sched = sched
        self.cluster = cluster
        self.task = asyncio.create_task(sched.run())

    async def close(self) -> None:
        await self.sched.stop(grace=5)
        self.task.cancel()
        await asyncio.gather(self.task, return_exceptions=True)
        await self.cluster.stop()


@pytest.fixture
async def running(store: Store, server: APIServer, tmp_path: Path) -> AsyncIterator[Any]:
    started: list[Running] = []

    def start(plugin: type) -> Running:
        cluster = KubeCluster(kubeconfig=server.write_kubeconfig(tmp_path / "kc"), backoff_cap=0.2, stall_seconds=0.2)
        sched = Scheduler([gated_profile(plugin.name)], cluster, OPTIONS, registry=registry_with(plugin))
        started.append(Running(sched, cluster))
        return started[-1]

    store.create("Node", make_node("n1").capacity(cpu="4", memory="8Gi", pods="110").obj())
    try:
        yield start
    finally:
        for r in started:
            await r.close()


async def test_a_config_map_informer_lists_watches_and_retries_pods(store: Store, running: Any) -> None:
    store.create("ConfigMap", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "before"}, "data": {}})
    r = running(Gate)
    sched, cluster = r.sched, r.cluster
    gate = sched.frameworks["default-scheduler"].plugins["Gate"]
    await eventually(lambda: sched.synced, what="informers synced", timeout=10)
    assert gate.seen == ["before"] and gate.informer.has_synced()
    stats = cluster.informer_stats()
    assert stats["ConfigMap"]["lists"] == 1 and stats["ConfigMap"]["served"]
    await cluster.request("POST", "/api/v1/namespaces/default/pods", body=make_pod("p").obj())
    await eventually(
        lambda: "no configmaps named go" in getattr(sched.results.get("default/p"), "message", ""),
        what="the pod rejected",
        timeout=10,
    )
    await asyncio.sleep(0.3)  # past its backoff: only the ConfigMap's add may move it now
    assert node_of(store, "p") is None
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "go", "namespace": "default"}, "data": {}}
    await cluster.request("POST", "/api/v1/namespaces/default/configmaps", body=body)
    await eventually(lambda: node_of(store, "p") == "n1", what="the pod bound after the ConfigMap", timeout=10)
    assert gate.seen == ["before", "go"]
    assert cluster.informer_stats()["ConfigMap"]["lists"] == 1  # watched, not relisted


async def test_a_custom_resource_not_served_holds_scheduling_until_it_is(store: Store, running: Any) -> None:
    r = running(QuotaGate)
    sched, cluster = r.sched, r.cluster
    await cluster.request("POST", "/api/v1/namespaces/default/pods", body=make_pod("p").obj())
    await eventually(
        lambda: (
            QUOTAS.event_resource in cluster.informer_stats()
            and cluster.informer_stats()[QUOTAS.event_resource]["served"] is False
        ),
        what="the resource found not served",
        timeout=10,
    )
    await asyncio.sleep(0.5)  # several retries, past stall_seconds: still not a health problem
    # As upstream waits for its dynamic informers: nothing is scheduled without what a plugin reads.
    assert not sched.synced
    assert "default/p" not in sched.results and node_of(store, "p") is None
    gate = sched.frameworks["default-scheduler"].plugins["QuotaGate"]
    assert not gate.informer.has_synced()
    assert cluster.informer_stats()[QUOTAS.event_resource]["lists"] == 0
    assert cluster.health_problems() == []
    # Not ready, but alive: never restarted for it.
    assert cluster.readiness_problems() == [
        f"{QUOTAS.event_resource}: /apis/scheduling.x-k8s.io/v1alpha1/elasticquotas is not served by the API server"
    ]
    health = HealthApp(
        PrometheusObserver(),
        ready=lambda: sched.synced,
        problems=cluster.health_problems,
        unready=cluster.readiness_problems,
    )
    async with TestClient(TestServer(health.app)) as client:
        live = await client.get("/livez")
        assert live.status == 200
        ready = await client.get("/readyz")
        assert ready.status == 503
        assert f"[-]informer-served failed: {QUOTAS.event_resource}" in await ready.text()


CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "elasticquotas.scheduling.x-k8s.io"},
    "spec": {
        "group": "scheduling.x-k8s.io",
        "scope": "Namespaced",
        "names": {"plural": "elasticquotas", "singular": "elasticquota", "kind": "ElasticQuota", "shortNames": ["eq"]},
        "versions": [
            {
                "name": "v1alpha1",
                "served": True,
                "storage": True,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
            }
        ],
    },
}


async def test_a_custom_resource_installed_later_is_listed_and_retries_pods(store: Store, running: Any) -> None:
    r = running(QuotaGate)
    sched, cluster = r.sched, r.cluster
    await cluster.request("POST", "/api/v1/namespaces/default/pods", body=make_pod("p").obj())
    await eventually(
        lambda: (
            QUOTAS.event_resource in cluster.informer_stats()
            and cluster.informer_stats()[QUOTAS.event_resource]["served"] is False
        ),
        what="the resource found not served",
        timeout=10,
    )
    assert not sched.synced
    # The CRD appears: the informer finds its resource served on a later list (backoff from
    # half a second, not the cap), and scheduling starts.
    await cluster.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", body=CRD)
    await eventually(lambda: sched.synced, what="informers synced once the CRD is served", timeout=10)
    assert cluster.informer_stats()[QUOTAS.event_resource]["served"]
    assert cluster.readiness_problems() == []
    await eventually(
        lambda: "no elasticquotas named go" in getattr(sched.results.get("default/p"), "message", ""),
        what="the pod rejected",
        timeout=10,
    )
    quota = {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "ElasticQuota",
        "metadata": {"name": "go", "namespace": "default"},
        "spec": {"max": {"cpu": "10"}},
    }
    await cluster.request("POST", "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/default/elasticquotas", body=quota)
    await eventually(lambda: node_of(store, "p") == "n1", what="the pod bound after the quota", timeout=10)
    gate = sched.frameworks["default-scheduler"].plugins["QuotaGate"]
    assert gate.seen == ["go"]
    assert gate.informer.lister.get("default", "go")["kind"] == "ElasticQuota"


GATE_PLUGIN = '''
from kubesched import ActionType, ClusterEvent, ClusterEventWithHint, Status

class ConfigMapGate:
    """PreFilter: a pod runs only in a namespace with a ConfigMap named go."""

    name = "ConfigMapGate"

    def __init__(self, args, handle):
        self.config_maps = handle.informer_for("configmaps.v1")

    def pre_filter(self, state, pod):
        if self.config_maps.lister.get(pod.namespace, "go") is None:
            return Status.unschedulable("no go")
        return None

    def events_to_register(self):
        return [ClusterEventWithHint(ClusterEvent("configmaps.v1", ActionType.ADD))]
'''
GATE_CONFIG = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    preFilter:
      enabled:
      - name: ConfigMapGate
"""
GATE_SCENARIO = """\
apiVersion: v1
kind: Node
metadata: {name: n1}
status:
  allocatable: {cpu: "4", memory: 8Gi, pods: "10"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: go, namespace: open}
---
apiVersion: v1
kind: Pod
metadata: {name: a, namespace: open}
spec:
  containers: [{name: c, image: nginx}]
---
apiVersion: v1
kind: Pod
metadata: {name: b, namespace: closed}
spec:
  containers: [{name: c, image: nginx}]
"""


def test_simulate_delivers_the_scenarios_objects_to_plugins_informers(tmp_path: Path) -> None:
    (tmp_path / "gate.py").write_text(GATE_PLUGIN)
    (tmp_path / "config.yaml").write_text(GATE_CONFIG)
    (tmp_path / "scenario.yaml").write_text(GATE_SCENARIO)
    out = subprocess.run(
        [sys.executable, "-m", "kubesched", "simulate", "--plugin", "gate.py:ConfigMapGate"]
        + ["--config", "config.yaml", "--scenario", "scenario.yaml", "--output", "json"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    nodes = {p["name"]: p["node"] for p in json.loads(out.stdout)["pods"]}
    assert nodes == {"a": "n1", "b": None}


async def test_a_plugin_writes_its_custom_objects_through_the_kube_backend(
    store: Store, server: APIServer, tmp_path: Path
) -> None:
    cluster = KubeCluster(kubeconfig=server.write_kubeconfig(tmp_path / "kc"))
    try:
        await cluster.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", body=CRD)
        quota = {
            "apiVersion": "scheduling.x-k8s.io/v1alpha1",
            "kind": "ElasticQuota",
            "metadata": {"name": "q", "namespace": "default"},
            "spec": {"max": {"cpu": "4"}},
        }
        made = await cluster.create_object(QUOTAS.event_resource, quota)
        assert made["metadata"]["namespace"] == "default"
        stored = store.get(QUOTAS.qualified_name, "default", "q")
        assert stored["spec"] == {"max": {"cpu": "4"}}
        made["spec"]["max"]["cpu"] = "6"
        await cluster.update_object(QUOTAS.event_resource, made)
        assert store.get(QUOTAS.qualified_name, "default", "q")["spec"]["max"]["cpu"] == "6"
        await cluster.delete_object(QUOTAS.event_resource, "default", "q")
        assert store.list(QUOTAS.qualified_name)[0] == []
        with pytest.raises(ClusterError, match="<plural>.<version>.<group>"):
            await cluster.create_object("ElasticQuota", quota)
    finally:
        await cluster.stop()
