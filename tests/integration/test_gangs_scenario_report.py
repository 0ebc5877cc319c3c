"""``simulate`` and ``compare`` on config/scenarios/gangs.yaml: the report counts pod groups
(placed whole, held) besides pods, and says when the groups are ignored because GenericWorkload
is off."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kubesched.cli import main

ROOT = Path(__file__).resolve().parents[2]
GANGS = ROOT / "config" / "scenarios" / "gangs.yaml"
HELD = "minCount (4) cannot be satisfied: 3 scheduled, 0 remaining, pod group preemption: No preemption victims found for incoming preemptor"

PACKER = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: packer
  pluginConfig:
  - name: NodeResourcesFit
    args: {scoringStrategy: {type: MostAllocated}}
"""


def test_simulate_reports_each_pod_group_whole_or_held(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["simulate", "--scenario", str(GANGS), "--feature-gates", "GenericWorkload=true"]
    assert main([*args, "--output", "json"]) == 0
    out = capsys.readouterr()
    assert "ignored" not in out.err
    data = json.loads(out.out)
    groups = {g["name"]: g for g in data["podGroups"]}
    assert {n: (g["policy"], g["minCount"], g["members"], g["bound"], g["status"]) for n, g in groups.items()} == {
        "infer": ("gang", 2, 2, 2, "placed"),
        "sweep": ("gang", 2, 3, 3, "placed"),
        "etl": ("basic", None, 3, 3, "placed"),
        "train": ("gang", 4, 4, 0, "held"),
    }
    assert groups["train"]["message"] == HELD
    assert data["summary"]["podGroups"] == {"total": 4, "placed": 3, "held": 1, "waiting": 0, "ignored": 0}
    # none of the held gang's pods is bound; three say the group's reason, one the nodes'
    train = sorted(p["message"] for p in data["pods"] if p["name"].startswith("train-"))
    assert train == [
        "0/3 nodes are available: 3 Insufficient cpu. pod group preemption: No preemption victims found for incoming preemptor",
        HELD,
        HELD,
        HELD,
    ]
    assert all(p["node"] is None for p in data["pods"] if p["name"].startswith("train-"))

    assert main(args) == 0
    table = capsys.readouterr().out
    assert "Pod groups" in table and "total 4, placed 3, held 1" in table
    row = next(line for line in table.splitlines() if "default/train" in line and "held" in line)
    assert "minCount (4) cannot be satisfied: 3 scheduled, 0 remaining" in row  # the table wraps the rest


def test_simulate_without_the_gate_says_the_groups_are_ignored(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", "--scenario", str(GANGS), "--output", "json"]) == 0
    out = capsys.readouterr()
    assert "4 PodGroup(s) but the feature gate GenericWorkload is off" in out.err
    data = json.loads(out.out)
    assert data["summary"]["podGroups"]["ignored"] == 4
    # pod by pod, three of the gang's four bind: what the gate is for
    assert next(g for g in data["podGroups"] if g["name"] == "train")["bound"] == 3


def test_compare_counts_pod_groups_per_configuration(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    packer = tmp_path / "packer.yaml"
    packer.write_text(PACKER)
    args = ["compare", "--scenario", str(GANGS), "--config", str(ROOT / "config" / "kubesched.yaml")]
    args += ["--config", str(packer), "--feature-gates", "GenericWorkload=true"]
    assert main([*args, "--output", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    for conf in data["configurations"]:
        assert (conf["metrics"]["podGroupsPlaced"], conf["metrics"]["podGroupsHeld"]) == (3, 1), conf["name"]
    assert main(args) == 0
    assert "pod groups placed whole" in capsys.readouterr().out
    # without the gate there is nothing to count; a trace replay takes no gates
    assert main([*args[:-2], "--output", "json"]) == 0
    assert "podGroupsPlaced" not in json.loads(capsys.readouterr().out)["configurations"][0]["metrics"]
    assert (
        main(
            [
                "compare",
                "--nodes",
                "n.csv",
                "--pods",
                "p.csv",
                "--config",
                str(packer),
                "--feature-gates",
                "GenericWorkload=true",
            ]
        )
        == 2
    )
    assert "--feature-gates is for --scenario" in capsys.readouterr().err
