"""The soak's subprocesses (the API server and the scheduler replicas): started with their
output in a log file, sampled for RSS, stopped by their own pid only."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
from pathlib import Path

#: The repository root: every process starts there, as a user's would.
ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    """A TCP port on loopback that was free a moment ago."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def rss_bytes(pid: int) -> int | None:
    """The resident set of process ``pid`` (from /proc), or None when it is gone."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


class Proc:
    """A subprocess whose output goes to a log file; stopped by its own pid only."""

    def __init__(self, name: str, argv: list[str], logdir: Path) -> None:
        self.name = name
        self.log = logdir / f"{name}.log"
        self._out = open(self.log, "w", encoding="utf-8")  # closed in stop()
        self.popen = subprocess.Popen(
            argv, stdout=self._out, stderr=subprocess.STDOUT, cwd=ROOT, env={**os.environ, "PYTHONUNBUFFERED": "1"}
        )
        self.killed = False
        self.peak = 0

    @property
    def pid(self) -> int:
        return self.popen.pid

    def alive(self) -> bool:
        return self.popen.poll() is None

    def sample(self) -> int | None:
        rss = rss_bytes(self.pid) if self.alive() else None
        if rss is not None:
            self.peak = max(self.peak, rss)
        return rss

    def kill(self) -> None:
        self.killed = True
        with contextlib.suppress(ProcessLookupError):
            self.popen.send_signal(signal.SIGKILL)

    def stop(self, grace: float = 10.0) -> None:
        if self.alive():
            with contextlib.suppress(ProcessLookupError):
                self.popen.send_signal(signal.SIGTERM)
            try:
                self.popen.wait(grace)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait(5)
        self._out.close()

    def tail(self, lines: int = 5) -> str:
        try:
            return "\n".join(self.log.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])
        except OSError:
            return ""
