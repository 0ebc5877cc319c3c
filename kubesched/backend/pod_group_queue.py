"""The scheduling queue's pod groups (workload-aware scheduling, ``GenericWorkload``), as
upstream's PriorityQueue keeps them: each group one entity (:class:`QueuedPodGroupInfo`) in
activeQ, backoffQ or the pool, holding its pending members; members whose PodGroup is unseen
apart (*incomplete*), and members that come, or come back, while their group is being scheduled
apart too (*pending*), until the group's attempt is reported (:meth:`add_attempted_pod_group`).

A popped group is scheduled whole. After its cycle it goes back with the members that failed
and those that came meanwhile: straight to activeQ after a success (at its old place in line
when members were left over), else with its own backoff. No in-flight event is weighed for a
group (upstream's TODO: pod groups have no queueing hints yet): a failed group always backs off.

:class:`PodGroupQueueing` is the part of :class:`~kubesched.backend.queue.SchedulingQueue` that
does this; the queue's own moves (PreEnqueue, activeQ, backoffQ, the pool) it uses as the queue
defines them.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING

from kubesched.backend.in_flight import InFlight
from kubesched.backend.pod_group_members import MemberSets, pod_group_key
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
from kubesched.framework.status import Status
from kubesched.framework.types import PodInfo, QueuedPodGroupInfo, QueuedPodInfo


class PodGroupQueueing:
    """The queue's pod-group part (mixed into the SchedulingQueue)."""

    if TYPE_CHECKING:
        # What the queue it is part of provides.
        clock: Callable[[], float]
        pop_from_backoff: bool
        _in_flight: InFlight

        def _gate(
            self,
            qpi: QueuedPodInfo,
            event: str,
            place: Callable[[QueuedPodInfo, str], None] | None = None,
            only: list[QueuedPodInfo] | None = None,
        ) -> None: ...
        def _push_active(self, qpi: QueuedPodInfo, event: str) -> None: ...
        def _push_backoff(self, qpi: QueuedPodInfo, event: str) -> None: ...
        def _to_backoff(self, qpi: QueuedPodInfo, event: str) -> None: ...
        def _remove_everywhere(self, uid: str) -> QueuedPodInfo | None: ...
        def _where_key(self, key: str) -> str | None: ...
        def _entity_totals(self) -> dict[str, int]: ...
        @staticmethod
        def _count_failure(qpi: QueuedPodInfo) -> None: ...
        def where(self, uid: str) -> str | None: ...
        def get(self, uid: str) -> QueuedPodInfo | None: ...
        def done(self, uid: str) -> None: ...
        def is_backing_off(self, qpi: QueuedPodInfo) -> bool: ...

    def _init_pod_groups(self) -> None:
        #: Workload-aware scheduling (GenericWorkload): the entity key of a pod group member's
        #: group (its root with CompositePodGroup), None while the PodGroup is unseen. Set, the
        #: queue holds each group as one entity (:class:`QueuedPodGroupInfo`), as upstream's.
        self.group_entity: Callable[[PodInfo], str | None] | None = None
        #: The groups in activeQ, backoffQ or the pool, by key, and each member's group key.
        self._entities: dict[str, QueuedPodGroupInfo] = {}
        self._member_of: dict[str, str] = {}
        #: Members whose PodGroup is unseen, by its key; members that came while their group
        #: was being scheduled, by the group's key.
        self._incomplete = MemberSets()
        self._pending = MemberSets()
        #: The group being scheduled (popped, its attempt not reported yet).
        self._popped: QueuedPodGroupInfo | None = None

    def _start_group_attempt(self, group: QueuedPodGroupInfo, now: float) -> bool:
        """The popped group's members each start an attempt (in flight); a member in flight
        already is left out (False: none was left). The group is being scheduled till
        :meth:`add_attempted_pod_group`."""
        self._forget(group)
        group.set_members([m for m in group.members if m.pod_info.uid not in self._in_flight])
        if not group.members:
            return False
        for m in group.members:
            self._start_member(m, now)
        self._popped = group
        return True

    def _start_member(self, m: QueuedPodInfo, now: float) -> None:
        """A member leaves the queue for a group's cycle: one attempt more, in flight."""
        m.attempts += 1
        if m.initial_attempt_timestamp is None:
            m.initial_attempt_timestamp = now
        self._in_flight.start(m.pod_info.uid)

    def entity_counts(self) -> dict[tuple[str, str], int]:
        """Entities by (queue, type) (``scheduler_queued_entities``): ``pod`` for a pod outside
        any group, ``podgroup`` for a group, however many members it holds."""
        total = self._entity_totals()
        groups = dict.fromkeys(total, 0)
        for queue, _ in self._queued_groups():
            groups[queue] += 1
        out: dict[tuple[str, str], int] = {}
        for queue, n in total.items():
            out[queue, POD_ENTITY] = n - groups[queue]
            out[queue, POD_GROUP_ENTITY] = groups[queue]
        return out

    def _queued_groups(self) -> Iterator[tuple[str, QueuedPodGroupInfo]]:
        """Each group in activeQ, backoffQ or the pool, with the queue it waits in."""
        for e in self._entities.values():
            queue = self._where_key(e.key)
            if queue is not None:
                yield queue, e

    def group(self, uid: str) -> QueuedPodGroupInfo | None:
        """The queued group the pod is a member of."""
        key = self._member_of.get(uid)
        return None if key is None else self._entities[key]

    def pooled_groups(self, keys: Iterable[str], besides: str) -> list[QueuedPodInfo]:
        """The groups of these entity keys waiting in the unschedulable pool (gated or not), each once, that
        hold a member other than pod ``besides``: what a member's arrival is news to, found
        without walking the members."""
        out: dict[str, QueuedPodInfo] = {}
        for key in keys:
            e = self._entities.get(key)
            if (
                e is not None
                and key not in out
                and self._where_key(key) in (UNSCHEDULABLE_Q, GATED_Q)
                and any(m.pod_info.uid != besides for m in itertools.islice(e.members, 2))
            ):
                out[key] = e
        return list(out.values())

    def _register(self, qpi: QueuedPodInfo) -> None:
        """A group entering a queue: it and its members are found by key and by member."""
        if isinstance(qpi, QueuedPodGroupInfo) and self._entities.get(qpi.key) is not qpi:
            self._entities[qpi.key] = qpi
            for m in qpi.members:
                self._member_of[m.pod_info.uid] = qpi.key

    def _forget(self, e: QueuedPodGroupInfo) -> None:
        """A group leaving the queues (popped, emptied, its PodGroup gone)."""
        self._remove_everywhere(e.key)
        if self._entities.get(e.key) is e:
            del self._entities[e.key]
        for m in e.members:
            if self._member_of.get(m.pod_info.uid) == e.key:
                del self._member_of[m.pod_info.uid]

    def _is_member(self, pod: PodInfo) -> bool:
        return self.group_entity is not None and bool(pod.pod_group)

    def _add_member(self, qpi: QueuedPodInfo, event: str) -> str:
        """A member of a pod group comes to the queue: it waits apart while its PodGroup is
        unseen (incomplete) or its group is being scheduled (pending); else it joins its group
        where the group waits (PreEnqueue asked of it alone: the others passed before; in the
        pool it just joins, and the event of its coming re-asks the group's gate), or starts
        the group, in activeQ through PreEnqueue. Returns the queue it went to."""
        assert self.group_entity is not None
        pi = qpi.pod_info
        key = self.group_entity(pi)
        if key is None:
            self._incomplete.add(pod_group_key(pi.namespace, pi.pod_group), qpi)
            return INCOMPLETE_Q
        e = self._entities.get(key)
        if e is not None:
            where = self._where_key(e.key)
            e.add(qpi)
            self._member_of[pi.uid] = key
            if where == ACTIVE_Q:
                self._gate(e, event, self._push_active, only=[qpi])
            elif where == BACKOFF_Q:
                if self.pop_from_backoff:
                    self._gate(e, event, self._push_backoff, only=[qpi])
                else:
                    self._push_backoff(e, event)
            elif e.gated:
                qpi.gated, qpi.gating_plugin, qpi.last_failure = True, e.gating_plugin, e.last_failure
            return self.where(pi.uid) or ""
        if self._popped is not None and self._popped.key == key:
            self._pending.add(key, qpi)
            return PENDING_Q
        e = QueuedPodGroupInfo(key, [qpi], qpi.timestamp)
        e.initial_attempt_timestamp = qpi.initial_attempt_timestamp
        self._gate(e, event)
        return self.where(pi.uid) or ""

    def pod_group_added(self, namespace: str, name: str) -> None:
        """A PodGroup was seen: its members waiting for it come to the queue as one group."""
        for q in self._incomplete.clear(pod_group_key(namespace, name)):
            self._add_member(q, "PodGroupAdd")

    def pod_group_deleted(self, namespace: str, name: str) -> None:
        """A PodGroup went: its queued or pending members wait, incomplete, for it to come back."""
        key = pod_group_key(namespace, name)

        def gone(q: QueuedPodInfo) -> bool:
            return q.pod_info.namespace == namespace and q.pod_info.pod_group == name

        for e in list(self._entities.values()):
            for m in [m for m in e.members if gone(m)]:
                e.remove(m.pod_info.uid)
                self._member_of.pop(m.pod_info.uid, None)
                self._incomplete.add(key, m)
            if not e.members:
                self._forget(e)
        if self._popped is not None:
            popped = self._popped.key
            for m in self._pending.clear(popped):
                if gone(m):
                    self._incomplete.add(key, m)
                else:
                    self._pending.add(popped, m)

    def take_members(self, uids: Iterable[str]) -> list[QueuedPodInfo]:
        """Take the given pods out of the queue for a pod group's cycle beside the group
        popped (the other groups of a hierarchy): members of groups in activeQ, backoffQ, or
        in the pool but not gated (a PreEnqueue gate still holds a gated one). Each is then in
        flight, as a popped pod is: the hierarchy is the unit."""
        taken: list[QueuedPodInfo] = []
        for uid in uids:
            if uid in self._in_flight:
                continue
            e = self.group(uid)
            if e is None or e.gated:
                continue
            q = e.remove(uid)
            assert q is not None
            del self._member_of[uid]
            if not e.members:
                self._forget(e)
            self._start_member(q, self.clock())
            taken.append(q)
        return taken

    def _member_failed(self, qpi: QueuedPodInfo, rejectors: set[str] | None) -> str:
        """A member's attempt failed (in its group's cycle, or binding after it): counted on
        the member, which rejoins its group — pending while the group is being scheduled, to
        be requeued with it by :meth:`add_attempted_pod_group`. No in-flight event is looked
        at: the group's own outcome decides where it waits."""
        uid = qpi.pod_info.uid
        if uid in self._in_flight.gone or self.get(uid) is not None:
            self.done(uid)
            return "" if uid in self._in_flight.gone else self.where(uid) or ""
        latest = self._in_flight.latest.get(uid)
        if latest is not None:
            qpi.pod_info = latest
        qpi.timestamp = self.clock()
        qpi.unschedulable_plugins = set(rejectors or ())
        self._count_failure(qpi)
        self.done(uid)
        return self._add_member(qpi, "ScheduleAttemptFailure")

    def add_attempted_pod_group(self, group: QueuedPodGroupInfo, status: Status | None) -> str:
        """The group's cycle is over (``status`` None or Success: placed, at least in part):
        the members that failed and those that came meanwhile (pending) are the group now,
        requeued as upstream's AddAttemptedPodGroupIfNeeded — straight to activeQ after a
        success (at its old place in line when members were left over), else with the
        group's own backoff, to backoffQ or activeQ (kubesched's own: also after a success
        that placed none of the members tried). Returns the queue (``""``: nothing left)."""
        if self._popped is group:
            self._popped = None
        pending = self._pending.clear(group.key)
        if not pending:
            return ""
        tried = {m.pod_info.uid for m in group.members}
        back = {m.pod_info.uid for m in pending}
        left_over = not tried.isdisjoint(back)
        group.set_members(pending)
        assert self.group_entity is not None
        if self.group_entity(group.pod_info) != group.key:
            for m in pending:  # its PodGroup went meanwhile (or its hierarchy changed)
                self._add_member(m, "ScheduleAttemptFailure")
            return self.where(group.pod_info.uid) or ""
        # A success that placed none of the members tried (the group's minimum met by members
        # placed before) is no progress: the group backs off as after a rejection, rather than
        # coming straight back to fail the same way.
        placed = status is None or status.is_success()
        success = placed and not tried <= back
        if success:
            group.unschedulable_count = group.consecutive_errors_count = 0
        elif placed or (status is not None and status.is_rejected()):
            group.unschedulable_count += 1
            group.consecutive_errors_count = 0
        else:
            group.consecutive_errors_count += 1
        if not (success and left_over):
            group.timestamp = self.clock()
        group.unschedulable_plugins = set().union(*(m.unschedulable_plugins for m in pending))
        if not success and self.is_backing_off(group):
            group.held_back = True
            self._to_backoff(group, "ScheduleAttemptFailure")
        else:
            self._gate(group, "ScheduleAttemptFailure", self._push_active)
        return self._where_key(group.key) or ""
