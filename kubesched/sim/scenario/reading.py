"""Scenarios: multi-document YAML of plain Kubernetes manifests.

Supported kinds are Node, Pod, PriorityClass, Namespace, the storage and disruption objects
plugins read (PersistentVolume, PersistentVolumeClaim, StorageClass, CSINode, CSIDriver,
CSIStorageCapacity, PodDisruptionBudget), the workloads, the ``resource.k8s.io/v1`` kinds (DeviceClass,
ResourceSlice, ResourceClaim, ResourceClaimTemplate and, since 1.37, DeviceTaintRule), the
``scheduling.k8s.io`` kinds of workload-aware scheduling (Workload and PodGroup in v1beta1 or
v1alpha3, CompositePodGroup in v1alpha3; 1.37), and ``kind: List`` of them. Pods with ``spec.nodeName`` are running there before scheduling starts;
the others are created in document order and scheduled by the profile their ``schedulerName``
names. The storage and disruption objects (``Scenario.others``) exist before any node or pod.

A scenario describes a settled cluster, and the simulated one has no PV controller: claims and
volumes are given the defaults the API server would give them and the binding state the PV
controller would have reached (a claim naming an existing volume is bound to it, an unclaimed
volume is Available).
"""

from __future__ import annotations

import copy
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import yaml

from kubesched import errors
from kubesched.cluster.base import WATCHED_KINDS
from kubesched.cluster.custom_resources import CRD_KIND, CustomResourceRegistry
from kubesched.cluster.store import API_VERSIONS, CLUSTER_SCOPED
from kubesched.decoding import DecodeError, Limits, load_yaml_all, read_text
from kubesched.framework.features import FeatureGates
from kubesched.framework.usage import USAGE_ANNOTATION, UsageError, parse_usage_annotation, running_container_names
from kubesched.sim.apiserver.openapi.documents import unknown_fields
from kubesched.sim.apiserver.validation import scheduling_problems
from kubesched.sim.apiserver.validation.decode import decode_error
from kubesched.sim.apiserver.validation.meta import go_quote
from kubesched.sim.apiserver.validation.pods import drop_disabled_pod_fields
from kubesched.sim.apiserver.validation.scheduling import default_group
from kubesched.sim.scenario.custom import CustomObjectError, is_custom_kind, read_custom
from kubesched.sim.scenario.steps import LIFETIME, STEPS_KIND, TimelineError, parse_steps, seconds

SUPPORTED_KINDS = (
    "Node",
    "Pod",
    "PriorityClass",
    "Namespace",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "StorageClass",
    "CSINode",
    "CSIDriver",
    "CSIStorageCapacity",
    "PodDisruptionBudget",
    "Service",
    "ReplicationController",
    "ReplicaSet",
    "StatefulSet",
    "Deployment",
    "DaemonSet",
    "Job",
    "ConfigMap",
    "Secret",
    "DeviceClass",
    "ResourceSlice",
    "DeviceTaintRule",
    "ResourceClaim",
    "ResourceClaimTemplate",
    "Workload",
    "PodGroup",
    "CompositePodGroup",
)
#: The versions a scenario may give the scheduling.k8s.io kinds (those 1.37 serves); they are
#: kept in their storage version.
WORKLOAD_VERSIONS = {
    "Workload": ("scheduling.k8s.io/v1beta1", "scheduling.k8s.io/v1alpha3"),
    "PodGroup": ("scheduling.k8s.io/v1beta1", "scheduling.k8s.io/v1alpha3"),
    "CompositePodGroup": ("scheduling.k8s.io/v1alpha3",),
}
#: Kinds kept in ``Scenario.others``, in the order they are created: the kinds the scheduler
#: watches besides namespaces, priority classes, nodes and pods, in the order it lists them,
#: then the workloads only the simulated controllers read.
OTHER_KINDS = tuple(k for k in WATCHED_KINDS if k not in ("Namespace", "PriorityClass", "Node", "Pod")) + (
    "ConfigMap",
    "Secret",
    "Deployment",
    "DaemonSet",
    "Job",
    "ResourceClaimTemplate",
    *(k for k in WORKLOAD_VERSIONS if k not in WATCHED_KINDS),
)
_NAMESPACED_OTHERS = frozenset(k for k in OTHER_KINDS if k not in CLUSTER_SCOPED)
_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
_BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
SCENARIO_EPOCH = datetime(2024, 1, 1, tzinfo=UTC)
#: How deeply an object may nest (real manifests nest a dozen levels).
MAX_DEPTH = 100
#: Objects in a scenario or an import (List items and steps' objects included): far above the
#: 5000 nodes and 150,000 pods upstream tests a cluster at, and the openb trace's 1523 nodes and
#: 8152 pods.
MAX_OBJECTS = 1_000_000
#: A scenario file's bounds: size (a million small objects), aliases, depth, integer digits.
SCENARIO_LIMITS = Limits(max_bytes=512 * 1024 * 1024)


class ScenarioError(errors.ScenarioError):
    """A scenario that cannot be loaded; the message names the document and field."""


@dataclass
class Scenario:
    nodes: list[dict[str, Any]] = field(default_factory=list)
    namespaces: list[dict[str, Any]] = field(default_factory=list)
    priority_classes: list[dict[str, Any]] = field(default_factory=list)
    running_pods: list[dict[str, Any]] = field(default_factory=list)
    pending_pods: list[dict[str, Any]] = field(default_factory=list)
    #: StorageClasses, CSINodes, CSIDrivers, CSIStorageCapacities, PersistentVolumes,
    #: PersistentVolumeClaims, PodDisruptionBudgets and the rest, ordered by :data:`OTHER_KINDS` (then document order).
    others: list[dict[str, Any]] = field(default_factory=list)
    source: str = ""
    #: What is legal but probably not meant (an empty scenario, no nodes, a node without
    #: allocatable): said on stderr by the commands that load the scenario.
    warnings: list[str] = field(default_factory=list)
    #: CustomResourceDefinitions (apiextensions.k8s.io/v1), created before anything else
    custom_resource_definitions: list[dict[str, Any]] = field(default_factory=list)
    #: Objects of the scenario's (or a known) CustomResourceDefinitions, pruned, defaulted and
    #: validated against their schema, in their storage version; created after ``others``.
    custom_objects: list[dict[str, Any]] = field(default_factory=list)
    #: Every object above as the scenario holds it, in document order (a step's ``create``).
    objects: list[dict[str, Any]] = field(default_factory=list)
    #: ``kind: Steps`` documents' steps (kubesched.sim.scenario.timeline), each with its objects to
    #: create parsed as a scenario of their own (``step.scenario``; None when it creates nothing).
    steps: list[Any] = field(default_factory=list)

    @property
    def pods(self) -> list[dict[str, Any]]:
        return self.running_pods + self.pending_pods


def load_scenario(path: str | os.PathLike[str], gates: FeatureGates | None = None) -> Scenario:
    """The scenario in a YAML file, read within :data:`SCENARIO_LIMITS`; a :class:`ScenarioError`
    naming the file (and the limit, or the document and field) when it cannot be used. Its pods
    are checked under ``gates`` as :func:`parse_scenario` says."""
    try:
        text = read_text(path, SCENARIO_LIMITS.max_bytes)
    except OSError as exc:
        raise ScenarioError(f"{path}: cannot read scenario: {exc.strerror or exc}") from exc
    except DecodeError as exc:
        raise ScenarioError(f"{path}: {exc}") from None
    try:
        docs = load_yaml_all(text, SCENARIO_LIMITS)
    except yaml.YAMLError as exc:
        raise ScenarioError(f"{path}: not valid YAML: {exc}") from exc
    except DecodeError as exc:
        raise ScenarioError(f"{path}: not valid YAML: {exc}") from None
    # The decoded documents are the loader's own: it lets go of each as it is copied, so that a
    # large file is not held twice at once.
    return parse_scenario(docs, str(path), gates=gates, owned=True)


def count_objects(docs: Iterable[Any]) -> int:
    """How many objects ``docs`` hold: a List's items count, and in a Steps document each step and
    each object it creates, deletes or patches."""
    count = 0
    for doc in docs:
        kind = doc.get("kind") if isinstance(doc, dict) else None
        if kind == "List" and isinstance(doc.get("items"), list):
            count += count_objects(doc["items"])
        elif kind == STEPS_KIND and isinstance(doc.get("steps"), list):
            count += sum(
                1 + sum(len(step[k]) for k in ("create", "delete", "patch") if isinstance(step.get(k), list))
                for step in doc["steps"]
                if isinstance(step, dict)
            )
            count += sum(1 for step in doc["steps"] if not isinstance(step, dict))
        else:
            count += 1
    return count


def parse_scenario(
    docs: Iterable[Any],
    source: str = "",
    known_classes: Iterable[dict[str, Any]] = (),
    known_definitions: Iterable[dict[str, Any]] = (),
    gates: FeatureGates | None = None,
    owned: bool = False,
) -> Scenario:
    """A scenario from its documents; ``known_classes`` are PriorityClasses its pods may name
    besides its own (a step's objects may name the scenario's), ``known_definitions``
    CustomResourceDefinitions whose objects it may hold besides its own. Pods are checked as the
    API server checks them on create under the feature ``gates`` the scenario runs with (1.37's
    defaults when None): with ``gates`` given, the fields of gates that are off are dropped
    first, as kube-apiserver drops them; what a gate refuses is refused either way. With ``owned``
    (a list of documents nobody else reads) each document is let go of once copied into the
    scenario (the list is emptied), so that the decoded file and its copy are never both whole.
    A step's ``create`` is replaced by the objects as its scenario holds them, in their order."""
    docs = docs if owned and isinstance(docs, list) else list(docs)
    sc = Scenario(source=source)
    step_where: list[str] = []
    prefix = f"{source}: " if source else ""
    count = count_objects(docs)
    if count > MAX_OBJECTS:
        raise ScenarioError(f"{prefix}{count} objects, more than the limit of {MAX_OBJECTS}")
    seen: set[tuple[str, str, str]] = set()
    pod_where: dict[int, str] = {}  # id(pod) -> its document, for admission errors
    index = 0
    definitions = CustomResourceRegistry()
    for crd in known_definitions:
        definitions.observe("ADDED", crd)

    def add(obj: Any, where: str) -> None:
        nonlocal index
        if not isinstance(obj, dict):
            raise ScenarioError(f"{prefix}{where}: expected a Kubernetes object (a mapping), got {type(obj).__name__}")
        too_deep = _too_deep(obj)
        if too_deep is not None:
            raise ScenarioError(f"{prefix}{where}{too_deep}: nested more than {MAX_DEPTH} levels deep")
        kind = obj.get("kind")
        if kind == "List":
            items = obj.get("items")
            if items is not None and not isinstance(items, list):
                raise ScenarioError(f"{prefix}{where}.items: must be a list, got {type(items).__name__}")
            for i, item in enumerate(items or ()):
                add(item, f"{where}.items[{i}]")
            return
        if kind == STEPS_KIND:
            try:
                steps = parse_steps(obj, f"{prefix}{where}", len(sc.steps), sc.steps[-1].at if sc.steps else 0.0)
            except TimelineError as exc:
                raise ScenarioError(str(exc)) from None
            step_where.extend(f"{where}.steps[{i}].create" for i in range(len(steps)))
            sc.steps.extend(steps)
            return
        if kind == CRD_KIND or is_custom_kind(obj):
            try:
                custom, ident = read_custom(obj, definitions, f"{prefix}{where}")
            except CustomObjectError as exc:
                raise ScenarioError(str(exc)) from None
            if ident in seen:
                raise ScenarioError(f"{prefix}{where}: duplicate {kind} {'/'.join(p for p in ident[1:] if p)}")
            seen.add(ident)
            if kind == CRD_KIND:
                sc.custom_resource_definitions.append(custom)
            else:
                sc.custom_objects.append(custom)
            sc.objects.append(custom)
            return
        if kind not in SUPPORTED_KINDS:
            raise ScenarioError(
                f"{prefix}{where}.kind: {kind!r} is not supported in scenarios; use one of {', '.join(SUPPORTED_KINDS)}"
            )
        meta = obj.get("metadata")
        if not isinstance(meta, dict) or not meta.get("name"):
            raise ScenarioError(f"{prefix}{where}.metadata.name: Required value ({kind})")
        obj = copy.deepcopy(obj)
        meta = obj["metadata"]
        _check_metadata(meta, f"{prefix}{where}.metadata", kind)
        namespaced = kind == "Pod" or kind in _NAMESPACED_OTHERS
        ns = meta.get("namespace") or "default" if namespaced else ""
        ident = (kind, ns, meta["name"])
        if ident in seen:
            raise ScenarioError(f"{prefix}{where}: duplicate {kind} {(ns + '/') if ns else ''}{meta['name']}")
        seen.add(ident)
        index += 1
        sc.objects.append(obj)
        if kind == "Node":
            _check_mapping(obj, "status", where, prefix, required=False)
            sc.nodes.append(obj)
        elif kind == "Namespace":
            sc.namespaces.append(obj)
        elif kind in OTHER_KINDS:
            if kind in WORKLOAD_VERSIONS:
                _workload_version(obj, kind, f"{prefix}{where}")
            if kind in _NAMESPACED_OTHERS:
                meta["namespace"] = ns
            else:
                meta.pop("namespace", None)
            _check_mapping(obj, "spec", where, prefix, required=kind in ("PersistentVolume", "PersistentVolumeClaim"))
            sc.others.append(obj)
        elif kind == "PriorityClass":
            if not isinstance(obj.get("value"), int):
                raise ScenarioError(f"{prefix}{where}.value: Required value: an integer priority ({meta['name']})")
            sc.priority_classes.append(obj)
        else:
            spec = _check_mapping(obj, "spec", where, prefix, required=True)
            if not isinstance(spec.get("containers"), list) or not spec["containers"]:
                raise ScenarioError(
                    f"{prefix}{where}.spec.containers: Required value: a pod needs at least one container"
                )
            _check_pod_fields(spec, f"{prefix}{where}.spec", f"Pod {ns}/{meta['name']}")
            annotations = meta.get("annotations")
            # Annotations that are no mapping are refused with the object's types, below.
            lifetime = annotations.get(LIFETIME) if isinstance(annotations, dict) else None
            if lifetime is not None:
                try:
                    seconds(lifetime, f"{prefix}{where}.metadata.annotations[{LIFETIME}]")
                except TimelineError as exc:
                    raise ScenarioError(str(exc)) from None
            usage = annotations.get(USAGE_ANNOTATION) if isinstance(annotations, dict) else None
            if usage is not None:
                try:
                    parse_usage_annotation(usage, running_container_names(obj))
                except UsageError as exc:
                    raise ScenarioError(f"{prefix}{where}.{exc}") from None
            pod_where[id(obj)] = f"{prefix}{where}"
            meta["namespace"] = ns
            # Creation times advance one second per pod in document order, so that ordering
            # by creation time is meaningful and runs are reproducible.
            meta.setdefault(
                "creationTimestamp", (SCENARIO_EPOCH + timedelta(seconds=index)).strftime("%Y-%m-%dT%H:%M:%SZ")
            )
            if spec.get("nodeName"):
                obj.setdefault("status", {}).setdefault("phase", "Running")
                sc.running_pods.append(obj)
            else:
                obj.setdefault("status", {}).setdefault("phase", "Pending")
                sc.pending_pods.append(obj)
        # A field of the wrong type is refused as kube-apiserver's decoder words it. A pod's spec
        # is the exception: a pod the scheduler cannot read is reported on that pod (Error) while
        # the others are scheduled, so such a pod goes on as written, skipping the API server's
        # checks below (they read the fields as their types).
        api_version = API_VERSIONS.get(kind, "v1")
        group = api_version.rpartition("/")[0]
        # Strict decoding, as the API server's (and kubectl's default --validate=strict): a
        # misspelt field is refused with its path, never silently ignored.
        unknown = unknown_fields(kind, group, obj)
        if unknown:
            listed = ", ".join(f"unknown field {go_quote(f)}" for f in unknown)
            version = api_version.rpartition("/")[2]
            raise ScenarioError(
                f'{prefix}{where}: {kind} in version "{version}" cannot be handled as a {kind}: '
                f"strict decoding error: {listed} ({kind} {meta['name']})"
            )
        decoding = decode_error(kind, group, {"metadata": meta} if kind == "Pod" else obj)
        if decoding is not None:
            raise ScenarioError(f"{prefix}{where}: {decoding} ({kind} {meta['name']})")
        if kind == "Pod" and decode_error(kind, group, obj) is not None:
            return
        if kind == "Pod" and gates is not None:
            # The pod strategy's dropDisabledFields, before validation as upstream. But for
            # spec.schedulingGroup: without GenericWorkload the scheduler ignores it, and simulate
            # reports how the groups fared pod by pod (what the gate is for).
            drop_disabled_pod_fields(obj.get("spec"), None, gates, scheduling_group=False)
        # What the API server would refuse, refused as it words it (labels, selectors, taints...).
        problems = scheduling_problems(kind, obj, gates)
        if problems:
            raise ScenarioError(f"{prefix}{where}: {'; '.join(problems)} ({kind} {meta['name']})")

    for i, doc in enumerate(docs):
        if doc is None:
            continue
        add(doc, f"document {i + 1}")
        if owned:
            docs[i] = doc = None  # the loop's name would keep the last document alive
    # What admission would refuse (a priorityClassName naming no PriorityClass of the scenario)
    # is refused here, before anything runs, rather than half-way through a simulation.
    classes = {pc["metadata"]["name"]: pc for pc in [*known_classes, *sc.priority_classes]}
    for pod in sc.pods:
        try:
            admit_pod(copy.deepcopy(pod), classes)
        except ScenarioError as exc:
            raise ScenarioError(f"{pod_where[id(pod)]}: {exc}") from None
    order = {k: i for i, k in enumerate(OTHER_KINDS)}
    sc.others.sort(key=lambda o: order[o["kind"]])
    _settle_storage(sc.others)
    for step, where in zip(sc.steps, step_where, strict=True):
        if step.create:  # a step that only patches or deletes has no scenario (None)
            where = f"{source} {where}".strip()
            step.scenario = parse_scenario(step.create, where, classes.values(), sc.custom_resource_definitions, gates)
            step.create = step.scenario.objects
    sc.warnings = _warnings(sc)
    return sc


def object_problem(obj: dict[str, Any], store: Any, gates: FeatureGates | None = None) -> str | None:
    """Why this loader would refuse ``obj`` as the one object of a scenario, or None: what a
    step's patch is checked against before it is applied. The PriorityClasses and
    CustomResourceDefinitions of ``store`` are known."""
    classes, _ = store.list("PriorityClass")
    definitions, _ = store.list(CRD_KIND)
    try:
        parse_scenario([obj], "", classes, definitions, gates)
    except ScenarioError as exc:
        text = str(exc)
        return text[len("document 1") :].lstrip(".: ") if text.startswith("document 1") else text
    return None


def _workload_version(obj: dict[str, Any], kind: str, where: str) -> None:
    """A scheduling.k8s.io kind in a version 1.37 serves, kept in its storage version."""
    versions = WORKLOAD_VERSIONS[kind]
    given = obj.get("apiVersion") or versions[0]
    if given not in versions:
        listed = ", ".join(f'"{v}"' for v in versions)
        raise ScenarioError(
            f"{where}.apiVersion: Unsupported value: {go_quote(str(given))}: supported values for {kind}: {listed}"
        )
    obj["apiVersion"] = API_VERSIONS[kind]
    if kind != "Workload":
        default_group(obj)


def _warnings(sc: Scenario) -> list[str]:
    where = f"{sc.source}: " if sc.source else ""
    if not (sc.nodes or sc.pods or sc.others or sc.namespaces or sc.priority_classes or sc.steps):
        return [f"{where}the scenario is empty: there is nothing to schedule"]
    out = []
    if not sc.nodes and not any(step.scenario is not None and step.scenario.nodes for step in sc.steps):
        out.append(f"{where}the scenario has no nodes: every pod will be unschedulable")
    for node in sc.nodes:
        status = node.get("status") or {}
        if not status.get("allocatable") and not status.get("capacity"):
            out.append(
                f"{where}Node {node['metadata']['name']}: no status.allocatable (nor status.capacity): "
                "it can run no pod"
            )
    return out


def _settle_storage(objs: list[dict[str, Any]]) -> None:
    """Apply the API server's defaults to storage objects, then the PV controller's binding: a
    claim whose ``volumeName`` names an existing volume is bound to it (both ways), volumes
    claimed by nobody are Available. Values the scenario sets are kept."""
    pvs = {o["metadata"]["name"]: o for o in objs if o["kind"] == "PersistentVolume"}
    for o in objs:
        kind = o["kind"]
        if kind == "StorageClass":
            o.setdefault("reclaimPolicy", "Delete")
            o.setdefault("volumeBindingMode", "Immediate")
        elif kind == "PersistentVolume":
            o["spec"].setdefault("persistentVolumeReclaimPolicy", "Retain")
            o["spec"].setdefault("volumeMode", "Filesystem")
        elif kind == "PersistentVolumeClaim":
            o["spec"].setdefault("volumeMode", "Filesystem")
    for o in objs:
        if o["kind"] != "PersistentVolumeClaim":
            continue
        pv = pvs.get(o["spec"].get("volumeName") or "")
        if pv is None:
            o.setdefault("status", {}).setdefault("phase", "Pending")
            continue
        meta = o["metadata"]
        ref = pv["spec"].get("claimRef")
        if ref and (ref.get("name") != meta["name"] or (ref.get("namespace") or "default") != meta["namespace"]):
            o.setdefault("status", {}).setdefault("phase", "Pending")
            continue
        if not ref:
            pv["spec"]["claimRef"] = {
                "kind": "PersistentVolumeClaim",
                "apiVersion": "v1",
                "namespace": meta["namespace"],
                "name": meta["name"],
            }
            pv["metadata"].setdefault("annotations", {}).setdefault(_BOUND_BY_CONTROLLER, "yes")
        meta.setdefault("annotations", {}).setdefault(_BIND_COMPLETED, "yes")
        status = o.setdefault("status", {})
        status.setdefault("phase", "Bound")
        if pv["spec"].get("accessModes"):
            status.setdefault("accessModes", list(pv["spec"]["accessModes"]))
        if pv["spec"].get("capacity"):
            status.setdefault("capacity", dict(pv["spec"]["capacity"]))
        pv.setdefault("status", {}).setdefault("phase", "Bound")
    for pv in pvs.values():
        pv.setdefault("status", {}).setdefault("phase", "Bound" if pv["spec"].get("claimRef") else "Available")


def _check_mapping(obj: dict[str, Any], key: str, where: str, prefix: str, required: bool) -> dict[str, Any]:
    value = obj.get(key)
    if value is None:
        if required:
            raise ScenarioError(f"{prefix}{where}.{key}: Required value ({obj['kind']} {obj['metadata']['name']})")
        return {}
    if not isinstance(value, dict):
        raise ScenarioError(f"{prefix}{where}.{key}: must be a mapping ({obj['kind']} {obj['metadata']['name']})")
    return value


def _too_deep(obj: Any) -> str | None:
    """The path (``.spec.affinity...``) where ``obj`` nests deeper than :data:`MAX_DEPTH`, if it
    does. Iterative: the objects are copied and read recursively afterwards, so they must be
    shallow enough for that."""
    stack: list[tuple[Any, str, int]] = [(obj, "", 0)]
    while stack:
        value, path, depth = stack.pop()
        if not isinstance(value, dict | list):
            continue
        if depth >= MAX_DEPTH:
            return path
        items = value.items() if isinstance(value, dict) else enumerate(value)
        stack.extend((v, f"{path}[{k}]" if isinstance(value, list) else f"{path}.{k}", depth + 1) for k, v in items)
    return None


def _require_string(value: Any, path: str, what: str) -> None:
    if not isinstance(value, str):
        got = "null" if value is None else type(value).__name__
        raise ScenarioError(f"{path}: must be a string, got {got} ({what})")


def _check_metadata(meta: dict[str, Any], path: str, kind: str) -> None:
    """What is read before the object's types are checked: its name and namespace (an object's
    identity). An unquoted YAML timestamp becomes the API's RFC 3339 string, in place."""
    _require_string(meta["name"], f"{path}.name", kind)
    if meta.get("namespace") is not None:
        _require_string(meta["namespace"], f"{path}.namespace", f"{kind} {meta['name']}")
    created = meta.get("creationTimestamp")
    if isinstance(created, datetime):
        when = created if created.tzinfo else created.replace(tzinfo=UTC)
        meta["creationTimestamp"] = when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _check_pod_fields(spec: dict[str, Any], path: str, what: str) -> None:
    """The pod fields the simulator and admission read before the scheduler does (profile, node,
    priority): of the wrong type, the pod could not even be created."""
    for key in ("schedulerName", "nodeName", "priorityClassName", "preemptionPolicy"):
        if spec.get(key) is not None:
            _require_string(spec[key], f"{path}.{key}", what)
    priority = spec.get("priority")
    if priority is not None and (isinstance(priority, bool) or not isinstance(priority, int)):
        raise ScenarioError(f"{path}.priority: must be an integer, got {type(priority).__name__} ({what})")


def admit_pod(pod: dict[str, Any], priority_classes: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """What the API server's admission would do to a pod: resolve its priority class.

    Raises :class:`ScenarioError` for a priorityClassName that does not exist, as the API
    server refuses such a pod.
    """
    spec = pod["spec"]
    spec.setdefault("schedulerName", "default-scheduler")
    name = spec.get("priorityClassName")
    pc: dict[str, Any] | None = None
    if name:
        pc = priority_classes.get(name)
        if pc is None:
            raise ScenarioError(
                f"pod {pod['metadata'].get('namespace', 'default')}/{pod['metadata']['name']}: spec.priorityClassName: "
                f"no PriorityClass with name {name} was found"
            )
    else:
        pc = next((p for p in priority_classes.values() if p.get("globalDefault")), None)
    if pc is not None and "priority" in spec and name and int(spec["priority"]) != int(pc["value"]):
        raise ScenarioError(
            f"pod {pod['metadata'].get('namespace', 'default')}/{pod['metadata']['name']}: spec.priority: Forbidden: "
            f"the integer value of priority ({spec['priority']}) must not be provided in pod spec; priority admission "
            f"controller computed {pc['value']} from the given PriorityClass name"
        )
    if pc is not None and "priority" not in spec:
        spec["priority"] = int(pc["value"])
        if pc.get("preemptionPolicy") and "preemptionPolicy" not in spec:
            spec["preemptionPolicy"] = pc["preemptionPolicy"]
    return pod
