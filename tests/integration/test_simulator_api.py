"""The simulator API of a real ``kubesched sim serve --with-scheduler`` process, over HTTP: the
scheduler configuration read, replaced (pending pods retried under it) and reset; the cluster
exported as a scenario, imported, reset; a pod's results attempt by attempt."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from polling import eventually_sync

from kubesched.sim.scenario.reading import parse_scenario
from kubesched.testing import sim_serve_process

NODE = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {"name": "n1", "labels": {"zone": "a"}},
    "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"}},
}


def pod(name: str, scheduler: str = "default-scheduler") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"schedulerName": scheduler, "containers": [{"name": "c", "image": "nginx"}]},
    }


class Server:
    def __init__(self, url: str) -> None:
        self.url = url

    def call(self, method: str, path: str, body: Any = None, ctype: str = "application/json") -> tuple[int, Any]:
        data = None
        if body is not None:
            data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data=data, method=method, headers={"Content-Type": ctype})
        try:
            with urllib.request.urlopen(req, timeout=10) as resp:
                raw = resp.read()
                status = resp.status
                kind = resp.headers.get("Content-Type", "")
        except urllib.error.HTTPError as err:
            raw, status, kind = err.read(), err.code, err.headers.get("Content-Type", "")
        return status, (json.loads(raw) if "json" in kind else raw.decode())

    def pod(self, name: str) -> dict[str, Any]:
        return self.call("GET", f"/api/v1/namespaces/default/pods/{name}")[1]


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    scenario = tmp_path / "start.yaml"
    scenario.write_text(yaml.safe_dump_all([NODE, pod("first")]))
    with sim_serve_process(tmp_path, "--with-scheduler", "--scenario", str(scenario)) as printed:
        srv = Server(printed["url"])
        eventually_sync(lambda: srv.pod("first").get("spec", {}).get("nodeName") == "n1", timeout=15)
        yield srv


def test_the_configuration_is_read_replaced_and_reset(server: Server) -> None:
    status, cfg = server.call("GET", "/api/v1/schedulerconfiguration")
    assert status == 200 and [p["schedulerName"] for p in cfg["profiles"]] == ["default-scheduler"]
    server.call("POST", "/api/v1/namespaces/default/pods", pod("waiting", "other"))
    time.sleep(0.5)
    assert not server.pod("waiting")["spec"].get("nodeName")  # no profile schedules it yet
    two = (
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n"
        "- schedulerName: default-scheduler\n- schedulerName: other\n"
    )
    status, cfg = server.call("POST", "/api/v1/schedulerconfiguration", two, "application/yaml")
    assert status == 202 and [p["schedulerName"] for p in cfg["profiles"]] == ["default-scheduler", "other"]
    eventually_sync(lambda: server.pod("waiting")["spec"].get("nodeName") == "n1", timeout=15)  # retried under it
    status, cfg = server.call("PUT", "/api/v1/schedulerconfiguration/reset")
    assert status == 202 and [p["schedulerName"] for p in cfg["profiles"]] == ["default-scheduler"]


def test_an_invalid_configuration_is_refused_naming_the_field(server: Server) -> None:
    bad = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", "parallelism": 0}
    status, body = server.call("POST", "/api/v1/schedulerconfiguration", bad)
    assert status == 400 and "parallelism" in body["message"]
    assert server.call("GET", "/api/v1/schedulerconfiguration")[1]["parallelism"] == 16  # unchanged


def test_export_import_and_reset(server: Server) -> None:
    status, exported = server.call("GET", "/api/v1/export")
    assert status == 200 and exported["kind"] == "List"
    kinds = {(o["kind"], o["metadata"]["name"]) for o in exported["items"]}
    assert ("Node", "n1") in kinds and ("Pod", "first") in kinds
    first = next(o for o in exported["items"] if o["kind"] == "Pod")
    assert "uid" not in first["metadata"] and first["spec"]["nodeName"] == "n1"
    parse_scenario([exported])  # what simulate --scenario reads
    status, text = server.call("GET", "/api/v1/export?format=yaml")
    assert status == 200 and "kind: Node" in text
    # Import a second node and a pod; a scenario naming an existing object is refused whole.
    extra = [dict(NODE, metadata={"name": "n2"}), pod("second")]
    status, body = server.call("POST", "/api/v1/import", yaml.safe_dump_all(extra), "application/yaml")
    assert status == 201, body
    eventually_sync(lambda: bool(server.pod("second")["spec"].get("nodeName")), timeout=15)
    status, body = server.call("POST", "/api/v1/import", yaml.safe_dump_all([NODE]), "application/yaml")
    assert status == 409 and "Node n1" in body["message"]
    status, body = server.call(
        "POST", "/api/v1/import", "kind: Pod\nmetadata: {name: x}\nspec: {}\n", "application/yaml"
    )
    assert status == 400
    # Reset: back to the start scenario.
    status, _ = server.call("PUT", "/api/v1/reset")
    assert status == 202
    eventually_sync(lambda: server.call("GET", "/api/v1/namespaces/default/pods/second")[0] == 404, timeout=15)
    assert server.call("GET", "/api/v1/nodes/n2")[0] == 404
    eventually_sync(lambda: server.pod("first").get("spec", {}).get("nodeName") == "n1", timeout=15)


def test_a_pods_results_attempt_by_attempt(server: Server) -> None:
    big = pod("big")
    big["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "64"}}
    server.call("POST", "/api/v1/namespaces/default/pods", big)
    eventually_sync(lambda: bool(server.call("GET", "/api/v1/results/default/big")[1]["attempts"]), timeout=15)
    status, results = server.call("GET", "/api/v1/results/default/big")
    assert status == 200 and results["node"] is None
    attempt = results["attempts"][-1]
    assert attempt["phase"] == "Unschedulable"
    assert attempt["filter"]["n1"]["NodeResourcesFit"] == "Insufficient cpu"
    status, results = server.call("GET", "/api/v1/results/default/first")
    # One feasible node: placed without scoring, as upstream does.
    assert results["node"] == "n1" and results["attempts"][-1]["filter"]["n1"]["NodeResourcesFit"] == "passed"
    assert server.call("GET", "/api/v1/results/default/nobody")[0] == 404


def test_the_kubernetes_api_beside_it_is_unchanged(server: Server) -> None:
    status, body = server.call("GET", "/api/v1/namespaces/default/pods")
    assert status == 200 and body["kind"] == "PodList"


def test_the_feature_gates_are_listed(tmp_path: Path) -> None:
    """What the web view shows: every gate with its value, 1.37's default and stage, and those
    changed by ``--feature-gates``."""
    with sim_serve_process(tmp_path, "--feature-gates", "GenericWorkload=true,OpportunisticBatching=false") as printed:
        srv = Server(printed["url"])
        status, body = srv.call("GET", "/api/v1/featuregates")
        assert status == 200
        assert body["changed"] == {"GenericWorkload": True, "OpportunisticBatching": False}
        gates = {g["name"]: g for g in body["gates"]}
        assert gates["GenericWorkload"] == {
            "name": "GenericWorkload",
            "enabled": True,
            "default": False,
            "stage": "Beta",
            "locked": False,
        }
        assert gates["DRAExtendedResource"]["locked"] is True
        assert srv.call("POST", "/api/v1/featuregates", {})[0] == 405
