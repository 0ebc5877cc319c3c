"""The per-profile runtime: runs each extension point over a profile's plugins, with upstream semantics.

One :class:`Framework` exists per profile. It instantiates every plugin the profile enables
exactly once, knows which methods are coroutines (and awaits only those), and turns a
plugin's exception into an ERROR status that names the plugin and the extension point.

This module builds the profile; its plugins are given a
:class:`~kubesched.runtime.handle.PluginHandle` over it (the face's ``Handle``, nothing more).
The extension points' runners are its bases: :mod:`kubesched.runtime.scheduling_points`
(PreEnqueue to Score, and a pod group's points) and :mod:`kubesched.runtime.binding_points`
(Reserve to PostBind).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Coroutine, Iterable
from typing import Any

from kubesched.framework.events import ClusterEventWithHint
from kubesched.framework.features import FeatureGates
from kubesched.framework.informers import GroupVersionResource, Informer
from kubesched.framework.interface import EXTENSION_POINTS, Listers, Nominator, PodGroups, SharedLister
from kubesched.framework.podgroup import POD_GROUP_KIND, GroupKey, PodGroupState
from kubesched.framework.status import Status
from kubesched.framework.types import PodInfo, QueuedPodInfo
from kubesched.runtime.binding_points import BindingPoints
from kubesched.runtime.calls import BoundMethod, plugin_error, rejected_or_error, split_result
from kubesched.runtime.collaborators import Activator, Collaborators, PluginObserver, PreemptWithExtenders, Spawner
from kubesched.runtime.handle import PluginHandle
from kubesched.runtime.informers import SharedInformers
from kubesched.runtime.profile import FrameworkError, PluginRef, ProfileSpec, weighted_plugins
from kubesched.runtime.registry import Registry, RegistryError
from kubesched.runtime.scheduling_points import SchedulingPoints
from kubesched.runtime.signing import PodSigner
from kubesched.runtime.waiting_pods import MAX_PERMIT_TIMEOUT, WaitingPod, WaitingPods
from kubesched.tasks import TaskSet

__all__ = [
    "MAX_PERMIT_TIMEOUT",
    "Collaborators",
    "Framework",
    "FrameworkError",
    "PluginRef",
    "ProfileSpec",
    "WaitingPod",
    "WaitingPods",
    "weighted_plugins",
]

#: The name construction binds plugin methods with.
_Bound = BoundMethod


class _NoListers:
    def get(self, kind: str, namespace: str | None, name: str) -> dict[str, Any] | None:
        return None

    def list(self, kind: str, namespace: str | None = None) -> list[dict[str, Any]]:
        return []

    def namespace_labels(self, namespace: str) -> dict[str, str]:
        return {}


def _no_pod(uid: str) -> PodInfo | None:
    """A standalone Framework caches no pods."""
    return None


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

    def root_of(self, key: GroupKey) -> GroupKey | None:
        return key

    def snapshot_top(self, key: GroupKey) -> tuple[GroupKey | None, str]:
        return key, ""

    def children(self, key: GroupKey) -> list[GroupKey]:
        return []

    def leaves_under(self, key: GroupKey) -> list[GroupKey]:
        return [key] if key.kind == POD_GROUP_KIND else []


class Framework(SchedulingPoints, BindingPoints):
    """A profile's plugins and the code that runs them. The plugins reach it through
    :attr:`handle`, which offers the face's ``Handle`` alone."""

    def __init__(
        self,
        spec: ProfileSpec,
        registry: Registry,
        given: Collaborators | None = None,
        *,
        parallelism: int = 16,
        partial: bool = False,
        feature_gates: FeatureGates | None = None,
    ) -> None:
        """Build the profile ``spec`` from ``registry``'s plugins; each plugin is constructed
        here, with :attr:`handle` (over this Framework), so the collaborators ``given`` are in
        place before any plugin sees them. The scheduler gives them all; the defaults make a
        standalone Framework (a test harness) work: no cached objects, no nominated pods, no
        activation, background work in tasks of its own (see :meth:`wait_background`).

        ``partial`` skips the whole-profile checks (one QueueSort, a Bind plugin): for
        harnesses that run a single plugin."""
        c = given if given is not None else Collaborators()
        self.spec = spec
        self.profile_name = spec.scheduler_name
        self._cluster = c.cluster
        self._parallelism = parallelism
        self.waiting_pods = c.waiting_pods if c.waiting_pods is not None else WaitingPods()
        self._snapshot: SharedLister | None = None
        #: Receives ``plugin_execution(plugin, point, status, seconds)`` in sampled cycles.
        self.observer: PluginObserver | None = c.observer
        #: Cached cluster objects, and pods nominated to nodes.
        self.listers: Listers = c.listers if c.listers is not None else _NoListers()
        self.nominator: Nominator = c.nominator if c.nominator is not None else _NoNominator()
        #: Given when an extender takes part in preemption:
        #: ``await preempt_with_extenders(pod, {node: (victims, pdb_violations)})`` → the same,
        #: possibly narrowed.
        self.preempt_with_extenders: PreemptWithExtenders | None = c.preempt_with_extenders
        #: Upstream's feature gates (1.37's defaults unless given), known before the plugins are
        #: built: a plugin reads them in its constructor (``handle.feature_gates``).
        self.feature_gates: FeatureGates = feature_gates if feature_gates is not None else FeatureGates()
        #: The pod groups and their members (the scheduler's index; empty for a harness).
        self._pod_groups: PodGroups = c.pod_groups if c.pod_groups is not None else NoPodGroups()
        #: The informers plugins ask for (:meth:`informer_for`), shared by every profile of a
        #: scheduler, which feeds them; a standalone Framework's are its own and stay empty.
        self.informers: SharedInformers = c.informers if c.informers is not None else SharedInformers()
        #: ``activator(uids)`` moves pods to activeQ, ``spawner(coro)`` runs work the scheduler
        #: waits for on stop. See :meth:`activate`, :meth:`run_in_background`.
        self.activator: Activator | None = c.activator
        self.spawner: Spawner | None = c.spawner
        #: ``placed_pod(uid)``: the pod as the scheduler's cache holds it (bound or assumed), or
        #: None once gone: what async preemption asks of its last victim, as upstream's
        #: executor asks its pod lister.
        self.placed_pod: Callable[[str], PodInfo | None] = c.placed_pod if c.placed_pod is not None else _no_pod
        self._background = TaskSet(f"framework {self.profile_name}")
        self.plugins: dict[str, Any] = {}
        #: What the plugins are given: the face's ``Handle`` over this Framework, and no more.
        self.handle = PluginHandle(self)
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
                    self.plugins[ref.name] = entry.cls(args, self.handle)
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
        self._signer = PodSigner(self._signers)
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
        return self._signer.sign(pod)

    # --- what the plugins' handle passes on (kubesched.runtime.handle) ---------------------
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

    def run_pre_enqueue_sync(self, pod: PodInfo) -> Status | None:
        """:meth:`run_pre_enqueue` for profiles whose PreEnqueue plugins are all plain functions."""
        for b in self.pre_enqueue_plugins:
            try:
                out = b.fn(pod)
                status = out if out is None or type(out) is Status else split_result(out)[1]
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
