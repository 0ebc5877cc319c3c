"""The scheduler's loops over its HTTP extenders, with upstream's semantics: filter after the
Filter plugins, prioritize beside Score, narrow preemption candidates, bind instead of the Bind
plugins; and :class:`Extenders`, the part of the scheduler that holds them.

The extenders are shared by all profiles and run after the plugins, as upstream orders them.
The client they call is :class:`kubesched.extender.HTTPExtender`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping, MutableMapping, Sequence

from kubesched.backend.cache import Snapshot
from kubesched.extender.client import ExtenderError, HTTPExtender, NodeInfoLister, Victims
from kubesched.extender.wire import MAX_EXTENDER_PRIORITY
from kubesched.framework.interface import MAX_NODE_SCORE
from kubesched.framework.status import Code, Status
from kubesched.framework.types import NodeInfo, PodInfo

__all__ = [
    "Extenders",
    "binder_for",
    "find_nodes_that_pass_extenders",
    "preempt_with_extenders",
    "prioritize_with_extenders",
]

#: Preemption candidates as the Framework hands them over: node → (victims, PDB violations).
Candidates = dict[str, tuple[list[PodInfo], int]]


class Extenders:
    """The scheduler's extenders and the loops it runs over them. False when there are none."""

    def __init__(self, extenders: Iterable[HTTPExtender], snapshot: Snapshot) -> None:
        self.extenders: list[HTTPExtender] = list(extenders)
        self._snapshot = snapshot

    def __bool__(self) -> bool:
        return bool(self.extenders)

    def supports_preemption(self) -> bool:
        """Whether an extender takes part in preemption (the profiles then ask :meth:`preempt`)."""
        return any(e.supports_preemption() for e in self.extenders)

    async def filter(
        self,
        pod_info: PodInfo,
        feasible: Sequence[NodeInfo],
        statuses: MutableMapping[str, Status],
        trace: dict[str, dict[str, str]] | None = None,
    ) -> list[NodeInfo]:
        """:func:`find_nodes_that_pass_extenders` over these extenders."""
        return await find_nodes_that_pass_extenders(self.extenders, pod_info, feasible, statuses, trace)

    async def prioritize(self, pod_info: PodInfo, nodes: Sequence[NodeInfo]) -> dict[str, list[tuple[str, int]]]:
        """:func:`prioritize_with_extenders` over these extenders."""
        return await prioritize_with_extenders(self.extenders, pod_info, nodes)

    async def preempt(self, pod: PodInfo, candidates: Candidates) -> Candidates:
        """Preemption candidates narrowed by the preempting extenders, against the snapshot of
        the cycle under way (what a Framework's ``preempt_with_extenders`` is given)."""
        victims = {node: Victims(list(pods), n) for node, (pods, n) in candidates.items()}
        kept = await preempt_with_extenders(self.extenders, pod, victims, self._snapshot.node_info_map)
        return {node: (v.pods, v.num_pdb_violations) for node, v in kept.items()}

    def binder_for(self, pod_info: PodInfo) -> HTTPExtender | None:
        """:func:`binder_for` over these extenders."""
        return binder_for(self.extenders, pod_info) if self.extenders else None


async def find_nodes_that_pass_extenders(
    extenders: Iterable[HTTPExtender],
    pod_info: PodInfo,
    feasible: Sequence[NodeInfo],
    statuses: MutableMapping[str, Status],
    trace: dict[str, dict[str, str]] | None = None,
) -> list[NodeInfo]:
    """Run the interested extenders' filters one after the other on the nodes still feasible.

    Rejections are recorded in ``statuses`` (node name → Status): FailedAndUnresolvableNodes as
    UnschedulableAndUnresolvable (its reason appended to any reasons the node already had),
    FailedNodes as Unschedulable (appended to an existing status). A failing ignorable extender
    is skipped; a failing other one raises :class:`ExtenderError`, which fails the cycle.
    """
    nodes = list(feasible)
    for ext in extenders:
        if not nodes:
            break
        if not ext.is_interested(pod_info):
            continue
        try:
            passed, failed, unresolvable = await ext.filter(pod_info, nodes)
        except ExtenderError as exc:
            if trace is not None:
                for n in nodes:
                    trace.setdefault(n.name, {})[ext.name] = f"error: {exc}"
            if ext.is_ignorable():
                continue
            raise
        if trace is not None:
            for n in nodes:
                why = unresolvable.get(n.name) or failed.get(n.name)
                trace.setdefault(n.name, {})[ext.name] = why if why is not None else "passed"
        for node, msg in unresolvable.items():
            prev = statuses.get(node)
            reasons = [*prev.reasons, msg] if prev is not None else [msg]
            statuses[node] = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, *reasons)
        for node, msg in failed.items():
            if node in unresolvable:
                continue
            prev = statuses.get(node)
            # A new Status, never an append: statuses may be shared between nodes.
            statuses[node] = Status.unschedulable(*(prev.reasons if prev is not None else ()), msg)
        nodes = passed
    return nodes


async def prioritize_with_extenders(
    extenders: Iterable[HTTPExtender], pod_info: PodInfo, nodes: Sequence[NodeInfo]
) -> dict[str, list[tuple[str, int]]]:
    """Scores of the interested extenders, called concurrently: node → [(extender name, score)]
    with ``score = extender score × weight × (MaxNodeScore / MaxExtenderPriority)``, to be added
    to the node's total. A failing extender gives no score and is otherwise ignored, as upstream."""
    interested = [e for e in extenders if e.is_interested(pod_info)]
    if not interested or not nodes:
        return {}
    results = await asyncio.gather(*(e.prioritize(pod_info, nodes) for e in interested), return_exceptions=True)
    out: dict[str, list[tuple[str, int]]] = {}
    scale = MAX_NODE_SCORE // MAX_EXTENDER_PRIORITY
    for ext, res in zip(interested, results):
        if isinstance(res, BaseException):
            if not isinstance(res, ExtenderError):
                raise res
            continue
        scores, weight = res
        for host, score in scores:
            out.setdefault(host, []).append((ext.name, score * weight * scale))
    return out


async def preempt_with_extenders(
    extenders: Iterable[HTTPExtender],
    pod_info: PodInfo,
    node_to_victims: Mapping[str, Victims],
    node_infos: NodeInfoLister | Mapping[str, NodeInfo],
) -> dict[str, Victims]:
    """Pass the preemption candidates through every interested preempting extender in turn
    (upstream ``callExtenders``); an ignorable extender's failure is skipped, another's raises.
    Stops early once no candidate is left."""
    victims = dict(node_to_victims)
    if not victims:
        return victims
    for ext in extenders:
        if not ext.supports_preemption() or not ext.is_interested(pod_info):
            continue
        try:
            got = await ext.process_preemption(pod_info, victims, node_infos)
        except ExtenderError:
            if ext.is_ignorable():
                continue
            raise
        victims = got
        if not victims:
            break
    return victims


def binder_for(extenders: Iterable[HTTPExtender], pod_info: PodInfo) -> HTTPExtender | None:
    """The binding extender interested in the pod, if any: it binds instead of the Bind plugins."""
    for ext in extenders:
        if ext.is_binder() and ext.is_interested(pod_info):
            return ext
    return None
