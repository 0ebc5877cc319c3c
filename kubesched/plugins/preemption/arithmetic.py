"""Victim selection by arithmetic, for the common case where only resources are at stake.

DefaultPreemption's dry run (upstream's ``SelectVictimsOnNode``) copies each candidate node and
the cycle state, removes every lower-priority pod, runs the Filter plugins, then adds the pods
back one by one, filtering after each. When the only Filter plugin in play that looks at a
node's pods is NodeResourcesFit, and the others read the node alone (NodeUnschedulable,
NodeName, TaintToleration, NodeAffinity), each of those filter runs comes down to "does the pod
fit in what is left": sums of requests and a pod count, which this module keeps without copying
anything. A victim frees what the node counted for it (``PodInfo.requests``: pod-level requests
and in-place resizes included), the preemptor asks for what Filter checks. PodTopologySpread, InterPodAffinity, NodePorts and the volume plugins skip a pod they
have nothing to check for (no constraints, no affinity, no host ports, no volumes), so for most
preemptors this is the case.

The answer is the same by construction, Statuses included; where it could differ it is not
given and the caller runs the full dry run: a node-only plugin rejecting the node.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from kubesched.framework.interface import CycleState, Handle
from kubesched.framework.preemption_candidates import (
    NO_VICTIMS_FOUND,
    filter_pods_with_pdb_violation,
    sort_by_importance,
)
from kubesched.framework.status import Code, Status
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.plugins.node_affinity import NodeAffinity
from kubesched.plugins.node_name import NodeName
from kubesched.plugins.node_unschedulable import NodeUnschedulable
from kubesched.plugins.noderesources.fit import PRE_FILTER_KEY, FitRequest, NodeResourcesFit, fit_status, fits
from kubesched.plugins.taint_toleration import TaintToleration

#: Filter plugins whose verdict depends on the node object only, never on the pods on it.
NODE_ONLY_FILTERS: tuple[type, ...] = (NodeUnschedulable, NodeName, TaintToleration, NodeAffinity)


def _own_filter(plugin: Any, cls: type) -> bool:
    """``plugin`` is a ``cls`` whose ``filter`` is ``cls``'s own (a subclass may change it)."""
    return isinstance(plugin, cls) and getattr(type(plugin), "filter", None) is getattr(cls, "filter", None)


class ArithmeticVictims:
    """Victim selection on many nodes for one preemptor, in one cycle (see the module doc)."""

    def __init__(
        self,
        state: CycleState,
        pod: PodInfo,
        req: FitRequest,
        node_only: Sequence[Callable[..., Any]],
        nominated: Callable[[str], list[PodInfo]],
        allowed: Callable[[NodeInfo, PodInfo, PodInfo], bool],
        fit_name: str = NodeResourcesFit.name,
        lowest_priority: Callable[[NodeInfo], int | None] | None = None,
    ) -> None:
        self.fit_name = fit_name
        #: Where ``allowed`` is "lower priority than the preemptor": the node's lowest priority.
        self.lowest_priority = lowest_priority
        self.state = state
        self.pod = pod
        self.req = req
        self.node_only = node_only
        self.nominated = nominated
        self.allowed = allowed

    @classmethod
    def for_cycle(
        cls,
        handle: Handle,
        state: CycleState,
        pod: PodInfo,
        allowed: Callable[[NodeInfo, PodInfo, PodInfo], bool],
        lowest_priority: Callable[[NodeInfo], int | None] | None = None,
    ) -> ArithmeticVictims | None:
        """The arithmetic for this cycle, or ``None`` when some plugin in play (or a PreFilter
        extension) may judge a node by its pods otherwise than by their requests.
        ``lowest_priority``, given only where ``allowed`` admits exactly the pods of lower
        priority than the preemptor, lets a node without any be passed over at once."""
        in_play = getattr(handle, "filter_plugins_in_play", None)
        extensions = getattr(handle, "pre_filter_extensions_in_play", None)
        if in_play is None or extensions is None or extensions(state):
            return None
        req: FitRequest | None = None
        fit_name = NodeResourcesFit.name
        node_only: list[Callable[..., Any]] = []
        for plugin in in_play(state):
            if _own_filter(plugin, NodeResourcesFit):
                fit_name = plugin.name
                req = state.get(PRE_FILTER_KEY)
                if not isinstance(req, FitRequest):
                    return None
            elif any(_own_filter(plugin, c) for c in NODE_ONLY_FILTERS):
                node_only.append(plugin.filter)
            else:
                return None
        counted = getattr(handle, "nominated_pods_counted", None)
        if req is None or counted is None:
            return None
        return cls(state, pod, req, node_only, functools.partial(counted, pod), allowed, fit_name, lowest_priority)

    def select(
        self, node: NodeInfo, pdbs: Sequence[Mapping[str, Any]]
    ) -> tuple[list[PodInfo], int, Status | None] | None:
        """``select_victims_on_node``'s answer for ``node`` (left untouched), or ``None`` where
        the full dry run must give it."""
        pod = self.pod
        if self.lowest_priority is not None:
            lowest = self.lowest_priority(node)
            potential = (
                [] if lowest is None or lowest >= pod.priority else [p for p in node.pods if p.priority < pod.priority]
            )
        else:
            potential = [p for p in node.pods if self.allowed(node, p, pod)]
        if not potential:
            return [], 0, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, NO_VICTIMS_FOUND)
        for fn in self.node_only:
            status = fn(self.state, pod, node)
            if status is not None and status.code is not Code.SUCCESS:
                return None
        # Filtering with nominated pods: a pod fits only if it fits with them too (they only
        # add to the requests, so "with them" is the test that decides).
        used = node.requested.clone()
        count = len(node.pods)
        for p in self.nominated(node.name):
            used.add_resource(p.requests, 1)
            count += 1
        for p in potential:
            used.add_resource(p.requests, -1)
        count -= len(potential)
        alloc = node.allocatable
        req = self.req
        if not fits(req, alloc, used, count):
            # What the full run's filter says: the node-only plugins passed, so Fit rejects.
            status = fit_status(req, alloc, used, count)
            assert status is not None
            status.plugin = self.fit_name
            return [], 0, status
        now = time.time()
        sort_by_importance(potential, now)
        violating, non_violating = filter_pods_with_pdb_violation(potential, pdbs)
        victims: list[PodInfo] = []
        num_violating = 0
        for group, violates in ((violating, True), (non_violating, False)):
            for p in group:
                used.add_resource(p.requests, 1)
                if fits(req, alloc, used, count + 1):
                    count += 1
                    continue
                used.add_resource(p.requests, -1)
                victims.append(p)
                num_violating += violates
        if violating and non_violating:
            sort_by_importance(victims, now)
        return victims, num_violating, Status(Code.SUCCESS)
