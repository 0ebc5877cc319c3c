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


def run_bare(tmp_path: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    """``kubesched run`` without ``--config``, as a kube-scheduler manifest runs it."""
    return subprocess.run(
        [sys.executable, "-m", "kubesched", "run", *flags],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )


def test_without_config_the_defaults_run_and_the_deprecated_client_flags_act(tmp_path: Path) -> None:
    (tmp_path / "scheduler.conf").write_text("")
    out = run_bare(
        tmp_path,
        "--kubeconfig=scheduler.conf",
        "--authentication-kubeconfig=scheduler.conf",
        "--authorization-kubeconfig=scheduler.conf",
        "--kube-api-qps=5",
        "--kube-api-burst",
        "7",
        "--leader-elect-resource-name=from-a-flag",
        "--write-config-to=effective.yaml",
    )
    assert out.returncode == 0, out.stderr
    assert "has no effect" not in out.stderr  # every one of them acts
    cfg = yaml.safe_load((tmp_path / "effective.yaml").read_text())
    assert cfg["clientConnection"]["qps"] == 5 and cfg["clientConnection"]["burst"] == 7
    assert cfg["clientConnection"]["kubeconfig"] == "scheduler.conf"
    assert cfg["leaderElection"]["leaderElect"] is True  # kube-scheduler's default
    assert cfg["leaderElection"]["resourceName"] == "from-a-flag"
    assert [p["schedulerName"] for p in cfg["profiles"]] == ["default-scheduler"]


@pytest.mark.parametrize(
    ("flags", "warning"),
    [
        (
            ("--config=config.yaml", "--kube-api-qps=5"),
            "--kube-api-qps is accepted for kube-scheduler compatibility and has no effect here: kube-scheduler "
            "ignores it when --config is given",
        ),
        (
            ("--kubeconfig=a.conf", "--authorization-kubeconfig=b.conf"),
            "--authorization-kubeconfig is accepted for kube-scheduler compatibility and has no effect here: the "
            "secure port's SubjectAccessReviews go through the scheduler's own connection (a.conf), not b.conf",
        ),
        (("--profiling=false",), "has no effect here: no /debug/pprof endpoints are served"),
        (("--master=https://10.0.0.1:6443",), "has no effect here: the API server address comes from the kubeconfig"),
        (("--lock-object-name=x",), "kube-scheduler 1.37 no longer applies it either"),
        (("--tls-min-version=VersionTLS13",), "the minimum TLS version is 1.2, upstream's default"),
    ],
    ids=["qps with --config", "another authorization kubeconfig", "profiling", "master", "lock-object", "tls"],
)
def test_flags_without_effect_say_why(tmp_path: Path, flags: tuple[str, ...], warning: str) -> None:
    (tmp_path / "config.yaml").write_text(CONFIG)
    for name in ("a.conf", "b.conf"):
        (tmp_path / name).write_text("")
    out = run_bare(tmp_path, *flags, "--write-config-to=effective.yaml")
    assert out.returncode == 0, out.stderr
    assert warning in out.stderr


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (("--kube-api-qps=lots",), "--kube-api-qps: invalid number 'lots'"),
        (("--kube-api-burst=-1",), "--kube-api-burst: must not be negative, got -1"),
        (("--pod-max-in-unschedulable-pods-duration=soon",), "--pod-max-in-unschedulable-pods-duration"),
        (("--feature-gates=ComponentFlagz=maybe",), "invalid value of ComponentFlagz: 'maybe'"),
        (("positional",), "unrecognized arguments: positional"),
    ],
)
def test_wrong_kube_scheduler_values_are_refused(tmp_path: Path, flags: tuple[str, ...], message: str) -> None:
    out = run_bare(tmp_path, *flags, "--write-config-to=effective.yaml")
    assert out.returncode == 2
    assert message in out.stderr


def test_the_command_line_reaches_the_scheduler() -> None:
    from kubesched.cli.main import build_parser
    from kubesched.cli.run import run_options
    from kubesched.config import load_config
    from kubesched.framework.features import FeatureGates
    from kubesched.server.app import scheduler_options
    from kubesched.server.flags import split_zpages_gates

    args = build_parser().parse_args(
        ["run", "--pod-max-in-unschedulable-pods-duration=90s", "--feature-gates=ComponentFlagz=false", "--v=3"]
    )
    opts = run_options(args, FeatureGates(), split_zpages_gates(args.feature_gates)[1])
    assert scheduler_options(load_config(None), opts).max_unschedulable_duration == 90
    bare = build_parser().parse_args(["run"])
    default = run_options(bare, FeatureGates(), split_zpages_gates(None)[1])
    assert scheduler_options(load_config(None), default).max_unschedulable_duration == 300  # upstream's 5m
    assert (opts.flagz, opts.statusz) == (False, True)
    assert opts.flags["pod-max-in-unschedulable-pods-duration"] == "1m30s"
    assert opts.flags["v"] == "3" and opts.flags["config"] == "" and opts.flags["secure-port"] == "10259"


def test_kube_scheduler_version() -> None:
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from kubesched.cli.main import kube_scheduler; sys.exit(kube_scheduler())",
            "--version",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0
    assert "(kube-scheduler 1.37)" in out.stdout


@pytest.mark.parametrize(
    ("argv", "want"),
    [
        (["-v=4"], ["--v=4"]),
        (["-v", "2", "--leader-elect=false"], ["--v=2", "--leader-elect=false"]),
        (["--v=3"], ["--v=3"]),
        (["-v"], ["-v"]),
    ],
    ids=["-v=N", "-v N", "--v=N", "bare -v"],
)
def test_kube_scheduler_takes_klog_verbosity(argv: list[str], want: list[str]) -> None:
    from kubesched.cli.main import _klog_verbosity

    assert _klog_verbosity(argv) == want
