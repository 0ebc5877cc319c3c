"""NodeResourcesAllocatable: score nodes by how much they can allocate, not by what is free.

scheduler-plugins' ``pkg/noderesources/allocatable.go``. Score gives each node the weighted mean
of its allocatable amounts, ``sum(allocatable[r] * weight[r]) / sum(weight[r])`` over the
configured resources (integer division that truncates, as Go's), negated in mode ``Least``: with
the default weights, ``(millicores << 20 + bytes of memory) / (2**20 + 1)``. What pods request,
the pod's own request included, plays no part. NormalizeScore maps the lowest raw score to 0 and
the highest to 100, linearly (all equal: all 0). So ``Least`` prefers the smallest nodes (packing
small work onto small machines, keeping the big ones free) and ``Most`` the largest.

The amounts read: CPU in millicores, memory and ephemeral storage in bytes, and scalar resources
(extended resources such as ``nvidia.com/gpu``, ``hugepages-*``, ``attachable-volumes-*``,
names under ``kubernetes.io/``) in units. Any other name (``pods``, a bare word) counts 0, as
upstream.
"""

from __future__ import annotations

from typing import Any

from kubesched import MAX_NODE_SCORE, MIN_NODE_SCORE, CycleState, NodeInfo, NodeScore, PodInfo, Resource, Status

from .args import LEAST, MOST, NodeResourcesAllocatableArgs

NAME = "NodeResourcesAllocatable"

_NATIVE = {"cpu", "memory", "ephemeral-storage"}


def is_scalar_resource(name: str) -> bool:
    """Whether upstream keeps ``name`` among a node's scalar resources (``IsScalarResourceName``):
    an extended resource (a ``domain/name`` outside ``kubernetes.io``, not ``requests.*``), a
    name under ``kubernetes.io/``, ``hugepages-*`` or ``attachable-volumes-*``."""
    if name.startswith(("hugepages-", "attachable-volumes-")) or "kubernetes.io/" in name:
        return True
    return "/" in name and not name.startswith("requests.")


def allocatable_of(allocatable: Resource, name: str) -> int:
    """What a node can allocate of ``name``, in the unit upstream scores it in (0: not scored)."""
    if name in _NATIVE:
        return allocatable.get(name)
    if is_scalar_resource(name):
        return allocatable.scalar.get(name, 0)
    return 0


def go_div(a: int, b: int) -> int:
    """``a / b`` on Go integers: the quotient truncated toward zero."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


class NodeResourcesAllocatable:
    """Score (with NormalizeScore): nodes with the least (``Least``) or the most (``Most``)
    allocatable resources, by the configured weights, score highest."""

    name = NAME
    Args = NodeResourcesAllocatableArgs

    def __init__(self, args: NodeResourcesAllocatableArgs | None = None, handle: Any = None) -> None:
        self.args = args if args is not None else NodeResourcesAllocatableArgs()
        self.handle = handle
        self._weights = self.args.weights()
        self._sign = -1 if self.args.mode == LEAST else 1 if self.args.mode == MOST else 0

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> int:
        """The node's weighted mean allocatable amount, negative in mode ``Least``."""
        total = 0
        weight_sum = 0
        allocatable = node.allocatable
        for resource, weight in self._weights.items():
            total += self._sign * allocatable_of(allocatable, resource) * weight
            weight_sum += weight
        return go_div(total, weight_sum)

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: list[NodeScore]) -> Status | None:
        """The raw scores mapped linearly onto 0..100, the lowest to 0, the highest to 100; all
        equal: all 0."""
        if not scores:
            return None
        highest = max(s.score for s in scores)
        lowest = min(s.score for s in scores)
        old_range = highest - lowest
        new_range = MAX_NODE_SCORE - MIN_NODE_SCORE
        for s in scores:
            if old_range == 0:
                s.score = MIN_NODE_SCORE
            else:
                s.score = (s.score - lowest) * new_range // old_range + MIN_NODE_SCORE
        return None
