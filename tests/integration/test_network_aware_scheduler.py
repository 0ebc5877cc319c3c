"""TopologicalSort and NetworkOverhead (plugins/network-aware) in a running scheduler over the
in-memory cluster, AppGroups, NetworkTopologies and pods read through the scheduler's informers:
a queue of an application's pods taken in the AppGroup's order and its dependent pods placed
near what they depend on, against the default profile; the package installed with pip, its
example run by ``simulate`` with both profiles and by ``kubesched compare``."""

from __future__ import annotations

import asyncio
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import compare_metrics, installed_package

from kubesched.config import load_config
from kubesched.runtime.registry import default_registry
from kubesched.testing import running_scheduler

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "plugins" / "network-aware"
EXAMPLES = PACKAGE / "examples"
sys.path.insert(0, str(PACKAGE))

from kubesched_network_aware import APP_GROUP_CRD, NETWORK_TOPOLOGY_CRD, NetworkOverhead, TopologicalSort  # noqa: E402

SCENARIO = EXAMPLES / "scenario.yaml"
NETWORK_AWARE = EXAMPLES / "network-aware-scheduler.yaml"
DEFAULT = EXAMPLES / "default-scheduler.yaml"
EAST = {"east-a", "east-b"}


def documents(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


def test_the_example_scenario_carries_the_shipped_definitions_unchanged() -> None:
    shipped = [*documents(APP_GROUP_CRD), *documents(NETWORK_TOPOLOGY_CRD)]
    in_scenario = [d for d in documents(SCENARIO) if d["kind"] == "CustomResourceDefinition"]
    assert in_scenario == shipped


def all_at_once() -> list[dict[str, Any]]:
    """The example's objects with its later pods created at once, frontends first: the queue
    holds them all when scheduling starts."""
    docs = documents(SCENARIO)
    (steps,) = [d for d in docs if d["kind"] == "Steps"]
    later = [p for step in steps["steps"] for p in step["create"]]
    later.sort(key=lambda p: not p["metadata"]["name"].startswith("frontend"))
    return [*(d for d in docs if d["kind"] != "Steps"), *later]


async def schedule_one_by_one(config: Path) -> tuple[list[str], dict[str, str | None]]:
    """The order pods leave the queue, and where they went, each binding finished before the
    next pod is taken."""
    order: list[str] = []
    async with running_scheduler(
        config=config, objects=all_at_once(), plugins=[TopologicalSort, NetworkOverhead], loop=False
    ) as h:
        await h.settle()
        while (name := await h.schedule_next()) is not None:
            order.append(name)
            await h.settle()
        return order, {n: h.node_of(n) for n in order}


async def test_the_queue_follows_the_app_group_and_dependent_pods_land_near_their_dependencies() -> None:
    order, placed = await schedule_one_by_one(NETWORK_AWARE)
    # TopologicalSort: cart (index 3) before frontend (4), whatever the order of creation
    assert [n.split("-")[0] for n in order] == ["cart", "cart", "frontend", "frontend"], order
    # NetworkOverhead: the carts with redis (cost at most 1), the frontends in the carts' region
    assert placed["cart-0"] == placed["cart-1"] == "east-a", placed
    assert {placed["frontend-0"], placed["frontend-1"]} == EAST, placed


async def test_the_default_profile_takes_them_as_they_came_and_spreads_them() -> None:
    order, placed = await schedule_one_by_one(DEFAULT)
    assert [n.split("-")[0] for n in order] == ["frontend", "frontend", "cart", "cart"], order
    assert {placed["cart-0"], placed["cart-1"]} != {"east-a"}, placed  # not both with redis
    assert {placed[n] for n in order} - EAST, placed  # some of them in us-west-1


async def test_a_cart_waits_when_redis_has_no_room_near_it() -> None:
    """Only east-a is near enough to redis: with it full, a cart is refused everywhere."""
    objects = all_at_once()
    for obj in objects:
        if obj["kind"] == "Node" and obj["metadata"]["name"] == "east-a":
            obj["status"]["allocatable"]["cpu"] = obj["status"]["capacity"]["cpu"] = "1"
    async with running_scheduler(
        config=NETWORK_AWARE, objects=objects, plugins=[TopologicalSort, NetworkOverhead]
    ) as h:
        reason = await h.wait_unschedulable("cart-0")
        assert reason.startswith("0/4 nodes are available: 1 Insufficient cpu, "), reason
        for other in ("east-b", "west-a", "west-b"):
            assert (
                f"1 Node {other} does not meet several network requirements from Workload dependencies: "
                "Satisfied: 0 Violated: 1" in reason
            ), reason


# --- the package, installed ------------------------------------------------------------------------
@pytest.fixture(scope="module")
def network_aware_installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Installed from a copy: a build writes egg-info beside the sources."""
    source = tmp_path_factory.mktemp("network-aware") / "network-aware"
    shutil.copytree(PACKAGE, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    with installed_package(source, "kubesched-network-aware"):
        yield


def test_the_entry_points_register_the_plugins_at_their_points(network_aware_installed: None) -> None:
    for name in ("TopologicalSort", "NetworkOverhead"):
        assert default_registry().get(name).distribution == "kubesched-network-aware"
    (profile,) = load_config(NETWORK_AWARE).profiles
    assert [r.name for r in profile.plugins["queueSort"]] == ["TopologicalSort"]
    for point in ("preFilter", "filter", "score"):
        assert "NetworkOverhead" in [r.name for r in profile.plugins[point]], point
    assert profile.plugin_args["NetworkOverhead"].network_topology_name == "nt-default"


def pods_of(config: Path, seed: int = 0) -> dict[str, dict[str, Any]]:
    from kubesched.sim.run.simulate import SimulationSettings, simulate
    from kubesched.sim.scenario.reading import load_scenario

    settings = SimulationSettings(seed=seed)
    result = asyncio.run(simulate(load_config(config).profiles, load_scenario(SCENARIO), settings))
    return {str(p["name"]): p for p in result.pods}


@pytest.mark.parametrize("seed", [0, 42])
def test_simulate_keeps_the_dependent_pods_together(network_aware_installed: None, seed: int) -> None:
    default = pods_of(DEFAULT, seed)
    assert all(p["node"] for p in default.values()), default
    assert "east-a" not in {default["cart-0"]["node"], default["cart-1"]["node"]}
    assert {default["frontend-0"]["node"], default["frontend-1"]["node"]} != EAST  # across regions

    aware = pods_of(NETWORK_AWARE, seed)
    assert aware["cart-0"]["node"] == aware["cart-1"]["node"] == "east-a"
    assert {aware["frontend-0"]["node"], aware["frontend-1"]["node"]} == EAST
    refused = aware["cart-0"]["filter"]["east-b"]["NetworkOverhead"]
    assert refused == (
        "Node east-b does not meet several network requirements from Workload dependencies: Satisfied: 0 Violated: 1"
    )


def test_compare_shows_the_difference(network_aware_installed: None) -> None:
    metrics = compare_metrics(SCENARIO, DEFAULT, NETWORK_AWARE)
    # the same pods placed (the README's table), on fewer nodes: packed where they talk
    assert metrics["default-scheduler"]["scheduled"] == metrics["network-aware-scheduler"]["scheduled"] == 4
    assert (
        metrics["default-scheduler"]["allocation:cpu"] == metrics["network-aware-scheduler"]["allocation:cpu"] == 37.5
    )
    assert (metrics["default-scheduler"]["nodesUsed"], metrics["network-aware-scheduler"]["nodesUsed"]) == (4, 3)
    assert (metrics["default-scheduler"]["zoneSkew"], metrics["network-aware-scheduler"]["zoneSkew"]) == (2, 3)
