"""What a pod uses, as the simulated cluster measures it: the figures its resource metrics API
(``metrics.k8s.io``, :mod:`kubesched.sim.apiserver.resource_metrics`) reports, as metrics-server
reports what the kubelets measured, and plugins read through the face (``pod_usage``).

A pod's usage is its annotation :data:`USAGE_ANNOTATION` where it has one, a JSON object in one
of two forms:

* quantities by resource, the pod's usage — ``{"cpu": "250m", "memory": "1Gi"}`` — shared out
  over its running containers in proportion to their requests of that resource (evenly when none
  requests it; what does not divide goes to the first);
* quantities by resource by container name — ``{"app": {"cpu": "200m"}, "log": {"cpu": "50m"}}``.

Only ``cpu`` and ``memory`` are measured (metrics-server reports those two). A resource the
annotation does not give, and a container it does not name, use what the pod requests: each
running container its requests (defaulted from its limits, as the API server defaults them), or
where the pod sets pod-level requests (``spec.resources``, gate PodLevelResources) that amount,
shared out the same way. The running containers are the regular ones and the sidecars
(restartable init containers); the other init containers have finished.

A pod is running when it is bound to a node and has not finished (Succeeded or Failed): there is
no kubelet here, so a bound pod counts as started. A node's usage is the sum over the running pods
bound to it (no system daemons or kubelet overhead besides).

Amounts are integers: cpu in nanocores, memory in bytes.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kubesched.errors import KubeschedError
from kubesched.framework.pod_requests import DEFAULT_COUNTING, Counting, amounts_of, pod_level_resources
from kubesched.framework.resources import CPU, MEMORY, QuantityError, parse_quantity

#: The annotation that gives a pod's usage.
USAGE_ANNOTATION = "kubesched.io/usage"
#: The resources measured, in the order they are reported.
MEASURED = (CPU, MEMORY)
#: Nanocores in a millicore (requests count cpu in millicores).
_NANO_PER_MILLI = 1_000_000

Amounts = dict[str, int]


class UsageError(KubeschedError, ValueError):
    """A usage annotation that cannot be read; the message names the field and the reason."""


@dataclass(frozen=True)
class PodUsage:
    """A running pod's usage: each running container's, in the pod's order."""

    containers: tuple[tuple[str, Amounts], ...]

    @property
    def total(self) -> Amounts:
        out = dict.fromkeys(MEASURED, 0)
        for _, amounts in self.containers:
            for name in MEASURED:
                out[name] += amounts[name]
        return out


def is_running(pod: Mapping[str, Any]) -> bool:
    """Bound to a node and not finished."""
    spec, status = pod.get("spec"), pod.get("status")
    node = spec.get("nodeName") if isinstance(spec, dict) else None
    phase = status.get("phase") if isinstance(status, dict) else None
    return isinstance(node, str) and bool(node) and phase not in ("Succeeded", "Failed")


def _running_containers(pod: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any], str]]:
    """``(name, container, path)`` of the sidecars, then the regular containers."""
    spec = pod.get("spec") or {}
    lists = {key: spec.get(key) or [] for key in ("initContainers", "containers")}
    for key, value in lists.items():
        if not isinstance(value, list):
            raise UsageError(f"spec.{key}: must be a list")
    out: list[tuple[str, Mapping[str, Any], str]] = []
    for i, c in enumerate(lists["initContainers"]):
        if isinstance(c, dict) and c.get("restartPolicy") == "Always":
            out.append((str(c.get("name", "")), c, f"spec.initContainers[{i}]"))
    for i, c in enumerate(lists["containers"]):
        if isinstance(c, dict):
            out.append((str(c.get("name", "")), c, f"spec.containers[{i}]"))
    return out


def running_container_names(pod: Mapping[str, Any]) -> list[str]:
    """The names of the pod's sidecars and regular containers (what runs once it started)."""
    return [name for name, _, _ in _running_containers(pod)]


def _requests(container: Mapping[str, Any], path: str) -> Amounts:
    """The container's requests of the measured resources, in usage units (defaulted from limits)."""
    res = container.get("resources") or {}
    if not isinstance(res, dict):
        raise UsageError(f"{path}.resources: must be a mapping")
    try:
        requests = amounts_of(res.get("requests"), f"{path}.resources.requests") or {}
        limits = amounts_of(res.get("limits"), f"{path}.resources.limits") or {}
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    out = {}
    for name in MEASURED:
        amount = requests.get(name, limits.get(name, 0))
        out[name] = amount * _NANO_PER_MILLI if name == CPU else amount
    return out


def share(total: int, weights: list[int]) -> list[int]:
    """``total`` shared out in proportion to ``weights`` (evenly when they are all 0); the
    remainder of the division goes to the first share."""
    if not weights:
        return []
    whole = sum(weights)
    parts = [total * w // whole for w in weights] if whole > 0 else [total // len(weights)] * len(weights)
    parts[0] += total - sum(parts)
    return parts


def quantity(name: str, value: Any, path: str) -> int:
    """A measured quantity in usage units (nanocores, bytes), rounded up; never negative."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise UsageError(f'{path}: must be a quantity (a string such as "250m" or a number), got {value!r}')
    try:
        amount = parse_quantity(value)
    except QuantityError as exc:
        raise UsageError(f"{path}: {exc}") from None
    if amount < 0:
        raise UsageError(f"{path}: must be greater than or equal to 0, got {value!r}")
    return math.ceil(amount * 10**9) if name == CPU else math.ceil(amount)


def _resource_map(value: Any, path: str) -> Amounts:
    if not isinstance(value, dict):
        raise UsageError(f"{path}: must be a mapping of resource to quantity")
    out: Amounts = {}
    for name, amount in value.items():
        if name not in MEASURED:
            raise UsageError(f"{path}[{name}]: unsupported resource: only cpu and memory are measured")
        out[name] = quantity(name, amount, f"{path}[{name}]")
    return out


def parse_usage_annotation(text: Any, containers: Iterable[str] | None = None) -> tuple[Amounts, dict[str, Amounts]]:
    """The annotation's pod-level usage and per-container usage (one of them empty). With
    ``containers`` (the pod's running containers), a name not among them is refused."""
    path = f"metadata.annotations[{USAGE_ANNOTATION}]"
    if not isinstance(text, str):
        raise UsageError(f"{path}: must be a string holding a JSON object")
    try:
        value = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise UsageError(f"{path}: not a JSON object: {exc}") from None
    if not isinstance(value, dict) or not value:
        raise UsageError(f'{path}: must be a non-empty JSON object, such as {{"cpu": "250m", "memory": "1Gi"}}')
    nested = [isinstance(v, dict) for v in value.values()]
    if all(nested):
        known = None if containers is None else set(containers)
        per_container: dict[str, Amounts] = {}
        for name, amounts in value.items():
            if known is not None and name not in known:
                listed = ", ".join(sorted(known)) or "none"
                raise UsageError(f"{path}[{name}]: no running container of that name (running: {listed})")
            per_container[name] = _resource_map(amounts, f"{path}[{name}]")
        return {}, per_container
    if any(nested):
        raise UsageError(f"{path}: give either quantities by resource or quantities by container, not both")
    return _resource_map(value, path), {}


def pod_usage(pod: Mapping[str, Any], counting: Counting = DEFAULT_COUNTING) -> PodUsage:
    """What ``pod`` uses now (see the module's description); raises :class:`UsageError`."""
    running = _running_containers(pod)
    names = [name for name, _, _ in running]
    requests = [_requests(c, path) for _, c, path in running]
    pod_level: Amounts = {}
    if counting.pod_level_resources:
        try:
            pod_level = {n: v for n, v in pod_level_resources(pod)[0].items() if n in MEASURED}
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    per: list[Amounts] = [dict(r) for r in requests]
    for name, amount in pod_level.items():
        whole = amount * _NANO_PER_MILLI if name == CPU else amount
        for i, part in enumerate(share(whole, [r[name] for r in requests])):
            per[i][name] = part
    annotations = (pod.get("metadata") or {}).get("annotations") or {}
    annotation = annotations.get(USAGE_ANNOTATION) if isinstance(annotations, dict) else None
    if annotation is not None:
        whole_pod, by_container = parse_usage_annotation(annotation, names)
        for name, amount in whole_pod.items():
            for i, part in enumerate(share(amount, [r[name] for r in requests])):
                per[i][name] = part
        for i, cname in enumerate(names):
            per[i].update(by_container.get(cname, {}))
    return PodUsage(tuple(zip(names, per, strict=True)))


@dataclass(frozen=True)
class ClusterUsage:
    """Every running pod's usage and every node's sum. A node with a pod whose usage cannot be
    read has no known usage (it is in :attr:`unknown_nodes`), as metrics-server leaves out a
    node it could not measure; :attr:`problems` says why, one line per such pod."""

    pods: dict[tuple[str, str], PodUsage]
    nodes: dict[str, Amounts]
    unknown_nodes: frozenset[str]
    problems: tuple[str, ...]


def cluster_usage(pods: Iterable[Mapping[str, Any]], counting: Counting = DEFAULT_COUNTING) -> ClusterUsage:
    """The usage of the running ones of ``pods`` and of the nodes they are bound to."""
    by_pod: dict[tuple[str, str], PodUsage] = {}
    nodes: dict[str, Amounts] = {}
    unknown: set[str] = set()
    problems: list[str] = []
    for pod in pods:
        if not is_running(pod):
            continue
        meta = pod.get("metadata") or {}
        key = (str(meta.get("namespace", "")), str(meta.get("name", "")))
        node = str(pod["spec"]["nodeName"])
        try:
            usage = pod_usage(pod, counting)
        except UsageError as exc:
            unknown.add(node)
            problems.append(f"pod {key[0]}/{key[1]}: {exc}")
            continue
        by_pod[key] = usage
        total = nodes.setdefault(node, dict.fromkeys(MEASURED, 0))
        for name, amount in usage.total.items():
            total[name] += amount
    return ClusterUsage(by_pod, nodes, frozenset(unknown), tuple(problems))
