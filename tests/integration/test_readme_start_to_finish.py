"""The docs' "Start to finish" (docs/start-to-finish.md) as a new user follows it: every file it
shows written out as shown, its tests run with the kit's pytest plugin, its workload benchmarked
beside the default profile with ``kubesched bench``, and the plugin watched through the real
kubectl against ``sim serve`` with ``kubesched run``: the commands run are the page's own."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from docs_pages import page, section
from polling import eventually_sync

from kubesched.testing import sim_serve_process

ROOT = Path(__file__).resolve().parents[2]
KUBECTL = shutil.which("kubectl")
pytestmark = pytest.mark.slow


def section_text() -> str:
    return section(page("start-to-finish.md"), "# Start to finish: a plugin that reads a kind of its own")


def files() -> dict[str, str]:
    """Every block of the section whose first line names its file (``# path``): path -> text."""
    out = {}
    for body in re.findall(r"```(?:python|yaml)\n(.*?)```", section_text(), re.DOTALL):
        first, _, rest = body.partition("\n")
        assert first.startswith("# "), f"a block without its file name: {first!r}"
        out[first[2:].strip()] = rest if first.endswith(".yaml") else body
    return out


def commands() -> list[str]:
    """The section's shell commands, one per line (continuations joined, comments dropped)."""
    lines = []
    for body in re.findall(r"```sh\n(.*?)```", section_text(), re.DOTALL):
        for line in body.replace("\\\n", " ").splitlines():
            line = line.split(" #", 1)[0].strip()
            if line and not line.startswith("#"):
                lines.append(re.sub(r"\s+", " ", line))
    return lines


def env(project: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(project)])}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A new user's project: the section's files, and the CRDs of a clone of kubesched."""
    for path, text in files().items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    shutil.copytree(ROOT / "config" / "crds", tmp_path / "config" / "crds")
    return tmp_path


def test_the_section_shows_a_plugin_its_tests_a_workload_and_manifests() -> None:
    assert set(files()) == {
        "my_plugins/pod_quota.py",
        "tests/test_pod_quota.py",
        "pod-quota/bench.yaml",
        "pod-quota/bench-quota.yaml",
        "pod-quota/cluster.yaml",
        "pod-quota/quota.yaml",
        "pod-quota/config.yaml",
        "pod-quota/pods.yaml",
    }
    assert "handle.informer_for(QUOTAS)" in files()["my_plugins/pod_quota.py"]


def test_step_2_its_tests_pass_with_the_kit(project: Path) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_pod_quota.py"],
        cwd=project,
        env=env(project),
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "2 passed" in run.stdout


def test_step_3_the_bench_command_measures_it_beside_the_default(project: Path) -> None:
    (bench,) = [c for c in commands() if c.startswith("kubesched bench")]
    argv = shlex.split(bench)[1:]
    assert argv == ["bench", "pod-quota/bench.yaml", "--plugin", "my_plugins/pod_quota.py:PodQuota"]
    run = subprocess.run(
        [sys.executable, "-m", "kubesched", *argv, "--no-progress", "--json"],
        cwd=project,
        env=env(project),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    mine, default = json.loads(run.stdout)
    assert (mine["profile"], default["profile"]) == ("kubesched-bench", "default")
    assert mine["scheduled"] == default["scheduled"] == 300
    assert mine["unschedulable"] == default["unschedulable"] == 0


class Session:
    """The page's shell session: kubectl, and the scheduler it starts in the background."""

    def __init__(self, project: Path, kubeconfig: str) -> None:
        self.project = project
        self.kubeconfig = kubeconfig
        self.scheduler: subprocess.Popen[bytes] | None = None

    def kubectl(self, line: str) -> str:
        argv = shlex.split(line)
        assert argv[0] == "kubectl"
        run = subprocess.run(
            [
                KUBECTL or "kubectl",
                "--kubeconfig",
                self.kubeconfig,
                "--cache-dir",
                str(self.project / ".kube"),
                *argv[1:],
            ],
            cwd=self.project,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert run.returncode == 0, f"{line}: {run.stderr}"
        return run.stdout

    def start(self, line: str) -> None:
        argv = [a for a in shlex.split(line.rstrip("&")) if a]
        assert argv[:3] == ["python", "-m", "kubesched"] and argv[3] == "run"
        argv[argv.index("--kubeconfig") + 1] = self.kubeconfig
        self.scheduler = subprocess.Popen(
            [sys.executable, *argv[1:]],
            cwd=self.project,
            env=env(self.project),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def placements(self) -> dict[str, str]:
        items = json.loads(self.kubectl("kubectl get pods -n team -o json"))["items"]
        return {p["metadata"]["name"]: p["spec"].get("nodeName") or "Pending" for p in items}


@pytest.fixture
def session(project: Path) -> Iterator[Session]:
    (serve,) = [c for c in commands() if c.startswith("python -m kubesched sim serve")]
    args = shlex.split(serve.rstrip("&"))
    scenario = str(project / args[args.index("--scenario") + 1])
    with sim_serve_process(project / "serve", "--scenario", scenario) as served:
        s = Session(project, served["kubeconfig"])
        try:
            yield s
        finally:
            if s.scheduler is not None:
                s.scheduler.send_signal(signal.SIGTERM)
                try:
                    s.scheduler.wait(10)
                except subprocess.TimeoutExpired:
                    s.scheduler.kill()
                    s.scheduler.wait()


@pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")
def test_step_4_kubectl_watches_it_work_against_sim_serve(session: Session) -> None:
    lines = commands()
    start = next(i for i, c in enumerate(lines) if c.startswith("python -m kubesched sim serve"))
    seen_get = 0
    for line in lines[start + 1 :]:
        if line.startswith("export "):
            continue
        if line.startswith("python -m kubesched run"):
            session.start(line)
        elif line.startswith("kubectl apply -f config/crds/"):
            session.kubectl(line)
            eventually_sync(
                lambda: (
                    subprocess.run(
                        [KUBECTL or "kubectl", "--kubeconfig", session.kubeconfig, "get", "elasticquotas", "-A"],
                        capture_output=True,
                        check=False,
                        timeout=30,
                    ).returncode
                    == 0
                ),
                "the CRD served",
                timeout=15,
            )
        elif line.startswith("kubectl get pods"):
            seen_get += 1
            if seen_get == 1:  # two run, the third waits for the quota
                placed = eventually_sync(
                    session.placements,
                    "two pods bound",
                    until=lambda p: len(p) == 3 and list(p.values()).count("n1") == 2,
                    timeout=30,
                )
                assert placed["web-2"] == "Pending", placed
            else:  # the quota raised: the third follows
                eventually_sync(session.placements, "web-2 bound", until=lambda p: p.get("web-2") == "n1", timeout=30)
            session.kubectl(line)
        elif line.startswith("kubectl get events"):
            message = "namespace team runs 2 of the 2 pods its ElasticQuota allows"
            out = eventually_sync(
                lambda line=line: session.kubectl(line),
                "the FailedScheduling event",
                until=lambda o, message=message: message in o,
                timeout=15,
            )
            assert "web-2" in out
        elif line.startswith("kubectl "):
            session.kubectl(line)
        else:
            raise AssertionError(f"a command the test does not know: {line}")
    assert seen_get == 2
    assert session.placements() == {"web-0": "n1", "web-1": "n1", "web-2": "n1"}
