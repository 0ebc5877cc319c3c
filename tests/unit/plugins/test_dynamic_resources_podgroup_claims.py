"""DynamicResources and ResourceClaims shared by a PodGroup (KEP-5729, DRAWorkloadResourceClaims):
upstream's pod-group cases of dynamicresources_test.go (TestPlugin: ``podgroup-*``,
``bind-podgroup-failure``, ``postfilter-*-podgroup*``, ``reserved-okay-podgroup``) and of
resourceclaim_test.go (IsForPod, IsReservedForPod, BindTo), transcribed over an in-memory
cluster whose listers show the store at once; then the sharing of a pending allocation by the
members of one pod-group cycle."""

from __future__ import annotations

import asyncio
import copy
import inspect
from types import SimpleNamespace
from typing import Any

import pytest

from kubesched.cluster.memory import InMemoryCluster
from kubesched.cluster.store import Store
from kubesched.framework.features import FeatureGates
from kubesched.framework.interface import CycleState
from kubesched.framework.podgroup import PodGroupInfo, PodGroupState
from kubesched.framework.status import Status
from kubesched.plugins.dynamicresources.dynamic_resources import (
    ClaimProblem,
    DynamicResources,
    bind_to,
    reserved_for_pod,
)
from kubesched.testing.harness import as_node_infos, as_pod_info

Obj = dict[str, Any]
ON = FeatureGates().replace(GenericWorkload=True, DRAWorkloadResourceClaims=True)
OFF = FeatureGates().replace(GenericWorkload=True)
POD, POD_UID = "my-pod", "1234"
GROUP, GROUP_UID = "my-podgroup", "5678"
CLAIM, CLAIM2 = "my-pod-my-resource", "my-pod-my-resource-2"
CLASS, DRIVER = "my-resource-class", "some-driver"
FINALIZER = "resource.kubernetes.io/delete-protection"
GROUP_REF = {"apiGroup": "scheduling.k8s.io", "resource": "podgroups", "name": GROUP, "uid": GROUP_UID}
POD_REF = {"resource": "pods", "name": POD, "uid": POD_UID}


class StoreListers:
    def __init__(self, store: Store) -> None:
        self.store = store

    def get(self, kind: str, namespace: str | None, name: str) -> Obj | None:
        return next((o for o in self.list(kind, namespace) if o["metadata"]["name"] == name), None)

    def list(self, kind: str, namespace: str | None = None) -> list[Obj]:
        return list(self.store.list(kind, namespace)[0])

    def namespace_labels(self, namespace: str) -> dict[str, str]:
        return {}


class Groups:
    """``handle.pod_groups``: the group's members placed already, by UID."""

    def __init__(self, scheduled: tuple[str, ...] = ()) -> None:
        self.scheduled = scheduled

    def get(self, namespace: str, name: str) -> Obj | None:
        return None

    def state(self, namespace: str, name: str) -> PodGroupState:
        return PodGroupState(scheduled={uid: as_pod_info(grouped_pod(f"p-{uid}", uid)) for uid in self.scheduled})


def grouped_pod(name: str = POD, uid: str = POD_UID, claims: list[Obj] | None = None, group: str = GROUP) -> Obj:
    spec: Obj = {
        "containers": [{"name": "c", "image": "pause"}],
        "resourceClaims": claims if claims is not None else [{"name": "my-resource", "resourceClaimName": CLAIM}],
    }
    if group:
        spec["schedulingGroup"] = {"podGroupName": group}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "uid": uid},
        "spec": spec,
    }


def template_pod(name: str = POD, uid: str = POD_UID) -> Obj:
    """groupedPodWithClaimTemplateInStatus: the entry names a template, the status the claim."""
    p = grouped_pod(name, uid, [{"name": "my-resource", "resourceClaimTemplateName": CLAIM}])
    p["status"] = {"resourceClaimStatuses": [{"name": "my-resource", "resourceClaimName": CLAIM}]}
    return p


def pod_group(template: bool = False) -> Obj:
    source = {"resourceClaimTemplateName": CLAIM} if template else {"resourceClaimName": CLAIM}
    return {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": GROUP, "namespace": "default", "uid": GROUP_UID},
        "spec": {"schedulingPolicy": {"gang": {"minCount": 1}}, "resourceClaims": [{"name": "my-resource", **source}]},
    }


def node(name: str = "worker") -> Obj:
    alloc = {"cpu": "4", "memory": "4Gi", "pods": "10"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {"allocatable": alloc, "capacity": alloc},
    }


def device_class() -> Obj:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": CLASS}, "spec": {}}


def slice_of(node_name: str = "worker") -> Obj:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node_name}-{DRIVER}"},
        "spec": {
            "driver": DRIVER,
            "nodeName": node_name,
            "pool": {"name": node_name, "generation": 1, "resourceSliceCount": 1},
            "devices": [{"name": "instance-1"}],
        },
    }


def on_node(name: str) -> Obj:
    return {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [name]}]}]}


ALLOCATION = {
    "devices": {"results": [{"request": "req-1", "driver": DRIVER, "pool": "worker", "device": "instance-1"}]},
    "nodeSelector": on_node("worker"),
}
WRONG_TOPOLOGY = {
    "nodeSelector": {
        "nodeSelectorTerms": [
            {"matchExpressions": [{"key": "no-such-label", "operator": "In", "values": ["no-such-value"]}]}
        ]
    }
}


def claim(
    name: str = CLAIM,
    owner: str = "PodGroup",
    allocation: Obj | None = None,
    reserved: list[Obj] | None = None,
) -> Obj:
    """pendingPodGroupClaim (owned by the PodGroup), or allocated, or reserved too."""
    ref = (
        {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "name": GROUP, "uid": GROUP_UID}
        if owner == "PodGroup"
        else {"apiVersion": "v1", "kind": "Pod", "name": POD, "uid": POD_UID}
    )
    meta: Obj = {"name": name, "namespace": "default", "ownerReferences": [{**ref, "controller": True}]}
    status: Obj = {}
    if allocation is not None:
        meta["finalizers"] = [FINALIZER]
        status["allocation"] = copy.deepcopy(allocation)
    if reserved is not None:
        status["reservedFor"] = reserved
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": meta,
        "spec": {"devices": {"requests": [{"name": "req-1", "exactly": {"deviceClassName": CLASS}}]}},
        "status": status,
    }


def awaited(result: Any) -> Any:
    return asyncio.run(result) if inspect.isawaitable(result) else result


def status_of(s: Status | None) -> tuple[str, str] | None:
    return None if s is None else (s.code.name, "; ".join(s.reasons))


class Cluster:
    """Objects in a store, DynamicResources over them, its points run for a pod."""

    def __init__(self, objects: list[Obj], gates: FeatureGates = ON, scheduled: tuple[str, ...] = ()) -> None:
        self.store = Store()
        for o in objects:
            self.store.create(o["kind"], copy.deepcopy(o))
        handle = SimpleNamespace(
            listers=StoreListers(self.store),
            cluster=InMemoryCluster(self.store),
            feature_gates=gates,
            profile_name="default-scheduler",
            pod_groups=Groups(scheduled),
        )
        self.plugin = DynamicResources(None, handle)
        self.nodes = as_node_infos([n for n in objects if n["kind"] == "Node"] or [node()])

    def claim(self, name: str = CLAIM) -> Obj:
        return self.store.get("ResourceClaim", "default", name)

    def run(self, name: str = POD, cycle: PodGroupInfo | None = None, prebind: bool = True) -> dict[str, Any]:
        """PreEnqueue, PreFilter, Filter on each node, then PostFilter (no node) or Reserve on the
        first node that passed and PreBind; what each said."""
        p = as_pod_info(self.store.get("Pod", "default", name))
        state = CycleState()
        state.pod_group = cycle
        said: dict[str, Any] = {"state": state, "pod": p}
        said["preEnqueue"] = status_of(self.plugin.pre_enqueue(p))
        if said["preEnqueue"] is not None:
            return said
        said["preFilter"] = status_of(self.plugin.pre_filter(state, p))
        passed = []
        if said["preFilter"] is None:
            for n in self.nodes:
                said[f"filter/{n.name}"] = status_of(self.plugin.filter(state, p, n))
                if said[f"filter/{n.name}"] is None:
                    passed.append(n.name)
        if not passed:
            _, post = awaited(self.plugin.post_filter(state, p, {}))
            said["postFilter"] = status_of(post)
            return said
        said["node"] = passed[0]
        said["reserve"] = status_of(self.plugin.reserve(state, p, passed[0]))
        if prebind:
            said["preBind"] = status_of(awaited(self.plugin.pre_bind(state, p, passed[0])))
        return said

    def unreserve(self, said: dict[str, Any]) -> None:
        awaited(self.plugin.unreserve(said["state"], said["pod"], said["node"]))


# --- TestPlugin's pod-group cases -------------------------------------------------------------


@pytest.mark.parametrize(
    ("gates", "reserved"),
    [(OFF, [POD_REF]), (ON, [GROUP_REF])],
    ids=["podgroup-claim-reference-feature-disabled-reserves-for-pod", "podgroup-claim-reference"],
)
def test_podgroup_claim_reference(gates: FeatureGates, reserved: list[Obj]) -> None:
    c = Cluster([grouped_pod(), pod_group(), claim(allocation=ALLOCATION)], gates)
    said = c.run()
    assert said["preBind"] is None
    assert c.claim()["status"]["reservedFor"] == reserved


def test_podgroup_claim_template() -> None:
    """The member's status names the group's claim; the PodGroup owns it, which the owner check
    accepts with the gate on."""
    c = Cluster([template_pod(), pod_group(template=True), claim(allocation=ALLOCATION)])
    said = c.run()
    assert said["preBind"] is None
    assert c.claim()["status"]["reservedFor"] == [GROUP_REF]


def test_a_group_owned_claim_from_a_template_is_refused_with_the_gate_off() -> None:
    c = Cluster([template_pod(), pod_group(template=True), claim(allocation=ALLOCATION)], OFF)
    assert c.run()["preEnqueue"] == (
        "UNSCHEDULABLE_AND_UNRESOLVABLE",
        "ResourceClaim default/my-pod-my-resource was not created for pod default/my-pod (pod is not owner)",
    )


def test_a_claim_of_another_group_is_refused() -> None:
    """IsForPod's ``other-podgroup``: neither the pod nor its group controls the claim."""
    other = template_pod()
    other["spec"]["schedulingGroup"] = {"podGroupName": "other-group"}
    c = Cluster([other, pod_group(template=True), claim(allocation=ALLOCATION)])
    assert c.run()["preEnqueue"] == (
        "UNSCHEDULABLE_AND_UNRESOLVABLE",
        "ResourceClaim default/my-pod-my-resource was not created for Pod default/my-pod "
        "(neither Pod nor PodGroup other-group is the owner)",
    )


@pytest.mark.parametrize(
    ("gates", "reserved"),
    [(ON, [GROUP_REF]), (OFF, [POD_REF])],
    ids=["podgroup-with-resources", "podgroup-with-resources-feature-disabled-reserves-for-pod"],
)
def test_podgroup_with_resources(gates: FeatureGates, reserved: list[Obj]) -> None:
    c = Cluster([grouped_pod(), pod_group(), claim(), device_class(), slice_of()], gates)
    said = c.run(prebind=False)
    assert said["reserve"] is None
    assert list(c.plugin._in_flight) == [c.claim()["metadata"]["uid"]]
    assert status_of(awaited(c.plugin.pre_bind(said["state"], said["pod"], "worker"))) is None
    written = c.claim()
    assert written["metadata"]["finalizers"] == [FINALIZER]
    assert written["status"]["allocation"]["devices"] == ALLOCATION["devices"]
    assert written["status"]["reservedFor"] == reserved
    assert c.plugin._in_flight == {}


def test_bind_podgroup_failure_keeps_the_group_reservation() -> None:
    """Unreserve after a failed binding takes the pod's own reservation off, never the group's:
    other members rely on it."""
    c = Cluster([grouped_pod(), pod_group(), claim(allocation=ALLOCATION)])
    said = c.run()
    assert c.claim()["status"]["reservedFor"] == [GROUP_REF]
    c.unreserve(said)
    assert c.claim()["status"]["reservedFor"] == [GROUP_REF]


def test_postfilter_unreserve_podgroup() -> None:
    c = Cluster([grouped_pod(), pod_group(), device_class(), claim(allocation=WRONG_TOPOLOGY, reserved=[GROUP_REF])])
    said = c.run()
    assert said["filter/worker"] == ("UNSCHEDULABLE_AND_UNRESOLVABLE", "resourceclaim not available on the node")
    assert said["postFilter"] == ("UNSCHEDULABLE", "ResourceClaim unreserved for PodGroup")
    status = c.claim()["status"]
    assert "reservedFor" not in status and status["allocation"] == WRONG_TOPOLOGY


def test_postfilter_skip_unreserve_podgroup_feature_disabled() -> None:
    c = Cluster(
        [grouped_pod(), pod_group(), device_class(), claim(allocation=WRONG_TOPOLOGY, reserved=[GROUP_REF])], OFF
    )
    said = c.run()
    assert said["postFilter"] == ("UNSCHEDULABLE", "still not schedulable")
    assert c.claim()["status"]["reservedFor"] == [GROUP_REF]


def test_postfilter_deallocate_podgroup() -> None:
    c = Cluster([grouped_pod(), pod_group(), device_class(), claim(allocation=WRONG_TOPOLOGY)])
    said = c.run()
    assert said["postFilter"] == ("UNSCHEDULABLE", "deallocation of ResourceClaim completed")
    assert "allocation" not in c.claim()["status"]


def test_postfilter_skip_unreserve_podgroup_when_pods_active() -> None:
    """Another member is placed and still needs the group's claim."""
    c = Cluster(
        [grouped_pod(), pod_group(), device_class(), claim(allocation=WRONG_TOPOLOGY, reserved=[GROUP_REF])],
        scheduled=("other-member",),
    )
    assert c.run()["postFilter"] == ("UNSCHEDULABLE", "still not schedulable")
    assert c.claim()["status"]["reservedFor"] == [GROUP_REF]


def test_postfilter_skip_unreserve_podgroup_other_claim_deallocated() -> None:
    """The pod's own claim that is not available is deallocated first."""
    two = grouped_pod(
        claims=[
            {"name": "my-resource", "resourceClaimName": CLAIM},
            {"name": "my-resource-2", "resourceClaimName": CLAIM2},
        ]
    )
    c = Cluster(
        [
            two,
            pod_group(),
            device_class(),
            claim(allocation=WRONG_TOPOLOGY, reserved=[GROUP_REF]),
            claim(CLAIM2, owner="Pod", allocation=WRONG_TOPOLOGY),
        ]
    )
    assert c.run()["postFilter"] == ("UNSCHEDULABLE", "deallocation of ResourceClaim completed")
    assert "allocation" not in c.claim(CLAIM2)["status"]
    assert c.claim()["status"]["reservedFor"] == [GROUP_REF]


def test_reserved_okay_podgroup() -> None:
    """A claim reserved for the member's group is reserved for the member: nothing to write."""
    c = Cluster([grouped_pod(), pod_group(), claim(allocation=ALLOCATION, reserved=[GROUP_REF])])
    before = c.claim()
    said = c.run()
    assert said["preBind"] is None
    assert c.claim() == before


def test_a_group_reservation_counts_past_the_reservation_limit() -> None:
    """256 reservations: full for anyone else, not for a member of the group among them."""
    others = [{"resource": "pods", "name": f"p{i}", "uid": f"u{i}"} for i in range(255)]
    objects = [pod_group(), claim(allocation=ALLOCATION, reserved=[*others, GROUP_REF])]
    member = Cluster([grouped_pod(), *objects])
    assert member.run()["preBind"] is None
    outsider = Cluster([grouped_pod(group=""), *objects])
    assert outsider.run()["preFilter"] == ("UNSCHEDULABLE_AND_UNRESOLVABLE", "resourceclaim in use")


def test_a_member_whose_group_does_not_exist_waits() -> None:
    c = Cluster([grouped_pod(), claim(allocation=ALLOCATION)])
    assert c.run()["preFilter"] == (
        "UNSCHEDULABLE_AND_UNRESOLVABLE",
        'podgroups.scheduling.k8s.io "my-podgroup" not found',
    )


# --- resourceclaim_test.go: IsReservedForPod, BindTo ------------------------------------------


@pytest.mark.parametrize(
    ("pod", "reserved", "accept", "want"),
    [
        (grouped_pod(group=""), [], False, False),
        (grouped_pod(group=""), [POD_REF], False, True),
        (grouped_pod(uid="other", group=""), [POD_REF], False, False),
        (grouped_pod(uid="other"), [GROUP_REF], True, True),
        (grouped_pod(uid="other"), [GROUP_REF], False, False),
        (grouped_pod(), [{"uid": POD_UID}, {"uid": GROUP_UID}], True, True),
        (grouped_pod(uid="other", group="not-reserved"), [POD_REF], True, False),
        (grouped_pod(uid="other"), [{**GROUP_REF, "name": "x", "uid": "x"}, GROUP_REF], True, True),
        (grouped_pod(uid="other", group="not-reserved"), [GROUP_REF], True, False),
    ],
    ids=[
        "not-reserved",
        "reserved-for-pod",
        "reserved-for-other-pod",
        "reserved-for-podgroup",
        "podgroup-disabled",
        "reserved-for-pod-and-podgroup",
        "reserved-for-other-podgroup",
        "multiple-reservations-including-podgroup",
        "multiple-reservations-excluding-podgroup",
    ],
)
def test_is_reserved_for_pod(pod: Obj, reserved: list[Obj], accept: bool, want: bool) -> None:
    assert reserved_for_pod(pod, {"status": {"reservedFor": reserved}}, accept) is want


def group_with(*claims: Obj, namespace: str = "default", name: str = GROUP) -> Obj:
    return {
        "metadata": {"name": name, "namespace": namespace, "uid": GROUP_UID},
        "spec": {"resourceClaims": list(claims)},
    }


@pytest.mark.parametrize(
    ("group", "pod_claim", "want"),
    [
        (None, {"name": "c", "resourceClaimName": "rc"}, POD_REF),
        (None, {"name": "c", "resourceClaimTemplateName": "rc"}, POD_REF),
        (group_with({"name": "c", "resourceClaimName": "rc"}), {"name": "c", "resourceClaimName": "rc"}, GROUP_REF),
        (
            group_with({"name": "c", "resourceClaimTemplateName": "rc"}),
            {"name": "c", "resourceClaimTemplateName": "rc"},
            GROUP_REF,
        ),
        (
            group_with({"name": "not-c", "resourceClaimName": "rc"}, {"name": "c", "resourceClaimName": "rc"}),
            {"name": "c", "resourceClaimName": "rc"},
            GROUP_REF,
        ),
        (group_with({"name": "not-c", "resourceClaimName": "rc"}), {"name": "c", "resourceClaimName": "rc"}, POD_REF),
        (group_with({"name": "c", "resourceClaimName": "not-rc"}), {"name": "c", "resourceClaimName": "rc"}, POD_REF),
        (
            group_with({"name": "c", "resourceClaimTemplateName": "not-rc"}),
            {"name": "c", "resourceClaimTemplateName": "rc"},
            POD_REF,
        ),
    ],
    ids=[
        "Pod claim with ResourceClaimName",
        "Pod claim with ResourceClaimTemplateName",
        "Pod claim with ResourceClaimName matching PodGroup",
        "Pod claim with ResourceClaimTemplateName matching PodGroup",
        "Find matching claim in PodGroup",
        "Claim name mismatch",
        "Claim resourceClaimName mismatch",
        "Claim resourceClaimTemplateName mismatch",
    ],
)
def test_bind_to(group: Obj | None, pod_claim: Obj, want: Obj) -> None:
    assert bind_to(grouped_pod(), group, pod_claim) == want


@pytest.mark.parametrize(
    ("group", "pod_claim", "message"),
    [
        (None, {"name": "c"}, "Pod default/my-pod claim c: none of the supported fields are set"),
        (
            group_with(namespace="not-default"),
            {"name": "c", "resourceClaimName": "rc"},
            "Pod default/my-pod belongs to PodGroup default/my-podgroup, not PodGroup not-default/my-podgroup",
        ),
        (
            group_with(name="not-my-podgroup"),
            {"name": "c", "resourceClaimName": "rc"},
            "Pod default/my-pod belongs to PodGroup default/my-podgroup, not PodGroup default/not-my-podgroup",
        ),
    ],
    ids=["unsupported API in Pod", "Wrong PodGroup namespace for Pod", "Wrong PodGroup name for Pod"],
)
def test_bind_to_refuses(group: Obj | None, pod_claim: Obj, message: str) -> None:
    with pytest.raises(ClaimProblem, match=message):
        bind_to(grouped_pod(), group, pod_claim)


# --- one pod-group cycle: members share the allocation the first one made ----------------------


def members(n: int) -> list[Obj]:
    return [grouped_pod(f"w{i}", f"uid-w{i}") for i in range(n)]


def two_nodes() -> list[Obj]:
    return [node("worker"), node("worker-2"), slice_of("worker"), slice_of("worker-2"), device_class()]


def test_members_of_one_cycle_share_the_pending_allocation_where_it_allows() -> None:
    """The first member allocates the group's claim in Reserve; the next one, before any
    PreBind, uses that allocation and passes only the node it allows; PreBind writes the
    allocation and the group's reservation once."""
    c = Cluster([*members(2), pod_group(), claim(), *two_nodes()])
    cycle = PodGroupInfo("default", GROUP, pod_group())
    first = c.run("w0", cycle, prebind=False)
    assert first["reserve"] is None
    chosen = first["node"]
    other = "worker-2" if chosen == "worker" else "worker"
    second = c.run("w1", cycle, prebind=False)
    assert second["preFilter"] is None
    assert second[f"filter/{other}"] == ("UNSCHEDULABLE_AND_UNRESOLVABLE", "resourceclaim not available on the node")
    assert second[f"filter/{chosen}"] is None and second["node"] == chosen
    uid = c.claim()["metadata"]["uid"]
    assert c.plugin._sharers == {uid: 2}
    for said in (first, second):
        assert status_of(awaited(c.plugin.pre_bind(said["state"], said["pod"], chosen))) is None
    written = c.claim()
    assert written["status"]["reservedFor"] == [GROUP_REF]
    assert written["status"]["allocation"]["nodeSelector"] == on_node(chosen)
    assert c.plugin._in_flight == {} and c.plugin._sharers == {}


def test_a_pod_outside_the_cycle_waits_for_the_pending_allocation() -> None:
    c = Cluster([*members(2), pod_group(), claim(), *two_nodes()])
    c.run("w0", PodGroupInfo("default", GROUP, pod_group()), prebind=False)
    for cycle in (None, PodGroupInfo("default", GROUP, pod_group())):
        said = c.run("w1", cycle, prebind=False)
        assert said["preFilter"] == (
            "UNSCHEDULABLE_AND_UNRESOLVABLE",
            "resource claim default/my-pod-my-resource is in the process of being allocated",
        )


def test_the_pending_allocation_lasts_until_its_last_sharer_unreserves() -> None:
    c = Cluster([*members(2), pod_group(), claim(), *two_nodes()])
    cycle = PodGroupInfo("default", GROUP, pod_group())
    first = c.run("w0", cycle, prebind=False)
    second = c.run("w1", cycle, prebind=False)
    uid = c.claim()["metadata"]["uid"]
    c.unreserve(second)
    assert list(c.plugin._in_flight) == [uid] and c.plugin._sharers == {uid: 1}
    c.unreserve(first)
    assert c.plugin._in_flight == {} and c.plugin._sharers == {}
    assert "allocation" not in c.claim()["status"]
    # Unreserve twice gives nothing back twice.
    c.unreserve(first)
    assert c.plugin._sharers == {}
