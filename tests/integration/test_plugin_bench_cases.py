"""Every plugin package of ``plugins/`` with a ``bench/`` folder, benchmarked as its README says:
``kubesched bench <bench/workloads.yaml> --config <bench/config> --label integration-test`` with
the package pip-installed, beside the default profile.

The convention (docs/writing-a-plugin.md, docs/bench.md): ``bench/workloads.yaml`` holds
scheduler_perf-shaped cases, each with a small size labelled ``integration-test, short`` and a
larger one labelled ``performance``; every other ``bench/*.yaml`` whose kind is
KubeSchedulerConfiguration is a configuration to measure, each of its profiles enabling a plugin
of the package. Packages are found, not listed: one given a ``bench/`` folder later is run too.

Each small size must place every measured pod under the plugin's profile and under the default
one, and the plugin's profile must have its own rows.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import installed_package

from kubesched.bench.workload import load_workloads, select_labelled

ROOT = Path(__file__).resolve().parents[2]
PLUGINS = ROOT / "plugins"
SMALL = "integration-test"
#: The packages given a bench/ folder so far; more may come, none may lose it.
KNOWN = {
    "capacity-scheduling",
    "coscheduling",
    "network-aware",
    "noderesources-allocatable",
    "noderesourcetopology",
    "preemption-toleration",
    "qos-sort",
    "sysched",
    "trimaran",
}


@dataclass(frozen=True)
class Case:
    """One run: a package's workloads under one profile of one of its bench configurations."""

    package: Path
    config: Path
    #: The profile's schedulerName: what bench's rows call it.
    profile: str
    #: Whether the configuration has other profiles (then ``--profile`` picks this one).
    several: bool

    @property
    def id(self) -> str:
        return f"{self.package.name}:{self.config.name}:{self.profile}"


def _pyproject(package: Path) -> dict[str, Any]:
    with (package / "pyproject.toml").open("rb") as f:
        return tomllib.load(f)


def _plugin_names(package: Path) -> set[str]:
    """The plugins the package registers (its ``kubesched.plugins`` entry points)."""
    return set(_pyproject(package)["project"].get("entry-points", {}).get("kubesched.plugins", {}))


def _configs(package: Path) -> list[Path]:
    out = []
    for path in sorted((package / "bench").glob("*.yaml")):
        if path.name == "workloads.yaml":
            continue
        doc = yaml.safe_load(path.read_text())
        if isinstance(doc, dict) and doc.get("kind") == "KubeSchedulerConfiguration":
            out.append(path)
    return out


def _profiles(config: Path) -> list[dict[str, Any]]:
    profiles: list[dict[str, Any]] = yaml.safe_load(config.read_text()).get("profiles") or []
    return profiles


def _enabled(profile: dict[str, Any]) -> set[str]:
    """Every plugin a profile enables, at any extension point (multiPoint included)."""
    points = profile.get("plugins") or {}
    return {p["name"] for point in points.values() for p in (point or {}).get("enabled") or []}


def bench_packages() -> list[Path]:
    return sorted(p.parent.parent for p in PLUGINS.glob("*/bench/workloads.yaml"))


def cases() -> list[Case]:
    out = []
    for package in bench_packages():
        configs = _configs(package)
        if not configs:  # a bench/ folder without a configuration is reported by its own case
            out.append(Case(package, package / "bench", "", False))
        for config in configs:
            names = [str(p.get("schedulerName", "default-scheduler")) for p in _profiles(config)]
            out.extend(Case(package, config, name, len(names) > 1) for name in names)
    return out


@pytest.fixture(scope="module")
def packages_installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Every package with a bench/ folder pip-installed once for the module (from copies: a build
    writes egg-info beside the sources), for the bench processes the tests start."""
    with contextlib.ExitStack() as stack:
        for package in bench_packages():
            source = tmp_path_factory.mktemp(package.name) / package.name
            shutil.copytree(package, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
            stack.enter_context(installed_package(source, _pyproject(package)["project"]["name"]))
        yield


def test_the_packages_with_bench_cases_are_found() -> None:
    found = {p.name for p in bench_packages()}
    assert KNOWN <= found, f"no bench/workloads.yaml in plugins/{', plugins/'.join(sorted(KNOWN - found))}"


@pytest.mark.parametrize("package", bench_packages(), ids=lambda p: p.name)
def test_every_case_has_a_small_and_a_performance_size(package: Path) -> None:
    workloads = load_workloads(package / "bench" / "workloads.yaml")
    cases_of: dict[str, list[tuple[str, ...]]] = {}
    for w in workloads:
        cases_of.setdefault(w.name.split("/", 1)[0], []).append(w.labels)
    assert cases_of, f"{package.name}/bench/workloads.yaml: no workload"
    for case, labels in cases_of.items():
        assert any({"integration-test", "short"} <= set(ls) for ls in labels), (
            f"{package.name}: {case} has no size labelled integration-test, short"
        )
        assert any("performance" in ls for ls in labels), f"{package.name}: {case} has no size labelled performance"


@pytest.mark.parametrize("case", cases(), ids=lambda c: c.id)
def test_the_small_sizes_place_every_measured_pod_under_both_profiles(
    case: Case, packages_installed: None, tmp_path: Path
) -> None:
    assert case.profile, f"plugins/{case.package.name}/bench: no KubeSchedulerConfiguration beside workloads.yaml"
    profile = next(p for p in _profiles(case.config) if p.get("schedulerName", "default-scheduler") == case.profile)
    mine = _enabled(profile) & _plugin_names(case.package)
    assert mine, f"{case.config}: profile {case.profile} enables none of the package's plugins"

    workloads_file = case.package / "bench" / "workloads.yaml"
    expected = {w.name: w.measured_pods for w in select_labelled(load_workloads(workloads_file), SMALL)}
    assert expected, f"{workloads_file}: no workload labelled {SMALL}"
    argv = [sys.executable, "-m", "kubesched", "bench", str(workloads_file), "--config", str(case.config)]
    if case.several:
        argv += ["--profile", case.profile]
    argv += ["--label", SMALL, "--json", "--no-progress", "--timeout", "60"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (os.environ.get("PYTHONPATH"), str(ROOT)) if p)}
    out = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False, env=env)
    assert out.returncode == 0, out.stderr

    rows: list[dict[str, Any]] = json.loads(out.stdout)
    seen = {(r["workload"], r["profile"]): r for r in rows}
    assert set(seen) == {(w, p) for w in expected for p in (case.profile, "default")}, sorted(seen)
    for (workload, profile_name), row in seen.items():
        placed = (row["measure_pods"], row["scheduled"], row["unschedulable"])
        assert placed == (expected[workload], expected[workload], 0), f"{workload} under {profile_name}: {placed}"
    for workload in expected:
        assert "vs_default" in seen[(workload, case.profile)], "the plugin's rows are compared with the default's"
