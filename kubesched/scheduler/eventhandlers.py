"""What the informers' events do: keep the cache, the queue, the nominator and the listers in
step with the cluster, and report pods that cannot be read."""

from __future__ import annotations

import logging
from typing import Any

from kubesched.backend.pod_group_members import pod_group_key
from kubesched.framework.events import (
    NODE_ADD,
    NODE_DELETE,
    UNSCHEDULED_POD_ADD,
    ActionType,
    ClusterEvent,
    EventResource,
    node_update_actions,
    pod_update_actions,
)
from kubesched.framework.pod_requests import Counting
from kubesched.framework.podgroup import PodGroupView, group_key
from kubesched.framework.types import PodInfo, PodSpecError, pod_key, pod_uid
from kubesched.runtime.informers import SharedInformer
from kubesched.scheduler.context import SchedulerContext
from kubesched.scheduler.failures import FailureReporting
from kubesched.scheduler.observer import timed_event
from kubesched.scheduler.results import PodResult

# One logger for the whole package: log lines name the scheduler, whichever module writes them.
log = logging.getLogger("kubesched.scheduler")

_EVENT_RESOURCES = {
    "Namespace": EventResource.NAMESPACE,
    "PersistentVolume": EventResource.PERSISTENT_VOLUME,
    "PersistentVolumeClaim": EventResource.PERSISTENT_VOLUME_CLAIM,
    "StorageClass": EventResource.STORAGE_CLASS,
    "CSINode": EventResource.CSI_NODE,
    "CSIDriver": EventResource.CSI_DRIVER,
    "CSIStorageCapacity": EventResource.CSI_STORAGE_CAPACITY,
    "PodDisruptionBudget": EventResource.POD_DISRUPTION_BUDGET,
    "ResourceClaim": EventResource.RESOURCE_CLAIM,
    "ResourceSlice": EventResource.RESOURCE_SLICE,
    "DeviceClass": EventResource.DEVICE_CLASS,
    "PodGroup": EventResource.POD_GROUP,
    "CompositePodGroup": EventResource.COMPOSITE_POD_GROUP,
}
#: The kinds whose events the scheduler turns into cluster events of its own.
_SCHEDULER_KINDS = frozenset({"Pod", "Node", "DeviceTaintRule", *_EVENT_RESOURCES})
_ACTION_NAMES = {ActionType.ADD: "Add", ActionType.UPDATE: "Update", ActionType.DELETE: "Delete"}


class EventHandlers:
    """The handler the cluster's informers call (``on_add`` / ``on_update`` / ``on_delete``)."""

    def __init__(self, ctx: SchedulerContext, failures: FailureReporting) -> None:
        self.ctx = ctx
        self.failures = failures
        self.options = ctx.options
        self.frameworks = ctx.frameworks
        self.cache = ctx.cache
        self.queue = ctx.queue
        self.nominator = ctx.nominator
        self.listers = ctx.listers
        self.waiting_pods = ctx.waiting_pods
        self.results = ctx.results
        #: Pod groups and their members (only with GenericWorkload: without it a pod's
        #: ``schedulingGroup`` means nothing to the scheduler, as upstream).
        self.pod_groups = ctx.pod_groups if ctx.options.feature_gates.enabled("GenericWorkload") else None
        #: Whether CompositePodGroups join the index (``CompositePodGroup``, with GenericWorkload).
        self.composites = self.pod_groups is not None and ctx.options.feature_gates.enabled("CompositePodGroup")
        #: How this scheduler's feature gates count a pod's resources (NodeInfo's accounting).
        self.counting = Counting.of(ctx.options.feature_gates)
        #: Whether this process may write to the cluster (see :meth:`set_leading`).
        self.leading = True
        #: The informers plugins asked for, by the kind the cluster delivers (fed first, so a
        #: plugin's state is current when the queue asks its hints), and the resources plugins
        #: register events on by name.
        self._informers = ctx.informers.by_kind
        self._registered_names = {
            reg.event.resource
            for fw in self.frameworks.values()
            for regs in fw.events_to_register().values()
            for reg in regs or ()
            if not isinstance(reg.event.resource, EventResource)
        }
        #: Malformed pods seen while not leading, reported once leadership is ours: by UID.
        self._unreported: dict[str, tuple[dict[str, Any], str]] = {}

    def _responsible(self, pi: PodInfo) -> bool:
        return pi.scheduler_name in self.frameworks

    def _pod_info(self, obj: dict[str, Any], old: dict[str, Any] | None = None) -> PodInfo | None:
        if old is not None:
            # An update of a pod the cache holds (most often: its bind confirmed) usually
            # changes nothing derived: keep what was derived.
            known = self.cache.get_pod(pod_uid(obj))
            rebased = known.rebased(obj) if known is not None else None
            if rebased is not None:
                return rebased
        try:
            return PodInfo(obj, self.counting)
        except PodSpecError as exc:
            # Report once per version of the spec: the report itself updates the pod's status,
            # and that update must not trigger another report.
            if old is None or old.get("spec") != obj.get("spec"):
                self._report_malformed(obj, str(exc))
            return None

    @timed_event("add")
    def on_add(self, kind: str, obj: dict[str, Any]) -> None:
        informer = self._informers.get(kind) if self._informers else None
        if informer is None:
            self._add(kind, obj)
            return
        informer.added(obj)
        self._add(kind, obj)
        self._informer_event(informer, ActionType.ADD, None, obj)

    @timed_event("update")
    def on_update(self, kind: str, old: dict[str, Any], new: dict[str, Any]) -> None:
        informer = self._informers.get(kind) if self._informers else None
        if informer is None:
            self._update(kind, old, new)
            return
        informer.updated(old, new)
        self._update(kind, old, new)
        self._informer_event(informer, ActionType.UPDATE, old, new)

    @timed_event("delete")
    def on_delete(self, kind: str, obj: dict[str, Any]) -> None:
        informer = self._informers.get(kind) if self._informers else None
        if informer is None:
            self._delete(kind, obj)
            return
        informer.deleted(obj)
        self._delete(kind, obj)
        self._informer_event(informer, ActionType.DELETE, obj, None)

    def _informer_event(
        self, informer: SharedInformer, action: ActionType, old: dict[str, Any] | None, new: dict[str, Any] | None
    ) -> None:
        """The queue hears of a change to a resource a plugin asked an informer for as upstream's
        dynamic informers tell it: ``ClusterEvent("<plural>.<version>.<group>", action)``. For
        the kinds the scheduler handles itself (pods, nodes, the kinds of :class:`EventResource`),
        only when some plugin registers events by that name."""
        resource = informer.gvr.event_resource
        if informer.kind in _SCHEDULER_KINDS and resource not in self._registered_names:
            return
        self.queue.on_event(ClusterEvent(resource, action, f"{resource}{_ACTION_NAMES[action]}"), old, new)

    def _add(self, kind: str, obj: dict[str, Any]) -> None:
        if kind == "Pod":
            pi = self._pod_info(obj)
            if pi is None:
                return
            if self.pod_groups is not None and pi.pod_group and not pi.is_terminal:
                self.pod_groups.put_pod(pi)
            if pi.node_name:
                if pi.is_terminal:
                    return
                self.cache.add_pod(pi)
                self.queue.assigned_pod_added(pi, self.listers.namespace_labels)
            elif self._responsible(pi) and not pi.is_terminal and not pi.deleting:
                self._nominate_from(pi)
                self.queue.add(pi)
                if self.pod_groups is not None and pi.pod_group:
                    self._group_member_added(pi)
        elif kind == "Node":
            self.cache.add_node(obj)
            self.queue.on_event(NODE_ADD, None, obj)
        else:
            self.listers.put(kind, obj)
            if kind == "PodGroup" and self.pod_groups is not None:
                self.pod_groups.put_group(obj)
                group = PodGroupView(obj)
                self.queue.pod_group_added(group.namespace, group.name)
            elif kind == "CompositePodGroup" and self.composites:
                assert self.pod_groups is not None
                self.pod_groups.put_composite(obj)
            self._other_event(kind, ActionType.ADD, None, obj)

    def _update(self, kind: str, old: dict[str, Any], new: dict[str, Any]) -> None:
        if kind == "Pod":
            pi = self._pod_info(new, old)
            if pi is None:
                return
            if self.pod_groups is not None and pi.pod_group:
                if pi.is_terminal:
                    self.pod_groups.remove_pod(pi.uid)
                else:
                    self.pod_groups.put_pod(pi)
            if pi.node_name:
                was_pending = not (old.get("spec") or {}).get("nodeName")
                if was_pending:
                    self.queue.delete(pi.uid)
                    self.nominator.delete(pi.uid)
                if pi.is_terminal:
                    if self.cache.remove_pod(pi.uid) is not None:
                        self.queue.assigned_pod_deleted(pi)
                    return
                self.cache.add_pod(pi)
                if was_pending:
                    self.queue.assigned_pod_added(pi, self.listers.namespace_labels)
                else:
                    event = ClusterEvent(EventResource.POD, pod_update_actions(old, new), "AssignedPodUpdate")
                    self.queue.assigned_pod_updated(old, pi, event, self.listers.namespace_labels)
            elif self._responsible(pi):
                assumed = self.cache.is_assumed(pi.uid)
                if assumed and not pi.deleting:
                    # Its scheduling cycle is over and its binding cycle under way: what that
                    # writes (a nominatedNodeName, annotations) concerns no queue, as upstream's
                    # updatePodInSchedulingQueue returns for an assumed pod.
                    return
                if not assumed:
                    # An assumed pod is counted on its node already (a nominatedNodeName its
                    # binding cycle wrote must not count it twice), as upstream skips it.
                    self._nominate_from(pi)
                self.queue.update(pi)
        elif kind == "Node":
            self.cache.update_node(old, new)
            actions = node_update_actions(old, new)
            if actions:
                self.queue.on_event(ClusterEvent(EventResource.NODE, actions, "NodeUpdate"), old, new)
        else:
            self.listers.put(kind, new)
            if kind == "PodGroup" and self.pod_groups is not None:
                self.pod_groups.put_group(new)
                meta = new.get("metadata") or {}
                self.queue.pod_group_added(meta.get("namespace") or "default", meta.get("name", ""))
            elif kind == "CompositePodGroup" and self.composites:
                assert self.pod_groups is not None
                self.pod_groups.put_composite(new)
            self._other_event(kind, ActionType.UPDATE, old, new)

    def _delete(self, kind: str, obj: dict[str, Any]) -> None:
        if kind == "Pod":
            uid = pod_uid(obj)
            self._unreported.pop(uid, None)
            if not self.options.keep_deleted_results:
                self.results.pop(pod_key(obj), None)
            self.nominator.delete(uid)
            if self.pod_groups is not None:
                self.pod_groups.remove_pod(uid)
            removed = self.cache.remove_pod(uid)
            if removed is not None:
                self.queue.assigned_pod_deleted(removed)
            self.queue.delete(uid)
            wp = self.waiting_pods.get(uid)
            if wp is not None:
                for plugin in wp.pending_plugins():
                    wp.reject(plugin, "pod was deleted")
                    break
        elif kind == "Node":
            self.cache.remove_node(obj)
            self.queue.on_event(NODE_DELETE, obj, None)
        else:
            self.listers.remove(kind, obj)
            if kind == "PodGroup" and self.pod_groups is not None:
                self.pod_groups.remove_group(obj)
                meta = obj.get("metadata") or {}
                self.queue.pod_group_deleted(meta.get("namespace") or "default", meta.get("name", ""))
            elif kind == "CompositePodGroup" and self.composites:
                assert self.pod_groups is not None
                self.pod_groups.remove_composite(obj)
            self._other_event(kind, ActionType.DELETE, obj, None)

    def _group_member_added(self, pi: PodInfo) -> None:
        """A pending member of a pod group arrived: its fellow members waiting in the pool (a
        gang short of its quorum) hear of it; with CompositePodGroup, every member of its
        hierarchy. The queue holds a group's members as one entity (its PodGroup's, or its
        hierarchy's root's), so the entities are found by key, not member by member."""
        assert self.pod_groups is not None
        keys = [pod_group_key(pi.namespace, pi.pod_group)]
        if self.composites:
            # With CompositePodGroup the quorum is the hierarchy's: every member under the root hears.
            root = self.pod_groups.root_of(group_key(pi.namespace, pi.pod_group))
            if root is not None:
                keys = [root.entity, *(k.entity for k in self.pod_groups.leaves_under(root))]
        pooled = self.queue.pooled_groups(keys, besides=pi.uid)
        if pooled:
            self.queue.on_event(UNSCHEDULED_POD_ADD, None, pi.pod, candidates=pooled)

    def _nominate_from(self, pi: PodInfo) -> None:
        """Keep the nominator in step with ``status.nominatedNodeName`` of a pending pod."""
        nominated = pi.nominated_node_name
        if nominated:
            self.nominator.add(pi, nominated)
        else:
            self.nominator.delete(pi.uid)

    def _other_event(
        self, kind: str, action: ActionType, old: dict[str, Any] | None, new: dict[str, Any] | None
    ) -> None:
        resource = _EVENT_RESOURCES.get(kind)
        if kind == "DeviceTaintRule":
            # A rule reaches plugins as the ResourceSlices whose devices it taints, as upstream's
            # slice tracker delivers it: whatever happened to the rule, slices were updated.
            resource, action = EventResource.RESOURCE_SLICE, ActionType.UPDATE
        if resource is not None:
            self.queue.on_event(ClusterEvent(resource, action, f"{kind}{_ACTION_NAMES[action]}"), old, new)

    def _report_malformed(self, obj: dict[str, Any], message: str) -> None:
        """A pod we cannot read is reported on that pod; everything else goes on."""
        spec = obj.get("spec") or {}
        if spec.get("nodeName") or (spec.get("schedulerName") or "default-scheduler") not in self.frameworks:
            log.warning("ignoring malformed pod %s: %s", pod_key(obj), message)
            return
        key = pod_key(obj)
        meta = obj.get("metadata") or {}
        if self.options.record_results:
            self.results[key] = PodResult(
                meta.get("namespace") or "default",
                meta.get("name", ""),
                spec.get("schedulerName") or "default-scheduler",
                phase="Error",
                message=message,
            )
        log.warning("pod %s cannot be scheduled: %s", key, message)
        if not self.leading:
            # Only the leader writes to the cluster; report it once leadership is ours.
            self._unreported[meta.get("uid") or key] = (obj, message)
            return
        if self.options.report_to_cluster:
            self.ctx.spawn_side(
                self.failures.report_failure(
                    obj, spec.get("schedulerName") or "default-scheduler", "SchedulerError", message
                ),
                name=f"report {key}",
            )

    def set_leading(self, leading: bool) -> None:
        """Whether this process may write to the cluster (leader election); becoming the leader
        reports what was held back meanwhile."""
        self.leading = leading
        if leading:
            pending, self._unreported = self._unreported, {}
            for obj, message in pending.values():
                self._report_malformed(obj, message)
