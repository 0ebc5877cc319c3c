"""DeviceTaintRule as kube-apiserver v1.37 validates and defaults it: the device selector and the
taint, the status conditions, and the strategy's ``timeAdded`` and ``metadata.generation``."""

from __future__ import annotations

from datetime import UTC, datetime

from kubesched.objects import Obj
from kubesched.sim.apiserver.validation.dra.fields import (
    as_obj,
    as_str,
    dns_label,
    duplicate,
    indexed_dicts,
    too_many,
    validate_device_taint,
    validate_driver_name,
    validate_pool_name,
)
from kubesched.sim.apiserver.validation.meta import Cause, not_supported_cause, required_cause, validate_label_name

#: The bounds of k8s.io/api/resource/v1 (types.go).
MAX_RULE_CONDITIONS = 8


def validate_device_taint_rule(rule: Obj, old: Obj | None = None) -> list[Cause]:
    """ValidateDeviceTaintRule (and its update): the selector's driver, pool and device names,
    and the taint."""
    spec = as_obj(rule.get("spec"))
    old_spec = as_obj(old.get("spec")) if old else {}
    causes: list[Cause] = []
    selector = spec.get("deviceSelector")
    if isinstance(selector, dict):
        if selector.get("driver") is not None:
            causes += validate_driver_name(selector["driver"], "spec.deviceSelector.driver")
        if selector.get("pool") is not None:
            causes += validate_pool_name(selector["pool"], "spec.deviceSelector.pool")
        if selector.get("device") is not None:
            causes += dns_label(selector["device"], "spec.deviceSelector.device")
    taint = as_obj(spec.get("taint"))
    old_taint = as_obj(old_spec.get("taint")) if old is not None else None
    return causes + validate_device_taint(taint, "spec.taint", old_taint)


def validate_device_taint_rule_status(rule: Obj) -> list[Cause]:
    """ValidateDeviceTaintRuleStatusUpdate: at most eight conditions, each with a type, a
    status, a reason and a transition time (metav1 ValidateConditions' required fields)."""
    status = as_obj(rule.get("status"))
    conditions = indexed_dicts(status.get("conditions"))
    causes: list[Cause] = []
    if len(conditions) > MAX_RULE_CONDITIONS:
        causes.append(too_many("status.conditions", len(conditions), MAX_RULE_CONDITIONS))
    seen: set[str] = set()
    for i, condition in conditions:
        at = f"status.conditions[{i}]"
        kind = as_str(condition.get("type"))
        causes += validate_label_name(kind, f"{at}.type")
        if kind in seen:
            causes.append(duplicate(f"{at}.type", kind))
        seen.add(kind)
        value = as_str(condition.get("status"))
        if value not in ("True", "False", "Unknown"):
            causes.append(not_supported_cause(f"{at}.status", value, ("False", "True", "Unknown")))
        if not condition.get("lastTransitionTime"):
            causes.append(required_cause(f"{at}.lastTransitionTime", "must be set"))
        if not as_str(condition.get("reason")):
            causes.append(required_cause(f"{at}.reason"))
    return causes


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def default_device_taint_rule(rule: Obj, old: Obj | None = None) -> None:
    """The strategy's defaulting: ``spec.taint.timeAdded`` set to now on create when missing,
    and on an update that changes the effect without changing the time (or drops it);
    ``metadata.generation`` 1 on create, one more on each change of the spec."""
    spec = rule.get("spec")
    if not isinstance(spec, dict):
        return
    taint = spec.get("taint")
    meta = rule.setdefault("metadata", {})
    if old is None:
        meta["generation"] = 1
        if isinstance(taint, dict) and not taint.get("timeAdded"):
            taint["timeAdded"] = _now()
        return
    old_spec = as_obj(old.get("spec"))
    old_taint = as_obj(old_spec.get("taint"))
    if isinstance(taint, dict):
        if not taint.get("timeAdded"):
            taint["timeAdded"] = old_taint.get("timeAdded") or _now()
        if taint.get("effect") != old_taint.get("effect") and taint.get("timeAdded") == old_taint.get("timeAdded"):
            taint["timeAdded"] = _now()
    generation = (old.get("metadata") or {}).get("generation") or 1
    meta["generation"] = generation + 1 if spec != old_spec else generation
