"""Workload-aware preemption on the real loop (GenericWorkload): a gang that fits nowhere
preempts as one preemptor, victims chosen across the cluster, the fewest units kept out."""

from __future__ import annotations

from typing import Any

from conftest import Harness, make_harness, profile

from kubesched.framework.features import FeatureGates
from kubesched.scheduler import SchedulerOptions
from kubesched.testing import make_node, make_pod

GATES = FeatureGates().replace(GenericWorkload=True)


def pod_group(name: str, min_count: int, priority: int | None = None, **spec: Any) -> dict[str, Any]:
    s: dict[str, Any] = {"schedulingPolicy": {"gang": {"minCount": min_count}}, **spec}
    if priority is not None:
        s["priority"] = priority
    return {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": "default", "uid": f"pg-{name}"},
        "spec": s,
    }


def pod(name: str, cpu: str, priority: int, group: str = "", node: str = "", **spec: Any) -> dict[str, Any]:
    b = make_pod(name).req(cpu=cpu).priority(priority)
    if node:
        b = b.node(node)
    obj = b.obj()
    if group:
        obj["spec"]["schedulingGroup"] = {"podGroupName": group}
    obj["spec"].update(spec)
    return obj


async def harness(*objs: Any) -> Harness:
    prof = profile(
        preEnqueue=["GangScheduling"],
        preFilter=["NodeResourcesFit"],
        filter=["NodeResourcesFit"],
        placementFeasible=["GangScheduling"],
        podGroupPostFilter=["DefaultPreemption"],
    )
    options = SchedulerOptions(seed=1, record_results=True, feature_gates=GATES)
    return await make_harness([prof], options=options, objs=objs)


def alive(h: Harness, *names: str) -> list[str]:
    items, _ = h.store.list("Pod")
    present = {p["metadata"]["name"] for p in items}
    return [n for n in names if n in present]


async def test_a_gang_preempts_just_enough_lower_priority_pods_then_binds() -> None:
    """Three nodes of 4 CPUs, each full of 1-CPU low-priority pods; a gang of two 4-CPU pods
    needs two whole nodes: eight victims, the other four spared; then the gang binds."""
    nodes = [make_node(f"n{i}").capacity(cpu="4", pods=20).obj() for i in range(3)]
    lows = [pod(f"low-{i}-{j}", "1", 0, node=f"n{i}") for i in range(3) for j in range(4)]
    gang = [pod(f"w{i}", "4", 100, group="train") for i in range(2)]
    h = await harness(*nodes, *lows, pod_group("train", 2, priority=100), *gang)
    await h.run_all()
    names = [p["metadata"]["name"] for p in lows]
    assert len(alive(h, *names)) == 4
    survivors = {h.node_of(n) for n in alive(h, *names)}
    assert len(survivors) == 1
    # the gang, nominated, is tried again once its backoff is over: it binds there
    bound = {await h.wait_for(lambda: h.node_of("w0")), await h.wait_for(lambda: h.node_of("w1"))}
    assert None not in bound and len(bound) == 2 and not bound & survivors


async def test_a_group_disrupted_as_a_whole_goes_as_one_unit() -> None:
    """A low gang with disruptionMode all has one pod on each node; the preemptor needs one node:
    both of the low gang's pods go, though one would have been enough."""
    nodes = [make_node(f"n{i}").capacity(cpu="2", pods=20).obj() for i in range(2)]
    low_group = pod_group("low", 2, priority=0, disruptionMode={"all": {}})
    lows = [pod("l0", "2", 0, group="low", node="n0"), pod("l1", "2", 0, group="low", node="n1")]
    gang = [pod("w0", "2", 100, group="train")]
    h = await harness(*nodes, low_group, *lows, pod_group("train", 1, priority=100), *gang)
    await h.run_all()
    assert alive(h, "l0", "l1") == []
    assert await h.wait_for(lambda: h.node_of("w0")) in ("n0", "n1")


async def test_a_single_disruption_group_loses_only_what_is_needed() -> None:
    nodes = [make_node(f"n{i}").capacity(cpu="2", pods=20).obj() for i in range(2)]
    lows = [pod("l0", "2", 0, group="low", node="n0"), pod("l1", "2", 0, group="low", node="n1")]
    gang = [pod("w0", "2", 100, group="train")]
    h = await harness(*nodes, pod_group("low", 2, priority=0), *lows, pod_group("train", 1, priority=100), *gang)
    await h.run_all()
    assert len(alive(h, "l0", "l1")) == 1


async def test_never_preempts_nothing_and_says_why() -> None:
    nodes = [make_node("n0").capacity(cpu="2", pods=20).obj()]
    lows = [pod("l0", "2", 0, node="n0")]
    gang = [pod("w0", "2", 100, group="train", preemptionPolicy="Never")]
    h = await harness(*nodes, *lows, pod_group("train", 1, priority=100), *gang)
    await h.run_all()
    assert alive(h, "l0") == ["l0"]
    assert h.node_of("w0") is None
    assert (
        "pod group preemption: not eligible due to preemptionPolicy=Never." in h.scheduler.results["default/w0"].message
    )


async def test_no_lower_priority_pods_no_victims() -> None:
    nodes = [make_node("n0").capacity(cpu="2", pods=20).obj()]
    lows = [pod("l0", "2", 100, node="n0")]
    gang = [pod("w0", "2", 100, group="train")]
    h = await harness(*nodes, *lows, pod_group("train", 1, priority=100), *gang)
    await h.run_all()
    assert alive(h, "l0") == ["l0"]
    assert "pod group preemption: No preemption victims found for incoming preemptor" in (
        h.scheduler.results["default/w0"].message
    )


async def test_victims_a_budget_protects_are_given_back_first() -> None:
    """One node of 2 CPUs holds ``guarded`` (priority 10, its PodDisruptionBudget allows no
    disruption) and ``plain`` (priority 20); a gang of one 1-CPU pod needs one of them gone.
    Most important first alone would spare ``plain`` and take ``guarded``, violating the budget;
    budget-protected victims are given back first, so ``plain`` goes."""
    nodes = [make_node("n0").capacity(cpu="2", pods=20).obj()]
    guarded = pod("guarded", "1", 10, node="n0")
    guarded["metadata"]["labels"] = {"app": "guarded"}
    budget = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "guard", "namespace": "default"},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "guarded"}}},
        "status": {"disruptionsAllowed": 0},
    }
    gang = [pod("w0", "1", 100, group="train")]
    h = await harness(*nodes, budget, guarded, pod("plain", "1", 20, node="n0"), pod_group("train", 1, 100), *gang)
    await h.run_all()
    assert alive(h, "guarded", "plain") == ["guarded"]
    assert await h.wait_for(lambda: h.node_of("w0")) == "n0"
