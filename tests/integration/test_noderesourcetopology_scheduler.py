"""NodeResourceTopologyMatch (plugins/noderesourcetopology) in a running scheduler over the
in-memory cluster, its NodeResourceTopology objects read through the scheduler's informers: the
example scenario against the default profile (a NUMA-misaligned placement avoided), two pods in
flight against a cell's last CPUs through the real loop, a refused pod retried when its node's
topology changes; the package installed with pip, its example run by ``simulate`` and
``compare``."""

from __future__ import annotations

import asyncio
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import installed_package

from kubesched.config import load_config
from kubesched.runtime.registry import default_registry
from kubesched.testing import running_scheduler

PACKAGE = Path(__file__).resolve().parents[2] / "plugins" / "noderesourcetopology"
EXAMPLES = PACKAGE / "examples"
sys.path.insert(0, str(PACKAGE))

from kubesched_noderesourcetopology import CRD, NodeResourceTopologyMatch  # noqa: E402

SCENARIO = EXAMPLES / "scenario.yaml"
NUMA = EXAMPLES / "numa-scheduler.yaml"
DEFAULT = EXAMPLES / "default-scheduler.yaml"
NRT_KIND = "noderesourcetopologies.topology.node.k8s.io"


def documents(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


def test_the_example_scenario_carries_the_shipped_definition_unchanged() -> None:
    (shipped,) = documents(CRD)
    in_scenario = [d for d in documents(SCENARIO) if d["kind"] == "CustomResourceDefinition"]
    assert in_scenario == [shipped]


async def test_the_misaligned_placement_of_the_default_profile_is_avoided() -> None:
    async with running_scheduler(config=DEFAULT, scenario=SCENARIO) as h:
        assert await h.wait_bound("numa-job-0") == "worker-a"  # no cell of worker-a has 4 CPUs
        assert await h.wait_bound("numa-job-1") == "worker-b"
    async with running_scheduler(config=NUMA, scenario=SCENARIO, plugins=[NodeResourceTopologyMatch]) as h:
        assert await h.wait_bound("numa-job-0") == "worker-b"
        reason = await h.wait_unschedulable("numa-job-1")
        assert "1 cannot align pod" in reason and "1 Insufficient cpu" in reason, reason


def one_cell_left(version: str = "1", free: tuple[str, str] = ("0", "4")) -> dict[str, Any]:
    """An 8-CPU node whose cell 0 is taken (by what the kubelet pinned) and cell 1 has 4 free."""
    return {
        "apiVersion": "topology.node.k8s.io/v1alpha2",
        "kind": "NodeResourceTopology",
        "metadata": {"name": "worker", "resourceVersion": version},
        "attributes": [
            {"name": "topologyManagerPolicy", "value": "single-numa-node"},
            {"name": "topologyManagerScope", "value": "container"},
        ],
        "zones": [
            {
                "name": f"node-{i}",
                "type": "Node",
                "resources": [
                    {"name": "cpu", "capacity": "4", "allocatable": "4", "available": cpu},
                    {"name": "memory", "capacity": "8Gi", "allocatable": "8Gi", "available": "8Gi"},
                ],
            }
            for i, cpu in enumerate(free)
        ],
    }


def cluster(*pods: str) -> list[dict[str, Any]]:
    (crd,) = documents(CRD)
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "worker"},
        "status": {"allocatable": {"cpu": "8", "memory": "16Gi", "pods": "110"}},
    }
    return [crd, node, one_cell_left(), *(job(p) for p in pods)]


def job(name: str) -> dict[str, Any]:
    res = {"cpu": "4", "memory": "1Gi"}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"containers": [{"name": "app", "image": "pause", "resources": {"requests": res, "limits": res}}]},
    }


def config(args: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {
                "plugins": {"multiPoint": {"enabled": [{"name": "NodeResourceTopologyMatch"}]}},
                "pluginConfig": [{"name": "NodeResourceTopologyMatch", "args": args}],
            }
        ],
    }


async def place_two(args: dict[str, Any]) -> dict[str, str | None]:
    """Two 4-CPU jobs at once; the node's agent never reports in between."""
    async with running_scheduler(
        config=config(args), objects=cluster("job-0", "job-1"), plugins=[NodeResourceTopologyMatch]
    ) as h:
        await h.wait_bound("job-0")
        await h.wait_for(lambda: h.node_of("job-1") or h.unschedulable("job-1"))
        return {"job-0": h.node_of("job-0"), "job-1": h.node_of("job-1") or h.unschedulable("job-1")}


async def test_with_the_reserve_cache_the_second_pod_in_flight_is_kept_off_the_last_cpus() -> None:
    placed = await place_two({"cacheResyncPeriodSeconds": 5})
    assert placed["job-0"] == "worker"
    assert str(placed["job-1"]).startswith("0/1 nodes are available: 1 cannot align container."), placed


async def test_without_it_both_take_the_cell_and_the_kubelet_would_refuse_one() -> None:
    """Upstream's default (no cache): what the agent has not reported is not seen."""
    assert await place_two({}) == {"job-0": "worker", "job-1": "worker"}


async def test_a_refused_pod_is_retried_when_its_node_reports_a_free_cell() -> None:
    async with running_scheduler(config=config({}), objects=cluster(), plugins=[NodeResourceTopologyMatch]) as h:
        h.update(one_cell_left(free=("0", "2")))
        h.add(job("job-0"))
        assert "cannot align container" in await h.wait_unschedulable("job-0")
        h.update(one_cell_left(version="2", free=("4", "2")))
        assert await h.wait_bound("job-0") == "worker"


# --- the package, installed ------------------------------------------------------------------------
@pytest.fixture(scope="module")
def nrt_installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Installed from a copy: a build writes egg-info beside the sources."""
    source = tmp_path_factory.mktemp("nrt") / "noderesourcetopology"
    shutil.copytree(PACKAGE, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    with installed_package(source, "kubesched-noderesourcetopology"):
        yield


def test_the_entry_point_registers_the_plugin_at_its_points(nrt_installed: None) -> None:
    entry = default_registry().get("NodeResourceTopologyMatch")
    assert entry.distribution == "kubesched-noderesourcetopology"
    (profile,) = load_config(NUMA).profiles
    for point in ("filter", "score", "reserve", "postBind"):
        assert "NodeResourceTopologyMatch" in [r.name for r in profile.plugins[point]], point


def test_simulate_and_compare_show_what_the_plugin_changes(nrt_installed: None) -> None:
    from kubesched.sim.run.simulate import simulate
    from kubesched.sim.scenario.reading import load_scenario

    def nodes(path: Path) -> dict[str, str]:
        result = asyncio.run(simulate(load_config(path).profiles, load_scenario(SCENARIO)))
        return {p["name"]: p["node"] or p.get("message", "") for p in result.pods}

    assert nodes(DEFAULT) == {"numa-job-0": "worker-a", "numa-job-1": "worker-b"}
    numa = nodes(NUMA)
    assert numa["numa-job-0"] == "worker-b"
    assert "cannot align pod" in numa["numa-job-1"]


def test_compare_gives_the_readme_table(nrt_installed: None) -> None:
    """``kubesched compare`` over the example, both profiles, seed 42: the README's numbers."""
    from kubesched.research.compare_scenario import compare_scenario

    default, numa = asyncio.run(compare_scenario(SCENARIO, [DEFAULT, NUMA], [42]))
    assert (default.name, numa.name) == ("default-scheduler", "numa-scheduler")
    wanted = {"default-scheduler": (81.25, 2, 0), "numa-scheduler": (56.25, 1, 1)}
    for run in (default, numa):
        m = run.metrics
        assert (m["allocation:cpu"], m["scheduled"], m["unschedulable"]) == wanted[run.name], m
