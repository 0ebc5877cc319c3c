"""Members of pod groups the queue holds apart from its queues, as upstream's: pods whose
PodGroup has not been seen yet (*incomplete*), and pods that came, or came back, while their
group was being scheduled (*pending*), which join the group when its attempt is over.

A :class:`MemberSets` keeps such pods by the key they wait on (the PodGroup for incomplete
pods, the group's entity key for pending ones) and finds any of them by UID.
"""

from __future__ import annotations

from collections.abc import Iterator

from kubesched.framework.podgroup import group_key
from kubesched.framework.types import PodInfo, QueuedPodInfo


def pod_group_key(namespace: str, name: str) -> str:
    """A PodGroup's entity key (:attr:`~kubesched.framework.podgroup.GroupKey.entity`):
    ``podgroup/<namespace>/<name>``."""
    return group_key(namespace, name).entity


class MemberSets:
    """Queued pods by the key they wait on; each pod in at most one set."""

    def __init__(self) -> None:
        self._by_key: dict[str, dict[str, QueuedPodInfo]] = {}
        self._key_of: dict[str, str] = {}

    def __len__(self) -> int:
        return len(self._key_of)

    def __contains__(self, uid: object) -> bool:
        return uid in self._key_of

    def add(self, key: str, qpi: QueuedPodInfo) -> None:
        self.delete(qpi.pod_info.uid)
        self._by_key.setdefault(key, {})[qpi.pod_info.uid] = qpi
        self._key_of[qpi.pod_info.uid] = key

    def get(self, uid: str) -> QueuedPodInfo | None:
        key = self._key_of.get(uid)
        return None if key is None else self._by_key[key][uid]

    def update(self, pod: PodInfo) -> bool:
        """Give the pod, if it waits here, its new object."""
        q = self.get(pod.uid)
        if q is None:
            return False
        q.pod_info = pod
        return True

    def delete(self, uid: str) -> QueuedPodInfo | None:
        key = self._key_of.pop(uid, None)
        if key is None:
            return None
        pods = self._by_key[key]
        q = pods.pop(uid)
        if not pods:
            del self._by_key[key]
        return q

    def clear(self, key: str) -> list[QueuedPodInfo]:
        """Take every pod waiting on ``key`` out."""
        pods = self._by_key.pop(key, {})
        for uid in pods:
            del self._key_of[uid]
        return list(pods.values())

    def keys(self) -> list[str]:
        return list(self._by_key)

    def values(self) -> Iterator[QueuedPodInfo]:
        for pods in self._by_key.values():
            yield from pods.values()
