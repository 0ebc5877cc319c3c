"""backoffQ as kube-scheduler 1.37's: two heaps (rejected pods, errored pods), the backoff
counted in rejections or errors in a row, and SchedulerPopFromBackoffQ (1 s ordering windows,
pop from backoffQ when activeQ is empty, PreEnqueue on the way in). Tables transcribed from
upstream's backoff_queue_test.go and scheduling_queue_test.go."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from conftest import profile, registry_with

from kubesched.backend.backoff import BackoffQueue
from kubesched.backend.queue import SchedulingQueue
from kubesched.framework.events import FORCE_ACTIVATE
from kubesched.framework.features import FeatureGates
from kubesched.framework.status import Status
from kubesched.framework.types import QueuedPodInfo
from kubesched.runtime.framework import Framework
from kubesched.testing import make_pod

POP_OFF = FeatureGates({"SchedulerPopFromBackoffQ": False})


class Clock:
    def __init__(self, t: float = 1000.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


def qpi(
    name: str, timestamp: float, rejected: int = 0, errors: int = 0, plugins: tuple[str, ...] = (), prio: int = 0
) -> QueuedPodInfo:
    q = QueuedPodInfo(make_pod(name).priority(prio).info(), timestamp)
    q.attempts = max(rejected + errors, 1)
    q.unschedulable_count = rejected
    q.consecutive_errors_count = errors
    q.unschedulable_plugins = set(plugins)
    return q


def by_priority(a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
    """PrioritySort's order: higher priority first, then the earlier timestamp."""
    pa, pb = a.pod_info.priority, b.pod_info.priority
    return pa > pb or (pa == pb and a.timestamp < b.timestamp)


# --- backoff durations (TestBackoffQueue_calculateBackoffDuration) ------------------------------
@pytest.mark.parametrize(
    "initial,maximum,rejected,errors,want",
    [
        (1.0, 32.0, 0, 0, 0.0),
        (1.0, 32.0, 16, 0, 32.0),
        (1e-9, 2**31 * 1e-9, 32, 0, 2**31 * 1e-9),
        (1e-9, (2**63 - 1) * 1e-9, 64, 0, (2**63 - 1) * 1e-9),
        (1.0, 10.0, 1, 0, 1.0),
        (1.0, 10.0, 4, 0, 8.0),
        (1.0, 10.0, 5, 0, 10.0),
        (1.0, 10.0, 5, 1, 1.0),
        (1.0, 10.0, 0, 3, 4.0),
    ],
    ids=[
        "no backoff",
        "normal",
        "overflow_32bit",
        "overflow_64bit",
        "first rejection",
        "fourth rejection",
        "capped",
        "errors in a row count, not rejections",
        "third error in a row",
    ],
)
def test_backoff_duration(initial: float, maximum: float, rejected: int, errors: int, want: float) -> None:
    bq = BackoffQueue(Clock(), initial, maximum, windows=True)
    assert bq.duration(qpi("p", 0.0, rejected, errors)) == want


def test_max_backoff_of_zero_turns_backoff_off() -> None:
    bq = BackoffQueue(Clock(), 1.0, 0.0, windows=True)
    assert not bq.is_backing_off(qpi("p", 1000.0, rejected=3, plugins=("P",)))


# --- popping completed pods (TestBackoffQueue_popEachBackoffCompleted) ---------------------------
#: name: (timestamp offset, rejecting plugins); pod2 and pod3 failed with an error.
PODS: dict[str, tuple[float, tuple[str, ...]]] = {
    "pod0": (-2.0, ("plugin",)),
    "pod1": (1.0, ("plugin",)),
    "pod2": (-2.0, ()),
    "pod3": (1.0, ()),
}


@pytest.mark.parametrize("windows", [True, False], ids=["popFromBackoffQ", "no popFromBackoffQ"])
@pytest.mark.parametrize(
    "in_backoff,want",
    [
        ([], []),
        (["pod0", "pod1"], ["pod0"]),
        (["pod2", "pod3"], ["pod2"]),
        (["pod0", "pod1", "pod2", "pod3"], ["pod0", "pod2"]),
        (["pod0", "pod2"], ["pod0", "pod2"]),
        (["pod1", "pod3"], []),
    ],
    ids=[
        "both queues empty",
        "only in backoffQ, some moved",
        "only in errorBackoffQ, some moved",
        "in both queues, some moved",
        "in both queues, all moved",
        "in both queues, none moved",
    ],
)
def test_pop_completed(windows: bool, in_backoff: list[str], want: list[str]) -> None:
    clock = Clock(1000.4)
    bq = BackoffQueue(clock, 1.0, 10.0, windows)
    for name in in_backoff:
        offset, plugins = PODS[name]
        rejected = bool(plugins)
        bq.add(qpi(name, clock.t + offset, rejected=int(rejected), errors=int(not rejected), plugins=plugins))
    got = [q.pod_info.name for q in bq.pop_completed()]
    assert got == want
    assert len(bq) == len(in_backoff) - len(want)


def test_rejected_and_errored_pods_wait_apart() -> None:
    bq = BackoffQueue(Clock(), 1.0, 10.0, windows=True)
    bq.add(qpi("rejected", 1000.0, rejected=1, plugins=("P",)))
    bq.add(qpi("errored", 1000.0, errors=1))
    assert (bq.len_backoff(), bq.len_error()) == (1, 1)
    head = bq.pop_head()
    assert head is not None and head.pod_info.name == "rejected"
    assert bq.pop_head() is None  # podErrorBackoffQ is never popped early
    assert bq.len_error() == 1


# --- ordering (TestBackoffQueueOrdering) ---------------------------------------------------------
ORDERING = [
    ("pod0", 1, 0.0),
    ("pod1", 1, -1.0),
    ("pod2", 2, -2.0 + 0.001),
    ("pod3", 1, -2.0),
    ("pod4", 2, -2.0),
    ("pod5", 1, -3.0),
]


def test_pods_of_one_window_are_ordered_by_priority_with_pop_from_backoff() -> None:
    clock = Clock(1000.0)  # aligned with the ordering window
    bq = BackoffQueue(clock, 1.0, 10.0, windows=True, order=lambda q: (by_priority, 0))
    for name, prio, offset in ORDERING:
        bq.add(qpi(name, clock.t + offset, rejected=1, plugins=("plugin",), prio=prio))
    assert [q.pod_info.name for q in bq.pop_completed()] == ["pod5", "pod4", "pod2", "pod3"]


def test_priority_does_not_matter_without_pop_from_backoff() -> None:
    clock = Clock(1000.0)
    bq = BackoffQueue(clock, 1.0, 10.0, windows=False, order=lambda q: (by_priority, 0))
    for name, prio, offset in ORDERING:
        bq.add(qpi(name, clock.t + offset, rejected=1, plugins=("plugin",), prio=prio))
    got = [q.pod_info.name for q in bq.pop_completed()]
    # pod3 and pod4 expire at the same moment (upstream's heap leaves their order open).
    assert got[0] == "pod5" and set(got[1:3]) == {"pod3", "pod4"} and got[3] == "pod2"


# --- the scheduling queue -------------------------------------------------------------------------
class Rejects:
    """Rejects every pod; a NodeAdd may help."""

    name = "Rejects"

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    def filter(self, state: Any, pod: Any, node: Any) -> Status:
        return Status.unschedulable("no")


def make_queue(clock: Clock, gates: FeatureGates | None = None) -> SchedulingQueue:
    fw = Framework(profile(filter=["Rejects"], preEnqueue=["SchedulingGates"]), registry_with(Rejects))
    return SchedulingQueue({"default-scheduler": fw}, clock=clock, feature_gates=gates)


def fail_with_event_in_flight(q: SchedulingQueue, name: str, prio: int = 0) -> QueuedPodInfo:
    """Pop a pod and reject it while a wildcard event arrives: it goes to podBackoffQ."""
    q.add(make_pod(name).priority(prio).info())
    popped = q.pop_nowait()
    assert popped is not None and popped.pod_info.name == name
    q.on_event(FORCE_ACTIVATE, None, {"metadata": {"uid": popped.pod_info.uid}})
    assert q.add_unschedulable_if_not_present(popped, {"Rejects"}) == "backoff"
    return popped


def test_pop_takes_the_backoff_head_when_active_is_empty() -> None:
    clock = Clock()
    q = make_queue(clock)
    incoming: list[tuple[str, str]] = []
    q.on_incoming = lambda queue, event, pods, _type: incoming.extend([(queue, event)] * pods)
    low = fail_with_event_in_flight(q, "low", prio=1)
    high = fail_with_event_in_flight(q, "high", prio=10)
    assert q.is_backing_off(low) and q.is_backing_off(high)
    # Same window: activeQ's order, the higher priority first; each pop counts an attempt.
    assert q.pop_nowait() is high and high.attempts == 2
    assert q.pop_nowait() is low and low.attempts == 2
    assert q.pop_nowait() is None
    assert incoming.count(("active", "PopFromBackoffQ")) == 2


def test_active_pods_go_before_backoff_pods() -> None:
    clock = Clock()
    q = make_queue(clock)
    fail_with_event_in_flight(q, "backing-off", prio=100)
    q.add(make_pod("fresh").info())
    first = q.pop_nowait()
    assert first is not None and first.pod_info.name == "fresh"


def test_without_the_gate_pop_waits_for_backoff_to_complete() -> None:
    clock = Clock()
    q = make_queue(clock, POP_OFF)
    fail_with_event_in_flight(q, "p")
    assert q.pop_nowait() is None
    clock.t += 1.0
    assert q.flush_backoff_completed() == 1
    assert q.pop_nowait() is not None


def test_rejections_and_errors_count_the_backoff() -> None:
    clock = Clock()
    q = make_queue(clock, POP_OFF)
    q.add(make_pod("p").info())
    p = q.pop_nowait()
    assert p is not None
    q.requeue_after_error(p)
    assert (p.unschedulable_count, p.consecutive_errors_count) == (0, 1)
    clock.t += 2
    q.flush_backoff_completed()
    p = q.pop_nowait()
    assert p is not None
    q.requeue_after_error(p)
    assert (p.unschedulable_count, p.consecutive_errors_count) == (0, 2)
    assert q.backoff_duration(p) == 2.0
    clock.t += 3
    q.flush_backoff_completed()
    p = q.pop_nowait()
    assert p is not None
    q.add_unschedulable_if_not_present(p, {"Rejects"})
    assert (p.unschedulable_count, p.consecutive_errors_count) == (1, 0)
    assert q.backoff_duration(p) == 1.0  # the error streak ended: one rejection
    assert p.attempts == 3


@pytest.mark.parametrize("pop_from_backoff", [True, False], ids=["popFromBackoffQ", "no popFromBackoffQ"])
def test_pre_enqueue_runs_as_a_pod_enters_backoff_only_with_the_gate(pop_from_backoff: bool) -> None:
    clock = Clock()
    q = make_queue(clock, None if pop_from_backoff else POP_OFF)
    q.add(make_pod("p").info())
    p = q.pop_nowait()
    assert p is not None
    # The pod got a scheduling gate while it was being scheduled.
    p.pod_info = make_pod("p").uid(p.pod_info.uid).scheduling_gate("wait").info()
    q.requeue_after_error(p)
    if pop_from_backoff:
        assert q.where(p.pod_info.uid) == "gated"
        assert p.gating_plugin == "SchedulingGates"
    else:
        assert q.where(p.pod_info.uid) == "backoff"
        clock.t += 2
        assert q.flush_backoff_completed() == 0  # gated on the way out instead
        assert q.where(p.pod_info.uid) == "gated"


async def test_an_idle_pop_wakes_when_a_pod_enters_backoff() -> None:
    clock = Clock()
    q = make_queue(clock)
    q.add(make_pod("p").info())
    p = q.pop_nowait()
    assert p is not None
    waiter = asyncio.ensure_future(q.pop())
    await asyncio.sleep(0)
    assert not waiter.done()
    q.requeue_after_error(p)  # an error: podErrorBackoffQ, not popped early
    await asyncio.sleep(0)
    assert not waiter.done()
    q.add(make_pod("r").info())
    r = q.pop_nowait()
    assert r is not None
    q.on_event(FORCE_ACTIVATE, None, None)
    q.add_unschedulable_if_not_present(r, {"Rejects"})
    assert await asyncio.wait_for(waiter, 1.0) is r
    q.close()


# --- updates that may change a decision (isPodUpdated) ---------------------------------------------
@pytest.mark.parametrize(
    "path, value, moves",
    [
        ("status.extendedResourceClaimStatus", {"resourceClaimName": "p-extended-resources-x"}, True),
        ("status.resourceClaimStatuses", [{"name": "gpu", "resourceClaimName": "p-gpu-x"}], True),
        ("status.conditions", [{"type": "PodScheduled", "status": "False"}], False),
        ("metadata.annotations", {"kubesched.io/filter-result": "{}"}, False),
        ("metadata.labels", {"app": "web"}, True),
    ],
    ids=["extended resource claim", "template claims", "a condition", "our result annotations", "labels"],
)
def test_an_update_moves_a_pooled_pod_only_if_it_may_change_the_decision(path: str, value: Any, moves: bool) -> None:
    clock = Clock()
    q = make_queue(clock)
    q.add(make_pod("p").info())
    p = q.pop_nowait()
    assert p is not None
    assert q.add_unschedulable_if_not_present(p, {"Rejects"}) == "unschedulable"
    updated = make_pod("p").uid(p.pod_info.uid).set(path, value).info()
    q.update(updated)
    assert (q.where(p.pod_info.uid) != "unschedulable") is moves
