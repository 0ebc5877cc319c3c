"""GangScheduling (upstream's in-tree plugin of kube-scheduler 1.37, ``GenericWorkload``): a
PodGroup whose policy is ``gang`` is placed with at least ``minCount`` members, or not at all.

* **PreEnqueue** holds a member back until its PodGroup is known and, for a gang, until at
  least ``minCount`` of its members exist (pending, assumed or bound):
  ``waiting for pod's pod group "g" to appear in scheduling queue`` /
  ``waiting for minCount pods from a gang to appear in scheduling queue``. A pod outside any
  group, or in a ``basic`` group once the group exists, passes.
* **PlacementFeasible** in the group's cycle: with ``s`` members placed and ``r`` still to try,
  ``s + r < minCount`` cannot be met any more (Unschedulable,
  ``minCount (8) cannot be satisfied: 7 scheduled, 0 remaining``), ``s < minCount`` is not met
  yet (Wait), else Success. A basic group's minimum is 1.
* **Events**: a pod of the same group added (pending or bound), the PodGroup added, or a gang's
  ``minCount`` lowered.

* **CompositePodGroup** (alpha gate): a member of a PodGroup under a CompositePodGroup passes
  PreEnqueue once its root's tree meets quorum — a composite is ready when at least
  ``minGroupCount`` of its children are (1 for a basic one), a PodGroup when it has at least
  ``minCount`` members (1 for a basic one) — else
  ``waiting for composite pod group "root" tree to meet quorum``; a hierarchy whose snapshot
  cannot be built (an ancestor unseen, a cycle, six levels or more: 1.37 checks no depth) waits
  with ``failed to build hierarchy snapshot: ...``. PlacementFeasible counts a
  composite's children against ``minGroupCount``. The hints wake a pod for events anywhere in
  its hierarchy (same root), and for a CompositePodGroup added.

* **Permit**, the barrier left for a member that reaches it while fewer than ``minCount``
  of its gang are placed (bound or assumed): the others still pending are activated and it waits
  (``waiting for minCount pods from a gang to be scheduled``, at most 5 minutes); once
  ``minCount`` are placed, every waiting member is allowed. The pod-group cycle assumes a whole
  gang before any member runs Permit, so there it lets every member through at once.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, ClassVar

from kubesched.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
)
from kubesched.framework.interface import CycleState, Handle
from kubesched.framework.names import GANG_SCHEDULING
from kubesched.framework.podgroup import (
    COMPOSITE_POD_GROUP_KIND,
    POD_GROUP_KIND,
    GroupKey,
    PlacementProgress,
    PodGroupInfo,
    PodGroupView,
    group_key,
    pod_group_name,
)
from kubesched.framework.status import Code, Status
from kubesched.framework.types import PodInfo

QUEUE, SKIP = QueueingHint.QUEUE, QueueingHint.SKIP

#: Why a member waits at PreEnqueue (upstream's words).
GROUP_NOT_FOUND = 'waiting for pod\'s pod group "{}" to appear in scheduling queue'
QUORUM_NOT_MET = "waiting for minCount pods from a gang to appear in scheduling queue"
#: Why a member waits at Permit, and for how long at most (upstream's fixed timeout).
TREE_NOT_READY = 'waiting for composite pod group "{}" tree to meet quorum'
#: PreEnqueue with CompositePodGroup on, when the hierarchy snapshot cannot be built (a group
#: or an ancestor not seen, a cycle: see PodGroupIndex.snapshot_top), or its root is not in it.
SNAPSHOT_FAILED = "failed to build hierarchy snapshot: "
NO_GROUP_IN_STATE = SNAPSHOT_FAILED + "pod group object not found in state for podgroup/{}/{}"
NO_COMPOSITE_IN_STATE = SNAPSHOT_FAILED + "composite pod group object not found in state for compositepodgroup/{}/{}"
WAITING_AT_PERMIT = "waiting for minCount pods from a gang to be scheduled"
PERMIT_TIMEOUT_SECONDS = 300.0


def _ns(pod: dict[str, Any]) -> str:
    """A pod's namespace (``default`` when unset)."""
    return (pod.get("metadata") or {}).get("namespace") or "default"


class GangScheduling:
    """All of a gang's minimum, or nothing (see the module docstring)."""

    name: ClassVar[str] = GANG_SCHEDULING

    def __init__(self, args: Any, handle: Handle) -> None:
        self.handle = handle
        gates = getattr(handle, "feature_gates", None)
        #: Whether hierarchies count (``CompositePodGroup``).
        self.hierarchies = bool(gates is not None and gates.enabled("CompositePodGroup"))

    # --- PreEnqueue -----------------------------------------------------------------------------
    def pre_enqueue(self, pod: PodInfo) -> Status | None:
        if not pod.pod_group:
            return None
        if self.hierarchies:
            return self._pre_enqueue_in_hierarchy(pod)
        groups = self.handle.pod_groups
        obj = groups.get(pod.namespace, pod.pod_group)
        if obj is None:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, GROUP_NOT_FOUND.format(pod.pod_group))
        min_count = PodGroupView(obj).gang_min_count
        if min_count is None:
            return None
        if groups.member_count(pod.namespace, pod.pod_group) < min_count:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, QUORUM_NOT_MET)
        return None

    def _pre_enqueue_in_hierarchy(self, pod: PodInfo) -> Status | None:
        groups = self.handle.pod_groups
        ns = pod.namespace
        obj = groups.get(ns, pod.pod_group)
        if obj is None:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, NO_GROUP_IN_STATE.format(ns, pod.pod_group))
        parent = PodGroupView(obj).parent
        if not parent:
            if self._group_ready(group_key(ns, pod.pod_group)):
                return None
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, QUORUM_NOT_MET)
        root, problem = groups.snapshot_top(group_key(ns, pod.pod_group))
        if root is None:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, f"{SNAPSHOT_FAILED}{problem}")
        top = groups.composite(root.namespace, root.name)
        if top is None or PodGroupView(top, COMPOSITE_POD_GROUP_KIND).parent:
            # The walk up stopped below the root (deeper than WorkloadMaxTreeDepth), at a
            # composite that is not seen or names a parent: the snapshot holds no root for it.
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, NO_COMPOSITE_IN_STATE.format(ns, parent))
        if self._group_ready(root):
            return None
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, TREE_NOT_READY.format(root.name))

    def _group_ready(self, key: GroupKey, depth: int = 0, placed: bool = False) -> bool:
        """A PodGroup with at least ``minCount`` known members (1 if basic; ``placed``: members
        bound or assumed); a composite with at least ``minGroupCount`` ready children (1 if
        basic)."""
        groups = self.handle.pod_groups
        ns, name = key.namespace, key.name
        if key.kind == POD_GROUP_KIND:
            obj = groups.get(ns, name)
            if obj is None:
                return False
            count = groups.scheduled_count(ns, name) if placed else groups.member_count(ns, name)
            return count >= PodGroupView(obj).min_count
        cpg = groups.composite(ns, name)
        if cpg is None or depth > 64:
            return False
        need = PodGroupView(cpg, COMPOSITE_POD_GROUP_KIND).min_count
        ready = 0
        for child in groups.children(key):
            if self._group_ready(child, depth + 1, placed):
                ready += 1
                if ready >= need:
                    return True
        return ready >= need

    def _same_hierarchy(self, namespace: str, pod_group: str, key: GroupKey) -> bool:
        """Whether group ``key`` is the pod's group, or (CompositePodGroup) shares its root."""
        mine = group_key(namespace, pod_group)
        if not self.hierarchies:
            return mine == key
        groups = self.handle.pod_groups
        root = groups.root_of(mine)
        return root is not None and root == groups.root_of(key)

    # --- Permit ---------------------------------------------------------------------------------
    def permit(self, state: CycleState, pod: PodInfo, node_name: str) -> tuple[Status | None, float]:
        if not pod.pod_group:
            return None, 0.0
        groups = self.handle.pod_groups
        obj = groups.get(pod.namespace, pod.pod_group)
        if obj is None:
            return Status.as_error(f"failed to get podGroup {pod.namespace}/{pod.pod_group}: not found"), 0.0
        view = PodGroupView(obj)
        parent = view.parent if self.hierarchies else ""
        if parent:
            return self._permit_in_hierarchy(pod.namespace, parent)
        min_count = view.gang_min_count
        if min_count is None:
            return None, 0.0
        if groups.scheduled_count(pod.namespace, pod.pod_group) < min_count:
            group = groups.state(pod.namespace, pod.pod_group)
            self.handle.activate([p for uid, p in group.members.items() if uid not in group.scheduled])
            return Status(Code.WAIT, WAITING_AT_PERMIT), PERMIT_TIMEOUT_SECONDS
        self._let_placed_go([(pod.namespace, pod.pod_group)])
        return None, 0.0

    def _let_placed_go(self, groups_of: Iterable[tuple[str, str]]) -> None:
        """Allow every placed member of these (namespace, name) groups that waits at Permit. With
        no pod waiting anywhere there is no one to let go (the group's cycle places a whole gang
        before its first Permit: none of its members ever waits), and the members are not walked."""
        if next(iter(self.handle.iterate_waiting_pods()), None) is None:
            return
        groups = self.handle.pod_groups
        for namespace, name in groups_of:
            for uid in groups.state(namespace, name).scheduled:
                waiting = self.handle.get_waiting_pod(uid)
                if waiting is not None:
                    waiting.allow(self.name)

    def _permit_in_hierarchy(self, namespace: str, parent: str) -> tuple[Status | None, float]:
        """A member under a CompositePodGroup waits until its root's tree meets quorum with
        placed members (the pending ones of the hierarchy are activated meanwhile); then every
        waiting member of the hierarchy is allowed."""
        groups = self.handle.pod_groups
        root = groups.root_of(group_key(namespace, parent, COMPOSITE_POD_GROUP_KIND))
        if root is None:
            return Status.as_error(NO_COMPOSITE_IN_STATE.format(namespace, parent)), 0.0
        if not self._group_ready(root, placed=True):
            leaves = [groups.state(k.namespace, k.name) for k in groups.leaves_under(root)]
            self.handle.activate(
                [p for state in leaves for uid, p in state.members.items() if uid not in state.scheduled]
            )
            return Status(Code.WAIT, TREE_NOT_READY.format(root.name)), PERMIT_TIMEOUT_SECONDS
        self._let_placed_go((k.namespace, k.name) for k in groups.leaves_under(root))
        return None, 0.0

    # --- PlacementFeasible ----------------------------------------------------------------------
    def placement_feasible(self, state: CycleState, group: PodGroupInfo, progress: PlacementProgress) -> Status | None:
        need = group.min_count
        scheduled, remaining = progress.scheduled, progress.remaining
        if scheduled + remaining < need:
            return Status(
                Code.UNSCHEDULABLE,
                f"minCount ({need}) cannot be satisfied: {scheduled} scheduled, {remaining} remaining",
            )
        if scheduled < need:
            return Status(
                Code.WAIT, f"minCount ({need}) is not yet satisfied: {scheduled} scheduled, {remaining} remaining"
            )
        return None

    # --- events ---------------------------------------------------------------------------------
    def events_to_register(self) -> list[ClusterEventWithHint]:
        events = [
            ClusterEventWithHint(ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.ADD), self.after_pod_added),
            ClusterEventWithHint(ClusterEvent(EventResource.POD, ActionType.ADD), self.after_pod_added),
            ClusterEventWithHint(ClusterEvent(EventResource.POD_GROUP, ActionType.ADD), self.after_pod_group_added),
            ClusterEventWithHint(
                ClusterEvent(EventResource.POD_GROUP, ActionType.UPDATE), self.after_pod_group_updated
            ),
        ]
        if self.hierarchies:
            events.append(
                ClusterEventWithHint(
                    ClusterEvent(EventResource.COMPOSITE_POD_GROUP, ActionType.ADD),
                    self.after_composite_pod_group_added,
                )
            )
        return events

    def after_pod_added(self, pod: dict[str, Any], old: Any, new: dict[str, Any] | None) -> QueueingHint:
        """A pod of the same group (with CompositePodGroup: the same hierarchy) appeared: the
        quorum may be met now."""
        group = pod_group_name(pod)
        if not group or new is None:
            return SKIP
        added = pod_group_name(new)
        if not added:
            return SKIP
        return QUEUE if self._same_hierarchy(_ns(pod), group, group_key(_ns(new), added)) else SKIP

    def after_pod_group_added(self, pod: dict[str, Any], old: Any, new: dict[str, Any] | None) -> QueueingHint:
        """The pod's own PodGroup (or one of its hierarchy) appeared."""
        group = pod_group_name(pod)
        if not group or new is None:
            return SKIP
        added = PodGroupView(new)
        return QUEUE if self._same_hierarchy(_ns(pod), group, group_key(added.namespace, added.name)) else SKIP

    def after_pod_group_updated(
        self, pod: dict[str, Any], old: dict[str, Any] | None, new: dict[str, Any] | None
    ) -> QueueingHint:
        """The pod's gang (or one of its hierarchy) asks for fewer members than before."""
        group = pod_group_name(pod)
        if not group or new is None:
            return SKIP
        now = PodGroupView(new)
        if not self._same_hierarchy(_ns(pod), group, group_key(now.namespace, now.name)):
            return SKIP
        before, after = PodGroupView(old).gang_min_count, now.gang_min_count
        if before is None or after is None:
            return SKIP
        return QUEUE if after < before else SKIP

    def after_composite_pod_group_added(
        self, pod: dict[str, Any], old: Any, new: dict[str, Any] | None
    ) -> QueueingHint:
        """A CompositePodGroup of the pod's hierarchy appeared."""
        group = pod_group_name(pod)
        if not group or new is None:
            return SKIP
        added = PodGroupView(new, COMPOSITE_POD_GROUP_KIND)
        key = group_key(added.namespace, added.name, COMPOSITE_POD_GROUP_KIND)
        return QUEUE if self._same_hierarchy(_ns(pod), group, key) else SKIP
