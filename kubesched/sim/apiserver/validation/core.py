"""The part of core/v1 validation (pkg/apis/core/validation, v1.37) the scheduler depends on:
a pod's nodeSelector, affinity, tolerations, topology spread constraints and priority fields,
and a node's taints.

Functions take decoded objects (the types were checked by :mod:`.validation_decode`) and return
causes ``(field, reason, message)`` with upstream's field paths and wording, for a 422 Invalid.
"""

from __future__ import annotations

from typing import Any

from kubesched.framework.names import dns1123_label_errors, dns1123_subdomain_errors, label_value_errors
from kubesched.objects import Obj
from kubesched.sim.apiserver.validation.meta import (
    Cause,
    forbidden_cause,
    go_quote,
    invalid_cause,
    not_supported_cause,
    quote,
    required_cause,
    validate_label_name,
    validate_labels,
)

TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
TOLERATION_OPERATORS = ("Equal", "Exists")
#: The operators with TaintTolerationComparisonOperators on (or kept by an update, see
#: :func:`comparison_operators_allowed`): the values compare as integers.
COMPARISON_OPERATORS = ("Lt", "Gt")
#: apimachinery's content.IsDecimalInteger message.
_DECIMAL_INTEGER = "must be a valid decimal integer in canonical form"
WHEN_UNSATISFIABLE = ("DoNotSchedule", "ScheduleAnyway")
INCLUSION_POLICIES = ("Honor", "Ignore")
PREEMPTION_POLICIES = ("Never", "PreemptLowerPriority")
_NOT_POSITIVE = "must be greater than zero"
_IN_NOT_IN = "must be specified when `operator` is 'In' or 'NotIn'"
_EXISTS = "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
_WEIGHT_RANGE = "must be in the range 1-100"


def _dicts(items: Any) -> list[tuple[int, Obj]]:
    return [(i, x) for i, x in enumerate(items or ()) if isinstance(x, dict)]


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


# --- selectors ----------------------------------------------------------------------------------


def validate_node_selector_requirement(req: Obj, path: str) -> list[Cause]:
    """ValidateNodeSelectorRequirement: the operator decides how many values there may be."""
    causes: list[Cause] = []
    op, values = req.get("operator"), req.get("values") or []
    if op in ("In", "NotIn"):
        if not values:
            causes.append(required_cause(f"{path}.values", _IN_NOT_IN))
    elif op in ("Exists", "DoesNotExist"):
        if values:
            causes.append(forbidden_cause(f"{path}.values", _EXISTS))
    elif op in ("Gt", "Lt"):
        if len(values) != 1:
            causes.append(
                required_cause(f"{path}.values", "must be specified single value when `operator` is 'Lt' or 'Gt'")
            )
    else:
        causes.append(invalid_cause(f"{path}.operator", _str(op), "not a valid selector operator"))
    return causes + validate_label_name(_str(req.get("key")), f"{path}.key")


def _validate_node_field_requirement(req: Obj, path: str) -> list[Cause]:
    causes: list[Cause] = []
    op, values = req.get("operator"), req.get("values") or []
    if op in ("In", "NotIn"):
        if len(values) != 1:
            causes.append(
                required_cause(
                    f"{path}.values",
                    "must be only one value when `operator` is 'In' or 'NotIn' for node field selector",
                )
            )
    else:
        causes.append(invalid_cause(f"{path}.operator", _str(op), "not a valid selector operator"))
    if req.get("key") != "metadata.name":
        causes.append(invalid_cause(f"{path}.key", _str(req.get("key")), "not a valid field selector key"))
    else:
        for i, v in enumerate(values):
            causes += [invalid_cause(f"{path}.values[{i}]", v, m) for m in dns1123_subdomain_errors(_str(v))]
    return causes


def validate_node_selector_term(term: Obj, path: str) -> list[Cause]:
    causes: list[Cause] = []
    for j, req in _dicts(term.get("matchExpressions")):
        causes += validate_node_selector_requirement(req, f"{path}.matchExpressions[{j}]")
    for j, req in _dicts(term.get("matchFields")):
        causes += _validate_node_field_requirement(req, f"{path}.matchFields[{j}]")
    return causes


def validate_label_selector(selector: Any, path: str) -> list[Cause]:
    """metav1 ValidateLabelSelector: matchLabels as labels, matchExpressions by operator."""
    if not isinstance(selector, dict):
        return []
    causes = validate_labels(selector.get("matchLabels"), f"{path}.matchLabels")
    for i, req in _dicts(selector.get("matchExpressions")):
        where = f"{path}.matchExpressions[{i}]"
        op, values = req.get("operator"), req.get("values") or []
        if op in ("In", "NotIn"):
            if not values:
                causes.append(required_cause(f"{where}.values", _IN_NOT_IN))
        elif op in ("Exists", "DoesNotExist"):
            if values:
                causes.append(forbidden_cause(f"{where}.values", _EXISTS))
        else:
            causes.append(invalid_cause(f"{where}.operator", _str(op), "not a valid selector operator"))
        causes += validate_label_name(_str(req.get("key")), f"{where}.key")
        for k, v in enumerate(values):
            causes += [invalid_cause(f"{where}.values[{k}]", v, m) for m in label_value_errors(_str(v))]
    return causes


# --- affinity -----------------------------------------------------------------------------------


def _validate_node_affinity(na: Obj, path: str) -> list[Cause]:
    causes: list[Cause] = []
    required = na.get("requiredDuringSchedulingIgnoredDuringExecution")
    if isinstance(required, dict):
        where = f"{path}.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"
        terms = required.get("nodeSelectorTerms") or []
        if not terms:
            causes.append(required_cause(where, "must have at least one node selector term"))
        for i, term in _dicts(terms):
            causes += validate_node_selector_term(term, f"{where}[{i}]")
    for i, pref in _dicts(na.get("preferredDuringSchedulingIgnoredDuringExecution")):
        where = f"{path}.preferredDuringSchedulingIgnoredDuringExecution[{i}]"
        weight = pref.get("weight") or 0
        if not 1 <= weight <= 100:
            causes.append(invalid_cause(f"{where}.weight", weight, _WEIGHT_RANGE))
        causes += validate_node_selector_term(pref.get("preference") or {}, f"{where}.preference")
    return causes


def _validate_pod_affinity_term(term: Obj, path: str, names: bool) -> list[Cause]:
    causes = validate_label_selector(term.get("labelSelector"), f"{path}.labelSelector")
    causes += validate_label_selector(term.get("namespaceSelector"), f"{path}.namespaceSelector")
    for name in term.get("namespaces") or () if names else ():
        causes += [invalid_cause(f"{path}.namespace", name, m) for m in dns1123_label_errors(_str(name))]
    key = _str(term.get("topologyKey"))
    if not key:
        causes.append(required_cause(f"{path}.topologyKey", "can not be empty"))
    return causes + validate_label_name(key, f"{path}.topologyKey")


def _validate_pod_affinity(pa: Obj, path: str, names: bool) -> list[Cause]:
    causes: list[Cause] = []
    for i, term in _dicts(pa.get("requiredDuringSchedulingIgnoredDuringExecution")):
        causes += _validate_pod_affinity_term(
            term, f"{path}.requiredDuringSchedulingIgnoredDuringExecution[{i}]", names
        )
    for i, weighted in _dicts(pa.get("preferredDuringSchedulingIgnoredDuringExecution")):
        where = f"{path}.preferredDuringSchedulingIgnoredDuringExecution[{i}]"
        weight = weighted.get("weight") or 0
        if not 1 <= weight <= 100:
            causes.append(invalid_cause(f"{where}.weight", weight, _WEIGHT_RANGE))
        causes += _validate_pod_affinity_term(weighted.get("podAffinityTerm") or {}, f"{where}.podAffinityTerm", names)
    return causes


def validate_affinity(affinity: Any, path: str = "spec.affinity", names: bool = True) -> list[Cause]:
    if not isinstance(affinity, dict):
        return []
    causes: list[Cause] = []
    if isinstance(affinity.get("nodeAffinity"), dict):
        causes += _validate_node_affinity(affinity["nodeAffinity"], f"{path}.nodeAffinity")
    for field in ("podAffinity", "podAntiAffinity"):
        if isinstance(affinity.get(field), dict):
            causes += _validate_pod_affinity(affinity[field], f"{path}.{field}", names)
    return causes


# --- taints and tolerations ---------------------------------------------------------------------


def _validate_taint_effect(effect: str, allow_empty: bool, path: str) -> list[Cause]:
    if not effect:
        return [] if allow_empty else [required_cause(path)]
    if effect not in TAINT_EFFECTS:
        return [not_supported_cause(path, effect, TAINT_EFFECTS)]
    return []


def _go_toleration(t: Obj) -> str:
    seconds = t.get("tolerationSeconds")
    shown = "(*int64)(nil)" if seconds is None else f"&{seconds}"
    return (
        f"core.Toleration{{Key:{quote(_str(t.get('key')))}, Operator:{quote(_str(t.get('operator')))}, "
        f"Value:{quote(_str(t.get('value')))}, Effect:{quote(_str(t.get('effect')))}, TolerationSeconds:{shown}}}"
    )


def decimal_integer_errors(value: str) -> list[str]:
    """apimachinery's content.IsDecimalInteger: an integer as a person writes it ("0", "12",
    "-3"), no sign "+", no leading zero, no "-0"."""
    if not value:
        return ["must be non-empty"]
    digits = value[1:] if value[0] == "-" else value
    if value == "0":
        return []
    if not digits or digits[0] not in "123456789" or not all(c in "0123456789" for c in digits):
        return [_DECIMAL_INTEGER]
    return []


_UINT64_MAX = 2**64 - 1


def parse_int64_error(value: str) -> str | None:
    """What Go's ``strconv.ParseInt(value, 10, 64)`` returns as its error (``None`` when it
    parses): a sign ``+`` or ``-``, then ASCII digits (leading zeros allowed), within int64."""
    shown = f"strconv.ParseInt: parsing {go_quote(value)}: "
    digits = value[1:] if value[:1] in ("+", "-") else value
    if not digits:
        return shown + "invalid syntax"
    n = 0
    for c in digits:
        if not "0" <= c <= "9":
            return shown + "invalid syntax"
        n = n * 10 + ord(c) - ord("0")
        if n > _UINT64_MAX:  # ParseUint stops at the first digit past 64 bits
            return shown + "value out of range"
    limit = 2**63 if value[0] == "-" else 2**63 - 1
    return shown + "value out of range" if n > limit else None


def uses_comparison_operators(spec: Any) -> bool:
    """Whether a pod spec has a toleration with ``Lt`` or ``Gt``."""
    tolerations = spec.get("tolerations") if isinstance(spec, dict) else None
    return any(t.get("operator") in COMPARISON_OPERATORS for _, t in _dicts(tolerations))


def comparison_operators_allowed(gate: bool, old_spec: Any = None) -> bool:
    """Upstream's allowTaintTolerationComparisonOperators: with the gate on, or on an update of
    a pod that uses them already (so that it stays updatable once the gate is off)."""
    return gate or uses_comparison_operators(old_spec)


def validate_tolerations(
    tolerations: Any, path: str = "spec.tolerations", comparison_operators: bool = False
) -> list[Cause]:
    """ValidateTolerations: key, operator and value together, effect, tolerationSeconds only for
    NoExecute. ``Lt`` and ``Gt`` only with ``comparison_operators`` (the
    TaintTolerationComparisonOperators gate, or an update of a pod that uses them), and then
    with a value that is a canonical decimal integer (apimachinery's IsDecimalInteger) and that
    Go's ``strconv.ParseInt`` reads as an int64 (its error is upstream's message)."""
    causes: list[Cause] = []
    for i, t in _dicts(tolerations):
        where = f"{path}[{i}]"
        key, op, value, effect = (_str(t.get(f)) for f in ("key", "operator", "value", "effect"))
        if key:
            causes += validate_label_name(key, f"{where}.key")
        if not key and op != "Exists":
            causes.append(
                invalid_cause(
                    f"{where}.operator",
                    op,
                    'operator must be Exists when `key` is empty, which means "match all values and all keys"',
                )
            )
        if t.get("tolerationSeconds") is not None and effect != "NoExecute":
            causes.append(
                invalid_cause(f"{where}.effect", effect, "effect must be 'NoExecute' when `tolerationSeconds` is set")
            )
        if op in ("Equal", ""):
            errs = label_value_errors(value)
            if errs:
                causes.append(invalid_cause(f"{where}.operator", value, ";".join(errs)))
        elif op == "Exists":
            if value:
                causes.append(
                    (
                        f"{where}.operator",
                        "FieldValueInvalid",
                        f"Invalid value: {_go_toleration(t)}: value must be empty when `operator` is 'Exists'",
                    )
                )
        elif op in COMPARISON_OPERATORS:
            if not comparison_operators:
                # Upstream lists all four operators here, and only Equal and Exists below.
                allowed = TOLERATION_OPERATORS + COMPARISON_OPERATORS
                causes.append(not_supported_cause(f"{where}.operator", op, allowed))
            else:
                causes += [invalid_cause(f"{where}.value", value, m) for m in decimal_integer_errors(value)]
                parse_error = parse_int64_error(value)
                if parse_error is not None:
                    causes.append(invalid_cause(f"{where}.value", value, parse_error))
        else:
            causes.append(not_supported_cause(f"{where}.operator", op, TOLERATION_OPERATORS))
        causes += _validate_taint_effect(effect, True, f"{where}.effect")
    return causes


def validate_taints(taints: Any, path: str = "spec.taints") -> list[Cause]:
    """validateNodeTaints: key a qualified name, value a label value, effect required, unique by key and effect."""
    causes: list[Cause] = []
    seen: set[tuple[str, str]] = set()
    for i, t in _dicts(taints):
        where = f"{path}[{i}]"
        key, value, effect = (_str(t.get(f)) for f in ("key", "value", "effect"))
        causes += validate_label_name(key, f"{where}.key")
        errs = label_value_errors(value)
        if errs:
            causes.append(invalid_cause(f"{where}.value", value, ";".join(errs)))
        causes += _validate_taint_effect(effect, False, f"{where}.effect")
        if (key, effect) in seen:
            causes.append(
                (
                    where,
                    "FieldValueDuplicate",
                    f"Duplicate value: core.Taint{{Key:{quote(key)}, Value:{quote(value)}, Effect:{quote(effect)}, "
                    "TimeAdded:<nil>}: taints must be unique by key and effect pair",
                )
            )
            continue
        seen.add((key, effect))
    return causes


# --- topology spread ----------------------------------------------------------------------------


def validate_topology_spread_constraints(constraints: Any, path: str = "spec.topologySpreadConstraints") -> list[Cause]:
    causes: list[Cause] = []
    items = _dicts(constraints)
    for i, c in items:
        where = f"{path}[{i}]"
        max_skew = c.get("maxSkew") or 0
        if max_skew <= 0:
            causes.append(invalid_cause(f"{where}.maxSkew", max_skew, _NOT_POSITIVE))
        key = _str(c.get("topologyKey"))
        if not key:
            causes.append(required_cause(f"{where}.topologyKey", "can not be empty"))
        action = _str(c.get("whenUnsatisfiable"))
        if action not in WHEN_UNSATISFIABLE:
            causes.append(not_supported_cause(f"{where}.whenUnsatisfiable", action, WHEN_UNSATISFIABLE))
        for _, later in items[i + 1 :]:
            if later.get("topologyKey") == c.get("topologyKey") and later.get("whenUnsatisfiable") == c.get(
                "whenUnsatisfiable"
            ):
                causes.append(
                    (
                        f"{where}.{{topologyKey, whenUnsatisfiable}}",
                        "FieldValueDuplicate",
                        f'Duplicate value: "{{{key}, {action}}}"',
                    )
                )
                break
        min_domains = c.get("minDomains")
        if min_domains is not None:
            if min_domains <= 0:
                causes.append(invalid_cause(f"{where}.minDomains", min_domains, _NOT_POSITIVE))
            if action != "DoNotSchedule":
                causes.append(
                    invalid_cause(
                        f"{where}.minDomains",
                        min_domains,
                        f"can only use minDomains if whenUnsatisfiable=DoNotSchedule, not {action}",
                    )
                )
        for policy in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
            value = c.get(policy)
            if value is not None and value not in INCLUSION_POLICIES:
                causes.append(not_supported_cause(f"{where}.{policy}", value, INCLUSION_POLICIES))
        causes += validate_label_selector(c.get("labelSelector"), f"{where}.labelSelector")
    return causes


# --- pods and nodes -----------------------------------------------------------------------------


def validate_pod_scheduling(spec: Obj, names: bool = True, comparison_operators: bool = False) -> list[Cause]:
    """The pod spec fields the scheduler reads, validated as on create; ``names=False`` leaves out
    the formats of the object names they mention (``nodeName``, affinity terms' namespaces);
    ``comparison_operators``: TaintTolerationComparisonOperators is on (``Lt``/``Gt``)."""
    causes = validate_labels(spec.get("nodeSelector"), "spec.nodeSelector")
    causes += validate_affinity(spec.get("affinity"), names=names)
    causes += validate_tolerations(spec.get("tolerations"), comparison_operators=comparison_operators)
    causes += validate_topology_spread_constraints(spec.get("topologySpreadConstraints"))
    pc = spec.get("priorityClassName")
    if pc:
        causes += [invalid_cause("spec.priorityClassName", pc, m) for m in dns1123_subdomain_errors(pc)]
    policy = spec.get("preemptionPolicy")
    if policy is not None and policy not in PREEMPTION_POLICIES:
        causes.append(not_supported_cause("spec.preemptionPolicy", policy, PREEMPTION_POLICIES))
    node = spec.get("nodeName")
    if node and names:
        causes += [invalid_cause("spec.nodeName", node, m) for m in dns1123_subdomain_errors(node)]
    return causes


def validate_node_spec(spec: Any) -> list[Cause]:
    if not isinstance(spec, dict):
        return []
    return validate_taints(spec.get("taints"))
