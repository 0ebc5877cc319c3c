"""What every extension-point driver shares: a Framework over given nodes, one event loop for the
synchronous calls, and a CycleState per pod (one scheduling cycle)."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Iterable, Sequence
from typing import Any, TypeVar

from kubesched.backend.cache import Snapshot
from kubesched.framework.interface import CycleState
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.runtime.framework import Framework
from kubesched.testing.partial_profile import NodeLike, PodLike, as_node_infos, as_pod_info

T = TypeVar("T")


class DriverBase:
    """A :class:`~kubesched.runtime.framework.Framework` and the nodes it sees.

    Synchronous methods run on an event loop of the driver's own, kept between calls (a pod
    waiting at Permit, a timer, a background task live on it); call :meth:`close` (or use the
    driver as a context manager) when done. In an ``async`` test use the ``a``-prefixed
    coroutines instead: they run on the test's loop."""

    def __init__(self, framework: Framework, nodes: Sequence[NodeInfo]) -> None:
        self.framework = framework
        self.node_infos: dict[str, NodeInfo] = {ni.name: ni for ni in nodes}
        self._states: dict[str, CycleState] = {}
        self._pods: dict[str, PodInfo] = {}
        self._runner: asyncio.Runner | None = None
        framework.set_snapshot(Snapshot(list(self.node_infos.values())))

    # --- the loop of the synchronous calls ------------------------------------------------------
    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` to completion on the driver's loop (not from inside a running loop)."""
        if self._runner is None:
            self._runner = asyncio.Runner()
        return self._runner.run(coro)

    def close(self) -> None:
        """Close the driver's loop (what is still pending on it is cancelled)."""
        if self._runner is not None:
            self._runner.close()
            self._runner = None

    def __enter__(self) -> DriverBase:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- plugins, nodes, pods, cycles -----------------------------------------------------------
    def plugin(self, name: str | None = None) -> Any:
        """The plugin instance named ``name`` (the only one when there is one)."""
        if name is None:
            if len(self.framework.plugins) != 1:
                raise KeyError(f"name one of {sorted(self.framework.plugins)}")
            return next(iter(self.framework.plugins.values()))
        return self.framework.plugins[name]

    def node(self, node: str | NodeInfo) -> NodeInfo:
        """The NodeInfo the framework sees for ``node`` (a name or a NodeInfo)."""
        return node if isinstance(node, NodeInfo) else self.node_infos[node]

    def nodes(self, names: Iterable[str | NodeInfo] | None = None) -> list[NodeInfo]:
        """The NodeInfos named (all of them, in the order given, by default)."""
        return list(self.node_infos.values()) if names is None else [self.node(n) for n in names]

    def set_nodes(self, nodes: Iterable[NodeLike], pods: Iterable[PodLike] = ()) -> None:
        """Replace the nodes (and the pods bound to them) the framework sees."""
        self.node_infos = {ni.name: ni for ni in as_node_infos(nodes, pods)}
        self.framework.set_snapshot(Snapshot(list(self.node_infos.values())))

    def pod_info(self, pod: PodLike) -> PodInfo:
        """The PodInfo of ``pod``; the same object each time for the same uid."""
        pi = as_pod_info(pod)
        known = self._pods.get(pi.uid)
        if known is not None and known.pod is pi.pod:
            return known
        if known is not None and not isinstance(pod, PodInfo) and known.pod == pi.pod:
            return known
        self._pods[pi.uid] = pi
        return pi

    def state(self, pod: PodLike) -> CycleState:
        """The CycleState of ``pod``'s current cycle: every point called for that pod shares it
        until :meth:`new_cycle`."""
        uid = self.pod_info(pod).uid
        state = self._states.get(uid)
        if state is None:
            state = self._states[uid] = CycleState()
        return state

    def new_cycle(self, pod: PodLike) -> CycleState:
        """Start a new scheduling cycle for ``pod``: a fresh CycleState."""
        state = self._states[self.pod_info(pod).uid] = CycleState()
        return state

    def _args(self, pod: PodLike, state: CycleState | None) -> tuple[CycleState, PodInfo]:
        pi = self.pod_info(pod)
        return (state if state is not None else self.state(pi)), pi
