"""The docs' placement plugins ("Writing a plugin", pod groups), run as written: enabled
under multiPoint they land at placementGenerate and placementScore, and on the real loop the
gang goes to the rack where it fits on the fewest nodes."""

from __future__ import annotations

import re
from typing import Any

from conftest import make_harness, profile, registry_with
from docs_pages import page_path

from kubesched.config import parse_config
from kubesched.framework.features import FeatureGates
from kubesched.scheduler import SchedulerOptions
from kubesched.testing import make_node, make_pod

PAGE = page_path("writing-a-plugin.md")
GATES = FeatureGates().replace(GenericWorkload=True)


def readme_plugins() -> dict[str, Any]:
    blocks = re.findall(r"```python\n(# my_plugins/racks\.py\n.*?)```", PAGE.read_text(), re.DOTALL)
    assert len(blocks) == 1, "the docs' placement example is gone"
    ns: dict[str, Any] = {}
    exec(compile(blocks[0], "writing-a-plugin.md:racks", "exec"), ns)
    return ns


def member(name: str) -> dict[str, Any]:
    pod = make_pod(name).req(cpu="1").obj()
    pod["spec"]["schedulingGroup"] = {"podGroupName": "train"}
    return pod


GANG = {
    "apiVersion": "scheduling.k8s.io/v1beta1",
    "kind": "PodGroup",
    "metadata": {"name": "train", "namespace": "default", "uid": "pg-train"},
    "spec": {"schedulingPolicy": {"gang": {"minCount": 4}}},
}


def test_multipoint_puts_them_at_the_placement_points() -> None:
    ns = readme_plugins()
    reg = registry_with(ns["ByRack"], ns["FewestNodes"])
    cfg = parse_config(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [{"plugins": {"multiPoint": {"enabled": [{"name": "ByRack"}, {"name": "FewestNodes"}]}}}],
        },
        registry=reg,
        feature_gates=GATES,
    )
    plugins = cfg.profiles[0].plugins
    assert [r.name for r in plugins["placementGenerate"]] == ["ByRack"]
    assert "FewestNodes" in [r.name for r in plugins["placementScore"]]
    assert "GangScheduling" in [r.name for r in plugins["placementFeasible"]]
    assert all(r.weight == 1 for r in plugins["placementScore"])


async def test_the_gang_goes_to_the_rack_with_the_fewest_nodes() -> None:
    """Rack a: four 1-CPU nodes; rack b: one 4-CPU node; rack c: too small. The gang of four
    fits in a and b; FewestNodes prefers b (one node)."""
    ns = readme_plugins()
    reg = registry_with(ns["ByRack"], ns["FewestNodes"])
    nodes = [make_node(f"a{i}").label("example.com/rack", "a").capacity(cpu="1", pods=10).obj() for i in range(4)]
    nodes.append(make_node("b0").label("example.com/rack", "b").capacity(cpu="4", pods=10).obj())
    nodes.append(make_node("c0").label("example.com/rack", "c").capacity(cpu="2", pods=10).obj())
    prof = profile(
        preEnqueue=["GangScheduling"],
        preFilter=["NodeResourcesFit"],
        filter=["NodeResourcesFit"],
        placementGenerate=["ByRack"],
        placementFeasible=["GangScheduling"],
        placementScore=[("FewestNodes", 1)],
    )
    options = SchedulerOptions(seed=1, record_results=True, feature_gates=GATES)
    h = await make_harness([prof], reg, options, objs=[*nodes, GANG, *(member(f"w{i}") for i in range(4))])
    assert await h.run_all() == 1
    assert [h.node_of(f"w{i}") for i in range(4)] == ["b0"] * 4


async def test_no_rack_holds_the_gang() -> None:
    ns = readme_plugins()
    reg = registry_with(ns["ByRack"], ns["FewestNodes"])
    nodes = [make_node(f"a{i}").label("example.com/rack", "a").capacity(cpu="1", pods=10).obj() for i in range(3)]
    nodes.append(make_node("b0").label("example.com/rack", "b").capacity(cpu="2", pods=10).obj())
    prof = profile(
        preEnqueue=["GangScheduling"],
        preFilter=["NodeResourcesFit"],
        filter=["NodeResourcesFit"],
        placementGenerate=["ByRack"],
        placementFeasible=["GangScheduling"],
        placementScore=[("FewestNodes", 1)],
    )
    options = SchedulerOptions(seed=1, record_results=True, feature_gates=GATES)
    h = await make_harness([prof], reg, options, objs=[*nodes, GANG, *(member(f"w{i}") for i in range(4))])
    await h.run_all()
    assert [h.node_of(f"w{i}") for i in range(4)] == [None] * 4
    messages = {h.scheduler.results[f"default/w{i}"].message for i in range(4)}
    assert (
        "0/2 placements are available, first placement status: minCount (4) cannot be satisfied: 3 scheduled, 0 remaining"
        in messages
    )
    assert h.scheduler.cache.assumed_count() == 0


async def test_the_nominated_placement_is_tried_first_and_taken() -> None:
    """Members nominated to rack a (where preemption made room) go there although FewestNodes
    prefers rack b: the placement holding their nominated nodes wins without scoring."""
    ns = readme_plugins()
    reg = registry_with(ns["ByRack"], ns["FewestNodes"])
    nodes = [make_node(f"a{i}").label("example.com/rack", "a").capacity(cpu="1", pods=10).obj() for i in range(4)]
    nodes.append(make_node("b0").label("example.com/rack", "b").capacity(cpu="4", pods=10).obj())
    pods = [member(f"w{i}") for i in range(4)]
    for i, p in enumerate(pods):
        p["status"] = {"nominatedNodeName": f"a{i}"}
    prof = profile(
        preEnqueue=["GangScheduling"],
        preFilter=["NodeResourcesFit"],
        filter=["NodeResourcesFit"],
        placementGenerate=["ByRack"],
        placementFeasible=["GangScheduling"],
        placementScore=[("FewestNodes", 1)],
    )
    options = SchedulerOptions(seed=1, record_results=True, feature_gates=GATES)
    h = await make_harness([prof], reg, options, objs=[*nodes, GANG, *pods])
    assert await h.run_all() == 1
    assert sorted(h.node_of(f"w{i}") for i in range(4)) == ["a0", "a1", "a2", "a3"]


async def test_a_hierarchy_takes_its_nominated_placement_first() -> None:
    """The same gang as a CompositePodGroup's only child: its members nominated to rack a go
    there although FewestNodes prefers rack b, as a standalone group's would."""
    ns = readme_plugins()
    reg = registry_with(ns["ByRack"], ns["FewestNodes"])
    nodes = [make_node(f"a{i}").label("example.com/rack", "a").capacity(cpu="1", pods=10).obj() for i in range(4)]
    nodes.append(make_node("b0").label("example.com/rack", "b").capacity(cpu="4", pods=10).obj())
    root = {
        "apiVersion": "scheduling.k8s.io/v1alpha3",
        "kind": "CompositePodGroup",
        "metadata": {"name": "job", "namespace": "default", "uid": "cpg-job"},
        "spec": {"schedulingPolicy": {"gang": {"minGroupCount": 1}}},
    }
    gang = {**GANG, "spec": {**GANG["spec"], "parentCompositePodGroupName": "job"}}
    pods = [member(f"w{i}") for i in range(4)]
    prof = profile(
        preEnqueue=["GangScheduling"],
        preFilter=["NodeResourcesFit"],
        filter=["NodeResourcesFit"],
        placementGenerate=["ByRack"],
        placementFeasible=["GangScheduling"],
        placementScore=[("FewestNodes", 1)],
    )
    gates = GATES.replace(CompositePodGroup=True, TopologyAwareWorkloadScheduling=True)
    options = SchedulerOptions(seed=1, record_results=True, feature_gates=gates)
    plain = await make_harness([prof], reg, options, objs=[*nodes, root, gang, *pods])
    assert await plain.run_all() == 1
    assert [plain.node_of(f"w{i}") for i in range(4)] == ["b0"] * 4  # without nominations: rack b
    pods = [member(f"w{i}") for i in range(4)]
    for i, p in enumerate(pods):
        p["status"] = {"nominatedNodeName": f"a{i}"}
    h = await make_harness([prof], reg, options, objs=[*nodes, root, gang, *pods])
    assert await h.run_all() == 1
    assert sorted(h.node_of(f"w{i}") for i in range(4)) == ["a0", "a1", "a2", "a3"]
