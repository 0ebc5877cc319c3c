"""VolumeZone, transcribed from upstream's volume_zone_test.go (single zone, multi zone, binding)."""

from __future__ import annotations

import pytest
from volume_objects import claim_volumes, pv, pvc, storage_class

from kubesched.framework.events import QueueingHint
from kubesched.framework.status import Code
from kubesched.plugins.volume.volume_zone import VolumeZone, is_schedulable_after_pv_change
from kubesched.testing import filter_nodes, make_node, make_pod

BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION = "failure-domain.beta.kubernetes.io/region"
ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
CONFLICT = "node(s) had no available volume zone"

SINGLE_ZONE_OBJECTS = [
    pv("Vol_1", {BETA_ZONE: "us-west1-a"}),
    pv("Vol_2", {BETA_REGION: "us-west1", "uselessLabel": "none"}),
    pv("Vol_3", {BETA_REGION: "us-west1"}),
    pv("Vol_Stable_1", {ZONE: "us-west1-a"}),
    pv("Vol_Stable_2", {REGION: "us-west1", "uselessLabel": "none"}),
    pv("Vol_Stable_3", {ZONE: "us-west1-a", REGION: "us-west1-a"}),
    pvc("PVC_1", volume_name="Vol_1"),
    pvc("PVC_2", volume_name="Vol_2"),
    pvc("PVC_3", volume_name="Vol_3"),
    pvc("PVC_4", volume_name="Vol_not_exist"),
    pvc("PVC_Stable_1", volume_name="Vol_Stable_1"),
    pvc("PVC_Stable_2", volume_name="Vol_Stable_2"),
    pvc("PVC_Stable_3", volume_name="Vol_Stable_3"),
]

MULTI_ZONE_OBJECTS = [
    pv("Vol_1", {BETA_ZONE: "us-west1-a"}),
    pv("Vol_2", {BETA_ZONE: "us-west1-b", "uselessLabel": "none"}),
    pv("Vol_3", {BETA_ZONE: "us-west1-c__us-west1-a"}),
    pv("Vol_Stable_1", {ZONE: "us-west1-a"}),
    pv("Vol_Stable_2", {ZONE: "us-west1-c__us-west1-a"}),
    pvc("PVC_1", volume_name="Vol_1"),
    pvc("PVC_2", volume_name="Vol_2"),
    pvc("PVC_3", volume_name="Vol_3"),
    pvc("PVC_4", volume_name="Vol_not_exist"),
    pvc("PVC_Stable_1", volume_name="Vol_Stable_1"),
    pvc("PVC_Stable_2", volume_name="Vol_Stable_2"),
]


def pod_with(claim: str | None):
    b = make_pod("pod_1")
    if claim is not None:
        b = b.set("spec.volumes", claim_volumes(claim))
    return b


def node(labels: dict[str, str]):
    n = make_node("host1").set("metadata.labels", dict(labels))
    return n


def run(objects, claim, labels):
    return filter_nodes(VolumeZone, pod_with(claim), [node(labels)], objects=objects)["host1"]


SINGLE = [
    ("pod without volume", None, {BETA_ZONE: "us-west1-a"}, None),
    ("node without labels", "PVC_1", {}, None),
    ("beta zone label matched", "PVC_1", {BETA_ZONE: "us-west1-a", "uselessLabel": "none"}, None),
    ("beta region label matched", "PVC_2", {BETA_REGION: "us-west1", "uselessLabel": "none"}, None),
    ("beta region label doesn't match", "PVC_2", {BETA_REGION: "no_us-west1", "uselessLabel": "none"}, CONFLICT),
    ("beta zone label doesn't match", "PVC_1", {BETA_ZONE: "no_us-west1-a", "uselessLabel": "none"}, CONFLICT),
    ("zone label matched", "PVC_Stable_1", {ZONE: "us-west1-a", "uselessLabel": "none"}, None),
    ("region label matched", "PVC_Stable_2", {REGION: "us-west1", "uselessLabel": "none"}, None),
    ("region label doesn't match", "PVC_Stable_2", {REGION: "no_us-west1", "uselessLabel": "none"}, CONFLICT),
    ("zone label doesn't match", "PVC_Stable_1", {ZONE: "no_us-west1-a", "uselessLabel": "none"}, CONFLICT),
    ("pv with zone and region, node with only zone", "PVC_Stable_3", {ZONE: "us-west1-a"}, CONFLICT),
    ("pv with zone, node with beta zone", "PVC_Stable_1", {BETA_ZONE: "us-west1-a"}, CONFLICT),
    ("pv with beta label, node with ga label, matched", "PVC_1", {ZONE: "us-west1-a"}, None),
    ("pv with beta label, node with ga label, don't match", "PVC_1", {ZONE: "us-west1-b"}, CONFLICT),
]

MULTI = [
    ("node without labels", "PVC_3", {}, None),
    ("beta zone label matched", "PVC_3", {BETA_ZONE: "us-west1-a", "uselessLabel": "none"}, None),
    ("beta zone label doesn't match", "PVC_1", {BETA_ZONE: "us-west1-b", "uselessLabel": "none"}, CONFLICT),
    ("zone label matched", "PVC_Stable_2", {ZONE: "us-west1-a", "uselessLabel": "none"}, None),
    ("zone label doesn't match", "PVC_Stable_1", {ZONE: "us-west1-b", "uselessLabel": "none"}, CONFLICT),
]


def _check(status, want):
    if want is None:
        assert status is None
    else:
        assert status is not None and status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        assert status.reasons == [want]


@pytest.mark.parametrize(("claim", "labels", "want"), [c[1:] for c in SINGLE], ids=[c[0] for c in SINGLE])
def test_single_zone(claim, labels, want) -> None:
    _check(run(SINGLE_ZONE_OBJECTS, claim, labels), want)


@pytest.mark.parametrize(("claim", "labels", "want"), [c[1:] for c in MULTI], ids=[c[0] for c in MULTI])
def test_multi_zone(claim, labels, want) -> None:
    _check(run(MULTI_ZONE_OBJECTS, claim, labels), want)


BINDING_OBJECTS = [
    storage_class("Class_Immediate", mode="Immediate"),
    storage_class("Class_Wait"),
    pv("Vol_1", {BETA_ZONE: "us-west1-a"}),
    pvc("PVC_1", volume_name="Vol_1"),
    pvc("PVC_NoSC", storage_class="Class_0"),
    pvc("PVC_EmptySC"),
    pvc("PVC_WaitSC", storage_class="Class_Wait"),
    pvc("PVC_ImmediateSC", storage_class="Class_Immediate"),
    pvc("PVC_NoPV", volume_name="Vol_not_exist"),
]
BINDING_NODE = {BETA_ZONE: "us-west1-a", "uselessLabel": "none"}

BINDING = [
    ("label zone failure domain matched", "PVC_1", None, None),
    (
        "unbound volume empty storage class",
        "PVC_EmptySC",
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        "PersistentVolumeClaim had no pv name and storageClass name",
    ),
    (
        "unbound volume no storage class",
        "PVC_NoSC",
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        'storageclass.storage.k8s.io "Class_0" not found',
    ),
    (
        "unbound volume immediate binding mode",
        "PVC_ImmediateSC",
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        "PersistentVolume had no name",
    ),
    ("unbound volume wait binding mode", "PVC_WaitSC", None, None),
    (
        "pvc not found",
        "PVC_missing",
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        'persistentvolumeclaim "PVC_missing" not found',
    ),
    ("pv not found", "PVC_NoPV", Code.UNSCHEDULABLE_AND_UNRESOLVABLE, 'persistentvolume "Vol_not_exist" not found'),
]


@pytest.mark.parametrize(("claim", "code", "reason"), [c[1:] for c in BINDING], ids=[c[0] for c in BINDING])
def test_with_binding(claim, code, reason) -> None:
    status = run(BINDING_OBJECTS, claim, BINDING_NODE)
    if code is None:
        assert status is None or status.is_skip()
    else:
        assert status is not None and status.code is code
        assert status.reasons == [reason]


def test_wait_for_first_consumer_claim_alone_skips_the_filter() -> None:
    objs = BINDING_OBJECTS
    statuses = filter_nodes(VolumeZone, pod_with("PVC_WaitSC"), [node({ZONE: "elsewhere"})], objects=objs)
    assert statuses["host1"] is None


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        (None, pv("v", {ZONE: "a"}), QueueingHint.QUEUE),
        (pv("v", {ZONE: "a"}), pv("v", {ZONE: "b"}), QueueingHint.QUEUE),
        (pv("v", {ZONE: "a"}), pv("v", {ZONE: "a", "other": "x"}), QueueingHint.SKIP),
    ],
    ids=["pv-created", "topology-changed", "topology-unchanged"],
)
def test_pv_change_hint(old, new, want) -> None:
    assert is_schedulable_after_pv_change(make_pod("p").obj(), old, new) is want
