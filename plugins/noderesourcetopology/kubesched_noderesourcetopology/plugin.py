"""NodeResourceTopologyMatch: NUMA-aware placement from each node's NodeResourceTopology.

The scheduler-plugins plugin of that name, point by point:

* **PreFilter** — nothing (see :meth:`NodeResourceTopologyMatch.pre_filter`).
* **Filter** — a node whose kubelet runs the ``single-numa-node`` topology-manager policy is
  refused when the pod (``pod`` scope) or one of its containers (``container`` scope) cannot get
  all it requests from one NUMA cell: ``cannot align pod`` / ``cannot align container`` (``cannot
  align init container`` / ``... sidecar container``). BestEffort pods that request no device
  are not checked; a Burstable pod's CPUs, memory and hugepages come from the shared pool, so
  only its devices are aligned. A node without a NodeResourceTopology passes; one whose object
  cannot be used is refused (``invalid node topology data``).
* **Score** — see :mod:`.score`; Guaranteed pods only.
* **Reserve / Unreserve / PostBind** — the reserve cache's accounting (:mod:`.cache`).
* **events** — a pod it refused is retried when a pod is deleted, a node is added or its
  allocatable changes, or a NodeResourceTopology is added or updated
  (``noderesourcetopologies.v1alpha2.topology.node.k8s.io``).

The objects come from the cluster through ``handle.informer_for``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubesched import (
    MAX_NODE_SCORE,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    EventResource,
    GroupVersionResource,
    Handle,
    KubeschedError,
    NodeInfo,
    PodInfo,
    Status,
)

from . import filter as nrt_filter
from . import score as nrt_score
from .args import NodeResourceTopologyMatchArgs
from .cache import DiscardReserved, OverReserve, Passthrough, TopologyCache
from .topology import (
    BEST_EFFORT,
    GUARANTEED,
    NodeTopology,
    has_exclusive_resources,
    includes_non_native,
    numa_nodes_of,
    topology_manager_of,
)

NAME = "NodeResourceTopologyMatch"
#: The NodeResourceTopology resource.
NODE_RESOURCE_TOPOLOGIES = GroupVersionResource("topology.node.k8s.io", "v1alpha2", "noderesourcetopologies")
PODS = GroupVersionResource("", "v1", "pods")
INVALID_TOPOLOGY = "invalid node topology data"

#: The profiles that run the plugin with its over-reserve cache: pods they place are not foreign
#: (one set for the process, as upstream keeps it).
PROFILE_NAMES: set[str] = set()


class NodeResourceTopologyMatch:
    """PreFilter, Filter, Score, Reserve/Unreserve and PostBind over the nodes' NUMA topology."""

    name = NAME
    Args = NodeResourceTopologyMatchArgs

    def __init__(self, args: NodeResourceTopologyMatchArgs | None = None, handle: Handle | None = None) -> None:
        self.args = args if args is not None else NodeResourceTopologyMatchArgs.model_validate({})
        self.handle = handle
        self.strategy_type = self.args.scoring_strategy.type
        self.weights = self.args.scoring_strategy.weights()
        #: NodeResourceTopology objects by node name, for a handle without informers (tests).
        self.objects: dict[str, Mapping[str, Any]] = {}
        self._lister: Any = None
        informer_for = getattr(handle, "informer_for", None)
        if informer_for is not None:
            informer = informer_for(NODE_RESOURCE_TOPOLOGIES)
            self._lister = informer.lister
            informer.add_event_handler(
                on_add=self._changed, on_update=lambda old, new: self._changed(new), on_delete=self._deleted
            )
        self.cache = self._make_cache()
        self.foreign_pods_detect = self.args.cache.foreign_pods_detect
        profile_name = getattr(handle, "profile_name", None)
        if isinstance(self.cache, OverReserve) and self.foreign_pods_detect != "None" and isinstance(profile_name, str):
            PROFILE_NAMES.add(profile_name)
            if informer_for is not None:
                informer_for(PODS).add_event_handler(
                    on_add=self.pod_seen, on_update=lambda old, new: self.pod_seen(new), on_delete=self.pod_seen
                )

    def _make_cache(self) -> TopologyCache:
        if self.args.discard_reserved_nodes:
            return DiscardReserved(self.lookup)
        if self.args.cache_resync_period_seconds <= 0:
            return Passthrough(self.lookup)
        return OverReserve(
            self.lookup,
            float(self.args.cache_resync_period_seconds),
            watch_config=self.args.cache.resync_scope == "All",
        )

    def lookup(self, node_name: str) -> Mapping[str, Any] | None:
        """The node's NodeResourceTopology object as the cluster has it now."""
        if self._lister is not None:
            found: Mapping[str, Any] | None = self._lister.get(None, node_name)
            return found
        return self.objects.get(node_name)

    def add_topology(self, obj: Mapping[str, Any]) -> None:
        """Give an object directly (a harness without informers)."""
        self.objects[str((obj.get("metadata") or {}).get("name") or "")] = obj
        self._changed(obj)

    def is_foreign(self, pod: Mapping[str, Any]) -> bool:
        """A pod on a node, placed by a scheduler that is none of this plugin's profiles (with
        ``foreignPodsDetect: OnlyExclusiveResources``, only one that has resources of its own:
        whole CPUs of a Guaranteed pod, memory, hugepages, devices the node's topology reports)."""
        spec = pod.get("spec") or {}
        node_name = spec.get("nodeName")
        if not node_name or (spec.get("schedulerName") or "default-scheduler") in PROFILE_NAMES:
            return False
        if self.foreign_pods_detect != "OnlyExclusiveResources":
            return True
        known = self.lookup(str(node_name))
        try:
            names = NodeTopology.of(known).resource_names() if known is not None else set()
            return has_exclusive_resources(pod, PodInfo(dict(pod)).qos_class, names)
        except (KubeschedError, ValueError):
            return True  # what cannot be read cannot be ruled out

    def pod_seen(self, pod: Mapping[str, Any]) -> None:
        if isinstance(self.cache, OverReserve) and self.foreign_pods_detect != "None" and self.is_foreign(pod):
            self.cache.node_has_foreign_pods(str((pod.get("spec") or {}).get("nodeName")))

    def _changed(self, obj: Mapping[str, Any]) -> None:
        if isinstance(self.cache, OverReserve):
            self.cache.updated(obj)

    def _deleted(self, obj: Mapping[str, Any]) -> None:
        if isinstance(self.cache, OverReserve):
            self.cache.forget(str((obj.get("metadata") or {}).get("name") or ""))

    # --- EnqueueExtensions ------------------------------------------------------------------
    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.POD, ActionType.DELETE)),
            ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE)),
            ClusterEventWithHint(
                ClusterEvent(NODE_RESOURCE_TOPOLOGIES.event_resource, ActionType.ADD | ActionType.UPDATE)
            ),
        ]

    # --- PreFilter --------------------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: PodInfo) -> Status | None:
        """Nothing to prepare (upstream's PreFilter only starts the preemption bookkeeping of
        ``preemptionMode: Enabled``); there so that configurations enabling it here load."""
        return None

    # --- Filter -----------------------------------------------------------------------------
    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        if node.node is None:
            return Status(Code.ERROR, "node not found")
        qos = pod.qos_class
        if qos == BEST_EFFORT and not includes_non_native(pod.pod):
            return None
        cached = self.cache.get(node.name, pod.pod)
        if not cached.fresh:
            return Status(
                Code.UNSCHEDULABLE, f"{INVALID_TOPOLOGY}: {cached.reason}" if cached.reason else INVALID_TOPOLOGY
            )
        if cached.topology is None:
            return None
        names = {"cpu", "memory", "pods", "ephemeral-storage", *node.allocatable.names()}
        names.update(str(k) for k in ((node.node.get("status") or {}).get("allocatable") or {}))
        info = nrt_filter.FilterInfo(names, topology_manager_of(cached.topology), numa_nodes_of(cached.topology), qos)
        status = nrt_filter.check(pod.pod, info)
        if status is not None:
            self.cache.node_maybe_over_reserved(node.name)
        return status

    # --- Score ------------------------------------------------------------------------------
    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, Status | None]:
        qos = pod.qos_class
        if qos != GUARANTEED:
            return MAX_NODE_SCORE, None
        cached = self.cache.get(node.name, pod.pod)
        if not cached.fresh or cached.topology is None:
            return 0, None
        conf = topology_manager_of(cached.topology)
        numa_nodes = numa_nodes_of(cached.topology)
        if self.strategy_type == nrt_score.LEAST_NUMA_NODES:
            return nrt_score.least_numa_score(pod.pod, qos, conf, numa_nodes), None
        strategy = nrt_score.STRATEGY_FUNCTIONS[self.strategy_type]
        return nrt_score.allocation_score(pod.pod, conf, numa_nodes, strategy, self.weights), None

    # --- Reserve / PostBind -------------------------------------------------------------------
    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        self.cache.reserve(node_name, pod.pod)
        return None

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        self.cache.unreserve(node_name, pod.pod)

    def post_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        self.cache.post_bind(node_name, pod.pod)
