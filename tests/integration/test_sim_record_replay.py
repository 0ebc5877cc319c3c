"""Record a live cluster and replay it: one ``sim serve`` stands in for the live cluster, a
second one imports it with ``--sync --record FILE`` while pods come and go over HTTP, and the
recording is replayed by ``simulate`` and ``compare``."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import yaml
from polling import eventually_sync

from kubesched.config import load_config
from kubesched.sim.run.simulate import simulate
from kubesched.sim.scenario.reading import load_scenario
from kubesched.sim.scenario.recording import OBSERVED_NODE
from kubesched.testing import sim_serve_process

ROOT = Path(__file__).resolve().parents[2]


def node(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"}},
    }


def pod(name: str, on: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}]}
    if on:
        spec["nodeName"] = on
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


def call(url: str, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url + path, data=data, method=method, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read() or b"{}")


def pod_names(url: str) -> set[str]:
    return {p["metadata"]["name"] for p in call(url, "GET", "/api/v1/namespaces/default/pods")[1]["items"]}


def test_a_recorded_cluster_replays_with_its_pods_in_order_and_time(tmp_path: Path) -> None:
    live_scenario = tmp_path / "live.yaml"
    live_scenario.write_text(yaml.safe_dump_all([node("a"), node("b"), pod("before", on="a")]))
    record = tmp_path / "recorded.yaml"
    pods = "/api/v1/namespaces/default/pods"
    with sim_serve_process(tmp_path / "live", "--scenario", str(live_scenario)) as live:
        url = live["url"]
        with sim_serve_process(
            tmp_path / "recorder", "--import-from", live["kubeconfig"], "--sync", "--record", str(record)
        ) as recorder:
            assert eventually_sync(lambda: pod_names(recorder["url"]), "the import", timeout=30) == {"before"}
            assert call(url, "POST", pods, pod("first", on="b"))[0] == 201
            time.sleep(1.5)
            assert call(url, "POST", pods, pod("second"))[0] == 201
            # A scheduler's part, by hand: bind it to a.
            binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "second"}, "target": {"name": "a"}}
            assert call(url, "POST", f"{pods}/second/binding", binding)[0] == 201
            time.sleep(1.5)
            assert call(url, "DELETE", f"{pods}/before")[0] == 200
            eventually_sync(
                lambda: pod_names(recorder["url"]),
                "the recorder follows",
                timeout=30,
                until=lambda names: names == {"first", "second"},
            )
            # The binding reached the recorder too.
            eventually_sync(
                lambda: call(recorder["url"], "GET", f"{pods}/second")[1]["spec"].get("nodeName"),
                "the binding is seen",
                timeout=30,
            )
        # Stopping the recorder wrote the file.
        assert record.exists()

    scenario = load_scenario(record)
    assert {n["metadata"]["name"] for n in scenario.nodes} == {"a", "b"}
    assert [p["metadata"]["name"] for p in scenario.running_pods] == ["before"]
    at = {}
    for step in scenario.steps:
        for obj in step.create:
            at[f"create {obj['metadata']['name']}"] = step.at
        for ref in step.delete:
            at[f"delete {ref.name}"] = step.at
    assert list(at) == ["create first", "create second", "delete before"]  # in the order they happened
    assert at["create first"] < at["create second"] < at["delete before"]
    # 1.5 s apart, give or take how long the watches took (generously).
    assert at["create second"] - at["create first"] >= 0.5
    assert at["delete before"] - at["create second"] >= 0.5
    created = {p["metadata"]["name"]: p for s in scenario.steps if s.scenario for p in s.scenario.pods}
    # Created on a node already: running as recorded; created pending: the replay places it.
    assert created["first"]["spec"]["nodeName"] == "b"
    assert "nodeName" not in created["second"]["spec"]
    assert created["second"]["metadata"]["annotations"][OBSERVED_NODE] == "a"

    result = asyncio.run(asyncio.wait_for(simulate(load_config(None).profiles, scenario), 60))
    timeline = result.summary["timeline"]
    assert [m["time"] for m in timeline] == [0, *sorted(at.values())]
    replayed = {p["name"]: p for p in result.pods}
    assert replayed["second"]["phase"] == "Scheduled"
    assert replayed["second"]["observedNode"] == "a"
    assert result.summary["observed"]["pods"] == 1
    assert result.summary["observed"]["sameNode"] == (1 if replayed["second"]["node"] == "a" else 0)
    names = {p["metadata"]["name"] for p in result.store.list("Pod", "default")[0]}
    assert names == {"first", "second"}
    assert "stopped" not in result.summary

    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "kubesched",
            "compare",
            "--scenario",
            str(record),
            "--config",
            str(ROOT / "config" / "kubesched.yaml"),
            "--output",
            "json",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    (compared,) = json.loads(out.stdout)["configurations"]
    # "second" is the one pod the replay schedules ("first" arrives on its node).
    assert compared["metrics"]["scheduled"] == 1.0 and compared["metrics"]["unschedulable"] == 0.0
