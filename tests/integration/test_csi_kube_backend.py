"""KubeCluster watches CSIDrivers and CSIStorageCapacities, as kube-scheduler 1.37's informers do:
listed at start in the watched kinds' order, changes delivered after; and the scheduler on top
of it, over real HTTP, places a pod once the capacity its claim needs is reported."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from polling import eventually
from test_kube_backend import cluster, started  # noqa: F401 - the fixture is used by name

from kubesched.cluster.base import WATCHED_KINDS
from kubesched.cluster.kube.cluster import KubeCluster
from kubesched.cluster.store import Store
from kubesched.config import load_config
from kubesched.scheduler import Scheduler, SchedulerOptions
from kubesched.sim.apiserver.server import APIServer
from kubesched.testing import make_node, make_pod

Obj = dict[str, Any]


def driver(name: str = "csi.example.com", capacity: bool = True) -> Obj:
    return {"metadata": {"name": name}, "spec": {"attachRequired": False, "storageCapacity": capacity}}


def capacity(name: str, node: str, size: str, namespace: str = "kube-system") -> Obj:
    return {
        "metadata": {"name": name, "namespace": namespace},
        "storageClassName": "fast-csi",
        "nodeTopology": {"matchLabels": {"kubernetes.io/hostname": node}},
        "capacity": size,
    }


def test_both_kinds_are_watched() -> None:
    assert {"CSIDriver", "CSIStorageCapacity"} <= set(WATCHED_KINDS)
    # Before the pods that need them, as upstream's informers sync before the first cycle.
    assert WATCHED_KINDS.index("CSIStorageCapacity") < WATCHED_KINDS.index("Pod")


async def test_existing_objects_arrive_at_start_and_changes_after(
    store: Store,
    cluster: KubeCluster,  # noqa: F811
) -> None:
    store.create("CSIDriver", driver())
    store.create("CSIStorageCapacity", capacity("cap-1", "n1", "10Gi"))
    rec = await started(cluster)
    assert rec.of("CSIDriver", "csi.example.com") == ["add"]
    assert rec.of("CSIStorageCapacity", "cap-1") == ["add"]
    got = rec.objects[("CSIStorageCapacity", "cap-1")]
    assert (got["kind"], got["apiVersion"], got["metadata"]["namespace"]) == (
        "CSIStorageCapacity",
        "storage.k8s.io/v1",
        "kube-system",
    )
    assert rec.objects[("CSIDriver", "csi.example.com")]["apiVersion"] == "storage.k8s.io/v1"
    kinds = [k for _, k, _ in rec.log]
    assert kinds == sorted(kinds, key=list(WATCHED_KINDS).index)

    store.create("CSIStorageCapacity", capacity("cap-2", "n2", "1Gi"))

    def grow(obj: Obj) -> None:
        obj["capacity"] = "20Gi"

    store.mutate("CSIStorageCapacity", "kube-system", "cap-2", grow)
    store.delete("CSIStorageCapacity", "kube-system", "cap-2")

    def stop_tracking(obj: Obj) -> None:
        obj["spec"]["storageCapacity"] = False

    store.mutate("CSIDriver", None, "csi.example.com", stop_tracking)
    await eventually(
        lambda: rec.of("CSIStorageCapacity", "cap-2") == ["add", "update", "delete"], what="capacity events", timeout=10
    )
    await eventually(lambda: rec.of("CSIDriver", "csi.example.com") == ["add", "update"], what="driver", timeout=10)
    assert rec.objects[("CSIDriver", "csi.example.com")]["spec"]["storageCapacity"] is False


async def test_the_scheduler_waits_for_reported_capacity_over_the_api(
    store: Store, server: APIServer, tmp_path: Path
) -> None:
    store.create(
        "StorageClass",
        {
            "metadata": {"name": "fast-csi"},
            "provisioner": "csi.example.com",
            "volumeBindingMode": "WaitForFirstConsumer",
        },
    )
    store.create("CSIDriver", driver())
    for n in ("n1", "n2"):
        store.create("Node", make_node(n).capacity(cpu="4", memory="8Gi", pods="110").obj())
    store.create("CSIStorageCapacity", capacity("cap-n1", "n1", "1Gi"))
    store.create(
        "PersistentVolumeClaim",
        {
            "metadata": {"name": "data", "namespace": "default"},
            "spec": {
                "storageClassName": "fast-csi",
                "accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": "5Gi"}},
            },
        },
    )
    pod = make_pod("db").req(cpu="100m").obj()
    pod["spec"]["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]
    store.create("Pod", pod)
    kube = KubeCluster(kubeconfig=server.write_kubeconfig(tmp_path / "kc"))
    sched = Scheduler(load_config(None).profiles, kube, SchedulerOptions(seed=1))
    runner = asyncio.create_task(sched.run())
    try:

        def message() -> str:
            conditions = (store.get("Pod", "default", "db").get("status") or {}).get("conditions") or []
            return next((c["message"] for c in conditions if c["type"] == "PodScheduled"), "")

        await eventually(lambda: "did not have enough free storage" in message(), what="refused", timeout=10)
        assert message().startswith("0/2 nodes are available: 2 node(s) did not have enough free storage.")
        # The driver reports capacity on n2: the new CSIStorageCapacity requeues the pod.
        store.create("CSIStorageCapacity", capacity("cap-n2", "n2", "50Gi"))
        await eventually(
            lambda: store.get("Pod", "default", "db")["spec"].get("nodeName") == "n2", what="bound to n2", timeout=10
        )
    finally:
        await sched.stop(grace=5)
        runner.cancel()
        await asyncio.gather(runner, return_exceptions=True)
        await kube.stop()
