"""A parsed scenario put into a store, as the API server would have admitted its objects."""

from __future__ import annotations

import copy
from typing import Any

from kubesched.cluster.base import NotFound
from kubesched.cluster.store import CLUSTER_SCOPED, Store
from kubesched.sim.apiserver.admission import DEFAULT_NAMESPACES, admit_new
from kubesched.sim.apiserver.validation.dra import default_device_taint_rule
from kubesched.sim.scenario.reading import Scenario, admit_pod

Obj = dict[str, Any]


def load_scenario_into(store: Store, scenario: Scenario) -> None:
    """Create a parsed scenario's objects in ``store`` as the API server would admit them:
    namespaces (the defaults, the declared ones and any a pod or claim uses), priority classes,
    storage and disruption objects (``scenario.others``), nodes, running pods, then pending pods
    with priority admission."""

    def ensure_ns(name: str, obj: Obj | None = None) -> None:
        try:
            store.get("Namespace", None, name)
        except NotFound:
            store.create(
                "Namespace", admit_new("Namespace", "", copy.deepcopy(obj or {"metadata": {"name": name}}), {})
            )

    for ns in DEFAULT_NAMESPACES:
        ensure_ns(ns)
    for ns_obj in scenario.namespaces:
        ensure_ns(ns_obj["metadata"]["name"], ns_obj)
    for pc in scenario.priority_classes:
        obj = copy.deepcopy(pc)
        obj.setdefault("apiVersion", "scheduling.k8s.io/v1")
        obj.setdefault("preemptionPolicy", "PreemptLowerPriority")
        store.create("PriorityClass", obj)
    for other in getattr(scenario, "others", ()):
        kind = other["kind"]
        if kind not in CLUSTER_SCOPED:
            ensure_ns(other["metadata"].get("namespace") or "default")
        obj = copy.deepcopy(other)
        if kind == "DeviceTaintRule":
            default_device_taint_rule(obj)  # timeAdded, as the API server sets it
        store.create(kind, obj)
    for node in scenario.nodes:
        store.create("Node", node)
    classes = {p["metadata"]["name"]: p for p in store.list("PriorityClass")[0]}
    for pod in scenario.running_pods:
        ensure_ns(pod["metadata"].get("namespace") or "default")
        obj = admit_pod(copy.deepcopy(pod), classes)
        store.create("Pod", obj)
    for pod in scenario.pending_pods:
        ensure_ns(pod["metadata"].get("namespace") or "default")
        obj = admit_pod(copy.deepcopy(pod), classes)
        obj.setdefault("status", {}).setdefault("phase", "Pending")
        store.create("Pod", obj)
