"""A real ``kubesched sim serve`` process, for tests and benchmarks that talk to it as clients do."""

from __future__ import annotations

import contextlib
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def sim_serve_process(cwd: Path, *args: str) -> Iterator[dict[str, str]]:
    """A ``kubesched sim serve --insecure --port 0`` process started in ``cwd`` with ``args``;
    yields ``url`` (the API, as it printed it), ``web`` (the web view's link, read from the file
    it writes beside the kubeconfig), ``kubeconfig`` and ``pid`` (the process's). SIGTERM at the end; a process that is still running
    10 s later is killed and, unless the body raised, reported as a RuntimeError."""
    cwd.mkdir(parents=True, exist_ok=True)
    kubeconfig = cwd / "kubeconfig"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "kubesched",
            "sim",
            "serve",
            "--insecure",
            "--port",
            "0",
            "--kubeconfig-out",
            str(kubeconfig),
            *args,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        cwd=cwd,
    )
    try:
        assert proc.stdout is not None
        printed = {"kubeconfig": str(kubeconfig), "pid": str(proc.pid)}
        for line in proc.stdout:
            if "embedded API server on" in line:
                printed["url"] = line.split(" on ")[1].strip()
            elif line.startswith("web view: "):
                # sim serve writes the link (it carries the token when there is one) beside the
                # kubeconfig, as <kubeconfig>.weblink, before it prints this line.
                printed["web"] = Path(f"{kubeconfig}.weblink").read_text(encoding="utf-8").strip()
                break
        if "url" not in printed or "web" not in printed:
            raise RuntimeError("sim serve did not start")
        yield printed
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(10)
            hung = False
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            hung = True
    # Reached only when the body raised nothing: a server that ignores SIGTERM is a failure of
    # its own (a user's Ctrl-C would hang too), not something to kill quietly.
    if hung:
        raise RuntimeError("sim serve did not stop within 10 s of SIGTERM (killed)")
