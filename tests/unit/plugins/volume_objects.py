"""Builders for the storage objects the volume plugin tests use (Kubernetes JSON)."""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]


def pv(
    name: str,
    labels: dict[str, str] | None = None,
    storage_class: str = "",
    capacity: str | None = None,
    phase: str | None = None,
    node_affinity: dict[str, list[str]] | None = None,
    claim: tuple[str, str] | None = None,
    access_modes: list[str] | None = None,
    csi: tuple[str, str] | None = None,
    source: Obj | None = None,
    rv: str = "1",
) -> Obj:
    spec: Obj = {}
    if storage_class:
        spec["storageClassName"] = storage_class
    if capacity:
        spec["capacity"] = {"storage": capacity}
    if access_modes:
        spec["accessModes"] = access_modes
    if node_affinity:
        spec["nodeAffinity"] = {
            "required": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": k, "operator": "In", "values": v} for k, v in node_affinity.items()]}
                ]
            }
        }
    if claim:
        spec["claimRef"] = {"namespace": claim[0], "name": claim[1]}
    if csi:
        spec["csi"] = {"driver": csi[0], "volumeHandle": csi[1]}
    if source:
        spec.update(source)
    obj: Obj = {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": name, "labels": dict(labels or {}), "resourceVersion": rv},
        "spec": spec,
    }
    if phase:
        obj["status"] = {"phase": phase}
    return obj


def pvc(
    name: str,
    storage_class: str | None = None,
    volume_name: str = "",
    request: str | None = None,
    access_modes: list[str] | None = None,
    bound: bool = False,
    phase: str | None = None,
    namespace: str = "default",
    annotations: dict[str, str] | None = None,
    deleting: bool = False,
    rv: str = "1",
) -> Obj:
    spec: Obj = {}
    if storage_class is not None:
        spec["storageClassName"] = storage_class
    if volume_name:
        spec["volumeName"] = volume_name
    if request:
        spec["resources"] = {"requests": {"storage": request}}
    if access_modes:
        spec["accessModes"] = access_modes
    meta: Obj = {"name": name, "namespace": namespace, "uid": f"uid-{name}", "resourceVersion": rv}
    ann = dict(annotations or {})
    if bound:
        ann["pv.kubernetes.io/bind-completed"] = "yes"
    if ann:
        meta["annotations"] = ann
    if deleting:
        meta["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    obj: Obj = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta, "spec": spec}
    if phase:
        obj["status"] = {"phase": phase}
    return obj


def storage_class(
    name: str,
    mode: str | None = "WaitForFirstConsumer",
    provisioner: str = "",
    allowed_topologies: list[Obj] | None = None,
) -> Obj:
    obj: Obj = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": name}}
    if mode is not None:
        obj["volumeBindingMode"] = mode
    if provisioner:
        obj["provisioner"] = provisioner
    if allowed_topologies is not None:
        obj["allowedTopologies"] = allowed_topologies
    return obj


def csi_node(name: str, drivers: dict[str, int | None], migrated: str = "") -> Obj:
    obj: Obj = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSINode",
        "metadata": {"name": name},
        "spec": {
            "drivers": [
                {"name": d, "nodeID": name, **({"allocatable": {"count": c}} if c is not None else {})}
                for d, c in drivers.items()
            ]
        },
    }
    if migrated:
        obj["metadata"]["annotations"] = {"storage.alpha.kubernetes.io/migrated-plugins": migrated}
    return obj


def claim_volumes(*claims: str) -> list[Obj]:
    return [{"name": f"vol-{c}", "persistentVolumeClaim": {"claimName": c}} for c in claims]
