"""The plugin-independent parts of preemption, now in :mod:`kubesched.framework.preemption`
(where the face exports the evaluator); kept here under their old names for in-tree imports."""

from kubesched.framework.preemption import (
    NO_VICTIMS_FOUND,
    PREEMPTION_NOT_HELPFUL,
    Candidate,
    CandidateList,
    aggregate_errors,
    earliest_start_time_of_highest_priority,
    filter_pods_with_pdb_violation,
    fit_error_message,
    more_important_key,
    pick_one_node_for_preemption,
    pod_start_time,
    sort_by_importance,
)

__all__ = [
    "NO_VICTIMS_FOUND",
    "PREEMPTION_NOT_HELPFUL",
    "Candidate",
    "CandidateList",
    "aggregate_errors",
    "earliest_start_time_of_highest_priority",
    "filter_pods_with_pdb_violation",
    "fit_error_message",
    "more_important_key",
    "pick_one_node_for_preemption",
    "pod_start_time",
    "sort_by_importance",
]
