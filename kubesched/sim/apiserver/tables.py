"""Server-side printing: ``meta.k8s.io/v1`` Tables with the columns ``kubectl get`` shows.

kubectl asks for a Table and prints its cells verbatim; columns with ``priority`` above zero
appear only with ``-o wide``. The columns follow upstream's printers for each kind.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from kubesched.cluster.custom_resources import CustomVersion
from kubesched.objects import Obj
from kubesched.sim.apiserver.discovery import ServedResource

Column = tuple[str, str, int, Callable[[Obj], Any]]  # (name, type, priority, cell)

NONE = "<none>"


def wants_table(accept: str) -> bool:
    return any("as=Table" in part and "g=meta.k8s.io" in part for part in accept.split(","))


def _parse_time(value: Any) -> datetime | None:
    if not value or not isinstance(value, str):
        return None
    text = value.replace("Z", "+00:00")
    try:
        t = datetime.fromisoformat(text)
    except ValueError:
        return None
    return t if t.tzinfo else t.replace(tzinfo=UTC)


def human_duration(seconds: float) -> str:
    """Upstream's short age format: 45s, 3m20s, 15m, 5h3m, 30h, 6d4h, 60d, 3y20d, 9y."""
    if seconds < -1:
        return "<invalid>"
    s = max(0, int(seconds))
    if s < 120:
        return f"{s}s"
    m = s // 60
    if m < 10:
        return f"{m}m{s % 60}s" if s % 60 else f"{m}m"
    if m < 180:
        return f"{m}m"
    h = m // 60
    if h < 8:
        return f"{h}h{m % 60}m" if m % 60 else f"{h}h"
    if h < 48:
        return f"{h}h"
    if h < 24 * 8:
        return f"{h // 24}d{h % 24}h" if h % 24 else f"{h // 24}d"
    if h < 24 * 365 * 2:
        return f"{h // 24}d"
    if h < 24 * 365 * 8:
        return f"{h // (24 * 365)}y{(h // 24) % 365}d"
    return f"{h // (24 * 365)}y"


def _age_of(value: Any) -> str:
    t = _parse_time(value)
    if t is None:
        return "<unknown>"
    return human_duration((datetime.now(UTC) - t).total_seconds())


def _age(obj: Obj) -> str:
    return _age_of((obj.get("metadata") or {}).get("creationTimestamp"))


def _name(obj: Obj) -> str:
    return str((obj.get("metadata") or {}).get("name", ""))


# --- pods ---------------------------------------------------------------------------------------


def _pod_ready(pod: Obj) -> str:
    containers = (pod.get("spec") or {}).get("containers") or []
    statuses = (pod.get("status") or {}).get("containerStatuses") or []
    return f"{sum(1 for s in statuses if s.get('ready'))}/{len(containers)}"


def _pod_status(pod: Obj) -> str:
    status = pod.get("status") or {}
    if (pod.get("metadata") or {}).get("deletionTimestamp"):
        return "Terminating"
    if (pod.get("spec") or {}).get("schedulingGates"):
        return "SchedulingGated"
    reason = status.get("reason") or status.get("phase") or "Unknown"
    for cs in status.get("containerStatuses") or ():
        waiting = (cs.get("state") or {}).get("waiting") or {}
        if waiting.get("reason"):
            reason = waiting["reason"]
    return str(reason)


def _pod_restarts(pod: Obj) -> int:
    return sum(int(s.get("restartCount") or 0) for s in (pod.get("status") or {}).get("containerStatuses") or ())


def _readiness_gates(pod: Obj) -> str:
    gates = (pod.get("spec") or {}).get("readinessGates") or []
    if not gates:
        return NONE
    conds = {c.get("type"): c.get("status") for c in (pod.get("status") or {}).get("conditions") or ()}
    ready = sum(1 for g in gates if conds.get(g.get("conditionType")) == "True")
    return f"{ready}/{len(gates)}"


POD_COLUMNS: list[Column] = [
    ("Name", "string", 0, _name),
    ("Ready", "string", 0, _pod_ready),
    ("Status", "string", 0, _pod_status),
    ("Restarts", "string", 0, lambda p: str(_pod_restarts(p))),
    ("Age", "string", 0, _age),
    ("IP", "string", 1, lambda p: (p.get("status") or {}).get("podIP") or NONE),
    ("Node", "string", 1, lambda p: (p.get("spec") or {}).get("nodeName") or NONE),
    ("Nominated Node", "string", 1, lambda p: (p.get("status") or {}).get("nominatedNodeName") or NONE),
    ("Readiness Gates", "string", 1, _readiness_gates),
]


# --- nodes --------------------------------------------------------------------------------------


def _node_status(node: Obj) -> str:
    conds = {c.get("type"): c.get("status") for c in (node.get("status") or {}).get("conditions") or ()}
    ready = conds.get("Ready")
    text = "Ready" if ready == "True" else "NotReady" if ready == "False" else "Unknown"
    if (node.get("spec") or {}).get("unschedulable"):
        text += ",SchedulingDisabled"
    return text


def _node_roles(node: Obj) -> str:
    labels = (node.get("metadata") or {}).get("labels") or {}
    roles = sorted(
        {k.split("/", 1)[1] for k in labels if k.startswith("node-role.kubernetes.io/") and k.split("/", 1)[1]}
        | {v for k, v in labels.items() if k == "kubernetes.io/role" and v}
    )
    return ",".join(roles) or NONE


def _node_address(kind: str) -> Callable[[Obj], str]:
    def get(node: Obj) -> str:
        for a in (node.get("status") or {}).get("addresses") or ():
            if a.get("type") == kind:
                return str(a.get("address"))
        return NONE

    return get


def _node_info(key: str, default: str = "<unknown>") -> Callable[[Obj], str]:
    return lambda n: ((n.get("status") or {}).get("nodeInfo") or {}).get(key) or default


NODE_COLUMNS: list[Column] = [
    ("Name", "string", 0, _name),
    ("Status", "string", 0, _node_status),
    ("Roles", "string", 0, _node_roles),
    ("Age", "string", 0, _age),
    ("Version", "string", 0, _node_info("kubeletVersion", "")),
    ("Internal-IP", "string", 1, _node_address("InternalIP")),
    ("External-IP", "string", 1, _node_address("ExternalIP")),
    ("OS-Image", "string", 1, _node_info("osImage")),
    ("Kernel-Version", "string", 1, _node_info("kernelVersion")),
    ("Container-Runtime", "string", 1, _node_info("containerRuntimeVersion")),
]


# --- events -------------------------------------------------------------------------------------


def _event_field(ev: Obj, core: str, v1: str) -> Any:
    return ev.get(core) if core in ev else ev.get(v1)


def _event_last_seen(ev: Obj) -> str:
    series = ev.get("series") or {}
    for value in (
        series.get("lastObservedTime"),
        _event_field(ev, "lastTimestamp", "deprecatedLastTimestamp"),
        ev.get("eventTime"),
        (ev.get("metadata") or {}).get("creationTimestamp"),
    ):
        if value:
            return _age_of(value)
    return "<unknown>"


def _event_first_seen(ev: Obj) -> str:
    value = _event_field(ev, "firstTimestamp", "deprecatedFirstTimestamp") or ev.get("eventTime")
    return _age_of(value) if value else "<unknown>"


def _event_object(ev: Obj) -> str:
    ref = _event_field(ev, "involvedObject", "regarding") or {}
    return f"{str(ref.get('kind', '')).lower()}/{ref.get('name', '')}"


def _event_source(ev: Obj) -> str:
    src = _event_field(ev, "source", "deprecatedSource") or {}
    component = src.get("component") or ev.get("reportingComponent") or ev.get("reportingController") or ""
    return f"{component}, {src['host']}" if src.get("host") else str(component)


def _event_count(ev: Obj) -> int:
    series = ev.get("series") or {}
    return int(series.get("count") or _event_field(ev, "count", "deprecatedCount") or 1)


EVENT_COLUMNS: list[Column] = [
    ("Last Seen", "string", 0, _event_last_seen),
    ("Type", "string", 0, lambda e: e.get("type", "")),
    ("Reason", "string", 0, lambda e: e.get("reason", "")),
    ("Object", "string", 0, _event_object),
    ("Subobject", "string", 1, lambda e: (_event_field(e, "involvedObject", "regarding") or {}).get("fieldPath", "")),
    ("Source", "string", 1, _event_source),
    ("Message", "string", 0, lambda e: str(_event_field(e, "message", "note") or "").strip()),
    ("First Seen", "string", 1, _event_first_seen),
    ("Count", "integer", 1, _event_count),
    ("Name", "string", 1, _name),
]


# --- the rest -----------------------------------------------------------------------------------

NAMESPACE_COLUMNS: list[Column] = [
    ("Name", "string", 0, _name),
    ("Status", "string", 0, lambda n: (n.get("status") or {}).get("phase", "")),
    ("Age", "string", 0, _age),
]

PRIORITY_CLASS_COLUMNS: list[Column] = [
    ("Name", "string", 0, _name),
    ("Value", "integer", 0, lambda p: p.get("value", 0)),
    ("Global-Default", "boolean", 0, lambda p: bool(p.get("globalDefault"))),
    ("Age", "string", 0, _age),
    ("PreemptionPolicy", "string", 0, lambda p: p.get("preemptionPolicy") or ""),
]

LEASE_COLUMNS: list[Column] = [
    ("Name", "string", 0, _name),
    ("Holder", "string", 0, lambda le: (le.get("spec") or {}).get("holderIdentity") or ""),
    ("Age", "string", 0, _age),
]

CONFIG_MAP_COLUMNS: list[Column] = [
    ("Name", "string", 0, _name),
    ("Data", "integer", 0, lambda c: len(c.get("data") or {}) + len(c.get("binaryData") or {})),
    ("Age", "string", 0, _age),
]

SECRET_COLUMNS: list[Column] = [
    ("Name", "string", 0, _name),
    ("Type", "string", 0, lambda s: s.get("type") or "Opaque"),
    ("Data", "integer", 0, lambda s: len(s.get("data") or {})),
    ("Age", "string", 0, _age),
]


def _st(obj: Obj, key: str) -> int:
    return int((obj.get("status") or {}).get(key) or 0)


def _want(obj: Obj) -> int:
    value = (obj.get("spec") or {}).get("replicas")
    return 1 if value is None else int(value)


DEPLOYMENT_COLUMNS: list[Column] = [
    ("Name", "string", 0, _name),
    ("Ready", "string", 0, lambda d: f"{_st(d, 'readyReplicas')}/{_want(d)}"),
    ("Up-to-date", "integer", 0, lambda d: _st(d, "updatedReplicas")),
    ("Available", "integer", 0, lambda d: _st(d, "availableReplicas")),
    ("Age", "string", 0, _age),
]

REPLICA_SET_COLUMNS: list[Column] = [
    ("Name", "string", 0, _name),
    ("Desired", "integer", 0, _want),
    ("Current", "integer", 0, lambda r: _st(r, "replicas")),
    ("Ready", "integer", 0, lambda r: _st(r, "readyReplicas")),
    ("Age", "string", 0, _age),
]

STATEFUL_SET_COLUMNS: list[Column] = [
    ("Name", "string", 0, _name),
    ("Ready", "string", 0, lambda s: f"{_st(s, 'readyReplicas')}/{_want(s)}"),
    ("Age", "string", 0, _age),
]

DAEMON_SET_COLUMNS: list[Column] = [
    ("Name", "string", 0, _name),
    ("Desired", "integer", 0, lambda d: _st(d, "desiredNumberScheduled")),
    ("Current", "integer", 0, lambda d: _st(d, "currentNumberScheduled")),
    ("Ready", "integer", 0, lambda d: _st(d, "numberReady")),
    ("Age", "string", 0, _age),
]

JOB_COLUMNS: list[Column] = [
    ("Name", "string", 0, _name),
    ("Active", "integer", 0, lambda j: _st(j, "active")),
    ("Completions", "string", 0, lambda j: f"{_st(j, 'succeeded')}/{(j.get('spec') or {}).get('completions', 1)}"),
    ("Age", "string", 0, _age),
]


def _claim_state(claim: Obj) -> str:
    """printResourceClaim's State: deleted, pending or allocated, then reserved or deallocating."""
    meta, status = claim.get("metadata") or {}, claim.get("status") or {}
    deleting = bool(meta.get("deletionTimestamp"))
    states = ["deleted"] if deleting else []
    if not status.get("allocation"):
        if not deleting:
            states.append("pending")
    else:
        states.append("allocated")
        if status.get("reservedFor"):
            states.append("reserved")
        elif deleting or meta.get("finalizers"):
            states.append("deallocating")
    return ",".join(states)


NAME_AGE_COLUMNS: list[Column] = [("Name", "string", 0, _name), ("Age", "string", 0, _age)]

RESOURCE_CLAIM_COLUMNS: list[Column] = [
    ("Name", "string", 0, _name),
    ("State", "string", 0, _claim_state),
    ("Age", "string", 0, _age),
]

RESOURCE_SLICE_COLUMNS: list[Column] = [
    ("Name", "string", 0, _name),
    ("Node", "string", 0, lambda s: (s.get("spec") or {}).get("nodeName") or ""),
    ("Driver", "string", 0, lambda s: (s.get("spec") or {}).get("driver") or ""),
    ("Pool", "string", 0, lambda s: ((s.get("spec") or {}).get("pool") or {}).get("name") or ""),
    ("Age", "string", 0, _age),
]


def _csi_driver_flag(key: str, default: bool) -> Callable[[Obj], bool]:
    def get(driver: Obj) -> bool:
        value = (driver.get("spec") or {}).get(key)
        return default if value is None else bool(value)

    return get


def _token_requests(driver: Obj) -> str:
    requests = (driver.get("spec") or {}).get("tokenRequests")
    if requests is None:
        return "<unset>"
    return ",".join(str((r or {}).get("audience") or "") for r in requests)


def _lifecycle_modes(driver: Obj) -> str:
    return ",".join((driver.get("spec") or {}).get("volumeLifecycleModes") or ()) or NONE


CSI_DRIVER_COLUMNS: list[Column] = [
    ("Name", "string", 0, _name),
    ("AttachRequired", "boolean", 0, _csi_driver_flag("attachRequired", True)),
    ("PodInfoOnMount", "boolean", 0, _csi_driver_flag("podInfoOnMount", False)),
    ("StorageCapacity", "boolean", 0, _csi_driver_flag("storageCapacity", False)),
    ("TokenRequests", "string", 0, _token_requests),
    ("RequiresRepublish", "boolean", 0, _csi_driver_flag("requiresRepublish", False)),
    ("Modes", "string", 0, _lifecycle_modes),
    ("Age", "string", 0, _age),
]

#: As kube-apiserver prints them: no Age column.
CSI_STORAGE_CAPACITY_COLUMNS: list[Column] = [
    ("Name", "string", 0, _name),
    ("StorageClassName", "string", 0, lambda c: c.get("storageClassName") or ""),
    ("Capacity", "string", 0, lambda c: "<unset>" if c.get("capacity") is None else str(c["capacity"])),
]

DEFAULT_COLUMNS: list[Column] = [("Name", "string", 0, _name), ("Created At", "date", 0, _age)]

COLUMNS_BY_KIND: dict[str, list[Column]] = {
    "Pod": POD_COLUMNS,
    "Node": NODE_COLUMNS,
    "Event": EVENT_COLUMNS,
    "Namespace": NAMESPACE_COLUMNS,
    "PriorityClass": PRIORITY_CLASS_COLUMNS,
    "Lease": LEASE_COLUMNS,
    "ConfigMap": CONFIG_MAP_COLUMNS,
    "Secret": SECRET_COLUMNS,
    "Deployment": DEPLOYMENT_COLUMNS,
    "ReplicaSet": REPLICA_SET_COLUMNS,
    "ReplicationController": REPLICA_SET_COLUMNS,
    "StatefulSet": STATEFUL_SET_COLUMNS,
    "DaemonSet": DAEMON_SET_COLUMNS,
    "Job": JOB_COLUMNS,
    "DeviceClass": NAME_AGE_COLUMNS,
    "ResourceClaim": RESOURCE_CLAIM_COLUMNS,
    "ResourceClaimTemplate": NAME_AGE_COLUMNS,
    "ResourceSlice": RESOURCE_SLICE_COLUMNS,
    "CSIDriver": CSI_DRIVER_COLUMNS,
    "CSIStorageCapacity": CSI_STORAGE_CAPACITY_COLUMNS,
    # The API server's default printer: the creation time itself, not an age.
    "CustomResourceDefinition": [
        ("Name", "string", 0, _name),
        ("Created At", "date", 0, lambda o: (o.get("metadata") or {}).get("creationTimestamp")),
    ],
}


# --- custom resources (a definition's additionalPrinterColumns) ------------------------------------

_DEFAULT_COLUMNS: tuple[Obj, ...] = ({"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},)
_PATH_PART = re.compile(r"\.([^.\[]+)|\[(\d+)\]|\['([^']*)'\]")


def _json_path(obj: Any, path: str) -> Any:
    """The value a simple JSONPath (``.spec.min.cpu``, ``.status.conditions[0].type``) names."""
    text = path.strip()
    if text.startswith("{") and text.endswith("}"):
        text = text[1:-1]
    value = obj
    pos = 0
    while pos < len(text):
        m = _PATH_PART.match(text, pos)
        if m is None:
            return None
        key, index, quoted = m.groups()
        if index is not None:
            if not isinstance(value, list) or int(index) >= len(value):
                return None
            value = value[int(index)]
        else:
            k = key if key is not None else quoted
            if not isinstance(value, dict) or k not in value:
                return None
            value = value[k]
        pos = m.end()
    return value


def _cell(typ: str, value: Any) -> Any:
    if value is None:
        return None
    if typ == "string":
        return (
            json.dumps(value, separators=(",", ":"))
            if isinstance(value, dict | list)
            else (("true" if value else "false") if isinstance(value, bool) else str(value))
        )
    if typ == "integer" and isinstance(value, int | float) and not isinstance(value, bool):
        return int(value)
    if typ == "number" and isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if typ == "boolean" and isinstance(value, bool):
        return value
    if typ == "date" and isinstance(value, str):
        age = _age_of(value)
        return "<invalid>" if age == "<unknown>" else age
    return None


def printer_columns(version: CustomVersion | None) -> tuple[Obj, ...]:
    columns = version.printer_columns if version is not None else ()
    return columns or _DEFAULT_COLUMNS


def table_columns(res: ServedResource) -> list[Obj]:
    """The Table's column definitions: Name, then the version's printer columns (Age when none)."""
    out: list[Obj] = [
        {
            "name": "Name",
            "type": "string",
            "format": "name",
            "description": "Name must be unique within a namespace.",
            "priority": 0,
        }
    ]
    for c in printer_columns(res.custom_version):
        out.append(
            {
                "name": str(c.get("name") or ""),
                "type": str(c.get("type") or "string"),
                "format": str(c.get("format") or ""),
                "description": str(
                    c.get("description")
                    or f"Custom resource definition column (in JSONPath format): {c.get('jsonPath')}"
                ),
                "priority": int(c.get("priority") or 0),
            }
        )
    return out


def table_cells(res: ServedResource, obj: Obj) -> list[Any]:
    """One row's cells for :func:`table_columns`."""
    cells: list[Any] = [_name(obj)]
    for c in printer_columns(res.custom_version):
        cells.append(_cell(str(c.get("type") or "string"), _json_path(obj, str(c.get("jsonPath") or ""))))
    return cells


def table(res: ServedResource, objs: list[Obj], resource_version: int, include_object: str | None) -> Obj:
    """A Table of ``objs``; ``include_object`` is ``None``/``PartialObjectMetadata``/``Object``/``None``."""
    columns = COLUMNS_BY_KIND.get(res.kind, DEFAULT_COLUMNS) if res.custom is None else []
    policy = include_object or "PartialObjectMetadata"
    rows = []
    for obj in objs:
        row: Obj = {"cells": [cell(obj) for _, _, _, cell in columns] if res.custom is None else table_cells(res, obj)}
        if policy == "Object":
            row["object"] = obj
        elif policy != "None":
            row["object"] = {
                "kind": "PartialObjectMetadata",
                "apiVersion": "meta.k8s.io/v1",
                "metadata": obj.get("metadata") or {},
            }
        rows.append(row)
    return {
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": {"resourceVersion": str(resource_version)},
        "columnDefinitions": [
            {
                "name": name,
                "type": typ,
                "format": "name" if name == "Name" else "",
                "description": f"{name} of the {res.kind}",
                "priority": prio,
            }
            for name, typ, prio, _ in columns
        ]
        if res.custom is None
        else table_columns(res),
        "rows": rows,
    }
