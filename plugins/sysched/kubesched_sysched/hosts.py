"""What SySched knows of each node: the pods it has seen there and the union of their system
calls, kept the way upstream's ``HostToPods`` and ``HostSyscalls`` maps are.

* :meth:`Hosts.add_pod`: a pod not yet listed on its node (by name alone, as upstream compares
  them) is appended and its system calls united into the node's set.
* :meth:`Hosts.remove_pod`: the pod of that name leaves its node's list (the last pod takes its
  place) and the node's set is recomputed from the pods left, their profiles read afresh.
* A node never seen has no set (:meth:`Hosts.host_syscalls` gives ``None``); one whose pods all
  left keeps an empty set.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

log = logging.getLogger(__name__)

Pod = Mapping[str, Any]


def remove(pods: list[Pod], i: int) -> list[Pod]:
    """``pods`` without its ``i``-th pod, the last pod moved into its place (order is not kept)."""
    if not pods:
        return []
    pods[i] = pods[-1]
    return pods[:-1]


def _name(pod: Pod) -> str:
    return str((pod.get("metadata") or {}).get("name") or "")


def _node_name(pod: Pod) -> str:
    return str((pod.get("spec") or {}).get("nodeName") or "")


class Hosts:
    """The pods seen on each node and their system calls; ``syscalls_of`` reads a pod's."""

    def __init__(self, syscalls_of: Callable[[Pod], set[str]]) -> None:
        self.syscalls_of = syscalls_of
        #: node name -> the pods seen on it
        self.host_to_pods: dict[str, list[Pod]] = {}
        #: node name -> the union of their system calls
        self.host_syscalls: dict[str, set[str]] = {}

    def host_syscalls_of(self, node_name: str) -> tuple[int, set[str] | None]:
        """How many system calls the node's pods make, and which (``(0, None)``: a node never
        seen)."""
        found = self.host_syscalls.get(node_name)
        if found is None:
            log.debug("getHostSyscalls: no nodeName %s", node_name)
            return 0, None
        return len(found), found

    def update_host_syscalls(self, pod: Pod) -> None:
        """Unite the pod's system calls into its node's set."""
        node_name = _node_name(pod)
        self.host_syscalls[node_name] = self.host_syscalls.get(node_name, set()) | self.syscalls_of(pod)

    def add_pod(self, pod: Pod) -> None:
        node_name = _node_name(pod)
        pods = self.host_to_pods.get(node_name)
        if pods is None:
            self.host_to_pods[node_name] = [pod]
            self.host_syscalls[node_name] = set()
            self.update_host_syscalls(pod)
            return
        name = _name(pod)
        if any(_name(p) == name for p in pods):
            return
        pods.append(pod)
        self.update_host_syscalls(pod)

    def recompute_host_syscalls(self, pods: list[Pod]) -> set[str]:
        """The union of the system calls of ``pods``, their profiles read now."""
        found: set[str] = set()
        for p in pods:
            found |= self.syscalls_of(p)
        return found

    def remove_pod(self, pod: Pod) -> None:
        node_name = _node_name(pod)
        pods = self.host_to_pods.get(node_name)
        if pods is None:
            log.debug("removePod: Host %s not yet cached", node_name)
            return
        name = _name(pod)
        for i, p in enumerate(pods):
            if _name(p) == name:
                self.host_to_pods[node_name] = left = remove(pods, i)
                self.host_syscalls[node_name] = self.recompute_host_syscalls(left)
                log.debug("remaining syscalls %d on node %s", len(self.host_syscalls[node_name]), node_name)
                return
