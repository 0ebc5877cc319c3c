"""Opportunistic batching (upstream KEP-5598, kube-scheduler 1.37; ``kubesched.scheduler.batching``).

Ported from upstream's ``pkg/scheduler/framework/runtime/batch_test.go`` (TestBatchBasic,
TestBatchRescore, TestBatchRescoreChain and TestBatchMetricsOtherPaths, at the level of
:class:`OpportunisticBatching` with a real framework and upstream's one-"b"-pod-per-node test
filter) and ``test/integration/scheduler/batch/batch_test.go`` (TestBatchScenarios, as real
scheduling through ``simulate``), plus the scheduler-level rules (signatures, profiles, expiry),
the ``--feature-gates`` flag and the Prometheus counters.

A pod that used a hint was filtered on that one node and never scored: the report shows it
(``filter`` has one node, ``score`` is empty), which is how the simulated scenarios tell which
pods were batched.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import json
import logging
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from conftest import registry_with
from fuzzing import fuzz_settings
from hypothesis import given
from hypothesis import strategies as st

from kubesched.cluster.memory import InMemoryCluster
from kubesched.cluster.store import Store
from kubesched.config import load_config
from kubesched.config.feature_gates import KNOWN_GATES, FeatureGateError, parse_feature_gates
from kubesched.framework.features import FeatureGates
from kubesched.framework.interface import CycleState, SignPlugin
from kubesched.framework.status import Status
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.runtime.framework import Framework, PluginRef, ProfileSpec
from kubesched.runtime.registry import Registry, default_registry
from kubesched.scheduler import Scheduler, SchedulerOptions
from kubesched.scheduler.batching import (
    EMPTY_LIST,
    HINT_NOT_USED,
    HINT_USED,
    MAX_BATCH_AGE,
    NO_HINT,
    POD_NOT_BATCHABLE,
    STORED,
    OpportunisticBatching,
)
from kubesched.scheduler.observer import NullObserver
from kubesched.server.metrics import PrometheusObserver
from kubesched.sim.run.simulate import ManualClock, SimulationResult, SimulationSettings, simulate
from kubesched.sim.scenario.reading import load_scenario, parse_scenario
from kubesched.testing import make_node, make_pod
from kubesched.testing.builders import PodBuilder

REPO = Path(__file__).resolve().parents[2]
NO_TOPOLOGY_DEFAULTS = REPO / "benchmarks" / "no-topology-defaults.yaml"
#: The default profile without PodTopologySpread's system defaults: pods can be signed.
BATCHABLE = load_config(NO_TOPOLOGY_DEFAULTS).profiles
#: The default configuration: System default spreading makes every pod unsignable.
DEFAULT = load_config(None).profiles
HOSTNAME = "kubernetes.io/hostname"
PROFILE = "default-scheduler"


def renamed(spec: ProfileSpec, name: str, extra_filters: tuple[str, ...] = ()) -> ProfileSpec:
    """``spec`` under another schedulerName, with ``extra_filters`` appended to its Filter plugins."""
    plugins = {point: list(refs) for point, refs in spec.plugins.items()}
    plugins["filter"] = [*plugins.get("filter", []), *(PluginRef(n) for n in extra_filters)]
    return dataclasses.replace(spec, scheduler_name=name, plugins=plugins)


#: Upstream's integration pods prefer their nodes in this order.
PREFER = ("n1", "n2", "n3")
#: Required node affinity that NodeAffinity's PreFilter turns into node names.
ONLY_N1_TO_N3 = {
    "nodeSelectorTerms": [
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [n]}]} for n in ("n1", "n2", "n3")
    ]
}
#: Upstream's integration setup: the batchable default profile and a copy named ``mysched``.
TWO_PROFILES = [BATCHABLE[0], renamed(BATCHABLE[0], "mysched")]


# --- objects -------------------------------------------------------------------------------------


def cpu_node(name: str, cpu: str) -> dict[str, Any]:
    """Nodes that differ only in CPU: LeastAllocated and BalancedAllocation rank them strictly."""
    return make_node(name).capacity(cpu=cpu, memory="8Gi", pods="110").obj()


def slot_node(name: str, max_pods: int, **labels: str) -> dict[str, Any]:
    """Upstream's integration nodes: 100 CPUs, 4Gi, room for ``max_pods`` pods."""
    return make_node(name).capacity(cpu="100", memory="4Gi", pods=str(max_pods)).labels(**labels).obj()


def cpu_pod(name: str, cpu: str, scheduler: str = PROFILE) -> PodBuilder:
    return make_pod(name).req(cpu=cpu, memory="1Gi").scheduler(scheduler)


def slot_pod(
    name: str,
    prefer: tuple[str, ...] = (),
    scheduler: str = PROFILE,
    nominated: str | None = None,
    **node_selector: str,
) -> PodBuilder:
    """Upstream's integration pods: 10 CPUs, 4Mi, preferring ``prefer`` with weights n, n-1, ..., 1
    (so the order of the nodes is unambiguous)."""
    b = make_pod(name).req(cpu="10", memory="4Mi").scheduler(scheduler)
    for i, node in enumerate(prefer):
        b.preferred_node_affinity(len(prefer) - i, HOSTNAME, [node])
    if node_selector:
        b.node_selector(**node_selector)
    if nominated:
        b.set("status.nominatedNodeName", nominated)
    return b


def missing_claim(name: str) -> PodBuilder:
    """A :func:`cpu_pod` of 3 CPUs whose claim does not exist: VolumeBinding's PreFilter rejects
    it before any hint is asked for."""
    return cpu_pod(name, "3").set("spec.volumes", [{"name": "data", "persistentVolumeClaim": {"claimName": "gone"}}])


# --- running scenarios -----------------------------------------------------------------------------


def run_sim(
    docs: list[dict[str, Any]],
    profiles: list[ProfileSpec] = BATCHABLE,
    batching: bool = True,
    columns: bool = True,
    extenders: list[Any] | None = None,
) -> SimulationResult:
    """Simulate ``docs``; ``columns`` is ``SimulationSettings.batch`` (Filter and Score over the
    node columns, or node by node)."""
    scenario = parse_scenario(copy.deepcopy(docs))
    settings = SimulationSettings(feature_gates=FeatureGates({"OpportunisticBatching": batching}), batch=columns)
    return asyncio.run(simulate(profiles, scenario, settings, extenders=extenders))


def placements(result: SimulationResult) -> dict[str, str | None]:
    return {p["name"]: p.get("node") for p in result.pods}


def batched(result: SimulationResult, docs: list[dict[str, Any]]) -> list[str]:
    """Pods placed on a hint: filtered on one node only and not scored, though more nodes exist
    and the pod was not nominated (a nominated node that fits is used the same way)."""
    nominated = {d["metadata"]["name"] for d in docs if (d.get("status") or {}).get("nominatedNodeName")}
    many_nodes = len(result.nodes) > 1
    return [
        p["name"]
        for p in result.pods
        if p["phase"] == "Scheduled"
        and many_nodes
        and len(p["filter"]) == 1
        and not p["score"]
        and p["name"] not in nominated
    ]


def stats(result: SimulationResult) -> tuple[dict[str, int], dict[str, int]]:
    s = result.scheduler.batching.stats
    return dict(s.attempts), dict(s.flushes)


@dataclass
class Scenario:
    nodes: list[dict[str, Any]]
    pods: list[PodBuilder]
    #: pod -> node (None: unschedulable), in the order the pods are created
    expected: dict[str, str | None]
    batched: list[str]
    attempts: dict[str, int]
    flushes: dict[str, int]
    #: what is left of each profile's batch at the end (profile -> cached nodes)
    left: dict[str, list[str]] = field(default_factory=dict)
    profiles: list[ProfileSpec] = field(default_factory=lambda: BATCHABLE)

    def docs(self) -> list[dict[str, Any]]:
        return [*self.nodes, *(p.obj() for p in self.pods)]


SCENARIOS: dict[str, Scenario] = {
    # --- TestBatchBasic, as real scheduling ---------------------------------------------------------
    # 3-CPU pods on nodes of 4, 5 and 5.5 CPUs: one per node, and the least allocated node first.
    "same signature gets a hint": Scenario(
        nodes=[cpu_node("n1", "4"), cpu_node("n2", "5"), cpu_node("n3", "5500m")],
        pods=[cpu_pod("p1", "3"), cpu_pod("p2", "3")],
        expected={"p1": "n3", "p2": "n2"},
        batched=["p2"],
        attempts={NO_HINT: 1, HINT_USED: 1},
        flushes={},
        left={PROFILE: ["n1"]},
    ),
    "different signature gets no hint": Scenario(
        nodes=[cpu_node("n1", "4"), cpu_node("n2", "5"), cpu_node("n3", "5500m")],
        pods=[cpu_pod("p1", "3"), cpu_pod("p2", "3500m")],
        expected={"p1": "n3", "p2": "n2"},
        batched=[],
        attempts={NO_HINT: 2},
        flushes={"pod_incompatible": 1},
        left={PROFILE: ["n1"]},
    ),
    "not one pod per node: the previous node still fits": Scenario(
        nodes=[cpu_node("n1", "4"), cpu_node("n2", "5"), cpu_node("n3", "5500m")],
        # 1.37 scores the previous pod's node again when it still fits and lets it compete with
        # the cached nodes (1.35 flushed the batch, node_not_full): an empty node still scores
        # best, so the pods land on distinct nodes as a full cycle would place them, batched.
        pods=[cpu_pod("p1", "1"), cpu_pod("p2", "1"), cpu_pod("p3", "1")],
        expected={"p1": "n3", "p2": "n2", "p3": "n1"},
        batched=["p2", "p3"],
        attempts={NO_HINT: 1, HINT_USED: 2},
        flushes={},
        left={PROFILE: ["n3", "n2"]},
    ),
    "previous pod rejected at PreFilter: no hint for the next": Scenario(
        nodes=[cpu_node("n1", "4"), cpu_node("n2", "5"), cpu_node("n3", "5500m")],
        pods=[cpu_pod("p1", "3"), missing_claim("stuck"), cpu_pod("p2", "3")],
        expected={"p1": "n3", "stuck": None, "p2": "n2"},
        batched=[],
        attempts={NO_HINT: 2},
        # 1.37: a pod that fails stores nothing, so the next finds the batch a cycle behind.
        flushes={"pod_skipped": 1},
        left={PROFILE: ["n1"]},
    ),
    "previous pod fits nowhere: no hint for the next": Scenario(
        nodes=[cpu_node("n1", "4"), cpu_node("n2", "5"), cpu_node("n3", "5500m")],
        pods=[cpu_pod("p1", "3"), cpu_pod("huge", "16"), cpu_pod("p2", "3")],
        expected={"p1": "n3", "huge": None, "p2": "n2"},
        batched=[],
        # Every pod asked for a hint and got none, the huge one too (it failed afterwards).
        attempts={NO_HINT: 3},
        # The huge pod is told apart by its signature before it fails.
        flushes={"pod_incompatible": 1},
        left={PROFILE: ["n1"]},
    ),
    "only one feasible node: nothing stored": Scenario(
        nodes=[cpu_node("small", "2"), cpu_node("big", "5500m")],
        pods=[cpu_pod("p1", "3"), cpu_pod("p2", "3")],
        expected={"p1": "big", "p2": None},
        batched=[],
        # p2 asked for a hint (and got none: there is no batch) before it failed.
        attempts={NO_HINT: 2},
        flushes={},
    ),
    "batch used up: the next pod finds the list empty": Scenario(
        nodes=[cpu_node("small", "2"), cpu_node("n2", "5"), cpu_node("n3", "5500m")],
        pods=[cpu_pod("p1", "3"), cpu_pod("p2", "3"), cpu_pod("p3", "3")],
        expected={"p1": "n3", "p2": "n2", "p3": None},
        batched=["p2"],
        # p3 got no hint, then failed.
        attempts={NO_HINT: 2, HINT_USED: 1},
        # p3: nothing is left of the batch, which upstream takes as no batch at all (no flush).
        flushes={},
        left={PROFILE: []},
    ),
    "two profiles interleaved: no batching between schedulers": Scenario(
        nodes=[cpu_node("n1", "4"), cpu_node("n2", "5"), cpu_node("n3", "5500m"), cpu_node("n4", "4500m")],
        pods=[
            cpu_pod("a1", "3"),
            cpu_pod("b1", "3", scheduler="mysched"),
            cpu_pod("a2", "3"),
            cpu_pod("b2", "3", scheduler="mysched"),
        ],
        expected={"a1": "n3", "b1": "n2", "a2": "n4", "b2": "n1"},
        batched=[],
        attempts={NO_HINT: 4},
        # A batch per profile, as upstream: b1 finds none of its own and flushes nothing; a2 and b2
        # each find their profile's batch a cycle too old.
        flushes={"pod_skipped": 2},
        left={PROFILE: ["n1"]},
        profiles=TWO_PROFILES,
    ),
    # --- TestBatchScenarios ---------------------------------------------------------------------------
    "one pod one node": Scenario(
        nodes=[slot_node("n1", 1)],
        pods=[slot_pod("p1")],
        expected={"p1": "n1"},
        batched=[],
        attempts={NO_HINT: 1},
        flushes={},
    ),
    "distinct pods on distinct nodes": Scenario(
        nodes=[slot_node("n3", 10, forpod="3"), slot_node("n2", 10, forpod="2"), slot_node("n1", 10, forpod="1")],
        pods=[slot_pod("p1", forpod="1"), slot_pod("p2", forpod="2"), slot_pod("p3", forpod="3")],
        expected={"p1": "n1", "p2": "n2", "p3": "n3"},
        batched=[],
        attempts={NO_HINT: 3},
        flushes={},
    ),
    "three pod batch": Scenario(
        nodes=[slot_node("n3", 1), slot_node("n2", 1), slot_node("n1", 1)],
        pods=[slot_pod(f"p{i}", PREFER) for i in (1, 2, 3)],
        expected={"p1": "n1", "p2": "n2", "p3": "n3"},
        batched=["p2", "p3"],
        attempts={NO_HINT: 1, HINT_USED: 2},
        flushes={},
        left={PROFILE: []},
    ),
    "PreFilter narrows the nodes: the hint is among them": Scenario(
        nodes=[*(slot_node(n, 1) for n in ("n4", "n3", "n2", "n1"))],
        pods=[slot_pod(f"p{i}", PREFER).required_node_affinity(ONLY_N1_TO_N3) for i in (1, 2, 3)],
        expected={"p1": "n1", "p2": "n2", "p3": "n3"},
        batched=["p2", "p3"],
        attempts={NO_HINT: 1, HINT_USED: 2},
        flushes={},
        left={PROFILE: []},
    ),
    "two consecutive batches": Scenario(
        nodes=[slot_node("n4", 1), slot_node("n3", 1), slot_node("n2", 1), slot_node("n1", 1)],
        pods=[
            slot_pod("p1", ("n1", "n2")),
            slot_pod("p2", ("n1", "n2")),
            slot_pod("p3", ("n4", "n3")),
            slot_pod("p4", ("n4", "n3")),
        ],
        expected={"p1": "n1", "p2": "n2", "p3": "n4", "p4": "n3"},
        batched=["p2", "p4"],
        attempts={NO_HINT: 2, HINT_USED: 2},
        flushes={"pod_incompatible": 1},
        left={PROFILE: []},
    ),
    # Upstream's "multiple pods per node means no batching" of 1.35: since 1.37 the previous
    # pod's node, which still fits, is scored again and wins: p2 and p4 are batched onto it.
    "multiple pods per node: the previous node is scored again": Scenario(
        nodes=[slot_node("n4", 2), slot_node("n3", 2), slot_node("n2", 2), slot_node("n1", 2)],
        pods=[
            slot_pod("p1", ("n1", "n2")),
            slot_pod("p2", ("n1", "n2")),
            slot_pod("p3", ("n4", "n3")),
            slot_pod("p4", ("n4", "n3")),
        ],
        expected={"p1": "n1", "p2": "n1", "p3": "n4", "p4": "n4"},
        batched=["p2", "p4"],
        attempts={NO_HINT: 2, HINT_USED: 2},
        flushes={"pod_incompatible": 1},
        left={PROFILE: ["n3", "n2"]},
    ),
    "nominated node trumps the hint": Scenario(
        nodes=[slot_node("n3", 1), slot_node("n2", 1), slot_node("n1", 1)],
        pods=[slot_pod("p1", PREFER), slot_pod("p2", PREFER, nominated="n3")],
        expected={"p1": "n1", "p2": "n3"},
        batched=[],
        attempts={NO_HINT: 2},
        # The hint is asked for before the nominated node is tried, as upstream: the batch is
        # flushed as pod_nominated though that node fits (see test_a_nominated_pod_flushes_as_pod_nominated).
        flushes={"pod_nominated": 1},
    ),
    "a nominated node that no longer fits: pod_nominated": Scenario(
        nodes=[slot_node("n3", 1), slot_node("n2", 1), slot_node("n1", 1)],
        # p2's nomination does not hold p1 back: p1 has the higher priority.
        pods=[slot_pod("p1", PREFER).priority(10), slot_pod("p2", PREFER, nominated="n1")],
        expected={"p1": "n1", "p2": "n2"},
        batched=[],
        attempts={NO_HINT: 2},
        flushes={"pod_nominated": 1},
        left={PROFILE: ["n3"]},
    ),
    "no batching between schedulers": Scenario(
        nodes=[slot_node("n3", 1), slot_node("n2", 1), slot_node("n1", 1)],
        pods=[slot_pod("p1", PREFER), slot_pod("p2", PREFER, scheduler="mysched")],
        expected={"p1": "n1", "p2": "n2"},
        batched=[],
        attempts={NO_HINT: 2},
        # mysched has no batch of its own; default-scheduler's is left alone (nothing flushed).
        flushes={},
        left={PROFILE: ["n2", "n3"], "mysched": ["n3"]},
        profiles=TWO_PROFILES,
    ),
}


@pytest.mark.parametrize("case", list(SCENARIOS.values()), ids=list(SCENARIOS))
def test_scenarios(case: Scenario) -> None:
    docs = case.docs()
    result = run_sim(docs, case.profiles)
    assert placements(result) == case.expected
    assert batched(result, docs) == case.batched
    assert stats(result) == (case.attempts, case.flushes)
    assert {profile: b.nodes for profile, b in result.scheduler.batching.batches.items()} == case.left
    # Every scenario orders its nodes unambiguously: batching places pods exactly where the
    # scheduler without it does.
    plain = run_sim(docs, case.profiles, batching=False)
    assert placements(plain) == case.expected
    assert batched(plain, docs) == []
    assert stats(plain) == ({}, {})
    assert plain.scheduler.batching.batches == {}
    # Filtering node by node instead of over the columns changes nothing.
    per_node = run_sim(docs, case.profiles, columns=False)
    assert placements(per_node) == case.expected
    assert batched(per_node, docs) == case.batched
    assert stats(per_node) == (case.attempts, case.flushes)
    assert {profile: b.nodes for profile, b in per_node.scheduler.batching.batches.items()} == case.left


def test_scenario_from_a_yaml_file(tmp_path: Path) -> None:
    """The three-pod batch, written as a scenario file and loaded as `kubesched simulate` does."""
    case = SCENARIOS["three pod batch"]
    path = tmp_path / "scenario.yaml"
    path.write_text(yaml.safe_dump_all(case.docs()))
    result = asyncio.run(
        simulate(
            BATCHABLE,
            load_scenario(path),
            SimulationSettings(feature_gates=FeatureGates({"OpportunisticBatching": True})),
        )
    )
    assert placements(result) == case.expected
    assert result.scheduler.batching.stats.attempts == Counter({NO_HINT: 1, HINT_USED: 2})


def test_a_nominated_pod_flushes_as_pod_nominated() -> None:
    """As upstream, the hint is asked for before the nominated node is tried: the batch is flushed
    as pod_nominated even though the nominated node fits, and that node alone is filtered."""
    result = run_sim(SCENARIOS["nominated node trumps the hint"].docs())
    assert dict(result.scheduler.batching.stats.flushes) == {"pod_nominated": 1}
    assert dict(result.scheduler.batching.stats.attempts) == {NO_HINT: 2}
    assert result.scheduler.batching.batches == {}
    p2 = next(p for p in result.pods if p["name"] == "p2")
    assert p2["node"] == "n3"
    assert list(p2["filter"]) == ["n3"] and not p2["score"]


def test_a_pod_that_fails_to_schedule_counts_no_hint() -> None:
    result = run_sim(SCENARIOS["previous pod fits nowhere: no hint for the next"].docs())
    # p1, huge and p2 all passed PreFilter, asked for a hint and got none; huge then failed.
    assert [p["attempts"] for p in result.pods] == [1, 1, 1]
    assert [p["node"] for p in result.pods] == ["n3", None, "n2"]
    assert dict(result.scheduler.batching.stats.attempts) == {NO_HINT: 3}


# --- the default configuration and unsignable profiles ----------------------------------------------


def test_default_configuration_never_batches() -> None:
    """With the System default spreading every pod is unsignable, as upstream: same placements as
    without batching, no hint ever, nothing flushed (no batch is ever stored)."""
    docs = SCENARIOS["three pod batch"].docs()
    result = run_sim(docs, DEFAULT)
    assert placements(result) == placements(run_sim(docs, DEFAULT, batching=False))
    assert batched(result, docs) == []
    # Every pod is scheduled by a full cycle (the profile itself is signable).
    assert dict(result.scheduler.batching.stats.attempts) == {NO_HINT: 3}
    assert result.scheduler.batching.batches == {}
    assert dict(result.scheduler.batching.stats.flushes) == {}


class UninterestedExtender:
    """An extender interested in no pod: it changes no decision, but its mere presence turns
    batching off, as upstream."""

    name = "uninterested"

    def is_interested(self, pod: PodInfo) -> bool:
        return False

    def supports_preemption(self) -> bool:
        return False

    def is_binder(self) -> bool:
        return False

    def is_ignorable(self) -> bool:
        return True


def test_extenders_turn_batching_off() -> None:
    case = SCENARIOS["three pod batch"]
    docs = case.docs()
    result = run_sim(docs, extenders=[UninterestedExtender()])
    assert placements(result) == case.expected
    assert batched(result, docs) == []
    assert stats(result) == ({}, {})


class NoSign:
    """A Filter plugin without ``sign_pod`` (upstream's ``nosign``): its profile cannot batch."""

    name = "NoSign"

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        return None


class EmptySign(NoSign):
    """Signs no pod (upstream's ``emptysign``)."""

    name = "EmptySign"

    def sign_pod(self, pod: PodInfo) -> dict[str, Any] | None:
        return None


class BrokenSign(NoSign):
    """Fails to sign: a refusal, like upstream's logged error."""

    name = "BrokenSign"

    def sign_pod(self, pod: PodInfo) -> dict[str, Any] | None:
        raise RuntimeError("cannot sign")


class OpenSign(NoSign):
    """Reads nothing of the pod."""

    name = "OpenSign"

    def sign_pod(self, pod: PodInfo) -> dict[str, Any] | None:
        return {}


SIGN_REGISTRY = registry_with(NoSign, EmptySign, BrokenSign, OpenSign)


@pytest.mark.parametrize(
    "plugin, signable, signs",
    [
        (None, True, True),
        ("OpenSign", True, True),
        ("NoSign", False, False),
        ("EmptySign", True, False),
        ("BrokenSign", True, False),
    ],
    ids=["in-tree only", "plugin signing {}", "plugin without sign_pod", "sign_pod None", "sign_pod raises"],
)
def test_every_plugin_must_sign(plugin: str | None, signable: bool, signs: bool) -> None:
    extra = (plugin,) if plugin else ()
    fw = Framework(renamed(BATCHABLE[0], PROFILE, extra), SIGN_REGISTRY)
    assert isinstance(fw.plugins.get(plugin or "NodeResourcesFit"), SignPlugin) is (plugin != "NoSign")
    assert fw.signable is signable
    signature = fw.sign_pod(cpu_pod("p", "1").info())
    assert (signature is not None) is signs


def test_the_default_profile_is_signable_but_signs_no_pod() -> None:
    fw = Framework(DEFAULT[0], default_registry())
    assert fw.signable is True
    assert fw.sign_pod(cpu_pod("p", "1").info()) is None
    assert Framework(BATCHABLE[0], default_registry()).sign_pod(cpu_pod("p", "1").info()) is not None


# --- driving a Scheduler pod by pod, as upstream's integration test does ----------------------------


@dataclass
class Driven:
    scheduler: Scheduler
    placed: dict[str, str | None]
    #: pods placed on a hint (the hint_used counter went up during their cycle)
    hinted: list[str]


async def drive(
    profiles: list[ProfileSpec],
    nodes: list[dict[str, Any]],
    pods: list[PodBuilder],
    *,
    registry: Registry | None = None,
    observer: Any = None,
    before_each: Callable[[int, ManualClock, Store], None] | None = None,
) -> Driven:
    """Create each pod, schedule it and let its binding finish before creating the next;
    ``before_each(i, clock, store)`` runs before the i-th pod is created."""
    store = Store()
    cluster = InMemoryCluster(store)
    clock = ManualClock(100.0)
    for node in nodes:
        store.create("Node", node)
    options = SchedulerOptions(seed=0, record_results=True, feature_gates=FeatureGates({"OpportunisticBatching": True}))
    sched = Scheduler(profiles, cluster, options, registry=registry, clock=clock, observer=observer)
    await sched.start()
    hinted: list[str] = []
    for i, pod in enumerate(pods):
        if before_each is not None:
            before_each(i, clock, store)
            await cluster.wait_delivered()
        obj = pod.obj()
        store.create("Pod", obj)
        await cluster.wait_delivered()
        qpi = sched.queue.pop_nowait()
        assert qpi is not None and qpi.pod_info.name == obj["metadata"]["name"]
        used = sched.batching.stats.attempts[HINT_USED]
        await sched.schedule_one(qpi)
        await sched.wait_for_bindings()
        await cluster.wait_delivered()
        if sched.batching.stats.attempts[HINT_USED] > used:
            hinted.append(qpi.pod_info.name)
    placed = {p.obj()["metadata"]["name"]: None for p in pods}
    for name in placed:
        placed[name] = store.get("Pod", "default", name)["spec"].get("nodeName")
    return Driven(sched, placed, hinted)


THREE_SLOTS = [slot_node("n3", 1), slot_node("n2", 1), slot_node("n1", 1)]


@pytest.mark.parametrize(
    "scheduler, batchable",
    [(PROFILE, True), ("nosign", False), ("emptysign", False)],
    ids=["batchable profile", "profile with a plugin lacking sign_pod", "profile whose plugin signs nothing"],
)
async def test_profiles_that_cannot_sign_never_batch(scheduler: str, batchable: bool) -> None:
    """Upstream's "no batching missing sign" and "no batching empty sign"."""
    profiles = [
        BATCHABLE[0],
        renamed(BATCHABLE[0], "nosign", ("NoSign",)),
        renamed(BATCHABLE[0], "emptysign", ("EmptySign",)),
    ]
    pods = [slot_pod(f"p{i}", PREFER, scheduler=scheduler) for i in (1, 2, 3)]
    run = await drive(profiles, THREE_SLOTS, pods, registry=SIGN_REGISTRY)
    assert run.placed == {"p1": "n1", "p2": "n2", "p3": "n3"}
    assert run.hinted == (["p2", "p3"] if batchable else [])
    assert (run.scheduler.frameworks[scheduler] in run.scheduler.pod_cycle.batchable) is (scheduler != "nosign")


@pytest.mark.parametrize(
    "step, hinted, flushes",
    [
        (0.0, ["p2", "p3"], {}),
        (MAX_BATCH_AGE * 0.6, ["p2"], {"expired": 1}),
        (MAX_BATCH_AGE, ["p2"], {"expired": 1}),
        (MAX_BATCH_AGE * 2, [], {"expired": 2}),
    ],
    ids=["no time passes", "each pod 0.3s later", "each pod MAX_BATCH_AGE later", "each pod a second later"],
)
async def test_batches_expire(step: float, hinted: list[str], flushes: dict[str, int]) -> None:
    """A batch is used until it is strictly older than MAX_BATCH_AGE (exactly that old still
    counts, as upstream), then flushed; using it does not make it younger."""

    def advance(i: int, clock: ManualClock, store: Store) -> None:
        clock.advance_to(clock.now + step)

    pods = [slot_pod(f"p{i}", PREFER) for i in (1, 2, 3)]
    run = await drive(BATCHABLE, THREE_SLOTS, pods, before_each=advance)
    assert run.placed == {"p1": "n1", "p2": "n2", "p3": "n3"}
    assert run.hinted == hinted
    assert dict(run.scheduler.batching.stats.flushes) == flushes


async def test_a_cached_node_that_filled_up_is_filtered_out() -> None:
    """The hint is filtered again: a pod placed on it in the meantime (by another scheduler)
    makes the pod take a full cycle, which counts hint_not_used and stores a new batch (here none:
    no other node was left, counted as empty_list). p3 then finds no batch, counts no_hint and fails."""

    def intrude(i: int, clock: ManualClock, store: Store) -> None:
        if i == 1:
            store.create("Pod", make_pod("intruder").node("n2").obj())

    pods = [slot_pod(f"p{i}", PREFER) for i in (1, 2, 3)]
    run = await drive(BATCHABLE, THREE_SLOTS, pods, before_each=intrude)
    assert run.placed == {"p1": "n1", "p2": "n3", "p3": None}
    assert run.hinted == []
    counts = run.scheduler.batching.stats
    # p2's full cycle found n3 alone: the batch (n3, left from p1's) is dropped, no flush.
    assert dict(counts.attempts) == {NO_HINT: 2, HINT_NOT_USED: 1}
    assert dict(counts.flushes) == {}
    assert dict(counts.stores) == {"stored": 1, "empty_list": 1}
    # The hint first (rejected), then every node.
    p2_filter = run.scheduler.results["default/p2"].filter
    assert list(p2_filter)[0] == "n2" and set(p2_filter) == {"n1", "n2", "n3"}
    assert p2_filter["n2"]["NodeResourcesFit"] == "Too many pods"


async def test_prometheus_counters() -> None:
    """Counted by profile: mysched's pod leaves default-scheduler's batch alone (each profile keeps
    its own), and p4, a cycle too late for it, flushes it under default-scheduler."""
    observer = PrometheusObserver()
    pods = [
        *(slot_pod(f"p{i}", PREFER) for i in (1, 2, 3)),
        slot_pod("other", PREFER, scheduler="mysched"),
        slot_pod("p4", PREFER),
    ]
    nodes = [*THREE_SLOTS, slot_node("n4", 1), slot_node("n5", 1)]
    run = await drive(TWO_PROFILES, nodes, pods, observer=observer)
    assert run.hinted == ["p2", "p3"]
    assert run.placed["other"] in ("n4", "n5") and run.placed["p4"] in ("n4", "n5")
    assert run.placed["other"] != run.placed["p4"]

    def sample(name: str, **labels: str) -> float | None:
        return observer.registry.get_sample_value(name, labels)

    assert sample("scheduler_batch_attempts_total", profile=PROFILE, result="hint_used") == 2.0
    assert sample("scheduler_batch_attempts_total", profile=PROFILE, result="no_hint") == 2.0
    assert sample("scheduler_batch_attempts_total", profile="mysched", result="no_hint") == 1.0
    assert sample("scheduler_batch_attempts_total", profile="mysched", result="hint_used") is None
    # The batch belonged to default-scheduler: its flush is counted there, and only once.
    assert sample("scheduler_batch_cache_flushed_total", profile=PROFILE, reason="pod_skipped") == 1.0
    assert sample("scheduler_batch_cache_flushed_total", profile="mysched", reason="pod_skipped") is None
    text = observer.exposition().decode()
    assert 'scheduler_batch_attempts_total{profile="default-scheduler",result="hint_used"} 2.0' in text


# --- OpportunisticBatching itself: upstream's batch_test.go ---------------------------------------


class BatchTest:
    """Upstream's ``batchTest`` filter: a node holds at most one pod whose name starts with "b"
    (blocking pods fill a node; others never do)."""

    name = "BatchTest"

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        if pod.name.startswith("b") and any(p.name.startswith("b") for p in node.pods):
            return Status.unschedulable("unsched")
        return None

    def sign_pod(self, pod: PodInfo) -> dict[str, Any]:
        return {}


#: How upstream's configurableScorePlugin and configurableFilterPlugin behave in a test.
CONFIG: dict[str, Any] = {}
PRE_SCORE_SEEN = "ConfigurableScore/preScoreSeenNodes"


class ConfigurableScore:
    """Upstream's ``configurableScorePlugin``: scores every node ``CONFIG["score"]``; its
    NormalizeScore checks that PreScore saw every node it normalizes. Errors on demand."""

    name = "ConfigurableScore"

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Any) -> Status | None:
        if CONFIG.get("pre_score_err"):
            return Status.as_error("injected prescore error")
        state.write(PRE_SCORE_SEEN, {n.name for n in nodes})
        return None

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Any:
        if CONFIG.get("score_err"):
            return 0, Status.as_error("injected score error")
        return CONFIG.get("score", 0)

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: list[Any]) -> Status | None:
        if CONFIG.get("norm_err"):
            return Status.as_error("injected normalize error")
        seen = state.read(PRE_SCORE_SEEN)
        missing = [s.name for s in scores if s.name not in seen]
        return Status.as_error(f"NormalizeScore called for {missing} not passed to PreScore") if missing else None


class ConfigurableFilter:
    name = "ConfigurableFilter"

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        return Status.as_error("injected filter error") if CONFIG.get("filter_err") else None


@pytest.fixture(autouse=True)
def _reset_config() -> None:
    CONFIG.clear()


TEST_PROFILE = "test-profile"
OTHER_PROFILE = "other-profile"


def batch_test_framework(name: str = TEST_PROFILE, score: bool = False, filter_errors: bool = False) -> Framework:
    registry = Registry()
    for cls in (BatchTest, ConfigurableScore, ConfigurableFilter):
        registry.register(cls)
    plugins = {"filter": [PluginRef("BatchTest")]}
    if filter_errors:
        plugins["filter"].append(PluginRef("ConfigurableFilter"))
    if score:
        plugins["preScore"] = [PluginRef("ConfigurableScore")]
        plugins["score"] = [PluginRef("ConfigurableScore", 1)]
    return Framework(ProfileSpec(name, plugins), registry, partial=True)


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class RecordingObserver(NullObserver):
    def __init__(self) -> None:
        self.calls: list[tuple[str, str, str]] = []

    def batch_attempt(self, profile: str, result: str) -> None:
        self.calls.append(("attempt", profile, result))

    def batch_flush(self, profile: str, reason: str) -> None:
        self.calls.append(("flush", profile, reason))


def hint_of(
    batching: OpportunisticBatching,
    fw: Framework,
    pod: str,
    sig: bytes | None,
    cycle: int,
    nodes: dict[str, NodeInfo],
    nominated: bool = False,
) -> str | None:
    return asyncio.run(batching.hint(fw, CycleState(), make_pod(pod).info(), sig, cycle, nominated, nodes.get))


def store(
    batching: OpportunisticBatching,
    fw: Framework,
    sig: bytes | None,
    cycle: int,
    hint: str | None,
    chosen: str,
    others: list[str] | None,
    raw: dict[str, list[int]] | None = None,
) -> None:
    """StoreScheduleResults with ``others`` ranked best first (None: upstream's nil list); ``raw``
    gives the others' raw scores per plugin, in that order."""
    names = [chosen, *(others or [])]
    nodes = [make_node(n).info() for n in names]
    totals = list(range(len(names), 0, -1))
    columns = {plugin: np.asarray([0, *values]) for plugin, values in (raw or {}).items()}
    batching.store(fw, sig, cycle, hint, chosen, nodes, totals, columns)


def cached(batching: OpportunisticBatching, profile: str = TEST_PROFILE) -> list[str] | None:
    b = batching.batches.get(profile)
    return list(b.nodes) if b is not None and b.nodes else None  # empty is no batch, as upstream


@dataclass
class Basic:
    first: str
    #: the first pod's choice and the other nodes, best first (None: the first pod failed)
    chosen: str | None
    others: list[str] | None
    second: str
    expected_hint: str | None
    attempts: dict[str, int]
    flushes: dict[str, int]
    stores: dict[str, int]
    #: what is left of the batch after the second pod
    left: list[str] | None = None
    first_sig: bytes | None = b"sig"
    second_sig: bytes | None = b"sig"
    #: a pod of another profile was scheduled in between
    skip_pod: bool = False
    #: the second pod comes in the same cycle (a pod group's; without GenericWorkload)
    same_cycle: bool = False
    nominated: bool = False
    #: nodes gone from the snapshot before the second pod
    removed: tuple[str, ...] = ()
    age: float = 0.0


BASIC: dict[str, Basic] = {
    "a second pod with the same signature gets a hint": Basic(
        "b-1", "n3", ["n1"], "b-2", "n1", {NO_HINT: 1, HINT_USED: 1}, {}, {STORED: 1}
    ),
    "a second pod with a different signature doesn't get a hint": Basic(
        "a-1",
        "n3",
        ["n1"],
        "a-2",
        None,
        {NO_HINT: 2},
        {"pod_incompatible": 1},
        {STORED: 1, EMPTY_LIST: 1},
        second_sig=b"sig2",
    ),
    "pod doesn't get hint if previous pod didn't schedule": Basic(
        "b-1", None, None, "b-2", None, {NO_HINT: 2}, {}, {EMPTY_LIST: 1}
    ),
    "empty list": Basic("b-1", "n3", [], "b-2", None, {NO_HINT: 2}, {}, {EMPTY_LIST: 2}),
    "nil list": Basic("b-1", "n3", None, "b-2", None, {NO_HINT: 2}, {}, {EMPTY_LIST: 2}),
    "pod doesn't get hint because the previous pod is to a different profile": Basic(
        "b-1", "n3", ["n1"], "b-2", None, {NO_HINT: 2}, {"pod_skipped": 1}, {STORED: 1, EMPTY_LIST: 1}, skip_pod=True
    ),
    "pod doesn't use batch from preceding pod when they are from the same cycle state": Basic(
        "b-1", "n3", ["n1"], "b-2", None, {NO_HINT: 2}, {"pod_skipped": 1}, {STORED: 1, EMPTY_LIST: 1}, same_cycle=True
    ),
    "pod uses batch from preceding pod and leaves remaining batch to next pod": Basic(
        "b-1", "n3", ["n1", "n2"], "b-2", "n1", {NO_HINT: 1, HINT_USED: 1}, {}, {STORED: 1}, left=["n2"]
    ),
    "a second pod with a nominated node does not get a hint": Basic(
        "b-1",
        "n3",
        ["n1"],
        "b-2",
        None,
        {NO_HINT: 2},
        {"pod_nominated": 1},
        {STORED: 1, EMPTY_LIST: 1},
        nominated=True,
    ),
    # Beyond upstream's table:
    "an unsignable second pod is incompatible": Basic(
        "b-1",
        "n3",
        ["n1"],
        "b-2",
        None,
        {NO_HINT: 2},
        {"pod_incompatible": 1},
        {STORED: 1, POD_NOT_BATCHABLE: 1},
        second_sig=None,
    ),
    "an unsignable first pod stores nothing": Basic(
        "b-1", "n3", ["n1"], "b-2", None, {NO_HINT: 2}, {}, {POD_NOT_BATCHABLE: 1, EMPTY_LIST: 1}, first_sig=None
    ),
    "the previous pod's node is gone": Basic(
        "b-1", "n3", ["n1"], "b-2", None, {NO_HINT: 2}, {"node_missing": 1}, {STORED: 1, EMPTY_LIST: 1}, removed=("n3",)
    ),
    # The hint is a name: that the node is gone is the scheduler's to find (it runs in full).
    "a cached node that is gone is still the hint": Basic(
        "b-1",
        "n3",
        ["n1", "n2"],
        "b-2",
        "n1",
        {NO_HINT: 1, HINT_USED: 1},
        {},
        {STORED: 1},
        left=["n2"],
        removed=("n1",),
    ),
    "a batch younger than MAX_BATCH_AGE is used": Basic(
        "b-1", "n3", ["n1"], "b-2", "n1", {NO_HINT: 1, HINT_USED: 1}, {}, {STORED: 1}, age=MAX_BATCH_AGE * 0.9
    ),
    # Upstream expires a batch strictly older than maxBatchAge.
    "a batch exactly MAX_BATCH_AGE old is still used": Basic(
        "b-1", "n3", ["n1"], "b-2", "n1", {NO_HINT: 1, HINT_USED: 1}, {}, {STORED: 1}, age=MAX_BATCH_AGE
    ),
    "a batch just older than MAX_BATCH_AGE has expired": Basic(
        "b-1",
        "n3",
        ["n1"],
        "b-2",
        None,
        {NO_HINT: 2},
        {"expired": 1},
        {STORED: 1, EMPTY_LIST: 1},
        age=MAX_BATCH_AGE + 0.001,
    ),
}


@pytest.mark.parametrize("case", list(BASIC.values()), ids=list(BASIC))
def test_batch_basic(case: Basic) -> None:
    """Upstream's TestBatchBasic: the first pod through, then the second, each with its store."""
    fw = batch_test_framework()
    clock = FakeClock()
    observer = RecordingObserver()
    batching = OpportunisticBatching(clock, observer)
    nodes = {n: make_node(n).info() for n in ("n1", "n2", "n3", "n4")}

    assert hint_of(batching, fw, case.first, case.first_sig, 1, nodes) is None
    if case.chosen is not None:
        store(batching, fw, case.first_sig, 1, None, case.chosen, case.others)
        nodes[case.chosen] = make_node(case.chosen).info(make_pod(case.first))
    for name in case.removed:
        del nodes[name]
    clock.now += case.age

    cycle = 3 if case.skip_pod else 1 if case.same_cycle else 2
    hint = hint_of(batching, fw, case.second, case.second_sig, cycle, nodes, case.nominated)
    assert hint == case.expected_hint
    # The second pod went to the hint, or (upstream's test) to a node no other one matches.
    store(batching, fw, case.second_sig, cycle, hint, hint or "n4", None)

    assert cached(batching) == case.left
    assert dict(batching.stats.attempts) == case.attempts
    assert dict(batching.stats.flushes) == case.flushes
    assert dict(batching.stats.stores) == case.stores
    assert batching.stats.rescores == 0  # blocking pods: the previous node never fits again
    flushed = [c for c in observer.calls if c[0] == "flush"]
    assert Counter(reason for _, _, reason in flushed) == Counter(case.flushes)
    attempted = [result for kind, _, result in observer.calls if kind == "attempt"]
    assert Counter(attempted) == Counter(case.attempts)


@dataclass
class Rescore:
    score: int
    expected_hint: str | None
    remaining: list[str] | None
    flush: str | None
    rescores: int
    filter_err: bool = False
    pre_score_err: bool = False
    score_err: bool = False
    norm_err: bool = False
    chosen_missing: bool = False
    cached_missing: bool = False


#: n1 was cached with a raw score of 50; n2, the previous pod's node, is scored again.
RESCORE: dict[str, Rescore] = {
    "rescored node wins": Rescore(100, "n2", ["n1"], None, 1),
    "rescored node loses": Rescore(10, "n1", ["n2"], None, 1),
    "filter error gives no hint": Rescore(100, None, None, "filter_error", 0, filter_err=True),
    "prescore error gives no hint": Rescore(0, None, None, "prescore_error", 1, pre_score_err=True),
    "score error gives no hint": Rescore(0, None, None, "rescore_error", 1, score_err=True),
    "normalize error gives no hint": Rescore(0, None, None, "normalize_error", 1, norm_err=True),
    "chosen node missing from lister gives no hint": Rescore(0, None, None, "node_missing", 0, chosen_missing=True),
    "cached node missing from lister gives no hint": Rescore(100, None, None, "node_missing", 1, cached_missing=True),
}


@pytest.mark.parametrize("case", list(RESCORE.values()), ids=list(RESCORE))
def test_batch_rescore(case: Rescore) -> None:
    """Upstream's TestBatchRescore: the previous pod's node still fits the next pod (neither
    blocks), so it is scored again and competes with the cached node."""
    CONFIG.update(
        score=case.score,
        filter_err=case.filter_err,
        pre_score_err=case.pre_score_err,
        score_err=case.score_err,
        norm_err=case.norm_err,
    )
    fw = batch_test_framework(score=True, filter_errors=True)
    batching = OpportunisticBatching(FakeClock(), NullObserver())
    store(batching, fw, b"sig", 1, None, "n2", ["n1"], raw={"ConfigurableScore": [50]})
    nodes: dict[str, NodeInfo] = {}
    if not case.chosen_missing:
        nodes["n2"] = make_node("n2").info(make_pod("a-1"))
        if not case.cached_missing:
            nodes["n1"] = make_node("n1").info()
    hint = hint_of(batching, fw, "a-2", b"sig", 2, nodes)
    assert hint == case.expected_hint
    assert batching.stats.rescores == case.rescores
    assert dict(batching.stats.flushes) == ({case.flush: 1} if case.flush else {})
    assert dict(batching.stats.attempts) == ({} if hint else {NO_HINT: 1})
    assert cached(batching) == case.remaining


def test_batch_rescore_chain() -> None:
    """Upstream's TestBatchRescoreChain: the node scored again wins twice in a row; the cached
    node stays for a next pod."""
    CONFIG.update(score=100)
    fw = batch_test_framework(score=True)
    batching = OpportunisticBatching(FakeClock(), NullObserver())
    store(batching, fw, b"sig", 1, None, "n2", ["n1"], raw={"ConfigurableScore": [50]})
    nodes = {"n1": make_node("n1").info(), "n2": make_node("n2").info(make_pod("a-1"))}
    assert hint_of(batching, fw, "a-2", b"sig", 2, nodes) == "n2"
    store(batching, fw, b"sig", 2, "n2", "n2", None)
    assert hint_of(batching, fw, "a-3", b"sig", 3, nodes) == "n2"
    assert cached(batching) == ["n1"]
    assert dict(batching.stats.attempts) == {HINT_USED: 1}
    assert batching.stats.rescores == 2


def _hint_not_used(b: OpportunisticBatching, fw: Framework) -> None:
    store(b, fw, b"sig", 1, "n1", "n2", ["n1"])


def _unsignable_replaces(b: OpportunisticBatching, fw: Framework) -> None:
    store(b, fw, b"sig", 1, None, "n2", ["n1"])
    store(b, fw, None, 2, None, "n3", ["n1"])


def _no_others_replaces(b: OpportunisticBatching, fw: Framework) -> None:
    store(b, fw, b"sig", 1, None, "n2", ["n1"])
    store(b, fw, b"sig", 2, None, "n3", None)


def _cannot_seed(b: OpportunisticBatching, fw: Framework) -> None:
    store(b, fw, None, 1, None, "n3", None)
    store(b, fw, b"sig", 2, None, "n3", None)


def _expires(b: OpportunisticBatching, fw: Framework) -> None:
    store(b, fw, b"sig", 1, None, "n2", ["n1"])
    b.clock.now += 120  # type: ignore[attr-defined]
    hint_of(b, fw, "a-1", b"sig", 2, {})


def _flushed_once(b: OpportunisticBatching, fw: Framework) -> None:
    store(b, fw, b"sig", 1, None, "n2", ["n1"])
    for cycle in (2, 3, 4):
        hint_of(b, fw, "a-1", b"other", cycle, {})


@pytest.mark.parametrize(
    "run, attempts, flushes, stores",
    [
        (_hint_not_used, {HINT_NOT_USED: 1}, {}, {STORED: 1}),
        (_unsignable_replaces, {}, {}, {STORED: 1, POD_NOT_BATCHABLE: 1}),
        (_no_others_replaces, {}, {}, {STORED: 1, EMPTY_LIST: 1}),
        (_cannot_seed, {}, {}, {POD_NOT_BATCHABLE: 1, EMPTY_LIST: 1}),
        (_expires, {NO_HINT: 1}, {"expired": 1}, {STORED: 1}),
        (_flushed_once, {NO_HINT: 3}, {"pod_incompatible": 1}, {STORED: 1}),
    ],
    ids=[
        "hint given but a different node was chosen",
        "pod without a signature replaces a usable state",
        "pod with no other nodes replaces a usable state",
        "pods that can't seed a batch are counted with no state",
        "batch state older than maxBatchAge expires",
        "a flush is reported once when the following pods fail to schedule",
    ],
)
def test_batch_metrics_other_paths(
    run: Callable[[OpportunisticBatching, Framework], None],
    attempts: dict[str, int],
    flushes: dict[str, int],
    stores: dict[str, int],
) -> None:
    """Upstream's TestBatchMetricsOtherPaths: replacing a batch by storing is no flush."""
    fw = batch_test_framework()
    batching = OpportunisticBatching(FakeClock(), NullObserver())
    run(batching, fw)
    assert dict(batching.stats.attempts) == attempts
    assert dict(batching.stats.flushes) == flushes
    assert dict(batching.stats.stores) == stores


def test_a_used_hint_carries_the_batch_on() -> None:
    """Three blocking pods: the second and third take the cached nodes in order; the batch
    follows the pod that used it (its cycle and node). Flushing another profile leaves it alone."""
    fw = batch_test_framework()
    batching = OpportunisticBatching(FakeClock(), NullObserver())
    nodes = {n: make_node(n).info() for n in ("n1", "n2", "n3")}
    batching.store(fw, b"sig", 1, None, "n3", list(nodes.values()), [50, 10, 90])
    batch = batching.batches[TEST_PROFILE]
    assert batch.nodes == ["n1", "n2"]
    for cycle, pod, expected in [(2, "b-2", "n1"), (3, "b-3", "n2")]:
        previous = batching.last[TEST_PROFILE].node
        nodes[previous] = make_node(previous).info(make_pod(f"b-on-{previous}"))
        hint = hint_of(batching, fw, pod, b"sig", cycle, nodes)
        assert hint == expected
        batching.store(fw, b"sig", cycle, hint, expected)
        assert batching.batches[TEST_PROFILE] is batch
        assert (batching.last[TEST_PROFILE].cycle, batching.last[TEST_PROFILE].node) == (cycle, expected)
    assert batch.nodes == []
    assert batching.stats.attempts == Counter({HINT_USED: 2})
    batching.flush(OTHER_PROFILE, "pod_skipped")  # another profile's: it has no batch, nothing counted
    assert batching.batches == {TEST_PROFILE: batch}
    assert batching.stats.flushes == Counter()


def test_each_profile_keeps_its_own_batch() -> None:
    """Two profiles' batches side by side: storing, using and flushing one leaves the other as it was."""
    fw = batch_test_framework()
    other = batch_test_framework(OTHER_PROFILE)
    observer = RecordingObserver()
    batching = OpportunisticBatching(FakeClock(), observer)
    nodes = {n: make_node(n).info() for n in ("n1", "n2", "n3", "n4")}
    batching.store(fw, b"sig", 1, None, "n1", [nodes["n1"], nodes["n2"]], [9, 1])
    batching.store(other, b"sig", 2, None, "n3", [nodes["n3"], nodes["n4"]], [9, 1])
    assert {p: b.nodes for p, b in batching.batches.items()} == {TEST_PROFILE: ["n2"], OTHER_PROFILE: ["n4"]}
    nodes["n3"] = make_node("n3").info(make_pod("b-1"))
    assert hint_of(batching, other, "b-2", b"sig", 3, nodes) == "n4"
    batching.store(other, b"sig", 3, "n4", "n4")
    # test-profile's batch, stored at cycle 1, is three cycles behind: flushed under its profile.
    assert hint_of(batching, fw, "b-3", b"sig", 4, nodes) is None
    assert {p: b.nodes for p, b in batching.batches.items()} == {OTHER_PROFILE: []}
    assert observer.calls == [
        ("attempt", OTHER_PROFILE, HINT_USED),
        ("flush", TEST_PROFILE, "pod_skipped"),
        ("attempt", TEST_PROFILE, NO_HINT),
    ]


@pytest.mark.parametrize(
    "totals, chosen, kept",
    [
        ([7, 7, 9, 7, 3], "n4", ["n5", "n1", "n2", "n3"]),
        ([9, 9, 1, 9, 3], "n1", ["n5", "n2", "n3", "n4"]),
        ([9, 9, 1, 9, 3], "n2", ["n5", "n1", "n3", "n4"]),
    ],
    ids=["ties below the choice", "the choice was the second of a tie", "the choice was the last of a tie"],
)
def test_ties_keep_the_order_they_were_scored_in(totals: list[int], chosen: str, kept: list[str]) -> None:
    """The choice among equal scores is random; the others stay in the order they were scored,
    and so do their raw scores."""
    fw = batch_test_framework()
    batching = OpportunisticBatching(FakeClock(), NullObserver())
    names = ["n5", "n1", "n4", "n2", "n3"]
    nodes = [make_node(n).info() for n in names]
    raw = {"P": np.arange(len(names)) * 10}
    batching.store(fw, b"sig", 1, None, chosen, nodes, totals, raw)
    batch = batching.batches[TEST_PROFILE]
    assert batch.nodes == kept
    assert batch.raw["P"].tolist() == [names.index(n) * 10 for n in kept]
    assert batching.last[TEST_PROFILE].node == chosen
    assert batching.stats.attempts == Counter()  # store() counts no attempt without a hint


# --- signatures -------------------------------------------------------------------------------------

SIGNING = Framework(BATCHABLE[0], default_registry())


def base() -> PodBuilder:
    return make_pod("web-0").req(cpu="1", memory="1Gi").label("app", "web").image("nginx:1.25")


POD_AFFINITY_TERM = {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": HOSTNAME}
SPREAD = [{"maxSkew": 1, "topologyKey": HOSTNAME, "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {}}]


@pytest.mark.parametrize(
    "pod",
    [
        base().set(
            "spec.affinity.podAffinity", {"requiredDuringSchedulingIgnoredDuringExecution": [POD_AFFINITY_TERM]}
        ),
        base().set(
            "spec.affinity.podAntiAffinity", {"requiredDuringSchedulingIgnoredDuringExecution": [POD_AFFINITY_TERM]}
        ),
        base().set(
            "spec.affinity.podAntiAffinity",
            {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1, "podAffinityTerm": POD_AFFINITY_TERM}]},
        ),
        base().set("spec.topologySpreadConstraints", SPREAD),
    ],
    ids=["pod affinity", "pod anti-affinity", "preferred pod anti-affinity", "own topology spread constraints"],
)
def test_unsignable_pods(pod: PodBuilder) -> None:
    assert SIGNING.sign_pod(base().info()) is not None
    assert SIGNING.sign_pod(pod.info()) is None


@pytest.mark.parametrize(
    "other, equal",
    [
        (base(), True),
        (base().set("metadata.name", "web-1").uid("another-uid"), True),
        (base().created("2020-01-01T00:00:00Z").annotation("note", "x").priority(1000), True),
        (make_pod("web-0").label("app", "web").image("nginx:1.25").req(memory="1Gi", cpu="1000m"), True),
        (base().req(cpu="2"), False),
        (base().toleration("dedicated", "gpu", "NoSchedule", "Equal"), False),
        (base().node_selector(disk="ssd"), False),
        (base().host_port(8080), False),
        (base().label("tier", "front"), False),
        (make_pod("web-0", "other-ns").req(cpu="1", memory="1Gi").label("app", "web").image("nginx:1.25"), False),
        (base().preferred_node_affinity(1, "disk", ["ssd"]), False),
        (base().image("redis:7"), False),
        (base().scheduler("mysched"), False),
    ],
    ids=[
        "same pod",
        "another name and uid",
        "timestamp, annotations, priority",
        "the same requests spelt otherwise",
        "requests",
        "tolerations",
        "node selector",
        "host ports",
        "labels (InterPodAffinity reads them)",
        "namespace",
        "preferred node affinity",
        "images",
        "scheduler name",
    ],
)
def test_signatures(other: PodBuilder, equal: bool) -> None:
    signature = SIGNING.sign_pod(base().info())
    assert signature is not None
    assert (SIGNING.sign_pod(other.info()) == signature) is equal


# --- --feature-gates ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        (None, True),
        ("", True),
        ("OpportunisticBatching=true", True),
        ("OpportunisticBatching=false", False),
        (" OpportunisticBatching = True ,", True),
        ("OpportunisticBatching=true,OpportunisticBatching=false", False),
    ],
    ids=["unset", "empty", "true", "false", "spaces, case, trailing comma", "the last one wins"],
)
def test_parse_feature_gates(text: str | None, expected: bool) -> None:
    gates = parse_feature_gates(text)
    assert gates["OpportunisticBatching"] is expected
    # Every known gate has a value; the others keep their defaults.
    assert gates == {**KNOWN_GATES, "OpportunisticBatching": expected}


PARSE_BOOL_TRUE = ["1", "t", "T", "TRUE", "true", "True"]
PARSE_BOOL_FALSE = ["0", "f", "F", "FALSE", "false", "False"]


@pytest.mark.parametrize(
    "value, expected",
    [*((v, True) for v in PARSE_BOOL_TRUE), *((v, False) for v in PARSE_BOOL_FALSE)],
    ids=[*PARSE_BOOL_TRUE, *PARSE_BOOL_FALSE],
)
def test_gate_values_are_what_go_parse_bool_accepts(value: str, expected: bool) -> None:
    """Go's strconv.ParseBool, kube-scheduler's parser. A false value follows a true one, so it
    is told apart from the default."""
    opposite = "false" if expected else "true"
    gates = parse_feature_gates(f"OpportunisticBatching={opposite},OpportunisticBatching={value}")
    assert gates == {**KNOWN_GATES, "OpportunisticBatching": expected}
    assert gates["OpportunisticBatching"] is expected


def test_opportunistic_batching_is_on_by_default_as_in_1_37() -> None:
    assert KNOWN_GATES["OpportunisticBatching"] is True
    assert parse_feature_gates(None) == KNOWN_GATES
    assert SimulationSettings().feature_gates.enabled("OpportunisticBatching") is True
    assert SchedulerOptions().opportunistic_batching is True


def test_unknown_gates_are_accepted_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="kubesched.config.feature_gates"):
        gates = parse_feature_gates("SchedulerQueueingHints=true,OpportunisticBatching=false,KubeletTracing=false")
    assert gates == {**KNOWN_GATES, "OpportunisticBatching": False}
    assert "SchedulerQueueingHints" not in gates
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warned) == 2
    assert "SchedulerQueueingHints" in warned[0] and "KubeletTracing" in warned[1]


@pytest.mark.parametrize(
    "text, gate",
    [
        ("OpportunisticBatching=maybe", "OpportunisticBatching"),
        ("OpportunisticBatching=", "OpportunisticBatching"),
        ("OpportunisticBatching", "OpportunisticBatching"),
        ("OpportunisticBatching=true,SomethingElse=yes", "SomethingElse"),
        ("OpportunisticBatching=tRuE", "OpportunisticBatching"),
        ("OpportunisticBatching=fALSE", "OpportunisticBatching"),
        ("OpportunisticBatching=yes", "OpportunisticBatching"),
        ("OpportunisticBatching=no", "OpportunisticBatching"),
        ("OpportunisticBatching=on", "OpportunisticBatching"),
        ("OpportunisticBatching=2", "OpportunisticBatching"),
    ],
    ids=[
        "not a boolean",
        "empty value",
        "no value",
        "an unknown gate's value is checked too",
        "mixed case true",
        "mixed case false",
        "yes",
        "no",
        "on",
        "a number other than 0 and 1",
    ],
)
def test_bad_feature_gates_are_refused(text: str, gate: str) -> None:
    with pytest.raises(FeatureGateError, match=gate):
        parse_feature_gates(text)


def kubesched(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kubesched", *args], capture_output=True, text=True, cwd=cwd, timeout=60, check=False
    )


def test_cli_simulate_with_the_gate(tmp_path: Path) -> None:
    case = SCENARIOS["three pod batch"]
    path = tmp_path / "scenario.yaml"
    path.write_text(yaml.safe_dump_all(case.docs()))
    out = kubesched(
        tmp_path,
        "simulate",
        "--feature-gates",
        "OpportunisticBatching=true",
        "--config",
        str(NO_TOPOLOGY_DEFAULTS),
        "--scenario",
        str(path),
        "--output",
        "json",
    )
    assert out.returncode == 0, out.stderr
    pods = {p["name"]: p for p in json.loads(out.stdout)["pods"]}
    assert {name: p["node"] for name, p in pods.items()} == case.expected
    # Only batching filters a pod on a single node of three and skips its scoring.
    assert [name for name, p in pods.items() if len(p["filter"]) == 1 and not p["score"]] == case.batched


@pytest.mark.parametrize(
    "command",
    [
        ["simulate", "--config", str(NO_TOPOLOGY_DEFAULTS)],
        ["run", "--config", str(NO_TOPOLOGY_DEFAULTS)],
        ["sim", "serve"],
    ],
    ids=["simulate", "run", "sim serve"],
)
def test_cli_refuses_a_non_boolean_gate(command: list[str], tmp_path: Path) -> None:
    if command[0] == "simulate":
        path = tmp_path / "scenario.yaml"
        path.write_text(yaml.safe_dump_all(SCENARIOS["one pod one node"].docs()))
        command = [*command, "--scenario", str(path)]
    out = kubesched(tmp_path, *command, "--feature-gates", "OpportunisticBatching=maybe")
    assert out.returncode == 2
    assert "OpportunisticBatching" in out.stderr and "maybe" in out.stderr
    assert out.stdout == ""


def test_a_locked_gate_cannot_be_set_away_from_its_default() -> None:
    """1.37 locks DRAExtendedResource (GA) to true: upstream refuses to turn it off."""
    assert parse_feature_gates("DRAExtendedResource=true")["DRAExtendedResource"] is True
    with pytest.raises(
        FeatureGateError, match="cannot set feature gate DRAExtendedResource to false, feature is locked to true"
    ):
        parse_feature_gates("DRAExtendedResource=false")


# --- property: batching decides as full cycles where upstream designed it to ------------------------


#: Node sizes whose scores for a :func:`_proportional_pod` all differ (ties are broken at random).
DISTINCT_SIZES = [4, 8, 16, 32, 64, 128, 256]


def _proportional_pod(name: str) -> dict[str, Any]:
    """3.5 CPUs and 3.5Gi: the same share of CPU and memory on the nodes below."""
    return make_pod(name).req(cpu="3500m", memory="3584Mi").obj()


@given(sizes=st.lists(st.sampled_from(DISTINCT_SIZES), min_size=2, max_size=7, unique=True), pods=st.integers(2, 9))
@fuzz_settings(25)
def test_one_pod_per_node_batches_decide_as_full_cycles(sizes: list[int], pods: int) -> None:
    """Nodes of distinct sizes, each with room for one pod, and identical pods: every pod after
    the first takes the hint, and every pod lands where a full cycle (the gate off) puts it;
    pods beyond the nodes fail either way."""
    nodes = [make_node(f"n{i}").capacity(cpu=str(c), memory=f"{c}Gi", pods="1").obj() for i, c in enumerate(sizes)]
    docs = [*nodes, *(_proportional_pod(f"p{i}") for i in range(pods))]
    on = run_sim(docs, batching=True)
    off = run_sim(docs, batching=False)
    assert placements(on) == placements(off)
    placed = sum(1 for node in placements(on).values() if node is not None)
    assert on.scheduler.batching.stats.attempts[HINT_USED] == max(0, placed - 1)
    assert on.scheduler.batching.stats.rescores == 0
