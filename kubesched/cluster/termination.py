"""Deleting a pod as kube-apiserver does: gracefully.

A pod bound to a node and still running is not removed by a DELETE: it is marked
(``metadata.deletionTimestamp`` = now + its grace period, ``deletionGracePeriodSeconds``) and
stays, Terminating, holding its node, until its kubelet has stopped it and deletes it for good.
The grace period is the DeleteOptions' ``gracePeriodSeconds`` when given, else the pod's
``spec.terminationGracePeriodSeconds`` (30 when unset, the API's default); a pod never bound, or
finished (Succeeded or Failed), goes at once, as does a grace period of 0. A second DELETE may
only shorten the period (0 removes the pod); a longer one changes nothing.

The simulated clusters have no kubelets. Their :attr:`~kubesched.cluster.store.Store.pod_termination`
says who plays one: ``"immediate"`` (the default), a kubelet that stops a pod the moment it is
deleted, so that a deletion is never seen as Terminating; ``"graceful"``, pods stay Terminating
for their grace period, finished by whoever runs the cluster's time (``simulate``'s and ``sim
serve``'s clock, :mod:`kubesched.sim.scenario.timeline`) or by nobody, as in upstream's
integration tests.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime

from kubesched.cluster.store import Store
from kubesched.objects import Obj

#: ``spec.terminationGracePeriodSeconds`` when a pod leaves it unset (the API's default).
DEFAULT_GRACE_SECONDS = 30


def grace_period(pod: Obj, requested: int | None = None) -> int:
    """The seconds ``pod`` is given to stop when deleted with ``requested`` (DeleteOptions'
    ``gracePeriodSeconds``, None when not given): kube-apiserver's pod strategy."""
    spec = pod.get("spec") or {}
    if requested is not None:
        period = requested
    else:
        own = spec.get("terminationGracePeriodSeconds")
        period = DEFAULT_GRACE_SECONDS if own is None else int(own)
    if not spec.get("nodeName"):
        return 0  # never bound: nothing runs that must stop
    if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
        return 0  # stopped already
    return max(0, period)


def _stamp(epoch: float) -> str:
    """The RFC 3339 time of ``epoch`` seconds, whole, as the API server writes it."""
    return datetime.fromtimestamp(int(epoch), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _parse(stamp: str) -> float:
    return datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC).timestamp()


def delete_pod(store: Store, namespace: str | None, name: str, requested: int | None = None) -> Obj:
    """DELETE a pod of ``store`` with DeleteOptions' ``gracePeriodSeconds`` ``requested``: the pod
    as it is afterwards, marked and still stored, or gone. Raises NotFound when there is none.

    A negative ``requested`` counts as 1, as kube-apiserver reads it."""
    if store.pod_termination != "graceful":
        return store.delete("Pod", namespace, name)
    pod = store.get("Pod", namespace, name)
    meta = pod["metadata"]
    if requested is not None and requested < 0:
        requested = 1
    if meta.get("deletionTimestamp"):
        current = int(meta.get("deletionGracePeriodSeconds") or 0)
        if current <= 0 or requested == 0:
            return store.delete("Pod", namespace, name)
        if requested is None or requested >= current:
            return pod  # being deleted already: only a shorter period changes anything
        shortened = _parse(meta["deletionTimestamp"]) - current + requested

        def shorten(p: Obj) -> None:
            p["metadata"]["deletionTimestamp"] = _stamp(shortened)
            p["metadata"]["deletionGracePeriodSeconds"] = requested

        return store.mutate("Pod", namespace, name, shorten)
    period = grace_period(pod, requested)
    if period == 0:
        return store.delete("Pod", namespace, name)

    def mark(p: Obj) -> None:
        m = p["metadata"]
        m["deletionTimestamp"] = _stamp(time.time() + period)
        m["deletionGracePeriodSeconds"] = period
        if int(m.get("generation") or 0) > 0:
            m["generation"] = int(m["generation"]) + 1

    return store.mutate("Pod", namespace, name, mark)


def terminating(pod: Obj) -> int | None:
    """The grace period a pod being deleted gracefully was given, or None when it is not."""
    meta = pod.get("metadata") or {}
    if not meta.get("deletionTimestamp"):
        return None
    period = meta.get("deletionGracePeriodSeconds")
    return None if period is None else int(period)
