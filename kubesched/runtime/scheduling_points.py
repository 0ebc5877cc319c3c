"""The scheduling cycle's extension points, run over a profile's plugins with upstream's semantics:
PreEnqueue, PreFilter (with AddPod and RemovePod), Filter (with the nominated pods), PostFilter,
PreScore and Score; and the points of a pod group's cycle (see :mod:`kubesched.runtime.placement`).
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from kubesched.framework.columns import NodeBatch
from kubesched.framework.interface import CycleState, Nominator, PostFilterResult, PreFilterResult
from kubesched.framework.podgroup import (
    Placement,
    PlacementProgress,
    PodGroupAssignments,
    PodGroupInfo,
    PodGroupPostFilterResult,
)
from kubesched.framework.results import PodGroupSchedule
from kubesched.framework.status import Code, Status
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.runtime.batch_filter import BatchFilterResult, filter_verdict, run_filter_batch
from kubesched.runtime.calls import (
    PLAIN_RESULTS,
    BoundMethod,
    plugin_error,
    post_filter_parts,
    rejected_or_error,
    split_result,
    status_label,
    trace_value,
)
from kubesched.runtime.placement import (
    placement_score_bounds,
    run_placement_feasible,
    run_placement_generate,
    run_placement_score,
    run_pod_group_post_filter,
)
from kubesched.runtime.prefilter import run_pre_filter_plugins
from kubesched.runtime.scoring import normalize_and_check, run_score_plugins, score_values
from kubesched.runtime.timed_calls import TimedCalls


class SchedulingPoints(TimedCalls):
    """The runners of the scheduling cycle's points, a part of :class:`kubesched.runtime.framework.Framework`,
    which binds the plugins they run."""

    nominator: Nominator
    pre_enqueue_plugins: list[BoundMethod]
    pre_filter_plugins: list[BoundMethod]
    filter_plugins: list[BoundMethod]
    post_filter_plugins: list[BoundMethod]
    pre_score_plugins: list[BoundMethod]
    score_plugins: list[BoundMethod]
    placement_generate_plugins: list[BoundMethod]
    placement_feasible_plugins: list[BoundMethod]
    placement_score_plugins: list[BoundMethod]
    pod_group_post_filter_plugins: list[BoundMethod]
    _filter_fns: list[tuple[str, Callable[..., Any]]]
    _batch_filter_fns: list[tuple[str, Callable[..., Any], Callable[..., Any] | None, Callable[..., Any] | None]]
    _prefilter_ext: list[tuple[BoundMethod, BoundMethod]]
    _normalizers: dict[str, BoundMethod]
    _placement_normalizers: dict[str, BoundMethod]

    def _run_filter_timed(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        observer = self.observer
        assert observer is not None
        skip = state.skip_filter_plugins
        for name, fn in self._filter_fns:
            if skip and name in skip:
                continue
            t0 = time.perf_counter()
            try:
                status = fn(state, pod, node)
            except Exception as exc:  # noqa: BLE001
                observer.plugin_execution(name, "Filter", "Error", time.perf_counter() - t0)
                return plugin_error("filter", name, exc)
            observer.plugin_execution(name, "Filter", status_label(status), time.perf_counter() - t0)
            if status is not None and status.code is not Code.SUCCESS:
                return filter_verdict(name, status)
        return None

    # --- PreEnqueue -----------------------------------------------------------------------------
    async def run_pre_enqueue(self, pod: PodInfo) -> Status | None:
        for b in self.pre_enqueue_plugins:
            try:
                status = split_result(await b.call(pod))[1]
            except Exception as exc:  # noqa: BLE001
                return plugin_error("PreEnqueue", b.name, exc)
            if status is not None and not status.is_success():
                return rejected_or_error("PreEnqueue", b.name, status)
        return None

    # --- PreFilter ------------------------------------------------------------------------------
    async def run_pre_filter(
        self, state: CycleState, pod: PodInfo, trace: dict[str, Any] | None = None
    ) -> tuple[PreFilterResult | None, Status | None, set[str]]:
        """Run PreFilter plugins. Returns the merged node restriction (None: all nodes), a
        non-success status when the pod cannot be scheduled, and the plugins that rejected it."""
        timed = self.observer is not None and state.record_plugin_metrics
        return await run_pre_filter_plugins(self.pre_filter_plugins, self._call, state, pod, trace, timed)

    def filter_plugins_in_play(self, state: CycleState) -> list[Any]:
        """The Filter plugins a cycle runs (those its PreFilter did not skip), in order."""
        skip = state.skip_filter_plugins
        return [b.plugin for b in self.filter_plugins if not (skip and b.name in skip)]

    def pre_filter_extensions_in_play(self, state: CycleState) -> bool:
        """Whether some PreFilter plugin the cycle did not skip has AddPod/RemovePod."""
        skip = state.skip_filter_plugins
        return any(add.name not in skip for add, _ in self._prefilter_ext)

    async def run_pre_filter_add_pod(
        self, state: CycleState, pod: PodInfo, to_add: PodInfo, node: NodeInfo
    ) -> Status | None:
        for add, _ in self._prefilter_ext:
            if add.name in state.skip_filter_plugins:
                continue
            try:
                status = split_result(await add.call(state, pod, to_add, node))[1]
            except Exception as exc:  # noqa: BLE001
                return plugin_error("AddPod", add.name, exc)
            if status is not None and not status.is_success():
                return Status.as_error(f'running AddPod on PreFilter plugin "{add.name}": {status.message()}', add.name)
        return None

    async def run_pre_filter_remove_pod(
        self, state: CycleState, pod: PodInfo, to_remove: PodInfo, node: NodeInfo
    ) -> Status | None:
        for _, remove in self._prefilter_ext:
            if remove.name in state.skip_filter_plugins:
                continue
            try:
                status = split_result(await remove.call(state, pod, to_remove, node))[1]
            except Exception as exc:  # noqa: BLE001
                return plugin_error("RemovePod", remove.name, exc)
            if status is not None and not status.is_success():
                return Status.as_error(
                    f'running RemovePod on PreFilter plugin "{remove.name}": {status.message()}', remove.name
                )
        return None

    # --- Filter ---------------------------------------------------------------------------------
    def run_filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        """Run Filter plugins on one node, stopping at the first that rejects it."""
        if state.record_plugin_metrics and self.observer is not None:
            return self._run_filter_timed(state, pod, node)
        skip = state.skip_filter_plugins
        for name, fn in self._filter_fns:
            if skip and name in skip:
                continue
            try:
                status = fn(state, pod, node)
            except Exception as exc:  # noqa: BLE001
                return plugin_error("filter", name, exc)
            if status is not None and status.code is not Code.SUCCESS:
                return filter_verdict(name, status)
        return None

    def run_filter_batch(self, state: CycleState, pod: PodInfo, batch: NodeBatch) -> BatchFilterResult:
        """Filter every node of ``batch`` at once: the same verdicts as :meth:`run_filter` node by
        node, each plugin evaluating the nodes the previous ones let through (in one call when it
        has ``filter_nodes``). Statuses of rejected nodes are computed when asked for."""
        observer = self.observer if state.record_plugin_metrics else None
        return run_filter_batch(self._batch_filter_fns, state, pod, batch, observer)

    def nominated_pods_counted(self, pod: PodInfo, node_name: str) -> list[PodInfo]:
        """The pods nominated to ``node_name`` that ``pod``'s filters count as placed there:
        the others of equal or higher priority."""
        return [
            p
            for p in self.nominator.nominated_pods_for_node(node_name)
            if p.uid != pod.uid and p.priority >= pod.priority
        ]

    async def run_filter_with_nominated_pods(
        self, state: CycleState, pod: PodInfo, node: NodeInfo, trace: dict[str, str] | None = None
    ) -> Status | None:
        """Filter as upstream's RunFilterPluginsWithNominatedPods: first with the pods nominated to
        this node (of equal or higher priority) added, as if they were running there; then,
        only if that passed and some were added, once more without them — so that a pod fits
        only where it fits both with and without them."""
        nominated = self.nominated_pods_counted(pod, node.name)
        if not nominated:
            if trace is not None:
                return self.run_filter_traced(state, pod, node, trace)
            return self.run_filter(state, pod, node)
        state_with = state.clone()
        node_with = node.clone()
        for p in nominated:
            node_with.add_pod(p)
            status = await self.run_pre_filter_add_pod(state_with, pod, p, node_with)
            if status is not None and not status.is_success():
                return status
        if trace is not None:
            first = self.run_filter_traced(state_with, pod, node_with, trace)
        else:
            first = self.run_filter(state_with, pod, node_with)
        if first is not None:
            return first
        if trace is not None:
            return self.run_filter_traced(state, pod, node, trace)
        return self.run_filter(state, pod, node)

    def run_filter_traced(
        self, state: CycleState, pod: PodInfo, node: NodeInfo, trace: dict[str, str]
    ) -> Status | None:
        """:meth:`run_filter`, recording each plugin that ran: ``"passed"`` or its reason."""
        skip = state.skip_filter_plugins
        for name, fn in self._filter_fns:
            if skip and name in skip:
                continue
            try:
                status = fn(state, pod, node)
            except Exception as exc:  # noqa: BLE001
                status = plugin_error("filter", name, exc)
            if status is None or status.code is Code.SUCCESS:
                trace[name] = "passed"
                continue
            trace[name] = status.message()
            return filter_verdict(name, status)
        return None

    # --- PostFilter -----------------------------------------------------------------------------
    async def run_post_filter(
        self, state: CycleState, pod: PodInfo, statuses: Mapping[str, Status], trace: dict[str, Any] | None = None
    ) -> tuple[PostFilterResult | None, Status]:
        """Run PostFilter plugins until one succeeds or one returns UnschedulableAndUnresolvable.
        When all reject, the last result any of them gave (e.g. DefaultPreemption's empty
        nomination, which clears the pod's) is kept, as upstream's."""
        reasons: list[str] = []
        rejectors: list[str] = []
        result: PostFilterResult | None = None
        for b in self.post_filter_plugins:
            try:
                r, status = post_filter_parts(await self._call(b, "PostFilter", state, pod, statuses))
            except Exception as exc:  # noqa: BLE001
                return None, plugin_error("PostFilter", b.name, exc)
            if trace is not None:
                trace[b.name] = (
                    trace_value(status)
                    if not isinstance(r, PostFilterResult) or not r.nominated_node_name
                    else r.nominated_node_name
                )
            if status is None or status.is_success():
                # The plugin's message goes with it (preemption says where it found room).
                return r, Status(Code.SUCCESS, *(status.reasons if status is not None else ()), plugin=b.name)
            status.with_plugin(b.name)
            if status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return r, status
            if status.code is Code.ERROR:
                return None, status
            if isinstance(r, PostFilterResult):
                result = r
            reasons.extend(status.reasons)
            rejectors.append(b.name)
        st = Status(Code.UNSCHEDULABLE, *reasons, plugin=rejectors[0] if rejectors else "")
        return result, st

    # --- PreScore / Score -----------------------------------------------------------------------
    async def run_pre_score(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo], trace: dict[str, Any] | None = None
    ) -> Status | None:
        timed = self.observer is not None and state.record_plugin_metrics
        for b in self.pre_score_plugins:
            try:
                if timed or b.is_async:
                    out = await self._call(b, "PreScore", state, pod, nodes)
                else:
                    # A plain plugin, not timed: called directly (what _call would do, inline).
                    out = b.fn(state, pod, nodes)
                    if type(out) not in PLAIN_RESULTS and inspect.isawaitable(out):
                        out = await out
                status = out if out is None or type(out) is Status else split_result(out)[1]
            except Exception as exc:  # noqa: BLE001
                return plugin_error("PreScore", b.name, exc)
            if trace is not None:
                trace[b.name] = trace_value(status)
            if status is None or status.is_success():
                continue
            if status.is_skip():
                state.skip_score_plugins.add(b.name)
                continue
            return Status.as_error(f'running PreScore plugin "{b.name}": {status.message()}', b.name)
        return None

    async def run_score(
        self,
        state: CycleState,
        pod: PodInfo,
        nodes: Sequence[NodeInfo],
        raw: dict[str, dict[str, int]] | None = None,
        final: dict[str, dict[str, int]] | None = None,
    ) -> tuple[list[int], Status | None]:
        """Score every node with every (non-skipped) score plugin, normalize, apply weights.

        Returns the total per node (same order as ``nodes``). ``raw``/``final``, when given, are
        filled with ``{node: {plugin: score}}`` before and after normalization and weight.
        """
        totals, status = await self.run_score_array(state, pod, nodes, raw, final)
        return ([] if status is not None else totals.tolist()), status

    async def run_score_array(
        self,
        state: CycleState,
        pod: PodInfo,
        nodes: Sequence[NodeInfo],
        raw: dict[str, dict[str, int]] | None = None,
        final: dict[str, dict[str, int]] | None = None,
        raw_columns: dict[str, np.ndarray] | None = None,
    ) -> tuple[np.ndarray, Status | None]:
        """:meth:`run_score` with the totals as an int64 array. ``nodes`` may be a
        :class:`NodeBatch`: batch plugins then read the snapshot's columns. ``raw_columns``, when
        given, gets each plugin's raw scores (opportunistic batching re-normalizes them)."""
        observer = self.observer if state.record_plugin_metrics else None
        return await run_score_plugins(
            self.score_plugins, self._normalizers, state, pod, nodes, observer, raw, final, raw_columns
        )

    def run_raw_score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> tuple[dict[str, int], Status | None]:
        """Upstream's RunRawScorePlugins: every (non-skipped) Score plugin's raw score of one node,
        before NormalizeScore; or the error that stopped it."""
        skip = state.skip_score_plugins
        out: dict[str, int] = {}
        for b in self.score_plugins:
            if skip and b.name in skip:
                continue
            try:
                out[b.name] = int(score_values(b, state, pod, [node])[0])
            except Exception as exc:  # noqa: BLE001
                return out, plugin_error("Score", b.name, exc)
        return out, None

    async def normalize_raw_scores(
        self, state: CycleState, pod: PodInfo, names: Sequence[str], raw: Mapping[str, np.ndarray]
    ) -> tuple[np.ndarray, Status | None]:
        """Upstream's NormalizeScores: the weighted totals of the nodes ``names`` from the raw
        scores ``raw`` (plugin → one score per node), each (non-skipped) Score plugin normalized
        over all of them. A plugin without raw scores is an error."""
        totals = np.zeros(len(names), np.int64)
        skip = state.skip_score_plugins
        for b in self.score_plugins:
            if skip and b.name in skip:
                continue
            values = raw.get(b.name)
            if values is None:
                return totals, Status.as_error(f'no raw scores of Score plugin "{b.name}" to normalize', b.name)
            normalized, status = await normalize_and_check(
                b, self._normalizers.get(b.name), state, pod, names, np.array(values, dtype=np.int64)
            )
            if status is not None:
                return totals, status
            totals += normalized * b.weight
        return totals, None

    # --- the pod-group cycle's points (see kubesched.runtime.placement) -------------------------
    def has_placement_plugins(self) -> bool:
        """Whether a PlacementGenerate plugin proposes node sets (else one placement: the
        whole cluster)."""
        return bool(self.placement_generate_plugins)

    async def run_placement_generate(
        self, state: CycleState, group: PodGroupInfo, parent: Placement
    ) -> tuple[list[Placement], Status | None]:
        return await run_placement_generate(self.placement_generate_plugins, self._call, state, group, parent)

    async def run_placement_feasible(
        self, state: CycleState, group: PodGroupInfo, progress: PlacementProgress
    ) -> Status | None:
        return await run_placement_feasible(self.placement_feasible_plugins, self._call, state, group, progress)

    async def run_placement_score(
        self,
        state: CycleState,
        group: PodGroupInfo,
        proposals: Sequence[tuple[CycleState, PodGroupAssignments]],
        per_plugin: dict[str, list[int]] | None = None,
    ) -> tuple[list[int], Status | None]:
        return await run_placement_score(
            self.placement_score_plugins, self._placement_normalizers, self._call, state, group, proposals, per_plugin
        )

    def placement_score_bounds(
        self, state: CycleState, group: PodGroupInfo, placements: Sequence[Placement], members: Sequence[PodInfo]
    ) -> list[int] | None:
        """The highest total each placement can score, when the plugins can tell
        (:func:`~kubesched.runtime.placement.placement_score_bounds`)."""
        return placement_score_bounds(self.placement_score_plugins, state, group, placements, members)

    async def run_pod_group_post_filter(
        self, state: CycleState, group: PodGroupInfo, schedule: PodGroupSchedule
    ) -> tuple[PodGroupPostFilterResult | None, Status]:
        return await run_pod_group_post_filter(self.pod_group_post_filter_plugins, self._call, state, group, schedule)
