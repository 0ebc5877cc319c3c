"""``PUT /api/v1/reset`` on a real ``kubesched sim serve`` process, then the real kubectl: the
cluster is back at its start with what every server starts with — the default namespaces and
the system priority classes — so ``kubectl run`` works after a reset as before it."""

from __future__ import annotations

import os
import shutil
import subprocess
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from kubesched.sim.apiserver.admission import DEFAULT_NAMESPACES, SYSTEM_PRIORITY_CLASSES
from kubesched.testing import sim_serve_process

KUBECTL = shutil.which("kubectl") or "/usr/bin/kubectl"
pytestmark = pytest.mark.skipif(
    not os.access(KUBECTL, os.X_OK), reason="kubectl is not installed (looked on PATH and at /usr/bin/kubectl)"
)

NODE = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {"name": "n1"},
    "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"}},
}


class Served:
    def __init__(self, printed: dict[str, str], home: Path) -> None:
        self.url = printed["url"]
        self.kubeconfig = printed["kubeconfig"]
        self.home = home

    def kubectl(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [KUBECTL, "--kubeconfig", self.kubeconfig, "--cache-dir", str(self.home / "cache"), *args],
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "HOME": str(self.home)},
            check=False,
        )

    def ok(self, *args: str) -> str:
        done = self.kubectl(*args)
        assert done.returncode == 0, f"kubectl {' '.join(args)}: {done.stderr}"
        return done.stdout

    def reset(self) -> None:
        req = urllib.request.Request(self.url + "/api/v1/reset", method="PUT")
        with urllib.request.urlopen(req, timeout=10) as resp:
            assert resp.status == 202


@pytest.fixture(params=["no-scenario", "scenario"])
def served(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Served]:
    args: list[str] = []
    if request.param == "scenario":
        # A scenario that declares a namespace of its own and no priority class.
        scenario = tmp_path / "start.yaml"
        scenario.write_text(
            yaml.safe_dump_all([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}}, NODE])
        )
        args = ["--scenario", str(scenario)]
    with sim_serve_process(tmp_path / "serve", *args) as printed:
        yield Served(printed, tmp_path)


def test_kubectl_run_works_after_a_reset(served: Served) -> None:
    assert "pod/before created" in served.ok("run", "before", "--image=registry.k8s.io/pause:3.10")
    served.reset()
    assert served.kubectl("get", "pod", "before").returncode != 0  # made since the start: gone
    assert "pod/after created" in served.ok("run", "after", "--image=registry.k8s.io/pause:3.10")
    assert "pod/critical created" in served.ok(
        "run", "critical", "-n", "kube-system", "--image=registry.k8s.io/pause:3.10",
        "--overrides", '{"spec": {"priorityClassName": "system-cluster-critical"}}',
    )  # fmt: skip


def test_a_reset_keeps_the_namespaces_and_priority_classes_every_server_starts_with(served: Served) -> None:
    before_ns = served.ok("get", "namespaces", "-o", "name").split()
    before_pc = served.ok("get", "priorityclasses", "-o", "name").split()
    assert {f"namespace/{ns}" for ns in DEFAULT_NAMESPACES} <= set(before_ns)
    assert {f"priorityclass.scheduling.k8s.io/{name}" for name, _ in SYSTEM_PRIORITY_CLASSES} <= set(before_pc)
    served.ok("create", "namespace", "extra")
    served.reset()
    assert served.ok("get", "namespaces", "-o", "name").split() == before_ns  # "extra" gone, the rest back
    assert served.ok("get", "priorityclasses", "-o", "name").split() == before_pc
    value = served.ok("get", "priorityclass", "system-node-critical", "-o", "jsonpath={.value}")
    assert value == "2000001000"
