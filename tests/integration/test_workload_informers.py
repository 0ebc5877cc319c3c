"""``kubesched run`` watches Workloads and PodGroups only when GenericWorkload is on (and
CompositePodGroups when CompositePodGroup is on too): the kube backend's informers over real
HTTP against the embedded API server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from polling import eventually

from kubesched.cluster.base import WATCHED_KINDS, watched_kinds
from kubesched.cluster.kube.cluster import KubeCluster
from kubesched.cluster.store import Store
from kubesched.framework.features import FeatureGates
from kubesched.sim.apiserver.server import APIServer

POD_GROUP = {
    "apiVersion": "scheduling.k8s.io/v1beta1",
    "kind": "PodGroup",
    "metadata": {"name": "pg", "namespace": "default"},
    "spec": {"schedulingPolicy": {"gang": {"minCount": 2}}},
}
WORKLOAD = {
    "apiVersion": "scheduling.k8s.io/v1beta1",
    "kind": "Workload",
    "metadata": {"name": "w", "namespace": "default"},
    "spec": {"podGroupTemplates": [{"name": "t", "schedulingPolicy": {"basic": {}}}]},
}


class Recorder:
    def __init__(self) -> None:
        self.seen: list[tuple[str, str, str]] = []

    def on_add(self, kind: str, obj: dict[str, Any]) -> None:
        self.seen.append(("add", kind, obj["metadata"]["name"]))

    def on_update(self, kind: str, old: dict[str, Any], new: dict[str, Any]) -> None:
        self.seen.append(("update", kind, new["metadata"]["name"]))

    def on_delete(self, kind: str, obj: dict[str, Any]) -> None:
        self.seen.append(("delete", kind, obj["metadata"]["name"]))


def test_the_gates_add_the_workload_kinds_before_nodes_and_pods() -> None:
    assert watched_kinds(FeatureGates()) == WATCHED_KINDS
    on = watched_kinds(FeatureGates({"GenericWorkload": True}))
    assert on[-4:] == ("Workload", "PodGroup", "Node", "Pod")
    both = watched_kinds(FeatureGates({"GenericWorkload": True, "CompositePodGroup": True}))
    assert both[-5:] == ("Workload", "PodGroup", "CompositePodGroup", "Node", "Pod")
    assert "CompositePodGroup" not in watched_kinds(FeatureGates({"CompositePodGroup": True}))


async def _watch(store: Store, tmp_path: Path, gates: FeatureGates) -> Recorder:
    server = APIServer(store, feature_gates=gates)
    await server.start()
    cluster = KubeCluster(
        kubeconfig=server.write_kubeconfig(tmp_path / "kubeconfig"), watched_kinds=watched_kinds(gates)
    )
    recorder = Recorder()
    try:
        store.create("Workload", dict(WORKLOAD))
        store.create("PodGroup", dict(POD_GROUP))
        store.create(
            "Pod",
            {"metadata": {"name": "p", "namespace": "default"}, "spec": {"containers": [{"name": "c", "image": "i"}]}},
        )
        # At start everything is listed, kind by kind: a pod's group before the pod.
        await cluster.start(recorder)
        store.create("PodGroup", {**POD_GROUP, "metadata": {"name": "later", "namespace": "default"}})
        store.create(
            "Pod",
            {"metadata": {"name": "q", "namespace": "default"}, "spec": {"containers": [{"name": "c", "image": "i"}]}},
        )
        await eventually(lambda: ("add", "Pod", "q") in recorder.seen, what="the later pod's add", timeout=10)
        if gates.enabled("GenericWorkload"):
            await eventually(
                lambda: ("add", "PodGroup", "later") in recorder.seen, what="the later group's add", timeout=10
            )
    finally:
        await cluster.stop()
        await server.stop()
    return recorder


async def test_with_generic_workload_workloads_and_pod_groups_are_watched(store: Store, tmp_path: Path) -> None:
    seen = (await _watch(store, tmp_path, FeatureGates({"GenericWorkload": True}))).seen
    assert (
        seen.index(("add", "Workload", "w")) < seen.index(("add", "PodGroup", "pg")) < seen.index(("add", "Pod", "p"))
    )


async def test_without_generic_workload_they_are_not(store: Store, tmp_path: Path) -> None:
    seen = (await _watch(store, tmp_path, FeatureGates())).seen
    assert not [s for s in seen if s[1] in ("Workload", "PodGroup")]
