"""NodeVolumeLimits (CSI limits), cases after upstream's csi_test.go."""

from __future__ import annotations

import pytest
from volume_objects import claim_volumes, csi_node, pv, pvc, storage_class

from kubesched.framework.events import ActionType, EventResource, QueueingHint
from kubesched.framework.features import FeatureGates
from kubesched.framework.status import Code
from kubesched.plugins.volume.helpers import csi_attach_limit_key
from kubesched.plugins.volume.node_volume_limits import NodeVolumeLimits, is_schedulable_after_csi_node_updated
from kubesched.testing import filter_nodes, make_node, make_pod

EXCEEDED = "node(s) exceed max volume count"
EBS = "ebs.csi.aws.com"
GCE = "pd.csi.storage.gke.io"

OBJECTS = [
    pv("csi-ebs-0", csi=(EBS, "vol-0")),
    pv("csi-ebs-1", csi=(EBS, "vol-1")),
    pv("csi-ebs-2", csi=(EBS, "vol-2")),
    pv("csi-gce-0", csi=(GCE, "disk-0")),
    pv("intree-ebs-0", source={"awsElasticBlockStore": {"volumeID": "aws-inline-0"}}),
    pv("intree-ebs-1", source={"awsElasticBlockStore": {"volumeID": "aws-inline-1"}}),
    pvc("claim-ebs-0", volume_name="csi-ebs-0"),
    pvc("claim-ebs-1", volume_name="csi-ebs-1"),
    pvc("claim-ebs-2", volume_name="csi-ebs-2"),
    pvc("claim-gce-0", volume_name="csi-gce-0"),
    pvc("claim-intree-0", volume_name="intree-ebs-0"),
    pvc("claim-intree-1", volume_name="intree-ebs-1"),
    pvc("claim-unbound-sc", storage_class="csi-sc"),
    pvc("claim-unbound-sc-2", storage_class="csi-sc"),
    pvc("claim-no-sc"),
    pvc("claim-prebound-missing-pv", storage_class="csi-sc", volume_name="pv-does-not-exist"),
    storage_class("csi-sc", provisioner=EBS),
]


def pod(name, *claims, node=None, inline=()):
    vols = claim_volumes(*claims) + [
        {"name": f"inline-{i}", "awsElasticBlockStore": {"volumeID": v}} for i, v in enumerate(inline)
    ]
    b = make_pod(name).set("spec.volumes", vols)
    return b.node(node) if node else b


CASES = [
    # (id, new pod claims, existing pods' claims on n1, CSINode drivers, migrated, inline, want)
    ("fits under the limit", ["claim-ebs-0"], [["claim-ebs-1"]], {EBS: 4}, "", (), None),
    ("exceeds the limit", ["claim-ebs-0", "claim-ebs-1"], [["claim-ebs-2"]], {EBS: 2}, "", (), EXCEEDED),
    ("same volume is counted once", ["claim-ebs-0"], [["claim-ebs-0"]], {EBS: 1}, "", (), None),
    ("other driver does not count", ["claim-ebs-0"], [["claim-gce-0"]], {EBS: 1, GCE: 1}, "", (), None),
    ("driver without limit", ["claim-ebs-0", "claim-ebs-1"], [["claim-ebs-2"]], {EBS: None}, "", (), None),
    ("no CSINode, no limits", ["claim-ebs-0"], [["claim-ebs-1"]], None, "", (), None),
    ("unbound claim counts by its class", ["claim-unbound-sc"], [["claim-ebs-0"]], {EBS: 1}, "", (), EXCEEDED),
    ("two unbound claims are two volumes", ["claim-unbound-sc", "claim-unbound-sc-2"], [], {EBS: 1}, "", (), EXCEEDED),
    ("claim without class is not counted", ["claim-no-sc"], [["claim-ebs-0"]], {EBS: 1}, "", (), None),
    (
        "pre-bound to missing pv counts by class",
        ["claim-prebound-missing-pv"],
        [["claim-ebs-0"]],
        {EBS: 1},
        "",
        (),
        EXCEEDED,
    ),
    ("in-tree pv not migrated is not counted", ["claim-intree-0"], [["claim-ebs-0"]], {EBS: 1}, "", (), None),
    (
        "in-tree pv migrated counts",
        ["claim-intree-0"],
        [["claim-ebs-0"]],
        {EBS: 1},
        "kubernetes.io/aws-ebs",
        (),
        EXCEEDED,
    ),
    (
        "inline in-tree migrated counts",
        [],
        [["claim-ebs-0"]],
        {EBS: 1},
        "kubernetes.io/aws-ebs",
        ("aws-inline-9",),
        EXCEEDED,
    ),
    ("inline in-tree not migrated", [], [["claim-ebs-0"]], {EBS: 1}, "", ("aws-inline-9",), None),
    (
        "inline and pv of the same in-tree volume count once",
        [],
        [["claim-intree-0"]],
        {EBS: 1},
        "kubernetes.io/aws-ebs",
        ("aws-inline-0",),
        None,
    ),
]


@pytest.mark.parametrize(
    ("claims", "existing", "drivers", "migrated", "inline", "want"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_csi_limits(claims, existing, drivers, migrated, inline, want) -> None:
    objects = list(OBJECTS)
    if drivers is not None:
        objects.append(csi_node("n1", drivers, migrated))
    placed = [pod(f"e{i}", *cs, node="n1") for i, cs in enumerate(existing)]
    status = filter_nodes(
        NodeVolumeLimits, pod("new", *claims, inline=inline), [make_node("n1")], pods=placed, objects=objects
    )["n1"]
    if want is None:
        assert status is None
    else:
        assert status is not None and status.code is Code.UNSCHEDULABLE and status.reasons == [want]


def test_missing_claim_is_unresolvable() -> None:
    objects = [*OBJECTS, csi_node("n1", {EBS: 1})]
    status = filter_nodes(NodeVolumeLimits, pod("new", "claim-missing"), [make_node("n1")], objects=objects)["n1"]
    assert status is not None and status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert status.reasons == ['looking up PVC default/claim-missing: persistentvolumeclaim "claim-missing" not found']


def test_node_allocatable_limit_applies_without_csinode() -> None:
    node = make_node("n1").alloc(**{"attachable-volumes-csi-ebs.csi.aws.com": "1"})
    placed = [pod("e0", "claim-ebs-1", node="n1")]
    status = filter_nodes(NodeVolumeLimits, pod("new", "claim-ebs-0"), [node], pods=placed, objects=OBJECTS)["n1"]
    assert status is not None and status.reasons == [EXCEEDED]


def test_pod_without_volumes_skips() -> None:
    statuses = filter_nodes(NodeVolumeLimits, make_pod("p"), [make_node("n1")], objects=OBJECTS)
    assert statuses["n1"] is None


@pytest.mark.parametrize(
    ("driver", "want"),
    [
        ("ebs.csi.aws.com", "attachable-volumes-csi-ebs.csi.aws.com"),
        ("a" * 50, "attachable-volumes-csi-" + "a" * 23 + "6c177354157989a2"),
    ],
    ids=["short", "hashed"],
)
def test_attach_limit_key(driver, want) -> None:
    # Long names are cut to 23 characters plus 16 hex digits of their SHA-1, as upstream.
    assert csi_attach_limit_key(driver) == want


# --- VolumeLimitScaling (beta, on in 1.37) ------------------------------------------------------

NOT_INSTALLED = f"{EBS} CSI driver is not installed on the node"


def csi_driver(name: str, prevent: bool | None) -> dict:
    spec = {} if prevent is None else {"preventPodSchedulingIfMissing": prevent}
    return {"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": name}, "spec": spec}


SCALING_CASES = [
    # (id, CSIDriver opt-in, CSINode drivers, gate, new pod claims, want)
    ("opted-in driver missing from the CSINode", True, {GCE: 5}, None, ["claim-ebs-0"], NOT_INSTALLED),
    ("opted-in driver and no CSINode at all", True, None, None, ["claim-ebs-0"], NOT_INSTALLED),
    ("opted-in driver installed", True, {EBS: 5}, None, ["claim-ebs-0"], None),
    ("opted-in driver installed without a limit", True, {EBS: None}, None, ["claim-ebs-0"], None),
    ("driver not opted in (false)", False, {GCE: 5}, None, ["claim-ebs-0"], None),
    ("driver not opted in (unset)", None, {GCE: 5}, None, ["claim-ebs-0"], None),
    ("no CSIDriver object", "absent", {GCE: 5}, None, ["claim-ebs-0"], None),
    ("gate off: the old rule", True, {GCE: 5}, FeatureGates({"VolumeLimitScaling": False}), ["claim-ebs-0"], None),
    ("unbound claim: its class's provisioner", True, {GCE: 5}, None, ["claim-unbound-sc"], NOT_INSTALLED),
    ("claim without CSI volume is not checked", True, {GCE: 5}, None, ["claim-no-sc"], None),
]


@pytest.mark.parametrize(
    ("prevent", "drivers", "gates", "claims", "want"),
    [c[1:] for c in SCALING_CASES],
    ids=[c[0] for c in SCALING_CASES],
)
def test_volume_limit_scaling(prevent, drivers, gates, claims, want) -> None:
    objects = list(OBJECTS)
    if prevent != "absent":
        objects.append(csi_driver(EBS, prevent))
    if drivers is not None:
        objects.append(csi_node("n1", drivers))
    status = filter_nodes(
        NodeVolumeLimits, pod("new", *claims), [make_node("n1")], objects=objects, feature_gates=gates
    )["n1"]
    if want is None:
        assert status is None
    else:
        assert status is not None and status.code is Code.UNSCHEDULABLE and status.reasons == [want]


def test_volume_limit_scaling_in_tree_migrated_volume_needs_its_csi_driver() -> None:
    objects = [*OBJECTS, csi_driver(EBS, True), csi_node("n1", {GCE: 5}, "kubernetes.io/aws-ebs")]
    status = filter_nodes(NodeVolumeLimits, pod("new", inline=("aws-inline-9",)), [make_node("n1")], objects=objects)
    assert status["n1"] is not None and status["n1"].reasons == [NOT_INSTALLED]


def test_volume_limit_scaling_checks_before_the_limit() -> None:
    # Installed driver: the limit decides as before.
    objects = [*OBJECTS, csi_driver(EBS, True), csi_node("n1", {EBS: 1})]
    placed = [pod("e0", "claim-ebs-1", node="n1")]
    status = filter_nodes(NodeVolumeLimits, pod("new", "claim-ebs-0"), [make_node("n1")], pods=placed, objects=objects)
    assert status["n1"] is not None and status["n1"].reasons == [EXCEEDED]


@pytest.mark.parametrize(
    ("old", "new", "hint"),
    [
        ({EBS: 1}, {EBS: 2}, QueueingHint.QUEUE),
        ({EBS: 2}, {EBS: 1}, QueueingHint.SKIP),
        ({EBS: 2}, {EBS: 2}, QueueingHint.SKIP),
        ({EBS: 2}, {EBS: None}, QueueingHint.QUEUE),
        ({GCE: 2}, {GCE: 2, EBS: 1}, QueueingHint.QUEUE),
        ({GCE: 2, EBS: 1}, {GCE: 2}, QueueingHint.SKIP),
    ],
    ids=["limit raised", "limit lowered", "unchanged", "limit removed", "driver installed", "driver removed"],
)
def test_hint_csi_node_updated(old, new, hint) -> None:
    got = is_schedulable_after_csi_node_updated(pod("p", "claim-ebs-0").obj(), csi_node("n1", old), csi_node("n1", new))
    assert got is hint


def test_events_include_csi_node_updates() -> None:
    events = {(e.event.resource, e.event.action) for e in NodeVolumeLimits().events_to_register()}
    assert (EventResource.CSI_NODE, ActionType.UPDATE) in events
    assert (EventResource.CSI_NODE, ActionType.ADD) in events
