"""NodeVolumeLimits: CSI volumes attached to a node stay within each driver's limit.

A node's limit for a driver is ``CSINode.spec.drivers[].allocatable.count`` (or, for older
nodes, an ``attachable-volumes-*`` entry of the node's allocatable). Filter counts the unique
volumes (driver + volume handle) the node's pods already use and those the pod would add, per
driver, and rejects the node when a driver would go over its limit
(``node(s) exceed max volume count``, Unschedulable: preemption may free some).

A claim's volume is its bound PV's CSI source; an unbound claim counts as a new volume of its
StorageClass's provisioner. In-tree PVs and inline volumes (AWS EBS, GCE PD, Azure Disk,
Cinder) count against their CSI driver when the node's CSINode lists the plugin as migrated;
other in-tree plugins (Azure File, vSphere, Portworx) are not translated.

With the VolumeLimitScaling gate (beta, on in 1.37; KEP-5030), a node whose CSINode does not
list a driver the pod's new volumes need is rejected (``<driver> CSI driver is not installed on
the node``, Unschedulable) when that driver's CSIDriver object opts in with
``spec.preventPodSchedulingIfMissing: true``; other drivers keep the old rule (no CSINode entry,
no limit). The CSIDriver objects are read through the handle's listers under the kind
``CSIDriver``.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from typing import Any

from kubesched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource, QueueingHint
from kubesched.framework.interface import CycleState, Handle
from kubesched.framework.resources import QuantityError, parse_quantity
from kubesched.framework.status import Code, Status
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.objects import Obj
from kubesched.plugins.helper import feature_enabled, volumes_fragment
from kubesched.plugins.volume.helpers import (
    ATTACHABLE_VOLUMES_PREFIX,
    IN_TREE_DRIVER_BY_PLUGIN,
    csi_attach_limit_key,
    in_tree_source,
    is_csi_migration_on,
    namespace_of,
    not_found,
    pvc_class,
    queue_if_pod_claim,
    spec,
    translated_csi,
    volume_claim,
    volume_is_for_pod,
)

NAME = "NodeVolumeLimits"
ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED = "node(s) exceed max volume count"
VOLUME_LIMIT_SCALING_GATE = "VolumeLimitScaling"


def driver_not_installed(driver: str) -> str:
    return f"{driver} CSI driver is not installed on the node"


class _NotFound(Exception):
    pass


class NodeVolumeLimits:
    name = NAME

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        self.handle: Handle = handle
        # Unbound claims have no volume handle yet: a per-instance random prefix keeps the
        # made-up handles from colliding with real ones.
        self.random_volume_id_prefix = secrets.token_hex(16)
        self.volume_limit_scaling = feature_enabled(handle, VOLUME_LIMIT_SCALING_GATE)

    def pre_filter(self, state: CycleState, pod: PodInfo) -> Status | None:
        for v in pod.volumes:
            if v.get("persistentVolumeClaim") is not None or v.get("ephemeral") is not None or in_tree_source(v):
                return None
        return Status(Code.SKIP)

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        if not pod.volumes:
            return None
        listers = self.handle.listers
        csi_node = listers.get("CSINode", None, node.name)
        new_volumes: dict[str, str] = {}
        try:
            self._attachable_volumes(pod.pod, csi_node, True, new_volumes)
        except _NotFound as exc:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, str(exc))
        except ValueError as exc:
            return Status.as_error(str(exc))
        if not new_volumes:
            return None
        if self.volume_limit_scaling:
            missing = self._missing_required_driver(new_volumes, csi_node)
            if missing is not None:
                return Status(Code.UNSCHEDULABLE, driver_not_installed(missing))
        limits = volume_limits(node, csi_node)
        if not limits:
            return None
        attached: dict[str, str] = {}
        for existing in node.pods:
            try:
                self._attachable_volumes(existing.pod, csi_node, False, attached)
            except (ValueError, _NotFound) as exc:
                return Status.as_error(str(exc))
        attached_count: dict[str, int] = {}
        for unique, key in attached.items():
            # A volume already attached for another pod costs nothing more.
            new_volumes.pop(unique, None)
            attached_count[key] = attached_count.get(key, 0) + 1
        new_count: dict[str, int] = {}
        for key in new_volumes.values():
            new_count[key] = new_count.get(key, 0) + 1
        for key, count in new_count.items():
            limit = limits.get(key)
            if limit is not None and attached_count.get(key, 0) + count > limit:
                return Status(Code.UNSCHEDULABLE, ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED)
        return None

    def _missing_required_driver(self, new_volumes: Mapping[str, str], csi_node: Obj | None) -> str | None:
        """The first driver of the pod's new volumes that the node's CSINode does not list and
        whose CSIDriver asks for pods to stay off such nodes, else ``None``."""
        drivers = spec(csi_node).get("drivers") or () if csi_node is not None else ()
        installed = {str(d.get("name") or "") for d in drivers}
        seen: set[str] = set()
        for unique in new_volumes:
            # The unique name is ``<driver>/<handle>``; driver names hold no slash.
            driver = unique.split("/", 1)[0]
            if driver in seen or driver in installed:
                continue
            seen.add(driver)
            csi_driver = self.handle.listers.get("CSIDriver", None, driver)
            if csi_driver is not None and spec(csi_driver).get("preventPodSchedulingIfMissing") is True:
                return driver
        return None

    def _attachable_volumes(
        self, pod: Mapping[str, Any], csi_node: Obj | None, new_pod: bool, result: dict[str, str]
    ) -> None:
        """Add ``{driver/handle: limit key}`` for each CSI volume of ``pod`` to ``result``."""
        listers = self.handle.listers
        ns = namespace_of(pod)
        for v in spec(pod).get("volumes") or ():
            claim = volume_claim(pod, v)
            if claim is None:
                translated = translated_csi(v, is_pv=False)
                if translated is not None:
                    plugin, driver, handle = translated
                    if is_csi_migration_on(csi_node, plugin):
                        result[f"{driver}/{handle}"] = csi_attach_limit_key(driver)
                continue
            claim_name, ephemeral = claim
            if not claim_name:
                raise ValueError("PersistentVolumeClaim had no name")
            pvc = listers.get("PersistentVolumeClaim", ns, claim_name)
            if pvc is None:
                if new_pod:
                    # The pod cannot run without its claim.
                    raise _NotFound(
                        f"looking up PVC {ns}/{claim_name}: {not_found('PersistentVolumeClaim', claim_name)}"
                    )
                continue
            if ephemeral:
                reason = volume_is_for_pod(pod, pvc)
                if reason is not None:
                    raise ValueError(reason)
            driver, handle = self._csi_driver_info(csi_node, pvc)
            if not driver or not handle:
                continue
            result[f"{driver}/{handle}"] = csi_attach_limit_key(driver)

    def _csi_driver_info(self, csi_node: Obj | None, pvc: Obj) -> tuple[str, str]:
        pv_name = spec(pvc).get("volumeName") or ""
        if not pv_name:
            return self._csi_driver_info_from_sc(csi_node, pvc)
        pv = self.handle.listers.get("PersistentVolume", None, pv_name)
        if pv is None:
            # Deleted, or pre-bound to a PV not created yet: count by the class instead.
            return self._csi_driver_info_from_sc(csi_node, pvc)
        csi = spec(pv).get("csi")
        if csi is None:
            translated = translated_csi(pv, is_pv=True)
            if translated is None:
                return "", ""
            plugin, driver, handle = translated
            if not is_csi_migration_on(csi_node, plugin):
                return "", ""
            return driver, handle
        return str(csi.get("driver") or ""), str(csi.get("volumeHandle") or "")

    def _csi_driver_info_from_sc(self, csi_node: Obj | None, pvc: Obj) -> tuple[str, str]:
        sc_name = pvc_class(pvc)
        if not sc_name:
            # Without a class the claim binds immediately: it is bound before scheduling.
            return "", ""
        sc = self.handle.listers.get("StorageClass", None, sc_name)
        if sc is None:
            return "", ""
        meta = pvc.get("metadata") or {}
        handle = f"{self.random_volume_id_prefix}-{meta.get('namespace') or 'default'}/{meta.get('name', '')}"
        provisioner = str(sc.get("provisioner") or "")
        if provisioner in IN_TREE_DRIVER_BY_PLUGIN:
            if not is_csi_migration_on(csi_node, provisioner):
                return "", ""
            return IN_TREE_DRIVER_BY_PLUGIN[provisioner], handle
        return provisioner, handle

    def sign_pod(self, pod: PodInfo) -> dict[str, Any]:
        return volumes_fragment(pod)

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            # Any new CSINode may carry the limits a rejected pod needs: no hint.
            ClusterEventWithHint(ClusterEvent(EventResource.CSI_NODE, ActionType.ADD)),
            ClusterEventWithHint(
                ClusterEvent(EventResource.CSI_NODE, ActionType.UPDATE), is_schedulable_after_csi_node_updated
            ),
            ClusterEventWithHint(ClusterEvent(EventResource.POD, ActionType.DELETE), is_schedulable_after_pod_deleted),
            ClusterEventWithHint(
                ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD), is_schedulable_after_pvc_added
            ),
        ]


def _driver_counts(csi_node: Any) -> dict[str, int | None]:
    out: dict[str, int | None] = {}
    for d in spec(csi_node).get("drivers") or ():
        count = (d.get("allocatable") or {}).get("count")
        out[str(d.get("name") or "")] = None if count is None else int(count)
    return out


def is_schedulable_after_csi_node_updated(pod: Any, old: Any, new: Any) -> QueueingHint:
    """Queue when a CSINode update may make room: a driver's attach limit went up or went away
    (no limit), or a driver was installed (VolumeLimitScaling checks for it)."""
    if not isinstance(old, Mapping) or not isinstance(new, Mapping):
        return QueueingHint.QUEUE
    before, after = _driver_counts(old), _driver_counts(new)
    for driver, count in after.items():
        if driver not in before:
            return QueueingHint.QUEUE
        previous = before[driver]
        if previous is not None and (count is None or count > previous):
            return QueueingHint.QUEUE
    return QueueingHint.SKIP


def volume_limits(node: NodeInfo, csi_node: Obj | None) -> dict[str, int]:
    """Per limit key: the node's ``attachable-volumes-*`` allocatable, overridden by CSINode."""
    limits: dict[str, int] = {}
    node_obj = node.node or {}
    allocatable = (node_obj.get("status") or {}).get("allocatable") or {}
    for key, value in allocatable.items():
        if key.startswith(ATTACHABLE_VOLUMES_PREFIX):
            try:
                limits[key] = int(parse_quantity(value))
            except (QuantityError, ValueError, TypeError):
                continue
    if csi_node is not None:
        for d in spec(csi_node).get("drivers") or ():
            count = (d.get("allocatable") or {}).get("count")
            if count is not None:
                limits[csi_attach_limit_key(str(d.get("name") or ""))] = int(count)
    return limits


def is_schedulable_after_pod_deleted(pod: Any, old: Any, new: Any) -> QueueingHint:
    """Queue when a placed pod that used a claim or a migratable inline volume went away."""
    deleted = old if isinstance(old, Mapping) else new
    if not isinstance(deleted, Mapping):
        return QueueingHint.QUEUE
    volumes = spec(deleted).get("volumes") or ()
    if not volumes or not spec(deleted).get("nodeName"):
        return QueueingHint.SKIP
    for v in volumes:
        if v.get("persistentVolumeClaim") is not None or v.get("ephemeral") is not None or in_tree_source(v):
            return QueueingHint.QUEUE
    return QueueingHint.SKIP


def is_schedulable_after_pvc_added(pod: Any, old: Any, new: Any) -> QueueingHint:
    return queue_if_pod_claim(pod, new, include_ephemeral=True)
