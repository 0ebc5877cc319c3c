"""NodeResourcesAllocatable (plugins/noderesources-allocatable) in the loop: the README's example
(a small and a large node, three one-CPU pods) in a running scheduler over the in-memory cluster;
then as a user runs it, the package installed with pip, with ``simulate`` (where each pod goes)
and the ``compare`` command (the default profile's spread against the packing on the small
node)."""

from __future__ import annotations

import asyncio
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import compare_metrics, installed_package

from kubesched.config import load_config
from kubesched.testing import running_scheduler

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "plugins" / "noderesources-allocatable"
EXAMPLES = PACKAGE / "examples"
SCENARIO = EXAMPLES / "scenario.yaml"
ALLOCATABLE = EXAMPLES / "allocatable-scheduler.yaml"
DEFAULT = EXAMPLES / "default-scheduler.yaml"
JOBS = ("job-0", "job-1", "job-2")
sys.path.insert(0, str(PACKAGE))

from kubesched_noderesources_allocatable import NodeResourcesAllocatable  # noqa: E402


async def test_the_least_allocatable_node_takes_the_pods_the_default_sends_to_the_largest() -> None:
    async with running_scheduler(config=DEFAULT, scenario=SCENARIO) as h:
        assert [await h.wait_bound(p) for p in JOBS] == ["large"] * 3
    async with running_scheduler(config=ALLOCATABLE, scenario=SCENARIO, plugins=[NodeResourcesAllocatable]) as h:
        assert [await h.wait_bound(p) for p in JOBS] == ["small"] * 3


async def test_mode_most_prefers_the_largest(tmp_path: Path) -> None:
    config = tmp_path / "most.yaml"
    config.write_text(ALLOCATABLE.read_text().replace("mode: Least", "mode: Most"))
    async with running_scheduler(config=config, scenario=SCENARIO, plugins=[NodeResourcesAllocatable]) as h:
        assert [await h.wait_bound(p) for p in JOBS] == ["large"] * 3


@pytest.fixture(scope="module")
def allocatable_installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Installed from a copy: a build writes egg-info beside the sources."""
    source = tmp_path_factory.mktemp("allocatable") / "noderesources-allocatable"
    shutil.copytree(PACKAGE, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    with installed_package(source, "kubesched-noderesources-allocatable"):
        yield


def test_simulate_and_compare_show_the_readme_example(allocatable_installed: None) -> None:
    from kubesched.sim.run.simulate import simulate
    from kubesched.sim.scenario.reading import load_scenario

    def nodes_of(path: Path) -> list[str]:
        result = asyncio.run(simulate(load_config(path).profiles, load_scenario(SCENARIO)))
        return [str(p["node"]) for p in sorted(result.pods, key=lambda p: str(p["name"]))]

    assert nodes_of(DEFAULT) == ["large"] * 3
    assert nodes_of(ALLOCATABLE) == ["small"] * 3

    metrics = compare_metrics(SCENARIO, DEFAULT, ALLOCATABLE)
    # the same three pods on one node either way; on the large node (3 of 32 CPUs) or the small
    # one (3 of 4): the spread of the nodes' CPU allocation tells them apart
    assert metrics["default-scheduler"]["scheduled"] == metrics["allocatable-scheduler"]["scheduled"] == 3
    assert metrics["default-scheduler"]["nodeCpuAllocationStdev"] == 4.7
    assert metrics["allocatable-scheduler"]["nodeCpuAllocationStdev"] == 37.5
