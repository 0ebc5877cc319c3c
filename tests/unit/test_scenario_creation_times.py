"""A scenario loaded into a live server (``sim serve``) has pods created just now, in the
scenario's order, not on the reader's fixed epoch (kubectl showed them years old); a creation
time the scenario wrote itself is kept; ``simulate`` keeps the reproducible epoch."""

from __future__ import annotations

from datetime import UTC, datetime

from kubesched.cluster.store import Store
from kubesched.sim.scenario.loading import load_scenario_into
from kubesched.sim.scenario.reading import SCENARIO_EPOCH, parse_scenario

DOCS = [
    {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}, "status": {"allocatable": {"cpu": "4"}}},
    {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "a"},
        "spec": {"containers": [{"name": "c", "image": "x"}]},
    },
    {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "b"},
        "spec": {"containers": [{"name": "c", "image": "x"}]},
    },
    {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "dated", "creationTimestamp": "2024-06-05T05:05:05Z"},
        "spec": {"containers": [{"name": "c", "image": "x"}]},
    },
]


def created(store: Store, name: str) -> str:
    return str(store.get("Pod", "default", name)["metadata"]["creationTimestamp"])


def test_a_live_server_gets_pods_created_now_in_order() -> None:
    store = Store()
    now = datetime(2026, 11, 26, 12, 0, 0, tzinfo=UTC)
    load_scenario_into(store, parse_scenario(DOCS), now=now)
    assert created(store, "b") == "2026-11-26T12:00:00Z"
    assert created(store, "a") == "2026-11-26T11:59:59Z"
    assert created(store, "dated") == "2024-06-05T05:05:05Z"  # written by the scenario: kept, and no anchor


def test_without_a_clock_the_epoch_stays() -> None:
    store = Store()
    load_scenario_into(store, parse_scenario(DOCS))
    assert created(store, "a").startswith(SCENARIO_EPOCH.strftime("%Y-%m-%d"))
