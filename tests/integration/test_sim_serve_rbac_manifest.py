"""The installation's RBAC manifest applies to ``sim serve`` with the real kubectl (its objects
are stored and served; the server authorizes by token alone), with client-side validation on:
every kind in it has its OpenAPI definition."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from kubesched.testing import sim_serve_process

KUBECTL = shutil.which("kubectl")
pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")
ROOT = Path(__file__).resolve().parents[2]


def kubectl(kubeconfig: str, cache: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [KUBECTL or "kubectl", "--kubeconfig", kubeconfig, "--cache-dir", str(cache), *args],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_config_rbac_applies_then_is_unchanged(tmp_path: Path) -> None:
    with sim_serve_process(tmp_path / "srv") as printed:
        kc, cache = printed["kubeconfig"], tmp_path / "cache"
        out = kubectl(kc, cache, "apply", "-f", str(ROOT / "config" / "rbac.yaml"))
        assert out.returncode == 0, out.stderr
        assert "serviceaccount/kubesched created" in out.stdout
        assert "clusterrole.rbac.authorization.k8s.io/kubesched created" in out.stdout
        assert "clusterrolebinding.rbac.authorization.k8s.io/kubesched created" in out.stdout
        again = kubectl(kc, cache, "apply", "-f", str(ROOT / "config" / "rbac.yaml"))
        assert again.returncode == 0, again.stderr
        assert "clusterrole.rbac.authorization.k8s.io/kubesched unchanged" in again.stdout
        role = kubectl(kc, cache, "get", "clusterrole", "kubesched", "-o", "jsonpath={.rules[*].resources}")
        assert role.returncode == 0 and "podgroups" in role.stdout
        sa = kubectl(kc, cache, "get", "serviceaccounts", "-n", "kube-system", "-o", "name")
        assert "serviceaccount/kubesched" in sa.stdout
