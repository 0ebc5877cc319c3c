"""The queue's pod groups (GenericWorkload), case for case after upstream's queue tests for
them (pkg/scheduler/backend/queue/scheduling_queue_test.go: TestAddPodGroupMember,
TestDeletePodGroupMember, TestActivatePodGroupMember, TestFlushBackoffQCompletedPodGroupMember,
TestAddUnschedulablePodIfNotPresentPodGroupMember, TestAddPodGroup, TestDeletePodGroup,
TestPriorityQueue_Add with pod groups; metrics_test.go's TestQueuedEntitiesRecorder): where a
member goes — its group's entity in activeQ, backoffQ or the pool, *pending* while its group is
being scheduled, *incomplete* while its PodGroup is unseen — and how the group is counted.

The PreEnqueue plugin lets pods labelled ``allow`` in and gates the others, as upstream's
tests' does. Upstream's "unschedulable, not gated" starting state has no counterpart: here a
group reaches the pool only gated (a failed group always backs off, as upstream's does).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from conftest import profile, registry_with

from kubesched.backend.queue import SchedulingQueue
from kubesched.framework.events import NODE_ADD, ClusterEventWithHint, QueueingHint
from kubesched.framework.status import Status
from kubesched.framework.types import PodInfo, QueuedPodGroupInfo
from kubesched.runtime.framework import Framework
from kubesched.testing import make_pod

GROUP = "podgroup/ns1/pg-test"


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


class AllowLabelled:
    """PreEnqueue: pods labelled ``allow`` pass, the others are gated until a node is added."""

    name = "AllowLabelled"

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    def pre_enqueue(self, pod: PodInfo) -> Status | None:
        if (pod.pod.get("metadata", {}).get("labels") or {}).get("allow"):
            return None
        return Status.unschedulable("not allowed")

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(NODE_ADD, lambda pod, old, new: QueueingHint.QUEUE)]


class Env:
    """A queue that knows the PodGroups in ``groups`` (by name, namespace ns1)."""

    def __init__(self) -> None:
        self.clock = Clock()
        reg = registry_with(AllowLabelled)
        fw = Framework(profile(preEnqueue=["AllowLabelled"]), reg)
        self.q = SchedulingQueue({"default-scheduler": fw}, clock=self.clock)
        self.groups = {"pg-test"}
        self.q.group_entity = lambda pi: f"podgroup/ns1/{pi.pod_group}" if pi.pod_group in self.groups else None
        self.pods: dict[str, PodInfo] = {}

    def pod(self, name: str, allow: bool = True, priority: int = 0, group: str = "pg-test") -> PodInfo:
        b = make_pod(name).namespace("ns1").priority(priority)
        if allow:
            b = b.label("allow", "true")
        obj = b.obj()
        obj["spec"]["schedulingGroup"] = {"podGroupName": group}
        self.pods[name] = pi = PodInfo(obj)
        return pi

    def add(self, name: str, allow: bool = True) -> None:
        self.q.add(self.pod(name, allow))

    def where(self, name: str) -> str | None:
        return self.q.where(self.pods[name].uid)

    def group(self) -> QueuedPodGroupInfo | None:
        return self.q.group(next(iter(self.pods.values())).uid) if self.pods else None

    def popped(self) -> QueuedPodGroupInfo:
        e = self.q.pop_nowait()
        assert isinstance(e, QueuedPodGroupInfo)
        return e


def active(env: Env) -> None:
    env.add("p1")


def gated(env: Env) -> None:
    env.add("p1", allow=False)


def popped(env: Env) -> None:
    env.add("p1")
    env.popped()


def backoff(env: Env) -> None:
    env.add("p1")
    e = env.popped()
    env.q.add_unschedulable_if_not_present(e.members[0], {"AllowLabelled"})
    env.q.add_attempted_pod_group(e, Status.unschedulable("no"))


def incomplete(env: Env) -> None:
    env.groups.clear()
    env.add("p1")


def nothing(env: Env) -> None:
    pass


@pytest.mark.parametrize(
    "setup,allow,where,size,is_gated",
    [
        (nothing, True, "active", 1, False),
        (nothing, False, "gated", 1, True),
        (popped, True, "pending", None, False),
        (popped, False, "pending", None, False),
        (active, True, "active", 2, False),
        (active, False, "gated", 2, True),
        (backoff, True, "backoff", 2, False),
        (backoff, False, "gated", 2, True),
        (gated, True, "gated", 2, True),
        (incomplete, True, "incomplete", None, False),
    ],
    ids=[
        "first member creates the group in activeQ",
        "first member gated: the group is gated",
        "group being scheduled: pending",
        "group being scheduled, gated member: pending",
        "group in activeQ: joins it",
        "group in activeQ, gated member: the group is gated",
        "group in backoffQ: joins it",
        "group in backoffQ, gated member: the group is gated",
        "gated group: joins it, still gated",
        "PodGroup unseen: incomplete",
    ],
)
def test_add_pod_group_member(
    setup: Callable[[Env], None], allow: bool, where: str, size: int | None, is_gated: bool
) -> None:
    """TestAddPodGroupMember."""
    env = Env()
    setup(env)
    env.add("p2", allow)
    assert env.where("p2") == where
    if size is not None:
        group = env.q.group(env.pods["p2"].uid)
        assert group is not None and group.size == size and group.gated is is_gated
        assert group.key == GROUP


def test_members_of_an_unseen_pod_group_wait_together_and_come_as_one_when_it_is_seen() -> None:
    """TestAddPodGroup: incomplete {p1, p2} → one group of two in activeQ, nothing incomplete."""
    env = Env()
    incomplete(env)
    env.add("p2")
    assert env.q.counts()["incomplete"] == 2 and env.q.pop_nowait() is None
    env.groups.add("pg-test")
    env.q.pod_group_added("ns1", "pg-test")
    assert env.q.counts()["incomplete"] == 0
    e = env.popped()
    assert sorted(m.pod_info.name for m in e.members) == ["p1", "p2"]


def test_an_incomplete_group_with_a_gated_member_comes_gated() -> None:
    """TestAddPodGroup: {gatedP1, p2} → the group is gated, of two."""
    env = Env()
    env.groups.clear()
    env.add("p1", allow=False)
    env.add("p2")
    env.groups.add("pg-test")
    env.q.pod_group_added("ns1", "pg-test")
    group = env.group()
    assert group is not None and group.gated and group.size == 2 and env.where("p1") == "gated"


@pytest.mark.parametrize("setup", [active, gated, backoff], ids=["active", "gated", "backoff"])
def test_deleting_the_pod_group_sends_its_members_back_to_incomplete(setup: Callable[[Env], None]) -> None:
    """TestDeletePodGroup: the group leaves every queue, its members wait incomplete."""
    env = Env()
    setup(env)
    env.add("p2")
    env.groups.clear()
    env.q.pod_group_deleted("ns1", "pg-test")
    assert (env.where("p1"), env.where("p2")) == ("incomplete", "incomplete")
    assert env.q.entity_counts() == {
        (q, t): 0 for q in ("active", "backoff", "unschedulable", "gated") for t in ("pod", "podgroup")
    }


def test_deleting_the_pod_group_of_a_group_being_scheduled_sends_the_pending_ones_to_incomplete() -> None:
    """TestDeletePodGroup: popped, pending {p2} → incomplete; the attempt then requeues nothing."""
    env = Env()
    env.add("p1")
    e = env.popped()
    env.add("p2")
    env.groups.clear()
    env.q.pod_group_deleted("ns1", "pg-test")
    assert env.where("p2") == "incomplete"
    env.q.done(e.members[0].pod_info.uid)
    assert env.q.add_attempted_pod_group(e, None) == ""


def test_delete_pod_group_member() -> None:
    """TestDeletePodGroupMember: from pending, from a group of two (stays, of one), the only
    member (the group goes), from incomplete."""
    env = Env()
    env.add("p1")
    e = env.popped()
    env.add("p2")
    env.add("p3")
    env.q.delete(env.pods["p2"].uid)
    assert env.q.counts()["pending"] == 1
    env.q.done(e.members[0].pod_info.uid)
    env.q.add_attempted_pod_group(e, None)
    assert env.where("p3") == "active"
    env.add("p4")
    env.q.delete(env.pods["p3"].uid)
    group = env.q.group(env.pods["p4"].uid)
    assert group is not None and group.size == 1 and env.where("p4") == "active"
    env.q.delete(env.pods["p4"].uid)
    assert env.q.pop_nowait() is None and env.q.footprint()["groups"] == 0
    env.groups.clear()
    env.add("p5")
    env.q.delete(env.pods["p5"].uid)
    assert env.q.counts()["incomplete"] == 0


def test_activate_pod_group_member() -> None:
    """TestActivatePodGroupMember: a gated group stays gated; one in backoffQ goes to activeQ."""
    env = Env()
    gated(env)
    env.q.activate([env.pods["p1"].uid])
    assert env.where("p1") == "gated"
    env2 = Env()
    backoff(env2)
    env2.q.activate([env2.pods["p1"].uid])
    assert env2.where("p1") == "active"


def test_a_popped_group_is_whole_and_in_flight() -> None:
    """Pop returns the group with every member, each one attempt more and in flight."""
    env = Env()
    for name in ("p1", "p2", "p3"):
        env.add(name)
    e = env.popped()
    assert e.size == 3 and e.attempts == 1 and all(m.attempts == 1 for m in e.members)
    assert env.q.in_flight_counts()[0] == 3


def test_pod_groups_pop_by_priority() -> None:
    """TestPriorityQueue_Add with pod groups: three groups of one member pop high, mid, low."""
    env = Env()
    env.groups = {"low", "mid", "high"}
    for name, prio in [("low", 1), ("high", 100), ("mid", 50)]:
        env.q.add(env.pod(name, priority=prio, group=name))
    assert [env.popped().key for _ in range(3)] == ["podgroup/ns1/high", "podgroup/ns1/mid", "podgroup/ns1/low"]


def test_a_failed_group_backs_off_on_its_own_counters_then_comes_back() -> None:
    """TestFlushBackoffQCompletedPodGroupMember, and the group's backoff: its rejections
    double it, capped at the maximum times the square root of its size."""
    env = Env()
    for name in ("p1", "p2", "p3", "p4"):
        env.add(name)
    for n in range(1, 7):
        e = env.popped()
        for m in list(e.members):
            env.q.add_unschedulable_if_not_present(m, {"AllowLabelled"})
        assert env.q.add_attempted_pod_group(e, Status.unschedulable("no")) == "backoff"
        assert e.unschedulable_count == n
        assert env.q.backoff_duration(e) == min(2 ** (n - 1), 20.0)  # 10 s × √4
        env.q.flush_backoff_completed()
        assert env.where("p1") == "backoff"
        env.clock.t += 21
        env.q.flush_backoff_completed()
        assert env.where("p1") == "active"


def test_a_group_placed_in_part_goes_straight_back_at_its_old_place() -> None:
    """AddAttemptedPodGroupIfNeeded after a success with members left over: activeQ at once,
    its timestamp kept; members that came meanwhile join it."""
    env = Env()
    env.add("p1")
    env.add("p2")
    e = env.popped()
    stamp = e.timestamp
    env.clock.t += 5
    env.q.done(e.members[0].pod_info.uid)  # bound
    env.q.add_unschedulable_if_not_present(e.members[1], {"AllowLabelled"})  # left over
    env.add("p3")  # came meanwhile
    assert env.q.counts()["pending"] == 2
    assert env.q.add_attempted_pod_group(e, None) == "active"
    assert e.timestamp == stamp and e.size == 2 and env.q.counts()["pending"] == 0


def test_a_group_that_came_back_only_with_newcomers_is_requeued_now() -> None:
    env = Env()
    env.add("p1")
    e = env.popped()
    env.q.done(e.members[0].pod_info.uid)
    env.clock.t += 5
    env.add("p2")
    assert env.q.add_attempted_pod_group(e, None) == "active"
    assert e.timestamp == env.clock.t and [m.pod_info.name for m in e.members] == ["p2"]


def test_a_group_gated_in_the_pool_moves_on_its_gates_event() -> None:
    """TestMoveAllToActiveOrBackoffQueuePodGroupMember: a gated group leaves the pool when its
    gate passes on an event it registered for."""
    env = Env()
    gated(env)
    env.add("p2")
    obj = env.pods["p1"].pod
    obj["metadata"]["labels"] = {"allow": "true"}
    env.q.on_event(NODE_ADD, None, {"metadata": {"name": "n"}})
    assert (env.where("p1"), env.where("p2")) == ("active", "active")


def test_queued_entities_count_a_group_once_and_its_pods_each() -> None:
    """TestQueuedEntitiesRecorder: a pod, a group of five, a pod → active 7 pods, 2 pod entities
    and 1 podgroup; the group grown to 8 → 10 pods."""
    env = Env()
    env.q.add(PodInfo(make_pod("solo1").label("allow", "true").obj()))
    for i in range(5):
        env.add(f"m{i}")
    env.q.add(PodInfo(make_pod("solo2").label("allow", "true").obj()))
    assert env.q.counts()["active"] == 7
    entities = env.q.entity_counts()
    assert (entities["active", "pod"], entities["active", "podgroup"]) == (2, 1)
    for i in range(5, 8):
        env.add(f"m{i}")
    assert env.q.counts()["active"] == 10 and env.q.entity_counts()["active", "podgroup"] == 1
    pending = [q.pod_info.name for _, q in env.q.pending_pods()]
    assert len(pending) == 10 and len(set(pending)) == 10
