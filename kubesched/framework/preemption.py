"""The preemption evaluator (upstream's ``framework/preemption`` package), for any PostFilter.

:class:`PreemptionEvaluator` holds the flow every preemption plugin shares (upstream's
``Evaluator.Preempt``):

1. ask whether the preemptor may preempt at all (``pod_eligible_to_preempt_others``);
2. dry-run preemption on the nodes whose Filter status was Unschedulable, from an offset and
   until enough candidates are found (``get_offset_and_num_candidates``), choosing the victims on
   a copy of each node and of the cycle state (``select_victims_on_node``);
3. let extenders with a preempt verb narrow the candidates;
4. pick the best candidate (``candidates_to_victims_map``, ``ordered_score_funcs``; by default
   :func:`pick_one_node_for_preemption`'s criteria);
5. evict its victims (in the cycle, or in the background with async preemption), clear the
   nominations of lower-priority pods nominated to the node, and nominate the preemptor there,
   with a Success that says so (:func:`found_placement_message`: ``found a potential placement
   for pod on node N, preempting K victims``).

The five hooks are upstream's ``preemption.Interface`` (:class:`PreemptionInterface`): a plugin
either subclasses the evaluator and defines them (DefaultPreemption does), or passes an object
that has them (CapacityScheduling does). The functions beside it order victims
(:func:`sort_by_importance`), account PodDisruptionBudgets (:func:`filter_pods_with_pdb_violation`),
choose among candidates and phrase the "no candidate" message as kube-scheduler does; the
evaluator offers them as static methods too, for plugins that import the face alone.

Everything here reaches the scheduler through the :class:`~kubesched.framework.interface.Handle`
protocol. What a bare test handle may lack is read only when it is there: ``feature_gates``
(SchedulerAsyncPreemption: off without them), ``placed_pod``, ``preempt_with_extenders``,
``observer`` and ``parallelism``.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Protocol, cast

from kubesched.errors import ClusterError, KubeschedError
from kubesched.framework.interface import CycleState, Handle, PostFilterResult
from kubesched.framework.podgroup import PodGroupInfo
from kubesched.framework.preemption_candidates import (
    Candidate,
    CandidateList,
    aggregate_errors,
    filter_pods_with_pdb_violation,
    fit_error_message,
    pick_one_node_for_preemption,
    sort_by_importance,
)
from kubesched.framework.status import Code, Status
from kubesched.framework.types import NodeInfo, PodInfo

log = logging.getLogger(__name__)

# --- the evaluator ------------------------------------------------------------------------------

DISRUPTION_TARGET = "DisruptionTarget"
PREEMPTION_BY_SCHEDULER = "PreemptionByScheduler"

#: What victim selection gives for one node: the victims (most important first), how many of
#: them violate a PodDisruptionBudget, and the node's status (Success, or why it is no candidate).
Victims = tuple[list[PodInfo], int, Status | None]


class PreemptionError(KubeschedError):
    """A PreFilter extension failed while victims were given back: carries its Error status.

    Raised and caught inside :meth:`PreemptionEvaluator.reprieve_victims`; never leaves it."""

    def __init__(self, status: Status) -> None:
        super().__init__(status.message())
        self.status = status


def _is_success(status: Status | None) -> bool:
    return status is None or status.code is Code.SUCCESS


def as_error(status: Status) -> Status:
    """``status`` with code Error (the message and plugin kept)."""
    if status.code is Code.ERROR:
        return status
    return Status(Code.ERROR, status.message(), plugin=status.plugin)


def pod_terminating_by_preemption(pod: Mapping[str, Any]) -> bool:
    """Whether the pod is being deleted because the scheduler preempted it (a
    ``DisruptionTarget=True`` condition with reason ``PreemptionByScheduler``)."""
    if not (pod.get("metadata") or {}).get("deletionTimestamp"):
        return False
    for cond in (pod.get("status") or {}).get("conditions") or ():
        if cond.get("type") == DISRUPTION_TARGET:
            return cast("bool", cond.get("status") == "True" and cond.get("reason") == PREEMPTION_BY_SCHEDULER)
    return False


def found_placement_message(c: Candidate) -> str:
    """What a successful preemption says (1.37): the node the preemptor is nominated to and how
    many victims it preempts there (every victim of the candidate, those already terminating
    included). It ends the pod's FailedScheduling message after ``preemption:``."""
    return f"found a potential placement for pod on node {c.name}, preempting {len(c.victims)} victims"


def status_for(statuses: Mapping[str, Status | None], node_name: str) -> Status | None:
    """A node's filter status; a node without one counts as UnschedulableAndUnresolvable."""
    if node_name in statuses:
        return statuses[node_name]
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE)


class PreemptionInterface(Protocol):
    """What a preemption plugin decides for itself (upstream's ``preemption.Interface``).

    Two more hooks of upstream's are optional, used when the object has them:
    ``candidates_to_victims_map(candidates) -> {node name: candidate}`` (default: by name) and
    ``ordered_score_funcs(nodes_to_victims) -> [score(node name)]`` (scores for choosing a
    node, each breaking the ties of the one before, higher wins; default, or None:
    :func:`pick_one_node_for_preemption`'s criteria). A structural match suffices: an object
    need not derive from this protocol."""

    def get_offset_and_num_candidates(self, num_nodes: int, pod: PodInfo) -> tuple[int, int]:
        """Where among the ``num_nodes`` potential nodes the dry run starts, and how many
        candidates it gathers before it stops (at least one violating no PDB)."""
        ...

    def pod_eligible_to_preempt_others(self, pod: PodInfo, nominated_node_status: Status | None) -> tuple[bool, str]:
        """Whether ``pod`` may preempt now, and why not (the Unschedulable message).
        ``nominated_node_status`` is the Filter status of the node it is nominated to."""
        ...

    async def select_victims_on_node(
        self, state: CycleState, pod: PodInfo, node: NodeInfo, pdbs: Sequence[Mapping[str, Any]]
    ) -> tuple[list[PodInfo], int, Status | None]:
        """The pods to evict from ``node`` (a copy, as is ``state``: change them freely) for
        ``pod`` to fit, most important first; how many of them violate a PDB; the status."""
        ...


#: ``shortcut(node, pdbs)``: a node's :data:`Victims` found without copying anything, or None
#: to have ``select_victims_on_node`` run on copies (see :meth:`PreemptionEvaluator.victim_shortcut`).
VictimShortcut = Callable[[NodeInfo, Sequence[Mapping[str, Any]]], Victims | None]


_REQUIRED_HOOKS = ("get_offset_and_num_candidates", "pod_eligible_to_preempt_others", "select_victims_on_node")


class PreemptionEvaluator:
    """The generic preemption flow (upstream's ``preemption.Evaluator``) over a plugin's hooks.

    ``PreemptionEvaluator(plugin_name, handle, interface)`` runs ``interface``'s hooks (a
    :class:`PreemptionInterface`); without ``interface`` the evaluator's own methods are the hooks,
    so a subclass defines them (the three without a default; TypeError otherwise), and
    ``candidates_to_victims_map``/``ordered_score_funcs`` when it wants other than upstream's
    defaults. ``async_preemption``: evict in the background (upstream's
    SchedulerAsyncPreemption); None follows the handle's feature gate at each attempt.
    A preemptor whose victims are being evicted in the background is reported by
    :meth:`is_pod_running_preemption` (a PreEnqueue plugin holds it back meanwhile).

    Static helpers for victim selection: :meth:`sort_by_importance`,
    :meth:`filter_pods_with_pdb_violation`, :meth:`pick_one_node_for_preemption`; and, on a copy
    of a node and state, :meth:`remove_victims` and :meth:`reprieve_victims`.
    """

    sort_by_importance = staticmethod(sort_by_importance)
    filter_pods_with_pdb_violation = staticmethod(filter_pods_with_pdb_violation)
    pick_one_node_for_preemption = staticmethod(pick_one_node_for_preemption)

    def __init__(
        self,
        plugin_name: str,
        handle: Any,
        interface: PreemptionInterface | None = None,
        *,
        async_preemption: bool | None = None,
    ) -> None:
        self.plugin_name = plugin_name
        self.handle: Handle = handle
        if interface is None:
            missing = [h for h in _REQUIRED_HOOKS if not callable(getattr(self, h, None))]
            if missing:
                raise TypeError(
                    f"{type(self).__name__}: a PreemptionEvaluator without an interface must define {', '.join(missing)}"
                )
        self.interface: PreemptionInterface = interface if interface is not None else cast("PreemptionInterface", self)
        self.async_preemption = async_preemption
        #: Preemptors whose victims are being deleted in the background (by uid).
        self._preempting: set[str] = set()
        #: The victim whose deletion a preemptor waits on last, by the preemptor's uid.
        self._last_victim: dict[str, PodInfo] = {}

    def _gone(self, victim: PodInfo) -> bool:
        """Whether the scheduler's cache no longer holds ``victim``, or holds it being deleted."""
        placed_pod = getattr(self.handle, "placed_pod", None)
        if placed_pod is None:
            return True
        held = placed_pod(victim.uid)
        return held is None or held.deleting

    def is_pod_running_preemption(self, uid: str) -> bool:
        """Whether the pod's victims are still being evicted in the background: until the last
        victim is gone from the scheduler's cache or being deleted (upstream's executor asks its
        pod lister the same), so that the last victim's deletion event finds the preemptor free
        to go however it races the API call's answer."""
        if uid not in self._preempting:
            return False
        last = self._last_victim.get(uid)
        if last is None or getattr(self.handle, "placed_pod", None) is None:
            return True
        return not self._gone(last)

    def _async_enabled(self) -> bool:
        if self.async_preemption is not None:
            return self.async_preemption
        gates = getattr(self.handle, "feature_gates", None)
        return gates is not None and bool(gates.enabled("SchedulerAsyncPreemption"))

    # --- the flow -------------------------------------------------------------------------------
    async def preempt(
        self, state: CycleState, pod: PodInfo, filtered_statuses: Mapping[str, Status | None]
    ) -> tuple[PostFilterResult | None, Status]:
        """Upstream ``Evaluator.Preempt``: the nomination, or why there is none."""
        nominated = pod.nominated_node_name
        eligible, why = self.interface.pod_eligible_to_preempt_others(pod, status_for(filtered_statuses, nominated))
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

        try:
            candidates = await self.call_extenders(pod, candidates)
        except Exception as exc:  # noqa: BLE001 - an extender failure fails this preemption
            return None, Status(Code.ERROR, str(exc))

        best = self.select_candidate(candidates)
        if best is None or not best.name:
            return None, Status(Code.UNSCHEDULABLE, "no candidate node for preemption")

        if self._async_enabled():
            self.prepare_candidate_async(best, pod)
        else:
            status = await self.prepare_candidate(best, pod)
            if not _is_success(status):
                assert status is not None
                return None, status
        return PostFilterResult(best.name), Status(Code.SUCCESS, found_placement_message(best))

    async def find_candidates(
        self,
        state: CycleState,
        all_nodes: Sequence[NodeInfo],
        pod: PodInfo,
        filtered_statuses: Mapping[str, Status | None],
    ) -> tuple[list[Candidate], dict[str, Status], str]:
        """Dry-run preemption on the nodes where it might help (Filter said Unschedulable):
        ``(candidates, statuses of the nodes that are not candidates, error message or "")``."""
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
        offset, num_candidates = self.interface.get_offset_and_num_candidates(len(potential), pod)
        return await self.dry_run_preemption(state, pod, potential, pdbs, offset, num_candidates)

    def victim_shortcut(self, state: CycleState, pod: PodInfo) -> VictimShortcut | None:
        """For one dry run: a way to answer ``select_victims_on_node`` for some nodes without
        copying node and state (it must give the very same answer), or None (the default)."""
        return None

    async def dry_run_preemption(
        self,
        state: CycleState,
        pod: PodInfo,
        potential_nodes: Sequence[NodeInfo],
        pdbs: Sequence[Mapping[str, Any]],
        offset: int,
        num_candidates: int,
    ) -> tuple[list[Candidate], dict[str, Status], str]:
        """Select victims on ``potential_nodes`` from ``offset`` (wrapping around) until
        ``num_candidates`` are found, at least one without PDB violations.

        Returns candidates violating no PDB first, the status of every examined node that is not
        a candidate, and the errors met (aggregated, "" when none).
        """
        non_violating = CandidateList(num_candidates)
        violating = CandidateList(num_candidates)
        statuses: dict[str, Status] = {}
        errors: list[str] = []
        n = len(potential_nodes)
        select = self.interface.select_victims_on_node
        shortcut = self.victim_shortcut(state, pod)
        for i in range(n):
            node = potential_nodes[(offset + i) % n]
            got = shortcut(node, pdbs) if shortcut is not None else None
            if got is None:
                got = await select(state.clone(), pod, node.clone(), pdbs)
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

    async def call_extenders(self, pod: PodInfo, candidates: list[Candidate]) -> list[Candidate]:
        """Extenders with a preemptVerb may drop candidates or victims (upstream callExtenders);
        an extender's failure is raised."""
        via_extenders = getattr(self.handle, "preempt_with_extenders", None)
        if via_extenders is None:
            return candidates
        kept = await via_extenders(pod, {c.name: (c.victims, c.num_pdb_violations) for c in candidates})
        return [Candidate(c.name, *kept[c.name]) for c in candidates if c.name in kept]

    def select_candidate(self, candidates: Sequence[Candidate]) -> Candidate | None:
        """The candidate to preempt on: by the hooks' scores, else upstream's criteria."""
        if not candidates:
            return None
        if len(candidates) == 1:
            return candidates[0]
        hooks = self.interface
        to_map = getattr(hooks, "candidates_to_victims_map", None)
        by_node = to_map(candidates) if to_map is not None else {c.name: c for c in candidates}
        score_funcs = getattr(hooks, "ordered_score_funcs", None)
        chosen = pick_one_node_for_preemption(by_node, score_funcs(by_node) if score_funcs is not None else None)
        return by_node.get(chosen, candidates[0])

    # --- helpers for select_victims_on_node -------------------------------------------------------
    async def remove_victims(
        self, state: CycleState, pod: PodInfo, node: NodeInfo, victims: Iterable[PodInfo]
    ) -> Status | None:
        """Take ``victims`` off ``node`` (a copy), telling the PreFilter extensions through
        ``state`` (a copy): None, or the first extension's failure as an Error status."""
        run = self.handle.run_pre_filter_remove_pod
        for victim in victims:
            node.remove_pod(victim)
            st = await run(state, pod, victim, node)
            if st is not None and st.code is not Code.SUCCESS:
                return as_error(st)
        return None

    async def reprieve_victims(
        self,
        state: CycleState,
        pod: PodInfo,
        node: NodeInfo,
        potential: list[PodInfo],
        pdbs: Sequence[Mapping[str, Any]],
        keep: Callable[[], bool] | None = None,
    ) -> Victims:
        """With ``potential`` taken off ``node`` (see :meth:`remove_victims`) and the pod fitting,
        give each back, PDB-violating ones first, each group most important first; a pod stays
        when the pod still passes Filter and ``keep()`` (if given) agrees, else it is taken off
        again as a victim. PDB-violating pods that the node could not take back are counted
        (upstream's reprieve). Errors of the PreFilter extensions come back as the status."""
        handle = self.handle
        now = time.time()
        sort_by_importance(potential, now)
        violating, non_violating = filter_pods_with_pdb_violation(potential, pdbs)
        victims: list[PodInfo] = []

        async def reprieve(p: PodInfo) -> bool:
            node.add_pod(p)
            st = await handle.run_pre_filter_add_pod(state, pod, p, node)
            if not _is_success(st):
                assert st is not None
                raise PreemptionError(as_error(st))
            fits = _is_success(await handle.run_filter_with_nominated_pods(state, pod, node))
            if not fits or (keep is not None and not keep()):
                st = await self.remove_victims(state, pod, node, (p,))
                if st is not None:
                    raise PreemptionError(st)
                victims.append(p)
            return fits

        num_violating = 0
        try:
            for p in violating:
                if not await reprieve(p):
                    num_violating += 1
            for p in non_violating:
                await reprieve(p)
        except PreemptionError as exc:
            return [], 0, exc.status

        if violating and non_violating:
            sort_by_importance(victims, now)
        return victims, num_violating, Status(Code.SUCCESS)

    # --- evicting -----------------------------------------------------------------------------
    async def prepare_candidate(self, c: Candidate, pod: PodInfo) -> Status | None:
        """Evict the victims, then clear the nomination of lower-priority pods nominated to
        the node (they may no longer fit there; clearing it lets them look elsewhere sooner)."""
        self._observe_victims(c)
        for victim in c.victims:
            if victim.deleting:
                continue  # graceful deletion already under way
            try:
                await self.preempt_pod(c, pod, victim)
            except Exception as exc:  # noqa: BLE001 - an API failure fails this attempt
                return Status.as_error(exc)
        await self.clear_lower_nominations(c, pod)
        return None

    def prepare_candidate_async(self, c: Candidate, pod: PodInfo, group: PodGroupInfo | None = None) -> None:
        """:meth:`prepare_candidate` in the background (upstream's ``prepareCandidateAsync``).

        The preemptor is marked as preempting at once (see :meth:`is_pod_running_preemption`).
        Every victim but the last is deleted concurrently (at most ``parallelism`` at a time, the
        rest abandoned after the first failure); then the last victim is deleted, and the mark
        holds only until that victim is gone or terminating. After a failure the last victim is
        spared and the preemptor activated: no deletion event may ever come for it. After a
        success whose last victim the cache has let go already, it is activated too: that
        victim's event may have met it still held (kubesched's own; upstream leaves such a pod
        to its periodic flush).

        With ``group`` (workload-aware preemption; ``pod`` is its first member) the preemptor is
        the pod group: every member is marked, and activated after a failure.
        """
        self._observe_victims(c)
        members = group.all_pods() if group is not None else [pod]
        self._preempting.update(m.uid for m in members)
        self.handle.run_in_background(self._preempt_in_background(c, pod, group, members))

    async def _preempt_in_background(
        self, c: Candidate, pod: PodInfo, group: PodGroupInfo | None, members: Sequence[PodInfo]
    ) -> None:
        started = time.perf_counter()
        failed = False
        last: PodInfo | None = None
        try:
            await self.clear_lower_nominations(c, pod)
            victims = [v for v in c.victims if not v.deleting]
            if not victims:
                return
            *first, last = victims
            failed = not await self._preempt_concurrently(c, pod, first, group)
            if not failed:  # after a failure the last victim is spared: the preemptor goes again
                for m in members:
                    self._last_victim[m.uid] = last
                try:
                    await self.preempt_pod(c, pod, last, group)
                except Exception:  # reported, and the preemptor is activated below
                    log.exception("async preemption for pod %s: cannot preempt %s", pod.key, last.key)
                    failed = True
        finally:
            self._preempting.difference_update(m.uid for m in members)
            for m in members:
                self._last_victim.pop(m.uid, None)
            if failed or (last is not None and self._gone(last)):
                # After a failure no deletion event may come for the preemptor. After a success
                # whose last victim the cache has already let go, its deletion event has been
                # heard, possibly while the preemptor was still held: it is let go now rather
                # than left gated until the periodic flush (kubesched's own). A victim still
                # cached means its event is yet to come, and finds the preemptor free.
                self.handle.activate(list(members))
            observer = getattr(self.handle, "observer", None)
            if observer is not None:
                observer.preemption_goroutine("error" if failed else "success", time.perf_counter() - started)

    async def _preempt_concurrently(
        self, c: Candidate, pod: PodInfo, victims: Sequence[PodInfo], group: PodGroupInfo | None = None
    ) -> bool:
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
                    await self.preempt_pod(c, pod, victim, group)
                except Exception as exc:  # noqa: BLE001 - collected, reported once
                    failures.append(exc)

        await asyncio.gather(*(one(v) for v in victims))
        if failures:
            log.error("async preemption for pod %s on node %s failed: %s", pod.key, c.name, failures[0])
        return not failures

    async def clear_lower_nominations(self, c: Candidate, pod: PodInfo) -> None:
        """Clear ``nominatedNodeName`` of the lower-priority pods nominated to ``c``'s node."""
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

    async def preempt_pod(
        self, c: Candidate, preemptor: PodInfo, victim: PodInfo, group: PodGroupInfo | None = None
    ) -> None:
        """Evict one victim: a pod waiting at Permit is rejected in memory; any other gets the
        ``DisruptionTarget`` condition and is deleted (gone already is fine); then the
        ``Preempted`` event.

        With ``group`` the preemptor is that pod group (workload-aware preemption): the event
        says ``Preempted by podgroup <uid> on node <c.name>`` (``compositepodgroup`` for a
        hierarchy) and the condition a higher priority ``podgroup``, as 1.37's executor writes."""
        handle = self.handle
        cluster = handle.cluster
        kind, uid = "pod", preemptor.uid
        if group is not None:
            kind = "compositepodgroup" if group.is_composite else "podgroup"
            uid = group.view.uid
        message = f"Preempted by {kind} {uid} on node {c.name}"
        waiting = handle.get_waiting_pod(victim.uid)
        if waiting is not None and waiting.preempt(self.plugin_name, "preempted"):
            # Taken in memory: the victim was never bound; it backs off and is retried (1.36).
            message += " (in kube-scheduler memory)."
        elif cluster is not None:
            condition = {
                "type": DISRUPTION_TARGET,
                "status": "True",
                "reason": PREEMPTION_BY_SCHEDULER,
                "message": f"{preemptor.scheduler_name}: preempting to accommodate a higher priority {kind}",
            }
            update = getattr(cluster, "update_pod_condition", None)
            try:
                if update is not None:
                    await update(victim.pod, condition)
                await cluster.delete_pod(victim.pod)
            except Exception as exc:
                if getattr(exc, "code", None) != 404:
                    raise
                log.debug("victim %s was already deleted", victim.key)
                return
        if cluster is not None:
            await cluster.record_event(victim.pod, "Normal", "Preempted", "Preempting", message, handle.profile_name)
