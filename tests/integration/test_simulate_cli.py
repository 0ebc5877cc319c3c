"""``kubesched simulate | config | plugins`` run as a user runs them: ``python -m kubesched`` in a subprocess.

The demo run (about two seconds) happens once per module and is shared by the tests that read it.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched.config import format_config_yaml, load_config
from kubesched.sim.run.simulate import simulate
from kubesched.sim.scenario.reading import parse_scenario
from kubesched.testing import make_node, make_pod

REPO = Path(__file__).resolve().parents[2]
SHIPPED_CONFIG = REPO / "config" / "kubesched.yaml"
DEMO = REPO / "config" / "scenarios" / "demo.yaml"

IN_TREE = (
    "DefaultBinder",
    "DefaultPreemption",
    "InterPodAffinity",
    "NodeVolumeLimits",
    "PodTopologySpread",
    "VolumeBinding",
    "VolumeRestrictions",
    "VolumeZone",
    "ImageLocality",
    "NodeAffinity",
    "NodeName",
    "NodePorts",
    "NodeResourcesBalancedAllocation",
    "NodeResourcesFit",
    "NodeUnschedulable",
    "PrioritySort",
    "SchedulingGates",
    "TaintToleration",
)
#: Default score weights of the upstream default profile; plugins not listed weigh 1.
WEIGHTS = {"TaintToleration": 3, "NodeAffinity": 2, "PodTopologySpread": 2, "InterPodAffinity": 2}
#: Score plugins whose NormalizeScore is upstream's DefaultNormalizeScore, and whether reversed.
NORMALIZED = {"TaintToleration": True, "NodeAffinity": False}
MAX_NODE_SCORE = 100
PHASES = {"Scheduled", "Unschedulable", "Error"}


def kubesched(*args: str | Path, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kubesched", *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def simulate_json(*args: str | Path, cwd: Path = REPO) -> dict[str, Any]:
    proc = kubesched("simulate", "--output", "json", *args, cwd=cwd)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def write_scenario(path: Path, *objs: Any) -> Path:
    path.write_text(yaml.safe_dump_all([o.obj() if hasattr(o, "obj") else o for o in objs], sort_keys=False))
    return path


def placements(result: dict[str, Any]) -> dict[str, str | None]:
    return {f"{p['namespace']}/{p['name']}": p["node"] for p in result["pods"]}


def by_name(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {p["name"]: p for p in result["pods"]}


def default_normalize(raw: dict[str, int], reverse: bool) -> dict[str, int]:
    """Upstream's DefaultNormalizeScore: scale to [0, 100] by the highest score, optionally reversed."""
    top = max(raw.values())
    if top == 0:
        return {n: MAX_NODE_SCORE if reverse else 0 for n in raw}
    out = {n: MAX_NODE_SCORE * s // top for n, s in raw.items()}
    return {n: MAX_NODE_SCORE - s for n, s in out.items()} if reverse else out


def check_final_scores(pod: dict[str, Any]) -> None:
    """finalScore = NormalizeScore(score) × weight, and the chosen node has the highest sum."""
    score, final = pod["score"], pod["finalScore"]
    assert set(final) == set(score), pod["name"]
    plugins = {pl for per_node in final.values() for pl in per_node}
    for plugin in plugins:
        weight = WEIGHTS.get(plugin, 1)
        raw = {n: score[n][plugin] for n in score}
        normalized = default_normalize(raw, NORMALIZED[plugin]) if plugin in NORMALIZED else raw
        for node, value in ((n, final[n][plugin]) for n in final):
            assert isinstance(value, int), (pod["name"], node, plugin)
            assert value % weight == 0, (pod["name"], node, plugin, value)
            assert 0 <= value <= MAX_NODE_SCORE * weight, (pod["name"], node, plugin, value)
            assert value == normalized[node] * weight, (pod["name"], node, plugin, value)
    totals = {n: sum(per_node.values()) for n, per_node in final.items()}
    assert totals[pod["node"]] == max(totals.values()), pod["name"]


@pytest.fixture(scope="module")
def demo() -> dict[str, Any]:
    """The demo scenario with the shipped configuration, as ``kubesched simulate --output json``."""
    return simulate_json()


@pytest.fixture(scope="module")
def demo_node_names() -> set[str]:
    docs = list(yaml.safe_load_all(DEMO.read_text()))
    return {d["metadata"]["name"] for d in docs if d and d.get("kind") == "Node"}


# --- the demo with no arguments ------------------------------------------------------------------


@pytest.fixture(scope="module")
def demo_table() -> str:
    """``kubesched simulate`` with no arguments, from the repository root."""
    proc = kubesched("simulate")
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_no_arguments_prints_pods_nodes_and_a_summary(demo_table: str) -> None:
    for fragment in (
        "Pods",
        "Nodes",
        "Summary",
        "team-a/web-000",
        "default/batch-000",
        "node-00",
        "gpu-0",
        "pods to schedule",
        "profile default-scheduler",
        "profile bin-packing-scheduler",
        "Unschedulable: 0/37 nodes are available",
    ):
        assert fragment in demo_table, fragment
    summary = demo_table[demo_table.index("Summary") :]
    for label, value in (("pods to schedule", "362"), ("nodes", "37")):
        line = next(ln for ln in summary.splitlines() if f" {label} " in ln)
        assert line.split("│")[2].strip() == value, label


def test_table_shows_reasons_verbatim(demo_table: str) -> None:
    """Messages are data, not console markup: a bracketed gate name prints as is."""
    assert "waiting for scheduling gates: [example.com/approval]" in demo_table


def test_json_has_pods_nodes_and_a_consistent_summary(demo: dict[str, Any], demo_node_names: set[str]) -> None:
    assert set(demo) == {"pods", "nodes", "summary"}
    s = demo["summary"]
    assert s["pods"] == len(demo["pods"]) == 362
    assert s["nodes"] == len(demo["nodes"]) == len(demo_node_names) == 37
    assert s["runningBefore"] == 27
    phases = [p["phase"] for p in demo["pods"]]
    assert s["scheduled"] == phases.count("Scheduled")
    assert s["unschedulable"] == phases.count("Unschedulable")
    assert s["errors"] == phases.count("Error") == 0
    assert s["scheduled"] + s["unschedulable"] == s["pods"]
    assert {n["name"] for n in demo["nodes"]} == demo_node_names
    # Every scheduled pod is counted on its node, besides the 20 that ran before.
    # Preemption victims were running before and were deleted to make room.
    assert s["preempted"], "the demo's critical pod preempts lower-priority pods"
    assert sum(n["pods"] for n in demo["nodes"]) == s["scheduled"] + s["runningBefore"] - len(s["preempted"])


def test_every_pod_record_has_the_required_shape(demo: dict[str, Any], demo_node_names: set[str]) -> None:
    for pod in demo["pods"]:
        where = pod.get("name")
        for key, kind in (
            ("namespace", str),
            ("name", str),
            ("schedulerName", str),
            ("message", str),
            ("filter", dict),
            ("score", dict),
            ("finalScore", dict),
        ):
            assert isinstance(pod[key], kind), (where, key)
        assert pod["node"] is None or isinstance(pod["node"], str), where
        assert pod["phase"] in PHASES, where
        assert (pod["node"] is not None) == (pod["phase"] == "Scheduled"), where
        for node, per_plugin in pod["filter"].items():
            assert node in demo_node_names, (where, node)
            assert per_plugin, (where, node)
            for plugin, verdict in per_plugin.items():
                assert plugin in IN_TREE, (where, plugin)
                assert isinstance(verdict, str) and verdict, (where, node, plugin)
        for table in ("score", "finalScore"):
            for node, per_plugin in pod[table].items():
                assert node in demo_node_names, (where, table, node)
                assert all(isinstance(v, int) and not isinstance(v, bool) for v in per_plugin.values()), (where, table)


def test_scheduled_pods_land_on_nodes_that_passed_every_filter(demo: dict[str, Any], demo_node_names: set[str]) -> None:
    scheduled = [p for p in demo["pods"] if p["phase"] == "Scheduled"]
    assert scheduled
    for pod in scheduled:
        assert pod["node"] in demo_node_names
        assert pod["message"] == f"Successfully assigned {pod['namespace']}/{pod['name']} to {pod['node']}"
        feasible = {n for n, per in pod["filter"].items() if all(v == "passed" for v in per.values())}
        assert pod["node"] in feasible, pod["name"]
        # With one feasible node upstream skips scoring; otherwise every feasible node is scored.
        if pod["finalScore"]:
            assert set(pod["finalScore"]) == feasible, pod["name"]
        else:
            assert feasible == {pod["node"]}, pod["name"]
    assert not any(p["node"].startswith("cordoned-") for p in scheduled)


def test_both_profiles_schedule_and_keep_their_own_score_plugins(demo: dict[str, Any]) -> None:
    per_profile = demo["summary"]["profiles"]
    assert set(per_profile) == {"default-scheduler", "bin-packing-scheduler"}
    assert per_profile["default-scheduler"]["Scheduled"] > 0
    assert per_profile["bin-packing-scheduler"]["Scheduled"] > 0
    plugins: dict[str, set[str]] = {"default-scheduler": set(), "bin-packing-scheduler": set()}
    for pod in demo["pods"]:
        for per_node in pod["finalScore"].values():
            plugins[pod["schedulerName"]].update(per_node)
    assert "NodeResourcesBalancedAllocation" in plugins["default-scheduler"]
    assert "NodeResourcesBalancedAllocation" not in plugins["bin-packing-scheduler"]
    assert {"TaintToleration", "NodeResourcesFit", "ImageLocality"} <= plugins["bin-packing-scheduler"]


ON_PURPOSE = [
    (
        "too-big-0",
        "default-scheduler",
        [
            "0/37 nodes are available: ",
            "30 Insufficient cpu",
            "2 node(s) were unschedulable",
            "5 node(s) had untolerated taint(s)",
        ],
    ),
    ("too-big-1", "bin-packing-scheduler", ["0/37 nodes are available: ", "30 Insufficient memory"]),
    (
        "gpu-without-toleration",
        "default-scheduler",
        [
            "0/37 nodes are available: ",
            "30 node(s) didn't match Pod's node affinity/selector",
            "5 node(s) had untolerated taint(s)",
        ],
    ),
    (
        "nowhere-zone",
        "default-scheduler",
        ["0/37 nodes are available: ", "node(s) didn't match Pod's node affinity/selector"],
    ),
    ("gated", "default-scheduler", ["waiting for scheduling gates", "example.com/approval"]),
]


@pytest.mark.parametrize(("name", "profile", "fragments"), ON_PURPOSE, ids=[c[0] for c in ON_PURPOSE])
def test_on_purpose_unschedulable_pods_carry_upstream_reasons(
    demo: dict[str, Any], name: str, profile: str, fragments: list[str]
) -> None:
    pod = by_name(demo)[name]
    assert pod["node"] is None
    assert pod["phase"] == "Unschedulable"
    assert pod["schedulerName"] == profile
    for fragment in fragments:
        assert fragment in pod["message"], fragment


def test_the_per_node_filter_verdicts_explain_the_failure(demo: dict[str, Any]) -> None:
    pods = by_name(demo)
    too_big = pods["too-big-0"]["filter"]
    assert too_big["node-00"]["NodeResourcesFit"] == "Insufficient cpu"
    assert too_big["cordoned-0"]["NodeUnschedulable"] == "node(s) were unschedulable"
    assert too_big["gpu-0"]["TaintToleration"] == "node(s) had untolerated taint(s)"
    assert (
        pods["gpu-without-toleration"]["filter"]["node-00"]["NodeAffinity"]
        == "node(s) didn't match Pod's node affinity/selector"
    )
    assert pods["gated"]["filter"] == {}


def test_host_port_pods_take_one_general_node_each(demo: dict[str, Any]) -> None:
    hostport = [p for p in demo["pods"] if p["name"].startswith("hostport-")]
    placed = [p["node"] for p in hostport if p["node"]]
    # 30 untainted schedulable nodes, one port 8080 each: 30 fit, 10 do not.
    assert len(placed) == len(set(placed)) == 30
    assert all(n.startswith("node-") for n in placed)
    refused = [p for p in hostport if not p["node"]]
    assert len(refused) == 10
    for pod in refused:
        assert pod["phase"] == "Unschedulable"
        assert pod["message"].startswith("0/37 nodes are available: ")
        assert "30 node(s) didn't have free ports for the requested pod ports" in pod["message"]


def test_only_the_on_purpose_pods_are_left_unscheduled(demo: dict[str, Any]) -> None:
    left = {p["name"] for p in demo["pods"] if p["phase"] != "Scheduled"}
    expected = {name for name, _, _ in ON_PURPOSE}
    assert expected <= left
    assert {n for n in left - expected if not n.startswith("hostport-")} == set()


def test_final_scores_are_normalized_scores_times_weight(demo: dict[str, Any]) -> None:
    scored = [p for p in demo["pods"] if p["phase"] == "Scheduled" and p["finalScore"]]
    assert len(scored) > 300
    for pod in scored:
        check_final_scores(pod)
    # No node of the demo has a PreferNoSchedule taint: TaintToleration gives every node 100 × 3.
    assert {v["TaintToleration"] for p in scored for v in p["finalScore"].values()} == {300}


# --- determinism and defaults found from anywhere ----------------------------------------------------


def test_same_seed_same_placements_and_shipped_defaults_are_found_from_any_directory(
    demo: dict[str, Any], tmp_path: Path
) -> None:
    # No config/ in tmp_path: the copies shipped inside the package are used; seed 0 is the default.
    again = simulate_json("--seed", "0", cwd=tmp_path)
    assert placements(again) == placements(demo)
    assert [p["message"] for p in again["pods"]] == [p["message"] for p in demo["pods"]]
    volatile = {"seconds", "podsPerSecond"}
    assert {k: v for k, v in again["summary"].items() if k not in volatile} == {
        k: v for k, v in demo["summary"].items() if k not in volatile
    }


def test_different_seeds_break_ties_differently(tmp_path: Path) -> None:
    nodes = [make_node(f"n{i:02d}").capacity(cpu="8", memory="16Gi", pods="110") for i in range(16)]
    pods = [make_pod(f"p{i}").req(cpu="500m", memory="512Mi") for i in range(8)]
    scenario = write_scenario(tmp_path / "ties.yaml", *nodes, *pods)
    runs = [placements(simulate_json("--scenario", scenario, "--seed", seed)) for seed in ("1", "2")]
    for run in runs:
        # Spreading on identical nodes: each pod on a node of its own, whatever the seed.
        assert None not in run.values()
        assert len(set(run.values())) == len(pods)
    assert runs[0] != runs[1]


def test_bin_packing_profile_packs_and_default_profile_spreads(tmp_path: Path) -> None:
    nodes = [make_node(f"n{i}").capacity(cpu="8", memory="16Gi", pods="110") for i in range(4)]
    spread = [make_pod(f"spread-{i}").req(cpu="500m", memory="512Mi") for i in range(4)]
    pack = [make_pod(f"pack-{i}").req(cpu="500m", memory="512Mi").scheduler("bin-packing-scheduler") for i in range(4)]
    scenario = write_scenario(tmp_path / "packing.yaml", *nodes, *spread, *pack)
    result = simulate_json("--config", SHIPPED_CONFIG, "--scenario", scenario)
    on = {
        profile: {p["node"] for p in result["pods"] if p["schedulerName"] == profile}
        for profile in ("default-scheduler", "bin-packing-scheduler")
    }
    assert None not in on["default-scheduler"] | on["bin-packing-scheduler"]
    assert len(on["bin-packing-scheduler"]) < len(on["default-scheduler"])
    assert len(on["bin-packing-scheduler"]) == 1
    assert len(on["default-scheduler"]) == 4


# --- errors ---------------------------------------------------------------------------------------


LEAST_CONFIG = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [
        {"schedulerName": "default-scheduler"},
        {
            "schedulerName": "bin-packing-scheduler",
            "pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "Least"}}}],
        },
    ],
}


def write_least_config(directory: Path) -> Path:
    path = directory / "least.yaml"
    path.write_text(yaml.safe_dump(LEAST_CONFIG, sort_keys=False))
    return path


def _deployment_scenario(tmp_path: Path) -> list[str]:
    path = write_scenario(
        tmp_path / "deploy.yaml",
        make_node("n1").capacity(cpu="4"),
        {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "web"}, "spec": {}},
    )
    return ["--scenario", str(path)]


def _no_containers_scenario(tmp_path: Path) -> list[str]:
    pod = make_pod("empty").obj()
    pod["spec"]["containers"] = []
    path = write_scenario(tmp_path / "empty.yaml", make_node("n1").capacity(cpu="4"), pod)
    return ["--scenario", str(path)]


def _least_config(tmp_path: Path) -> list[str]:
    return ["--config", str(write_least_config(tmp_path))]


SIMULATE_ERRORS = [
    (
        "bad-scoring-strategy",
        _least_config,
        [
            "least.yaml",
            "profiles[1].pluginConfig[0].args.scoringStrategy.type",
            "'Least' is not one of LeastAllocated, MostAllocated, RequestedToCapacityRatio",
        ],
    ),
    ("unsupported-kind", _deployment_scenario, ["deploy.yaml", "document 2", "'CronJob' is not supported"]),
    (
        "pod-without-containers",
        _no_containers_scenario,
        ["empty.yaml", "document 2.spec.containers", "a pod needs at least one container"],
    ),
    (
        "missing-scenario",
        lambda tmp: ["--scenario", str(tmp / "nope.yaml")],
        ["nope.yaml", "No such file or directory"],
    ),
    ("missing-config", lambda tmp: ["--config", str(tmp / "nope.yaml")], ["nope.yaml", "No such file or directory"]),
]


@pytest.mark.parametrize(
    ("make_args", "fragments"), [c[1:] for c in SIMULATE_ERRORS], ids=[c[0] for c in SIMULATE_ERRORS]
)
def test_simulate_refuses_bad_input_with_a_clear_message(tmp_path: Path, make_args: Any, fragments: list[str]) -> None:
    proc = kubesched("simulate", *make_args(tmp_path))
    assert proc.returncode != 0
    assert proc.stdout == ""
    assert "Traceback" not in proc.stderr
    assert proc.stderr.startswith("kubesched: ")
    for fragment in fragments:
        assert fragment in proc.stderr, fragment


MIXED = [
    make_node("ssd").capacity(cpu="4", memory="8Gi", pods="110").label("disk", "ssd"),
    make_node("hdd").capacity(cpu="4", memory="8Gi", pods="110").label("disk", "hdd"),
    make_pod("lots").req(cpu="lots"),
    make_pod("ghost").req(cpu="100m").scheduler("ghost-scheduler"),
    make_pod("likes-ssd").req(cpu="100m").preferred_node_affinity(5, "disk", ["ssd"]),
    make_pod("packed").req(cpu="100m").scheduler("bin-packing-scheduler"),
]


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A small scenario with a malformed pod, a pod of an unknown profile and two good pods."""
    scenario = write_scenario(tmp_path_factory.mktemp("mixed") / "mixed.yaml", *MIXED)
    return simulate_json("--scenario", scenario)


def test_a_malformed_quantity_is_an_error_of_that_pod_only(mixed: dict[str, Any]) -> None:
    pod = by_name(mixed)["lots"]
    assert pod["phase"] == "Error"
    assert pod["node"] is None
    assert "'lots'" in pod["message"]
    assert "quantities must match the regular expression" in pod["message"]
    assert {p["name"] for p in mixed["pods"] if p["phase"] == "Scheduled"} == {"likes-ssd", "packed"}
    assert mixed["summary"]["errors"] == 2


def test_a_pod_without_a_profile_is_an_error_naming_its_scheduler(mixed: dict[str, Any]) -> None:
    pod = by_name(mixed)["ghost"]
    assert pod["phase"] == "Error"
    assert pod["node"] is None
    assert pod["schedulerName"] == "ghost-scheduler"
    assert "'ghost-scheduler'" in pod["message"]
    assert "default-scheduler" in pod["message"] and "bin-packing-scheduler" in pod["message"]


def test_node_affinity_final_score_is_normalized_times_two(mixed: dict[str, Any]) -> None:
    pod = by_name(mixed)["likes-ssd"]
    assert pod["node"] == "ssd"
    assert pod["score"]["ssd"]["NodeAffinity"] == 5
    assert pod["score"]["hdd"]["NodeAffinity"] == 0
    assert pod["finalScore"]["ssd"]["NodeAffinity"] == 200
    assert pod["finalScore"]["hdd"]["NodeAffinity"] == 0
    check_final_scores(pod)


def test_a_malformed_pod_is_reported_once_not_in_a_loop() -> None:
    """Reporting a malformed pod writes its status; that write must not cause another report."""
    scenario = parse_scenario([o.obj() for o in MIXED[:3]])

    async def run() -> tuple[str, str]:
        result = await simulate(load_config(SHIPPED_CONFIG).profiles, scenario)
        before = result.store.get("Pod", "default", "lots")["metadata"]["resourceVersion"]
        for _ in range(50):
            await asyncio.sleep(0)
        after = result.store.get("Pod", "default", "lots")["metadata"]["resourceVersion"]
        await result.scheduler.stop(grace=0)
        return before, after

    before, after = asyncio.run(run())
    assert after == before


# --- config and plugins ---------------------------------------------------------------------------


def test_config_validate_accepts_the_shipped_config() -> None:
    proc = kubesched("config", "validate", "config/kubesched.yaml")
    assert proc.returncode == 0, proc.stderr
    assert (
        proc.stdout.strip() == "config/kubesched.yaml: valid (2 profile(s): default-scheduler, bin-packing-scheduler)"
    )


def test_config_validate_refuses_a_bad_config(tmp_path: Path) -> None:
    proc = kubesched("config", "validate", write_least_config(tmp_path))
    assert proc.returncode == 1
    assert (
        "profiles[1].pluginConfig[0].args.scoringStrategy.type: "
        "'Least' is not one of LeastAllocated, MostAllocated, RequestedToCapacityRatio"
    ) in proc.stderr


@pytest.mark.parametrize(
    ("args", "profiles"),
    [(["config/kubesched.yaml"], ["default-scheduler", "bin-packing-scheduler"]), ([], ["default-scheduler"])],
    ids=["shipped-config", "defaults"],
)
def test_config_print_output_loads_back_to_the_same_config(
    tmp_path: Path, args: list[str], profiles: list[str]
) -> None:
    proc = kubesched("config", "print", *args)
    assert proc.returncode == 0, proc.stderr
    printed = tmp_path / "printed.yaml"
    printed.write_text(proc.stdout)
    reloaded = load_config(printed)
    assert [p.scheduler_name for p in reloaded.profiles] == profiles
    assert format_config_yaml(reloaded) == proc.stdout
    original = load_config(REPO / args[0]) if args else load_config(None)
    for want, got in zip(original.profiles, reloaded.profiles):
        assert got.plugins == want.plugins
        assert got.plugin_args == want.plugin_args


def test_plugins_lists_the_in_tree_plugins() -> None:
    proc = kubesched("plugins")
    assert proc.returncode == 0, proc.stderr
    rows = {line.split("│")[1].strip(): line for line in proc.stdout.splitlines() if line.count("│") >= 3}
    for name in IN_TREE:
        assert name in rows, name
        assert rows[name].split("│")[3].strip() == "kubesched", name


def test_plugins_json_parses_and_names_distribution_and_points() -> None:
    proc = kubesched("plugins", "--output", "json")
    assert proc.returncode == 0, proc.stderr
    rows = {r["name"]: r for r in json.loads(proc.stdout)}
    assert set(IN_TREE) <= set(rows)
    for name in IN_TREE:
        assert rows[name]["distribution"] == "kubesched"
        assert rows[name]["class"].startswith("kubesched.plugins.")
    assert rows["NodeResourcesFit"]["extensionPoints"] == ["preFilter", "filter", "preScore", "score", "placementScore"]
    assert rows["SchedulingGates"]["extensionPoints"] == ["preEnqueue"]
    assert rows["DefaultBinder"]["extensionPoints"] == ["bind"]


def test_outcomes_only_leaves_out_the_per_node_maps(tmp_path: Path) -> None:
    scenario = tmp_path / "s.yaml"
    scenario.write_text(
        "\n---\n".join(
            json.dumps(o)
            for o in (
                make_node("n1").obj(),
                make_node("n2").obj(),
                make_pod("p").req(cpu="100m").obj(),
                make_pod("big").req(cpu="64").obj(),
            )
        )
    )
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "kubesched",
            "simulate",
            "--scenario",
            str(scenario),
            "--output",
            "json",
            "--outcomes-only",
        ],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    )
    pods = {p["name"]: p for p in json.loads(out.stdout)["pods"]}
    assert pods["p"]["phase"] == "Scheduled" and pods["p"]["node"] in {"n1", "n2"}
    assert pods["big"]["phase"] == "Unschedulable" and "Insufficient cpu" in pods["big"]["message"]
    assert all(p["filter"] == {} and p["score"] == {} and p["finalScore"] == {} for p in pods.values())
