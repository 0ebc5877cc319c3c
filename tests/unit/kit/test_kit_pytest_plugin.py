"""kubesched's pytest plugin: its fixtures in this repository's tests, and in another project's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import tomllib
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from kubesched import Status
from kubesched.testing import Harness, MemoryCluster, PluginFramework

ROOT = Path(__file__).resolve().parents[3]


class Draining:
    name = "Draining"

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    def filter(self, state: Any, pod: Any, node: Any) -> Status | None:
        return Status.unschedulable("node(s) are draining") if node.labels.get("draining") else None


def test_the_entry_point_names_the_plugin_module() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["entry-points"]["pytest11"] == {"kubesched": "kubesched.testing.pytest_plugin"}


def test_framework_and_builders_fixtures(kubesched_framework: Any, kubesched_builders: Any) -> None:
    b = kubesched_builders
    fw = kubesched_framework(Draining, nodes=[b.node("n1").label("draining", "1"), b.node("n2")])
    assert isinstance(fw, PluginFramework)
    assert fw.filter_all(b.pod("p")) == {"n1": Status.unschedulable("node(s) are draining"), "n2": None}


def test_cluster_fixture(kubesched_cluster: MemoryCluster, kubesched_builders: Any) -> None:
    kubesched_cluster.add(kubesched_builders.node("n1"), kubesched_builders.pod("p"))
    assert kubesched_cluster.get("Node", "n1", None)["metadata"]["name"] == "n1"
    assert kubesched_cluster.store.list("Pod")[0][0]["metadata"]["name"] == "p"


async def test_scheduler_fixture(kubesched_scheduler: Any, kubesched_builders: Any) -> None:
    b = kubesched_builders
    s = await kubesched_scheduler(
        plugins=[Draining],
        nodes=[
            b.node("n1").capacity(cpu="4", pods="10").label("draining", "1"),
            b.node("n2").capacity(cpu="4", pods="10"),
        ],
        pods=[b.pod("p")],
    )
    assert isinstance(s, Harness)
    assert await s.wait_bound("p") == "n2"


@pytest.mark.slow
def test_sim_serve_fixture(kubesched_sim_serve: Any) -> None:
    served = kubesched_sim_serve()
    with urllib.request.urlopen(f"{served['url']}/api/v1/namespaces", timeout=10) as response:
        names = {item["metadata"]["name"] for item in json.load(response)["items"]}
    assert "default" in names
    assert Path(served["kubeconfig"]).is_file()


def test_another_project_gets_the_fixtures(tmp_path: Path) -> None:
    """A project with kubesched installed: no conftest, the plugin as its entry point loads it."""
    (tmp_path / "test_mine.py").write_text(
        textwrap.dedent(
            """
            import pytest
            from kubesched import Status

            class OnlyEven:
                name = "OnlyEven"
                def __init__(self, args, handle):
                    pass
                def filter(self, state, pod, node):
                    return None if int(node.name[1:]) % 2 == 0 else Status.unschedulable("odd")

            def test_points(kubesched_framework, kubesched_builders):
                fw = kubesched_framework(OnlyEven, nodes=[kubesched_builders.node(f"n{i}") for i in range(3)])
                assert [n for n, s in fw.filter_all(kubesched_builders.pod("p")).items() if s is None] == ["n0", "n2"]

            @pytest.mark.asyncio
            async def test_scheduler(kubesched_scheduler, kubesched_builders):
                b = kubesched_builders
                s = await kubesched_scheduler(
                    plugins=[OnlyEven],
                    nodes=[b.node("n1").capacity(cpu="1", pods="9"), b.node("n2").capacity(cpu="1", pods="9")],
                    pods=[b.pod("p")],
                )
                assert await s.wait_bound("p") == "n2"
            """
        )
    )
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        # as if by the entry point, whether or not this checkout is the one installed
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
    }
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "pytest_asyncio.plugin", "-p", "kubesched.testing.pytest_plugin"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "2 passed" in run.stdout
