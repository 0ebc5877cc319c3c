"""What ``kubesched simulate`` reports of a run: every pod (its node, or why it has none), every
node's use, the summary (with the run's Jobs and pod groups), and the table a person reads.
:func:`kubesched.sim.run.simulate.simulate` runs; this module says what happened."""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from typing import Any

from kubesched.cluster.base import NotFound
from kubesched.cluster.store import Store
from kubesched.framework.resources import CPU, MEMORY, format_quantity
from kubesched.scheduler import PodResult, Scheduler
from kubesched.sim.scenario.clock import format_seconds
from kubesched.sim.scenario.reading import Scenario
from kubesched.sim.scenario.recording import OBSERVED_NODE
from kubesched.sim.scenario.timeline import Lives


@dataclass
class SimulationResult:
    pods: list[dict[str, Any]]
    nodes: list[dict[str, Any]]
    summary: dict[str, Any]
    store: Store = field(repr=False)
    scheduler: Scheduler = field(repr=False)
    #: The scenario's PodGroups and how each fared (see :func:`pod_groups_report`); empty
    #: when it has none.
    pod_groups: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        out = {"pods": self.pods, "nodes": self.nodes, "summary": self.summary}
        if self.pod_groups:
            out["podGroups"] = self.pod_groups
        return out


def jobs_report(store: Store, done: dict[str, float]) -> list[dict[str, Any]]:
    """Each Job of the run: completions wanted, pods succeeded, and whether (and at which
    simulated second) it completed."""
    out = []
    for job in store.list("Job")[0]:
        meta = job["metadata"]
        key = f"{meta.get('namespace') or 'default'}/{meta['name']}"
        status = job.get("status") or {}
        complete = any(
            c.get("type") == "Complete" and c.get("status") == "True" for c in status.get("conditions") or ()
        )
        out.append(
            {
                "namespace": meta.get("namespace") or "default",
                "name": meta["name"],
                "completions": (job.get("spec") or {}).get("completions"),
                "succeeded": int(status.get("succeeded") or 0),
                "active": int(status.get("active") or 0),
                "complete": complete,
                "completedAt": done.get(key) if complete else None,
            }
        )
    return out


def build_report(
    scenario: Scenario,
    scheduler: Scheduler,
    store: Store,
    pending_keys: list[str],
    unknown: dict[str, PodResult],
    elapsed: float,
    sim_time: float,
    life: Lives | None = None,
) -> SimulationResult:
    pods_out: list[dict[str, Any]] = []
    phases: dict[str, int] = {"Scheduled": 0, "Unschedulable": 0, "Error": 0}
    per_profile: dict[str, dict[str, int]] = {}
    gated = {q.pod_info.key: q for _, q in scheduler.queue.pending_pods()}
    # A recorded cluster's pods say where the live cluster ran them (kubesched.io/observed-node).
    recorded = {
        f"{p['metadata'].get('namespace') or 'default'}/{p['metadata']['name']}": str(node)
        for p in [*scenario.pods, *(q for s in scenario.steps if s.scenario is not None for q in s.scenario.pods)]
        if (node := ((p["metadata"].get("annotations") or {}).get(OBSERVED_NODE)))
    }
    observed_pods = observed_same = 0
    events, _ = store.list("Event")
    preempted = {
        f"{e['involvedObject'].get('namespace')}/{e['involvedObject'].get('name')}": f"preempted and deleted: {e['message']}"
        for e in events
        if e.get("reason") == "Preempted"
    }
    for key in pending_keys:
        ns, name = key.split("/", 1)
        rec = unknown.get(key) or scheduler.results.get(key)
        if rec is None:
            q = gated.get(key)
            rec = PodResult(ns, name, q.pod_info.scheduler_name if q else "", phase="Unschedulable")
            rec.message = q.last_failure if q is not None and q.last_failure else "not attempted"
        deleted = False
        observed_node = recorded.get(key)
        try:
            live = store.get("Pod", ns, name)
            node = (live.get("spec") or {}).get("nodeName")
        except NotFound:  # deleted during the run: a preemption victim
            node = None
            deleted = True
        phase = "Scheduled" if node else (rec.phase if rec.phase in ("Unschedulable", "Error") else "Unschedulable")
        message = rec.message if not node else f"Successfully assigned {key} to {node}"
        completed = life.completed.get(key) if life is not None else None
        if completed is not None:
            node, begun, ended = completed
            deleted = False
            phase = "Completed"
            message = f"ran on {node} from {begun:g}s to {ended:g}s"
        elif deleted:
            # A victim: it ran, then preemption deleted it (its controller would recreate it,
            # pending again). Say who preempted it; or the step that deleted it.
            phase = "Unschedulable"
            removed = life.removed.get(key) if life is not None else None
            message = preempted.get(key) or removed or "deleted during the simulation"
        if observed_node is not None:
            observed_pods += 1
            observed_same += 1 if node == observed_node else 0
        phases[phase] = phases.get(phase, 0) + 1
        prof = per_profile.setdefault(rec.scheduler_name, {"Scheduled": 0, "Unschedulable": 0, "Error": 0})
        prof[phase] = prof.get(phase, 0) + 1
        pods_out.append(
            {
                "namespace": ns,
                "name": name,
                "schedulerName": rec.scheduler_name,
                "node": node,
                "phase": phase,
                "message": message,
                "deleted": deleted,
                "attempts": rec.attempts,
                "filter": rec.filter,
                "score": rec.score,
                "finalScore": rec.final_score,
                "preFilter": rec.prefilter,
                "preScore": rec.prescore,
                "postFilter": rec.postfilter,
                "reserve": rec.reserve,
                "permit": rec.permit,
                "preBind": rec.prebind,
                "bind": rec.bind,
                "extenderFilter": rec.extender_filter,
                "extenderPrioritize": rec.extender_prioritize,
                "extenderBind": rec.extender_bind,
                # Every attempt, oldest first, the last one included (same keys as above).
                "history": [*rec.history, rec.attempt()] if rec.attempts else [],
                **({"observedNode": observed_node} if observed_node is not None else {}),
            }
        )
    nodes_out: list[dict[str, Any]] = []
    for ni in scheduler.cache.nodes.values():
        if ni.node is None:
            continue
        alloc, req = ni.allocatable, ni.requested
        entry: dict[str, Any] = {
            "name": ni.name,
            "pods": len(ni.pods),
            "allocatable": ni.allocatable.to_dict(),
            "requested": ni.requested.to_dict(),
            "cpuPercent": _pct(req.milli_cpu, alloc.milli_cpu),
            "memoryPercent": _pct(req.memory, alloc.memory),
        }
        nodes_out.append(entry)
    summary = {
        "nodes": len(nodes_out),
        "pods": len(pending_keys),
        "runningBefore": len(scenario.running_pods),
        "scheduled": phases["Scheduled"],
        "unschedulable": phases["Unschedulable"],
        "errors": phases["Error"],
        "profiles": per_profile,
        "attempts": scheduler.stats.attempts,
        "seconds": round(elapsed, 3),
        # No attempt (every pod refused before one: no profile for it, say): no rate to speak of.
        "podsPerSecond": round(len(pending_keys) / elapsed, 1)
        if elapsed > 0 and scheduler.stats.attempts > 0
        else None,
        "simulatedSeconds": sim_time,
        "preempted": sorted(preempted),
    }
    if phases.get("Completed"):
        summary["completed"] = phases["Completed"]
    if observed_pods:
        # A replayed recording: how many pods the scheduler put where the live cluster had them.
        summary["observed"] = {"pods": observed_pods, "sameNode": observed_same}
    return SimulationResult(pods_out, nodes_out, summary, store, scheduler)


#: The condition kube-scheduler 1.37 writes on a PodGroup after the group's first cycles.
INITIALLY_SCHEDULED = "PodGroupInitiallyScheduled"


def pod_groups_report(store: Store, pods: list[dict[str, Any]], enabled: bool) -> list[dict[str, Any]]:
    """Each PodGroup of the run: its policy and ``minCount``, its members among the reported
    pods, how many got a node, and its status. ``placed`` once the scheduler set
    PodGroupInitiallyScheduled True, ``held`` while it is False (the message says why),
    ``waiting`` when no cycle ran for it (e.g. fewer members than ``minCount`` exist), and
    ``ignored`` when GenericWorkload is off (its pods were scheduled one by one)."""
    groups, _ = store.list("PodGroup")
    if not groups:
        return []
    members: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for pod in pods:
        try:
            live = store.get("Pod", pod["namespace"], pod["name"])
        except NotFound:
            continue
        name = ((live.get("spec") or {}).get("schedulingGroup") or {}).get("podGroupName")
        if name:
            members.setdefault((pod["namespace"], name), []).append(pod)
    out: list[dict[str, Any]] = []
    for pg in groups:
        meta = pg["metadata"]
        ns = meta.get("namespace") or "default"
        policy = (pg.get("spec") or {}).get("schedulingPolicy") or {}
        gang = policy.get("gang")
        mine = members.get((ns, meta["name"]), [])
        bound = sum(1 for p in mine if p["node"])
        cond = next(
            (c for c in (pg.get("status") or {}).get("conditions") or () if c.get("type") == INITIALLY_SCHEDULED),
            None,
        )
        if not enabled:
            status, message = "ignored", "GenericWorkload is off: the pods were scheduled one by one"
        elif cond is not None and cond.get("status") == "True":
            status, message = "placed", ""
        elif cond is not None:
            status, message = "held", str(cond.get("message") or cond.get("reason") or "")
        else:
            status = "waiting"
            message = (
                f"{len(mine)} of minCount {gang.get('minCount')} pods exist"
                if gang is not None and len(mine) < int(gang.get("minCount") or 1)
                else "no scheduling cycle ran for it"
            )
        out.append(
            {
                "namespace": ns,
                "name": meta["name"],
                "policy": "gang" if gang is not None else "basic",
                "minCount": None if gang is None else gang.get("minCount"),
                "members": len(mine),
                "bound": bound,
                "status": status,
                "message": message,
            }
        )
    return out


def group_counts(groups: list[dict[str, Any]]) -> dict[str, int]:
    """How many pod groups ended in each status (placed, held, waiting, ignored)."""
    counts = {"total": len(groups), "placed": 0, "held": 0, "waiting": 0, "ignored": 0}
    for g in groups:
        counts[g["status"]] += 1
    return counts


def _pct(used: int, total: int) -> float:
    return round(100.0 * used / total, 1) if total else 0.0


#: ``--only`` choices → the phases they keep.
ONLY_PHASES = {"unschedulable": ("Unschedulable",), "scheduled": ("Scheduled",), "errors": ("Error",)}


def only_pods(pods: list[dict[str, Any]], only: str) -> list[dict[str, Any]]:
    """The pods ``--only`` keeps: ``unschedulable``, ``scheduled`` or ``errors``."""
    phases = ONLY_PHASES[only]
    return [p for p in pods if p["phase"] in phases]


def format_table(result: SimulationResult, width: int | None = None) -> str:
    """Readable tables, what a person looks for first on top: the summary, the pods that did not
    get a node and why, then every pod with its node or reason, then node utilisation."""
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    console = Console(width=width or 160, record=True, file=io.StringIO(), force_terminal=False, color_system=None)
    s = result.summary
    summary = Table(title="Summary", show_header=False)
    summary.add_column("what")
    summary.add_column("value", justify="right")
    for label, value in (
        ("nodes", s["nodes"]),
        ("pods to schedule", s["pods"]),
        ("scheduled", s["scheduled"]),
        ("unschedulable", s["unschedulable"]),
        ("errors", s["errors"]),
        *((("completed", s["completed"]),) if s.get("completed") else ()),
        ("attempts", s["attempts"]),
        ("wall seconds", s["seconds"]),
        ("pods/s", s["podsPerSecond"] if s["podsPerSecond"] is not None else "- (no attempt)"),
    ):
        summary.add_row(label, str(value))
    if s.get("preempted"):
        summary.add_row("preempted (deleted)", escape(", ".join(s["preempted"])))
    for job in s.get("jobs") or ():
        state = (
            f"complete at {format_seconds(job['completedAt'])}"
            if job["complete"] and job["completedAt"] is not None
            else ("complete" if job["complete"] else f"{job['active']} active")
        )
        wanted = "-" if job["completions"] is None else job["completions"]
        summary.add_row(
            escape(f"job {job['namespace']}/{job['name']}"), f"{job['succeeded']}/{wanted} succeeded, {state}"
        )
    if s.get("observed"):
        summary.add_row("on the observed node", f"{s['observed']['sameNode']} of {s['observed']['pods']} recorded pods")
    for problem in s.get("stepProblems") or ():
        summary.add_row(
            escape(f"step {problem['step']} at {problem['at']:g}s"),
            escape(f"{problem['action']} {problem['object']} refused: {problem['reason']}"),
        )
    if s.get("stopped"):
        summary.add_row("stopped", escape(s["stopped"]))
    for prof, counts in s["profiles"].items():
        summary.add_row(f"profile {prof}", ", ".join(f"{k} {v}" for k, v in counts.items()))
    if s.get("podGroups"):
        g = s["podGroups"]
        summary.add_row(
            "pod groups",
            ", ".join(f"{k} {g[k]}" for k in ("total", "placed", "held", "waiting", "ignored") if g[k] or k == "total"),
        )
    console.print(summary)
    if result.pod_groups:
        groups = Table(title="Pod groups")
        for col, justify in (
            ("group", "left"),
            ("policy", "left"),
            ("minCount", "right"),
            ("members", "right"),
            ("bound", "right"),
            ("status", "left"),
            ("message", "left"),
        ):
            groups.add_column(col, justify=justify, overflow="fold")  # type: ignore[arg-type]
        for g in result.pod_groups:
            groups.add_row(
                escape(f"{g['namespace']}/{g['name']}"),
                g["policy"],
                "-" if g["minCount"] is None else str(g["minCount"]),
                str(g["members"]),
                str(g["bound"]),
                g["status"],
                escape(g["message"]),
            )
        console.print(groups)
    failed = [p for p in result.pods if p["phase"] not in ("Scheduled", "Completed")]
    if failed:
        why = Table(title="Not scheduled", show_lines=False)
        for col in ("pod", "profile", "phase", "reason"):
            why.add_column(col, overflow="fold")
        for p in failed:
            why.add_row(
                escape(f"{p['namespace']}/{p['name']}"),
                escape(p["schedulerName"]),
                escape(p["phase"]),
                escape(p["message"]),
            )
        console.print(why)
    pods = Table(title="Pods", show_lines=False)
    for col in ("pod", "profile", "node", "reason"):
        pods.add_column(col, overflow="fold")
    for p in result.pods:
        # Names and messages are data, not markup: "[example.com/gate]" must print as is.
        pods.add_row(
            escape(f"{p['namespace']}/{p['name']}"),
            escape(p["schedulerName"]),
            escape(p["node"] or "-"),
            "" if p["phase"] == "Scheduled" else escape(f"{p['phase']}: {p['message']}"),
        )
    console.print(pods)
    nodes = Table(title="Nodes")
    for col, justify in (
        ("node", "left"),
        ("pods", "right"),
        ("cpu requested", "right"),
        ("cpu %", "right"),
        ("memory requested", "right"),
        ("memory %", "right"),
    ):
        nodes.add_column(col, justify=justify)  # type: ignore[arg-type]
    for n in result.nodes:
        nodes.add_row(
            escape(n["name"]),
            str(n["pods"]),
            f"{format_quantity(CPU, n['requested'].get(CPU, 0))}/{format_quantity(CPU, n['allocatable'].get(CPU, 0))}",
            f"{n['cpuPercent']:.1f}",
            f"{format_quantity(MEMORY, n['requested'].get(MEMORY, 0))}/{format_quantity(MEMORY, n['allocatable'].get(MEMORY, 0))}",
            f"{n['memoryPercent']:.1f}",
        )
    console.print(nodes)
    if s.get("timeline"):
        timeline = Table(title="Timeline")
        for col, justify in (
            ("time s", "right"),
            ("event", "left"),
            ("running", "right"),
            ("pending", "right"),
            ("cpu %", "right"),
            ("memory %", "right"),
        ):
            timeline.add_column(col, justify=justify)  # type: ignore[arg-type]
        for m in s["timeline"]:
            timeline.add_row(
                f"{m['time']:g}",
                escape(m["event"]),
                str(m["running"]),
                str(m["pending"]),
                f"{m['cpuPercent']:.1f}",
                f"{m['memoryPercent']:.1f}",
            )
        console.print(timeline)
    return console.export_text()


__all__ = [
    "SimulationResult",
    "build_report",
    "format_table",
    "group_counts",
    "jobs_report",
    "only_pods",
    "pod_groups_report",
]
