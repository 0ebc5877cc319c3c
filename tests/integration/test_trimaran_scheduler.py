"""TargetLoadPacking (plugins/trimaran) placing a pod by measured load, where the default
profile places it by requests: the example scenario (pods whose ``kubesched.io/usage`` differs
from what they request) in a running scheduler over the in-memory cluster (the load from the
simulator's usage), with ``simulate``; and as a user meets it against an API server, the package
installed with pip, ``kubesched sim serve`` serving the scenario and its metrics API (read by the
real ``kubectl top nodes``), ``kubesched run`` reading the NodeMetrics over HTTP through its own
connection."""

from __future__ import annotations

import asyncio
import json
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import installed_package
from polling import eventually_sync

from kubesched.config import load_config
from kubesched.testing import running_scheduler, sim_serve_process

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "plugins" / "trimaran"
EXAMPLES = PACKAGE / "examples"
SCENARIO = EXAMPLES / "scenario.yaml"
TRIMARAN = EXAMPLES / "trimaran-scheduler.yaml"
DEFAULT = EXAMPLES / "default-scheduler.yaml"
sys.path.insert(0, str(PACKAGE))

from kubesched_trimaran import LoadVariationRiskBalancing, LowRiskOverCommitment, TargetLoadPacking  # noqa: E402

KUBECTL = shutil.which("kubectl")


async def test_target_load_packing_places_by_load_where_the_default_places_by_requests() -> None:
    async with running_scheduler(config=DEFAULT, scenario=SCENARIO) as h:
        assert await h.wait_bound("web-0") == "worker-b"  # the fewest CPUs requested
    async with running_scheduler(config=TRIMARAN, scenario=SCENARIO, plugins=[TargetLoadPacking]) as h:
        # worker-a: 25% used + web-0's predicted 15% = the 40% target
        assert await h.wait_bound("web-0") == "worker-a"


def profile_with(tmp_path: Path, name: str) -> Path:
    """The example profile with ``name`` in place of TargetLoadPacking, its default args."""
    text = TRIMARAN.read_text().replace("TargetLoadPacking", name)
    text = text[: text.index("    pluginConfig:")]
    path = tmp_path / f"{name}.yaml"
    path.write_text(text)
    return path


async def test_the_risk_plugins_run_in_the_loop_over_the_simulator_usage(tmp_path: Path) -> None:
    """LowRiskOverCommitment: worker-c uses more than its pods request (80% against 25%): the
    risk of its load is certain, and web-0 goes elsewhere. LoadVariationRiskBalancing: the lowest
    mean of load plus request, worker-b (22.5% of its CPU with web-0)."""
    config = profile_with(tmp_path, "LowRiskOverCommitment")
    async with running_scheduler(config=config, scenario=SCENARIO, plugins=[LowRiskOverCommitment]) as h:
        assert await h.wait_bound("web-0") in ("worker-a", "worker-b")
    config = profile_with(tmp_path, "LoadVariationRiskBalancing")
    async with running_scheduler(config=config, scenario=SCENARIO, plugins=[LoadVariationRiskBalancing]) as h:
        assert await h.wait_bound("web-0") == "worker-b"


def test_simulate_shows_the_same(trimaran_installed: None) -> None:
    from kubesched.sim.run.simulate import simulate
    from kubesched.sim.scenario.reading import load_scenario

    def node_of(path: Path) -> str:
        result = asyncio.run(simulate(load_config(path).profiles, load_scenario(SCENARIO)))
        (web,) = [p for p in result.pods if p["name"] == "web-0"]
        return str(web["node"])

    assert (node_of(DEFAULT), node_of(TRIMARAN)) == ("worker-b", "worker-a")


@pytest.fixture(scope="module")
def trimaran_installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Installed from a copy: a build writes egg-info beside the sources."""
    source = tmp_path_factory.mktemp("trimaran") / "trimaran"
    shutil.copytree(PACKAGE, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    with installed_package(source, "kubesched-trimaran"):
        yield


@pytest.mark.slow
@pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")
def test_kubesched_run_reads_the_metrics_api_over_http(trimaran_installed: None, tmp_path: Path) -> None:
    with sim_serve_process(tmp_path / "serve", "--scenario", str(SCENARIO)) as served:
        kubeconfig = served["kubeconfig"]

        def kubectl(*args: str) -> str:
            out = subprocess.run(
                [KUBECTL or "kubectl", "--kubeconfig", kubeconfig, "--cache-dir", str(tmp_path / "cache"), *args],
                capture_output=True,
                text=True,
                timeout=60,
                check=False,
            )
            assert out.returncode == 0, out.stderr
            return out.stdout

        top = {line.split()[0]: line.split()[2] for line in kubectl("top", "nodes", "--no-headers").splitlines()}
        assert top == {"worker-a": "25%", "worker-b": "12%", "worker-c": "80%"}, top
        log = tmp_path / "scheduler.log"
        with log.open("w") as out:
            scheduler = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "kubesched",
                    "run",
                    "--kubeconfig",
                    kubeconfig,
                    "--config",
                    str(TRIMARAN),
                    "--leader-elect=false",
                    "-v",
                ],
                stdout=out,
                stderr=subprocess.STDOUT,
                cwd=tmp_path,
            )
        try:

            def web() -> str:
                pod = json.loads(kubectl("get", "pod", "web-0", "-o", "json"))
                return str(pod["spec"].get("nodeName") or "")

            assert eventually_sync(web, "web-0 bound", until=bool, timeout=30) == "worker-a"
            logged = log.read_text()
            assert (
                "unable to update metrics" not in logged
                and "metrics of 3 node(s) from KubernetesMetricsServer" in logged
            ), logged
        finally:
            scheduler.send_signal(signal.SIGTERM)
            try:
                scheduler.wait(10)
            except subprocess.TimeoutExpired:
                scheduler.kill()
                scheduler.wait()
