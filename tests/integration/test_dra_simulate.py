"""DynamicResources end to end in the simulator: config/scenarios/dra-gpus.yaml through
``simulate --output json`` (the real command), and through the simulation API to read the claim
the resource-claim controller made and the scheduler allocated."""

from __future__ import annotations

import asyncio
import copy
import json
import subprocess
import sys
from pathlib import Path

from kubesched.config import load_config
from kubesched.sim.run.simulate import simulate
from kubesched.sim.scenario.reading import load_scenario

SCENARIO = Path(__file__).resolve().parents[2] / "config" / "scenarios" / "dra-gpus.yaml"


def test_simulate_json_places_the_pod_where_its_two_gpus_are() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "kubesched", "simulate", "--scenario", str(SCENARIO), "--output", "json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    (pod,) = json.loads(out.stdout)["pods"]
    assert (pod["name"], pod["node"], pod["phase"]) == ("trainer", "gpu-node-1", "Scheduled")
    assert pod["filter"]["gpu-node-2"]["DynamicResources"] == "cannot allocate all claims"
    assert pod["preBind"]["DynamicResources"] == "success"


def test_the_claim_shows_the_allocated_devices_and_a_second_pod_gets_none_of_them() -> None:
    scenario = load_scenario(SCENARIO)
    second = copy.deepcopy(scenario.pending_pods[0])
    second["metadata"]["name"] = "trainer-2"
    scenario.pending_pods.append(second)
    profiles = load_config(None).profiles
    result = asyncio.run(simulate(profiles, scenario))
    by_name = {p["name"]: p for p in result.pods}
    assert by_name["trainer"]["node"] == "gpu-node-1"
    # Only gpu-node-1 has h100s, two of them: the second pod may not get the same devices.
    assert by_name["trainer-2"]["phase"] == "Unschedulable"
    assert "cannot allocate all claims" in by_name["trainer-2"]["message"]
    claims = {c["metadata"]["name"]: c for c in result.store.list("ResourceClaim", "default")[0]}
    pod = result.store.get("Pod", "default", "trainer")
    (status,) = pod["status"]["resourceClaimStatuses"]
    claim = claims[status["resourceClaimName"]]
    results = claim["status"]["allocation"]["devices"]["results"]
    assert sorted(r["device"] for r in results) == ["gpu-2", "gpu-3"]
    assert {(r["request"], r["driver"], r["pool"]) for r in results} == {("gpus", "gpu.example.com", "gpu-node-1")}
    assert claim["status"]["reservedFor"] == [{"resource": "pods", "name": "trainer", "uid": pod["metadata"]["uid"]}]


EXTENDED = """
apiVersion: v1
kind: Node
metadata: {name: gpu-node-1, labels: {kubernetes.io/hostname: gpu-node-1}}
status: {allocatable: {cpu: "8", memory: 16Gi, pods: "10"}}
---
apiVersion: v1
kind: Node
metadata: {name: cpu-node-2, labels: {kubernetes.io/hostname: cpu-node-2}}
status: {allocatable: {cpu: "8", memory: 16Gi, pods: "10"}}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.example.com}
spec:
  extendedResourceName: example.com/gpu
  selectors:
    - cel: {expression: device.driver == "gpu.example.com"}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: gpu-node-1-gpu.example.com}
spec:
  driver: gpu.example.com
  nodeName: gpu-node-1
  pool: {name: gpu-node-1, generation: 1, resourceSliceCount: 1}
  devices:
    - name: gpu-0
    - name: gpu-1
---
apiVersion: v1
kind: Pod
metadata: {name: trainer, namespace: default}
spec:
  containers:
    - name: main
      image: trainer
      resources:
        requests: {cpu: "1", example.com/gpu: "1"}
        limits: {example.com/gpu: "1"}
"""


def test_an_extended_resource_is_served_by_dra_on_the_node_whose_slice_has_the_device(tmp_path: Path) -> None:
    """A pod asking ``example.com/gpu: 1`` (no node advertises it): the DeviceClass naming that
    extended resource makes it DRA's. The pod goes where a ResourceSlice offers a device of the
    class; the scheduler creates the claim for it, allocated and reserved, and records it in the
    pod's status.extendedResourceClaimStatus."""
    path = tmp_path / "extended.yaml"
    path.write_text(EXTENDED)
    out = subprocess.run(
        [sys.executable, "-m", "kubesched", "simulate", "--scenario", str(path), "--output", "json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    (pod,) = json.loads(out.stdout)["pods"]
    assert (pod["name"], pod["node"], pod["phase"]) == ("trainer", "gpu-node-1", "Scheduled")
    assert pod["filter"]["cpu-node-2"]["DynamicResources"] == "cannot allocate all claims"
    assert pod["filter"]["gpu-node-1"]["NodeResourcesFit"] == "passed"

    scenario = load_scenario(path)
    second = copy.deepcopy(scenario.pending_pods[0])
    second["metadata"]["name"] = "trainer-2"
    scenario.pending_pods.append(second)
    result = asyncio.run(simulate(load_config(None).profiles, scenario))
    devices = set()
    for name in ("trainer", "trainer-2"):
        placed = result.store.get("Pod", "default", name)
        assert placed["spec"]["nodeName"] == "gpu-node-1"
        status = placed["status"]["extendedResourceClaimStatus"]
        # Named after the container's index and the resource's among its requests (cpu first).
        assert status["requestMappings"] == [
            {"containerName": "main", "resourceName": "example.com/gpu", "requestName": "container-0-request-1"}
        ]
        claim = result.store.get("ResourceClaim", "default", status["resourceClaimName"])
        assert claim["metadata"]["name"].startswith(f"{name}-extended-resources-")
        assert claim["metadata"]["annotations"] == {"resource.kubernetes.io/extended-resource-claim": "true"}
        assert claim["metadata"]["ownerReferences"][0]["uid"] == placed["metadata"]["uid"]
        (result_,) = claim["status"]["allocation"]["devices"]["results"]
        assert (result_["request"], result_["driver"], result_["pool"]) == (
            "container-0-request-1",
            "gpu.example.com",
            "gpu-node-1",
        )
        devices.add(result_["device"])
        assert claim["status"]["reservedFor"] == [{"resource": "pods", "name": name, "uid": placed["metadata"]["uid"]}]
    assert devices == {"gpu-0", "gpu-1"}  # one device each, never the same one twice


WAITING = """
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {kubernetes.io/hostname: n1}}
status: {allocatable: {cpu: "8", memory: 16Gi, pods: "10"}}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.example.com}
spec: {}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: gpus, namespace: default}
spec:
  devices:
    requests:
      - name: gpu
        exactly: {deviceClassName: gpu.example.com}
---
apiVersion: v1
kind: Pod
metadata: {name: waits, namespace: default}
spec:
  containers: [{name: c, image: x}]
  resourceClaims: [{name: gpu, resourceClaimName: gpus}]
---
apiVersion: kubesched.io/v1
kind: Steps
steps:
- at: 30s
  create:
  - %s
"""
RULE = (
    "{apiVersion: resource.k8s.io/v1, kind: DeviceTaintRule, metadata: {name: broken},"
    " spec: {deviceSelector: {driver: gpu.example.com}, taint: {key: broken, effect: NoSchedule}}}"
)
UNRELATED = "{apiVersion: scheduling.k8s.io/v1, kind: PriorityClass, metadata: {name: high}, value: 1000}"


def _attempts(tmp_path: Path, created: str) -> int:
    path = tmp_path / "waiting.yaml"
    path.write_text(WAITING % created)
    result = asyncio.run(simulate(load_config(None).profiles, load_scenario(path)))
    (pod,) = [p for p in result.pods if p["name"] == "waits"]
    assert pod["phase"] == "Unschedulable" and "cannot allocate all claims" in pod["message"]
    return len(pod["history"])


def test_a_device_taint_rule_event_brings_back_a_pod_dynamic_resources_rejected(tmp_path: Path) -> None:
    """A DeviceTaintRule reaches DynamicResources as an update of the slices it taints (as
    upstream's slice tracker delivers it): the pod waiting for devices is tried again; an event
    the plugin did not register (a PriorityClass) leaves it waiting."""
    assert _attempts(tmp_path, RULE) == _attempts(tmp_path, UNRELATED) + 1
