"""Elastic quota bookkeeping: one :class:`ElasticQuotaInfo` per namespace (min, max, used).

An ElasticQuota (``scheduling.x-k8s.io/v1alpha1``) gives a namespace a guaranteed ``min`` and
an upper bound ``max`` per resource. The scheduler keeps, for each namespace with a quota, what
the pods it placed there request (``used``) and which pods those are (by uid), so that a pod is
counted once however often it is reported.

Comparisons follow scheduler-plugins: a total is "over" a bound when any of cpu, memory,
ephemeral storage or pod count exceeds it, or any extended resource of the left-hand side does;
an extended resource the bound does not name is bounded by 0 for a min and unbounded for a max.
A quota without ``min`` is treated as min 0 (any use is over it); one without ``max`` has no
limit.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kubesched import PodInfo, Resource

#: What a missing ``max`` stands for: the largest amount a quantity holds.
UPPER_BOUND_OF_MAX = 2**63 - 1
#: What a missing ``min`` stands for.
LOWER_BOUND_OF_MIN = 0

_NAMED = ("cpu", "memory", "ephemeral-storage", "pods")


def _counts_as_scalar(name: str) -> bool:
    """Besides the four named resources, upstream's Resource keeps only extended resources,
    hugepages and attachable volumes; anything else in a list is ignored."""
    if name.startswith(("hugepages-", "attachable-volumes-")):
        return True
    if "/" not in name or name.startswith("requests."):
        return False
    domain = name.split("/", 1)[0]
    return not (domain == "kubernetes.io" or domain.endswith(".kubernetes.io"))


def resource_of(resources: Mapping[str, Any] | None) -> Resource:
    """A resource list (``{"cpu": "2", "memory": "1Gi", "nvidia.com/gpu": 1}``) as a Resource."""
    if not resources:
        return Resource()
    return Resource.from_list({k: v for k, v in resources.items() if k in _NAMED or _counts_as_scalar(k)})


def _bound(amount: int) -> Resource:
    return Resource(milli_cpu=amount, memory=amount, ephemeral_storage=amount)


def compute_pod_resource_request(pod: PodInfo | Mapping[str, Any]) -> Resource:
    """What a pod takes from its quota: the sum of its containers' requests, raised to any init
    container's request where that is larger (they run one at a time), plus the pod overhead."""
    obj = pod.pod if isinstance(pod, PodInfo) else pod
    spec = obj.get("spec") or {}
    total = Resource()
    for c in spec.get("containers") or ():
        total.add_resource(resource_of((c.get("resources") or {}).get("requests")))
    for c in spec.get("initContainers") or ():
        total.max_with(resource_of((c.get("resources") or {}).get("requests")))
    if spec.get("overhead"):
        total.add_resource(resource_of(spec["overhead"]))
    return total


def _over(x1: Resource, x2: Resource, y: Resource, bound: int) -> bool:
    """Whether ``x1 + x2`` exceeds ``y`` in any dimension (extended resources: those of ``x1``,
    ``bound`` standing for one ``y`` does not name)."""
    if x1.milli_cpu + x2.milli_cpu > y.milli_cpu:
        return True
    if x1.memory + x2.memory > y.memory:
        return True
    if x1.ephemeral_storage + x2.ephemeral_storage > y.ephemeral_storage:
        return True
    if x1.allowed_pod_number + x2.allowed_pod_number > y.allowed_pod_number:
        return True
    for name, amount in x1.scalar.items():
        if amount + x2.scalar.get(name, 0) > y.scalar.get(name, bound):
            return True
    return False


def pod_key(pod: PodInfo | Mapping[str, Any]) -> str:
    """The key a quota counts a pod under: its uid (``namespace/name`` when it has none)."""
    if isinstance(pod, PodInfo):
        return pod.uid
    meta = pod.get("metadata") or {}
    return str(meta.get("uid") or f"{meta.get('namespace') or 'default'}/{meta.get('name', '')}")


@dataclass
class ElasticQuotaInfo:
    """One namespace's quota: ``min``, ``max`` (``None``: not given), what is ``used``, and the
    uids of the pods counted in ``used``."""

    namespace: str
    min: Resource | None = None
    max: Resource | None = None
    used: Resource = field(default_factory=Resource)
    pods: set[str] = field(default_factory=set)

    @classmethod
    def new(
        cls,
        namespace: str,
        min: Mapping[str, Any] | None = None,
        max: Mapping[str, Any] | None = None,
        used: Mapping[str, Any] | None = None,
    ) -> ElasticQuotaInfo:
        """From an ElasticQuota's resource lists: a missing ``min`` is 0, a missing ``max`` the
        largest amount, for cpu, memory and ephemeral storage."""
        return cls(
            namespace,
            resource_of(min) if min is not None else _bound(LOWER_BOUND_OF_MIN),
            resource_of(max) if max is not None else _bound(UPPER_BOUND_OF_MAX),
            resource_of(used),
        )

    @classmethod
    def of(cls, quota: Mapping[str, Any]) -> ElasticQuotaInfo:
        """From an ElasticQuota object."""
        spec = quota.get("spec") or {}
        namespace = (quota.get("metadata") or {}).get("namespace") or "default"
        return cls.new(namespace, spec.get("min"), spec.get("max"))

    def reserve_resource(self, request: Resource) -> None:
        self.used.add_resource(request)

    def unreserve_resource(self, request: Resource) -> None:
        self.used.add_resource(request, -1)

    def used_over_min_with(self, request: Resource) -> bool:
        """Whether ``used + request`` exceeds ``min`` (always, without a ``min``)."""
        if self.min is None:
            return True
        return _over(request, self.used, self.min, LOWER_BOUND_OF_MIN)

    def used_over_max_with(self, request: Resource) -> bool:
        """Whether ``used + request`` exceeds ``max`` (never, without a ``max``)."""
        if self.max is None:
            return False
        return _over(request, self.used, self.max, UPPER_BOUND_OF_MAX)

    def used_over_min(self) -> bool:
        """Whether ``used`` exceeds ``min``: the namespace borrows from the others."""
        if self.min is None:
            return True
        return _over(self.used, Resource(), self.min, LOWER_BOUND_OF_MIN)

    def add_pod_if_not_present(self, pod: PodInfo | Mapping[str, Any]) -> None:
        key = pod_key(pod)
        if key in self.pods:
            return
        self.pods.add(key)
        self.reserve_resource(compute_pod_resource_request(pod))

    def delete_pod_if_present(self, pod: PodInfo | Mapping[str, Any]) -> None:
        key = pod_key(pod)
        if key not in self.pods:
            return
        self.pods.discard(key)
        self.unreserve_resource(compute_pod_resource_request(pod))

    def clone(self) -> ElasticQuotaInfo:
        return ElasticQuotaInfo(
            self.namespace,
            self.min.clone() if self.min is not None else None,
            self.max.clone() if self.max is not None else None,
            self.used.clone(),
            set(self.pods),
        )


class ElasticQuotaInfos(dict[str, ElasticQuotaInfo]):
    """The quotas by namespace (one quota per namespace)."""

    def clone(self) -> ElasticQuotaInfos:
        return ElasticQuotaInfos({ns: info.clone() for ns, info in self.items()})

    def aggregated_used_over_min_with(self, request: Resource) -> bool:
        """Whether everything used, plus ``request``, exceeds the sum of every quota's ``min``:
        the cluster's guaranteed share would be overcommitted."""
        used = Resource()
        total_min = Resource()
        for info in self.values():
            used.add_resource(info.used)
            if info.min is not None:
                total_min.add_resource(info.min)
        used.add_resource(request)
        return _over(used, Resource(), total_min, LOWER_BOUND_OF_MIN)


__all__ = [
    "LOWER_BOUND_OF_MIN",
    "UPPER_BOUND_OF_MAX",
    "ElasticQuotaInfo",
    "ElasticQuotaInfos",
    "compute_pod_resource_request",
    "pod_key",
    "resource_of",
]
