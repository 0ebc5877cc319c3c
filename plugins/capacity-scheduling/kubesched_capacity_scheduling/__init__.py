"""Elastic quotas for kubesched: the scheduler-plugins CapacityScheduling plugin."""

from .capacity_scheduling import (
    ELASTIC_QUOTA_SNAPSHOT_KEY,
    ELASTIC_QUOTAS,
    PRE_FILTER_STATE_KEY,
    Candidate,
    CapacityScheduling,
    CapacitySchedulingError,
    ElasticQuotaSnapshotState,
    PreFilterState,
    QuotaPreemption,
)
from .elasticquota import (
    LOWER_BOUND_OF_MIN,
    UPPER_BOUND_OF_MAX,
    ElasticQuotaInfo,
    ElasticQuotaInfos,
    compute_pod_resource_request,
)

__all__ = [
    "ELASTIC_QUOTAS",
    "ELASTIC_QUOTA_SNAPSHOT_KEY",
    "LOWER_BOUND_OF_MIN",
    "PRE_FILTER_STATE_KEY",
    "UPPER_BOUND_OF_MAX",
    "Candidate",
    "CapacityScheduling",
    "CapacitySchedulingError",
    "ElasticQuotaInfo",
    "ElasticQuotaInfos",
    "ElasticQuotaSnapshotState",
    "PreFilterState",
    "QuotaPreemption",
    "compute_pod_resource_request",
]
