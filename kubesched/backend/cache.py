"""The scheduler's cache of nodes and pods, and the per-cycle :class:`Snapshot` taken from it.

The cache holds one :class:`NodeInfo` per node with running totals. A pod the scheduler has
decided on is *assumed* onto its node at once (so the next cycle already sees it), and later
either *confirmed* by the informer's add event, *forgotten* when binding fails, or *expired*
when it was never confirmed within the TTL after its binding finished.

The snapshot is updated incrementally: the cache remembers which nodes changed since the last
update and clones only those, so a scheduling cycle never copies the whole cluster.

What the cache holds follows the cluster: a pod is dropped with its delete event (or its
assumption forgotten or expired), a node with its own, and the names of changed nodes are kept
for the next snapshot update only while they are fewer than about twice the nodes — a replica
that never updates its snapshot (a standby) under node churn marks everything changed instead.
"""

from __future__ import annotations

import builtins
import logging
import time
from collections.abc import Callable, Iterable
from typing import Any

from kubesched.framework.columns import NodeColumns
from kubesched.framework.types import ImageStateSummary, NodeInfo, PodInfo

log = logging.getLogger(__name__)

ZONE_LABELS = ("topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone")
REGION_LABELS = ("topology.kubernetes.io/region", "failure-domain.beta.kubernetes.io/region")


def zone_key(labels: dict[str, str]) -> str:
    """``region:\\x00:zone`` as upstream keys its node tree; empty when the node has neither."""
    region = next((labels[k] for k in REGION_LABELS if k in labels), "")
    zone = next((labels[k] for k in ZONE_LABELS if k in labels), "")
    if not region and not zone:
        return ""
    return f"{region}:\x00:{zone}"


class CacheError(Exception):
    pass


class _PodState:
    __slots__ = ("pod", "node_name", "assumed", "binding_finished", "deadline")

    def __init__(self, pod: PodInfo, node_name: str, assumed: bool) -> None:
        self.pod = pod
        self.node_name = node_name
        self.assumed = assumed
        self.binding_finished = False
        self.deadline: float | None = None


class Snapshot:
    """An immutable-for-the-cycle view of every node: what plugins see through the handle."""

    def __init__(self, node_infos: Iterable[NodeInfo] = ()) -> None:
        self.node_info_map: dict[str, NodeInfo] = {}
        self.node_info_list: list[NodeInfo] = []
        self._index: dict[str, int] = {}
        # Nodes with pods that have (anti-)affinity, kept per node as clones are replaced, so a
        # cycle never scans every node to find them; the lists are rebuilt only when read after
        # a change.
        self._affinity: dict[str, NodeInfo] = {}
        self._anti_affinity: dict[str, NodeInfo] = {}
        self._lists_stale = False
        self._columns: NodeColumns | None = None
        self.with_affinity: list[NodeInfo] = []
        self.with_required_anti_affinity: list[NodeInfo] = []
        #: Nodes changed in this snapshot alone (:meth:`add_pod`, :meth:`remove_pod`): the next
        #: update from the cache puts the cache's version back.
        self.mutated: set[str] = set()
        for ni in node_infos:
            self.node_info_map[ni.name] = ni
        if self.node_info_map:
            self.relist(list(self.node_info_map))

    def clear(self) -> None:
        """Hold no node any more (as a snapshot made empty)."""
        self.node_info_map.clear()
        self.mutated.clear()
        self.relist([])

    def relist(self, order: list[str]) -> None:
        """List the nodes of :attr:`node_info_map` in ``order`` (their names, each once), and
        rebuild what follows the list (the index, the columns, the (anti-)affinity indexes).
        The cache calls it when nodes came, went or moved in its order."""
        self.node_info_list = [self.node_info_map[n] for n in order]
        self._index = {n: i for i, n in enumerate(order)}
        self._columns = None
        self._refresh_affinity_lists()

    def _refresh_affinity_lists(self) -> None:
        self._affinity = {n.name: n for n in self.node_info_list if n.pods_with_affinity}
        self._anti_affinity = {n.name: n for n in self.node_info_list if n.pods_with_required_anti_affinity}
        self._lists_stale = True

    def replace_node(self, clone: NodeInfo) -> None:
        """Put a fresh clone of a node in its place: the list, the columns and the
        (anti-)affinity indexes (the node keeps its place in the list; the caller has put it in
        :attr:`node_info_map`). The cache calls it for each node changed since its last update."""
        name = clone.name
        i = self._index[name]
        self.node_info_list[i] = clone
        if self._columns is not None:
            self._columns.set_row(i, clone)
        if clone.pods_with_affinity:
            self._affinity[name] = clone
            self._lists_stale = True
        elif self._affinity.pop(name, None) is not None:
            self._lists_stale = True
        if clone.pods_with_required_anti_affinity:
            self._anti_affinity[name] = clone
            self._lists_stale = True
        elif self._anti_affinity.pop(name, None) is not None:
            self._lists_stale = True

    # A pod group's cycle places members tentatively, and preemption removes victims, in the
    # snapshot alone: nothing of it reaches the cache, and the next update undoes it.
    def add_pod(self, pod: PodInfo) -> None:
        """Account ``pod`` (with its ``node_name``) on its node in this snapshot only."""
        clone = self.get(pod.node_name).clone()
        clone.add_pod(pod)
        self._put(clone)

    def remove_pod(self, pod: PodInfo) -> bool:
        """Take ``pod`` off its node in this snapshot only; False when it was not there."""
        node = self.node_info_map.get(pod.node_name)
        if node is None:
            return False
        clone = node.clone()
        if not clone.remove_pod(pod):
            return False
        self._put(clone)
        return True

    def _put(self, clone: NodeInfo) -> None:
        self.node_info_map[clone.name] = clone
        self.replace_node(clone)
        self.mutated.add(clone.name)

    def _fresh_lists(self) -> None:
        if self._lists_stale:
            self.with_affinity = list(self._affinity.values())
            self.with_required_anti_affinity = list(self._anti_affinity.values())
            self._lists_stale = False

    # SharedLister
    def list(self) -> list[NodeInfo]:
        return self.node_info_list

    def get(self, name: str) -> NodeInfo:
        try:
            return self.node_info_map[name]
        except KeyError:
            raise KeyError(f"nodeinfo not found for node name {name!r}") from None

    def have_pods_with_affinity(self) -> builtins.list[NodeInfo]:
        self._fresh_lists()
        return self.with_affinity

    def has_pods_with_affinity(self) -> bool:
        """Whether any node has a pod with affinity (without listing them)."""
        return bool(self._affinity)

    def have_pods_with_required_anti_affinity(self) -> builtins.list[NodeInfo]:
        self._fresh_lists()
        return self.with_required_anti_affinity

    def num_nodes(self) -> int:
        return len(self.node_info_list)

    def columns(self) -> NodeColumns:
        """The nodes as numpy columns, row ``i`` being ``list()[i]``: built on first use after
        the node set changes, then kept current row by row as nodes are re-cloned."""
        if self._columns is None:
            self._columns = NodeColumns(self.node_info_list)
        return self._columns


class Cache:
    """Nodes and pods as the scheduler believes them to be (see the module docstring)."""

    def __init__(self, assumed_ttl: float = 15 * 60.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.assumed_ttl = assumed_ttl
        self.clock = clock
        self.nodes: dict[str, NodeInfo] = {}
        self._pods: dict[str, _PodState] = {}
        self._images: dict[str, ImageStateSummary] = {}
        self._dirty: set[str] = set()
        #: Every node changed (``_dirty`` outgrew the nodes): the next update compares them all.
        self._all_dirty = False
        self._order_changed = True
        self._zones: dict[str, list[str]] = {}
        self._node_zone: dict[str, str] = {}
        #: Told the UID of every pod added, assumed or removed (the pod-group index listens).
        self.on_placement: Callable[[str], None] | None = None

    def clear(self) -> None:
        """Forget every node and pod (a scheduler that has stopped lets go of them)."""
        for held in (self.nodes, self._pods, self._images, self._dirty, self._zones, self._node_zone):
            held.clear()
        self._all_dirty = False
        self._order_changed = True

    # --- nodes --------------------------------------------------------------------------------
    def add_node(self, node: dict[str, Any]) -> NodeInfo:
        name = node["metadata"]["name"]
        ni = self.nodes.get(name)
        if ni is None:
            ni = NodeInfo()
            self.nodes[name] = ni
            ni.set_node(node)
            self._order_changed = True
        else:
            self._remove_images(ni)
            ni.set_node(node)
        self._add_images(ni)
        self._set_zone(name, zone_key(ni.labels))
        self._dirty.add(name)
        return ni

    def update_node(self, old: dict[str, Any] | None, new: dict[str, Any]) -> NodeInfo:
        return self.add_node(new)

    def remove_node(self, node: dict[str, Any]) -> None:
        name = node["metadata"]["name"]
        ni = self.nodes.get(name)
        if ni is None:
            return
        self._remove_images(ni)
        # Pods on a deleted node stay in the cache until their own delete events arrive, as
        # upstream does; the node itself disappears from the snapshot at once.
        del self.nodes[name]
        self._set_zone(name, None)
        self._dirty.add(name)
        self._order_changed = True
        self._bound_dirty()

    def _bound_dirty(self) -> None:
        """Names of nodes gone pile up in ``_dirty`` when no snapshot update takes them: past
        twice the nodes (and a few), forget them and mark every node changed instead."""
        if len(self._dirty) > 2 * len(self.nodes) + 64:
            self._dirty.clear()
            self._all_dirty = True

    def _set_zone(self, name: str, zone: str | None) -> None:
        old = self._node_zone.get(name)
        if old == zone:
            return
        if old is not None:
            self._zones[old].remove(name)
            if not self._zones[old]:
                del self._zones[old]
            del self._node_zone[name]
        if zone is not None:
            self._zones.setdefault(zone, []).append(name)
            self._node_zone[name] = zone
        self._order_changed = True

    def _node_order(self) -> list[str]:
        """Nodes interleaved across zones, as upstream's node tree lists them, so that a
        partial search (percentageOfNodesToScore) still spreads over every zone."""
        zones = list(self._zones.values())
        out: list[str] = []
        i = 0
        while True:
            added = False
            for names in zones:
                if i < len(names):
                    out.append(names[i])
                    added = True
            if not added:
                return out
            i += 1

    def _add_images(self, ni: NodeInfo) -> None:
        states: dict[str, ImageStateSummary] = {}
        for image, size in ni.images.items():
            s = self._images.get(image)
            if s is None:
                s = self._images[image] = ImageStateSummary(size)
            s.nodes.add(ni.name)
            states[image] = s
        ni.image_states = states

    def _remove_images(self, ni: NodeInfo) -> None:
        for image in ni.images:
            s = self._images.get(image)
            if s is not None:
                s.nodes.discard(ni.name)
                if not s.nodes:
                    del self._images[image]

    # --- pods ---------------------------------------------------------------------------------
    def _node_for(self, name: str) -> NodeInfo:
        ni = self.nodes.get(name)
        if ni is None:
            # A pod bound to a node we have not seen yet: keep it on a placeholder until the
            # node arrives, so the node's totals are right from its first appearance.
            ni = NodeInfo()
            ni.name = name
            self.nodes[name] = ni
        return ni

    def assume_pod(self, pod: PodInfo, node_name: str) -> None:
        """Account ``pod`` on ``node_name`` before it is bound, so later cycles see it."""
        if pod.uid in self._pods:
            raise CacheError(f"pod {pod.key} is in the cache, so can't be assumed")
        self._pods[pod.uid] = _PodState(pod, node_name, assumed=True)
        self._node_for(node_name).add_pod(pod)
        self._dirty.add(node_name)
        if self.on_placement is not None:
            self.on_placement(pod.uid)

    def finish_binding(self, pod: PodInfo) -> None:
        """The bind call returned: start the TTL after which an unconfirmed pod expires."""
        st = self._pods.get(pod.uid)
        if st is not None and st.assumed:
            st.binding_finished = True
            if self.assumed_ttl > 0:
                st.deadline = self.clock() + self.assumed_ttl

    def forget_pod(self, pod: PodInfo) -> None:
        """Undo :meth:`assume_pod` (binding failed)."""
        st = self._pods.get(pod.uid)
        if st is None:
            return
        if not st.assumed:
            raise CacheError(f"pod {pod.key} was added to the cache, not assumed; it can't be forgotten")
        self._remove_state(pod.uid, st)

    def is_assumed(self, uid: str) -> bool:
        st = self._pods.get(uid)
        return st is not None and st.assumed

    def add_pod(self, pod: PodInfo) -> None:
        """A bound pod seen by the informer: confirms an assumed pod, or adds a new one."""
        st = self._pods.get(pod.uid)
        if st is not None and st.assumed:
            if st.node_name != pod.node_name:
                log.warning("pod %s was assumed on %s but is bound to %s", pod.key, st.node_name, pod.node_name)
            self._remove_state(pod.uid, st)
        elif st is not None:
            self._remove_state(pod.uid, st)
        self._pods[pod.uid] = _PodState(pod, pod.node_name, assumed=False)
        self._node_for(pod.node_name).add_pod(pod)
        self._dirty.add(pod.node_name)
        if self.on_placement is not None:
            self.on_placement(pod.uid)

    def update_pod(self, pod: PodInfo) -> None:
        self.add_pod(pod)

    def remove_pod(self, uid: str) -> PodInfo | None:
        st = self._pods.get(uid)
        if st is None:
            return None
        self._remove_state(uid, st)
        return st.pod

    def _remove_state(self, uid: str, st: _PodState) -> None:
        del self._pods[uid]
        if self.on_placement is not None:
            self.on_placement(uid)
        ni = self.nodes.get(st.node_name)
        if ni is not None:
            ni.remove_pod(st.pod)
            if ni.node is None and not ni.pods:
                del self.nodes[st.node_name]
            self._dirty.add(st.node_name)
            self._bound_dirty()

    def get_pod(self, uid: str) -> PodInfo | None:
        st = self._pods.get(uid)
        return st.pod if st is not None else None

    def cleanup_expired_assumed_pods(self) -> list[PodInfo]:
        """Drop assumed pods whose binding finished but were never confirmed within the TTL."""
        now = self.clock()
        expired = [
            (uid, st)
            for uid, st in self._pods.items()
            if st.assumed and st.binding_finished and st.deadline is not None and now >= st.deadline
        ]
        for uid, st in expired:
            log.warning("assumed pod %s on node %s expired", st.pod.key, st.node_name)
            self._remove_state(uid, st)
        return [st.pod for _, st in expired]

    def pod_count(self) -> int:
        return len(self._pods)

    def assumed_count(self) -> int:
        return sum(1 for st in self._pods.values() if st.assumed)

    # --- snapshot -----------------------------------------------------------------------------
    def update_snapshot(self, snapshot: Snapshot) -> None:
        """Bring ``snapshot`` up to date, cloning only the nodes changed since the last call (and
        those changed in the snapshot alone)."""
        if snapshot.mutated:
            self._dirty.update(snapshot.mutated)
            snapshot.mutated.clear()
        if self._all_dirty:
            self._dirty.update(self.nodes, snapshot.node_info_map)
            self._all_dirty = False
        if not self._dirty and not self._order_changed:
            return
        for name in self._dirty:
            ni = self.nodes.get(name)
            old = snapshot.node_info_map.get(name)
            if ni is None or ni.node is None:
                if old is not None:
                    del snapshot.node_info_map[name]
                    self._order_changed = True
                continue
            clone = ni.clone()
            if old is None:
                self._order_changed = True
            snapshot.node_info_map[name] = clone
            if not self._order_changed:
                snapshot.replace_node(clone)
        self._dirty.clear()
        if self._order_changed:
            snapshot.relist([n for n in self._node_order() if n in snapshot.node_info_map])
            self._order_changed = False

    def footprint(self) -> dict[str, int]:
        """How many entries each of the cache's structures holds (for tests and the soak)."""
        return {
            "nodes": len(self.nodes),
            "pods": len(self._pods),
            "images": len(self._images),
            "zones": len(self._zones),
            "changed_nodes": len(self._dirty),
        }

    def dump(self) -> dict[str, Any]:
        return {
            "nodes": len([n for n in self.nodes.values() if n.node is not None]),
            "pods": len(self._pods),
            "assumed": self.assumed_count(),
        }
