"""The kit's pod-group points: PlacementGenerate, PlacementFeasible, PlacementScore and
PodGroupPostFilter of a plugin, driven through the runtime by ``PluginFramework``; the docs'
racks example and the in-tree GangScheduling among them."""

from __future__ import annotations

import re
from typing import Any, ClassVar

import pytest
from docs_pages import page_path

from kubesched.framework.podgroup import (
    Placement,
    PodGroupAssignments,
    PodGroupPostFilterResult,
    ProposedAssignment,
)
from kubesched.framework.status import Code, Status
from kubesched.plugins.gangscheduling import GangScheduling
from kubesched.testing import (
    PlacementGenerateOutcome,
    PodGroupBuilder,
    make_node,
    make_pod,
    make_pod_group,
    plugin_framework,
)

PAGE = page_path("writing-a-plugin.md")
RACK = "example.com/rack"


def readme_plugins() -> dict[str, Any]:
    """ByRack and FewestNodes, as the docs' "Pod groups: placement plugins" writes them."""
    blocks = re.findall(r"```python\n(# my_plugins/racks\.py\n.*?)```", PAGE.read_text(), re.DOTALL)
    assert len(blocks) == 1, "the docs' placement example is gone"
    ns: dict[str, Any] = {}
    exec(compile(blocks[0], "writing-a-plugin.md:racks", "exec"), ns)
    return ns


def racks() -> list[Any]:
    """Rack a: four nodes; rack b: one; rack c: two; n-free: no rack label."""
    nodes = [make_node(f"a{i}").label(RACK, "a") for i in range(4)]
    nodes.append(make_node("b0").label(RACK, "b"))
    nodes += [make_node(f"c{i}").label(RACK, "c") for i in range(2)]
    nodes.append(make_node("n-free"))
    return nodes


def train(min_count: int = 4) -> PodGroupBuilder:
    return make_pod_group("train", min_count=min_count, members=[make_pod(f"w{i}").req(cpu="1") for i in range(4)])


# --- the builder ----------------------------------------------------------------------------------


def test_the_builder_makes_a_pod_group_and_members_that_name_it() -> None:
    g = make_pod_group(
        "train", namespace="ml", min_count=2, members=[make_pod("w0"), make_pod("w1")], topology_key=RACK
    )
    g.priority(7)
    obj = g.obj()
    assert obj["kind"] == "PodGroup" and obj["apiVersion"] == "scheduling.k8s.io/v1beta1"
    assert obj["spec"]["schedulingPolicy"] == {"gang": {"minCount": 2}}
    pods = g.pods()
    assert [p["spec"]["schedulingGroup"] for p in pods] == [{"podGroupName": "train"}] * 2
    assert {p["metadata"]["namespace"] for p in pods} == {"ml"}
    info = g.info()
    assert (str(info.key), info.min_count, info.is_gang, info.topology_key, info.priority) == (
        "PodGroup/ml/train",
        2,
        True,
        RACK,
        7,
    )
    assert [pi.name for pi in info.pods] == ["w0", "w1"]
    assert [o["kind"] for o in g.objects()] == ["PodGroup", "Pod", "Pod"]
    assert make_pod_group("loose").info().is_gang is False
    assert make_pod("x").pod_group("loose").obj()["spec"]["schedulingGroup"] == {"podGroupName": "loose"}


# --- the docs' racks: PlacementGenerate and PlacementScore --------------------------------------


def test_by_rack_proposes_one_placement_per_rack() -> None:
    ns = readme_plugins()
    with plugin_framework(ns["ByRack"], nodes=racks()) as fw:
        placements = fw.placement_generate(train())
        assert [p.name for p in placements] == ["a", "b", "c"]
        details = fw.placement_generate_details(train())
        assert details.status is None
        assert details.nodes == {"a": ["a0", "a1", "a2", "a3"], "b": ["b0"], "c": ["c0", "c1"]}
        # within a parent placement (a group under a CompositePodGroup): only its nodes
        parent = Placement("half", fw.nodes(["a0", "c0", "c1"]))
        assert fw.placement_generate_details(train(), parent).nodes == {"a": ["a0"], "c": ["c0", "c1"]}


def test_fewest_nodes_scores_each_rack_by_the_nodes_its_members_use() -> None:
    ns = readme_plugins()
    with plugin_framework(ns["ByRack"], ns["FewestNodes"], nodes=racks()) as fw:
        g = train()
        a, b, c = fw.placement_generate(g)
        assignments = {
            "a": {"w0": "a0", "w1": "a1", "w2": "a2", "w3": "a3"},
            "b": {f"w{i}": "b0" for i in range(4)},
            "c": {"w0": "c0", "w1": "c0", "w2": "c1", "w3": "c1"},
        }
        assert fw.placement_scores(g, [a, b, c], assignments) == {"a": 25, "b": 100, "c": 50}
        details = fw.placement_score_details(g, [a, b, c], assignments)
        assert details.best == "b"
        assert details.final == {"FewestNodes": {"a": 25, "b": 100, "c": 50}}
        # the proposal handed to the plugin: the members' PodInfos, the placement, their nodes
        proposed = fw.proposal(g, b, assignments["b"])
        assert [(x.pod.name, x.node_name) for x in proposed.assignments] == [(f"w{i}", "b0") for i in range(4)]
        with pytest.raises(KeyError, match="not a member"):
            fw.proposal(g, b, {"stranger": "b0"})


def test_placement_score_weights_apply() -> None:
    ns = readme_plugins()
    with plugin_framework(ns["ByRack"], ns["FewestNodes"], nodes=racks(), weights={"FewestNodes": 3}) as fw:
        g = train()
        a, b, _ = fw.placement_generate(g)
        scores = fw.placement_scores(g, [a, b], {"a": {"w0": "a0", "w1": "a1"}, "b": {"w0": "b0"}})
        assert scores == {"a": 150, "b": 300}


class Normalized:
    """PlacementScore with a normalization: raw scores are node counts, scaled to 0..100."""

    name: ClassVar[str] = "Normalized"

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    def score_placement(self, state: Any, group: Any, assignments: PodGroupAssignments) -> int:
        return len(assignments.placement.nodes) * 1000

    def normalize_placement_scores(self, state: Any, group: Any, scores: list[Any]) -> None:
        top = max(s.score for s in scores) or 1
        for s in scores:
            s.score = s.score * 100 // top


class OutOfRange:
    name: ClassVar[str] = "OutOfRange"

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    def score_placement(self, state: Any, group: Any, assignments: PodGroupAssignments) -> int:
        return 101


def test_normalization_and_the_range_check_run_as_the_cycle_runs_them() -> None:
    ns = readme_plugins()
    with plugin_framework(ns["ByRack"], Normalized, nodes=racks()) as fw:
        placements = fw.placement_generate(train())
        assert fw.placement_scores(train(), placements) == {"a": 100, "b": 25, "c": 50}
    with plugin_framework(ns["ByRack"], OutOfRange, nodes=racks()) as fw:
        placements = fw.placement_generate(train())
        details = fw.placement_score_details(train(), placements)
        assert details.status is not None and details.status.code is Code.ERROR
        assert 'plugin "OutOfRange" returns an invalid score 101' in details.status.message()
        with pytest.raises(AssertionError, match="PlacementScore failed"):
            fw.placement_scores(train(), placements)


class Broken:
    name: ClassVar[str] = "Broken"

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    def generate_placements(self, state: Any, group: Any, parent: Placement) -> list[Placement]:
        raise RuntimeError("no racks today")


def test_a_failing_generator_is_the_groups_error() -> None:
    with plugin_framework(Broken, nodes=racks()) as fw:
        details = fw.placement_generate_details(train())
        assert isinstance(details, PlacementGenerateOutcome)
        assert details.placements == [] and details.status is not None
        assert details.status.code is Code.ERROR and details.status.plugin == "Broken"
        assert "no racks today" in details.status.message()
        with pytest.raises(AssertionError, match="PlacementGenerate failed"):
            fw.placement_generate(train())


def test_a_composite_pod_group_object_is_taken_as_one() -> None:
    with plugin_framework(GangScheduling, nodes=racks()) as fw:
        composite = {
            "apiVersion": "scheduling.k8s.io/v1alpha3",
            "kind": "CompositePodGroup",
            "metadata": {"name": "job", "namespace": "ml"},
            "spec": {"schedulingPolicy": {"gang": {"minGroupCount": 2}}},
        }
        info = fw.pod_group_info(composite)
        assert (str(info.key), info.is_composite, info.min_count) == ("CompositePodGroup/ml/job", True, 2)
        assert fw.pod_group_info(make_pod_group("leaf").obj()).key == ("PodGroup", "default", "leaf")


def test_without_a_generator_the_parent_is_the_one_placement() -> None:
    with plugin_framework(GangScheduling, nodes=racks()) as fw:
        (only,) = fw.placement_generate(train())
        assert only.name == "" and len(only.nodes) == 8


# --- GangScheduling's PlacementFeasible -------------------------------------------------------------


def test_gang_feasibility_before_and_after_each_member() -> None:
    with plugin_framework(GangScheduling, nodes=[make_node("n1")]) as fw:
        g = train(min_count=3)
        before = fw.placement_feasible(g)
        assert before is not None and before.is_wait()
        assert before.message() == "minCount (3) is not yet satisfied: 0 scheduled, 4 remaining"
        assert fw.placement_feasible(g, scheduled=3, remaining=1) is None
        cannot = fw.placement_feasible(g, scheduled=1, remaining=1)
        assert cannot is not None and cannot.code is Code.UNSCHEDULABLE and cannot.plugin == "GangScheduling"
        assert cannot.message() == "minCount (3) cannot be satisfied: 1 scheduled, 1 remaining"

        steps = fw.placement_feasible_steps(g)
        assert [s is None for s in steps] == [False, False, False, True, True]
        # the second and third members find no node: the gang cannot be met, and the walk stops
        steps = fw.placement_feasible_steps(g, placed=[True, False, False, True])
        assert [s.code if s is not None else None for s in steps] == [
            Code.WAIT,
            Code.WAIT,
            Code.WAIT,
            Code.UNSCHEDULABLE,
        ]
        assert (
            steps[-1] is not None
            and steps[-1].message() == "minCount (3) cannot be satisfied: 1 scheduled, 1 remaining"
        )
        # members placed before the cycle count
        assert fw.placement_feasible_steps(g, placed=[True], already_scheduled=2) == [
            Status(Code.WAIT, "minCount (3) is not yet satisfied: 2 scheduled, 1 remaining"),
            None,
        ]


def test_a_basic_group_needs_one_member() -> None:
    with plugin_framework(GangScheduling, nodes=[make_node("n1")]) as fw:
        g = make_pod_group("loose", members=[make_pod("p0"), make_pod("p1")])
        assert fw.placement_feasible(g, scheduled=1, remaining=0) is None
        assert fw.placement_feasible_steps(g, placed=[False, False])[-1] == Status(
            Code.UNSCHEDULABLE, "minCount (1) cannot be satisfied: 0 scheduled, 0 remaining"
        )


class Vetoes:
    """PlacementFeasible: rack c is never good enough."""

    name: ClassVar[str] = "Vetoes"

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    def placement_feasible(self, state: Any, group: Any, progress: Any) -> Status | None:
        assert state.pod_group is group
        if state.placement is not None and state.placement.name == "c":
            return Status(Code.UNSCHEDULABLE, "rack c is too warm")
        return None


def test_the_first_unschedulable_answer_wins_over_a_wait() -> None:
    ns = readme_plugins()
    with plugin_framework(ns["ByRack"], GangScheduling, Vetoes, nodes=racks()) as fw:
        g = train()
        a, _, c = fw.placement_generate(g)
        on_a = fw.placement_feasible(g, a)
        assert on_a is not None and on_a.is_wait() and on_a.plugin == "GangScheduling"
        on_c = fw.placement_feasible(g, c)
        assert on_c == Status(Code.UNSCHEDULABLE, "rack c is too warm")
        assert on_c is not None and on_c.plugin == "Vetoes"


class Remembers:
    """PlacementFeasible notes the members placed in the placement's state; PlacementScore reads it."""

    name: ClassVar[str] = "Remembers"

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    def placement_feasible(self, state: Any, group: Any, progress: Any) -> None:
        state.write("placed", progress.scheduled)
        state.write("asked", state.get("asked", 0) + 1)

    def score_placement(self, state: Any, group: Any, assignments: Any) -> int:
        return int(state.get("placed", 0)) * 10


def test_feasible_and_score_of_a_placement_share_its_state() -> None:
    ns = readme_plugins()
    with plugin_framework(ns["ByRack"], Remembers, nodes=racks()) as fw:
        g = train()
        a, b, _ = fw.placement_generate(g)
        fw.placement_feasible_steps(g, a, placed=[True, True, True, True])
        fw.placement_feasible_steps(g, b, placed=[True, False, False, False])
        assert fw.placement_scores(g, [a, b]) == {"a": 40, "b": 10}
        # a walk is one evaluation: a second one starts from a fresh placement state
        fw.placement_feasible_steps(g, a)
        assert fw.placement_state(g, a).get("asked") == 5
        # single calls build on the placement's state
        fw.placement_feasible(g, a, scheduled=4, remaining=0)
        assert fw.placement_state(g, a).get("asked") == 6
        fw.new_group_cycle(g)
        assert fw.placement_scores(g, [a, b]) == {"a": 0, "b": 0}


def test_pod_groups_on_the_handle_let_gang_pre_enqueue_and_permit_count() -> None:
    g = train(min_count=3)
    pods = g.pods()
    few = make_pod_group("few", min_count=3, members=[make_pod("f0")])
    with plugin_framework(GangScheduling, nodes=[make_node("n1")], pod_groups=[g, few]) as fw:
        assert fw.pre_enqueue(pods[0]) is None
        quorum = fw.pre_enqueue(few.pods()[0])
        assert (
            quorum is not None
            and quorum.message() == "waiting for minCount pods from a gang to appear in scheduling queue"
        )
        absent = fw.pre_enqueue(make_pod("stray").pod_group("nobody"))
        assert absent is not None and 'pod group "nobody"' in absent.message()
        held = fw.permit(pods[0], "n1")
        assert held is not None and held.is_wait()
    with plugin_framework(GangScheduling, nodes=[make_node("n1")]) as fw:
        # without pod groups the handle knows none
        assert fw.pre_enqueue(pods[0]) is not None


# --- PodGroupPostFilter -------------------------------------------------------------------------------


class MakesRoom:
    """PodGroupPostFilter: asks the cycle to place the group again and nominates where it went."""

    name: ClassVar[str] = "MakesRoom"

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    async def pod_group_post_filter(self, state: Any, group: Any, schedule: Any) -> Any:
        assignments, status = await schedule()
        if status is not None:
            return None, Status(Code.UNSCHEDULABLE, f"no room: {status.message()}")
        nominated = {a.pod.key: a.node_name for a in assignments.assignments}
        return PodGroupPostFilterResult(nominated), None


def test_pod_group_post_filter_with_the_schedule_a_test_gives() -> None:
    with plugin_framework(MakesRoom, nodes=[make_node("n1"), make_node("n2")]) as fw:
        g = make_pod_group("pair", min_count=2, members=[make_pod("p0"), make_pod("p1")])
        fits = fw.pod_group_post_filter(g, {"p0": "n1", "p1": "n2"})
        assert fits.status.is_success() and fits.status.plugin == "MakesRoom"
        assert fits.nominated == {"default/p0": "n1", "default/p1": "n2"}
        nowhere = fw.pod_group_post_filter(g)
        assert nowhere.status.code is Code.UNSCHEDULABLE and nowhere.nominated == {}
        assert nowhere.status.message() == "no room: pod group is unschedulable"
        told = fw.pod_group_post_filter(g, Status(Code.UNSCHEDULABLE, "still full"))
        assert told.status.message() == "no room: still full"

        calls: list[str] = []

        async def schedule() -> tuple[PodGroupAssignments | None, Status | None]:
            calls.append("schedule")
            info = fw.pod_group_info(g)
            return PodGroupAssignments(fw.whole_cluster(), [ProposedAssignment(info.pods[0], "n2")]), None

        assert fw.pod_group_post_filter(g, schedule).nominated == {"default/p0": "n2"}
        assert calls == ["schedule"]


async def test_the_async_twins_run_on_the_tests_loop() -> None:
    ns = readme_plugins()
    fw = plugin_framework(ns["ByRack"], ns["FewestNodes"], GangScheduling, nodes=racks())
    g = train()
    placements = await fw.aplacement_generate(g)
    assert [p.name for p in placements] == ["a", "b", "c"]
    assert (await fw.aplacement_feasible(g, placements[1], scheduled=4, remaining=0)) is None
    assert len(await fw.aplacement_feasible_steps(g, placements[0])) == 5
    assert await fw.aplacement_scores(g, placements[:2], {"a": {"w0": "a0", "w1": "a1"}}) == {"a": 50, "b": 100}
    outcome = await fw.apod_group_post_filter(g)
    assert outcome.status.code is Code.UNSCHEDULABLE
