"""CSIDriver and CSIStorageCapacity as kube-apiserver 1.37 defaults, validates and prints them:
upstream's TestValidateCSIStorageCapacity, TestCSIServiceAccountToken and
TestCSIDriverValidationSELinuxMountEnabledDisabled (the gate is on in 1.37) cases, the update
rules, and the kubectl columns."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubesched.sim.apiserver.discovery import RESOURCES
from kubesched.sim.apiserver.tables import table
from kubesched.sim.apiserver.validation import scheduling_problems
from kubesched.sim.apiserver.validation.storage import (
    default_csi_driver,
    validate_csi_driver,
    validate_csi_storage_capacity,
)

Obj = dict[str, Any]
INVALID_NAME = "-invalid-@#$%^&*()-"


def capacity(**fields: Any) -> Obj:
    obj: Obj = {
        "metadata": {"name": "csc-329803da-fdd2-42e4-af6f-7b07e7ccc305", "namespace": "default"},
        "storageClassName": "test-sc",
    }
    obj.update(fields)
    return obj


CAPACITY_CASES = [
    ("good-capacity", capacity(), False),
    ("missing-storage-class-name", capacity(storageClassName=""), True),
    ("bad-storage-class-name", capacity(storageClassName=INVALID_NAME), True),
    ("good-capacity-value", capacity(capacity="1"), False),
    ("bad-capacity-value", capacity(capacity="-11"), True),
    ("good-topology", capacity(nodeTopology={"matchLabels": {"foo": "bar"}}), False),
    ("empty-topology", capacity(nodeTopology={}), False),
    (
        "bad-topology-fields",
        capacity(
            nodeTopology={"matchExpressions": [{"key": "foo", "operator": "no-such-operator", "values": ["bar"]}]}
        ),
        True,
    ),
]


@pytest.mark.parametrize(("obj", "fails"), [c[1:] for c in CAPACITY_CASES], ids=[c[0] for c in CAPACITY_CASES])
def test_validate_csi_storage_capacity(obj: Obj, fails: bool) -> None:
    assert bool(validate_csi_storage_capacity(obj)) is fails


def test_capacity_messages_and_canonical_quantities() -> None:
    obj = capacity(capacity="-11", maximumVolumeSize="1024Mi")
    assert validate_csi_storage_capacity(obj) == [
        ("capacity", "FieldValueInvalid", 'Invalid value: "-11": must be greater than or equal to 0')
    ]
    assert obj["maximumVolumeSize"] == "1Gi"
    stored = capacity(capacity="1500M")
    validate_csi_storage_capacity(stored)
    assert stored["capacity"] == "1500M"


@pytest.mark.parametrize(
    ("change", "path"),
    [
        ({"storageClassName": "other-sc"}, "storageClassName"),
        ({"nodeTopology": {"matchLabels": {"foo": "baz"}}}, "nodeTopology"),
    ],
    ids=["class", "topology"],
)
def test_capacity_update_keeps_class_and_topology(change: Obj, path: str) -> None:
    old = capacity(nodeTopology={"matchLabels": {"foo": "bar"}}, capacity="1Gi")
    new = {**copy.deepcopy(old), **change}
    (cause,) = validate_csi_storage_capacity(new, old)
    assert cause[0] == path and cause[2].endswith(": field is immutable")
    assert validate_csi_storage_capacity({**copy.deepcopy(old), "capacity": "2Gi"}, old) == []


def driver(**spec: Any) -> Obj:
    # As upstream's tests set them: the fields defaulting fills, false.
    base = {"attachRequired": False, "podInfoOnMount": False, "storageCapacity": False, "seLinuxMount": False}
    return {"metadata": {"name": "test-driver"}, "spec": {**base, **spec}}


TOKEN_CASES = [
    ("invalid - TokenRequests has tokens with the same audience", [{"audience": "gcp"}, {"audience": "gcp"}], True),
    (
        "invalid - TokenRequests has tokens with ExpirationSeconds less than 10min",
        [{"audience": "gcp", "expirationSeconds": 10}],
        True,
    ),
    (
        "invalid - TokenRequests has tokens with ExpirationSeconds longer than 1<<32 min",
        [{"audience": "gcp", "expirationSeconds": (1 << 32) + 1}],
        True,
    ),
    ("valid - TokenRequests has at most one token with empty string audience", [{"audience": ""}], False),
    ("valid - TokenRequests has tokens with different audience", [{}, {"audience": "gcp"}, {"audience": "aws"}], False),
]


@pytest.mark.parametrize(("requests", "fails"), [c[1:] for c in TOKEN_CASES], ids=[c[0] for c in TOKEN_CASES])
def test_csi_service_account_token(requests: list[Obj], fails: bool) -> None:
    assert bool(validate_csi_driver(driver(tokenRequests=requests, requiresRepublish=False))) is fails


@pytest.mark.parametrize(
    ("old", "new", "fails"),
    [(None, None, True), (None, True, False), (True, True, False), (True, None, True)],
    ids=["nil->nil", "nil->set", "set->set", "set->nil"],
)
def test_se_linux_mount_is_required_on_update(old: bool | None, new: bool | None, fails: bool) -> None:
    before = driver(attachRequired=True, podInfoOnMount=True, requiresRepublish=True, storageCapacity=True)
    before["spec"]["seLinuxMount"] = old
    after = copy.deepcopy(before)
    after["spec"]["seLinuxMount"] = new
    assert bool(validate_csi_driver(after, before)) is fails
    assert bool(validate_csi_driver(after)) is fails


DRIVER_MESSAGES = [
    (
        "fs-group-policy",
        {"fsGroupPolicy": "Always"},
        'spec.fsGroupPolicy: Unsupported value: "Always": supported values: "File", "None", "ReadWriteOnceWithFSType"',
    ),
    (
        "lifecycle-mode",
        {"volumeLifecycleModes": ["Persistent", "Forever"]},
        'spec.volumeLifecycleModes: Unsupported value: "Forever": supported values: "Persistent", "Ephemeral"',
    ),
    (
        "duplicate-audience",
        {"tokenRequests": [{"audience": "a"}, {"audience": "a"}]},
        'spec.tokenRequests[1].audience: Duplicate value: "a"',
    ),
    (
        "short-token",
        {"tokenRequests": [{"audience": "a", "expirationSeconds": 599}]},
        "spec.tokenRequests[0].expirationSeconds: Invalid value: 599: may not specify a duration less than 10 minutes",
    ),
    (
        "long-token",
        {"tokenRequests": [{"audience": "a", "expirationSeconds": (1 << 32) + 1}]},
        "spec.tokenRequests[0].expirationSeconds: Invalid value: 4294967297: may not specify a duration larger than "
        "2^32 seconds",
    ),
    (
        "allocatable-update-period",
        {"nodeAllocatableUpdatePeriodSeconds": 5},
        "spec.nodeAllocatableUpdatePeriodSeconds: Invalid value: 5: must be greater than or equal to 10 seconds",
    ),
    (
        "tokens-in-secrets-without-tokens",
        {"serviceAccountTokenInSecrets": True},
        "spec.serviceAccountTokenInSecrets: Invalid value: true: serviceAccountTokenInSecrets is set but no "
        "tokenRequests are specified",
    ),
]


@pytest.mark.parametrize(("spec", "message"), [c[1:] for c in DRIVER_MESSAGES], ids=[c[0] for c in DRIVER_MESSAGES])
def test_csi_driver_messages(spec: Obj, message: str) -> None:
    obj = {"metadata": {"name": "csi.example.com"}, "spec": spec}
    assert scheduling_problems("CSIDriver", obj) == [message]


def test_csi_driver_defaults() -> None:
    obj: Obj = {"metadata": {"name": "csi.example.com"}, "spec": {"storageCapacity": True}}
    default_csi_driver(obj)
    assert obj["spec"] == {
        "attachRequired": True,
        "fsGroupPolicy": "ReadWriteOnceWithFSType",
        "podInfoOnMount": False,
        "requiresRepublish": False,
        "seLinuxMount": False,
        "storageCapacity": True,
        "volumeLifecycleModes": ["Persistent"],
    }
    assert validate_csi_driver(obj) == []


@pytest.mark.parametrize(
    ("change", "path"),
    [
        ({"attachRequired": False}, "spec.attachedRequired"),
        ({"volumeLifecycleModes": ["Ephemeral"]}, "spec.volumeLifecycleModes"),
    ],
    ids=["attach-required", "lifecycle-modes"],
)
def test_csi_driver_update_immutable_fields(change: Obj, path: str) -> None:
    old: Obj = {"metadata": {"name": "csi.example.com"}, "spec": {}}
    default_csi_driver(old)
    new = copy.deepcopy(old)
    new["spec"].update(change)
    (cause,) = validate_csi_driver(new, old)
    assert cause[0] == path and cause[2].endswith(": field is immutable")
    # What is mutable since 1.29 (podInfoOnMount, fsGroupPolicy) and storageCapacity may change.
    ok = copy.deepcopy(old)
    ok["spec"].update({"podInfoOnMount": True, "fsGroupPolicy": "File", "storageCapacity": True})
    assert validate_csi_driver(ok, old) == []


def _resource(kind: str) -> Any:
    return next(r for r in RESOURCES if r.kind == kind)


def test_kubectl_columns() -> None:
    driver_obj: Obj = {
        "metadata": {"name": "csi.example.com", "creationTimestamp": "2020-01-01T00:00:00Z"},
        "spec": {"tokenRequests": [{"audience": "vault"}, {"audience": ""}], "volumeLifecycleModes": []},
    }
    t = table(_resource("CSIDriver"), [driver_obj], 7, None)
    assert [c["name"] for c in t["columnDefinitions"]] == [
        "Name",
        "AttachRequired",
        "PodInfoOnMount",
        "StorageCapacity",
        "TokenRequests",
        "RequiresRepublish",
        "Modes",
        "Age",
    ]
    # Unset booleans print as their defaults; no modes as <none>.
    assert t["rows"][0]["cells"][:7] == ["csi.example.com", True, False, False, "vault,", False, "<none>"]
    t = table(_resource("CSIStorageCapacity"), [capacity(), capacity(capacity="10Gi")], 7, None)
    assert [c["name"] for c in t["columnDefinitions"]] == ["Name", "StorageClassName", "Capacity"]
    assert [r["cells"][1:] for r in t["rows"]] == [["test-sc", "<unset>"], ["test-sc", "10Gi"]]
    assert _resource("CSIStorageCapacity").namespaced and not _resource("CSIDriver").namespaced
