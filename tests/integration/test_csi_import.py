"""``sim serve --import-from``: a live cluster's CSIDrivers and CSIStorageCapacities are copied
(and followed with ``--sync``), so the simulator's scheduler sees the capacity the live cluster's
drivers report: its pending pod goes where its claim fits."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from polling import eventually_sync
from test_import_from_cluster import node, pod, serve

CAPACITIES = "/apis/storage.k8s.io/v1/namespaces/kube-system/csistoragecapacities"


def capacity(name: str, on: str, size: str) -> dict[str, Any]:
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSIStorageCapacity",
        "metadata": {"name": name, "namespace": "kube-system"},
        "storageClassName": "fast-csi",
        "nodeTopology": {"matchLabels": {"zone": on}},
        "capacity": size,
    }


def live_cluster(tmp_path: Path) -> Path:
    claim = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "data", "namespace": "default"},
        "spec": {
            "storageClassName": "fast-csi",
            "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": "50Gi"}},
        },
    }
    db = pod("db")
    db["spec"]["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]
    objects = [
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": {"name": "fast-csi"},
            "provisioner": "csi.example.com",
            "volumeBindingMode": "WaitForFirstConsumer",
        },
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "CSIDriver",
            "metadata": {"name": "csi.example.com"},
            "spec": {"storageCapacity": True},
        },
        node("a", zone="a"),
        node("b", zone="b"),
        capacity("cap-a", "a", "10Gi"),
        capacity("cap-b", "b", "100Gi"),
        claim,
        db,
    ]
    path = tmp_path / "live.yaml"
    path.write_text(yaml.safe_dump_all(objects))
    return path


def test_csi_drivers_and_capacities_are_copied_and_followed(tmp_path: Path) -> None:
    with serve(tmp_path / "live", "--scenario", str(live_cluster(tmp_path))) as live:
        args = ("--import-from", str(live.kubeconfig), "--with-scheduler", "--sync")
        with serve(tmp_path / "sim", *args) as sim:
            drivers = sim.call("GET", "/apis/storage.k8s.io/v1/csidrivers")[1]["items"]
            assert [(d["metadata"]["name"], d["spec"]["storageCapacity"]) for d in drivers] == [
                ("csi.example.com", True)
            ]
            assert sim.names(CAPACITIES) == {"cap-a", "cap-b"}
            eventually_sync(
                lambda: sim.call("GET", "/api/v1/namespaces/default/pods/db")[1]["spec"].get("nodeName") == "b",
                timeout=15,
            )
            live.call("POST", CAPACITIES, capacity("cap-c", "c", "1Ti"))
            eventually_sync(lambda: "cap-c" in sim.names(CAPACITIES), timeout=15)
            # The live cluster is only read.
            assert not live.call("GET", "/api/v1/namespaces/default/pods/db")[1]["spec"].get("nodeName")
