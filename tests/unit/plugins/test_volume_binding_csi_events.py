"""VolumeBinding's events on the CSI kinds, as kube-scheduler 1.37 registers them: CSIDriver
updates and CSIStorageCapacity adds and updates, with their queueing hints (upstream's
TestIsSchedulableAfterCSIStorageCapacityChange cases, and the CSIDriver hint's rule)."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.framework.events import ActionType, ClusterEvent, EventResource, QueueingHint
from kubesched.plugins.volume.node_volume_limits import NodeVolumeLimits
from kubesched.plugins.volume.volume_binding import (
    VolumeBinding,
    is_schedulable_after_csi_driver_change,
    is_schedulable_after_csi_storage_capacity_change,
)
from kubesched.testing import framework_for, make_pod

Obj = dict[str, Any]
Q, SKIP = QueueingHint.QUEUE, QueueingHint.SKIP


def cap(name: str = "cap-a", cls: str = "sc-a", capacity: str | None = None, maximum: str | None = None) -> Obj:
    obj: Obj = {"metadata": {"name": name}, "storageClassName": cls}
    if capacity is not None:
        obj["capacity"] = capacity
    if maximum is not None:
        obj["maximumVolumeSize"] = maximum
    return obj


def pod(*claims: str, ephemeral: str = "", csi: str = "") -> Obj:
    p = make_pod("pod-a").obj()
    volumes: list[Obj] = [{"name": c, "persistentVolumeClaim": {"claimName": c}} for c in claims]
    if ephemeral:
        volumes.append({"name": ephemeral, "ephemeral": {"volumeClaimTemplate": {"spec": {}}}})
    if csi:
        volumes.append({"name": "inline", "csi": {"driver": csi}})
    p["spec"]["volumes"] = volumes
    return p


CAPACITY_CASES = [
    ("pod has no pvcs", pod(), cap(), cap(), SKIP),
    ("pod has pvcs with no CSIStorageCapacity changes", pod("pvc-a", "pvc-b"), cap(cls="sc-b"), cap(cls="sc-b"), SKIP),
    ("pod has pvc that references a newly added CSIStorageCapacity", pod("pvc-a", "pvc-b"), None, cap(cls="sc-b"), Q),
    (
        "pod has ephemeral volume with changed CSIStorageCapacity.Capacity",
        pod(ephemeral="ephemeral-a"),
        cap(capacity="1Gi"),
        cap(capacity="2Gi"),
        Q,
    ),
    (
        "pod has pvcs with changed CSIStorageCapacity.MaximumVolumeSize",
        pod("pvc-a", "pvc-b"),
        cap(cls="sc-b", maximum="1Gi"),
        cap(cls="sc-b", maximum="2Gi"),
        Q,
    ),
    (
        "pod has ephemeral volume with changed CSIStorageCapacity.MaximumVolumeSize",
        pod(ephemeral="ephemeral-a"),
        cap(maximum="1Gi"),
        cap(maximum="2Gi"),
        Q,
    ),
    # The volume limit is maximumVolumeSize when reported, else capacity; only growth counts.
    ("capacity shrank", pod("pvc-a"), cap(capacity="2Gi"), cap(capacity="1Gi"), SKIP),
    ("capacity reported where there was none", pod("pvc-a"), cap(), cap(capacity="1Gi"), Q),
    ("capacity withdrawn", pod("pvc-a"), cap(capacity="1Gi"), cap(), SKIP),
    (
        "capacity grew under an unchanged maximumVolumeSize",
        pod("pvc-a"),
        cap(capacity="1Gi", maximum="1Gi"),
        cap(capacity="9Gi", maximum="1Gi"),
        SKIP,
    ),
    ("same amount written differently", pod("pvc-a"), cap(capacity="1Gi"), cap(capacity="1024Mi"), SKIP),
]


@pytest.mark.parametrize(
    ("p", "old", "new", "want"), [c[1:] for c in CAPACITY_CASES], ids=[c[0] for c in CAPACITY_CASES]
)
def test_csi_storage_capacity_hint(p: Obj, old: Obj | None, new: Obj, want: QueueingHint) -> None:
    assert is_schedulable_after_csi_storage_capacity_change(p, old, new) is want


def driver(name: str = "csi.example.com", storage_capacity: bool | None = None) -> Obj:
    spec = {} if storage_capacity is None else {"storageCapacity": storage_capacity}
    return {"metadata": {"name": name}, "spec": spec}


DRIVER_CASES = [
    (
        "capacity tracking turned off",
        pod(csi="csi.example.com"),
        driver(storage_capacity=True),
        driver(storage_capacity=False),
        Q,
    ),
    ("capacity tracking unset", pod(csi="csi.example.com"), driver(storage_capacity=True), driver(), Q),
    (
        "capacity tracking turned on",
        pod(csi="csi.example.com"),
        driver(storage_capacity=False),
        driver(storage_capacity=True),
        SKIP,
    ),
    ("unchanged", pod(csi="csi.example.com"), driver(storage_capacity=True), driver(storage_capacity=True), SKIP),
    (
        "another driver",
        pod(csi="other.example.com"),
        driver(storage_capacity=True),
        driver(storage_capacity=False),
        SKIP,
    ),
    ("no inline CSI volume", pod("pvc-a"), driver(storage_capacity=True), driver(storage_capacity=False), SKIP),
]


@pytest.mark.parametrize(("p", "old", "new", "want"), [c[1:] for c in DRIVER_CASES], ids=[c[0] for c in DRIVER_CASES])
def test_csi_driver_hint(p: Obj, old: Obj, new: Obj, want: QueueingHint) -> None:
    assert is_schedulable_after_csi_driver_change(p, old, new) is want


def registered(plugin: Any) -> dict[EventResource, tuple[ActionType, Any]]:
    instance = framework_for(plugin).plugins[plugin.name]
    return {e.event.resource: (e.event.action, e.hint) for e in instance.events_to_register()}


def test_volume_binding_registers_the_csi_kinds_as_upstream() -> None:
    events = registered(VolumeBinding)
    assert events[EventResource.CSI_DRIVER] == (ActionType.UPDATE, is_schedulable_after_csi_driver_change)
    assert events[EventResource.CSI_STORAGE_CAPACITY] == (
        ActionType.ADD | ActionType.UPDATE,
        is_schedulable_after_csi_storage_capacity_change,
    )
    assert ClusterEvent(EventResource.CSI_STORAGE_CAPACITY, ActionType.ALL).matches(
        ClusterEvent(EventResource.CSI_STORAGE_CAPACITY, ActionType.UPDATE)
    )


def test_node_volume_limits_registers_no_csi_driver_event() -> None:
    assert EventResource.CSI_DRIVER not in registered(NodeVolumeLimits)
