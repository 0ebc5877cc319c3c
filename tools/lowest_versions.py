"""The lowest versions pyproject.toml allows for kubesched's direct dependencies, and whether an
environment holds exactly those.

    python tools/lowest_versions.py             # the bounds, one `name==version` a line
    python tools/lowest_versions.py --check     # this interpreter's versions against the bounds

`.ci/run` runs the test suite a second time in an environment built with the lowest versions
(uv's `--resolution lowest-direct`) and then `--check` in it: the run fails when a dependency has
no lower bound, or when the environment holds another version than the bound (the bound names a
release that cannot be installed here, or a bound was loosened without the run using it), so the
bounds published are the versions the suite passed with. It prints every version it compared.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import sys
import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from packaging.requirements import Requirement
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
#: The extras the lowest-versions run installs besides the dependencies (`pip install -e '.[test]'`).
EXTRAS = ("test",)


@dataclass(frozen=True)
class Bound:
    name: str
    #: the lowest version the specifier allows, None where it names none (no `>=`, `==` or `~=`)
    lowest: Version | None
    requirement: str


def requirements(pyproject: Path = ROOT / "pyproject.toml", extras: Iterable[str] = EXTRAS) -> list[Requirement]:
    """The direct dependencies and those of ``extras`` whose markers hold on this interpreter."""
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    texts = list(project.get("dependencies", []))
    for extra in extras:
        texts += project.get("optional-dependencies", {}).get(extra, [])
    reqs = [Requirement(t) for t in texts]
    return [r for r in reqs if r.marker is None or r.marker.evaluate()]


def lowest_bound(req: Requirement) -> Bound:
    """The version a lowest resolution installs for ``req`` when that version exists."""
    floors = [Version(s.version) for s in req.specifier if s.operator in (">=", "==", "~=", "===")]
    return Bound(req.name, max(floors) if floors else None, str(req))


def mismatches(bounds: Sequence[Bound], installed: dict[str, str | None]) -> list[str]:
    """Why an environment whose versions are ``installed`` (by dependency name; None: absent)
    is not the lowest-versions environment of ``bounds``; empty when it is."""
    problems = []
    for b in bounds:
        have = installed.get(b.name)
        if b.lowest is None:
            problems.append(f"{b.requirement}: no lower bound (give it the lowest version the tests pass with)")
        elif have is None:
            problems.append(f"{b.requirement}: not installed")
        elif Version(have) != b.lowest:
            problems.append(
                f"{b.requirement}: {have} installed, not {b.lowest} (the bound must be a version "
                "that installs here and that the suite passed with)"
            )
    return problems


def _installed(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="compare this interpreter's versions with the bounds")
    args = parser.parse_args(argv)
    bounds = [lowest_bound(r) for r in requirements()]
    if not args.check:
        for b in bounds:
            print(f"{b.name}=={b.lowest}" if b.lowest else f"{b.name}  # no lower bound")
        return 0
    installed = {b.name: _installed(b.name) for b in bounds}
    for b in bounds:
        print(f"  {b.name:<28} bound {b.lowest!s:<10} installed {installed[b.name]}")
    problems = mismatches(bounds, installed)
    for p in problems:
        print(f"lowest versions: {p}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
