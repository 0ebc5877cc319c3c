"""plugins/random-scheduler: installed with pip, enabled by its config, run by the simulator."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from conftest import installed_package

from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.runtime.registry import default_registry
from kubesched.sim.run.simulate import simulate
from kubesched.sim.scenario.reading import parse_scenario
from kubesched.testing import make_node, make_pod

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "plugins" / "random-scheduler"
CONFIG = PACKAGE / "config.yaml"
NODES = 8
PODS = 24


@pytest.fixture(scope="module")
def random_scheduler_installed():
    with installed_package(PACKAGE, "kubesched-random-scheduler"):
        yield


def _scenario():
    nodes = [make_node(f"node-{i}").capacity(cpu="8", memory="16Gi", pods="110").obj() for i in range(NODES)]
    pods = [make_pod(f"coin-{i}").scheduler("random-scheduler").req(cpu="100m").obj() for i in range(PODS)]
    return parse_scenario([*nodes, *pods])


def _run(seed: str, monkeypatch: pytest.MonkeyPatch) -> dict[str, dict]:
    from kubesched.config import load_config

    monkeypatch.setenv("RANDOM_SCHEDULER_SEED", seed)
    cfg = load_config(CONFIG)
    result = asyncio.run(simulate(cfg.profiles, _scenario()))
    return {p["name"]: p for p in result.pods}


def _allowed(seed: str, monkeypatch: pytest.MonkeyPatch) -> dict[str, set[str]]:
    """For each pod, the nodes the predicate lets through with this seed."""
    monkeypatch.setenv("RANDOM_SCHEDULER_SEED", seed)
    predicate = default_registry().get("RandomPredicate").cls
    scenario = _scenario()
    infos = [NodeInfo(n) for n in scenario.nodes]
    return {
        p["metadata"]["name"]: {ni.name for ni in infos if predicate.fn(PodInfo(p), ni)} for p in scenario.pending_pods
    }


def test_entry_points_register_both_plugins(random_scheduler_installed: None) -> None:
    registry = default_registry()
    predicate, priority = registry.get("RandomPredicate"), registry.get("RandomPriority")
    assert (predicate.distribution, predicate.extension_points) == ("kubesched-random-scheduler", ("filter",))
    assert (priority.distribution, priority.extension_points) == ("kubesched-random-scheduler", ("score",))
    assert predicate.cls.__doc__ == "A node passes with probability 1/2."


def test_pods_land_only_on_nodes_the_predicate_allows(
    random_scheduler_installed: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    allowed = _allowed("7", monkeypatch)
    pods = _run("7", monkeypatch)
    # The table is meaningful only if the coin actually rejected some nodes and left some pods a choice.
    assert any(len(nodes) < NODES for nodes in allowed.values())
    assert any(len(nodes) > 1 for nodes in allowed.values())
    for name, pod in pods.items():
        assert pod["schedulerName"] == "random-scheduler"
        if allowed[name]:
            assert pod["phase"] == "Scheduled", pod["message"]
            assert pod["node"] in allowed[name]
        else:
            assert pod["phase"] == "Unschedulable"
            assert f"{NODES} node(s) didn't pass RandomPredicate" in pod["message"]


def test_the_seed_makes_runs_reproducible(random_scheduler_installed: None, monkeypatch: pytest.MonkeyPatch) -> None:
    first = {name: pod["node"] for name, pod in _run("7", monkeypatch).items()}
    second = {name: pod["node"] for name, pod in _run("7", monkeypatch).items()}
    other = {name: pod["node"] for name, pod in _run("8", monkeypatch).items()}
    assert first == second
    assert first != other
    assert _allowed("7", monkeypatch) != _allowed("8", monkeypatch)


def test_random_priority_stays_in_range_and_follows_the_seed(
    random_scheduler_installed: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    priority = default_registry().get("RandomPriority").cls
    pod = make_pod("p").info()
    nodes = [make_node(f"n{i}").info() for i in range(50)]
    monkeypatch.setenv("RANDOM_SCHEDULER_SEED", "1")
    scores = [priority.fn(pod, n) for n in nodes]
    assert all(0 <= s <= 100 for s in scores)
    assert len(set(scores)) > 10
    assert scores == [priority.fn(pod, n) for n in nodes]
