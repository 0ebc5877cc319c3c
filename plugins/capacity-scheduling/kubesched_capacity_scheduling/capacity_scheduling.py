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
* **PostFilter** — preemption, upstream's evaluator with this plugin's victim selection: a pod
  whose namespace would stay within its ``min`` may evict pods of *other* namespaces that use
  more than theirs (reclaim); one whose namespace is past its ``min`` may evict only
  lower-priority pods of its own namespace. A pod of a namespace without a quota may evict
  lower-priority pods of namespaces without one.
* **Reserve/Unreserve** — count the pod in (out of) its namespace's ``used``.
* **events** — a rejected pod is retried when an assigned pod is deleted or an ElasticQuota
  changes (``elasticquotas.v1alpha1.scheduling.x-k8s.io``).

The quotas come from the cluster through ``handle.informer_for`` (the ElasticQuota CRD's
objects); the assigned pods of each namespace are counted as the pod informer reports them.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
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
    Resource,
    Status,
)

from .elasticquota import ElasticQuotaInfo, ElasticQuotaInfos, compute_pod_resource_request

log = logging.getLogger(__name__)

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
PREEMPTION_NOT_HELPFUL = "Preemption is not helpful for scheduling"
GLOBAL_QUOTA_EXCEEDED = "global quota max exceeded"

_DISRUPTION_TARGET = "DisruptionTarget"
_PREEMPTION_BY_SCHEDULER = "PreemptionByScheduler"
_MAX_INT32 = 2**31 - 1


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
        self, state: CycleState, pod: PodInfo, filtered_statuses: dict[str, Status]
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


@dataclass
class Candidate:
    """A node the preemptor could be nominated to, with the pods to evict there (most
    important first) and how many of them a PodDisruptionBudget protects."""

    name: str
    victims: list[PodInfo]
    num_pdb_violations: int = 0


class QuotaPreemption:
    """Upstream's preemption evaluator with CapacityScheduling's choice of victims, for one
    cycle (``state``): every node where preemption might help is tried (no sampling), and the
    best candidate is chosen as kube-scheduler chooses."""

    def __init__(self, handle: Any, state: CycleState) -> None:
        self.handle = handle
        self.state = state

    async def preempt(
        self, pod: PodInfo, filtered_statuses: Mapping[str, Status | None]
    ) -> tuple[PostFilterResult | None, Status]:
        nominated = ((pod.pod.get("status") or {}).get("nominatedNodeName")) or ""
        nominated_status = (
            filtered_statuses[nominated]
            if nominated in filtered_statuses
            else Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE)
        )
        eligible, why = self.pod_eligible_to_preempt_others(pod, nominated_status)
        if not eligible:
            return None, Status(Code.UNSCHEDULABLE, why)

        all_nodes = list(self.handle.snapshot().list())
        if not all_nodes:
            return None, Status(Code.ERROR, "no nodes available")
        potential = [
            n for n in all_nodes if (st := filtered_statuses.get(n.name)) is not None and st.code is Code.UNSCHEDULABLE
        ]
        candidates: list[Candidate] = []
        statuses: dict[str, Status] = {}
        errors: list[str] = []
        if potential:
            pdbs = list(self.handle.listers.list("PodDisruptionBudget"))
            candidates, statuses, errors = await self.dry_run_preemption(pod, potential, pdbs)
        if errors and not candidates:
            unique = list(dict.fromkeys(errors))
            return None, Status(Code.ERROR, unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]")
        if not candidates:
            return PostFilterResult(""), Status(Code.UNSCHEDULABLE, _fit_error(len(all_nodes), statuses))

        via_extenders = getattr(self.handle, "preempt_with_extenders", None)
        if via_extenders is not None:
            try:
                kept = await via_extenders(pod, {c.name: (c.victims, c.num_pdb_violations) for c in candidates})
            except Exception as exc:  # noqa: BLE001 - an extender failure fails this preemption
                return None, Status(Code.ERROR, str(exc))
            candidates = [Candidate(c.name, *kept[c.name]) for c in candidates if c.name in kept]

        best = select_candidate(candidates)
        if best is None or not best.name:
            return None, Status(Code.UNSCHEDULABLE, "no candidate node for preemption")
        status = await self.prepare_candidate(best, pod)
        if not _is_success(status):
            assert status is not None
            return None, status
        return PostFilterResult(best.name), Status(Code.SUCCESS)

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
        """Select victims on a copy of each node (and of the cycle state): the candidates (those
        violating no PodDisruptionBudget first), the status of every other node, the errors."""
        non_violating: list[Candidate] = []
        violating: list[Candidate] = []
        statuses: dict[str, Status] = {}
        errors: list[str] = []
        for node in nodes:
            victims, num_violations, status = await self.select_victims_on_node(
                self.state.clone(), pod, node.clone(), pdbs
            )
            if _is_success(status) and victims:
                (non_violating if num_violations == 0 else violating).append(
                    Candidate(node.name, victims, num_violations)
                )
                continue
            if _is_success(status):
                status = Status(Code.ERROR, f'expected at least one victim pod on node "{node.name}"')
            assert status is not None
            if status.code is Code.ERROR:
                errors.append(status.message())
            statuses[node.name] = status
        return non_violating + violating, statuses, errors

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
        handle = self.handle
        try:
            infos = snapshot_state(state).elastic_quota_infos
        except CapacitySchedulingError:
            return [], 0, Status(Code.UNSCHEDULABLE, "Failed to read elasticQuotaSnapshot from cycleState")
        try:
            pf = pre_filter_state(state)
        except CapacitySchedulingError:
            return [], 0, Status(Code.UNSCHEDULABLE, "Failed to read preFilterState from cycleState")

        async def remove(p: PodInfo) -> Status | None:
            node.remove_pod(p)
            status: Status | None = await handle.run_pre_filter_remove_pod(state, pod, p, node)
            return status

        async def add(p: PodInfo) -> Status | None:
            node.add_pod(p)
            status: Status | None = await handle.run_pre_filter_add_pod(state, pod, p, node)
            return status

        own = infos.get(pod.namespace)
        in_eq = pf.nominated_in_eq_with_pod_req
        total = pf.nominated_with_pod_req
        potential: list[PodInfo] = []
        if own is not None:
            more_than_min = own.used_over_min_with(in_eq)
            for p in sorted(node.pods, key=_importance_key(time.time()), reverse=True):
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
                    st = await remove(p)
                    if not _is_success(st):
                        return [], 0, _as_error(st)
        else:
            for p in list(node.pods):
                if p.namespace in infos:
                    continue
                if p.priority < pod.priority:
                    potential.append(p)
                    st = await remove(p)
                    if not _is_success(st):
                        return [], 0, _as_error(st)

        if not potential:
            return (
                [],
                0,
                Status(
                    Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                    f"No victims found on node {node.name} for preemptor pod {pod.name}",
                ),
            )

        status = await handle.run_filter_with_nominated_pods(state, pod, node)
        if not _is_success(status):
            return [], 0, status
        if own is not None and (own.used_over_max_with(pf.pod_req) or infos.aggregated_used_over_min_with(pf.pod_req)):
            return [], 0, Status(Code.UNSCHEDULABLE, GLOBAL_QUOTA_EXCEEDED)

        now = time.time()
        potential.sort(key=_importance_key(now))
        violating, non_violating = filter_pods_with_pdb_violation(potential, pdbs)
        victims: list[PodInfo] = []

        async def reprieve(p: PodInfo) -> bool:
            st = await add(p)
            if not _is_success(st):
                raise _ReprieveError(_as_error(st))
            fits = _is_success(await handle.run_filter_with_nominated_pods(state, pod, node))
            # A pod given back must leave room on the node and within the quotas. (Upstream
            # checks the quotas even after the node refused, evicting the pod a second time;
            # once is enough.)
            if not fits or (
                own is not None and (own.used_over_max_with(in_eq) or infos.aggregated_used_over_min_with(total))
            ):
                st = await remove(p)
                if not _is_success(st):
                    raise _ReprieveError(_as_error(st))
                victims.append(p)
            return fits

        num_violating = 0
        try:
            for p in violating:
                if not await reprieve(p):
                    num_violating += 1
            for p in non_violating:
                await reprieve(p)
        except _ReprieveError as exc:
            return [], 0, exc.status

        if violating and non_violating:
            victims.sort(key=_importance_key(now))
        return victims, num_violating, Status(Code.SUCCESS)

    # --- evicting -----------------------------------------------------------------------------
    async def prepare_candidate(self, c: Candidate, pod: PodInfo) -> Status | None:
        """Evict the victims (a victim waiting at Permit is rejected in memory), then clear the
        nomination of lower-priority pods nominated to the node."""
        handle = self.handle
        cluster = handle.cluster
        for victim in c.victims:
            if victim.deleting:
                continue
            try:
                await self._preempt_pod(c, pod, victim)
            except Exception as exc:  # noqa: BLE001 - an API failure fails this attempt
                return Status.as_error(exc)
        if cluster is None:
            return None
        for p in handle.nominator.nominated_pods_for_node(c.name):
            if p.priority >= pod.priority:
                continue
            try:
                await cluster.set_nominated_node_name(p.pod, "")
            except Exception:
                log.warning("cannot clear nominatedNodeName of pod %s", p.key, exc_info=True)
        return None

    async def _preempt_pod(self, c: Candidate, preemptor: PodInfo, victim: PodInfo) -> None:
        handle = self.handle
        cluster = handle.cluster
        message = f"Preempted by pod {preemptor.uid} on node {c.name}"
        waiting = handle.get_waiting_pod(victim.uid)
        if waiting is not None and waiting.preempt(NAME, "preempted"):
            message += " (in kube-scheduler memory)."
        elif cluster is not None:
            condition = {
                "type": _DISRUPTION_TARGET,
                "status": "True",
                "reason": _PREEMPTION_BY_SCHEDULER,
                "message": f"{preemptor.scheduler_name}: preempting to accommodate a higher priority pod",
            }
            update = getattr(cluster, "update_pod_condition", None)
            try:
                if update is not None:
                    await update(victim.pod, condition)
                await cluster.delete_pod(victim.pod)
            except Exception as exc:
                if getattr(exc, "code", None) != 404:
                    raise
                return  # already gone
        if cluster is not None:
            await cluster.record_event(victim.pod, "Normal", "Preempted", "Preempting", message, handle.profile_name)


class _ReprieveError(KubeschedError):
    def __init__(self, status: Status) -> None:
        super().__init__(status.message())
        self.status = status


def _as_error(status: Status | None) -> Status:
    assert status is not None
    if status.code is Code.ERROR:
        return status
    return Status(Code.ERROR, status.message(), plugin=status.plugin)


# --- ordering, budgets, choosing ----------------------------------------------------------------


def _start_time(p: PodInfo, now: float) -> float:
    raw = (p.pod.get("status") or {}).get("startTime")
    if not raw:
        return now
    return datetime.fromisoformat(str(raw).replace("Z", "+00:00")).timestamp()


def _importance_key(now: float) -> Any:
    """Most important first: higher priority, then the pod that started earlier."""

    def key(p: PodInfo) -> tuple[int, float]:
        return (-p.priority, _start_time(p, now))

    return key


def _selector_matches(selector: Mapping[str, Any] | None, labels: Mapping[str, str]) -> bool:
    """A PodDisruptionBudget's selector; a missing or empty one (or one that cannot be read)
    matches nothing."""
    if not selector:
        return False
    match_labels = selector.get("matchLabels") or {}
    expressions = selector.get("matchExpressions") or []
    if not match_labels and not expressions:
        return False
    if any(labels.get(k) != v for k, v in match_labels.items()):
        return False
    for e in expressions:
        key, op, values = e.get("key"), e.get("operator"), e.get("values") or []
        if op == "In" and labels.get(key) not in values:
            return False
        if op == "NotIn" and key in labels and labels[key] in values:
            return False
        if op == "Exists" and key not in labels:
            return False
        if op == "DoesNotExist" and key in labels:
            return False
        if op not in ("In", "NotIn", "Exists", "DoesNotExist"):
            return False
    return True


def filter_pods_with_pdb_violation(
    pods: Sequence[PodInfo], pdbs: Sequence[Mapping[str, Any]]
) -> tuple[list[PodInfo], list[PodInfo]]:
    """Split ``pods`` (in order) into those whose eviction would violate a PodDisruptionBudget
    and the rest, spending each budget's ``disruptionsAllowed`` as pods are walked; a pod the
    budget already lists in ``disruptedPods`` spends nothing."""
    allowed = [int((pdb.get("status") or {}).get("disruptionsAllowed") or 0) for pdb in pdbs]
    violating: list[PodInfo] = []
    non_violating: list[PodInfo] = []
    for p in pods:
        violated = False
        if p.labels:
            for i, pdb in enumerate(pdbs):
                if _namespace(pdb) != p.namespace:
                    continue
                if not _selector_matches((pdb.get("spec") or {}).get("selector"), p.labels):
                    continue
                if p.name in ((pdb.get("status") or {}).get("disruptedPods") or {}):
                    continue
                allowed[i] -= 1
                if allowed[i] < 0:
                    violated = True
        (violating if violated else non_violating).append(p)
    return violating, non_violating


def select_candidate(candidates: Sequence[Candidate], now: float | None = None) -> Candidate | None:
    """kube-scheduler's choice among candidates, each criterion breaking the ties of the one
    before: fewest PDB violations; lowest priority of the most important victim; smallest sum
    of victim priorities; fewest victims; latest start among the highest-priority victims;
    the first."""
    if not candidates:
        return None
    now = time.time() if now is None else now

    def latest_start(c: Candidate) -> float:
        top = max(p.priority for p in c.victims)
        return min(_start_time(p, now) for p in c.victims if p.priority == top)

    criteria = [
        lambda c: -c.num_pdb_violations,
        lambda c: -c.victims[0].priority,
        lambda c: -sum(p.priority + _MAX_INT32 + 1 for p in c.victims),
        lambda c: -len(c.victims),
        latest_start,
    ]
    remaining = list(candidates)
    for score in criteria:
        best = max(score(c) for c in remaining)
        remaining = [c for c in remaining if score(c) == best]
        if len(remaining) == 1:
            break
    return remaining[0]


def _fit_error(num_nodes: int, statuses: Mapping[str, Status]) -> str:
    """``0/N nodes are available: ...`` counting each node's reasons; nodes not examined count
    as "Preemption is not helpful for scheduling"."""
    counts: dict[str, int] = {}
    for status in statuses.values():
        for reason in status.reasons:
            counts[reason] = counts.get(reason, 0) + 1
    absent = num_nodes - len(statuses)
    if absent > 0:
        counts[PREEMPTION_NOT_HELPFUL] = counts.get(PREEMPTION_NOT_HELPFUL, 0) + absent
    msg = f"0/{num_nodes} nodes are available:"
    parts = sorted(f"{n} {reason}" for reason, n in counts.items())
    if parts:
        msg += f" {', '.join(parts)}."
    return msg
