"""Failure handling outside Filter: requeue the pod, and report it (FailedScheduling event,
``PodScheduled=False`` condition, result annotations). :class:`FailureReporting` is shared by
the scheduling cycle, the binding cycle and the event handlers.

Reports are side tasks: the scheduling loop never waits on them. The cluster retries each write
on a transient failure (:mod:`kubesched.cluster.retry`); what still fails is one WARNING line
naming the pod and why (:func:`log_unwritten`), never a traceback nor an exception."""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Iterable
from typing import Any

from kubesched.cluster.base import ClusterError, NotFound
from kubesched.cluster.store import now_rfc3339
from kubesched.framework.status import Code, Status
from kubesched.framework.types import PodInfo, QueuedPodInfo, pod_key
from kubesched.runtime.framework import Framework
from kubesched.scheduler.context import SchedulerContext
from kubesched.scheduler.errors import Diagnosis, FitError, NodeStatuses
from kubesched.scheduler.results import PodResult

# One logger for the whole package: log lines name the scheduler, whichever module writes them.
log = logging.getLogger("kubesched.scheduler")


def log_unwritten(what: str, outcomes: Iterable[tuple[str, BaseException | None]]) -> None:
    """Log the side writes of ``what`` (e.g. "report the failure of pod ns/p") that failed.

    ``outcomes`` pairs each write's name with its failure (None when it was written). What the
    cluster refused after its retries is one WARNING line naming every such write and why, no
    traceback: an operator's concern, not a bug. A pod deleted meanwhile (NotFound) is no
    failure. Any other exception is a bug, logged with its traceback."""
    refused = []
    for part, exc in outcomes:
        if exc is None or isinstance(exc, NotFound):
            continue
        if isinstance(exc, ClusterError):
            refused.append(f"{part}: {exc}")
        else:
            log.error("could not %s (%s)", what, part, exc_info=exc)
    if refused:
        log.warning("could not %s: %s", what, "; ".join(refused))


class FailureReporting:
    """Requeue a pod whose attempt failed and say why on the pod."""

    def __init__(self, ctx: SchedulerContext) -> None:
        self.ctx = ctx
        self.options = ctx.options
        self.stats = ctx.stats
        self.observer = ctx.observer
        self.queue = ctx.queue
        self.cluster = ctx.cluster

    def fail(
        self,
        fw: Framework,
        qpi: QueuedPodInfo,
        status: Status,
        record: PodResult | None,
        start: float | None,
        node: str | None = None,
        backoff: bool = False,
        attempt_start: float | None = None,
        nominated_set: bool = False,
    ) -> None:
        """A failure outside Filter (Reserve, Permit, binding, a plugin error): requeue and report.

        A rejection on the chosen ``node`` is reported as upstream does, as a fit error over that
        one node. ``backoff`` sends even a rejection to backoffQ (failures after Permit). As
        upstream, the pod's ``status.nominatedNodeName`` is cleared with the report, whether
        preemption, another component or the binding cycle (``nominated_set``) wrote it.
        """
        pi = qpi.pod_info
        now = time.perf_counter()
        if start is not None:
            self.stats.attempt_durations.append(now - start)
        began = start if start is not None else attempt_start
        if began is not None:
            result = "error" if status.code is Code.ERROR else "unschedulable"
            self.observer.schedule_attempt(result, fw.profile_name, now - began)
        message = status.message() or status.code.upstream_name
        if node is not None and status.is_rejected():
            message = str(FitError(pi, 1, Diagnosis(NodeStatuses({node: status}), {status.plugin} - {""})))
        if status.code is Code.ERROR or backoff:
            if status.code is Code.ERROR:
                self.stats.errors += 1
            else:
                self.stats.unschedulable += 1
            reason = "SchedulerError" if status.code is Code.ERROR else "Unschedulable"
            self.queue.requeue_after_error(qpi)
        else:
            self.stats.unschedulable += 1
            reason = "Unschedulable"
            self.queue.add_unschedulable_if_not_present(qpi, {status.plugin} if status.plugin else set())
        qpi.last_failure = message
        if record is not None:
            record.phase = "Error" if status.code is Code.ERROR else "Unschedulable"
            record.node = None
            record.message = message
        clear: str | None = None
        if nominated_set or pi.nominated_node_name:
            clear = ""
            self.ctx.nominator.delete(pi.uid)
        self.report(fw, pi, reason, message, record, clear)

    def report(
        self,
        fw: Framework,
        pi: PodInfo,
        reason: str,
        message: str,
        record: PodResult | None,
        nominated: str | None = None,
    ) -> None:
        """Run :meth:`after_failure` as a side task: the cycle that failed does not wait on the
        cluster (upstream's asynchronous API calls). A nomination written (or cleared) is on
        the queued pod at once."""
        if nominated is not None:
            self.queue.note_nomination(pi.uid, nominated)
        self.ctx.spawn_side(self.after_failure(fw, pi, reason, message, record, nominated), name=f"report {pi.key}")

    async def after_failure(
        self, fw: Framework, pi: PodInfo, reason: str, message: str, record: PodResult | None, nominated: str | None
    ) -> None:
        """Say on the pod why its attempt failed (as the options ask): event and condition,
        then the result annotations."""
        if self.options.report_to_cluster:
            await self.report_failure(pi.pod, fw.profile_name, reason, message, nominated)
        if record is not None and self.options.result_annotations:
            await self.annotate(pi, record)

    async def report_failure(
        self, pod: dict[str, Any], profile: str, reason: str, message: str, nominated: str | None = None
    ) -> None:
        """A FailedScheduling event and a ``PodScheduled=False`` condition (with the nominated
        node, if any), each written whether or not the other could be; a failure to write them
        is logged once (:func:`log_unwritten`), never raised."""
        condition = {
            "type": "PodScheduled",
            "status": "False",
            "reason": reason,
            "message": message,
            "lastProbeTime": None,
            "lastTransitionTime": now_rfc3339(),
        }
        # Event notes are capped at 1 KiB by the API; the condition keeps the whole message.
        note = message if len(message) <= 1024 else message[:1020] + " ..."
        # Event first, as before: a reader that sees the condition finds the event written.
        event = self.cluster.record_event(pod, "Warning", "FailedScheduling", "Scheduling", note, profile)
        event_failed = await _outcome(event)
        condition_failed = await _outcome(self.cluster.update_pod_condition(pod, condition, nominated))
        log_unwritten(
            f"report the failure of pod {pod_key(pod)}",
            [("FailedScheduling event", event_failed), ("PodScheduled condition", condition_failed)],
        )

    async def event(
        self, pod: dict[str, Any], event_type: str, reason: str, action: str, note: str, profile: str
    ) -> None:
        """One event about ``pod``; a failure to write it is logged once, never raised."""
        failed = await _outcome(self.cluster.record_event(pod, event_type, reason, action, note, profile))
        if failed is not None:
            log_unwritten(f"record the {reason} event of pod {pod_key(pod)}", [(f"{reason} event", failed)])

    async def annotate(self, pi: PodInfo, record: PodResult) -> None:
        """The pod's result annotations; a failure to write them is logged once, never raised."""
        failed = await _outcome(self.cluster.patch_pod_annotations(pi.pod, record.annotations()))
        if failed is not None:
            log_unwritten(f"annotate pod {pi.key}", [("result annotations", failed)])


async def _outcome(write: Awaitable[None]) -> Exception | None:
    """Await ``write``; its exception, or None when it was written."""
    try:
        await write
    except Exception as exc:  # noqa: BLE001 - reporting must never take the scheduler down; log_unwritten tells bugs apart
        return exc
    return None
