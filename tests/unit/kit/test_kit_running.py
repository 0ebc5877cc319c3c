"""kubesched.testing.running_scheduler: the real scheduler over an in-memory cluster, in process."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kubesched import Status
from kubesched.testing import make_node, make_pod, running_scheduler

NODES = [
    make_node("small").capacity(cpu="2", memory="4Gi", pods="10").label("tier", "cheap"),
    make_node("big").capacity(cpu="8", memory="16Gi", pods="10"),
]


class NoCheap:
    """Refuses nodes labelled tier=cheap."""

    name = "NoCheap"

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    def filter(self, state: Any, pod: Any, node: Any) -> Status | None:
        return Status.unschedulable("node(s) are cheap") if node.labels.get("tier") == "cheap" else None


class ByName:
    """QueueSort: pods leave the queue in the order of their names."""

    name = "ByName"

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    def less(self, a: Any, b: Any) -> bool:
        return bool(a.pod_info.name < b.pod_info.name)


class Pair:
    """Permit: a pod waits for a second pod of its ``pair`` label, which allows it."""

    name = "Pair"

    def __init__(self, args: Any, handle: Any) -> None:
        self.handle = handle

    def permit(self, state: Any, pod: Any, node_name: str) -> tuple[Status | None, float]:
        for wp in self.handle.iterate_waiting_pods():
            if wp.pod_info.labels.get("pair") == pod.labels.get("pair"):
                wp.allow(self.name)
                return None, 0
        return Status.wait("pair"), 0.2


async def test_a_plugin_enabled_in_the_default_profile_decides_placement() -> None:
    async with running_scheduler(plugins=[NoCheap], nodes=NODES, pods=[make_pod("p").req(cpu="1")]) as s:
        assert await s.wait_bound("p") == "big"
        assert s.result("p") is not None and s.result("p").phase == "Scheduled"  # type: ignore[union-attr]
        assert [e["reason"] for e in s.events("p")] == ["Scheduled"]
        s.add(make_pod("huge").req(cpu="64"), make_pod("q").req(cpu="1").node_selector(tier="cheap"))
        why = await s.wait_unschedulable("huge")
        assert why.startswith("0/2 nodes are available: 2 Insufficient cpu. preemption: ")
        assert s.failures("huge") == [why]
        cond = s.condition("huge")
        assert cond is not None and cond["status"] == "False" and cond["reason"] == "Unschedulable"
        assert (await s.wait_unschedulable("q")).startswith("0/2 nodes are available: 1 node(s) are cheap, ")
        assert s.placements() == {"p": "big", "huge": None, "q": None}


async def test_waiting_for_the_wrong_outcome_says_what_happened() -> None:
    async with running_scheduler(nodes=NODES, pods=[make_pod("p"), make_pod("huge").req(cpu="64")]) as s:
        with pytest.raises(AssertionError, match="was bound to"):
            await s.wait_unschedulable("p")
        with pytest.raises(AssertionError, match="Insufficient cpu"):
            await s.wait_bound("huge")


async def test_a_queue_sort_plugin_replaces_priority_sort_stepped_by_the_test() -> None:
    pods = [make_pod(n).priority(p) for n, p in (("c", 100), ("a", 0), ("b", 50))]
    async with running_scheduler(plugins=[ByName], nodes=NODES, pods=pods, loop=False) as s:
        assert [await s.schedule_next() for _ in range(4)] == ["a", "b", "c", None]
        await s.settle()
        assert all(s.node_of(n) for n in "abc")


async def test_permit_holds_a_pod_until_its_pair_arrives() -> None:
    async with running_scheduler(plugins=[Pair], nodes=NODES, loop=False) as s:
        s.add(make_pod("a").label("pair", "x"))
        assert await s.schedule_next() == "a"
        assert s.waiting() == {"a"} and s.node_of("a") is None
        s.add(make_pod("b").label("pair", "x"))
        assert await s.wait_bound("b") and await s.wait_bound("a")
        s.add(make_pod("alone").label("pair", "y"))
        why = await s.wait_unschedulable("alone")
        assert "rejected due to timeout after waiting 0.2s at plugin Pair" in why


async def test_config_and_scenario_files(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\n"
        "kind: KubeSchedulerConfiguration\n"
        "profiles:\n"
        "  - schedulerName: picky\n"
        "    plugins:\n"
        "      filter:\n"
        "        enabled: [{name: NoCheap}]\n"
    )
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text(
        "apiVersion: v1\nkind: Node\nmetadata: {name: cheap, labels: {tier: cheap}}\n"
        "status: {allocatable: {cpu: '4', memory: 8Gi, pods: '10'}}\n"
        "---\n"
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
        "spec: {schedulerName: picky, containers: [{name: c, image: i}]}\n"
    )
    async with running_scheduler(config=config, plugins=[NoCheap], scenario=scenario) as s:
        assert (await s.wait_unschedulable("p")).startswith("0/1 nodes are available: 1 node(s) are cheap. ")
        s.add(make_node("other").capacity(cpu="4", memory="8Gi", pods="10"))
        assert await s.wait_bound("p", timeout=30) == "other"


async def test_leaving_rejects_the_pods_still_waiting_at_permit() -> None:
    class Hold:
        name = "Hold"

        def __init__(self, args: Any, handle: Any) -> None:
            pass

        def permit(self, state: Any, pod: Any, node_name: str) -> tuple[Status, float]:
            return Status.wait(), 600  # longer than any test

    async with running_scheduler(plugins=[Hold], nodes=NODES, pods=[make_pod("p")]) as s:
        await s.wait_for(lambda: s.waiting() == {"p"})
    assert s.waiting() == set()
    assert s.node_of("p") is None
    assert "the scheduler is stopping" in (s.unschedulable("p") or "")
