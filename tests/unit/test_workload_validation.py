"""Workload, PodGroup and CompositePodGroup validation (scheduling.k8s.io, 1.37), transcribed from
upstream's tables (pkg/registry/scheduling/workload and podgroup declarative_validation_test.go,
pkg/apis/scheduling/validation) and adapted to 1.37's shapes: a template's ``disruptionMode`` is
a union (``single``/``all``), templates may not be added or removed but a gang's ``minCount`` may
change. Each case gives the fields refused and the start of kube-apiserver's message."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from kubesched.framework.features import FeatureGates
from kubesched.sim.apiserver.admission import admit_new, admit_new_pod, validate_update
from kubesched.sim.apiserver.errors import APIError
from kubesched.sim.apiserver.validation import scheduling as v

Obj = dict[str, Any]
GATES = FeatureGates({"GenericWorkload": True})
TAS = FeatureGates({"GenericWorkload": True, "TopologyAwareWorkloadScheduling": True})
CPG = FeatureGates({"GenericWorkload": True, "CompositePodGroup": True})
PREEMPTION = FeatureGates({"GenericWorkload": True, "PodGroupPreemptionPolicy": True})


def workload(*tweaks: Callable[[Obj], None]) -> Obj:
    obj: Obj = {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "Workload",
        "metadata": {"name": "foo", "namespace": "default"},
        "spec": {"podGroupTemplates": [{"name": "main", "schedulingPolicy": {"gang": {"minCount": 2}}}]},
    }
    for tweak in tweaks:
        tweak(obj)
    return obj


def template(i: int = 0) -> Callable[[Obj], Obj]:
    return lambda w: w["spec"]["podGroupTemplates"][i]


def set_(path: str, value: Any) -> Callable[[Obj], None]:
    """Set ``value`` at dotted ``path`` under the first template (``spec`` paths start with ``/``)."""

    def tweak(w: Obj) -> None:
        node = w if path.startswith("/") else w["spec"]["podGroupTemplates"][0]
        keys = path.lstrip("/").split(".")
        for key in keys[:-1]:
            node = node.setdefault(key, {})
        node[keys[-1]] = value

    return tweak


def add_template(name: str) -> Callable[[Obj], None]:
    return lambda w: w["spec"]["podGroupTemplates"].append(
        {"name": name, "schedulingPolicy": {"gang": {"minCount": 2}}}
    )


def many_templates(n: int) -> Callable[[Obj], None]:
    def tweak(w: Obj) -> None:
        w["spec"]["podGroupTemplates"] = [{"name": f"group-{i}", "schedulingPolicy": {"basic": {}}} for i in range(n)]

    return tweak


def claims(*items: Obj) -> Callable[[Obj], None]:
    return set_("resourceClaims", list(items))


def fields(causes: list[tuple[str, str, str]]) -> list[tuple[str, str]]:
    return [(f, m) for f, _, m in causes]


P = "spec.podGroupTemplates[0]"
CREATE_CASES: list[tuple[str, Obj, FeatureGates, list[tuple[str, str]]]] = [
    ("valid", workload(), GATES, []),
    (
        "empty podGroupTemplates",
        workload(set_("/spec.podGroupTemplates", [])),
        GATES,
        [("spec", 'Invalid value: "": must specify one of: `podGroupTemplates`, `compositePodGroupTemplates`')],
    ),
    (
        "too many podGroupTemplates",
        workload(many_templates(9)),
        GATES,
        [("spec.podGroupTemplates", "Too many: 9: must have at most 8 items")],
    ),
    ("empty podGroupTemplate name", workload(set_("name", "")), GATES, [(f"{P}.name", "Required value")]),
    (
        "invalid podGroupTemplate name",
        workload(set_("name", "Invalid_Name")),
        GATES,
        [(f"{P}.name", 'Invalid value: "Invalid_Name": a lowercase RFC 1123 label must consist of')],
    ),
    (
        "duplicate podGroupTemplate names",
        workload(add_template("main")),
        GATES,
        [("spec.podGroupTemplates[1]", 'Duplicate value: {"name":"main"}')],
    ),
    (
        "gang minCount zero",
        workload(set_("schedulingPolicy.gang.minCount", 0)),
        GATES,
        [(f"{P}.schedulingPolicy.gang.minCount", "Required value")],
    ),
    (
        "gang minCount negative",
        workload(set_("schedulingPolicy.gang.minCount", -1)),
        GATES,
        [(f"{P}.schedulingPolicy.gang.minCount", "Invalid value: -1: must be greater than or equal to 1")],
    ),
    (
        "valid with controllerRef",
        workload(set_("/spec.controllerRef", {"apiGroup": "apps", "kind": "Deployment", "name": "d"})),
        GATES,
        [],
    ),
    (
        "controllerRef with empty APIGroup",
        workload(set_("/spec.controllerRef", {"kind": "Pod", "name": "my-pod"})),
        GATES,
        [],
    ),
    (
        "controllerRef invalid APIGroup",
        workload(set_("/spec.controllerRef", {"apiGroup": "invalid_api_group", "kind": "Deployment", "name": "d"})),
        GATES,
        [("spec.controllerRef.apiGroup", 'Invalid value: "invalid_api_group": a lowercase RFC 1123 subdomain')],
    ),
    (
        "controllerRef too long APIGroup",
        workload(set_("/spec.controllerRef", {"apiGroup": "g" * 254, "kind": "Deployment", "name": "d"})),
        GATES,
        [("spec.controllerRef.apiGroup", "Invalid value: ")],
    ),
    (
        "controllerRef missing kind",
        workload(set_("/spec.controllerRef", {"apiGroup": "apps", "kind": "", "name": "d"})),
        GATES,
        [("spec.controllerRef.kind", "Required value")],
    ),
    (
        "controllerRef invalid kind with slash",
        workload(set_("/spec.controllerRef", {"apiGroup": "apps", "kind": "Deploy/ment", "name": "d"})),
        GATES,
        [("spec.controllerRef.kind", "Invalid value: \"Deploy/ment\": may not contain '/'")],
    ),
    (
        "controllerRef missing name",
        workload(set_("/spec.controllerRef", {"apiGroup": "apps", "kind": "Deployment", "name": ""})),
        GATES,
        [("spec.controllerRef.name", "Required value")],
    ),
    (
        "controllerRef invalid name with percent",
        workload(set_("/spec.controllerRef", {"apiGroup": "apps", "kind": "Deployment", "name": "my%deployment"})),
        GATES,
        [("spec.controllerRef.name", "Invalid value: \"my%deployment\": may not contain '%'")],
    ),
    (
        "policy with neither basic nor gang",
        workload(set_("schedulingPolicy", {})),
        GATES,
        [(f"{P}.schedulingPolicy", 'Invalid value: "": must specify one of: `basic`, `gang`')],
    ),
    (
        "policy with both basic and gang",
        workload(set_("schedulingPolicy", {"basic": {}, "gang": {"minCount": 1}})),
        GATES,
        [(f"{P}.schedulingPolicy", 'Invalid value: "{`basic`, `gang`}": exactly one of `basic`, `gang` is required')],
    ),
    ("valid with basic policy", workload(set_("schedulingPolicy", {"basic": {}})), GATES, []),
    (
        "valid with schedulingConstraints",
        workload(set_("schedulingConstraints", {"topology": [{"key": "foo"}]})),
        TAS,
        [],
    ),
    ("valid with empty schedulingConstraints", workload(set_("schedulingConstraints", {})), TAS, []),
    (
        "schedulingConstraints with TAS disabled",
        workload(set_("schedulingConstraints", {"topology": [{"key": "foo"}]})),
        GATES,
        [(f"{P}.schedulingConstraints", "Forbidden")],
    ),
    (
        "with multiple topology constraints",
        workload(set_("schedulingConstraints", {"topology": [{"key": "foo"}, {"key": "bar"}]})),
        TAS,
        [(f"{P}.schedulingConstraints.topology", "Too many: 2: must have at most 1 items")],
    ),
    (
        "with empty topology key",
        workload(set_("schedulingConstraints", {"topology": [{"key": ""}]})),
        TAS,
        [(f"{P}.schedulingConstraints.topology[0].key", "Required value")],
    ),
    (
        "valid with topology key with DNS prefix",
        workload(set_("schedulingConstraints", {"topology": [{"key": "example.com/Foo"}]})),
        TAS,
        [],
    ),
    (
        "valid with topology key with prefix with max length",
        workload(set_("schedulingConstraints", {"topology": [{"key": "a" * 253 + "/" + "b" * 63}]})),
        TAS,
        [],
    ),
    *(
        (
            name,
            workload(set_("schedulingConstraints", {"topology": [{"key": key}]})),
            TAS,
            [(f"{P}.schedulingConstraints.topology[0].key", "Invalid value: ")],
        )
        for name, key in (
            ("with topology key with prefix exceeding max prefix length", "a" * 254 + "/foo"),
            ("with topology key with prefix exceeding max name length", "foo/" + "b" * 64),
            ("with topology key without prefix exceeding max length", "b" * 64),
            ("with topology key with invalid characters", "Example.com/Foo"),
        )
    ),
    ("single disruption mode", workload(set_("disruptionMode", {"single": {}})), GATES, []),
    ("all disruption mode", workload(set_("disruptionMode", {"all": {}})), GATES, []),
    (
        "both disruption modes",
        workload(set_("disruptionMode", {"single": {}, "all": {}})),
        GATES,
        [(f"{P}.disruptionMode", 'Invalid value: "{`single`, `all`}": exactly one of `single`, `all` is required')],
    ),
    ("valid priorityClassName", workload(set_("priorityClassName", "high-priority")), GATES, []),
    (
        "invalid priorityClassName",
        workload(set_("priorityClassName", "high/priority")),
        GATES,
        [(f"{P}.priorityClassName", 'Invalid value: "high/priority": a lowercase RFC 1123 subdomain')],
    ),
    ("valid priority", workload(set_("priority", 1000)), GATES, []),
    ("valid negative priority", workload(set_("priority", -2147483648)), GATES, []),
    (
        "too high priority",
        workload(set_("priority", 1_000_000_001)),
        GATES,
        [(f"{P}.priority", "Invalid value: 1000000001: must be less than or equal to 1000000000")],
    ),
    ("preemptionPolicy with its gate", workload(set_("preemptionPolicy", "Never")), PREEMPTION, []),
    (
        "preemptionPolicy without its gate",
        workload(set_("preemptionPolicy", "Never")),
        GATES,
        [(f"{P}.preemptionPolicy", "Forbidden")],
    ),
    (
        "unknown preemptionPolicy",
        workload(set_("preemptionPolicy", "Sometimes")),
        PREEMPTION,
        [
            (
                f"{P}.preemptionPolicy",
                'Unsupported value: "Sometimes": supported values: "Never", "PreemptLowerPriority"',
            )
        ],
    ),
    (
        "ok resourceClaimName reference",
        workload(claims({"name": "claim", "resourceClaimName": "resource-claim"})),
        GATES,
        [],
    ),
    (
        "ok resourceClaimTemplateName reference",
        workload(claims({"name": "claim", "resourceClaimTemplateName": "t"})),
        GATES,
        [],
    ),
    (
        "ok multiple claims",
        workload(
            claims({"name": "claim-1", "resourceClaimName": "c-1"}, {"name": "claim-2", "resourceClaimName": "c-2"})
        ),
        GATES,
        [],
    ),
    (
        "claim name with prefix",
        workload(claims({"name": "../my-claim", "resourceClaimName": "resource-claim"})),
        GATES,
        [(f"{P}.resourceClaims[0].name", 'Invalid value: "../my-claim": a lowercase RFC 1123 label')],
    ),
    (
        "duplicate claim entries",
        workload(
            claims({"name": "my-claim", "resourceClaimName": "c-1"}, {"name": "my-claim", "resourceClaimName": "c-2"})
        ),
        GATES,
        [(f"{P}.resourceClaims[1]", 'Duplicate value: {"name":"my-claim"}')],
    ),
    (
        "resource claim source empty",
        workload(claims({"name": "my-claim"})),
        GATES,
        [
            (
                f"{P}.resourceClaims[0]",
                'Invalid value: "": must specify one of: `resourceClaimName`, `resourceClaimTemplateName`',
            )
        ],
    ),
    (
        "resource claim reference and template",
        workload(claims({"name": "my-claim", "resourceClaimName": "c", "resourceClaimTemplateName": "t"})),
        GATES,
        [
            (
                f"{P}.resourceClaims[0]",
                'Invalid value: "{`resourceClaimName`, `resourceClaimTemplateName`}": exactly one of',
            )
        ],
    ),
    (
        "invalid claim reference name",
        workload(claims({"name": "my-claim", "resourceClaimName": ".foo_bar"})),
        GATES,
        [(f"{P}.resourceClaims[0].resourceClaimName", 'Invalid value: ".foo_bar": a lowercase RFC 1123 subdomain')],
    ),
    (
        "too many claims",
        workload(claims(*({"name": f"my-claim-{i}", "resourceClaimName": "c"} for i in range(5)))),
        GATES,
        [(f"{P}.resourceClaims", "Too many: 5: must have at most 4 items")],
    ),
    (
        "composite templates without their gate",
        workload(
            set_("/spec.podGroupTemplates", None),
            set_(
                "/spec.compositePodGroupTemplates",
                [
                    {
                        "name": "root",
                        "schedulingPolicy": {"basic": {}},
                        "podGroupTemplates": [{"name": "w", "schedulingPolicy": {"basic": {}}}],
                    }
                ],
            ),
        ),
        GATES,
        [("spec.compositePodGroupTemplates", "Forbidden")],
    ),
    (
        "composite templates with their gate",
        workload(
            set_("/spec.podGroupTemplates", None),
            set_(
                "/spec.compositePodGroupTemplates",
                [
                    {
                        "name": "root",
                        "schedulingPolicy": {"gang": {"minGroupCount": 1}},
                        "podGroupTemplates": [{"name": "w", "schedulingPolicy": {"basic": {}}}],
                    }
                ],
            ),
        ),
        CPG,
        [],
    ),
    (
        "composite template without a child",
        workload(
            set_("/spec.podGroupTemplates", None),
            set_("/spec.compositePodGroupTemplates", [{"name": "root", "schedulingPolicy": {"basic": {}}}]),
        ),
        CPG,
        [
            (
                "spec.compositePodGroupTemplates[0]",
                'Invalid value: "root": must have at least one child PodGroupTemplate or CompositePodGroupTemplate',
            )
        ],
    ),
    (
        "a template name used twice in the tree",
        workload(
            set_("/spec.podGroupTemplates", None),
            set_(
                "/spec.compositePodGroupTemplates",
                [
                    {
                        "name": "root",
                        "schedulingPolicy": {"basic": {}},
                        "podGroupTemplates": [{"name": "root", "schedulingPolicy": {"basic": {}}}],
                    }
                ],
            ),
        ),
        CPG,
        [("spec.compositePodGroupTemplates[0].podGroupTemplates[0].name", 'Duplicate value: "root"')],
    ),
    (
        "both template lists",
        workload(
            set_(
                "/spec.compositePodGroupTemplates",
                [
                    {
                        "name": "root",
                        "schedulingPolicy": {"basic": {}},
                        "podGroupTemplates": [{"name": "w", "schedulingPolicy": {"basic": {}}}],
                    }
                ],
            )
        ),
        CPG,
        [("spec", 'Invalid value: "{`podGroupTemplates`, `compositePodGroupTemplates`}": exactly one of')],
    ),
    (
        "templates with different priorities",
        workload(set_("priority", 10), add_template("other")),
        GATES,
        [("spec", 'Invalid value: "null": detected multiple priority configurations')],
    ),
]


@pytest.mark.parametrize(("obj", "gates", "want"), [c[1:] for c in CREATE_CASES], ids=[c[0] for c in CREATE_CASES])
def test_workload_on_create(obj: Obj, gates: FeatureGates, want: list[tuple[str, str]]) -> None:
    got = fields(v.validate_workload(copy.deepcopy(obj), gates))
    assert [f for f, _ in got] == [f for f, _ in want], got
    for (_, message), (_, start) in zip(got, want, strict=True):
        assert message.startswith(start), (message, start)


def _update(old: Obj, *tweaks: Callable[[Obj], None]) -> Obj:
    new = copy.deepcopy(old)
    for tweak in tweaks:
        tweak(new)
    return new


REF = {"apiGroup": "apps", "kind": "Deployment", "name": "my-deployment"}
UPDATE_CASES: list[tuple[str, Obj, Obj, FeatureGates, list[tuple[str, str]]]] = [
    ("valid update", workload(), workload(), GATES, []),
    (
        "unchanged controllerRef",
        workload(set_("/spec.controllerRef", REF)),
        workload(set_("/spec.controllerRef", REF)),
        GATES,
        [],
    ),
    (
        "set controllerRef",
        workload(),
        workload(set_("/spec.controllerRef", REF)),
        GATES,
        [("spec.controllerRef", 'Invalid value: "null": field is immutable')],
    ),
    (
        "change controllerRef",
        workload(set_("/spec.controllerRef", REF)),
        workload(set_("/spec.controllerRef", {**REF, "name": "different-deployment"})),
        GATES,
        [("spec.controllerRef", 'Invalid value: "null": field is immutable')],
    ),
    (
        "unset controllerRef",
        workload(set_("/spec.controllerRef", REF)),
        workload(),
        GATES,
        [("spec.controllerRef", 'Invalid value: "null": field is immutable')],
    ),
    (
        "add podGroupTemplate",
        workload(),
        workload(add_template("worker1")),
        GATES,
        [("spec.podGroupTemplates", "Forbidden: items may not be added")],
    ),
    (
        "remove podGroupTemplate",
        workload(add_template("worker1")),
        workload(),
        GATES,
        [("spec.podGroupTemplates", "Forbidden: items may not be removed")],
    ),
    ("update of gang minCount", workload(), workload(set_("schedulingPolicy.gang.minCount", 10)), GATES, []),
    (
        "update from gang to basic policy",
        workload(),
        workload(set_("schedulingPolicy", {"basic": {}})),
        GATES,
        [
            (f"{P}.schedulingPolicy.basic", 'Invalid value: "null": field is immutable'),
            (f"{P}.schedulingPolicy.gang", "Forbidden: "),
        ],
    ),
    (
        "update to topology key",
        workload(set_("schedulingConstraints", {"topology": [{"key": "foo"}]})),
        workload(set_("schedulingConstraints", {"topology": [{"key": "bar"}]})),
        TAS,
        [(f"{P}.schedulingConstraints", 'Invalid value: "null": field is immutable')],
    ),
    (
        "update of priority",
        workload(set_("priority", 1)),
        workload(set_("priority", 2)),
        GATES,
        [(f"{P}.priority", "Invalid value: 2: field is immutable")],
    ),
]


@pytest.mark.parametrize(
    ("old", "new", "gates", "want"), [c[1:] for c in UPDATE_CASES], ids=[c[0] for c in UPDATE_CASES]
)
def test_workload_on_update(old: Obj, new: Obj, gates: FeatureGates, want: list[tuple[str, str]]) -> None:
    got = fields(v.validate_workload_update(new, old, gates))
    assert [f for f, _ in got] == [f for f, _ in want], got
    for (_, message), (_, start) in zip(got, want, strict=True):
        assert message.startswith(start), (message, start)


def pod_group(**spec: Any) -> Obj:
    return {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "pg", "namespace": "default"},
        "spec": {"schedulingPolicy": {"gang": {"minCount": 2}}, **spec},
    }


PG_CASES: list[tuple[str, Obj, FeatureGates, list[tuple[str, str]]]] = [
    ("valid", pod_group(), GATES, []),
    ("valid workloadRef", pod_group(workloadRef={"workloadName": "w", "templateName": "t"}), GATES, []),
    (
        "workloadRef without names",
        pod_group(workloadRef={}),
        GATES,
        [("spec.workloadRef.workloadName", "Required value"), ("spec.workloadRef.templateName", "Required value")],
    ),
    (
        "invalid templateName",
        pod_group(workloadRef={"workloadName": "w", "templateName": "a_b"}),
        GATES,
        [("spec.workloadRef.templateName", 'Invalid value: "a_b": a lowercase RFC 1123 label')],
    ),
    (
        "parent without its gate",
        pod_group(parentCompositePodGroupName="root"),
        GATES,
        [("spec.parentCompositePodGroupName", "Forbidden")],
    ),
    ("parent with its gate", pod_group(parentCompositePodGroupName="root"), CPG, []),
    (
        "no policy",
        pod_group(schedulingPolicy={}),
        GATES,
        [("spec.schedulingPolicy", 'Invalid value: "": must specify one of: `basic`, `gang`')],
    ),
]


@pytest.mark.parametrize(("obj", "gates", "want"), [c[1:] for c in PG_CASES], ids=[c[0] for c in PG_CASES])
def test_pod_group_on_create(obj: Obj, gates: FeatureGates, want: list[tuple[str, str]]) -> None:
    got = fields(v.validate_pod_group(obj, gates))
    assert [f for f, _ in got] == [f for f, _ in want], got
    for (_, message), (_, start) in zip(got, want, strict=True):
        assert message.startswith(start), (message, start)


def test_a_pod_group_is_defaulted_and_its_status_left_to_the_subresource() -> None:
    obj = pod_group()
    obj["status"] = {"conditions": [{"type": "X"}]}
    admitted = admit_new("PodGroup", "scheduling.k8s.io", obj, {}, GATES)
    assert admitted["spec"]["disruptionMode"] == {"single": {}}
    assert "status" not in admitted and admitted["metadata"]["generation"] == 1


def test_a_pod_groups_count_may_change_and_nothing_else() -> None:
    old = admit_new("PodGroup", "scheduling.k8s.io", pod_group(), {}, GATES)
    old["metadata"]["resourceVersion"] = "1"
    grown = copy.deepcopy(old)
    grown["spec"]["schedulingPolicy"]["gang"]["minCount"] = 5
    validate_update("PodGroup", "scheduling.k8s.io", old, grown, "", GATES)
    moved = copy.deepcopy(old)
    moved["spec"]["priorityClassName"] = "high"
    with pytest.raises(APIError) as err:
        validate_update("PodGroup", "scheduling.k8s.io", old, moved, "", GATES)
    assert 'spec.priorityClassName: Invalid value: "high": field is immutable' in str(err.value.status)


CONDITION = {
    "type": "PodGroupInitiallyScheduled",
    "status": "True",
    "reason": "Scheduled",
    "lastTransitionTime": "2026-09-01T00:00:00Z",
}
STATUS_CASES: list[tuple[str, list[Obj], list[tuple[str, str]]]] = [
    ("valid", [CONDITION], []),
    (
        "duplicate type",
        [CONDITION, CONDITION],
        [("status.conditions[1].type", 'Duplicate value: "PodGroupInitiallyScheduled"')],
    ),
    (
        "unknown status",
        [{**CONDITION, "status": "Maybe"}],
        [("status.conditions[0].status", 'Unsupported value: "Maybe"')],
    ),
    (
        "no transition time",
        [{**CONDITION, "lastTransitionTime": None}],
        [("status.conditions[0].lastTransitionTime", "Required value: must be set")],
    ),
    ("no reason", [{**CONDITION, "reason": ""}], [("status.conditions[0].reason", "Required value: must be set")]),
    (
        "bad reason",
        [{**CONDITION, "reason": "no spaces"}],
        [("status.conditions[0].reason", 'Invalid value: "no spaces": a condition reason')],
    ),
    (
        "negative generation",
        [{**CONDITION, "observedGeneration": -1}],
        [("status.conditions[0].observedGeneration", "Invalid value: -1: must be greater than or equal to zero")],
    ),
]


@pytest.mark.parametrize(("conditions", "want"), [c[1:] for c in STATUS_CASES], ids=[c[0] for c in STATUS_CASES])
def test_pod_group_status(conditions: list[Obj], want: list[tuple[str, str]]) -> None:
    obj = pod_group()
    obj["status"] = {"conditions": conditions}
    got = fields(v.validate_group_status("PodGroup", obj))
    assert [f for f, _ in got] == [f for f, _ in want], got
    for (_, message), (_, start) in zip(got, want, strict=True):
        assert message.startswith(start), (message, start)


def test_a_claim_status_must_name_a_claim_of_the_group() -> None:
    obj = pod_group(resourceClaims=[{"name": "gpu", "resourceClaimTemplateName": "t"}])
    obj["status"] = {"resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "pg-gpu-x"}, {"name": "tpu"}]}
    assert fields(v.validate_group_status("PodGroup", obj)) == [
        (
            "status.resourceClaimStatuses[1].name",
            'Invalid value: "tpu": must match the name of an entry in `spec.resourceClaims`',
        )
    ]


def _pod(group: Obj | None) -> Obj:
    spec: Obj = {"containers": [{"name": "c", "image": "i"}]}
    if group is not None:
        spec["schedulingGroup"] = group
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"}, "spec": spec}


@pytest.mark.parametrize(
    ("group", "message"),
    [
        ({}, 'spec.schedulingGroup: Invalid value: "": must specify one of: `podGroupName`'),
        (
            {"podGroupName": "Bad_Name"},
            'spec.schedulingGroup.podGroupName: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain',
        ),
    ],
    ids=["empty", "not-a-subdomain"],
)
def test_a_pods_scheduling_group_is_validated(group: Obj, message: str) -> None:
    with pytest.raises(APIError) as err:
        admit_new_pod(_pod(group), {}, GATES)
    assert message in str(err.value.status)


def test_a_pods_scheduling_group_is_dropped_without_generic_workload_unless_already_there() -> None:
    assert "schedulingGroup" not in admit_new_pod(_pod({"podGroupName": "pg"}), {}, FeatureGates())["spec"]
    assert admit_new_pod(_pod({"podGroupName": "pg"}), {}, GATES)["spec"]["schedulingGroup"] == {"podGroupName": "pg"}
    spec: Obj = {"schedulingGroup": {"podGroupName": "pg"}}
    v.drop_pod_scheduling_group(spec, {"schedulingGroup": {"podGroupName": "pg"}}, FeatureGates())
    assert spec == {"schedulingGroup": {"podGroupName": "pg"}}
