"""Every extension point of one plugin (or of a few, in one profile), driven through the runtime.

    from kubesched.testing import make_node, make_pod, plugin_framework

    with plugin_framework(MyPlugin, nodes=[make_node("n1"), make_node("n2")]) as fw:
        pod = make_pod("p")
        assert fw.pre_filter(pod).status is None
        assert fw.filter(pod, "n1") is None
        assert fw.score(pod) == {"n1": 100, "n2": 0}
        assert fw.reserve(pod, "n1") is None
        assert fw.permit(pod, "n1") is None

Each point runs the way the scheduler runs it (:class:`kubesched.runtime.framework.Framework`'s
``run_*``): a plugin's exception becomes an Error naming it, a rejection names the plugin, Skip
and Wait mean what they mean upstream. The calls made for one pod share one CycleState (its
cycle) until :meth:`~kubesched.testing.driver.DriverBase.new_cycle`; ``state=`` gives another.
Methods are synchronous; the ``a``-prefixed ones are their coroutines, for ``async`` tests.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kubesched.framework.features import FeatureGates
from kubesched.framework.interface import CycleState, PostFilterResult, PreFilterResult
from kubesched.framework.status import Code, Status
from kubesched.framework.types import NodeInfo, QueuedPodInfo
from kubesched.testing.builders import PodGroupBuilder
from kubesched.testing.partial_profile import NodeLike, PodLike, as_node_infos, build_framework
from kubesched.testing.permit import PermitPoints
from kubesched.testing.placement import PlacementPoints, pod_group_index


@dataclass
class PreFilterOutcome:
    """What PreFilter said: the nodes it allows (``None``: all), and a rejection (``None``:
    the pod goes on to Filter) with the plugins that gave it."""

    result: PreFilterResult | None
    status: Status | None
    rejected_by: set[str] = field(default_factory=set)

    @property
    def node_names(self) -> set[str] | None:
        """The nodes PreFilter allows, or ``None`` for all."""
        if self.result is None or self.result.node_names is None:
            return None
        return set(self.result.node_names)


@dataclass
class PostFilterOutcome:
    """What PostFilter said: its result (``nominated_node_name`` when a plugin nominated the pod)
    and its status (Success when a plugin made room, else the rejection)."""

    result: PostFilterResult | None
    status: Status

    @property
    def nominated_node_name(self) -> str | None:
        return self.result.nominated_node_name if self.result is not None else None


@dataclass
class ScoreOutcome:
    """Scores by node name: ``totals`` (normalized, weighted, summed over the Score plugins),
    ``raw`` and ``final`` per plugin (``{plugin: {node: score}}``, before and after
    NormalizeScore and the weight), or the ``status`` that stopped scoring."""

    totals: dict[str, int]
    raw: dict[str, dict[str, int]]
    final: dict[str, dict[str, int]]
    status: Status | None = None


class PluginFramework(PermitPoints, PlacementPoints):
    """The extension points of a framework of plugins, called one at a time by a test; the
    pod-group points too (:class:`~kubesched.testing.placement.PlacementPoints`).

    Built by :func:`plugin_framework`; ``framework`` is the runtime's Framework (the plugins'
    Handle), ``node_infos`` the nodes it sees by name."""

    # --- PreEnqueue ---------------------------------------------------------------------------------
    async def apre_enqueue(self, pod: PodLike) -> Status | None:
        """Run PreEnqueue: ``None`` when the pod may enter activeQ, else the gate's status."""
        return await self.framework.run_pre_enqueue(self.pod_info(pod))

    def pre_enqueue(self, pod: PodLike) -> Status | None:
        """:meth:`apre_enqueue`, on the driver's loop."""
        return self.run(self.apre_enqueue(pod))

    # --- QueueSort ----------------------------------------------------------------------------------
    def queued(self, pod: PodLike | QueuedPodInfo, timestamp: float = 0.0) -> QueuedPodInfo:
        """``pod`` as the queue holds it, added at ``timestamp``."""
        if isinstance(pod, QueuedPodInfo):
            return pod
        return QueuedPodInfo(self.pod_info(pod), timestamp)

    def less(self, a: PodLike | QueuedPodInfo, b: PodLike | QueuedPodInfo) -> bool:
        """The QueueSort plugin's ``less``: whether ``a`` leaves the queue before ``b`` (pods
        not given as QueuedPodInfos were both added at the same time)."""
        return self.framework.less(self.queued(a), self.queued(b))

    def sort_pods(self, pods: Iterable[PodLike | QueuedPodInfo]) -> list[str]:
        """The names of ``pods`` in the order the queue pops them; pods not given as
        QueuedPodInfos were added in the order given, one second apart."""
        queued = [self.queued(p, float(i)) for i, p in enumerate(pods)]
        less = self.framework.less

        def compare(x: QueuedPodInfo, y: QueuedPodInfo) -> int:
            return -1 if less(x, y) else (1 if less(y, x) else 0)

        order = sorted(queued, key=functools.cmp_to_key(compare))
        return [q.pod_info.name for q in order]

    # --- PreFilter and its extensions ---------------------------------------------------------------
    async def apre_filter(self, pod: PodLike, state: CycleState | None = None) -> PreFilterOutcome:
        """Run PreFilter (the cycle's first point)."""
        st, pi = self._args(pod, state)
        result, status, rejected = await self.framework.run_pre_filter(st, pi)
        return PreFilterOutcome(result, status, rejected)

    def pre_filter(self, pod: PodLike, state: CycleState | None = None) -> PreFilterOutcome:
        """:meth:`apre_filter`, on the driver's loop."""
        return self.run(self.apre_filter(pod, state))

    async def aadd_pod(
        self, pod: PodLike, to_add: PodLike, node: str | NodeInfo, state: CycleState | None = None
    ) -> Status | None:
        """PreFilter's AddPod: ``to_add`` is now counted on ``node`` (the NodeInfo is updated
        too, as preemption's dry run does)."""
        st, pi = self._args(pod, state)
        ni, added = self.node(node), self.pod_info(to_add)
        ni.add_pod(added)
        return await self.framework.run_pre_filter_add_pod(st, pi, added, ni)

    def add_pod(
        self, pod: PodLike, to_add: PodLike, node: str | NodeInfo, state: CycleState | None = None
    ) -> Status | None:
        """:meth:`aadd_pod`, on the driver's loop."""
        return self.run(self.aadd_pod(pod, to_add, node, state))

    async def aremove_pod(
        self, pod: PodLike, to_remove: PodLike, node: str | NodeInfo, state: CycleState | None = None
    ) -> Status | None:
        """PreFilter's RemovePod: ``to_remove`` no longer counts on ``node`` (nor is on its NodeInfo)."""
        st, pi = self._args(pod, state)
        ni, removed = self.node(node), self.pod_info(to_remove)
        ni.remove_pod(removed)
        return await self.framework.run_pre_filter_remove_pod(st, pi, removed, ni)

    def remove_pod(
        self, pod: PodLike, to_remove: PodLike, node: str | NodeInfo, state: CycleState | None = None
    ) -> Status | None:
        """:meth:`aremove_pod`, on the driver's loop."""
        return self.run(self.aremove_pod(pod, to_remove, node, state))

    # --- Filter -------------------------------------------------------------------------------------
    def filter(self, pod: PodLike, node: str | NodeInfo, state: CycleState | None = None) -> Status | None:
        """Run Filter on one node (after :meth:`pre_filter` when the plugin needs it): ``None``
        when the node fits, else the first rejection."""
        st, pi = self._args(pod, state)
        return self.framework.run_filter(st, pi, self.node(node))

    async def afilter_all(
        self, pod: PodLike, nodes: Iterable[str | NodeInfo] | None = None
    ) -> dict[str, Status | None]:
        """A new cycle: PreFilter, then Filter on every node: ``{node: None (fits) | Status}``.

        A PreFilter rejection is every node's status; a node outside PreFilter's result is
        UnschedulableAndUnresolvable, as upstream reports them."""
        pi = self.pod_info(pod)
        st = self.new_cycle(pi)
        outcome = await self.apre_filter(pi, st)
        allowed = outcome.node_names
        out: dict[str, Status | None] = {}
        for ni in self.nodes(nodes):
            if outcome.status is not None and not outcome.status.is_success():
                out[ni.name] = outcome.status
            elif allowed is not None and ni.name not in allowed:
                out[ni.name] = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "node(s) didn't satisfy PreFilterResult")
            else:
                out[ni.name] = self.framework.run_filter(st, pi, ni)
        return out

    def filter_all(self, pod: PodLike, nodes: Iterable[str | NodeInfo] | None = None) -> dict[str, Status | None]:
        """:meth:`afilter_all`, on the driver's loop."""
        return self.run(self.afilter_all(pod, nodes))

    # --- PostFilter ---------------------------------------------------------------------------------
    async def apost_filter(
        self, pod: PodLike, statuses: Mapping[str, Status] | None = None, state: CycleState | None = None
    ) -> PostFilterOutcome:
        """Run PostFilter with the filtered statuses map (``{node: Status}`` of the nodes that did
        not fit). Without ``statuses``, :meth:`afilter_all` gives them (a new cycle)."""
        if statuses is None:
            found = await self.afilter_all(pod)
            statuses = {n: s for n, s in found.items() if s is not None and not s.is_success()}
        st, pi = self._args(pod, state)
        result, status = await self.framework.run_post_filter(st, pi, dict(statuses))
        return PostFilterOutcome(result, status)

    def post_filter(
        self, pod: PodLike, statuses: Mapping[str, Status] | None = None, state: CycleState | None = None
    ) -> PostFilterOutcome:
        """:meth:`apost_filter`, on the driver's loop."""
        return self.run(self.apost_filter(pod, statuses, state))

    # --- PreScore, Score, NormalizeScore ------------------------------------------------------------
    async def apre_score(
        self, pod: PodLike, nodes: Iterable[str | NodeInfo] | None = None, state: CycleState | None = None
    ) -> Status | None:
        """Run PreScore over ``nodes`` (all by default); a plugin that Skips is left out of Score."""
        st, pi = self._args(pod, state)
        return await self.framework.run_pre_score(st, pi, self.nodes(nodes))

    def pre_score(
        self, pod: PodLike, nodes: Iterable[str | NodeInfo] | None = None, state: CycleState | None = None
    ) -> Status | None:
        """:meth:`apre_score`, on the driver's loop."""
        return self.run(self.apre_score(pod, nodes, state))

    async def ascore_details(
        self, pod: PodLike, nodes: Iterable[str | NodeInfo] | None = None, state: CycleState | None = None
    ) -> ScoreOutcome:
        """Run Score and NormalizeScore over ``nodes`` (all by default), weights applied."""
        st, pi = self._args(pod, state)
        infos = self.nodes(nodes)
        raw: dict[str, dict[str, int]] = {}
        final: dict[str, dict[str, int]] = {}
        totals, status = await self.framework.run_score(st, pi, infos, raw, final)
        return ScoreOutcome(
            {ni.name: t for ni, t in zip(infos, totals)},
            _by_plugin(raw),
            _by_plugin(final),
            status,
        )

    def score_details(
        self, pod: PodLike, nodes: Iterable[str | NodeInfo] | None = None, state: CycleState | None = None
    ) -> ScoreOutcome:
        """:meth:`ascore_details`, on the driver's loop."""
        return self.run(self.ascore_details(pod, nodes, state))

    async def ascore(
        self, pod: PodLike, nodes: Iterable[str | NodeInfo] | None = None, normalize: bool = True
    ) -> dict[str, int]:
        """A new cycle as the scheduler runs it up to scoring: PreFilter, Filter (its verdicts
        are not applied: every node given is scored), PreScore, Score and NormalizeScore.
        ``{node: total}``; with ``normalize=False`` the sum of the raw scores. A failure at
        any point raises AssertionError."""
        pi = self.pod_info(pod)
        st = self.new_cycle(pi)
        infos = self.nodes(nodes)
        outcome = await self.apre_filter(pi, st)
        if outcome.status is not None and not outcome.status.is_success():
            raise AssertionError(f"PreFilter rejected the pod: {outcome.status!r}")
        for ni in infos:
            self.framework.run_filter(st, pi, ni)
        status = await self.apre_score(pi, infos, st)
        if status is not None and not status.is_success():
            raise AssertionError(f"PreScore failed: {status!r}")
        scores = await self.ascore_details(pi, infos, st)
        if scores.status is not None:
            raise AssertionError(f"Score failed: {scores.status!r}")
        if normalize:
            return scores.totals
        return {ni.name: sum(per_node.get(ni.name, 0) for per_node in scores.raw.values()) for ni in infos}

    def score(
        self, pod: PodLike, nodes: Iterable[str | NodeInfo] | None = None, normalize: bool = True
    ) -> dict[str, int]:
        """:meth:`ascore`, on the driver's loop."""
        return self.run(self.ascore(pod, nodes, normalize))

    async def anormalize_scores(
        self, pod: PodLike, raw: Mapping[str, Mapping[str, int]] | Mapping[str, int], state: CycleState | None = None
    ) -> ScoreOutcome:
        """NormalizeScore alone, over raw scores the test gives: ``{plugin: {node: score}}``, or
        ``{node: score}`` when there is one Score plugin. The weighted totals by node, or the
        status that stopped it (a score left outside 0..100, a plugin without raw scores)."""
        st, pi = self._args(pod, state)
        plugins = [b.name for b in self.framework.score_plugins]
        by_plugin: dict[str, dict[str, int]] = {}
        for key, value in raw.items():
            if isinstance(value, int):  # {node: score}: the one Score plugin's
                by_plugin.setdefault(plugins[0] if len(plugins) == 1 else "", {})[key] = value
            else:
                by_plugin[key] = dict(value)
        names = list(next(iter(by_plugin.values()), {}))
        columns = {name: np.array([scores.get(n, 0) for n in names], np.int64) for name, scores in by_plugin.items()}
        totals, status = await self.framework.normalize_raw_scores(st, pi, names, columns)
        return ScoreOutcome(dict(zip(names, (int(t) for t in totals))), by_plugin, {}, status)

    def normalize_scores(
        self, pod: PodLike, raw: Mapping[str, Mapping[str, int]] | Mapping[str, int], state: CycleState | None = None
    ) -> ScoreOutcome:
        """:meth:`anormalize_scores`, on the driver's loop."""
        return self.run(self.anormalize_scores(pod, raw, state))

    # --- Reserve, Unreserve -------------------------------------------------------------------------
    async def areserve(self, pod: PodLike, node: str, state: CycleState | None = None) -> Status | None:
        """Run Reserve; ``None`` when every plugin reserved."""
        st, pi = self._args(pod, state)
        return await self.framework.run_reserve(st, pi, node)

    def reserve(self, pod: PodLike, node: str, state: CycleState | None = None) -> Status | None:
        """:meth:`areserve`, on the driver's loop."""
        return self.run(self.areserve(pod, node, state))

    async def aunreserve(self, pod: PodLike, node: str, state: CycleState | None = None) -> None:
        """Run Unreserve (every Reserve plugin, in reverse order; failures are only logged)."""
        st, pi = self._args(pod, state)
        await self.framework.run_unreserve(st, pi, node)

    def unreserve(self, pod: PodLike, node: str, state: CycleState | None = None) -> None:
        """:meth:`aunreserve`, on the driver's loop."""
        self.run(self.aunreserve(pod, node, state))

    # --- PreBind, Bind, PostBind --------------------------------------------------------------------
    async def apre_bind(self, pod: PodLike, node: str, state: CycleState | None = None) -> Status | None:
        """Run PreBind; ``None`` when every plugin succeeded or skipped."""
        st, pi = self._args(pod, state)
        return await self.framework.run_pre_bind(st, pi, node)

    def pre_bind(self, pod: PodLike, node: str, state: CycleState | None = None) -> Status | None:
        """:meth:`apre_bind`, on the driver's loop."""
        return self.run(self.apre_bind(pod, node, state))

    async def abind(self, pod: PodLike, node: str, state: CycleState | None = None) -> Status | None:
        """Run Bind: the first plugin that does not Skip decides (all skipping is an Error)."""
        st, pi = self._args(pod, state)
        return await self.framework.run_bind(st, pi, node)

    def bind(self, pod: PodLike, node: str, state: CycleState | None = None) -> Status | None:
        """:meth:`abind`, on the driver's loop."""
        return self.run(self.abind(pod, node, state))

    async def apost_bind(self, pod: PodLike, node: str, state: CycleState | None = None) -> None:
        """Run PostBind (informational: failures are only logged)."""
        st, pi = self._args(pod, state)
        await self.framework.run_post_bind(st, pi, node)

    def post_bind(self, pod: PodLike, node: str, state: CycleState | None = None) -> None:
        """:meth:`apost_bind`, on the driver's loop."""
        self.run(self.apost_bind(pod, node, state))

    async def await_background(self) -> None:
        """Wait for the work plugins started with ``handle.run_in_background``."""
        await self.framework.wait_background()


def _by_plugin(per_node: Mapping[str, Mapping[str, int]]) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for node, scores in per_node.items():
        for plugin, value in scores.items():
            out.setdefault(plugin, {})[node] = value
    return out


def plugin_framework(
    *plugins: str | type,
    args: Any = None,
    plugin_args: Mapping[str, Any] | None = None,
    weights: Mapping[str, int] | None = None,
    nodes: Iterable[NodeLike] = (),
    pods: Iterable[PodLike] = (),
    objects: Iterable[dict[str, Any]] = (),
    cluster: Any = None,
    feature_gates: FeatureGates | None = None,
    pod_groups: Iterable[PodGroupBuilder | dict[str, Any]] = (),
) -> PluginFramework:
    """A :class:`PluginFramework` of ``plugins`` (classes, or names of installed plugins), each at
    every point it implements, in the order given.

    ``args`` are the one plugin's args (a dict its ``Args`` model validates, or an instance);
    with several, ``plugin_args`` maps names to args. ``weights``: Score weights by name.
    ``nodes`` (builders, objects or NodeInfos) with the bound ``pods`` (``spec.nodeName``) on
    them are the snapshot; ``objects`` (Namespaces, PVCs, ...) what ``handle.listers`` finds;
    ``cluster`` the handle's cluster (an ``InMemoryCluster`` for plugins that write).
    ``pod_groups`` (builders with their members, or PodGroup objects) are what
    ``handle.pod_groups`` knows, with the ``pods`` that name a group (a bound one is placed)."""
    if not plugins:
        raise TypeError("plugin_framework() needs at least one plugin")
    named = dict(plugin_args or {})
    if args is not None:
        if len(plugins) != 1:
            raise TypeError("args= is for one plugin; give plugin_args={name: args} for several")
        only = plugins[0] if isinstance(plugins[0], str) else plugins[0].name  # type: ignore[attr-defined]
        named[only] = args
    pods = list(pods)
    infos: Sequence[NodeInfo] = as_node_infos(nodes, pods)
    index = pod_group_index(pod_groups, pods)
    fw = build_framework(
        plugins,
        named,
        weights,
        infos,
        cluster=cluster,
        objects=objects,
        feature_gates=feature_gates,
        pod_groups=index,
    )
    return PluginFramework(fw, infos)
