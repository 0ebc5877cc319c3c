"""Gang scheduling for kubesched: the scheduler-plugins Coscheduling plugin, driven by pod labels."""

from .coscheduling import (
    MIN_AVAILABLE_LABEL,
    POD_GROUP_LABEL,
    POD_GROUP_NAME_LABEL,
    Coscheduling,
    CoschedulingArgs,
    PodGroupRef,
    pod_group_of,
    scheduling_group_of,
)

__all__ = [
    "MIN_AVAILABLE_LABEL",
    "POD_GROUP_LABEL",
    "POD_GROUP_NAME_LABEL",
    "Coscheduling",
    "CoschedulingArgs",
    "PodGroupRef",
    "pod_group_of",
    "scheduling_group_of",
]
