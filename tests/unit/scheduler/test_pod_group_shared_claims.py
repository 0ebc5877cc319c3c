"""A gang sharing one ResourceClaim made from its PodGroup's template (KEP-5729,
DRAWorkloadResourceClaims) on the real loop: the simulator's claim controller makes the group's
claim, the pod-group cycle places the members, the first member placed allocates the claim and
the others follow it to its node; the claim is reserved once, for the PodGroup."""

from __future__ import annotations

from typing import Any

from conftest import Harness, make_harness, profile

from kubesched.config import load_config
from kubesched.framework.features import FeatureGates
from kubesched.plugins.default_binder import DefaultBinder
from kubesched.plugins.dynamicresources.dynamic_resources import DynamicResources
from kubesched.plugins.gangscheduling import GangScheduling
from kubesched.plugins.noderesources.fit import NodeResourcesFit
from kubesched.plugins.podgrouppodscount import PodGroupPodsCount
from kubesched.plugins.priority_sort import PrioritySort
from kubesched.plugins.topologyaware import TopologyPlacementGenerator
from kubesched.runtime.framework import PluginRef
from kubesched.runtime.registry import Registry
from kubesched.scheduler import SchedulerOptions
from kubesched.sim.controllers import ControllerManager
from kubesched.sim.run.simulate import SimulationSettings, simulate
from kubesched.sim.scenario.reading import parse_scenario
from kubesched.testing import make_node, make_pod

Obj = dict[str, Any]
ON = FeatureGates().replace(GenericWorkload=True, DRAWorkloadResourceClaims=True)
OFF = FeatureGates().replace(GenericWorkload=True)
NODES = ("n0", "n1", "n2")
ZONE = "topology.kubernetes.io/zone"


def objects(cpu: str = "4") -> list[Obj]:
    out: list[Obj] = [make_node(n).capacity(cpu=cpu, pods=10).obj() for n in NODES]
    out += [
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": f"{n}-gpu"},
            "spec": {
                "driver": "gpu.example.com",
                "nodeName": n,
                "pool": {"name": n, "generation": 1, "resourceSliceCount": 1},
                "devices": [{"name": "gpu-0"}],
            },
        }
        for n in NODES
    ]
    out.append({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"}, "spec": {}})
    out.append(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaimTemplate",
            "metadata": {"name": "gpu", "namespace": "default"},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}},
        }
    )
    out.append(
        {
            "apiVersion": "scheduling.k8s.io/v1beta1",
            "kind": "PodGroup",
            "metadata": {"name": "train", "namespace": "default", "uid": "pg-train", "generation": 1},
            "spec": {
                "schedulingPolicy": {"gang": {"minCount": 3}},
                "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "gpu"}],
            },
        }
    )
    for i in range(3):
        pod = make_pod(f"w{i}").req(cpu="1").obj()
        pod["spec"]["schedulingGroup"] = {"podGroupName": "train"}
        pod["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": "gpu"}]
        out.append(pod)
    return out


def dra_gang_profile() -> Any:
    # NodeResourcesFit scores least allocated first: left alone, the members would spread.
    return profile(
        preEnqueue=["GangScheduling", "DynamicResources"],
        preFilter=["NodeResourcesFit", "DynamicResources"],
        filter=["NodeResourcesFit", "DynamicResources"],
        postFilter=["DynamicResources"],
        score=["NodeResourcesFit"],
        reserve=["DynamicResources"],
        preBind=["DynamicResources"],
        placementFeasible=["GangScheduling"],
    )


def plugins(*more: type) -> Registry:
    """The plugins the profiles name, registered here rather than from the installed entry points."""
    registry = Registry()
    for cls in (PrioritySort, DefaultBinder, GangScheduling, NodeResourcesFit, DynamicResources, *more):
        registry.register(cls)
    return registry


async def start(gates: FeatureGates, cpu: str = "4") -> tuple[Harness, ControllerManager]:
    options = SchedulerOptions(seed=1, record_results=True, feature_gates=gates)
    h = await make_harness([dra_gang_profile()], registry=plugins(), options=options, objs=objects(cpu))
    controllers = ControllerManager(h.store, gates)
    controllers.follow()
    controllers.run_pending()
    return h, controllers


def claims(h: Harness) -> list[Obj]:
    return h.store.list("ResourceClaim", "default")[0]


async def test_a_gang_sharing_a_claim_lands_where_the_claim_is_allocated() -> None:
    h, _ = await start(ON)
    (claim,) = claims(h)
    assert claim["metadata"]["ownerReferences"][0]["kind"] == "PodGroup"
    assert await h.run_all() == 1  # one pod-group cycle
    nodes = {h.node_of(f"w{i}") for i in range(3)}
    assert len(nodes) == 1 and None not in nodes
    (node,) = nodes
    (claim,) = claims(h)
    assert claim["status"]["reservedFor"] == [
        {"apiGroup": "scheduling.k8s.io", "resource": "podgroups", "name": "train", "uid": "pg-train"}
    ]
    terms = claim["status"]["allocation"]["nodeSelector"]["nodeSelectorTerms"]
    assert terms[0]["matchFields"][0]["values"] == [node]
    for i in range(3):
        statuses = h.pod(f"w{i}")["status"]["resourceClaimStatuses"]
        assert statuses == [{"name": "gpu", "resourceClaimName": claim["metadata"]["name"]}]


async def test_with_the_gate_off_each_member_allocates_its_own_claim() -> None:
    """DRAWorkloadResourceClaims off: the members' entries are their own template claims, one
    device each: one member per node, each claim reserved for its pod."""
    h, controllers = await start(OFF)
    assert len(claims(h)) == 3
    assert await h.run_all() == 1
    controllers.run_pending()
    assert sorted(h.node_of(f"w{i}") or "" for i in range(3)) == list(NODES)
    for claim in claims(h):
        owner = claim["metadata"]["ownerReferences"][0]
        assert owner["kind"] == "Pod"
        (ref,) = claim["status"]["reservedFor"]
        assert (ref["resource"], ref["name"]) == ("pods", owner["name"])
        terms = claim["status"]["allocation"]["nodeSelector"]["nodeSelectorTerms"]
        assert terms[0]["matchFields"][0]["values"] == [h.node_of(owner["name"])]


async def test_the_simulator_places_the_gang_on_the_claims_node_with_the_default_profile() -> None:
    """The same objects as a scenario (the default profile with both gates, the simulator's
    controllers): the members after the first are kept off the nodes the allocation excludes."""
    settings = SimulationSettings(feature_gates=ON)
    result = await simulate(load_config(None, feature_gates=ON).profiles, parse_scenario(objects()), settings)
    placed = {p["name"]: p for p in result.pods}
    assert {p["phase"] for p in placed.values()} == {"Scheduled"}
    (node,) = {p["node"] for p in placed.values()}
    others = [n for n in NODES if n != node]
    said = sorted(tuple(p["filter"][n]["DynamicResources"] for n in others) for p in placed.values())
    excluded = ("resourceclaim not available on the node",) * 2
    # The first member placed allocates (every node would do); the other two follow it.
    assert said == [("passed", "passed"), excluded, excluded]


async def test_a_gang_the_claims_node_cannot_hold_binds_none_and_lets_the_allocation_go() -> None:
    """Two CPUs a node: the claim's node holds two of the three members, the others may not go
    elsewhere; the gang is not placed, nothing is written to the claim, and no allocation is
    left in flight."""
    h, _ = await start(ON, cpu="2")
    await h.run_all()
    assert [h.node_of(f"w{i}") for i in range(3)] == [None] * 3
    (claim,) = claims(h)
    assert "allocation" not in (claim.get("status") or {})
    plugin = h.scheduler.frameworks["default-scheduler"].plugins["DynamicResources"]
    assert plugin._in_flight == {} and plugin._sharers == {}
    messages = sorted(h.scheduler.results[f"default/w{i}"].message for i in range(3))
    assert messages == [
        "0/3 nodes are available: 1 Insufficient cpu, 2 resourceclaim not available on the node.",
        "minCount (3) cannot be satisfied: 2 scheduled, 0 remaining",
        "minCount (3) cannot be satisfied: 2 scheduled, 0 remaining",
    ]


async def test_the_placement_algorithm_reapplies_the_shared_allocation() -> None:
    """TopologyAwareWorkloadScheduling: each zone is tried (the first member allocating there,
    the others sharing), undone, and the best one applied again; the members still end on the
    claim's node, the claim written once."""
    gates = ON.replace(TopologyAwareWorkloadScheduling=True)
    objs = objects()
    for o in objs:
        if o["kind"] == "Node":
            o["metadata"].setdefault("labels", {})[ZONE] = "a" if o["metadata"]["name"] != "n2" else "b"
        elif o["kind"] == "PodGroup":
            o["spec"]["schedulingConstraints"] = {"topology": [{"key": ZONE}]}
    prof = dra_gang_profile()
    prof.plugins["placementGenerate"] = [PluginRef("TopologyPlacementGenerator")]
    prof.plugins["placementScore"] = [PluginRef("PodGroupPodsCount", 1), PluginRef("NodeResourcesFit", 1)]
    registry = plugins(TopologyPlacementGenerator, PodGroupPodsCount)
    options = SchedulerOptions(seed=1, record_results=True, feature_gates=gates)
    h = await make_harness([prof], registry=registry, options=options, objs=objs)
    controllers = ControllerManager(h.store, gates)
    controllers.follow()
    controllers.run_pending()
    assert await h.run_all() == 1
    (node,) = {h.node_of(f"w{i}") for i in range(3)}
    assert node is not None
    (claim,) = claims(h)
    assert [r["resource"] for r in claim["status"]["reservedFor"]] == ["podgroups"]
    assert claim["status"]["allocation"]["nodeSelector"]["nodeSelectorTerms"][0]["matchFields"][0]["values"] == [node]
    plugin = h.scheduler.frameworks["default-scheduler"].plugins["DynamicResources"]
    assert plugin._in_flight == {} and plugin._sharers == {}
