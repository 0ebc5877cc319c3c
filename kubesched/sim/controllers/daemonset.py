"""DaemonSet: one pod on every node that should run it, placed by the scheduler as upstream does
since 1.12: each pod carries a required node affinity to its node's name (``matchFields
metadata.name``) and the tolerations the DaemonSet controller adds. A node should run the pod
when it matches the template's node selector and required node affinity and has no NoSchedule
or NoExecute taint the pod does not tolerate. Pods on nodes that no longer qualify are deleted."""

from __future__ import annotations

import copy
from typing import Any

from kubesched.cluster.store import Store
from kubesched.framework.features import FeatureGates
from kubesched.framework.selectors import NodeSelector, SelectorError, tolerations_tolerate
from kubesched.objects import Obj
from kubesched.sim.controllers.common import Names, bound, create_pod, delete, owned, set_status

#: Tolerations upstream's DaemonSet controller adds to every daemon pod.
DAEMON_TOLERATIONS: list[Obj] = [
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/disk-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/memory-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/pid-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"},
]


def _template_for(template: Obj) -> Obj:
    out = copy.deepcopy(template)
    spec = out.setdefault("spec", {})
    tolerations = list(spec.get("tolerations") or [])
    for t in DAEMON_TOLERATIONS:
        if t not in tolerations:
            tolerations.append(t)
    spec["tolerations"] = tolerations
    return out


def should_run(template: Obj, node: Obj, comparison_operators: bool = False) -> bool:
    """Whether ``node`` should run the daemon pod; ``comparison_operators``: the
    TaintTolerationComparisonOperators gate (``Lt``/``Gt`` tolerations may match), which upstream's
    DaemonSet controller follows too."""
    spec = template.get("spec") or {}
    meta = node.get("metadata") or {}
    labels = meta.get("labels") or {}
    if spec.get("nodeName") and spec["nodeName"] != meta.get("name"):
        return False
    for k, v in (spec.get("nodeSelector") or {}).items():
        if labels.get(k) != v:
            return False
    required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    )
    if required is not None:
        try:
            selector = NodeSelector.compile(required, lazy=True)
        except SelectorError:
            return False
        if selector is not None and not selector.matches(labels, meta.get("name", "")):
            return False
    tolerations: list[Any] = spec.get("tolerations") or []
    for taint in (node.get("spec") or {}).get("taints") or ():
        if taint.get("effect") in ("NoSchedule", "NoExecute") and not tolerations_tolerate(
            tolerations, taint, comparison_operators
        ):
            return False
    return True


def _pinned(template: Obj, node_name: str) -> Obj:
    out = copy.deepcopy(template)
    affinity = out["spec"].setdefault("affinity", {})
    node_affinity = affinity.setdefault("nodeAffinity", {})
    node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}]
    }
    return out


def _node_of(pod: Obj) -> str:
    if bound(pod):
        return str(pod["spec"]["nodeName"])
    terms = (
        (((pod.get("spec") or {}).get("affinity") or {}).get("nodeAffinity") or {}).get(
            "requiredDuringSchedulingIgnoredDuringExecution"
        )
        or {}
    ).get("nodeSelectorTerms") or []
    for term in terms:
        for f in term.get("matchFields") or ():
            if f.get("key") == "metadata.name" and f.get("values"):
                return str(f["values"][0])
    return ""


def reconcile_daemonset(store: Store, ds: Obj, names: Names, gates: FeatureGates | None = None) -> None:
    template = _template_for((ds.get("spec") or {}).get("template") or {})
    nodes, _ = store.list("Node")
    compare = gates is not None and gates.enabled("TaintTolerationComparisonOperators")
    wanted = {n["metadata"]["name"] for n in nodes if should_run(template, n, compare)}
    by_node: dict[str, list[Obj]] = {}
    for pod in owned(store, "Pod", ds):
        by_node.setdefault(_node_of(pod), []).append(pod)
    for node_name, pods in by_node.items():
        keep = 1 if node_name in wanted else 0
        for pod in sorted(pods, key=lambda p: p["metadata"].get("creationTimestamp", ""))[keep:]:
            delete(store, "Pod", pod)
    for node_name in sorted(wanted - {n for n, p in by_node.items() if p}):
        create_pod(store, ds, _pinned(template, node_name), names.next(ds), gates=gates)
    live = owned(store, "Pod", ds)
    set_status(
        store,
        "DaemonSet",
        ds,
        {
            "desiredNumberScheduled": len(wanted),
            "currentNumberScheduled": sum(1 for p in live if bound(p)),
            "numberReady": sum(1 for p in live if bound(p)),
            "numberMisscheduled": 0,
            "observedGeneration": int(ds["metadata"].get("generation") or 1),
        },
    )
