"""Workload, PodGroup and CompositePodGroup (scheduling.k8s.io, 1.37) as kube-apiserver validates
them, and a pod's ``spec.schedulingGroup``.

In 1.37 most of these checks are declarative (the ``+k8s:`` tags of k8s.io/api's
``scheduling/v1beta1`` and ``v1alpha3`` types): required fields, formats, unions, list bounds,
``minimum``/``maximum``, fields forbidden while their feature gate is off, and immutability on
update. The rest is ``pkg/apis/scheduling/validation``: template names unique across a Workload's
tree, the tree at most four deep, one priority for the whole tree, every composite template with a
child, and a PodGroup's status (its conditions, its claims' statuses naming its claims).

Each check returns causes ``(field, reason, message)`` in kube-apiserver's words (see
:mod:`.meta`). ``gates`` is the API server's :class:`~kubesched.framework.features.FeatureGates`.
"""

from __future__ import annotations

import json
import re
from typing import Any

from kubesched.framework.features import FeatureGates
from kubesched.framework.names import dns1123_label_errors, dns1123_subdomain_errors, qualified_name_errors
from kubesched.objects import Obj
from kubesched.sim.apiserver.validation.meta import (
    forbidden_cause,
    invalid_cause,
    not_supported_cause,
    quote,
    required_cause,
    validate_label_name,
)

Cause = tuple[str, str, str]

#: WorkloadMaxPodGroupTemplates (and the same bound on composite templates at each level).
MAX_TEMPLATES = 8
#: WorkloadMaxTreeDepth: composite templates nested at most this deep.
MAX_TREE_DEPTH = 4
#: MaxPodGroupResourceClaims.
MAX_CLAIMS = 4
#: A template's or group's topology constraints.
MAX_TOPOLOGY = 1
#: HighestUserDefinablePriority.
HIGHEST_USER_PRIORITY = 1_000_000_000
PREEMPTION_POLICIES = ("Never", "PreemptLowerPriority")
IMMUTABLE = "field is immutable"
#: What kube-apiserver's PodGroupProtection admission puts on a new PodGroup (GenericWorkload).
PROTECTION_FINALIZER = "scheduling.k8s.io/podgroup-protection"

_CONDITION_REASON = re.compile(r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$")
_CONDITION_REASON_MSG = (
    "a condition reason must start with alphabetic character, optionally followed by a string of "
    "alphanumeric characters or '_,:', and must end with an alphanumeric character or '_' (e.g. "
    "'my_name',  or 'MY_NAME',  or 'MyName',  or 'ReasonA,ReasonB',  or 'ReasonA:ReasonB', regex used "
    "for validation is '[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?')"
)


def _obj(value: Any) -> Obj:
    return value if isinstance(value, dict) else {}


def _items(value: Any) -> list[tuple[int, Obj]]:
    return [(i, x) for i, x in enumerate(value or ()) if isinstance(x, dict)] if isinstance(value, list) else []


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _too_many(path: str, count: int, limit: int) -> Cause:
    return (path, "FieldValueTooMany", f"Too many: {count}: must have at most {limit} items")


def _duplicate(path: str, value: Any) -> Cause:
    shown = quote(value) if isinstance(value, str) else json.dumps(value, separators=(",", ":"))
    return (path, "FieldValueDuplicate", f"Duplicate value: {shown}")


def _forbidden(path: str) -> Cause:
    """A field set while its gate is off (``+k8s:ifDisabled(...)=+k8s:forbidden``)."""
    return (path, "FieldValueForbidden", "Forbidden")


def _immutable(path: str, value: Any) -> Cause:
    shown = value if isinstance(value, str | int) and not isinstance(value, bool) else "null"
    return invalid_cause(path, shown, IMMUTABLE)


# --- formats ------------------------------------------------------------------------------------


def _required_string(value: Any, path: str, check: Any) -> list[Cause]:
    """A required string: Required when empty, else each message of ``check``."""
    if not isinstance(value, str) or not value:
        return [required_cause(path)]
    return [invalid_cause(path, value, m) for m in check(value)]


def _optional_string(value: Any, path: str, check: Any) -> list[Cause]:
    if not isinstance(value, str) or not value:
        return []
    return [invalid_cause(path, value, m) for m in check(value)]


def path_segment_name_errors(value: str) -> list[str]:
    """content.IsPathSegmentName: what a name in a URL path may not be or contain."""
    if value in (".", ".."):
        return [f"may not be '{value}'"]
    return [f"may not contain '{c}'" for c in ("/", "%") if c in value]


def _union(obj: Obj, members: tuple[str, ...], path: str, required: bool = True) -> list[Cause]:
    """A ``+union``: exactly one of ``members`` (at most one when not ``required``)."""
    present = [m for m in members if obj.get(m) is not None]
    listed = ", ".join(f"`{m}`" for m in members)
    if not present:
        return [invalid_cause(path, "", f"must specify one of: {listed}")] if required else []
    if len(present) > 1:
        shown = "{" + ", ".join(f"`{m}`" for m in present) + "}"
        return [invalid_cause(path, shown, f"exactly one of {listed} is required, but multiple fields are set")]
    return []


def _map_list(items: Any, path: str, limit: int, key: str = "name") -> list[Cause]:
    """A ``listType=map`` list: at most ``limit`` items, each ``key`` once."""
    causes: list[Cause] = []
    if isinstance(items, list) and len(items) > limit:
        causes.append(_too_many(path, len(items), limit))
    seen: set[Any] = set()
    for i, item in _items(items):
        name = item.get(key)
        if name in seen:
            causes.append(_duplicate(f"{path}[{i}]", {key: name}))
        seen.add(name)
    return causes


# --- the parts shared by templates and groups ---------------------------------------------------


def _scheduling_policy(policy: Any, path: str, count_field: str = "minCount") -> list[Cause]:
    """``basic`` or ``gang`` (exactly one); a gang's ``count_field`` (a PodGroup's ``minCount``,
    a CompositePodGroup's ``minGroupCount``) is required and at least 1."""
    policy = _obj(policy)
    causes = _union(policy, ("basic", "gang"), path)
    gang = policy.get("gang")
    if not causes and isinstance(gang, dict):
        count = _int(gang.get(count_field))
        at = f"{path}.gang.{count_field}"
        if not count:
            causes.append(required_cause(at))
        elif count < 1:
            causes.append(invalid_cause(at, count, "must be greater than or equal to 1"))
    return causes


def _composite_policy(policy: Any, path: str) -> list[Cause]:
    return _scheduling_policy(policy, path, "minGroupCount")


def _constraints(constraints: Any, path: str) -> list[Cause]:
    topology = _obj(constraints).get("topology")
    at = f"{path}.topology"
    causes: list[Cause] = []
    if isinstance(topology, list) and len(topology) > MAX_TOPOLOGY:
        return [_too_many(at, len(topology), MAX_TOPOLOGY)]
    for i, item in _items(topology):
        key = item.get("key")
        if not isinstance(key, str) or not key:
            causes.append(required_cause(f"{at}[{i}].key"))
        else:
            causes += validate_label_name(key, f"{at}[{i}].key")
    return causes


def _claims(claims: Any, path: str) -> list[Cause]:
    causes = _map_list(claims, path, MAX_CLAIMS)
    for i, claim in _items(claims):
        at = f"{path}[{i}]"
        causes += _required_string(claim.get("name"), f"{at}.name", dns1123_label_errors)
        causes += _union(claim, ("resourceClaimName", "resourceClaimTemplateName"), at)
        for key in ("resourceClaimName", "resourceClaimTemplateName"):
            causes += _optional_string(claim.get(key), f"{at}.{key}", dns1123_subdomain_errors)
    return causes


def _priority_fields(obj: Obj, path: str, gates: FeatureGates) -> list[Cause]:
    """disruptionMode, priorityClassName, priority and preemptionPolicy."""
    causes: list[Cause] = []
    if isinstance(obj.get("disruptionMode"), dict):
        causes += _union(obj["disruptionMode"], ("single", "all"), f"{path}.disruptionMode")
    causes += _optional_string(obj.get("priorityClassName"), f"{path}.priorityClassName", dns1123_subdomain_errors)
    priority = _int(obj.get("priority"))
    if priority is not None and priority > HIGHEST_USER_PRIORITY:
        causes.append(
            invalid_cause(f"{path}.priority", priority, f"must be less than or equal to {HIGHEST_USER_PRIORITY}")
        )
    policy = obj.get("preemptionPolicy")
    if policy is not None:
        if not gates.enabled("PodGroupPreemptionPolicy"):
            causes.append(_forbidden(f"{path}.preemptionPolicy"))
        elif policy not in PREEMPTION_POLICIES:
            causes.append(not_supported_cause(f"{path}.preemptionPolicy", policy, PREEMPTION_POLICIES))
    return causes


def _gated_constraints(obj: Obj, path: str, gates: FeatureGates) -> list[Cause]:
    if obj.get("schedulingConstraints") is None:
        return []
    if not gates.enabled("TopologyAwareWorkloadScheduling"):
        return [_forbidden(f"{path}.schedulingConstraints")]
    return _constraints(obj["schedulingConstraints"], f"{path}.schedulingConstraints")


# --- Workload -----------------------------------------------------------------------------------


def _pod_group_template(template: Obj, path: str, gates: FeatureGates) -> list[Cause]:
    causes = _required_string(template.get("name"), f"{path}.name", dns1123_label_errors)
    causes += _scheduling_policy(template.get("schedulingPolicy"), f"{path}.schedulingPolicy")
    causes += _gated_constraints(template, path, gates)
    causes += _claims(template.get("resourceClaims"), f"{path}.resourceClaims")
    return causes + _priority_fields(template, path, gates)


def _composite_template(template: Obj, path: str, gates: FeatureGates) -> list[Cause]:
    causes = _required_string(template.get("name"), f"{path}.name", dns1123_label_errors)
    causes += _composite_policy(template.get("schedulingPolicy"), f"{path}.schedulingPolicy")
    if template.get("schedulingConstraints") is not None:
        causes += _constraints(template["schedulingConstraints"], f"{path}.schedulingConstraints")
    causes += _priority_fields(template, path, gates)
    causes += _template_lists(template, path, gates)
    return causes


def _template_lists(owner: Obj, path: str, gates: FeatureGates) -> list[Cause]:
    causes: list[Cause] = []
    for key, check in (("podGroupTemplates", _pod_group_template), ("compositePodGroupTemplates", _composite_template)):
        items = owner.get(key)
        causes += _map_list(items, f"{path}.{key}", MAX_TEMPLATES)
        if isinstance(items, list) and len(items) <= MAX_TEMPLATES:
            for i, item in _items(items):
                causes += check(item, f"{path}.{key}[{i}]", gates)
    return causes


def _controller_ref(ref: Any, path: str) -> list[Cause]:
    ref = _obj(ref)
    causes = _optional_string(ref.get("apiGroup"), f"{path}.apiGroup", dns1123_subdomain_errors)
    causes += _required_string(ref.get("kind"), f"{path}.kind", path_segment_name_errors)
    return causes + _required_string(ref.get("name"), f"{path}.name", path_segment_name_errors)


def validate_workload(workload: Obj, gates: FeatureGates) -> list[Cause]:
    """ValidateWorkload without its metadata: the spec's declarative checks, then the tree's."""
    spec = _obj(workload.get("spec"))
    causes: list[Cause] = []
    if spec.get("controllerRef") is not None:
        causes += _controller_ref(spec["controllerRef"], "spec.controllerRef")
    composite = spec.get("compositePodGroupTemplates")
    if composite and not gates.enabled("CompositePodGroup"):
        causes.append(_forbidden("spec.compositePodGroupTemplates"))
    present = [k for k in ("podGroupTemplates", "compositePodGroupTemplates") if spec.get(k)]
    if not present:
        causes.append(
            invalid_cause("spec", "", "must specify one of: `podGroupTemplates`, `compositePodGroupTemplates`")
        )
    elif len(present) > 1:
        causes.append(
            invalid_cause(
                "spec",
                "{`podGroupTemplates`, `compositePodGroupTemplates`}",
                "exactly one of `podGroupTemplates`, `compositePodGroupTemplates` is required, "
                "but multiple fields are set",
            )
        )
    causes += _template_lists(spec, "spec", gates)
    return causes + _workload_tree(spec)


def _workload_tree(spec: Obj) -> list[Cause]:
    """pkg/apis/scheduling/validation: names unique across the tree, its depth, one priority,
    every composite template with a child."""
    causes: list[Cause] = []
    names = {t.get("name") for _, t in _items(spec.get("podGroupTemplates"))}

    def walk_names(templates: Any, path: str) -> None:
        listed = [(i, t) for i, t in _items(templates)]
        for i, t in listed:
            if t.get("name") in names:
                causes.append(_duplicate(f"{path}.compositePodGroupTemplates[{i}].name", t.get("name")))
        names.update(t.get("name") for _, t in listed)
        for i, t in listed:
            at = f"{path}.compositePodGroupTemplates[{i}]"
            children = [(j, c) for j, c in _items(t.get("podGroupTemplates"))]
            for j, c in children:
                if c.get("name") in names:
                    causes.append(_duplicate(f"{at}.podGroupTemplates[{j}].name", c.get("name")))
            names.update(c.get("name") for _, c in children)
            walk_names(t.get("compositePodGroupTemplates"), at)

    walk_names(spec.get("compositePodGroupTemplates"), "spec")

    def deep_enough(t: Obj, depth: int) -> bool:
        if depth == MAX_TREE_DEPTH:
            return False
        return all(deep_enough(c, depth + 1) for _, c in _items(t.get("compositePodGroupTemplates")))

    for i, t in _items(spec.get("compositePodGroupTemplates")):
        if not deep_enough(t, 1):
            causes.append(
                invalid_cause(
                    f"spec.compositePodGroupTemplates[{i}]",
                    "null",
                    f"maximum template hierarchy depth is {MAX_TREE_DEPTH}",
                )
            )

    priorities: list[tuple[Any, Any]] = []

    def collect(t: Obj) -> None:
        priorities.append((t.get("priorityClassName") or "", _int(t.get("priority"))))

    for _, t in _items(spec.get("podGroupTemplates")):
        collect(t)
    if len(set(priorities)) > 1:
        causes.append(invalid_cause("spec", "null", "detected multiple priority configurations"))
    else:

        def collect_tree(t: Obj) -> None:
            collect(t)
            for _, c in _items(t.get("compositePodGroupTemplates")):
                collect_tree(c)
            for _, c in _items(t.get("podGroupTemplates")):
                collect(c)

        for _, t in _items(spec.get("compositePodGroupTemplates")):
            collect_tree(t)
        if len(set(priorities)) > 1:
            causes.append(
                invalid_cause(
                    "spec",
                    "null",
                    "all priority and priorityClassName values must be identical, detected multiple values",
                )
            )

    def has_child(t: Obj, path: str) -> None:
        if not t.get("podGroupTemplates") and not t.get("compositePodGroupTemplates"):
            causes.append(
                invalid_cause(
                    path,
                    t.get("name", ""),
                    "must have at least one child PodGroupTemplate or CompositePodGroupTemplate",
                )
            )
        for j, c in _items(t.get("compositePodGroupTemplates")):
            has_child(c, f"{path}.compositePodGroupTemplates[{j}]")

    for i, t in _items(spec.get("compositePodGroupTemplates")):
        has_child(t, f"spec.compositePodGroupTemplates[{i}]")
    return causes


def _template_immutables(new: Any, old: Any, path: str, composite: bool) -> list[Cause]:
    """A template list on update: no template added or removed; each one's immutable fields kept."""
    causes: list[Cause] = []
    old_by_name = {t.get("name"): t for _, t in _items(old)}
    new_names = {t.get("name") for _, t in _items(new)}
    if any(name not in old_by_name for name in new_names):
        causes.append(forbidden_cause(path, "items may not be added"))
    if any(name not in new_names for name in old_by_name):
        causes.append(forbidden_cause(path, "items may not be removed"))
    for i, t in _items(new):
        before = old_by_name.get(t.get("name"))
        if before is None:
            continue
        at = f"{path}[{i}]"
        keys = ("schedulingConstraints", "resourceClaims", "disruptionMode", "priorityClassName", "priority")
        for key in (*keys, "preemptionPolicy"):
            if key == "resourceClaims" and composite:
                continue
            if t.get(key) != before.get(key):
                causes.append(_immutable(f"{at}.{key}", t.get(key)))
        causes += _policy_update(t.get("schedulingPolicy"), before.get("schedulingPolicy"), f"{at}.schedulingPolicy")
        if composite:
            for key, sub in (("podGroupTemplates", False), ("compositePodGroupTemplates", True)):
                causes += _template_immutables(t.get(key), before.get(key), f"{at}.{key}", sub)
    return causes


def _policy_update(new: Any, old: Any, path: str) -> list[Cause]:
    """``basic`` immutable; ``gang`` may be neither set nor unset (its counts may change)."""
    new, old = _obj(new), _obj(old)
    causes: list[Cause] = []
    if new.get("basic") != old.get("basic"):
        causes.append(_immutable(f"{path}.basic", new.get("basic")))
    if (new.get("gang") is None) != (old.get("gang") is None):
        if old.get("gang") is None:
            causes.append(forbidden_cause(f"{path}.gang", "field cannot be set once created"))
        else:
            causes.append(forbidden_cause(f"{path}.gang", "field cannot be cleared once set"))
    return causes


def validate_workload_update(new: Obj, old: Obj, gates: FeatureGates) -> list[Cause]:
    """ValidateWorkloadUpdate: the spec as on create, ``controllerRef`` kept, templates neither
    added nor removed and their immutable fields kept."""
    spec, old_spec = _obj(new.get("spec")), _obj(old.get("spec"))
    causes = validate_workload(new, gates)
    if old_spec.get("controllerRef") != spec.get("controllerRef"):
        causes.append(_immutable("spec.controllerRef", spec.get("controllerRef")))
    causes += _template_immutables(
        spec.get("podGroupTemplates"), old_spec.get("podGroupTemplates"), "spec.podGroupTemplates", False
    )
    causes += _template_immutables(
        spec.get("compositePodGroupTemplates"),
        old_spec.get("compositePodGroupTemplates"),
        "spec.compositePodGroupTemplates",
        True,
    )
    return causes


# --- PodGroup and CompositePodGroup -------------------------------------------------------------


def _workload_ref(ref: Any, path: str) -> list[Cause]:
    ref = _obj(ref)
    causes = _required_string(ref.get("workloadName"), f"{path}.workloadName", dns1123_subdomain_errors)
    return causes + _required_string(ref.get("templateName"), f"{path}.templateName", dns1123_label_errors)


def default_group(group: Obj) -> None:
    """A PodGroup's (or CompositePodGroup's) defaults: ``disruptionMode`` ``{single: {}}``."""
    spec = group.get("spec")
    if isinstance(spec, dict) and spec.get("disruptionMode") is None:
        spec["disruptionMode"] = {"single": {}}


def validate_pod_group(group: Obj, gates: FeatureGates) -> list[Cause]:
    """A PodGroup's spec on create (its status is the status subresource's)."""
    spec = _obj(group.get("spec"))
    causes: list[Cause] = []
    parent = spec.get("parentCompositePodGroupName")
    if parent is not None:
        if not gates.enabled("CompositePodGroup"):
            causes.append(_forbidden("spec.parentCompositePodGroupName"))
        else:
            causes += _optional_string(parent, "spec.parentCompositePodGroupName", dns1123_subdomain_errors)
    if spec.get("workloadRef") is not None:
        causes += _workload_ref(spec["workloadRef"], "spec.workloadRef")
    causes += _scheduling_policy(spec.get("schedulingPolicy"), "spec.schedulingPolicy")
    causes += _gated_constraints(spec, "spec", gates)
    causes += _claims(spec.get("resourceClaims"), "spec.resourceClaims")
    return causes + _priority_fields(spec, "spec", gates)


def validate_composite_pod_group(group: Obj, gates: FeatureGates) -> list[Cause]:
    """A CompositePodGroup's spec on create."""
    spec = _obj(group.get("spec"))
    causes = _optional_string(
        spec.get("parentCompositePodGroupName"), "spec.parentCompositePodGroupName", dns1123_subdomain_errors
    )
    if spec.get("workloadRef") is None:
        causes.append(required_cause("spec.workloadRef"))
    else:
        causes += _workload_ref(spec["workloadRef"], "spec.workloadRef")
    causes += _composite_policy(spec.get("schedulingPolicy"), "spec.schedulingPolicy")
    if spec.get("schedulingConstraints") is not None:
        causes += _constraints(spec["schedulingConstraints"], "spec.schedulingConstraints")
    return causes + _priority_fields(spec, "spec", gates)


_GROUP_IMMUTABLE = (
    "parentCompositePodGroupName",
    "workloadRef",
    "schedulingConstraints",
    "resourceClaims",
    "disruptionMode",
    "priorityClassName",
    "priority",
    "preemptionPolicy",
)


def validate_group_update(kind: str, new: Obj, old: Obj, gates: FeatureGates) -> list[Cause]:
    """A PodGroup's or CompositePodGroup's spec on update: valid as on create, and nothing of it
    changed but a gang's count."""
    spec, old_spec = _obj(new.get("spec")), _obj(old.get("spec"))
    if kind == "PodGroup":
        causes = validate_pod_group(new, gates)
    else:
        causes = validate_composite_pod_group(new, gates)
    for key in _GROUP_IMMUTABLE:
        if spec.get(key) != old_spec.get(key):
            causes.append(_immutable(f"spec.{key}", spec.get(key)))
    policy = _obj(spec.get("schedulingPolicy"))
    old_policy = _obj(old_spec.get("schedulingPolicy"))
    causes += _policy_update(policy, old_policy, "spec.schedulingPolicy")
    return causes


def validate_conditions(conditions: Any, path: str) -> list[Cause]:
    """metav1 ValidateConditions: each type a qualified name and there once, a known status, a
    transition time, a well-formed reason, a non-negative observed generation."""
    causes: list[Cause] = []
    seen: set[str] = set()
    for i, condition in _items(conditions):
        at = f"{path}[{i}]"
        kind = condition.get("type")
        if not isinstance(kind, str) or not kind:
            causes.append(required_cause(f"{at}.type", "must be set"))
        else:
            causes += [invalid_cause(f"{at}.type", kind, m) for m in qualified_name_errors(kind)]
            if kind in seen:
                causes.append(_duplicate(f"{at}.type", kind))
            seen.add(kind)
        status = condition.get("status")
        if status not in ("True", "False", "Unknown"):
            causes.append(not_supported_cause(f"{at}.status", status or "", ("False", "True", "Unknown")))
        if not condition.get("lastTransitionTime"):
            causes.append(required_cause(f"{at}.lastTransitionTime", "must be set"))
        reason = condition.get("reason")
        if not isinstance(reason, str) or not reason:
            causes.append(required_cause(f"{at}.reason", "must be set"))
        else:
            if not _CONDITION_REASON.match(reason):
                causes.append(invalid_cause(f"{at}.reason", reason, _CONDITION_REASON_MSG))
            if len(reason) > 1024:
                causes.append((f"{at}.reason", "FieldValueTooLong", "Too long: may not be more than 1024 bytes"))
        message = condition.get("message")
        if isinstance(message, str) and len(message) > 32768:
            causes.append((f"{at}.message", "FieldValueTooLong", "Too long: may not be more than 32768 bytes"))
        generation = _int(condition.get("observedGeneration"))
        if generation is not None and generation < 0:
            causes.append(
                invalid_cause(f"{at}.observedGeneration", generation, "must be greater than or equal to zero")
            )
    return causes


def validate_group_status(kind: str, group: Obj) -> list[Cause]:
    """ValidatePodGroupStatusUpdate / ValidateCompositePodGroupStatusUpdate."""
    status = _obj(group.get("status"))
    causes = validate_conditions(status.get("conditions"), "status.conditions")
    if kind == "PodGroup":
        claims = {c.get("name") for _, c in _items(_obj(group.get("spec")).get("resourceClaims"))}
        statuses = status.get("resourceClaimStatuses")
        causes += _map_list(statuses, "status.resourceClaimStatuses", MAX_CLAIMS)
        for i, entry in _items(statuses):
            if entry.get("name") not in claims:
                causes.append(
                    invalid_cause(
                        f"status.resourceClaimStatuses[{i}].name",
                        entry.get("name") or "",
                        "must match the name of an entry in `spec.resourceClaims`",
                    )
                )
            causes += _optional_string(
                entry.get("resourceClaimName"),
                f"status.resourceClaimStatuses[{i}].resourceClaimName",
                dns1123_subdomain_errors,
            )
    return causes


def drop_disabled_fields(kind: str, obj: Obj, old: Obj | None, gates: FeatureGates) -> None:
    """The registry strategies' dropDisabledFields: ``resourceClaims`` (and their statuses) left
    out while DRAWorkloadResourceClaims is off, unless the stored object already has them."""
    if gates.enabled("DRAWorkloadResourceClaims"):
        return
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    old_spec = _obj((old or {}).get("spec"))
    if kind == "PodGroup":
        if not old_spec.get("resourceClaims"):
            spec.pop("resourceClaims", None)
            status = obj.get("status")
            if isinstance(status, dict):
                status.pop("resourceClaimStatuses", None)
    elif kind == "Workload":
        old_templates = {t.get("name"): t for _, t in _items(old_spec.get("podGroupTemplates"))}
        for _, t in _items(spec.get("podGroupTemplates")):
            if not _obj(old_templates.get(t.get("name"))).get("resourceClaims"):
                t.pop("resourceClaims", None)


# --- pods ---------------------------------------------------------------------------------------


def validate_pod_scheduling_group(spec: Obj) -> list[Cause]:
    """``spec.schedulingGroup``: exactly one member (``podGroupName``), a DNS subdomain."""
    group = spec.get("schedulingGroup")
    if group is None:
        return []
    path = "spec.schedulingGroup"
    group = _obj(group)
    causes = _union(group, ("podGroupName",), path)
    if causes:
        return causes
    return _required_string(group.get("podGroupName"), f"{path}.podGroupName", dns1123_subdomain_errors)


def drop_pod_scheduling_group(spec: Obj, old_spec: Obj | None, gates: FeatureGates) -> None:
    """dropDisabledPodFields: ``schedulingGroup`` dropped while GenericWorkload is off, unless the
    stored pod already has one."""
    if gates.enabled("GenericWorkload"):
        return
    if old_spec is not None and old_spec.get("schedulingGroup") is not None:
        return
    spec.pop("schedulingGroup", None)
