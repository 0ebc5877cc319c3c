"""The pods/eviction subresource (policy/v1 Eviction), as kube-apiserver serves it: what
``kubectl drain`` posts for each pod, honouring PodDisruptionBudgets.

A pod that is not running (Succeeded, Failed, or Pending and not yet on a node: with no kubelet
here, a pod bound to a node counts as running) or already being deleted is deleted without
consulting budgets. Otherwise the one PodDisruptionBudget selecting it (more than one is
an error) must allow a disruption: its ``status.disruptionsAllowed`` is then decremented and the
pod recorded in ``status.disruptedPods`` before the pod is deleted; with none allowed the answer
is 429 TooManyRequests, which kubectl drain retries until the budget allows it.
"""

from __future__ import annotations

from typing import Any

from kubesched.cluster.base import NotFound
from kubesched.cluster.store import Store, json_copy, now_rfc3339
from kubesched.framework.selectors import LabelSelector, SelectorError
from kubesched.objects import Obj
from kubesched.sim.apiserver.errors import APIError, bad_request, not_found
from kubesched.sim.apiserver.handlers import grace_seconds
from kubesched.sim.apiserver.validation.decode import check_decodable

VIOLATES_BUDGET = "Cannot evict pod as it would violate the pod's disruption budget."
MULTIPLE_BUDGETS = "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."


def _budgets_for(store: Store, pod: Obj) -> list[Obj]:
    meta = pod["metadata"]
    labels = meta.get("labels") or {}
    if not labels:
        return []
    items, _ = store.list("PodDisruptionBudget", meta.get("namespace"))
    out = []
    for pdb in items:
        try:
            selector = LabelSelector.compile((pdb.get("spec") or {}).get("selector"))
        except SelectorError:
            continue  # an invalid selector matches nothing
        if selector is None or selector.empty:
            continue  # a nil or empty selector matches nothing here
        if selector.matches(labels):
            out.append(pdb)
    return out


def evict(store: Store, namespace: str, name: str, eviction: Any, remove: Any) -> Obj:
    """Evict pod ``namespace/name`` as ``eviction`` (an Eviction object) asks; ``remove(kind,
    namespace, name)`` deletes it. Returns the Status answered, or raises :class:`APIError`."""
    if not isinstance(eviction, dict):
        raise bad_request("the body of an eviction must be an Eviction")
    # Decoded into its Go type first: ``{"metadata": 5}`` is the decoder's 400, as upstream.
    check_decodable("Eviction", "policy", "v1", eviction)
    named = (eviction.get("metadata") or {}).get("name")
    if named and named != name:
        raise bad_request("name in URL does not match name in Eviction object")
    try:
        pod = store.get("Pod", namespace, name)
    except NotFound:
        raise not_found("pods", "", name) from None
    options = eviction.get("deleteOptions") or {}
    if not isinstance(options, dict):
        raise bad_request("deleteOptions: must be DeleteOptions")
    if "All" in (options.get("dryRun") or ()):
        return _success()
    phase = (pod.get("status") or {}).get("phase")
    # No kubelet runs here: a pod bound to a node counts as running there.
    not_running = phase in ("Succeeded", "Failed") or (
        phase == "Pending" and not (pod.get("spec") or {}).get("nodeName")
    )
    if not_running or pod["metadata"].get("deletionTimestamp"):
        remove("Pod", namespace, name, grace_seconds(None, options))
        return _success()
    budgets = _budgets_for(store, pod)
    if len(budgets) > 1:
        raise APIError(500, "InternalError", MULTIPLE_BUDGETS)
    if budgets:
        _take_one_disruption(store, budgets[0], name)
    remove("Pod", namespace, name, grace_seconds(None, options))
    return _success()


def _take_one_disruption(store: Store, pdb: Obj, pod_name: str) -> None:
    status = pdb.get("status") or {}
    allowed = int(status.get("disruptionsAllowed") or 0)
    if allowed <= 0:
        pdb_name = pdb["metadata"]["name"]
        raise APIError(
            429,
            "TooManyRequests",
            VIOLATES_BUDGET,
            {
                "causes": [
                    {
                        "reason": "DisruptionBudget",
                        "message": f"The disruption budget {pdb_name} needs {int(status.get('desiredHealthy') or 0)} "
                        f"healthy pods and has {int(status.get('currentHealthy') or 0)} currently",
                    }
                ],
                "retryAfterSeconds": 0,
            },
        )
    updated = json_copy(pdb)
    new_status = updated.setdefault("status", {})
    new_status["disruptionsAllowed"] = allowed - 1
    new_status.setdefault("disruptedPods", {})[pod_name] = now_rfc3339()
    store.update("PodDisruptionBudget", updated)


def _success() -> Obj:
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}
