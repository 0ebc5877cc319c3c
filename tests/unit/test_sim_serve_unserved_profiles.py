"""`sim serve --with-scheduler` says when a scenario's pods name a scheduler no profile runs
(they would stay pending without a word), and how to run one for them."""

from __future__ import annotations

from pathlib import Path

from kubesched.cli.sim_serve import unserved_scheduler_names
from kubesched.config import load_config
from kubesched.sim.scenario.reading import load_scenario

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "config" / "scenarios" / "demo.yaml"


def test_the_demo_without_its_configuration_warns_about_its_bin_packing_pods() -> None:
    scenario = load_scenario(DEMO)
    (warning,) = unserved_scheduler_names(scenario, load_config(None), None)
    wanted = sum(1 for p in scenario.pending_pods if p["spec"].get("schedulerName") == "bin-packing-scheduler")
    assert wanted > 0
    assert warning.startswith(f"{wanted} pod(s) of the scenario name schedulerName 'bin-packing-scheduler'")
    assert "--config config/kubesched.yaml" in warning


def test_with_the_configuration_it_runs_there_is_nothing_to_say() -> None:
    scenario = load_scenario(DEMO)
    cfg = load_config(ROOT / "config" / "kubesched.yaml")
    assert unserved_scheduler_names(scenario, cfg, "config/kubesched.yaml") == []
    assert unserved_scheduler_names(None, cfg, None) == []
