"""The scheduling cycle of one pod: filter the nodes, score the feasible ones, select a host,
assume the pod there, run Reserve and Permit, and spawn its binding cycle; PostFilter
(preemption) when no node fits.

:class:`PodSchedulingCycle` keeps what carries over from one cycle to the next (the cycle
count, where the next search starts, the tie-breaking random generator); what belongs to one
cycle travels in a :class:`PodCycle`. It hands a reserved pod to the shared
:class:`~kubesched.scheduler.binding_cycle.BindingCycle`, and a failed one to the shared
:class:`~kubesched.scheduler.failures.FailureReporting`: a pod group's cycle
(:mod:`kubesched.scheduler.podgroup`) sits beside it and uses the same two.

What a pod group's cycle uses of this one is the protocol :class:`PodPlacer`, and nothing else:
:meth:`~PodPlacer.place` (the pod's algorithm, without PostFilter, over the snapshot or a
placement's nodes), :meth:`~PodPlacer.reserve_tentatively` (the pod on a node in the snapshot
alone, then Reserve) and :meth:`~PodPlacer.revert_tentative` (Unreserve, off the snapshot).
:class:`PodSchedulingCycle` provides it."""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from kubesched.extender.client import ExtenderError
from kubesched.framework.columns import NodeBatch, NodeSubset, positions
from kubesched.framework.interface import CycleState, PostFilterResult
from kubesched.framework.status import Code, Status
from kubesched.framework.types import NodeInfo, PodInfo, QueuedPodInfo
from kubesched.runtime.batch_filter import BatchFilterResult, rows_of
from kubesched.runtime.framework import Framework
from kubesched.scheduler.binding_cycle import BindingCycle, PendingBinding
from kubesched.scheduler.context import SchedulerContext
from kubesched.scheduler.errors import CycleError, Diagnosis, FitError
from kubesched.scheduler.failures import FailureReporting
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


class BatchCycle:
    """Opportunistic batching in one scheduling cycle: the pod's signature and the hint it got."""

    __slots__ = ("signature", "hint")

    def __init__(self, signature: bytes | None) -> None:
        self.signature = signature
        self.hint: str | None = None


@dataclass(slots=True, eq=False)
class PodCycle:
    """One pod's scheduling cycle: what every step of it reads."""

    fw: Framework
    state: CycleState
    pod: PodInfo
    #: Where per-plugin results go (``None`` unless they are recorded).
    traces: PodResult | None
    #: The cycle's number (counted over all profiles since the scheduler was made).
    number: int
    #: Opportunistic batching in this cycle, if it may batch.
    batch: BatchCycle | None
    #: The nodes to choose from (a pod group's placement); ``None``: every node of the snapshot.
    nodes: list[NodeInfo] | None = None


#: A pod placed tentatively (:meth:`PodPlacer.reserve_tentatively`): its cycle's state, the
#: pod with its node set (as Reserve saw it), and the node.
Tentative = tuple[CycleState, PodInfo, str]

#: Why a profile's batch is dropped when tentative placements are undone.
FLUSH_POD_GROUP_REVERT = "pod_group_revert"


class PodPlacer(Protocol):
    """The pod cycle as a pod group's cycle uses it: a member goes through the pod's algorithm,
    is placed tentatively (in the snapshot alone, never in the cache) and reserved there, so the
    next member sees it, and is taken off again when the group does not fit. The group's cycle
    assumes the members of a group that fits in the cache itself, and runs their Permit."""

    async def place(
        self,
        fw: Framework,
        state: CycleState,
        pod: PodInfo,
        traces: PodResult | None,
        nodes: list[NodeInfo] | None = None,
    ) -> str:
        """The node for ``pod``: a new scheduling cycle (numbered, its plugin calls sampled for
        metrics as any pod's) through PreFilter, Filter, PreScore, Score and the choice of a
        host, without PostFilter; raises :class:`~kubesched.scheduler.errors.FitError` when no
        node fits, :class:`~kubesched.scheduler.errors.CycleError` when a plugin errs (or no node
        is there). ``nodes``: the nodes to choose from (a placement's), as the snapshot has them
        now; ``None``, every node of the snapshot -- and only then is the pod batched
        (opportunistic batching keeps what a search over the whole cluster found). Per-plugin
        results go to ``traces`` when given."""
        ...

    async def reserve_tentatively(
        self, fw: Framework, state: CycleState, pod: PodInfo, node: str
    ) -> tuple[PodInfo, Status | None]:
        """Place ``pod`` on ``node`` in the snapshot and run Reserve: the pod as placed there,
        and Reserve's status. On a failure it is undone already (Unreserve, off the snapshot).
        Either way the pod is no longer counted as nominated anywhere (as an assumed pod is
        not): its own nomination would stand beside its placement."""
        ...

    async def revert_tentative(self, fw: Framework, placed: Sequence[Tentative]) -> None:
        """Undo tentative placements: Unreserve each (the last placed first) and take it off the
        snapshot. The profile's batch is dropped: it was found with them in place."""
        ...


class PodSchedulingCycle:
    """Scheduling cycles: serial, one pod at a time, against the snapshot taken at its start.

    Also a :class:`PodPlacer`, for a pod group's cycle."""

    def __init__(
        self, ctx: SchedulerContext, binding: BindingCycle, failures: FailureReporting, rng: random.Random
    ) -> None:
        self.ctx = ctx
        self.binding = binding
        self.failures = failures
        self.options = ctx.options
        self.stats = ctx.stats
        self.observer = ctx.observer
        self.cluster = ctx.cluster
        self.frameworks = ctx.frameworks
        self.cache = ctx.cache
        self.snapshot = ctx.snapshot
        self.queue = ctx.queue
        self.nominator = ctx.nominator
        self.results = ctx.results
        self.extenders = ctx.extenders
        self.batching = ctx.batching
        #: Breaks ties between the best nodes (seedable).
        self.rng = rng
        #: Scheduling cycles run so far (all profiles): numbers each cycle.
        self.cycles = 0
        #: Where the next search for feasible nodes starts (upstream rotates it, so that pods
        #: spread over the cluster rather than always filling its first nodes).
        self.next_start_node_index = 0
        #: The profiles whose pods may be batched (every filtering and scoring plugin signs pods,
        #: and no extender is configured).
        self.batchable: list[Framework] = (
            [] if self.extenders else [fw for fw in self.frameworks.values() if fw.signable]
        )

    async def schedule(self, qpi: QueuedPodInfo) -> None:
        """Schedule the pod of ``qpi``: to its binding cycle, or back to the queue with why."""
        pi = qpi.pod_info
        fw = self.frameworks.get(pi.scheduler_name)
        if fw is None or self.cache.is_assumed(pi.uid):
            self.queue.done(pi.uid)
            return
        if pi.deleting:
            # Upstream's skipPodSchedule: say so on the pod rather than drop it silently.
            self.queue.done(pi.uid)
            if self.options.report_to_cluster:
                self.ctx.spawn_side(
                    self.failures.event(
                        pi.pod,
                        "Warning",
                        "FailedScheduling",
                        "Scheduling",
                        f"skip schedule deleting pod: {pi.key}",
                        fw.profile_name,
                    ),
                    name=f"event FailedScheduling {pi.key}",
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
        tr = self.ctx.traces(record)
        try:
            node_name = await self.place(fw, state, pi, tr)
        except FitError as fit:
            # Nothing is stored for batching: the next pod finds the batch a cycle behind.
            await self._post_filter_and_fail(fw, state, qpi, fit, record)
            self.stats.attempt_durations.append(time.perf_counter() - start)
            self.observer.schedule_attempt("unschedulable", fw.profile_name, time.perf_counter() - start)
            return
        except CycleError as err:
            self.failures.fail(fw, qpi, err.status, record, start)
            return
        self.observer.scheduling_algorithm(time.perf_counter() - start)
        assumed = pi.with_node(node_name)
        self.cache.assume_pod(assumed, node_name)
        # The cache holds it now: as a nominated pod too it would be counted twice (upstream's
        # assume drops it from the nominator as well).
        self.nominator.delete(pi.uid)
        t0 = time.perf_counter()
        status = await fw.run_reserve(state, assumed, node_name, tr.reserve if tr else None)
        self.ctx.extension_point("Reserve", status, fw, t0)
        if status is not None:
            await fw.run_unreserve(state, assumed, node_name)
            self.cache.forget_pod(assumed)
            self.failures.fail(fw, qpi, status, record, start, node=node_name)
            return
        t0 = time.perf_counter()
        status = await fw.run_permit(state, assumed, node_name, tr.permit if tr else None)
        self.ctx.extension_point("Permit", status, fw, t0)
        if status is not None and not status.is_wait():
            await fw.run_unreserve(state, assumed, node_name)
            self.cache.forget_pod(assumed)
            self.failures.fail(fw, qpi, status, record, start, node=node_name)
            return
        self.stats.attempt_durations.append(time.perf_counter() - start)
        self.ctx.activate_requested(state)
        self.binding.spawn(PendingBinding(fw, state, qpi, assumed, node_name, record, start))

    async def place(
        self,
        fw: Framework,
        state: CycleState,
        pod: PodInfo,
        traces: PodResult | None,
        nodes: list[NodeInfo] | None = None,
    ) -> str:
        """The node for ``pod`` (see :meth:`PodPlacer.place`)."""
        self.cycles += 1
        batch = (
            BatchCycle(fw.sign_pod(pod))
            if nodes is None and self.options.opportunistic_batching and fw in self.batchable
            else None
        )
        state.record_plugin_metrics = self.cycles % (100 // PLUGIN_METRICS_SAMPLE_PERCENT) == 0
        return await self._schedule_pod(PodCycle(fw, state, pod, traces, self.cycles, batch, nodes))

    async def reserve_tentatively(
        self, fw: Framework, state: CycleState, pod: PodInfo, node: str
    ) -> tuple[PodInfo, Status | None]:
        """``pod`` on ``node`` in the snapshot, reserved (see :meth:`PodPlacer.reserve_tentatively`)."""
        placed = pod.with_node(node)
        self.nominator.delete(pod.uid)
        self.snapshot.add_pod(placed)
        status = await fw.run_reserve(state, placed, node, None)
        if status is not None:
            await fw.run_unreserve(state, placed, node)
            self.snapshot.remove_pod(placed)
        return placed, status

    async def revert_tentative(self, fw: Framework, placed: Sequence[Tentative]) -> None:
        """Tentative placements undone (see :meth:`PodPlacer.revert_tentative`)."""
        if not placed:
            return
        for state, pod, node in reversed(placed):
            await fw.run_unreserve(state, pod, node)
            self.snapshot.remove_pod(pod)
        self.batching.flush(fw.profile_name, FLUSH_POD_GROUP_REVERT)

    async def _schedule_pod(self, c: PodCycle) -> str:
        fw, state, pi, record, batch = c.fw, c.state, c.pod, c.traces, c.batch
        nodes = self.snapshot.list() if c.nodes is None else c.nodes
        if not nodes:
            raise CycleError(Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, NO_NODES_MSG))
        feasible, diagnosis = await self._find_nodes_that_fit(c, nodes)
        if not feasible:
            raise FitError(pi, len(nodes), diagnosis)
        if len(feasible) == 1:
            if batch is not None:
                t0 = time.perf_counter()
                self.batching.store(fw, batch.signature, c.number, batch.hint, feasible[0].name)
                self.observer.batch_stored(fw.profile_name, time.perf_counter() - t0)
            return feasible[0].name
        t0 = time.perf_counter()
        status = await fw.run_pre_score(state, pi, feasible, record.prescore if record else None)
        self.ctx.extension_point("PreScore", status, fw, t0)
        if self.ctx.observed:
            self.observer.plugins_evaluated(fw.profile_name, "PreScore", (b.name for b in fw.pre_score_plugins), 1)
        if status is not None:
            raise CycleError(status)
        totals: list[int] | np.ndarray
        # Raw scores are kept only for a pod that can be batched: store ignores them otherwise.
        raw: dict[str, np.ndarray] | None = {} if batch is not None and batch.signature is not None else None
        if not fw.has_score_plugins() and not self.extenders:
            totals = [1] * len(feasible)
        else:
            t0 = time.perf_counter()
            totals, status = await fw.run_score_array(
                state, pi, feasible, record.score if record else None, record.final_score if record else None, raw
            )
            self.ctx.extension_point("Score", status, fw, t0)
            if self.ctx.observed:
                self.observer.plugins_evaluated(
                    fw.profile_name,
                    "Score",
                    (b.name for b in fw.score_plugins if b.name not in state.skip_score_plugins),
                    len(feasible),
                )
            if status is not None:
                raise CycleError(status)
            if self.extenders:
                extra = await self.extenders.prioritize(pi, feasible)
                for i, ni in enumerate(feasible):
                    for ext_name, weighted in extra.get(ni.name, ()):
                        totals[i] += weighted
                        if record is not None:
                            record.extender_prioritize.setdefault(ni.name, {})[ext_name] = weighted
        chosen = self._select_host(feasible, totals)
        if batch is not None:
            t0 = time.perf_counter()
            self.batching.store(fw, batch.signature, c.number, batch.hint, chosen, feasible, totals, raw)
            self.observer.batch_stored(fw.profile_name, time.perf_counter() - t0)
        return chosen

    def _select_host(self, nodes: Sequence[NodeInfo], totals: Sequence[int] | np.ndarray) -> str:
        """The highest total; ties broken uniformly at random (seedable)."""
        scores = np.asarray(totals)
        ties = positions(scores == scores.max())
        chosen = int(ties[0]) if len(ties) == 1 else int(ties[self.rng.randrange(len(ties))])
        return nodes[chosen].name

    async def _find_nodes_that_fit(
        self, c: PodCycle, all_nodes: list[NodeInfo]
    ) -> tuple[Sequence[NodeInfo], Diagnosis]:
        fw, state, pi, record, batch = c.fw, c.state, c.pod, c.traces, c.batch
        diagnosis = Diagnosis()
        t0 = time.perf_counter()
        result, status, rejectors = await fw.run_pre_filter(state, pi, record.prefilter if record else None)
        self.ctx.extension_point("PreFilter", status, fw, t0)
        if self.ctx.observed:
            self.observer.plugins_evaluated(fw.profile_name, "PreFilter", (b.name for b in fw.pre_filter_plugins), 1)
        if status is not None:
            if status.code is Code.ERROR:
                raise CycleError(status)
            diagnosis.pre_filter_msg = status.message()
            diagnosis.unschedulable_plugins = rejectors or ({status.plugin} if status.plugin else set())
            diagnosis.add_alike([ni.name for ni in all_nodes], status)
            return [], diagnosis
        nodes = all_nodes
        if result is not None and result.node_names is not None:
            names = result.node_names
            nodes = [ni for ni in all_nodes if ni.name in names]
            diagnosis.unschedulable_plugins |= rejectors
            absent = Status(
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE, f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(rejectors))}]"
            )
            diagnosis.add_alike([ni.name for ni in all_nodes if ni.name not in names], absent)
        t0 = time.perf_counter()
        nominated = pi.nominated_node_name
        hint: NodeInfo | None = None
        if batch is not None:
            # Asked even for a nominated pod (which gets none, and flushes the batch), as upstream.
            t_hint = time.perf_counter()
            batch.hint = await self.batching.hint(
                fw, state, pi, batch.signature, c.number, bool(nominated), self.snapshot.node_info_map.get
            )
            self.observer.batch_hint(fw.profile_name, batch.hint is not None, time.perf_counter() - t_hint)
            if batch.hint is not None:
                hint = self.snapshot.node_info_map.get(batch.hint)
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
                    self.observer.extension_point("Filter", "Success", fw.profile_name, time.perf_counter() - t0)
                    return [hint], diagnosis
                if status.code is Code.ERROR:
                    raise CycleError(status)
        first = self.next_start_node_index % len(nodes) if nodes else self.next_start_node_index
        feasible = await self._find_nodes_that_pass_filters(c, nodes, diagnosis, len(all_nodes))
        # The start index moved past the nodes processed (all of them when it came full circle).
        processed = (self.next_start_node_index - first) % len(all_nodes) or len(nodes)
        if self.ctx.observed:
            self.observer.plugins_evaluated(
                fw.profile_name,
                "Filter",
                (b.name for b in fw.filter_plugins if b.name not in state.skip_filter_plugins),
                processed,
            )
        if self.extenders and feasible:
            try:
                after = await self.extenders.filter(
                    pi, feasible, diagnosis.node_to_status, record.extender_filter if record else None
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
        self, c: PodCycle, nodes: list[NodeInfo], diagnosis: Diagnosis, num_all_nodes: int
    ) -> Sequence[NodeInfo]:
        fw, state, pi, record = c.fw, c.state, c.pod, c.traces
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
        nominator = self.nominator
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
        if nodes is self.snapshot.node_info_list:
            listed = None
        elif isinstance(nodes, NodeSubset):
            listed = nodes.rows_in(cols)
        else:
            listed = rows_of(nodes, cols.index)
        nominator = self.nominator
        nominated: set[int] = set()
        if nominator:
            nominated = {cols.index[name] for name in nominator.nominated_nodes() if name in cols.index}
        #: The feasible rows found, chunk by chunk (arrays: most cycles need one chunk, and the
        #: rows go back into an array at the end); ``found`` counts them.
        feasible: list[np.ndarray] = []
        found = 0
        rejected: list[tuple[BatchFilterResult, np.ndarray]] = []
        #: Nominated nodes the batch already rejected: they fail with the nominated pods too,
        #: and only a diagnosis needs their status (which the nominated-pods filter gives).
        deferred: list[tuple[BatchFilterResult, int, NodeInfo]] = []
        pos = 0
        while pos < n and found < want:
            need = want - found
            size = min(n - pos, need if pos == 0 else max(2 * need, 128))
            chunk = np.arange(start + pos, start + pos + size)  # in rotated order
            if start + pos + size > n:
                chunk %= n
            if listed is not None:
                chunk = listed[chunk]
            res = fw.run_filter_batch(state, pi, NodeBatch(cols, chunk))
            traces: dict[int, dict[str, str]] = {}
            chunk_deferred: list[tuple[BatchFilterResult, int, NodeInfo]] = []
            if nominated:
                for j in positions(np.isin(chunk, list(nominated))).tolist():
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
            passed = positions(res.ok)
            cut = int(passed[need - 1]) + 1 if len(passed) >= need else size
            for j in sorted(j for j, st in res.statuses.items() if j < cut and st.code is Code.ERROR)[:1]:
                raise CycleError(res.statuses[j])
            rows = chunk[passed[passed < cut]]
            feasible.append(rows)
            found += len(rows)
            deferred.extend(d for d in chunk_deferred if d[1] < cut)
            if record is not None:
                for j in range(cut):
                    record.filter[cols.names[int(chunk[j])]] = traces[j] if j in traces else res.trace(j)
            failed = positions(~res.ok[:cut])
            if len(failed):
                rejected.append((res, failed))
            pos += cut
        self.next_start_node_index = (start + pos) % num_all_nodes
        if not found or self.extenders or record is not None:
            for res, j, node in deferred:
                status = await fw.run_filter_with_nominated_pods(state, pi, node)
                res.statuses[j] = status or Status.as_error(
                    f"node {node.name!r} passed the filters with its nominated pods, failed them without"
                )
            statuses = diagnosis.node_to_status
            plugins = diagnosis.unschedulable_plugins
            for res, failed in rejected:
                # Where the bulk forms answered for every node, the statuses are counted now and
                # listed node by node only if someone reads the map (PostFilter, extenders).
                lazy = res.rejected_deferred(failed)
                if lazy is not None:
                    distinct, counts, list_them = lazy
                else:
                    names, judged, distinct = res.rejected_node_by_node(failed)
                # Nodes rejected alike share one Status: each distinct one is judged once.
                for status in distinct:
                    if status.code is Code.ERROR:
                        raise CycleError(status)
                    if status.plugin:
                        plugins.add(status.plugin)
                if lazy is not None:
                    diagnosis.add_counted_deferred(len(failed), list_them, zip(distinct, counts, strict=True))
                else:
                    statuses.add_columns(names, judged)
        rows = feasible[0] if len(feasible) == 1 else np.concatenate(feasible) if feasible else np.empty(0, np.intp)
        return NodeBatch(cols, rows.astype(np.intp, copy=False))

    async def _post_filter_and_fail(
        self, fw: Framework, state: CycleState, qpi: QueuedPodInfo, fit: FitError, record: PodResult | None
    ) -> None:
        pi = qpi.pod_info
        nominated: str | None = None
        if fw.has_post_filter_plugins():
            t0 = time.perf_counter()
            result, status = await fw.run_post_filter(
                state, pi, fit.diagnosis.node_to_status, tr.postfilter if (tr := self.ctx.traces(record)) else None
            )
            self.ctx.extension_point("PostFilter", status, fw, t0)
            if status.code is Code.ERROR:
                log.warning("PostFilter of pod %s failed: %s", pi.key, status.message())
            # Whatever PostFilter says, success included (preemption found a node), ends the
            # attempt's message, as upstream's PostFilterMsg.
            fit.diagnosis.post_filter_msg = status.message()
            if isinstance(result, PostFilterResult) and result.nominated_node_name:
                nominated = result.nominated_node_name
                # Hold the room preemption made: other pods' filters now count this pod there.
                self.nominator.add(pi, nominated)
            elif isinstance(result, PostFilterResult):
                # Preemption can help nowhere: the pod's nomination, if any, is cleared with the
                # report (upstream's ModeOverride with an empty node); no result leaves it.
                nominated = ""
                self.nominator.delete(pi.uid)
            self.observer.preemption_attempt()
        elif pi.nominated_node_name:
            # Nothing can nominate it anywhere: its nomination is cleared with the report.
            nominated = ""
            self.nominator.delete(pi.uid)
        message = str(fit)
        self.stats.unschedulable += 1
        if record is not None:
            record.phase = "Unschedulable"
            record.node = None
            record.message = message
        self.queue.add_unschedulable_if_not_present(qpi, fit.diagnosis.unschedulable_plugins)
        qpi.last_failure = message
        self.failures.report(fw, pi, "Unschedulable", message, record, nominated)
