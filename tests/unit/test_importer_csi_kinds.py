"""The importer copies CSIDrivers and CSIStorageCapacities, and a source that answers 404 for
them (it cannot be caused with a real server here, hence the stand-in) is copied without them."""

from __future__ import annotations

import asyncio
from typing import Any

from kubesched.cluster.base import NotFound
from kubesched.cluster.store import Store
from kubesched.sim.importer import IMPORTED, OPTIONAL, Importer

MISSING = ("/apis/storage.k8s.io/v1/csidrivers", "/apis/storage.k8s.io/v1/csistoragecapacities")


class Source:
    def __init__(self, serves_csi: bool) -> None:
        self.serves_csi = serves_csi

    async def request(self, method: str, path: str, query: Any = None) -> dict[str, Any]:
        items: list[dict[str, Any]] = []
        if path in MISSING and not self.serves_csi:
            raise NotFound(f"GET {path}: the server could not find the requested resource")
        if path == MISSING[0]:
            items = [{"metadata": {"name": "csi.example.com", "uid": "u1"}, "spec": {"storageCapacity": True}}]
        if path == MISSING[1]:
            items = [
                {
                    "metadata": {"name": "cap", "namespace": "kube-system", "resourceVersion": "3"},
                    "storageClassName": "fast",
                    "capacity": "10Gi",
                }
            ]
        return {"metadata": {"resourceVersion": "7"}, "items": items}


def test_the_csi_kinds_are_imported_before_the_pods_and_optional() -> None:
    order = list(IMPORTED)
    assert order.index("CSIDriver") < order.index("Pod") and order.index("CSIStorageCapacity") < order.index("Pod")
    assert {"CSIDriver", "CSIStorageCapacity"} <= OPTIONAL


def test_csi_objects_are_copied_without_what_the_source_set() -> None:
    importer = Importer(Store(), "unused-kubeconfig")
    importer.source = Source(serves_csi=True)  # type: ignore[assignment]
    asyncio.run(importer.run_once())
    assert importer.unserved == set()
    driver = importer.store.get("CSIDriver", None, "csi.example.com")
    assert driver["spec"] == {"storageCapacity": True} and driver["metadata"]["uid"] != "u1"
    cap = importer.store.get("CSIStorageCapacity", "kube-system", "cap")
    assert (cap["storageClassName"], cap["capacity"]) == ("fast", "10Gi")


def test_a_source_without_the_csi_kinds_is_copied_without_them() -> None:
    importer = Importer(Store(), "unused-kubeconfig")
    importer.source = Source(serves_csi=False)  # type: ignore[assignment]
    asyncio.run(importer.run_once())
    assert importer.unserved == {"CSIDriver", "CSIStorageCapacity"}
    assert importer.store.list("CSIDriver")[0] == []
