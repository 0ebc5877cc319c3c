"""A pod's requests and limits, counted as kube-scheduler 1.37 counts them.

Upstream computes them in one place (component-helpers' ``resource.PodRequests`` and
``PodLimits``) and every caller picks its options; this module is that place here:

* **Containers**: the sum of the regular containers and of the sidecars (restartable init
  containers), raised to what any init container needs while it runs (with the sidecars started
  before it). A container's requests default to its limits, as the API server defaults them.
* **Pod-level resources** (``spec.resources``, gate PodLevelResources): where the pod sets
  requests of a supported resource (cpu, memory, ``hugepages-*``), that amount replaces the
  containers' sum for it; other resources stay the containers' sum. The API server's defaulting
  is applied first, for objects that never went through one: with pod-level limits, a missing
  pod-level cpu/memory request is the containers' sum where containers ask for it, else the limit;
  a container hugepages limit becomes the pod's when the pod sets resources but not that one.
* **In-place resize** (InPlacePodVerticalScaling, locked on in 1.37): for a pod on a node the
  kubelet reports what it allocated (``status.containerStatuses[].allocatedResources``) and what
  is actuated (``...resources.requests``). Each resource counts the largest of spec, allocated and
  actuated, so a resize in flight reserves both sizes; a resize the kubelet found infeasible
  (condition ``PodResizePending`` with reason ``Infeasible``) leaves the spec out.
  With InPlacePodLevelResourcesVerticalScaling the pod-level figures (``status.allocatedResources``
  and ``status.resources``, overhead included there and taken out here) are read the same way.
* **Overhead** (``spec.overhead``) is added to the requests, and to the limits that are set.
* **Non-zero defaults**: scoring counts a container that asks for no cpu (memory) as 100m (200Mi):
  :attr:`PodResourcesOptions.non_missing_container_requests` adds them per container.

Amounts are integers as :class:`~kubesched.framework.resources.Resource` keeps them (millicores
for cpu); a resource list keeps the names it has (a request of ``0`` is present, which the
non-zero defaults and the API server's defaulting tell from an absent one).

Who reads what (as 1.37 does): NodeInfo accounts :func:`node_requests`; NodeResourcesFit's
Filter checks :func:`fit_requests` (the pending pod's spec); the resource scorers score
:func:`score_requests`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kubesched.framework.features import FeatureGates
from kubesched.framework.resources import (
    CPU,
    DEFAULT_MEMORY_REQUEST,
    DEFAULT_MILLI_CPU_REQUEST,
    MEMORY,
    Resource,
    is_hugepages,
    quantity_of,
)

#: A resource list: resource name → amount (millicores for cpu); the names present are set.
Amounts = dict[str, int]

#: The pod condition the kubelet sets while a resize waits, and its reasons.
POD_RESIZE_PENDING = "PodResizePending"
REASON_INFEASIBLE = "Infeasible"
REASON_DEFERRED = "Deferred"

#: Scoring's non-zero defaults for a container that asks for no cpu or memory.
NON_ZERO_DEFAULTS: Mapping[str, int] = {CPU: DEFAULT_MILLI_CPU_REQUEST, MEMORY: DEFAULT_MEMORY_REQUEST}


@dataclass(frozen=True, slots=True)
class PodResourcesOptions:
    """How to count (upstream's ``PodResourcesOptions``)."""

    #: Read the kubelet's allocated and actuated resources from the pod's status.
    use_status_resources: bool = False
    #: With ``use_status_resources``: read the pod-level ones too (InPlacePodLevelResourcesVerticalScaling).
    in_place_pod_level_resources_vertical_scaling: bool = False
    #: Leave ``spec.overhead`` out.
    exclude_overhead: bool = False
    #: Amounts added to each container that does not list the resource (a listed 0 stays 0).
    non_missing_container_requests: Mapping[str, int] = field(default_factory=dict)
    #: Ignore ``spec.resources`` (PodLevelResources off).
    skip_pod_level_resources: bool = False
    #: Count only the pod-level resources and the overhead.
    skip_container_level_resources: bool = False


@dataclass(frozen=True, slots=True)
class Counting:
    """What of the feature gates counting a pod reads; one per scheduler."""

    #: PodLevelResources: ``spec.resources`` counts.
    pod_level_resources: bool = True
    #: InPlacePodLevelResourcesVerticalScaling: ``status.allocatedResources``/``status.resources`` count.
    pod_level_resize: bool = True

    @classmethod
    def of(cls, gates: FeatureGates | None) -> Counting:
        """The counting ``gates`` ask for (1.37's defaults for ``None``).

        InPlacePodVerticalScaling is locked on in 1.37: container statuses always count."""
        if gates is None:
            return DEFAULT_COUNTING
        return cls(
            pod_level_resources=gates.enabled("PodLevelResources"),
            pod_level_resize=gates.enabled("InPlacePodLevelResourcesVerticalScaling"),
        )


DEFAULT_COUNTING = Counting()


# --- reading the object ---------------------------------------------------------------------------


def _mapping(value: Any, path: str) -> dict[str, Any] | None:
    """``value`` when it is a mapping, ``None`` when unset; anything else is refused."""
    if value is None:
        return None
    if not isinstance(value, dict):
        kind = "a list" if isinstance(value, list) else repr(value)
        raise ValueError(f"{path}: must be a mapping, got {kind}")
    return value


def amounts_of(values: Any, path: str) -> Amounts | None:
    """A resource list as integers, ``None`` when unset; a bad quantity names its field
    (``spec.containers[0].resources.requests[cpu]: ...``)."""
    mapping = _mapping(values, path)
    if mapping is None:
        return None
    out: Amounts = {}
    for name, value in mapping.items():
        try:
            out[name] = quantity_of(name, value)
        except ValueError as exc:
            raise ValueError(f"{path}[{name}]: {exc}") from None
    return out


def _container_spec(container: Mapping[str, Any], path: str) -> tuple[Amounts, Amounts]:
    """A container's requests (defaulted from its limits, as the API server does) and limits."""
    res = _mapping(container.get("resources"), f"{path}.resources") or {}
    requests = amounts_of(res.get("requests"), f"{path}.resources.requests") or {}
    limits = amounts_of(res.get("limits"), f"{path}.resources.limits") or {}
    if limits:
        requests = {**{k: v for k, v in limits.items() if k not in requests}, **requests}
    return requests, limits


def _containers(pod: Mapping[str, Any], key: str) -> list[dict[str, Any]]:
    spec = pod.get("spec") or {}
    value = spec.get(key) or ()
    if not isinstance(value, list | tuple):
        raise ValueError(f"spec.{key}: must be a list")
    out: list[dict[str, Any]] = []
    for i, c in enumerate(value):
        c = {} if c is None else c
        if not isinstance(c, dict):
            raise ValueError(f"spec.{key}[{i}]: must be a mapping")
        out.append(c)
    return out


def _status(pod: Mapping[str, Any]) -> dict[str, Any]:
    return _mapping(pod.get("status"), "status") or {}


def is_supported_pod_level_resource(name: str) -> bool:
    """cpu, memory and hugepages may be set at the pod level."""
    return name in (CPU, MEMORY) or is_hugepages(name)


def _pod_level(pod: Mapping[str, Any]) -> dict[str, Any] | None:
    spec = pod.get("spec") or {}
    return _mapping(spec.get("resources"), "spec.resources")


def is_pod_level_requests_set(pod: Mapping[str, Any]) -> bool:
    """Whether ``spec.resources.requests`` names a supported resource (as written)."""
    res = _pod_level(pod) or {}
    return any(is_supported_pod_level_resource(n) for n in (res.get("requests") or {}))


def is_pod_level_limits_set(pod: Mapping[str, Any]) -> bool:
    """Whether ``spec.resources.limits`` names a supported resource (as written)."""
    res = _pod_level(pod) or {}
    return any(is_supported_pod_level_resource(n) for n in (res.get("limits") or {}))


def is_pod_level_resources_set(pod: Mapping[str, Any]) -> bool:
    """Whether ``spec.resources`` sets requests or limits of a supported resource."""
    return is_pod_level_requests_set(pod) or is_pod_level_limits_set(pod)


def _entries(value: Any) -> list[Any]:
    """A status list as a list (a kubelet's status is read, never refused: anything else is none)."""
    return value if isinstance(value, list) else []


def _resize_reason(pod: Mapping[str, Any]) -> str | None:
    for condition in _entries(_status(pod).get("conditions")):
        if isinstance(condition, dict) and condition.get("type") == POD_RESIZE_PENDING:
            return str(condition.get("reason") or "")
    return None


def is_pod_resize_infeasible(pod: Mapping[str, Any]) -> bool:
    """The kubelet found the pod's resize infeasible (condition PodResizePending, Infeasible)."""
    return _resize_reason(pod) == REASON_INFEASIBLE


def is_pod_resize_deferred(pod: Mapping[str, Any]) -> bool:
    """The kubelet deferred the pod's resize (condition PodResizePending, Deferred)."""
    return _resize_reason(pod) == REASON_DEFERRED


def has_status_resources(pod: Mapping[str, Any]) -> bool:
    """Whether the status says anything resources are counted from (so that counting with and
    without status resources may differ)."""
    status = pod.get("status")
    if not isinstance(status, dict) or not status:
        return False
    if status.get("allocatedResources") is not None or status.get("resources") is not None:
        return True
    for key in ("containerStatuses", "initContainerStatuses"):
        for cs in _entries(status.get(key)):
            if isinstance(cs, dict) and (cs.get("allocatedResources") is not None or cs.get("resources") is not None):
                return True
    return _resize_reason(pod) is not None


def counts_plainly(pod: Mapping[str, Any]) -> bool:
    """Whether every way of counting gives the same requests: no pod-level resources, nothing
    in the status (the common case, where one count serves Filter, scoring and NodeInfo)."""
    res = (pod.get("spec") or {}).get("resources")
    return not res and not has_status_resources(pod)


# --- resource lists ---------------------------------------------------------------------------------


def _add(total: Amounts, other: Mapping[str, int] | None) -> None:
    if other:
        for name, amount in other.items():
            total[name] = total.get(name, 0) + amount


def _max_into(total: Amounts, other: Mapping[str, int] | None) -> None:
    if other:
        for name, amount in other.items():
            if name not in total or amount > total[name]:
                total[name] = amount


def _max(first: Mapping[str, int] | None, *others: Mapping[str, int] | None) -> Amounts:
    out = dict(first or {})
    for other in others:
        _max_into(out, other)
    return out


def _minus_overhead(values: Mapping[str, int] | None, overhead: Mapping[str, int] | None) -> Amounts | None:
    """``values`` less the overhead where it has the resource, never below 0."""
    if values is None:
        return None
    out = dict(values)
    for name, amount in (overhead or {}).items():
        if name in out:
            out[name] = max(out[name] - amount, 0)
    return out


def _with_non_missing(values: Mapping[str, int] | None, non_missing: Mapping[str, int]) -> Amounts:
    out = dict(values or {})
    for name, amount in non_missing.items():
        if name not in out:
            out[name] = amount
    return out


# --- containers -------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Container:
    path: str
    restartable: bool
    requests: Amounts
    limits: Amounts
    #: Its entry in the pod's status (and that entry's path), when statuses are read.
    status: dict[str, Any] | None
    status_path: str = ""


def _container_infos(pod: Mapping[str, Any], use_status: bool) -> tuple[list[_Container], list[_Container]]:
    statuses: dict[str, tuple[dict[str, Any], str]] = {}
    if use_status:
        status = _status(pod)
        # Upstream looks a name up among the containers' statuses first: keep their entries.
        for key in ("initContainerStatuses", "containerStatuses"):
            for i, cs in enumerate(_entries(status.get(key))):
                if isinstance(cs, dict) and isinstance(cs.get("name"), str):
                    statuses[cs["name"]] = (cs, f"status.{key}[{i}]")
    out: tuple[list[_Container], list[_Container]] = ([], [])
    for group, key in ((out[0], "containers"), (out[1], "initContainers")):
        for i, c in enumerate(_containers(pod, key)):
            path = f"spec.{key}[{i}]"
            requests, limits = _container_spec(c, path)
            found = statuses.get(str(c.get("name")))
            cs, cs_path = found if found is not None else (None, "")
            restartable = key == "initContainers" and c.get("restartPolicy") == "Always"
            group.append(_Container(path, restartable, requests, limits, cs, cs_path))
    return out


def _status_list(c: _Container, *keys: str) -> Amounts | None:
    """A resource list of the container's status entry (``allocatedResources``,
    ``resources.requests``...), ``None`` when unset."""
    value: Any = c.status
    path = c.status_path
    for key in keys:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
        path = f"{path}.{key}"
    return amounts_of(value, path)


def _spec_requests(c: _Container, infeasible: bool) -> Amounts | None:
    return c.requests


def _allocated_requests(c: _Container, infeasible: bool) -> Amounts | None:
    if c.status is not None:
        allocated = _status_list(c, "allocatedResources")
        if allocated is not None:
            return allocated
    return None if infeasible else c.requests


def _actuated_requests(c: _Container, infeasible: bool) -> Amounts | None:
    if c.status is not None:
        actuated = _status_list(c, "resources", "requests")
        if actuated is not None:
            return actuated
        allocated = _status_list(c, "allocatedResources")
        if allocated is not None:
            return allocated
    return None if infeasible else c.requests


def _spec_limits(c: _Container, infeasible: bool) -> Amounts | None:
    return c.limits


def _actuated_limits(c: _Container, infeasible: bool) -> Amounts | None:
    if c.status is not None:
        actuated = _status_list(c, "resources", "limits")
        if actuated is not None:
            return actuated
    return None if infeasible else c.limits


#: Which of a container's lists to count: ``pick(container, resize_infeasible)``.
Pick = Callable[[_Container, bool], "Amounts | None"]


def _aggregate(
    containers: tuple[list[_Container], list[_Container]],
    pick: Pick,
    infeasible: bool,
    non_missing: Mapping[str, int],
) -> Amounts:
    """Regular containers and sidecars add up; each init container needs the sidecars started
    before it plus itself; the pod needs the larger of the two, per resource."""
    regular, init = containers
    result: Amounts = {}
    for c in regular:
        values = pick(c, infeasible)
        _add(result, _with_non_missing(values, non_missing) if non_missing else values)
    sidecars: Amounts = {}
    init_peak: Amounts = {}
    for c in init:
        values = pick(c, infeasible)
        if non_missing:
            values = _with_non_missing(values, non_missing)
        if c.restartable:
            _add(result, values)
            _add(sidecars, values)
            _max_into(init_peak, sidecars)
        else:
            running: Amounts = {}
            _add(running, values)
            _add(running, sidecars)
            _max_into(init_peak, running)
    _max_into(result, init_peak)
    return result


def aggregate_container_requests(pod: Mapping[str, Any], opts: PodResourcesOptions = PodResourcesOptions()) -> Amounts:
    """The containers' requests (upstream ``AggregateContainerRequests``)."""
    containers = _container_infos(pod, opts.use_status_resources)
    non_missing = opts.non_missing_container_requests
    spec = _aggregate(containers, _spec_requests, False, non_missing)
    if not opts.use_status_resources:
        return spec
    infeasible = is_pod_resize_infeasible(pod)
    status = _status(pod)
    pod_allocated = amounts_of(status.get("allocatedResources"), "status.allocatedResources")
    pod_resources = _mapping(status.get("resources"), "status.resources")
    pod_actuated = amounts_of((pod_resources or {}).get("requests"), "status.resources.requests")
    if opts.in_place_pod_level_resources_vertical_scaling and pod_allocated is not None and pod_actuated is not None:
        allocated, actuated = pod_allocated, pod_actuated
    else:
        allocated = _aggregate(containers, _allocated_requests, infeasible, non_missing)
        actuated = _aggregate(containers, _actuated_requests, infeasible, non_missing)
    if infeasible:
        return _max(actuated, allocated)
    return _max(spec, actuated, allocated)


def aggregate_container_limits(pod: Mapping[str, Any], opts: PodResourcesOptions = PodResourcesOptions()) -> Amounts:
    """The containers' limits (upstream ``AggregateContainerLimits``; no non-zero defaults)."""
    containers = _container_infos(pod, opts.use_status_resources)
    spec = _aggregate(containers, _spec_limits, False, {})
    if not opts.use_status_resources:
        return spec
    infeasible = is_pod_resize_infeasible(pod)
    pod_resources = _mapping(_status(pod).get("resources"), "status.resources")
    pod_actuated = amounts_of((pod_resources or {}).get("limits"), "status.resources.limits")
    if opts.in_place_pod_level_resources_vertical_scaling and pod_actuated is not None:
        actuated = pod_actuated
    else:
        actuated = _aggregate(containers, _actuated_limits, infeasible, {})
    return actuated if infeasible else _max(spec, actuated)


# --- the pod level ------------------------------------------------------------------------------------


def pod_level_resources(pod: Mapping[str, Any]) -> tuple[Amounts, Amounts]:
    """``spec.resources`` requests and limits as the API server's defaulting leaves them (for
    objects that did not go through one; an API server's own result is unchanged by it)."""
    res = _pod_level(pod)
    if not res:
        return {}, {}
    requests = amounts_of(res.get("requests"), "spec.resources.requests") or {}
    limits = amounts_of(res.get("limits"), "spec.resources.limits") or {}
    if not requests and not limits:
        return requests, limits
    containers = _container_infos(pod, False)
    # Hugepages limits of the containers become the pod's, unless the pod requests that size.
    container_limits = _aggregate(containers, _spec_limits, False, {})
    for name, amount in container_limits.items():
        if is_hugepages(name) and name not in requests and name not in limits:
            limits[name] = amount
    if limits:
        # Missing pod-level requests: the containers' where they ask (cpu and memory, which
        # may be overcommitted), else the pod-level limit.
        aggregate = _aggregate(containers, _spec_requests, False, {})
        for name in (CPU, MEMORY):
            if name in aggregate and name not in requests:
                requests[name] = aggregate[name]
        for name, amount in limits.items():
            if name not in requests and is_supported_pod_level_resource(name):
                requests[name] = amount
    return requests, limits


def _effective_pod_level(pod: Mapping[str, Any], spec: Amounts | None, *statuses: Amounts | None) -> Amounts:
    if is_pod_resize_infeasible(pod):
        spec = None
    return _max(spec, *statuses)


def pod_request_amounts(pod: Mapping[str, Any], opts: PodResourcesOptions = PodResourcesOptions()) -> Amounts:
    """:func:`pod_requests` as a resource list (the names present kept)."""
    reqs: Amounts = {} if opts.skip_container_level_resources else aggregate_container_requests(pod, opts)
    spec_overhead = amounts_of((pod.get("spec") or {}).get("overhead"), "spec.overhead")
    if not opts.skip_pod_level_resources:
        pod_requests_, _ = pod_level_resources(pod)
        if any(is_supported_pod_level_resource(n) for n in pod_requests_):
            effective: Amounts | None = pod_requests_
            status = _status(pod)
            pod_resources = _mapping(status.get("resources"), "status.resources")
            pod_allocated = amounts_of(status.get("allocatedResources"), "status.allocatedResources")
            if (
                opts.in_place_pod_level_resources_vertical_scaling
                and opts.use_status_resources
                and (pod_resources is not None or pod_allocated is not None)
            ):
                actuated = amounts_of((pod_resources or {}).get("requests"), "status.resources.requests")
                effective = _effective_pod_level(
                    pod,
                    pod_requests_,
                    _minus_overhead(actuated if pod_resources is not None else None, spec_overhead),
                    _minus_overhead(pod_allocated, spec_overhead),
                )
            for name, amount in (effective or {}).items():
                if is_supported_pod_level_resource(name):
                    reqs[name] = amount
    if not opts.exclude_overhead:
        _add(reqs, spec_overhead)
    return reqs


def pod_limit_amounts(pod: Mapping[str, Any], opts: PodResourcesOptions = PodResourcesOptions()) -> Amounts:
    """:func:`pod_limits` as a resource list."""
    limits = aggregate_container_limits(pod, opts)
    if not opts.skip_pod_level_resources and is_pod_level_resources_set(pod):
        _, pod_limits_ = pod_level_resources(pod)
        effective: Amounts | None = pod_limits_
        pod_resources = _mapping(_status(pod).get("resources"), "status.resources")
        if (
            opts.in_place_pod_level_resources_vertical_scaling
            and opts.use_status_resources
            and pod_resources is not None
        ):
            actuated = amounts_of(pod_resources.get("limits"), "status.resources.limits")
            overhead = amounts_of((pod.get("spec") or {}).get("overhead"), "spec.overhead")
            effective = _effective_pod_level(pod, pod_limits_, _minus_overhead(actuated, overhead))
        for name, amount in (effective or {}).items():
            if is_supported_pod_level_resource(name):
                limits[name] = amount
    if not opts.exclude_overhead:
        overhead = amounts_of((pod.get("spec") or {}).get("overhead"), "spec.overhead") or {}
        for name, amount in overhead.items():
            if limits.get(name):
                limits[name] += amount
    return limits


def to_resource(amounts: Mapping[str, int]) -> Resource:
    r = Resource()
    for name, amount in amounts.items():
        r.add(name, amount)
    return r


def pod_requests(pod: Mapping[str, Any], opts: PodResourcesOptions = PodResourcesOptions()) -> Resource:
    """The pod's requests (upstream ``resource.PodRequests``)."""
    return to_resource(pod_request_amounts(pod, opts))


def pod_limits(pod: Mapping[str, Any], opts: PodResourcesOptions = PodResourcesOptions()) -> Resource:
    """The pod's limits (upstream ``resource.PodLimits``): overhead only on limits that are set."""
    return to_resource(pod_limit_amounts(pod, opts))


# --- the scheduler's three counts ---------------------------------------------------------------------


def _status_options(
    counting: Counting, non_missing: Mapping[str, int] | None = None, use_status: bool = True
) -> PodResourcesOptions:
    return PodResourcesOptions(
        use_status_resources=use_status,
        in_place_pod_level_resources_vertical_scaling=counting.pod_level_resize,
        skip_pod_level_resources=not counting.pod_level_resources,
        non_missing_container_requests=non_missing or {},
    )


def _simple_container_requests(spec: Mapping[str, Any]) -> tuple[Amounts, Amounts] | None:
    """The containers' requests without and with the non-zero defaults, for a spec of regular
    containers only and no overhead, as :func:`_aggregate` counts them; ``None`` for any other
    spec, and for anything that does not read as well-formed (the general path then counts it,
    or says what is wrong and where)."""
    containers = spec.get("containers") or ()
    if spec.get("initContainers") or spec.get("overhead") or type(containers) is not list:
        return None
    plain: Amounts = {}
    defaulted: Amounts = {}
    try:
        for c in containers:
            if type(c) is not dict:
                return None
            res = c.get("resources")
            requests: Amounts = {}
            if res is not None:
                if type(res) is not dict:
                    return None
                given, limited = res.get("requests"), res.get("limits")
                if (given is not None and type(given) is not dict) or (
                    limited is not None and type(limited) is not dict
                ):
                    return None
                if given:
                    requests = {name: quantity_of(name, value) for name, value in given.items()}
                if limited:
                    limits = {name: quantity_of(name, value) for name, value in limited.items()}
                    requests = {**{k: v for k, v in limits.items() if k not in requests}, **requests}
            for name, amount in requests.items():
                plain[name] = plain.get(name, 0) + amount
                defaulted[name] = defaulted.get(name, 0) + amount
            for name, amount in NON_ZERO_DEFAULTS.items():
                if name not in requests:
                    defaulted[name] = defaulted.get(name, 0) + amount
    except (ValueError, TypeError, AttributeError):
        return None
    return plain, defaulted


def node_requests(pod: Mapping[str, Any], counting: Counting = DEFAULT_COUNTING) -> tuple[Resource, Resource]:
    """What a pod takes on its node (NodeInfo's ``Requested``) and its non-zero cpu and memory
    (``NonZeroRequested``), as 1.37's NodeInfo accounts a pod: status resources counted; where
    the pod sets pod-level requests, a non-zero default only for cpu or memory that neither
    the pod nor any container names."""
    if not has_status_resources(pod) and not (counting.pod_level_resources and _pod_level(pod)):
        # Only the containers' specs count (most pods): one pass over them for both counts.
        simple = _simple_container_requests(pod.get("spec") or {})
        if simple is not None:
            return to_resource(simple[0]), to_resource(simple[1])
        containers = _container_infos(pod, False)
        overhead = amounts_of((pod.get("spec") or {}).get("overhead"), "spec.overhead")
        plain = _aggregate(containers, _spec_requests, False, {})
        defaulted = _aggregate(containers, _spec_requests, False, NON_ZERO_DEFAULTS)
        if overhead:
            _add(plain, overhead)
            _add(defaulted, overhead)
        return to_resource(plain), to_resource(defaulted)
    # Without anything in the status, counting it changes nothing: leave it out (faster).
    use_status = has_status_resources(pod)
    amounts = pod_request_amounts(pod, _status_options(counting, use_status=use_status))
    requests = to_resource(amounts)
    if counting.pod_level_resources and any(is_supported_pod_level_resource(n) for n in pod_level_resources(pod)[0]):
        non_missing = {name: v for name, v in NON_ZERO_DEFAULTS.items() if name not in amounts}
    else:
        non_missing = dict(NON_ZERO_DEFAULTS)
    if not non_missing:
        return requests, requests
    return requests, to_resource(pod_request_amounts(pod, _status_options(counting, non_missing, use_status)))


def fit_requests(pod: Mapping[str, Any], counting: Counting = DEFAULT_COUNTING) -> Resource:
    """What NodeResourcesFit's Filter checks: the spec's requests (a pod waiting to be
    scheduled has nothing allocated yet), pod-level ones as the gate says."""
    return pod_requests(pod, PodResourcesOptions(skip_pod_level_resources=not counting.pod_level_resources))


def score_requests(pod: Mapping[str, Any], counting: Counting = DEFAULT_COUNTING, non_zero: bool = False) -> Resource:
    """What the resource scorers count for the pod (upstream ``calculatePodResourceRequest``):
    status resources counted, and with ``non_zero`` the defaults for every container that names
    no cpu or memory (pod-level requests still replace the sum)."""
    opts = _status_options(counting, NON_ZERO_DEFAULTS if non_zero else None, has_status_resources(pod))
    return pod_requests(pod, opts)


def resource_status(pod: Mapping[str, Any]) -> tuple[Any, ...]:
    """What of a pod's status its counts read: equal for two versions of a pod whose counts
    (with the same spec) are equal."""
    status = pod.get("status")
    if not isinstance(status, dict) or not status:
        return ()
    containers = tuple(
        (cs.get("name"), cs.get("allocatedResources"), cs.get("resources"))
        for key in ("containerStatuses", "initContainerStatuses")
        for cs in _entries(status.get(key))
        if isinstance(cs, dict)
    )
    return (status.get("allocatedResources"), status.get("resources"), containers, _resize_reason(pod))


#: How a pod update is judged a scale-down (upstream counts with the status, whatever the gates).
_SCALE_OPTIONS = PodResourcesOptions(use_status_resources=True, in_place_pod_level_resources_vertical_scaling=True)


def scaled_down(old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    """Whether an update of a pod lowered (or dropped) a request of any resource, its resize
    (spec, kubelet's allocation) included: the ``UpdatePodScaleDown`` event."""
    o_spec, n_spec = old.get("spec") or {}, new.get("spec") or {}
    try:
        if all(o_spec.get(k) == n_spec.get(k) for k in ("containers", "initContainers", "resources", "overhead")) and (
            resource_status(old) == resource_status(new)
        ):
            return False
        before = pod_request_amounts(old, _SCALE_OPTIONS)
        after = pod_request_amounts(new, _SCALE_OPTIONS)
    except (ValueError, TypeError, AttributeError):
        return True  # unreadable: let the plugins' hints judge
    return any(name not in after or amount > after[name] for name, amount in before.items())
