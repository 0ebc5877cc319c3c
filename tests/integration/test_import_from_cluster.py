"""``sim serve --import-from KUBECONFIG [--selector] [--sync]`` against a second ``sim serve``
standing in for a live cluster: what is copied, how (bound pods stay bound, pending ones are
placed by the simulator's scheduler), and what ``--sync`` follows."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml
from polling import eventually_sync

from kubesched.testing import sim_serve_process


def node(name: str, **labels: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"}},
    }


def pod(name: str, on: str | None = None, **labels: str) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "nginx"}]}
    if on:
        spec["nodeName"] = on
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": labels}, "spec": spec}


class Served:
    def __init__(self, url: str, kubeconfig: Path) -> None:
        self.url = url
        self.kubeconfig = kubeconfig

    def call(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(
            self.url + path, data=data, method=method, headers={"Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(req, timeout=10) as resp:
                return resp.status, json.loads(resp.read())
        except urllib.error.HTTPError as err:
            return err.code, json.loads(err.read() or b"{}")

    def names(self, path: str) -> set[str]:
        return {o["metadata"]["name"] for o in self.call("GET", path)[1].get("items", [])}


@contextmanager
def serve(tmp: Path, *args: str) -> Iterator[Served]:
    with sim_serve_process(tmp, *args) as printed:
        yield Served(printed["url"], Path(printed["kubeconfig"]))


def live_cluster(tmp_path: Path) -> Path:
    scenario = tmp_path / "live.yaml"
    pdb = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "web"},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}},
    }
    scenario.write_text(
        yaml.safe_dump_all(
            [
                node("a", team="x"),
                node("b", team="y"),
                pod("running", on="b", app="web"),
                pod("waiting", app="web"),
                pdb,
            ]
        )
    )
    return scenario


def test_a_live_cluster_is_copied_and_its_pending_pods_placed_here(tmp_path: Path) -> None:
    with serve(tmp_path / "live", "--scenario", str(live_cluster(tmp_path))) as live:
        with serve(tmp_path / "sim", "--import-from", str(live.kubeconfig), "--with-scheduler") as sim:
            assert sim.names("/api/v1/nodes") == {"a", "b"}
            assert sim.call("GET", "/api/v1/namespaces/default/pods/running")[1]["spec"]["nodeName"] == "b"
            eventually_sync(
                lambda: bool(sim.call("GET", "/api/v1/namespaces/default/pods/waiting")[1]["spec"].get("nodeName")),
                timeout=15,
            )
            assert "web" in sim.names("/apis/policy/v1/namespaces/default/poddisruptionbudgets")
            # The live cluster is only read.
            assert not live.call("GET", "/api/v1/namespaces/default/pods/waiting")[1]["spec"].get("nodeName")


def test_a_selector_narrows_nodes_and_pods(tmp_path: Path) -> None:
    with serve(tmp_path / "live", "--scenario", str(live_cluster(tmp_path))) as live:
        with serve(tmp_path / "sim", "--import-from", str(live.kubeconfig), "--selector", "team=x") as sim:
            assert sim.names("/api/v1/nodes") == {"a"}
            assert sim.names("/api/v1/namespaces/default/pods") == set()


def test_sync_follows_the_live_cluster(tmp_path: Path) -> None:
    with serve(tmp_path / "live", "--scenario", str(live_cluster(tmp_path))) as live:
        with serve(tmp_path / "sim", "--import-from", str(live.kubeconfig), "--sync") as sim:
            sim.call("POST", "/api/v1/namespaces/default/pods", pod("mine"))  # made here
            live.call("POST", "/api/v1/nodes", node("c"))
            eventually_sync(lambda: "c" in sim.names("/api/v1/nodes"), timeout=15)
            live.call("DELETE", "/api/v1/namespaces/default/pods/running")
            eventually_sync(lambda: "running" not in sim.names("/api/v1/namespaces/default/pods"), timeout=15)
            assert "mine" in sim.names("/api/v1/namespaces/default/pods")  # not the source's to delete


def test_an_unreachable_source_is_refused_before_serving(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.kubeconfig"
    out = subprocess.run(
        [sys.executable, "-m", "kubesched", "sim", "serve", "--insecure", "--port", "0", "--import-from", str(missing)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert out.returncode == 2 and f"--import-from {missing}" in out.stderr


def test_dra_objects_are_copied_and_a_pending_pods_claim_is_allocated_here(tmp_path: Path) -> None:
    """The live cluster's DeviceClass, ResourceSlice, ResourceClaimTemplate and the claim its
    resource-claim controller made for a pending pod are copied; the claim stays that pod's own
    (its owner pointed at the pod's uid here), so the simulator's scheduler allocates it."""
    dra = [
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": "gpu.example.com"},
            "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]},
        },
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": "a-gpus"},
            "spec": {
                "driver": "gpu.example.com",
                "nodeName": "a",
                "pool": {"name": "a", "generation": 1, "resourceSliceCount": 1},
                "devices": [{"name": "gpu-0"}],
            },
        },
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaimTemplate",
            "metadata": {"name": "one-gpu", "namespace": "default"},
            "spec": {
                "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}}
            },
        },
    ]
    trainer = pod("trainer")
    trainer["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}]
    scenario = tmp_path / "live.yaml"
    scenario.write_text(yaml.safe_dump_all([node("a"), node("b"), *dra, trainer]))
    claims = "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims"
    with serve(tmp_path / "live", "--scenario", str(scenario)) as live:
        eventually_sync(lambda: len(live.names(claims)) == 1, timeout=15)  # made by the live cluster's controller
        (made,) = live.names(claims)
        with serve(tmp_path / "sim", "--import-from", str(live.kubeconfig), "--with-scheduler") as sim:
            assert sim.names("/apis/resource.k8s.io/v1/deviceclasses") == {"gpu.example.com"}
            assert sim.names("/apis/resource.k8s.io/v1/resourceslices") == {"a-gpus"}
            assert sim.names(claims) == {made}  # the copy, not a second claim
            here = sim.call("GET", "/api/v1/namespaces/default/pods/trainer")[1]
            claim = sim.call("GET", f"{claims}/{made}")[1]
            assert claim["metadata"]["ownerReferences"][0]["uid"] == here["metadata"]["uid"]
            eventually_sync(
                lambda: sim.call("GET", "/api/v1/namespaces/default/pods/trainer")[1]["spec"].get("nodeName") == "a",
                timeout=15,
            )
            results = sim.call("GET", f"{claims}/{made}")[1]["status"]["allocation"]["devices"]["results"]
            assert [r["device"] for r in results] == ["gpu-0"]
