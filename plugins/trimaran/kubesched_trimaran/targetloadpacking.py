"""TargetLoadPacking: best-fit packing of CPU load around a target utilisation (upstream's
``pkg/trimaran/targetloadpacking``).

A node's predicted CPU utilisation ``U`` (percent of its CPU capacity) is its measured
utilisation (the ``AVG`` or ``Latest`` CPU metric), plus the pod's predicted usage, plus that of
the pods placed on it that the measurement does not show yet (:mod:`.handler`). Each container's
usage is predicted from its CPU limit, else its request times ``defaultRequestsMultiplier``, else
``defaultRequests.cpu``; the pod's overhead is added. With the target ``T``:

* ``U <= T``: ``round((100 - T) * U / T + T)`` — from ``T`` on an idle node up to 100 at the
  target;
* ``T < U <= 100``: ``round(T * (100 - U) / (100 - T))`` — down to 0 at full;
* ``U > 100``, or a node without metrics or without a CPU metric: 0.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubesched import MIN_NODE_SCORE, CycleState, GroupVersionResource, NodeInfo, PodInfo

from .args import TargetLoadPackingArgs
from .base import TrimaranPlugin, go_round
from .handler import METRICS_AGENT_REPORTING_INTERVAL_SECONDS, PodAssignEventHandler
from .metrics import AVERAGE, CPU, LATEST
from .resourcestats import amount, node_amount

NAME = "TargetLoadPacking"
PODS = GroupVersionResource("", "v1", "pods")


class TargetLoadPacking(TrimaranPlugin):
    """Score: CPU load nearest the target first (see the module's description)."""

    name = NAME
    Args = TargetLoadPackingArgs
    args: TargetLoadPackingArgs

    def __init__(self, args: TargetLoadPackingArgs | None = None, handle: Any = None, **kwargs: Any) -> None:
        super().__init__(args, handle, **kwargs)
        self.target = self.args.target_utilization
        self.requests_milli_cores = self.args.requests_milli_cores
        self.requests_multiplier = self.args.requests_multiplier
        self.event_handler = PodAssignEventHandler(self.clock)
        #: Whether a pod was scored yet: the pods the informer lists at start (before) ran
        #: before the scheduler did, and are taken as measured already.
        self.started = False
        informer_for = getattr(handle, "informer_for", None)
        if informer_for is not None and not self.collector.live:
            informer_for(PODS).add_event_handler(on_add=self._added, on_update=self._updated, on_delete=self._deleted)

    # --- the pods informer: assigned pods only -----------------------------------------------------
    @staticmethod
    def _assigned(pod: Mapping[str, Any]) -> bool:
        return bool((pod.get("spec") or {}).get("nodeName"))

    def _added(self, pod: Mapping[str, Any]) -> None:
        if self.started and self._assigned(pod):
            self.event_handler.on_add(pod)

    def _updated(self, old: Mapping[str, Any], new: Mapping[str, Any]) -> None:
        if self._assigned(new):
            self.event_handler.on_update(old, new)

    def _deleted(self, pod: Mapping[str, Any]) -> None:
        if self._assigned(pod):
            self.event_handler.on_delete(pod)

    # --- prediction ----------------------------------------------------------------------------
    def predict_utilisation(self, container: Mapping[str, Any]) -> int:
        """A container's predicted CPU usage in millicores (``PredictUtilisation``)."""
        resources = container.get("resources") or {}
        limits = resources.get("limits") or {}
        requests = resources.get("requests") or {}
        if "cpu" in limits:
            return amount("cpu", limits["cpu"])
        if "cpu" in requests:
            return go_round(amount("cpu", requests["cpu"]) * self.requests_multiplier)
        return self.requests_milli_cores

    def pod_usage(self, pod: Mapping[str, Any]) -> int:
        """The pod's predicted CPU usage: its containers' and its overhead, in millicores."""
        spec = pod.get("spec") or {}
        total = sum(self.predict_utilisation(c) for c in spec.get("containers") or ())
        overhead = spec.get("overhead") or {}
        return total + (amount("cpu", overhead["cpu"]) if "cpu" in overhead else 0)

    # --- Score ---------------------------------------------------------------------------------
    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> int:
        self.started = True
        self.collector.poke()
        metrics, answer = self.collector.node_metrics(node)
        if metrics is None or answer is None or node.node is None:
            return MIN_NODE_SCORE
        pod_cpu = self.pod_usage(pod.pod)
        util_percent = None
        for m in metrics:
            if m.type == CPU and m.operator in (AVERAGE, LATEST):
                util_percent = m.value
        if util_percent is None:
            return MIN_NODE_SCORE
        capacity = float(node_amount(node.node, "capacity", "cpu"))
        util_millis = util_percent / 100 * capacity
        missing = 0
        if not self.collector.live:
            end = answer.window.end
            for info in self.event_handler.pods_on(node.name):
                ts = int(info.timestamp)
                if ts > end or end - ts < METRICS_AGENT_REPORTING_INTERVAL_SECONDS:
                    missing += self.pod_usage(info.pod)
        predicted = 100 * (util_millis + pod_cpu + missing) / capacity if capacity != 0 else 0.0
        return self.score_for(predicted)

    def score_for(self, predicted: float) -> int:
        """The score of a predicted utilisation (percent)."""
        target = float(self.target)
        if predicted > target:
            if predicted > 100:
                return MIN_NODE_SCORE
            return go_round(target * (100 - predicted) / (100 - target))
        return go_round((100 - target) * predicted / target + target)
