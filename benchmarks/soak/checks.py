"""The verdicts of a finished soak (:func:`judge`), from the end state the server shows and what
the run saw on the way: none lost, all bound, bound once, Scheduled events, no false failure;
and of how the processes behaved: /healthz fast in a phase (:func:`health_during`), no
traceback in any log (:func:`no_tracebacks`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from benchmarks.soak.report import Check, Report
from kubesched.cluster.kube.events import EVENT_RETRY_LOG

Obj = dict[str, Any]
#: A pod the leader bound this many seconds before it was killed may lack its Scheduled event.
EVENT_GRACE = 10.0
#: The slowest /healthz answer a replica may give during a burst or a relist (a liveness probe
#: with a tight timeout, as operators set them, must never miss one).
HEALTH_LIMIT_MS = 250.0
#: What Python writes first when it prints an exception with its stack.
TRACEBACK = "Traceback (most recent call last)"


@dataclass(frozen=True)
class Probe:
    """One /healthz answer: when it was asked (monotonic seconds), of which replica, how long it
    took and whether it was a 200."""

    at: float
    replica: str
    ms: float
    ok: bool


def health_during(
    name: str, probes: Iterable[Probe], start: float, end: float | None, limit_ms: float = HEALTH_LIMIT_MS
) -> Check:
    """Every probe asked in ``[start, end]`` answered 200 within ``limit_ms``, and there was at
    least one (``end`` None: the phase never ended, so it fails)."""
    if end is None:
        return Check(name, False, "the phase never ended: health not measured")
    inside = [p for p in probes if start <= p.at <= end]
    if not inside:
        return Check(name, False, "no probe answered in this phase")
    slowest = max(inside, key=lambda p: p.ms)
    bad = [p for p in inside if not p.ok or p.ms > limit_ms]
    detail = f"{len(inside)} probes over {end - start:.1f} s, slowest {slowest.ms:.0f} ms ({slowest.replica})"
    if bad:
        worst = max(bad, key=lambda p: p.ms)
        detail += f"; {len(bad)} over {limit_ms:.0f} ms or failed, e.g. {worst.replica} {worst.ms:.0f} ms" + (
            "" if worst.ok else " (not 200)"
        )
    return Check(name, not bad, detail)


def no_tracebacks(logs: Mapping[str, str]) -> Check:
    """No process's log (name → text) holds a traceback; the detail names each process that
    has some, how many, and the exception line of its first."""
    found = []
    for name, text in sorted(logs.items()):
        count = text.count(TRACEBACK)
        if not count:
            continue
        after = text[text.index(TRACEBACK) :].splitlines()[1:]
        # The exception itself is the first line after the stack that is not indented.
        last = next((line for line in after if line and not line.startswith((" ", "\t"))), "?")
        found.append(f"{name}: {count} (first: {last[:160]})")
    if not found:
        return Check("no traceback", True, f"none in the logs of {len(logs)} process(es)")
    return Check("no traceback", False, "; ".join(found))


def _parse_time(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def events_retried(log: str) -> set[str]:
    """The pods whose events a replica's ``log`` says it was to write again (the event names
    ``namespace/pod.suffix``, as the recorder names them)."""
    pods = set()
    for line in log.splitlines():
        _, found, rest = line.partition(EVENT_RETRY_LOG + " ")
        if found:
            event = rest.split(" ", 1)[0].rsplit("/", 1)[-1]
            pods.add(event.rsplit(".", 1)[0])
    return pods


def judge(
    rep: Report,
    *,
    expected: int,
    created: set[str],
    pods: dict[str, Obj],
    per_pod: dict[str, Obj],
    events: list[Obj],
    first_seen: dict[str, str],
    rebinds: list[tuple[str, str, str]],
    killed_wall: float | None,
    takeover_wall: float | None = None,
    killed_log: str = "",
) -> list[Check]:
    """The checks of a finished soak, from what the server shows at the end: ``pods`` (name →
    pod), ``per_pod`` (``/kubesched/stats`` pods), ``events`` (events.k8s.io/v1 items); and what
    the run saw: the pods ``created``, the node ``first_seen`` for each pod, the node changes
    (``rebinds``) and when the leader was killed (wall clock), with what it had logged
    (``killed_log``). Fills the binding figures of ``rep``."""
    node_of = {n: (p.get("spec") or {}).get("nodeName") for n, p in pods.items()}
    bound = {n for n, node in node_of.items() if node}
    lost = sorted(created - set(pods))
    unbound = sorted(set(pods) - bound)
    rep.bound = len(bound)
    binds = {k.split("/", 1)[1]: v.get("binds", 0) for k, v in per_pod.items() if k.startswith("default/soak-")}
    rep.binds = sum(binds.values())
    rep.binds_per_pod_max = max(binds.values(), default=0)
    rep.bind_conflicts = sum(v.get("conflicts", 0) for k, v in per_pod.items() if k.startswith("default/soak-"))
    twice = sorted(n for n, c in binds.items() if c > 1)
    not_counted = sorted(n for n in bound if binds.get(n, 0) != 1)
    moved = sorted({n for n, _, _ in rebinds} | {n for n in bound if first_seen.get(n, node_of[n]) != node_of[n]})

    scheduled: dict[str, list[Obj]] = {}
    failed: dict[str, list[Obj]] = {}
    for ev in events:
        name = (ev.get("regarding") or {}).get("name", "")
        if not name.startswith("soak-"):
            continue
        if ev.get("reason") == "Scheduled":
            scheduled.setdefault(name, []).append(ev)
        elif ev.get("reason") == "FailedScheduling":
            failed.setdefault(name, []).append(ev)

    def count(ev: Obj) -> int:
        return int((ev.get("series") or {}).get("count") or ev.get("deprecatedCount") or 1)

    retried = events_retried(killed_log)
    bad_scheduled = []
    missing, excused = [], []
    for name in sorted(bound):
        evs = scheduled.get(name, [])
        total = sum(count(e) for e in evs)
        if total == 0:
            at = (per_pod.get(f"default/{name}") or {}).get("firstBoundAt")
            # Events are written after the binding: those of the last pods the killed
            # leader bound may die with it, as they would with kube-scheduler. Until another
            # replica took the lease, a binding the server committed was the killed leader's
            # (a request it sent before dying, held up by a stall).
            # Or earlier, when the killed leader's log shows the pod's event still being
            # retried (a write that met the faults waits up to 10 s between tries).
            until = max(killed_wall or 0.0, takeover_wall or 0.0)
            since = -float("inf") if name in retried else (killed_wall or 0.0) - EVENT_GRACE
            if killed_wall is not None and at is not None and since <= at <= until:
                excused.append(name)
            else:
                missing.append(name)
        elif total > 1:
            bad_scheduled.append(f"{name}: {total} Scheduled events")
        elif f" to {node_of[name]}" not in (evs[0].get("note") or ""):
            bad_scheduled.append(f"{name}: Scheduled names another node than {node_of[name]}")
    bad_scheduled += [f"{n}: Scheduled but not bound" for n in sorted(set(scheduled) - bound)]
    rep.scheduled_events_missing = len(missing)

    false_failures = []
    for name in sorted(bound & set(failed)):
        at = (per_pod.get(f"default/{name}") or {}).get("firstBoundAt")
        if at is None:
            continue
        for ev in failed[name]:
            times = [
                _parse_time(ev.get("eventTime")),
                _parse_time((ev.get("series") or {}).get("lastObservedTime")),
            ]
            latest = max((t for t in times if t is not None), default=None)
            if latest is not None and latest >= at:
                false_failures.append(f"{name}: {latest - at:+.3f}s after bind: {(ev.get('note') or '')[:120]}")

    def shown(names: list[str]) -> str:
        return ", ".join(names[:5]) + (f" (+{len(names) - 5})" if len(names) > 5 else "")

    checks = [
        Check(
            "none lost",
            not lost and len(created) == expected,
            f"{len(pods)}/{len(created)} created pods exist"
            + (f"; {expected - len(created)} never created" if len(created) < expected else "")
            + (f"; lost: {shown(lost)}" if lost else ""),
        ),
        Check(
            "all bound",
            not unbound and bool(pods),
            f"{len(bound)}/{len(pods)} bound" + (f"; unbound: {shown(unbound)}" if unbound else ""),
        ),
        Check(
            "bound once",
            not twice and not not_counted and not moved,
            f"{rep.binds} bindings for {len(bound)} bound pods"
            + (f"; bound twice: {shown(twice)}" if twice else "")
            + (f"; binding not counted once: {shown(not_counted)}" if not_counted else "")
            + (f"; node changed: {shown(moved)}" if moved else ""),
        ),
        Check(
            "no duplicate Scheduled",
            not bad_scheduled,
            "no pod has two, each names the pod's node, none on an unbound pod"
            if not bad_scheduled
            else f"{len(bad_scheduled)} pod(s): {shown(bad_scheduled)}",
        ),
        Check(
            "Scheduled for each bound pod",
            not missing,
            f"{len(bound) - len(missing) - len(excused)}/{len(bound)} have one"
            + (f"; {len(excused)} bound by the leader within {EVENT_GRACE:.0f} s of its kill" if excused else "")
            + (f"; missing: {shown([_bound_when(n, per_pod, killed_wall) for n in missing])}" if missing else ""),
        ),
        Check(
            "no false failure",
            not false_failures,
            f"{sum(len(v) for k, v in failed.items() if k in bound)} FailedScheduling event(s) on bound pods, "
            f"{len(false_failures)} after the bind" + (f": {shown(false_failures)}" if false_failures else ""),
        ),
    ]
    return checks


def _bound_when(name: str, per_pod: Mapping[str, Obj], killed_wall: float | None) -> str:
    """A pod named with when the server committed its binding, against the leader's kill: what
    tells a lost event of the killed leader from one never sent."""
    at = (per_pod.get(f"default/{name}") or {}).get("firstBoundAt")
    if at is None or killed_wall is None:
        return name if at is not None else f"{name} (no binding time)"
    delta = at - killed_wall
    return f"{name} (bound {abs(delta):.1f} s {'before' if delta < 0 else 'after'} the kill)"
