"""What a plugin is given as its ``handle``: the :class:`~kubesched.framework.interface.Handle`
protocol and nothing else.

A profile's :class:`~kubesched.runtime.framework.Framework` runs the extension points and holds
the scheduler's collaborators; its plugins see it only through a :class:`PluginHandle`, which
offers exactly the members the protocol declares, each passed on to the Framework when asked
(so a collaborator the Framework is given later, as tests do, reaches the plugins too). Upstream
separates them the same way: the framework implements ``Handle``, plugins know the interface.
"""

from __future__ import annotations

from collections.abc import Coroutine, Iterable, Sequence
from typing import Any

from kubesched.framework.features import FeatureGates
from kubesched.framework.informers import GroupVersionResource, Informer
from kubesched.framework.interface import (
    CycleState,
    FilterPlugin,
    Handle,
    Listers,
    Nominator,
    PodGroups,
    PreemptWithExtenders,
    SharedLister,
    WaitingPod,
)
from kubesched.framework.status import Status
from kubesched.framework.types import NodeInfo, PodInfo

__all__ = ["PluginHandle"]


class PluginHandle:
    """A profile's :class:`~kubesched.framework.interface.Handle`, for its plugins: each member
    is the Framework's (``framework``, which implements the protocol with much else besides),
    and there is no other public one."""

    __slots__ = ("_fw", "__weakref__")

    def __init__(self, framework: Handle) -> None:
        self._fw = framework

    def __repr__(self) -> str:
        return f"PluginHandle({self._fw.profile_name!r})"

    # --- the profile, the snapshot, the cached objects ------------------------------------------
    @property
    def profile_name(self) -> str:
        return self._fw.profile_name

    def snapshot(self) -> SharedLister:
        return self._fw.snapshot()

    @property
    def listers(self) -> Listers:
        return self._fw.listers

    @property
    def nominator(self) -> Nominator:
        return self._fw.nominator

    @property
    def pod_groups(self) -> PodGroups:
        return self._fw.pod_groups

    @property
    def cluster(self) -> Any:
        return self._fw.cluster

    def informer_for(self, gvr: GroupVersionResource | str) -> Informer:
        return self._fw.informer_for(gvr)

    @property
    def parallelism(self) -> int:
        return self._fw.parallelism

    @property
    def feature_gates(self) -> FeatureGates:
        return self._fw.feature_gates

    # --- waiting pods, activation, background work ---------------------------------------------
    def get_waiting_pod(self, uid: str) -> WaitingPod | None:
        return self._fw.get_waiting_pod(uid)

    def iterate_waiting_pods(self) -> Iterable[WaitingPod]:
        return self._fw.iterate_waiting_pods()

    def reject_waiting_pod(self, uid: str) -> bool:
        return self._fw.reject_waiting_pod(uid)

    def activate(self, pods: Iterable[PodInfo]) -> None:
        self._fw.activate(pods)

    def run_in_background(self, coro: Coroutine[Any, Any, None]) -> None:
        self._fw.run_in_background(coro)

    # --- what simulating a placement runs (preemption) -------------------------------------------
    async def run_pre_filter_add_pod(
        self, state: CycleState, pod: PodInfo, to_add: PodInfo, node: NodeInfo
    ) -> Status | None:
        return await self._fw.run_pre_filter_add_pod(state, pod, to_add, node)

    async def run_pre_filter_remove_pod(
        self, state: CycleState, pod: PodInfo, to_remove: PodInfo, node: NodeInfo
    ) -> Status | None:
        return await self._fw.run_pre_filter_remove_pod(state, pod, to_remove, node)

    async def run_filter_with_nominated_pods(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        return await self._fw.run_filter_with_nominated_pods(state, pod, node)

    async def run_reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        return await self._fw.run_reserve(state, pod, node_name)

    async def run_unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        await self._fw.run_unreserve(state, pod, node_name)

    def nominated_pods_counted(self, pod: PodInfo, node_name: str) -> list[PodInfo]:
        return self._fw.nominated_pods_counted(pod, node_name)

    def filter_plugins_in_play(self, state: CycleState) -> Sequence[FilterPlugin]:
        return self._fw.filter_plugins_in_play(state)

    def pre_filter_extensions_in_play(self, state: CycleState) -> bool:
        return self._fw.pre_filter_extensions_in_play(state)

    # --- the scheduler's metrics, extenders and cache ------------------------------------------
    @property
    def observer(self) -> object | None:
        return self._fw.observer

    @property
    def preempt_with_extenders(self) -> PreemptWithExtenders | None:
        return self._fw.preempt_with_extenders

    def placed_pod(self, uid: str) -> PodInfo | None:
        return self._fw.placed_pod(uid)
