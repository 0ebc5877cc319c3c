"""``scheduler_volume_scheduling_stage_error_total{operation}``: the volume binder counts a Filter
that cannot evaluate a pod's claims (``predicate``) and a PreBind whose API writes fail
(``bind``), as upstream's binder counts its FindPodVolumes and BindPodVolumes errors."""

from __future__ import annotations

from typing import Any

from kubesched.cluster.memory import InMemoryCluster
from kubesched.cluster.store import Store
from kubesched.framework.interface import CycleState
from kubesched.framework.status import Code
from kubesched.plugins.volume.volume_binding import VolumeBinding
from kubesched.server.metrics import PrometheusObserver
from kubesched.testing import as_node_infos, framework_for, make_node, make_pod

FAMILY = "scheduler_volume_scheduling_stage_error_total"


def wait_class(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": name},
        "provisioner": "kubernetes.io/no-provisioner",
        "volumeBindingMode": "WaitForFirstConsumer",
    }


def claim(name: str, cls: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"storageClassName": cls, "resources": {"requests": {"storage": "1Gi"}}},
    }


def volume(name: str, cls: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": name},
        "spec": {"storageClassName": cls, "capacity": {"storage": "5Gi"}},
        "status": {"phase": "Available"},
    }


class StoreListers:
    """Listers reading the store directly (informers without their delay)."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def get(self, kind: str, namespace: str | None, name: str) -> Any:
        try:
            return self.store.get(kind, namespace, name)
        except Exception:  # noqa: BLE001 - not there
            return None

    def list(self, kind: str, namespace: str | None = None) -> Any:
        return self.store.list(kind, namespace)[0]

    def namespace_labels(self, namespace: str) -> dict[str, str]:
        return {}


def setup(*objects: dict[str, Any]) -> tuple[Store, Any, PrometheusObserver]:
    store = Store()
    for o in objects:
        store.create(o["kind"], o)
    fw = framework_for(VolumeBinding, nodes=as_node_infos([make_node("node-a")]), cluster=InMemoryCluster(store))
    fw.listers = StoreListers(store)
    obs = PrometheusObserver()
    fw.observer = obs
    return store, fw, obs


POD = make_pod("pod-a").set("spec.volumes", [{"name": "data", "persistentVolumeClaim": {"claimName": "pvc-a"}}])


async def test_a_filter_that_cannot_evaluate_the_claims_counts_predicate() -> None:
    store, fw, obs = setup(wait_class("wait"), claim("pvc-a", "wait"))
    pi, state = POD.info(), CycleState()
    _, pre, _ = await fw.run_pre_filter(state, pi)
    assert pre is None
    # The class goes away between PreFilter and Filter: provisioning cannot be checked.
    store.delete("StorageClass", None, "wait")
    status = fw.run_filter(state, pi, fw.snapshot().get("node-a"))
    assert status is not None and status.code is Code.ERROR
    assert obs.registry.get_sample_value(FAMILY, {"operation": "predicate"}) == 1


async def test_a_prebind_whose_writes_fail_counts_bind() -> None:
    store, fw, obs = setup(wait_class("wait"), claim("pvc-a", "wait"), volume("pv-1", "wait"))
    pi, state = POD.info(), CycleState()
    await fw.run_pre_filter(state, pi)
    assert fw.run_filter(state, pi, fw.snapshot().get("node-a")) is None
    assert await fw.run_reserve(state, pi, "node-a") is None
    # Someone else writes the PV meanwhile: the binder's update carries a stale resourceVersion.
    store.mutate("PersistentVolume", None, "pv-1", lambda o: o["metadata"].setdefault("labels", {}).update(x="y"))
    status = await fw.run_pre_bind(state, pi, "node-a")
    assert status is not None and status.code is Code.ERROR
    assert obs.registry.get_sample_value(FAMILY, {"operation": "bind"}) == 1
    assert obs.registry.get_sample_value(FAMILY, {"operation": "predicate"}) is None
