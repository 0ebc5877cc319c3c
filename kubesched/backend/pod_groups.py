"""The pod groups the scheduler knows (workload-aware scheduling, ``GenericWorkload``): every
PodGroup object the informers delivered, and every pod that names one in
``spec.schedulingGroup.podGroupName`` — pending, assumed or bound — by group.

It is the plugins' ``handle.pod_groups`` (GangScheduling counts a gang's members here), and the
scheduler finds a group's pending members through it when one of them is popped. Which members
are placed is the cache's to say (bound or assumed), so :meth:`PodGroupIndex.state` asks it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from kubesched.framework.podgroup import PodGroupState, group_key
from kubesched.framework.types import PodInfo

#: ``placed(uid)``: the pod as the cache holds it (bound or assumed, with its node), or None.
PlacedLookup = Callable[[str], PodInfo | None]


def _meta(obj: dict[str, Any]) -> tuple[str, str]:
    meta = obj.get("metadata") or {}
    return meta.get("namespace") or "default", meta.get("name", "")


class PodGroupIndex:
    """PodGroup objects and their members, by ``PodGroup/<namespace>/<name>``."""

    def __init__(self, placed: PlacedLookup | None = None) -> None:
        self._placed: PlacedLookup = placed if placed is not None else (lambda uid: None)
        self._objects: dict[str, dict[str, Any]] = {}
        self._members: dict[str, dict[str, PodInfo]] = {}
        #: Each member's group key, by UID (a pod's group never changes: the field is immutable).
        self._group_of: dict[str, str] = {}

    # --- the informer side --------------------------------------------------------------------
    def put_group(self, obj: dict[str, Any]) -> None:
        self._objects[group_key(*_meta(obj))] = obj

    def remove_group(self, obj: dict[str, Any]) -> None:
        self._objects.pop(group_key(*_meta(obj)), None)

    def put_pod(self, pod: PodInfo) -> None:
        """A pod of a group was added or changed (not for pods outside any group)."""
        if not pod.pod_group:
            return
        key = group_key(pod.namespace, pod.pod_group)
        self._members.setdefault(key, {})[pod.uid] = pod
        self._group_of[pod.uid] = key

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

    def groups(self) -> Iterator[tuple[str, dict[str, Any]]]:
        """Every PodGroup object, with its key."""
        return iter(self._objects.items())

    def footprint(self) -> dict[str, int]:
        return {"groups": len(self._objects), "grouped_pods": len(self._group_of)}
