"""One admission for both paths: a scenario is checked as ``sim serve`` checks what kubectl
sends (strict decoding, field paths), and what is legal but probably a mistake is warned about."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import aiohttp
import pytest
import yaml

from kubesched.cluster.store import Store
from kubesched.sim.apiserver.server import APIServer

NODE = """\
apiVersion: v1
kind: Node
metadata: {name: n1}
status:
  allocatable: {cpu: "4", memory: 8Gi, pods: "10"}
"""
TYPO = """\
apiVersion: v1
kind: Pod
metadata: {name: typo}
spec:
  containers: [{name: c, image: nginx, resoures: {requests: {cpu: "1"}}}]
"""
LOTS = """\
apiVersion: v1
kind: Pod
metadata: {name: lots}
spec:
  containers: [{name: c, image: nginx, resources: {requests: {cpu: lots}}}]
"""
FINE = """\
apiVersion: v1
kind: Pod
metadata: {name: fine}
spec:
  containers: [{name: c, image: nginx}]
"""


def simulate(tmp_path: Path, *docs: str, output: str = "json") -> subprocess.CompletedProcess[str]:
    path = tmp_path / "scenario.yaml"
    path.write_text("---\n".join(docs) if docs else "")
    return subprocess.run(
        [sys.executable, "-m", "kubesched", "simulate", "--scenario", str(path), "--output", output],
        capture_output=True,
        text=True,
        timeout=120,
    )


STRICT = (
    'Pod in version "v1" cannot be handled as a Pod: strict decoding error: unknown field "spec.containers[0].resoures"'
)


def test_a_misspelt_field_is_refused_with_its_path(tmp_path: Path) -> None:
    out = simulate(tmp_path, NODE, FINE, TYPO)
    assert out.returncode == 2
    assert f"document 3: {STRICT} (Pod typo)" in out.stderr
    assert out.stdout == ""  # refused before anything ran


async def test_sim_serve_refuses_the_same_object_in_the_same_words() -> None:
    server = APIServer(Store())
    await server.start()
    try:
        async with aiohttp.ClientSession(server.url) as http:
            async with http.post(
                "/api/v1/namespaces/default/pods?fieldValidation=Strict",
                data=json.dumps(yaml.safe_load(TYPO)),
                headers={"Content-Type": "application/json"},
            ) as resp:
                body = await resp.json()
        assert resp.status == 400
        assert STRICT in body["message"]
    finally:
        await server.stop()


def test_a_bad_quantity_is_reported_on_its_pod_with_the_field_path(tmp_path: Path) -> None:
    out = simulate(tmp_path, NODE, LOTS, FINE)
    assert out.returncode == 0, out.stderr
    pods = {p["name"]: p for p in json.loads(out.stdout)["pods"]}
    assert pods["fine"]["node"] == "n1"
    assert pods["lots"]["phase"] == "Error"
    assert "spec.containers[0].resources.requests[cpu]: quantities must match" in pods["lots"]["message"]


@pytest.mark.parametrize(
    ("docs", "warning"),
    [
        ((), "the scenario is empty: there is nothing to schedule"),
        ((FINE,), "the scenario has no nodes: every pod will be unschedulable"),
        (
            ("apiVersion: v1\nkind: Node\nmetadata: {name: bare}\n", FINE),
            "Node bare: no status.allocatable (nor status.capacity): it can run no pod",
        ),
    ],
    ids=["empty", "no-nodes", "no-allocatable"],
)
def test_probable_mistakes_are_warned_about_on_stderr(tmp_path: Path, docs: tuple[str, ...], warning: str) -> None:
    out = simulate(tmp_path, *docs)
    assert out.returncode == 0, out.stderr
    assert f"kubesched: warning: {tmp_path / 'scenario.yaml'}: {warning}" in out.stderr
    json.loads(out.stdout)  # stdout stays clean JSON


def test_a_sound_scenario_gets_no_warning(tmp_path: Path) -> None:
    out = simulate(tmp_path, NODE, FINE)
    assert out.returncode == 0 and "warning" not in out.stderr
