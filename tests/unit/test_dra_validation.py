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
