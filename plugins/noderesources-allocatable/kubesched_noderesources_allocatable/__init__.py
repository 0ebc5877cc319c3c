"""NodeResourcesAllocatable for kubesched: the scheduler-plugins Score plugin that prefers the
nodes with the least (or the most) allocatable resources."""

from .allocatable import NAME, NodeResourcesAllocatable, allocatable_of, go_div, is_scalar_resource
from .args import LEAST, MODES, MOST, NodeResourcesAllocatableArgs, ResourceSpec, default_resources

__all__ = [
    "LEAST",
    "MODES",
    "MOST",
    "NAME",
    "NodeResourcesAllocatable",
    "NodeResourcesAllocatableArgs",
    "ResourceSpec",
    "allocatable_of",
    "default_resources",
    "go_div",
    "is_scalar_resource",
]
