"""StatefulSet: pods ``<name>-0`` … ``<name>-(replicas-1)`` with their stable identity labels
and hostname. ``OrderedReady`` (the default) creates ordinal i once every lower one is on a node
(with no kubelet, placed stands for running and ready); ``Parallel`` creates them all at once.
Scaling down removes the highest ordinals. volumeClaimTemplates are not turned into claims."""

from __future__ import annotations

from kubesched.cluster.base import NotFound
from kubesched.cluster.store import Store
from kubesched.framework.features import FeatureGates
from kubesched.objects import Obj
from kubesched.sim.controllers.common import bound, create_pod, delete, owned, replicas, set_status


def reconcile_statefulset(store: Store, sts: Obj, gates: FeatureGates | None = None) -> None:
    spec = sts.get("spec") or {}
    want = replicas(sts)
    name = sts["metadata"]["name"]
    ns = sts["metadata"].get("namespace") or "default"
    ordered = spec.get("podManagementPolicy", "OrderedReady") != "Parallel"
    pods = {p["metadata"]["name"]: p for p in owned(store, "Pod", sts)}
    for i in range(want):
        pod_name = f"{name}-{i}"
        if pod_name in pods:
            if ordered and not bound(pods[pod_name]):
                break
            continue
        try:
            store.get("Pod", ns, pod_name)
            break  # a pod of that name that is not ours: wait, as upstream does
        except NotFound:
            pass
        template = dict(spec.get("template") or {})
        template["spec"] = {
            **(template.get("spec") or {}),
            "hostname": pod_name,
            **({"subdomain": spec["serviceName"]} if spec.get("serviceName") else {}),
        }
        labels = {"statefulset.kubernetes.io/pod-name": pod_name, "apps.kubernetes.io/pod-index": str(i)}
        created = create_pod(store, sts, template, pod_name, labels, gates)
        if created is None or ordered:
            break
    for pod_name, pod in sorted(pods.items(), key=lambda kv: -_ordinal(kv[0])):
        if _ordinal(pod_name) >= want:
            delete(store, "Pod", pod)
    live = owned(store, "Pod", sts)
    on_nodes = sum(1 for p in live if bound(p))
    set_status(
        store,
        "StatefulSet",
        sts,
        {
            "replicas": len(live),
            "readyReplicas": on_nodes,
            "availableReplicas": on_nodes,
            "currentReplicas": len(live),
            "observedGeneration": int(sts["metadata"].get("generation") or 1),
        },
    )


def _ordinal(pod_name: str) -> int:
    tail = pod_name.rsplit("-", 1)[-1]
    return int(tail) if tail.isdigit() else -1
