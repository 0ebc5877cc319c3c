"""kubeadm 1.37's kube-scheduler static pod, run with only the binary changed.

The command and the probes below are the ones kubeadm writes (cmd/kubeadm/app/phases/
controlplane/manifests.go: getSchedulerCommand's arguments, sorted by name, and the liveness and
startup probes, HTTPS GET /healthz on 127.0.0.1:10259; kubeadm sets no readiness probe). The
``kube-scheduler`` console script is made from ``[project.scripts]`` exactly as pip makes it,
and started as a separate process against the embedded API server (the one ``sim serve``
serves), whose kubeconfig is passed as all three kubeconfigs, as kubeadm passes scheduler.conf.
The kubelet's probes are then made as the kubelet makes them: HTTPS, no certificate check, no
token. Port 10259 is used when it is free; otherwise (another scheduler on this machine) the
one flag added is ``--secure-port`` with a free port.
"""

from __future__ import annotations

import asyncio
import os
import re
import socket
import sys
import tomllib
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import yaml
from polling import eventually

from kubesched.cluster.store import Store
from kubesched.sim.apiserver.server import APIServer
from kubesched.testing import make_node, make_pod

ROOT = Path(__file__).resolve().parents[2]
ADMIN_TOKEN = "kubeadm-test-admin"
KUBEADM_PORT = 10259

#: kube-scheduler.yaml as kubeadm 1.37 writes it (the parts that run the process).
MANIFEST = """\
apiVersion: v1
kind: Pod
metadata:
  labels:
    component: kube-scheduler
    tier: control-plane
  name: kube-scheduler
  namespace: kube-system
spec:
  containers:
  - command:
    - kube-scheduler
    - --authentication-kubeconfig=/etc/kubernetes/scheduler.conf
    - --authorization-kubeconfig=/etc/kubernetes/scheduler.conf
    - --bind-address=127.0.0.1
    - --kubeconfig=/etc/kubernetes/scheduler.conf
    - --leader-elect=true
    image: registry.k8s.io/kube-scheduler:v1.37.0
    livenessProbe:
      failureThreshold: 8
      httpGet:
        host: 127.0.0.1
        path: /healthz
        port: 10259
        scheme: HTTPS
      initialDelaySeconds: 10
      periodSeconds: 10
      timeoutSeconds: 15
    name: kube-scheduler
    startupProbe:
      failureThreshold: 24
      httpGet:
        host: 127.0.0.1
        path: /healthz
        port: 10259
        scheme: HTTPS
      initialDelaySeconds: 10
      periodSeconds: 10
      timeoutSeconds: 15
  hostNetwork: true
  priorityClassName: system-node-critical
"""


def console_script(bin_dir: Path, name: str) -> Path:
    """The console script ``name`` of this project's ``[project.scripts]``, as pip writes it."""
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    module, _, func = scripts[name].partition(":")
    path = bin_dir / name
    path.write_text(
        f"#!{sys.executable}\nimport sys\nfrom {module} import {func}\nif __name__ == '__main__':\n"
        f"    sys.exit({func}())\n"
    )
    path.chmod(0o755)
    return path


def port_free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
async def cluster(tmp_path: Path) -> Any:
    store = Store()
    srv = APIServer(store, token=ADMIN_TOKEN)
    await srv.start()
    conf = Path(srv.write_kubeconfig(str(tmp_path / "scheduler.conf")))
    yield store, conf
    await srv.stop()


def kubeadm_command(conf: Path) -> tuple[list[str], dict[str, Any]]:
    """The manifest's command with scheduler.conf at ``conf``, and its container."""
    container = yaml.safe_load(MANIFEST)["spec"]["containers"][0]
    command = [arg.replace("/etc/kubernetes/scheduler.conf", str(conf)) for arg in container["command"]]
    return command, container


async def probe(http: aiohttp.ClientSession, spec: dict[str, Any], port: int) -> tuple[int, str]:
    """An httpGet probe as the kubelet makes it: the scheme, host and path of the spec, no token,
    no certificate check."""
    get = spec["httpGet"]
    url = f"{get['scheme'].lower()}://{get['host']}:{port}{get['path']}"
    async with http.get(url, timeout=aiohttp.ClientTimeout(total=spec["timeoutSeconds"])) as r:
        return r.status, await r.text()


async def test_kubeadm_manifest_runs_unchanged_but_for_the_binary(cluster: Any, tmp_path: Path) -> None:
    store, conf = cluster
    command, container = kubeadm_command(conf)
    assert command[0] == "kube-scheduler"
    binary = console_script(tmp_path, "kube-scheduler")
    port = KUBEADM_PORT if port_free(KUBEADM_PORT) else free_port()
    extra = [] if port == KUBEADM_PORT else [f"--secure-port={port}"]
    for i in range(2):
        store.create("Node", make_node(f"n{i}").obj())
    proc = await asyncio.create_subprocess_exec(
        str(binary),
        *command[1:],
        *extra,
        cwd=tmp_path,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"},
    )
    lines: list[str] = []

    async def read() -> None:
        assert proc.stderr is not None
        while line := await proc.stderr.readline():
            lines.append(line.decode(errors="replace"))

    reader = asyncio.create_task(read())
    try:
        # No --config: kube-scheduler's defaults, its lease and its profile name.
        store.create("Pod", make_pod("web").req(cpu="100m").obj())
        await eventually(
            lambda: store.get("Pod", "default", "web")["spec"].get("nodeName"),
            "the pod bound by the default-scheduler profile",
            timeout=60,
        )
        lease = store.get("Lease", "kube-system", "kube-scheduler")
        assert lease["spec"]["holderIdentity"]
        log = "".join(lines)
        assert f"serving securely on 127.0.0.1:{port}" in log
        assert "has no effect" not in log, log  # every flag kubeadm passes acts
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=False)) as http:
            for name in ("livenessProbe", "startupProbe"):
                status, body = await probe(http, container[name], port)
                assert (status, body) == (200, "ok"), name
            # /readyz and /livez as a readiness probe would call them (kubeadm sets none).
            for path in ("/readyz", "/livez"):
                status, _ = await probe(
                    http,
                    {**container["livenessProbe"], "httpGet": {**container["livenessProbe"]["httpGet"], "path": path}},
                    port,
                )
                assert status == 200, path
            # What is not always allowed needs a token the cluster authorizes, as upstream.
            status, _ = await probe(
                http,
                {
                    **container["livenessProbe"],
                    "httpGet": {**container["livenessProbe"]["httpGet"], "path": "/configz"},
                },
                port,
            )
            assert status == 403
            admin = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
            async with http.get(f"https://127.0.0.1:{port}/configz", headers=admin) as r:
                assert r.status == 200
                cc = (await r.json())["componentconfig"]
            async with http.get(f"https://127.0.0.1:{port}/flagz", headers=admin) as r:
                flagz = await r.text()
            async with http.get(f"https://127.0.0.1:{port}/statusz", headers=admin) as r:
                statusz = await r.text()
            async with http.get(f"https://127.0.0.1:{port}/metrics", headers=admin) as r:
                metrics = await r.text()
    finally:
        if proc.returncode is None:
            proc.terminate()
        code = await asyncio.wait_for(proc.wait(), 40)
        await asyncio.wait_for(reader, 5)
    assert code == 0, "".join(lines)
    # /configz: the defaulted configuration, with the manifest's --kubeconfig and --leader-elect.
    assert cc["kind"] == "KubeSchedulerConfiguration"
    assert cc["clientConnection"]["kubeconfig"] == str(conf)
    assert cc["clientConnection"]["qps"] == 50 and cc["clientConnection"]["burst"] == 100
    assert cc["leaderElection"]["leaderElect"] is True
    assert cc["leaderElection"]["resourceName"] == "kube-scheduler"
    assert [p["schedulerName"] for p in cc["profiles"]] == ["default-scheduler"]
    # /flagz: every flag with its value, the manifest's among them.
    assert "kube-scheduler flagz" in flagz
    assert re.search(r"^bind-address(:|: |=| )127\.0\.0\.1$", flagz, re.M)
    assert re.search(rf"^kubeconfig(:|: |=| ){re.escape(str(conf))}$", flagz, re.M)
    assert re.search(r"^leader-elect(:|: |=| )true$", flagz, re.M)
    # /statusz: the served paths (those served before it, as upstream lists them).
    assert "kube-scheduler statusz" in statusz
    assert re.search(r"^Paths(:|: |=| ) /configz /flagz /healthz /livez /metrics /readyz$", statusz, re.M)
    # Families new in this release moved with the one pod.
    assert "scheduler_scheduling_algorithm_duration_seconds_count 1.0" in metrics
    assert 'scheduler_plugin_evaluation_total{extension_point="Filter",plugin="NodeResourcesFit"' in metrics
    assert 'scheduler_event_handling_duration_seconds_count{event="NodeAdd"} 2.0' in metrics
    assert 'scheduler_queue_incoming_entities_total{event="PodAdd",queue="active",type="pod"} 1.0' in metrics
