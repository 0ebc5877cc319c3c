"""What the backends share: a workload's gates and configuration, the scheduler a trace replay or
an HTTP run makes, and upstream's churn op as the HTTP backend runs it."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from benchmarks.catalogue import Workload

#: Name prefix of the churn pods: they are neither measured nor counted as placements.
CHURN_PREFIX = "churn"


def workload_gates(w: Workload) -> Any:
    """The feature gates a workload runs with: 1.37's defaults, OpportunisticBatching as the
    workload says, and the workload's own (upstream's ``featureGates``)."""
    from kubesched.framework.features import FeatureGates

    return FeatureGates({"OpportunisticBatching": w.opportunistic_batching, **w.feature_gates})


def workload_config(w: Workload) -> Any:
    """The workload's configuration (the default one unless it names a file) under its gates:
    the default profile is the one those gates give (GenericWorkload adds GangScheduling)."""
    from kubesched.config import load_config

    return load_config(w.config, feature_gates=workload_gates(w))


def workload_scheduler(w: Workload, cfg: Any, cluster: Any, batch: bool) -> Any:
    """The scheduler a workload runs: its configuration's profiles and options, seed 1."""
    from kubesched.scheduler import Scheduler, SchedulerOptions

    m = cfg.model
    return Scheduler(
        cfg.profiles,
        cluster,
        SchedulerOptions(
            parallelism=m.parallelism,
            percentage_of_nodes_to_score=m.percentageOfNodesToScore,
            seed=1,
            batch=batch,
            feature_gates=workload_gates(w),
            gc_pacing=True,  # as `kubesched run` has it
        ),
    )


class Churn:
    """Upstream's ``churn`` op in ``create`` mode: ``create(pod)`` one pod of the workload's
    churn template every interval, from :meth:`start` to :meth:`stop` (nothing without one)."""

    def __init__(self, w: Workload, create: Callable[[dict[str, Any]], Any]) -> None:
        self.w = w
        self.create = create
        self.created = 0
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self.w.make_churn_pod is not None:
            self._task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        assert self.w.make_churn_pod is not None
        while True:
            result = self.create(self.w.make_churn_pod(CHURN_PREFIX, self.created))
            if asyncio.iscoroutine(result):
                await result
            self.created += 1
            await asyncio.sleep(self.w.churn_interval)

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
