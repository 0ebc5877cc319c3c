"""Pod fields behind feature gates through the commands: ``kubesched simulate`` and ``kubesched sim
serve`` take ``Lt``/``Gt`` tolerations with ``--feature-gates TaintTolerationComparisonOperators=true``
(in the scenario, and over HTTP) and TaintToleration decides as upstream's (the taint's value
compared with the toleration's as integers); ContainerRestartRules off drops a container's restart
rules and RestartAllContainersOnContainerExits off refuses the RestartAllContainers action, as
kube-apiserver 1.37 does."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from kubesched.cluster.store import Store
from kubesched.framework.features import FeatureGates
from kubesched.sim.apiserver.server import APIServer

Obj = dict[str, Any]
PODS = "/api/v1/namespaces/default/pods"
COMPARISONS = "TaintTolerationComparisonOperators=true"


def node(name: str, sla: str) -> str:
    return f"""\
apiVersion: v1
kind: Node
metadata: {{name: {name}}}
spec:
  taints: [{{key: example.com/sla, value: "{sla}", effect: NoSchedule}}]
status:
  allocatable: {{cpu: "4", memory: 8Gi, pods: "110"}}
"""


def pod(name: str, op: str, value: str) -> str:
    return f"""\
apiVersion: v1
kind: Pod
metadata: {{name: {name}}}
spec:
  tolerations: [{{key: example.com/sla, operator: {op}, value: "{value}", effect: NoSchedule}}]
  containers: [{{name: c, image: registry.k8s.io/pause:3.10}}]
"""


RESTART_ALL = """\
apiVersion: v1
kind: Pod
metadata: {name: restart-all}
spec:
  containers:
    - name: c
      image: registry.k8s.io/pause:3.10
      restartPolicy: Never
      restartPolicyRules: [{action: RestartAllContainers, exitCodes: {operator: In, values: [42]}}]
"""
SCENARIO = [
    node("sla-950", "950"),
    node("sla-800", "800"),
    pod("above-900", "Gt", "900"),
    pod("below-900", "Lt", "900"),
    pod("above-960", "Gt", "960"),
]


def simulate(tmp_path: Path, docs: list[str], *flags: str) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "scenario.yaml"
    path.write_text("---\n".join(docs))
    return subprocess.run(
        [sys.executable, "-m", "kubesched", "simulate", "--scenario", str(path), "--output", "json", *flags],
        capture_output=True,
        text=True,
        timeout=120,
    )


# --- simulate -------------------------------------------------------------------------------------


def test_simulate_with_the_gate_places_by_comparison(tmp_path: Path) -> None:
    out = simulate(tmp_path, SCENARIO, "--feature-gates", COMPARISONS)
    assert out.returncode == 0, out.stderr
    pods = {p["name"]: p for p in json.loads(out.stdout)["pods"]}
    # 950 > 900 only on sla-950; 800 < 900 only on sla-800; no taint is above 960.
    assert pods["above-900"]["node"] == "sla-950"
    assert pods["below-900"]["node"] == "sla-800"
    assert not pods["above-960"]["node"]
    assert pods["above-960"]["phase"] == "Unschedulable"


def test_simulate_without_the_gate_refuses_the_scenario(tmp_path: Path) -> None:
    out = simulate(tmp_path, SCENARIO)
    assert out.returncode == 2
    assert (
        'document 3: spec.tolerations[0].operator: Unsupported value: "Gt": supported values: '
        '"Equal", "Exists", "Lt", "Gt" (Pod above-900)' in out.stderr
    )
    assert out.stdout == ""


def test_simulate_refuses_restart_all_containers_with_its_gate_off(tmp_path: Path) -> None:
    docs = [node("n1", "1"), RESTART_ALL]
    assert simulate(tmp_path, docs).returncode == 0
    out = simulate(tmp_path, docs, "--feature-gates", "RestartAllContainersOnContainerExits=false")
    assert out.returncode == 2
    assert (
        'spec.containers[0].restartPolicyRules[0].action: Unsupported value: "RestartAllContainers": '
        'supported values: "Restart" (Pod restart-all)' in out.stderr
    )


def test_simulate_refuses_a_gate_whose_dependency_is_off(tmp_path: Path) -> None:
    out = simulate(tmp_path, [node("n1", "1")], "--feature-gates", "ContainerRestartRules=false")
    assert out.returncode != 0
    assert (
        "RestartAllContainersOnContainerExits is enabled, but depends on features that are disabled: "
        "[ContainerRestartRules]" in out.stderr
    )


# --- sim serve: its scenario, and objects created over HTTP ----------------------------------------


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Any]:
    procs: list[subprocess.Popen[str]] = []

    def start(docs: list[str], *flags: str) -> tuple[subprocess.Popen[str], str]:
        scenario = tmp_path / f"scenario-{len(procs)}.yaml"
        scenario.write_text("---\n".join(docs))
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
                "--scenario",
                str(scenario),
                "--kubeconfig-out",
                str(tmp_path / f"kubeconfig-{len(procs)}"),
                *flags,
            ],
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        procs.append(proc)
        assert proc.stdout is not None
        seen = ""
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            seen += line
            if not line or "kubeconfig written" in line:
                break
        return proc, seen

    yield start
    for proc in procs:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            finally:
                if proc.poll() is None:
                    proc.kill()


async def test_sim_serve_loads_a_scenario_with_comparisons_under_the_gate(serve: Any) -> None:
    proc, seen = serve([node("sla-950", "950"), pod("above-900", "Gt", "900")], "--feature-gates", COMPARISONS)
    found = re.search(r"embedded API server on (http://127\.0\.0\.1:\d+)", seen)
    assert found, seen
    async with aiohttp.ClientSession(found.group(1)) as http, http.get(f"{PODS}/above-900") as resp:
        assert resp.status == 200
        body = await resp.json()
    assert body["spec"]["tolerations"][0]["operator"] == "Gt"


def test_sim_serve_without_the_gate_refuses_the_scenario(serve: Any) -> None:
    proc, seen = serve([node("sla-950", "950"), pod("above-900", "Gt", "900")])
    proc.wait(timeout=30)
    assert proc.returncode == 2
    assert 'spec.tolerations[0].operator: Unsupported value: "Gt"' in seen


async def send(server: APIServer, body: Obj | str) -> tuple[int, Obj]:
    data = body if isinstance(body, str) else json.dumps(body)
    ctype = "application/yaml" if isinstance(body, str) else "application/json"
    async with (
        aiohttp.ClientSession() as s,
        s.post(server.url + PODS, data=data, headers={"Content-Type": ctype}) as r,
    ):
        return r.status, await r.json(content_type=None)


@pytest.fixture
async def served() -> Any:
    servers: list[APIServer] = []

    async def start(gates: FeatureGates) -> APIServer:
        srv = APIServer(Store(), feature_gates=gates)
        await srv.start()
        servers.append(srv)
        return srv

    yield start
    for srv in servers:
        await srv.stop()


async def test_a_real_create_follows_the_comparison_gate(served: Any) -> None:
    on = await served(FeatureGates({"TaintTolerationComparisonOperators": True}))
    status, body = await send(on, pod("above-900", "Gt", "900"))
    assert status == 201, body
    assert body["spec"]["tolerations"][0] == {
        "key": "example.com/sla",
        "operator": "Gt",
        "value": "900",
        "effect": "NoSchedule",
    }
    status, body = await send(on, pod("high", "Gt", "high"))
    assert status == 422
    assert [c["message"] for c in body["details"]["causes"]] == [
        'Invalid value: "high": must be a valid decimal integer in canonical form',
        'Invalid value: "high": strconv.ParseInt: parsing "high": invalid syntax',
    ]
    off = await served(FeatureGates())
    status, body = await send(off, pod("above-900", "Gt", "900"))
    assert status == 422
    assert body["message"] == (
        'Pod "above-900" is invalid: spec.tolerations[0].operator: Unsupported value: "Gt": '
        'supported values: "Equal", "Exists", "Lt", "Gt"'
    )


async def test_a_real_create_follows_the_restart_rule_gates(served: Any) -> None:
    rules_off = await served(
        FeatureGates({"ContainerRestartRules": False, "RestartAllContainersOnContainerExits": False})
    )
    status, body = await send(rules_off, RESTART_ALL)
    assert status == 201, body
    assert "restartPolicy" not in body["spec"]["containers"][0]  # dropped, as upstream drops them
    assert "restartPolicyRules" not in body["spec"]["containers"][0]

    restart_all_off = await served(FeatureGates({"RestartAllContainersOnContainerExits": False}))
    status, body = await send(restart_all_off, RESTART_ALL)
    assert status == 422
    assert body["message"] == (
        'Pod "restart-all" is invalid: spec.containers[0].restartPolicyRules[0].action: Unsupported value: '
        '"RestartAllContainers": supported values: "Restart"'
    )

    defaults = await served(FeatureGates())
    status, body = await send(defaults, RESTART_ALL)
    assert status == 201, body
    assert body["spec"]["containers"][0]["restartPolicyRules"][0]["action"] == "RestartAllContainers"
