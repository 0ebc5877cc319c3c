"""NetworkOverhead: Filter and Score nodes by the network cost to the pods a pod depends on.

scheduler-plugins' plugin of that name (``pkg/networkaware/networkoverhead``), point by point:

* **PreFilter** — for a pod of an AppGroup (label ``appgroup.diktyo.x-k8s.io``) whose workload
  has dependencies in the AppGroup's ``spec.workloads``: the pods of that AppGroup (in every
  namespace) already on a node are matched against the dependencies, and for every node of the
  snapshot it counts the dependencies the node would **satisfy** and **violate**, and the
  **accumulated cost** to them. Per placed pod of a depended-on workload, from a node in region
  ``R``/zone ``Z`` to the pod's node in ``R'``/``Z'``:

  ============================  ============================  =====================
  where the pod runs            satisfied / violated          cost added
  ============================  ============================  =====================
  the same node                 satisfied                     0
  a node with no region/zone    violated                      100 (MaxCost)
  same region, same zone        satisfied                     1 (SameZone)
  same region, other zone       cost ``Z -> Z'`` <= max:      cost ``Z -> Z'``
                                satisfied, above: violated,
                                no such cost: neither         (100 when unknown)
  other region                  the same with ``R -> R'``     cost ``R -> R'``
  ============================  ============================  =====================

  The costs are the NetworkTopology's (``networkTopologyName``, the weights named
  ``weightsName``), ``max`` the dependency's ``maxNetworkCost``. A pod outside any AppGroup,
  without dependencies, or whose AppGroup has no placed pod yet, is scored equally everywhere
  (PreFilter returns Success with upstream's reason). A placed pod on a node the snapshot does
  not know fails PreFilter with an Error (``pod hostname not found: ...``).
* **Filter** — a node violating more dependencies than it satisfies is Unschedulable: ``Node N
  does not meet several network requirements from Workload dependencies: Satisfied: S
  Violated: V``.
* **Score** — the node's accumulated cost (0 when scoring equally).
* **NormalizeScore** — lower cost, higher score: ``100 - 100 * (cost - min) / (max - min)``
  (truncated), every node 100 when all costs are equal (and left at 0 when all are 0).

AppGroups, NetworkTopologies and pods come through the scheduler's informers
(``handle.informer_for``). Upstream dereferences a missing AppGroup or NetworkTopology and
fails; here PreFilter returns an Error naming the object and where it was looked for.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kubesched import (
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    Code,
    CycleState,
    GroupVersionResource,
    Handle,
    KubeschedError,
    NodeInfo,
    NodeScore,
    PodInfo,
    Status,
)

from .appgroup import APP_GROUP_LABEL, APP_GROUPS, Dependency, Scheduled, dependencies_of, find_in_namespaces
from .appgroup import scheduled_of as scheduled_pods
from .args import NetworkOverheadArgs
from .costs import NETWORK_TOPOLOGIES, CostMap, CostTable, region_of, zone_of

NAME = "NetworkOverhead"
#: Cost to a dependency on a node without region and zone, or at a cost the topology lacks.
MAX_COST = 100
#: Cost to a dependency on the same node.
SAME_HOSTNAME = 0
#: Cost to a dependency in the same zone.
SAME_ZONE = 1
#: Where PreFilter leaves its state in the CycleState.
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
PODS = GroupVersionResource("", "v1", "pods")


@dataclass
class PreFilterState:
    """What PreFilter computed for the pod, per node name."""

    score_equally: bool = True
    app_group_name: str = ""
    dependencies: list[Dependency] = field(default_factory=list)
    scheduled: list[Scheduled] = field(default_factory=list)
    satisfied: dict[str, int] = field(default_factory=dict)
    violated: dict[str, int] = field(default_factory=dict)
    final_cost: dict[str, int] = field(default_factory=dict)

    def clone(self) -> PreFilterState:
        """Shared, not copied: nothing changes it after PreFilter (as upstream's)."""
        return self


class NodeNotFound(KubeschedError, LookupError):
    """A placed pod's node is not in the snapshot."""


class NetworkOverhead:
    """PreFilter, Filter, Score and NormalizeScore over the network costs (see the module doc)."""

    name = NAME
    Args = NetworkOverheadArgs

    def __init__(self, args: NetworkOverheadArgs | None = None, handle: Handle | None = None) -> None:
        self.args = args if args is not None else NetworkOverheadArgs.model_validate({})
        self.namespaces = list(self.args.namespaces)
        self.weights_name = self.args.weights_name
        self.network_topology_name = self.args.network_topology_name
        self.handle = handle
        informer_for = getattr(handle, "informer_for", None)
        self._app_groups: Any = informer_for(APP_GROUPS).lister if informer_for is not None else None
        self._topologies: Any = informer_for(NETWORK_TOPOLOGIES).lister if informer_for is not None else None
        self._pods: Any = informer_for(PODS).lister if informer_for is not None else None

    # --- what it reads ----------------------------------------------------------------------
    def _get(self, lister: Any, namespace: str, name: str) -> Mapping[str, Any] | None:
        if lister is None:
            return None
        found: Mapping[str, Any] | None = lister.get(namespace, name)
        return found

    def app_group(self, name: str) -> Mapping[str, Any] | None:
        return find_in_namespaces(lambda ns, n: self._get(self._app_groups, ns, n), self.namespaces, name)

    def network_topology(self) -> Mapping[str, Any] | None:
        return find_in_namespaces(
            lambda ns, n: self._get(self._topologies, ns, n), self.namespaces, self.network_topology_name
        )

    def app_group_pods(self, name: str) -> list[Mapping[str, Any]]:
        """The pods labelled with AppGroup ``name``, in every namespace."""
        pods: Iterable[Mapping[str, Any]] = self._pods.list() if self._pods is not None else ()
        return [p for p in pods if ((p.get("metadata") or {}).get("labels") or {}).get(APP_GROUP_LABEL) == name]

    def _node(self, name: str) -> NodeInfo:
        assert self.handle is not None
        try:
            return self.handle.snapshot().get(name)
        except KeyError:
            raise NodeNotFound(f'nodeinfo not found for node name "{name}"') from None

    # --- PreFilter --------------------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: PodInfo) -> Status | None:
        state.write(PRE_FILTER_STATE_KEY, PreFilterState())
        ag_name = pod.labels.get(APP_GROUP_LABEL) or ""
        if not ag_name:
            return Status(Code.SUCCESS, "Pod does not belong to an AppGroup, return")
        app_group = self.app_group(ag_name)
        if app_group is None:
            return Status(Code.ERROR, f'AppGroup "{ag_name}" not found in namespaces {self.namespaces}')
        topology = self.network_topology()
        if topology is None:
            return Status(
                Code.ERROR,
                f'NetworkTopology "{self.network_topology_name}" not found in namespaces {self.namespaces}',
            )
        table = CostTable(topology, self.weights_name)
        dependencies = dependencies_of(pod.pod, app_group)
        if not dependencies:
            return Status(Code.SUCCESS, "Pod has no dependencies, return")
        pods = self.app_group_pods(ag_name)
        if not pods:
            return Status(Code.SUCCESS, "No pods yet allocated, return")
        scheduled = scheduled_pods(pods)
        if not scheduled:
            return Status(Code.SUCCESS, "Scheduled list is empty, return")
        assert self.handle is not None
        computed = PreFilterState(False, ag_name, dependencies, scheduled)
        for node in self.handle.snapshot().list():
            region, zone = region_of(node.labels), zone_of(node.labels)
            costs = table.cost_map(region, zone)
            try:
                satisfied, violated = self.check_requirements(scheduled, dependencies, node.name, region, zone, costs)
            except NodeNotFound as exc:
                return Status(Code.ERROR, f"pod hostname not found: {exc}")
            computed.satisfied[node.name] = satisfied
            computed.violated[node.name] = violated
            try:
                cost = self.accumulated_cost(scheduled, dependencies, node.name, region, zone, costs)
            except NodeNotFound as exc:
                return Status(Code.ERROR, f"getting pod hostname from Snapshot: {exc}")
            computed.final_cost[node.name] = cost
        state.write(PRE_FILTER_STATE_KEY, computed)
        return Status(Code.SUCCESS, "PreFilter State updated")

    def check_requirements(
        self,
        scheduled: list[Scheduled],
        dependencies: list[Dependency],
        node_name: str,
        region: str,
        zone: str,
        costs: CostMap,
    ) -> tuple[int, int]:
        """How many dependencies a node in ``region``/``zone`` satisfies and violates
        (``checkMaxNetworkCostRequirements``)."""
        satisfied = violated = 0
        for placed in scheduled:
            for dep in dependencies:
                if placed.selector != dep.selector:
                    continue
                if placed.hostname == node_name:
                    satisfied += 1
                    continue
                other = self._node(placed.hostname)
                other_region, other_zone = region_of(other.labels), zone_of(other.labels)
                if not other_region and not other_zone:
                    violated += 1
                    continue
                if region == other_region:
                    if zone == other_zone:
                        satisfied += 1
                        continue
                    cost = costs.get((zone, other_zone))
                else:
                    cost = costs.get((region, other_region))
                if cost is not None:
                    if cost <= dep.max_network_cost:
                        satisfied += 1
                    else:
                        violated += 1
        return satisfied, violated

    def accumulated_cost(
        self,
        scheduled: list[Scheduled],
        dependencies: list[Dependency],
        node_name: str,
        region: str,
        zone: str,
        costs: CostMap,
    ) -> int:
        """The summed cost from a node to the placed pods of its dependencies (``getAccumulatedCost``)."""
        total = 0
        for placed in scheduled:
            for dep in dependencies:
                if placed.selector != dep.selector:
                    continue
                if placed.hostname == node_name:
                    total += SAME_HOSTNAME
                    continue
                other = self._node(placed.hostname)
                other_region, other_zone = region_of(other.labels), zone_of(other.labels)
                if not other_region and not other_zone:
                    total += MAX_COST
                elif region == other_region:
                    total += SAME_ZONE if zone == other_zone else costs.get((zone, other_zone), MAX_COST)
                else:
                    total += costs.get((region, other_region), MAX_COST)
        return total

    def add_pod(self, state: CycleState, pod: PodInfo, to_add: PodInfo, node: NodeInfo) -> Status | None:
        """Nothing to update (upstream's AddPod is empty too)."""
        return None

    def remove_pod(self, state: CycleState, pod: PodInfo, to_remove: PodInfo, node: NodeInfo) -> Status | None:
        """Nothing to update (upstream's RemovePod is empty too)."""
        return None

    # --- Filter -----------------------------------------------------------------------------
    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        if node.node is None:
            return Status(Code.ERROR, "node not found")
        computed = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(computed, PreFilterState):
            return Status(Code.ERROR, "not eligible due to failed to read from cycleState")
        if computed.score_equally:
            return None
        satisfied = computed.satisfied.get(node.name, 0)
        violated = computed.violated.get(node.name, 0)
        if violated > satisfied:
            return Status(
                Code.UNSCHEDULABLE,
                f"Node {node.name} does not meet several network requirements from Workload dependencies: "
                f"Satisfied: {satisfied} Violated: {violated}",
            )
        return None

    # --- Score ------------------------------------------------------------------------------
    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, Status | None]:
        computed = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(computed, PreFilterState):
            return MIN_NODE_SCORE, Status(
                Code.ERROR, "not eligible due to failed to read from cycleState, return min score"
            )
        if computed.score_equally:
            return MIN_NODE_SCORE, None
        return computed.final_cost.get(node.name, 0), None

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: list[NodeScore]) -> Status | None:
        """Lower costs get higher scores (see the module doc)."""
        normalize(scores)
        return None


def normalize(scores: list[NodeScore]) -> None:
    """Upstream's NormalizeScore, in place."""
    if not scores:
        return
    low = min(s.score for s in scores)
    high = max(s.score for s in scores)
    if low == 0 and high == 0:
        return
    for s in scores:
        if high != low:
            s.score = MAX_NODE_SCORE - int(MAX_NODE_SCORE * (s.score - low) / (high - low))
        else:
            s.score = MAX_NODE_SCORE - (s.score - low)
