"""A port already taken ends `kubesched sim serve` and `kubesched run` with one line naming the
address, the port and the reason, and the command's exit code: no traceback."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from kubesched.testing import sim_serve_process

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def taken_port() -> Iterator[int]:
    """A port some other process listens on (127.0.0.1)."""
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        yield holder.getsockname()[1]


def kubesched(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run(
        [sys.executable, "-m", "kubesched", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_sim_serve_on_a_taken_port_says_so_in_one_line(tmp_path: Path, taken_port: int) -> None:
    done = kubesched(tmp_path, "sim", "serve", "--address", "127.0.0.1", "--port", str(taken_port))
    assert done.returncode == 2, done.stderr
    assert done.stderr == f"kubesched: sim serve: cannot listen on 127.0.0.1:{taken_port}: address already in use\n"
    assert sorted(os.listdir(tmp_path)) == []  # no kubeconfig for a server that never listened


def test_run_on_a_taken_port_says_so_in_one_line(tmp_path: Path, taken_port: int) -> None:
    with sim_serve_process(tmp_path / "sim") as sim:
        done = kubesched(
            tmp_path,
            "run",
            "--kubeconfig",
            sim["kubeconfig"],
            "--bind-address",
            "127.0.0.1",
            "--secure-port",
            str(taken_port),
        )
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.splitlines()[-1] == f"kubesched: cannot listen on 127.0.0.1:{taken_port}: address already in use"
