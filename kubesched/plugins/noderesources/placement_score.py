"""NodeResourcesFit's placement score (upstream 1.37, ``TopologyAwareWorkloadScheduling``): how
full a pod group's placement would be once its proposed members land, as one bin.

The placement's nodes are taken as one big node: their allocatable amounts summed, what their
pods already request summed, and the requests of the members the placement's evaluation
proposes added to the latter. That is scored with the MostAllocated formula (fuller is better),
whatever the plugin's ``scoringStrategy.type`` says (the type governs per-pod scoring only), over
the strategy's ``resources`` and their weights:

* requests are counted as the node score counts them: cpu and memory with non-zero defaults
  for containers that ask for nothing, the rest as requested; nodes' side is their non-zero
  total for cpu and memory, plain requests for the rest;
* a scalar resource (extended, hugepages, ...) that no proposed member requests is left out,
  as is any resource the placement's nodes cannot allocate at all;
* a proposed member whose node the snapshot does not know is skipped (logged).

No normalization: the MostAllocated score is already on 0..100.

**Bounds** (:func:`placement_score_bounds`, for
:class:`~kubesched.framework.interface.PlacementScoreBounds`): the score with every member
proposed. MostAllocated never falls as requests grow (an over-committed resource counts as
full), so no placement scores above it, and one holding every member scores it exactly -- as
long as fewer members count the same resources: with a scalar resource asked for by some
members and not by others there are no bounds. The sums come from the snapshot's columns when
the placements' nodes are rows of them (as TopologyPlacementGenerator makes them), else node by
node as the score reads them.

Read in upstream's PlacementBinPacking plugin (1.36-era, since folded into NodeResourcesFit) and
its test table; the strategy being always MostAllocated is what the "Topology-Aware Workload
Scheduling" docs page states.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence

import numpy as np

from kubesched.framework.columns import Array, NodeColumns, NodeSubset
from kubesched.framework.interface import MAX_NODE_SCORE
from kubesched.framework.pod_requests import DEFAULT_COUNTING, Counting
from kubesched.framework.podgroup import Placement, PodGroupAssignments
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.plugins.noderesources.resource_allocation import (
    KIND_CPU,
    KIND_EPHEMERAL,
    KIND_MEMORY,
    KIND_SCALAR,
    Entry,
    ResourceSpec,
    compile_requests,
    most_allocated_scorer,
    pod_request_list,
    resource_kind,
)

log = logging.getLogger("kubesched.plugins")

#: What a sum or a product read off the columns must stay below to be exact in int64.
_INT64 = 2**63


def _amounts(node: NodeInfo, kind: int, name: str) -> tuple[int, int]:
    """(allocatable, already requested) of one resource on ``node``, as the node score reads them."""
    alloc = node.allocatable
    if kind == KIND_CPU:
        return alloc.milli_cpu, node.non_zero_requested.milli_cpu
    if kind == KIND_MEMORY:
        return alloc.memory, node.non_zero_requested.memory
    if kind == KIND_EPHEMERAL:
        return alloc.ephemeral_storage, node.requested.ephemeral_storage
    return alloc.scalar.get(name, 0), node.requested.scalar.get(name, 0)


def _totals(nodes: Sequence[NodeInfo], kind: int, name: str) -> tuple[int, int]:
    """(allocatable, already requested) of one resource summed over ``nodes``, as
    :func:`_amounts` reads each: cpu and memory summed attribute by attribute, the rest node by
    node."""
    if kind == KIND_CPU:
        return sum([n.allocatable.milli_cpu for n in nodes]), sum([n.non_zero_requested.milli_cpu for n in nodes])
    if kind == KIND_MEMORY:
        return sum([n.allocatable.memory for n in nodes]), sum([n.non_zero_requested.memory for n in nodes])
    total_alloc = total_used = 0
    for node in nodes:
        alloc, used = _amounts(node, kind, name)
        total_alloc += alloc
        total_used += used
    return total_alloc, total_used


def _group_requests(resources: Sequence[ResourceSpec], pods: Iterable[PodInfo], counting: Counting) -> list[int]:
    """What ``pods`` request together of each of ``resources``, as the node score counts them."""
    group = [0] * len(resources)
    for pod in pods:
        for i, amount in enumerate(pod_request_list(pod, resources, False, counting)):
            group[i] += amount
    return group


def _score(compiled: Sequence[Entry], totals: Sequence[tuple[int, int]]) -> int:
    """MostAllocated of one bin: ``totals`` its (allocatable, already requested) per entry of
    ``compiled``, whose requests are the group's; resources the bin cannot allocate left out."""
    requested: list[int] = []
    allocatable: list[int] = []
    weights: list[int] = []
    for (_, _, weight, group_request), (total_alloc, total_used) in zip(compiled, totals, strict=True):
        if total_alloc == 0:
            continue
        requested.append(total_used + group_request)
        allocatable.append(total_alloc)
        weights.append(weight)
    return most_allocated_scorer(requested, allocatable, weights)


def placement_score(
    resources: Sequence[ResourceSpec],
    assignments: PodGroupAssignments,
    node_known: Callable[[str], bool],
    counting: Counting = DEFAULT_COUNTING,
) -> int:
    """The MostAllocated score of ``assignments.placement``'s nodes with the proposed members on
    them (see the module docstring). ``node_known(name)`` says whether the snapshot has a node."""
    proposed: list[PodInfo] = []
    for a in assignments.assignments:
        if not node_known(a.node_name):
            log.error("pod assignment node not found in the snapshot: pod %s, node %s", a.pod.key, a.node_name)
            continue
        proposed.append(a.pod)
    compiled = compile_requests(resources, _group_requests(resources, proposed, counting))
    nodes = assignments.placement.nodes
    return _score(compiled, [_totals(nodes, kind, name) for kind, name, _, _ in compiled])


def placement_score_bounds(
    resources: Sequence[ResourceSpec],
    placements: Sequence[Placement],
    members: Sequence[PodInfo],
    columns: NodeColumns | None,
    counting: Counting = DEFAULT_COUNTING,
) -> list[int] | None:
    """Each placement's score with every one of ``members`` proposed on it: the highest it can
    score, and its score when they all are (see the module docstring); ``None`` when a scalar
    resource is asked for by some members and not others (fewer of them may leave it out of
    the score, which may then be higher). ``columns``: the snapshot's, whose rows the
    placements' nodes may be."""
    each = [pod_request_list(pod, resources, False, counting) for pod in members]
    for i, spec in enumerate(resources):
        if resource_kind(spec.name) == KIND_SCALAR and len({amounts[i] != 0 for amounts in each}) > 1:
            return None
    compiled = compile_requests(resources, [sum(column) for column in zip(*each, strict=True)])
    scores = _column_scores(compiled, placements, columns) if columns is not None else None
    if scores is not None:
        return scores
    return [_score(compiled, [_totals(p.nodes, kind, name) for kind, name, _, _ in compiled]) for p in placements]


def _column_scores(
    compiled: Sequence[Entry], placements: Sequence[Placement], columns: NodeColumns
) -> list[int] | None:
    """:func:`_score` of every placement at once, its sums read off ``columns``: ``None``
    unless every placement's nodes are rows of them (:class:`NodeSubset`), the columns are exact
    and no sum or product can leave int64."""
    if not columns.exact or not placements or not all(isinstance(p.nodes, NodeSubset) for p in placements):
        return None
    rows = [p.nodes.rows_in(columns) for p in placements]  # type: ignore[attr-defined]
    lengths = [len(r) for r in rows]
    if not compiled or 0 in lengths:
        return None
    every = np.concatenate(rows)
    starts = np.cumsum([0, *lengths[:-1]])
    alloc_sums: list[Array] = []
    used_sums: list[Array] = []
    for kind, name, _, group_request in compiled:
        if kind == KIND_CPU:
            alloc, used = columns.alloc_cpu, columns.nz_cpu
        elif kind == KIND_MEMORY:
            alloc, used = columns.alloc_memory, columns.nz_memory
        elif kind == KIND_EPHEMERAL:
            alloc, used = columns.alloc_ephemeral, columns.req_ephemeral
        else:
            alloc, used = columns.scalar(name)
        alloc, used = alloc[every], used[every]
        peak_alloc = max(int(alloc.max()), -int(alloc.min()))
        peak_used = max(int(used.max()), -int(used.min()))
        if len(every) * peak_alloc * MAX_NODE_SCORE >= _INT64 or len(every) * peak_used + abs(group_request) >= _INT64:
            return None
        alloc_sums.append(np.add.reduceat(alloc, starts))
        used_sums.append(np.add.reduceat(used, starts))
    total_alloc = np.stack(alloc_sums)
    requested = np.stack(used_sums) + np.array([[e[3]] for e in compiled], dtype=np.int64)
    weights = np.array([[e[2]] for e in compiled], dtype=np.int64)
    counted = total_alloc != 0
    per = np.where(counted, np.minimum(requested, total_alloc) * MAX_NODE_SCORE // np.where(counted, total_alloc, 1), 0)
    score = (per * weights).sum(axis=0)
    weight_sum = (counted * weights).sum(axis=0)
    out: list[int] = np.where(weight_sum > 0, score // np.where(weight_sum > 0, weight_sum, 1), 0).tolist()
    return out
