"""What a soak found: the figures and the verdict of each check (:class:`Report`), as tables
or JSON."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from rich.console import Console
from rich.table import Table


@dataclass
class Check:
    """One verdict: its name, whether it passed, and what was seen."""

    name: str
    ok: bool
    detail: str


@dataclass
class Report:
    """A soak's figures and checks; it passed (:attr:`ok`) when there are checks and all pass."""

    nodes: int
    pods: int
    faults: str
    seed: int
    created: int = 0
    bound: int = 0
    seconds_to_all_bound: float | None = None
    pods_per_second: float = 0.0
    leader_failovers: int = 0
    failover_seconds: float | None = None
    replica_restarts: int = 0
    faults_fired: dict[str, int] = field(default_factory=dict)
    binds: int = 0
    binds_per_pod_max: int = 0
    bind_conflicts: int = 0
    scheduled_events_missing: int = 0
    create_retries: int = 0
    rss_baseline_mib: float = 0.0
    rss_peak_mib: float = 0.0
    rss_after_delete_mib: float = 0.0
    rss_second_wave_peak_mib: float = 0.0
    rss_after_second_delete_mib: float = 0.0
    healthz_probes: int = 0
    healthz_max_ms: float = 0.0
    healthz_failures: int = 0
    #: The slowest /healthz answer of any replica while the pods were bound, and while every
    #: replica relisted the pods (410); how many 410s forced those relists.
    healthz_burst_max_ms: float = 0.0
    healthz_relist_max_ms: float = 0.0
    relist_gone: int = 0
    #: Tracebacks in the processes' logs.
    tracebacks: int = 0
    checks: list[Check] = field(default_factory=list)
    logs: str | None = None

    @property
    def ok(self) -> bool:
        return bool(self.checks) and all(c.ok for c in self.checks)


def print_report(rep: Report) -> None:
    """The figures as one table, then the checks (PASS/FAIL and why), then where the logs are."""
    t = Table(title=f"kubesched soak: {rep.nodes} nodes, {rep.pods} pods, faults {rep.faults} (seed {rep.seed})")
    t.add_column("measure")
    t.add_column("value", justify="right", max_width=80, overflow="fold")
    rows = [
        ("pods created", str(rep.created)),
        ("pods bound", str(rep.bound)),
        ("time to all bound", f"{rep.seconds_to_all_bound} s" if rep.seconds_to_all_bound is not None else "never"),
        ("pods/s", f"{rep.pods_per_second:.1f}"),
        ("leader failovers", str(rep.leader_failovers)),
        ("failover after kill", f"{rep.failover_seconds} s" if rep.failover_seconds is not None else "-"),
        ("replica restarts", str(rep.replica_restarts)),
        (
            "/healthz probes (slowest, failed)",
            f"{rep.healthz_probes} ({rep.healthz_max_ms:.0f} ms, {rep.healthz_failures})",
        ),
        (
            "/healthz slowest in the burst, in the relist (410s)",
            f"{rep.healthz_burst_max_ms:.0f} ms, {rep.healthz_relist_max_ms:.0f} ms ({rep.relist_gone})",
        ),
        ("tracebacks in the logs", str(rep.tracebacks)),
        ("bindings (max per pod)", f"{rep.binds} ({rep.binds_per_pod_max})"),
        ("binding conflicts", str(rep.bind_conflicts)),
        ("Scheduled events missing", str(rep.scheduled_events_missing)),
        ("client retries", str(rep.create_retries)),
        ("faults fired", ", ".join(f"{k} {v}" for k, v in sorted(rep.faults_fired.items())) or "-"),
        (
            "scheduler RSS MiB (baseline/peak/after delete; wave 2 peak/after delete)",
            f"{rep.rss_baseline_mib:.0f} / {rep.rss_peak_mib:.0f} / {rep.rss_after_delete_mib:.0f}; "
            f"{rep.rss_second_wave_peak_mib:.0f} / {rep.rss_after_second_delete_mib:.0f}",
        ),
    ]
    for k, v in rows:
        t.add_row(k, v)
    console = Console(color_system=None, width=140)
    console.print(t)
    c = Table(title="checks")
    c.add_column("check")
    c.add_column("result")
    c.add_column("detail", overflow="fold")
    for check in rep.checks:
        c.add_row(check.name, "PASS" if check.ok else "FAIL", check.detail)
    console.print(c)
    if rep.logs:
        console.print(f"logs: {rep.logs}")


def report_json(rep: Report) -> dict[str, Any]:
    """The report as JSON: its fields, and ``ok`` (every check passed)."""
    out = asdict(rep)
    out["ok"] = rep.ok
    return out
