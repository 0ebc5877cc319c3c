"""``--plugin module:Class`` / ``--plugin file.py:Class``: a plugin tried without packaging it,
in ``simulate`` (placements change), and refused clearly when the spec is wrong."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

PLUGIN = '''
class PreferLast:
    """Score: the node whose name sorts last gets 100, the others 0."""

    name = "PreferLast"

    def __init__(self, args, handle):
        self.handle = handle

    def score(self, state, pod, node):
        names = sorted(n.name for n in self.handle.snapshot().list())
        return 100 if node.name == names[-1] else 0
'''

CONFIG = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    score:
      enabled:
      - name: PreferLast
        weight: 100
"""

SCENARIO = """\
apiVersion: v1
kind: Node
metadata: {name: %s}
status:
  allocatable: {cpu: "4", memory: 8Gi, pods: "10"}
"""
POD = """\
apiVersion: v1
kind: Pod
metadata: {name: p%d}
spec:
  containers: [{name: c, image: nginx, resources: {requests: {cpu: 100m}}}]
"""


def kubesched(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kubesched", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        env={**os.environ, **(env or {})},
    )


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "prefer_last.py").write_text(PLUGIN)
    (tmp_path / "config.yaml").write_text(CONFIG)
    docs = [SCENARIO % n for n in ("node-a", "node-b", "node-c")] + [POD % i for i in range(3)]
    (tmp_path / "scenario.yaml").write_text("---\n".join(docs))
    return tmp_path


@pytest.mark.parametrize("form", ["file", "module"])
def test_simulate_uses_a_plugin_from_a_local_file(files: Path, form: str) -> None:
    spec = "prefer_last.py:PreferLast" if form == "file" else "prefer_last:PreferLast"
    env = {"PYTHONPATH": str(files)} if form == "module" else None
    out = kubesched(
        "simulate",
        "--plugin",
        spec,
        "--config",
        "config.yaml",
        "--scenario",
        "scenario.yaml",
        "--output",
        "json",
        cwd=files,
        env=env,
    )
    assert out.returncode == 0, out.stderr
    assert {p["node"] for p in json.loads(out.stdout)["pods"]} == {"node-c"}


def test_without_the_flag_the_plugin_is_unknown(files: Path) -> None:
    out = kubesched("simulate", "--config", "config.yaml", "--scenario", "scenario.yaml", cwd=files)
    assert out.returncode == 2
    assert "unknown plugin 'PreferLast'" in out.stderr
    assert "--plugin" in out.stderr and "pip install" in out.stderr  # how to make it known


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("prefer_last.py", "expected module:Class or path/to/file.py:Class"),
        ("missing.py:PreferLast", "no such file: missing.py"),
        ("prefer_last.py:Nope", "prefer_last.py has no 'Nope'"),
        ("no_such_module:X", "cannot import no_such_module: ModuleNotFoundError"),
    ],
)
@pytest.mark.parametrize("command", ["simulate", "run"])
def test_a_wrong_spec_is_refused_naming_it(files: Path, spec: str, message: str, command: str) -> None:
    args = ["--config", "config.yaml"] + (["--scenario", "scenario.yaml"] if command == "simulate" else [])
    out = kubesched(command, "--plugin", spec, *args, cwd=files)
    assert out.returncode == 2
    assert f"--plugin {spec!r}" in out.stderr and message in out.stderr
