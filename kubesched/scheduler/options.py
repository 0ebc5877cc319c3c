"""How the scheduler runs: :class:`SchedulerOptions`.

The ground floor of the scheduler package: it imports only the contract's feature gates, so
every part of the scheduler may import it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kubesched.framework.features import FeatureGates

__all__ = ["SchedulerOptions"]


@dataclass
class SchedulerOptions:
    """How the scheduler runs: what ``KubeSchedulerConfiguration`` and the flags set, and what
    an embedding program (the simulator, the benchmarks) chooses."""

    parallelism: int = 16
    percentage_of_nodes_to_score: int | None = None
    pod_initial_backoff: float = 1.0
    pod_max_backoff: float = 10.0
    max_unschedulable_duration: float = 300.0
    #: Seconds after a finished bind before an unconfirmed assumed pod is dropped; 0 = never,
    #: as upstream (expiring can double-count a pod whose confirmation is merely late).
    assumed_ttl: float = 0.0
    seed: int | None = None
    #: Keep each pod's outcome (node, phase, message) for a report.
    record_results: bool = False
    #: With ``record_results``, keep the outcome of a pod after it is deleted (a simulation's
    #: report names its preemption victims). Off, a pod's record goes with its delete event,
    #: so a long-lived scheduler keeps records only of the pods that exist.
    keep_deleted_results: bool = False
    #: With ``record_results``, also each plugin's result per node (filter/score maps): what
    #: the JSON report and the result annotations show; costly on large clusters.
    record_plugin_results: bool = True
    #: Also write them onto the pod as ``kubesched.io/*-result`` annotations.
    result_annotations: bool = False
    #: Write FailedScheduling/Scheduled events and PodScheduled conditions.
    report_to_cluster: bool = True
    #: Evaluate Filter and Score over the snapshot's node columns, one call per plugin and pod
    #: (``filter_nodes``/``score_nodes`` where a plugin has them). Off: node by node, as the
    #: plugin contract reads. Decisions are the same either way.
    batch: bool = True
    #: Upstream's feature gates, 1.37's defaults unless changed (``--feature-gates``). Among
    #: them OpportunisticBatching (identical pods popped in a row reuse the first one's ranked
    #: nodes, see kubesched.scheduler.batching) and SchedulerAsyncPreemption (a preemptor is
    #: nominated at once and its victims are deleted in the background; off, the deletions
    #: happen inside the scheduling cycle).
    feature_gates: FeatureGates = field(default_factory=FeatureGates)

    @property
    def opportunistic_batching(self) -> bool:
        return self.feature_gates.enabled("OpportunisticBatching")

    @property
    def async_preemption(self) -> bool:
        return self.feature_gates.enabled("SchedulerAsyncPreemption")

    #: Keep the garbage collector's full collections out of busy periods (see
    #: :mod:`kubesched.scheduler.gc_pacing`). It freezes the process's objects, so it is for a
    #: process that is the scheduler (``kubesched run``), not for one that embeds it.
    gc_pacing: bool = False
