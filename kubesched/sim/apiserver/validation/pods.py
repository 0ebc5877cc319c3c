"""A pod's fields behind feature gates, as kube-apiserver 1.37 treats them: what the pod
strategy drops while a gate is off (pkg/api/pod ``dropDisabledFields``), the validation options
computed from the gates (``GetValidationOptionsFromPodSpecAndMeta``), and the container restart
policy and rules they decide (pkg/apis/core/validation).

Upstream ratchets every one of them: on an update, a field the stored pod already uses is kept,
and stays valid, with its gate off. The gates and what follows from them:

==========================================  ===========================================  ==========
gate (1.37 default)                         a pod field while the gate is off            how
==========================================  ===========================================  ==========
TaintTolerationComparisonOperators (off)    ``Lt``/``Gt`` toleration operators           refused
ContainerRestartRules (on)                  containers' ``restartPolicy`` and            dropped
                                            ``restartPolicyRules``; init containers'
                                            rules and a ``restartPolicy`` not ``Always``
RestartAllContainersOnContainerExits (on)   the ``RestartAllContainers`` rule action;    refused
                                            rules on a sidecar (``restartPolicy: Always``)
PodLevelResources (on)                      ``spec.resources``                           dropped
InPlacePodLevelResourcesVerticalScaling     a resize of a pod with pod-level resources   refused
(on)
MatchLabelKeysInPodTopologySpread (on)      ``topologySpreadConstraints[].matchLabelKeys``  dropped
GenericWorkload (off)                       ``spec.schedulingGroup``                     dropped
==========================================  ===========================================  ==========
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kubesched.framework.features import FeatureGates
from kubesched.objects import Obj
from kubesched.sim.apiserver.validation.core import comparison_operators_allowed
from kubesched.sim.apiserver.validation.meta import Cause, forbidden_cause, not_supported_cause, required_cause
from kubesched.sim.apiserver.validation.scheduling import drop_pod_scheduling_group

CONTAINER_RESTART_POLICIES = ("Always", "Never", "OnFailure")
EXIT_CODE_OPERATORS = ("In", "NotIn")
#: The rule actions without and with RestartAllContainersOnContainerExits (sorted, as upstream lists them).
RESTART_ACTIONS = ("Restart",)
RESTART_ACTIONS_WITH_RESTART_ALL = ("Restart", "RestartAllContainers")
MAX_RESTART_RULES = 20
MAX_EXIT_CODES = 255


def _dicts(items: Any) -> list[tuple[int, Obj]]:
    return [(i, x) for i, x in enumerate(items or ()) if isinstance(x, dict)] if isinstance(items, list) else []


def _spec(spec: Any) -> Obj:
    return spec if isinstance(spec, dict) else {}


@dataclass(frozen=True)
class PodValidationOptions:
    """The gate-tied part of upstream's PodValidationOptions that these checks read."""

    #: AllowTaintTolerationComparisonOperators: the gate, or the stored pod uses ``Lt``/``Gt``.
    comparison_operators: bool = False
    #: AllowContainerRestartPolicyRules: ContainerRestartRules, or the stored pod uses them.
    container_restart_rules: bool = True
    #: AllowRestartAllContainers: RestartAllContainersOnContainerExits, or the stored pod uses it.
    restart_all_containers: bool = True
    #: PodLevelResourcesEnabled: ``spec.resources`` is validated.
    pod_level_resources: bool = True
    #: InPlacePodLevelResourcesVerticalScalingEnabled: a pod with pod-level resources may be resized.
    pod_level_resize: bool = True


def container_restart_rules_in_use(spec: Any) -> bool:
    """containerRestartRulesInUse: an init container with a restartPolicy other than ``Always``
    or with rules, or a regular container with a restartPolicy."""
    spec = _spec(spec)
    for _, c in _dicts(spec.get("initContainers")):
        policy = c.get("restartPolicy")
        if (policy is not None and policy != "Always") or c.get("restartPolicyRules"):
            return True
    return any(c.get("restartPolicy") is not None for _, c in _dicts(spec.get("containers")))


def restart_all_containers_in_use(spec: Any) -> bool:
    """restartAllContainersActionInUse: a rule with the RestartAllContainers action, or a
    sidecar with rules."""
    spec = _spec(spec)
    for field in ("containers", "initContainers"):
        for _, c in _dicts(spec.get(field)):
            if any(r.get("action") == "RestartAllContainers" for _, r in _dicts(c.get("restartPolicyRules"))):
                return True
            if field == "initContainers" and c.get("restartPolicy") == "Always" and c.get("restartPolicyRules"):
                return True
    return False


def pod_validation_options(gates: FeatureGates | None = None, old_spec: Any = None) -> PodValidationOptions:
    """GetValidationOptionsFromPodSpecAndMeta's gate-tied options under ``gates`` (1.37's
    defaults when None), for a pod being created (``old_spec`` None) or updated."""
    gates = gates if gates is not None else FeatureGates()
    updating = old_spec is not None
    return PodValidationOptions(
        comparison_operators=comparison_operators_allowed(
            gates.enabled("TaintTolerationComparisonOperators"), old_spec
        ),
        container_restart_rules=gates.enabled("ContainerRestartRules")
        or (updating and container_restart_rules_in_use(old_spec)),
        restart_all_containers=gates.enabled("RestartAllContainersOnContainerExits")
        or (updating and restart_all_containers_in_use(old_spec)),
        pod_level_resources=gates.enabled("PodLevelResources"),
        pod_level_resize=gates.enabled("InPlacePodLevelResourcesVerticalScaling"),
    )


# --- dropDisabledFields -------------------------------------------------------------------------


def _pod_level_resources_in_use(spec: Any) -> bool:
    resources = _spec(spec).get("resources")
    return isinstance(resources, dict) and bool(resources.get("requests") or resources.get("limits"))


def _match_label_keys_in_use(spec: Any) -> bool:
    return any(c.get("matchLabelKeys") for _, c in _dicts(_spec(spec).get("topologySpreadConstraints")))


def drop_container_restart_rules(spec: Obj) -> None:
    """dropContainerRestartRules: every container's rules, an init container's restartPolicy
    unless ``Always`` (a sidecar stays one), a regular or ephemeral container's restartPolicy."""
    for _, c in _dicts(spec.get("initContainers")):
        if c.get("restartPolicy") is not None and c.get("restartPolicy") != "Always":
            c.pop("restartPolicy", None)
        c.pop("restartPolicyRules", None)
    for field in ("containers", "ephemeralContainers"):
        for _, c in _dicts(spec.get(field)):
            c.pop("restartPolicy", None)
            c.pop("restartPolicyRules", None)


def drop_disabled_pod_fields(spec: Any, old_spec: Any, gates: FeatureGates, scheduling_group: bool = True) -> None:
    """dropDisabledFields for the gated fields kubesched reads: each is removed from ``spec``
    while its gate is off, unless ``old_spec`` (the stored pod's, on an update) uses it.
    ``scheduling_group=False`` leaves ``spec.schedulingGroup`` to the caller."""
    if not isinstance(spec, dict):
        return
    if scheduling_group:
        drop_pod_scheduling_group(spec, old_spec if isinstance(old_spec, dict) else None, gates)
    if not gates.enabled("PodLevelResources") and not _pod_level_resources_in_use(old_spec):
        spec.pop("resources", None)
    if not gates.enabled("MatchLabelKeysInPodTopologySpread") and not _match_label_keys_in_use(old_spec):
        for _, c in _dicts(spec.get("topologySpreadConstraints")):
            c.pop("matchLabelKeys", None)
    if not gates.enabled("ContainerRestartRules") and not container_restart_rules_in_use(old_spec):
        drop_container_restart_rules(spec)


# --- container restart policy and rules -----------------------------------------------------------


def _too_many(path: str, count: int, limit: int) -> Cause:
    return (path, "FieldValueTooMany", f"Too many: {count}: must have at most {limit} items")


def _validate_restart_policy_and_rules(c: Obj, path: str, opts: PodValidationOptions) -> list[Cause]:
    """validateContainerRestartPolicy: a restartPolicy of the three when rules are given, at
    most 20 rules, each with a supported action and an ``exitCodes`` of In/NotIn and at most
    255 values."""
    causes: list[Cause] = []
    policy = c.get("restartPolicy")
    given = c.get("restartPolicyRules")
    rules: list[Any] = given if isinstance(given, list) else []
    if policy is None:
        if not rules:
            return causes
        causes.append(required_cause(f"{path}.restartPolicy", "must specify restartPolicy when restart rules are used"))
    elif policy not in CONTAINER_RESTART_POLICIES:
        causes.append(not_supported_cause(f"{path}.restartPolicy", policy, CONTAINER_RESTART_POLICIES))
    if len(rules) > MAX_RESTART_RULES:
        causes.append(_too_many(f"{path}.restartPolicyRules", len(rules), MAX_RESTART_RULES))
    actions = RESTART_ACTIONS_WITH_RESTART_ALL if opts.restart_all_containers else RESTART_ACTIONS
    for i, rule in _dicts(rules):
        where = f"{path}.restartPolicyRules[{i}]"
        action = rule.get("action")
        if action not in actions:
            causes.append(not_supported_cause(f"{where}.action", action if action is not None else "", actions))
        exit_codes = rule.get("exitCodes")
        if isinstance(exit_codes, dict):
            operator = exit_codes.get("operator")
            if operator not in EXIT_CODE_OPERATORS:
                shown = operator if operator is not None else ""
                causes.append(not_supported_cause(f"{where}.exitCodes.operator", shown, EXIT_CODE_OPERATORS))
            values = exit_codes.get("values")
            if isinstance(values, list) and len(values) > MAX_EXIT_CODES:
                causes.append(_too_many(f"{where}.exitCodes.values", len(values), MAX_EXIT_CODES))
        else:
            causes.append(required_cause(f"{where}.exitCodes", "must be specified"))
    return causes


def _validate_init_container_restart_policy(c: Obj, path: str, opts: PodValidationOptions) -> list[Cause]:
    """validateInitContainerRestartPolicy: with ContainerRestartRules, a sidecar (``Always``)
    may have rules only with RestartAllContainersOnContainerExits; without, only ``Always``."""
    policy = c.get("restartPolicy")
    rules = c.get("restartPolicyRules") if isinstance(c.get("restartPolicyRules"), list) else []
    if policy is None:
        if rules:
            return [required_cause(f"{path}.restartPolicy", "must specify restartPolicy when restart rules are used")]
        return []
    if not opts.container_restart_rules:
        return [] if policy == "Always" else [not_supported_cause(f"{path}.restartPolicy", policy, ("Always",))]
    if policy == "Always" and not opts.restart_all_containers:
        if rules:
            return [
                forbidden_cause(
                    f"{path}.restartPolicyRules",
                    "restartPolicyRules are not allowed for init containers with restart policy Always",
                )
            ]
        return []
    return _validate_restart_policy_and_rules(c, path, opts)


def validate_container_restart_policies(spec: Any, opts: PodValidationOptions) -> list[Cause]:
    """The restart policy and rules of a pod's containers, then of its init containers, as
    validateContainers and validateInitContainers check them under ``opts``."""
    spec = _spec(spec)
    causes: list[Cause] = []
    for i, c in _dicts(spec.get("containers")):
        path = f"spec.containers[{i}]"
        if opts.container_restart_rules:
            causes += _validate_restart_policy_and_rules(c, path, opts)
        elif c.get("restartPolicy") is not None:
            causes.append(forbidden_cause(f"{path}.restartPolicy", "may not be set for non-init containers"))
    for i, c in _dicts(spec.get("initContainers")):
        causes += _validate_init_container_restart_policy(c, f"spec.initContainers[{i}]", opts)
    return causes
