"""``kubesched --help`` (and each command's ``--help``) loads the parser only: numpy, asyncio,
pydantic and the framework, simulator and scheduler are imported by the command that runs."""

from __future__ import annotations

import subprocess
import sys

import pytest

HEAVY = (
    "numpy",
    "asyncio",
    "uvloop",
    "pydantic",
    "yaml",
    "aiohttp",
    "kubernetes_asyncio",
    "kubesched.framework",
    "kubesched.config",
    "kubesched.runtime",
    "kubesched.plugins",
    "kubesched.scheduler",
    "kubesched.sim",
    "kubesched.bench",
    "kubesched.research",
)


@pytest.mark.parametrize(
    "argv",
    [["--help"], ["simulate", "--help"], ["sim", "serve", "--help"], ["run", "--help"], ["bench", "--help"]],
    ids=lambda argv: " ".join(argv),
)
def test_help_imports_nothing_heavy(argv: list[str]) -> None:
    code = (
        "import runpy, sys\n"
        f"sys.argv = ['kubesched', *{argv!r}]\n"
        "try:\n"
        "    runpy.run_module('kubesched', run_name='__main__')\n"
        "except SystemExit:\n"
        "    pass\n"
        f"print(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r} or m.startswith({HEAVY!r})), "
        "file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert "usage: kubesched" in done.stdout
    assert done.stderr.strip().splitlines()[-1] == "[]"


def test_sim_serves_help_names_the_servers_in_flight_defaults() -> None:
    """--help states the in-flight limits without importing the server: the numbers it prints are
    the ones the server applies when the flags are not given."""
    from kubesched.sim.apiserver.inflight import (
        DEFAULT_MAX_MUTATING_REQUESTS_INFLIGHT,
        DEFAULT_MAX_REQUESTS_INFLIGHT,
    )

    done = subprocess.run(
        [sys.executable, "-m", "kubesched", "sim", "serve", "--help"], capture_output=True, text=True, check=True
    )
    text = " ".join(done.stdout.split())
    assert f"default {DEFAULT_MAX_REQUESTS_INFLIGHT}," in text
    assert f"default {DEFAULT_MAX_MUTATING_REQUESTS_INFLIGHT}," in text


def test_the_cel_library_is_loaded_by_the_first_expression_not_by_a_start() -> None:
    """The scheduler, the API server and the DRA plugin start without the ``cel`` library (its
    package brings its own command-line tool along); the first expression compiled loads it."""
    code = (
        "import sys\n"
        "import kubesched.cli.main, kubesched.server.app, kubesched.sim.serve\n"
        "import kubesched.plugins.dynamicresources\n"
        "from kubesched.sim.apiserver.validation import structural\n"
        "print('cel' in sys.modules)\n"
        "from kubesched.plugins.dynamicresources.cel import compile_expression\n"
        "compile_expression('device.driver == \"x\"')\n"
        "print('cel' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.split() == ["False", "True"]
