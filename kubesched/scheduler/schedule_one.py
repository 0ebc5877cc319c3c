"""The scheduling cycle of one pod: filter the nodes, score the feasible ones, select a host,
assume the pod there, run Reserve and Permit, and spawn its binding cycle; PostFilter
(preemption) when no node fits."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence

import numpy as np

from kubesched.extender.client import ExtenderError, Victims
from kubesched.framework.columns import NodeBatch
from kubesched.framework.interface import CycleState, PostFilterResult
from kubesched.framework.status import Code, Status
from kubesched.framework.types import NodeInfo, PodInfo, QueuedPodInfo
from kubesched.runtime.batch_filter import BatchFilterResult, rows_of
from kubesched.runtime.framework import Framework
from kubesched.scheduler.binding_cycle import BindingCycle, PendingBinding
from kubesched.scheduler.errors import CycleError, Diagnosis, FitError
from kubesched.scheduler.extenders import (
    find_nodes_that_pass_extenders,
    preempt_with_extenders,
    prioritize_with_extenders,
)
from kubesched.scheduler.results import PodResult

# One logger for the whole package: log lines name the scheduler, whichever module writes them.
log = logging.getLogger("kubesched.scheduler")

MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5
NO_NODES_MSG = "no nodes available to schedule pods"
#: Share of scheduling cycles in which every plugin call is timed (upstream samples 10%).
PLUGIN_METRICS_SAMPLE_PERCENT = 10
#: How upstream names extenders among a pod's rejectors.
EXTENDER_NAME = "Extender"


def num_feasible_nodes_to_find(percentage: int | None, num_all_nodes: int) -> int:
    """How many feasible nodes are enough before scoring (upstream's adaptive rule).

    Below 100 nodes, all of them. Otherwise the configured percentage, or when unset (0) an
    adaptive one: 50% minus 1% per 125 nodes, never under 5%; and never fewer than 100 nodes.
    """
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    pct = percentage or 0
    if pct >= 100:
        return num_all_nodes
    if pct == 0:
        pct = 50 - num_all_nodes // 125
        if pct < MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND:
            pct = MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND
    n = num_all_nodes * pct // 100
    return max(n, MIN_FEASIBLE_NODES_TO_FIND)


class _BatchCycle:
    """Opportunistic batching in one scheduling cycle: the pod's signature, and whether the
    hint became the pod's node."""

    __slots__ = ("signature", "hint_taken")

    def __init__(self, signature: bytes | None) -> None:
        self.signature = signature
        self.hint_taken = False


class SchedulingCycle(BindingCycle):
    """Scheduling cycles: serial, one pod at a time, against the snapshot taken at its start."""

    _batch_cycle: _BatchCycle | None = None

    async def schedule_one(self, qpi: QueuedPodInfo) -> None:
        pi = qpi.pod_info
        fw = self.frameworks.get(pi.scheduler_name)
        if fw is None or self.cache.is_assumed(pi.uid):
            self.queue.done(pi.uid)
            return
        if pi.deleting:
            # Upstream's skipPodSchedule: say so on the pod rather than drop it silently.
            self.queue.done(pi.uid)
            if self.options.report_to_cluster:
                self._spawn_side(
                    self.cluster.record_event(
                        pi.pod,
                        "Warning",
                        "FailedScheduling",
                        "Scheduling",
                        f"skip schedule deleting pod: {pi.key}",
                        fw.profile_name,
                    )
                )
            return
        start = time.perf_counter()
        self.stats.attempts += 1
        record: PodResult | None = None
        if self.options.record_results:
            record = self.results.get(pi.key)
            if record is None:
                record = self.results[pi.key] = PodResult(pi.namespace, pi.name, pi.scheduler_name)
            record.reset_attempt()
            record.attempts = qpi.attempts
        self.cache.update_snapshot(self.snapshot)
        fw.set_snapshot(self.snapshot)
        state = CycleState()
        self._cycles += 1
        self._batch_cycle = (
            _BatchCycle(fw.sign_pod(pi)) if self.options.opportunistic_batching and fw in self._batchable else None
        )
        state.record_plugin_metrics = self._cycles % (100 // PLUGIN_METRICS_SAMPLE_PERCENT) == 0
        try:
            node_name = await self._schedule_pod(fw, state, pi, self._traces(record))
        except FitError as fit:
            self.batching.flush(fw.profile_name, "pod_failed")
            await self._post_filter_and_fail(fw, state, qpi, fit, record)
            self.stats.attempt_durations.append(time.perf_counter() - start)
            self.observer.schedule_attempt("unschedulable", fw.profile_name, time.perf_counter() - start)
            return
        except CycleError as err:
            self.batching.flush(fw.profile_name, "pod_failed")
            self._fail(fw, qpi, err.status, record, start)
            return
        assumed = pi.with_node(node_name)
        self.cache.assume_pod(assumed, node_name)
        t0 = time.perf_counter()
        tr = self._traces(record)
        status = await fw.run_reserve(state, assumed, node_name, tr.reserve if tr else None)
        self._ep("Reserve", status, fw, t0)
        if status is not None:
            await fw.run_unreserve(state, assumed, node_name)
            self.cache.forget_pod(assumed)
            self._fail(fw, qpi, status, record, start, node=node_name)
            return
        t0 = time.perf_counter()
        status = await fw.run_permit(state, assumed, node_name, tr.permit if tr else None)
        self._ep("Permit", status, fw, t0)
        if status is not None and not status.is_wait():
            await fw.run_unreserve(state, assumed, node_name)
            self.cache.forget_pod(assumed)
            self._fail(fw, qpi, status, record, start, node=node_name)
            return
        self.stats.attempt_durations.append(time.perf_counter() - start)
        self._activate_requested(state)
        task = asyncio.create_task(
            self._binding_cycle(PendingBinding(fw, state, qpi, assumed, node_name, record, start)),
            name=f"bind {pi.key}",
        )
        self._binding_tasks.add(task)
        task.add_done_callback(self._binding_done)

    async def _preempt_with_extenders(
        self, pod: PodInfo, candidates: dict[str, tuple[list[PodInfo], int]]
    ) -> dict[str, tuple[list[PodInfo], int]]:
        victims = {node: Victims(list(pods), n) for node, (pods, n) in candidates.items()}
        kept = await preempt_with_extenders(self.extenders, pod, victims, self.snapshot.node_info_map)
        return {node: (v.pods, v.num_pdb_violations) for node, v in kept.items()}

    async def _schedule_pod(self, fw: Framework, state: CycleState, pi: PodInfo, record: PodResult | None) -> str:
        nodes = self.snapshot.list()
        if not nodes:
            raise CycleError(Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, NO_NODES_MSG))
        feasible, diagnosis = await self._find_nodes_that_fit(fw, state, pi, nodes, record)
        if not feasible:
            raise FitError(pi, len(nodes), diagnosis)
        batch = self._batch_cycle
        if batch is not None and batch.hint_taken:
            self.batching.hint_used(fw.profile_name, self._cycles, feasible[0].name)
            return feasible[0].name
        if len(feasible) == 1:
            if batch is not None:
                self.batching.store(fw, batch.signature, self._cycles, feasible, [0], feasible[0].name)
            return feasible[0].name
        t0 = time.perf_counter()
        status = await fw.run_pre_score(state, pi, feasible, record.prescore if record else None)
        self._ep("PreScore", status, fw, t0)
        if status is not None:
            raise CycleError(status)
        totals: list[int] | np.ndarray
        if not fw.has_score_plugins() and not self.extenders:
            totals = [1] * len(feasible)
        else:
            t0 = time.perf_counter()
            totals, status = await fw.run_score_array(
                state, pi, feasible, record.score if record else None, record.final_score if record else None
            )
            self._ep("Score", status, fw, t0)
            if status is not None:
                raise CycleError(status)
            if self.extenders:
                extra = await prioritize_with_extenders(self.extenders, pi, feasible)
                for i, ni in enumerate(feasible):
                    for ext_name, weighted in extra.get(ni.name, ()):
                        totals[i] += weighted
                        if record is not None:
                            record.extender_prioritize.setdefault(ni.name, {})[ext_name] = weighted
        chosen = self._select_host(feasible, totals)
        if batch is not None:
            self.batching.store(fw, batch.signature, self._cycles, feasible, totals, chosen)
        return chosen

    def _select_host(self, nodes: Sequence[NodeInfo], totals: Sequence[int] | np.ndarray) -> str:
        """The highest total; ties broken uniformly at random (seedable)."""
        scores = np.asarray(totals)
        ties = np.flatnonzero(scores == scores.max())
        chosen = int(ties[0]) if len(ties) == 1 else int(ties[self.rng.randrange(len(ties))])
        return nodes[chosen].name

    async def _find_nodes_that_fit(
        self, fw: Framework, state: CycleState, pi: PodInfo, all_nodes: list[NodeInfo], record: PodResult | None
    ) -> tuple[Sequence[NodeInfo], Diagnosis]:
        diagnosis = Diagnosis()
        t0 = time.perf_counter()
        result, status, rejectors = await fw.run_pre_filter(state, pi, record.prefilter if record else None)
        self._ep("PreFilter", status, fw, t0)
        if status is not None:
            if status.code is Code.ERROR:
                raise CycleError(status)
            diagnosis.pre_filter_msg = status.message()
            diagnosis.unschedulable_plugins = rejectors or ({status.plugin} if status.plugin else set())
            for ni in all_nodes:
                diagnosis.node_to_status[ni.name] = status
            return [], diagnosis
        nodes = all_nodes
        if result is not None and result.node_names is not None:
            names = result.node_names
            nodes = [ni for ni in all_nodes if ni.name in names]
            diagnosis.unschedulable_plugins |= rejectors
            absent = Status(
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE, f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(rejectors))}]"
            )
            for ni in all_nodes:
                if ni.name not in names:
                    diagnosis.node_to_status[ni.name] = absent
        t0 = time.perf_counter()
        nominated = (pi.pod.get("status") or {}).get("nominatedNodeName")
        batch = self._batch_cycle
        hint: NodeInfo | None = None
        if batch is not None:
            # Asked even for a nominated pod (which gets none, and flushes the batch), as upstream.
            hint = self.batching.hint(
                fw, state, pi, batch.signature, self._cycles, bool(nominated), self.snapshot.node_info_map.get
            )
        if nominated and any(ni.name == nominated for ni in nodes):
            # Preemption made room there: try that node alone first, as upstream does.
            ni = self.snapshot.get(nominated)
            trace: dict[str, str] | None = {} if record is not None else None
            status = await fw.run_filter_with_nominated_pods(state, pi, ni, trace)
            if record is not None and trace is not None:
                record.filter[ni.name] = trace
            if status is None:
                self.observer.extension_point("Filter", "Success", fw.profile_name, time.perf_counter() - t0)
                return [ni], diagnosis
            if status.code is Code.ERROR:
                raise CycleError(status)
        if batch is not None and hint is not None:
            if nodes is all_nodes or any(ni is hint for ni in nodes):
                trace = {} if record is not None else None
                status = await fw.run_filter_with_nominated_pods(state, pi, hint, trace)
                if record is not None and trace is not None:
                    record.filter[hint.name] = trace
                if status is None:
                    batch.hint_taken = True
                    self.observer.extension_point("Filter", "Success", fw.profile_name, time.perf_counter() - t0)
                    return [hint], diagnosis
                if status.code is Code.ERROR:
                    raise CycleError(status)
            self.batching.hint_not_used(fw.profile_name)
        feasible = await self._find_nodes_that_pass_filters(fw, state, pi, nodes, diagnosis, record, len(all_nodes))
        if self.extenders and feasible:
            try:
                after = await find_nodes_that_pass_extenders(
                    self.extenders, pi, feasible, diagnosis.node_to_status, record.extender_filter if record else None
                )
            except ExtenderError as exc:
                raise CycleError(Status.as_error(exc)) from exc
            if len(after) != len(feasible):
                # Extenders register no events: a pod they rejected is retried on any event.
                diagnosis.unschedulable_plugins.add(EXTENDER_NAME)
            feasible = (
                NodeBatch(feasible.columns, rows_of(after, feasible.columns.index))
                if isinstance(feasible, NodeBatch)
                else after
            )
        self.observer.extension_point(
            "Filter", "Success" if feasible else "Unschedulable", fw.profile_name, time.perf_counter() - t0
        )
        return feasible, diagnosis

    async def _find_nodes_that_pass_filters(
        self,
        fw: Framework,
        state: CycleState,
        pi: PodInfo,
        nodes: list[NodeInfo],
        diagnosis: Diagnosis,
        record: PodResult | None,
        num_all_nodes: int,
    ) -> Sequence[NodeInfo]:
        n = len(nodes)
        if n == 0:
            return []
        pct = fw.percentage_of_nodes_to_score
        if pct is None:
            pct = self.options.percentage_of_nodes_to_score
        want = num_feasible_nodes_to_find(pct, n)
        if not fw.has_score_plugins() and not self.extenders:
            want = 1  # nothing to rank them by: the first feasible node is the answer
        start = self.next_start_node_index % n
        feasible: list[NodeInfo] = []
        processed = 0
        statuses = diagnosis.node_to_status
        if not fw.has_filter_plugins():
            for i in range(min(want, n)):
                feasible.append(nodes[(start + i) % n])
            self.next_start_node_index = (start + len(feasible)) % num_all_nodes
            return feasible
        if self.options.batch:
            return await self._filter_batched(fw, state, pi, nodes, diagnosis, record, num_all_nodes, want, start)
        run_filter = fw.run_filter
        nominator = self.queue.nominator
        for i in range(n):
            ni = nodes[(start + i) % n]
            if nominator and nominator.has_nominated(ni.name):
                trace_n: dict[str, str] | None = {} if record is not None else None
                status = await fw.run_filter_with_nominated_pods(state, pi, ni, trace_n)
                if record is not None and trace_n is not None:
                    record.filter[ni.name] = trace_n
            elif record is not None:
                trace: dict[str, str] = {}
                status = fw.run_filter_traced(state, pi, ni, trace)
                record.filter[ni.name] = trace
            else:
                status = run_filter(state, pi, ni)
            processed += 1
            if status is None:
                feasible.append(ni)
                if len(feasible) >= want:
                    break
            elif status.code is Code.ERROR:
                raise CycleError(status)
            else:
                statuses[ni.name] = status
                if status.plugin:
                    diagnosis.unschedulable_plugins.add(status.plugin)
        self.next_start_node_index = (start + processed) % num_all_nodes
        return feasible

    async def _filter_batched(
        self,
        fw: Framework,
        state: CycleState,
        pi: PodInfo,
        nodes: list[NodeInfo],
        diagnosis: Diagnosis,
        record: PodResult | None,
        num_all_nodes: int,
        want: int,
        start: int,
    ) -> NodeBatch:
        """The node-by-node loop above, over the snapshot's columns: nodes are taken in the same
        rotated order, in chunks, each chunk filtered with one call per plugin; the cycle stops at
        the same ``want``-th feasible node, so the same nodes are processed and the next start
        index moves the same way. Statuses of rejected nodes are computed only where the
        per-node loop would have used them: the diagnosis of a pod nothing fits (or that
        extenders may still reject), and recorded traces."""
        n = len(nodes)
        cols = self.snapshot.columns()
        # Rows of the snapshot's columns, in the list's order (the snapshot's own list: the rows).
        listed = None if nodes is self.snapshot.node_info_list else rows_of(nodes, cols.index)
        nominator = self.queue.nominator
        nominated: set[int] = set()
        if nominator:
            nominated = {cols.index[name] for name in nominator.nominated_nodes() if name in cols.index}
        feasible: list[int] = []
        rejected: list[tuple[BatchFilterResult, np.ndarray]] = []
        #: Nominated nodes the batch already rejected: they fail with the nominated pods too,
        #: and only a diagnosis needs their status (which the nominated-pods filter gives).
        deferred: list[tuple[BatchFilterResult, int, NodeInfo]] = []
        pos = 0
        while pos < n and len(feasible) < want:
            need = want - len(feasible)
            size = min(n - pos, need if pos == 0 else max(2 * need, 128))
            chunk = np.arange(start + pos, start + pos + size) % n  # in rotated order
            if listed is not None:
                chunk = listed[chunk]
            res = fw.run_filter_batch(state, pi, NodeBatch(cols, chunk))
            traces: dict[int, dict[str, str]] = {}
            chunk_deferred: list[tuple[BatchFilterResult, int, NodeInfo]] = []
            if nominated:
                for j in np.flatnonzero(np.isin(chunk, list(nominated))).tolist():
                    node = cols.node(int(chunk[j]))
                    if record is None and not res.ok[j]:
                        chunk_deferred.append((res, j, node))
                        continue
                    trace: dict[str, str] | None = {} if record is not None else None
                    status = await fw.run_filter_with_nominated_pods(state, pi, node, trace)
                    res.ok[j] = status is None
                    if status is not None:
                        res.statuses[j] = status
                    if trace is not None:
                        traces[j] = trace
            passed = np.flatnonzero(res.ok)
            cut = int(passed[need - 1]) + 1 if len(passed) >= need else size
            for j in sorted(j for j, st in res.statuses.items() if j < cut and st.code is Code.ERROR)[:1]:
                raise CycleError(res.statuses[j])
            feasible.extend(chunk[passed[passed < cut]].tolist())
            deferred.extend(d for d in chunk_deferred if d[1] < cut)
            if record is not None:
                for j in range(cut):
                    record.filter[cols.names[int(chunk[j])]] = traces[j] if j in traces else res.trace(j)
            failed = np.flatnonzero(~res.ok[:cut])
            if len(failed):
                rejected.append((res, failed))
            pos += cut
        self.next_start_node_index = (start + pos) % num_all_nodes
        if not feasible or self.extenders or record is not None:
            for res, j, node in deferred:
                status = await fw.run_filter_with_nominated_pods(state, pi, node)
                res.statuses[j] = status or Status.as_error(
                    f"node {node.name!r} passed the filters with its nominated pods, failed them without"
                )
            statuses = diagnosis.node_to_status
            plugins = diagnosis.unschedulable_plugins
            for res, failed in rejected:
                for name, status in res.rejected(failed.tolist()):
                    if status.code is Code.ERROR:
                        raise CycleError(status)
                    statuses[name] = status
                    if status.plugin:
                        plugins.add(status.plugin)
        return NodeBatch(cols, np.asarray(feasible, dtype=np.intp))

    async def _post_filter_and_fail(
        self, fw: Framework, state: CycleState, qpi: QueuedPodInfo, fit: FitError, record: PodResult | None
    ) -> None:
        pi = qpi.pod_info
        nominated: str | None = None
        if fw.has_post_filter_plugins():
            t0 = time.perf_counter()
            result, status = await fw.run_post_filter(
                state, pi, fit.diagnosis.node_to_status, tr.postfilter if (tr := self._traces(record)) else None
            )
            self._ep("PostFilter", status, fw, t0)
            if status.code is Code.ERROR:
                log.warning("PostFilter of pod %s failed: %s", pi.key, status.message())
            if not status.is_success() and status.message():
                fit.diagnosis.post_filter_msg = status.message()
            if isinstance(result, PostFilterResult) and result.nominated_node_name:
                nominated = result.nominated_node_name
                # Hold the room preemption made: other pods' filters now count this pod there.
                self.queue.nominator.add(pi, nominated)
            self.observer.preemption_attempt()
        message = str(fit)
        self.stats.unschedulable += 1
        if record is not None:
            record.phase = "Unschedulable"
            record.node = None
            record.message = message
        self.queue.add_unschedulable_if_not_present(qpi, fit.diagnosis.unschedulable_plugins)
        qpi.last_failure = message
        await self._after_failure(fw, pi, "Unschedulable", message, record, nominated)
