"""resource.k8s.io/v1 validation, as tables transcribed from upstream's
pkg/apis/resource/validation tests (TestValidateDeviceTaintRule and its update; the cases of
fields 1.37 still has — the selector's deviceClassName and CEL selectors were tombstoned in
1.35), each object admitted as the API server admits it, and each failure checked by field and
message."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubesched.sim.apiserver.admission import admit_new, validate_update
from kubesched.sim.apiserver.errors import APIError

Obj = dict[str, Any]
GOOD = "foo"
BAD_NAME = "!@#$%^"
BAD_VALUE = "spaces not allowed"
SUBDOMAIN = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start "
    "and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
LABEL = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end "
    "with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)


def valid_rule(name: str = GOOD) -> Obj:
    return {
        "metadata": {"name": name},
        "spec": {
            "deviceSelector": {"driver": "test.example.com", "pool": GOOD, "device": GOOD},
            "taint": {"key": "example.com/taint", "value": "tainted", "effect": "NoSchedule"},
        },
    }


def with_(path: str, value: Any, name: str = GOOD) -> Obj:
    obj = valid_rule(name)
    *parents, last = path.split(".")
    target = obj
    for key in parents:
        target = target.setdefault(key, {})
    target[last] = value
    return obj


def failures(obj: Obj) -> list[tuple[str, str]]:
    try:
        admit_new("DeviceTaintRule", "resource.k8s.io", copy.deepcopy(obj), {})
    except APIError as exc:
        assert exc.code == 422 and exc.details is not None
        return [(c["field"], c["message"]) for c in exc.details["causes"]]
    return []


RULE_CASES: list[tuple[str, Obj, list[tuple[str, str]]]] = [
    ("good", valid_rule(), []),
    ("missing-name", valid_rule(""), [("metadata.name", "Required value: name or generateName is required")]),
    ("bad-name", valid_rule(BAD_NAME), [("metadata.name", f'Invalid value: "{BAD_NAME}": {SUBDOMAIN}')]),
    ("generate-name", with_("metadata.generateName", "pvc-"), []),
    ("uid", with_("metadata.uid", "ac051fac-2ead-46d9-b8b4-4e0fbeb7455d"), []),
    ("resource-version", with_("metadata.resourceVersion", "1"), []),
    ("generation", with_("metadata.generation", 100), []),
    ("finalizers", with_("metadata.finalizers", ["example.com/foo"]), []),
    ("good-labels", with_("metadata.labels", {"apps.kubernetes.io/name": "test"}), []),
    (
        "bad-labels",
        with_("metadata.labels", {"hello-world": BAD_VALUE}),
        [
            (
                "metadata.labels",
                f'Invalid value: "{BAD_VALUE}": a valid label must be an empty string or consist of alphanumeric '
                "characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  "
                "or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
            )
        ],
    ),
    ("good-annotations", with_("metadata.annotations", {"foo": "bar"}), []),
    (
        "bad-annotations",
        with_("metadata.annotations", {BAD_NAME: "hello world"}),
        [
            (
                "metadata.annotations",
                f"Invalid value: \"{BAD_NAME}\": name part must consist of alphanumeric characters, '-', '_' or "
                "'.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or "
                "'123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
            )
        ],
    ),
    (
        "bad-driver",
        with_("spec.deviceSelector.driver", BAD_NAME),
        [("spec.deviceSelector.driver", f'Invalid value: "{BAD_NAME}": {SUBDOMAIN}')],
    ),
    (
        "bad-pool",
        with_("spec.deviceSelector.pool", BAD_NAME),
        [("spec.deviceSelector.pool", f'Invalid value: "{BAD_NAME}": {SUBDOMAIN}')],
    ),
    (
        "bad-device",
        with_("spec.deviceSelector.device", BAD_NAME),
        [("spec.deviceSelector.device", f'Invalid value: "{BAD_NAME}": {LABEL}')],
    ),
    ("valid-taint", with_("spec.taint", {"key": GOOD, "value": GOOD, "effect": "NoExecute"}), []),
    ("invalid-taint", with_("spec.taint", {"key": GOOD, "value": GOOD}), [("spec.taint.effect", "Required value")]),
]


@pytest.mark.parametrize(("obj", "want"), [c[1:] for c in RULE_CASES], ids=[c[0] for c in RULE_CASES])
def test_validate_device_taint_rule(obj: Obj, want: list[tuple[str, str]]) -> None:
    assert failures(obj) == want


def test_validate_device_taint_rule_update() -> None:
    old = admit_new("DeviceTaintRule", "resource.k8s.io", valid_rule("valid"), {})
    old["metadata"]["resourceVersion"] = "1"
    validate_update("DeviceTaintRule", "resource.k8s.io", old, copy.deepcopy(old))  # valid no-op update
    # an unknown effect already stored is not checked again while it stays (upstream ratchets it)
    stored = copy.deepcopy(old)
    stored["spec"]["taint"]["effect"] = "FutureEffect"
    kept = copy.deepcopy(stored)
    kept["spec"]["taint"]["value"] = "other"
    validate_update("DeviceTaintRule", "resource.k8s.io", stored, kept)
    changed = copy.deepcopy(old)
    changed["spec"]["taint"]["effect"] = "FutureEffect"
    with pytest.raises(APIError, match=r'spec\.taint\.effect: Unsupported value: "FutureEffect"'):
        validate_update("DeviceTaintRule", "resource.k8s.io", old, changed)


# --- ResourceSlice (upstream's TestValidateResourceSlice, the cases of 1.37's default features) ---

DRIVER = "test.example.com"
NAME_PART = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
LABEL_VALUE = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start "
    "and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for "
    "validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)
C_IDENTIFIER = (
    "a valid C identifier must start with alphabetic character or '_', followed by a string of alphanumeric "
    "characters or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName', regex used for validation is "
    "'[A-Za-z_][A-Za-z0-9_]*')"
)


def make_device(i: int) -> Obj:
    return {
        "name": f"device-{i}",
        "attributes": {
            "int": {"int": 42},
            "string": {"string": "hello world"},
            "version": {"version": "1.2.3"},
            "bool": {"bool": True},
        },
        "capacity": {"memory": {"value": "1Gi"}},
    }


def make_slice(name: str = GOOD, node: str = GOOD, driver: str = DRIVER, devices: int = 1) -> Obj:
    return {
        "metadata": {"name": name},
        "spec": {
            "nodeName": node,
            "driver": driver,
            "pool": {"name": node, "resourceSliceCount": 1},
            "devices": [make_device(i) for i in range(devices)],
        },
    }


def shared_counters_slice(sets: int = 1) -> Obj:
    obj = make_slice()
    del obj["spec"]["devices"]
    obj["spec"]["sharedCounters"] = [
        {"name": f"counterset-{i}", "counters": {"memory": {"value": "1Gi"}}} for i in range(sets)
    ]
    return obj


def edit(obj: Obj, change: Any) -> Obj:
    change(obj["spec"])
    return obj


def slice_failures(obj: Obj) -> list[tuple[str, str]]:
    try:
        admit_new("ResourceSlice", "resource.k8s.io", copy.deepcopy(obj), {})
    except APIError as exc:
        assert exc.code == 422 and exc.details is not None
        return [(c["field"], c["message"]) for c in exc.details["causes"]]
    return []


def _taint_all(spec: Obj) -> None:
    for d in spec["devices"]:
        d["taints"] = [{"key": "example.com/taint", "effect": "NoExecute"}]


def _binding(conditions: list[str] | None, failures_: list[str] | None) -> Any:
    def change(spec: Obj) -> None:
        for d in spec["devices"]:
            if conditions is not None:
                d["bindingConditions"] = conditions
            if failures_ is not None:
                d["bindingFailureConditions"] = failures_

    return change


def _consumes(n: int, counters: int = 1) -> Any:
    def change(spec: Obj) -> None:
        spec["devices"][0].pop("attributes")
        spec["devices"][0].pop("capacity")
        spec["devices"][0]["consumesCounters"] = [
            {"counterSet": f"counterset-{i}", "counters": {f"memory-{j}": {"value": "1Gi"} for j in range(counters)}}
            for i in range(n)
        ]

    return change


SLICE_CASES: list[tuple[str, Obj, list[tuple[str, str]]]] = [
    ("good", make_slice(devices=128), []),
    (
        "too-large",
        make_slice(driver=GOOD, devices=129),
        [("spec.devices", "Too many: 129: must have at most 128 items")],
    ),
    ("good-taints", edit(make_slice(driver=GOOD, devices=64), _taint_all), []),
    (
        "too-large-taints",
        edit(make_slice(driver=GOOD, devices=65), _taint_all),
        [("spec.devices", "Too many: 65: must have at most 64 items")],
    ),
    ("missing-name", make_slice(name=""), [("metadata.name", "Required value: name or generateName is required")]),
    ("bad-name", make_slice(name=BAD_NAME), [("metadata.name", f'Invalid value: "{BAD_NAME}": {SUBDOMAIN}')]),
    (
        "bad-nodename",
        make_slice(node=BAD_NAME),
        [
            ("spec.pool.name", f'Invalid value: "{BAD_NAME}": {SUBDOMAIN}'),
            ("spec.nodeName", f'Invalid value: "{BAD_NAME}": {SUBDOMAIN}'),
        ],
    ),
    (
        "bad-multi-pool-name",
        make_slice(node=f"{BAD_NAME}/{BAD_NAME}"),
        [
            ("spec.pool.name", f'Invalid value: "{BAD_NAME}": {SUBDOMAIN}'),
            ("spec.pool.name", f'Invalid value: "{BAD_NAME}": {SUBDOMAIN}'),
            ("spec.nodeName", f'Invalid value: "{BAD_NAME}/{BAD_NAME}": {SUBDOMAIN}'),
        ],
    ),
    ("good-pool-name", edit(make_slice(), lambda s: s["pool"].update(name="x" * 253)), []),
    (
        "bad-pool",
        edit(make_slice(), lambda s: s["pool"].update(name="x/" * 126 + "xy", resourceSliceCount=0, generation=-1)),
        [
            ("spec.pool.name", "Too long: may not be more than 253 bytes"),
            ("spec.pool.resourceSliceCount", "Invalid value: 0: must be greater than zero"),
            ("spec.pool.generation", "Invalid value: -1: must be greater than or equal to zero"),
        ],
    ),
    (
        "missing-pool-name",
        edit(make_slice(), lambda s: s["pool"].update(name="")),
        [("spec.pool.name", "Required value")],
    ),
    (
        "bad-empty-node-selector",
        edit(make_slice(), lambda s: (s.pop("nodeName"), s.update(nodeSelector={}))),
        [
            ("spec.nodeSelector.nodeSelectorTerms", "Required value: must have at least one node selector term"),
            (
                "spec.nodeSelector.nodeSelectorTerms",
                "Invalid value: []core.NodeSelectorTerm(nil): must have exactly one node selector term",
            ),
        ],
    ),
    (
        "bad-node-selection",
        edit(
            make_slice(),
            lambda s: s.update(
                nodeName="worker",
                nodeSelector={
                    "nodeSelectorTerms": [
                        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["worker"]}]}
                    ]
                },
            ),
        ),
        [
            (
                "spec",
                'Invalid value: "{`nodeName`, `nodeSelector`}": exactly one of `nodeName`, `nodeSelector`, `allNodes`, '
                "`perDeviceNodeSelection` is required, but multiple fields are set",
            )
        ],
    ),
    (
        "bad-node-selection-all-nodes",
        edit(make_slice(), lambda s: s.update(nodeName="worker", allNodes=True)),
        [
            (
                "spec",
                'Invalid value: "{`nodeName`, `allNodes`}": exactly one of `nodeName`, `nodeSelector`, `allNodes`, '
                "`perDeviceNodeSelection` is required, but multiple fields are set",
            )
        ],
    ),
    (
        "empty-node-selection",
        edit(make_slice(), lambda s: s.pop("nodeName")),
        [
            (
                "spec",
                "Required value: exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required",
            )
        ],
    ),
    ("bad-drivername", make_slice(driver=BAD_NAME), [("spec.driver", f'Invalid value: "{BAD_NAME}": {SUBDOMAIN}')]),
    (
        "both-shared-counters-and-devices",
        edit(
            make_slice(),
            lambda s: s.update(sharedCounters=[{"name": "counterset", "counters": {"memory": {"value": "1Gi"}}}]),
        ),
        [("spec", 'Invalid value: "": only one of `sharedCounters` or `devices` is allowed')],
    ),
    (
        "bad-devices",
        edit(make_slice(driver=GOOD, devices=3), lambda s: s["devices"][1].update(name=BAD_NAME)),
        [("spec.devices[1].name", f'Invalid value: "{BAD_NAME}": {LABEL}')],
    ),
    (
        "bad-attribute-c-identifier",
        edit(
            make_slice(driver=GOOD, devices=2), lambda s: s["devices"][1].update(attributes={"." * 33: {"string": "y"}})
        ),
        [
            ("spec.devices[1].attributes", "Too long: may not be more than 32 bytes"),
            ("spec.devices[1].attributes", f'Invalid value: "{"." * 33}": {C_IDENTIFIER}'),
        ],
    ),
    (
        "bad-attribute-empty-domain-and-c-identifier",
        edit(make_slice(driver=GOOD, devices=2), lambda s: s["devices"][1].update(attributes={"/": {"string": "z"}})),
        [
            ("spec.devices[1].attributes", 'Invalid value: "": the domain must not be empty'),
            ("spec.devices[1].attributes", 'Invalid value: "": the name must not be empty'),
        ],
    ),
    (
        "bad-attribute-version",
        edit(
            make_slice(driver=GOOD, devices=1),
            lambda s: s["devices"][0].update(attributes={GOOD: {"version": "x" * 65}}),
        ),
        [
            (
                "spec.devices[0].attributes[foo].version",
                f'Invalid value: "{"x" * 65}": must be a string compatible with semver.org spec 2.0.0',
            ),
            ("spec.devices[0].attributes[foo].version", "Too long: may not be more than 64 bytes"),
        ],
    ),
    (
        "bad-attribute-no-value",
        edit(make_slice(driver=GOOD, devices=1), lambda s: s["devices"][0].update(attributes={GOOD: {}})),
        [("spec.devices[0].attributes[foo]", 'Invalid value: "": exactly one value must be specified')],
    ),
    (
        "taints",
        edit(
            make_slice(driver=GOOD, devices=3),
            lambda s: s["devices"][0].update(
                taints=[
                    {"key": "example.com/taint", "effect": "NoExecute"},
                    {"key": "taint", "value": "tainted", "effect": "NoSchedule", "timeAdded": "2026-09-01T00:00:00Z"},
                    {},
                    {"key": BAD_NAME, "value": BAD_NAME, "effect": "some-other-effect"},
                ]
            ),
        ),
        [
            ("spec.devices[0].taints[2].key", 'Invalid value: "": name part must be non-empty'),
            ("spec.devices[0].taints[2].key", f'Invalid value: "": {NAME_PART}'),
            ("spec.devices[0].taints[2].effect", "Required value"),
            ("spec.devices[0].taints[3].key", f'Invalid value: "{BAD_NAME}": {NAME_PART}'),
            ("spec.devices[0].taints[3].value", f'Invalid value: "{BAD_NAME}": {LABEL_VALUE}'),
            (
                "spec.devices[0].taints[3].effect",
                'Unsupported value: "some-other-effect": supported values: "NoExecute", "NoSchedule", "None"',
            ),
        ],
    ),
    (
        "too-many-taints",
        edit(
            make_slice(),
            lambda s: s["devices"][0].update(taints=[{"key": "example.com/taint", "effect": "NoExecute"}] * 17),
        ),
        [("spec.devices[0].taints", "Too many: 17: must have at most 16 items")],
    ),
    (
        "bad-PerDeviceNodeSelection",
        edit(make_slice(), lambda s: s.update(nodeName="worker", perDeviceNodeSelection=True)),
        [
            (
                "spec",
                'Invalid value: "{`nodeName`, `perDeviceNodeSelection`}": exactly one of `nodeName`, `nodeSelector`, '
                "`allNodes`, `perDeviceNodeSelection` is required, but multiple fields are set",
            ),
            (
                "spec.devices[0]",
                "Required value: exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required when "
                "`perDeviceNodeSelection` is set to true in the ResourceSlice spec",
            ),
        ],
    ),
    (
        "invalid-false-PerDeviceNodeSelection",
        edit(make_slice(), lambda s: s.update(nodeName="worker", perDeviceNodeSelection=False)),
        [("spec.perDeviceNodeSelection", "Invalid value: false: must be either unset or set to true")],
    ),
    (
        "invalid-false-AllNodes",
        edit(make_slice(), lambda s: s.update(nodeName="worker", allNodes=False)),
        [("spec.allNodes", "Invalid value: false: must be either unset or set to true")],
    ),
    (
        "invalid-empty-NodeName",
        edit(make_slice(), lambda s: s.update(nodeName="", allNodes=True)),
        [("spec.nodeName", 'Invalid value: "": must be either unset or set to a non-empty string')],
    ),
    (
        "invalid-node-selector-in-basicdevice",
        edit(
            make_slice(),
            lambda s: (
                s.pop("nodeName"),
                s.update(perDeviceNodeSelection=True),
                s["devices"][0].update(nodeName="", allNodes=False),
            ),
        ),
        [
            ("spec.devices[0].nodeName", 'Invalid value: "": must not be empty'),
            ("spec.devices[0].allNodes", "Invalid value: false: must be either unset or set to true"),
            (
                "spec.devices[0]",
                "Required value: exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required when "
                "`perDeviceNodeSelection` is set to true in the ResourceSlice spec",
            ),
        ],
    ),
    (
        "bad-node-selector-in-basicdevice",
        edit(
            make_slice(),
            lambda s: (
                s.pop("nodeName"),
                s.update(perDeviceNodeSelection=True),
                s["devices"][0].update(nodeName="worker", allNodes=True),
            ),
        ),
        [
            (
                "spec.devices[0]",
                'Invalid value: "{`nodeName`, `allNodes`}": exactly one of `nodeName`, `nodeSelector`, or `allNodes` is '
                "required when `perDeviceNodeSelection` is set to true in the ResourceSlice spec",
            )
        ],
    ),
    (
        "missing-name-shared-counters",
        edit(shared_counters_slice(), lambda s: s.update(sharedCounters=[{"counters": {"memory": {"value": "1Gi"}}}])),
        [("spec.sharedCounters[0].name", "Required value")],
    ),
    (
        "bad-name-shared-counters",
        edit(
            shared_counters_slice(),
            lambda s: s.update(sharedCounters=[{"name": BAD_NAME, "counters": {"memory": {"value": "1Gi"}}}]),
        ),
        [("spec.sharedCounters[0].name", f'Invalid value: "{BAD_NAME}": {LABEL}')],
    ),
    (
        "missing-counter-shared-counters",
        edit(shared_counters_slice(), lambda s: s.update(sharedCounters=[{"name": GOOD}])),
        [("spec.sharedCounters[0].counters", "Required value")],
    ),
    (
        "bad-countername-shared-counters",
        edit(
            shared_counters_slice(),
            lambda s: s.update(sharedCounters=[{"name": GOOD, "counters": {BAD_NAME: {"value": "1Gi"}}}]),
        ),
        [("spec.sharedCounters[0].counters", f'Invalid value: "{BAD_NAME}": {LABEL}')],
    ),
    (
        "duplicate-shared-counters",
        edit(
            shared_counters_slice(),
            lambda s: s.update(sharedCounters=[{"name": GOOD, "counters": {"memory": {"value": "1Gi"}}}] * 2),
        ),
        [("spec.sharedCounters[1]", 'Duplicate value: "foo"')],
    ),
    ("max-shared-counters", shared_counters_slice(8), []),
    (
        "too-many-shared-counters",
        shared_counters_slice(9),
        [("spec.sharedCounters", "Too many: 9: must have at most 8 items")],
    ),
    (
        "too-many-counters-in-counter-set",
        edit(
            shared_counters_slice(),
            lambda s: s["sharedCounters"][0].update(counters={f"memory-{i}": {"value": "1Gi"} for i in range(33)}),
        ),
        [("spec.sharedCounters[0].counters", "Too many: 33: must have at most 32 items")],
    ),
    (
        "missing-name-counterset-consumes-counter",
        edit(
            make_slice(),
            lambda s: s["devices"][0].update(consumesCounters=[{"counters": {"memory": {"value": "1Gi"}}}]),
        ),
        [("spec.devices[0].consumesCounters[0].counterSet", "Required value")],
    ),
    (
        "bad-name-counterset-consumes-counter",
        edit(
            make_slice(),
            lambda s: s["devices"][0].update(
                consumesCounters=[{"counterSet": BAD_NAME, "counters": {"memory": {"value": "1Gi"}}}]
            ),
        ),
        [("spec.devices[0].consumesCounters[0].counterSet", f'Invalid value: "{BAD_NAME}": {LABEL}')],
    ),
    (
        "duplicate-counterset-consumes-counter",
        edit(
            make_slice(),
            lambda s: s["devices"][0].update(
                consumesCounters=[{"counterSet": GOOD, "counters": {"memory": {"value": "1Gi"}}}] * 2
            ),
        ),
        [("spec.devices[0].consumesCounters[1]", 'Duplicate value: "foo"')],
    ),
    (
        "missing-counter-consumes-counter",
        edit(make_slice(), lambda s: s["devices"][0].update(consumesCounters=[{"counterSet": "counterset-0"}])),
        [("spec.devices[0].consumesCounters[0].counters", "Required value")],
    ),
    ("max-device-counter-consumption-for-device", edit(make_slice(), _consumes(2)), []),
    (
        "too-many-device-counter-consumption-for-device",
        edit(make_slice(), _consumes(3)),
        [("spec.devices[0].consumesCounters", "Too many: 3: must have at most 2 items")],
    ),
    ("max-counters-in-device-counter-consumption", edit(make_slice(), _consumes(1, 32)), []),
    (
        "too-many-counters-in-device-counter-consumption",
        edit(make_slice(), _consumes(1, 33)),
        [("spec.devices[0].consumesCounters[0].counters", "Too many: 33: must have at most 32 items")],
    ),
    (
        "good-binding-conditions",
        edit(
            make_slice(), _binding(["example.com/condition1", "condition2"], ["example.com/condition3", "condition4"])
        ),
        [],
    ),
    (
        "too-many-binding-conditions",
        edit(make_slice(), _binding([f"condition{i}" for i in range(1, 6)], ["condition6", "condition7"])),
        [("spec.devices[0].bindingConditions", "Too many: 5: must have at most 4 items")],
    ),
    (
        "too-many-binding-failure-conditions",
        edit(make_slice(), _binding(["condition1", "condition2"], [f"condition{i}" for i in range(3, 8)])),
        [("spec.devices[0].bindingFailureConditions", "Too many: 5: must have at most 4 items")],
    ),
    (
        "invalid-slice-has-binding-failure-but-no-binding-conditions",
        edit(make_slice(), _binding(None, ["condition1", "condition2"])),
        [
            (
                "spec.devices[0].bindingConditions",
                "Invalid value: []string(nil): bindingConditions are required to use bindingFailureConditions",
            )
        ],
    ),
    (
        "invalid-slice-has-binding-conditions-but-no-binding-failure-conditions",
        edit(make_slice(), _binding(["condition1", "condition2"], None)),
        [
            (
                "spec.devices[0].bindingFailureConditions",
                "Invalid value: []string(nil): bindingFailureConditions are required to use bindingConditions",
            )
        ],
    ),
    (
        "duplicate-binding-conditions",
        edit(make_slice(), _binding(["condition1", "condition1"], ["condition2", "condition3"])),
        [("spec.devices[0].bindingConditions[1]", 'Duplicate value: "condition1"')],
    ),
    (
        "duplicate-binding-failure-conditions",
        edit(make_slice(), _binding(["condition1", "condition2"], ["condition3", "condition3"])),
        [("spec.devices[0].bindingFailureConditions[1]", 'Duplicate value: "condition3"')],
    ),
    (
        "overlapping-binding-conditions",
        edit(make_slice(), _binding(["condition1", "condition2"], ["condition1", "condition3"])),
        [
            (
                "spec.devices[0].bindingFailureConditions[0]",
                'Invalid value: "condition1": bindingFailureConditions must not overlap with bindingConditions',
            )
        ],
    ),
    (
        "forbidden-request-policy-on-single-allocatable-capacity",
        edit(
            make_slice(driver=GOOD, devices=2),
            lambda s: s["devices"][1].update(
                capacity={"cap": {"value": "1Gi", "requestPolicy": {"default": "1Mi", "validRange": {"min": "1Mi"}}}}
            ),
        ),
        [("spec.devices[1].capacity[cap].requestPolicy", "Forbidden: allowMultipleAllocations must be true")],
    ),
    (
        "invalid-request-policy-zero-step",
        edit(
            make_slice(driver=GOOD, devices=2),
            lambda s: s["devices"][1].update(
                allowMultipleAllocations=True,
                capacity={
                    "cap": {
                        "value": "1Gi",
                        "requestPolicy": {"default": "10Mi", "validRange": {"min": "1Mi", "max": "100Mi", "step": "0"}},
                    }
                },
            ),
        ),
        [
            (
                "spec.devices[1].capacity[cap].requestPolicy.validRange.step",
                'Invalid value: "0": must be greater than zero',
            )
        ],
    ),
    (
        "invalid-request-policy-negative-step",
        edit(
            make_slice(driver=GOOD, devices=2),
            lambda s: s["devices"][1].update(
                allowMultipleAllocations=True,
                capacity={
                    "cap": {
                        "value": "1Gi",
                        "requestPolicy": {
                            "default": "10Mi",
                            "validRange": {"min": "1Mi", "max": "100Mi", "step": "-1Mi"},
                        },
                    }
                },
            ),
        ),
        [
            (
                "spec.devices[1].capacity[cap].requestPolicy.validRange.step",
                'Invalid value: "-1Mi": must be greater than zero',
            )
        ],
    ),
]


def _consumable(
    value: str = "100", default: str | None = "10", values: list[str] | None = None, valid_range: Obj | None = None
) -> Obj:
    policy: Obj = {"default": default} if default is not None else {}
    if values is not None:
        policy["validValues"] = values
    if valid_range is not None:
        policy["validRange"] = valid_range
    return {
        "name": "device",
        "allowMultipleAllocations": True,
        "capacity": {"a": {"value": value, "requestPolicy": policy}},
    }


CONSUMABLE = ["5", "10", "100"]
SLICE_CASES += [
    # the rows of upstream's consumable-capacity case, one device each
    (
        "consumable-capacity-valid-values",
        edit(make_slice(), lambda s: s.update(devices=[_consumable(values=CONSUMABLE)])),
        [],
    ),
    (
        "consumable-capacity-below-options",
        edit(make_slice(), lambda s: s.update(devices=[_consumable(value="-1", values=CONSUMABLE)])),
        [
            (
                f"spec.devices[0].capacity[a].requestPolicy.validValues[{i}]",
                f'Invalid value: "{v}": option is larger than capacity value: -1',
            )
            for i, v in enumerate(CONSUMABLE)
        ],
    ),
    (
        "consumable-capacity-default-not-an-option",
        edit(make_slice(), lambda s: s.update(devices=[_consumable(default="-1", values=CONSUMABLE)])),
        [
            (
                "spec.devices[0].capacity[a].requestPolicy.validValues",
                'Invalid value: "-1": default value is not valid according to the requestPolicy',
            )
        ],
    ),
    ("consumable-capacity-no-constraints", edit(make_slice(), lambda s: s.update(devices=[_consumable()])), []),
    (
        "consumable-capacity-values-and-range",
        edit(make_slice(), lambda s: s.update(devices=[_consumable(values=CONSUMABLE, valid_range={"min": "10"})])),
        [
            (
                "spec.devices[0].capacity[a].requestPolicy",
                'Forbidden: exactly one policy can be specified, cannot specify "validValues" and "validRange" at the same time',
            )
        ],
    ),
    (
        "consumable-capacity-range",
        edit(make_slice(), lambda s: s.update(devices=[_consumable(valid_range={"min": "1"})])),
        [],
    ),
    (
        "consumable-capacity-default-below-min",
        edit(make_slice(), lambda s: s.update(devices=[_consumable(default="1.05", valid_range={"min": "1.1"})])),
        [
            (
                "spec.devices[0].capacity[a].requestPolicy.validRange.default",
                'Invalid value: "1050m": default is less than min: 1100m',
            )
        ],
    ),
]


@pytest.mark.parametrize(("obj", "want"), [c[1:] for c in SLICE_CASES], ids=[c[0] for c in SLICE_CASES])
def test_validate_resource_slice(obj: Obj, want: list[tuple[str, str]]) -> None:
    assert slice_failures(obj) == want
