"""LowRiskOverCommitment: place a pod where over-commitment is least risky (upstream's
``pkg/trimaran/lowriskovercommitment``).

For CPU and memory each, two risks of the node with the pod, each in [0, 1]:

* from limits: when the pods' limits exceed the capacity (allocatable),
  ``(limit - capacity) / (limit - request)``;
* from load: a beta distribution fitted to the measured mean and deviation (the deviation
  scaled by ``sqrt(smoothingWindowSize)`` for the smoothing of the measurements, and kept below
  the largest a beta distribution allows), and the probability that usage stays within what the
  other pods request — conditioned on staying within their limits when those are below capacity;
  the risk is its complement;

combined as ``w * limit risk + (1 - w) * load risk`` with ``w`` the resource's
``riskLimitWeights`` (0.5 by default). The node scores ``round((1 - max(cpu risk, memory risk)) *
100)``. A BestEffort pod (no CPU or memory requests or limits) scores 0 everywhere, as a node
without metrics does. The pod's requests and limits are computed at PreScore (and at Score when
PreScore did not run).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kubesched import MAX_NODE_SCORE, MIN_NODE_SCORE, CycleState, NodeInfo, PodInfo, Status

from .args import LowRiskOverCommitmentArgs
from .base import TrimaranPlugin, go_round
from .beta import compute_probability, max_variance
from .metrics import CPU, MEMORY, Metric
from .resourcestats import CPU as CPU_RESOURCE
from .resourcestats import MEMORY as MEMORY_RESOURCE
from .resourcestats import (
    NodeRequestsAndLimits,
    Res,
    create_resource_stats,
    mu_sigma,
    node_requests_and_limits,
    resource_limits,
    resource_requested,
    set_max_limits,
)

NAME = "LowRiskOverCommitment"
#: The share of the largest variance a fitted distribution may have (avoids divisions by 0).
MAX_VARIANCE_ALLOWANCE = 0.99
POD_RESOURCES_KEY = NAME + ".PodResources"


@dataclass
class PodResourcesStateData:
    """The pod's requests and limits (limits at least the requests), kept from PreScore."""

    pod_requests: Res
    pod_limits: Res

    def clone(self) -> PodResourcesStateData:
        return self


def pod_resources(pod: Any) -> PodResourcesStateData:
    requests, limits = resource_requested(pod), resource_limits(pod)
    set_max_limits(requests, limits)
    return PodResourcesStateData(requests, limits)


class LowRiskOverCommitment(TrimaranPlugin):
    """PreScore and Score: the least risk of over-commitment first (see the module's
    description)."""

    name = NAME
    Args = LowRiskOverCommitmentArgs
    args: LowRiskOverCommitmentArgs

    def __init__(self, args: LowRiskOverCommitmentArgs | None = None, handle: Any = None, **kwargs: Any) -> None:
        super().__init__(args, handle, **kwargs)
        self.smoothing_window_size = self.args.smoothing_window_size
        self.risk_limit_weights = self.args.weights()

    async def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status | None:
        state.write(POD_RESOURCES_KEY, pod_resources(pod.pod))
        return await super().pre_score(state, pod, nodes)

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> int:
        self.collector.poke()
        try:
            data = state.read(POD_RESOURCES_KEY)
        except KeyError:
            data = None
        if not isinstance(data, PodResourcesStateData):
            data = pod_resources(pod.pod)
        req, lim = data.pod_requests, data.pod_limits
        if req.milli_cpu == 0 and req.memory == 0 and lim.milli_cpu == 0 and lim.memory == 0:
            return MIN_NODE_SCORE
        metrics, _ = self.collector.node_metrics(node)
        if metrics is None or node.node is None:
            return MIN_NODE_SCORE
        return go_round(self.compute_rank(metrics, node, req, lim) * MAX_NODE_SCORE)

    def compute_rank(self, metrics: list[Metric], node: NodeInfo, requests: Res, limits: Res) -> float:
        """1 minus the larger of the CPU and memory risks."""
        assert node.node is not None
        totals = node_requests_and_limits((p.pod for p in node.pods), node.node, requests, limits)
        risk_cpu = self.compute_risk(metrics, CPU_RESOURCE, CPU, node.node, totals)
        risk_memory = self.compute_risk(metrics, MEMORY_RESOURCE, MEMORY, node.node, totals)
        return 1 - max(risk_cpu, risk_memory)

    def compute_risk(
        self, metrics: list[Metric], resource: str, resource_type: str, node: Any, totals: NodeRequestsAndLimits
    ) -> float:
        """The risk of placing the pod on the node for one resource (``computeRisk``)."""
        if resource not in (CPU_RESOURCE, MEMORY_RESOURCE):
            return 0.0
        request = totals.node_request.get(resource)
        limit = totals.node_limit.get(resource)
        request_minus = totals.node_request_minus_pod.get(resource)
        limit_minus = totals.node_limit_minus_pod.get(resource)
        capacity = totals.node_capacity.get(resource)
        risk_limit = 0.0
        if limit > capacity:
            risk_limit = (limit - capacity) / (limit - request)
        risk_load = 0.0
        stats = create_resource_stats(metrics, node, Res(), resource, resource_type)
        if stats is not None:
            mu, sigma = mu_sigma(stats)
            sigma *= math.sqrt(float(self.smoothing_window_size))
            sigma = min(sigma, math.sqrt(max_variance(mu) * MAX_VARIANCE_ALLOWANCE))
            threshold = min(max(_ratio(request_minus, capacity), 0.0), 1.0)
            prob, dist = compute_probability(mu, sigma, threshold)
            if limit_minus < capacity and request_minus <= limit_minus:
                limit_threshold = _ratio(limit_minus, capacity)
                if limit_threshold == 0:
                    prob = 1.0  # zero over zero
                elif dist is not None:
                    limit_prob = dist.distribution_function(limit_threshold)
                    if limit_prob > 0:
                        prob = min(max(prob / limit_prob, 0.0), 1.0)
            risk_load = 1 - prob
        w = self.risk_limit_weights.get(resource, 0.0)
        return min(max(w * risk_limit + (1 - w) * risk_load, 0.0), 1.0)


def _ratio(a: int, b: int) -> float:
    """``a / b`` with Go's float division at 0 (NaN for 0/0, an infinity otherwise)."""
    if b == 0:
        return math.nan if a == 0 else math.copysign(math.inf, a)
    return a / b
