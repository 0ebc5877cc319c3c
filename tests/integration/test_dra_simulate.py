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
