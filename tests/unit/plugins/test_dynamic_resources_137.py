"""DynamicResources as kube-scheduler 1.37: upstream's plugin test cases for extended resources
backed by DRA, binding conditions and the args' timeouts (dynamicresources_test.go,
extendeddynamicresources_test.go), transcribed to the resource.k8s.io/v1 objects over an
in-memory cluster whose listers always show the store's current objects (as an informer that
is never late); messages are upstream's."""

from __future__ import annotations

import asyncio
import copy
import inspect
import time
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import Any

import pytest

from kubesched.cluster.memory import InMemoryCluster
from kubesched.cluster.store import Store
from kubesched.framework.features import FeatureGates
from kubesched.framework.interface import CycleState
from kubesched.framework.status import Status
from kubesched.plugins.dynamicresources.device_taints import TaintedSlices, apply_rules
from kubesched.plugins.dynamicresources.dynamic_resources import (
    STATE_KEY,
    DynamicResources,
    DynamicResourcesArgs,
)
from kubesched.plugins.dynamicresources.extended_resources import (
    EXTENDED_RESOURCE_CLAIM_ANNOTATION,
    device_class_mapping,
    requests_and_mappings,
)
from kubesched.plugins.noderesources.fit import NodeResourcesFit
from kubesched.server.metrics import PrometheusObserver
from kubesched.testing.harness import as_node_infos, as_pod_info

Obj = dict[str, Any]
POD_UID = "1234"
CLAIM = "my-pod-my-resource"
CLAIM2 = "my-pod-my-resource-2"
CLASS = "my-resource-class"
DRIVER = "some-driver"
DRIVER2 = "some-driver-2"
GPU = "example.com/gpu"
GPU2 = "example.com/gpu2"
IMPLICIT = f"deviceclass.resource.kubernetes.io/{CLASS}"


class StoreListers:
    """The handle's listers over the store itself: every write is seen at once."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def get(self, kind: str, namespace: str | None, name: str) -> Obj | None:
        for o in self.list(kind, namespace):
            if o["metadata"]["name"] == name:
                return o
        return None

    def list(self, kind: str, namespace: str | None = None) -> list[Obj]:
        return list(self.store.list(kind, namespace)[0])

    def namespace_labels(self, namespace: str) -> dict[str, str]:
        return {}


def pod(requests: list[dict[str, str]] | None = None, claims: list[str] = (), init: list[Obj] = ()) -> Obj:  # type: ignore[assignment]
    containers = [
        {"name": f"c{i}", "image": "pause", "resources": {"requests": r}} for i, r in enumerate(requests or [{}])
    ]
    spec: Obj = {"containers": containers}
    if init:
        spec["initContainers"] = list(init)
    if claims:
        spec["resourceClaims"] = [
            {"name": f"my-resource{'' if i == 0 else '-2'}", "resourceClaimName": c} for i, c in enumerate(claims)
        ]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "my-pod", "namespace": "default", "uid": POD_UID},
        "spec": spec,
    }


def device_class(name: str = CLASS, extended: str | None = None, created: str = "2026-01-01T00:00:00Z") -> Obj:
    spec: Obj = {"extendedResourceName": extended} if extended else {}
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": name, "creationTimestamp": created},
        "spec": spec,
    }


def slice_of(*devices: str, node: str = "worker", driver: str = DRIVER, **extra: Any) -> Obj:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node}-{driver}"},
        "spec": {
            "driver": driver,
            "nodeName": node,
            "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
            "devices": [{"name": d, **extra} for d in devices],
        },
    }


def node(name: str = "worker", gpus: str | None = None) -> Obj:
    alloc = {"cpu": "4", "memory": "4Gi", "pods": "10", **({GPU: gpus} if gpus is not None else {})}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {"allocatable": alloc, "capacity": alloc},
    }


BINDING_CONDITIONS = ["condition"]
FAILURE_CONDITIONS = ["failed"]


def allocated_claim(
    name: str = CLAIM,
    driver: str = DRIVER,
    device: str = "instance-1",
    request: str = "req-1",
    binding: bool = False,
    conditions: list[tuple[str, str]] | None = None,
    allocated_at: datetime | None = None,
) -> Obj:
    result: Obj = {"request": request, "driver": driver, "pool": "worker", "device": device}
    if binding:
        result["bindingConditions"] = list(BINDING_CONDITIONS)
        result["bindingFailureConditions"] = list(FAILURE_CONDITIONS)
    allocation: Obj = {
        "devices": {"results": [result]},
        "nodeSelector": {
            "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["worker"]}]}]
        },
    }
    if allocated_at is not None:
        allocation["allocationTimestamp"] = allocated_at.strftime("%Y-%m-%dT%H:%M:%SZ")
    status: Obj = {"allocation": allocation}
    if conditions is not None:
        status["devices"] = [
            {
                "driver": driver,
                "pool": "worker",
                "device": device,
                "conditions": [
                    {"type": t, "status": s, "reason": "Test", "message": f"{t} is {s}"} for t, s in conditions
                ],
            }
        ]
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {
            "name": name,
            "namespace": "default",
            "finalizers": ["resource.kubernetes.io/delete-protection"],
            "ownerReferences": [
                {"apiVersion": "v1", "kind": "Pod", "name": "my-pod", "uid": POD_UID, "controller": True}
            ],
        },
        "spec": {"devices": {"requests": [{"name": request, "exactly": {"deviceClassName": CLASS}}]}},
        "status": status,
    }


BOUND = allocated_claim(binding=True, conditions=[("condition", "True"), ("failed", "False")])
BOUND2 = allocated_claim(
    CLAIM2, DRIVER2, "instance-2", "req-2", binding=True, conditions=[("condition", "True"), ("failed", "False")]
)
FAILED = allocated_claim(binding=True, conditions=[("condition", "False"), ("failed", "True")])
FAILED2 = allocated_claim(
    CLAIM2, DRIVER2, "instance-2", "req-2", binding=True, conditions=[("condition", "False"), ("failed", "True")]
)


class Run:
    """PreEnqueue, PreFilter, Filter on each node, then PostFilter (when no node passed) or
    Reserve, optionally Unreserve before PreBind, PreBind, and optionally Unreserve after it, as
    upstream's testPlugin drives the plugin."""

    def __init__(
        self,
        p: Obj,
        objects: list[Obj],
        nodes: list[Obj] | None = None,
        args: DynamicResourcesArgs | None = None,
        gates: FeatureGates | None = None,
        cluster: InMemoryCluster | None = None,
    ) -> None:
        self.store = Store()
        for o in [p, *objects]:
            self.store.create(o["kind"], copy.deepcopy(o))
        self.cluster = cluster or InMemoryCluster(self.store)
        self.cluster.store = self.store
        handle = SimpleNamespace(
            listers=StoreListers(self.store),
            cluster=self.cluster,
            feature_gates=gates or FeatureGates(),
            profile_name="default-scheduler",
            observer=PrometheusObserver(),
        )
        self.observer: PrometheusObserver = handle.observer
        self.plugin = DynamicResources(args, handle)
        self.plugin.binding_poll = 0.05
        self.nodes = as_node_infos(nodes or [node()])
        self.pod = as_pod_info(self.store.get("Pod", "default", "my-pod"))
        self.state = CycleState()
        self.said: dict[str, Any] = {}

    def go(self, unreserve_before_prebind: bool = False, unreserve_after_prebind: bool = False) -> Run:
        said = self.said
        said["preEnqueue"] = self.plugin.pre_enqueue(self.pod)
        if said["preEnqueue"] is not None:
            return self
        said["preFilter"] = self.plugin.pre_filter(self.state, self.pod)
        passed = []
        if said["preFilter"] is None:
            for n in self.nodes:
                status = self.plugin.filter(self.state, self.pod, n)
                said[f"filter/{n.name}"] = status
                if status is None:
                    passed.append(n.name)
                elif status.code.name == "ERROR":
                    return self
        if not passed:
            _, said["postFilter"] = awaited(self.plugin.post_filter(self.state, self.pod, {}))
            said["preBindPreFlight"] = self.plugin.pre_bind_pre_flight(self.state, self.pod, "worker")
            return self
        chosen = passed[0]
        said["reserve"] = self.plugin.reserve(self.state, self.pod, chosen)
        said["inFlight"] = [copy.deepcopy(c) for c in self.plugin._in_flight.values()]
        if unreserve_before_prebind:
            awaited(self.plugin.unreserve(self.state, self.pod, chosen))
            return self
        said["preBindPreFlight"] = self.plugin.pre_bind_pre_flight(self.state, self.pod, chosen)
        said["preBind"] = awaited(self.plugin.pre_bind(self.state, self.pod, chosen))
        if unreserve_after_prebind:
            awaited(self.plugin.unreserve(self.state, self.pod, chosen))
        return self

    def status(self, point: str) -> tuple[str, str] | None:
        s: Status | None = self.said.get(point)
        return None if s is None else (s.code.name, "; ".join(s.reasons))

    def claims(self) -> dict[str, Obj]:
        return {c["metadata"]["name"]: c for c in self.store.list("ResourceClaim", "default")[0]}

    def extended_claims(self) -> list[Obj]:
        return [
            c
            for c in self.claims().values()
            if (c["metadata"].get("annotations") or {}).get(EXTENDED_RESOURCE_CLAIM_ANNOTATION) == "true"
        ]


def awaited(result: Any) -> Any:
    return asyncio.run(result) if inspect.isawaitable(result) else result


def results(claim: Obj) -> list[tuple[str, str]]:
    return [(r["request"], r["device"]) for r in claim["status"]["allocation"]["devices"]["results"]]


RESERVED = [{"resource": "pods", "name": "my-pod", "uid": POD_UID}]


# --- extended resources backed by DRA ---------------------------------------------------------


def test_empty_with_extended_resources_enabled() -> None:
    r = Run(pod(), []).go()
    assert r.status("preFilter") == ("SKIP", "")
    assert r.status("postFilter") == ("UNSCHEDULABLE", "")
    assert r.status("preBindPreFlight") == ("SKIP", "")


def test_extended_resource_name_with_node_resource() -> None:
    """The node's device plugin has it: nothing for DRA to do, no claim."""
    r = Run(pod([{GPU: "1"}]), [device_class(extended=GPU)], nodes=[node(gpus="1")]).go()
    assert [r.status(p) for p in ("preFilter", "filter/worker", "reserve", "preBind")] == [None] * 4
    assert r.claims() == {}
    assert "extendedResourceClaimStatus" not in (r.store.get("Pod", "default", "my-pod").get("status") or {})


def test_extended_resource_one_device_plugin_one_dra() -> None:
    """example.com/gpu from the node's device plugin, example.com/gpu2 from DRA: the claim asks
    only for the second (the container's second request in name order)."""
    r = Run(
        pod([{GPU: "1", GPU2: "1"}]),
        [device_class(extended=GPU), device_class(f"{CLASS}2", extended=GPU2), slice_of("instance-1")],
        nodes=[node(gpus="1")],
    ).go()
    assert r.status("preBind") is None
    (claim,) = r.extended_claims()
    assert claim["spec"]["devices"]["requests"] == [
        {
            "name": "container-0-request-1",
            "exactly": {"deviceClassName": f"{CLASS}2", "allocationMode": "ExactCount", "count": 1},
        }
    ]
    assert results(claim) == [("container-0-request-1", "instance-1")]
    assert claim["status"]["reservedFor"] == RESERVED


def test_extended_resource_name_with_zero_allocatable() -> None:
    r = Run(pod([{GPU: "1"}]), [device_class(extended=GPU), slice_of("instance-1")], nodes=[node(gpus="0")]).go()
    assert r.status("preBind") is None
    (claim,) = r.extended_claims()
    assert results(claim) == [("container-0-request-0", "instance-1")]


def test_non_dra_extended_resource_name_with_zero_allocatable() -> None:
    """No class stands for example.com/gpu (only for its implicit name): not DRA's."""
    r = Run(pod([{GPU: "1"}]), [device_class(), slice_of("instance-1")], nodes=[node(gpus="0")]).go()
    assert r.status("preFilter") == ("SKIP", "")
    assert r.status("preBindPreFlight") == ("SKIP", "")


def test_extended_resource_name_no_resource() -> None:
    r = Run(pod([{GPU: "1"}]), [device_class(extended=GPU)]).go()
    assert r.status("filter/worker") == ("UNSCHEDULABLE_AND_UNRESOLVABLE", "cannot allocate all claims")
    assert r.status("postFilter") == ("UNSCHEDULABLE", "still not schedulable")
    assert r.claims() == {}


def test_extended_resource_name_with_resources() -> None:
    """PreBind creates the claim (generateName, annotation, owned by the pod), allocates and
    reserves it, and writes the pod's status.extendedResourceClaimStatus."""
    r = Run(pod([{GPU: "1"}]), [device_class(extended=GPU), slice_of("instance-1")]).go()
    assert r.status("reserve") is None
    (held,) = r.said["inFlight"]
    assert held["metadata"]["name"] == "<extended-resources>"
    assert results(held) == [("container-0-request-0", "instance-1")]
    assert r.status("preBindPreFlight") is None
    assert r.status("preBind") is None
    (claim,) = r.extended_claims()
    meta = claim["metadata"]
    assert (
        meta["name"].startswith("my-pod-extended-resources-") and meta["generateName"] == "my-pod-extended-resources-"
    )
    assert meta["ownerReferences"] == [
        {"apiVersion": "v1", "kind": "Pod", "name": "my-pod", "uid": POD_UID, "controller": True}
    ]
    assert meta["finalizers"] == ["resource.kubernetes.io/delete-protection"]
    assert results(claim) == [("container-0-request-0", "instance-1")]
    assert claim["status"]["reservedFor"] == RESERVED
    assert r.plugin._in_flight == {}
    status = r.store.get("Pod", "default", "my-pod")["status"]["extendedResourceClaimStatus"]
    assert status == {
        "resourceClaimName": meta["name"],
        "requestMappings": [{"containerName": "c0", "resourceName": GPU, "requestName": "container-0-request-0"}],
    }
    assert created(r, "success") == 1 and created(r, "failure") is None


def test_implicit_extended_resource_name_with_resources() -> None:
    """Both names of one class in one container: one request each, in name order."""
    r = Run(
        pod([{IMPLICIT: "1", GPU: "2"}]),
        [device_class(extended=GPU), slice_of("instance-1", "instance-2", "instance-3", "instance-4")],
    ).go()
    (claim,) = r.extended_claims()
    assert results(claim) == [
        ("container-0-request-0", "instance-1"),
        ("container-0-request-1", "instance-2"),
        ("container-0-request-1", "instance-3"),
    ]


def test_implicit_extended_resource_name_two_containers_with_resources() -> None:
    r = Run(
        pod([{IMPLICIT: "1"}, {GPU: "2"}]),
        [device_class(extended=GPU), slice_of("instance-1", "instance-2", "instance-3", "instance-4")],
    ).go()
    (claim,) = r.extended_claims()
    assert results(claim) == [
        ("container-0-request-0", "instance-1"),
        ("container-1-request-0", "instance-2"),
        ("container-1-request-0", "instance-3"),
    ]
    mappings = r.store.get("Pod", "default", "my-pod")["status"]["extendedResourceClaimStatus"]["requestMappings"]
    assert mappings == [
        {"containerName": "c0", "resourceName": IMPLICIT, "requestName": "container-0-request-0"},
        {"containerName": "c1", "resourceName": GPU, "requestName": "container-1-request-0"},
    ]


def stale_extended_claim(node_name: str = "worker") -> Obj:
    c = allocated_claim("my-pod-extended-resources-abcde", request="container-0-request-0")
    c["metadata"]["annotations"] = {EXTENDED_RESOURCE_CLAIM_ANNOTATION: "true"}
    c["spec"]["devices"]["requests"][0]["exactly"]["count"] = 1
    c["status"]["allocation"]["nodeSelector"]["nodeSelectorTerms"][0]["matchFields"][0]["values"] = [node_name]
    return c


@pytest.mark.parametrize("node_name", ["worker", "worker-2"], ids=["has-claim", "delete-claim"])
def test_extended_resource_claim_from_an_earlier_attempt_is_deleted(node_name: str) -> None:
    r = Run(pod([{GPU: "1"}]), [device_class(extended=GPU), slice_of("instance-1"), stale_extended_claim(node_name)])
    r.go()
    assert r.status("filter/worker") == ("UNSCHEDULABLE_AND_UNRESOLVABLE", "cannot schedule extended resource claim")
    assert r.status("postFilter") == ("UNSCHEDULABLE", "deletion of ResourceClaim completed")
    assert r.claims() == {}


def test_extended_resource_name_bind_failure() -> None:
    """Unreserve after PreBind (the bind failed) deletes the claim PreBind created."""
    r = Run(pod([{GPU: "1"}]), [device_class(extended=GPU), slice_of("instance-1")]).go(unreserve_after_prebind=True)
    assert r.status("preBind") is None
    assert r.claims() == {}


def test_extended_resource_name_skip_bind() -> None:
    """Unreserve before PreBind: nothing was created; the allocation is no longer in flight."""
    r = Run(pod([{GPU: "1"}]), [device_class(extended=GPU), slice_of("instance-1")]).go(unreserve_before_prebind=True)
    assert len(r.said["inFlight"]) == 1
    assert r.plugin._in_flight == {}
    assert r.claims() == {}


class RefusingCreates(InMemoryCluster):
    """A cluster that refuses to create claims (a fault the in-memory store cannot cause)."""

    async def create_object(self, kind: str, obj: Obj) -> Obj:
        raise RuntimeError("claim creation errors")


def test_extended_resource_name_claim_creation_failure() -> None:
    r = Run(
        pod([{GPU: "1"}]), [device_class(extended=GPU), slice_of("instance-1")], cluster=RefusingCreates(Store())
    ).go(unreserve_after_prebind=True)
    assert r.status("preBind") == ("ERROR", "create claim for extended resources default/: claim creation errors")
    assert r.claims() == {}
    assert r.plugin._in_flight == {}
    assert created(r, "failure") == 1 and created(r, "success") is None


def created(r: Run, status: str) -> float | None:
    """dynamic_resource_allocation_resourceclaim_creates_total{status} (never admin access here)."""
    name = "dynamic_resource_allocation_resourceclaim_creates_total"
    return r.observer.registry.get_sample_value(name, {"status": status, "admin_access": "false"})


class RefusingPodStatus(InMemoryCluster):
    """A cluster that refuses pod status writes (a fault the in-memory store cannot cause)."""

    async def update_object(self, kind: str, obj: Obj, subresource: str | None = None) -> Obj:
        if kind == "Pod":
            raise RuntimeError("patch error")
        return await super().update_object(kind, obj, subresource)


def test_extended_resource_name_with_resources_fail_patch() -> None:
    """The claim is created, allocated and reserved; writing the pod's status fails, so PreBind
    fails (and Unreserve deletes the claim it created)."""
    r = Run(
        pod([{GPU: "1"}]), [device_class(extended=GPU), slice_of("instance-1")], cluster=RefusingPodStatus(Store())
    ).go()
    assert r.status("preBind") == ("ERROR", "update pod default/my-pod ExtendedResourceClaimStatus: patch error")
    (claim,) = r.extended_claims()
    assert claim["status"]["reservedFor"] == RESERVED
    awaited(r.plugin.unreserve(r.state, r.pod, "worker"))
    assert r.claims() == {}


def test_a_node_with_neither_device_plugin_nor_dra_does_not_fit() -> None:
    """Filter: an extended resource neither in the node's allocatable nor backed by DRA."""
    r = Run(pod([{GPU: "1", "example.com/other": "1"}]), [device_class(extended=GPU), slice_of("instance-1")]).go()
    assert r.status("filter/worker") == ("UNSCHEDULABLE_AND_UNRESOLVABLE", "cannot fit resource")


def test_a_pod_with_claims_and_extended_resources_gets_both() -> None:
    claim = allocated_claim()
    del claim["status"]
    del claim["metadata"]["finalizers"]
    r = Run(
        pod([{GPU: "1"}], claims=[CLAIM]), [claim, device_class(extended=GPU), slice_of("instance-1", "instance-2")]
    ).go()
    assert r.status("preBind") is None
    assert results(r.claims()[CLAIM]) == [("req-1", "instance-1")]
    (extended,) = r.extended_claims()
    assert results(extended) == [("container-0-request-0", "instance-2")]


# --- the requests and mappings of the claim for extended resources ----------------------------


def spec_pod(init: list[Obj], containers: list[Obj]) -> Obj:
    return {"spec": {"initContainers": init, "containers": containers}}


def c(name: str, gpus: str | None, sidecar: bool = False) -> Obj:
    out: Obj = {"name": name, "resources": {"requests": {GPU: gpus} if gpus else {}}}
    if sidecar:
        out["restartPolicy"] = "Always"
    return out


@pytest.mark.parametrize(
    ("init", "containers", "want_requests", "want_mappings"),
    [
        pytest.param(
            [c("i0", "1")],
            [c("c0", "2")],
            [("container-1-request-0", 2)],
            [("c0", "container-1-request-0"), ("i0", "container-1-request-0")],
            id="init-container-reuses-the-regular-containers-devices",
        ),
        pytest.param(
            [c("i0", "3")],
            [c("c0", "2")],
            [("container-0-request-0", 1), ("container-1-request-0", 2)],
            [("c0", "container-1-request-0"), ("i0", "container-1-request-0"), ("i0", "container-0-request-0")],
            id="init-container-asks-for-the-rest",
        ),
        pytest.param(
            [c("i0", "1"), c("i1", "2")],
            [c("c0", None)],
            [("container-1-request-0", 2)],
            [("i0", "container-1-request-0"), ("i1", "container-1-request-0")],
            id="init-containers-share-the-largest-request",
        ),
        pytest.param(
            [c("s0", "1", sidecar=True)],
            [c("c0", "1")],
            [("container-0-request-0", 1), ("container-1-request-0", 1)],
            [("s0", "container-0-request-0"), ("c0", "container-1-request-0")],
            id="a-sidecar-has-its-own",
        ),
        pytest.param(
            [],
            [c("c0", "500m")],
            [],
            [],
            id="fractional-request-is-not-a-device-count",
        ),
    ],
)
def test_requests_and_mappings(
    init: list[Obj], containers: list[Obj], want_requests: list[tuple[str, int]], want_mappings: list[tuple[str, str]]
) -> None:
    mapping = device_class_mapping([device_class(extended=GPU)])
    requests, mappings = requests_and_mappings(spec_pod(init, containers), [GPU], mapping)
    assert [(r["name"], r["exactly"]["count"]) for r in requests] == want_requests
    assert [(m["containerName"], m["requestName"]) for m in mappings] == want_mappings


def test_device_class_mapping_prefers_the_newest_class_then_the_first_name() -> None:
    older = device_class("a-old", extended=GPU, created="2026-01-01T00:00:00Z")
    newer = device_class("z-new", extended=GPU, created="2026-02-01T00:00:00Z")
    assert device_class_mapping([newer, older])[GPU]["metadata"]["name"] == "z-new"
    assert device_class_mapping([older, newer])[GPU]["metadata"]["name"] == "z-new"
    twin_b = device_class("b", extended=GPU)
    twin_a = device_class("a", extended=GPU)
    assert device_class_mapping([twin_b, twin_a])[GPU]["metadata"]["name"] == "a"
    mapping = device_class_mapping([older, newer])
    assert mapping["deviceclass.resource.kubernetes.io/a-old"]["metadata"]["name"] == "a-old"


# --- NodeResourcesFit leaves DRA-backed resources to DynamicResources --------------------------


@pytest.mark.parametrize(
    ("classes", "node_gpus", "want"),
    [
        pytest.param([device_class(extended=GPU)], None, None, id="no-device-plugin-left-to-dra"),
        pytest.param([device_class(extended=GPU)], "0", None, id="zero-allocatable-left-to-dra"),
        pytest.param(
            [device_class(extended=GPU)], "1", ("UNSCHEDULABLE", "Insufficient example.com/gpu"), id="device-plugin"
        ),
        pytest.param([], None, ("UNSCHEDULABLE_AND_UNRESOLVABLE", "Insufficient example.com/gpu"), id="no-class"),
    ],
)
def test_node_resources_fit_delegates_to_dra(classes: list[Obj], node_gpus: str | None, want: Any) -> None:
    store = Store()
    for o in classes:
        store.create("DeviceClass", o)
    handle = SimpleNamespace(listers=StoreListers(store), feature_gates=FeatureGates())
    fit = NodeResourcesFit(None, handle)
    busy = pod([{GPU: "1"}])
    busy["metadata"] = {"name": "busy", "namespace": "default", "uid": "b"}
    busy["spec"]["nodeName"] = "worker"
    n = node(gpus=node_gpus)
    (info,) = as_node_infos([n], [busy] if node_gpus == "1" else [])
    state = CycleState()
    pi = as_pod_info(pod([{GPU: "1"}]))
    assert fit.pre_filter(state, pi) is None
    status = fit.filter(state, pi, info)
    assert (None if status is None else (status.code.name, "; ".join(status.reasons))) == want
    if classes:
        assert fit.filter_nodes(state, pi, [info]) is None  # node by node: the batch form declines


# --- binding conditions -----------------------------------------------------------------------


def binding_metrics(r: Run, status: str) -> tuple[float | None, float | None, float | None]:
    """scheduler_dra_bindingconditions_allocations_total and the wait histogram's count and sum
    for the test driver and ``status``, as the scheduler would serve them."""
    labels = {"profile": "default-scheduler", "driver": DRIVER, "status": status}
    get = r.observer.registry.get_sample_value
    return (
        get("scheduler_dra_bindingconditions_allocations_total", labels),
        get("scheduler_dra_bindingconditions_wait_duration_seconds_count", labels),
        get("scheduler_dra_bindingconditions_wait_duration_seconds_sum", labels),
    )


def test_bound_claim_with_succeeded_binding_conditions() -> None:
    r = Run(pod(claims=[CLAIM]), [BOUND]).go()
    assert r.status("preBind") is None
    assert r.claims()[CLAIM]["status"]["reservedFor"] == RESERVED


@pytest.mark.parametrize(
    "claim",
    [
        pytest.param(FAILED, id="bound-claim-with-failed-binding"),
        pytest.param(
            allocated_claim(binding=True, conditions=[], allocated_at=datetime.now(UTC) - timedelta(minutes=10)),
            id="bound-claim-with-timed-out-binding",
        ),
        pytest.param(
            allocated_claim(
                binding=True,
                conditions=[("condition1", "True"), ("condition2", "False")],
                allocated_at=datetime.now(UTC) - timedelta(minutes=10),
            ),
            id="bound-claim-with-mixed-binding-conditions",
        ),
    ],
)
def test_a_claim_that_failed_or_timed_out_binding_is_deallocated(claim: Obj) -> None:
    r = Run(pod(claims=[CLAIM]), [claim, slice_of("instance-1")]).go()
    assert r.status("filter/worker") == ("UNSCHEDULABLE_AND_UNRESOLVABLE", "resourceclaim not available on the node")
    assert r.status("postFilter") == ("UNSCHEDULABLE", "deallocation of ResourceClaim completed")
    status = r.claims()[CLAIM].get("status") or {}
    assert "allocation" not in status and "devices" not in status and "reservedFor" not in status


def test_bound_claim_without_binding_conditions() -> None:
    r = Run(pod(claims=[CLAIM]), [allocated_claim()]).go()
    assert r.status("preBind") is None
    assert r.claims()[CLAIM]["status"]["reservedFor"] == RESERVED


def test_multi_claims_binding_conditions_all_success() -> None:
    r = Run(pod(claims=[CLAIM, CLAIM2]), [BOUND, BOUND2, device_class()]).go()
    assert r.status("preBind") is None
    assert all(c["status"]["reservedFor"] == RESERVED for c in r.claims().values())


def test_multi_claims_binding_conditions_one_fail() -> None:
    r = Run(pod(claims=[CLAIM, CLAIM2]), [BOUND, FAILED2, device_class()]).go()
    assert r.status("filter/worker") == ("UNSCHEDULABLE_AND_UNRESOLVABLE", "resourceclaim not available on the node")
    assert r.status("postFilter") == ("UNSCHEDULABLE", "deallocation of ResourceClaim completed")
    claims = r.claims()
    assert "allocation" not in claims[CLAIM2]["status"]
    assert claims[CLAIM]["status"]["allocation"] == BOUND["status"]["allocation"]


def test_prebind_fail_with_binding_timeout() -> None:
    """Allocated long enough ago that the binding timeout passes while PreBind waits."""
    allocated_at = datetime.now(UTC) - timedelta(seconds=600) + timedelta(seconds=1)
    claim = allocated_claim(binding=True, conditions=[], allocated_at=allocated_at)
    r = Run(pod(claims=[CLAIM]), [claim], args=DynamicResourcesArgs(bindingTimeout="600s"))
    r.plugin.binding_poll = 0.2
    start = time.monotonic()
    r.go()
    assert r.status("preBind") == ("ERROR", f"claim {CLAIM} binding timeout")
    assert time.monotonic() - start < 10
    count, waits, _ = binding_metrics(r, "timeout")
    assert (count, waits) == (1, 1)
    assert binding_metrics(r, "success")[0] is None
    assert r.claims()[CLAIM]["status"]["reservedFor"] == RESERVED  # written before the wait


def test_prebind_waits_for_binding_conditions_and_records_why() -> None:
    """PreBind writes allocationTimestamp with the allocation, emits BindingConditionsPending,
    and returns once a controller sets the binding condition True."""
    claim = allocated_claim()
    del claim["status"]
    del claim["metadata"]["finalizers"]
    r = Run(pod(claims=[CLAIM]), [claim, device_class(), slice_of("instance-1")])
    r.plugin.pre_filter(r.state, r.pod)
    (info,) = r.nodes
    assert r.plugin.filter(r.state, r.pod, info) is None
    s = r.state.get(STATE_KEY)
    # The conditions as the allocator copies them from the device into the result.
    for result in s.node_allocations["worker"].results[0]["devices"]["results"]:
        result["bindingConditions"] = list(BINDING_CONDITIONS)
        result["bindingFailureConditions"] = list(FAILURE_CONDITIONS)
    assert r.plugin.reserve(r.state, r.pod, "worker") is None

    async def scenario() -> Status | None:
        task = asyncio.ensure_future(r.plugin.pre_bind(r.state, r.pod, "worker"))
        await asyncio.sleep(0.2)
        assert not task.done()
        current = copy.deepcopy(r.store.get("ResourceClaim", "default", CLAIM))
        assert current["status"]["allocation"]["allocationTimestamp"]
        current["status"]["devices"] = [
            {
                "driver": DRIVER,
                "pool": "worker",
                "device": "instance-1",
                "conditions": [{"type": "condition", "status": "True", "reason": "Attached", "message": ""}],
            }
        ]
        r.store.update("ResourceClaim", current)
        status: Status | None = await asyncio.wait_for(task, 5)
        return status

    assert asyncio.run(scenario()) is None
    count, waits, waited = binding_metrics(r, "success")
    assert (count, waits) == (1, 1)
    assert waited is not None and 0.2 <= waited < 5
    assert binding_metrics(r, "failure")[0] is None
    (event,) = r.cluster.events_for(r.pod.pod)
    assert (event["reason"], event["message"]) == (
        "BindingConditionsPending",
        "waiting for binding conditions for device on node worker",
    )


@pytest.mark.looptime
async def test_prebind_gives_up_after_the_binding_timeout() -> None:
    """Nobody sets the conditions: past bindingTimeout (loop time) PreBind fails."""
    claim = allocated_claim(binding=True, conditions=[], allocated_at=datetime.now(UTC))
    r = Run(pod(claims=[CLAIM]), [claim], args=DynamicResourcesArgs(bindingTimeout="30s"))
    r.plugin.binding_poll = 5.0
    assert r.plugin.pre_filter(r.state, r.pod) is None
    loop = asyncio.get_running_loop()
    start = loop.time()
    status = await r.plugin.pre_bind(r.state, r.pod, "worker")
    assert (status.code.name, status.reasons) == ("ERROR", ["device binding timeout"])
    assert loop.time() - start == pytest.approx(30.0)
    count, waits, waited = binding_metrics(r, "timeout")
    assert (count, waits, waited) == (1, 1, pytest.approx(30.0))


def test_prebind_fails_at_once_on_a_failure_condition() -> None:
    claim = allocated_claim(binding=True, conditions=[("failed", "True")])
    claim["status"]["devices"][0]["conditions"][0].update(reason="NoFabric", message='no "fabric" here')
    r = Run(pod(claims=[CLAIM]), [claim])
    assert r.plugin.pre_filter(r.state, r.pod) is None
    status = awaited(r.plugin.pre_bind(r.state, r.pod, "worker"))
    assert (status.code.name, status.reasons) == (
        "ERROR",
        [f'claim {CLAIM} binding failed: reason=NoFabric, message="no \\"fabric\\" here"'],
    )
    assert binding_metrics(r, "failure")[:2] == (1, 1)


def test_binding_conditions_are_ignored_with_the_gate_off() -> None:
    gates = FeatureGates({"DRADeviceBindingConditions": False})
    r = Run(pod(claims=[CLAIM]), [FAILED], gates=gates).go()
    assert r.status("filter/worker") is None and r.status("preBind") is None
    assert "allocationTimestamp" not in r.claims()[CLAIM]["status"]["allocation"]


# --- DynamicResourcesArgs --------------------------------------------------------------------


def test_args_defaults() -> None:
    """filterTimeout 10s; bindingTimeout unset in the model (the configuration defaults it to
    10m0s with the gates on) means upstream's 10 minutes."""
    plugin = DynamicResources(DynamicResourcesArgs(), None)
    assert plugin.filter_timeout == 10.0
    assert plugin.binding_timeout == 600.0
    assert DynamicResources(DynamicResourcesArgs(bindingTimeout="1m30s"), None).binding_timeout == 90.0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"filterTimeout": "-1s"}, "filterTimeout: Invalid value: '-1s': must be zero or positive"),
        ({"bindingTimeout": "soon"}, "bindingTimeout: Invalid value: 'soon': must be a duration"),
    ],
    ids=["negative-filter-timeout", "not-a-duration"],
)
def test_args_validation(args: Obj, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        DynamicResourcesArgs.model_validate(args)


@pytest.mark.parametrize("value", ["500ms", "0"], ids=["below-a-second", "zero"])
def test_a_binding_timeout_under_a_second_is_refused(value: str) -> None:
    with pytest.raises(ValueError, match=f'bindingTimeout: Invalid value: "{value}": must be at least 1 second'):
        DynamicResources(DynamicResourcesArgs(bindingTimeout=value), None)


@pytest.mark.parametrize(
    ("gates", "args", "message"),
    [
        (
            {"DRASchedulerFilterTimeout": False},
            {"filterTimeout": "5s"},
            "filterTimeout: Forbidden: DRASchedulingFilterTimeout feature gate is disabled",
        ),
        (
            {"DRADeviceBindingConditions": False},
            {"bindingTimeout": "60s"},
            "bindingTimeout: Forbidden: DRADeviceBindingConditions or DRAResourceClaimDeviceStatus feature gate is disabled",
        ),
    ],
    ids=["filter-timeout-gate-off", "binding-timeout-gate-off"],
)
def test_args_set_while_their_gate_is_off_are_refused(gates: dict[str, bool], args: Obj, message: str) -> None:
    handle = SimpleNamespace(feature_gates=FeatureGates(gates))
    with pytest.raises(ValueError, match=message):
        DynamicResources(DynamicResourcesArgs.model_validate(args), handle)
    DynamicResources(DynamicResourcesArgs(), handle)  # the defaults are fine


def test_timeout_disabled_by_the_gate_and_by_zero() -> None:
    off = SimpleNamespace(feature_gates=FeatureGates({"DRASchedulerFilterTimeout": False}))
    assert DynamicResources(DynamicResourcesArgs(), off).filter_timeout is None
    assert DynamicResources(DynamicResourcesArgs(filterTimeout="0s"), None).filter_timeout is None


# --- DeviceTaintRules ------------------------------------------------------------------------


def rule(name: str, selected: bool = True, **selector: str) -> Obj:
    """A rule whose ``deviceSelector`` is ``selector`` (empty: every device), or, with
    ``selected=False``, a rule without one (no device, as resource.k8s.io/v1 says)."""
    spec: Obj = {"taint": {"key": "example.com/broken", "value": "yes", "effect": "NoSchedule"}}
    if selected:
        spec["deviceSelector"] = selector
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceTaintRule", "metadata": {"name": name}, "spec": spec}


@pytest.mark.parametrize(
    ("r", "tainted"),
    [
        pytest.param(rule("all"), ["instance-1", "instance-2"], id="empty-selector-taints-all"),
        pytest.param(rule("none", selected=False), [], id="no-selector-taints-none"),
        pytest.param(rule("d", driver=DRIVER), ["instance-1", "instance-2"], id="driver"),
        pytest.param(rule("d", driver=DRIVER2), [], id="other-driver"),
        pytest.param(rule("p", pool="worker", device="instance-2"), ["instance-2"], id="pool-and-device"),
        pytest.param(rule("p", pool="other"), [], id="other-pool"),
    ],
)
def test_device_taint_rules_select_devices(r: Obj, tainted: list[str]) -> None:
    s = slice_of("instance-1", "instance-2")
    patched = apply_rules(s, [r])
    got = [d["name"] for d in patched["spec"]["devices"] if d.get("taints")]
    assert got == tainted
    assert all(not d.get("taints") for d in s["spec"]["devices"])  # the listed slice is left alone
    assert (patched is s) == (not tainted)
    for d in patched["spec"]["devices"]:
        if d.get("taints"):
            assert d["taints"] == [{"key": "example.com/broken", "value": "yes", "effect": "NoSchedule"}]


def test_the_allocator_sees_the_slices_with_the_rules_applied() -> None:
    claim = allocated_claim()
    del claim["status"]
    objects = [claim, device_class(), slice_of("instance-1"), rule("all")]
    r = Run(pod(claims=[CLAIM]), objects)
    assert r.plugin.pre_filter(r.state, r.pod) is None
    (seen,) = r.state.get(STATE_KEY).slices
    assert seen["spec"]["devices"][0]["taints"][0]["key"] == "example.com/broken"
    off = Run(pod(claims=[CLAIM]), objects, gates=FeatureGates({"DRADeviceTaintRules": False}))
    assert off.plugin.pre_filter(off.state, off.pod) is None
    (seen,) = off.state.get(STATE_KEY).slices
    assert "taints" not in seen["spec"]["devices"][0]


def test_tainted_slices_are_remembered_while_nothing_changes() -> None:
    tainted = TaintedSlices()
    s, rules = slice_of("instance-1"), [rule("all")]
    first = tainted([s], rules)
    assert tainted([s], rules)[0] is first[0]
    assert tainted([s], [rule("all")])[0] is not first[0]  # a new rule object: applied afresh
    assert tainted([s], [])[0] is s


# --- events ------------------------------------------------------------------------------------


def test_events_to_register() -> None:
    events = {(e.event.resource.value, int(e.event.action)) for e in DynamicResources(None, None).events_to_register()}
    from kubesched.framework.events import ActionType as A

    assert events == {
        ("Node", int(A.ADD | A.UPDATE_NODE_LABEL | A.UPDATE_NODE_ALLOCATABLE)),
        ("ResourceClaim", int(A.ADD | A.UPDATE)),
        ("UnscheduledPod", int(A.UPDATE_POD_GENERATED_RESOURCE_CLAIM)),
        ("DeviceClass", int(A.ADD | A.UPDATE)),
        ("ResourceSlice", int(A.ADD | A.UPDATE)),
    }


def test_a_pod_with_dra_backed_extended_resources_is_not_batched() -> None:
    store = Store()
    store.create("DeviceClass", device_class(extended=GPU))
    plugin = DynamicResources(None, SimpleNamespace(listers=StoreListers(store), feature_gates=FeatureGates()))
    assert plugin.sign_pod(as_pod_info(pod([{GPU: "1"}]))) is None
    assert plugin.sign_pod(as_pod_info(pod([{"example.com/other": "1"}]))) == {}


# --- Score: prioritized lists ---------------------------------------------------------------


def prioritized_claim(name: str, *requests: list[tuple[str, int, str | None]]) -> Obj:
    """A pending claim whose requests ``req-1``, ``req-2``, ... list ``(subrequest, count,
    selector)`` alternatives."""
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "devices": {
                "requests": [
                    {
                        "name": f"req-{i}",
                        "firstAvailable": [
                            {
                                "name": sub,
                                "deviceClassName": CLASS,
                                "count": count,
                                **({"selectors": [{"cel": {"expression": sel}}]} if sel else {}),
                            }
                            for sub, count, sel in subs
                        ],
                    }
                    for i, subs in enumerate(requests, 1)
                ]
            }
        },
    }


def node_slice(node_name: str, devices: int, healthy: bool | None = None) -> Obj:
    attrs = {"attributes": {"healthy": {"bool": healthy}}} if healthy is not None else {}
    return slice_of(*(f"instance-{i}" for i in range(1, devices + 1)), node=node_name, **attrs)


HEALTHY = f'device.attributes["{DRIVER}"].healthy'


@pytest.mark.parametrize(
    ("claims", "slices", "want_filter", "want_scores", "want_normalized"),
    [
        pytest.param(
            [prioritized_claim(CLAIM, [("subreq-1", 1, HEALTHY), ("subreq-2", 1, None)])],
            [node_slice("worker", 1, True), node_slice("worker-2", 1, False)],
            {},
            {"worker": 8, "worker-2": 7},
            {"worker": 100, "worker-2": 87},
            id="single-claim-prioritized-list-scoring",
        ),
        pytest.param(
            [
                prioritized_claim(CLAIM, [("subreq-1", 1, None)]),
                prioritized_claim(
                    CLAIM2, [("subreq-1", 4, None), ("subreq-2", 3, None), ("subreq-3", 2, None), ("subreq-4", 1, None)]
                ),
            ],
            [node_slice("worker", 4), node_slice("worker-2", 2), node_slice("worker-3", 1)],
            {"worker-3": ("UNSCHEDULABLE_AND_UNRESOLVABLE", "cannot allocate all claims")},
            {"worker": 15, "worker-2": 13},
            {"worker": 100, "worker-2": 86},
            id="multiple-claims-prioritized-list-scoring",
        ),
        pytest.param(
            [
                prioritized_claim(
                    CLAIM,
                    [("subreq-1", 2, None), ("subreq-2", 1, None)],
                    [("subreq-1", 2, None), ("subreq-2", 1, None)],
                )
            ],
            [node_slice("worker", 4), node_slice("worker-2", 3), node_slice("worker-3", 2)],
            {},
            {"worker": 16, "worker-2": 15, "worker-3": 14},
            {"worker": 100, "worker-2": 93, "worker-3": 87},
            id="multiple-requests-prioritized-list-scoring",
        ),
    ],
)
def test_prioritized_list_scoring(
    claims: list[Obj], slices: list[Obj], want_filter: Obj, want_scores: Obj, want_normalized: Obj
) -> None:
    from kubesched.framework.interface import NodeScore

    names = [c["metadata"]["name"] for c in claims]
    nodes = [node(s["spec"]["nodeName"]) for s in slices]
    r = Run(pod(claims=names), [*claims, device_class(), *slices], nodes=nodes)
    assert r.plugin.pre_filter(r.state, r.pod) is None
    passed = []
    for n in r.nodes:
        status = r.plugin.filter(r.state, r.pod, n)
        assert (None if status is None else (status.code.name, "; ".join(status.reasons))) == want_filter.get(n.name)
        if status is None:
            passed.append(n)
    assert r.plugin.score_nodes(r.state, r.pod, passed) is None  # node by node
    scores = [NodeScore(n.name, r.plugin.score(r.state, r.pod, n)) for n in passed]
    assert {s.name: s.score for s in scores} == want_scores
    assert r.plugin.normalize_score(r.state, r.pod, scores) is None
    assert {s.name: s.score for s in scores} == want_normalized


def test_pods_without_alternatives_score_zero_at_once() -> None:
    claim = allocated_claim()
    del claim["status"]
    r = Run(pod(claims=[CLAIM]), [claim, device_class(), slice_of("instance-1")])
    assert r.plugin.pre_filter(r.state, r.pod) is None
    assert r.plugin.filter(r.state, r.pod, r.nodes[0]) is None
    assert r.plugin.score_nodes(r.state, r.pod, r.nodes).tolist() == [0]
    assert r.plugin.score(r.state, r.pod, r.nodes[0]) == 0
    plain = Run(pod(), [])
    plain.plugin.pre_filter(plain.state, plain.pod)
    assert plain.plugin.score_nodes(plain.state, plain.pod, plain.nodes).tolist() == [0]
