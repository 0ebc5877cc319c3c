"""The ``scale`` subresource (autoscaling/v1 Scale) of Deployments, ReplicaSets, StatefulSets and
ReplicationControllers: what ``kubectl scale`` reads and patches."""

from __future__ import annotations

from typing import Any

from kubesched.objects import Obj
from kubesched.sim.apiserver.errors import APIError


def selector_string(obj: Obj) -> str:
    """The workload's pod selector as a label selector string (``app=web``)."""
    selector = (obj.get("spec") or {}).get("selector") or {}
    if obj.get("kind") == "ReplicationController":
        return ",".join(f"{k}={v}" for k, v in sorted(selector.items()))
    parts = [f"{k}={v}" for k, v in sorted((selector.get("matchLabels") or {}).items())]
    for expr in selector.get("matchExpressions") or ():
        op, key, values = expr.get("operator"), expr.get("key"), ",".join(expr.get("values") or ())
        parts.append(
            {"In": f"{key} in ({values})", "NotIn": f"{key} notin ({values})", "Exists": key}.get(op, f"!{key}")
        )
    return ",".join(parts)


def scale_view(obj: Obj) -> Obj:
    meta = obj["metadata"]
    return {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {
            k: meta[k] for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp") if k in meta
        },
        "spec": {"replicas": int((obj.get("spec") or {}).get("replicas") or 0)},
        "status": {"replicas": int((obj.get("status") or {}).get("replicas") or 0), "selector": selector_string(obj)},
    }


def scaled(obj: Obj, scale: Any) -> Obj:
    """``obj`` with the replicas ``scale`` (a Scale object) asks for; 422 when it asks for a
    number that cannot be."""
    spec = scale.get("spec") if isinstance(scale, dict) else None
    replicas = spec.get("replicas") if isinstance(spec, dict) else None
    if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
        name = obj["metadata"]["name"]
        raise APIError(
            422,
            "Invalid",
            f'Scale.autoscaling "{name}" is invalid: spec.replicas: Invalid value: {replicas!r}: '
            "must be greater than or equal to 0",
            {"name": name, "group": "autoscaling", "kind": "Scale", "causes": [{"field": "spec.replicas"}]},
        )
    spec = {**(obj.get("spec") or {}), "replicas": replicas}
    return {**obj, "spec": spec}
