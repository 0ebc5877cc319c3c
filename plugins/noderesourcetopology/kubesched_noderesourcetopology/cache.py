"""Where the plugin reads each node's NodeResourceTopology from, three ways, as upstream:

* :class:`Passthrough` (``cacheResyncPeriodSeconds`` 0, the default): the object as the cluster
  has it now. Pods reserved but not yet reported by the node's agent are not counted, so two pods
  scheduled in quick succession may both be given a cell's last CPUs.
* :class:`OverReserve` (``cacheResyncPeriodSeconds`` above 0): the object as last taken in,
  minus the effective request of every pod reserved on the node since then, taken from *every*
  NUMA cell (pessimistic: the scheduler cannot know which cell the kubelet will choose). A node
  the filter refused is marked; a resync takes in the cluster's newer object for the marked nodes
  and forgets their reservations. A node whose object now says its kubelet is configured
  differently (topology-manager policy, scope, NUMA nodes) is taken in afresh at the next resync,
  marked or not. A node where a pod of another scheduler runs (``cache.foreignPodsDetect``) is
  refused until the resync takes in its agent's next report.
* :class:`DiscardReserved` (``discardReservedNodes``): the object as the cluster has it, but a
  node with a pod reserved and not yet bound is refused altogether.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from .topology import NodeTopology, Quantities, TopologyDataError, pod_effective_request, topology_manager_of

FOREIGN_PODS = "pods of another scheduler run on the node (not accounted for)"

#: Looks a node's NodeResourceTopology object up in the cluster (None: it has none).
Lookup = Callable[[str], Mapping[str, Any] | None]


@dataclass
class CachedTopology:
    """What a cache gives for a node: its topology (None: the node has none) and whether the
    data may be used (``fresh``); ``reason`` says why it may not."""

    topology: NodeTopology | None
    fresh: bool = True
    reason: str = ""


def _pod_key(pod: Mapping[str, Any]) -> str:
    meta = pod.get("metadata") or {}
    return f"{meta.get('namespace') or 'default'}/{meta.get('name') or ''}"


def _read(lookup: Lookup, node_name: str) -> CachedTopology:
    obj = lookup(node_name)
    if obj is None:
        return CachedTopology(None)
    try:
        return CachedTopology(NodeTopology.of(obj))
    except TopologyDataError as exc:
        return CachedTopology(None, fresh=False, reason=str(exc))


class Passthrough:
    """The cluster's object, every time; reservations are not counted."""

    def __init__(self, lookup: Lookup) -> None:
        self.lookup = lookup

    def get(self, node_name: str, pod: Mapping[str, Any]) -> CachedTopology:
        return _read(self.lookup, node_name)

    def node_maybe_over_reserved(self, node_name: str) -> None:
        pass

    def reserve(self, node_name: str, pod: Mapping[str, Any]) -> None:
        pass

    def unreserve(self, node_name: str, pod: Mapping[str, Any]) -> None:
        pass

    def post_bind(self, node_name: str, pod: Mapping[str, Any]) -> None:
        pass

    def resync(self) -> None:
        pass


class DiscardReserved(Passthrough):
    """The cluster's object; a node with a reserved, unbound pod is refused."""

    def __init__(self, lookup: Lookup) -> None:
        super().__init__(lookup)
        self.reserved: dict[str, set[str]] = {}

    def get(self, node_name: str, pod: Mapping[str, Any]) -> CachedTopology:
        if self.reserved.get(node_name):
            return CachedTopology(None, fresh=False, reason="a pod is reserved on the node and not bound yet")
        return super().get(node_name, pod)

    def reserve(self, node_name: str, pod: Mapping[str, Any]) -> None:
        self.reserved.setdefault(node_name, set()).add(_pod_key(pod))

    def unreserve(self, node_name: str, pod: Mapping[str, Any]) -> None:
        self.reserved.get(node_name, set()).discard(_pod_key(pod))

    def post_bind(self, node_name: str, pod: Mapping[str, Any]) -> None:
        self.unreserve(node_name, pod)


class OverReserve:
    """The object last taken in, minus what the pods reserved since then request."""

    def __init__(
        self,
        lookup: Lookup,
        resync_period: float,
        clock: Callable[[], float] = time.monotonic,
        watch_config: bool = True,
    ) -> None:
        self.lookup = lookup
        #: take in a node whose kubelet configuration changed (``resyncScope: All``)
        self.watch_config = watch_config
        self.resync_period = resync_period
        self.clock = clock
        self.topologies: dict[str, NodeTopology] = {}
        self.invalid: dict[str, str] = {}
        #: node -> pod key -> the pod's effective request
        self.assumed: dict[str, dict[str, Quantities]] = {}
        #: nodes the filter refused since their last resync, and how often
        self.maybe_over_reserved: dict[str, int] = {}
        #: nodes whose kubelet configuration changed since their object was taken in
        self.config_changed: set[str] = set()
        #: nodes where a pod of another scheduler was seen: their objects are not trusted
        self.foreign: dict[str, int] = {}
        self.generation = 0
        self._last_resync = clock()

    def _known(self, node_name: str) -> NodeTopology | None:
        """The node's object as taken in; the first time, from the cluster."""
        found = self.topologies.get(node_name)
        if found is None and node_name not in self.invalid:
            read = _read(self.lookup, node_name)
            if read.topology is not None:
                self.topologies[node_name] = found = read.topology
            elif not read.fresh:
                self.invalid[node_name] = read.reason
        return found

    def get(self, node_name: str, pod: Mapping[str, Any]) -> CachedTopology:
        if self.clock() - self._last_resync >= self.resync_period:
            self.resync()
        if node_name in self.invalid:
            return CachedTopology(None, fresh=False, reason=self.invalid[node_name])
        if node_name in self.foreign:
            return CachedTopology(None, fresh=False, reason=FOREIGN_PODS)
        known = self._known(node_name)
        if known is None:
            return CachedTopology(None, fresh=node_name not in self.invalid, reason=self.invalid.get(node_name, ""))
        topology = known.copy()
        for requests in self.assumed.get(node_name, {}).values():
            for zone in topology.zones:
                for res in zone.resources:
                    quantity = requests.get(res.name)
                    if quantity is None:
                        continue
                    res.available = res.available - quantity if res.available >= quantity else Fraction(0)
        return CachedTopology(topology)

    def node_maybe_over_reserved(self, node_name: str) -> None:
        self.maybe_over_reserved[node_name] = self.maybe_over_reserved.get(node_name, 0) + 1

    def node_has_foreign_pods(self, node_name: str) -> None:
        """A pod this scheduler did not place runs on the node: until the node's agent reports
        again, what the scheduler knows of its cells is wrong."""
        if self._known(node_name) is None:
            return
        self.foreign[node_name] = self.foreign.get(node_name, 0) + 1

    def reserve(self, node_name: str, pod: Mapping[str, Any]) -> None:
        if self._known(node_name) is None:
            return  # a node without topology data has nothing to account
        self.assumed.setdefault(node_name, {})[_pod_key(pod)] = pod_effective_request(pod)

    def unreserve(self, node_name: str, pod: Mapping[str, Any]) -> None:
        self.assumed.get(node_name, {}).pop(_pod_key(pod), None)

    def post_bind(self, node_name: str, pod: Mapping[str, Any]) -> None:
        pass  # a bound pod stays counted until its node's object is taken in again

    def resync(self) -> None:
        """Take in the cluster's object for each marked node (refused, or with foreign pods) whose object changed since it was
        taken in (its agent has reported since), forgetting the node's reservations."""
        self._last_resync = self.clock()
        flushed = False
        for node_name in sorted(set(self.maybe_over_reserved) | set(self.foreign)):
            read = _read(self.lookup, node_name)
            if read.topology is None:
                continue
            known = self.topologies.get(node_name)
            if (
                known is not None
                and known.resource_version
                and known.resource_version == read.topology.resource_version
            ):
                continue  # nothing new reported: the reservations still stand
            self.topologies[node_name] = read.topology
            self.assumed.pop(node_name, None)
            self.maybe_over_reserved.pop(node_name, None)
            self.foreign.pop(node_name, None)
            flushed = True
        for node_name in sorted(self.config_changed):
            read = _read(self.lookup, node_name)
            if read.topology is not None:
                self.topologies[node_name] = read.topology
                self.assumed.pop(node_name, None)
                self.maybe_over_reserved.pop(node_name, None)
                flushed = True
        self.config_changed.clear()
        if flushed:
            self.generation += 1

    def updated(self, obj: Mapping[str, Any]) -> None:
        """The cluster's object for a node changed: a node whose object was unreadable gets
        another chance; one whose kubelet configuration changed is taken in at the next resync."""
        name = str((obj.get("metadata") or {}).get("name") or "")
        self.invalid.pop(name, None)
        known = self.topologies.get(name)
        if known is None or not self.watch_config:
            return
        try:
            new = NodeTopology.of(obj)
        except TopologyDataError:
            return
        if topology_manager_of(new) != topology_manager_of(known):
            self.config_changed.add(name)

    def forget(self, node_name: str) -> None:
        """The node's object was deleted (or replaced by one that cannot be read)."""
        self.topologies.pop(node_name, None)
        self.invalid.pop(node_name, None)
        self.assumed.pop(node_name, None)
        self.maybe_over_reserved.pop(node_name, None)
        self.config_changed.discard(node_name)
        self.foreign.pop(node_name, None)


TopologyCache = Passthrough | DiscardReserved | OverReserve
