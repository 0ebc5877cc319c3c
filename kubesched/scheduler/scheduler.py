"""The :class:`Scheduler`: profiles, queue, cache, and the loop that pops a pod, runs its
scheduling cycle and spawns its binding cycle; its options and its stats."""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from kubesched.backend.cache import Cache, Snapshot
from kubesched.backend.queue import SchedulingQueue
from kubesched.cluster.base import Cluster
from kubesched.extender.client import HTTPExtender
from kubesched.runtime.framework import Framework, ProfileSpec, WaitingPods
from kubesched.runtime.registry import Registry, default_registry
from kubesched.scheduler.batching import OpportunisticBatching
from kubesched.scheduler.eventhandlers import EventHandlers
from kubesched.scheduler.gc_pacing import GcPacer
from kubesched.scheduler.listers import ObjectCache
from kubesched.scheduler.observer import NullObserver, Observer
from kubesched.scheduler.results import PodResult
from kubesched.scheduler.schedule_one import SchedulingCycle

# One logger for the whole package: log lines name the scheduler, whichever module writes them.
log = logging.getLogger("kubesched.scheduler")

#: How many attempt durations :class:`Stats` keeps (the newest).
KEPT_ATTEMPT_DURATIONS = 100_000


@dataclass
class SchedulerOptions:
    parallelism: int = 16
    percentage_of_nodes_to_score: int | None = None
    pod_initial_backoff: float = 1.0
    pod_max_backoff: float = 10.0
    max_unschedulable_duration: float = 300.0
    #: Seconds after a finished bind before an unconfirmed assumed pod is dropped; 0 = never,
    #: as upstream (expiring can double-count a pod whose confirmation is merely late).
    assumed_ttl: float = 0.0
    seed: int | None = None
    #: Keep each pod's outcome (node, phase, message) for a report.
    record_results: bool = False
    #: With ``record_results``, also each plugin's result per node (filter/score maps): what
    #: the JSON report and the result annotations show; costly on large clusters.
    record_plugin_results: bool = True
    #: Also write them onto the pod as ``kubesched.io/*-result`` annotations.
    result_annotations: bool = False
    #: Write FailedScheduling/Scheduled events and PodScheduled conditions.
    report_to_cluster: bool = True
    #: Evaluate Filter and Score over the snapshot's node columns, one call per plugin and pod
    #: (``filter_nodes``/``score_nodes`` where a plugin has them). Off: node by node, as the
    #: plugin contract reads. Decisions are the same either way.
    batch: bool = True
    #: Upstream's OpportunisticBatching feature gate: identical pods popped in a row reuse the
    #: first one's ranked nodes (see kubesched.scheduler.batching).
    opportunistic_batching: bool = False
    #: Upstream's SchedulerAsyncPreemption (beta, on by default since 1.33): a preemptor is
    #: nominated at once and its victims are deleted in the background; it waits, gated, until
    #: they are gone. Off: the deletions happen inside the scheduling cycle.
    async_preemption: bool = True
    #: Keep the garbage collector's full collections out of busy periods (see
    #: :mod:`kubesched.scheduler.gc_pacing`). It freezes the process's objects, so it is for a
    #: process that is the scheduler (``kubesched run``), not for one that embeds it.
    gc_pacing: bool = False


@dataclass
class Stats:
    attempts: int = 0
    scheduled: int = 0
    unschedulable: int = 0
    errors: int = 0
    #: Duration of each scheduling attempt (scheduling cycle), in seconds: the most recent
    #: :data:`KEPT_ATTEMPT_DURATIONS`, so that a scheduler that runs for months does not grow.
    attempt_durations: deque[float] = field(default_factory=lambda: deque(maxlen=KEPT_ATTEMPT_DURATIONS))


class Scheduler(EventHandlers, SchedulingCycle):
    """Profiles, queue, cache and the loop that ties them to a cluster.

    The informer events are handled by :class:`EventHandlers`, each popped pod by
    :class:`SchedulingCycle` and, through it, :class:`BindingCycle` and :class:`FailureReporting`.
    """

    def __init__(
        self,
        profiles: Iterable[ProfileSpec],
        cluster: Cluster,
        options: SchedulerOptions | None = None,
        registry: Registry | None = None,
        clock: Callable[[], float] | None = None,
        observer: Observer | None = None,
        extenders: Iterable[HTTPExtender] = (),
    ) -> None:
        self.options = options or SchedulerOptions()
        #: HTTP extenders, shared by all profiles, run after the plugins as upstream orders them.
        self.extenders: list[HTTPExtender] = list(extenders)
        self.cluster = cluster
        # The event loop's clock by default, so that backoff, flushes and timeouts all share one
        # notion of time (and tests can fast-forward it).
        self.clock = clock or loop_time
        self.registry = registry if registry is not None else default_registry()
        self.waiting_pods = WaitingPods()
        self.frameworks: dict[str, Framework] = {}
        for spec in profiles:
            if spec.scheduler_name in self.frameworks:
                raise ValueError(f"duplicate profile for schedulerName {spec.scheduler_name!r}")
            self.frameworks[spec.scheduler_name] = Framework(
                spec,
                self.registry,
                cluster=cluster,
                waiting_pods=self.waiting_pods,
                parallelism=self.options.parallelism,
            )
            # Before the queue asks the plugins for their events: DefaultPreemption registers
            # some only with async preemption.
            self.frameworks[spec.scheduler_name].async_preemption = self.options.async_preemption
        if not self.frameworks:
            raise ValueError("at least one profile is needed")
        self.cache = Cache(assumed_ttl=self.options.assumed_ttl, clock=self.clock)
        self.snapshot = Snapshot()
        self.queue = SchedulingQueue(
            self.frameworks,
            clock=self.clock,
            initial_backoff=self.options.pod_initial_backoff,
            max_backoff=self.options.pod_max_backoff,
            max_unschedulable_duration=self.options.max_unschedulable_duration,
        )
        self.rng = random.Random(self.options.seed)
        self.observer: Observer = observer if observer is not None else NullObserver()
        self._cycles = 0
        #: A scheduling cycle is under way (it may await async plugins): the snapshot is its own.
        self._in_cycle = False
        if observer is not None:
            for fw in self.frameworks.values():
                fw.observer = observer
            self.queue.on_incoming = observer.queue_incoming
            observer.watch_pending(self.queue.counts)
            observer.watch_unschedulable(self.queue.unschedulable_by_plugin)
            observer.watch_cache(
                lambda: {
                    "nodes": len(self.cache.nodes),
                    "pods": self.cache.pod_count(),
                    "assumed_pods": self.cache.assumed_count(),
                }
            )
        self.next_start_node_index = 0
        self.listers = ObjectCache()
        preempting = any(e.supports_preemption() for e in self.extenders)
        for fw in self.frameworks.values():
            fw.listers = self.listers
            fw.nominator = self.queue.nominator
            fw.activator = self.queue.activate
            fw.spawner = self._spawn_side
            if preempting:
                fw.preempt_with_extenders = self._preempt_with_extenders
        self.batching = OpportunisticBatching(self.clock, self.observer)
        self._batchable = [] if self.extenders else [fw for fw in self.frameworks.values() if fw.signable]
        self.results: dict[str, PodResult] = {}
        self.stats = Stats()
        self._binding_tasks: set[asyncio.Task[None]] = set()
        self._side_tasks: set[asyncio.Task[None]] = set()
        self._stopping = False
        self.synced = False
        self.leading = True
        self._unreported: dict[str, tuple[dict[str, Any], str]] = {}

    # --- running ------------------------------------------------------------------------------
    async def start(self) -> None:
        """Connect to the cluster and wait until every informer has synced."""
        await self.cluster.start(self)
        self.synced = True

    async def run(self, start: bool = True) -> None:
        """Schedule until :meth:`stop`: the loop plus the queue's periodic flushes.

        With ``start=False`` the informers must already be synced (:meth:`start`), e.g. when
        the process synced first and then waited to become the leader.
        """
        if start:
            await self.start()
        flusher = asyncio.create_task(self._flush_periodically(), name="queue-flush")
        try:
            while not self._stopping:
                qpi = await self.queue.pop()
                if qpi is None:
                    break
                self._in_cycle = True
                try:
                    await self.schedule_one(qpi)
                finally:
                    self._in_cycle = False
                # A cycle is CPU work on the loop that also carries binds, watch events, lease
                # renewals and health checks: give it back between pods, or a burst of pods
                # starves all of them until the queue drains.
                await asyncio.sleep(0)
        finally:
            flusher.cancel()
            await asyncio.gather(flusher, return_exceptions=True)

    async def _flush_periodically(self) -> None:
        last_pool_flush = self.clock()
        pacer = GcPacer() if self.options.gc_pacing else None
        while True:
            await asyncio.sleep(1.0)
            try:
                if pacer is not None:
                    pacer.tick(idle=not self._in_cycle and not self.queue.has_active() and not self.in_flight())
                self.queue.flush_backoff_completed()
                if self.clock() - last_pool_flush >= 30.0:
                    self.queue.flush_unschedulable_left_over()
                    last_pool_flush = self.clock()
                self.cache.cleanup_expired_assumed_pods()
                if not self._in_cycle and not self.queue.has_active():
                    # Idle: bring the snapshot up to date now rather than at the next cycle, so
                    # that what was deleted meanwhile (say, thousands of pods) is not kept alive
                    # by stale node copies until another pod arrives.
                    self.cache.update_snapshot(self.snapshot)
            except Exception:  # noqa: BLE001 - a periodic task must not die silently
                log.exception("queue flush failed")

    async def stop(self, grace: float = 30.0) -> None:
        """Stop popping; let in-flight binding cycles finish within ``grace`` seconds."""
        self._stopping = True
        self.queue.close()
        await self.wait_for_bindings(grace)

    async def wait_for_bindings(self, timeout: float | None = None) -> None:
        tasks = set(self._binding_tasks) | set(self._side_tasks)
        if tasks:
            await asyncio.wait(tasks, timeout=timeout)

    def in_flight(self) -> int:
        return len(self._binding_tasks)


def loop_time() -> float:
    """The running event loop's time; ``time.monotonic`` outside a loop."""
    try:
        return asyncio.get_running_loop().time()
    except RuntimeError:
        return time.monotonic()
