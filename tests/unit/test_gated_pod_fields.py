"""Pod fields behind feature gates, as kube-apiserver 1.37 treats them (pkg/api/pod
dropDisabledFields and GetValidationOptionsFromPodSpecAndMeta, pkg/apis/core/validation): in the
embedded API server, in scenarios (simulate, sim serve) and in the pods the simulated controllers
make. ContainerRestartRules off drops a container's restartPolicy and restartPolicyRules;
RestartAllContainersOnContainerExits off refuses the RestartAllContainers action and rules on a
sidecar; PodLevelResources off drops ``spec.resources``; InPlacePodLevelResourcesVerticalScaling
off refuses resizing a pod with pod-level resources; MatchLabelKeysInPodTopologySpread off drops
``matchLabelKeys``. An update keeps what the stored pod already uses (upstream's ratcheting)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubesched.cluster.store import Store
from kubesched.errors import ConfigurationError
from kubesched.framework.features import FeatureGates
from kubesched.sim.apiserver.admission import admit_new_pod, validate_update
from kubesched.sim.apiserver.errors import APIError
from kubesched.sim.apiserver.validation import scheduling_problems
from kubesched.sim.apiserver.validation.pods import (
    drop_disabled_pod_fields,
    pod_validation_options,
    validate_container_restart_policies,
)
from kubesched.sim.controllers import ControllerManager
from kubesched.sim.controllers.daemonset import should_run
from kubesched.sim.scenario.reading import ScenarioError, parse_scenario

Obj = dict[str, Any]

RULES_OFF = FeatureGates({"ContainerRestartRules": False, "RestartAllContainersOnContainerExits": False})
RESTART_ALL_OFF = FeatureGates({"RestartAllContainersOnContainerExits": False})
COMPARISONS_ON = FeatureGates({"TaintTolerationComparisonOperators": True})


def _rule(action: str = "Restart", codes: list[int] | None = None) -> Obj:
    return {"action": action, "exitCodes": {"operator": "In", "values": codes or [42]}}


def pod(**spec: Any) -> Obj:
    base: Obj = {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}]}
    base.update(spec)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"}, "spec": base}


def with_rules() -> Obj:
    """Every field ContainerRestartRules guards: a container's policy and rules, an init
    container's OnFailure policy and rules, and a sidecar with rules."""
    return pod(
        containers=[
            {
                "name": "c",
                "image": "registry.k8s.io/pause:3.10",
                "restartPolicy": "Never",
                "restartPolicyRules": [_rule()],
            }
        ],
        initContainers=[
            {
                "name": "init",
                "image": "registry.k8s.io/pause:3.10",
                "restartPolicy": "OnFailure",
                "restartPolicyRules": [_rule()],
            },
            {"name": "sidecar", "image": "registry.k8s.io/pause:3.10", "restartPolicy": "Always"},
        ],
    )


def causes_of(exc: pytest.ExceptionInfo[APIError]) -> list[tuple[str, str]]:
    assert exc.value.details is not None
    return [(c["field"], c["message"]) for c in exc.value.details["causes"]]


# --- the gates ------------------------------------------------------------------------------------


def test_the_gates_are_beta_and_on_in_1_37() -> None:
    gates = FeatureGates()
    assert gates.enabled("ContainerRestartRules") is True
    assert gates.enabled("RestartAllContainersOnContainerExits") is True


def test_restart_all_containers_needs_container_restart_rules_as_upstream() -> None:
    with pytest.raises(
        ConfigurationError,
        match=r"^RestartAllContainersOnContainerExits is enabled, but depends on features that are disabled: "
        r"\[ContainerRestartRules\]$",
    ):
        FeatureGates({"ContainerRestartRules": False})
    assert RULES_OFF.enabled("ContainerRestartRules") is False


def test_the_command_line_reports_the_dependency() -> None:
    from kubesched.config.feature_gates import FeatureGateError, parse_feature_gates

    with pytest.raises(FeatureGateError, match="depends on features that are disabled"):
        parse_feature_gates("ContainerRestartRules=false")
    gates = parse_feature_gates("ContainerRestartRules=false,RestartAllContainersOnContainerExits=false")
    assert gates == RULES_OFF


# --- ContainerRestartRules: dropped --------------------------------------------------------------


def test_gate_off_the_api_server_drops_restart_rules_on_create() -> None:
    admitted = admit_new_pod(with_rules(), {}, RULES_OFF)
    spec = admitted["spec"]
    assert "restartPolicy" not in spec["containers"][0]
    assert "restartPolicyRules" not in spec["containers"][0]
    assert "restartPolicy" not in spec["initContainers"][0]
    assert "restartPolicyRules" not in spec["initContainers"][0]
    # A sidecar stays a sidecar.
    assert spec["initContainers"][1]["restartPolicy"] == "Always"


def test_gate_on_the_api_server_keeps_them() -> None:
    admitted = admit_new_pod(with_rules(), {}, FeatureGates())
    assert admitted["spec"]["containers"][0]["restartPolicyRules"] == [_rule()]
    assert admitted["spec"]["initContainers"][0]["restartPolicy"] == "OnFailure"


def test_gate_off_an_update_keeps_the_rules_the_stored_pod_has() -> None:
    old = admit_new_pod(with_rules(), {}, FeatureGates())
    new = copy.deepcopy(old)
    new["metadata"]["labels"] = {"a": "b"}
    validate_update("Pod", "", old, new, "", RULES_OFF)
    assert new["spec"]["containers"][0]["restartPolicyRules"] == [_rule()]
    # ...and the options upstream computes from the stored pod allow them.
    assert pod_validation_options(RULES_OFF, old["spec"]).container_restart_rules is True
    assert pod_validation_options(RULES_OFF, None).container_restart_rules is False


def test_gate_off_an_update_drops_rules_the_stored_pod_does_not_have() -> None:
    old = admit_new_pod(pod(), {}, RULES_OFF)
    new = copy.deepcopy(old)
    new["spec"]["containers"][0]["restartPolicy"] = "Never"
    validate_update("Pod", "", old, new, "", RULES_OFF)  # dropped, so nothing changed
    assert "restartPolicy" not in new["spec"]["containers"][0]


def test_without_the_option_a_container_restart_policy_is_forbidden() -> None:
    # What is left when the field was not dropped (upstream: validateContainers).
    opts = pod_validation_options(RULES_OFF)
    assert validate_container_restart_policies(with_rules()["spec"], opts) == [
        (
            "spec.containers[0].restartPolicy",
            "FieldValueForbidden",
            "Forbidden: may not be set for non-init containers",
        ),
        (
            "spec.initContainers[0].restartPolicy",
            "FieldValueNotSupported",
            'Unsupported value: "OnFailure": supported values: "Always"',
        ),
    ]


# --- RestartAllContainersOnContainerExits: refused ------------------------------------------------


def restart_all() -> Obj:
    return pod(
        containers=[
            {
                "name": "c",
                "image": "registry.k8s.io/pause:3.10",
                "restartPolicy": "Never",
                "restartPolicyRules": [_rule("RestartAllContainers")],
            }
        ],
        initContainers=[
            {
                "name": "sidecar",
                "image": "registry.k8s.io/pause:3.10",
                "restartPolicy": "Always",
                "restartPolicyRules": [_rule("RestartAllContainers")],
            }
        ],
    )


def test_restart_all_gate_off_the_action_and_sidecar_rules_are_refused() -> None:
    with pytest.raises(APIError) as exc:
        admit_new_pod(restart_all(), {}, RESTART_ALL_OFF)
    assert exc.value.code == 422
    assert causes_of(exc) == [
        (
            "spec.containers[0].restartPolicyRules[0].action",
            'Unsupported value: "RestartAllContainers": supported values: "Restart"',
        ),
        (
            "spec.initContainers[0].restartPolicyRules",
            "Forbidden: restartPolicyRules are not allowed for init containers with restart policy Always",
        ),
    ]


def test_restart_all_gate_on_both_are_accepted() -> None:
    admitted = admit_new_pod(restart_all(), {}, FeatureGates())
    assert admitted["spec"]["initContainers"][0]["restartPolicyRules"][0]["action"] == "RestartAllContainers"


def test_restart_all_gate_off_an_update_of_a_pod_using_it_stays_valid() -> None:
    old = admit_new_pod(restart_all(), {}, FeatureGates())
    new = copy.deepcopy(old)
    new["metadata"]["labels"] = {"a": "b"}
    validate_update("Pod", "", old, new, "", RESTART_ALL_OFF)
    assert pod_validation_options(RESTART_ALL_OFF, old["spec"]).restart_all_containers is True


@pytest.mark.parametrize(
    "gates,listed",
    [(FeatureGates(), '"Restart", "RestartAllContainers"'), (RESTART_ALL_OFF, '"Restart"')],
    ids=["gate-on", "gate-off"],
)
def test_an_unknown_action_lists_what_the_gate_allows(gates: FeatureGates, listed: str) -> None:
    spec = pod(
        containers=[{"name": "c", "image": "i", "restartPolicy": "Never", "restartPolicyRules": [_rule("Reboot")]}]
    )["spec"]
    assert validate_container_restart_policies(spec, pod_validation_options(gates)) == [
        (
            "spec.containers[0].restartPolicyRules[0].action",
            "FieldValueNotSupported",
            f'Unsupported value: "Reboot": supported values: {listed}',
        )
    ]


def test_restart_rules_are_validated_as_upstream() -> None:
    spec = pod(
        containers=[
            {"name": "a", "image": "i", "restartPolicyRules": [_rule()]},
            {"name": "b", "image": "i", "restartPolicy": "Sometimes"},
            {
                "name": "c",
                "image": "i",
                "restartPolicy": "OnFailure",
                "restartPolicyRules": [{"action": "Restart"}, {"action": "Restart", "exitCodes": {"operator": "Is"}}],
            },
            {"name": "d", "image": "i", "restartPolicy": "Never", "restartPolicyRules": [_rule()] * 21},
            {
                "name": "e",
                "image": "i",
                "restartPolicy": "Never",
                "restartPolicyRules": [_rule(codes=list(range(256)))],
            },
        ],
        initContainers=[{"name": "i", "image": "i", "restartPolicyRules": [_rule()]}],
    )["spec"]
    assert validate_container_restart_policies(spec, pod_validation_options(FeatureGates())) == [
        (
            "spec.containers[0].restartPolicy",
            "FieldValueRequired",
            "Required value: must specify restartPolicy when restart rules are used",
        ),
        (
            "spec.containers[1].restartPolicy",
            "FieldValueNotSupported",
            'Unsupported value: "Sometimes": supported values: "Always", "Never", "OnFailure"',
        ),
        (
            "spec.containers[2].restartPolicyRules[0].exitCodes",
            "FieldValueRequired",
            "Required value: must be specified",
        ),
        (
            "spec.containers[2].restartPolicyRules[1].exitCodes.operator",
            "FieldValueNotSupported",
            'Unsupported value: "Is": supported values: "In", "NotIn"',
        ),
        ("spec.containers[3].restartPolicyRules", "FieldValueTooMany", "Too many: 21: must have at most 20 items"),
        (
            "spec.containers[4].restartPolicyRules[0].exitCodes.values",
            "FieldValueTooMany",
            "Too many: 256: must have at most 255 items",
        ),
        (
            "spec.initContainers[0].restartPolicy",
            "FieldValueRequired",
            "Required value: must specify restartPolicy when restart rules are used",
        ),
    ]


# --- PodLevelResources, InPlacePodLevelResourcesVerticalScaling, MatchLabelKeys --------------------


def test_pod_level_resources_gate_off_drops_spec_resources() -> None:
    obj = pod(resources={"requests": {"cpu": "1"}, "limits": {"cpu": "2"}})
    assert "resources" not in admit_new_pod(copy.deepcopy(obj), {}, FeatureGates({"PodLevelResources": False}))["spec"]
    assert admit_new_pod(obj, {}, FeatureGates())["spec"]["resources"]["limits"] == {"cpu": "2"}


def test_pod_level_resize_gate_off_refuses_a_pod_with_pod_level_resources() -> None:
    old = admit_new_pod(pod(resources={"requests": {"cpu": "1"}, "limits": {"cpu": "1"}}), {}, FeatureGates())
    new = copy.deepcopy(old)
    new["spec"]["resources"] = {"requests": {"cpu": "2"}, "limits": {"cpu": "2"}}
    validate_update("Pod", "", old, copy.deepcopy(new), "resize", FeatureGates())
    with pytest.raises(APIError) as exc:
        validate_update("Pod", "", old, new, "resize", FeatureGates({"InPlacePodLevelResourcesVerticalScaling": False}))
    assert causes_of(exc) == [
        (
            "",
            "Forbidden: resize of pods with pod-level resources is forbidden when "
            "InPlacePodLevelResourcesVerticalScalingEnabled feature gate is disabled",
        )
    ]


def test_match_label_keys_gate_off_drops_them_unless_the_stored_pod_has_them() -> None:
    constraint = {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule", "matchLabelKeys": ["a"]}
    off = FeatureGates({"MatchLabelKeysInPodTopologySpread": False})
    spec: Obj = {"topologySpreadConstraints": [dict(constraint)]}
    drop_disabled_pod_fields(spec, None, off)
    assert "matchLabelKeys" not in spec["topologySpreadConstraints"][0]
    spec = {"topologySpreadConstraints": [dict(constraint)]}
    drop_disabled_pod_fields(spec, {"topologySpreadConstraints": [dict(constraint)]}, off)
    assert spec["topologySpreadConstraints"][0]["matchLabelKeys"] == ["a"]


# --- scenarios (simulate, sim serve --scenario, the import endpoint) -------------------------------


def node(name: str, sla: str) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name},
        "spec": {"taints": [{"key": "sla", "value": sla, "effect": "NoSchedule"}]},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
    }


def gt_pod(value: str = "900") -> Obj:
    return pod(tolerations=[{"key": "sla", "operator": "Gt", "value": value, "effect": "NoSchedule"}])


def test_a_scenario_takes_comparison_operators_with_the_gate_on() -> None:
    sc = parse_scenario([node("n1", "950"), gt_pod()], "s", gates=COMPARISONS_ON)
    assert sc.pending_pods[0]["spec"]["tolerations"][0]["operator"] == "Gt"
    with pytest.raises(ScenarioError, match=r'spec\.tolerations\[0\]\.operator: Unsupported value: "Gt"'):
        parse_scenario([node("n1", "950"), gt_pod()], "s", gates=FeatureGates())
    with pytest.raises(ScenarioError, match=r'spec\.tolerations\[0\]\.value: Invalid value: "0900"'):
        parse_scenario([gt_pod("0900")], "s", gates=COMPARISONS_ON)


def test_a_scenario_step_is_read_under_the_same_gates() -> None:
    steps = {"apiVersion": "kubesched.io/v1", "kind": "Steps", "steps": [{"at": "10s", "create": [gt_pod()]}]}
    sc = parse_scenario([steps], "s", gates=COMPARISONS_ON)
    assert sc.steps[0].scenario.pending_pods[0]["spec"]["tolerations"][0]["operator"] == "Gt"


def test_a_scenario_drops_restart_rules_with_the_gate_off_and_refuses_restart_all() -> None:
    sc = parse_scenario([with_rules()], "s", gates=RULES_OFF)
    assert "restartPolicyRules" not in sc.pending_pods[0]["spec"]["containers"][0]
    with pytest.raises(
        ScenarioError, match=r'restartPolicyRules\[0\]\.action: Unsupported value: "RestartAllContainers"'
    ):
        parse_scenario([restart_all()], "s", gates=RESTART_ALL_OFF)
    assert parse_scenario([restart_all()], "s", gates=FeatureGates()).pending_pods


def test_scheduling_problems_follow_the_gates() -> None:
    assert scheduling_problems("Pod", gt_pod(), COMPARISONS_ON) == []
    assert scheduling_problems("Pod", gt_pod()) == [
        'spec.tolerations[0].operator: Unsupported value: "Gt": supported values: "Equal", "Exists", "Lt", "Gt"'
    ]


# --- the simulated controllers --------------------------------------------------------------------


def test_controllers_make_pods_under_the_gates() -> None:
    store = Store()
    store.create("Namespace", {"metadata": {"name": "default"}})
    template = {"metadata": {"labels": {"app": "a"}}, "spec": gt_pod()["spec"]}
    store.create(
        "ReplicaSet",
        {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {"name": "rs", "namespace": "default", "uid": "rs-uid"},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "a"}}, "template": template},
        },
    )
    for gates, made in ((FeatureGates(), 0), (COMPARISONS_ON, 2)):
        manager = ControllerManager(store, gates)
        manager.follow()
        manager.run_pending()
        pods, _ = store.list("Pod")
        # Refused by admission with the gate off (FailedCreate), made with it on.
        assert len(pods) == made
    assert all(p["spec"]["tolerations"][0]["operator"] == "Gt" for p in pods)


def test_the_daemonset_controller_follows_the_gate() -> None:
    template = {"spec": gt_pod()["spec"]}
    assert should_run(template, node("n1", "950"), comparison_operators=True)
    assert not should_run(template, node("n1", "950"))
    assert not should_run(template, node("n1", "800"), comparison_operators=True)
