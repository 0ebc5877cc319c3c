"""The face's PreemptionEvaluator: the docs' example plugin (run as written), and the
evaluator over hooks given as an object."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import pytest
from docs_pages import page_path, section

from kubesched import (
    Code,
    CycleState,
    NodeInfo,
    PodInfo,
    PreemptionCandidate,
    PreemptionEvaluator,
    PreemptionInterface,
    Status,
)
from kubesched.testing import make_node, make_pod, plugin_framework

PAGE = page_path("writing-a-plugin.md")


def readme_example() -> type:
    """The code block of the docs' "Preemption: the evaluator", executed."""
    block = re.search(r"```python\n(.*?)```", section(PAGE.read_text(), "## Preemption: the evaluator"), re.S)
    assert block is not None
    ns: dict[str, Any] = {}
    exec(compile(block.group(1), "writing-a-plugin.md", "exec"), ns)
    cls = ns["EvictBatch"]
    assert isinstance(cls, type)
    return cls


def full_nodes() -> tuple[list[Any], list[Any]]:
    """Two nodes of 2 CPUs, each full: n1 with a low-priority service pod, n2 with a
    low-priority batch pod."""
    nodes = [make_node(n).capacity(cpu="2", pods="10") for n in ("n1", "n2")]
    pods = [
        make_pod("svc").uid("svc").node("n1").priority(1).req(cpu="2"),
        make_pod("batch").uid("batch").node("n2").priority(1).label("tier", "batch").req(cpu="2"),
    ]
    return nodes, pods


def test_the_readme_plugin_evicts_only_batch_pods() -> None:
    evict_batch = readme_example()
    nodes, pods = full_nodes()
    with plugin_framework("NodeResourcesFit", evict_batch, nodes=nodes, pods=pods) as fw:
        out = fw.post_filter(make_pod("p").uid("p").priority(10).req(cpu="1"))
    # DefaultPreemption would take the first node as well; this plugin may only use n2
    assert out.status.code is Code.SUCCESS, out.status.message()
    assert out.nominated_node_name == "n2"


def test_the_readme_plugin_says_why_no_node_helps() -> None:
    evict_batch = readme_example()
    nodes, pods = full_nodes()
    pods = [pods[0], make_pod("svc2").uid("svc2").node("n2").priority(1).req(cpu="2")]  # no batch pod
    with plugin_framework("NodeResourcesFit", evict_batch, nodes=nodes, pods=pods) as fw:
        out = fw.post_filter(make_pod("p").uid("p").priority(10).req(cpu="1"))
    assert out.status.code is Code.UNSCHEDULABLE
    # both nodes are full (Unschedulable: tried), neither has a batch pod to preempt
    assert out.status.message() == "0/2 nodes are available: 2 no batch pods to preempt."
    assert out.nominated_node_name in ("", None)


class FewestVictimsLast:
    """Hooks given as an object: every node, and the node with MORE victims preferred (an
    ordered_score_funcs that overrides kube-scheduler's criteria)."""

    def __init__(self, evaluator_handle: Any) -> None:
        self.evaluator = PreemptionEvaluator("Odd", evaluator_handle, self, async_preemption=False)
        self.asked: list[int] = []

    def get_offset_and_num_candidates(self, num_nodes: int, pod: PodInfo) -> tuple[int, int]:
        self.asked.append(num_nodes)
        return 0, num_nodes

    def pod_eligible_to_preempt_others(self, pod: PodInfo, nominated_node_status: Status | None) -> tuple[bool, str]:
        return pod.priority > 0, "priority 0 never preempts"

    async def select_victims_on_node(
        self, state: CycleState, pod: PodInfo, node: NodeInfo, pdbs: Any
    ) -> tuple[list[PodInfo], int, Status | None]:
        victims = [p for p in node.pods if p.priority < pod.priority]
        PreemptionEvaluator.sort_by_importance(victims)
        return victims, 0, Status(Code.SUCCESS) if victims else Status(Code.UNSCHEDULABLE, "none")

    def ordered_score_funcs(self, nodes_to_victims: Mapping[str, PreemptionCandidate]) -> list[Any]:
        return [lambda node: len(nodes_to_victims[node].victims)]


def test_hooks_given_as_an_object_decide_eligibility_and_the_choice() -> None:
    nodes = [make_node(n).capacity(cpu="2", pods="10") for n in ("n1", "n2")]
    pods = [
        make_pod("a").uid("a").node("n1").priority(1).req(cpu="2"),
        make_pod("b").uid("b").node("n2").priority(1).req(cpu="1"),
        make_pod("c").uid("c").node("n2").priority(2).req(cpu="1"),
    ]
    with plugin_framework("NodeResourcesFit", nodes=nodes, pods=pods) as fw:
        hooks = FewestVictimsLast(fw.framework)
        as_hooks: PreemptionInterface = hooks  # a structural match: no need to derive from it
        assert as_hooks is hooks.evaluator.interface
        unschedulable = {"n1": Status(Code.UNSCHEDULABLE), "n2": Status(Code.UNSCHEDULABLE)}
        result, status = fw.run(
            hooks.evaluator.preempt(CycleState(), make_pod("p").uid("p").priority(5).info(), unschedulable)
        )
        assert status.code is Code.SUCCESS
        assert result is not None and result.nominated_node_name == "n2"  # two victims beat one
        assert hooks.asked == [2]
        _, refused = fw.run(
            hooks.evaluator.preempt(CycleState(), make_pod("q").uid("q").priority(0).info(), unschedulable)
        )
        assert (refused.code, refused.message()) == (Code.UNSCHEDULABLE, "priority 0 never preempts")


def test_an_evaluator_without_hooks_is_refused() -> None:
    with pytest.raises(TypeError, match="select_victims_on_node"):
        PreemptionEvaluator("Nothing", None)
