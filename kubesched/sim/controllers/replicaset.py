"""ReplicaSet: keep ``spec.replicas`` pods of its template (upstream's ReplicaSet controller).

Missing pods are created (``<name>-<5 letters>``); extra ones are deleted, those not on a node
first, then the newest. A pod deleted by anyone — preemption included — is replaced."""

from __future__ import annotations

from kubesched.cluster.store import Store
from kubesched.framework.features import FeatureGates
from kubesched.objects import Obj
from kubesched.sim.controllers.common import Names, bound, create_pod, delete, owned, replicas, set_status


def reconcile_replicaset(
    store: Store, rs: Obj, names: Names, kind: str = "ReplicaSet", gates: FeatureGates | None = None
) -> None:
    pods = owned(store, "Pod", rs)
    want = replicas(rs)
    template = (rs.get("spec") or {}).get("template") or {}
    while len(pods) < want:
        created = create_pod(store, rs, template, names.next(rs), gates=gates)
        if created is None:
            break
        pods.append(created)
    if len(pods) > want:
        # Upstream's ranking of who goes: pods not on a node first, then the newest.
        ranked = sorted(pods, key=lambda p: p["metadata"].get("creationTimestamp", ""), reverse=True)
        ranked.sort(key=bound)
        doomed = ranked[: len(pods) - want]
        for pod in doomed:
            delete(store, "Pod", pod)
        pods = [p for p in pods if p not in doomed]
    on_nodes = sum(1 for p in pods if bound(p))
    set_status(
        store,
        kind,
        rs,
        {
            "replicas": len(pods),
            "fullyLabeledReplicas": len(pods),
            # No kubelet: a pod placed on a node stands for a ready, available one.
            "readyReplicas": on_nodes,
            "availableReplicas": on_nodes,
            "observedGeneration": int(rs["metadata"].get("generation") or 1),
        },
    )
