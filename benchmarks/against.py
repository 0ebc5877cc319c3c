"""``python -m benchmarks.run --against REV``: this checkout against another revision, paired.

On a shared machine a single run's pods/s says as much about the neighbours as about the code.
What still compares is two sides measured close together, many times, in turn: each round runs
every workload once on each side, each run in a fresh interpreter, the side that goes first
alternating from round to round; each round gives one ratio (this side / REV) per figure, and the
report is the median ratio with the lowest and highest of the rounds — the spread the machine
allowed.

The other side is REV's tree (``git archive``) in a folder of its own under the cache
(``$XDG_CACHE_HOME/kubesched/against/<commit>``, kept between runs) with an environment of its own
(a venv with REV installed from that tree, as the README installs it), so each side runs with the
dependencies its own ``pyproject.toml`` asks for. With ``--same-env`` REV's tree runs in this
environment instead: quicker, and fair when the dependencies did not change.

The figures paired: CPU seconds per measured pod (the process's user and system time while the
measured pods were scheduled, which a busy neighbour moves far less than it moves wall time);
when a side's benchmarks do not report it (revisions from before it was measured), the whole
process's CPU seconds per measured pod instead, setup included, for both sides alike; and the
scheduling attempt's p50 and p99, and pods/s.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.launch import ROOT
from kubesched.bench.measure import NO_CYCLE_COUNT

#: The figures paired, each as (key of a run's row, what the report calls it, lower is better).
FIGURES = (
    ("cpu_ms_per_pod", "CPU ms/pod", True),
    ("attempt_p50_ms", "p50 ms", True),
    ("attempt_p99_ms", "p99 ms", True),
    ("pods_per_second", "pods/s", False),
)


@dataclass(frozen=True)
class Side:
    """Where one side runs: its tree (the working directory of ``python -m benchmarks.run``) and
    its interpreter."""

    label: str
    root: Path
    python: str


@dataclass
class Pairing:
    """One workload's runs on both sides, round by round."""

    workload: str
    ours: list[dict[str, Any]] = field(default_factory=list)
    theirs: list[dict[str, Any]] = field(default_factory=list)

    def cpu_key(self) -> str:
        """``cpu_ms_per_pod`` when every run of both sides measured it over the measured window,
        else ``process_cpu_ms_per_pod`` (the whole process, for both alike)."""
        runs = self.ours + self.theirs
        return "cpu_ms_per_pod" if all(r.get("cpu_ms_per_pod") for r in runs) else "process_cpu_ms_per_pod"

    def ratios(self, key: str) -> list[float]:
        """Round by round, this side's ``key`` divided by REV's (rounds where REV's is 0 left out)."""
        return [o[key] / t[key] for o, t in zip(self.ours, self.theirs, strict=True) if t.get(key)]

    def to_json(self) -> dict[str, Any]:
        cpu = self.cpu_key()
        row: dict[str, Any] = {"workload": self.workload, "rounds": len(self.ours), "cpu_measure": cpu}
        for key, _, _ in FIGURES:
            k = cpu if key == "cpu_ms_per_pod" else key
            ratios = self.ratios(k)
            row[key] = {
                "ours_median": _median([r[k] for r in self.ours]),
                "theirs_median": _median([r[k] for r in self.theirs]),
                "ratio_median": round(statistics.median(ratios), 3) if ratios else None,
                "ratio_min": round(min(ratios), 3) if ratios else None,
                "ratio_max": round(max(ratios), 3) if ratios else None,
            }
        return row


def _median(values: list[float]) -> float | None:
    return round(statistics.median(values), 4) if values else None


def cache_dir() -> Path:
    """Where the other sides' trees and environments are kept between runs."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "kubesched" / "against"


def resolve(rev: str, repo: Path = ROOT) -> str:
    """The full commit ``rev`` names in ``repo``; ``ValueError`` with git's words when none."""
    out = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"],
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode != 0:
        raise ValueError(f"--against: {rev!r} names no commit in {repo}")
    return out.stdout.strip()


def prepare(rev: str, same_env: bool, say: Callable[[str], None], repo: Path = ROOT) -> Side:
    """REV's side: its tree unpacked under the cache, and (unless ``same_env``) a venv of its own
    with REV installed; both reused when already there."""
    commit = resolve(rev, repo)
    home = cache_dir() / commit
    tree = home / "tree"
    if not (tree / "benchmarks" / "run.py").exists():
        say(f"unpacking {commit[:12]} into {tree}")
        _unpack(repo, commit, tree)
    if same_env:
        return Side(f"{rev} ({commit[:12]})", tree, sys.executable)
    venv = home / "venv"
    python = venv / "bin" / "python"
    ready = home / "venv.ready"
    if not ready.exists():
        say(f"installing {commit[:12]} into its own environment {venv} (once; kept for the next run)")
        shutil.rmtree(venv, ignore_errors=True)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run(
            [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", "-e", str(tree)], check=True
        )
        ready.write_text(commit + "\n")
    return Side(f"{rev} ({commit[:12]})", tree, str(python))


def _unpack(repo: Path, commit: str, tree: Path) -> None:
    shutil.rmtree(tree, ignore_errors=True)
    tree.mkdir(parents=True)
    with tempfile.TemporaryFile() as archive:
        subprocess.run(["git", "-C", str(repo), "archive", "--format=tar", commit], stdout=archive, check=True)
        archive.seek(0)
        with tarfile.open(fileobj=archive) as tar:
            if hasattr(tarfile, "data_filter"):
                tar.extractall(tree, filter="data")
            else:  # Python before 3.11.4; the archive is git's own
                tar.extractall(tree)


#: The side's own packages, byte-compiled before any run (:func:`precompile`).
SOURCES = ("kubesched", "benchmarks")


def precompile(side: Side) -> None:
    """Byte-compile the side's own sources once, before it is measured, so that no run compiles
    them. Each run is a fresh interpreter: where bytecode is not written
    (``PYTHONDONTWRITEBYTECODE``) or a tree was never imported, every run would compile every
    module it imports, and the side with more code, or fewer files already compiled, would pay
    for it in CPU per pod — the compiler's cost, not the scheduler's. ``compileall`` writes the
    cache whatever that setting says; importing reads it either way."""
    dirs = [str(side.root / d) for d in SOURCES if (side.root / d).is_dir()]
    out = subprocess.run(
        [side.python, "-m", "compileall", "-q", "-j", "0", *dirs], capture_output=True, text=True, check=False
    )
    if out.returncode != 0:
        raise RuntimeError(f"byte-compiling {side.label} failed:\n{(out.stdout + out.stderr)[-4000:]}")


#: ``python -m benchmarks.run`` as both sides of a pair run it: with every object frozen when the
#: run is over, so that the interpreter's closing collection walks nothing. That collection is the
#: harness's, not the scheduler's; a revision that unfroze what its scheduler froze would pay a
#: walk over every object it made (0.5 s on a 5000-node workload) where one that did not pays none.
FROZEN_EXIT = (
    "import gc, runpy\n"
    "try:\n"
    "    runpy.run_module('benchmarks.run', run_name='__main__', alter_sys=True)\n"
    "finally:\n"
    "    gc.freeze()\n"
)


def run_once(side: Side, workload: str, backend: str, use_uvloop: bool) -> dict[str, Any]:
    """One run of ``workload`` on ``side`` in a fresh interpreter: its JSON row, with the whole
    process's CPU seconds per measured pod added as ``process_cpu_ms_per_pod``; reference cycles
    not counted (:data:`~kubesched.bench.measure.NO_CYCLE_COUNT`), no closing collection
    (:data:`FROZEN_EXIT`)."""
    cmd = [side.python, "-c", FROZEN_EXIT, "-w", workload, "--json", "--in-process", "--backend", backend]
    if not use_uvloop:
        cmd.append("--no-uvloop")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    # No count of reference cycles on either side: its closing full collection is the
    # harness's CPU, which a revision measured by its whole process does not spend. Both sides
    # replay the trace this checkout finds (the other's checkout lies elsewhere).
    env = {**os.environ, NO_CYCLE_COUNT: "1", **_traces()}
    out = subprocess.run(cmd, cwd=side.root, env=env, capture_output=True, text=True, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode != 0:
        raise RuntimeError(f"{workload} on {side.label} failed:\n{out.stderr[-4000:]}")
    rows = json.loads(out.stdout)
    if not rows:  # skipped: the reason is on its stderr
        raise RuntimeError(f"{workload} on {side.label} did not run: {out.stderr.strip()[-2000:]}")
    row: dict[str, Any] = rows[0]
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    row["process_cpu_ms_per_pod"] = round(cpu * 1000 / max(row["measure_pods"], 1), 4)
    return row


def _traces() -> dict[str, str]:
    """``KUBESCHED_TRACES`` for both sides: where this checkout finds the traces (none if it
    finds none, or if it is set already)."""
    from kubesched.sim.scenario.openb import trace_dir

    found = trace_dir()
    return {"KUBESCHED_TRACES": str(found.parent)} if found is not None and "KUBESCHED_TRACES" not in os.environ else {}


def pair(
    workloads: list[str],
    ours: Side,
    theirs: Side,
    rounds: int,
    backend: str = "memory",
    use_uvloop: bool = True,
    say: Callable[[str], None] = lambda _: None,
) -> list[Pairing]:
    """``rounds`` rounds; in each, every workload once on each side, the side that goes first
    alternating between rounds (this side first in round 1)."""
    for side in (ours, theirs):
        precompile(side)
    pairings = {w: Pairing(w) for w in workloads}
    total = rounds * len(workloads) * 2
    done = 0
    for r in range(rounds):
        order = [(ours, True), (theirs, False)]
        if r % 2:
            order.reverse()
        for w in workloads:
            for side, is_ours in order:
                done += 1
                say(f"[{done}/{total}] round {r + 1}: {w} on {side.label}")
                row = run_once(side, w, backend, use_uvloop)
                (pairings[w].ours if is_ours else pairings[w].theirs).append(row)
    return list(pairings.values())
