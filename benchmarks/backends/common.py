"""What the backends share: a workload's gates and configuration."""

from __future__ import annotations

from typing import Any

from benchmarks.catalogue import Workload


def workload_gates(w: Workload) -> Any:
    """The feature gates a workload runs with: 1.37's defaults, OpportunisticBatching as the
    workload says, and the workload's own (upstream's ``featureGates``)."""
    from kubesched.framework.features import FeatureGates

    return FeatureGates({"OpportunisticBatching": w.opportunistic_batching, **w.feature_gates})


def workload_config(w: Workload) -> Any:
    """The workload's configuration (the default one unless it names a file) under its gates:
    the default profile is the one those gates give (GenericWorkload adds GangScheduling)."""
    from kubesched.config import load_config

    return load_config(w.config, feature_gates=workload_gates(w))
