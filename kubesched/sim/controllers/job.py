"""Job: run pods until ``completions`` of them have succeeded, ``parallelism`` at a time, labelled
as upstream labels them.

With no kubelet, a pod finishes only when something says so: a ``kubesched.io/lifetime`` on the
pod template (the simulated clock ends such a pod ``Succeeded`` that long after it is bound, see
:mod:`kubesched.sim.scenario.timeline`), or a client writing the pod's phase. The controller
counts what finished, as kube-controller-manager's job controller does:

* active pods (not Succeeded nor Failed) are kept at ``parallelism`` (default 1), never more
  than the completions still missing; a pod deleted before it finished is replaced;
* without ``completions``, the first pod that succeeds ends the Job: no new pods are made, and
  the Job completes once the others have finished too;
* ``status`` has ``active``, ``ready`` (active pods on a node), ``succeeded``, ``failed``,
  ``terminating`` (0: pods go at once here) and ``startTime``; when the Job is done it gets
  ``completionTime`` and the conditions ``SuccessCriteriaMet`` then ``Complete`` (reason
  ``CompletionsReached``), after which nothing changes any more.

With ``completionMode: Indexed`` each of the ``completions`` indexes must succeed once: a pod is
made for the lowest indexes neither succeeded nor running, named ``<job>-<index>-<suffix>``,
with the annotation and label ``batch.kubernetes.io/job-completion-index`` and the hostname
``<job>-<index>``; ``status.completedIndexes`` lists the succeeded ones (``0-2,4``), and
``succeeded`` counts them.

``now`` stamps times (the simulated clock's, under ``simulate`` and ``sim serve``). Failed pods
are counted but not retried against a ``backoffLimit``: nothing here makes a pod fail.

With workload-aware scheduling on (``groups``), a Job first gets its Workload and PodGroup
(:mod:`kubesched.sim.controllers.workloads`) and its pods name that PodGroup in
``spec.schedulingGroup``."""

from __future__ import annotations

from collections.abc import Callable

from kubesched.cluster.store import Store, now_rfc3339
from kubesched.framework.features import FeatureGates
from kubesched.objects import Obj
from kubesched.sim.controllers.common import Names, bound, create_pod, owned, set_status
from kubesched.sim.controllers.workloads import SchedulingBlocked, ensure_pod_group

#: Where an Indexed Job's pod carries its index (an annotation and a label).
COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"

#: The reason and message of the conditions of a Job that reached its completions.
COMPLETIONS_REACHED = "CompletionsReached"
COMPLETE_MESSAGE = "Reached expected number of succeeded pods"


def finished(job: Obj) -> bool:
    """Whether the Job has its ``Complete`` (or ``Failed``) condition: it is left alone then."""
    return any(
        c.get("type") in ("Complete", "Failed") and c.get("status") == "True"
        for c in (job.get("status") or {}).get("conditions") or ()
    )


def reconcile_job(
    store: Store,
    job: Obj,
    names: Names,
    groups: bool = False,
    now: Callable[[], str] = now_rfc3339,
    gates: FeatureGates | None = None,
) -> None:
    if finished(job):
        return
    spec = job.get("spec") or {}
    pods = owned(store, "Pod", job)
    phases = [(p.get("status") or {}).get("phase") for p in pods]
    active = [p for p, ph in zip(pods, phases, strict=True) if ph not in ("Succeeded", "Failed")]
    succeeded = phases.count("Succeeded")
    indexed = spec.get("completionMode") == "Indexed" and spec.get("completions") is not None
    done_indexes: set[int] = set()
    if indexed:
        done_indexes = {
            i for p, ph in zip(pods, phases, strict=True) if ph == "Succeeded" and (i := _index(p)) is not None
        }
        succeeded = len(done_indexes)
    failed = phases.count("Failed")
    parallelism = spec.get("parallelism")
    parallelism = 1 if parallelism is None else max(0, int(parallelism))
    completions = spec.get("completions")
    if completions is None:
        # Any pod that succeeds means the work is done: no more pods, the rest finish.
        want = 0 if succeeded else parallelism
        done = succeeded > 0 and not active
    else:
        want = min(parallelism, max(0, int(completions) - succeeded))
        done = succeeded >= int(completions)
    if spec.get("suspend"):
        want = 0
    meta = job["metadata"]
    labels = {
        "batch.kubernetes.io/controller-uid": meta["uid"],
        "batch.kubernetes.io/job-name": meta["name"],
        "controller-uid": meta["uid"],
        "job-name": meta["name"],
    }
    template = spec.get("template") or {}
    try:
        group = ensure_pod_group(store, job, pods) if groups and not done else None
    except SchedulingBlocked:
        want = len(active)  # no new pods until the objects are repaired
        group = None
    if group is not None:
        tspec = {**(template.get("spec") or {}), "schedulingGroup": {"podGroupName": group}}
        template = {**template, "spec": tspec}
    if indexed:
        running = {i for p in active if (i := _index(p)) is not None}
        missing = (i for i in range(int(spec["completions"])) if i not in done_indexes and i not in running)
        while len(active) < want and not done:
            index = next(missing, None)
            if index is None:
                break
            name = f"{meta['name']}-{index}-{names.next(job).rsplit('-', 1)[1]}"
            created = create_pod(store, job, _indexed(template, meta["name"], index), name, labels, gates)
            if created is None:
                break
            active.append(created)
    while not indexed and len(active) < want and not done:
        created = create_pod(store, job, template, names.next(job), labels, gates)
        if created is None:
            break
        active.append(created)
    status: Obj = {
        "active": len(active),
        "ready": sum(1 for p in active if bound(p)),
        "succeeded": succeeded,
        "failed": failed,
        "terminating": 0,
        "uncountedTerminatedPods": {},
    }
    if indexed:
        status["completedIndexes"] = _ranges(sorted(done_indexes))
    current = job.get("status") or {}
    if not current.get("startTime"):
        status["startTime"] = now()
    if done:
        stamp = now()
        status["completionTime"] = stamp
        status["conditions"] = [
            *(c for c in current.get("conditions") or () if c.get("type") not in ("SuccessCriteriaMet", "Complete")),
            _condition("SuccessCriteriaMet", stamp),
            _condition("Complete", stamp),
        ]
    set_status(store, "Job", job, status)


def _condition(kind: str, stamp: str) -> Obj:
    return {
        "type": kind,
        "status": "True",
        "lastProbeTime": stamp,
        "lastTransitionTime": stamp,
        "reason": COMPLETIONS_REACHED,
        "message": COMPLETE_MESSAGE,
    }


def _index(pod: Obj) -> int | None:
    """An Indexed Job's pod's completion index."""
    value = ((pod.get("metadata") or {}).get("annotations") or {}).get(COMPLETION_INDEX)
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def _indexed(template: Obj, job_name: str, index: int) -> Obj:
    """The pod template of one index: its annotation and label, and its hostname."""
    tmeta = dict(template.get("metadata") or {})
    tmeta["annotations"] = {**(tmeta.get("annotations") or {}), COMPLETION_INDEX: str(index)}
    tmeta["labels"] = {**(tmeta.get("labels") or {}), COMPLETION_INDEX: str(index)}
    return {**template, "metadata": tmeta, "spec": {**(template.get("spec") or {}), "hostname": f"{job_name}-{index}"}}


def _ranges(indexes: list[int]) -> str:
    """Sorted indexes written as upstream's ``completedIndexes``: ``0-2,4``."""
    parts: list[str] = []
    start = prev = None
    for i in indexes:
        if prev is not None and i == prev + 1:
            prev = i
            continue
        if start is not None:
            parts.append(str(start) if start == prev else f"{start}-{prev}")
        start = prev = i
    if start is not None:
        parts.append(str(start) if start == prev else f"{start}-{prev}")
    return ",".join(parts)
