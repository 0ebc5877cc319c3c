"""``simulate`` on the simulated clock: pod lifetimes on workloads' templates, Jobs that
complete, and the horizon that stops workloads which recreate their pods forever."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from kubesched.config import load_config
from kubesched.sim.run.simulate import SimulationResult, SimulationSettings, simulate
from kubesched.sim.scenario.reading import parse_scenario
from kubesched.sim.scenario.timeline import default_horizon


def node(name: str, cpu: str = "4") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name},
        "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "20"}},
    }


def template(lifetime: str | None, cpu: str = "1", **labels: str) -> dict[str, Any]:
    meta: dict[str, Any] = {"labels": labels} if labels else {}
    if lifetime is not None:
        meta["annotations"] = {"kubesched.io/lifetime": lifetime}
    return {
        "metadata": meta,
        "spec": {
            "restartPolicy": "Never",
            "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu}}}],
        },
    }


def job(name: str, lifetime: str, completions: int | None, parallelism: int | None) -> dict[str, Any]:
    spec: dict[str, Any] = {"template": template(lifetime)}
    if completions is not None:
        spec["completions"] = completions
    if parallelism is not None:
        spec["parallelism"] = parallelism
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name}, "spec": spec}


def replicaset(name: str, lifetime: str, replicas: int = 2) -> dict[str, Any]:
    tpl = template(lifetime, app=name)
    tpl["spec"]["restartPolicy"] = "Always"
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": name},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}}, "template": tpl},
    }


def run(docs: list[dict[str, Any]], **settings: Any) -> SimulationResult:
    scenario = parse_scenario(docs, "test")
    return asyncio.run(
        asyncio.wait_for(simulate(load_config(None).profiles, scenario, SimulationSettings(**settings)), 60)
    )


def test_a_job_with_a_lifetime_completes() -> None:
    result = run([node("n1"), job("batch", "30s", completions=4, parallelism=2)])
    pods = [p for p in result.pods if p["name"].startswith("batch-")]
    assert len(pods) == 4
    assert all(p["phase"] == "Completed" for p in pods)
    # Two at a time: two ran 0-30s, the next two 30-60s.
    assert sorted(p["message"] for p in pods) == ["ran on n1 from 0s to 30s"] * 2 + ["ran on n1 from 30s to 60s"] * 2
    for p in pods:
        assert result.store.get("Pod", "default", p["name"])["status"]["phase"] == "Succeeded"
    status = result.store.get("Job", "default", "batch")["status"]
    assert status["succeeded"] == 4 and status["active"] == 0
    assert status["completionTime"]
    conditions = [(c["type"], c["status"], c["reason"]) for c in status["conditions"]]
    assert conditions == [
        ("SuccessCriteriaMet", "True", "CompletionsReached"),
        ("Complete", "True", "CompletionsReached"),
    ]
    jobs = result.summary["jobs"]
    assert jobs == [
        {
            "namespace": "default",
            "name": "batch",
            "completions": 4,
            "succeeded": 4,
            "active": 0,
            "complete": True,
            "completedAt": 60.0,
        }
    ]
    assert "stopped" not in result.summary
    # The pods that finished no longer hold the node.
    assert result.nodes[0]["requested"].get("cpu", 0) == 0


def test_a_job_without_completions_is_done_when_one_pod_succeeds() -> None:
    result = run([node("n1"), job("once", "10s", completions=None, parallelism=None)])
    status = result.store.get("Job", "default", "once")["status"]
    assert status["succeeded"] == 1
    assert any(c["type"] == "Complete" for c in status["conditions"])
    assert result.summary["jobs"][0]["completedAt"] == 10.0


def test_a_job_that_cannot_run_does_not_complete_and_the_run_ends() -> None:
    blocked = job("huge", "10s", completions=2, parallelism=1)
    blocked["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "8"
    result = run([node("n1", cpu="1"), blocked])
    assert result.summary["jobs"][0]["complete"] is False
    assert result.summary["jobs"][0]["succeeded"] == 0


def test_a_replicaset_with_lifetimes_stops_at_the_default_horizon_and_says_so() -> None:
    docs = [node("n1"), replicaset("web", "30s")]
    scenario = parse_scenario(docs, "test")
    assert default_horizon(scenario).at == 30.0
    result = run(docs)
    stopped = result.summary["stopped"]
    assert stopped.startswith("stopped at the horizon 30s")
    assert "recreate pods that have a lifetime" in stopped
    assert result.summary["horizon"] == 30.0 and result.summary["simulatedSeconds"] == 30.0
    # The first two ended at 30s and were replaced, and the replacements are running.
    completed = [p for p in result.pods if p["phase"] == "Completed"]
    running = [p for p in result.pods if p["phase"] == "Scheduled"]
    assert len(completed) == 2 and len(running) == 2
    assert result.summary["timeline"][-1]["event"] == stopped


def test_until_moves_the_horizon() -> None:
    result = run([node("n1"), replicaset("web", "30s")], until=95.0)
    assert result.summary["stopped"].startswith("stopped at the horizon 1m35s (--until)")
    # Ends at 30, 60, 90: three rounds of two pods finished.
    assert sum(1 for p in result.pods if p["phase"] == "Completed") == 6


def test_a_statefulset_pod_replaced_under_the_same_name_runs_its_own_lifetime() -> None:
    sts = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "db"},
        "spec": {
            "replicas": 1,
            "serviceName": "db",
            "selector": {"matchLabels": {"app": "db"}},
            "template": template("20s", app="db"),
        },
    }
    sts["spec"]["template"]["spec"]["restartPolicy"] = "Always"
    result = run([node("n1"), sts], until=50.0)
    events = [m["event"] for m in result.summary["timeline"]]
    # db-0 ended at 20s and 40s: the one made again at 20s ran its own 20 seconds.
    assert [e for e in events if "ended" in e] == ["default/db-0 ended on n1"] * 2
    assert [m["time"] for m in result.summary["timeline"] if "ended" in m["event"]] == [20, 40]


def test_pods_that_come_back_at_the_same_instant_are_stopped_by_the_event_cap() -> None:
    result = run([node("n1"), replicaset("flash", "0s", replicas=1)], max_events=50)
    assert result.summary["stopped"] == "stopped after 50 events at 0s: 1 event(s) still due"


def test_the_cli_prints_where_it_stopped(tmp_path: Path) -> None:
    scenario = tmp_path / "rs.yaml"
    scenario.write_text(yaml.safe_dump_all([node("n1"), replicaset("web", "30s")]))
    out = subprocess.run(
        [sys.executable, "-m", "kubesched", "simulate", "--scenario", str(scenario), "--until", "1m"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert "kubesched: note: stopped at the horizon 1m0s (--until)" in out.stderr
    assert "stopped at the horizon" in out.stdout
    bad = subprocess.run(
        [sys.executable, "-m", "kubesched", "simulate", "--scenario", str(scenario), "--until", "soon"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert bad.returncode != 0 and "--until: Invalid value: 'soon'" in bad.stderr


def test_the_default_horizon_covers_finite_work_one_at_a_time() -> None:
    docs = [
        node("n1"),
        job("serial", "30s", completions=3, parallelism=1),
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "solo", "annotations": {"kubesched.io/lifetime": "1m"}},
            "spec": {"containers": [{"name": "c", "image": "x"}]},
        },
        {
            "apiVersion": "kubesched.io/v1",
            "kind": "Steps",
            "steps": [{"at": "2m", "create": [replicaset("later", "45s")]}],
        },
    ]
    horizon = default_horizon(parse_scenario(docs, "test"))
    # 2m of steps + 3 x 30s + 1m + one 45s round.
    assert horizon.at == 120 + 90 + 60 + 45
    assert horizon.endless is True
    assert "the last step" in horizon.why


def test_simulated_time_is_reported_as_it_passes() -> None:
    seen: list[tuple[float, float]] = []
    scenario = parse_scenario([node("n1"), job("batch", "30s", completions=2, parallelism=1)], "test")
    asyncio.run(
        simulate(
            load_config(None).profiles, scenario, SimulationSettings(), clock_progress=lambda n, h: seen.append((n, h))
        )
    )
    assert seen[0] == (30.0, 60.0)
    assert seen[-1] == (60.0, 60.0)
    assert [n for n, _ in seen] == sorted(n for n, _ in seen)


def test_a_stepped_replay_moves_the_same_clock() -> None:
    from kubesched.sim.run.stepping import SteppedSimulation

    async def go() -> tuple[float, float, str | None]:
        sim = await SteppedSimulation.start(load_config(None).profiles, [node("n1")])
        try:
            sim.advance_to(30.0)
            sim.advance_to(10.0)  # never back
            placed = await sim.place({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "x"}]}})
            return sim.clock(), sim.scheduler.clock(), placed.node
        finally:
            await sim.close()

    assert asyncio.run(go()) == (30.0, 30.0, "n1")
