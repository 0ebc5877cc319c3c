"""``sim serve``'s timeline in one process: steps and lifetimes in the order of their simulated
times on a fast paced clock, a Job's pod ending Succeeded, and the horizon stopping it."""

from __future__ import annotations

import asyncio
from typing import Any

from kubesched.cluster.base import NotFound
from kubesched.cluster.store import Store
from kubesched.sim.run.paced import PacedTimeline
from kubesched.sim.scenario.clock import PacedClock
from kubesched.sim.scenario.reading import parse_scenario
from kubesched.sim.scenario.timeline import Horizon


def node(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"}},
    }


def running(name: str, lifetime: str, owner: str | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "default", "annotations": {"kubesched.io/lifetime": lifetime}}
    if owner:
        meta["ownerReferences"] = [
            {"apiVersion": "batch/v1", "kind": "Job", "name": owner, "uid": "u", "controller": True}
        ]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "x"}]},
        "status": {"phase": "Running"},
    }


def test_events_run_in_time_order_and_stop_at_the_horizon() -> None:
    scenario = parse_scenario(
        [
            {
                "apiVersion": "kubesched.io/v1",
                "kind": "Steps",
                "steps": [
                    {
                        "at": "10s",
                        "create": [
                            node("n2"),
                            {
                                "apiVersion": "v1",
                                "kind": "Pod",
                                "metadata": {"name": "late"},
                                "spec": {"containers": [{"name": "c", "image": "x"}]},
                            },
                        ],
                    },
                    {"at": "1h", "delete": [{"kind": "Node", "name": "n2"}]},
                ],
            }
        ],
        "test",
    )
    store = Store()
    store.create("Namespace", {"metadata": {"name": "default"}})
    store.create("Node", node("n1"))
    store.create("Pod", running("plain", "2s"))
    store.create("Pod", running("worker", "20s", owner="batch"))
    said: list[str] = []
    timeline = PacedTimeline(store, scenario.steps, PacedClock(100.0), Horizon(40.0, "--until"), said.append)
    stop = asyncio.Event()

    async def go() -> None:
        await asyncio.wait_for(timeline.run(stop), 30)

    asyncio.run(go())
    # Lifetimes count from when the clock started, give or take the wall milliseconds (times 100)
    # the start took: steps are exact, lifetimes close (far enough apart to keep their order).
    events = [line.split(": ", 1) for line in said[:-1]]
    assert [e[1] for e in events] == [
        "default/plain ended on n1",
        "step 1: create 2",
        "default/worker ended on n1",
    ]
    times = [float(e[0].removeprefix("simulated ").removesuffix("s")) for e in events]
    assert 2.0 <= times[0] < 10.0 and times[1] == 10.0 and 20.0 <= times[2] < 40.0
    assert said[-1] == "simulated time reached the horizon 40s (--until); 1 event(s) still due: stopping"
    assert stop.is_set() and timeline.reached
    try:
        store.get("Pod", "default", "plain")
        raise AssertionError("a plain pod is deleted when its lifetime is up")
    except NotFound:
        pass
    assert store.get("Pod", "default", "worker")["status"]["phase"] == "Succeeded"
    late = store.get("Pod", "default", "late")
    assert late["status"]["phase"] == "Pending" and not late["spec"].get("nodeName")
    assert store.get("Node", None, "n2")


def test_a_restart_runs_every_step_again_from_time_zero() -> None:
    scenario = parse_scenario(
        [
            {
                "apiVersion": "kubesched.io/v1",
                "kind": "Steps",
                "steps": [
                    {"at": "5s", "create": [node("n2")]},
                    {"at": "1h", "delete": [{"kind": "Node", "name": "n1"}]},
                ],
            }
        ],
        "test",
    )
    store = Store()
    store.create("Node", node("n1"))
    said: list[str] = []
    timeline = PacedTimeline(store, scenario.steps, PacedClock(100.0), None, said.append)
    stop = asyncio.Event()

    async def go() -> None:
        running_timeline = asyncio.create_task(timeline.run(stop))
        for _ in range(300):
            if any("step 1" in line for line in said):
                break
            await asyncio.sleep(0.01)
        store.delete("Node", None, "n2")  # the reset's doing: the cluster back at its start
        timeline.restart()
        for _ in range(300):
            if sum("step 1" in line for line in said) == 2:
                break
            await asyncio.sleep(0.01)
        stop.set()
        await asyncio.wait_for(running_timeline, 10)

    asyncio.run(go())
    assert [line for line in said if "step" in line or "restarted" in line] == [
        "simulated 5s: step 1: create 1",
        "simulated time restarted at 0s: 2 event(s) due",
        "simulated 5s: step 1: create 1",
    ]
    assert store.get("Node", None, "n2")
