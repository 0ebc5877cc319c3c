"""LoadVariationRiskBalancing: balance the risk of load variation across nodes (upstream's
``pkg/trimaran/loadvariationriskbalancing``).

For CPU and memory each, with ``mu`` the measured average plus the pod's request and ``sigma``
the measured standard deviation, both as fractions of the node's allocatable (within [0, 1]):

    risk  = (mu + min(max(margin * sigma ** (1 / sensitivity), 0), 1)) / 2
    score = (1 - risk) * 100

(the root is taken only for a sensitivity of 0 or above: 0 makes it vanish). The node scores the
lower of the two when both are measured, the one measured otherwise, rounded; 0 without
metrics.
"""

from __future__ import annotations

import math
from typing import Any

from kubesched import MAX_NODE_SCORE, MIN_NODE_SCORE, CycleState, NodeInfo, PodInfo

from .args import LoadVariationRiskBalancingArgs
from .base import TrimaranPlugin, go_round
from .metrics import CPU, MEMORY
from .resourcestats import CPU as CPU_RESOURCE
from .resourcestats import MEMORY as MEMORY_RESOURCE
from .resourcestats import ResourceStats, create_resource_stats, mu_sigma, resource_requested

NAME = "LoadVariationRiskBalancing"


def compute_score(rs: ResourceStats, margin: float, sensitivity: float) -> float:
    """The score of one resource (``computeScore``); 0 without capacity."""
    if rs.capacity <= 0:
        return 0.0
    rs.req = max(rs.req, 0.0)
    rs.used_avg = max(min(rs.used_avg, rs.capacity), 0.0)
    rs.used_stdev = max(min(rs.used_stdev, rs.capacity), 0.0)
    mu, sigma = mu_sigma(rs)
    if sensitivity >= 0:
        sigma = _root(sigma, sensitivity)
    sigma = max(min(sigma * margin, 1.0), 0.0)
    risk = (mu + sigma) / 2
    return (1.0 - risk) * MAX_NODE_SCORE


def _root(sigma: float, sensitivity: float) -> float:
    """``sigma ** (1 / sensitivity)``, with Go's ``math.Pow`` at the edges (a sensitivity of 0:
    an infinite power, 0 for a sigma below 1)."""
    if sensitivity == 0:
        return 0.0 if sigma < 1 else (1.0 if sigma == 1 else math.inf)
    return float(sigma ** (1 / sensitivity))


class LoadVariationRiskBalancing(TrimaranPlugin):
    """Score: the lower risk of load variation first (see the module's description)."""

    name = NAME
    Args = LoadVariationRiskBalancingArgs
    args: LoadVariationRiskBalancingArgs

    def __init__(self, args: LoadVariationRiskBalancingArgs | None = None, handle: Any = None, **kwargs: Any) -> None:
        super().__init__(args, handle, **kwargs)
        self.margin = self.args.safe_variance_margin
        self.sensitivity = self.args.safe_variance_sensitivity

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> int:
        self.collector.poke()
        metrics, _ = self.collector.node_metrics(node)
        if metrics is None or node.node is None:
            return MIN_NODE_SCORE
        request = resource_requested(pod.pod)
        cpu_stats = create_resource_stats(metrics, node.node, request, CPU_RESOURCE, CPU)
        cpu_score = compute_score(cpu_stats, self.margin, self.sensitivity) if cpu_stats is not None else 0.0
        memory_stats = create_resource_stats(metrics, node.node, request, MEMORY_RESOURCE, MEMORY)
        memory_score = compute_score(memory_stats, self.margin, self.sensitivity) if memory_stats is not None else 0.0
        if cpu_stats is not None and memory_stats is not None:
            total = min(memory_score, cpu_score)
        else:
            total = max(memory_score, cpu_score)
        return go_round(total)
