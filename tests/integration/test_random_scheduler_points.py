"""plugins/random-scheduler's two plugins through kubesched.testing, without installing the package."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubesched.runtime.local_plugins import load_plugin_class
from kubesched.testing import make_node, make_pod, plugin_framework, reasons, running_scheduler

# Loaded from its file, not by putting the package's folder on sys.path: an earlier install there
# leaves egg-info that would announce its entry points to every later test.
SOURCE = (
    Path(__file__).resolve().parents[2] / "plugins" / "random-scheduler" / "kubesched_random_scheduler" / "__init__.py"
)
RandomPredicate = load_plugin_class(f"{SOURCE}:random_predicate")
RandomPriority = load_plugin_class(f"{SOURCE}:random_priority")
SEED_ENV = "RANDOM_SCHEDULER_SEED"

NODES = [make_node(f"node-{i}").capacity(cpu="8", memory="16Gi", pods="110") for i in range(16)]


@pytest.fixture(autouse=True)
def seeded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SEED_ENV, "7")


def test_the_predicate_lets_about_half_through_the_same_way_each_time() -> None:
    with plugin_framework(RandomPredicate, nodes=NODES) as fw:
        first = reasons(fw.filter_all(make_pod("coin")))
        assert first == reasons(fw.filter_all(make_pod("coin")))
    passed = [n for n, why in first.items() if not why]
    assert 0 < len(passed) < len(NODES)
    assert {tuple(why) for why in first.values() if why} == {("node(s) didn't pass RandomPredicate",)}


def test_the_priority_scores_within_range_and_reproducibly() -> None:
    with plugin_framework(RandomPriority, nodes=NODES) as fw:
        scores = fw.score(make_pod("coin"))
        assert scores == fw.score(make_pod("coin"))
    assert set(scores) == {f"node-{i}" for i in range(16)}
    assert all(0 <= s <= 100 for s in scores.values()) and len(set(scores.values())) > 1


async def test_both_in_a_scheduler_place_a_pod_on_the_best_node_the_predicate_allows() -> None:
    pod = make_pod("coin").req(cpu="100m")
    with plugin_framework(RandomPredicate, RandomPriority, nodes=NODES) as fw:
        allowed = {n for n, s in (await fw.afilter_all(pod)).items() if s is None}
        scores = await fw.ascore(pod, sorted(allowed))
    async with running_scheduler(plugins=[RandomPredicate, RandomPriority], nodes=NODES, pods=[pod]) as s:
        node = await s.wait_bound("coin")
    assert node in allowed
    # the default plugins score too, equal on identical nodes: the random score decides
    assert scores[node] == max(scores.values())
