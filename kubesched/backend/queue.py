"""The scheduling queue: activeQ, backoffQ and the unschedulable pool, as upstream's PriorityQueue.

* **activeQ** holds pods ready to be tried, ordered by the (single, shared) QueueSort plugin.
* **backoffQ** holds pods that failed and wait out their backoff (:mod:`kubesched.backend.backoff`:
  rejected pods and errored pods apart, the backoff counted in rejections or errors in a row).
  With ``SchedulerPopFromBackoffQ`` (1.37's default) a pop that finds activeQ empty takes the
  head of the rejected pods' backoffQ instead of waiting.
* **unschedulable pool** holds pods rejected by plugins. A pod leaves it only on a cluster event
  that one of its rejecting plugins registered for (and whose queueing hint says Queue), or
  after ``max_unschedulable_duration`` (5 minutes upstream). Pods gated by a PreEnqueue plugin
  wait here too, until an event lets their gate re-check pass.

Events that arrive while a pod is being scheduled are remembered: if one of them could have
made the pod schedulable, a failure sends it to backoffQ instead of the pool, so an event is
never lost in the window between pop and failure.

Time comes from ``clock`` (seconds), so tests and the simulator can drive it.

The parts live in modules of their own, as upstream's: activeQ in
:mod:`kubesched.backend.active_queue`, backoffQ in :mod:`kubesched.backend.backoff`, the pool in
:mod:`kubesched.backend.unschedulable_pods`, the pods in flight and the events they hear in
:mod:`kubesched.backend.in_flight`, the events' queueing hints in
:mod:`kubesched.backend.queueing_hints`, the nominated pods in :mod:`kubesched.backend.nominator`,
and pod groups, each queued as one entity, in :mod:`kubesched.backend.pod_group_queue`.
This module moves pods between them.

What it holds is bounded by the pods pending or in flight, on a replica that never pops (a
standby) as on the leader: removed heap entries are dropped when popped or, once they are more
than half of a heap, by rebuilding it (:meth:`SchedulingQueue.footprint` counts every structure).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from kubesched.backend.active_queue import ActiveQueue, queue_sort_key
from kubesched.backend.backoff import ORDERING_WINDOW, BackoffQueue, align_to_window
from kubesched.backend.in_flight import Heard, InFlight
from kubesched.backend.nominator import Nominator
from kubesched.backend.pod_group_queue import PodGroupQueueing
from kubesched.backend.queue_names import (
    ACTIVE_Q,
    BACKOFF_Q,
    GATED_Q,
    INCOMPLETE_Q,
    PENDING_Q,
    POD_ENTITY,
    POD_GROUP_ENTITY,
    UNSCHEDULABLE_Q,
)
from kubesched.backend.queueing_hints import RESULT_ANNOTATION_PREFIX, EventHints, spec_changed
from kubesched.backend.unschedulable_pods import POD_TOPOLOGY_SPREAD, NamespaceLabels, UnschedulablePods, waits_for
from kubesched.framework.events import (
    ASSIGNED_POD_ADD,
    ASSIGNED_POD_DELETE,
    FORCE_ACTIVATE,
    UNSCHEDULABLE_TIMEOUT,
    ActionType,
    ClusterEvent,
)
from kubesched.framework.features import FeatureGates
from kubesched.framework.status import Status
from kubesched.framework.types import PodInfo, QueuedPodGroupInfo, QueuedPodInfo
from kubesched.runtime.framework import Framework
from kubesched.tasks import TaskSet

#: The queue's names, and those of its parts that were defined here before they had modules of their own.
__all__ = [
    "ACTIVE_Q",
    "BACKOFF_Q",
    "DEFAULT_MAX_UNSCHEDULABLE_DURATION",
    "GATED_Q",
    "INCOMPLETE_Q",
    "PENDING_Q",
    "POD_TOPOLOGY_SPREAD",
    "POP_FROM_BACKOFF_Q",
    "RESULT_ANNOTATION_PREFIX",
    "SCHEDULING_GATES",
    "UNSCHEDULABLE_Q",
    "NamespaceLabels",
    "Nominator",
    "SchedulingQueue",
    "queue_sort_key",
]

log = logging.getLogger(__name__)

#: The plugin whose gate only an update of the pod itself lifts, as upstream's queue names it.
SCHEDULING_GATES = "SchedulingGates"

DEFAULT_MAX_UNSCHEDULABLE_DURATION = 5 * 60.0

#: The incoming-pods event of a pod popped from backoffQ because activeQ was empty.
POP_FROM_BACKOFF_Q = "PopFromBackoffQ"


class SchedulingQueue(PodGroupQueueing):
    def __init__(
        self,
        frameworks: Mapping[str, Framework],
        clock: Callable[[], float] = time.monotonic,
        initial_backoff: float = 1.0,
        max_backoff: float = 10.0,
        max_unschedulable_duration: float = DEFAULT_MAX_UNSCHEDULABLE_DURATION,
        feature_gates: FeatureGates | None = None,
    ) -> None:
        self.frameworks = frameworks
        self.clock = clock
        self.initial_backoff = initial_backoff
        self.max_backoff = max_backoff
        self.max_unschedulable_duration = max_unschedulable_duration
        gates = feature_gates if feature_gates is not None else FeatureGates()
        #: SchedulerPopFromBackoffQ: with activeQ empty, pop podBackoffQ's head; PreEnqueue runs
        #: as a pod enters backoffQ, not as it leaves; backoff expiries aligned to 1 s windows.
        self.pop_from_backoff = gates.enabled("SchedulerPopFromBackoffQ")
        # Profiles that sort with the same QueueSort plugin (and args) share one activeQ, ordered
        # by it: with one such group, upstream's single queue. Groups take turns at pop.
        self._activeq = ActiveQueue(frameworks)
        self.less = self._activeq.less
        self._hints = EventHints(frameworks)
        self._backoffq = BackoffQueue(
            clock, initial_backoff, max_backoff, self.pop_from_backoff, self._activeq.order_of
        )
        self._unschedulable = UnschedulablePods()
        self._unschedulable.index_keys(self._hints.screened_key_fns())
        self._in_flight = InFlight()
        self._nonempty: asyncio.Event | None = None
        self._closed = False
        #: Async PreEnqueue checks in flight; :meth:`close` cancels them, :meth:`aclose` awaits them.
        self._gate_tasks = TaskSet("scheduling queue", log)
        self.incoming: dict[str, int] = {}
        #: Told ``(queue, event, pods, type)`` each time an entity (a pod, or a pod group of
        #: ``pods``) enters a queue (the incoming pods and entities metrics).
        self.on_incoming: Callable[[str, str, int, str], None] | None = None
        #: Told ``(plugin, event, hint, seconds)`` each time a queueing hint runs (its metric);
        #: hints are timed only when it is set.
        self.on_hint: Callable[[str, str, str, float], None] | None = None
        self.screening = True  # on_event passes over pods the hints' screens rule out (else asks all)
        self._init_pod_groups()

    # --- introspection ------------------------------------------------------------------------
    def __len__(self) -> int:
        """The entities queued (a pod group counts once) and the members waiting apart."""
        return (
            len(self._activeq)
            + len(self._backoffq)
            + len(self._unschedulable)
            + len(self._pending)
            + len(self._incomplete)
        )

    def _entity_totals(self) -> dict[str, int]:
        """Entities by queue (a group counts once)."""
        gated = self._unschedulable.gated_count()
        return {
            ACTIVE_Q: len(self._activeq),
            BACKOFF_Q: len(self._backoffq),
            UNSCHEDULABLE_Q: len(self._unschedulable) - gated,
            GATED_Q: gated,
        }

    def counts(self) -> dict[str, int]:
        """Pods by queue (``scheduler_pending_pods``): a group counts as its members, and the
        members waiting apart as ``incomplete`` and ``pending``."""
        out = self._entity_totals()
        for queue, e in self._queued_groups():
            out[queue] += e.size - 1
        out[INCOMPLETE_Q] = len(self._incomplete)
        out[PENDING_Q] = len(self._pending)
        return out

    def unschedulable_by_plugin(self) -> dict[tuple[str, str], int]:
        """Pods in the unschedulable pool per (rejecting plugin, profile); a pod counts once for
        each plugin that rejected it (``scheduler_unschedulable_pods``)."""
        return self._unschedulable.by_plugin()

    def in_flight_counts(self) -> tuple[int, int]:
        """Pods whose attempt is under way (popped, not yet :meth:`done`), and the cluster events
        kept for them meanwhile. Both return to 0 when nothing is being scheduled or bound."""
        return len(self._in_flight), len(self._in_flight.events)

    def in_flight_events(self) -> list[Heard]:
        """The cluster events kept for the attempts under way (the in-flight events metric)."""
        return self._in_flight.events

    def footprint(self) -> dict[str, int]:
        """How many entries each of the queue's structures holds, the lazily dropped ones
        included: what it keeps in memory, for tests and the soak. All return to 0 when no pod
        is pending or in flight."""
        return {
            "active_heap": self._activeq.heap_size(),
            "active": len(self._activeq),
            "backoff_heap": sum(self._backoffq.heap_sizes()),
            "backoff": len(self._backoffq),
            "unschedulable": len(self._unschedulable),
            "in_flight": len(self._in_flight),
            "in_flight_events": len(self._in_flight.events),
            "gone": len(self._in_flight.gone),
            "latest": len(self._in_flight.latest),
            "groups": len(self._entities),
            "members": len(self._member_of),
            "pending": len(self._pending),
            "incomplete": len(self._incomplete),
        }

    def pending_pods(self) -> Iterator[tuple[str, QueuedPodInfo]]:
        """Every pending pod with the queue it waits in (a group's members each)."""
        for qpi in self._activeq.pods():
            yield from self._each(ACTIVE_Q, qpi)
        for q in self._backoffq.pods():
            yield from self._each(BACKOFF_Q, q)
        for q in self._unschedulable.values():
            yield from self._each(GATED_Q if q.gated else UNSCHEDULABLE_Q, q)
        for q in self._pending.values():
            yield PENDING_Q, q
        for q in self._incomplete.values():
            yield INCOMPLETE_Q, q

    @staticmethod
    def _each(queue: str, q: QueuedPodInfo) -> Iterator[tuple[str, QueuedPodInfo]]:
        if isinstance(q, QueuedPodGroupInfo):
            for m in q.members:
                yield queue, m
        else:
            yield queue, q

    def where(self, uid: str) -> str | None:
        """The queue the pod waits in (its group's, for a member), or None."""
        key = self._member_of.get(uid)
        if key is not None:
            return self._where_key(key)
        if uid in self._pending:
            return PENDING_Q
        if uid in self._incomplete:
            return INCOMPLETE_Q
        return self._where_key(uid)

    def _where_key(self, key: str) -> str | None:
        if key in self._activeq:
            return ACTIVE_Q
        if key in self._backoffq:
            return BACKOFF_Q
        q = self._unschedulable.get(key)
        if q is not None:
            return GATED_Q if q.gated else UNSCHEDULABLE_Q
        return None

    def _queued(self, key: str) -> QueuedPodInfo | None:
        """The entity filed under ``key`` in activeQ, backoffQ or the pool."""
        return self._activeq.get(key) or self._backoffq.get(key) or self._unschedulable.get(key)

    def get(self, uid: str) -> QueuedPodInfo | None:
        """The pending pod (a member of a queued group too, or one waiting apart)."""
        key = self._member_of.get(uid)
        if key is not None:
            return self._entities[key].member(uid)
        return self._queued(uid) or self._pending.get(uid) or self._incomplete.get(uid)

    def has_active(self) -> bool:
        return bool(self._activeq)

    def has_backoff_to_pop(self) -> bool:
        """Whether :meth:`pop` would take a pod from podBackoffQ (SchedulerPopFromBackoffQ)."""
        return self.pop_from_backoff and self._backoffq.len_backoff() > 0

    def next_backoff_expiry(self) -> float | None:
        """The earliest moment a pod in backoffQ stops backing off (see
        :meth:`BackoffQueue.ready_at`): when :meth:`flush_backoff_completed` moves it."""
        return self._backoffq.next_ready()

    # --- backoff ------------------------------------------------------------------------------
    def backoff_duration(self, qpi: QueuedPodInfo) -> float:
        return self._backoffq.duration(qpi)

    def backoff_expiry(self, qpi: QueuedPodInfo) -> float:
        return self._backoffq.expiry(qpi)

    def is_backing_off(self, qpi: QueuedPodInfo) -> bool:
        return self._backoffq.is_backing_off(qpi)

    # --- placing pods -------------------------------------------------------------------------
    def _wake(self) -> None:
        if self._nonempty is not None:
            self._nonempty.set()

    def _push_active(self, qpi: QueuedPodInfo, event: str) -> None:
        self._remove_everywhere(qpi.key)
        self._ungate(qpi)
        self._register(qpi)
        self._activeq.push(qpi)
        self._count_incoming(ACTIVE_Q, event, qpi)
        self._wake()

    def _push_backoff(self, qpi: QueuedPodInfo, event: str) -> None:
        self._remove_everywhere(qpi.key)
        self._ungate(qpi)
        self._register(qpi)
        self._backoffq.add(qpi)
        self._count_incoming(BACKOFF_Q, event, qpi)
        if self.pop_from_backoff:
            self._wake()  # an idle pop takes it at once

    def _to_backoff(self, qpi: QueuedPodInfo, event: str) -> None:
        """A failed attempt backs off. With SchedulerPopFromBackoffQ, PreEnqueue runs as the pod
        enters backoffQ (a gated pod waits in the pool instead), as it will not on the way out."""
        if self.pop_from_backoff:
            self._gate(qpi, event, self._push_backoff)
        else:
            self._push_backoff(qpi, event)

    def _push_unschedulable(self, qpi: QueuedPodInfo, event: str) -> None:
        self._remove_everywhere(qpi.key)
        self._register(qpi)
        self._unschedulable[qpi.key] = qpi
        self._count_incoming(GATED_Q if qpi.gated else UNSCHEDULABLE_Q, event, qpi)

    @staticmethod
    def _ungate(qpi: QueuedPodInfo) -> None:
        was, qpi.gated = qpi.gated, False
        if was and isinstance(qpi, QueuedPodGroupInfo):  # an ungated group's members are ungated
            for m in qpi.members:
                m.gated = False

    def _count_incoming(self, queue: str, event: str, qpi: QueuedPodInfo) -> None:
        pods = qpi.size
        self.incoming[event] = self.incoming.get(event, 0) + pods
        if self.on_incoming is not None:
            self.on_incoming(
                queue, event, pods, POD_GROUP_ENTITY if isinstance(qpi, QueuedPodGroupInfo) else POD_ENTITY
            )

    def _remove_everywhere(self, uid: str) -> QueuedPodInfo | None:
        q = self._activeq.remove(uid)
        if q is not None:
            return q
        q = self._backoffq.remove(uid)
        if q is not None:
            return q
        return self._unschedulable.pop(uid, None)

    def _requeue(self, qpi: QueuedPodInfo, event: str) -> None:
        """Move a pod that may now fit: to backoffQ while it backs off, else activeQ."""
        if isinstance(qpi, QueuedPodGroupInfo):
            qpi.held_back = False  # moved by an event: an idle scheduler may take it early
        if self.is_backing_off(qpi):
            self._push_backoff(qpi, event)
        else:
            self._push_active(qpi, event)

    def _gate(
        self,
        qpi: QueuedPodInfo,
        event: str,
        place: Callable[[QueuedPodInfo, str], None] | None = None,
        only: list[QueuedPodInfo] | None = None,
    ) -> None:
        """Run PreEnqueue and place the pod: with ``place`` when it passes (by default activeQ,
        or backoffQ while it backs off), in the pool (gated) otherwise. Every move towards
        activeQ goes through here, as upstream's ``moveToActiveQ`` runs PreEnqueue on each.
        Async PreEnqueue plugins are awaited in a task the queue owns.

        A group is gated when any member is: every member is asked (or those in ``only``, the
        others having passed before), up to the first held."""
        place = place or self._requeue
        fw = self.frameworks.get(qpi.pod_info.scheduler_name)
        if fw is None or not fw.pre_enqueue_plugins:
            place(qpi, event)
            return
        asked = only if only is not None else (qpi.members if isinstance(qpi, QueuedPodGroupInfo) else [qpi])
        if not fw.pre_enqueue_is_async:
            status: Status | None = None
            for m in asked:
                status = fw.run_pre_enqueue_sync(m.pod_info)
                if status is not None and not status.is_success():
                    break
            self._apply_gate(qpi, status, event, place)
            return

        async def gate() -> None:
            status: Status | None = None
            for m in asked:
                status = await fw.run_pre_enqueue(m.pod_info)
                if status is not None and not status.is_success():
                    break
            if self._queued(qpi.key) is qpi or (
                not isinstance(qpi, QueuedPodGroupInfo) and qpi.pod_info.uid not in self._in_flight
            ):
                self._apply_gate(qpi, status, event, place)

        # Hold the pod in the pool (gated) until its gate has answered.
        qpi.gated = True
        self._push_unschedulable(qpi, event)
        if self._closed:
            return  # nothing pops any more: the pod stays gated, its check is not started
        name = qpi.key if isinstance(qpi, QueuedPodGroupInfo) else qpi.pod_info.key
        self._gate_tasks.spawn(gate(), name=f"pre-enqueue {name}")

    def _apply_gate(
        self,
        qpi: QueuedPodInfo,
        status: Status | None,
        event: str,
        place: Callable[[QueuedPodInfo, str], None] | None = None,
    ) -> None:
        if status is None or status.is_success():
            qpi.gating_plugin = ""
            (place or self._requeue)(qpi, event)
        else:
            message = status.message()
            # Held again for the same reason (a gang short of its quorum hearing of each new
            # member): its members show it already, those joining since were told on joining.
            same = qpi.gated and qpi.gating_plugin == status.plugin and qpi.last_failure == message
            qpi.gated = True
            qpi.gating_plugin = status.plugin
            qpi.last_failure = message
            if isinstance(qpi, QueuedPodGroupInfo) and not same:
                for m in qpi.members:  # what a member's status and report show
                    m.gated, m.gating_plugin, m.last_failure = True, status.plugin, qpi.last_failure
            self._push_unschedulable(qpi, event)

    # --- the informer side --------------------------------------------------------------------
    def add(self, pod: PodInfo) -> None:
        """A new pending pod for one of our profiles."""
        if self.get(pod.uid) is not None or pod.uid in self._in_flight:
            self.update(pod)
            return
        qpi = QueuedPodInfo(pod, self.clock())
        if self._is_member(pod):
            self._add_member(qpi, "PodAdd")
        else:
            self._gate(qpi, "PodAdd")

    def update(self, pod: PodInfo) -> None:
        """A pending pod changed. A change that could affect scheduling moves it out of the pool."""
        uid = pod.uid
        key = self._member_of.get(uid)
        if key is not None:
            e = self._entities[key]
            m = e.member(uid)
            assert m is not None
            old = m.pod_info.pod
            m.pod_info = pod
            if spec_changed(old, pod.pod):
                e.sort()
                where = self._where_key(key)
                if where == ACTIVE_Q:
                    self._push_active(e, "PodUpdate")
                elif where in (UNSCHEDULABLE_Q, GATED_Q):
                    self._gate(e, "PodUpdate")
            return
        if self._pending.update(pod) or self._incomplete.update(pod):
            return
        active = self._activeq.get(uid)
        if active is not None:
            old = active.pod_info.pod
            active.pod_info = pod
            if spec_changed(old, pod.pod):
                # Re-position it: the sort key may have changed.
                self._push_active(active, "PodUpdate")
            return
        q = self._backoffq.get(uid) or self._unschedulable.get(uid)
        if q is not None:
            old = q.pod_info.pod
            q.pod_info = pod
            self._unschedulable.refresh(uid)  # its keys may have changed
            if spec_changed(old, pod.pod):
                if q.gated or uid in self._unschedulable:
                    self._gate(q, "PodUpdate")
            return
        if uid in self._in_flight:
            self._in_flight.latest[uid] = pod
            return
        self.add(pod)

    def note_nomination(self, uid: str, node_name: str) -> None:
        """The scheduler wrote the pod's ``status.nominatedNodeName`` (``""``: cleared): the
        queued pod has it at once, as upstream's API cache patches the queued pod, so a retry
        that comes before the watch event sees the pod as written."""
        q = self.get(uid)
        if q is not None:
            q.pod_info = q.pod_info.with_nomination(node_name)
            self._unschedulable.refresh(q.key)

    def delete(self, uid: str) -> None:
        key = self._member_of.pop(uid, None)
        if key is not None:
            e = self._entities[key]
            e.remove(uid)
            if not e.members:
                self._forget(e)
        self._pending.delete(uid)
        self._incomplete.delete(uid)
        self._remove_everywhere(uid)
        if uid in self._in_flight:
            self._in_flight.gone.add(uid)

    def on_event(
        self,
        event: ClusterEvent,
        old: Any = None,
        new: Any = None,
        skip_uid: str | None = None,
        candidates: Iterable[QueuedPodInfo] | None = None,
    ) -> int:
        """A cluster event: move every pooled pod it may help (but ``skip_uid``); only among
        ``candidates`` when given (a pre-filtered part of the pool). Returns how many moved.

        As upstream, an event no plugin registers for moves nothing (nor is it looked at pod by
        pod), though in-flight pods still hear of it."""
        if self._in_flight:
            self._in_flight.record(event, old, new)
        if not self._hints.of_interest(event):
            return 0
        moved = 0
        pool = self._unschedulable
        screens = self._hints.screens(event, old, new) if self.screening else {}
        if candidates is not None:
            looked = list({c.key: c for c in candidates}.values())
        else:  # a screened event looks only at the pods it may concern (the pool's index of keys)
            looked = pool.screened_candidates(screens) if screens else list(pool.values())
        for q in looked:
            if skip_uid is not None and q.key == skip_uid:
                continue
            if q.gated and q.gating_plugin == SCHEDULING_GATES:
                continue  # only an update of the pod itself ungates it (upstream skips these too)
            if isinstance(q, QueuedPodGroupInfo):
                # A group moves when its gate may now pass, or when any member may now fit.
                helps = any(
                    self._hints.may_help(m.pod, waits_for(q, m), event, old, new, self.on_hint) for m in q.members
                )
            else:
                plugins = waits_for(q, q)  # passed over where every hint it waits on would SKIP
                screened = bool(screens) and self._hints.screened_out(q.pod, plugins, screens)
                helps = not screened and self._hints.may_help(q.pod, plugins, event, old, new, self.on_hint)
            if helps and (not q.gated or q.pod_info.scheduler_name in self.frameworks):
                self._gate(q, str(event))
                moved += q.key not in pool
        return moved

    def assigned_pod_added(self, pod: PodInfo, ns_labels: NamespaceLabels | None = None) -> None:
        """A pod was bound (or found bound): as upstream, only pooled pods it could help across
        nodes are considered — rejected by PodTopologySpread in its namespace, or with a required
        affinity term it matches (``ns_labels``: the labels of a namespace, by name)."""
        self.on_event(ASSIGNED_POD_ADD, None, pod.pod, candidates=self._unschedulable.cross_topology(pod, ns_labels))

    def assigned_pod_updated(
        self, old: Any, new: PodInfo, event: ClusterEvent, ns_labels: NamespaceLabels | None = None
    ) -> None:
        """A bound pod changed: scaling down may free room anywhere, so every pooled pod is
        considered; any other change only those it could help across nodes."""
        if event.bits & ActionType.UPDATE_POD_SCALE_DOWN:
            self.on_event(event, old, new.pod)
        else:
            self.on_event(event, old, new.pod, candidates=self._unschedulable.cross_topology(new, ns_labels))

    def assigned_pod_deleted(self, pod: PodInfo) -> None:
        self.on_event(ASSIGNED_POD_DELETE, pod.pod, None)

    # --- the scheduler side -------------------------------------------------------------------
    def _take(self) -> QueuedPodInfo | None:
        while True:
            qpi = self._activeq.pop()
            if qpi is None:
                if not self.pop_from_backoff:
                    return None
                # Nothing is ready: rather than idle, try podBackoffQ's head now (upstream's
                # SchedulerPopFromBackoffQ). Its PreEnqueue ran as it entered backoffQ.
                qpi = self._backoffq.pop_head()
                if qpi is None:
                    return None
                self._count_incoming(ACTIVE_Q, POP_FROM_BACKOFF_Q, qpi)
            if self._start_attempt(qpi):
                return qpi

    def _start_attempt(self, qpi: QueuedPodInfo) -> bool:
        """``qpi`` leaves the queue for a scheduling cycle: one more attempt, its first one's
        time, and the cluster events seen from now on kept for it (in flight). A group's
        members each so, the group being scheduled till :meth:`add_attempted_pod_group`; a
        member in flight already is left out (False: none was left)."""
        now = self.clock()
        qpi.attempts += 1
        if qpi.initial_attempt_timestamp is None:
            qpi.initial_attempt_timestamp = now
        if isinstance(qpi, QueuedPodGroupInfo):
            return self._start_group_attempt(qpi, now)
        self._in_flight.start(qpi.pod_info.uid)
        return True

    def pooled(self, uid: str) -> QueuedPodInfo | None:
        """The pod when it waits in the unschedulable pool (gated or not); a member, its group."""
        key = self._member_of.get(uid, uid)
        return self._unschedulable.get(key)

    def pop_nowait(self) -> QueuedPodInfo | None:
        return self._take()

    async def pop(self) -> QueuedPodInfo | None:
        """The next pod to schedule; waits while activeQ is empty. ``None`` once closed."""
        if self._nonempty is None:
            self._nonempty = asyncio.Event()
        while not self._closed:
            qpi = self._take()
            if qpi is not None:
                return qpi
            self._nonempty.clear()
            await self._nonempty.wait()
        return None

    def close(self) -> None:
        """Stop: :meth:`pop` returns ``None`` from now on, and the PreEnqueue checks still
        running are cancelled (await :meth:`aclose` to know they have ended)."""
        self._closed = True
        self._wake()
        for task in self._gate_tasks:
            task.cancel()

    async def aclose(self) -> None:
        """Close, and wait until every PreEnqueue check the queue started has ended."""
        self.close()
        await self._gate_tasks.close()

    def done(self, uid: str) -> None:
        """The pod's attempt is over (bound, or requeued): stop recording events for it."""
        self._in_flight.end(uid)

    def add_unschedulable_if_not_present(self, qpi: QueuedPodInfo, rejectors: set[str] | None = None) -> str:
        """A failed attempt: decide where the pod waits. Returns the queue it went to.

        A member of a pod group goes back to its group (:meth:`_member_failed`)."""
        if self._is_member(qpi.pod_info):
            return self._member_failed(qpi, rejectors)
        uid = qpi.pod_info.uid
        start = self._in_flight.started_at(uid)
        if uid in self._in_flight.gone:
            self.done(uid)
            return ""
        if self.get(uid) is not None:
            self.done(uid)
            return self.where(uid) or ""
        qpi.timestamp = self.clock()
        qpi.unschedulable_plugins = set(rejectors or ())
        self._count_failure(qpi)
        latest = self._in_flight.latest.get(uid)
        updated = latest is not None and spec_changed(qpi.pod, latest.pod)
        if latest is not None:
            qpi.pod_info = latest
        target: str
        if (
            not qpi.unschedulable_plugins
            or updated
            or (
                start is not None
                and any(
                    self._hints.may_help(qpi.pod, qpi.unschedulable_plugins, ev, old, new, self.on_hint)
                    for ev, old, new in self._in_flight.events_from(start)
                )
            )
        ):
            # An error (no plugin rejected it), or something that may help happened meanwhile:
            # retry after backoff.
            self._requeue_after_failure(qpi)
            target = self.where(uid) or ""
        else:
            self._push_unschedulable(qpi, "ScheduleAttemptFailure")
            target = UNSCHEDULABLE_Q
        self.done(uid)
        return target

    def requeue_after_error(self, qpi: QueuedPodInfo) -> None:
        """Binding failed or the cluster erred: back off and try again."""
        if self._is_member(qpi.pod_info):
            self._member_failed(qpi, None)
            return
        uid = qpi.pod_info.uid
        if uid not in self._in_flight.gone and self.get(uid) is None:
            latest = self._in_flight.latest.get(uid)
            if latest is not None:
                qpi.pod_info = latest
            qpi.timestamp = self.clock()
            qpi.unschedulable_plugins = set()
            self._count_failure(qpi)
            self._requeue_after_failure(qpi)
        self.done(uid)

    @staticmethod
    def _count_failure(qpi: QueuedPodInfo) -> None:
        """What the backoff counts: a rejection (and the errors in a row end), or one more error."""
        if qpi.unschedulable_plugins or qpi.pending_plugins:
            qpi.unschedulable_count += 1
            qpi.consecutive_errors_count = 0
        else:
            qpi.consecutive_errors_count += 1

    def _requeue_after_failure(self, qpi: QueuedPodInfo) -> None:
        """To backoffQ while the pod backs off (always, unless backoff is off), else activeQ."""
        if self.is_backing_off(qpi):
            self._to_backoff(qpi, "ScheduleAttemptFailure")
        else:
            self._gate(qpi, "ScheduleAttemptFailure", self._push_active)

    def flush_backoff_completed(self) -> int:
        """Move pods whose backoff is over to activeQ: through PreEnqueue, unless it ran as they
        entered backoffQ (SchedulerPopFromBackoffQ). Returns how many reached activeQ."""
        moved = 0
        for qpi in self._backoffq.pop_completed():
            if self.pop_from_backoff:
                self._push_active(qpi, "BackoffComplete")
            else:
                self._gate(qpi, "BackoffComplete", self._push_active)
            moved += qpi.key not in self._unschedulable
        return moved

    def seconds_to_next_window(self) -> float:
        """How long until the next flush of backoffQ should run: to the next whole ordering
        window with SchedulerPopFromBackoffQ (whole windows are flushed at once, as upstream
        aligns its flush), else one second."""
        if not self.pop_from_backoff:
            return 1.0
        now = self.clock()
        return align_to_window(now) + ORDERING_WINDOW - now

    def flush_unschedulable_left_over(self) -> int:
        """Give pods stuck in the pool longer than the limit another try."""
        stale = self._unschedulable.left_over(self.clock(), self.max_unschedulable_duration)
        for q in stale:
            self._gate(q, str(UNSCHEDULABLE_TIMEOUT))
        return len(stale)

    def activate(self, uids: Iterable[str]) -> None:
        """Move the given pods straight to activeQ (a plugin asked for it), through their
        PreEnqueue gates; a member, its whole group. A pod being scheduled right now is moved
        when its attempt fails."""
        seen: set[str] = set()
        for uid in uids:
            key = self._member_of.get(uid, uid)
            if key in seen:
                continue
            seen.add(key)
            q = self._unschedulable.get(key)
            if q is None and self.pop_from_backoff and (q := self._backoffq.get(key)) is not None:
                self._push_active(q, str(FORCE_ACTIVATE))  # its PreEnqueue ran on the way in
            elif q is not None or (q := self._backoffq.get(key)) is not None:
                self._gate(q, str(FORCE_ACTIVATE), self._push_active)
            elif uid in self._in_flight:
                self._in_flight.record(FORCE_ACTIVATE, None, {"metadata": {"uid": uid}})
