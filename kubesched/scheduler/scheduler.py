"""The :class:`Scheduler`: profiles, queue, cache, and the loop that pops a pod, runs its
scheduling cycle and spawns its binding cycle.

It builds the shared :class:`~kubesched.scheduler.context.SchedulerContext` and the parts that
read it, each given what it calls: the event handlers the informers call, the pod scheduling
cycle, the binding cycle and failure reporting both of them share, and the extender loops.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Callable, Iterable
from typing import Any

from kubesched.backend.cache import Cache, Snapshot
from kubesched.backend.pod_groups import PodGroupIndex
from kubesched.backend.queue import Nominator, SchedulingQueue
from kubesched.cluster.base import Cluster, WatchesResources
from kubesched.cluster.kinds import handler_kind
from kubesched.extender.client import HTTPExtender
from kubesched.framework.events import EventResource
from kubesched.framework.informers import GroupVersionResource, ResourceNameError
from kubesched.framework.types import PodInfo, QueuedPodInfo
from kubesched.runtime.framework import Collaborators, Framework, ProfileSpec, WaitingPods
from kubesched.runtime.informers import SharedInformers
from kubesched.runtime.registry import Registry, default_registry
from kubesched.scheduler.batching import OpportunisticBatching
from kubesched.scheduler.binding_cycle import BindingCycle
from kubesched.scheduler.context import SchedulerContext, loop_time, side_task_spawner
from kubesched.scheduler.eventhandlers import EventHandlers
from kubesched.scheduler.extenders import Extenders
from kubesched.scheduler.failures import FailureReporting
from kubesched.scheduler.gc_pacing import GcPacer
from kubesched.scheduler.listers import ObjectCache
from kubesched.scheduler.observer import NullObserver, Observer
from kubesched.scheduler.options import SchedulerOptions
from kubesched.scheduler.podgroup.cycle import PodGroupSchedulingCycle
from kubesched.scheduler.results import PodResult
from kubesched.scheduler.schedule_one import PodSchedulingCycle
from kubesched.scheduler.stats import Stats
from kubesched.tasks import TaskSet

__all__ = ["Scheduler", "SchedulerOptions", "Stats", "loop_time"]

# One logger for the whole package: log lines name the scheduler, whichever module writes them.
log = logging.getLogger("kubesched.scheduler")


class Scheduler:
    """Profiles, queue, cache and the loop that ties them to a cluster.

    The informer events are handled by :attr:`handlers` (:class:`EventHandlers`), each popped
    pod by :attr:`pod_cycle` (:class:`PodSchedulingCycle`), which hands it to the shared
    :attr:`binding` (:class:`BindingCycle`) and :attr:`failures` (:class:`FailureReporting`).
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
        self.options = options = options or SchedulerOptions()
        self.cluster = cluster
        # The event loop's clock by default, so that backoff, flushes and timeouts all share one
        # notion of time (and tests can fast-forward it).
        self.clock = clock = clock or loop_time
        self.registry = registry if registry is not None else default_registry()
        self.observer: Observer = observer if observer is not None else NullObserver()
        self.waiting_pods = WaitingPods()
        self.snapshot = Snapshot()
        self.listers = ObjectCache()
        # The scheduler's own: the Frameworks need it when they are built, before the queue
        # (which needs the built Frameworks) exists.
        nominator = Nominator()
        #: HTTP extenders, shared by all profiles, run after the plugins as upstream orders them.
        ext = Extenders(extenders, self.snapshot)
        self.extenders: list[HTTPExtender] = ext.extenders
        #: PodGroups and their members; which are placed, the cache says (built below).
        self.pod_groups = PodGroupIndex()
        #: The informers plugins ask for, one per resource for every profile (see
        #: :meth:`_watch_registered_resources` and :meth:`start`).
        self.informers = SharedInformers(handler_kind)
        bindings = TaskSet("binding cycles", log)
        side_tasks = TaskSet("scheduler side tasks", log)
        self.frameworks: dict[str, Framework] = {}
        preempt = ext.preempt if ext.supports_preemption() else None
        for spec in profiles:
            if spec.scheduler_name in self.frameworks:
                raise ValueError(f"duplicate profile for schedulerName {spec.scheduler_name!r}")
            self.frameworks[spec.scheduler_name] = Framework(
                spec,
                self.registry,
                Collaborators(
                    cluster=cluster,
                    waiting_pods=self.waiting_pods,
                    # Plugin timings only for a real observer: the null one would time for nothing.
                    observer=observer,
                    listers=self.listers,
                    nominator=nominator,
                    activator=self._activate,
                    spawner=side_task_spawner(side_tasks, spec.scheduler_name),
                    preempt_with_extenders=preempt,
                    pod_groups=self.pod_groups,
                    informers=self.informers,
                    placed_pod=self._placed_pod,
                ),
                parallelism=options.parallelism,
                feature_gates=options.feature_gates,
            )
        if not self.frameworks:
            raise ValueError("at least one profile is needed")
        self._watch_registered_resources()
        self.cache = Cache(assumed_ttl=options.assumed_ttl, clock=clock)
        self.pod_groups.follow(self.cache)
        self.queue = SchedulingQueue(
            self.frameworks,
            clock=clock,
            initial_backoff=options.pod_initial_backoff,
            max_backoff=options.pod_max_backoff,
            max_unschedulable_duration=options.max_unschedulable_duration,
            feature_gates=options.feature_gates,
        )
        if options.feature_gates.enabled("GenericWorkload"):
            hierarchies = options.feature_gates.enabled("CompositePodGroup")
            self.queue.group_entity = lambda pi: self.pod_groups.entity_of(pi, hierarchies)
        if observer is not None:
            self.queue.on_incoming = observer.queue_incoming
            observer.watch_pending(self.queue.counts, self.queue.entity_counts)
            observer.watch_unschedulable(self.queue.unschedulable_by_plugin)
            observer.watch_cache(
                lambda: {
                    "nodes": len(self.cache.nodes),
                    "pods": self.cache.pod_count(),
                    "assumed_pods": self.cache.assumed_count(),
                }
            )
        self.batching = OpportunisticBatching(clock, self.observer)
        self.results: dict[str, PodResult] = {}
        self.stats = Stats()
        self.ctx = SchedulerContext(
            options=options,
            stats=self.stats,
            clock=clock,
            cluster=cluster,
            frameworks=self.frameworks,
            waiting_pods=self.waiting_pods,
            cache=self.cache,
            snapshot=self.snapshot,
            queue=self.queue,
            nominator=nominator,
            listers=self.listers,
            observer=self.observer,
            results=self.results,
            extenders=ext,
            batching=self.batching,
            bindings=bindings,
            side_tasks=side_tasks,
            pod_groups=self.pod_groups,
            informers=self.informers,
        )
        self.failures = FailureReporting(self.ctx)
        self.binding = BindingCycle(self.ctx, self.failures)
        rng = random.Random(options.seed)
        self.pod_cycle = PodSchedulingCycle(self.ctx, self.binding, self.failures, rng)
        #: Pod groups' cycles (GenericWorkload): the queue pops a group whole.
        self.group_cycle: PodGroupSchedulingCycle | None = (
            PodGroupSchedulingCycle(self.ctx, self.pod_cycle, self.binding, self.failures, rng)
            if options.feature_gates.enabled("GenericWorkload")
            else None
        )
        self.handlers = EventHandlers(self.ctx, self.failures)
        #: A scheduling cycle is under way (it may await async plugins): the snapshot is its own.
        self._in_cycle = False
        self._stopping = False
        self.synced = False

    def _watch_registered_resources(self) -> None:
        """An informer for every resource a plugin registers events on by name
        (``"elasticquotas.v1alpha1.scheduling.x-k8s.io"``), whether or not it asked for one: its
        events reach the queue only if it is watched. As upstream, a name that cannot be read is
        logged and left out."""
        for fw in self.frameworks.values():
            for plugin, regs in fw.events_to_register().items():
                for reg in regs or ():
                    resource = reg.event.resource
                    if isinstance(resource, EventResource):
                        continue
                    try:
                        gvr = GroupVersionResource.parse(resource)
                    except ResourceNameError as exc:
                        log.error("profile %s: plugin %s registers events on %s", fw.profile_name, plugin, exc)
                        continue
                    self.informers.informer_for(gvr)

    def _activate(self, uids: list[str]) -> None:
        """The profiles' activator: move the pods with ``uids`` to activeQ."""
        self.queue.activate(uids)

    def _placed_pod(self, uid: str) -> PodInfo | None:
        """The profiles' view of the cache: a bound or assumed pod by uid."""
        return self.cache.get_pod(uid)

    # --- the parts' faces ---------------------------------------------------------------------
    def on_add(self, kind: str, obj: dict[str, Any]) -> None:
        self.handlers.on_add(kind, obj)

    def on_update(self, kind: str, old: dict[str, Any], new: dict[str, Any]) -> None:
        self.handlers.on_update(kind, old, new)

    def on_delete(self, kind: str, obj: dict[str, Any]) -> None:
        self.handlers.on_delete(kind, obj)

    @property
    def leading(self) -> bool:
        """Whether this process may write to the cluster (see :meth:`set_leading`)."""
        return self.handlers.leading

    def set_leading(self, leading: bool) -> None:
        """Whether this process may write to the cluster (leader election); becoming the leader
        reports what was held back meanwhile."""
        self.handlers.set_leading(leading)

    def cycle_for(self, qpi: QueuedPodInfo) -> PodSchedulingCycle | PodGroupSchedulingCycle:
        """The scheduling cycle that decides ``qpi``: its pod group's when it belongs to one
        (GenericWorkload), else its own."""
        if self.group_cycle is not None and self.group_cycle.is_group_member(qpi):
            return self.group_cycle
        return self.pod_cycle

    async def schedule_one(self, qpi: QueuedPodInfo) -> None:
        """Run the scheduling cycle of one popped pod (its binding cycle goes on as a task)."""
        await self.cycle_for(qpi).schedule(qpi)

    # --- running ------------------------------------------------------------------------------
    async def start(self) -> None:
        """Connect to the cluster and wait until every informer has synced.

        The resources plugins asked informers for are named to the cluster first
        (``cluster.watch_resources``, for a cluster that has it); those it watches already are
        served from what it delivers anyway."""
        resources = self.informers.resources()
        if resources:
            if isinstance(self.cluster, WatchesResources):
                self.cluster.watch_resources(resources)
            else:
                log.warning(
                    "this cluster cannot watch resources besides its own; informers of %s get only what it delivers",
                    ", ".join(map(str, resources)),
                )
        self.informers.started = True
        await self.cluster.start(self.handlers)
        self.informers.set_synced()
        self.synced = True

    async def run(self, start: bool = True) -> None:
        """Schedule until :meth:`stop`: the loop plus the queue's periodic flushes.

        With ``start=False`` the informers must already be synced (:meth:`start`), e.g. when
        the process synced first and then waited to become the leader.
        """
        if start:
            await self.start()
        # The loop's own tasks (the queue's periodic flush) end with it.
        async with TaskSet("scheduling loop", log) as loop_tasks:
            loop_tasks.spawn(self._flush_periodically(), name="queue-flush")
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

    async def _flush_periodically(self) -> None:
        last_pool_flush = self.clock()
        pacer = GcPacer() if self.options.gc_pacing else None
        while True:
            # Aligned to backoffQ's ordering windows, as upstream's flush: whole windows move.
            await asyncio.sleep(self.queue.seconds_to_next_window())
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
            except Exception:  # a periodic task must not die silently
                log.exception("queue flush failed")

    async def stop(self, grace: float = 30.0) -> None:
        """Stop popping; give in-flight binding cycles and side tasks ``grace`` seconds to
        finish (and what they start meanwhile), then cancel what is still running and wait
        until it has ended."""
        self._stopping = True
        # Closing cancels the PreEnqueue checks still running; wait until they have ended.
        await self.queue.aclose()
        tasks = (self.ctx.bindings, self.ctx.side_tasks)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + grace
        while (running := [t for ts in tasks for t in ts]) and (left := deadline - loop.time()) > 0:
            await asyncio.wait(running, timeout=left)
        for ts in tasks:
            await ts.cancel()

    def release(self) -> None:
        """After :meth:`stop`: let go of the nodes and pods it knows (its cache, snapshot and
        results). A process that runs one scheduler after another (a sweep's worker) so frees
        each one's pods by reference counting as it ends, rather than leaving them to a full
        collection through the scheduler's own reference cycles."""
        self.results.clear()
        self.cache.clear()
        self.snapshot.clear()

    async def wait_for_bindings(self, timeout: float | None = None) -> None:
        """Wait (up to ``timeout`` seconds) for the binding cycles and side tasks running now."""
        tasks = [*self.ctx.bindings, *self.ctx.side_tasks]
        if tasks:
            await asyncio.wait(tasks, timeout=timeout)

    def in_flight(self) -> int:
        """Binding cycles in flight."""
        return len(self.ctx.bindings)
