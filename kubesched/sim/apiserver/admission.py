"""What the API server does to an object between decoding and storing it: defaulting,
admission (priority, default tolerations), validation, and the strategies that keep ``status``
and ``spec`` apart on the main resource and its status subresource.

Also the conversion between the two Event APIs: Events are stored in their core/v1 form and
served through events.k8s.io/v1 converted field by field, as upstream converts them.
"""

from __future__ import annotations

import base64
import copy
import re
from typing import Any

from kubesched.cluster.store import json_copy
from kubesched.framework.features import FeatureGates
from kubesched.framework.resources import QuantityError, parse_quantity
from kubesched.objects import Obj
from kubesched.sim.apiserver.errors import forbidden, invalid
from kubesched.sim.apiserver.validation import dra, storage
from kubesched.sim.apiserver.validation import scheduling as workloads
from kubesched.sim.apiserver.validation.core import validate_node_spec, validate_pod_scheduling, validate_tolerations
from kubesched.sim.apiserver.validation.meta import quote, validate_object_meta, validate_object_meta_update
from kubesched.sim.apiserver.validation.pods import (
    drop_disabled_pod_fields,
    pod_validation_options,
    validate_container_restart_policies,
)
from kubesched.sim.apiserver.validation.resources import (
    default_pod_requests,
    qos_class,
    resize_view,
    resources_changed,
    validate_pod_resize,
    validate_pod_resources,
)

Cause = tuple[str, str, str]

_DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
#: The namespaces every cluster has.
DEFAULT_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
#: The priority classes every cluster has: (name, value).
SYSTEM_PRIORITY_CLASSES = (("system-node-critical", 2000001000), ("system-cluster-critical", 2000000000))
_HAS_STATUS_SUBRESOURCE = frozenset(
    {
        "Pod",
        "Node",
        "Namespace",
        "Deployment",
        "ReplicaSet",
        "StatefulSet",
        "DaemonSet",
        "Job",
        "ReplicationController",
        "DeviceTaintRule",
        "PodGroup",
        "CompositePodGroup",
    }
)
#: The scheduling.k8s.io kinds of workload-aware scheduling (1.37).
WORKLOAD_KINDS = frozenset({"Workload", "PodGroup", "CompositePodGroup"})
_IGNORED_META_ON_WRITE = ("uid", "resourceVersion", "creationTimestamp", "deletionTimestamp", "selfLink")


# --- pods ---------------------------------------------------------------------------------------


def _image_pull_policy(image: str) -> str:
    ref = image.rsplit("/", 1)[-1]
    if "@" in ref:
        return "IfNotPresent"
    tag = ref.split(":", 1)[1] if ":" in ref else ""
    return "Always" if tag in ("", "latest") else "IfNotPresent"


def _default_container(c: Obj) -> None:
    if isinstance(c.get("image"), str) and c["image"]:
        c.setdefault("imagePullPolicy", _image_pull_policy(c["image"]))
    c.setdefault("terminationMessagePath", "/dev/termination-log")
    c.setdefault("terminationMessagePolicy", "File")
    res = c.setdefault("resources", {})
    if isinstance(res, dict):
        limits = res.get("limits") or {}
        if limits:
            # Requests default to limits for every resource that has a limit and no request.
            if not isinstance(res.get("requests"), dict):
                res["requests"] = {}
            requests = res["requests"]
            for name, value in limits.items():
                requests.setdefault(name, value)
    for p in c.get("ports") or ():
        if isinstance(p, dict):
            p.setdefault("protocol", "TCP")


def _q(v: Any) -> Any:
    try:
        return parse_quantity(v)
    except (QuantityError, TypeError, ValueError):
        return v


def _validate_containers(spec: Obj, field: str, required: bool) -> list[Cause]:
    causes: list[Cause] = []
    items = spec.get(field)
    if items is None or items == []:
        if required:
            causes.append((f"spec.{field}", "FieldValueRequired", "Required value"))
        return causes
    if not isinstance(items, list):
        return [(f"spec.{field}", "FieldValueInvalid", "Invalid value: must be a list")]
    seen: set[str] = set()
    for i, c in enumerate(items):
        path = f"spec.{field}[{i}]"
        if not isinstance(c, dict):
            causes.append((path, "FieldValueInvalid", "Invalid value: must be an object"))
            continue
        name = c.get("name")
        if not name:
            causes.append((f"{path}.name", "FieldValueRequired", "Required value"))
        elif not _DNS1123_LABEL.match(str(name)):
            causes.append(
                (
                    f"{path}.name",
                    "FieldValueInvalid",
                    f"Invalid value: {quote(str(name))}: a lowercase RFC 1123 label must "
                    "consist of lower case alphanumeric characters or '-', and must start and end with an "
                    "alphanumeric character",
                )
            )
        elif name in seen:
            causes.append((f"{path}.name", "FieldValueDuplicate", f"Duplicate value: {quote(str(name))}"))
        else:
            seen.add(str(name))
        if not c.get("image"):
            causes.append((f"{path}.image", "FieldValueRequired", "Required value"))
        res = c.get("resources") or {}
        req, lim = res.get("requests") or {}, res.get("limits") or {}
        for section, values in (("requests", req), ("limits", lim)):
            for rname, value in values.items():
                try:
                    negative = parse_quantity(value) < 0
                except (QuantityError, TypeError, ValueError):
                    causes.append(
                        (
                            f"{path}.resources.{section}[{rname}]",
                            "FieldValueInvalid",
                            f'Invalid value: "{value}": quantities must match the regular expression '
                            "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
                        )
                    )
                    continue
                if negative:
                    causes.append(
                        (
                            f"{path}.resources.{section}[{rname}]",
                            "FieldValueInvalid",
                            f'Invalid value: "{value}": must be greater than or equal to 0',
                        )
                    )
        for rname, value in req.items():
            if rname in lim and _comparable(value, lim[rname]) and _q(value) > _q(lim[rname]):
                causes.append(
                    (
                        f"{path}.resources.requests",
                        "FieldValueInvalid",
                        f'Invalid value: "{value}": must be less than or equal to {rname} limit of {lim[rname]}',
                    )
                )
    return causes


def _comparable(a: Any, b: Any) -> bool:
    try:
        parse_quantity(a)
        parse_quantity(b)
        return True
    except (QuantityError, TypeError, ValueError):
        return False


def admit_new_pod(pod: Obj, priority_classes: dict[str, Obj], gates: FeatureGates | None = None) -> Obj:
    """Default, admit and validate a pod being created (under ``gates``, 1.37's defaults when
    None); raises :class:`APIError`. With ``gates`` given, fields of gates that are off are
    dropped first, as upstream drops them (:func:`.validation.pods.drop_disabled_pod_fields`:
    ``spec.schedulingGroup`` without GenericWorkload, restart rules without
    ContainerRestartRules, ...); without, none is. What the gates refuse instead (``Lt``/``Gt``
    tolerations, the RestartAllContainers action) follows ``gates`` either way."""
    meta = pod["metadata"]
    name = meta.get("name") or meta.get("generateName") or ""
    spec = pod.get("spec")
    if not isinstance(spec, dict):
        raise invalid("Pod", "", name, [("spec.containers", "FieldValueRequired", "Required value")])
    if gates is not None:
        drop_disabled_pod_fields(spec, None, gates)
    opts = pod_validation_options(gates)
    default_pod_requests(spec)
    causes = validate_object_meta(meta)
    causes += workloads.validate_pod_scheduling_group(spec)
    causes += _validate_containers(spec, "containers", required=True)
    causes += _validate_containers(spec, "initContainers", required=False)
    causes += validate_container_restart_policies(spec, opts)
    causes += validate_pod_scheduling(spec, comparison_operators=opts.comparison_operators)
    if opts.pod_level_resources:
        causes += validate_pod_resources(spec)
    if causes:
        raise invalid("Pod", "", name, causes)

    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("securityContext", {})
    spec.setdefault("enableServiceLinks", True)
    for field in ("containers", "initContainers"):
        for c in spec.get(field) or ():
            _default_container(c)

    # Priority admission: resolve the class (or the global default) into spec.priority.
    pc_name = spec.get("priorityClassName")
    pc: Obj | None
    if pc_name:
        pc = priority_classes.get(pc_name)
        if pc is None:
            raise forbidden("pods", "", name, f"no PriorityClass with name {pc_name} was found")
    else:
        pc = next((p for p in priority_classes.values() if p.get("globalDefault")), None)
        if pc is not None:
            spec["priorityClassName"] = pc["metadata"]["name"]
    value = int(pc["value"]) if pc is not None else 0
    if "priority" in spec and spec["priority"] is not None and int(spec["priority"]) != value:
        raise forbidden(
            "pods",
            "",
            name,
            f"the integer value of priority ({spec['priority']}) must not be provided in pod spec; priority "
            f"admission controller computed {value} from the given PriorityClass name",
        )
    spec["priority"] = value
    spec.setdefault("preemptionPolicy", (pc or {}).get("preemptionPolicy") or "PreemptLowerPriority")

    # DefaultTolerationSeconds admission: tolerate not-ready/unreachable nodes for five minutes.
    if not isinstance(spec.get("tolerations"), list):
        spec["tolerations"] = []
    tolerations = spec["tolerations"]
    for key in ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"):
        if not any(t.get("key") == key and t.get("effect") in (None, "", "NoExecute") for t in tolerations):
            tolerations.append({"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300})

    status: Obj = {"phase": "Pending", "qosClass": qos_class(spec)}
    if spec.get("schedulingGates"):
        status["conditions"] = [
            {
                "type": "PodScheduled",
                "status": "False",
                "reason": "SchedulingGated",
                "message": "Scheduling is blocked due to non-empty scheduling gates",
                "lastProbeTime": None,
                "lastTransitionTime": None,
            }
        ]
    pod["status"] = status
    return pod


# --- other kinds --------------------------------------------------------------------------------


#: Spec fields the API server defaults on create, per workload kind.
WORKLOAD_DEFAULTS: dict[str, Obj] = {
    "Deployment": {
        "replicas": 1,
        "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}},
        "revisionHistoryLimit": 10,
        "progressDeadlineSeconds": 600,
    },
    "ReplicaSet": {"replicas": 1},
    "StatefulSet": {"replicas": 1, "podManagementPolicy": "OrderedReady"},
    "Job": {"parallelism": 1, "completions": 1, "backoffLimit": 6, "completionMode": "NonIndexed", "suspend": False},
}


def admit_new(
    kind: str, group: str, obj: Obj, priority_classes: dict[str, Obj], gates: FeatureGates | None = None
) -> Obj:
    """Defaulting and validation on create, by kind, under the API server's feature ``gates``
    (1.37's defaults when not given, except that a pod's gated fields are then kept)."""
    meta = obj["metadata"]
    for k in _IGNORED_META_ON_WRITE:
        meta.pop(k, None)
    if kind == "Pod":
        return admit_new_pod(obj, priority_classes, gates)
    name = meta.get("name") or meta.get("generateName") or ""
    if kind in WORKLOAD_KINDS and group == "scheduling.k8s.io":
        _admit_workload_kind(kind, obj, None, gates or FeatureGates())
        return obj
    if kind == "Namespace":
        causes = validate_object_meta(meta, subdomain_name=False)
        if causes:
            raise invalid(kind, group, name, causes)
        if not isinstance(meta.get("labels"), dict):
            meta["labels"] = {}
        meta["labels"]["kubernetes.io/metadata.name"] = meta["name"]
        if not isinstance(obj.get("spec"), dict):
            obj["spec"] = {}
        obj["spec"].setdefault("finalizers", ["kubernetes"])
        obj["status"] = {"phase": "Active"}
    elif kind in WORKLOAD_DEFAULTS:
        causes = validate_object_meta(meta)
        if causes:
            raise invalid(kind, group, name, causes)
        # The defaults the API server gives these kinds on create (the few the simulated
        # controllers and kubectl's columns read).
        spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else None
        if spec is not None:
            for key, value in WORKLOAD_DEFAULTS[kind].items():
                if spec.get(key) in (None, {}):
                    spec[key] = copy.deepcopy(value)
    elif kind == "Secret":
        causes = validate_object_meta(meta)
        if causes:
            raise invalid(kind, group, name, causes)
        # As the API server stores them: stringData merged into data (base64), type defaulted.
        string_data = obj.pop("stringData", None)
        if isinstance(string_data, dict):
            data = obj["data"] = dict(obj.get("data") or {})
            for key, value in string_data.items():
                data[key] = base64.b64encode(str(value).encode()).decode()
        obj.setdefault("type", "Opaque")
    elif kind == "PriorityClass":
        causes = validate_object_meta(meta)
        if not isinstance(obj.get("value"), int) or isinstance(obj.get("value"), bool):
            causes.append(("value", "FieldValueRequired", "Required value"))
        elif obj["value"] > 1_000_000_000 and not str(meta.get("name", "")).startswith("system-"):
            causes.append(
                (
                    "value",
                    "FieldValueForbidden",
                    "Forbidden: maximum allowed value of a user defined priority is 1000000000",
                )
            )
        if causes:
            raise invalid(kind, group, name, causes)
        obj.setdefault("preemptionPolicy", "PreemptLowerPriority")
        if obj.get("globalDefault"):
            other = next(
                (
                    p
                    for p in priority_classes.values()
                    if p.get("globalDefault") and p["metadata"]["name"] != meta["name"]
                ),
                None,
            )
            if other is not None:
                raise invalid(
                    kind,
                    group,
                    name,
                    [
                        (
                            "globalDefault",
                            "FieldValueForbidden",
                            f"Forbidden: PriorityClass {other['metadata']['name']} is already marked as default. "
                            "Only one default can exist",
                        )
                    ],
                )
    else:
        causes = validate_object_meta(meta)
        if kind == "Node":
            causes += validate_node_spec(obj.get("spec"))
        elif group == "resource.k8s.io":
            causes += _admit_dra(kind, obj)
        elif group == "storage.k8s.io":
            causes += _admit_storage(kind, obj)
        if causes:
            raise invalid(kind, group, name, causes)
        if kind == "Node" and not isinstance(obj.get("spec"), dict):
            obj["spec"] = {}
        elif kind == "Event":
            obj.setdefault("count", 1)
    return obj


def _admit_dra(kind: str, obj: Obj, old: Obj | None = None) -> list[Cause]:
    """resource.k8s.io/v1 defaulting and validation (:mod:`.validation.dra`), on create and on
    an update of the main resource."""
    spec = obj.get("spec")
    if kind == "DeviceTaintRule":
        dra.default_device_taint_rule(obj, old)
        return dra.validate_device_taint_rule(obj, old)
    if kind == "ResourceSlice":
        return dra.validate_resource_slice(obj)
    if kind == "DeviceClass":
        return dra.validate_device_class(obj)
    if kind == "ResourceClaim":
        if old is not None:
            return []  # the spec is immutable; the scheduler writes only the status
        dra.default_claim_spec(spec)
        return dra.validate_claim_spec(spec)
    if kind == "ResourceClaimTemplate" and isinstance(spec, dict):
        dra.default_claim_spec(spec.get("spec"))
        return dra.validate_claim_spec(spec.get("spec"), "spec.spec")
    return []


def _admit_workload_kind(kind: str, obj: Obj, old: Obj | None, gates: FeatureGates) -> None:
    """Workload, PodGroup, CompositePodGroup: the strategy's dropping and defaulting, then
    validation (:mod:`.validation.scheduling`), on create (``old`` None) or an update of the
    main resource."""
    meta = obj["metadata"]
    name = meta.get("name") or meta.get("generateName") or ""
    workloads.drop_disabled_fields(kind, obj, old, gates)
    causes = validate_object_meta(meta) if old is None else []
    if kind == "Workload":
        if not isinstance(obj.get("spec"), dict):
            causes.append(("spec", "FieldValueRequired", "Required value"))
        elif old is None:
            causes += workloads.validate_workload(obj, gates)
        else:
            causes += workloads.validate_workload_update(obj, old, gates)
    else:
        if old is None:
            workloads.default_group(obj)
            if kind == "PodGroup" and gates.enabled("GenericWorkload"):
                # The PodGroupProtection admission plugin: the group stays while pods name it.
                finalizers = list(meta.get("finalizers") or ())
                if workloads.PROTECTION_FINALIZER not in finalizers:
                    meta["finalizers"] = [*finalizers, workloads.PROTECTION_FINALIZER]
            check = workloads.validate_pod_group if kind == "PodGroup" else workloads.validate_composite_pod_group
            causes += check(obj, gates)
        else:
            causes += workloads.validate_group_update(kind, obj, old, gates)
        if old is None:
            # The status is the status subresource's: a new group starts without one.
            obj.pop("status", None)
    if old is None:
        meta["generation"] = 1
    else:
        # The strategies' PrepareForUpdate: one generation more for each change of the spec.
        generation = (old.get("metadata") or {}).get("generation") or 1
        meta["generation"] = generation + 1 if obj.get("spec") != old.get("spec") else generation
    if causes:
        raise invalid(kind, "scheduling.k8s.io", name, causes)


def _admit_storage(kind: str, obj: Obj, old: Obj | None = None) -> list[Cause]:
    """storage.k8s.io/v1 defaulting and validation of the CSI kinds the scheduler reads
    (:mod:`.validation.storage`), on create and on an update."""
    if kind == "CSIDriver":
        storage.default_csi_driver(obj)
        return storage.validate_csi_driver(obj, old)
    if kind == "CSIStorageCapacity":
        return storage.validate_csi_storage_capacity(obj, old)
    return []


def prepare_update(kind: str, old: Obj, new: Obj, subresource: str) -> Obj:
    """Keep the half of the object the endpoint does not own: the main resource ignores
    ``status`` changes and the status subresource ignores everything but ``status``; a pod's
    ``resize`` subresource takes only its containers' and its pod-level resources."""
    if kind == "Pod" and subresource == "resize":
        return resize_view(old, new)
    if kind not in _HAS_STATUS_SUBRESOURCE:
        return new
    if subresource == "status":
        result = copy.deepcopy(old)
        result["status"] = new.get("status") or {}
        result["metadata"]["resourceVersion"] = (new.get("metadata") or {}).get("resourceVersion")
        return result
    if "status" in old:
        new["status"] = copy.deepcopy(old["status"])
    else:
        new.pop("status", None)
    return new


def validate_update(
    kind: str, group: str, old: Obj, new: Obj, subresource: str = "", gates: FeatureGates | None = None
) -> None:
    """The immutable parts of objects, refused with 422 when changed, and the fields an update may
    change validated as on create (labels, annotations, tolerations, taints); a pod's resize as
    ValidatePodResize has it, and the resized pod as a pod."""
    name = old["metadata"]["name"]
    if kind in WORKLOAD_KINDS and group == "scheduling.k8s.io":
        causes = validate_object_meta_update(new.get("metadata") or {})
        if causes:
            raise invalid(kind, group, name, causes)
        if subresource == "status":
            causes = workloads.validate_group_status(kind, new)
            if causes:
                raise invalid(kind, group, name, causes)
        else:
            _admit_workload_kind(kind, new, old, gates or FeatureGates())
        return
    if kind == "Pod" and subresource == "resize":
        spec = new.get("spec") or {}
        opts = pod_validation_options(gates, old.get("spec") or {})
        causes = validate_pod_resize(old, new, pod_level_resize=opts.pod_level_resize)
        if not causes:
            causes = _validate_containers(spec, "containers", required=True)
            causes += _validate_containers(spec, "initContainers", required=False)
            causes += validate_container_restart_policies(spec, opts)
            if opts.pod_level_resources:
                causes += validate_pod_resources(spec)
        if causes:
            raise invalid(kind, group, name, causes)
        return
    causes = validate_object_meta_update(new.get("metadata") or {})
    if kind == "Pod":
        old_spec = old.get("spec") or {}
        if gates is not None:
            # The pod strategy's PrepareForUpdate: gated fields the stored pod does not use.
            drop_disabled_pod_fields(new.get("spec"), old_spec, gates)
        opts = pod_validation_options(gates, old_spec)
        new_spec = new.get("spec") or {}
        causes += validate_tolerations(new_spec.get("tolerations"), comparison_operators=opts.comparison_operators)
        if subresource != "status":
            causes += validate_container_restart_policies(new_spec, opts)
    elif kind == "Node":
        causes += validate_node_spec(new.get("spec"))
    elif group == "resource.k8s.io":
        if subresource == "status":
            if kind == "DeviceTaintRule":
                causes += dra.validate_device_taint_rule_status(new)
            elif kind == "ResourceClaim":
                causes += dra.validate_claim_status(new.get("status"))
        else:
            causes += _admit_dra(kind, new, old)
            if kind == "ResourceSlice":
                causes += _immutable_slice_fields(old, new)
    elif group == "storage.k8s.io":
        causes += _admit_storage(kind, new, old)
    if causes:
        raise invalid(kind, group, name, causes)
    if kind == "Pod":
        old_node = (old.get("spec") or {}).get("nodeName")
        new_node = (new.get("spec") or {}).get("nodeName")
        # spec.schedulingGroup is immutable: as any other field outside the mutable few.
        group_changed = (old.get("spec") or {}).get("schedulingGroup") != (new.get("spec") or {}).get("schedulingGroup")
        if (
            (old_node != new_node and old_node)
            or group_changed
            or resources_changed(old.get("spec") or {}, new.get("spec") or {})
        ):
            raise invalid(
                kind,
                group,
                name,
                [
                    (
                        "spec",
                        "FieldValueForbidden",
                        "Forbidden: pod updates may not change fields other than "
                        "`spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,"
                        "`spec.tolerations` (only additions to existing tolerations),"
                        "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
                    )
                ],
            )
        causes = _validate_containers(new.get("spec") or {}, "containers", required=True)
        if causes:
            raise invalid(kind, group, name, causes)
    if kind == "PriorityClass" and old.get("value") != new.get("value"):
        raise invalid(
            kind, group, name, [("value", "FieldValueForbidden", "Forbidden: may not be changed in an update.")]
        )


def _immutable_slice_fields(old: Obj, new: Obj) -> list[Cause]:
    """A ResourceSlice keeps its driver, pool name and node name for life."""
    causes: list[Cause] = []
    old_spec, new_spec = old.get("spec") or {}, new.get("spec") or {}
    for path, before, after in (
        ("spec.pool.name", (old_spec.get("pool") or {}).get("name"), (new_spec.get("pool") or {}).get("name")),
        ("spec.driver", old_spec.get("driver"), new_spec.get("driver")),
        ("spec.nodeName", old_spec.get("nodeName"), new_spec.get("nodeName")),
    ):
        if before != after:
            causes.append((path, "FieldValueInvalid", f"Invalid value: {quote(after or '')}: field is immutable"))
    return causes


# --- events -------------------------------------------------------------------------------------

_MOVED_TO_EVENTS_V1 = {
    "message": "note",
    "involvedObject": "regarding",
    "source": "deprecatedSource",
    "firstTimestamp": "deprecatedFirstTimestamp",
    "lastTimestamp": "deprecatedLastTimestamp",
    "count": "deprecatedCount",
    "reportingComponent": "reportingController",
}
_SHARED_EVENT_FIELDS = ("metadata", "reason", "type", "action", "related", "series", "eventTime", "reportingInstance")


def event_core_view(core: Obj) -> Obj:
    """A stored Event as core/v1 serves it: as the API server converts an events.k8s.io/v1
    Event, ``count`` and ``lastTimestamp`` come from its series; timestamps never set are
    ``null``, not absent (Go writes a zero time as ``null``), which is what lets
    ``kubectl get events --sort-by=.lastTimestamp`` sort events a scheduler wrote."""
    out = {**core, "kind": "Event", "apiVersion": "v1"}
    series = core.get("series") or {}
    if series.get("count") and not out.get("count"):
        out["count"] = series["count"]
    if series.get("lastObservedTime") and not out.get("lastTimestamp"):
        out["lastTimestamp"] = series["lastObservedTime"]
    for key in ("firstTimestamp", "lastTimestamp", "eventTime"):
        out.setdefault(key, None)
    return out


def event_to_v1(core: Obj) -> Obj:
    """A stored core/v1 Event as events.k8s.io/v1 serves it."""
    out: Obj = {"kind": "Event", "apiVersion": "events.k8s.io/v1"}
    for k in _SHARED_EVENT_FIELDS:
        if k in core:
            out[k] = json_copy(core[k])
    for old, new in _MOVED_TO_EVENTS_V1.items():
        if core.get(old) not in (None, "", {}):
            out[new] = json_copy(core[old])
    if not out.get("reportingController") and (core.get("source") or {}).get("component"):
        out["reportingController"] = core["source"]["component"]
    if not out.get("eventTime"):
        # eventTime is required in events.k8s.io/v1; older core Events only carry timestamps.
        first = core.get("firstTimestamp") or (core.get("metadata") or {}).get("creationTimestamp")
        if isinstance(first, str) and first.endswith("Z") and "." not in first:
            first = first[:-1] + ".000000Z"
        out["eventTime"] = first
    return out


def event_from_v1(ev: Obj) -> Obj:
    """An events.k8s.io/v1 Event in its stored core/v1 form."""
    out: Obj = {"kind": "Event", "apiVersion": "v1"}
    for k in _SHARED_EVENT_FIELDS:
        if k in ev:
            out[k] = json_copy(ev[k])
    for old, new in _MOVED_TO_EVENTS_V1.items():
        if ev.get(new) not in (None, "", {}):
            out[old] = json_copy(ev[new])
    series = ev.get("series") or {}
    if "count" not in out and series.get("count"):
        out["count"] = series["count"]
    if "source" not in out and ev.get("reportingController"):
        out["source"] = {"component": ev["reportingController"]}
        if ev.get("reportingInstance"):
            out["source"]["host"] = ev["reportingInstance"]
    if "lastTimestamp" not in out and series.get("lastObservedTime"):
        out["lastTimestamp"] = series["lastObservedTime"]
    out.setdefault("involvedObject", {})
    return out


def validate_event_v1(ev: Obj, name: str) -> None:
    causes: list[Cause] = []
    for f in ("reportingController", "reportingInstance", "action", "reason"):
        if not ev.get(f):
            causes.append((f, "FieldValueRequired", "Required value"))
    if not ev.get("eventTime"):
        causes.append(("eventTime", "FieldValueRequired", "Required value"))
    if ev.get("type") not in ("Normal", "Warning"):
        causes.append(
            (
                "type",
                "FieldValueNotSupported",
                f'Unsupported value: "{ev.get("type", "")}": supported values: "Normal", "Warning"',
            )
        )
    if causes:
        raise invalid("Event", "events.k8s.io", name, causes)
