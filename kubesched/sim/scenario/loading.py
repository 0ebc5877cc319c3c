"""A parsed scenario put into a store, as the API server would have admitted its objects."""

from __future__ import annotations

import copy
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from kubesched.cluster.base import NotFound
from kubesched.cluster.custom_resources import CRD_KIND
from kubesched.cluster.store import CLUSTER_SCOPED, Store
from kubesched.objects import Obj
from kubesched.sim.apiserver.admission import DEFAULT_NAMESPACES, admit_new
from kubesched.sim.apiserver.customresources import admit_definition
from kubesched.sim.apiserver.validation.dra.taint_rules import default_device_taint_rule
from kubesched.sim.scenario.reading import MAX_OBJECTS, SCENARIO_EPOCH, Scenario, admit_pod

_STAMP = "%Y-%m-%dT%H:%M:%SZ"


def _reader_time(pod: Obj) -> datetime | None:
    """The creation time the scenario reader gave ``pod`` (one second a pod from
    :data:`SCENARIO_EPOCH`, for a reproducible order), or ``None`` for one the scenario wrote."""
    raw = (pod.get("metadata") or {}).get("creationTimestamp")
    if not isinstance(raw, str):
        return None
    try:
        created = datetime.strptime(raw, _STAMP).replace(tzinfo=UTC)
    except ValueError:
        return None
    return created if SCENARIO_EPOCH <= created <= SCENARIO_EPOCH + timedelta(seconds=MAX_OBJECTS) else None


def _rebased(pod: Obj, now: datetime | None, last: datetime) -> Obj:
    """``pod`` with the creation time the reader gave it moved so that the scenario's last such
    pod was created ``now``: in a live server pods are not years old. A time the scenario wrote
    itself is kept."""
    created = _reader_time(pod) if now is not None else None
    if now is not None and created is not None:
        pod["metadata"]["creationTimestamp"] = (now - (last - created)).strftime(_STAMP)
    return pod


def ready_node(node: Obj, now: datetime | None = None) -> Obj:
    """A copy of a scenario's node, with a Ready condition when the scenario gave it no
    conditions, as a kubelet would post one: ``kubectl get nodes`` shows such a node Ready, not
    Unknown. Conditions the scenario wrote (an imported cluster's, a NotReady node) are kept."""
    obj = copy.deepcopy(node)
    status = obj.setdefault("status", {})
    if not status.get("conditions"):
        at = (now or SCENARIO_EPOCH).strftime(_STAMP)
        status["conditions"] = [
            {
                "type": "Ready",
                "status": "True",
                "lastHeartbeatTime": at,
                "lastTransitionTime": at,
                "reason": "KubeletReady",
                "message": "simulated node: ready (the scenario gave no conditions)",
            }
        ]
    return obj


def load_scenario_into(store: Store, scenario: Scenario, now: datetime | None = None) -> None:
    """Create a parsed scenario's objects in ``store`` as the API server would admit them:
    namespaces (the defaults, the declared ones and any a pod or claim uses), priority classes,
    storage and disruption objects (``scenario.others``), nodes (Ready unless the scenario gave
    them conditions: :func:`ready_node`), running pods, then pending pods with priority admission. With ``now`` (a server's clock), the creation times the reader
    gave its pods end at ``now``, in the same order."""
    last = max((t for p in scenario.pods if (t := _reader_time(p)) is not None), default=SCENARIO_EPOCH)

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
        store.create("PriorityClass", priority_class(pc))
    for other in getattr(scenario, "others", ()):
        kind = other["kind"]
        if kind not in CLUSTER_SCOPED:
            ensure_ns(other["metadata"].get("namespace") or "default")
        obj = copy.deepcopy(other)
        if kind == "DeviceTaintRule":
            default_device_taint_rule(obj)  # timeAdded, as the API server sets it
        store.create(kind, obj)
    load_custom_resources(store, scenario, ensure_ns)
    for node in scenario.nodes:
        store.create("Node", ready_node(node, now))
    classes = {p["metadata"]["name"]: p for p in store.list("PriorityClass")[0]}
    for pod in scenario.running_pods:
        ensure_ns(pod["metadata"].get("namespace") or "default")
        obj = admit_pod(_rebased(copy.deepcopy(pod), now, last), classes)
        store.create("Pod", obj)
    for pod in scenario.pending_pods:
        ensure_ns(pod["metadata"].get("namespace") or "default")
        obj = admit_pod(_rebased(copy.deepcopy(pod), now, last), classes)
        obj.setdefault("status", {}).setdefault("phase", "Pending")
        store.create("Pod", obj)


def load_custom_resources(store: Store, scenario: Scenario, ensure_ns: Callable[[str], None] | None = None) -> None:
    """A scenario's CustomResourceDefinitions (admitted as the API server admits them), then the
    objects of their kinds, kept under ``<plural>.<group>``; ``ensure_ns`` makes a namespaced
    object's namespace first."""
    for crd in getattr(scenario, "custom_resource_definitions", ()):
        store.create(CRD_KIND, admit_definition(copy.deepcopy(crd), None, store.custom_resources))
    for custom in getattr(scenario, "custom_objects", ()):
        key = store.custom_resources.store_key_for(custom["apiVersion"], custom["kind"])
        if key is None:  # a step's object whose definition the scenario's step left out
            raise NotFound(f"no CustomResourceDefinition serves {custom['kind']} in {custom['apiVersion']}")
        if ensure_ns is not None and not store.cluster_scoped(key):
            ensure_ns(custom["metadata"].get("namespace") or "default")
        store.create(key, copy.deepcopy(custom))


def priority_class(pc: Obj) -> Obj:
    """A scenario's PriorityClass as it is stored: a copy, with the API server's defaults."""
    obj = copy.deepcopy(pc)
    obj.setdefault("apiVersion", "scheduling.k8s.io/v1")
    obj.setdefault("preemptionPolicy", "PreemptLowerPriority")
    return obj
