"""DefaultPreemption's dry run by arithmetic (kubesched.plugins.preemption.arithmetic) against the
full dry run (copy node and state, run the Filter plugins after each change), on random clusters
under the default profile: the same candidates, victims, PDB violation counts and Statuses. Pods
give their cpu by container, at the pod level or (running ones) resized in flight, so that a
victim frees exactly what the node counted for it."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from fuzzing import fuzz_settings
from hypothesis import event, given
from hypothesis import strategies as st

from kubesched.backend.cache import Cache, Snapshot
from kubesched.config import load_config
from kubesched.framework.interface import CycleState
from kubesched.framework.status import Code, Status
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.plugins.preemption.arithmetic import ArithmeticVictims
from kubesched.plugins.preemption.default_preemption import DefaultPreemption
from kubesched.runtime.framework import Framework
from kubesched.runtime.registry import Registry, default_registry
from kubesched.testing import make_node, make_pod
from kubesched.testing.harness import ObjectListers

DEFAULT_PROFILE = load_config(None).profiles[0]


class FullDryRun(DefaultPreemption):
    """DefaultPreemption made to take the full dry run on every node (an override of
    ``select_victims_on_node`` turns the arithmetic off)."""

    async def select_victims_on_node(self, *args: Any) -> Any:
        return await super().select_victims_on_node(*args)


class Nominator:
    def __init__(self, by_node: dict[str, list[PodInfo]]) -> None:
        self.by_node = by_node

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        return list(self.by_node.get(node_name, ()))


CPU = st.sampled_from(["0", "100m", "500m", "1", "2", "3"])
LABELS = st.sampled_from([{}, {"app": "a"}, {"app": "b"}])
#: How a pod's requests are given: by its container, at the pod level, resized (running pods only).
SHAPES = st.sampled_from(["container", "container", "pod-level", "resized", "pod-level resized"])


@st.composite
def counted_as_1_37(draw: st.DrawFn, pod: dict[str, Any], running: bool = True) -> dict[str, Any]:
    """``pod`` with its cpu given as 1.37 may count it: a pod-level request (which replaces the
    container's), and for a running pod a resize in flight (the kubelet's allocation, maybe at
    the pod level too, maybe infeasible): a victim must free what it counted."""
    shape = draw(SHAPES)
    if not running:
        shape = shape.replace("resized", "").strip() or "container"
    event(f"{'running' if running else 'pending'}: {shape}")
    if "pod-level" in shape:
        pod["spec"]["resources"] = {"requests": {"cpu": draw(CPU)}}
    if "resized" in shape:
        status = pod.setdefault("status", {})
        status["containerStatuses"] = [
            {"name": c["name"], "allocatedResources": {"cpu": draw(CPU)}} for c in pod["spec"]["containers"]
        ]
        if "pod-level" in shape:
            status["allocatedResources"] = {"cpu": draw(CPU)}
            status["resources"] = {"requests": {"cpu": draw(CPU)}}
        if draw(st.integers(0, 3)) == 0:
            status["conditions"] = [{"type": "PodResizePending", "status": "True", "reason": "Infeasible"}]
    return pod


@st.composite
def cluster(draw: st.DrawFn) -> dict[str, Any]:
    n = draw(st.integers(1, 6))
    nodes = []
    for i in range(n):
        b = make_node(f"n{i}").capacity(
            cpu=draw(st.sampled_from(["2", "4"])), memory="8Gi", pods=str(draw(st.integers(2, 6)))
        )
        if draw(st.integers(0, 5)) == 0:
            b = b.taint("dedicated", "x")
        if draw(st.integers(0, 7)) == 0:
            b = b.unschedulable()
        nodes.append(b.obj())
    running = []
    for j in range(draw(st.integers(0, 14))):
        b = (
            make_pod(f"r{j}")
            .node(f"n{draw(st.integers(0, n - 1))}")
            .priority(draw(st.integers(0, 4)))
            .req(cpu=draw(CPU), memory=draw(st.sampled_from(["0", "1Gi", "3Gi"])))
            .labels(**draw(LABELS))
        )
        if draw(st.booleans()):
            b = b.set("status.startTime", f"2026-01-01T00:00:{draw(st.integers(0, 59)):02d}Z")
        running.append(draw(counted_as_1_37(b.obj())))
    pdbs = [
        {
            "kind": "PodDisruptionBudget",
            "metadata": {"name": f"pdb-{app}", "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"app": app}}},
            "status": {"disruptionsAllowed": draw(st.integers(0, 2))},
        }
        for app in draw(st.sets(st.sampled_from(["a", "b"])))
    ]
    preemptor = make_pod("preemptor").priority(draw(st.integers(1, 5))).req(cpu=draw(CPU), memory="1Gi")
    if draw(st.integers(0, 4)) == 0:
        preemptor = preemptor.toleration("dedicated", "x", "NoSchedule", "Equal")
    if draw(st.integers(0, 5)) == 0:
        preemptor = preemptor.host_port(8080)  # NodePorts in play: the full dry run everywhere
    nominated: dict[str, list[dict[str, Any]]] = {}
    for k in range(draw(st.integers(0, 3))):
        where = f"n{draw(st.integers(0, n - 1))}"
        p = make_pod(f"nom{k}").priority(draw(st.integers(0, 6))).req(cpu=draw(CPU)).obj()
        nominated.setdefault(where, []).append(draw(counted_as_1_37(p, running=False)))
    return {
        "nodes": nodes,
        "running": running,
        "pdbs": pdbs,
        "preemptor": draw(counted_as_1_37(preemptor.obj(), running=False)),
        "nominated": nominated,
    }


def summary(status: Status | None) -> Any:
    return None if status is None else (status.code, list(status.reasons), status.plugin)


async def dry_run(plugin_cls: type, c: dict[str, Any], offset: int) -> tuple[Any, bool]:
    cache = Cache()
    for node in c["nodes"]:
        cache.add_node(node)
    for p in c["running"]:
        cache.add_pod(PodInfo(p))
    snapshot = Snapshot()
    cache.update_snapshot(snapshot)
    registry = Registry()
    for entry in default_registry().entries():
        registry.register(plugin_cls if entry.name == DefaultPreemption.name else entry.cls, entry.name)
    fw = Framework(DEFAULT_PROFILE, registry)
    fw.set_snapshot(snapshot)
    fw.nominator = Nominator({k: [PodInfo(p) for p in v] for k, v in c["nominated"].items()})
    fw.listers = ObjectListers(c["pdbs"])
    plugin = fw.plugins[DefaultPreemption.name]
    plugin.offset_source = lambda n: offset % n
    pod = PodInfo(c["preemptor"])
    state = CycleState()
    _, status, _ = await fw.run_pre_filter(state, pod)
    assert status is None or status.is_success()
    nodes: list[NodeInfo] = list(snapshot.list())
    filtered = {ni.name: st for ni in nodes if (st := fw.run_filter(state, pod, ni)) is not None}
    arithmetic = ArithmeticVictims.for_cycle(fw, state, pod, plugin.is_preemption_allowed) is not None
    candidates, statuses, error = await plugin.find_candidates(state, nodes, pod, filtered)
    got = (
        [(cand.name, [v.name for v in cand.victims], cand.num_pdb_violations) for cand in candidates],
        {name: summary(s) for name, s in statuses.items()},
        error,
    )
    return got, arithmetic


@fuzz_settings(300)
@given(cluster(), st.integers(0, 10))
def test_the_arithmetic_dry_run_agrees_with_the_full_one(c: dict[str, Any], offset: int) -> None:
    fast, used = asyncio.run(dry_run(DefaultPreemption, c, offset))
    full, not_used = asyncio.run(dry_run(FullDryRun, c, offset))
    event("arithmetic" if used else "full dry run (a plugin in play looks at pods)")
    event(f"{len(fast[0])} candidate(s)")
    assert fast == full
    assert not_used == used  # the same cycle either way; only the override decides


def test_a_plugin_that_looks_at_pods_turns_the_arithmetic_off() -> None:
    c = {
        "nodes": [make_node("n0").capacity(cpu="1", memory="1Gi", pods="5").obj()],
        "running": [make_pod("r").node("n0").priority(0).req(cpu="1").obj()],
        "pdbs": [],
        "nominated": {},
    }
    plain = dict(c, preemptor=make_pod("p").priority(5).req(cpu="1").obj())
    with_port = dict(c, preemptor=make_pod("p").priority(5).req(cpu="1").host_port(80).obj())
    (cands, _, _), used = asyncio.run(dry_run(DefaultPreemption, plain, 0))
    assert used and cands == [("n0", ["r"], 0)]
    (cands, _, _), used = asyncio.run(dry_run(DefaultPreemption, with_port, 0))
    assert not used and cands == [("n0", ["r"], 0)]


def test_nodes_without_lower_priority_pods_are_passed_over_without_a_copy(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the arithmetic is off (the preemptor has a host port), a node whose pods all rank
    at least as high as the preemptor still gets the full dry run's answer, without copying it
    for a dry run."""
    nodes = [make_node(f"n{i}").capacity(cpu="1", memory="1Gi", pods="5").obj() for i in range(3)]
    c = {
        "nodes": nodes,
        "running": [
            make_pod("same").node("n0").priority(5).req(cpu="1").obj(),
            make_pod("higher").node("n1").priority(9).req(cpu="1").obj(),
            make_pod("lower").node("n2").priority(1).req(cpu="1").obj(),
        ],
        "pdbs": [],
        "nominated": {},
        "preemptor": make_pod("p").priority(5).req(cpu="1").host_port(80).obj(),
    }
    full, _ = asyncio.run(dry_run(FullDryRun, c, 0))
    dry_run_on: list[str] = []
    original = DefaultPreemption.select_victims_on_node

    async def watched(self: Any, state: Any, pod: Any, node: Any, pdbs: Any) -> Any:
        dry_run_on.append(node.name)
        return await original(self, state, pod, node, pdbs)

    monkeypatch.setattr(DefaultPreemption, "select_victims_on_node", watched)
    fast, used = asyncio.run(dry_run(DefaultPreemption, c, 0))
    assert not used and fast == full
    assert fast[0] == [("n2", ["lower"], 0)]
    assert fast[1] == {
        name: (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ["No preemption victims found for incoming pod"], "")
        for name in ("n0", "n1")
    }
    assert dry_run_on == ["n2"]
