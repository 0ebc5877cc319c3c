"""First come, first served: pods of equal priority are tried in the order they were created, in
``simulate`` (document order) and through the API server (creation order), as kube-scheduler's
PrioritySort orders them by the time they entered the queue."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from polling import eventually

from kubesched.cluster.memory import InMemoryCluster
from kubesched.cluster.store import Store
from kubesched.config import load_config
from kubesched.scheduler import Scheduler, SchedulerOptions
from kubesched.sim.scenario.reading import load_scenario
from kubesched.testing import make_node, make_pod

NODE = """\
apiVersion: v1
kind: Node
metadata: {name: n1}
status:
  allocatable: {cpu: "4", memory: 8Gi, pods: "3"}
"""
POD = """\
apiVersion: v1
kind: Pod
metadata: {name: p%d}
spec:
  containers: [{name: c, image: nginx}]
"""


def scenario(tmp_path: Path, pods: int = 6) -> Path:
    path = tmp_path / "fifo.yaml"
    path.write_text("---\n".join([NODE, *(POD % i for i in range(pods))]))
    return path


def test_simulate_places_best_effort_pods_in_document_order(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "kubesched", "simulate", "--scenario", str(scenario(tmp_path)), "--output", "json"],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    pods = {p["name"]: p for p in json.loads(out.stdout)["pods"]}
    assert sorted(n for n, p in pods.items() if p["node"] == "n1") == ["p0", "p1", "p2"]
    assert all(pods[n]["phase"] == "Unschedulable" for n in ("p3", "p4", "p5"))


def test_scenario_pods_get_increasing_creation_timestamps(tmp_path: Path) -> None:
    sc = load_scenario(scenario(tmp_path))
    stamps = [p["metadata"]["creationTimestamp"] for p in sc.pending_pods]
    assert stamps == sorted(stamps) and len(set(stamps)) == len(stamps)


def test_simulate_orders_by_priority_first_then_by_creation(tmp_path: Path) -> None:
    path = tmp_path / "prio.yaml"
    docs = [NODE]
    for i in range(6):
        doc = POD % i
        if i in (4, 5):
            doc += "  priority: 10\n"
        docs.append(doc)
    path.write_text("---\n".join(docs))
    out = subprocess.run(
        [sys.executable, "-m", "kubesched", "simulate", "--scenario", str(path), "--output", "json"],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    placed = sorted(p["name"] for p in json.loads(out.stdout)["pods"] if p["node"])
    # The two higher-priority pods go first, then the oldest of the rest.
    assert placed == ["p0", "p4", "p5"]


async def test_pods_created_in_one_burst_are_tried_in_creation_order() -> None:
    """Through the store the API server writes to: six pods created in one turn of the loop
    (one creation second, as the API server stamps them) are still taken in creation order."""
    store = Store()
    cluster = InMemoryCluster(store)
    store.create("Node", make_node("n1").capacity(cpu="4", memory="8Gi", pods="3").obj())
    sched = Scheduler(load_config(None).profiles, cluster, SchedulerOptions(seed=1))
    await sched.start()
    for i in range(6):
        store.create("Pod", make_pod(f"p{i}").obj())
    await cluster.wait_delivered()
    task = asyncio.create_task(sched.run(start=False))

    def node(name: str) -> Any:
        return store.get("Pod", "default", name)["spec"].get("nodeName")

    try:
        await eventually(lambda: sum(1 for i in range(6) if node(f"p{i}")) == 3)
        await asyncio.sleep(0.05)
        assert [f"p{i}" for i in range(6) if node(f"p{i}")] == ["p0", "p1", "p2"]
    finally:
        await sched.stop(grace=1)
        await asyncio.wait_for(task, 5)
