"""``kubesched bench`` with upstream's ``createAny``: a workload creates a CustomResourceDefinition
and objects of its kind, and a plugin that reads them through ``handle.informer_for`` is measured
beside the default profile. Without the objects the plugin's pods stay unschedulable."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kubesched.bench.errors import WorkloadError
from kubesched.bench.workload import load_workloads

ROOT = Path(__file__).resolve().parents[2]
CRD = ROOT / "config" / "crds" / "scheduling.x-k8s.io_elasticquotas.yaml"
PLUGIN = Path(__file__).resolve().parents[1] / "quota_plugins.py"


QUOTA = """\
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: ElasticQuota
metadata:
  name: quota-{{.Index}}
  namespace: team-{{.Index}}
spec:
  max: {cpu: "{{.cpu}}"}
"""
WORKLOAD = """\
- name: Quotas
  workloadTemplate:
  - {{opcode: createNodes, countParam: $nodes}}
  - {{opcode: createNamespaces, prefix: team, count: 2}}
  - {{opcode: createAny, templatePath: {crd}}}
  {quotas}
  - {{opcode: createPods, count: 6, namespace: team-1, collectMetrics: true}}
  workloads:
  - name: tiny
    params: {{nodes: 3, cpu: "20"}}
"""


def _write(tmp_path: Path, quotas: bool) -> Path:
    (tmp_path / "quota.yaml").write_text(QUOTA)
    line = "- {opcode: createAny, templatePath: quota.yaml, count: 2, templateParams: {cpu: $cpu}}" if quotas else ""
    path = tmp_path / "work.yaml"
    path.write_text(WORKLOAD.format(crd=CRD, quotas=line))
    return path


def _bench(tmp_path: Path, workload: Path) -> list[dict[str, Any]]:
    path = [str(ROOT), os.environ.get("PYTHONPATH")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in path if p)}
    out = subprocess.run(
        [sys.executable, "-m", "kubesched", "bench", "--no-progress", str(workload)]
        + ["--plugin", f"{PLUGIN}:NeedsQuota", "--json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env=env,
    )
    assert out.returncode == 0, out.stderr
    rows: list[dict[str, Any]] = json.loads(out.stdout)
    return rows


def test_a_plugin_reading_custom_objects_is_benchmarked_beside_the_default(tmp_path: Path) -> None:
    mine, default = _bench(tmp_path, _write(tmp_path, quotas=True))
    assert (mine["profile"], default["profile"]) == ("kubesched-bench", "default")
    assert (mine["scheduled"], mine["unschedulable"]) == (6, 0)
    assert (default["scheduled"], default["unschedulable"]) == (6, 0)


def test_without_the_custom_objects_the_plugins_pods_stay_unschedulable(tmp_path: Path) -> None:
    mine, default = _bench(tmp_path, _write(tmp_path, quotas=False))
    assert (mine["scheduled"], mine["unschedulable"]) == (0, 6)
    assert (default["scheduled"], default["unschedulable"]) == (6, 0)


def test_create_any_fields_are_checked(tmp_path: Path) -> None:
    (tmp_path / "q.yaml").write_text(QUOTA)
    (tmp_path / "w.yaml").write_text(
        "- name: X\n  workloadTemplate:\n  - {opcode: createAny, templatePath: q.yaml, count: 2,"
        " templateParams: {cpu: $missing}}\n  workloads: [{name: w, params: {}}]\n"
    )
    with pytest.raises(
        WorkloadError, match=r"templateParams\.cpu: parameter \$missing is not in the workload's params"
    ):
        load_workloads(tmp_path / "w.yaml")
    (tmp_path / "w.yaml").write_text(
        "- name: X\n  workloadTemplate:\n  - {opcode: createAny, templatePath: nowhere.yaml}\n"
        "  workloads: [{name: w}]\n"
    )
    with pytest.raises(WorkloadError, match="templatePath: no such template file: nowhere.yaml"):
        load_workloads(tmp_path / "w.yaml")


def test_an_object_of_a_kind_no_definition_serves_is_refused_by_name(tmp_path: Path) -> None:
    (tmp_path / "quota.yaml").write_text(QUOTA)
    (tmp_path / "w.yaml").write_text(
        "- name: X\n  workloadTemplate:\n  - {opcode: createNodes, count: 1}\n"
        "  - {opcode: createAny, templatePath: quota.yaml, templateParams: {cpu: '1'}}\n"
        "  - {opcode: createPods, count: 1, collectMetrics: true}\n  workloads: [{name: w}]\n"
    )
    path = [str(ROOT), os.environ.get("PYTHONPATH")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in path if p)}
    out = subprocess.run(
        [sys.executable, "-m", "kubesched", "bench", "--no-progress", "w.yaml"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env=env,
    )
    assert out.returncode != 0
    assert "ElasticQuota" in out.stderr
