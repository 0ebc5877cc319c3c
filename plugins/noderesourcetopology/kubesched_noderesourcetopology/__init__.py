"""NUMA-aware placement for kubesched: the scheduler-plugins NodeResourceTopologyMatch plugin."""

from pathlib import Path

from .args import NodeResourceTopologyCache, NodeResourceTopologyMatchArgs, ResourceSpec, ScoringStrategy
from .cache import CachedTopology, DiscardReserved, OverReserve, Passthrough
from .filter import CANNOT_ALIGN_CONTAINER, CANNOT_ALIGN_POD, FilterInfo
from .plugin import INVALID_TOPOLOGY, NAME, NODE_RESOURCE_TOPOLOGIES, NodeResourceTopologyMatch
from .topology import NodeTopology, NUMANode, TopologyDataError, TopologyManager, numa_nodes_of, topology_manager_of

#: The NodeResourceTopology CustomResourceDefinition shipped with the package.
CRD = Path(__file__).resolve().parent / "crds" / "topology.node.k8s.io_noderesourcetopologies.yaml"

__all__ = [
    "CANNOT_ALIGN_CONTAINER",
    "CANNOT_ALIGN_POD",
    "CRD",
    "INVALID_TOPOLOGY",
    "NAME",
    "NODE_RESOURCE_TOPOLOGIES",
    "CachedTopology",
    "DiscardReserved",
    "FilterInfo",
    "NUMANode",
    "NodeResourceTopologyCache",
    "NodeResourceTopologyMatch",
    "NodeResourceTopologyMatchArgs",
    "NodeTopology",
    "OverReserve",
    "Passthrough",
    "ResourceSpec",
    "ScoringStrategy",
    "TopologyDataError",
    "TopologyManager",
    "numa_nodes_of",
    "topology_manager_of",
]
