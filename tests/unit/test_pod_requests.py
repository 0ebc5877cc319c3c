"""A pod's requests and limits as kube-scheduler 1.37 counts them.

Upstream's component-helpers ``helpers_test.go`` tables (TestPodRequestsAndLimits,
TestPodResourceRequests, TestPodLevelResourceRequests, TestAggregateContainerRequestsAndLimits,
TestPodRequestsAndLimitsVerticalScalingWrappers, the Is*Set tables), then what NodeInfo, Filter
and scoring take from them (upstream's ``calculateResource`` and ``getNonMissingContainerRequests``),
the feature gates, and PodInfo's cache.

Upstream's tables build pods that never went through an API server; ours are defaulted as the API
server defaults them (a container's missing request is its limit), so the few cases with limits and
no requests expect the limit as the request too (marked "defaulted").
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from kubesched.framework.events import ActionType, pod_update_actions
from kubesched.framework.features import FeatureGates
from kubesched.framework.pod_requests import (
    DEFAULT_COUNTING,
    Counting,
    PodResourcesOptions,
    aggregate_container_limits,
    aggregate_container_requests,
    fit_requests,
    is_pod_level_limits_set,
    is_pod_level_requests_set,
    is_pod_level_resources_set,
    is_pod_resize_deferred,
    is_pod_resize_infeasible,
    is_supported_pod_level_resource,
    node_requests,
    pod_limit_amounts,
    pod_request_amounts,
    score_requests,
)
from kubesched.framework.resources import quantity_of
from kubesched.framework.types import NodeInfo, PodInfo, PodSpecError

Obj = dict[str, Any]
HP2M = "hugepages-2Mi"
HP1G = "hugepages-1Gi"
STATUS = PodResourcesOptions(use_status_resources=True)
STATUS_PLR = PodResourcesOptions(use_status_resources=True, in_place_pod_level_resources_vertical_scaling=True)
INFEASIBLE = [{"type": "PodResizePending", "status": "True", "reason": "Infeasible"}]


def c(name: str = "c", req: Obj | None = None, lim: Obj | None = None, sidecar: bool = False) -> Obj:
    resources: Obj = {}
    if req is not None:
        resources["requests"] = req
    if lim is not None:
        resources["limits"] = lim
    out: Obj = {"name": name, "image": "pause", "resources": resources}
    if sidecar:
        out["restartPolicy"] = "Always"
    return out


def cs(name: str, allocated: Obj | None = None, req: Obj | None = None, lim: Obj | None = None) -> Obj:
    out: Obj = {"name": name}
    if allocated is not None:
        out["allocatedResources"] = allocated
    if req is not None or lim is not None:
        out["resources"] = {k: v for k, v in (("requests", req), ("limits", lim)) if v is not None}
    return out


def pod(
    containers: list[Obj] | None = None,
    init: list[Obj] | None = None,
    resources: Obj | None = None,
    overhead: Obj | None = None,
    statuses: list[Obj] | None = None,
    init_statuses: list[Obj] | None = None,
    conditions: list[Obj] | None = None,
    allocated: Obj | None = None,
    status_resources: Obj | None = None,
) -> Obj:
    spec: Obj = {"containers": containers or []}
    if init:
        spec["initContainers"] = init
    if resources is not None:
        spec["resources"] = resources
    if overhead is not None:
        spec["overhead"] = overhead
    status: Obj = {}
    for key, value in (
        ("containerStatuses", statuses),
        ("initContainerStatuses", init_statuses),
        ("conditions", conditions),
        ("allocatedResources", allocated),
        ("resources", status_resources),
    ):
        if value is not None:
            status[key] = value
    return {"metadata": {"name": "p", "namespace": "default", "uid": "p"}, "spec": spec, "status": status}


def amounts(values: Obj) -> dict[str, int]:
    return {name: quantity_of(name, v) for name, v in values.items()}


def one(cpu: str | None = None, memory: str | None = None, **more: str) -> Obj:
    out: Obj = {}
    if cpu is not None:
        out["cpu"] = cpu
    if memory is not None:
        out["memory"] = memory
    out.update({k.replace("_", "-"): v for k, v in more.items()})
    return out


def overhead_pod(
    cpu_req: str = "", cpu_lim: str = "", mem_req: str = "", mem_lim: str = "", oh: Obj | None = None
) -> Obj:
    """Upstream's ``getPod``: the same requirements on one container and one init container."""
    req = {k: v for k, v in (("cpu", cpu_req), ("memory", mem_req)) if v}
    lim = {k: v for k, v in (("cpu", cpu_lim), ("memory", mem_lim)) if v}
    return pod([c("foo", req, lim)], init=[c("init-foo", req, lim)], overhead=oh or {})


# --- TestPodRequestsAndLimits ---------------------------------------------------------------------

REQUESTS_AND_LIMITS = [
    # defaulted: the request is the limit
    ("just-limit-no-overhead", overhead_pod(cpu_lim="9"), {"cpu": "9"}, {"cpu": "9"}),
    ("just-overhead", overhead_pod(oh=one("5", "5")), {"cpu": "5", "memory": "5"}, {}),
    ("req-and-overhead", overhead_pod("1", mem_req="10", oh=one("5", "5")), {"cpu": "6", "memory": "15"}, {}),
    (
        "all-req-lim-and-overhead",
        overhead_pod("1", "2", "10", "12", oh=one("5", "5")),
        {"cpu": "6", "memory": "15"},
        {"cpu": "7", "memory": "17"},
    ),
    (
        "req-some-lim-and-overhead",
        overhead_pod("1", "2", "10", oh=one("5", "5")),
        {"cpu": "6", "memory": "15"},
        {"cpu": "7"},
    ),
]


@pytest.mark.parametrize(
    "p, requests, limits", [c_[1:] for c_ in REQUESTS_AND_LIMITS], ids=[c_[0] for c_ in REQUESTS_AND_LIMITS]
)
def test_pod_requests_and_limits(p: Obj, requests: Obj, limits: Obj) -> None:
    assert pod_request_amounts(p) == amounts(requests)
    assert pod_limit_amounts(p) == amounts(limits)


TWO = [
    c("foobar", one("1", "5"), one("2", "10")),
    c("foobar2", one("4", "12"), one("8", "24")),
]
WITHOUT_OVERHEAD = [
    ("two container no overhead - should just be sum of containers", pod(TWO), one("5", "17"), one("10", "34")),
    (
        "two container with overhead - shouldn't consider overhead",
        pod(TWO, overhead=one("3", "8")),
        one("5", "17"),
        one("10", "34"),
    ),
    (
        "two container with overhead, massive init - should just be the largest init",
        pod(
            TWO,
            init=[c("small-init", one("1", "5"), one("1", "5")), c("big-init", one("40", "120"), one("80", "240"))],
            overhead=one("3", "8"),
        ),
        one("40", "120"),
        one("80", "240"),
    ),
]


@pytest.mark.parametrize(
    "p, requests, limits", [c_[1:] for c_ in WITHOUT_OVERHEAD], ids=[c_[0] for c_ in WITHOUT_OVERHEAD]
)
def test_pod_requests_and_limits_without_overhead(p: Obj, requests: Obj, limits: Obj) -> None:
    opts = PodResourcesOptions(exclude_overhead=True)
    assert pod_request_amounts(p, opts) == amounts(requests)
    assert pod_limit_amounts(p, opts) == amounts(limits)


# --- TestPodResourceRequests ----------------------------------------------------------------------

DEFAULT = PodResourcesOptions()
RESOURCE_REQUESTS = [
    ("nil options, larger init container", DEFAULT, pod([c(req=one("1"))], init=[c("i", one("4"))]), one("4")),
    (
        "nil options, larger containers",
        DEFAULT,
        pod([c("a", one("2")), c("b", one("3"))], init=[c("i", one("2"))]),
        one("5"),
    ),
    (
        "pod overhead excluded",
        PodResourcesOptions(exclude_overhead=True),
        pod([c("a", one("2")), c("b", one("3"))], init=[c("i", one("2"))], overhead=one("1")),
        one("5"),
    ),
    (
        "pod overhead included",
        DEFAULT,
        pod([c("a", one("2")), c("b", one("3"))], init=[c("i", one("2"), one("2"))], overhead=one("1", "1Gi")),
        one("6", "1Gi"),
    ),
    (
        "resized, infeasible",
        STATUS,
        pod([c("container-1", one("4"))], statuses=[cs("container-1", req=one("2"))], conditions=INFEASIBLE),
        one("2"),
    ),
    (
        "resized, infeasible & in-progress",
        STATUS,
        pod(
            [c("container-1", one("6"))],
            statuses=[cs("container-1", allocated=one("4"), req=one("2"))],
            conditions=INFEASIBLE,
        ),
        one("4"),
    ),
    (
        "resized, no resize status",
        STATUS,
        pod([c("container-1", one("4"))], statuses=[cs("container-1", req=one("2"))]),
        one("4"),
    ),
    (
        "resized: per-resource 3-way maximum",
        STATUS,
        pod(
            [c("container-1", one("30m", "20M", ephemeral_storage="10G"))],
            statuses=[
                cs(
                    "container-1",
                    allocated=one("20m", "10M", ephemeral_storage="30G"),
                    req=one("10m", "30M", ephemeral_storage="20G"),
                )
            ],
        ),
        one("30m", "30M", ephemeral_storage="30G"),
    ),
    (
        "resized, infeasible, but don't use status",
        DEFAULT,
        pod([c("container-1", one("4"))], statuses=[cs("container-1", req=one("2"))], conditions=INFEASIBLE),
        one("4"),
    ),
    (
        "resized, restartable init container, infeasible",
        STATUS,
        pod(
            init=[c("restartable-init-1", one("4"), sidecar=True)],
            init_statuses=[cs("restartable-init-1", req=one("2"))],
            conditions=INFEASIBLE,
        ),
        one("2"),
    ),
    (
        "resized, restartable init container, no resize status",
        STATUS,
        pod(
            init=[c("restartable-init-1", one("4"), sidecar=True)],
            init_statuses=[cs("restartable-init-1", req=one("2"))],
        ),
        one("4"),
    ),
    (
        "restartable init container",
        DEFAULT,
        pod([c("container-1", one("1"))], init=[c("restartable-init-1", one("1"), sidecar=True)]),
        one("2"),
    ),
    (
        "multiple restartable init containers",
        DEFAULT,
        pod(
            [c("container-1", one("1"))],
            init=[
                c("init-1", one("5")),
                c("restartable-init-1", one("1"), sidecar=True),
                c("restartable-init-2", one("2"), sidecar=True),
                c("restartable-init-3", one("3"), sidecar=True),
            ],
        ),
        one("7"),
    ),
    (
        "multiple restartable and regular init containers",
        DEFAULT,
        pod(
            [c("container-1", one("1"))],
            init=[
                c("init-1", one("5")),
                c("restartable-init-1", one("1"), sidecar=True),
                c("restartable-init-2", one("2"), sidecar=True),
                c("init-2", one("5")),
                c("restartable-init-3", one("3"), sidecar=True),
            ],
        ),
        one("8"),
    ),
    (
        "restartable-init, init and regular",
        DEFAULT,
        pod(
            [c("container-1", one("100"))],
            init=[c("restartable-init-1", one("10"), sidecar=True), c("init-1", one("200"))],
        ),
        one("210"),
    ),
    (
        "aggregate request resolves max of sums instead of sum of maxes",
        STATUS,
        pod(
            [c("c1", one("1")), c("c2", one("2"))],
            statuses=[cs("c1", allocated=one("2")), cs("c2", allocated=one("1"))],
        ),
        one("3"),
    ),
]


@pytest.mark.parametrize("opts, p, want", [c_[1:] for c_ in RESOURCE_REQUESTS], ids=[c_[0] for c_ in RESOURCE_REQUESTS])
def test_pod_resource_requests(opts: PodResourcesOptions, p: Obj, want: Obj) -> None:
    assert pod_request_amounts(p, opts) == amounts(want)


# --- TestPodLevelResourceRequests -----------------------------------------------------------------


def plr(req: Obj | None = None, lim: Obj | None = None) -> Obj:
    return {k: v for k, v in (("requests", req), ("limits", lim)) if v is not None}


SKIP = PodResourcesOptions(skip_pod_level_resources=True)
POD_LEVEL = [
    ("nil", DEFAULT, pod(resources={}), {}),
    ("pod level memory resource with SkipPodLevelResources true", SKIP, pod(resources=plr(one(memory="2Mi"))), {}),
    (
        "pod level memory resource with SkipPodLevelResources false",
        DEFAULT,
        pod(resources=plr(one(memory="2Mi"))),
        one(memory="2Mi"),
    ),
    (
        "pod level memory and container level cpu resources with SkipPodLevelResources false",
        DEFAULT,
        pod([c(req=one("2m"))], resources=plr(one(memory="2Mi"))),
        one("2m", "2Mi"),
    ),
    (
        "pod level unsupported resources set at both pod-level and container-level",
        DEFAULT,
        pod([c(req={"storage": "3Mi"})], resources=plr({"storage": "2Mi"})),
        {"storage": "3Mi"},
    ),
    (
        "pod level unsupported resources set at pod-level",
        DEFAULT,
        pod([c(req=one(memory="3Mi"))], resources=plr({"storage": "2Mi"})),
        one(memory="3Mi"),
    ),
    (
        "both container-level and pod-level resources set",
        DEFAULT,
        pod([c(req=one("2m", "3Mi"))], resources=plr(one("8m", "6Mi"))),
        one("8m", "6Mi"),
    ),
    (
        "container-level resources and init container set",
        DEFAULT,
        pod([c(req=one("2m", "3Mi"))], init=[c("i", one("4m", "5Mi"))]),
        one("4m", "5Mi"),
    ),
    (
        "container-level resources and sidecar container set",
        DEFAULT,
        pod([c(req=one("2m", "3Mi"))], init=[c("s", one("4m", "5Mi"), sidecar=True)]),
        one("6m", "8Mi"),
    ),
    (
        "container-level resources, init and sidecar container set",
        DEFAULT,
        pod([c(req=one("2m", "3Mi"))], init=[c("s", one("4m", "5Mi"), sidecar=True), c("i", one("8m", "6Mi"))]),
        one("12m", "11Mi"),
    ),
    (
        "pod-level resources, container-level resources, init and sidecar container set",
        DEFAULT,
        pod(
            [c(req=one("2m", "3Mi"))],
            init=[c("s", one("4m", "5Mi"), sidecar=True), c("i", one("8m", "6Mi"))],
            resources=plr(one("18m", "15Mi")),
        ),
        one("18m", "15Mi"),
    ),
    (
        "pod-level resources, hugepage request/limit single page size",
        DEFAULT,
        pod(resources=plr({"memory": "10Mi", HP2M: "2Mi"}, {HP2M: "2Mi"})),
        {"memory": "10Mi", HP2M: "2Mi"},
    ),
    (
        "pod-level resources, hugepage request/limit multiple page sizes",
        DEFAULT,
        pod(resources=plr({"cpu": "1", HP2M: "2Mi", HP1G: "1Gi"}, {HP2M: "2Mi", HP1G: "1Gi"})),
        {"cpu": "1", HP2M: "2Mi", HP1G: "1Gi"},
    ),
    (
        "pod-level resources, container-level resources, hugepage request/limit single page size",
        DEFAULT,
        pod([c(req={HP2M: "6Mi"}, lim={HP2M: "6Mi"})], resources=plr({"cpu": "1", HP2M: "10Mi"}, {HP2M: "10Mi"})),
        {"cpu": "1", HP2M: "10Mi"},
    ),
    (
        "pod-level resources, container-level resources, hugepage request/limit multiple page sizes",
        DEFAULT,
        pod(
            [c(req={"cpu": "1", HP1G: "2Gi"}, lim={HP1G: "2Gi"})],
            resources=plr({"cpu": "1", HP2M: "10Mi", HP1G: "2Gi"}, {HP2M: "10Mi", HP1G: "2Gi"}),
        ),
        {"cpu": "1", HP2M: "10Mi", HP1G: "2Gi"},
    ),
    (
        "pod-level resources, container-level resources, hugepage page sizes between pod-level and container-level",
        DEFAULT,
        pod(
            [c(req={"memory": "4Mi", HP1G: "1Gi"}, lim={HP1G: "1Gi"})],
            resources=plr({"cpu": "1", HP2M: "10Mi"}, {HP2M: "10Mi"}),
        ),
        {"cpu": "1", "memory": "4Mi", HP2M: "10Mi", HP1G: "1Gi"},
    ),
    # The API server's defaulting of pod-level requests (KEP-2837), for objects that skipped it.
    (
        "defaulted: pod-level limits only, no container requests: the limits",
        DEFAULT,
        pod([c()], resources=plr(lim=one("2", "1Gi"))),
        one("2", "1Gi"),
    ),
    (
        "defaulted: pod-level limits, container requests: the containers' sum",
        DEFAULT,
        pod([c("a", one("500m")), c("b", one("250m"))], resources=plr(lim=one("2", "1Gi"))),
        one("750m", "1Gi"),
    ),
]


@pytest.mark.parametrize("opts, p, want", [c_[1:] for c_ in POD_LEVEL], ids=[c_[0] for c_ in POD_LEVEL])
def test_pod_level_resource_requests(opts: PodResourcesOptions, p: Obj, want: Obj) -> None:
    assert pod_request_amounts(p, opts) == amounts(want)


@pytest.mark.parametrize(
    "resources, requests_set, limits_set",
    [
        (None, False, False),
        ({}, False, False),
        (plr(one(memory="100Mi")), True, False),
        (plr({"ephemeral-storage": "1Mi"}), False, False),
        (plr({"ephemeral-storage": "1Mi", "cpu": "1m"}), True, False),
        (plr(lim=one(memory="100Mi")), False, True),
        (plr(lim={"ephemeral-storage": "1Mi"}), False, False),
        (plr(lim={"ephemeral-storage": "1Mi", "cpu": "1m"}), False, True),
        (plr({HP2M: "2Mi"}, {HP2M: "2Mi"}), True, True),
    ],
)
def test_is_pod_level_set(resources: Obj | None, requests_set: bool, limits_set: bool) -> None:
    p = pod(resources=resources)
    assert is_pod_level_requests_set(p) is requests_set
    assert is_pod_level_limits_set(p) is limits_set
    assert is_pod_level_resources_set(p) is (requests_set or limits_set)


@pytest.mark.parametrize(
    "name, supported", [("cpu", True), ("memory", True), ("ephemeral-storage", False), (HP2M, True), (HP1G, True)]
)
def test_is_supported_pod_level_resource(name: str, supported: bool) -> None:
    assert is_supported_pod_level_resource(name) is supported


def test_resize_conditions() -> None:
    p = pod(conditions=[{"type": "PodResizePending", "status": "True", "reason": "Deferred"}])
    assert is_pod_resize_deferred(p) and not is_pod_resize_infeasible(p)
    p["status"]["conditions"][0]["reason"] = "Other"
    assert not is_pod_resize_deferred(p) and not is_pod_resize_infeasible(p)
    assert is_pod_resize_infeasible(pod(conditions=INFEASIBLE))


# --- TestAggregateContainerRequestsAndLimits ------------------------------------------------------

AGGREGATE = [
    ("one container with limits (defaulted)", DEFAULT, pod([c(lim=one("9"))]), one("9"), one("9")),
    ("two containers with requests", DEFAULT, pod([c("a", one("9")), c("b", one("9"))]), one("18"), {}),
    (
        "regular and init containers with requests",
        DEFAULT,
        pod([c(req=one("9"))], init=[c("i", one("9"))]),
        one("9"),
        {},
    ),
    (
        "regular, init and sidecar containers with requests",
        DEFAULT,
        pod([c(req=one("9"))], init=[c("s", one("8"), sidecar=True), c("i", one("6"))]),
        one("17"),
        {},
    ),
    (
        "regular, init and sidecar containers with limits (defaulted)",
        DEFAULT,
        pod([c(lim=one("9"))], init=[c("s", lim=one("8"), sidecar=True), c("i", lim=one("6"))]),
        one("17"),
        one("17"),
    ),
    (
        "regular containers with empty requests, but status with non-empty requests",
        STATUS,
        pod([c("container-1")], statuses=[cs("container-1", req=one("2"))]),
        one("2"),
        {},
    ),
    (
        "always-restart init containers with empty requests, but status with non-empty requests",
        STATUS,
        pod(init=[c("container-1", sidecar=True)], init_statuses=[cs("container-1", req=one("2"))]),
        one("2"),
        {},
    ),
    (
        "aggregate container limit resolves max of sums instead of sum of maxes (requests defaulted)",
        STATUS,
        pod(
            [c("c1", lim=one("1")), c("c2", lim=one("2"))],
            statuses=[cs("c1", lim=one("2")), cs("c2", lim=one("1"))],
        ),
        one("3"),
        one("3"),
    ),
    (
        "aggregate container request/limit resolves directly from pod status when PLR vertical scaling enabled",
        STATUS_PLR,
        pod(
            [c("c1", one("1"), one("2"))],
            allocated=one("4"),
            status_resources={"requests": one("3"), "limits": one("5")},
        ),
        one("4"),
        one("5"),
    ),
    (
        "falls back to container status aggregation when podAllocatedResources is nil",
        STATUS_PLR,
        pod(
            [c("c1", one("1"), one("2"))],
            statuses=[cs("c1", allocated=one("6"), req=one("5"), lim=one("7"))],
            status_resources={"requests": one("3"), "limits": one("7")},
        ),
        one("6"),
        one("7"),
    ),
    (
        "falls back to container status aggregation when podResources is nil",
        STATUS_PLR,
        pod(
            [c("c1", one("1"), one("2"))],
            statuses=[cs("c1", allocated=one("6"), req=one("5"), lim=one("8"))],
            allocated=one("6"),
        ),
        one("6"),
        one("8"),
    ),
]


@pytest.mark.parametrize("opts, p, requests, limits", [c_[1:] for c_ in AGGREGATE], ids=[c_[0] for c_ in AGGREGATE])
def test_aggregate_container_requests_and_limits(opts: PodResourcesOptions, p: Obj, requests: Obj, limits: Obj) -> None:
    assert aggregate_container_requests(p, opts) == amounts(requests)
    assert aggregate_container_limits(p, opts) == amounts(limits)


# --- TestPodRequestsAndLimitsVerticalScalingWrappers ----------------------------------------------

WRAPPERS = [
    (
        "pod level requests/limits with PLR vertical scaling enabled and status populated",
        STATUS_PLR,
        pod(
            [c("c1", one("1"), one("2"))],
            resources=plr(one("2"), one("4")),
            allocated=one("3"),
            status_resources={"requests": one("3.5"), "limits": one("5")},
        ),
        one("3.5"),
        one("5"),
    ),
    (
        "pod level requests/limits with PLR vertical scaling enabled and infeasible resize",
        STATUS_PLR,
        pod(
            [c("c1", one("1"), one("2"))],
            resources=plr(one("10"), one("20")),
            conditions=INFEASIBLE,
            allocated=one("3"),
            status_resources={"requests": one("4"), "limits": one("8")},
        ),
        one("4"),
        one("8"),
    ),
    (
        "container limits aggregation with infeasible resize",
        STATUS,
        pod([c("c1", lim=one("10"))], conditions=INFEASIBLE, statuses=[cs("c1", lim=one("6"))]),
        {},
        one("6"),
    ),
    (
        "non missing container requests applied to init container",
        PodResourcesOptions(non_missing_container_requests=amounts(one(memory="100Mi"))),
        pod(init=[c("i1", one("1"))]),
        one("1", "100Mi"),
        {},
    ),
    (
        "non missing container requests applied to regular container",
        PodResourcesOptions(non_missing_container_requests=amounts(one(memory="100Mi"))),
        pod([c("c1", one("1"))]),
        one("1", "100Mi"),
        {},
    ),
    # Overhead is in the pod-level status figures and is taken out before they are compared.
    (
        "pod level status figures less the overhead",
        STATUS_PLR,
        pod(
            [c("c1", one("1"))],
            resources=plr(one("2")),
            overhead=one("500m"),
            allocated=one("3"),
            status_resources={"requests": one("3")},
        ),
        one("3"),
        {},
    ),
    (
        "pod level status ignored without InPlacePodLevelResourcesVerticalScaling",
        STATUS,
        pod([c("c1", one("1"))], resources=plr(one("2")), allocated=one("3"), status_resources={"requests": one("3")}),
        one("2"),
        {},
    ),
]


@pytest.mark.parametrize("opts, p, requests, limits", [c_[1:] for c_ in WRAPPERS], ids=[c_[0] for c_ in WRAPPERS])
def test_vertical_scaling_wrappers(opts: PodResourcesOptions, p: Obj, requests: Obj, limits: Obj) -> None:
    assert pod_request_amounts(p, opts) == amounts(requests)
    assert pod_limit_amounts(p, opts) == amounts(limits)


# --- what NodeInfo, Filter and scoring count ------------------------------------------------------

MI = 1024 * 1024

# (name, pod, NodeInfo's requested cpu/memory, its non-zero cpu/memory, scoring's non-zero cpu/memory)
NODE_COUNTS = [
    ("no requests: defaults for each container", pod([c("a"), c("b")]), (0, 0), (200, 400 * MI), (200, 400 * MI)),
    (
        "pod-level cpu and memory: no defaults",
        pod([c("a")], resources=plr(one("2", "1Gi"))),
        (2000, 1024 * MI),
        (2000, 1024 * MI),
        (2000, 1024 * MI),
    ),
    (
        # NodeInfo: memory is named nowhere, so each container gets the default; cpu is the pod's.
        "pod-level cpu only: memory defaults per container",
        pod([c("a"), c("b")], resources=plr(one("3"))),
        (3000, 0),
        (3000, 400 * MI),
        (3000, 400 * MI),
    ),
    (
        # A container names memory (even a little): NodeInfo adds no default for it; scoring adds
        # the default to the container that does not.
        "pod-level cpu, one container names memory",
        pod([c("a", one(memory="10Mi")), c("b")], resources=plr(one("3"))),
        (3000, 10 * MI),
        (3000, 10 * MI),
        (3000, 210 * MI),
    ),
    (
        "resize in flight: the larger of spec and allocation",
        pod([c("a", one("1", "1Gi"))], statuses=[cs("a", allocated=one("2", "512Mi"), req=one("2", "512Mi"))]),
        (2000, 1024 * MI),
        (2000, 1024 * MI),
        (2000, 1024 * MI),
    ),
]


@pytest.mark.parametrize(
    "p, requested, non_zero, score_non_zero", [c_[1:] for c_ in NODE_COUNTS], ids=[c_[0] for c_ in NODE_COUNTS]
)
def test_node_and_score_counts(
    p: Obj, requested: tuple[int, int], non_zero: tuple[int, int], score_non_zero: tuple[int, int]
) -> None:
    req, nz = node_requests(p)
    assert (req.milli_cpu, req.memory) == requested
    assert (nz.milli_cpu, nz.memory) == non_zero
    snz = score_requests(p, non_zero=True)
    assert (snz.milli_cpu, snz.memory) == score_non_zero
    pi = PodInfo(p)
    assert pi.requests == req and pi.non_zero_requests.milli_cpu == nz.milli_cpu
    assert pi.score_requests(non_zero=True) == snz


def test_filter_counts_the_spec_not_the_status() -> None:
    # A pending pod has nothing allocated: Filter checks the spec (upstream's PreFilter passes no
    # UseStatusResources), NodeInfo the larger of spec and status.
    p = pod([c("a", one("1"))], statuses=[cs("a", allocated=one("3"))])
    assert fit_requests(p).milli_cpu == 1000
    assert node_requests(p)[0].milli_cpu == 3000
    assert PodInfo(p).fit_requests().milli_cpu == 1000


LEVEL = pod([c("a", one("1m"))], resources=plr(one("3")))
LEVEL_RESIZED = pod(
    [c("a", one("1m"))], resources=plr(one("3")), allocated=one("5"), status_resources={"requests": one("4")}
)


@pytest.mark.parametrize(
    "gates, p, node_cpu, fit_cpu",
    [
        (None, LEVEL, 3000, 3000),
        ({"PodLevelResources": False}, LEVEL, 1, 1),
        (None, LEVEL_RESIZED, 5000, 3000),
        ({"InPlacePodLevelResourcesVerticalScaling": False}, LEVEL_RESIZED, 3000, 3000),
        # The pod-level status is the kubelet's aggregate: it counts whatever spec.resources says.
        ({"PodLevelResources": False}, LEVEL_RESIZED, 5000, 1),
    ],
    ids=[
        "default",
        "PodLevelResources off",
        "pod-level resize",
        "pod-level resize off",
        "PodLevelResources off, resized",
    ],
)
def test_feature_gates(gates: dict[str, bool] | None, p: Obj, node_cpu: int, fit_cpu: int) -> None:
    counting = Counting.of(FeatureGates(gates) if gates else None)
    assert node_requests(p, counting)[0].milli_cpu == node_cpu
    assert fit_requests(p, counting).milli_cpu == fit_cpu
    pi = PodInfo(p, counting)
    ni = NodeInfo()
    ni.add_pod(pi)
    assert ni.requested.milli_cpu == node_cpu
    assert ni.remove_pod(pi) and ni.requested.milli_cpu == 0 and ni.non_zero_requested.milli_cpu == 0


def test_in_place_pod_vertical_scaling_is_locked_on() -> None:
    with pytest.raises(Exception, match="InPlacePodVerticalScaling"):
        FeatureGates({"InPlacePodVerticalScaling": False})
    assert Counting.of(FeatureGates()) == DEFAULT_COUNTING


def test_rebased_pod_info_follows_a_resize() -> None:
    p = pod([c("a", one("1"))], statuses=[cs("a", allocated=one("1"))])
    p["spec"]["nodeName"] = "n1"
    pi = PodInfo(p)
    same = {**p, "metadata": {**p["metadata"], "resourceVersion": "2"}}
    assert pi.rebased(same) is not None
    resized = {**p, "status": {"containerStatuses": [cs("a", allocated=one("2"))]}}
    assert pi.rebased(resized) is None
    assert PodInfo(resized).requests.milli_cpu == 2000


@pytest.mark.parametrize(
    "p, field",
    [
        (
            pod([c("a", one("1"))], statuses=[cs("a", allocated={"cpu": "lots"})]),
            "status.containerStatuses[0].allocatedResources[cpu]",
        ),
        (pod([c("a", one("1"))], resources=plr({"memory": "much"})), "spec.resources.requests[memory]"),
        (pod([c("a", one("1"))], allocated={"cpu": "x"}, resources=plr(one("1"))), "status.allocatedResources[cpu]"),
        (pod([c("a", one("1"))], resources=["cpu"]), "spec.resources: must be a mapping"),  # type: ignore[arg-type]
    ],
)
def test_bad_input_names_the_field(p: Obj, field: str) -> None:
    with pytest.raises(PodSpecError, match=rf"pod default/p: {re.escape(field)}"):
        PodInfo(p)


# --- the UpdatePodScaleDown event -----------------------------------------------------------------

SCALE = [
    ("spec request lowered", pod([c("a", one("2"))]), pod([c("a", one("1"))]), True),
    ("spec request raised", pod([c("a", one("1"))]), pod([c("a", one("2"))]), False),
    ("a request dropped", pod([c("a", one("1", "1Gi"))]), pod([c("a", one("1"))]), True),
    ("image changed", pod([c("a", one("1"))]), pod([{**c("a", one("1")), "image": "other"}]), False),
    (
        "spec lowered, allocation not yet",
        pod([c("a", one("2"))], statuses=[cs("a", allocated=one("2"))]),
        pod([c("a", one("1"))], statuses=[cs("a", allocated=one("2"))]),
        False,
    ),
    (
        "allocation lowered to the spec",
        pod([c("a", one("1"))], statuses=[cs("a", allocated=one("2"))]),
        pod([c("a", one("1"))], statuses=[cs("a", allocated=one("1"))]),
        True,
    ),
    (
        "pod-level request lowered",
        pod([c("a", one("1m"))], resources=plr(one("3"))),
        pod([c("a", one("1m"))], resources=plr(one("2"))),
        True,
    ),
    ("labels only", pod([c("a", one("1"))]), pod([c("a", one("1"))]), False),
]


@pytest.mark.parametrize("old, new, want", [c_[1:] for c_ in SCALE], ids=[c_[0] for c_ in SCALE])
def test_scale_down_event(old: Obj, new: Obj, want: bool) -> None:
    new["metadata"]["labels"] = {"changed": "yes"}
    actions = pod_update_actions(old, new)
    assert bool(actions & ActionType.UPDATE_POD_SCALE_DOWN) is want
    assert bool(actions & ActionType.UPDATE_POD_LABEL)
