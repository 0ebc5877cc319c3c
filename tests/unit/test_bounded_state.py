"""What the scheduler keeps per pod or per node goes with the pod or the node: the queue's heaps,
the cache's changed nodes and the pods' results, on a leader that is busy elsewhere and on a
replica that never schedules (the standby over real HTTP: tests/integration/test_standby_memory.py)."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import make_harness, profile

from kubesched.backend.cache import Cache, Snapshot
from kubesched.backend.queue import SchedulingQueue
from kubesched.framework.types import PodInfo
from kubesched.runtime.framework import Framework
from kubesched.runtime.registry import default_registry
from kubesched.scheduler import SchedulerOptions
from kubesched.testing import make_node, make_pod

UPDATES = 200


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def _queue(clock: Clock) -> SchedulingQueue:
    return SchedulingQueue({"default-scheduler": Framework(profile(), default_registry())}, clock=clock)


def test_a_pod_updated_again_and_again_in_active_q_leaves_no_pile_of_entries() -> None:
    q = _queue(Clock())
    b = make_pod("p")
    q.add(b.info())
    for i in range(UPDATES):
        pod = b.obj()
        pod["metadata"]["labels"] = {"v": str(i)}  # a change that re-positions it
        q.update(PodInfo(pod))
    assert q.footprint()["active_heap"] <= 3
    assert q.pop_nowait().pod_info.labels == {"v": str(UPDATES - 1)}  # type: ignore[union-attr]
    assert q.pop_nowait() is None and q.footprint()["active_heap"] == 0


def test_pods_deleted_while_backing_off_leave_no_pile_of_entries() -> None:
    clock = Clock()
    q = _queue(clock)
    for i in range(UPDATES):
        q.add(make_pod(f"p{i}").info())
        qpi = q.pop_nowait()
        assert qpi is not None
        assert q.add_unschedulable_if_not_present(qpi, set()) == "backoff"
        q.delete(qpi.pod_info.uid)
    # No flush ran (a standby's loop never does; nor does a leader's within the backoff).
    assert q.footprint()["backoff_heap"] <= 16
    assert q.footprint()["backoff"] == 0


def test_backoff_q_keeps_its_order_through_a_compaction() -> None:
    clock = Clock()
    q = _queue(clock)
    kept = []
    for i in range(60):
        q.add(make_pod(f"p{i}").info())
        qpi = q.pop_nowait()
        assert qpi is not None
        q.add_unschedulable_if_not_present(qpi, set())
        clock.t += 0.01
        if i % 3:
            q.delete(qpi.pod_info.uid)
        else:
            kept.append(qpi.pod_info.name)
    assert q.footprint()["backoff_heap"] < 60
    clock.t += 10.0
    assert q.flush_backoff_completed() == len(kept)
    order = []
    while (qpi := q.pop_nowait()) is not None:
        order.append(qpi.pod_info.name)
    assert order == kept


def test_node_churn_without_snapshot_updates_keeps_only_the_nodes_there_are() -> None:
    cache = Cache()
    snapshot = Snapshot()
    cache.add_node(make_node("stays").obj())
    cache.update_snapshot(snapshot)
    for i in range(UPDATES):  # an autoscaler's nodes come and go; a standby never snapshots
        node = make_node(f"n{i}").obj()
        cache.add_node(node)
        cache.remove_node(node)
    assert cache.footprint()["changed_nodes"] <= 2 * len(cache.nodes) + 65
    # The snapshot taken afterwards is still exact.
    cache.update_snapshot(snapshot)
    assert [n.name for n in snapshot.list()] == ["stays"]


async def _scheduled_and_deleted(options: SchedulerOptions) -> dict[str, Any]:
    h = await make_harness([profile()], options=options, objs=[make_node("n1"), make_pod("p")])
    try:
        await h.run_all()
        assert h.node_of("p") == "n1" and "default/p" in h.scheduler.results
        h.store.delete("Pod", "default", "p")
        await h.settle()
        return dict(h.scheduler.results)
    finally:
        await h.scheduler.stop(grace=0)


@pytest.mark.parametrize(
    "keep,expected",
    [(False, set()), (True, {"default/p"})],
    ids=["long-lived: dropped with the pod", "simulation: kept for the report"],
)
async def test_a_deleted_pods_result_goes_with_it_unless_asked_to_keep_it(keep: bool, expected: set[str]) -> None:
    results = await _scheduled_and_deleted(SchedulerOptions(seed=1, record_results=True, keep_deleted_results=keep))
    assert set(results) == expected
