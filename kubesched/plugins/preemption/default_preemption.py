"""DefaultPreemption: when no node fits, evict lower-priority pods to make room (PostFilter).

Follows upstream's ``defaultpreemption`` plugin and its ``preemption.Evaluator``:

1. The preemptor must be eligible: not ``preemptionPolicy: Never``, and not already waiting for
   victims it preempted earlier to terminate on its nominated node.
2. Only nodes whose Filter status was Unschedulable are tried (UnschedulableAndUnresolvable
   means evicting pods cannot help). Starting at a random offset, each is dry-run on a copy of
   the cycle state and the node: every lower-priority pod is removed, the preemptor must then
   fit, and victims are reprieved one by one (PDB-violating first, each group most important
   first) as long as the preemptor still fits. The search stops once enough candidates are
   found (``minCandidateNodesPercentage`` / ``minCandidateNodesAbsolute``), counting at least
   one that violates no PodDisruptionBudget.
3. The best candidate is picked (see :func:`pick_one_node_for_preemption`), its victims are
   deleted (or, when waiting at Permit, preempted in memory: their binding cycle fails with an
   Error and they back off, as in 1.36) with a ``Preempted`` event each, and lower-priority
   pods nominated to that node lose their nomination.
4. The preemptor is nominated to the node; it is scheduled once the victims are gone.

With async preemption (upstream's SchedulerAsyncPreemption, on by default since 1.33) step 3
runs in the background: the cycle nominates the preemptor at once and moves on to the next pod.
Until the background work has deleted every victim but the last, the preemptor is held by this
plugin's PreEnqueue ("waiting for the preemption for this pod to be finished"); the last
victim's deletion is then the event that brings it back. When an API call fails, the preemptor
is activated so that it does not wait in the pool for an event that will not come.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
import zlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

from pydantic import BaseModel, ConfigDict, Field, model_validator

from kubesched.errors import ClusterError
from kubesched.framework import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    EventResource,
    NodeInfo,
    PodInfo,
    PostFilterResult,
    QueueingHint,
    Status,
)
from kubesched.framework.podgroup import PodGroupInfo, PodGroupPostFilterResult
from kubesched.plugins.preemption.arithmetic import ArithmeticVictims
from kubesched.plugins.preemption.helpers import (
    NO_VICTIMS_FOUND,
    Candidate,
    CandidateList,
    aggregate_errors,
    filter_pods_with_pdb_violation,
    fit_error_message,
    pick_one_node_for_preemption,
    sort_by_importance,
)
from kubesched.plugins.preemption.podgroup import PodGroupPreemption, ScheduleFn

log = logging.getLogger(__name__)

NAME = "DefaultPreemption"

NOT_ELIGIBLE_NEVER = "not eligible due to preemptionPolicy=Never."
NOT_ELIGIBLE_TERMINATING = "not eligible due to a terminating pod on the nominated node."

WAITING_FOR_PREEMPTION = "waiting for the preemption for this pod to be finished"

DISRUPTION_TARGET = "DisruptionTarget"
PREEMPTION_BY_SCHEDULER = "PreemptionByScheduler"


class DefaultPreemptionArgs(BaseModel):
    """Upstream ``DefaultPreemptionArgs`` (kubescheduler.config.k8s.io/v1), defaults applied."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    min_candidate_nodes_percentage: int = Field(default=10, alias="minCandidateNodesPercentage")
    min_candidate_nodes_absolute: int = Field(default=100, alias="minCandidateNodesAbsolute")

    @model_validator(mode="after")
    def _check(self) -> DefaultPreemptionArgs:
        pct = self.min_candidate_nodes_percentage
        absolute = self.min_candidate_nodes_absolute
        errs: list[str] = []
        if pct < 0 or pct > 100:
            errs.append(f"minCandidateNodesPercentage: Invalid value: {pct}: not in valid range [0, 100]")
        if absolute < 0:
            errs.append(f"minCandidateNodesAbsolute: Invalid value: {absolute}: not in valid range [0, inf)")
        if pct == 0 and absolute == 0:
            errs.append(
                "minCandidateNodesPercentage: Invalid value: 0: cannot be zero at the same time as "
                "minCandidateNodesAbsolute"
            )
            errs.append(
                "minCandidateNodesAbsolute: Invalid value: 0: cannot be zero at the same time as "
                "minCandidateNodesPercentage"
            )
        if errs:
            raise ValueError("; ".join(errs))
        return self


class _PreemptionError(Exception):
    """A PreFilter extension failed while simulating a node: carries its (Error) status."""

    def __init__(self, status: Status) -> None:
        super().__init__(status.message())
        self.status = status


def _is_success(status: Status | None) -> bool:
    return status is None or status.code is Code.SUCCESS


def pod_terminating_by_preemption(pod: Mapping[str, Any]) -> bool:
    """Whether the pod is being deleted because the scheduler preempted it (a
    ``DisruptionTarget=True`` condition with reason ``PreemptionByScheduler``)."""
    if not (pod.get("metadata") or {}).get("deletionTimestamp"):
        return False
    for cond in (pod.get("status") or {}).get("conditions") or ():
        if cond.get("type") == DISRUPTION_TARGET:
            return cast("bool", cond.get("status") == "True" and cond.get("reason") == PREEMPTION_BY_SCHEDULER)
    return False


def _not_found(exc: BaseException) -> bool:
    return getattr(exc, "code", None) == 404


class DefaultPreemption:
    """PostFilter: nominate the pod to a node where evicting lower-priority pods makes it fit."""

    name = NAME
    Args = DefaultPreemptionArgs

    def __init__(self, args: DefaultPreemptionArgs | None, handle: Any = None) -> None:
        self.args = args if args is not None else DefaultPreemptionArgs()
        self.handle = handle
        #: ``offset_source(num_nodes)`` picks where the candidate search starts. By default it is
        #: derived from the pod's uid and this instance's call count, so a run is reproducible
        #: yet successive attempts start at different nodes. Tests may replace it.
        self.offset_source: Callable[[int], int] | None = None
        self._calls = 0
        #: Preemptors whose victims are being deleted in the background (by uid).
        self._preempting: set[str] = set()
        #: Per node name: (generation, the lowest priority of its pods).
        self._lowest: dict[str, tuple[int, int | None]] = {}

    # --- PreEnqueue -------------------------------------------------------------------------
    def pre_enqueue(self, pod: PodInfo) -> Status | None:
        """Hold a preemptor back while its preemption is still deleting victims."""
        if pod.uid in self._preempting:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, WAITING_FOR_PREEMPTION)
        return None

    def is_pod_running_preemption(self, uid: str) -> bool:
        return uid in self._preempting

    # --- PostFilter -------------------------------------------------------------------------
    async def post_filter(
        self, state: CycleState, pod: PodInfo, filtered_statuses: dict[str, Status]
    ) -> tuple[PostFilterResult | None, Status]:
        result, status = await self.preempt(state, pod, filtered_statuses)
        msg = status.message()
        if msg:
            return result, Status(status.code, f"preemption: {msg}")
        return result, status

    # --- PodGroupPostFilter (workload-aware preemption) ----------------------------------------
    async def pod_group_post_filter(
        self, state: CycleState, group: PodGroupInfo, schedule: ScheduleFn
    ) -> tuple[PodGroupPostFilterResult | None, Status]:
        """A pod group that fits nowhere preempts as one (see
        :mod:`kubesched.plugins.preemption.podgroup`); messages start ``pod group preemption:``."""
        evaluator = PodGroupPreemption(self.handle, pod_terminating_by_preemption)
        result, status, victims = await evaluator.preempt(state, group, schedule)
        observer = getattr(self.handle, "observer", None)
        record = getattr(observer, "workload_preemption", None)
        if callable(record):
            record(status.code.upstream_name, len(victims) if status.is_success() else 0)
        if status.is_success() and victims:
            preemptor = group.pods[0]
            for victim in victims:
                if (victim.pod.get("metadata") or {}).get("deletionTimestamp"):
                    continue
                try:
                    await self._preempt_pod(Candidate(victim.node_name, [victim]), preemptor, victim)
                except Exception as exc:  # noqa: BLE001 - an API failure fails this attempt
                    return None, Status(Code.ERROR, f"pod group preemption: {exc}")
        msg = status.message()
        if msg:
            return result, Status(status.code, f"pod group preemption: {msg}")
        return result, status

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """With async preemption, pod deletions, hinted Skip: this plugin's PreEnqueue holds
        only preemptors, whose other rejecting plugins (the filters preemption works around)
        decide when a deletion lets them go. Without it the plugin rejects nothing."""
        if not getattr(self.handle, "async_preemption", False):
            return []
        return [ClusterEventWithHint(ClusterEvent(EventResource.POD, ActionType.DELETE), _skip)]

    async def preempt(
        self, state: CycleState, pod: PodInfo, filtered_statuses: Mapping[str, Status | None]
    ) -> tuple[PostFilterResult | None, Status]:
        """Upstream ``Evaluator.Preempt``, without the ``preemption:`` prefix on messages."""
        nominated = ((pod.pod.get("status") or {}).get("nominatedNodeName")) or ""
        eligible, why = self.pod_eligible_to_preempt_others(pod, _status_for(filtered_statuses, nominated))
        if not eligible:
            return None, Status(Code.UNSCHEDULABLE, why)

        all_nodes = list(self.handle.snapshot().list())
        candidates, node_statuses, error = await self.find_candidates(state, all_nodes, pod, filtered_statuses)
        if error and not candidates:
            return None, Status(Code.ERROR, error)
        if not candidates:
            # Preemption cannot help anywhere: an empty nomination clears the one the pod may
            # hold from an earlier preemption (upstream's PostFilterResult with node "").
            return PostFilterResult(""), Status(Code.UNSCHEDULABLE, fit_error_message(len(all_nodes), node_statuses))

        # Extenders with a preemptVerb may drop candidates or victims (upstream callExtenders).
        via_extenders = getattr(self.handle, "preempt_with_extenders", None)
        if via_extenders is not None:
            try:
                kept = await via_extenders(pod, {c.name: (c.victims, c.num_pdb_violations) for c in candidates})
            except Exception as exc:  # noqa: BLE001 - an extender failure fails this preemption
                return None, Status(Code.ERROR, str(exc))
            candidates = [Candidate(c.name, *kept[c.name]) for c in candidates if c.name in kept]

        best = self.select_candidate(candidates)
        if best is None or not best.name:
            return None, Status(Code.UNSCHEDULABLE, "no candidate node for preemption")

        if getattr(self.handle, "async_preemption", False):
            self.prepare_candidate_async(best, pod)
        else:
            status = await self.prepare_candidate(best, pod)
            if not _is_success(status):
                assert status is not None
                return None, status
        return PostFilterResult(best.name), Status(Code.SUCCESS)

    # --- eligibility ----------------------------------------------------------------------------
    def pod_eligible_to_preempt_others(self, pod: PodInfo, nominated_node_status: Status | None) -> tuple[bool, str]:
        """Whether ``pod`` may preempt others now, and why not.

        Not with ``preemptionPolicy: Never``. Not while a lower-priority pod it preempted is
        still terminating on its nominated node (unless that node has become
        UnschedulableAndUnresolvable, in which case preempting elsewhere is the way forward).
        """
        if pod.preemption_policy == "Never":
            return False, NOT_ELIGIBLE_NEVER
        nominated = ((pod.pod.get("status") or {}).get("nominatedNodeName")) or ""
        if nominated:
            if nominated_node_status is not None and nominated_node_status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return True, ""
            try:
                node = self.handle.snapshot().get(nominated)
            except Exception:  # noqa: BLE001 - the nominated node may be gone from the snapshot
                node = None
            if node is not None:
                for p in node.pods:
                    if self.is_preemption_allowed(node, p, pod) and pod_terminating_by_preemption(p.pod):
                        return False, NOT_ELIGIBLE_TERMINATING
        return True, ""

    def is_preemption_allowed(self, node: NodeInfo, victim: PodInfo, preemptor: PodInfo) -> bool:
        """Only pods of lower priority than the preemptor may be evicted."""
        return victim.priority < preemptor.priority

    def _lowest_priority(self, node: NodeInfo) -> int | None:
        """The lowest priority among the node's pods (None: it has none), cached by generation."""
        cached = self._lowest.get(node.name)
        if cached is not None and cached[0] == node.generation:
            return cached[1]
        lowest = min((p.priority for p in node.pods), default=None)
        self._lowest[node.name] = (node.generation, lowest)
        return lowest

    # --- finding candidates -------------------------------------------------------------------
    async def find_candidates(
        self,
        state: CycleState,
        all_nodes: Sequence[NodeInfo],
        pod: PodInfo,
        filtered_statuses: Mapping[str, Status | None],
    ) -> tuple[list[Candidate], dict[str, Status], str]:
        """Dry-run preemption on the nodes where it might help: ``(candidates, statuses of
        the nodes that are not candidates, error message or "")``."""
        if not all_nodes:
            return [], {}, "no nodes available"
        potential = [
            ni
            for ni in all_nodes
            if (st := filtered_statuses.get(ni.name)) is not None and st.code is Code.UNSCHEDULABLE
        ]
        if not potential:
            return [], {}, ""
        pdbs = list(self.handle.listers.list("PodDisruptionBudget"))
        offset, num_candidates = self.get_offset_and_num_candidates(len(potential), pod)
        return await self.dry_run_preemption(state, pod, potential, pdbs, offset, num_candidates)

    def calculate_num_candidates(self, num_nodes: int) -> int:
        """How many candidates to gather: the configured share of ``num_nodes``, at least the
        configured absolute number, never more than ``num_nodes``."""
        n = num_nodes * self.args.min_candidate_nodes_percentage // 100
        n = max(n, self.args.min_candidate_nodes_absolute)
        return min(n, num_nodes)

    def get_offset_and_num_candidates(self, num_nodes: int, pod: PodInfo | None = None) -> tuple[int, int]:
        return self._random_offset(num_nodes, pod), self.calculate_num_candidates(num_nodes)

    def _random_offset(self, num_nodes: int, pod: PodInfo | None) -> int:
        if self.offset_source is not None:
            return self.offset_source(num_nodes)
        self._calls += 1
        uid = pod.uid if pod is not None else ""
        seed = (zlib.crc32(uid.encode()) << 32) | (self._calls & 0xFFFFFFFF)
        return random.Random(seed).randrange(num_nodes)

    async def dry_run_preemption(
        self,
        state: CycleState,
        pod: PodInfo,
        potential_nodes: Sequence[NodeInfo],
        pdbs: Sequence[Mapping[str, Any]],
        offset: int,
        num_candidates: int,
    ) -> tuple[list[Candidate], dict[str, Status], str]:
        """Simulate preemption on ``potential_nodes`` from ``offset`` (wrapping around) until
        ``num_candidates`` are found, at least one without PDB violations.

        Returns candidates violating no PDB first, the status of every examined node that is not
        a candidate, and the errors met (aggregated, "" when none).
        """
        non_violating = CandidateList(num_candidates)
        violating = CandidateList(num_candidates)
        statuses: dict[str, Status] = {}
        errors: list[str] = []
        n = len(potential_nodes)
        own_selection = type(self).select_victims_on_node is DefaultPreemption.select_victims_on_node
        # Where victims are chosen by priority alone, a node whose pods all rank at least as
        # high as the preemptor has none: known from its lowest priority, without copying it.
        lowest = (
            self._lowest_priority
            if own_selection and type(self).is_preemption_allowed is DefaultPreemption.is_preemption_allowed
            else None
        )
        # Where only resources are at stake, the same answer without copying node and state
        # (unless a subclass selects victims its own way).
        arithmetic = (
            ArithmeticVictims.for_cycle(self.handle, state, pod, self.is_preemption_allowed, lowest)
            if own_selection
            else None
        )
        for i in range(n):
            node = potential_nodes[(offset + i) % n]
            got = arithmetic.select(node, pdbs) if arithmetic is not None else None
            if got is None:
                if lowest is not None and ((low := lowest(node)) is None or low >= pod.priority):
                    got = [], 0, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, NO_VICTIMS_FOUND)
                else:
                    got = await self.select_victims_on_node(state.clone(), pod, node.clone(), pdbs)
            victims, num_violations, status = got
            if _is_success(status) and victims:
                c = Candidate(node.name, victims, num_violations)
                (non_violating if num_violations == 0 else violating).add(c)
                if len(non_violating) > 0 and len(non_violating) + len(violating) >= num_candidates:
                    break
                continue
            if _is_success(status):
                status = Status(Code.ERROR, f'expected at least one victim pod on node "{node.name}"')
            assert status is not None
            if status.code is Code.ERROR:
                errors.append(status.message())
            statuses[node.name] = status
        return non_violating.items + violating.items, statuses, aggregate_errors(errors) if errors else ""

    async def select_victims_on_node(
        self, state: CycleState, pod: PodInfo, node: NodeInfo, pdbs: Sequence[Mapping[str, Any]]
    ) -> tuple[list[PodInfo], int, Status | None]:
        """The fewest lower-priority pods to evict from ``node`` (a copy, as is ``state``) for
        ``pod`` to fit, most important first, and how many of them violate a PDB."""
        handle = self.handle
        potential = [p for p in node.pods if self.is_preemption_allowed(node, p, pod)]
        try:
            for p in potential:
                await self._remove(state, pod, p, node)
        except _PreemptionError as exc:
            return [], 0, exc.status
        if not potential:
            return [], 0, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, NO_VICTIMS_FOUND)

        # Even with every lower-priority pod gone the pod does not fit: preemption cannot help
        # here. (Affinity of the preemptor to one of the victims is deliberately not handled.)
        status = await handle.run_filter_with_nominated_pods(state, pod, node)
        if not _is_success(status):
            return [], 0, status

        now = time.time()
        sort_by_importance(potential, now)
        violating, non_violating = filter_pods_with_pdb_violation(potential, pdbs)
        victims: list[PodInfo] = []

        async def reprieve(p: PodInfo) -> bool:
            node.add_pod(p)
            st = await handle.run_pre_filter_add_pod(state, pod, p, node)
            if not _is_success(st):
                assert st is not None
                raise _PreemptionError(_as_error(st))
            fits = _is_success(await handle.run_filter_with_nominated_pods(state, pod, node))
            if not fits:
                await self._remove(state, pod, p, node)
                victims.append(p)
            return fits

        num_violating = 0
        try:
            for p in violating:
                if not await reprieve(p):
                    num_violating += 1
            for p in non_violating:
                await reprieve(p)
        except _PreemptionError as exc:
            return [], 0, exc.status

        if violating and non_violating:
            sort_by_importance(victims, now)
        return victims, num_violating, Status(Code.SUCCESS)

    async def _remove(self, state: CycleState, pod: PodInfo, victim: PodInfo, node: NodeInfo) -> None:
        node.remove_pod(victim)
        st = await self.handle.run_pre_filter_remove_pod(state, pod, victim, node)
        if not _is_success(st):
            assert st is not None
            raise _PreemptionError(_as_error(st))

    # --- choosing and preparing ---------------------------------------------------------------
    def select_candidate(self, candidates: Sequence[Candidate]) -> Candidate | None:
        if not candidates:
            return None
        if len(candidates) == 1:
            return candidates[0]
        by_node = {c.name: c for c in candidates}
        chosen = pick_one_node_for_preemption(by_node)
        return by_node.get(chosen, candidates[0])

    async def prepare_candidate(self, c: Candidate, pod: PodInfo) -> Status | None:
        """Evict the victims, then clear the nomination of lower-priority pods nominated to
        the node (they may no longer fit there; clearing it lets them look elsewhere sooner)."""
        self._observe_victims(c)
        for victim in c.victims:
            if (victim.pod.get("metadata") or {}).get("deletionTimestamp"):
                continue  # graceful deletion already under way
            try:
                await self._preempt_pod(c, pod, victim)
            except Exception as exc:  # noqa: BLE001 - an API failure fails this attempt
                return Status.as_error(exc)
        await self._clear_lower_nominations(c, pod)
        return None

    def prepare_candidate_async(self, c: Candidate, pod: PodInfo) -> None:
        """:meth:`prepare_candidate` in the background (upstream's ``prepareCandidateAsync``).

        The preemptor is marked as preempting at once, so that PreEnqueue holds it. Every
        victim but the last is deleted concurrently (at most ``parallelism`` at a time, the
        rest abandoned after the first failure); then the mark is lifted and the last victim
        deleted, so that its deletion event finds the preemptor free to go. After a failure
        the preemptor is activated: no deletion event may ever come for it.
        """
        self._observe_victims(c)
        self._preempting.add(pod.uid)
        self.handle.run_in_background(self._preempt_in_background(c, pod))

    async def _preempt_in_background(self, c: Candidate, pod: PodInfo) -> None:
        started = time.perf_counter()
        failed = False
        try:
            await self._clear_lower_nominations(c, pod)
            victims = [v for v in c.victims if not (v.pod.get("metadata") or {}).get("deletionTimestamp")]
            if not victims:
                return
            *first, last = victims
            failed = not await self._preempt_concurrently(c, pod, first)
            self._preempting.discard(pod.uid)
            try:
                await self._preempt_pod(c, pod, last)
            except Exception:  # reported, and the preemptor is activated below
                log.exception("async preemption for pod %s: cannot preempt %s", pod.key, last.key)
                failed = True
        finally:
            self._preempting.discard(pod.uid)
            if failed:
                self.handle.activate([pod])
            observer = getattr(self.handle, "observer", None)
            if observer is not None:
                observer.preemption_goroutine("error" if failed else "success", time.perf_counter() - started)

    async def _preempt_concurrently(self, c: Candidate, pod: PodInfo, victims: Sequence[PodInfo]) -> bool:
        """Preempt ``victims``, ``parallelism`` at a time; stop starting new ones after the
        first failure. Whether all went well."""
        if not victims:
            return True
        limit = asyncio.Semaphore(max(1, int(getattr(self.handle, "parallelism", 16) or 16)))
        failures: list[BaseException] = []

        async def one(victim: PodInfo) -> None:
            async with limit:
                if failures:
                    return
                try:
                    await self._preempt_pod(c, pod, victim)
                except Exception as exc:  # noqa: BLE001 - collected, reported once
                    failures.append(exc)

        await asyncio.gather(*(one(v) for v in victims))
        if failures:
            log.error("async preemption for pod %s on node %s failed: %s", pod.key, c.name, failures[0])
        return not failures

    async def _clear_lower_nominations(self, c: Candidate, pod: PodInfo) -> None:
        cluster = self.handle.cluster
        if cluster is None:
            return
        lower = [p for p in self.handle.nominator.nominated_pods_for_node(c.name) if p.priority < pod.priority]
        for p in lower:
            try:
                await cluster.set_nominated_node_name(p.pod, "")
            except ClusterError as exc:  # not critical: the pod is retried anyway
                # the cluster has retried it already: one line, no traceback
                log.warning("cannot clear nominatedNodeName of pod %s: %s", p.key, exc)
            except Exception:  # not critical: the pod is retried anyway
                log.exception("cannot clear nominatedNodeName of pod %s", p.key)

    def _observe_victims(self, c: Candidate) -> None:
        observer = getattr(self.handle, "observer", None)
        if observer is not None:
            observer.preemption_victims(len(c.victims))

    async def _preempt_pod(self, c: Candidate, preemptor: PodInfo, victim: PodInfo) -> None:
        handle = self.handle
        cluster = handle.cluster
        message = f"Preempted by pod {preemptor.uid} on node {c.name}"
        waiting = handle.get_waiting_pod(victim.uid)
        if waiting is not None and waiting.preempt(self.name, "preempted"):
            # Taken in memory: the victim was never bound; it backs off and is retried (1.36).
            message += " (in kube-scheduler memory)."
        elif cluster is not None:
            condition = {
                "type": DISRUPTION_TARGET,
                "status": "True",
                "reason": PREEMPTION_BY_SCHEDULER,
                "message": f"{preemptor.scheduler_name}: preempting to accommodate a higher priority pod",
            }
            update = getattr(cluster, "update_pod_condition", None)
            try:
                if update is not None:
                    await update(victim.pod, condition)
                await cluster.delete_pod(victim.pod)
            except Exception as exc:
                if not _not_found(exc):
                    raise
                log.debug("victim %s was already deleted", victim.key)
                return
        if cluster is not None:
            await cluster.record_event(
                victim.pod,
                "Normal",
                "Preempted",
                "Preempting",
                message,
                handle.profile_name,
            )


def _skip(pod: Any, old: Any, new: Any) -> QueueingHint:
    return QueueingHint.SKIP


def _as_error(status: Status) -> Status:
    if status.code is Code.ERROR:
        return status
    return Status(Code.ERROR, status.message(), plugin=status.plugin)


def _status_for(statuses: Mapping[str, Status | None], node_name: str) -> Status | None:
    """A node's filter status; a node without one counts as UnschedulableAndUnresolvable."""
    if node_name in statuses:
        return statuses[node_name]
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE)
