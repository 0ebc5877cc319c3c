"""CapacityScheduling: elastic quotas per namespace, with borrowing and reclaim by preemption.

The scheduler-plugins ``CapacityScheduling`` plugin. Each namespace may have one ElasticQuota
(``scheduling.x-k8s.io/v1alpha1``) with a guaranteed ``min`` and a ceiling ``max``. A namespace
may use more than its ``min`` (it borrows what other namespaces leave unused) as long as it stays
under its ``max`` and the quotas together stay within the sum of all ``min``; when a namespace
then wants back what it is guaranteed, pods of namespaces that use more than their ``min`` are
preempted.

Point by point:

* **PreFilter** — takes a snapshot of the quotas for the cycle. A pod of a namespace with a quota
  is Unschedulable when its namespace would exceed ``max`` (counting the pods of the namespace
  nominated to nodes with at least its priority), or when the quotas together would exceed the
  sum of the ``min`` (counting also the nominated pods of namespaces within their ``min``).
  AddPod/RemovePod keep the cycle's snapshot in step when preemption simulates evictions.
* **PostFilter** — preemption: the face's ``PreemptionEvaluator`` (upstream's evaluator) over
  this plugin's hooks (:class:`QuotaPreemption`: eligibility and victim selection; every node
  is tried; victims are evicted in the cycle, not asynchronously). A pod whose namespace would
  stay within its ``min`` may evict pods of *other* namespaces that use more than theirs
  (reclaim); one whose namespace is past its ``min`` may evict only lower-priority pods of its
  own namespace. A pod of a namespace without a quota may evict lower-priority pods of
  namespaces without one.
* **Reserve/Unreserve** — count the pod in (out of) its namespace's ``used``.
* **events** — a rejected pod is retried when an assigned pod is deleted or an ElasticQuota
  changes (``elasticquotas.v1alpha1.scheduling.x-k8s.io``).

The quotas come from the cluster through ``handle.informer_for`` (the ElasticQuota CRD's
objects); the assigned pods of each namespace are counted as the pod informer reports them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kubesched import (
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
    PostFilterResult,
    PreemptionCandidate,
    PreemptionEvaluator,
    PreemptionInterface,
    Resource,
    Status,
)

from .elasticquota import ElasticQuotaInfo, ElasticQuotaInfos, compute_pod_resource_request

NAME = "CapacityScheduling"

#: The ElasticQuota resource (scheduler-plugins' CRD).
ELASTIC_QUOTAS = GroupVersionResource("scheduling.x-k8s.io", "v1alpha1", "elasticquotas")
#: Pods, for the usage of each namespace.
PODS = GroupVersionResource("", "v1", "pods")

#: CycleState keys: what PreFilter computed, and the cycle's copy of the quotas.
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
ELASTIC_QUOTA_SNAPSHOT_KEY = "ElasticQuotaSnapshot"

NOT_ELIGIBLE_NEVER = "not eligible due to preemptionPolicy=Never."
NOT_ELIGIBLE_TERMINATING = "not eligible due to a terminating pod on the nominated node."
NOT_ELIGIBLE_NO_STATE = "not eligible due to failed to read from cycleState"
GLOBAL_QUOTA_EXCEEDED = "global quota max exceeded"


@dataclass
class PreFilterState:
    """What PreFilter computed for the pod, read by PostFilter.

    ``nominated_in_eq_with_pod_req``: the pod's request plus those of the pods of its namespace
    nominated to a node with at least its priority. ``nominated_with_pod_req``: that, plus the
    nominated pods of other namespaces whose quota is within its ``min``."""

    pod_req: Resource
    nominated_in_eq_with_pod_req: Resource
    nominated_with_pod_req: Resource

    def clone(self) -> PreFilterState:
        return self  # never changed after PreFilter


@dataclass
class ElasticQuotaSnapshotState:
    """The cycle's copy of the quotas (AddPod/RemovePod change it while preemption simulates)."""

    elastic_quota_infos: ElasticQuotaInfos

    def clone(self) -> ElasticQuotaSnapshotState:
        return ElasticQuotaSnapshotState(self.elastic_quota_infos.clone())


def _is_success(status: Status | None) -> bool:
    return status is None or status.code is Code.SUCCESS


def _assigned(pod: Mapping[str, Any]) -> bool:
    return bool((pod.get("spec") or {}).get("nodeName"))


def _phase(pod: Mapping[str, Any]) -> str:
    return str((pod.get("status") or {}).get("phase") or "")


def _namespace(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("namespace") or "default")


class CapacitySchedulingError(KubeschedError):
    """A cycle's state is missing what PreFilter writes (PreFilter did not run)."""


def pre_filter_state(state: CycleState) -> PreFilterState:
    found = state.get(PRE_FILTER_STATE_KEY)
    if not isinstance(found, PreFilterState):
        raise CapacitySchedulingError(f'error reading "{PRE_FILTER_STATE_KEY}" from cycleState')
    return found


def snapshot_state(state: CycleState) -> ElasticQuotaSnapshotState:
    found = state.get(ELASTIC_QUOTA_SNAPSHOT_KEY)
    if not isinstance(found, ElasticQuotaSnapshotState):
        raise CapacitySchedulingError(f'error reading "{ELASTIC_QUOTA_SNAPSHOT_KEY}" from cycleState')
    return found


class CapacityScheduling:
    """PreFilter (with AddPod/RemovePod), PostFilter, Reserve/Unreserve over elastic quotas."""

    name = NAME

    def __init__(self, args: Any = None, handle: Handle | None = None) -> None:
        self.handle = handle
        #: The quotas by namespace, with what the pods placed in each use.
        self.elastic_quota_infos = ElasticQuotaInfos()
        self._quota_lister: Any = None
        # A handle without informers (a bare test harness) leaves the quotas to be given
        # through add_elastic_quota and the pods through add_pod.
        informer_for = getattr(handle, "informer_for", None)
        if informer_for is not None:
            quotas = informer_for(ELASTIC_QUOTAS)
            self._quota_lister = quotas.lister
            quotas.add_event_handler(
                on_add=self.add_elastic_quota,
                on_update=self.update_elastic_quota,
                on_delete=self.delete_elastic_quota,
            )
            pods = informer_for(PODS)
            pods.add_event_handler(on_add=self._pod_added, on_update=self._pod_updated, on_delete=self._pod_deleted)

    # --- EnqueueExtensions ------------------------------------------------------------------
    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.POD, ActionType.DELETE)),
            ClusterEventWithHint(ClusterEvent(ELASTIC_QUOTAS.event_resource, ActionType.ALL)),
        ]

    # --- PreFilter ----------------------------------------------------------------------------
    def snapshot_elastic_quota(self) -> ElasticQuotaSnapshotState:
        return ElasticQuotaSnapshotState(self.elastic_quota_infos.clone())

    def pre_filter(self, state: CycleState, pod: PodInfo) -> Status | None:
        snapshot = self.snapshot_elastic_quota()
        pod_req = compute_pod_resource_request(pod)
        state.write(ELASTIC_QUOTA_SNAPSHOT_KEY, snapshot)
        infos = snapshot.elastic_quota_infos
        eq = infos.get(pod.namespace)
        if eq is None:
            state.write(PRE_FILTER_STATE_KEY, PreFilterState(pod_req, Resource(), Resource()))
            return None

        in_eq = Resource()
        total = Resource()
        if self.handle is not None:
            for node in self.handle.snapshot().list():
                for p in self.handle.nominator.nominated_pods_for_node(node.name):
                    if p.uid == pod.uid:
                        continue
                    info = self.elastic_quota_infos.get(p.namespace)
                    if info is None:
                        continue
                    request = compute_pod_resource_request(p)
                    if p.namespace == pod.namespace and p.priority >= pod.priority:
                        in_eq.add_resource(request)
                        total.add_resource(request)
                    elif p.namespace != pod.namespace and not info.used_over_min():
                        total.add_resource(request)
        in_eq.add_resource(pod_req)
        total.add_resource(pod_req)
        state.write(PRE_FILTER_STATE_KEY, PreFilterState(pod_req, in_eq, total))

        if eq.used_over_max_with(in_eq):
            return Status(
                Code.UNSCHEDULABLE,
                f"Pod {pod.namespace}/{pod.name} is rejected in PreFilter because ElasticQuota "
                f"{eq.namespace} is more than Max",
            )
        if infos.aggregated_used_over_min_with(total):
            return Status(
                Code.UNSCHEDULABLE,
                f"Pod {pod.namespace}/{pod.name} is rejected in PreFilter because total ElasticQuota used is more than min",
            )
        return None

    # --- PreFilterExtensions --------------------------------------------------------------------
    def add_pod(self, state: CycleState, pod: PodInfo, to_add: PodInfo, node: NodeInfo) -> Status | None:
        info = snapshot_state(state).elastic_quota_infos.get(to_add.namespace)
        if info is not None:
            info.add_pod_if_not_present(to_add)
        return None

    def remove_pod(self, state: CycleState, pod: PodInfo, to_remove: PodInfo, node: NodeInfo) -> Status | None:
        info = snapshot_state(state).elastic_quota_infos.get(to_remove.namespace)
        if info is not None:
            info.delete_pod_if_present(to_remove)
        return None

    # --- PostFilter -----------------------------------------------------------------------------
    async def post_filter(
        self, state: CycleState, pod: PodInfo, filtered_statuses: Mapping[str, Status]
    ) -> tuple[PostFilterResult | None, Status]:
        return await QuotaPreemption(self.handle, state).preempt(pod, filtered_statuses)

    # --- Reserve --------------------------------------------------------------------------------
    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        info = self.elastic_quota_infos.get(pod.namespace)
        if info is not None:
            info.add_pod_if_not_present(pod)
        return None

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        info = self.elastic_quota_infos.get(pod.namespace)
        if info is not None:
            info.delete_pod_if_present(pod)

    # --- ElasticQuota events --------------------------------------------------------------------
    def add_elastic_quota(self, quota: Mapping[str, Any]) -> None:
        """A quota appeared; one already known for its namespace is kept (one per namespace)."""
        namespace = _namespace(quota)
        if namespace in self.elastic_quota_infos:
            return
        self.elastic_quota_infos[namespace] = ElasticQuotaInfo.of(quota)

    def update_elastic_quota(self, old: Mapping[str, Any], new: Mapping[str, Any]) -> None:
        """New bounds; what the namespace uses, and its pods, carry over."""
        info = ElasticQuotaInfo.of(new)
        before = self.elastic_quota_infos.get(_namespace(old))
        if before is not None:
            info.pods = before.pods
            info.used = before.used
        self.elastic_quota_infos[info.namespace] = info

    def delete_elastic_quota(self, quota: Mapping[str, Any]) -> None:
        self.elastic_quota_infos.pop(_namespace(quota), None)

    # --- pod events (assigned pods) -------------------------------------------------------------
    def add_pod_to_quota(self, pod: Mapping[str, Any]) -> None:
        """An assigned pod: count it in its namespace's quota. A quota not known yet is looked up
        among the cluster's ElasticQuotas of the namespace (the first one)."""
        namespace = _namespace(pod)
        info = self.elastic_quota_infos.get(namespace)
        if info is None:
            quotas = self._quota_lister.list(namespace) if self._quota_lister is not None else []
            if not quotas:
                return
            info = ElasticQuotaInfo.of(quotas[0])
            self.elastic_quota_infos[info.namespace] = info
        info.add_pod_if_not_present(pod)

    def update_pod_in_quota(self, old: Mapping[str, Any], new: Mapping[str, Any]) -> None:
        """A pod that finished (neither Running nor Pending any more) no longer counts."""
        if _phase(old) in ("Succeeded", "Failed"):
            return
        if _phase(new) not in ("Running", "Pending"):
            info = self.elastic_quota_infos.get(_namespace(new))
            if info is not None:
                info.delete_pod_if_present(new)

    def delete_pod_from_quota(self, pod: Mapping[str, Any]) -> None:
        info = self.elastic_quota_infos.get(_namespace(pod))
        if info is not None:
            info.delete_pod_if_present(pod)

    # Only assigned pods are of interest: a pod becoming assigned is an add, one that stops
    # being assigned a delete (as a filtering event handler delivers them).
    def _pod_added(self, pod: Mapping[str, Any]) -> None:
        if _assigned(pod):
            self.add_pod_to_quota(pod)

    def _pod_updated(self, old: Mapping[str, Any], new: Mapping[str, Any]) -> None:
        was, now = _assigned(old), _assigned(new)
        if was and now:
            self.update_pod_in_quota(old, new)
        elif now:
            self.add_pod_to_quota(new)
        elif was:
            self.delete_pod_from_quota(old)

    def _pod_deleted(self, pod: Mapping[str, Any]) -> None:
        if _assigned(pod):
            self.delete_pod_from_quota(pod)


# --- preemption ---------------------------------------------------------------------------------

#: A node the preemptor could be nominated to, with its victims (the face's PreemptionCandidate).
Candidate = PreemptionCandidate


class QuotaPreemption(PreemptionInterface):
    """CapacityScheduling's hooks for upstream's preemption evaluator (its ``preemptor``), for
    one cycle (``state``): its own eligibility and choice of victims; every node where preemption
    might help is tried (no sampling); the best candidate is chosen as kube-scheduler chooses;
    victims are evicted in the cycle (no async preemption), as upstream's plugin does."""

    def __init__(self, handle: Any, state: CycleState) -> None:
        self.handle = handle
        self.state = state
        self.evaluator = PreemptionEvaluator(NAME, handle, self, async_preemption=False)

    async def preempt(
        self, pod: PodInfo, filtered_statuses: Mapping[str, Status | None]
    ) -> tuple[PostFilterResult | None, Status]:
        """The evaluator's ``Preempt`` over these hooks (messages without a prefix)."""
        return await self.evaluator.preempt(self.state, pod, filtered_statuses)

    def get_offset_and_num_candidates(self, num_nodes: int, pod: PodInfo | None = None) -> tuple[int, int]:
        """From the first node, until every node is tried."""
        return 0, num_nodes

    # --- eligibility ------------------------------------------------------------------------
    def pod_eligible_to_preempt_others(self, pod: PodInfo, nominated_node_status: Status | None) -> tuple[bool, str]:
        """Not with ``preemptionPolicy: Never``. Not while, on the node it is nominated to, a
        pod it may have preempted is still terminating: one of its own namespace with lower
        priority, or (when its namespace is within its ``min``) one of a namespace over its
        ``min``; without a quota, a lower-priority pod of a namespace without one."""
        if pod.preemption_policy == "Never":
            return False, NOT_ELIGIBLE_NEVER
        try:
            pf = pre_filter_state(self.state)
        except CapacitySchedulingError:
            return False, NOT_ELIGIBLE_NO_STATE
        nominated = ((pod.pod.get("status") or {}).get("nominatedNodeName")) or ""
        if not nominated:
            return True, ""
        if nominated_node_status is not None and nominated_node_status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
            return True, ""
        try:
            infos = snapshot_state(self.state).elastic_quota_infos
        except CapacitySchedulingError:
            return True, ""
        try:
            node = self.handle.snapshot().get(nominated)
        except Exception:  # noqa: BLE001 - the nominated node may be gone from the snapshot
            node = None
        if node is None:
            return True, ""
        own = infos.get(pod.namespace)
        if own is not None:
            more_than_min = own.used_over_min_with(pf.nominated_in_eq_with_pod_req)
            for p in node.pods:
                if not p.deleting:
                    continue
                info = infos.get(p.namespace)
                if info is None:
                    continue
                if p.namespace == pod.namespace and p.priority < pod.priority:
                    return False, NOT_ELIGIBLE_TERMINATING
                if p.namespace != pod.namespace and not more_than_min and info.used_over_min():
                    return False, NOT_ELIGIBLE_TERMINATING
        else:
            for p in node.pods:
                if p.namespace in infos:
                    continue
                if p.deleting and p.priority < pod.priority:
                    return False, NOT_ELIGIBLE_TERMINATING
        return True, ""

    # --- candidates ---------------------------------------------------------------------------
    async def dry_run_preemption(
        self, pod: PodInfo, nodes: Sequence[NodeInfo], pdbs: Sequence[Mapping[str, Any]]
    ) -> tuple[list[Candidate], dict[str, Status], list[str]]:
        """The evaluator's dry run on every node of ``nodes``: the candidates (those violating
        no PodDisruptionBudget first), the status of every other node, the errors."""
        offset, num = self.get_offset_and_num_candidates(len(nodes), pod)
        candidates, statuses, error = await self.evaluator.dry_run_preemption(self.state, pod, nodes, pdbs, offset, num)
        return candidates, statuses, [error] if error else []

    async def select_victims_on_node(
        self, state: CycleState, pod: PodInfo, node: NodeInfo, pdbs: Sequence[Mapping[str, Any]]
    ) -> tuple[list[PodInfo], int, Status | None]:
        """The pods to evict from ``node`` (a copy, as is ``state``) for ``pod`` to fit both the
        node and the quotas, most important first, and how many violate a PodDisruptionBudget.

        Potential victims: when the preemptor's namespace, with the pod, would exceed its
        ``min``, the lower-priority pods of its own namespace; otherwise the pods of other
        namespaces that use more than their ``min``. For a pod without a quota: lower-priority
        pods of namespaces without one. All are removed; then each is given back, most
        important first, while the pod still fits and the quotas still hold."""
        try:
            infos = snapshot_state(state).elastic_quota_infos
        except CapacitySchedulingError:
            return [], 0, Status(Code.UNSCHEDULABLE, "Failed to read elasticQuotaSnapshot from cycleState")
        try:
            pf = pre_filter_state(state)
        except CapacitySchedulingError:
            return [], 0, Status(Code.UNSCHEDULABLE, "Failed to read preFilterState from cycleState")

        own = infos.get(pod.namespace)
        in_eq = pf.nominated_in_eq_with_pod_req
        total = pf.nominated_with_pod_req
        potential: list[PodInfo] = []
        if own is not None:
            more_than_min = own.used_over_min_with(in_eq)
            for p in node.pods:
                info = infos.get(p.namespace)
                if info is None:
                    continue
                if more_than_min:
                    # Past its min: only lower-priority pods of its own namespace.
                    chosen = p.namespace == pod.namespace and p.priority < pod.priority
                else:
                    # Within its min: reclaim from namespaces that borrow.
                    chosen = p.namespace != pod.namespace and info.used_over_min()
                if chosen:
                    potential.append(p)
        else:
            potential = [p for p in node.pods if p.namespace not in infos and p.priority < pod.priority]
        evaluator = self.evaluator
        error = await evaluator.remove_victims(state, pod, node, potential)
        if error is not None:
            return [], 0, error

        if not potential:
            return (
                [],
                0,
                Status(
                    Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                    f"No victims found on node {node.name} for preemptor pod {pod.name}",
                ),
            )

        status = await self.handle.run_filter_with_nominated_pods(state, pod, node)
        if not _is_success(status):
            return [], 0, status
        if own is None:
            return await evaluator.reprieve_victims(state, pod, node, potential, pdbs)
        if own.used_over_max_with(pf.pod_req) or infos.aggregated_used_over_min_with(pf.pod_req):
            return [], 0, Status(Code.UNSCHEDULABLE, GLOBAL_QUOTA_EXCEEDED)

        # A pod given back must leave room on the node and within the quotas. (Upstream checks
        # the quotas even after the node refused, evicting the pod a second time; once is enough.)
        def within_quotas() -> bool:
            return not (own.used_over_max_with(in_eq) or infos.aggregated_used_over_min_with(total))

        return await evaluator.reprieve_victims(state, pod, node, potential, pdbs, within_quotas)


def select_candidate(candidates: Sequence[Candidate], now: float | None = None) -> Candidate | None:
    """kube-scheduler's choice among candidates (see ``PreemptionEvaluator.pick_one_node_for_preemption``):
    fewest PDB violations; lowest priority of the most important victim; smallest sum of victim
    priorities; fewest victims; latest start among the highest-priority victims; the first."""
    by_node = {c.name: c for c in candidates}
    if not by_node:
        return None
    return by_node.get(PreemptionEvaluator.pick_one_node_for_preemption(by_node, None, now), candidates[0])
