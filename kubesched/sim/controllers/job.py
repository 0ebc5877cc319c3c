"""Job: ``parallelism`` pods (at most ``completions``), labelled as upstream labels them. With no
kubelet the pods never finish, so a Job never completes here; a deleted pod is replaced.

With workload-aware scheduling on (``groups``), a Job first gets its Workload and PodGroup
(:mod:`kubesched.sim.controllers.workloads`) and its pods name that PodGroup in
``spec.schedulingGroup``."""

from __future__ import annotations

from kubesched.cluster.store import Store, now_rfc3339
from kubesched.sim.controllers.common import Names, Obj, create_pod, owned, set_status
from kubesched.sim.controllers.workloads import SchedulingBlocked, ensure_pod_group


def reconcile_job(store: Store, job: Obj, names: Names, groups: bool = False) -> None:
    spec = job.get("spec") or {}
    if spec.get("suspend"):
        want = 0
    else:
        parallelism = spec.get("parallelism")
        want = 1 if parallelism is None else max(0, int(parallelism))
        if spec.get("completions") is not None:
            want = min(want, max(0, int(spec["completions"])))
    pods = owned(store, "Pod", job)
    meta = job["metadata"]
    labels = {
        "batch.kubernetes.io/controller-uid": meta["uid"],
        "batch.kubernetes.io/job-name": meta["name"],
        "controller-uid": meta["uid"],
        "job-name": meta["name"],
    }
    template = spec.get("template") or {}
    try:
        group = ensure_pod_group(store, job, pods) if groups else None
    except SchedulingBlocked:
        want = len(pods)  # no new pods until the objects are repaired
        group = None
    if group is not None:
        tspec = {**(template.get("spec") or {}), "schedulingGroup": {"podGroupName": group}}
        template = {**template, "spec": tspec}
    while len(pods) < want:
        created = create_pod(store, job, template, names.next(job), labels)
        if created is None:
            break
        pods.append(created)
    status: Obj = {"active": len(pods)}
    if not (job.get("status") or {}).get("startTime"):
        status["startTime"] = now_rfc3339()
    set_status(store, "Job", job, status)
