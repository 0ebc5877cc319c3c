"""The resource metrics API, ``metrics.k8s.io/v1beta1``, as metrics-server serves it: NodeMetrics
(``nodes``, cluster-scoped) and PodMetrics (``pods``, namespaced), verbs get and list, from the
usage :mod:`kubesched.framework.usage` computes — what ``kubectl top nodes`` and ``kubectl top pods``
read, and what load-aware scoring reads on a real cluster.

As metrics-server: an object carries the node's or pod's name, namespace and labels and a
``creationTimestamp`` of now; ``timestamp`` is when the figures were measured (now, whole seconds)
and ``window`` the span they cover (:data:`WINDOW`, metrics-server's deployed
``--metric-resolution``); cpu is reported in nanocores and memory in bytes as Go's quantities print
them; lists are sorted by namespace and name and take label and field selectors (``metadata.name``,
``metadata.namespace``) and come as metrics-server's Table (Name, cpu, memory, Window) to
``kubectl get``. A pod that is not running has no metrics; a node or pod the cluster does
not have is a 404 in the lister's words (``node "x" not found``, ``pods "x" not found``), one
without metrics a 404 for the metrics object (``podmetrics.metrics.k8s.io "ns/x" not found``).
A pod whose usage annotation cannot be read is left out, with its node (whose sum is unknown then),
and every answer carries a ``Warning`` header naming the pod, the field and the reason.
"""

from __future__ import annotations

from datetime import UTC, datetime

from aiohttp import web

from kubesched.cluster.base import NotFound
from kubesched.cluster.store import Store
from kubesched.framework.features import FeatureGates
from kubesched.framework.pod_requests import Counting
from kubesched.framework.resources import CPU
from kubesched.framework.usage import MEASURED, Amounts, ClusterUsage, cluster_usage
from kubesched.objects import Obj
from kubesched.sim.apiserver.discovery import ServedResource
from kubesched.sim.apiserver.errors import method_not_allowed, not_found
from kubesched.sim.apiserver.handlers import warning_header
from kubesched.sim.apiserver.requests import ResourceRequest, selector, truthy
from kubesched.sim.apiserver.responses import json_response
from kubesched.sim.apiserver.tables import wants_table

GROUP = "metrics.k8s.io"
VERSION = "v1beta1"
#: The span a measurement covers: metrics-server's manifests run it with --metric-resolution=15s.
WINDOW = "15s"


class MetricsResource(ServedResource):
    """A resource of the metrics API: served from usage, not from the store. Its singular name
    is empty, as metrics-server's storage declares it."""

    @property
    def singular(self) -> str:
        return ""


NODES = MetricsResource(GROUP, VERSION, "nodes", "NodeMetrics", False, verbs=("get", "list"))
PODS = MetricsResource(GROUP, VERSION, "pods", "PodMetrics", True, verbs=("get", "list"))
#: What discovery lists for the group (beside the custom resources).
METRICS_RESOURCES: tuple[ServedResource, ...] = (NODES, PODS)

_SUFFIXES = {-9: "n", -6: "u", -3: "m", 0: "", 3: "k", 6: "M", 9: "G", 12: "T", 15: "P", 18: "E"}
_BINARY = (("Ei", 2**60), ("Pi", 2**50), ("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10))


def decimal_quantity(value: int, scale: int) -> str:
    """``value`` × 10^``scale`` (a multiple of 3) as Go prints a decimal quantity: the largest suffix that keeps the
    number whole (250000000 nanocores is ``250m``, 2000000000 is ``2``)."""
    if value == 0:
        return "0"
    exponent = scale
    while exponent + 3 <= 18 and value % 1000 == 0:
        value //= 1000
        exponent += 3
    return f"{value}{_SUFFIXES[exponent]}"


def binary_quantity(value: int) -> str:
    """Bytes as Go prints a binary quantity: the largest power-of-1024 suffix that divides them
    (``1Gi``, ``1536Mi``), the plain number otherwise, a decimal quantity below 1024."""
    if -1024 < value < 1024:
        return decimal_quantity(value, 0)
    for suffix, factor in _BINARY:
        if value % factor == 0:
            return f"{value // factor}{suffix}"
    return str(value)


def usage_list(amounts: Amounts) -> Obj:
    """A ResourceList of the measured resources."""
    return {
        name: decimal_quantity(amounts.get(name, 0), -9) if name == CPU else binary_quantity(amounts.get(name, 0))
        for name in MEASURED
    }


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _meta(obj: Obj, now: str, namespaced: bool) -> Obj:
    src = obj.get("metadata") or {}
    meta: Obj = {"name": src.get("name", "")}
    if namespaced:
        meta["namespace"] = src.get("namespace", "")
    meta["creationTimestamp"] = now
    if src.get("labels"):
        meta["labels"] = dict(src["labels"])
    return meta


def node_metrics(node: Obj, usage: Amounts, now: str) -> Obj:
    return {
        "kind": "NodeMetrics",
        "apiVersion": f"{GROUP}/{VERSION}",
        "metadata": _meta(node, now, False),
        "timestamp": now,
        "window": WINDOW,
        "usage": usage_list(usage),
    }


def pod_metrics(pod: Obj, usage: ClusterUsage, now: str) -> tuple[Obj, Amounts] | None:
    """The pod's PodMetrics and its total usage; ``None`` for a pod that does not run."""
    meta = pod.get("metadata") or {}
    measured = usage.pods.get((meta.get("namespace", ""), meta.get("name", "")))
    if measured is None:
        return None
    obj = {
        "kind": "PodMetrics",
        "apiVersion": f"{GROUP}/{VERSION}",
        "metadata": _meta(pod, now, True),
        "timestamp": now,
        "window": WINDOW,
        "containers": [{"name": name, "usage": usage_list(amounts)} for name, amounts in measured.containers],
    }
    return obj, measured.total


def table(items: list[tuple[Obj, Amounts]], include_object: str | None) -> Obj:
    """``items`` (each object with its usage, a pod's the sum over its containers) as the Table
    metrics-server gives ``kubectl get``: Name, cpu, memory (the resources in alphabetical order)
    and Window; no columns for no items."""
    columns: list[Obj] = []
    if items:
        columns = [
            {"name": "Name", "type": "string", "format": "name", "description": "Name of the resource", "priority": 0},
            *({"name": n, "type": "string", "format": "quantity", "description": "", "priority": 0} for n in MEASURED),
            {"name": "Window", "type": "string", "format": "duration", "description": "", "priority": 0},
        ]
    policy = include_object or "PartialObjectMetadata"
    rows = []
    for obj, amounts in items:
        usage = usage_list(amounts)
        row: Obj = {"cells": [obj["metadata"]["name"], *(usage[n] for n in MEASURED), obj["window"]]}
        if policy == "Object":
            row["object"] = obj
        elif policy != "None":
            row["object"] = {
                "kind": "PartialObjectMetadata",
                "apiVersion": "meta.k8s.io/v1",
                "metadata": obj["metadata"],
            }
        rows.append(row)
    return {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": {}, "columnDefinitions": columns, "rows": rows}


def _respond(request: web.Request, kind: str, items: list[tuple[Obj, Amounts]], usage: ClusterUsage) -> web.Response:
    """One object (``kind`` empty) or a list of ``kind``, or their Table when asked for one."""
    shown = warning_header(list(usage.problems))
    body: Obj
    if wants_table(request.headers.get("Accept", "")):
        body = table(items, request.query.get("includeObject"))
    elif kind:
        body = {"kind": kind, "apiVersion": f"{GROUP}/{VERSION}", "metadata": {}, "items": [o for o, _ in items]}
    else:
        body = items[0][0]
    return json_response(body, headers={"Warning": shown} if shown else None)


def serve(store: Store, gates: FeatureGates, request: web.Request, req: ResourceRequest) -> web.Response:
    """A get or list of NodeMetrics or PodMetrics; any other verb is a 405."""
    if request.method != "GET" or req.sub is not None or req.watch or truthy(request.query.get("watch")):
        raise method_not_allowed()
    pods, _ = store.list("Pod")
    usage = cluster_usage(pods, Counting.of(gates))
    now = _now()
    if req.res.kind == "NodeMetrics":
        return _nodes(store, request, req, usage, now)
    return _pods(store, request, req, usage, now)


def _nodes(store: Store, request: web.Request, req: ResourceRequest, usage: ClusterUsage, now: str) -> web.Response:
    def measured(node: Obj) -> bool:
        return node["metadata"]["name"] not in usage.unknown_nodes

    def item(node: Obj) -> tuple[Obj, Amounts]:
        amounts = usage.nodes.get(node["metadata"]["name"], {})
        return node_metrics(node, amounts, now), amounts

    if req.name is not None:
        try:
            node = store.get("Node", None, req.name)
        except NotFound:
            raise not_found("node", "", req.name) from None
        if not measured(node):
            raise not_found("nodemetrics", GROUP, req.name)
        return _respond(request, "", [item(node)], usage)
    match = selector(request, req)
    nodes, _ = store.list("Node")
    items = sorted((item(n) for n in nodes if match(n) and measured(n)), key=lambda i: i[0]["metadata"]["name"])
    return _respond(request, "NodeMetricsList", items, usage)


def _pods(store: Store, request: web.Request, req: ResourceRequest, usage: ClusterUsage, now: str) -> web.Response:
    if req.name is not None:
        namespace = req.namespace or ""
        try:
            pod = store.get("Pod", namespace, req.name)
        except NotFound:
            raise not_found("pods", "", req.name) from None
        found = pod_metrics(pod, usage, now)
        if found is None:
            raise not_found("podmetrics", GROUP, f"{namespace}/{req.name}")
        return _respond(request, "", [found], usage)
    match = selector(request, req)
    pods, _ = store.list("Pod", req.namespace)
    items = [m for p in pods if match(p) and (m := pod_metrics(p, usage, now)) is not None]
    items.sort(key=lambda i: (i[0]["metadata"]["namespace"], i[0]["metadata"]["name"]))
    return _respond(request, "PodMetricsList", items, usage)
