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

Read in upstream's PlacementBinPacking plugin (1.36-era, since folded into NodeResourcesFit) and
its test table; the strategy being always MostAllocated is what the "Topology-Aware Workload
Scheduling" docs page states.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

from kubesched.framework.pod_requests import DEFAULT_COUNTING, Counting
from kubesched.framework.podgroup import PodGroupAssignments
from kubesched.framework.types import NodeInfo
from kubesched.plugins.noderesources.resource_allocation import (
    KIND_CPU,
    KIND_EPHEMERAL,
    KIND_MEMORY,
    ResourceSpec,
    compile_requests,
    most_allocated_scorer,
    pod_request_list,
)

log = logging.getLogger("kubesched.plugins")


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


def placement_score(
    resources: Sequence[ResourceSpec],
    assignments: PodGroupAssignments,
    node_known: Callable[[str], bool],
    counting: Counting = DEFAULT_COUNTING,
) -> int:
    """The MostAllocated score of ``assignments.placement``'s nodes with the proposed members on
    them (see the module docstring). ``node_known(name)`` says whether the snapshot has a node."""
    group = [0] * len(resources)
    for a in assignments.assignments:
        if not node_known(a.node_name):
            log.error("pod assignment node not found in the snapshot: pod %s, node %s", a.pod.key, a.node_name)
            continue
        for i, amount in enumerate(pod_request_list(a.pod, resources, False, counting)):
            group[i] += amount
    requested: list[int] = []
    allocatable: list[int] = []
    weights: list[int] = []
    nodes = assignments.placement.nodes
    for kind, name, weight, group_request in compile_requests(resources, group):
        total_alloc, total_used = _totals(nodes, kind, name)
        if total_alloc == 0:
            continue
        requested.append(total_used + group_request)
        allocatable.append(total_alloc)
        weights.append(weight)
    return most_allocated_scorer(requested, allocatable, weights)
