"""Where a workload runs: in this process, on uvloop when it is installed, or in a fresh
interpreter (``python -m benchmarks.run ... --in-process``) so that peak RSS is that
workload's alone."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

from benchmarks.backends import run_workload
from benchmarks.catalogue import workload
from benchmarks.measure import Result, with_floor

#: The repository root: a fresh interpreter starts there, so ``benchmarks`` imports as here.
ROOT = Path(__file__).resolve().parent.parent

#: Runs a coroutine to completion on a new event loop (``asyncio.run`` or ``uvloop.run``).
LoopRunner = Callable[[Coroutine[Any, Any, Any]], Any]


def loop_runner(use_uvloop: bool) -> tuple[LoopRunner, str]:
    """``uvloop.run`` when asked for and installed, else ``asyncio.run``; and the loop's name."""
    if use_uvloop:
        try:
            import uvloop
        except ImportError:
            pass
        else:
            return uvloop.run, "uvloop"
    return asyncio.run, "asyncio"


def run_in_process(name: str, use_uvloop: bool = True, backend: str = "memory") -> Result:
    """Run workload ``name`` once here, with upstream's floor filled in."""
    w = workload(name)
    runner, loop = loop_runner(use_uvloop)
    result: Result = runner(run_workload(w, backend))
    result.loop = loop
    return with_floor(result, w.floor)


def run_isolated(name: str, use_uvloop: bool, backend: str = "memory") -> Result:
    """Run one workload in a fresh interpreter, so peak RSS is that workload's alone."""
    cmd = ["--workload", name, "--json", "--in-process", "--backend", backend]
    data = run_fresh(cmd, use_uvloop, ok=(0,), failed=f"workload {name} failed")
    return Result(**data)


def run_fresh(args: list[str], use_uvloop: bool, ok: tuple[int, ...], failed: str) -> dict[str, Any]:
    """The first JSON row ``python -m benchmarks.run *args`` prints in a fresh interpreter;
    ``RuntimeError(failed + its stderr)`` when it exits with a code not in ``ok``."""
    cmd = [sys.executable, "-m", "benchmarks.run", *args]
    if not use_uvloop:
        cmd.append("--no-uvloop")
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False)
    if out.returncode not in ok:
        raise RuntimeError(f"{failed}:\n{out.stderr}")
    row: dict[str, Any] = json.loads(out.stdout)[0]
    return row
