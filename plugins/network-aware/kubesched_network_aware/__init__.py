"""Network-aware scheduling for kubesched: scheduler-plugins' TopologicalSort (QueueSort) and
NetworkOverhead (PreFilter, Filter, Score), over the AppGroup and NetworkTopology custom
resources, whose definitions ship in the package (``crds/``)."""

from pathlib import Path

from .appgroup import (
    APP_GROUP_LABEL,
    APP_GROUP_SELECTOR_LABEL,
    APP_GROUPS,
    Dependency,
    Scheduled,
    dependencies_of,
    find_pod_order,
    scheduled_of,
)
from .args import (
    DEFAULT_NETWORK_TOPOLOGY_NAME,
    DEFAULT_WEIGHTS_NAME,
    NETPERF_COSTS,
    NetworkOverheadArgs,
    TopologicalSortArgs,
)
from .costs import NETWORK_TOPOLOGIES, REGION_LABEL, ZONE_LABEL, CostTable
from .networkoverhead import MAX_COST, PRE_FILTER_STATE_KEY, SAME_HOSTNAME, SAME_ZONE, NetworkOverhead, PreFilterState
from .topologicalsort import TopologicalSort, priority_less

#: The folder of the two CustomResourceDefinitions (``kubectl apply -f`` it).
CRDS = Path(__file__).resolve().parent / "crds"
#: The AppGroup CustomResourceDefinition.
APP_GROUP_CRD = CRDS / "appgroup.diktyo.x-k8s.io_appgroups.yaml"
#: The NetworkTopology CustomResourceDefinition.
NETWORK_TOPOLOGY_CRD = CRDS / "networktopology.diktyo.x-k8s.io_networktopologies.yaml"

__all__ = [
    "APP_GROUPS",
    "APP_GROUP_CRD",
    "APP_GROUP_LABEL",
    "APP_GROUP_SELECTOR_LABEL",
    "CRDS",
    "DEFAULT_NETWORK_TOPOLOGY_NAME",
    "DEFAULT_WEIGHTS_NAME",
    "MAX_COST",
    "NETPERF_COSTS",
    "NETWORK_TOPOLOGIES",
    "NETWORK_TOPOLOGY_CRD",
    "PRE_FILTER_STATE_KEY",
    "REGION_LABEL",
    "SAME_HOSTNAME",
    "SAME_ZONE",
    "ZONE_LABEL",
    "CostTable",
    "Dependency",
    "NetworkOverhead",
    "NetworkOverheadArgs",
    "PreFilterState",
    "Scheduled",
    "TopologicalSort",
    "TopologicalSortArgs",
    "dependencies_of",
    "find_pod_order",
    "priority_less",
    "scheduled_of",
]
