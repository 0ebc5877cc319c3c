"""The pod groups the scheduler knows (workload-aware scheduling, ``GenericWorkload``): every
PodGroup object the informers delivered, and every pod that names one in
``spec.schedulingGroup.podGroupName`` — pending, assumed or bound — by group.

With ``CompositePodGroup`` (alpha) the index also holds CompositePodGroup objects and the
hierarchy: each group's parent (``spec.parentCompositePodGroupName``) and each composite's
children, linked as soon as a child names its parent (before the parent is seen, as upstream's
workload forest). A group's root is the top of its chain of parents; a hierarchy is the root
and every group below it.

It is the plugins' ``handle.pod_groups`` (GangScheduling counts a gang's members here), and the
scheduler finds a group's pending members through it when one of them is popped. Which members
are placed is the cache's to say (bound or assumed), so :meth:`PodGroupIndex.state` asks it; an
index that follows a cache (:meth:`PodGroupIndex.follow`) also keeps each group's placed members
as the cache changes, so that how many are placed is an O(1) question
(:meth:`PodGroupIndex.scheduled_count`) for a gang's every member at Permit.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, Protocol

from kubesched.framework.podgroup import (
    COMPOSITE_POD_GROUP_KIND,
    POD_GROUP_KIND,
    GroupKey,
    PodGroupState,
    PodGroupView,
    group_key,
)
from kubesched.framework.types import PodInfo

#: ``placed(uid)``: the pod as the cache holds it (bound or assumed, with its node), or None.
PlacedLookup = Callable[[str], PodInfo | None]


class PlacementSource(Protocol):
    """What :meth:`PodGroupIndex.follow` needs of the scheduler's cache."""

    on_placement: Callable[[str], None] | None

    def get_pod(self, uid: str) -> PodInfo | None: ...


#: WorkloadMaxTreeDepth (scheduling.k8s.io): levels of a hierarchy, its root the first.
MAX_TREE_DEPTH = 4


def _meta(obj: dict[str, Any]) -> tuple[str, str]:
    view = PodGroupView(obj)
    return view.namespace, view.name


class PodGroupIndex:
    """PodGroup objects and their members, by :class:`~kubesched.framework.podgroup.GroupKey`."""

    def __init__(self, placed: PlacedLookup | None = None) -> None:
        self._placed: PlacedLookup = placed if placed is not None else (lambda uid: None)
        self._objects: dict[GroupKey, dict[str, Any]] = {}
        self._members: dict[GroupKey, dict[str, PodInfo]] = {}
        #: Each member's group key, by UID (a pod's group never changes: the field is immutable).
        self._group_of: dict[str, GroupKey] = {}
        #: CompositePodGroup objects, by their keys (kind ``CompositePodGroup``).
        self._composites: dict[GroupKey, dict[str, Any]] = {}
        #: Each group's parent key (PodGroups and CompositePodGroups that name one).
        self._parent: dict[GroupKey, GroupKey] = {}
        #: Each composite's children keys (kept while the composite itself is unseen).
        self._children: dict[GroupKey, set[GroupKey]] = {}
        #: Following a cache (:meth:`follow`): each group's placed members, kept as they change.
        self._following = False
        self._placed_members: dict[GroupKey, set[str]] = {}

    def follow(self, cache: PlacementSource) -> None:
        """Ask ``cache`` which pods are placed, and hear from it whenever a pod it holds is
        added, assumed or removed, so that :meth:`scheduled_count` keeps its answer."""
        self._placed = cache.get_pod
        cache.on_placement = self.placement_changed
        self._following = True
        self._placed_members = {}
        for members in self._members.values():
            for uid in members:
                self.placement_changed(uid)

    def placement_changed(self, uid: str) -> None:
        """The cache's pod ``uid`` was added, assumed, confirmed or removed."""
        if not self._following:
            return
        key = self._group_of.get(uid)
        if key is None:
            return
        pi = self._members[key][uid]
        if pi.node_name or ((p := self._placed(uid)) is not None and p.node_name):
            self._placed_members.setdefault(key, set()).add(uid)
        else:
            placed = self._placed_members.get(key)
            if placed is not None:
                placed.discard(uid)
                if not placed:
                    del self._placed_members[key]

    # --- the informer side --------------------------------------------------------------------
    def put_group(self, obj: dict[str, Any]) -> None:
        key = group_key(*_meta(obj))
        self._objects[key] = obj
        self._link(key, obj)

    def remove_group(self, obj: dict[str, Any]) -> None:
        key = group_key(*_meta(obj))
        self._objects.pop(key, None)
        self._unlink(key)

    def put_composite(self, obj: dict[str, Any]) -> None:
        key = group_key(*_meta(obj), COMPOSITE_POD_GROUP_KIND)
        self._composites[key] = obj
        self._link(key, obj)

    def remove_composite(self, obj: dict[str, Any]) -> None:
        key = group_key(*_meta(obj), COMPOSITE_POD_GROUP_KIND)
        self._composites.pop(key, None)
        self._unlink(key)

    def _link(self, key: GroupKey, obj: dict[str, Any]) -> None:
        self._unlink(key)
        view = PodGroupView(obj)
        if view.parent:
            pkey = group_key(view.namespace, view.parent, COMPOSITE_POD_GROUP_KIND)
            self._parent[key] = pkey
            self._children.setdefault(pkey, set()).add(key)

    def _unlink(self, key: GroupKey) -> None:
        pkey = self._parent.pop(key, None)
        if pkey is not None:
            siblings = self._children.get(pkey)
            if siblings is not None:
                siblings.discard(key)
                if not siblings:
                    del self._children[pkey]

    def put_pod(self, pod: PodInfo) -> None:
        """A pod of a group was added or changed (not for pods outside any group)."""
        if not pod.pod_group:
            return
        key = group_key(pod.namespace, pod.pod_group)
        self._members.setdefault(key, {})[pod.uid] = pod
        self._group_of[pod.uid] = key
        self.placement_changed(pod.uid)

    def remove_pod(self, uid: str) -> None:
        """A pod was deleted, or finished (Succeeded or Failed): it no longer counts."""
        key = self._group_of.pop(uid, None)
        if key is None:
            return
        members = self._members.get(key)
        if members is not None:
            members.pop(uid, None)
            if not members:
                del self._members[key]
        placed = self._placed_members.get(key)
        if placed is not None:
            placed.discard(uid)
            if not placed:
                del self._placed_members[key]

    # --- what plugins and the scheduler read --------------------------------------------------
    def get(self, namespace: str, name: str) -> dict[str, Any] | None:
        """The PodGroup object, or ``None`` while it has not been seen."""
        return self._objects.get(group_key(namespace, name))

    def member_count(self, namespace: str, name: str) -> int:
        """How many pods of the group the scheduler knows (pending, assumed or bound): O(1)."""
        return len(self._members.get(group_key(namespace, name)) or ())

    def members(self, namespace: str, name: str) -> dict[str, PodInfo]:
        """The group's known pods by UID (a copy)."""
        return dict(self._members.get(group_key(namespace, name)) or {})

    def scheduled_count(self, namespace: str, name: str) -> int:
        """How many of the group's pods are placed (bound or assumed): ``len(state(...).scheduled)``,
        in O(1) when the index follows a cache."""
        if self._following:
            return len(self._placed_members.get(group_key(namespace, name)) or ())
        return len(self.state(namespace, name).scheduled)

    def state(self, namespace: str, name: str) -> PodGroupState:
        members = self._members.get(group_key(namespace, name)) or {}
        placed = self._placed
        scheduled: dict[str, PodInfo] = {}
        for uid, pi in members.items():
            if pi.node_name:
                scheduled[uid] = pi
            elif (p := placed(uid)) is not None and p.node_name:
                scheduled[uid] = p
        return PodGroupState(members, scheduled)

    # --- hierarchies (CompositePodGroup) -------------------------------------------------------
    def composite(self, namespace: str, name: str) -> dict[str, Any] | None:
        """The CompositePodGroup object, or ``None`` while it has not been seen."""
        return self._composites.get(group_key(namespace, name, COMPOSITE_POD_GROUP_KIND))

    def object(self, key: GroupKey) -> dict[str, Any] | None:
        """The PodGroup or CompositePodGroup object of ``key``."""
        return self._composites.get(key) if key.is_composite else self._objects.get(key)

    def parent_of(self, key: GroupKey) -> GroupKey | None:
        """The key of the composite ``key`` names as its parent, if any (seen or not)."""
        return self._parent.get(key)

    def children(self, key: GroupKey) -> list[GroupKey]:
        """The keys of the groups naming composite ``key`` as their parent, sorted: composites
        before PodGroups, then by name (all of them are in ``key``'s namespace)."""
        return sorted(self._children.get(key) or ())

    def entity_of(self, pod: PodInfo, hierarchies: bool = False) -> str | None:
        """The key the queue holds ``pod``'s group under (:attr:`GroupKey.entity`): its PodGroup's,
        or with ``hierarchies`` (CompositePodGroup) the root of its hierarchy where the whole
        chain is known; None while the PodGroup itself is unseen."""
        if not pod.pod_group:
            return None
        key = group_key(pod.namespace, pod.pod_group)
        if key not in self._objects:
            return None
        if hierarchies and key in self._parent:
            root = self.root_of(key)
            if root is not None:
                return root.entity
        return key.entity

    def root_of(self, key: GroupKey) -> GroupKey | None:
        """The top of ``key``'s chain of parents (``key`` itself without a parent); ``None``
        when a composite on the way (``key`` included) has not been seen, or the chain loops."""
        if key.is_composite and key not in self._composites:
            return None
        seen = {key}
        while (parent := self._parent.get(key)) is not None:
            if parent in seen or parent not in self._composites:
                return None
            seen.add(parent)
            key = parent
        return key

    def snapshot_top(self, key: GroupKey) -> tuple[GroupKey | None, str]:
        """Where 1.37's hierarchy snapshot of PodGroup ``key`` (object seen) is built from, as
        the cache's ``BuildHierarchySnapshotFromPod`` finds it: ``(top, "")``, or ``(None, why)``
        when it cannot be built. Up from the group's parent at most ``MAX_TREE_DEPTH - 1``
        composites are looked at; the first one unseen fails it, and past them the walk stops
        where it is (so a deeper hierarchy's snapshot is the subtree under that composite, which
        names a parent). Then down from ``top`` a group met twice is a cycle."""
        top = self._parent.get(key)
        if top is None:
            return key, ""
        for _ in range(MAX_TREE_DEPTH - 1):
            if top not in self._composites:
                if top in self._children:  # a child names it: the cache holds its state
                    return None, f"composite pod group object not found in state for {top.entity}"
                return None, f"parent composite pod group state not found for {top.entity}"
            parent = self._parent.get(top)
            if parent is None:
                break
            top = parent
        seen = {top}
        stack = [top]
        while stack:
            for child in self.children(stack.pop()):
                if child in seen:
                    return None, f"cycle detected in composite pod group hierarchy: {child.entity}"
                seen.add(child)
                stack.append(child)
        return top, ""

    def leaves_under(self, key: GroupKey) -> list[GroupKey]:
        """The PodGroup keys at or below ``key``, depth first in child order. (A loop over a
        stack of child iterators: a recursive inner function would be a reference cycle left to
        the collector on every call.)"""
        out: list[GroupKey] = []
        seen: set[GroupKey] = set()
        stack: list[Iterator[GroupKey]] = [iter((key,))]
        while stack:
            k = next(stack[-1], None)
            if k is None:
                stack.pop()
                continue
            if k in seen:
                continue
            seen.add(k)
            if k.kind == POD_GROUP_KIND:
                out.append(k)
            else:
                stack.append(iter(self.children(k)))
        return out

    def groups(self) -> Iterator[tuple[GroupKey, dict[str, Any]]]:
        """Every PodGroup object, with its key."""
        return iter(self._objects.items())

    def footprint(self) -> dict[str, int]:
        return {
            "groups": len(self._objects),
            "composite_groups": len(self._composites),
            "grouped_pods": len(self._group_of),
        }
