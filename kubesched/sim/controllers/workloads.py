"""Workload-aware scheduling objects of the simulated cluster (``scheduling.k8s.io/v1beta1``),
as kube-controller-manager 1.37 makes and removes them.

* **The Job controller's integration** (KEP-5547, its 1.37 shape): a Job that has not started,
  that no other controller owns (a CronJob counts) and whose pod template names no scheduling
  group of its own gets one ``Workload`` (``<job>-<hash of the Job's uid>``, a controller
  reference and ``spec.controllerRef`` to the Job, one pod-group template ``<job>-pgt-0``) and
  one ``PodGroup`` made from that template (``<workload>-<template>-<hash>``, a controller
  reference to the Job and a plain one to the Workload, ``spec.workloadRef``). The policy comes
  from the Job's ``spec.scheduling``: none (or no ``schedulingPolicy``) is ``basic``; ``gang``
  without ``minCount`` takes ``spec.parallelism`` (at least 1) and follows it when the Job is
  scaled. ``schedulingConstraints``, ``disruptionMode``, ``resourceClaims`` and the pod
  template's ``priorityClassName`` are copied. A Job owned by a parent that names one template
  of the parent's Workload (annotation ``scheduling.k8s.io/group-template-name``) gets only its
  PodGroup from that template. The Job's pods carry ``spec.schedulingGroup.podGroupName``. A
  Job that already has pods only finds its objects, never makes them; ambiguous objects make
  it fall back to pod-by-pod, a Workload of its own without exactly one template blocks it.
* **PodGroup protection** (the podgroupprotection controller, on with GenericWorkload): a
  PodGroup carries the ``scheduling.k8s.io/podgroup-protection`` finalizer from its creation
  (the API server's admission puts it there; the PodGroups made here get it as admitted); once
  the PodGroup is being deleted and no pod that has not finished names it in
  ``spec.schedulingGroup``, the finalizer is taken off (and the PodGroup goes, as the API server
  removes an object whose last finalizer is gone).
* **Garbage collection of these kinds**: a Workload or PodGroup whose owners are all gone is
  deleted, as upstream's garbage collector does (so deleting a Job removes its Workload and
  PodGroup). The simulator has no garbage collector for other kinds: pods stay.

A PodGroup's ``status`` (the ``PodGroupInitiallyScheduled`` and ``DisruptionTarget`` conditions)
is written by kube-scheduler in 1.37, not by a controller, so nothing here writes it.
"""

from __future__ import annotations

import copy
from typing import Any

from kubesched.cluster.base import NotFound
from kubesched.cluster.store import Store, now_rfc3339
from kubesched.objects import Obj
from kubesched.sim.controllers.common import controller_ref

API_VERSION = "scheduling.k8s.io/v1beta1"
WORKLOAD = "Workload"
POD_GROUP = "PodGroup"
KINDS = (WORKLOAD, POD_GROUP)

#: The finalizer that keeps a PodGroup while pods that have not finished name it.
PROTECTION_FINALIZER = "scheduling.k8s.io/podgroup-protection"

#: The annotation by which a parent controller hands the Job one template of its own Workload.
GROUP_TEMPLATE_NAME_ANNOTATION = "scheduling.k8s.io/group-template-name"

#: A DNS subdomain's longest name (metadata.name).
_MAX_NAME = 253
#: The letters of upstream's SafeEncodeString: no vowels, no look-alikes.
_SAFE = "bcdfghjklmnpqrstvwxz2456789"


# --- names -------------------------------------------------------------------------------------
def fnv32a(data: bytes) -> int:
    h = 0x811C9DC5
    for b in data:
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return h


def safe_encode(s: str) -> str:
    """Upstream's rand.SafeEncodeString: each byte mapped onto the safe alphabet."""
    return "".join(_SAFE[b % len(_SAFE)] for b in s.encode())


def workload_name(job: Obj) -> str:
    """``<job name>-<hash>``, the hash from the Job's uid (as upstream hashes a ``types.UID``
    with DeepHashObject and FNV-32a), the name cut so that the whole fits 253 characters."""
    uid = str(job["metadata"].get("uid", ""))
    digest = safe_encode(str(fnv32a(f"(types.UID){uid}".encode())))
    prefix = job["metadata"]["name"][: _MAX_NAME - len(digest) - 1]
    return f"{prefix}-{digest}"


def pod_group_name(workload: str, template: str) -> str:
    """``<workload>-<template>-<hash>``, the hash from both names; when too long, each part is
    cut to its fair half of the room (the shorter one keeps all of it)."""
    digest = safe_encode(str(fnv32a(workload.encode() + template.encode())))
    room = _MAX_NAME - len(digest) - 2
    wl, tpl = workload, template
    if len(wl) + len(tpl) > room:
        half = room // 2
        if len(wl) <= half:
            tpl = tpl[: room - len(wl)]
        elif len(tpl) <= half:
            wl = wl[: room - len(tpl)]
        else:
            wl, tpl = wl[: room - half], tpl[:half]
    return f"{wl}-{tpl}-{digest}"


def template_name(job: Obj) -> str:
    """The Job's single pod-group template: ``<job>-pgt-0``."""
    return f"{job['metadata']['name']}-pgt-0"


# --- what the Job asks for -----------------------------------------------------------------------
class SchedulingBlocked(Exception):
    """The Job's scheduling objects have a shape the controller cannot use (its Workload has not
    exactly one template): no pods are made until they are repaired, as upstream returns an
    error from the Job's sync."""


def _controller_of(obj: Obj) -> Obj | None:
    return next((r for r in obj["metadata"].get("ownerReferences") or () if r.get("controller")), None)


def _delegated(job: Obj) -> bool:
    return GROUP_TEMPLATE_NAME_ANNOTATION in (job["metadata"].get("annotations") or {})


def manages_groups(job: Obj) -> bool:
    """Whether the Job controller makes scheduling objects for this Job: not when its pod
    template already names a group (the user's own), nor when another controller (a CronJob
    too) owns the Job, unless that parent hands it a template of its Workload by annotation."""
    spec = job.get("spec") or {}
    tspec = (spec.get("template") or {}).get("spec") or {}
    if tspec.get("schedulingGroup"):
        return False
    return _controller_of(job) is None or _delegated(job)


def _parallelism(job: Obj) -> int:
    value = (job.get("spec") or {}).get("parallelism")
    return 1 if value is None else int(value)


def scheduling_policy(job: Obj) -> Obj:
    """The policy compiled from ``spec.scheduling``: basic unless gang is asked for; a gang's
    ``minCount`` defaults to ``spec.parallelism``, never below 1."""
    sched = (job.get("spec") or {}).get("scheduling") or {}
    policy = sched.get("schedulingPolicy") or {}
    gang = policy.get("gang")
    if gang is None:
        return {"basic": {}}
    min_count = gang.get("minCount")
    if min_count is None:
        min_count = max(1, _parallelism(job))
    return {"gang": {"minCount": int(min_count)}}


def _job_ref(job: Obj) -> Obj:
    return controller_ref({**job, "apiVersion": job.get("apiVersion") or "batch/v1"})


def desired_workload(job: Obj) -> Obj:
    meta = job["metadata"]
    spec = job.get("spec") or {}
    sched = spec.get("scheduling") or {}
    template: Obj = {"name": template_name(job), "schedulingPolicy": scheduling_policy(job)}
    for field in ("schedulingConstraints", "disruptionMode", "resourceClaims"):
        if sched.get(field):
            template[field] = copy.deepcopy(sched[field])
    priority_class = ((spec.get("template") or {}).get("spec") or {}).get("priorityClassName")
    if priority_class:
        template["priorityClassName"] = priority_class
    return {
        "apiVersion": API_VERSION,
        "kind": WORKLOAD,
        "metadata": {
            "name": workload_name(job),
            "namespace": meta.get("namespace") or "default",
            "ownerReferences": [_job_ref(job)],
        },
        "spec": {
            "controllerRef": {"apiGroup": "batch", "kind": "Job", "name": meta["name"]},
            "podGroupTemplates": [template],
        },
    }


def _template(workload: Obj, name: str | None) -> Obj | None:
    templates = (workload.get("spec") or {}).get("podGroupTemplates") or []
    if not templates:
        return None
    if name is None:
        return dict(templates[0])
    return next((dict(t) for t in templates if t.get("name") == name), None)


def desired_pod_group(job: Obj, workload: Obj, template: Obj, link_workload: bool = True) -> Obj:
    """The PodGroup made from ``template`` of ``workload``: a controller reference to the Job and,
    for the Job's own Workload, a plain one to it (never blocking the Workload's deletion)."""
    wl_meta = workload["metadata"]
    spec: Obj = {
        "workloadRef": {"workloadName": wl_meta["name"], "templateName": template["name"]},
        "schedulingPolicy": copy.deepcopy(template.get("schedulingPolicy") or {}),
    }
    for field in (
        "schedulingConstraints",
        "disruptionMode",
        "resourceClaims",
        "priorityClassName",
        "priority",
        "preemptionPolicy",
    ):
        if template.get(field) is not None and template.get(field) != "":
            spec[field] = copy.deepcopy(template[field])
    refs = [_job_ref(job)]
    if link_workload:
        refs.append({"apiVersion": API_VERSION, "kind": WORKLOAD, "name": wl_meta["name"], "uid": wl_meta["uid"]})
    return {
        "apiVersion": API_VERSION,
        "kind": POD_GROUP,
        "metadata": {
            "name": pod_group_name(wl_meta["name"], template["name"]),
            "namespace": wl_meta.get("namespace") or "default",
            "ownerReferences": refs,
            # What the PodGroupProtection admission plugin adds to every PodGroup it admits.
            "finalizers": [PROTECTION_FINALIZER],
        },
        "spec": spec,
    }


# --- the Job controller's part --------------------------------------------------------------------
def _controlled_by(obj: Obj, owner: Obj) -> bool:
    uid = owner["metadata"].get("uid")
    return any(r.get("controller") and r.get("uid") == uid for r in obj["metadata"].get("ownerReferences") or ())


def _workloads_naming(store: Store, namespace: str | None, group: str, kind: str, name: str) -> list[Obj]:
    items, _ = store.list(WORKLOAD, namespace)
    out = []
    for wl in items:
        ref = (wl.get("spec") or {}).get("controllerRef") or {}
        if (ref.get("apiGroup") or "") == group and ref.get("kind") == kind and ref.get("name") == name:
            out.append(wl)
    return out


def _pod_groups_of(store: Store, job: Obj, workload: Obj) -> list[Obj]:
    """PodGroups made from ``workload`` that the Job controls (others, the user's, are ignored)."""
    items, _ = store.list(POD_GROUP, workload["metadata"].get("namespace"))
    name = workload["metadata"]["name"]
    return [
        pg
        for pg in items
        if ((pg.get("spec") or {}).get("workloadRef") or {}).get("workloadName") == name and _controlled_by(pg, job)
    ]


def is_new_job(job: Obj, pods: list[Obj]) -> bool:
    """Never started: no pods, no start time, nothing finished, never suspended. Only such a Job
    gets new scheduling objects (a Job from before the gate was on is left alone)."""
    status = job.get("status") or {}
    if pods or status.get("startTime") or status.get("succeeded") or status.get("failed"):
        return False
    return not any(c.get("type") == "Suspended" for c in status.get("conditions") or ())


def ensure_pod_group(store: Store, job: Obj, pods: list[Obj]) -> str | None:
    """Find or make the Job's Workload and PodGroup; the PodGroup's name for its pods, or ``None``
    when its pods get no group (an unmanaged Job, one that started before, an ambiguous set of
    objects, a parent's Workload not there yet: upstream then falls back to pod-by-pod).
    Raises :class:`SchedulingBlocked` for a Workload of the Job's with other than one template."""
    if not manages_groups(job):
        return None
    new = is_new_job(job, pods)
    meta = job["metadata"]
    namespace = meta.get("namespace")
    parent = _controller_of(job)
    if parent is not None:
        # A parent's Workload, one template of which the parent hands to this Job.
        api_version = str(parent.get("apiVersion") or "")
        group = api_version.split("/")[0] if "/" in api_version else ""
        found = _workloads_naming(store, namespace, group, str(parent.get("kind")), str(parent.get("name")))
        if not found:
            return None
        workload = found[0]
        template = _template(workload, meta["annotations"][GROUP_TEMPLATE_NAME_ANNOTATION])
        if template is None:
            return None
        link = False
    else:
        mine = [w for w in _workloads_naming(store, namespace, "batch", "Job", meta["name"]) if _controlled_by(w, job)]
        if len(mine) > 1:
            return None
        if mine:
            workload = mine[0]
            if len((workload.get("spec") or {}).get("podGroupTemplates") or ()) != 1:
                raise SchedulingBlocked(
                    f"Workload {workload['metadata']['name']} of Job {meta['name']} has "
                    f"{len(workload['spec'].get('podGroupTemplates') or ())} pod group templates, not 1"
                )
        elif new:
            workload = store.create(WORKLOAD, desired_workload(job))
        else:
            return None
        template = _template(workload, None)
        assert template is not None
        link = True
    groups = _pod_groups_of(store, job, workload)
    if len(groups) > 1:
        return None
    if groups:
        group_obj = groups[0]
    elif new:
        group_obj = store.create(POD_GROUP, desired_pod_group(job, workload, template, link))
    else:
        return None
    if parent is None:
        _sync_min_count(store, job, workload, group_obj)
    else:
        want = ((template.get("schedulingPolicy") or {}).get("gang") or {}).get("minCount")
        if want is not None:
            _set_min_count(store, POD_GROUP, group_obj, int(want))
    return str(group_obj["metadata"]["name"])


def _set_min_count(store: Store, kind: str, obj: Obj, count: int) -> None:
    """Set the gang ``minCount`` of a PodGroup, or of a Workload's only template, if it differs."""

    def policy_of(o: Obj) -> Obj:
        spec = o.get("spec") or {}
        if kind == WORKLOAD:
            return dict((spec.get("podGroupTemplates") or [{}])[0].get("schedulingPolicy") or {})
        return dict(spec.get("schedulingPolicy") or {})

    gang = policy_of(obj).get("gang")
    if gang is None or gang.get("minCount") == count:
        return

    def fix(o: Obj) -> None:
        spec = o["spec"]
        policy = spec["podGroupTemplates"][0]["schedulingPolicy"] if kind == WORKLOAD else spec["schedulingPolicy"]
        policy["gang"]["minCount"] = count

    store.mutate(kind, obj["metadata"].get("namespace"), obj["metadata"]["name"], fix)


def _sync_min_count(store: Store, job: Obj, workload: Obj, group: Obj) -> None:
    """A gang follows the Job's size: a changed ``minCount`` (or ``parallelism``, when the Job
    sets no ``minCount``) is written to the Job's own Workload and PodGroup."""
    want = scheduling_policy(job).get("gang")
    if want is None or not _controlled_by(workload, job):
        return
    if len((workload.get("spec") or {}).get("podGroupTemplates") or ()) == 1:
        _set_min_count(store, WORKLOAD, workload, want["minCount"])
    if _controlled_by(group, job):
        _set_min_count(store, POD_GROUP, group, want["minCount"])


# --- garbage collection -----------------------------------------------------------------------------
def _owner_exists(store: Store, namespace: str | None, ref: Obj) -> bool:
    try:
        owner = store.get(str(ref.get("kind")), namespace, str(ref.get("name")))
    except (NotFound, KeyError, ValueError):
        return False
    return bool(owner["metadata"].get("uid") == ref.get("uid"))


def collect_garbage(store: Store, kind: str, obj: Obj) -> bool:
    """Delete ``obj`` when it has owners and none of them exists any more (upstream's garbage
    collector, background propagation); whether it did. An object with finalizers is only
    marked (``deletionTimestamp``), as the API server does, until they are taken off."""
    meta = obj["metadata"]
    refs = meta.get("ownerReferences") or ()
    if not refs or meta.get("deletionTimestamp") or any(_owner_exists(store, meta.get("namespace"), r) for r in refs):
        return False
    ns, name = meta.get("namespace"), meta["name"]
    try:
        if meta.get("finalizers"):
            stamp = now_rfc3339()
            store.mutate(kind, ns, name, lambda o: o["metadata"].__setitem__("deletionTimestamp", stamp))
        else:
            store.delete(kind, ns, name)
    except NotFound:
        return False
    return True


def dependents(store: Store, owner: Obj) -> list[tuple[str, Obj]]:
    """The Workloads and PodGroups in ``owner``'s namespace that name it as an owner."""
    meta: Any = owner.get("metadata") or {}
    uid = meta.get("uid")
    if not uid:
        return []
    out = []
    for kind in KINDS:
        items, _ = store.list(kind, meta.get("namespace"))
        out += [
            (kind, o) for o in items if any(r.get("uid") == uid for r in o["metadata"].get("ownerReferences") or ())
        ]
    return out


# --- PodGroup protection ----------------------------------------------------------------------------
def pod_group_of(pod: Obj) -> str | None:
    group = (pod.get("spec") or {}).get("schedulingGroup") or {}
    name = group.get("podGroupName")
    return str(name) if name else None


def in_use(store: Store, group: Obj) -> bool:
    """Whether a pod that has not finished (Succeeded or Failed) names the PodGroup."""
    meta = group["metadata"]
    items, _ = store.list("Pod", meta.get("namespace"))
    return any(
        pod_group_of(p) == meta["name"] and (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")
        for p in items
    )


def protect(store: Store, group: Obj) -> None:
    """Take the protection finalizer off a PodGroup being deleted that no unfinished pod names
    any more (and delete it when no finalizer is left, as the API server would). Adding it is
    the API server's admission, not this controller's."""
    meta = group["metadata"]
    finalizers = list(meta.get("finalizers") or ())
    if not meta.get("deletionTimestamp") or PROTECTION_FINALIZER not in finalizers or in_use(store, group):
        return
    ns, name = meta.get("namespace"), meta["name"]
    rest = [f for f in finalizers if f != PROTECTION_FINALIZER]
    if rest:
        store.mutate(POD_GROUP, ns, name, lambda o: o["metadata"].__setitem__("finalizers", rest))
        return
    try:
        store.delete(POD_GROUP, ns, name)
    except NotFound:
        pass
