"""A whole scheduler with workload-aware scheduling on, through the kit: ``running_scheduler``'s
``feature_gates``, the PodGroup's condition and its members' nodes waited for."""

from __future__ import annotations

import re
from typing import Any

import pytest
from docs_pages import page_path

from kubesched.framework.features import FeatureGates
from kubesched.scheduler import SchedulerOptions
from kubesched.testing import PodGroupBuilder, make_node, make_pod, make_pod_group, running_scheduler

PAGE = page_path("writing-a-plugin.md")
RACK = "example.com/rack"
GATE_ON = {"GenericWorkload": True}


def readme_plugins() -> dict[str, Any]:
    blocks = re.findall(r"```python\n(# my_plugins/racks\.py\n.*?)```", PAGE.read_text(), re.DOTALL)
    assert len(blocks) == 1, "the docs' placement example is gone"
    ns: dict[str, Any] = {}
    exec(compile(blocks[0], "writing-a-plugin.md:racks", "exec"), ns)
    return ns


def racks(a_nodes: int = 4, b_cpu: str = "4") -> list[Any]:
    """Rack a: ``a_nodes`` 1-CPU nodes; rack b: one node of ``b_cpu`` CPUs."""
    nodes = [make_node(f"a{i}").label(RACK, "a").capacity(cpu="1", pods="10") for i in range(a_nodes)]
    nodes.append(make_node("b0").label(RACK, "b").capacity(cpu=b_cpu, pods="10"))
    return nodes


def gang(size: int = 4) -> PodGroupBuilder:
    return make_pod_group("train", min_count=size, members=[make_pod(f"w{i}").req(cpu="1") for i in range(size)])


async def test_the_gang_goes_to_the_rack_the_readme_plugins_prefer() -> None:
    ns = readme_plugins()
    async with running_scheduler(
        plugins=[ns["ByRack"], ns["FewestNodes"]], feature_gates=GATE_ON, nodes=racks(), objects=gang().objects()
    ) as s:
        assert s.scheduler.options.feature_gates.enabled("GenericWorkload")
        assert await s.wait_pod_group_scheduled("train") == {f"w{i}": "b0" for i in range(4)}
        cond = await s.wait_pod_group_condition("train", status="True")
        assert cond["reason"] == "Scheduled"
        assert s.pod_group_members("train") == {f"w{i}": "b0" for i in range(4)}


async def test_a_gang_that_fits_nowhere_is_placed_nowhere() -> None:
    """Room for three of the four members, in rack a: none of them is bound."""
    ns = readme_plugins()
    async with running_scheduler(
        plugins=[ns["ByRack"], ns["FewestNodes"]],
        feature_gates=GATE_ON,
        nodes=racks(a_nodes=3, b_cpu="2"),
        objects=gang().objects(),
    ) as s:
        cond = await s.wait_pod_group_condition("train", status="False")
        assert cond["reason"] == "Unschedulable"
        assert "0/2 placements are available" in cond["message"]
        assert s.pod_group_members("train") == {f"w{i}": None for i in range(4)}
        with pytest.raises(AssertionError, match="pod group default/train is unschedulable"):
            await s.wait_pod_group_scheduled("train", timeout=2)


async def test_with_the_gate_off_members_are_placed_one_by_one() -> None:
    """The same cluster without GenericWorkload: no group cycle, three members bound, no condition."""
    async with running_scheduler(nodes=racks(a_nodes=3, b_cpu="0"), objects=gang().objects()) as s:
        assert not s.scheduler.options.feature_gates.enabled("GenericWorkload")
        await s.wait_for(lambda: sum(n is not None for n in s.pod_group_members("train").values()) == 3)
        await s.wait_idle()
        assert s.pod_group_condition("train") is None


async def test_gates_given_as_feature_gates_replace_the_options() -> None:
    options = SchedulerOptions(seed=1, record_results=True, feature_gates=FeatureGates({"GenericWorkload": True}))
    async with running_scheduler(options=options, feature_gates={"CompositePodGroup": True}, loop=False) as s:
        gates = s.scheduler.options.feature_gates
        assert gates.enabled("GenericWorkload") and gates.enabled("CompositePodGroup")
    async with running_scheduler(options=options, feature_gates=FeatureGates(), loop=False) as s:
        assert not s.scheduler.options.feature_gates.enabled("GenericWorkload")
    assert options.feature_gates.enabled("GenericWorkload") and not options.feature_gates.enabled("CompositePodGroup")


async def test_the_fixtures_take_pod_groups_and_gates(kubesched_scheduler: Any, kubesched_builders: Any) -> None:
    b = kubesched_builders
    group = b.pod_group("pair", min_count=2, members=[b.pod("p0").req(cpu="1"), b.pod("p1").req(cpu="1")])
    s = await kubesched_scheduler(
        feature_gates=GATE_ON, nodes=[b.node("n1").capacity(cpu="2", pods="10")], objects=group.objects()
    )
    assert await s.wait_pod_group_scheduled("pair") == {"p0": "n1", "p1": "n1"}
