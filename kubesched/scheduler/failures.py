"""Failure handling outside Filter: requeue the pod, and report it (FailedScheduling event,
``PodScheduled=False`` condition, result annotations). :class:`FailureReporting` is shared by
the scheduling cycle, the binding cycle and the event handlers."""

from __future__ import annotations

import logging
import time
from typing import Any

from kubesched.cluster.base import NotFound
from kubesched.cluster.store import now_rfc3339
from kubesched.framework.status import Code, Status
from kubesched.framework.types import PodInfo, QueuedPodInfo, pod_key
from kubesched.runtime.framework import Framework
from kubesched.scheduler.context import SchedulerContext
from kubesched.scheduler.errors import Diagnosis, FitError
from kubesched.scheduler.results import PodResult

# One logger for the whole package: log lines name the scheduler, whichever module writes them.
log = logging.getLogger("kubesched.scheduler")


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
    ) -> None:
        """A failure outside Filter (Reserve, Permit, binding, a plugin error): requeue and report.

        A rejection on the chosen ``node`` is reported as upstream does, as a fit error over that
        one node. ``backoff`` sends even a rejection to backoffQ (failures after Permit).
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
            message = str(FitError(pi, 1, Diagnosis({node: status}, {status.plugin} - {""})))
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
        self.ctx.spawn_side(self.after_failure(fw, pi, reason, message, record, None), name=f"report {pi.key}")

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
        node, if any); a failure to write them is logged, never raised."""
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
        try:
            await self.cluster.record_event(pod, "Warning", "FailedScheduling", "Scheduling", note, profile)
            await self.cluster.update_pod_condition(pod, condition, nominated)
        except NotFound:
            pass
        except Exception:  # reporting must never take the scheduler down
            log.exception("could not report the failure of pod %s", pod_key(pod))

    async def annotate(self, pi: PodInfo, record: PodResult) -> None:
        """The pod's result annotations; a failure to write them is logged, never raised."""
        try:
            await self.cluster.patch_pod_annotations(pi.pod, record.annotations())
        except NotFound:
            pass
        except Exception:
            log.exception("could not annotate pod %s", pi.key)
