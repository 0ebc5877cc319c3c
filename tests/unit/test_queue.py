"""SchedulingQueue: ordering, backoff, the unschedulable pool, events and gates."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import profile, registry_with

from kubesched.backend.queue import SchedulingQueue
from kubesched.framework.events import (
    ASSIGNED_POD_ADD,
    ASSIGNED_POD_DELETE,
    NODE_ADD,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
)
from kubesched.framework.features import FeatureGates
from kubesched.framework.status import Status
from kubesched.runtime.framework import Framework
from kubesched.testing import make_pod


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


class NodeAddOnly:
    """Rejects pods; only a NodeAdd may help, and only for pods labelled ``wants=node``."""

    name = "NodeAddOnly"

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    def filter(self, state: Any, pod: Any, node: Any) -> Status:
        return Status.unschedulable("no")

    def events_to_register(self) -> list[ClusterEventWithHint]:
        def hint(pod: dict[str, Any], old: Any, new: Any) -> QueueingHint:
            wants = (pod.get("metadata", {}).get("labels") or {}).get("wants")
            return QueueingHint.QUEUE if wants == "node" else QueueingHint.SKIP

        return [ClusterEventWithHint(NODE_ADD, hint)]


class Silent:
    """Registers no events at all: its rejections are permanent until the pool is flushed."""

    name = "Silent"

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    def filter(self, state: Any, pod: Any, node: Any) -> Status:
        return Status.unschedulable("no")

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return []


class PodAdded:
    """Rejects pods; any bound pod appearing or scaling down may help (its hint always queues)."""

    name = "PodAdded"

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    def filter(self, state: Any, pod: Any, node: Any) -> Status:
        return Status.unschedulable("no")

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(ASSIGNED_POD_ADD, lambda pod, old, new: QueueingHint.QUEUE),
            ClusterEventWithHint(
                ClusterEvent(EventResource.POD, ActionType.UPDATE_POD_SCALE_DOWN),
                lambda pod, old, new: QueueingHint.QUEUE,
            ),
        ]


def make_queue(clock: Clock, **kw: Any) -> SchedulingQueue:
    reg = registry_with(NodeAddOnly, Silent, PodAdded)
    fw = Framework(profile(filter=["NodeAddOnly", "Silent", "PodAdded"], preEnqueue=["SchedulingGates"]), reg)
    return SchedulingQueue({"default-scheduler": fw}, clock=clock, **kw)


def test_active_queue_orders_by_priority_then_arrival() -> None:
    clock = Clock()
    q = make_queue(clock)
    for name, prio in [("low", 1), ("high", 100), ("mid", 50)]:
        q.add(make_pod(name).priority(prio).info())
        clock.t += 1
    q.add(make_pod("high2").priority(100).info())
    order = [q.pop_nowait().pod_info.name for _ in range(4)]  # type: ignore[union-attr]
    assert order == ["high", "high2", "mid", "low"]
    assert q.pop_nowait() is None


@pytest.mark.parametrize(
    "rejections,expected",
    [(1, 1.0), (2, 2.0), (3, 4.0), (4, 8.0), (5, 10.0), (9, 10.0)],
    ids=["first", "second", "third", "fourth", "capped", "still-capped"],
)
def test_backoff_doubles_up_to_the_maximum(rejections: int, expected: float) -> None:
    q = make_queue(Clock(), initial_backoff=1.0, max_backoff=10.0)
    q.add(make_pod("p").info())
    qpi = q.pop_nowait()
    assert qpi is not None
    qpi.unschedulable_count = rejections
    assert q.backoff_duration(qpi) == expected


def test_error_goes_to_backoff_and_returns_when_backoff_completes() -> None:
    # Without SchedulerPopFromBackoffQ: expiries are not aligned to windows.
    clock = Clock()
    q = make_queue(clock, feature_gates=FeatureGates({"SchedulerPopFromBackoffQ": False}))
    q.add(make_pod("p").info())
    qpi = q.pop_nowait()
    assert q.add_unschedulable_if_not_present(qpi, set()) == "backoff"  # type: ignore[arg-type]
    assert q.flush_backoff_completed() == 0
    clock.t += 0.999
    assert q.flush_backoff_completed() == 0
    clock.t += 0.002
    assert q.flush_backoff_completed() == 1
    assert q.pop_nowait() is qpi
    assert qpi.attempts == 2  # type: ignore[union-attr]


def test_error_backoff_completes_a_window_after_its_expiry_with_pop_from_backoff() -> None:
    # 1.37's default: the expiry (1001.0) is truncated to its 1 s window, and a pod whose
    # window is the clock's still backs off; the flush at 1002.0 moves it.
    clock = Clock()
    q = make_queue(clock)
    q.add(make_pod("p").info())
    qpi = q.pop_nowait()
    assert q.add_unschedulable_if_not_present(qpi, set()) == "backoff"  # type: ignore[arg-type]
    assert q.pop_nowait() is None  # an errored pod is never popped early
    assert q.next_backoff_expiry() == 1002.0
    clock.t = 1001.5
    assert q.flush_backoff_completed() == 0
    clock.t = 1002.0
    assert q.flush_backoff_completed() == 1
    assert q.pop_nowait() is qpi


def test_rejected_pod_waits_in_pool_until_an_event_its_plugin_registered() -> None:
    clock = Clock()
    q = make_queue(clock)
    q.add(make_pod("p").label("wants", "node").info())
    qpi = q.pop_nowait()
    assert q.add_unschedulable_if_not_present(qpi, {"NodeAddOnly"}) == "unschedulable"  # type: ignore[arg-type]
    # An event nobody registered for changes nothing.
    assert q.on_event(ASSIGNED_POD_DELETE) == 0
    assert q.where(qpi.pod_info.uid) == "unschedulable"  # type: ignore[union-attr]
    # The registered event moves it; still backing off, so to backoffQ first.
    assert q.on_event(NODE_ADD, None, {"metadata": {"name": "n9"}}) == 1
    assert q.where(qpi.pod_info.uid) == "backoff"  # type: ignore[union-attr]
    clock.t += 5
    q.flush_backoff_completed()
    assert q.where(qpi.pod_info.uid) == "active"  # type: ignore[union-attr]


def test_queueing_hint_can_skip_an_event() -> None:
    q = make_queue(Clock())
    q.add(make_pod("p").label("wants", "nothing").info())
    qpi = q.pop_nowait()
    q.add_unschedulable_if_not_present(qpi, {"NodeAddOnly"})  # type: ignore[arg-type]
    assert q.on_event(NODE_ADD, None, {}) == 0
    assert q.where(qpi.pod_info.uid) == "unschedulable"  # type: ignore[union-attr]


def test_event_during_the_attempt_sends_pod_to_backoff_not_the_pool() -> None:
    q = make_queue(Clock())
    q.add(make_pod("p").label("wants", "node").info())
    qpi = q.pop_nowait()
    q.on_event(NODE_ADD, None, {})  # arrives while the pod is being scheduled
    assert q.add_unschedulable_if_not_present(qpi, {"NodeAddOnly"}) == "backoff"  # type: ignore[arg-type]


def test_events_kept_for_attempts_in_flight_stay_bounded_under_a_steady_stream() -> None:
    q = make_queue(Clock())
    for i in range(3):
        q.add(make_pod(f"p{i}").label("wants", "node").info())
    first, second = q.pop_nowait(), q.pop_nowait()
    assert first is not None and second is not None
    for _ in range(300):
        q.on_event(NODE_ADD, None, {})
    # Always some attempt in flight: each new one starts while the previous is still binding.
    third = q.pop_nowait()
    assert third is not None
    q.done(first.pod_info.uid)
    assert q.in_flight_counts() == (2, 300)  # the second pod's attempt saw all of them
    q.done(second.pod_info.uid)
    assert q.in_flight_counts() == (1, 0)  # none happened during the third's
    q.on_event(NODE_ADD, None, {})
    # The third still sees the event that happened during its attempt.
    assert q.add_unschedulable_if_not_present(third, {"NodeAddOnly"}) == "backoff"
    assert q.in_flight_counts() == (0, 0)


def test_pool_is_flushed_after_five_minutes() -> None:
    clock = Clock()
    q = make_queue(clock)
    q.add(make_pod("p").info())
    qpi = q.pop_nowait()
    q.add_unschedulable_if_not_present(qpi, {"Silent"})  # type: ignore[arg-type]
    assert q.on_event(ClusterEvent(EventResource.NODE, ActionType.UPDATE_NODE_LABEL)) == 0
    clock.t += 299
    assert q.flush_unschedulable_left_over() == 0
    clock.t += 2
    assert q.flush_unschedulable_left_over() == 1
    assert q.where(qpi.pod_info.uid) == "active"  # type: ignore[union-attr]


def test_scheduling_gates_hold_a_pod_until_they_are_removed() -> None:
    q = make_queue(Clock())
    gated = make_pod("p").scheduling_gate("example.com/wait")
    q.add(gated.info())
    assert q.counts()["gated"] == 1
    assert q.pop_nowait() is None
    ungated = gated.obj()
    ungated["spec"]["schedulingGates"] = []
    from kubesched.framework.types import PodInfo

    q.update(PodInfo(ungated))
    assert q.counts()["gated"] == 0
    assert q.pop_nowait() is not None


def test_status_only_update_does_not_move_a_pooled_pod() -> None:
    q = make_queue(Clock())
    b = make_pod("p")
    q.add(b.info())
    qpi = q.pop_nowait()
    q.add_unschedulable_if_not_present(qpi, {"Silent"})  # type: ignore[arg-type]
    from kubesched.framework.types import PodInfo

    obj = b.obj()
    obj["metadata"]["uid"] = qpi.pod_info.uid  # type: ignore[union-attr]
    obj["status"]["conditions"] = [{"type": "PodScheduled", "status": "False"}]
    q.update(PodInfo(obj))
    assert q.where(qpi.pod_info.uid) == "unschedulable"  # type: ignore[union-attr]
    import copy

    relabelled = copy.deepcopy(obj)
    relabelled["metadata"]["labels"] = {"x": "y"}
    q.update(PodInfo(relabelled))
    assert q.where(qpi.pod_info.uid) in ("active", "backoff")  # type: ignore[union-attr]


async def test_pop_waits_for_a_pod() -> None:
    import asyncio

    q = make_queue(Clock())
    task = asyncio.create_task(q.pop())
    await asyncio.sleep(0)
    assert not task.done()
    q.add(make_pod("p").info())
    got = await asyncio.wait_for(task, 1)
    assert got is not None and got.pod_info.name == "p"
    q.close()
    assert await q.pop() is None


def test_delete_removes_from_every_queue() -> None:
    q = make_queue(Clock())
    q.add(make_pod("a").info())
    q.add(make_pod("b").info())
    uid = q.pop_nowait().pod_info.uid  # type: ignore[union-attr]
    q.add_unschedulable_if_not_present(q.get(uid) or q._unschedulable.get(uid) or _qpi(q, uid), {"Silent"})
    for u in [uid] + [qp.pod_info.uid for _, qp in q.pending_pods()]:
        q.delete(u)
    assert len(q) == 0


def _qpi(q: SchedulingQueue, uid: str) -> Any:
    # The popped pod is in flight and in no queue; rebuild its QueuedPodInfo for the test.
    from kubesched.framework.types import QueuedPodInfo

    return QueuedPodInfo(make_pod("a").uid(uid).info(), 0.0)


def test_pod_deleted_during_its_attempt_is_not_requeued() -> None:
    q = make_queue(Clock())
    q.add(make_pod("p").info())
    qpi = q.pop_nowait()
    q.delete(qpi.pod_info.uid)  # type: ignore[union-attr]
    assert q.add_unschedulable_if_not_present(qpi, {"Silent"}) == ""  # type: ignore[arg-type]
    assert len(q) == 0


def test_pod_updated_during_its_attempt_is_requeued_with_the_new_spec() -> None:
    from kubesched.framework.types import PodInfo

    q = make_queue(Clock())
    b = make_pod("p")
    q.add(b.info())
    qpi = q.pop_nowait()
    fixed = b.obj()
    fixed["metadata"]["uid"] = qpi.pod_info.uid  # type: ignore[union-attr]
    fixed["spec"]["nodeSelector"] = {"zone": "a"}
    q.update(PodInfo(fixed))
    # Rejected by a plugin no event can satisfy, yet it must not sit in the pool: it changed.
    assert q.add_unschedulable_if_not_present(qpi, {"Silent"}) == "backoff"  # type: ignore[arg-type]
    assert qpi.pod_info.node_selector == {"zone": "a"}  # type: ignore[union-attr]


def test_force_activate_targets_one_pod() -> None:
    from kubesched.framework.events import FORCE_ACTIVATE

    q = make_queue(Clock())
    q.add(make_pod("a").info())
    q.add(make_pod("b").info())
    a, b = q.pop_nowait(), q.pop_nowait()
    q.add_unschedulable_if_not_present(a, {"Silent"})  # type: ignore[arg-type]
    q.add_unschedulable_if_not_present(b, {"Silent"})  # type: ignore[arg-type]
    assert q.on_event(FORCE_ACTIVATE, None, a.pod) == 1  # type: ignore[union-attr]
    assert q.where(b.pod_info.uid) == "unschedulable"  # type: ignore[union-attr]


def pooled(q: SchedulingQueue, pod: Any, plugins: set[str]) -> str:
    """``pod`` tried once and rejected by ``plugins``; its uid."""
    q.add(pod.info())
    qpi = q.pop_nowait()
    assert qpi is not None
    q.add_unschedulable_if_not_present(qpi, plugins)
    return qpi.pod_info.uid


def with_required_affinity(pod: Any, **labels: str) -> Any:
    term = {"labelSelector": {"matchLabels": labels}, "topologyKey": "kubernetes.io/hostname"}
    return pod.set("spec.affinity", {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}})


def test_a_bound_pod_only_moves_pods_it_could_help_across_nodes() -> None:
    """Upstream's AssignedPodAdded: pods rejected by PodTopologySpread in the bound pod's
    namespace, or with a required affinity term it matches; not the others, whatever their
    plugins' hints say."""
    q = make_queue(Clock())
    plain = pooled(q, make_pod("plain"), {"PodAdded"})
    spread = pooled(q, make_pod("spread"), {"PodTopologySpread", "PodAdded"})
    spread_elsewhere = pooled(q, make_pod("spread-other").namespace("other"), {"PodTopologySpread", "PodAdded"})
    wants_web = pooled(q, with_required_affinity(make_pod("wants-web"), app="web"), {"PodAdded"})
    wants_db = pooled(q, with_required_affinity(make_pod("wants-db"), app="db"), {"PodAdded"})
    bound = make_pod("web-1").label("app", "web").node("n1").info()
    q.assigned_pod_added(bound, lambda ns: {})
    where = {uid: q.where(uid) for uid in (plain, spread, spread_elsewhere, wants_web, wants_db)}
    assert where == {
        plain: "unschedulable",
        spread: "backoff",
        spread_elsewhere: "unschedulable",
        wants_web: "backoff",
        wants_db: "unschedulable",
    }


def test_a_bound_pod_scaling_down_moves_every_pod_its_hints_accept() -> None:
    q = make_queue(Clock())
    plain = pooled(q, make_pod("plain"), {"PodAdded"})
    old = make_pod("big").node("n1").req(cpu="2").obj()
    new = make_pod("big").node("n1").req(cpu="1").info()
    scaled_down = ClusterEvent(EventResource.POD, ActionType.UPDATE_POD_SCALE_DOWN, "AssignedPodUpdate")
    q.assigned_pod_updated(old, new, scaled_down, lambda ns: {})
    assert q.where(plain) == "backoff"
    relabelled = pooled(q, make_pod("relabelled"), {"PodAdded"})
    q.assigned_pod_updated(old, new, ClusterEvent(EventResource.POD, ActionType.UPDATE_POD_LABEL), lambda ns: {})
    assert q.where(relabelled) == "unschedulable"  # not across nodes, and nobody registered it


def test_an_event_no_plugin_registers_for_moves_nothing() -> None:
    """Upstream's isEventOfInterest: even a pod rejected by a plugin the queue knows no events
    of (one no longer in any profile) waits for an event some plugin cares about."""
    q = make_queue(Clock())
    rejected = pooled(q, make_pod("p"), {"RemovedPlugin"})
    assert q.where(rejected) == "unschedulable"
    assert q.on_event(ASSIGNED_POD_DELETE, make_pod("gone").node("n1").obj(), None) == 0
    assert q.where(rejected) == "unschedulable"
    assert q.on_event(NODE_ADD, None, {"metadata": {"name": "n2"}}) == 1
    assert q.where(rejected) == "backoff"
