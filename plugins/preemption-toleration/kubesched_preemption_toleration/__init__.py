"""PreemptionToleration for kubesched: the scheduler-plugins PostFilter that preempts as
DefaultPreemption does, except for victims whose PriorityClass tolerates the preemptor."""

from .args import PreemptionTolerationArgs
from .plugin import NAME, NOT_ELIGIBLE_NEVER, NOT_ELIGIBLE_TERMINATING, PreemptionToleration, no_victims_message
from .policy import (
    ANNOTATION_KEY_PREFIX,
    MINIMUM_PREEMPTABLE_PRIORITY,
    TOLERATION_SECONDS,
    Policy,
    PolicyError,
    PriorityClassLister,
    PriorityClassNotFound,
    exempted_from_preemption,
    parse_int,
    scheduled_at,
)

__all__ = [
    "ANNOTATION_KEY_PREFIX",
    "MINIMUM_PREEMPTABLE_PRIORITY",
    "NAME",
    "NOT_ELIGIBLE_NEVER",
    "NOT_ELIGIBLE_TERMINATING",
    "TOLERATION_SECONDS",
    "Policy",
    "PolicyError",
    "PreemptionToleration",
    "PreemptionTolerationArgs",
    "PriorityClassLister",
    "PriorityClassNotFound",
    "exempted_from_preemption",
    "no_victims_message",
    "parse_int",
    "scheduled_at",
]
