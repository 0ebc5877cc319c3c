"""The nominator: pods preemption nominated to a node, until they are bound or deleted.

Bounded by the pending pods: the informer's bind and delete events take a pod out
(:meth:`Nominator.delete`), so nothing is kept of a pod that is gone.
"""

from __future__ import annotations

from collections.abc import Iterable

from kubesched.framework.types import PodInfo


class Nominator:
    """Pods nominated to a node (by preemption) and not yet bound: other pods' filters count
    them as if they were already there, so the room preemption made is not taken by others."""

    def __init__(self) -> None:
        self._by_node: dict[str, dict[str, PodInfo]] = {}
        self._node_of: dict[str, str] = {}

    def add(self, pod: PodInfo, node_name: str) -> None:
        self.delete(pod.uid)
        self._by_node.setdefault(node_name, {})[pod.uid] = pod
        self._node_of[pod.uid] = node_name

    def delete(self, uid: str) -> None:
        node = self._node_of.pop(uid, None)
        if node is not None:
            pods = self._by_node.get(node)
            if pods is not None:
                pods.pop(uid, None)
                if not pods:
                    del self._by_node[node]

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        pods = self._by_node.get(node_name)
        return list(pods.values()) if pods else []

    def has_nominated(self, node_name: str) -> bool:
        return node_name in self._by_node

    def nominated_nodes(self) -> Iterable[str]:
        """The nodes some pod is nominated to."""
        return self._by_node.keys()

    def node_of(self, uid: str) -> str | None:
        return self._node_of.get(uid)

    def __bool__(self) -> bool:
        return bool(self._node_of)
