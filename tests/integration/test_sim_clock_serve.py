"""``sim serve`` on its wall-paced clock, talked to with the real kubectl: a Job whose pods have a
lifetime completes, a scenario's Steps come at their (sped-up) times, and ``--until`` stops the
server at the horizon."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from polling import eventually_sync

from kubesched.testing import sim_serve_process

KUBECTL = shutil.which("kubectl") or "/usr/bin/kubectl"
needs_kubectl = pytest.mark.skipif(
    not os.access(KUBECTL, os.X_OK), reason="kubectl is not installed (looked on PATH and at /usr/bin/kubectl)"
)


def node(name: str, cpu: str = "4") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name},
        "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "20"}},
    }


def steps(*items: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "kubesched.io/v1", "kind": "Steps", "steps": list(items)}


JOB = {
    "apiVersion": "batch/v1",
    "kind": "Job",
    "metadata": {"name": "batch"},
    "spec": {
        "completions": 3,
        "parallelism": 2,
        "template": {
            "metadata": {"annotations": {"kubesched.io/lifetime": "10s"}},
            "spec": {
                "restartPolicy": "Never",
                "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}],
            },
        },
    },
}


def kubectl(kubeconfig: str, *args: str) -> Any:
    out = subprocess.run(
        [KUBECTL, "--kubeconfig", kubeconfig, *args, "-o", "json"],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    return json.loads(out.stdout)


@needs_kubectl
def test_a_job_with_a_lifetime_completes_and_steps_come_at_their_times(tmp_path: Path) -> None:
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text(
        yaml.safe_dump_all(
            [
                node("n1"),
                JOB,
                # At 20x: the first step 0.1 s after the start, the second three minutes after.
                steps({"at": "2s", "create": [node("n2", cpu="1")]}, {"at": "1h", "create": [node("n3")]}),
            ]
        )
    )
    with sim_serve_process(
        tmp_path / "serve", "--with-scheduler", "--scenario", str(scenario), "--speed", "20"
    ) as printed:
        kc = printed["kubeconfig"]

        def complete() -> Any:
            status = kubectl(kc, "get", "job", "batch")["status"]
            return status if any(c["type"] == "Complete" for c in status.get("conditions") or ()) else None

        status = eventually_sync(complete, "the Job completes", timeout=60, interval=0.3)
        assert status["succeeded"] == 3 and status["active"] == 0 and status["completionTime"]
        assert [c["type"] for c in status["conditions"]] == ["SuccessCriteriaMet", "Complete"]
        pods = kubectl(kc, "get", "pods", "-l", "job-name=batch")["items"]
        assert len(pods) == 3
        assert all(p["status"]["phase"] == "Succeeded" and p["spec"]["nodeName"] for p in pods)

        names = eventually_sync(
            lambda: {n["metadata"]["name"] for n in kubectl(kc, "get", "nodes")["items"]},
            "the first step made n2",
            timeout=60,
            interval=0.3,
            until=lambda names: "n2" in names,
        )
        # The second step is due three minutes (wall) after the start: not yet.
        assert "n3" not in names


def test_until_stops_the_server_at_the_horizon(tmp_path: Path) -> None:
    scenario = tmp_path / "steps.yaml"
    scenario.write_text(
        yaml.safe_dump_all(
            [
                node("n1"),
                steps({"at": "2s", "create": [node("n2")]}, {"at": "1h", "delete": [{"kind": "Node", "name": "n1"}]}),
            ]
        )
    )
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "kubesched",
            "sim",
            "serve",
            "--insecure",
            "--port",
            "0",
            "--kubeconfig-out",
            str(tmp_path / "kubeconfig"),
            "--scenario",
            str(scenario),
            "--speed",
            "20",
            "--until",
            "20s",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert "simulated 2s: step 1: create 1" in lines
    assert "simulated time reached the horizon 20s (--until); 1 event(s) still due: stopping" in lines
    assert lines.index("simulated 2s: step 1: create 1") < lines.index(
        "simulated time reached the horizon 20s (--until); 1 event(s) still due: stopping"
    )


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--speed", "0"], "--speed: Invalid value: 0.0: must be above 0"),
        (["--until", "later"], "--until: Invalid value: 'later'"),
        (["--record", "out.yaml"], "--record: records a live cluster: give it with --import-from"),
    ],
)
def test_bad_time_flags_are_refused(tmp_path: Path, flags: list[str], message: str) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "kubesched", "sim", "serve", "--insecure", "--port", "0", *flags],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert out.returncode != 0 and message in out.stderr
