"""DynamicResources: upstream's plugin test table (dynamicresources_test.go) transcribed to the
resource.k8s.io/v1 objects, run through kubesched.testing; messages are upstream's."""

from __future__ import annotations

import asyncio
import copy
import inspect
from types import SimpleNamespace
from typing import Any

import pytest

from kubesched.cluster.memory import InMemoryCluster
from kubesched.cluster.store import Store
from kubesched.framework.interface import CycleState
from kubesched.framework.status import Code, Status
from kubesched.plugins.dynamicresources.dynamic_resources import (
    DynamicResources,
    DynamicResourcesArgs,
    duration_seconds,
)
from kubesched.testing import make_node
from kubesched.testing.harness import ObjectListers, as_node_infos, as_pod_info

Obj = dict[str, Any]
POD_UID = "1234"
CLAIM = "my-pod-my-resource"
CLASS = "my-resource-class"


def pod(template: bool = False, in_status: bool = True) -> Obj:
    entry = {"name": "my-resource", ("resourceClaimTemplateName" if template else "resourceClaimName"): CLAIM}
    p: Obj = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "my-pod", "namespace": "default", "uid": POD_UID},
        "spec": {"containers": [{"name": "c", "image": "pause"}], "resourceClaims": [entry]},
    }
    if template and in_status:
        p["status"] = {"resourceClaimStatuses": [{"name": "my-resource", "resourceClaimName": CLAIM}]}
    return p


def claim(name: str = CLAIM, selector: str | None = None, **status: Any) -> Obj:
    exactly: Obj = {"deviceClassName": CLASS}
    if selector:
        exactly["selectors"] = [{"cel": {"expression": selector}}]
    c: Obj = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {
            "name": name,
            "namespace": "default",
            "uid": f"uid-{name}",
            "resourceVersion": "1",
            "ownerReferences": [
                {"apiVersion": "v1", "kind": "Pod", "name": "my-pod", "uid": POD_UID, "controller": True}
            ],
        },
        "spec": {"devices": {"requests": [{"name": "req-1", "exactly": exactly}]}},
    }
    if status:
        c["status"] = status
    return c


def allocated(c: Obj, node_selector: Obj | None = None) -> Obj:
    c = copy.deepcopy(c)
    alloc: Obj = {
        "devices": {
            "results": [{"request": "req-1", "driver": "some-driver", "pool": "worker", "device": "instance-1"}]
        }
    }
    if node_selector:
        alloc["nodeSelector"] = node_selector
    c.setdefault("status", {})["allocation"] = alloc
    return c


DEVICE_CLASS = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": CLASS}, "spec": {}}
SLICE = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "ResourceSlice",
    "metadata": {"name": "worker-some-driver"},
    "spec": {
        "driver": "some-driver",
        "nodeName": "worker",
        "pool": {"name": "worker", "generation": 1, "resourceSliceCount": 1},
        "devices": [{"name": "instance-1", "attributes": {"model": {"string": "a"}}}],
    },
}
WORKER = make_node("worker").label("kubernetes.io/hostname", "worker").capacity(cpu="4", memory="4Gi", pods="10")
WRONG_TOPOLOGY = {
    "nodeSelectorTerms": [{"matchExpressions": [{"key": "no-such-label", "operator": "In", "values": ["x"]}]}]
}


def run(p: Obj, objects: list[Obj], filter_timeout: float | None = None) -> dict[str, Any]:
    """PreEnqueue, PreFilter, Filter on worker, then PostFilter (if rejected) or Reserve and PreBind,
    over an in-memory cluster holding ``objects``; what each said and the claims afterwards.
    ``filter_timeout``: the plugin's, in seconds (a negative one has run out before Filter starts)."""
    store = Store()
    for o in objects:
        store.create(o["kind"], copy.deepcopy(o))
    cluster = InMemoryCluster(store)
    infos = as_node_infos([WORKER])
    listed = [o for kind in ("ResourceClaim", "DeviceClass", "ResourceSlice") for o in store.list(kind)[0]]
    plugin = DynamicResources(None, SimpleNamespace(listers=ObjectListers(listed), cluster=cluster))
    if filter_timeout is not None:
        plugin.filter_timeout = filter_timeout
    pi = as_pod_info(p)
    out: dict[str, Any] = {"preEnqueue": plugin.pre_enqueue(pi)}
    if out["preEnqueue"] is not None:
        return out
    state = CycleState()
    out["preFilter"] = plugin.pre_filter(state, pi)
    if out["preFilter"] is None:
        out["filter"] = plugin.filter(state, pi, infos[0])
    if out["preFilter"] is not None or out["filter"] is not None:
        _, out["postFilter"] = awaited(plugin.post_filter(state, pi, {}))
    else:
        out["reserve"] = plugin.reserve(state, pi, "worker")
        out["preBind"] = awaited(plugin.pre_bind(state, pi, "worker"))
    out["claims"] = {c["metadata"]["name"]: c for c in store.list("ResourceClaim", "default")[0]}
    return out


def awaited(result: Any) -> Any:
    """What a method returned, awaited if it is a coroutine (the fast path answers at once)."""
    return asyncio.run(result) if inspect.isawaitable(result) else result


def said(status: Status | None) -> tuple[str, str] | None:
    return None if status is None else (status.code.name, "; ".join(status.reasons))


CASES = [
    pytest.param(
        {**pod(), "spec": {"containers": [{"name": "c", "image": "pause"}]}},
        [],
        {"preFilter": ("SKIP", ""), "postFilter": ("UNSCHEDULABLE", "")},
        id="empty",
    ),
    pytest.param(
        pod(),
        [allocated(claim()), claim("not-my-claim"), DEVICE_CLASS, SLICE],
        {"preFilter": None, "filter": None, "preBind": None},
        id="claim-reference",
    ),
    pytest.param(
        pod(template=True),
        [allocated(claim()), DEVICE_CLASS, SLICE],
        {"preFilter": None, "filter": None, "preBind": None},
        id="claim-template",
    ),
    pytest.param(
        pod(template=True, in_status=False),
        [allocated(claim())],
        {"preEnqueue": ("UNSCHEDULABLE_AND_UNRESOLVABLE", 'pod "default/my-pod": ResourceClaim not created yet')},
        id="missing-claim",
    ),
    pytest.param(
        pod(template=True),
        [
            {
                **allocated(claim()),
                "metadata": {**claim()["metadata"], "deletionTimestamp": "2024-01-01T00:00:00Z", "finalizers": ["x"]},
            }
        ],
        {"preEnqueue": ("UNSCHEDULABLE_AND_UNRESOLVABLE", 'resourceclaim "my-pod-my-resource" is being deleted')},
        id="deleted-claim",
    ),
    pytest.param(
        pod(template=True),
        [
            {
                **claim(),
                "metadata": {
                    **claim()["metadata"],
                    "ownerReferences": [
                        {"apiVersion": "v1", "kind": "Pod", "name": "my-pod", "uid": "1234123", "controller": True}
                    ],
                },
            }
        ],
        {
            "preEnqueue": (
                "UNSCHEDULABLE_AND_UNRESOLVABLE",
                "ResourceClaim default/my-pod-my-resource was not created for pod default/my-pod (pod is not owner)",
            )
        },
        id="wrong-claim",
    ),
    pytest.param(
        pod(),
        [claim(), DEVICE_CLASS],
        {
            "preFilter": None,
            "filter": ("UNSCHEDULABLE_AND_UNRESOLVABLE", "cannot allocate all claims"),
            "postFilter": ("UNSCHEDULABLE", "still not schedulable"),
        },
        id="structured-no-resources",
    ),
    pytest.param(
        pod(),
        [claim(), DEVICE_CLASS, SLICE],
        {"preFilter": None, "filter": None, "reserve": None, "preBind": None},
        id="structured-with-resources",
    ),
    pytest.param(
        pod(),
        [claim(), allocated(claim("other")), DEVICE_CLASS, SLICE],
        {
            "filter": ("UNSCHEDULABLE_AND_UNRESOLVABLE", "cannot allocate all claims"),
            "postFilter": ("UNSCHEDULABLE", "still not schedulable"),
        },
        id="structured-exhausted-resources",
    ),
    pytest.param(
        pod(),
        [claim(), SLICE],
        {
            "preFilter": (
                "UNSCHEDULABLE_AND_UNRESOLVABLE",
                "request req-1: device class my-resource-class does not exist",
            ),
            "postFilter": ("UNSCHEDULABLE", "no new claims to deallocate"),
        },
        id="missing-class",
    ),
    pytest.param(
        pod(),
        [claim(selector='device.attributes["some-driver"].noSuchAttribute == "x"'), DEVICE_CLASS, SLICE],
        {
            "filter": (
                "ERROR",
                "claim default/my-pod-my-resource: selector #0 on device some-driver/worker/instance-1: CEL runtime error: no such key: noSuchAttribute",
            )
        },
        id="claim-CEL-runtime-error",
    ),
    pytest.param(
        pod(),
        [claim(), {**DEVICE_CLASS, "spec": {"selectors": [{"cel": {"expression": "device.driver =="}}]}}, SLICE],
        {"filter": ("ERROR", "class my-resource-class: selector #0: CEL compile error: ")},
        id="class-CEL-compile-error",
    ),
    pytest.param(
        pod(),
        [allocated(claim(), WRONG_TOPOLOGY), DEVICE_CLASS, SLICE],
        {
            "filter": ("UNSCHEDULABLE_AND_UNRESOLVABLE", "resourceclaim not available on the node"),
            "postFilter": ("UNSCHEDULABLE", "deallocation of ResourceClaim completed"),
        },
        id="wrong-topology-deallocated",
    ),
    pytest.param(
        pod(),
        [
            allocated(claim(reservedFor=[{"resource": "pods", "name": f"p{i}", "uid": f"u{i}"} for i in range(256)])),
            DEVICE_CLASS,
        ],
        {"preFilter": ("UNSCHEDULABLE_AND_UNRESOLVABLE", "resourceclaim in use")},
        id="claim-in-use",
    ),
]


@pytest.mark.parametrize(("p", "objects", "want"), CASES)
def test_plugin_table(p: Obj, objects: list[Obj], want: dict[str, Any]) -> None:
    got = run(p, objects)
    for point, expected in want.items():
        status = said(got.get(point))
        if expected is not None and expected[1].endswith(": "):
            assert status is not None and status[0] == expected[0] and status[1].startswith(expected[1]), (
                point,
                status,
            )
        else:
            assert status == expected, (point, status)


def test_prebind_writes_the_allocation_and_the_reservation() -> None:
    got = run(pod(), [claim(), DEVICE_CLASS, SLICE])
    written = got["claims"][CLAIM]
    assert written["status"]["allocation"]["devices"]["results"] == [
        {"request": "req-1", "driver": "some-driver", "pool": "worker", "device": "instance-1"}
    ]
    assert written["status"]["allocation"]["nodeSelector"]["nodeSelectorTerms"][0]["matchFields"][0]["values"] == [
        "worker"
    ]
    assert written["status"]["reservedFor"] == [{"resource": "pods", "name": "my-pod", "uid": POD_UID}]
    assert "resource.kubernetes.io/delete-protection" in written["metadata"]["finalizers"]


def test_deallocation_clears_the_claim() -> None:
    got = run(pod(), [allocated(claim(), WRONG_TOPOLOGY), DEVICE_CLASS, SLICE])
    assert "allocation" not in got["claims"][CLAIM].get("status", {})


def test_a_pod_without_claims_is_skipped_at_once() -> None:
    plugin = DynamicResources(None, None)  # no handle: nothing may be looked up
    pi = as_pod_info({"metadata": {"name": "p", "namespace": "default"}, "spec": {"containers": [{"name": "c"}]}})
    assert plugin.pre_enqueue(pi) is None
    status = plugin.pre_filter(CycleState(), pi)
    assert status is not None and status.code is Code.SKIP


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("10s", 10.0), ("1m30s", 90.0), ("1.5h", 5400.0), ("250ms", 0.25), ("0", 0.0)],
    ids=["seconds", "minutes-and-seconds", "fractional-hours", "milliseconds", "zero"],
)
def test_filter_timeout_durations(text: str, seconds: float) -> None:
    assert duration_seconds(text) == pytest.approx(seconds)
    plugin = DynamicResources(DynamicResourcesArgs(filterTimeout=text), None)
    assert plugin.filter_timeout == (pytest.approx(seconds) if seconds else None)  # 0: no limit


def test_a_search_past_the_filter_timeout_ends_the_attempt_with_an_error() -> None:
    """Upstream 1.37: Filter's allocation runs under filterTimeout; past it the attempt ends
    with an Error naming the node (a timeout may be transient: the pod backs off and retries
    instead of waiting for a cluster event), and PostFilter does not run."""
    got = run(pod(), [claim(), DEVICE_CLASS, SLICE], filter_timeout=-1.0)
    assert said(got["filter"]) == ("ERROR", "node worker: timed out trying to allocate devices")
    assert run(pod(), [claim(), DEVICE_CLASS, SLICE], filter_timeout=10.0)["filter"] is None


def first_available(*subrequests: tuple[str, int, str], constraint: str | None = None) -> Obj:
    """The claim with one request ``gpus`` whose alternatives are ``(name, count, model)``."""
    c = claim()
    c["spec"]["devices"]["requests"] = [
        {
            "name": "gpus",
            "firstAvailable": [
                {
                    "name": name,
                    "deviceClassName": CLASS,
                    "count": count,
                    "selectors": [{"cel": {"expression": f'device.attributes["some-driver"].model == "{model}"'}}],
                }
                for name, count, model in subrequests
            ],
        }
    ]
    if constraint:
        c["spec"]["devices"]["constraints"] = [{"requests": [constraint], "matchAttribute": "some-driver/numa"}]
    return c


def slice_of(*devices: tuple[str, str, int]) -> Obj:
    """SLICE with devices ``(name, model, numa node)``."""
    s = copy.deepcopy(SLICE)
    s["spec"]["devices"] = [
        {"name": name, "attributes": {"model": {"string": model}, "numa": {"int": numa}}}
        for name, model, numa in devices
    ]
    return s


def results(got: dict[str, Any]) -> list[tuple[str, str]]:
    written = got["claims"][CLAIM]["status"]["allocation"]["devices"]["results"]
    return [(r["request"], r["device"]) for r in written]


@pytest.mark.parametrize(
    ("subrequests", "devices", "constraint", "want"),
    [
        pytest.param(
            [("big", 2, "h100"), ("small", 1, "a100")],
            [("g0", "h100", 0), ("g1", "h100", 0), ("g2", "a100", 0)],
            None,
            [("gpus/big", "g0"), ("gpus/big", "g1")],
            id="first-alternative-met",
        ),
        pytest.param(
            [("big", 2, "h100"), ("small", 1, "a100")],
            [("g0", "h100", 0), ("g2", "a100", 0)],
            None,
            [("gpus/small", "g2")],
            id="falls-back-to-the-second",
        ),
        pytest.param(
            [("big", 2, "h100"), ("small", 1, "a100")],
            [("g0", "h100", 0), ("g1", "h100", 1), ("g2", "a100", 0)],
            "gpus",
            [("gpus/small", "g2")],
            id="a-constraint-on-the-request-binds-its-subrequests",
        ),
        pytest.param(
            [("big", 2, "h100"), ("small", 1, "a100")],
            [("g0", "h100", 0), ("g1", "h100", 1), ("g2", "a100", 0)],
            "gpus/small",
            [("gpus/big", "g0"), ("gpus/big", "g1")],
            id="a-constraint-on-another-subrequest-does-not",
        ),
    ],
)
def test_first_available_takes_the_first_alternative_that_fits(
    subrequests: list[tuple[str, int, str]], devices: list[tuple[str, str, int]], constraint: str | None, want: Any
) -> None:
    """Upstream's prioritized list (DRAPrioritizedList, on by default since 1.34): the first
    subrequest that can be met is allocated, results named request/subrequest; a matchAttribute
    constraint naming the request holds for whichever subrequest is taken."""
    got = run(pod(), [first_available(*subrequests, constraint=constraint), DEVICE_CLASS, slice_of(*devices)])
    assert got["filter"] is None and got["preBind"] is None
    assert results(got) == want


def test_first_available_with_no_alternative_met_cannot_allocate() -> None:
    got = run(
        pod(), [first_available(("big", 2, "h100"), ("small", 1, "a100")), DEVICE_CLASS, slice_of(("g0", "h100", 0))]
    )
    assert said(got["filter"]) == ("UNSCHEDULABLE_AND_UNRESOLVABLE", "cannot allocate all claims")


def test_a_subrequest_naming_a_missing_class_is_reported_with_its_full_name() -> None:
    c = first_available(("big", 2, "h100"))
    c["spec"]["devices"]["requests"][0]["firstAvailable"].append({"name": "small", "deviceClassName": "nope"})
    got = run(pod(), [c, DEVICE_CLASS, slice_of(("g0", "h100", 0))])
    assert said(got["preFilter"]) == (
        "UNSCHEDULABLE_AND_UNRESOLVABLE",
        "request gpus/small: device class nope does not exist",
    )
