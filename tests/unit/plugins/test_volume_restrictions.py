"""VolumeRestrictions, transcribed from upstream's volume_restrictions_test.go."""

from __future__ import annotations

import asyncio

import pytest
from volume_objects import claim_volumes, pvc

from kubesched.framework.events import QueueingHint
from kubesched.framework.interface import CycleState
from kubesched.framework.status import Code
from kubesched.plugins.volume.volume_restrictions import VolumeRestrictions, is_schedulable_after_pod_deleted
from kubesched.testing import as_node_infos, filter_nodes, framework_for, make_node, make_pod

DISK = "node(s) had no available disk"
RWOP = "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode"


def gce(pd: str, ro: bool = False):
    return {"name": f"gce-{pd}", "gcePersistentDisk": {"pdName": pd, "readOnly": ro}}


def ebs(vid: str):
    return {"name": f"ebs-{vid}", "awsElasticBlockStore": {"volumeID": vid}}


def rbd(monitors: list[str], pool: str, image: str, ro: bool = False):
    return {"name": f"rbd-{image}", "rbd": {"monitors": monitors, "pool": pool, "image": image, "readOnly": ro}}


def iscsi(iqn: str, ro: bool = False):
    return {"name": f"iscsi-{iqn}", "iscsi": {"targetPortal": "127.0.0.1:3260", "iqn": iqn, "lun": 0, "readOnly": ro}}


def pod(name: str, *volumes, node: str | None = None):
    b = make_pod(name).set("spec.volumes", list(volumes))
    return b.node(node) if node else b


DISK_CASES = [
    # (id, volumes of the new pod, volumes of the pod on the node, conflict?)
    ("gce nothing", [gce("foo")], [], False),
    ("gce one state", [gce("foo")], [gce("foo")], True),
    ("gce other disk", [gce("foo")], [gce("bar")], False),
    ("gce both read-only", [gce("foo", True)], [gce("foo", True)], False),
    ("gce one read-only", [gce("foo", True)], [gce("foo")], True),
    ("ebs nothing", [ebs("foo")], [], False),
    ("ebs same volume", [ebs("foo")], [ebs("foo")], True),
    ("ebs other volume", [ebs("foo")], [ebs("bar")], False),
    ("rbd same image", [rbd(["a", "b"], "pool1", "img")], [rbd(["b", "c"], "pool1", "img")], True),
    ("rbd disjoint monitors", [rbd(["a"], "pool1", "img")], [rbd(["c"], "pool1", "img")], False),
    ("rbd other pool", [rbd(["a"], "pool1", "img")], [rbd(["a"], "pool2", "img")], False),
    ("rbd both read-only", [rbd(["a"], "pool1", "img", True)], [rbd(["a"], "pool1", "img", True)], False),
    (
        "iscsi same iqn",
        [iscsi("iqn.2016-12.server:storage.target01")],
        [iscsi("iqn.2016-12.server:storage.target01")],
        True,
    ),
    (
        "iscsi other iqn",
        [iscsi("iqn.2016-12.server:storage.target01")],
        [iscsi("iqn.2017-12.server:storage.target01")],
        False,
    ),
    ("iscsi both read-only", [iscsi("iqn.a", True)], [iscsi("iqn.a", True)], False),
]


@pytest.mark.parametrize(("mine", "theirs", "conflict"), [c[1:] for c in DISK_CASES], ids=[c[0] for c in DISK_CASES])
def test_disk_conflicts(mine, theirs, conflict) -> None:
    existing = [pod("existing", *theirs, node="n1")] if theirs else []
    status = filter_nodes(VolumeRestrictions, pod("new", *mine), [make_node("n1")], pods=existing)["n1"]
    if conflict:
        assert status is not None and status.code is Code.UNSCHEDULABLE and status.reasons == [DISK]
    else:
        assert status is None


def test_pod_without_restricted_volumes_or_claims_is_skipped() -> None:
    fw = framework_for(VolumeRestrictions, nodes=as_node_infos([make_node("n1")]))
    state = CycleState()
    _, status, _ = asyncio.run(
        fw.run_pre_filter(state, make_pod("p").set("spec.volumes", [{"name": "e", "emptyDir": {}}]).info())
    )
    assert status is None
    assert "VolumeRestrictions" in state.skip_filter_plugins


RWOP_OBJECTS = [
    pvc("claim-rwop", access_modes=["ReadWriteOncePod"]),
    pvc("claim-rwo", access_modes=["ReadWriteOnce"]),
    pvc("claim-rwop-2", access_modes=["ReadWriteOncePod"]),
]

RWOP_CASES = [
    ("rwop claim unused", ["claim-rwop"], [], None),
    ("rwop claim used on another node", ["claim-rwop"], [("n2", ["claim-rwop"])], (Code.UNSCHEDULABLE, RWOP)),
    ("rwop claim used on this node", ["claim-rwop"], [("n1", ["claim-rwop"])], (Code.UNSCHEDULABLE, RWOP)),
    ("rwo claim shared", ["claim-rwo"], [("n1", ["claim-rwo"])], None),
    ("other rwop claim used", ["claim-rwop"], [("n1", ["claim-rwop-2"])], None),
    (
        "claim not found",
        ["claim-missing"],
        [],
        (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, 'persistentvolumeclaim "claim-missing" not found'),
    ),
]


@pytest.mark.parametrize(("claims", "placed", "want"), [c[1:] for c in RWOP_CASES], ids=[c[0] for c in RWOP_CASES])
def test_read_write_once_pod(claims, placed, want) -> None:
    existing = [pod(f"user-{i}", *claim_volumes(*cs), node=n) for i, (n, cs) in enumerate(placed)]
    statuses = filter_nodes(
        VolumeRestrictions,
        pod("new", *claim_volumes(*claims)),
        [make_node("n1"), make_node("n2")],
        pods=existing,
        objects=RWOP_OBJECTS,
    )
    for status in statuses.values():
        if want is None:
            assert status is None
        else:
            assert status is not None and (status.code, status.reasons) == (want[0], [want[1]])


def test_removing_the_claim_user_through_the_prefilter_extension_clears_the_conflict() -> None:
    user = pod("user", *claim_volumes("claim-rwop"), node="n1").info()
    nodes = as_node_infos([make_node("n1")], [user])
    fw = framework_for(VolumeRestrictions, nodes=nodes, objects=RWOP_OBJECTS)
    new = pod("new", *claim_volumes("claim-rwop")).info()
    state = CycleState()
    _, status, _ = asyncio.run(fw.run_pre_filter(state, new))
    assert status is None
    assert fw.run_filter(state, new, nodes[0]).reasons == [RWOP]
    clone = state.clone()
    asyncio.run(fw.run_pre_filter_remove_pod(clone, new, user, nodes[0]))
    assert fw.run_filter(clone, new, nodes[0]) is None
    # The original state is untouched by the clone's change.
    assert fw.run_filter(state, new, nodes[0]).reasons == [RWOP]


@pytest.mark.parametrize(
    ("deleted", "want"),
    [
        (pod("gone", gce("foo"), node="n1").obj(), QueueingHint.QUEUE),
        (pod("gone", gce("bar"), node="n1").obj(), QueueingHint.SKIP),
        (pod("gone", *claim_volumes("claim-rwop"), node="n1").obj(), QueueingHint.QUEUE),
    ],
    ids=["same-disk", "other-disk", "same-claim"],
)
def test_pod_deleted_hint(deleted, want) -> None:
    waiting = pod("p", gce("foo"), *claim_volumes("claim-rwop")).obj()
    assert is_schedulable_after_pod_deleted(waiting, deleted, None) is want
