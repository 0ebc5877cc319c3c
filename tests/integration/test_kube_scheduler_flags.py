"""``kubesched run`` with the flags of a kube-scheduler manifest: the leader-election family and
``--v`` act as upstream's, ``--write-config-to`` writes the effective configuration, and the
rest are accepted with a warning naming them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

CONFIG = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: true
  resourceName: from-the-file
"""


def run(tmp_path: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "config.yaml").write_text(CONFIG)
    return subprocess.run(
        [sys.executable, "-m", "kubesched", "run", "--config", "config.yaml", *flags],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )


def test_a_manifests_flags_are_accepted_and_the_leader_election_ones_act(tmp_path: Path) -> None:
    out = run(
        tmp_path,
        "--leader-elect=false",
        "--leader-elect-lease-duration=30s",
        "--leader-elect-renew-deadline",
        "20s",
        "--leader-elect-resource-namespace=scheduling",
        "--authentication-kubeconfig=/etc/kubernetes/scheduler.conf",
        "--authorization-kubeconfig=/etc/kubernetes/scheduler.conf",
        "--bind-address=127.0.0.1",
        "--profiling",
        "--kube-api-qps",
        "50",
        "--v=2",
        "--write-config-to",
        "effective.yaml",
    )
    assert out.returncode == 0, out.stderr
    le = yaml.safe_load((tmp_path / "effective.yaml").read_text())["leaderElection"]
    assert le["leaderElect"] is False
    assert le["leaseDuration"] == "30s" and le["renewDeadline"] == "20s"
    assert le["resourceNamespace"] == "scheduling"
    assert le["resourceName"] == "from-the-file"  # not given: the file's value stays
    for flag in ("--authentication-kubeconfig", "--authorization-kubeconfig", "--profiling", "--kube-api-qps"):
        assert f"{flag} is accepted for kube-scheduler compatibility and has no effect" in out.stderr
    assert "--bind-address is accepted" not in out.stderr  # it acts


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (("--leader-elect-resource-lock=endpoints",), "'endpoints' is not supported, only 'leases'"),
        (("--leader-elect=maybe",), "invalid boolean value 'maybe'"),
        (("--leader-elect-lease-duration=soon",), "--leader-elect-lease-duration"),
        (("--no-such-flag",), "unrecognized arguments: --no-such-flag"),
    ],
)
def test_wrong_values_are_refused_naming_the_flag(tmp_path: Path, flags: tuple[str, ...], message: str) -> None:
    out = run(tmp_path, *flags, "--write-config-to", "effective.yaml")
    assert out.returncode == 2
    assert message in out.stderr
    assert not (tmp_path / "effective.yaml").exists()
