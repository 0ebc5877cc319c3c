"""What `kubesched sim serve` writes, run as a real process: the admin token only in 0600 files
(never on stdout), no file written through a symbolic link, IPv6 addresses bracketed in every
URL, and a real client connecting with the kubeconfig it wrote."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from kubernetes_asyncio import client as kube_client
from kubernetes_asyncio import config as kube_config


@contextlib.contextmanager
def sim_serve(cwd: Path, *args: str) -> Iterator[Path]:
    """``sim serve --port 0 ARGS`` with its stdout and stderr in ``cwd/out.log``; yields the
    log once the kubeconfig is written (or the process has exited). SIGTERM at the end."""
    log = cwd / "out.log"
    with log.open("w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "kubesched", "sim", "serve", "--port", "0", *args],
            cwd=cwd,
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
    try:
        deadline = time.monotonic() + 60
        while "kubeconfig written to" not in log.read_text() and proc.poll() is None:
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
        yield log
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()


def test_the_token_goes_to_0600_files_and_never_to_stdout(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kc"
    with sim_serve(tmp_path, "--kubeconfig-out", str(kubeconfig)) as log:
        token = yaml.safe_load(kubeconfig.read_text())["users"][0]["user"]["token"]
        printed = log.read_text()
    assert token not in printed, printed
    link = tmp_path / "kc.weblink"
    assert f"web view: its link (with the admin token) is in {link}" in printed
    assert link.read_text().strip().endswith(f"/#token={token}")
    for path in (kubeconfig, link):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path


def test_kubeconfig_out_refuses_a_symbolic_link(tmp_path: Path) -> None:
    target = tmp_path / "precious"
    target.write_text("keep me\n")
    (tmp_path / "kc").symlink_to(target)
    done = subprocess.run(
        [sys.executable, "-m", "kubesched", "sim", "serve", "--port", "0", "--kubeconfig-out", "kc"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert "--kubeconfig-out: kc is a symbolic link" in done.stderr
    assert target.read_text() == "keep me\n"


def test_a_web_link_file_that_is_a_symbolic_link_is_refused_naming_the_flag(tmp_path: Path) -> None:
    target = tmp_path / "precious"
    target.write_text("keep me\n")
    (tmp_path / "kc.weblink").symlink_to(target)
    with sim_serve(tmp_path, "--kubeconfig-out", "kc") as log:
        pass
    assert "--kubeconfig-out: kc.weblink: is a symbolic link" in log.read_text()
    assert target.read_text() == "keep me\n"


def _ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as s:
            s.bind(("::1", 0))
    except OSError:
        return False
    return True


@pytest.mark.skipif(not _ipv6_loopback(), reason="no IPv6 loopback on this machine")
async def test_an_ipv6_address_is_bracketed_and_a_client_connects_with_the_kubeconfig(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kc"
    with sim_serve(tmp_path, "--address", "::1", "--kubeconfig-out", str(kubeconfig)) as log:
        server = yaml.safe_load(kubeconfig.read_text())["clusters"][0]["cluster"]["server"]
        assert server.startswith("https://[::1]:"), server
        assert f"embedded API server on {server}" in log.read_text()
        assert (tmp_path / "kc.weblink").read_text().startswith(server + "/#token=")
        cfg = kube_client.Configuration()
        await kube_config.load_kube_config(config_file=str(kubeconfig), client_configuration=cfg)
        async with kube_client.ApiClient(cfg) as api:
            namespaces = await kube_client.CoreV1Api(api).list_namespace()
    assert "default" in [ns.metadata.name for ns in namespaces.items]


def test_kubeconfig_out_in_a_missing_folder_is_refused_naming_the_flag(tmp_path: Path) -> None:
    with sim_serve(tmp_path, "--kubeconfig-out", "nowhere/kc") as log:
        pass
    printed = log.read_text()
    assert "kubesched: --kubeconfig-out: nowhere/kc: No such file or directory" in printed
    assert "Traceback" not in printed


@pytest.mark.skipif(not _ipv6_loopback(), reason="no IPv6 loopback on this machine")
def test_the_scheduler_reaches_an_ipv6_server_and_shows_its_own_address_bracketed(tmp_path: Path) -> None:
    import re
    import ssl
    import urllib.request

    with sim_serve(tmp_path, "--address", "::1", "--with-scheduler", "--kubeconfig-out", "kc") as log:
        deadline = time.monotonic() + 60
        while not (m := re.search(r"serving securely on \[::1\]:(\d+)", log.read_text())):
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)
        insecure = ssl.create_default_context()
        insecure.check_hostname, insecure.verify_mode = False, ssl.CERT_NONE
        with urllib.request.urlopen(f"https://[::1]:{m.group(1)}/healthz", timeout=10, context=insecure) as r:
            assert r.read() == b"ok"
        deadline = time.monotonic() + 60
        while "successfully acquired lease" not in log.read_text():  # it reached the API server
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)


def test_the_files_it_writes_by_default_are_ignored_by_git(tmp_path: Path) -> None:
    """They hold the admin token: a `git add .` in the folder it ran in must not pick them up."""
    with sim_serve(tmp_path) as log:
        written = sorted(p.name for p in tmp_path.iterdir() if p != log)
    assert written == ["kubesched-sim.kubeconfig", "kubesched-sim.kubeconfig.weblink"]
    root = Path(__file__).resolve().parents[2]
    for name in written:
        check = subprocess.run(["git", "-C", str(root), "check-ignore", "--no-index", "-q", name], check=False)
        assert check.returncode == 0, f"{name} is not in .gitignore"
