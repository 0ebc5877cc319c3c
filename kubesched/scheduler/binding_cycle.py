"""The binding cycle of one pod, a task the scheduler owns: wait on Permit, PreBind, Bind (or a
binding extender), PostBind; on failure find out where the pod is before undoing anything.

:class:`BindingCycle` is shared: any scheduling cycle that has reserved a pod on a node hands it
over with :meth:`BindingCycle.spawn`."""

from __future__ import annotations

import asyncio
import inspect
import logging
import time
from dataclasses import dataclass

from kubesched.cluster.base import ClusterError, Conflict, NotFound
from kubesched.extender.client import ExtenderError
from kubesched.framework.events import ASSIGNED_POD_DELETE
from kubesched.framework.interface import CycleState
from kubesched.framework.status import Code, Status
from kubesched.framework.types import PodInfo, QueuedPodInfo
from kubesched.runtime.calls import PLAIN_RESULTS, plugin_error
from kubesched.runtime.framework import Framework
from kubesched.scheduler.context import SchedulerContext
from kubesched.scheduler.failures import FailureReporting
from kubesched.scheduler.results import PodResult

# One logger for the whole package: log lines name the scheduler, whichever module writes them.
log = logging.getLogger("kubesched.scheduler")

#: Error codes after which a write may or may not have been applied: the request timed out or
#: its connection broke (:class:`~kubesched.cluster.base.ClusterError` codes of the backends).
AMBIGUOUS_WRITE_CODES = frozenset({500, 502, 503, 504})
#: Where the pod of a failed bind turned out to be (see BindingCycle._where_after_failed_bind).
_BOUND_HERE, _ELSEWHERE, _UNBOUND, _UNKNOWN = "bound here", "elsewhere", "unbound", "unknown"
#: Seconds between the reads that find out whether a bind took effect after all.
VERIFY_BIND_WAITS = (0.5, 1.0, 2.0)


@dataclass(slots=True)
class PendingBinding:
    """One pod's binding cycle: what its scheduling cycle decided, and for which attempt."""

    fw: Framework
    state: CycleState
    qpi: QueuedPodInfo
    assumed: PodInfo
    node_name: str
    record: PodResult | None
    start: float
    #: The binding cycle wrote ``status.nominatedNodeName`` (NominatedNodeNameForExpectation).
    nominated: bool = False


async def run_pre_bind_pre_flights(fw: Framework, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
    """Upstream's RunPreBindPreFlights: whether PreBind will have work for the pod. ``None``
    (Success) when some PreBind plugin will work, a Skip status when none will, else the first
    failing plugin's status. A plugin without ``pre_bind_pre_flight`` cannot tell: it is taken
    to have work."""
    work = False
    for b in fw.pre_bind_plugins:
        check = getattr(b.plugin, "pre_bind_pre_flight", None)
        if not callable(check):
            work = True
            continue
        try:
            result = check(state, pod, node_name)
            # What plain plugins return is never awaitable: the check is skipped for it.
            awaitable = type(result) not in PLAIN_RESULTS and inspect.isawaitable(result)
            status: Status | None = (await result) if awaitable else result
        except Exception as exc:  # noqa: BLE001 - a plugin's exception is its Error status
            return plugin_error("PreBindPreFlight", b.name, exc)
        if status is None or status.is_success():
            work = True
        elif not status.is_skip():
            if status.code is Code.ERROR:
                return Status.as_error(f'running PreBindPreFlight "{b.name}": {status.message()}', b.name)
            return status.with_plugin(b.name)
    return None if work else Status(Code.SKIP)


class BindingCycle:
    """Binding cycles: run concurrently, each handles its own failure."""

    def __init__(self, ctx: SchedulerContext, failures: FailureReporting) -> None:
        self.ctx = ctx
        self.failures = failures
        self.options = ctx.options
        self.stats = ctx.stats
        self.observer = ctx.observer
        self.clock = ctx.clock
        self.cluster = ctx.cluster
        self.cache = ctx.cache
        self.queue = ctx.queue
        self.extenders = ctx.extenders

    def spawn(self, b: PendingBinding) -> None:
        """Start the binding cycle of ``b`` as a task of the scheduler's (named after the pod)."""
        self.ctx.bindings.spawn(self.run(b), name=f"bind {b.assumed.key}")

    async def run(self, b: PendingBinding) -> None:
        """The binding cycle of ``b``, to its end: bound, or undone and requeued."""
        fw, state, assumed, node_name, record = b.fw, b.state, b.assumed, b.node_name, b.record
        past_permit = False
        try:
            status = None
            if self.options.feature_gates.enabled("NominatedNodeNameForExpectation"):
                status = await self._nominate_expected_node(b)
            if status is None:
                status = await fw.wait_on_permit(assumed)
                if status is not None and status.code is Code.ERROR:
                    # Preempted while waiting (or another failure): an error, which backs off.
                    status = Status(Code.ERROR, f"waiting on permit for pod: {status.message()}", plugin=status.plugin)
            if status is None:
                past_permit = True
                t0 = time.perf_counter()
                status = await fw.run_pre_bind(
                    state, assumed, node_name, tr.prebind if (tr := self.ctx.traces(record)) else None
                )
                self.ctx.extension_point("PreBind", status, fw, t0)
            if status is None:
                t0 = time.perf_counter()
                binder = self.extenders.binder_for(assumed)
                if binder is not None:
                    # A binding extender binds instead of the Bind plugins (upstream).
                    try:
                        await binder.bind(assumed, node_name)
                        if (tr := self.ctx.traces(record)) is not None:
                            tr.extender_bind[binder.name] = "success"
                    except ExtenderError as exc:
                        status = Status.as_error(exc)
                        if (tr := self.ctx.traces(record)) is not None:
                            tr.extender_bind[binder.name] = str(exc)
                else:
                    status = await fw.run_bind(
                        state, assumed, node_name, tr.bind if (tr := self.ctx.traces(record)) else None
                    )
                self.ctx.extension_point("Bind", status, fw, t0)
        except Exception as exc:  # noqa: BLE001 - the task must handle its own failure
            status = Status.as_error(exc)
        if status is not None:
            try:
                where = await self._where_after_failed_bind(assumed, node_name, status)
                if where == _BOUND_HERE:
                    await self._binding_succeeded(b)
                else:
                    await self._binding_failed(b, status, past_permit, where)
            except Exception:
                # The attempt must end whatever went wrong here: a pod left "in flight" would keep
                # the queue recording every cluster event for it, forever, and never be retried.
                log.exception("handling the failed binding of %s failed", assumed.key)
                if self._informer_node(assumed.uid) is not None:
                    self.queue.done(assumed.uid)
                else:
                    self.queue.requeue_after_error(b.qpi)
            return
        await self._binding_succeeded(b)

    async def _nominate_expected_node(self, b: PendingBinding) -> Status | None:
        """NominatedNodeNameForExpectation: when PreBind will have work (PreBindPreFlight) or the
        pod waits on Permit, write the chosen node as ``status.nominatedNodeName`` before going
        on, so that other components (a cluster autoscaler) see where the pod is going; a quick
        bind needs no such word. A failing PreBindPreFlight (Error, or a rejection, which it may
        not give) fails the binding cycle; a failed write is only logged."""
        fw, assumed, node_name = b.fw, b.assumed, b.node_name
        status = await run_pre_bind_pre_flights(fw, b.state, assumed, node_name)
        if status is not None and not status.is_skip():
            return status
        if status is not None and fw.waiting_pods.get(assumed.uid) is None:
            return None
        if assumed.nominated_node_name == node_name:
            return None
        try:
            await self.cluster.set_nominated_node_name(assumed.pod, node_name)
            b.nominated = True
        except Exception as exc:  # noqa: BLE001 - not worth stopping the binding cycle for
            log.warning("pod %s: could not set nominatedNodeName %s: %s", assumed.key, node_name, exc)
        return None

    def _informer_node(self, uid: str) -> str | None:
        """The node the informer shows the pod bound to; None while it shows it pending (the
        cache holds it only as assumed, or not at all)."""
        cached = self.cache.get_pod(uid)
        if cached is None or self.cache.is_assumed(uid):
            return None
        return cached.node_name or None

    async def _where_after_failed_bind(self, assumed: PodInfo, node_name: str, status: Status) -> str:
        """Where the pod of a failed bind is now: :data:`_BOUND_HERE` (the bind took effect after
        all), :data:`_ELSEWHERE` (bound to another node, or gone), :data:`_UNBOUND`, or
        :data:`_UNKNOWN` (the server could not be asked, a few times over).

        A bind that timed out or lost its connection may have been applied by the server, and a
        409 says the pod is bound already, perhaps by this very bind: the informer may already
        show where, else the server is asked. Reporting a pod bound here as unschedulable would
        be a false event, and retrying it a second binding; dropping an unbound pod on a 409
        would lose it (upstream, too, requeues unless its informer shows the pod assigned)."""
        seen = self._informer_node(assumed.uid)
        if seen is not None:
            return _BOUND_HERE if seen == node_name else _ELSEWHERE
        err = status.error
        if err is None:
            return _UNBOUND
        cause = err if isinstance(err, ClusterError) else err.__cause__
        if not isinstance(cause, ClusterError) or not (
            isinstance(cause, (Conflict, NotFound)) or cause.code in AMBIGUOUS_WRITE_CODES
        ):
            return _UNBOUND
        live = None
        for wait in (*VERIFY_BIND_WAITS, None):
            try:
                live = await self.cluster.get_pod(assumed.namespace, assumed.name)
                break
            except NotFound:
                return _ELSEWHERE
            except Exception as exc:  # noqa: BLE001 - the API is unreachable for now
                if wait is None:
                    log.info("pod %s: cannot tell whether its bind took effect (%s)", assumed.key, exc)
                    return _UNKNOWN
                await asyncio.sleep(wait)
        assert live is not None
        if (live.get("metadata") or {}).get("uid") != assumed.uid:
            return _ELSEWHERE  # deleted, perhaps recreated under the same name
        bound_to = (live.get("spec") or {}).get("nodeName")
        if not bound_to:
            return _UNBOUND
        return _BOUND_HERE if bound_to == node_name else _ELSEWHERE

    async def _binding_failed(self, b: PendingBinding, status: Status, past_permit: bool, where: str) -> None:
        fw, state, assumed, node_name, record = b.fw, b.state, b.assumed, b.node_name, b.record
        await fw.run_unreserve(state, assumed, node_name)
        if self.cache.is_assumed(assumed.uid):
            self.cache.forget_pod(assumed)
        # The room this pod held is free again: pods waiting for room may fit now.
        self.queue.on_event(ASSIGNED_POD_DELETE, assumed.pod, None, skip_uid=assumed.uid)
        if where == _ELSEWHERE:
            # Bound by someone else, or deleted: the informer brings the truth; no retry.
            log.info("pod %s not bound: %s", assumed.key, status.message())
            self.queue.done(assumed.uid)
            return
        if where == _UNKNOWN:
            # Perhaps bound after all: retry after backoff (the informer takes the pod out of the
            # queue if it shows it bound meanwhile), but report no failure that may be false.
            self.queue.requeue_after_error(b.qpi)
            return
        self.failures.fail(
            fw,
            b.qpi,
            status,
            record,
            None,
            node=None if past_permit else node_name,
            backoff=past_permit,
            attempt_start=b.start,
            nominated_set=b.nominated,
        )

    async def _binding_succeeded(self, b: PendingBinding) -> None:
        fw, state, assumed, node_name, record = b.fw, b.state, b.assumed, b.node_name, b.record
        qpi, start = b.qpi, b.start
        if self.cache.is_assumed(assumed.uid):
            self.cache.finish_binding(assumed)
        self.stats.scheduled += 1
        self.observer.schedule_attempt("scheduled", fw.profile_name, time.perf_counter() - start)
        if qpi.initial_attempt_timestamp is not None:
            self.observer.pod_scheduled(qpi.attempts, self.clock() - qpi.initial_attempt_timestamp)
        self.queue.done(assumed.uid)
        message = f"Successfully assigned {assumed.key} to {node_name}"
        if record is not None:
            record.phase = "Scheduled"
            record.node = node_name
            record.message = message
        if self.options.report_to_cluster:
            # The Scheduled event, in its own task as upstream's event recorder writes it: a write
            # the cluster keeps failing (and retrying) must not hold the binding cycle.
            event = self.failures.event(assumed.pod, "Normal", "Scheduled", "Binding", message, fw.profile_name)
            self.ctx.spawn_side(event, name=f"event Scheduled {assumed.key}")
        if record is not None and self.options.result_annotations:
            # A side task too: the cluster's retries of the write must not hold PostBind.
            self.ctx.spawn_side(self.failures.annotate(assumed, record), name=f"annotate {assumed.key}")
        t0 = time.perf_counter()
        await fw.run_post_bind(state, assumed, node_name)
        self.ctx.extension_point("PostBind", None, fw, t0)
        self.ctx.activate_requested(state)
