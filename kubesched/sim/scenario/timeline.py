"""Scenarios in time: steps that create, patch or delete objects at a simulated time, and pods
that run for a while and then end.

A scenario may hold documents of ``kind: Steps`` (``apiVersion: kubesched.io/v1``)::

    kind: Steps
    steps:
    - at: 30s                      # simulated time (a Go duration, or seconds)
      create: [ ...objects... ]    # any scenario objects; pods arrive pending
      delete: [ {kind: Node, name: n1} ]
      patch: [ {kind: Node, name: n2, patch: {spec: {unschedulable: true}}} ]   # merge patch

A pod annotated ``kubesched.io/lifetime: 90s`` finishes that long after it is bound: a Job's pod
ends ``Succeeded`` (and its Job counts it, see :mod:`kubesched.sim.controllers.job`), any other
pod is deleted (its controller, if any, makes a new one, which is scheduled and runs its own
lifetime). The annotation on a workload's pod template reaches every pod made from it.
``simulate`` runs the scenario, then each step in time order (a step without ``at`` comes right
after the one before), letting the scheduler settle after each, and reports a timeline: per
moment, what happened, pods placed and pending, and cluster utilisation. ``sim serve`` runs the
same events on a clock that follows the wall clock (:mod:`kubesched.sim.run.paced`).

Both stop at a horizon (:func:`default_horizon` unless one is given): workloads that recreate
pods with a lifetime never run out of events.
"""

from __future__ import annotations

import heapq
import itertools
from dataclasses import dataclass
from typing import Any

from kubesched.cluster.base import NotFound
from kubesched.cluster.termination import delete_pod, terminating
from kubesched.objects import Obj
from kubesched.sim.scenario.reading import object_problem
from kubesched.sim.scenario.steps import LIFETIME, Step, StepProblem, seconds

#: Workloads that replace a pod that ends: with a lifetime on their template, events never stop.
RECREATING = ("ReplicaSet", "Deployment", "StatefulSet", "DaemonSet", "ReplicationController")


class Agenda:
    """What happens when: steps, and the end of pods that have a lifetime."""

    def __init__(self, steps: list[Step]) -> None:
        self._seq = itertools.count()
        self._heap: list[tuple[float, int, str, Any]] = []
        for step in steps:
            heapq.heappush(self._heap, (step.at, next(self._seq), "step", step))

    def pod_ends(self, at: float, namespace: str, name: str, uid: str | None = None) -> None:
        heapq.heappush(self._heap, (at, next(self._seq), "end", (namespace, name, uid)))

    def pod_terminated(self, at: float, namespace: str, name: str, uid: str | None = None) -> None:
        """A pod deleted gracefully is stopped by its kubelet at ``at`` (its grace period is up)."""
        heapq.heappush(self._heap, (at, next(self._seq), "terminated", (namespace, name, uid)))

    def next_kind(self) -> str | None:
        """What the next event is: ``"step"``, ``"end"`` (a lifetime) or ``"terminated"``."""
        return self._heap[0][2] if self._heap else None

    def __len__(self) -> int:
        return len(self._heap)

    def next_time(self) -> float | None:
        return self._heap[0][0] if self._heap else None

    def pop(self) -> tuple[float, str, Any]:
        at, _, what, item = heapq.heappop(self._heap)
        return at, what, item

    def __bool__(self) -> bool:
        return bool(self._heap)


class Lives:
    """The simulation's clock-driven side: when pods start (are bound) and end (their lifetime
    is up, or a step deletes them), the steps' patches and deletions, and the moments of the
    timeline report."""

    def __init__(self, store: Any, agenda: Agenda, clock: Any) -> None:
        self.store = store
        self.agenda = agenda
        self.clock = clock
        self.start: dict[str, float] = {}
        #: pod key -> (node, started, ended): pods that ran their lifetime.
        self.completed: dict[str, tuple[str, float, float]] = {}
        #: pod key -> why a step removed it.
        self.removed: dict[str, str] = {}
        self.any = False
        #: When each pod deleted gracefully was first marked, by uid.
        self._marked: dict[str, float] = {}
        #: Uids of the pods whose lifetime runs (each starts once).
        self._running: set[str] = set()
        #: Called whenever a pod's end is put on the agenda (``sim serve`` wakes its clock).
        self.on_change: Any = None
        #: The feature gates a patched object is checked under (1.37's defaults when None).
        self.gates: Any = None

    def started(self, pod: Obj) -> None:
        """A pod placed at the start (or by a step) on a node: its lifetime runs from now."""
        meta = pod["metadata"]
        uid = meta.get("uid")
        if uid:
            if uid in self._running:
                return
            self._running.add(uid)
        if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
            return  # finished already: nothing runs
        key = f"{meta.get('namespace') or 'default'}/{meta['name']}"
        self.start[key] = self.clock()
        lifetime = (meta.get("annotations") or {}).get(LIFETIME)
        if lifetime is not None:
            self.any = True
            self.agenda.pod_ends(
                self.clock() + seconds(lifetime, LIFETIME), meta.get("namespace") or "default", meta["name"], uid
            )
            if self.on_change is not None:
                self.on_change()

    def on_write(self, etype: str, kind: str, obj: Obj, old: Obj | None) -> None:
        if kind != "Pod" or not (obj.get("spec") or {}).get("nodeName"):
            return
        if etype == "MODIFIED" and old is not None:
            period = terminating(obj)
            if period is not None and period != terminating(old):
                # Deleted gracefully (or its period shortened, which counts from the same moment,
                # as kube-apiserver moves deletionTimestamp): its kubelet stops it when it is up.
                meta = obj["metadata"]
                marked = self._marked.setdefault(meta.get("uid") or "", self.clock())
                self.agenda.pod_terminated(
                    max(self.clock(), marked + period),
                    meta.get("namespace") or "default",
                    meta["name"],
                    meta.get("uid"),
                )
                if self.on_change is not None:
                    self.on_change()
                return
        if etype == "ADDED" or (
            etype == "MODIFIED" and old is not None and not (old.get("spec") or {}).get("nodeName")
        ):
            self.started(obj)
        elif etype == "DELETED":
            uid = (obj.get("metadata") or {}).get("uid") or ""
            self._running.discard(uid)
            self._marked.pop(uid, None)

    def happen(self, what: str, item: Any) -> str:
        """An event of the agenda other than a step (:meth:`end`, :meth:`terminated`): what happened."""
        return self.terminated(item) if what == "terminated" else self.end(item)

    def terminated(self, ref: tuple[str, str, str | None]) -> str:
        """A pod deleted gracefully has had its grace period: its kubelet stopped it, and it goes."""
        ns, name, uid = ref
        key = f"{ns}/{name}"
        try:
            pod = self.store.get("Pod", ns, name)
        except NotFound:
            return f"{key} would have terminated: gone already"
        meta = pod["metadata"]
        if (uid and meta.get("uid") != uid) or terminating(pod) is None:
            return f"{key} would have terminated: replaced already"
        self.store.delete("Pod", ns, name)
        node = (pod.get("spec") or {}).get("nodeName") or ""
        return f"{key} terminated on {node} after its grace period ({meta.get('deletionGracePeriodSeconds')}s)"

    def end(self, ref: tuple[str, str, str | None]) -> str:
        """A pod's lifetime is up: a Job's pod ends Succeeded, any other pod is deleted."""
        ns, name, uid = ref
        key = f"{ns}/{name}"
        try:
            pod = self.store.get("Pod", ns, name)
        except NotFound:  # gone already (preempted, deleted by a step)
            return f"{key} would have ended: gone already"
        if uid and pod["metadata"].get("uid") != uid:
            return f"{key} would have ended: replaced already"
        node = (pod.get("spec") or {}).get("nodeName") or ""
        if job_owned(pod):
            self.store.mutate("Pod", ns, name, _succeeded)
        else:
            self.store.delete("Pod", ns, name)
        self.completed[key] = (node, self.start.get(key, 0.0), self.clock())
        return f"{key} ended on {node}"

    def apply_step(self, step: Step) -> list[StepProblem]:
        """A step's patches and deletions (its objects to create are the driver's: it admits them).
        A patch is applied only when the object it makes passes the scenario loader's checks of a
        created object of its kind (a node's ``cpu: lots`` does not reach the scheduler); the
        patches refused are returned."""
        from kubesched.cluster.store import json_copy
        from kubesched.sim.apiserver.patching import merge_patch

        problems: list[StepProblem] = []
        for ref, patch in step.patch:
            ns = ref.namespace or ("default" if ref.kind == "Pod" else None)
            try:
                current = self.store.get(ref.kind, ns, ref.name)
            except NotFound:  # nothing of that name: the step says so in the report
                continue
            patched = merge_patch(json_copy(current), patch)
            why = object_problem(patched, self.store, self.gates)
            if why is not None:
                name = f"{ns}/{ref.name}" if ns else ref.name
                problems.append(StepProblem(step.index + 1, self.clock(), "patch", f"{ref.kind} {name}", why))
                continue
            self.store.update(ref.kind, patched)
        for ref in step.delete:
            ns = ref.namespace or ("default" if ref.kind == "Pod" else None)
            try:
                if ref.kind == "Pod":
                    delete_pod(self.store, ns, ref.name)
                else:
                    self.store.delete(ref.kind, ns, ref.name)
            except NotFound:
                continue
            if ref.kind == "Pod":
                self.removed[f"{ns}/{ref.name}"] = f"deleted at {self.clock():g}s by step {step.index + 1}"
        return problems

    def moment(self, event: str, keys: list[str], scheduler: Any) -> Obj:
        """One line of the timeline: now, what happened, pods placed and pending, utilisation."""
        placed = pending = 0
        for key in keys:
            ns, name = key.split("/", 1)
            try:
                pod = self.store.get("Pod", ns, name)
            except NotFound:  # ended or deleted
                continue
            if (pod.get("spec") or {}).get("nodeName"):
                placed += 1
            else:
                pending += 1
        cpu_alloc = cpu_req = mem_alloc = mem_req = 0
        for ni in scheduler.cache.nodes.values():
            if ni.node is None:
                continue
            cpu_alloc += ni.allocatable.milli_cpu
            cpu_req += ni.requested.milli_cpu
            mem_alloc += ni.allocatable.memory
            mem_req += ni.requested.memory
        return {
            "time": self.clock(),
            "event": event,
            "running": placed,
            "pending": pending,
            "cpuPercent": round(100.0 * cpu_req / cpu_alloc, 1) if cpu_alloc else 0.0,
            "memoryPercent": round(100.0 * mem_req / mem_alloc, 1) if mem_alloc else 0.0,
        }


def job_owned(pod: Obj) -> bool:
    """Whether a Job controls the pod (its pods end Succeeded rather than going)."""
    refs = (pod.get("metadata") or {}).get("ownerReferences") or ()
    return any(r.get("controller") and r.get("kind") == "Job" for r in refs)


def _succeeded(pod: Obj) -> None:
    """What the kubelet reports of a pod whose containers exited 0 (restartPolicy Never/OnFailure)."""
    status = pod.setdefault("status", {})
    status["phase"] = "Succeeded"
    conditions = [c for c in status.get("conditions") or () if c.get("type") not in ("Ready", "ContainersReady")]
    for kind in ("Ready", "ContainersReady"):
        conditions.append({"type": kind, "status": "False", "reason": "PodCompleted"})
    status["conditions"] = conditions


def create_or_replace(store: Any, kind: str, obj: Obj) -> None:
    """Create ``obj``, or replace the object of that name (keeping its uid)."""
    meta = obj["metadata"]
    try:
        current = store.get(kind, meta.get("namespace"), meta["name"])
    except NotFound:
        store.create(kind, obj)
        return
    store.update(kind, {**obj, "metadata": {**meta, "uid": current["metadata"].get("uid")}})


def _lifetime(obj: Obj, where: str) -> float | None:
    raw = ((obj.get("metadata") or {}).get("annotations") or {}).get(LIFETIME)
    return None if raw is None else seconds(raw, where)


def _template_lifetime(obj: Obj) -> float | None:
    template = (obj.get("spec") or {}).get("template") or {}
    name = (obj.get("metadata") or {}).get("name", "")
    return _lifetime(template, f"{obj.get('kind')} {name}: spec.template.metadata.annotations[{LIFETIME}]")


@dataclass
class Horizon:
    """Where a run stops: ``at`` simulated seconds, and how that was decided (for the report)."""

    at: float
    why: str
    #: Whether workloads recreate pods with a lifetime (events would never run out).
    endless: bool = False


def default_horizon(scenario: Any) -> Horizon:
    """The horizon when none is given: the last step, plus every lifetime of finite work one after
    another (each pod's, and a Job's template lifetime once per completion), plus one round of the
    longest lifetime of workloads that recreate their pods (ReplicaSets, Deployments,
    StatefulSets, DaemonSets, ReplicationControllers) — enough for everything that ends to end
    even if it all ran one pod at a time, and for the endless kind to be seen replaced once."""
    last = max((step.at for step in scenario.steps), default=0.0)
    finite = 0.0
    endless = 0.0
    recreating = False
    parts = [scenario, *(step.scenario for step in scenario.steps if step.scenario is not None)]
    for part in parts:
        for pod in part.pods:
            finite += _lifetime(pod, f"Pod {pod['metadata'].get('name')}: metadata.annotations[{LIFETIME}]") or 0.0
        for obj in part.others:
            kind = obj.get("kind")
            if kind == "Job":
                life = _template_lifetime(obj)
                if life:
                    spec = obj.get("spec") or {}
                    completions = spec.get("completions")
                    if completions is None:
                        completions = 1 if spec.get("parallelism") is None else max(1, int(spec["parallelism"]))
                    finite += life * max(1, int(completions))
            elif kind in RECREATING:
                life = _template_lifetime(obj)
                if life is not None:
                    recreating = True
                    endless = max(endless, life)
    at = last + finite + endless
    why = "the last step" if scenario.steps else "the start"
    if finite:
        why += " + every finite lifetime in turn"
    if recreating:
        why += " + one round of the longest lifetime of a workload that recreates its pods"
    return Horizon(at, why, endless=recreating)
