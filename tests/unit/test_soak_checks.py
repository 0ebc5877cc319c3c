"""The soak benchmark's verdicts (benchmarks.soak.judge) on hand-made end states: each check
passes on a clean run and fails on the defect it is there to catch."""

from __future__ import annotations

from typing import Any

import pytest

from benchmarks.soak import EVENT_GRACE, Report, judge
from benchmarks.soak.checks import HEALTH_LIMIT_MS, Probe, events_retried, health_during, no_tracebacks

Obj = dict[str, Any]
BOUND_AT = 1_700_000_000.0


def pod(name: str, node: str | None) -> Obj:
    return {"metadata": {"name": name, "namespace": "default"}, "spec": {"nodeName": node} if node else {}}


def event(reason: str, name: str, note: str, at: float, count: int | None = None) -> Obj:
    ev: Obj = {
        "reason": reason,
        "regarding": {"kind": "Pod", "namespace": "default", "name": name},
        "note": note,
        "eventTime": f"{_rfc3339(at)}",
    }
    if count is not None:
        ev["series"] = {"count": count, "lastObservedTime": _rfc3339(at + 1)}
    return ev


def _rfc3339(t: float) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def scheduled(name: str, node: str, at: float = BOUND_AT + 0.1) -> Obj:
    return event("Scheduled", name, f"Successfully assigned default/{name} to {node}", at)


def clean() -> dict[str, Any]:
    """Two pods, each bound once to its node, each with one Scheduled event."""
    return {
        "expected": 2,
        "created": {"soak-0", "soak-1"},
        "pods": {"soak-0": pod("soak-0", "n1"), "soak-1": pod("soak-1", "n2")},
        "per_pod": {
            "default/soak-0": {"binds": 1, "conflicts": 0, "firstBoundAt": BOUND_AT},
            "default/soak-1": {"binds": 1, "conflicts": 0, "firstBoundAt": BOUND_AT},
        },
        "events": [scheduled("soak-0", "n1"), scheduled("soak-1", "n2")],
        "first_seen": {"soak-0": "n1", "soak-1": "n2"},
        "rebinds": [],
        "killed_wall": None,
    }


def verdicts(**changes: Any) -> dict[str, bool]:
    state = clean()
    state.update(changes)
    return {c.name: c.ok for c in judge(Report(2, 2, "default", 1), **state)}


def failing(**changes: Any) -> set[str]:
    return {name for name, ok in verdicts(**changes).items() if not ok}


def test_a_clean_end_state_passes_every_check() -> None:
    assert failing() == set()


def _events_with(*extra: Obj, drop: str | None = None) -> list[Obj]:
    base = [e for e in clean()["events"] if e["regarding"]["name"] != drop]
    return [*base, *extra]


@pytest.mark.parametrize(
    ("changes", "want"),
    [
        ({"pods": {"soak-0": pod("soak-0", "n1")}, "events": _events_with(drop="soak-1")}, {"none lost"}),
        (
            {
                "pods": {"soak-0": pod("soak-0", "n1"), "soak-1": pod("soak-1", None)},
                "events": _events_with(drop="soak-1"),
            },
            {"all bound"},
        ),
        (
            {"per_pod": {**clean()["per_pod"], "default/soak-1": {"binds": 2, "firstBoundAt": BOUND_AT}}},
            {"bound once"},
        ),
        ({"rebinds": [("soak-1", "n2", "n3")]}, {"bound once"}),
        ({"first_seen": {"soak-0": "n1", "soak-1": "n9"}}, {"bound once"}),
        ({"events": _events_with(scheduled("soak-1", "n2"))}, {"no duplicate Scheduled"}),
        (
            {
                "events": _events_with(
                    event("Scheduled", "soak-1", "Successfully assigned default/soak-1 to n2", BOUND_AT, count=2),
                    drop="soak-1",
                )
            },
            {"no duplicate Scheduled"},
        ),
        ({"events": _events_with(scheduled("soak-1", "n7"), drop="soak-1")}, {"no duplicate Scheduled"}),
        ({"events": _events_with(drop="soak-1")}, {"Scheduled for each bound pod"}),
        (
            {"events": _events_with(event("FailedScheduling", "soak-1", "binding timed out", BOUND_AT + 0.5))},
            {"no false failure"},
        ),
    ],
    ids=[
        "lost",
        "unbound",
        "bound-twice",
        "node-changed-on-watch",
        "node-changed-at-end",
        "two-scheduled-events",
        "scheduled-series-of-two",
        "scheduled-names-another-node",
        "scheduled-missing",
        "failure-after-bind",
    ],
)
def test_each_defect_fails_its_check(changes: dict[str, Any], want: set[str]) -> None:
    assert failing(**changes) == want


def test_a_failure_before_the_bind_is_no_false_failure() -> None:
    genuine = event("FailedScheduling", "soak-1", "0/2 nodes are available", BOUND_AT - 2.0)
    assert failing(events=_events_with(genuine)) == set()


def test_a_missing_scheduled_event_is_excused_only_just_before_the_kill() -> None:
    events = _events_with(drop="soak-1")
    assert failing(events=events, killed_wall=BOUND_AT + 1.0) == set()
    assert failing(events=events, killed_wall=BOUND_AT + EVENT_GRACE + 5) == {"Scheduled for each bound pod"}
    assert failing(events=events, killed_wall=BOUND_AT - 1.0) == {"Scheduled for each bound pod"}
    # Committed after the kill but before anyone else held the lease: the killed leader's.
    assert failing(events=events, killed_wall=BOUND_AT - 1.0, takeover_wall=BOUND_AT + 1.0) == set()
    assert failing(events=events, killed_wall=BOUND_AT - 3.0, takeover_wall=BOUND_AT - 1.0) == {
        "Scheduled for each bound pod"
    }


def test_a_missing_scheduled_event_is_named_with_its_binding_time_against_the_kill() -> None:
    state = clean()
    state.update(events=_events_with(drop="soak-1"), killed_wall=BOUND_AT + EVENT_GRACE + 12.5)
    (check,) = [c for c in judge(Report(2, 2, "default", 1), **state) if c.name == "Scheduled for each bound pod"]
    assert not check.ok
    assert "soak-1 (bound 22.5 s before the kill)" in check.detail


# --- /healthz in a phase, tracebacks in the logs ------------------------------------------------


def probe(at: float, ms: float, ok: bool = True, replica: str = "soak-a1") -> Probe:
    return Probe(at, replica, ms, ok)


@pytest.mark.parametrize(
    ("probes", "end", "ok"),
    [
        ([probe(1, 12), probe(2, 249)], 10.0, True),
        ([probe(1, 12), probe(2, 251)], 10.0, False),
        ([probe(1, 12), probe(2, 30, ok=False)], 10.0, False),
        ([probe(1, 12), probe(11, 900)], 10.0, True),
        ([probe(11, 12)], 10.0, False),
        ([probe(1, 12)], None, False),
    ],
    ids=["fast", "one-slow", "one-not-200", "slow-after-the-phase", "none-in-the-phase", "phase-never-ended"],
)
def test_health_during_a_phase(probes: list[Probe], end: float | None, ok: bool) -> None:
    check = health_during("health in the burst", probes, 0.0, end)
    assert (check.name, check.ok) == ("health in the burst", ok)


def test_a_slow_answer_is_named_with_its_replica() -> None:
    check = health_during("health in a relist", [probe(1, 20), probe(2, 1644, replica="soak-b2")], 0.0, 5.0)
    assert not check.ok
    assert f"1 over {HEALTH_LIMIT_MS:.0f} ms or failed, e.g. soak-b2 1644 ms" in check.detail


LOG = """INFO kubesched.scheduler: informers synced
ERROR kubesched.scheduler: could not report the failure of pod default/soak-7
Traceback (most recent call last):
  File "kubesched/scheduler/failures.py", line 90, in report_failure
    await self.cluster.update_pod_condition(pod, cond)
kubesched.cluster.base.ClusterError: Internal error occurred
INFO kubesched.scheduler: done
"""


def test_no_traceback_passes_clean_logs() -> None:
    check = no_tracebacks({"apiserver": "INFO serving\n", "soak-a1": "INFO synced\n"})
    assert check.ok and check.detail == "none in the logs of 2 process(es)"


def test_a_traceback_in_any_log_fails_naming_the_process_and_the_exception() -> None:
    check = no_tracebacks({"apiserver": "INFO serving\n", "soak-a1": LOG + LOG})
    assert not check.ok
    assert check.detail == "soak-a1: 2 (first: kubesched.cluster.base.ClusterError: Internal error occurred)"


def test_a_missing_scheduled_event_still_retried_by_the_killed_leader_is_excused() -> None:
    """An event write that met the faults may trail its binding by more than the window; the
    killed leader's log names it, and only that pod is excused."""
    events = _events_with(drop="soak-1")
    late = BOUND_AT + EVENT_GRACE + 30
    assert failing(events=events, killed_wall=late) == {"Scheduled for each bound pod"}
    other = (
        "INFO kubesched.cluster.kube.events: could not write the event default/soak-0.1a2b (503); trying again in 8.0s"
    )
    assert failing(events=events, killed_wall=late, killed_log=other) == {"Scheduled for each bound pod"}
    own = other.replace("soak-0.1a2b", "soak-1.187f3c")
    assert failing(events=events, killed_wall=late, killed_log=own) == set()
    # Bound after the takeover: another replica's binding, never the killed leader's.
    assert failing(events=events, killed_wall=BOUND_AT - 5, takeover_wall=BOUND_AT - 1, killed_log=own) == {
        "Scheduled for each bound pod"
    }


async def test_the_recorder_logs_the_event_it_will_write_again(caplog: pytest.LogCaptureFixture) -> None:
    """What :func:`events_retried` reads is what the recorder writes when a write fails with a
    5xx (the fault is the server's answer; a transport that gives it once stands in for it)."""
    from kubesched.cluster.base import ClusterError
    from kubesched.cluster.kube.events import EventRecorder

    class Flaky:
        failed = False

        async def request(self, method: str, path: str, body: Any = None, content_type: str = "") -> Any:
            if path.endswith("/events") and not self.failed:
                self.failed = True
                raise ClusterError("etcdserver: request timed out", 503)
            return body

    transport = Flaky()
    recorder = EventRecorder(lambda: transport, "host")  # type: ignore[arg-type,return-value]
    recorder.retry_interval = 0.001
    pod = {"kind": "Pod", "metadata": {"name": "soak-7.x", "namespace": "default", "uid": "u"}}
    with caplog.at_level("INFO"):
        await recorder.record(pod, "Normal", "Scheduled", "Binding", "assigned", "default-scheduler")
    assert transport.failed
    assert events_retried(caplog.text) == {"soak-7.x"}
