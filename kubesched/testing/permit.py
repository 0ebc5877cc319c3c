"""Permit, and the wait that follows it: a pod a plugin holds is allowed or rejected by another
plugin, by the test, or by its timeout, exactly as the runtime's waiting pods are.

    fw = plugin_framework(Gang, nodes=[make_node("n1")])
    assert fw.permit(a, "n1").is_wait()             # held: a WaitingPod now
    assert fw.waiting() == {"a"}
    fw.permit(b, "n1")                               # Gang's Permit for b allows a
    assert fw.wait_on_permit(a) is None              # allowed
    fw.reject(c, message="no")                       # or the test decides
"""

from __future__ import annotations

import asyncio

from kubesched.framework.interface import CycleState
from kubesched.framework.status import Status
from kubesched.runtime.waiting_pods import WaitingPod
from kubesched.testing.driver import DriverBase
from kubesched.testing.partial_profile import PodLike


class PermitPoints(DriverBase):
    """Permit and the waiting pods of a driver's framework."""

    async def apermit(self, pod: PodLike, node: str, state: CycleState | None = None) -> Status | None:
        """Run Permit: ``None`` (allowed), a rejection, or a Wait status (the pod is then a
        waiting pod until :meth:`await_permit`, :meth:`allow`, :meth:`reject` or a timeout)."""
        st, pi = self._args(pod, state)
        return await self.framework.run_permit(st, pi, node)

    def permit(self, pod: PodLike, node: str, state: CycleState | None = None) -> Status | None:
        """:meth:`apermit`, on the driver's loop."""
        return self.run(self.apermit(pod, node, state))

    def waiting_pod(self, pod: PodLike) -> WaitingPod | None:
        """The WaitingPod of ``pod``, if it is held at Permit."""
        return self.framework.get_waiting_pod(self.pod_info(pod).uid)

    def waiting(self) -> set[str]:
        """The names of the pods held at Permit."""
        return {wp.pod_info.name for wp in self.framework.iterate_waiting_pods()}

    def pending_plugins(self, pod: PodLike) -> list[str]:
        """The plugins that still hold ``pod`` (``[]`` when it is not waiting)."""
        wp = self.waiting_pod(pod)
        return wp.pending_plugins() if wp is not None else []

    def allow(self, pod: PodLike, plugin: str | None = None) -> None:
        """Allow ``pod`` on behalf of ``plugin`` (every plugin holding it by default), as a
        plugin does through ``handle.get_waiting_pod(uid).allow(name)``."""
        wp = self._held(pod)
        for name in [plugin] if plugin is not None else wp.pending_plugins():
            wp.allow(name)

    def reject(self, pod: PodLike, plugin: str | None = None, message: str = "rejected by the test") -> None:
        """Reject ``pod`` on behalf of ``plugin`` (the first holding it by default)."""
        wp = self._held(pod)
        pending = wp.pending_plugins()
        wp.reject(plugin if plugin is not None else (pending[0] if pending else ""), message)

    def _held(self, pod: PodLike) -> WaitingPod:
        wp = self.waiting_pod(pod)
        if wp is None:
            raise LookupError(f"pod {self.pod_info(pod).name!r} is not waiting at Permit")
        return wp

    async def await_permit(self, pod: PodLike, timeout: float | None = None) -> Status | None:
        """Wait until ``pod`` is allowed (``None``), rejected or timed out (its Status), as the
        binding cycle does; ``None`` at once for a pod that is not waiting. ``timeout`` bounds
        the test's wait (``TimeoutError``), not the plugins' own timeouts."""
        return await asyncio.wait_for(self.framework.wait_on_permit(self.pod_info(pod)), timeout)

    def wait_on_permit(self, pod: PodLike, timeout: float | None = None) -> Status | None:
        """:meth:`await_permit`, on the driver's loop (where the plugins' timers run)."""
        return self.run(self.await_permit(pod, timeout))
