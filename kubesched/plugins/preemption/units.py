"""Preemption units (KEP-5710, ``GenericWorkload``): what goes together when a pod is a victim.

A placed pod is evicted alone unless its PodGroup, or a CompositePodGroup above it
(``CompositePodGroup`` gate), says ``disruptionMode: all``: then the topmost such group in its
chain is the unit, and every placed pod under it goes with it — on other nodes too. Upstream's
multi-tier cases fix the rule: a mid-tier composite with ``all`` under a root with ``single``
takes the mid-tier subtree; a root with ``all`` takes the whole tree; a leaf with ``all`` under
``single`` composites takes the leaf's pods only.

Both preemptions use it: a pod group's (the whole cluster its domain) and a single pod's (a
node its domain, a unit's pods elsewhere evicted with it and counted in the candidate's
victims, not in whether the node fits).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

from kubesched.framework.interface import CycleState, PodGroups
from kubesched.framework.podgroup import COMPOSITE_POD_GROUP_KIND, GroupKey, PodGroupView, group_key
from kubesched.framework.preemption import PreemptionEvaluator
from kubesched.framework.preemption_candidates import filter_pods_with_pdb_violation, sort_by_importance
from kubesched.framework.status import Code, Status
from kubesched.framework.types import NodeInfo, PodInfo

#: Never more composites above a group than this are looked at (1.37's trees are three deep).
MAX_CHAIN = 16


def unit_key(groups: PodGroups, namespace: str, pod_group: str, composites: bool) -> GroupKey | None:
    """The key of the group a member of ``pod_group`` is disrupted with (the topmost in its
    chain saying ``all``), or ``None``: it goes alone."""
    view = PodGroupView(groups.get(namespace, pod_group))
    unit = group_key(namespace, pod_group) if view.disrupts_all else None
    if not composites:
        return unit
    seen: set[str] = set()
    name = view.parent
    while name and name not in seen and len(seen) < MAX_CHAIN:
        seen.add(name)
        parent = groups.composite(namespace, name)
        if parent is None:
            break
        view = PodGroupView(parent, COMPOSITE_POD_GROUP_KIND)
        if view.disrupts_all:
            unit = group_key(namespace, name, COMPOSITE_POD_GROUP_KIND)
        name = view.parent
    return unit


def unit_pods(groups: PodGroups, key: GroupKey) -> list[PodInfo]:
    """Every placed pod under the unit ``key`` (bound or assumed), in a stable order."""
    out: list[PodInfo] = []
    for leaf in groups.leaves_under(key):
        placed = groups.state(leaf.namespace, leaf.name).scheduled
        out.extend(placed[uid] for uid in sorted(placed))
    return out


def units_on_node(groups: PodGroups, potential: Sequence[PodInfo], composites: bool) -> dict[str, GroupKey] | None:
    """The unit key of each of ``potential`` that goes with a group, by uid; ``None`` when every
    one goes alone (the plain per-pod reprieve then applies)."""
    found: dict[str, GroupKey] = {}
    #: Each group's unit, looked up once (a group's pods on a node share it).
    unit_of: dict[tuple[str, str], GroupKey | None] = {}
    for p in potential:
        if p.pod_group:
            where = (p.namespace, p.pod_group)
            if where in unit_of:
                key = unit_of[where]
            else:
                key = unit_of[where] = unit_key(groups, p.namespace, p.pod_group, composites)
            if key is not None:
                found[p.uid] = key
    return found or None


async def reprieve_units(
    evaluator: PreemptionEvaluator,
    state: CycleState,
    pod: PodInfo,
    node: NodeInfo,
    potential: list[PodInfo],
    pdbs: Sequence[Mapping[str, Any]],
    units: Mapping[str, GroupKey],
) -> tuple[list[PodInfo], int, Status | None]:
    """The evaluator's reprieve over units instead of pods: with ``potential`` taken off
    ``node`` (a copy) and the preemptor fitting, units are given back whole, those with a
    PDB-violating pod first, each list most important first; a unit the preemptor cannot stay
    beside is a victim with all its pods, those placed on other nodes too."""
    handle = evaluator.handle
    sort_by_importance(potential, time.time())
    violating, _ = filter_pods_with_pdb_violation(potential, pdbs)
    bad = {p.uid for p in violating}
    batches: dict[str | GroupKey, list[PodInfo]] = {}
    for p in potential:
        batches.setdefault(units.get(p.uid, p.uid), []).append(p)
    ordered = sorted(batches.items(), key=lambda kv: 0 if any(p.uid in bad for p in kv[1]) else 1)
    here = {p.uid for p in potential}
    victims: list[PodInfo] = []
    num_violating = 0
    for key, pods in ordered:
        for p in pods:
            node.add_pod(p)
            st = await handle.run_pre_filter_add_pod(state, pod, p, node)
            if st is not None and st.code is not Code.SUCCESS:
                return [], 0, Status(Code.ERROR, st.message())
        st = await handle.run_filter_with_nominated_pods(state, pod, node)
        if st is None or st.code is Code.SUCCESS:
            continue
        st = await evaluator.remove_victims(state, pod, node, pods)
        if st is not None:
            return [], 0, st
        victims.extend(pods)
        num_violating += sum(p.uid in bad for p in pods)
        if isinstance(key, GroupKey):
            victims.extend(
                p for p in unit_pods(handle.pod_groups, key) if p.uid not in here and p.node_name != node.name
            )
    return victims, num_violating, Status(Code.SUCCESS)
