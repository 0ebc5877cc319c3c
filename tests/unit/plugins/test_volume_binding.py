"""VolumeBinding, transcribed from upstream's volume_binding_test.go (TestVolumeBinding), plus
Reserve/Unreserve and PreBind against the in-memory cluster."""

from __future__ import annotations

import asyncio
import copy

import pytest
from volume_objects import claim_volumes, pv, pvc, storage_class

from kubesched.cluster.memory import InMemoryCluster
from kubesched.cluster.store import Store
from kubesched.framework.events import QueueingHint
from kubesched.framework.features import FeatureGates
from kubesched.framework.interface import CycleState
from kubesched.framework.status import Code
from kubesched.plugins.volume.volume_binding import (
    VolumeBinding,
    VolumeBindingArgs,
    is_schedulable_after_pvc_change,
)
from kubesched.runtime.profile import FrameworkError
from kubesched.testing import as_node_infos, framework_for, make_node, make_pod

HOST = "kubernetes.io/hostname"
BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
NODE_CONFLICT = "node(s) had volume node affinity conflict"
PV_NOT_EXIST = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
DEFAULT_SHAPE = [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]

CLASSES = [
    storage_class("immediate-sc", mode="Immediate"),
    storage_class("wait-sc"),
    storage_class("wait-hdd-sc"),
]


def pod_with(*claims: str):
    b = make_pod("pod-a")
    return b.set("spec.volumes", claim_volumes(*claims)) if claims else b


def avail(name: str, cls: str, capacity: str, host: str | None = None, zone: tuple[str, str] | None = None):
    affinity = {HOST: [host]} if host else None
    if zone:
        affinity = {"topology.kubernetes.io/region": [zone[0]], "topology.kubernetes.io/zone": [zone[1]]}
    return pv(name, storage_class=cls, capacity=capacity, phase="Available", node_affinity=affinity)


def zonal_node(name: str, region: str, zone: str):
    return make_node(name).label("topology.kubernetes.io/region", region).label("topology.kubernetes.io/zone", zone)


async def _cycle(pod, nodes, objects, args=None, cluster=None, gates=None):
    infos = as_node_infos(nodes)
    fw = framework_for(VolumeBinding, args=args, nodes=infos, objects=objects, cluster=cluster, feature_gates=gates)
    pi = pod.info()
    state = CycleState()
    _, pre, _ = await fw.run_pre_filter(state, pi)
    filtered = {}
    if pre is None:
        for ni in infos:
            filtered[ni.name] = fw.run_filter(state, pi, ni)
    return fw, pi, state, infos, pre, filtered


def run_case(pod, nodes, objects, args=None, gates=None):
    async def go():
        fw, pi, state, infos, pre, filtered = await _cycle(pod, nodes, objects, args, gates=gates)
        scores = {}
        if pre is None:
            plugin = fw.score_plugins[0].plugin if fw.score_plugins else None
            ps = await fw.run_pre_score(state, pi, infos)
            for ni in infos:
                scores[ni.name] = plugin.score(state, pi, ni) if plugin is not None and ps is None else 0
        return pre, filtered, scores

    return asyncio.run(go())


def _status(s):
    return None if s is None or s.is_success() else (s.code, s.reasons)


UU = Code.UNSCHEDULABLE_AND_UNRESOLVABLE

CASES = [
    ("pod has no pvcs", pod_with(), [make_node("node-a")], [], None, "skip", {}),
    (
        "all bound",
        pod_with("pvc-a"),
        [make_node("node-a")],
        [
            pvc("pvc-a", "wait-sc", volume_name="pv-a", bound=True),
            pv("pv-a", storage_class="wait-sc", phase="Available"),
        ],
        None,
        None,
        {"node-a": None},
    ),
    (
        "PVC does not exist",
        pod_with("pvc-a"),
        [make_node("node-a")],
        [],
        None,
        (UU, ['persistentvolumeclaim "pvc-a" not found']),
        {},
    ),
    (
        "part of PVCs do not exist",
        pod_with("pvc-a", "pvc-b"),
        [make_node("node-a")],
        [pvc("pvc-a", "wait-sc", volume_name="pv-a", bound=True)],
        None,
        (UU, ['persistentvolumeclaim "pvc-b" not found']),
        {},
    ),
    (
        "immediate claims not bound",
        pod_with("pvc-a"),
        [make_node("node-a")],
        [pvc("pvc-a", "immediate-sc")],
        None,
        (UU, ["pod has unbound immediate PersistentVolumeClaims"]),
        {},
    ),
    (
        "unbound claims no matches",
        pod_with("pvc-a"),
        [make_node("node-a")],
        [pvc("pvc-a", "wait-sc")],
        None,
        None,
        {"node-a": (UU, [BIND_CONFLICT])},
    ),
    (
        "bound and unbound unsatisfied",
        pod_with("pvc-a", "pvc-b"),
        [make_node("node-a").label("foo", "barbar")],
        [
            pvc("pvc-a", "wait-sc", volume_name="pv-a", bound=True),
            pvc("pvc-b", "wait-sc"),
            pv("pv-a", storage_class="wait-sc", phase="Available", node_affinity={"foo": ["bar"]}),
        ],
        None,
        None,
        {"node-a": (UU, [NODE_CONFLICT, BIND_CONFLICT])},
    ),
    (
        "pv not found",
        pod_with("pvc-a"),
        [make_node("node-a")],
        [pvc("pvc-a", "wait-sc", volume_name="pv-a", bound=True)],
        None,
        None,
        {"node-a": (UU, [PV_NOT_EXIST])},
    ),
    (
        "pv not found claim lost",
        pod_with("pvc-a"),
        [make_node("node-a")],
        [pvc("pvc-a", "wait-sc", volume_name="pv-a", bound=True, phase="Lost")],
        None,
        (UU, ['persistentvolumeclaim "pvc-a" bound to non-existent persistentvolume "pv-a"']),
        {},
    ),
    (
        "pvc being deleted",
        pod_with("pvc-a"),
        [make_node("node-a")],
        [pvc("pvc-a", "wait-sc", deleting=True)],
        None,
        (UU, ['persistentvolumeclaim "pvc-a" is being deleted']),
        {},
    ),
]


@pytest.mark.parametrize(
    ("pod", "nodes", "objects", "args", "want_pre", "want_filter"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_volume_binding(pod, nodes, objects, args, want_pre, want_filter) -> None:
    pre, filtered, _ = run_case(pod, nodes, CLASSES + objects, args)
    if want_pre == "skip":
        assert pre is None  # Skip is not a failure: the Filter simply does not run
        return
    assert _status(pre) == want_pre
    assert {n: _status(s) for n, s in filtered.items()} == want_filter


LOCAL_PVS = [
    avail("pv-a-0", "wait-sc", "200Gi", host="node-a"),
    avail("pv-a-1", "wait-sc", "200Gi", host="node-a"),
    avail("pv-b-0", "wait-sc", "100Gi", host="node-b"),
    avail("pv-b-1", "wait-sc", "100Gi", host="node-b"),
]
ZONAL_NODES = [
    zonal_node("zone-a-node-a", "region-a", "zone-a"),
    zonal_node("zone-a-node-b", "region-a", "zone-a"),
    zonal_node("zone-b-node-a", "region-b", "zone-b"),
    zonal_node("zone-b-node-b", "region-b", "zone-b"),
    zonal_node("zone-c-node-a", "region-c", "zone-c"),
    zonal_node("zone-c-node-b", "region-c", "zone-c"),
]
ZONAL_PVS = [
    avail("pv-a-0", "wait-sc", "200Gi", zone=("region-a", "zone-a")),
    avail("pv-a-1", "wait-sc", "200Gi", zone=("region-a", "zone-a")),
    avail("pv-b-0", "wait-sc", "100Gi", zone=("region-b", "zone-b")),
    avail("pv-b-1", "wait-sc", "100Gi", zone=("region-b", "zone-b")),
]

SCORE_CASES = [
    (
        "local volumes with close capacity are preferred",
        pod_with("pvc-a"),
        [make_node("node-a"), make_node("node-b"), make_node("node-c")],
        [pvc("pvc-a", "wait-sc", request="50Gi"), *LOCAL_PVS],
        DEFAULT_SHAPE,
        [False, False, True],
        [25, 50, 0],
    ),
    (
        "local volumes with close capacity are preferred (multiple pvcs)",
        pod_with("pvc-0", "pvc-1"),
        [make_node("node-a"), make_node("node-b"), make_node("node-c")],
        [
            pvc("pvc-0", "wait-sc", request="50Gi"),
            pvc("pvc-1", "wait-hdd-sc", request="100Gi"),
            *LOCAL_PVS,
            avail("pv-a-2", "wait-hdd-sc", "200Gi", host="node-a"),
            avail("pv-a-3", "wait-hdd-sc", "200Gi", host="node-a"),
            avail("pv-b-2", "wait-hdd-sc", "100Gi", host="node-b"),
            avail("pv-b-3", "wait-hdd-sc", "100Gi", host="node-b"),
        ],
        DEFAULT_SHAPE,
        [False, False, True],
        [38, 75, 0],
    ),
    (
        "zonal volumes with close capacity are preferred",
        pod_with("pvc-a"),
        ZONAL_NODES,
        [pvc("pvc-a", "wait-sc", request="50Gi"), *ZONAL_PVS],
        DEFAULT_SHAPE,
        [False, False, False, False, True, True],
        [25, 25, 50, 50, 0, 0],
    ),
    (
        "zonal volumes with close capacity are preferred (custom shape)",
        pod_with("pvc-a"),
        ZONAL_NODES,
        [pvc("pvc-a", "wait-sc", request="50Gi"), *ZONAL_PVS],
        [{"utilization": 0, "score": 0}, {"utilization": 50, "score": 3}, {"utilization": 100, "score": 5}],
        [False, False, False, False, True, True],
        [15, 15, 30, 30, 0, 0],
    ),
]


@pytest.mark.parametrize(
    ("pod", "nodes", "objects", "shape", "rejected", "scores"),
    [c[1:] for c in SCORE_CASES],
    ids=[c[0] for c in SCORE_CASES],
)
def test_volume_capacity_scoring(pod, nodes, objects, shape, rejected, scores) -> None:
    pre, filtered, got = run_case(pod, nodes, CLASSES + objects, {"bindTimeoutSeconds": 300, "shape": shape})
    assert pre is None
    assert [s is not None for s in filtered.values()] == rejected
    for s in filtered.values():
        assert s is None or _status(s) == (UU, [BIND_CONFLICT])
    assert list(got.values()) == scores


def test_without_shape_the_default_shape_scores() -> None:
    # StorageCapacityScoring is on in 1.37: the default shape prefers the least utilized storage;
    # node-a's 200Gi PV for a 50Gi claim is 25% used.
    _, _, got = run_case(
        pod_with("pvc-a"), [make_node("node-a")], CLASSES + [pvc("pvc-a", "wait-sc", request="50Gi"), *LOCAL_PVS]
    )
    assert got == {"node-a": 75}


MATCH_CASES = [
    ("smallest fitting pv wins", [avail("big", "wait-sc", "10Gi"), avail("small", "wait-sc", "2Gi")], {}, "small"),
    ("too small is ignored", [avail("tiny", "wait-sc", "500Mi")], {}, None),
    ("other class is ignored", [avail("hdd", "wait-hdd-sc", "5Gi")], {}, None),
    ("released pv is ignored", [pv("rel", storage_class="wait-sc", capacity="5Gi", phase="Released")], {}, None),
    (
        "access modes must be offered",
        [pv("rwo", storage_class="wait-sc", capacity="5Gi", phase="Available", access_modes=["ReadWriteOnce"])],
        {"access_modes": ["ReadWriteMany"]},
        None,
    ),
    (
        "pv claimed by another claim is ignored",
        [pv("taken", storage_class="wait-sc", capacity="5Gi", phase="Available", claim=("default", "other"))],
        {},
        None,
    ),
    (
        "pv pre-bound to the claim wins even if bigger",
        [
            avail("small", "wait-sc", "2Gi"),
            pv("mine", storage_class="wait-sc", capacity="50Gi", phase="Bound", claim=("default", "pvc-a")),
        ],
        {},
        "mine",
    ),
]


@pytest.mark.parametrize(("pvs", "claim_kw", "want"), [c[1:] for c in MATCH_CASES], ids=[c[0] for c in MATCH_CASES])
def test_matching_volume_choice(pvs, claim_kw, want) -> None:
    objects = CLASSES + [pvc("pvc-a", "wait-sc", request="1Gi", **claim_kw), *pvs]

    async def go():
        fw, pi, state, infos, pre, filtered = await _cycle(pod_with("pvc-a"), [make_node("node-a")], objects)
        return state, filtered

    state, filtered = asyncio.run(go())
    if want is None:
        assert _status(filtered["node-a"]) == (UU, [BIND_CONFLICT])
    else:
        assert filtered["node-a"] is None
        vols = state.read("VolumeBinding").pod_volumes_by_node["node-a"]
        assert [p["metadata"]["name"] for p, _ in vols.static_bindings] == [want]


PROVISION_CASES = [
    ("provisioner, no topology", storage_class("dyn", provisioner="csi.example.com"), None),
    ("no provisioner", storage_class("dyn", provisioner="kubernetes.io/no-provisioner"), BIND_CONFLICT),
    (
        "topology matches",
        storage_class(
            "dyn",
            provisioner="csi.example.com",
            allowed_topologies=[{"matchLabelExpressions": [{"key": "topology.kubernetes.io/zone", "values": ["z1"]}]}],
        ),
        None,
    ),
    (
        "topology does not match",
        storage_class(
            "dyn",
            provisioner="csi.example.com",
            allowed_topologies=[{"matchLabelExpressions": [{"key": "topology.kubernetes.io/zone", "values": ["z2"]}]}],
        ),
        BIND_CONFLICT,
    ),
]


@pytest.mark.parametrize(("sc", "reason"), [c[1:] for c in PROVISION_CASES], ids=[c[0] for c in PROVISION_CASES])
def test_dynamic_provisioning(sc, reason) -> None:
    _, filtered, _ = run_case(
        pod_with("pvc-a"), [make_node("node-a").zone("z1")], [sc, pvc("pvc-a", "dyn", request="1Gi")]
    )
    assert _status(filtered["node-a"]) == (None if reason is None else (UU, [reason]))


def test_args_validation() -> None:
    assert VolumeBindingArgs().bindTimeoutSeconds == 600
    with pytest.raises(ValueError, match="should not be a negative value"):
        VolumeBindingArgs(bindTimeoutSeconds=-1)
    with pytest.raises(ValueError, match="sorted in increasing order"):
        VolumeBindingArgs(shape=[{"utilization": 50, "score": 1}, {"utilization": 10, "score": 2}])
    with pytest.raises(ValueError, match=r"not in valid range \[0, 10\]"):
        VolumeBindingArgs(shape=[{"utilization": 50, "score": 11}])


# --- Reserve / Unreserve / PreBind ---------------------------------------------------------------


def _store(objects) -> Store:
    store = Store()
    for o in objects:
        o = copy.deepcopy(o)
        o["metadata"].pop("resourceVersion", None)
        store.create(o["kind"], o)
    return store


class StoreListers:
    """Listers reading the store directly (the scheduler's informers, without the delay)."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def get(self, kind, namespace, name):
        try:
            return self.store.get(kind, namespace, name)
        except Exception:  # noqa: BLE001
            return None

    def list(self, kind, namespace=None):
        return self.store.list(kind, namespace)[0]

    def namespace_labels(self, namespace):
        return {}


async def _schedule(fw, pod, node_name: str):
    pi = pod.info()
    state = CycleState()
    _, pre, _ = await fw.run_pre_filter(state, pi)
    assert pre is None
    ni = fw.snapshot().get(node_name)
    status = fw.run_filter(state, pi, ni)
    return pi, state, status


def test_reserve_and_prebind_bind_the_pv_and_pvc_in_the_store() -> None:
    store = _store(CLASSES + [pvc("pvc-a", "wait-sc", request="1Gi"), avail("pv-1", "wait-sc", "5Gi", host="node-a")])
    cluster = InMemoryCluster(store)

    async def go():
        fw = framework_for(VolumeBinding, nodes=as_node_infos([make_node("node-a")]), cluster=cluster)
        fw.listers = StoreListers(store)
        pi, state, status = await _schedule(fw, pod_with("pvc-a"), "node-a")
        assert status is None
        assert await fw.run_reserve(state, pi, "node-a") is None
        assert await fw.run_pre_bind(state, pi, "node-a") is None

    asyncio.run(go())
    bound_pv = store.get("PersistentVolume", None, "pv-1")
    claim = store.get("PersistentVolumeClaim", "default", "pvc-a")
    assert bound_pv["spec"]["claimRef"]["name"] == "pvc-a"
    assert bound_pv["spec"]["claimRef"]["uid"] == claim["metadata"]["uid"]
    assert bound_pv["status"]["phase"] == "Bound"
    assert claim["spec"]["volumeName"] == "pv-1"
    assert claim["metadata"]["annotations"]["pv.kubernetes.io/bind-completed"] == "yes"
    assert claim["status"]["phase"] == "Bound"


def test_dynamic_provisioning_prebind_sets_the_selected_node() -> None:
    sc = storage_class("dyn", provisioner="csi.example.com")
    store = _store([sc, pvc("pvc-a", "dyn", request="1Gi")])

    async def go():
        fw = framework_for(VolumeBinding, nodes=as_node_infos([make_node("node-a")]), cluster=InMemoryCluster(store))
        fw.listers = StoreListers(store)
        pi, state, status = await _schedule(fw, pod_with("pvc-a"), "node-a")
        assert status is None
        await fw.run_reserve(state, pi, "node-a")
        assert await fw.run_pre_bind(state, pi, "node-a") is None

    asyncio.run(go())
    claim = store.get("PersistentVolumeClaim", "default", "pvc-a")
    assert claim["metadata"]["annotations"]["volume.kubernetes.io/selected-node"] == "node-a"
    assert not claim["spec"].get("volumeName")


def test_reserved_pv_is_not_offered_to_the_next_pod_until_unreserved() -> None:
    store = _store(
        CLASSES
        + [
            pvc("pvc-a", "wait-sc", request="1Gi"),
            pvc("pvc-b", "wait-sc", request="1Gi"),
            avail("pv-1", "wait-sc", "5Gi"),
        ]
    )

    async def go():
        fw = framework_for(VolumeBinding, nodes=as_node_infos([make_node("node-a")]), cluster=InMemoryCluster(store))
        fw.listers = StoreListers(store)
        pi, state, status = await _schedule(fw, make_pod("first").set("spec.volumes", claim_volumes("pvc-a")), "node-a")
        assert status is None
        await fw.run_reserve(state, pi, "node-a")
        _, _, second = await _schedule(fw, make_pod("second").set("spec.volumes", claim_volumes("pvc-b")), "node-a")
        assert second is not None and second.reasons == [BIND_CONFLICT]
        await fw.run_unreserve(state, pi, "node-a")
        _, _, third = await _schedule(fw, make_pod("third").set("spec.volumes", claim_volumes("pvc-b")), "node-a")
        assert third is None

    asyncio.run(go())


def test_prebind_conflict_is_an_error_and_forgets_the_assumption() -> None:
    store = _store(CLASSES + [pvc("pvc-a", "wait-sc", request="1Gi"), avail("pv-1", "wait-sc", "5Gi")])

    async def go():
        fw = framework_for(VolumeBinding, nodes=as_node_infos([make_node("node-a")]), cluster=InMemoryCluster(store))
        fw.listers = StoreListers(store)
        pi, state, _ = await _schedule(fw, pod_with("pvc-a"), "node-a")
        await fw.run_reserve(state, pi, "node-a")
        # Someone else writes the PV meanwhile: our update carries a stale resourceVersion.
        store.mutate("PersistentVolume", None, "pv-1", lambda o: o["metadata"].setdefault("labels", {}).update(x="y"))
        status = await fw.run_pre_bind(state, pi, "node-a")
        assert status is not None and status.code is Code.ERROR
        assert "binding volumes" in status.message()

    asyncio.run(go())
    assert not store.get("PersistentVolume", None, "pv-1")["spec"].get("claimRef")


@pytest.mark.parametrize(
    ("claim", "want"),
    [
        (pvc("pvc-a", "wait-sc"), QueueingHint.QUEUE),
        (pvc("pvc-z", "wait-sc"), QueueingHint.SKIP),
        (pvc("pvc-a", "wait-sc", namespace="other"), QueueingHint.SKIP),
    ],
    ids=["used-claim", "other-claim", "other-namespace"],
)
def test_pvc_change_hint(claim, want) -> None:
    assert is_schedulable_after_pvc_change(pod_with("pvc-a").obj(), None, claim) is want


# --- StorageCapacityScoring (beta, on in 1.37) and storage capacity tracking ---------------------

NO_SCORING = FeatureGates({"StorageCapacityScoring": False})
NOT_ENOUGH_SPACE = "node(s) did not have enough free storage"
DRIVER = "csi.example.com"


def csi_driver(name: str, storage_capacity: bool | None) -> dict:
    spec = {} if storage_capacity is None else {"storageCapacity": storage_capacity}
    return {"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": name}, "spec": spec}


def capacity(name: str, cls: str, size: str | None, node: str | None, max_size: str | None = None) -> dict:
    obj = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSIStorageCapacity",
        "metadata": {"name": name, "namespace": "kube-system"},
        "storageClassName": cls,
    }
    if size is not None:
        obj["capacity"] = size
    if max_size is not None:
        obj["maximumVolumeSize"] = max_size
    if node is not None:
        obj["nodeTopology"] = {"matchLabels": {HOST: node}}
    return obj


DYN_NODES = [make_node(n).label(HOST, n) for n in ("node-a", "node-b", "node-c")]
DYN_BASE = [storage_class("dyn", provisioner=DRIVER), csi_driver(DRIVER, True)]


def test_gate_off_volume_binding_does_not_score() -> None:
    pre, _, got = run_case(
        pod_with("pvc-a"),
        [make_node("node-a")],
        CLASSES + [pvc("pvc-a", "wait-sc", request="50Gi"), *LOCAL_PVS],
        gates=NO_SCORING,
    )
    assert pre is None and got == {"node-a": 0}


def test_gate_off_shape_is_refused() -> None:
    with pytest.raises(
        FrameworkError,
        match="shape: Invalid value: 2 point\\(s\\): unexpected field `shape`, remove it or turn on the feature gate StorageCapacityScoring",
    ):
        framework_for(VolumeBinding, args={"shape": DEFAULT_SHAPE}, feature_gates=NO_SCORING)


def test_gate_on_empty_shape_is_refused() -> None:
    with pytest.raises(FrameworkError, match="shape: Required value: at least one point must be specified"):
        framework_for(VolumeBinding, args={"shape": []})


CAPACITY_FILTER_CASES = [
    # (id, objects besides the class, node-a's verdict)
    ("enough capacity", [csi_driver(DRIVER, True), capacity("c", "dyn", "10Gi", "node-a")], None),
    ("not enough capacity", [csi_driver(DRIVER, True), capacity("c", "dyn", "1Gi", "node-a")], NOT_ENOUGH_SPACE),
    (
        "maximumVolumeSize decides over capacity",
        [csi_driver(DRIVER, True), capacity("c", "dyn", "100Gi", "node-a", max_size="1Gi")],
        NOT_ENOUGH_SPACE,
    ),
    ("capacity on another node", [csi_driver(DRIVER, True), capacity("c", "dyn", "10Gi", "node-b")], NOT_ENOUGH_SPACE),
    (
        "capacity of another class",
        [csi_driver(DRIVER, True), capacity("c", "other", "10Gi", "node-a")],
        NOT_ENOUGH_SPACE,
    ),
    ("capacity without topology", [csi_driver(DRIVER, True), capacity("c", "dyn", "10Gi", None)], NOT_ENOUGH_SPACE),
    ("no capacity objects", [csi_driver(DRIVER, True)], NOT_ENOUGH_SPACE),
    ("driver does not track capacity", [csi_driver(DRIVER, False)], None),
    ("driver without storageCapacity", [csi_driver(DRIVER, None)], None),
    ("no CSIDriver object", [], None),
]


@pytest.mark.parametrize(
    ("objects", "reason"), [c[1:] for c in CAPACITY_FILTER_CASES], ids=[c[0] for c in CAPACITY_FILTER_CASES]
)
def test_storage_capacity_filter(objects, reason) -> None:
    sc = storage_class("dyn", provisioner=DRIVER)
    _, filtered, _ = run_case(
        pod_with("pvc-a"),
        [make_node("node-a").label(HOST, "node-a")],
        [sc, pvc("pvc-a", "dyn", request="5Gi"), *objects],
    )
    assert _status(filtered["node-a"]) == (None if reason is None else (UU, [reason]))


def test_storage_capacity_claim_without_request_is_not_checked() -> None:
    _, filtered, _ = run_case(pod_with("pvc-a"), [make_node("node-a")], [*DYN_BASE, pvc("pvc-a", "dyn")])
    assert filtered["node-a"] is None


DYN_SCORE_CASES = [
    # (id, claims (name, request), capacities per node, shape, rejected, scores)
    (
        "default shape: most free storage first",
        [("pvc-a", "50Gi")],
        {"node-a": "100Gi", "node-b": "200Gi", "node-c": "50Gi"},
        None,
        [False, False, False],
        [50, 75, 0],
    ),
    (
        "custom shape: least free storage first",
        [("pvc-a", "50Gi")],
        {"node-a": "100Gi", "node-b": "200Gi", "node-c": "50Gi"},
        DEFAULT_SHAPE,
        [False, False, False],
        [50, 25, 100],
    ),
    (
        "two claims of a class draw on the node's capacity once",
        [("pvc-a", "50Gi"), ("pvc-b", "50Gi")],
        {"node-a": "100Gi", "node-b": "200Gi", "node-c": "400Gi"},
        None,
        [False, False, False],
        [0, 50, 75],
    ),
    (
        "a node without enough storage is filtered",
        [("pvc-a", "50Gi")],
        {"node-a": "100Gi", "node-b": "10Gi", "node-c": "200Gi"},
        None,
        [False, True, False],
        [50, 0, 75],
    ),
]


@pytest.mark.parametrize(
    ("claims", "capacities", "shape", "rejected", "scores"),
    [c[1:] for c in DYN_SCORE_CASES],
    ids=[c[0] for c in DYN_SCORE_CASES],
)
def test_storage_capacity_scoring(claims, capacities, shape, rejected, scores) -> None:
    objects = [*DYN_BASE, *(pvc(n, "dyn", request=r) for n, r in claims)]
    objects += [capacity(f"cap-{node}", "dyn", size, node) for node, size in capacities.items()]
    args = None if shape is None else {"shape": shape}
    pre, filtered, got = run_case(pod_with(*(n for n, _ in claims)), DYN_NODES, objects, args)
    assert pre is None
    assert [s is not None for s in filtered.values()] == rejected
    assert [got[n] for n in ("node-a", "node-b", "node-c")] == scores


def test_storage_capacity_scoring_without_tracking_scores_zero() -> None:
    # The driver does not publish capacity: nothing to weigh, every node scores 0.
    objects = [storage_class("dyn", provisioner=DRIVER), pvc("pvc-a", "dyn", request="5Gi")]
    pre, _, got = run_case(pod_with("pvc-a"), DYN_NODES, objects)
    assert pre is None and set(got.values()) == {0}


@pytest.mark.parametrize("with_volume", [False, True], ids=["no volumes: zeros at once", "volumes: node by node"])
def test_score_nodes_is_score_on_every_node(with_volume: bool) -> None:
    """The batch form gives each node what ``score`` gives it (zeros for a pod without volumes,
    without a call per node), or declines (a pod with volumes is scored node by node)."""

    async def go() -> None:
        nodes = [make_node("node-a").label(HOST, "node-a"), make_node("node-b").label(HOST, "node-b")]
        objects = [storage_class("wait", "WaitForFirstConsumer"), avail("pv-a", "wait", "10Gi", host="node-a")]
        pod = make_pod("p")
        if with_volume:
            objects.append(pvc("claim", storage_class="wait", request="5Gi"))
            pod = pod.set("spec.volumes", claim_volumes("claim"))
        fw, pi, state, infos, _, _ = await _cycle(pod, nodes, objects)
        plugin = fw.plugins["VolumeBinding"]
        batch = plugin.score_nodes(state, pi, infos)
        per_node = [plugin.score(state, pi, ni) for ni in infos]
        if with_volume:
            assert batch is None and per_node[0] > 0
        else:
            assert batch is not None and list(batch) == per_node == [0, 0]

    asyncio.run(go())
