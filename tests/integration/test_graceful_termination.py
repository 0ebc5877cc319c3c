"""Pods deleted gracefully (``--pod-termination graceful``): a victim stays Terminating on its node
for its grace period, and its preemptor waits for it — in ``simulate``'s simulated time, and
under ``sim serve``'s paced clock with the real kubectl as the client."""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from polling import eventually

from kubesched.cluster.base import NotFound
from kubesched.cluster.memory import InMemoryCluster
from kubesched.cluster.store import Store
from kubesched.config import load_config
from kubesched.scheduler import Scheduler, SchedulerOptions
from kubesched.sim.apiserver.server import APIServer
from kubesched.sim.run.paced import PacedTimeline
from kubesched.sim.run.simulate import SimulationSettings, simulate
from kubesched.sim.scenario.clock import PacedClock
from kubesched.sim.scenario.reading import parse_scenario
from kubesched.testing import make_node

KUBECTL = shutil.which("kubectl") or "/usr/bin/kubectl"


def pod(name: str, grace: int | None = None, node: str = "", priority_class: str = "") -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}]}
    if node:
        spec["nodeName"] = node
    if grace is not None:
        spec["terminationGracePeriodSeconds"] = grace
    if priority_class:
        spec["priorityClassName"] = priority_class
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"}, "spec": spec}


def preemption_scenario() -> Any:
    return parse_scenario(
        [
            {
                "apiVersion": "scheduling.k8s.io/v1",
                "kind": "PriorityClass",
                "metadata": {"name": "high"},
                "value": 1000,
            },
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": "n1"},
                "status": {"allocatable": {"cpu": "1", "memory": "4Gi", "pods": "10"}},
            },
            pod("low", grace=20, node="n1"),
            pod("high", priority_class="high"),
        ]
    )


def run(termination: str) -> Any:
    settings = SimulationSettings(pod_termination=termination)
    return asyncio.run(simulate(load_config(None).profiles, preemption_scenario(), settings))


def test_simulate_a_victim_holds_its_node_for_its_grace_period() -> None:
    result = run("graceful")
    pods = {p["name"]: p for p in result.pods}
    assert pods["high"]["node"] == "n1"
    timeline = result.summary["timeline"]
    assert [(m["time"], m["running"], m["pending"]) for m in timeline] == [(0, 0, 1), (20, 1, 0)]
    assert timeline[1]["event"] == "default/low terminated on n1 after its grace period (20s)"
    with pytest.raises(NotFound):
        result.store.get("Pod", "default", "low")


def test_simulate_immediate_termination_frees_the_node_at_once() -> None:
    result = run("immediate")
    assert {p["name"]: p["node"] for p in result.pods}["high"] == "n1"
    assert "timeline" not in result.summary


def test_simulate_a_step_deletes_a_pod_gracefully() -> None:
    scenario = parse_scenario(
        [
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": "n1"},
                "status": {"allocatable": {"cpu": "1", "memory": "4Gi", "pods": "10"}},
            },
            pod("old", grace=45, node="n1"),
            {
                "apiVersion": "kubesched.io/v1",
                "kind": "Steps",
                "steps": [{"at": "10s", "delete": [{"kind": "Pod", "name": "old"}], "create": [pod("new")]}],
            },
        ]
    )
    result = asyncio.run(simulate(load_config(None).profiles, scenario, SimulationSettings(pod_termination="graceful")))
    timeline = result.summary["timeline"]
    # Created at 10s, "new" waits until "old" has terminated at 55s.
    assert [(m["time"], m["pending"]) for m in timeline] == [(0, 0), (10, 1), (55, 0)]
    assert {p["name"]: p["node"] for p in result.pods}["new"] == "n1"


# --- sim serve's API server with the real kubectl ------------------------------------------------
@pytest.mark.skipif(not os.access(KUBECTL, os.X_OK), reason="kubectl is not installed")
async def test_kubectl_sees_terminating_and_the_preemptor_waits(tmp_path: Path) -> None:
    store = Store()
    store.pod_termination = "graceful"
    server = APIServer(store)
    await server.start()
    node = make_node("n1").capacity(cpu="1", memory="4Gi", pods="10")
    node.set("status.conditions", [{"type": "Ready", "status": "True"}])
    store.create("Node", node.obj())
    store.create(
        "PriorityClass",
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000},
    )
    sched = Scheduler(load_config(None).profiles, InMemoryCluster(store), SchedulerOptions(seed=1))
    scheduling = asyncio.create_task(sched.run())
    timeline = PacedTimeline(store, [], PacedClock(speed=1.0), say=lambda line: None)
    stop = asyncio.Event()
    timing = asyncio.create_task(timeline.run(stop))
    kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig")

    async def kubectl(*args: str, stdin: str | None = None) -> str:
        proc = await asyncio.create_subprocess_exec(
            KUBECTL,
            "--kubeconfig",
            kubeconfig,
            "--cache-dir",
            str(tmp_path / "cache"),
            *args,
            stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env={**os.environ, "HOME": str(tmp_path)},
        )
        out, err = await asyncio.wait_for(proc.communicate(stdin.encode() if stdin is not None else None), 30)
        assert proc.returncode == 0, f"kubectl {' '.join(args)}: {err.decode()}"
        return out.decode()

    def manifest(name: str, grace: int, priority_class: str = "") -> str:
        pc = f"\n  priorityClassName: {priority_class}" if priority_class else ""
        return (
            f"apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\nspec:\n  terminationGracePeriodSeconds: {grace}{pc}\n"
            "  containers:\n  - name: c\n    image: x\n    resources: {requests: {cpu: '1'}}\n"
        )

    def node_of(name: str) -> str | None:
        try:
            return store.get("Pod", "default", name)["spec"].get("nodeName")
        except NotFound:
            return None

    try:
        # A pod deleted by kubectl stays Terminating on its node; --force --grace-period=0 removes it.
        await kubectl("apply", "-f", "-", stdin=manifest("stays", 600))
        await eventually(lambda: node_of("stays") == "n1", timeout=10)
        await kubectl("delete", "pod", "stays", "--wait=false")
        assert "Terminating" in await kubectl("get", "pod", "stays")
        await kubectl("delete", "pod", "stays", "--force", "--grace-period=0")
        await eventually(lambda: "stays" not in str(store.list("Pod")[0]), timeout=10)

        # Preemption: the victim terminates for 2 s, the preemptor is nominated meanwhile and
        # binds once the simulated kubelet has stopped it.
        await kubectl("apply", "-f", "-", stdin=manifest("victim", 2))
        await eventually(lambda: node_of("victim") == "n1", timeout=10)
        await kubectl("apply", "-f", "-", stdin=manifest("preemptor", 30, "high"))
        await eventually(
            lambda: (store.get("Pod", "default", "preemptor").get("status") or {}).get("nominatedNodeName") == "n1",
            timeout=10,
        )
        assert "Terminating" in await kubectl("get", "pod", "victim")
        assert node_of("preemptor") is None
        await eventually(lambda: node_of("preemptor") == "n1", timeout=15)
        assert node_of("victim") is None
    finally:
        stop.set()
        await asyncio.wait_for(timing, 5)
        await sched.stop(grace=1)
        await asyncio.wait_for(scheduling, 5)
        await server.stop()
