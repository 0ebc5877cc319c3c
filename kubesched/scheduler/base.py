"""What the parts of the scheduler share: the fields they read and the helpers they all call.

:class:`~kubesched.scheduler.scheduler.Scheduler` is assembled from mixins, one module per job
(event handlers, scheduling cycle, binding cycle, failure handling). Each derives from
:class:`SchedulerBase`, so that every mixin sees the same typed fields.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kubesched.backend.cache import Cache, Snapshot
from kubesched.backend.queue import SchedulingQueue
from kubesched.cluster.base import Cluster
from kubesched.extender.client import HTTPExtender
from kubesched.framework.interface import PODS_TO_ACTIVATE_KEY, CycleState
from kubesched.framework.status import Status
from kubesched.runtime.framework import Framework, WaitingPods
from kubesched.scheduler.batching import OpportunisticBatching
from kubesched.scheduler.listers import ObjectCache
from kubesched.scheduler.observer import Observer
from kubesched.scheduler.results import PodResult

if TYPE_CHECKING:
    from kubesched.scheduler.scheduler import SchedulerOptions, Stats


class SchedulerBase:
    """The fields the mixins read; ``Scheduler.__init__`` sets them (and documents them)."""

    options: SchedulerOptions
    extenders: list[HTTPExtender]
    cluster: Cluster
    clock: Callable[[], float]
    waiting_pods: WaitingPods
    frameworks: dict[str, Framework]
    cache: Cache
    snapshot: Snapshot
    queue: SchedulingQueue
    rng: random.Random
    observer: Observer
    _cycles: int
    next_start_node_index: int
    listers: ObjectCache
    results: dict[str, PodResult]
    stats: Stats
    _binding_tasks: set[asyncio.Task[None]]
    _side_tasks: set[asyncio.Task[None]]
    leading: bool
    _unreported: dict[str, tuple[dict[str, Any], str]]
    batching: OpportunisticBatching
    #: The profiles whose pods may be batched (every filtering and scoring plugin signs pods,
    #: and no extender is configured).
    _batchable: list[Framework]

    def _traces(self, record: PodResult | None) -> PodResult | None:
        """Where per-plugin results go: the pod's record, unless only outcomes are kept."""
        return record if record is not None and self.options.record_plugin_results else None

    def _activate_requested(self, state: CycleState) -> None:
        """Move the pods plugins asked for (PodsToActivate) to activeQ."""
        pods = state.get(PODS_TO_ACTIVATE_KEY)
        if pods:
            self.queue.activate(list(pods))
            pods.clear()

    def _ep(self, point: str, status: Status | None, fw: Framework, t0: float) -> None:
        label = "Success" if status is None else status.code.upstream_name
        self.observer.extension_point(point, label, fw.profile_name, time.perf_counter() - t0)

    def _spawn_side(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._side_tasks.add(task)
        task.add_done_callback(self._side_tasks.discard)
