"""``/metrics/resources``: what every pod of the cluster requests and is limited to, as
kube-scheduler 1.37 serves it (its ``pkg/scheduler/metrics/resources`` collector).

Two gauge families, ``kube_pod_resource_request`` and ``kube_pod_resource_limit`` (STABLE), one
series per pod and resource, labelled ``namespace``, ``pod``, ``node`` (empty while the pod is
unscheduled), ``scheduler`` (its ``spec.schedulerName``), ``priority`` (``spec.priority``, empty
when unset), ``resource`` and ``unit`` (``cores`` for cpu; ``bytes`` for memory, storage,
ephemeral storage and huge pages; ``integer`` for attachable volumes; empty for the rest).

The pods are every pod of the cluster the scheduler's informer holds, whichever scheduler they
name, but those that have ended (``Succeeded``, ``Failed``): upstream's informer leaves them out.
Requests and limits are counted as component-helpers' ``PodRequests``/``PodLimits`` count them
with default options (:mod:`kubesched.framework.pod_requests`): containers, sidecars and init
containers, pod-level resources, overhead (on the limits that are set). A zero amount has no
series. Amounts are the scheduler's integers: cpu to the millicore, other resources to the unit
(a fractional byte count is rounded up, where upstream's approximate float keeps the fraction).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kubesched.framework.pod_requests import pod_limit_amounts, pod_request_amounts
from kubesched.framework.resources import CPU, EPHEMERAL_STORAGE, MEMORY, is_hugepages
from kubesched.server.textformat import Family, exposition

LABELS = ("namespace", "pod", "node", "scheduler", "priority", "resource", "unit")
REQUEST_HELP = (
    "[STABLE] Resources requested by workloads on the cluster, broken down by pod. This shows the resource usage "
    "the scheduler and kubelet expect per pod for resources along with the unit for the resource if any."
)
LIMIT_HELP = (
    "[STABLE] Resources limit for workloads on the cluster, broken down by pod. This shows the resource usage "
    "the scheduler and kubelet expect per pod for resources along with the unit for the resource if any."
)
#: Pod phases upstream's pod informer does not list.
TERMINAL_PHASES = frozenset({"Succeeded", "Failed"})
STORAGE = "storage"
ATTACHABLE_VOLUMES_PREFIX = "attachable-volumes-"


def unit_of(resource: str) -> str:
    """The ``unit`` label of ``resource``."""
    if resource == CPU:
        return "cores"
    if resource in (MEMORY, STORAGE, EPHEMERAL_STORAGE) or is_hugepages(resource):
        return "bytes"
    if resource.startswith(ATTACHABLE_VOLUMES_PREFIX):
        return "integer"
    return ""


def _value(resource: str, amount: int) -> float:
    return amount / 1000 if resource == CPU else float(amount)


def _labels(pod: Mapping[str, Any]) -> tuple[str, str, str, str, str]:
    meta = pod.get("metadata") or {}
    spec = pod.get("spec") or {}
    priority = spec.get("priority")
    return (
        str(meta.get("namespace") or ""),
        str(meta.get("name") or ""),
        str(spec.get("nodeName") or ""),
        str(spec.get("schedulerName") or ""),
        "" if priority is None else str(int(priority)),
    )


def resource_families(pods: Iterable[Mapping[str, Any]]) -> list[Family]:
    """The two families for ``pods`` (a pod whose resources cannot be read has no series)."""
    requests = Family("kube_pod_resource_request", "gauge", REQUEST_HELP, LABELS)
    limits = Family("kube_pod_resource_limit", "gauge", LIMIT_HELP, LABELS)
    for pod in pods:
        if ((pod.get("status") or {}).get("phase")) in TERMINAL_PHASES:
            continue
        try:
            counted = ((requests, pod_request_amounts(pod)), (limits, pod_limit_amounts(pod)))
            who = _labels(pod)
        except (ValueError, TypeError, AttributeError):
            continue
        for family, amounts in counted:
            for resource, amount in amounts.items():
                if amount:
                    family.series[(*who, resource, unit_of(resource))] = _value(resource, amount)
    return [requests, limits]


def resource_exposition(pods: Iterable[Mapping[str, Any]]) -> bytes:
    """``/metrics/resources``' body for ``pods``."""
    return exposition(resource_families(pods))
