"""The per-profile runtime: runs each extension point over a profile's plugins, with upstream semantics.

One :class:`Framework` exists per profile. It instantiates every plugin the profile enables
exactly once, knows which methods are coroutines (and awaits only those), and turns a
plugin's exception into an ERROR status that names the plugin and the extension point.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Callable, Coroutine, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from kubesched.framework.columns import NodeBatch
from kubesched.framework.events import ClusterEventWithHint
from kubesched.framework.features import FeatureGates
from kubesched.framework.informers import GroupVersionResource, Informer
from kubesched.framework.interface import (
    EXTENSION_POINTS,
    CycleState,
    Listers,
    Nominator,
    PodGroups,
    PostFilterResult,
    PreFilterResult,
    SharedLister,
)
from kubesched.framework.podgroup import (
    Placement,
    PlacementProgress,
    PodGroupAssignments,
    PodGroupInfo,
    PodGroupPostFilterResult,
    PodGroupState,
)
from kubesched.framework.status import Code, Status
from kubesched.framework.types import NodeInfo, PodInfo, QueuedPodInfo
from kubesched.runtime.batch_filter import BatchFilterResult, filter_verdict, run_filter_batch
from kubesched.runtime.calls import (
    BoundMethod,
    plugin_error,
    rejected_or_error,
    split_result,
    status_label,
    trace_value,
)
from kubesched.runtime.collaborators import Activator, PluginObserver, PreemptWithExtenders, Spawner
from kubesched.runtime.informers import SharedInformers
from kubesched.runtime.placement import (
    run_placement_feasible,
    run_placement_generate,
    run_placement_score,
    run_pod_group_post_filter,
)
from kubesched.runtime.prefilter import run_pre_filter_plugins
from kubesched.runtime.profile import FrameworkError, PluginRef, ProfileSpec, weighted_plugins
from kubesched.runtime.registry import Registry, RegistryError
from kubesched.runtime.scoring import normalize_and_check, run_score_plugins, score_values
from kubesched.runtime.signing import pod_signature
from kubesched.runtime.waiting_pods import MAX_PERMIT_TIMEOUT, WaitingPod, WaitingPods
from kubesched.tasks import TaskSet

__all__ = [
    "MAX_PERMIT_TIMEOUT",
    "Framework",
    "FrameworkError",
    "PluginRef",
    "ProfileSpec",
    "WaitingPod",
    "WaitingPods",
    "weighted_plugins",
]

log = logging.getLogger(__name__)

#: The name construction binds plugin methods with.
_Bound = BoundMethod


class _NoListers:
    def get(self, kind: str, namespace: str | None, name: str) -> dict[str, Any] | None:
        return None

    def list(self, kind: str, namespace: str | None = None) -> list[dict[str, Any]]:
        return []

    def namespace_labels(self, namespace: str) -> dict[str, str]:
        return {}


class _NoNominator:
    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        return []

    def has_nominated(self, node_name: str) -> bool:
        return False


class NoPodGroups:
    """A standalone Framework's pod groups: none known."""

    def get(self, namespace: str, name: str) -> dict[str, Any] | None:
        return None

    def state(self, namespace: str, name: str) -> PodGroupState:
        return PodGroupState()

    def member_count(self, namespace: str, name: str) -> int:
        return 0

    def scheduled_count(self, namespace: str, name: str) -> int:
        return 0

    def composite(self, namespace: str, name: str) -> dict[str, Any] | None:
        return None

    def root_of(self, key: str) -> str | None:
        return key

    def snapshot_top(self, key: str) -> tuple[str, str]:
        return key, ""

    def children(self, key: str) -> list[str]:
        return []

    def leaves_under(self, key: str) -> list[str]:
        return [key] if key.startswith("PodGroup/") else []


class Framework:
    """A profile's plugins and the code that runs them (also the plugins' ``Handle``)."""

    def __init__(
        self,
        spec: ProfileSpec,
        registry: Registry,
        *,
        cluster: Any = None,
        waiting_pods: WaitingPods | None = None,
        parallelism: int = 16,
        partial: bool = False,
        observer: PluginObserver | None = None,
        listers: Listers | None = None,
        nominator: Nominator | None = None,
        activator: Activator | None = None,
        spawner: Spawner | None = None,
        preempt_with_extenders: PreemptWithExtenders | None = None,
        feature_gates: FeatureGates | None = None,
        pod_groups: PodGroups | None = None,
        informers: SharedInformers | None = None,
    ) -> None:
        """Build the profile ``spec`` from ``registry``'s plugins; each plugin is constructed
        here, with this Framework as its handle, so the collaborators are in place before any
        plugin sees them. The scheduler gives them all; the defaults make a standalone Framework
        (a test harness) work: no cached objects, no nominated pods, no activation, background
        work in tasks of its own (see :meth:`wait_background`).

        ``partial`` skips the whole-profile checks (one QueueSort, a Bind plugin): for
        harnesses that run a single plugin."""
        self.spec = spec
        self.profile_name = spec.scheduler_name
        self._cluster = cluster
        self._parallelism = parallelism
        self.waiting_pods = waiting_pods if waiting_pods is not None else WaitingPods()
        self._snapshot: SharedLister | None = None
        #: Receives ``plugin_execution(plugin, point, status, seconds)`` in sampled cycles.
        self.observer: PluginObserver | None = observer
        #: Cached cluster objects, and pods nominated to nodes.
        self.listers: Listers = listers if listers is not None else _NoListers()
        self.nominator: Nominator = nominator if nominator is not None else _NoNominator()
        #: Given when an extender takes part in preemption:
        #: ``await preempt_with_extenders(pod, {node: (victims, pdb_violations)})`` → the same,
        #: possibly narrowed.
        self.preempt_with_extenders: PreemptWithExtenders | None = preempt_with_extenders
        #: Upstream's feature gates (1.37's defaults unless given), known before the plugins are
        #: built: a plugin reads them in its constructor (``handle.feature_gates``).
        self.feature_gates: FeatureGates = feature_gates if feature_gates is not None else FeatureGates()
        #: The pod groups and their members (the scheduler's index; empty for a harness).
        self._pod_groups: PodGroups = pod_groups if pod_groups is not None else NoPodGroups()
        #: The informers plugins ask for (:meth:`informer_for`), shared by every profile of a
        #: scheduler, which feeds them; a standalone Framework's are its own and stay empty.
        self.informers: SharedInformers = informers if informers is not None else SharedInformers()
        #: Upstream's SchedulerAsyncPreemption: preemption's API calls run in the background
        #: instead of inside the scheduling cycle. DefaultPreemption registers some events only
        #: with it.
        self.async_preemption = self.feature_gates.enabled("SchedulerAsyncPreemption")
        #: ``activator(uids)`` moves pods to activeQ, ``spawner(coro)`` runs work the scheduler
        #: waits for on stop. See :meth:`activate`, :meth:`run_in_background`.
        self.activator: Activator | None = activator
        self.spawner: Spawner | None = spawner
        self._background = TaskSet(f"framework {self.profile_name}")
        self.plugins: dict[str, Any] = {}
        self.percentage_of_nodes_to_score = spec.percentage_of_nodes_to_score

        for point, refs in spec.plugins.items():
            if point not in EXTENSION_POINTS:
                raise FrameworkError(f"profile {self.profile_name!r}: unknown extension point {point!r}")
            for ref in refs:
                if ref.name in self.plugins:
                    continue
                try:
                    entry = registry.get(ref.name)
                except RegistryError as exc:
                    raise FrameworkError(f"profile {self.profile_name!r}: {exc}") from exc
                args = spec.plugin_args.get(ref.name)
                args_model = getattr(entry.cls, "Args", None)
                if args is None and args_model is not None:
                    args = args_model()
                try:
                    self.plugins[ref.name] = entry.cls(args, self)
                except Exception as exc:  # construction failure is a config error
                    raise FrameworkError(
                        f"profile {self.profile_name!r}: plugin {ref.name!r} failed to initialize: {exc}"
                    ) from exc

        def bound(point: str) -> list[_Bound]:
            method = EXTENSION_POINTS[point]
            out = []
            for ref in spec.plugins.get(point, []):
                plugin = self.plugins[ref.name]
                if not callable(getattr(plugin, method, None)):
                    raise FrameworkError(
                        f"profile {self.profile_name!r}: plugin {ref.name!r} does not implement extension point {point!r}"
                    )
                out.append(_Bound(plugin, method, ref.weight))
            return out

        self.pre_enqueue_plugins = bound("preEnqueue")
        self.queue_sort_plugins = bound("queueSort")
        self.pre_filter_plugins = bound("preFilter")
        self.filter_plugins = bound("filter")
        self.post_filter_plugins = bound("postFilter")
        self.pre_score_plugins = bound("preScore")
        self.score_plugins = bound("score")
        self.reserve_plugins = bound("reserve")
        self.permit_plugins = bound("permit")
        self.pre_bind_plugins = bound("preBind")
        self.bind_plugins = bound("bind")
        self.post_bind_plugins = bound("postBind")
        self.placement_generate_plugins = bound("placementGenerate")
        self.placement_feasible_plugins = bound("placementFeasible")
        self.placement_score_plugins = bound("placementScore")
        self.pod_group_post_filter_plugins = bound("podGroupPostFilter")

        if not partial and len(self.queue_sort_plugins) != 1:
            raise FrameworkError(
                f"profile {self.profile_name!r}: exactly one queueSort plugin must be enabled, "
                f"found {len(self.queue_sort_plugins)}: {[b.name for b in self.queue_sort_plugins]}"
            )
        if not partial and not self.bind_plugins:
            raise FrameworkError(f"profile {self.profile_name!r}: at least one bind plugin is needed")
        for b in (*self.score_plugins, *self.placement_score_plugins):
            if b.weight <= 0:
                raise FrameworkError(
                    f"profile {self.profile_name!r}: score plugin {b.name!r} has weight {b.weight}; it must be positive"
                )
        self._filter_fns = [(b.name, b.fn) for b in self.filter_plugins]
        self._batch_filter_fns = [(b.name, b.fn, b.batch, b.statuses) for b in self.filter_plugins]
        #: The plugins that decide where a pod may go, each once: what signs a pod.
        self._signers = {
            b.name: b.plugin
            for b in (*self.pre_filter_plugins, *self.filter_plugins, *self.pre_score_plugins, *self.score_plugins)
        }
        #: Whether every one of them can sign a pod: only then may pods of this profile share a
        #: batch (upstream's rule; extenders disable it too, which the scheduler checks).
        self.signable = all(callable(getattr(p, "sign_pod", None)) for p in self._signers.values())
        self._normalizers = {
            b.name: _Bound(b.plugin, "normalize_score")
            for b in self.score_plugins
            if callable(getattr(b.plugin, "normalize_score", None))
        }
        self._placement_normalizers = {
            b.name: _Bound(b.plugin, "normalize_placement_scores")
            for b in self.placement_score_plugins
            if callable(getattr(b.plugin, "normalize_placement_scores", None))
        }
        self._unreserve_bound = [
            _Bound(b.plugin, "unreserve")
            for b in self.reserve_plugins
            if callable(getattr(b.plugin, "unreserve", None))
        ]
        self._prefilter_ext = [
            (_Bound(b.plugin, "add_pod"), _Bound(b.plugin, "remove_pod"))
            for b in self.pre_filter_plugins
            if callable(getattr(b.plugin, "add_pod", None)) and callable(getattr(b.plugin, "remove_pod", None))
        ]
        self.queue_sort_name = self.queue_sort_plugins[0].name if self.queue_sort_plugins else ""
        self.less: Callable[[QueuedPodInfo, QueuedPodInfo], bool] = (
            self.queue_sort_plugins[0].fn if self.queue_sort_plugins else (lambda a, b: a.timestamp < b.timestamp)
        )

    # --- pod signatures (opportunistic batching) ----------------------------------------------
    def sign_pod(self, pod: PodInfo) -> bytes | None:
        """What every plugin that decides where ``pod`` may go reads of it, as one comparable
        value: two pods with the same signature get the same answers from this profile's plugins
        on the same cluster. ``None`` when the profile or a plugin cannot sign it (a plugin's
        ``sign_pod`` returned ``None``, or raised)."""
        if not self.signable:
            return None
        return pod_signature(self._signers, pod)

    # --- plugin metrics (sampled cycles only) -------------------------------------------------
    async def _call(self, b: _Bound, point: str, state: CycleState, *args: Any) -> Any:
        """Call a per-pod plugin method; in a sampled cycle, also time it for the observer."""
        observer = self.observer
        if observer is None or not state.record_plugin_metrics:
            return await b.call(state, *args)
        t0 = time.perf_counter()
        try:
            result = await b.call(state, *args)
        except BaseException:
            observer.plugin_execution(b.name, point, "Error", time.perf_counter() - t0)
            raise
        status = result[0] if point == "Permit" and isinstance(result, tuple) else split_result(result)[1]
        observer.plugin_execution(b.name, point, status_label(status), time.perf_counter() - t0)
        return result

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

    # --- Handle ---------------------------------------------------------------------------------
    @property
    def pod_groups(self) -> PodGroups:
        return self._pod_groups

    def snapshot(self) -> SharedLister:
        if self._snapshot is None:
            raise RuntimeError("no snapshot yet: the scheduler sets one at the start of each cycle")
        return self._snapshot

    def set_snapshot(self, snapshot: SharedLister) -> None:
        self._snapshot = snapshot

    def get_waiting_pod(self, uid: str) -> WaitingPod | None:
        return self.waiting_pods.get(uid)

    def iterate_waiting_pods(self) -> Iterable[WaitingPod]:
        return iter(self.waiting_pods)

    def reject_waiting_pod(self, uid: str) -> bool:
        wp = self.waiting_pods.get(uid)
        if wp is None:
            return False
        for plugin in wp.pending_plugins():
            wp.reject(plugin, "removed")
            break
        return True

    def activate(self, pods: Iterable[PodInfo]) -> None:
        """Move ``pods`` (waiting in backoffQ or the unschedulable pool) to activeQ, through
        their PreEnqueue gates (upstream's ``Handle.Activate``)."""
        if self.activator is not None:
            self.activator([p.uid for p in pods])

    def run_in_background(self, coro: Coroutine[Any, Any, None]) -> None:
        """Run ``coro`` beside the scheduling loop, e.g. API calls a cycle must not wait for.
        The scheduler waits for it when it stops."""
        if self.spawner is not None:
            self.spawner(coro)
            return
        self._background.spawn(coro, name=f"{self.profile_name}: {getattr(coro, '__qualname__', 'background')}")

    async def wait_background(self) -> None:
        """Wait for the work :meth:`run_in_background` started here (no scheduler attached)."""
        await self._background.wait()

    @property
    def cluster(self) -> Any:
        return self._cluster

    def informer_for(self, gvr: GroupVersionResource | str) -> Informer:
        """The informer of a resource, built-in or custom (see
        :meth:`kubesched.framework.interface.Handle.informer_for`): one per resource for the
        whole scheduler, however many plugins and profiles ask. Ask in the plugin's constructor;
        a resource first asked for once the scheduler has started raises
        :class:`~kubesched.errors.PluginError`."""
        return self.informers.informer_for(gvr)

    @property
    def parallelism(self) -> int:
        return self._parallelism

    def events_to_register(self) -> dict[str, list[ClusterEventWithHint] | None]:
        """Each plugin's registered events; ``None`` for a plugin that does not say, which
        (as upstream) means any event may make its rejected pods schedulable."""
        out: dict[str, list[ClusterEventWithHint] | None] = {}
        for name, plugin in self.plugins.items():
            fn = getattr(plugin, "events_to_register", None)
            out[name] = list(fn()) if callable(fn) else None
        return out

    @functools.cached_property
    def pre_enqueue_is_async(self) -> bool:
        """Some PreEnqueue plugin is a coroutine function (the plugins are fixed per profile)."""
        return any(b.is_async for b in self.pre_enqueue_plugins)

    @functools.cached_property
    def pre_enqueue_by_pod_group(self) -> frozenset[str]:
        """The PreEnqueue plugins whose verdict for a pod, and whose queueing hints, depend only
        on the pod's pod group (they say so with ``pre_enqueue_by_pod_group = True``)."""
        return frozenset(
            b.name for b in self.pre_enqueue_plugins if getattr(b.plugin, "pre_enqueue_by_pod_group", False)
        )

    def run_pre_enqueue_sync(self, pod: PodInfo) -> Status | None:
        """:meth:`run_pre_enqueue` for profiles whose PreEnqueue plugins are all plain functions."""
        for b in self.pre_enqueue_plugins:
            try:
                status = split_result(b.fn(pod))[1]
            except Exception as exc:  # noqa: BLE001
                return plugin_error("PreEnqueue", b.name, exc)
            if status is not None and not status.is_success():
                return rejected_or_error("PreEnqueue", b.name, status)
        return None

    def has_filter_plugins(self) -> bool:
        return bool(self.filter_plugins)

    def has_post_filter_plugins(self) -> bool:
        return bool(self.post_filter_plugins)

    def has_score_plugins(self) -> bool:
        return bool(self.score_plugins)

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
        return await run_pre_filter_plugins(self.pre_filter_plugins, self._call, state, pod, trace)

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
        self, state: CycleState, pod: PodInfo, statuses: dict[str, Status], trace: dict[str, Any] | None = None
    ) -> tuple[PostFilterResult | None, Status]:
        """Run PostFilter plugins until one succeeds or one returns UnschedulableAndUnresolvable.
        When all reject, the last result any of them gave (e.g. DefaultPreemption's empty
        nomination, which clears the pod's) is kept, as upstream's."""
        reasons: list[str] = []
        rejectors: list[str] = []
        result: PostFilterResult | None = None
        for b in self.post_filter_plugins:
            try:
                r, status = split_result(await self._call(b, "PostFilter", state, pod, statuses))
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
        for b in self.pre_score_plugins:
            try:
                status = split_result(await self._call(b, "PreScore", state, pod, nodes))[1]
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

    # --- Reserve / Unreserve ----------------------------------------------------------------------
    async def run_reserve(
        self, state: CycleState, pod: PodInfo, node_name: str, trace: dict[str, Any] | None = None
    ) -> Status | None:
        for b in self.reserve_plugins:
            try:
                status = split_result(await self._call(b, "Reserve", state, pod, node_name))[1]
            except Exception as exc:  # noqa: BLE001
                return plugin_error("Reserve", b.name, exc)
            if trace is not None:
                trace[b.name] = trace_value(status)
            if status is not None and not status.is_success():
                return rejected_or_error("Reserve", b.name, status)
        return None

    async def run_unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        """Unreserve every Reserve plugin in reverse order; failures are logged, never raised."""
        for b in reversed(self._unreserve_bound):
            try:
                await b.call(state, pod, node_name)
            except Exception:
                log.exception("Unreserve of plugin %s failed for pod %s", b.name, pod.key)

    # --- Permit ---------------------------------------------------------------------------------
    async def run_permit(
        self, state: CycleState, pod: PodInfo, node_name: str, trace: dict[str, Any] | None = None
    ) -> Status | None:
        """Success, a rejection, or Wait (the pod is then registered as a waiting pod)."""
        waits: dict[str, float] = {}
        for b in self.permit_plugins:
            try:
                r = await self._call(b, "Permit", state, pod, node_name)
            except Exception as exc:  # noqa: BLE001
                return plugin_error("Permit", b.name, exc)
            timeout = 0.0
            if isinstance(r, tuple):
                status, timeout = r[0], float(r[1] or 0)
            else:
                status = r
            if trace is not None:
                trace[b.name] = trace_value(status)
            if status is None or status.is_success():
                continue
            status.with_plugin(b.name)
            if status.is_wait():
                waits[b.name] = min(timeout, MAX_PERMIT_TIMEOUT)
                continue
            return rejected_or_error("Permit", b.name, status)
        if waits:
            wp = WaitingPod(pod, waits, asyncio.get_running_loop())
            self.waiting_pods.add(wp)
            return Status(Code.WAIT, f'one or more plugins asked to wait and no plugin rejected pod "{pod.name}"')
        return None

    async def wait_on_permit(self, pod: PodInfo) -> Status | None:
        wp = self.waiting_pods.get(pod.uid)
        if wp is None:
            return None
        started = time.perf_counter()
        try:
            status = await wp.wait()
        finally:
            self.waiting_pods.remove(pod.uid)
        if self.observer is not None:
            self.observer.permit_waited(status.code.upstream_name, time.perf_counter() - started)
        if status.is_success():
            return None
        return status

    # --- PreBind / Bind / PostBind --------------------------------------------------------------
    async def run_pre_bind(
        self, state: CycleState, pod: PodInfo, node_name: str, trace: dict[str, Any] | None = None
    ) -> Status | None:
        for b in self.pre_bind_plugins:
            try:
                status = split_result(await self._call(b, "PreBind", state, pod, node_name))[1]
            except Exception as exc:  # noqa: BLE001
                return plugin_error("PreBind", b.name, exc)
            if trace is not None:
                trace[b.name] = trace_value(status)
            if status is not None and not status.is_success() and not status.is_skip():
                return rejected_or_error("PreBind", b.name, status)
        return None

    async def run_bind(
        self, state: CycleState, pod: PodInfo, node_name: str, trace: dict[str, Any] | None = None
    ) -> Status | None:
        """The first Bind plugin that does not Skip decides; all skipping is an error."""
        for b in self.bind_plugins:
            try:
                status = split_result(await self._call(b, "Bind", state, pod, node_name))[1]
            except Exception as exc:  # noqa: BLE001
                return plugin_error("Bind", b.name, exc)
            if trace is not None:
                trace[b.name] = trace_value(status)
            if status is not None and status.is_skip():
                continue
            if status is not None and not status.is_success():
                return rejected_or_error("Bind", b.name, status)
            return None
        return Status.as_error("all bind plugins skipped binding the pod")

    async def run_post_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        for b in self.post_bind_plugins:
            try:
                await b.call(state, pod, node_name)
            except Exception:
                log.exception("PostBind of plugin %s failed for pod %s", b.name, pod.key)

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

    async def run_pod_group_post_filter(
        self, state: CycleState, group: PodGroupInfo, schedule: Any
    ) -> tuple[PodGroupPostFilterResult | None, Status]:
        return await run_pod_group_post_filter(self.pod_group_post_filter_plugins, self._call, state, group, schedule)
