"""PodDisruptionBudget status, as upstream's disruption controller keeps it: how many of the pods
a budget selects are healthy, how many must stay so, and how many may go now — what the eviction
subresource (``kubectl drain``) consults.

The pods counted are those the budget's selector matches in its namespace (policy/v1: an empty
selector matches them all); with no kubelet, a pod on a node counts as healthy. ``minAvailable``
and ``maxUnavailable`` (numbers or percentages, rounded up) are taken of the pods counted, not of
their controllers' scale. Pods recorded in ``disruptedPods`` (being evicted) are not healthy.
A status written without ``observedGeneration`` (by hand, as scenarios give one to try
preemption against a budget) is left as written.
"""

from __future__ import annotations

import math
from typing import Any

from kubesched.cluster.store import Store
from kubesched.framework.selectors import LabelSelector, SelectorError
from kubesched.objects import Obj
from kubesched.sim.controllers.common import bound, set_status


def _scaled(value: Any, total: int) -> int:
    if isinstance(value, str) and value.endswith("%"):
        try:
            return math.ceil(int(value[:-1]) * total / 100)
        except ValueError:
            return 0
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def reconcile_budget(store: Store, pdb: Obj) -> None:
    written = pdb.get("status")
    if written and "observedGeneration" not in written:
        return  # a status written by hand (a scenario's): kept as written
    spec = pdb.get("spec") or {}
    raw = spec.get("selector")
    ns = pdb["metadata"].get("namespace")
    pods: list[Obj] = []
    if raw is not None:
        try:
            selector = LabelSelector.compile(raw)
        except SelectorError:
            selector = None
        if selector is not None:
            items, _ = store.list("Pod", ns)
            pods = [
                p
                for p in items
                if not p["metadata"].get("deletionTimestamp") and selector.matches(p["metadata"].get("labels") or {})
            ]
    disrupted = dict((pdb.get("status") or {}).get("disruptedPods") or {})
    names = {p["metadata"]["name"] for p in pods}
    disrupted = {name: when for name, when in disrupted.items() if name in names}
    expected = len(pods)
    healthy = sum(1 for p in pods if bound(p) and p["metadata"]["name"] not in disrupted)
    if spec.get("maxUnavailable") is not None:
        desired = max(0, expected - _scaled(spec["maxUnavailable"], expected))
    elif spec.get("minAvailable") is not None:
        desired = _scaled(spec["minAvailable"], expected)
    else:
        desired = expected  # no budget given: no disruption allowed, as upstream's default
    allowed = max(0, healthy - desired)
    status: Obj = {
        "observedGeneration": int(pdb["metadata"].get("generation") or 1),
        "expectedPods": expected,
        "currentHealthy": healthy,
        "desiredHealthy": desired,
        "disruptionsAllowed": allowed,
        "disruptedPods": disrupted,
    }
    set_status(store, "PodDisruptionBudget", pdb, status)
