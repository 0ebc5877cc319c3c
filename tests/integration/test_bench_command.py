"""``kubesched bench`` end to end, as a user runs it: a tiny shipped workload (or one of the
user's files) under a plugin loaded with ``--plugin``, beside the default profile, in a
subprocess; the table's rows and columns and the JSON rows say both profiles were measured and
the plugin ran under the user's profile only. Nothing here asserts a speed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from kubesched import Status

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve()

COLUMNS = [
    "workload",
    "profile",
    "nodes",
    "init",
    "measured",
    "scheduled",
    "unschedulable",
    "pods/s",
    "CPU ms/pod",
    "floor",
    "ours/floor",
    "p50 ms",
    "p90 ms",
    "p99 ms",
    "peak RSS MiB",
    "max loop lag ms",
    "loop",
]


class RefuseEveryNode:
    """A filter that fits no pod anywhere: a run under it decides every pod unschedulable."""

    name = "RefuseEveryNode"

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    def filter(self, state: Any, pod: Any, node: Any) -> Status:
        return Status.unschedulable("refused by the bench test")


PLUGIN = f"{HERE}:RefuseEveryNode"


def _bench(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    # This checkout's kubesched, from any working directory (and the modules beside it).
    path = [str(ROOT), str(cwd), os.environ.get("PYTHONPATH")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in path if p)}
    return subprocess.run(
        [sys.executable, "-m", "kubesched", "bench", "--no-progress", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env=env,
    )


def _table(stdout: str) -> tuple[list[str], list[list[str]]]:
    """The header's cells and each row's cells of the rich table in ``stdout``."""
    header = next(line for line in stdout.splitlines() if line.startswith("┃"))
    rows = [line for line in stdout.splitlines() if line.startswith("│")]
    return [c.strip() for c in header.strip("┃").split("┃")], [
        [c.strip() for c in r.strip("│").split("│")] for r in rows
    ]


def test_a_plugin_is_measured_beside_the_default_profile() -> None:
    out = _bench("SchedulingBasic/5Nodes", "--plugin", PLUGIN)
    assert out.returncode == 0, out.stderr
    header, rows = _table(out.stdout)
    assert header == COLUMNS
    cells = [dict(zip(header, row)) for row in rows]
    assert [(c["workload"], c["profile"]) for c in cells] == [
        ("SchedulingBasic/5Nodes", "kubesched-bench"),
        ("SchedulingBasic/5Nodes", "default"),
        ("SchedulingBasic/5Nodes", "kubesched-bench/default"),
    ]
    mine, default, ratio = cells
    # The plugin ran under its profile only: nothing fits there, everything fits by default.
    assert (mine["nodes"], mine["init"], mine["measured"]) == ("5", "5", "10")
    assert (mine["scheduled"], mine["unschedulable"]) == ("0", "10")
    assert (default["scheduled"], default["unschedulable"]) == ("10", "0")
    for c in (mine, default):
        assert float(c["pods/s"]) > 0 and float(c["peak RSS MiB"]) > 0 and float(c["CPU ms/pod"]) > 0
        assert float(c["p50 ms"]) <= float(c["p90 ms"]) <= float(c["p99 ms"])
    assert ratio["pods/s"].endswith("x") and ratio["p99 ms"].endswith("x") and ratio["CPU ms/pod"].endswith("x")
    assert ratio["scheduled"] == ""


def test_a_profile_of_a_configuration_runs_a_workload_file_of_the_users(tmp_path: Path) -> None:
    (tmp_path / "pod.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  generateName: mine-\n  labels: {app: mine}\nspec:\n"
        "  containers:\n  - name: c\n    image: pause\n    resources: {requests: {cpu: 100m}}\n"
    )
    (tmp_path / "work.yaml").write_text(
        """
- name: Mine
  defaultPodTemplatePath: pod.yaml
  workloadTemplate:
  - {opcode: createNodes, countParam: $nodes}
  - {opcode: createNamespaces, prefix: team, count: 2}
  - {opcode: createPods, countParam: $early, namespace: team-0, skipWaitToCompletion: true}
  - {opcode: barrier, namespaces: [team-0]}
  - {opcode: sleep, duration: 10ms}
  - {opcode: startCollectingMetrics, name: Mine/window, namespaces: [team-1]}
  - {opcode: createPods, countParam: $late, namespace: team-1}
  - {opcode: createPods, count: 2, namespace: team-0}
  - {opcode: stopCollectingMetrics}
  workloads:
  - name: tiny
    params: {nodes: 3, early: 4, late: 6}
"""
    )
    (tmp_path / "config.yaml").write_text(
        """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: my-scheduler
  plugins:
    filter:
      enabled: [{name: RefuseEveryNode}]
- schedulerName: other-scheduler
"""
    )
    argv = ["work.yaml", "--config", "config.yaml", "--profile", "my-scheduler", "--plugin", PLUGIN, "--json"]
    out = _bench(*argv, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)
    assert [(r["profile"], r["workload"]) for r in rows] == [
        ("my-scheduler", "Mine/window"),
        ("default", "Mine/window"),
    ]
    mine, default = rows
    # Measured: the window's namespace only (6 pods), after the 4 early and with 3 nodes.
    assert (mine["nodes"], mine["init_pods"], mine["measure_pods"]) == (3, 4, 6)
    assert (mine["scheduled"], mine["unschedulable"]) == (0, 6)
    assert (default["scheduled"], default["unschedulable"]) == (6, 0)
    assert set(mine["vs_default"]) >= {"pods_per_second", "attempt_p99_ms", "peak_rss_mib"}
    assert "vs_default" not in default


def test_usage_mistakes_end_with_status_2_and_a_message(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text(
        "- name: X\n  workloadTemplate: [{opcode: createPods, count: 1}]\n  workloads: [{name: w}]\n"
    )
    out = _bench(str(tmp_path / "bad.yaml"))
    assert out.returncode == 2
    assert "bad.yaml: X/w: nothing is measured" in out.stderr
    two = tmp_path / "two.yaml"
    two.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        "profiles: [{schedulerName: a}, {schedulerName: b}]\n"
    )
    out = _bench("SchedulingBasic/5Nodes", "--config", str(two))
    assert out.returncode == 2
    assert "the configuration has 2 profiles (a, b): pick one with --profile" in out.stderr


def test_list_names_the_shipped_workloads() -> None:
    out = _bench("--list")
    assert out.returncode == 0, out.stderr
    assert "SchedulingBasic/500Nodes" in out.stdout and "threshold=680" in out.stdout


def test_repeat_shows_each_profiles_run_of_median_pods_per_second() -> None:
    from kubesched.bench.measure import LoopLag, make_result
    from kubesched.cli.bench import _median_run

    def run(pods_per_second: float) -> list[Any]:
        return [make_result("W", 1, 0, 10, 10 / pods_per_second, [0.001], 0, 10, LoopLag())]

    runs = [run(300.0), run(100.0), run(200.0)]
    assert _median_run(runs)[0].pods_per_second == 200.0
    assert _median_run([run(100.0), run(300.0)])[0].pods_per_second == 100.0
    out = _bench("SchedulingBasic/5Nodes", "--repeat", "0")
    assert out.returncode == 2 and "--repeat must be at least 1" in out.stderr


def test_a_module_alone_registers_its_plugins_and_no_compare_runs_it_alone(tmp_path: Path) -> None:
    (tmp_path / "refusing.py").write_text(
        "from kubesched import Status\n\n"
        "class Helper:\n    pass\n\n"
        "class Refuse:\n    name = 'Refuse'\n\n"
        "    def __init__(self, args, handle):\n        pass\n\n"
        "    def filter(self, state, pod, node):\n        return Status.unschedulable('no')\n"
    )
    out = _bench("SchedulingBasic/5Nodes", "--plugin", "refusing", "--no-compare-default", "--json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    (row,) = json.loads(out.stdout)
    assert (row["profile"], row["scheduled"], row["unschedulable"]) == ("kubesched-bench", 0, 10)
    assert "vs_default" not in row


def test_over_http_the_scheduler_is_a_client_of_the_embedded_api_server() -> None:
    """--backend http: the same decisions as in memory (every pod bound by default, none under
    the refusing plugin, whose failures are written over HTTP as events and conditions), the
    rows saying which backend measured them, the table's title too."""
    out = _bench("SchedulingBasic/5Nodes", "--plugin", PLUGIN, "--backend", "http", "--json")
    assert out.returncode == 0, out.stderr
    rows = {r["profile"]: r for r in json.loads(out.stdout)}
    mine, default = rows["kubesched-bench"], rows["default"]
    assert mine["backend"] == default["backend"] == "http"
    assert (mine["scheduled"], mine["unschedulable"]) == (0, 10)
    assert (default["scheduled"], default["unschedulable"]) == (10, 0)
    assert default["pods_per_second"] > 0 and default["cpu_ms_per_pod"] > 0
    table = _bench("SchedulingBasic/5Nodes", "--backend", "http")
    assert table.returncode == 0, table.stderr
    assert "kubesched bench (over HTTP)" in table.stdout
    header, cells = _table(table.stdout)
    assert [dict(zip(header, c))["scheduled"] for c in cells] == ["10"]


def test_an_unknown_backend_is_a_usage_error() -> None:
    out = _bench("--backend", "grpc")
    assert out.returncode == 2 and "--backend" in out.stderr


def test_label_selects_workloads_as_upstreams_label_filter() -> None:
    out = _bench("--list", "--label", "integration-test,short")
    assert out.returncode == 0, out.stderr
    names = {line.split()[0] for line in out.stdout.splitlines()}
    assert {"GangScheduling/10Nodes_3Gangs", "SchedulingWithResourceClaimTemplate/fast"} <= names
    assert "GangScheduling/100Nodes_10Gangs" not in names  # integration-test without short
    out = _bench("--list", "--label", "performance,-short")
    names = {line.split()[0] for line in out.stdout.splitlines()}
    assert "SchedulingWithResourceClaimTemplate/5000pods_500nodes" in names and "SchedulingBasic/5Nodes" not in names
    # Over the named workloads: of GangScheduling's eight sizes, the short one runs.
    out = _bench("GangScheduling", "--label", "short", "--json", "--no-progress")
    assert out.returncode == 0, out.stderr
    assert [row["workload"] for row in json.loads(out.stdout)] == ["GangScheduling/10Nodes_3Gangs"]
    out = _bench("GangScheduling", "--label", "+short,-integration-test")
    assert out.returncode == 2 and "--label +short,-integration-test: no workload has these labels" in out.stderr
