"""Pod resources as kube-apiserver v1.37 validates them (pkg/apis/core/validation): pod-level
``spec.resources`` and the ``pods/resize`` subresource (in-place vertical scaling, for
containers and — InPlacePodLevelResourcesVerticalScaling, beta and on in 1.37 — the pod level).

Functions take decoded objects (a quantity that does not parse was refused by decoding, or is
skipped here) and return causes ``(field, reason, message)`` with upstream's paths and words.
"""

from __future__ import annotations

import copy
from fractions import Fraction
from typing import Any

from kubesched.framework.resources import QuantityError, parse_quantity
from kubesched.objects import Obj
from kubesched.sim.apiserver.validation.meta import Cause, forbidden_cause, invalid_cause, not_supported_cause

#: What pod-level ``spec.resources`` may name (component-helpers SupportedPodLevelResources, as
#: the NotSupported error lists them, sorted): cpu, memory, and any ``hugepages-<size>``.
POD_LEVEL_RESOURCES = ("cpu", "hugepages-", "memory")
_HUGEPAGES = "hugepages-"
_RESIZABLE = ("cpu", "memory")
_DECIMAL_SUFFIXES = ((18, "E"), (15, "P"), (12, "T"), (9, "G"), (6, "M"), (3, "k"), (0, ""), (-3, "m"), (-6, "u"))
_BINARY_SUFFIXES = ((60, "Ei"), (50, "Pi"), (40, "Ti"), (30, "Gi"), (20, "Mi"), (10, "Ki"))


def _quantity(value: Any) -> Fraction | None:
    try:
        return parse_quantity(value)
    except (QuantityError, TypeError, ValueError, ArithmeticError):
        return None


def _is_binary(value: Any) -> bool:
    return isinstance(value, str) and value.rstrip().endswith("i")


def quantity_string(amount: Fraction, binary: bool = False) -> str:
    """``amount`` as Go's ``resource.Quantity.String()`` writes it: in the format of the value it
    came from (binary suffixes when that was ``Ki``/``Mi``/..., and the amount is whole), the
    largest suffix that keeps the number whole, rounded up to nano-units past that."""
    if amount == 0:
        return "0"
    sign = "-" if amount < 0 else ""
    amount = abs(amount)
    if binary and amount.denominator == 1 and amount >= 1024:
        whole = int(amount)
        for power, suffix in _BINARY_SUFFIXES:
            if whole % (1 << power) == 0:
                return f"{sign}{whole >> power}{suffix}"
    for exponent, suffix in _DECIMAL_SUFFIXES:
        scaled = amount / Fraction(10) ** exponent
        if scaled.denominator == 1:
            return f"{sign}{scaled.numerator}{suffix}"
    nanos = -(-amount.numerator * 10**9 // amount.denominator)
    return f"{sign}{nanos}n"


def _dicts(items: Any) -> list[tuple[int, Obj]]:
    return [(i, x) for i, x in enumerate(items or ()) if isinstance(x, dict)]


def _list(resources: Any, section: str) -> dict[str, Any]:
    if not isinstance(resources, dict):
        return {}
    values = resources.get(section)
    return values if isinstance(values, dict) else {}


def _supported_at_pod_level(name: str) -> bool:
    return name in _RESIZABLE or name.startswith(_HUGEPAGES)


# --- pod-level resources ------------------------------------------------------------------------


def _aggregate(spec: Obj, section: str) -> dict[str, tuple[Fraction, bool]]:
    """The pod's need of each resource from its containers (component-helpers PodRequests /
    PodLimits, pod-level resources skipped): regular containers and sidecars add up, and each
    init container needs its own amount plus the sidecars started before it; the pod needs the
    larger of the two. Values carry whether the first of them was written in binary units."""
    total: dict[str, tuple[Fraction, bool]] = {}

    def add(into: dict[str, tuple[Fraction, bool]], values: dict[str, Any]) -> None:
        for name, raw in values.items():
            amount = _quantity(raw)
            if amount is None:
                continue
            before = into.get(name)
            into[name] = (before[0] + amount, before[1]) if before else (amount, _is_binary(raw))

    for _, c in _dicts(spec.get("containers")):
        add(total, _list(c.get("resources"), section))
    sidecars: dict[str, tuple[Fraction, bool]] = {}
    init_peak: dict[str, tuple[Fraction, bool]] = {}
    for _, c in _dicts(spec.get("initContainers")):
        own = _list(c.get("resources"), section)
        if c.get("restartPolicy") == "Always":
            add(total, own)
            add(sidecars, own)
            need = dict(sidecars)
        else:
            need = dict(sidecars)
            add(need, own)
        for name, (amount, binary) in need.items():
            if name not in init_peak or amount > init_peak[name][0]:
                init_peak[name] = (amount, binary)
    for name, (amount, binary) in init_peak.items():
        if name not in total or amount > total[name][0]:
            total[name] = (amount, binary)
    return total


def _validate_requirements(resources: Obj, path: str) -> list[Cause]:
    """validateResourceRequirements for the pod level: names it may hold, quantities not
    negative, and each request at most its limit (equal to it for hugepages)."""
    causes: list[Cause] = []
    limits, requests = _list(resources, "limits"), _list(resources, "requests")
    for section, values in (("limits", limits), ("requests", requests)):
        for name in sorted(values):
            where = f"{path}.{section}[{name}]"
            if not _supported_at_pod_level(name):
                causes.append(not_supported_cause(where, name, POD_LEVEL_RESOURCES))
                continue
            amount = _quantity(values[name])
            if amount is not None and amount < 0:
                causes.append(invalid_cause(where, str(values[name]), "must be greater than or equal to 0"))
    for name in sorted(requests):
        if name not in limits or not _supported_at_pod_level(name):
            continue
        request, limit = _quantity(requests[name]), _quantity(limits[name])
        if request is None or limit is None:
            continue
        shown_request = quantity_string(request, _is_binary(requests[name]))
        shown_limit = quantity_string(limit, _is_binary(limits[name]))
        if name.startswith(_HUGEPAGES) and request != limit:
            causes.append(
                invalid_cause(f"{path}.requests", shown_request, f"must be equal to {name} limit of {shown_limit}")
            )
        elif request > limit:
            causes.append(
                invalid_cause(
                    f"{path}.requests", shown_request, f"must be less than or equal to {name} limit of {shown_limit}"
                )
            )
    return causes


def _validate_consistency(spec: Obj, resources: Obj, path: str) -> list[Cause]:
    """validatePodResourceConsistency: pod-level requests cover the containers' aggregated
    requests, pod-level hugepages limits their aggregated limits, and no container's limit
    exceeds the pod's."""
    causes: list[Cause] = []
    pod_requests, pod_limits = _list(resources, "requests"), _list(resources, "limits")
    for name, (need, binary) in sorted(_aggregate(spec, "requests").items()):
        have = _quantity(pod_requests[name]) if name in pod_requests else None
        if have is not None and need > have:
            causes.append(
                invalid_cause(
                    f"{path}.requests[{name}]",
                    quantity_string(have, _is_binary(pod_requests[name])),
                    f"must be greater than or equal to aggregate container requests of {quantity_string(need, binary)}",
                )
            )
    for name, (need, binary) in sorted(_aggregate(spec, "limits").items()):
        if not name.startswith(_HUGEPAGES) or name not in pod_limits:
            continue
        have = _quantity(pod_limits[name])
        if have is not None and need > have:
            causes.append(
                invalid_cause(
                    f"{path}.limits[{name}]",
                    quantity_string(have, _is_binary(pod_limits[name])),
                    f"must be greater than or equal to aggregate container limits of {quantity_string(need, binary)}",
                )
            )
    for i, c in _dicts(spec.get("containers")):
        for name, raw in sorted(_list(c.get("resources"), "limits").items()):
            if name not in pod_limits:
                continue
            mine, cap = _quantity(raw), _quantity(pod_limits[name])
            if mine is not None and cap is not None and mine > cap:
                # Upstream builds this path from the pod-level one: spec.resources.containers[i][name].limits.
                causes.append(
                    invalid_cause(
                        f"{path}.containers[{i}][{name}].limits",
                        quantity_string(mine, _is_binary(raw)),
                        f"must be less than or equal to pod limits of {quantity_string(cap, _is_binary(pod_limits[name]))}",
                    )
                )
    return causes


def default_pod_requests(spec: Obj) -> None:
    """defaultPodRequests: when pod-level limits are set, each supported resource without a
    pod-level request gets the containers' aggregated request of it (a container's limit
    standing for a request it does not set, as container defaulting has it), or else — no
    container asks for it — the pod-level limit; hugepages only the latter."""
    resources = spec.get("resources")
    limits = _list(resources, "limits")
    if not isinstance(resources, dict) or not limits:
        return
    requests = dict(_list(resources, "requests"))
    effective = {
        **spec,
        **{
            field: [
                {
                    **c,
                    "resources": {
                        "requests": {**_list(c.get("resources"), "limits"), **_list(c.get("resources"), "requests")}
                    },
                }
                for _, c in _dicts(spec.get(field))
            ]
            for field in ("containers", "initContainers")
        },
    }
    for name, (amount, binary) in sorted(_aggregate(effective, "requests").items()):
        if name not in requests and name in _RESIZABLE:
            requests[name] = quantity_string(amount, binary)
    for name, value in limits.items():
        if name not in requests and _supported_at_pod_level(name):
            requests[name] = value
    if requests:
        resources["requests"] = requests


def validate_pod_resources(spec: Obj, path: str = "spec.resources") -> list[Cause]:
    """validatePodResources (PodLevelResources, beta and on in 1.37): ``spec.resources`` names
    only cpu, memory and hugepages, claims none, requests within limits, and agrees with the
    containers' resources."""
    resources = spec.get("resources")
    if not isinstance(resources, dict):
        return []
    causes: list[Cause] = []
    if resources.get("claims"):
        causes.append(forbidden_cause(f"{path}.claims", "claims cannot be set for Resources at pod-level"))
    causes += _validate_requirements(resources, path)
    return causes + _validate_consistency(spec, resources, path)


# --- QoS ----------------------------------------------------------------------------------------


def qos_class(spec: Obj) -> str:
    """The pod's QoS class as ComputePodQOS decides it: from its pod-level cpu and memory when it
    sets any (limits default requests), else from its containers' (init containers included)."""
    pod_level = spec.get("resources")
    pod_requests = {k: v for k, v in _list(pod_level, "requests").items() if k in _RESIZABLE}
    pod_limits = {k: v for k, v in _list(pod_level, "limits").items() if k in _RESIZABLE}
    if pod_requests or pod_limits:
        if not any(_quantity(v) for v in (*pod_requests.values(), *pod_limits.values())):
            return "BestEffort"
        if set(pod_limits) != set(_RESIZABLE):
            return "Burstable"
        same = all(k not in pod_requests or _quantity(pod_requests[k]) == _quantity(v) for k, v in pod_limits.items())
        return "Guaranteed" if same else "Burstable"
    requests: dict[str, Fraction] = {}
    limits: dict[str, Fraction] = {}
    guaranteed = True
    for _, c in [*_dicts(spec.get("containers")), *_dicts(spec.get("initContainers"))]:
        res = c.get("resources")
        req = {k: q for k, v in _list(res, "requests").items() if k in _RESIZABLE and (q := _quantity(v))}
        lim = {k: q for k, v in _list(res, "limits").items() if k in _RESIZABLE and (q := _quantity(v))}
        requests.update(req)
        limits.update(lim)
        if set(lim) != set(_RESIZABLE) or any(k not in lim or q != lim[k] for k, q in req.items()):
            guaranteed = False
    if not requests and not limits:
        return "BestEffort"
    return "Guaranteed" if guaranteed else "Burstable"


# --- pods/resize --------------------------------------------------------------------------------


def resize_view(old: Obj, new: Obj) -> Obj:
    """What a write to ``pods/resize`` may change (the resize strategy's dropNonResizeUpdates):
    ``old`` with each container's ``resources`` and ``resizePolicy`` and the pod-level
    ``resources`` taken from ``new``, the rest of the body ignored. The containers stay in the
    order ``new`` lists them (each the old one of its name, a new name as sent), so that a list
    reordered, renamed, grown or shrunk is refused by :func:`validate_pod_resize`."""
    result = copy.deepcopy(old)
    spec, new_spec = result.setdefault("spec", {}), new.get("spec") or {}
    for field in ("containers", "initContainers"):
        if field not in spec and field not in new_spec:
            continue
        before = {c.get("name"): c for _, c in _dicts(spec.get(field))}
        listed = []
        for _, source in _dicts(new_spec.get(field)):
            container = copy.deepcopy(before.get(source.get("name"), source))
            for key in ("resources", "resizePolicy"):
                if key in source:
                    container[key] = copy.deepcopy(source[key])
                else:
                    container.pop(key, None)
            listed.append(container)
        spec[field] = listed
    if "resources" in new_spec:
        spec["resources"] = copy.deepcopy(new_spec["resources"])
    else:
        spec.pop("resources", None)
    result["metadata"]["resourceVersion"] = (new.get("metadata") or {}).get("resourceVersion")
    return result


def _resize_ordering(old_spec: Obj, new_spec: Obj) -> list[Cause]:
    causes: list[Cause] = []
    for field in ("containers", "initContainers"):
        olds, news = _dicts(old_spec.get(field)), _dicts(new_spec.get(field))
        if len(olds) != len(news):
            causes.append(forbidden_cause(f"spec.{field}", f"{field} may not be added or removed on resize"))
            continue
        for (i, before), (_, after) in zip(olds, news, strict=True):
            if before.get("name") != after.get("name"):
                causes.append(
                    forbidden_cause(f"spec.{field}[{i}].name", f"{field} may not be renamed or reordered on resize")
                )
    return causes


def _removed(values: Any, old_values: Any) -> bool:
    values = values if isinstance(values, dict) else {}
    old_values = old_values if isinstance(old_values, dict) else {}
    return any(name not in values for name in old_values)


def _semantic(value: Any) -> Any:
    """apimachinery's Semantic.DeepEqual on JSON: quantities compare by amount, an empty map or
    list is the same as none."""
    if isinstance(value, dict):
        out = {k: _semantic(v) for k, v in value.items()}
        return {k: v for k, v in out.items() if v not in (None, {}, [])}
    if isinstance(value, list):
        return [_semantic(v) for v in value]
    if isinstance(value, str):
        amount = _quantity(value) if value[:1].isdigit() or value[:1] in "+-." else None
        return amount if amount is not None else value
    return value


def _without_cpu_memory_changes(values: Any, old_values: Any) -> dict[str, Any]:
    out = dict(values) if isinstance(values, dict) else {}
    old_values = old_values if isinstance(old_values, dict) else {}
    for name in _RESIZABLE:
        out.pop(name, None)
        if name in old_values:
            out[name] = old_values[name]
    return out


def resources_changed(old_spec: Obj, new_spec: Obj) -> bool:
    """Whether ``new_spec`` changes the resources of the pod or of a container it keeps (by
    name): since 1.33 only ``pods/resize`` may (a pod update that does is refused as any other
    spec change is)."""
    if _semantic(old_spec.get("resources") or {}) != _semantic(new_spec.get("resources") or {}):
        return True
    for field in ("containers", "initContainers"):
        before = {c.get("name"): c.get("resources") or {} for _, c in _dicts(old_spec.get(field))}
        for _, c in _dicts(new_spec.get(field)):
            name = c.get("name")
            if name in before and _semantic(before[name]) != _semantic(c.get("resources") or {}):
                return True
    return False


def validate_pod_resize(old: Obj, new: Obj, pod_level_resize: bool = True) -> list[Cause]:
    """ValidatePodResize for ``new``, the pod as :func:`resize_view` leaves it: only cpu and
    memory change, nothing is removed, the QoS class stays, and the result is a valid pod.
    ``pod_level_resize`` (InPlacePodLevelResourcesVerticalScaling) off: a pod with pod-level
    resources, before or after, is not resized at all."""
    meta = old.get("metadata") or {}
    if "kubernetes.io/config.mirror" in (meta.get("annotations") or {}):
        return [forbidden_cause("", "static pods cannot be resized")]
    old_spec, new_spec = old.get("spec") or {}, new.get("spec") or {}
    if (old_spec.get("os") or {}).get("name") == "windows":
        return [forbidden_cause("", "windows pods cannot be resized")]
    causes: list[Cause] = []
    old_qos = (old.get("status") or {}).get("qosClass") or qos_class(old_spec)
    if qos_class(new_spec) != old_qos:
        causes.append(invalid_cause("spec", old_qos, "Pod QOS Class may not change as a result of resizing"))
    running = [
        s
        for _, s in _dicts((old.get("status") or {}).get("containerStatuses"))
        if (s.get("state") or {}).get("running")
    ]
    if running and running[0].get("resources") is None:
        causes.append(forbidden_cause("spec", "Pod running on node without support for resize"))
    old_pod_level, new_pod_level = old_spec.get("resources"), new_spec.get("resources")
    if not pod_level_resize and any(_list(r, "requests") or _list(r, "limits") for r in (old_pod_level, new_pod_level)):
        return [
            *causes,
            forbidden_cause(
                "",
                "resize of pods with pod-level resources is forbidden when "
                "InPlacePodLevelResourcesVerticalScalingEnabled feature gate is disabled",
            ),
        ]
    if isinstance(old_pod_level, dict) and (_list(old_pod_level, "requests") or _list(old_pod_level, "limits")):
        if not isinstance(new_pod_level, dict):
            causes.append(forbidden_cause("spec.resources", "pod-level resources cannot be removed"))
        else:
            if _removed(new_pod_level.get("requests"), old_pod_level.get("requests")):
                causes.append(
                    forbidden_cause("spec.resources.requests", "pod-level resource requests cannot be removed")
                )
            if _removed(new_pod_level.get("limits"), old_pod_level.get("limits")):
                causes.append(forbidden_cause("spec.resources.limits", "pod-level resource limits cannot be removed"))
    if isinstance(new_pod_level, dict) or isinstance(old_pod_level, dict):
        kept = {
            **(new_pod_level if isinstance(new_pod_level, dict) else {}),
            "requests": _without_cpu_memory_changes(_list(new_pod_level, "requests"), _list(old_pod_level, "requests")),
            "limits": _without_cpu_memory_changes(_list(new_pod_level, "limits"), _list(old_pod_level, "limits")),
        }
        if _semantic(kept) != _semantic(old_pod_level or {}):
            causes.append(forbidden_cause("spec", "only cpu and memory resources are mutable at pod-level"))
    if (old.get("status") or {}).get("nodeAllocatableResourceClaimStatuses"):
        causes.append(forbidden_cause("spec", "pods with node allocatable resource claims cannot be resized"))
    ordering = _resize_ordering(old_spec, new_spec)
    if ordering:
        return causes + ordering
    for field in ("initContainers", "containers"):
        olds = dict(_dicts(old_spec.get(field)))
        for i, c in _dicts(new_spec.get(field)):
            before = olds.get(i)
            if before is None:
                continue
            res, old_res = c.get("resources") or {}, before.get("resources") or {}
            where = f"spec.{field}[{i}].resources"
            if _removed(res.get("requests"), old_res.get("requests")):
                causes.append(forbidden_cause(f"{where}.requests", "resource requests cannot be removed"))
            if _removed(res.get("limits"), old_res.get("limits")):
                causes.append(forbidden_cause(f"{where}.limits", "resource limits cannot be removed"))
            kept_res = {
                **res,
                "requests": _without_cpu_memory_changes(res.get("requests"), old_res.get("requests")),
                "limits": _without_cpu_memory_changes(res.get("limits"), old_res.get("limits")),
            }
            changed = _semantic({**c, "resources": kept_res, "resizePolicy": None}) != _semantic(
                {**before, "resizePolicy": None}
            )
            if field == "containers" and changed:
                causes.append(forbidden_cause("spec", "only cpu and memory resources are mutable"))
            elif field == "initContainers":
                if changed:
                    causes.append(
                        forbidden_cause(
                            f"spec.initContainers[{i}]",
                            "only cpu and memory resources for init or sidecar containers are mutable",
                        )
                    )
                modified = _semantic(c) != _semantic(before)
                restart_policies = [p.get("restartPolicy") for _, p in _dicts(c.get("resizePolicy"))]
                if modified and c.get("restartPolicy") != "Always" and "RestartContainer" in restart_policies:
                    causes.append(
                        forbidden_cause(
                            f"spec.initContainers[{i}]",
                            "non-sidecar init containers with a resize policy of RestartContainer cannot be resized",
                        )
                    )
    return causes
