"""What the parts of the scheduler share: :class:`SchedulerContext`.

The scheduler is a few separate parts (event handlers, the pod scheduling cycle, the binding
cycle, failure reporting, the extender loops), each built with the context and the other parts
it calls. The context holds what they all read: the options, the stats, the clock, the cluster,
the profiles' Frameworks, cache, snapshot, queue, nominator, the other cached objects, the
observer, the pods' results, the extenders, and the owners of the tasks they start. It is made
once by :class:`~kubesched.scheduler.scheduler.Scheduler` and none of its fields is replaced
afterwards, so a part may keep a field's object as its own attribute.

State of one scheduling cycle is never kept here: it travels with the cycle.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

from kubesched.backend.cache import Cache, Snapshot
from kubesched.backend.pod_groups import PodGroupIndex
from kubesched.backend.queue import Nominator, SchedulingQueue
from kubesched.cluster.base import Cluster
from kubesched.framework.interface import PODS_TO_ACTIVATE_KEY, CycleState
from kubesched.framework.status import Status
from kubesched.runtime.framework import Framework, WaitingPods
from kubesched.runtime.informers import SharedInformers
from kubesched.scheduler.batching import OpportunisticBatching
from kubesched.scheduler.extenders import Extenders
from kubesched.scheduler.listers import ObjectCache
from kubesched.scheduler.observer import NullObserver, Observer
from kubesched.scheduler.options import SchedulerOptions
from kubesched.scheduler.results import PodResult
from kubesched.scheduler.stats import Stats
from kubesched.tasks import TaskSet

__all__ = ["SchedulerContext", "loop_time", "side_task_spawner"]


def loop_time() -> float:
    """The running event loop's time; ``time.monotonic`` outside a loop."""
    try:
        return asyncio.get_running_loop().time()
    except RuntimeError:
        return time.monotonic()


def side_task_spawner(tasks: TaskSet, profile: str) -> Callable[[Coroutine[Any, Any, None]], None]:
    """A profile's ``spawner``: its plugins' background work becomes a side task of the
    scheduler, named after the profile and the coroutine."""

    def spawn(coro: Coroutine[Any, Any, None]) -> None:
        tasks.spawn(coro, name=f"{profile}: {getattr(coro, '__qualname__', 'background')}")

    return spawn


@dataclass(eq=False)
class SchedulerContext:
    """The fields every part of the scheduler reads (see the module docstring)."""

    options: SchedulerOptions
    stats: Stats
    #: The clock of backoff, flushes and timeouts (the event loop's by default).
    clock: Callable[[], float]
    cluster: Cluster
    #: One Framework per profile, by ``schedulerName``.
    frameworks: dict[str, Framework]
    waiting_pods: WaitingPods
    cache: Cache
    #: The snapshot a scheduling cycle reads, updated from the cache at its start.
    snapshot: Snapshot
    queue: SchedulingQueue
    #: Pods nominated to nodes by preemption; the Frameworks' ``nominator`` too.
    nominator: Nominator
    #: The cluster objects plugins read besides pods and nodes.
    listers: ObjectCache
    observer: Observer
    #: Each pod's last attempt (only with ``options.record_results``), by ``namespace/name``;
    #: dropped with the pod's delete event unless ``options.keep_deleted_results``.
    results: dict[str, PodResult]
    extenders: Extenders
    batching: OpportunisticBatching
    #: The binding cycles in flight: the scheduler waits for them, then cancels them, at stop.
    bindings: TaskSet
    #: Work started beside the cycles (events, conditions, annotations, plugins' background
    #: calls): waited for and cancelled at stop like the binding cycles.
    side_tasks: TaskSet
    #: PodGroups and their members (kept only with GenericWorkload).
    pod_groups: PodGroupIndex
    #: The informers plugins asked for (``handle.informer_for``), fed by the event handlers.
    informers: SharedInformers
    #: Whether anyone records what the scheduler reports: not with the default
    #: :class:`~kubesched.scheduler.observer.NullObserver`, whose figures nobody reads.
    observed: bool = field(init=False)

    def __post_init__(self) -> None:
        self.observed = type(self.observer) is not NullObserver

    def spawn_side(self, coro: Coroutine[Any, Any, None], name: str) -> None:
        """Run ``coro`` as a side task named ``name``."""
        self.side_tasks.spawn(coro, name=name)

    def traces(self, record: PodResult | None) -> PodResult | None:
        """Where per-plugin results go: the pod's record, unless only outcomes are kept."""
        return record if record is not None and self.options.record_plugin_results else None

    def activate_requested(self, state: CycleState) -> None:
        """Move the pods plugins asked for (PodsToActivate) to activeQ."""
        pods = state.get(PODS_TO_ACTIVATE_KEY)
        if pods:
            self.queue.activate(list(pods))
            pods.clear()

    def extension_point(self, point: str, status: Status | None, fw: Framework, t0: float) -> None:
        """Report how long ``point`` ran for ``fw``'s profile since ``t0`` and how it ended."""
        if not self.observed:
            return
        label = "Success" if status is None else status.code.upstream_name
        self.observer.extension_point(point, label, fw.profile_name, time.perf_counter() - t0)
