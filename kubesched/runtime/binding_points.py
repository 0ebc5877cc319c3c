"""The extension points from Reserve to PostBind, run over a profile's plugins with upstream's
semantics: Reserve and Unreserve, Permit (and the wait it may ask for), PreBind, Bind and PostBind.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from kubesched.framework.interface import CycleState
from kubesched.framework.status import Code, Status
from kubesched.framework.types import PodInfo
from kubesched.runtime.calls import (
    BoundMethod,
    permit_parts,
    plugin_error,
    rejected_or_error,
    split_result,
    trace_value,
)
from kubesched.runtime.timed_calls import TimedCalls
from kubesched.runtime.waiting_pods import MAX_PERMIT_TIMEOUT, WaitingPod, WaitingPods

#: The Framework's logger, which these runners wrote to before they had a module of their own.
log = logging.getLogger("kubesched.runtime.framework")


class BindingPoints(TimedCalls):
    """The runners of the points from Reserve to PostBind, a part of
    :class:`kubesched.runtime.framework.Framework`, which binds the plugins they run."""

    waiting_pods: WaitingPods
    reserve_plugins: list[BoundMethod]
    permit_plugins: list[BoundMethod]
    pre_bind_plugins: list[BoundMethod]
    bind_plugins: list[BoundMethod]
    post_bind_plugins: list[BoundMethod]
    _unreserve_bound: list[BoundMethod]

    # --- Reserve / Unreserve ----------------------------------------------------------------------
    async def run_reserve(
        self, state: CycleState, pod: PodInfo, node_name: str, trace: dict[str, Any] | None = None
    ) -> Status | None:
        for b in self.reserve_plugins:
            try:
                out = await self._call(b, "Reserve", state, pod, node_name)
                status = out if out is None or type(out) is Status else split_result(out)[1]
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
            status, timeout = permit_parts(r)
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
                out = await self._call(b, "PreBind", state, pod, node_name)
                status = out if out is None or type(out) is Status else split_result(out)[1]
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
                out = await self._call(b, "Bind", state, pod, node_name)
                status = out if out is None or type(out) is Status else split_result(out)[1]
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
