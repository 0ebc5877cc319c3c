"""Trimaran for kubesched: load-aware scoring from measured utilisation, as scheduler-plugins'
``pkg/trimaran`` does it.

* :class:`TargetLoadPacking` — pack CPU load around a target utilisation;
* :class:`LoadVariationRiskBalancing` — balance the risk of load variation (mean plus deviation);
* :class:`LowRiskOverCommitment` — place where over-commitment (limits over capacity, load over
  requests) is least risky;
* :class:`Peaks` — place where the node's predicted power rises least, by a power model per node.

The load comes from a load-watcher service or a metrics-server's NodeMetrics (see
:mod:`.sources`); the args are scheduler-plugins' (:mod:`.args`).
"""

from .args import (
    KUBERNETES_METRICS_SERVER,
    PROMETHEUS,
    SIGNALFX,
    LoadVariationRiskBalancingArgs,
    LowRiskOverCommitmentArgs,
    MetricProviderSpec,
    PeaksArgs,
    PowerModel,
    TargetLoadPackingArgs,
    TrimaranSpec,
)
from .handler import PodAssignEventHandler, ScheduledPod
from .loadvariationriskbalancing import LoadVariationRiskBalancing
from .lowriskovercommitment import LowRiskOverCommitment
from .metrics import Metric, MetricsError, WatcherMetrics, Window, parse_watcher_metrics
from .peaks import Peaks, PowerModelError
from .sources import Collector, MetricsAPI, SimulatedUsage, WatcherService
from .targetloadpacking import TargetLoadPacking

__all__ = [
    "KUBERNETES_METRICS_SERVER",
    "PROMETHEUS",
    "SIGNALFX",
    "Collector",
    "LoadVariationRiskBalancing",
    "LoadVariationRiskBalancingArgs",
    "LowRiskOverCommitment",
    "LowRiskOverCommitmentArgs",
    "Metric",
    "MetricProviderSpec",
    "MetricsAPI",
    "MetricsError",
    "Peaks",
    "PeaksArgs",
    "PodAssignEventHandler",
    "PowerModel",
    "PowerModelError",
    "ScheduledPod",
    "SimulatedUsage",
    "TargetLoadPacking",
    "TargetLoadPackingArgs",
    "TrimaranSpec",
    "WatcherMetrics",
    "WatcherService",
    "Window",
    "parse_watcher_metrics",
]
