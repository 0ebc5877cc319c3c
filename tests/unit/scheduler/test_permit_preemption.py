"""A pod preempted while it waits at Permit backs off (kube-scheduler 1.36, kubernetes#135719):
its binding cycle ends with an Error ("waiting on permit for pod: preempted"), so it goes to
backoffQ and is retried, rather than waiting in the unschedulable pool for an event; it is not
deleted. As upstream's TestPreemptionRespectsWaitingPod, through the real scheduler loop."""

from __future__ import annotations

import asyncio
from typing import Any

from conftest import make_harness, profile, registry_with

from kubesched.framework.status import Status
from kubesched.testing import make_node, make_pod


class HoldVictims:
    """Permit: pods labelled ``hold`` wait (a long time); the others pass."""

    name = "HoldVictims"

    def __init__(self, args: Any, handle: Any) -> None:
        self.handle = handle

    def events_to_register(self) -> list[Any]:
        return []  # no cluster event makes a rejected pod schedulable

    def permit(self, state: Any, pod: Any, node: str) -> Any:
        if (pod.pod["metadata"].get("labels") or {}).get("hold"):
            return Status.wait(), 600
        return None


def _profile() -> Any:
    return profile(
        preFilter=["NodeResourcesFit"],
        filter=["NodeResourcesFit"],
        postFilter=["DefaultPreemption"],
        permit=["HoldVictims"],
    )


async def test_pod_preempted_while_waiting_on_permit_goes_to_backoff_and_is_not_deleted() -> None:
    h = await make_harness(
        [_profile()],
        registry_with(HoldVictims),
        objs=[make_node("n1").capacity(cpu="1", pods="10")],
    )
    sched = h.scheduler
    h.add(make_pod("victim").labels(hold="1").priority(1).req(cpu="1"))
    await h.settle()
    await sched.schedule_one(sched.queue.pop_nowait())
    await asyncio.sleep(0)
    fw = sched.frameworks["default-scheduler"]
    victim_uid = h.pod("victim")["metadata"]["uid"]
    assert fw.get_waiting_pod(victim_uid) is not None

    h.add(make_pod("preemptor").priority(100).req(cpu="1"))
    await h.cluster.wait_delivered()  # not settle: that would wait for the victim's binding
    await sched.schedule_one(sched.queue.pop_nowait())  # no room: preempts the waiting victim
    await asyncio.wait_for(h.settle(), 5)

    assert fw.get_waiting_pod(victim_uid) is None
    assert sched.queue.where(victim_uid) == "backoff"
    assert h.store.get("Pod", "default", "victim") is not None  # not deleted: taken in memory
    assert h.node_of("victim") is None
    result = sched.results["default/victim"]
    assert (result.phase, result.message) == ("Error", "waiting on permit for pod: preempted")
    condition = next(c for c in h.pod("victim")["status"]["conditions"] if c["type"] == "PodScheduled")
    assert (condition["reason"], condition["message"]) == ("SchedulerError", "waiting on permit for pod: preempted")
    preempted = [e["message"] for e in h.events("victim") if e["reason"] == "Preempted"]
    preemptor_uid = h.pod("preemptor")["metadata"]["uid"]
    assert preempted == [f"Preempted by pod {preemptor_uid} on node n1 (in kube-scheduler memory)."]

    # The preemptor, nominated to n1, takes the room the victim held.
    await h.run_all()
    assert h.node_of("preemptor") == "n1"


async def test_pod_rejected_while_waiting_on_permit_still_goes_to_the_unschedulable_pool() -> None:
    # Only preemption backs off: a plugin's rejection keeps its meaning (unschedulable).
    h = await make_harness(
        [_profile()], registry_with(HoldVictims), objs=[make_node("n1").capacity(cpu="1", pods="10")]
    )
    sched = h.scheduler
    h.add(make_pod("p").labels(hold="1").req(cpu="1"))
    await h.settle()
    await sched.schedule_one(sched.queue.pop_nowait())
    await asyncio.sleep(0)
    uid = h.pod("p")["metadata"]["uid"]
    wp = sched.frameworks["default-scheduler"].get_waiting_pod(uid)
    assert wp is not None
    wp.reject("HoldVictims", "not yet")
    await h.settle()
    assert sched.queue.where(uid) == "unschedulable"
    assert sched.results["default/p"].phase == "Unschedulable"
