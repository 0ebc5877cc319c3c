"""tools/lowest_versions.py: the lower bounds of pyproject.toml that CI's second run installs, and
its check that the environment it ran in held exactly those."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("lowest_versions", ROOT / "tools" / "lowest_versions.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["lowest_versions"] = module  # the dataclass looks its module up while it is made
    spec.loader.exec_module(module)
    return module


def test_every_dependency_names_the_lowest_version_it_works_with(tool: ModuleType) -> None:
    """An unbounded dependency resolves to its first release ever in the lowest run (wheel 0.1):
    each one, of the package and of every extra, names its lowest working version."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    texts = project["dependencies"] + [t for extra in project["optional-dependencies"].values() for t in extra]
    unbounded = [t for t in texts if not t.startswith("kubesched") and tool.lowest_bound(Requirement(t)).lowest is None]
    assert unbounded == []


def test_the_bounds_are_read_from_pyproject_with_their_markers(tool: ModuleType) -> None:
    bounds = {b.name: b.lowest for b in map(tool.lowest_bound, tool.requirements())}
    assert bounds["pydantic"] == Version("2.12")  # ">=2.12,<3": the lower of the two
    assert "pytest" in bounds  # the test extra's too
    assert ("uvloop" in bounds) == (sys.platform != "win32")


def test_an_environment_of_other_versions_is_refused(tool: ModuleType) -> None:
    bounds = [tool.lowest_bound(Requirement(t)) for t in ("numpy>=1.26", "PyYAML>=6.0", "rich", "cryptography>=41")]
    installed = {"numpy": "1.26.0", "PyYAML": "6.0.1", "rich": "13.7.0", "cryptography": None}
    problems = tool.mismatches(bounds, installed)
    assert [p.split(":")[0] for p in problems] == ["PyYAML>=6.0", "rich", "cryptography>=41"]
    assert "6.0.1 installed, not 6.0" in problems[0]
    assert "no lower bound" in problems[1] and "not installed" in problems[2]
    assert tool.mismatches(bounds[:1], installed) == []


def test_ci_runs_the_suite_on_the_lowest_versions_and_checks_them() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "--resolution lowest-direct" in ci
    assert (
        ci.rindex("--resolution lowest-direct") < ci.rindex("tools/lowest_versions.py --check") < ci.rindex("-m pytest")
    )
