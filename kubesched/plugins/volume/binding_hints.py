"""VolumeBinding's queueing hints: which changes of claims, StorageClasses, CSINodes, CSIDrivers and
CSIStorageCapacities may make a pod it rejected schedulable."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubesched.framework.events import QueueingHint
from kubesched.plugins.volume.helpers import (
    ANN_MIGRATED_PLUGINS,
    annotations_of,
    name_of,
    pod_obj,
    queue_if_pod_claim,
    spec,
)
from kubesched.plugins.volume.storage_capacity import quantity_value, volume_limit


def is_schedulable_after_pvc_change(pod: Any, old: Any, new: Any) -> QueueingHint:
    """Queue when the claim is one the pod uses (in its namespace)."""
    return queue_if_pod_claim(pod, new, include_ephemeral=True)


def is_schedulable_after_storage_class_change(pod: Any, old: Any, new: Any) -> QueueingHint:
    """Queue on a new class, or when a class's ``allowedTopologies`` changed."""
    if not isinstance(old, Mapping) or not isinstance(new, Mapping):
        return QueueingHint.QUEUE
    if (old.get("allowedTopologies") or []) != (new.get("allowedTopologies") or []):
        return QueueingHint.QUEUE
    return QueueingHint.SKIP


def is_schedulable_after_csi_node_change(pod: Any, old: Any, new: Any) -> QueueingHint:
    """Queue on a new CSINode, or when its migrated-plugins annotation changed."""
    if not isinstance(old, Mapping) or not isinstance(new, Mapping):
        return QueueingHint.QUEUE
    if annotations_of(old).get(ANN_MIGRATED_PLUGINS) != annotations_of(new).get(ANN_MIGRATED_PLUGINS):
        return QueueingHint.QUEUE
    return QueueingHint.SKIP


def is_schedulable_after_csi_storage_capacity_change(pod: Any, old: Any, new: Any) -> QueueingHint:
    """Queue on a new CSIStorageCapacity, or when its volume limit (``maximumVolumeSize``, else
    ``capacity``) appeared or grew; ``nodeTopology`` and ``storageClassName`` are immutable."""
    if not isinstance(old, Mapping) or not isinstance(new, Mapping):
        return QueueingHint.QUEUE
    old_limit, new_limit = volume_limit(old), volume_limit(new)
    if new_limit is not None and (old_limit is None or quantity_value(new_limit) > quantity_value(old_limit)):
        return QueueingHint.QUEUE
    return QueueingHint.SKIP


def is_schedulable_after_csi_driver_change(pod: Any, old: Any, new: Any) -> QueueingHint:
    """Queue when a driver an inline CSI volume of the pod uses stopped asking for storage
    capacity tracking (``spec.storageCapacity`` went from true to unset or false)."""
    if not isinstance(old, Mapping) or not isinstance(new, Mapping):
        return QueueingHint.QUEUE
    name = name_of(new)
    for volume in spec(pod_obj(pod)).get("volumes") or ():
        csi = volume.get("csi") if isinstance(volume, Mapping) else None
        if not isinstance(csi, Mapping) or csi.get("driver") != name:
            continue
        if spec(old).get("storageCapacity") is True and spec(new).get("storageCapacity") is not True:
            return QueueingHint.QUEUE
    return QueueingHint.SKIP
