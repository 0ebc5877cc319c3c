"""kubesched compare on a scenario: each configuration runs the same pods, and the quality
metrics (allocation per resource, pods without a node by owner kind, spread) come side by side."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kubesched.cli import main

SCENARIO = """
{nodes}
---
apiVersion: apps/v1
kind: Deployment
metadata: {{name: web, namespace: default}}
spec:
  replicas: 6
  selector: {{matchLabels: {{app: web}}}}
  template:
    metadata: {{labels: {{app: web}}}}
    spec:
      containers: [{{name: c, image: nginx, resources: {{requests: {{cpu: 500m, memory: 256Mi}}}}}}]
---
apiVersion: v1
kind: Pod
metadata: {{name: huge-1, namespace: default}}
spec:
  containers: [{{name: c, image: nginx, resources: {{requests: {{cpu: "64"}}}}}}]
---
apiVersion: v1
kind: Pod
metadata: {{name: huge-2, namespace: default}}
spec:
  containers: [{{name: c, image: nginx, resources: {{requests: {{cpu: "64"}}}}}}]
"""

NODE = """---
apiVersion: v1
kind: Node
metadata:
  name: n{i}
  labels: {{topology.kubernetes.io/zone: zone-{zone}, kubernetes.io/hostname: n{i}}}
status:
  allocatable: {{cpu: "4", memory: 8Gi, pods: "110"}}
"""

PACKER = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: packer
  plugins:
    score:
      disabled: [{name: '*'}]
      enabled: [{name: NodeResourcesFit, weight: 1}]
  pluginConfig:
  - name: NodeResourcesFit
    args: {scoringStrategy: {type: MostAllocated}}
"""

SPREADER = PACKER.replace("packer", "spreader").replace("MostAllocated", "LeastAllocated")


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path, Path]:
    nodes = "".join(NODE.format(i=i, zone="a" if i < 2 else "b") for i in range(4))
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text(SCENARIO.format(nodes=nodes))
    packer, spreader = tmp_path / "packer.yaml", tmp_path / "spreader.yaml"
    packer.write_text(PACKER)
    spreader.write_text(SPREADER)
    return scenario, packer, spreader


def test_compare_a_scenario_side_by_side(files: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    scenario, packer, spreader = files
    args = ["compare", "--scenario", str(scenario), "--config", str(packer), "--config", str(spreader)]
    assert main([*args, "--seeds", "1,2", "--output", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["scenario"] == str(scenario)
    by_name = {c["name"]: c for c in data["configurations"]}
    assert set(by_name) == {"packer", "spreader"}
    pack, spread = by_name["packer"]["metrics"], by_name["spreader"]["metrics"]
    # the same pods are placed either way (their schedulerName is given each configuration's profile)
    assert pack["scheduled"] == spread["scheduled"] == 6
    assert pack["allocation:cpu"] == spread["allocation:cpu"] == 100 * 3 / 16
    assert by_name["packer"]["unscheduledByKind"] == {"Pod": 2.0}
    # packing uses fewer nodes and leans on one zone; spreading the opposite
    assert pack["nodesUsed"] < spread["nodesUsed"] == 4
    assert pack["nodeCpuAllocationStdev"] > spread["nodeCpuAllocationStdev"]
    assert pack["zoneSkew"] > spread["zoneSkew"]
    assert main([*args, "--output", "table"]) == 0
    table = capsys.readouterr().out
    assert "cpu allocation %" in table and "without a node: Pod" in table


def test_compare_needs_a_trace_or_a_scenario(
    files: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    scenario, packer, _ = files
    assert main(["compare", "--config", str(packer)]) == 2
    assert "a trace (--nodes and --pods) or a scenario (--scenario)" in capsys.readouterr().err
    assert main(["compare", "--scenario", str(scenario), "--nodes", "n.csv", "--config", str(packer)]) == 2
    assert "--nodes, --pods" in capsys.readouterr().err
