"""Pod resources as kube-apiserver v1.37 serves them, over real HTTP: pod-level ``spec.resources``
(defaulted and validated as upstream), the ``pods/resize`` subresource (in-place resize of
containers and of the pod level) and the resize fields of the status
(``containerStatuses[].allocatedResources`` and ``.resources``)."""

from __future__ import annotations

import json
from typing import Any

import aiohttp
import pytest

from kubesched.sim.apiserver.server import APIServer
from kubesched.sim.apiserver.validation.resources import qos_class, quantity_string

Obj = dict[str, Any]
PODS = "/api/v1/namespaces/default/pods"
MERGE = "application/merge-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"


async def send(
    server: APIServer, method: str, path: str, body: Any, ctype: str = "application/json"
) -> tuple[int, Obj]:
    async with (
        aiohttp.ClientSession() as s,
        s.request(method, server.url + path, data=json.dumps(body), headers={"Content-Type": ctype}) as r,
    ):
        return r.status, await r.json(content_type=None)


def res(requests: Obj | None = None, limits: Obj | None = None) -> Obj:
    out: Obj = {}
    if requests is not None:
        out["requests"] = requests
    if limits is not None:
        out["limits"] = limits
    return out


def pod(pod_level: Obj | None = None, *containers: Obj, init: list[Obj] | None = None) -> Obj:
    spec: Obj = {
        "containers": [
            {"name": f"c{i}", "image": "registry.k8s.io/pause:3.10", "resources": r} for i, r in enumerate(containers)
        ]
        or [{"name": "c0", "image": "registry.k8s.io/pause:3.10"}]
    }
    if init:
        spec["initContainers"] = init
    if pod_level is not None:
        spec["resources"] = pod_level
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": spec}


# --- pod-level resources on create --------------------------------------------------------------

# (id, pod, expected status, message fragments (every one must appear), pod-level resources stored)
CREATE_CASES: list[tuple[str, Obj, int, list[str], Obj | None]] = [
    (
        "cpu-and-memory",
        pod(res({"cpu": "1", "memory": "1Gi"}, {"cpu": "2", "memory": "2Gi"}), res({"cpu": "500m"})),
        201,
        [],
        res({"cpu": "1", "memory": "1Gi"}, {"cpu": "2", "memory": "2Gi"}),
    ),
    (
        "hugepages-allowed",
        pod(res({"hugepages-2Mi": "4Mi", "memory": "1Gi"}, {"hugepages-2Mi": "4Mi", "memory": "1Gi"})),
        201,
        [],
        res({"hugepages-2Mi": "4Mi", "memory": "1Gi"}, {"hugepages-2Mi": "4Mi", "memory": "1Gi"}),
    ),
    (
        "requests-default-to-limits-when-no-container-asks",
        pod(res(None, {"cpu": "2", "memory": "1Gi"})),
        201,
        [],
        res({"cpu": "2", "memory": "1Gi"}, {"cpu": "2", "memory": "1Gi"}),
    ),
    (
        "requests-default-to-aggregated-container-requests",
        pod(
            res(None, {"cpu": "2", "memory": "1Gi"}),
            res({"cpu": "250m"}),
            res({"cpu": "500m"}, {"memory": "256Mi"}),
        ),
        201,
        [],
        res({"cpu": "750m", "memory": "256Mi"}, {"cpu": "2", "memory": "1Gi"}),
    ),
    (
        "extended-resource-not-supported",
        pod(res(None, {"cpu": "1", "nvidia.com/gpu": "1"})),
        422,
        [
            'spec.resources.limits[nvidia.com/gpu]: Unsupported value: "nvidia.com/gpu": '
            'supported values: "cpu", "hugepages-", "memory"'
        ],
        None,
    ),
    (
        "ephemeral-storage-not-supported",
        pod(res({"ephemeral-storage": "1Gi"})),
        422,
        ['spec.resources.requests[ephemeral-storage]: Unsupported value: "ephemeral-storage"'],
        None,
    ),
    (
        "request-over-limit",
        pod(res({"cpu": "3"}, {"cpu": "2"})),
        422,
        ['spec.resources.requests: Invalid value: "3": must be less than or equal to cpu limit of 2'],
        None,
    ),
    (
        "hugepages-request-must-equal-limit",
        pod(res({"hugepages-2Mi": "2Mi", "cpu": "1"}, {"hugepages-2Mi": "4Mi", "cpu": "1"})),
        422,
        ['spec.resources.requests: Invalid value: "2Mi": must be equal to hugepages-2Mi limit of 4Mi'],
        None,
    ),
    (
        "negative",
        pod(res({"memory": "-1Gi"})),
        422,
        ['spec.resources.requests[memory]: Invalid value: "-1Gi": must be greater than or equal to 0'],
        None,
    ),
    (
        "pod-requests-below-aggregated-container-requests",
        pod(res({"cpu": "500m"}), res({"cpu": "300m"}), res({"cpu": "300m"})),
        422,
        [
            'spec.resources.requests[cpu]: Invalid value: "500m": '
            "must be greater than or equal to aggregate container requests of 600m"
        ],
        None,
    ),
    (
        "init-container-peak-counts",
        pod(
            res({"memory": "1Gi"}),
            res({"memory": "512Mi"}),
            init=[{"name": "i", "image": "x", "resources": res({"memory": "2Gi"})}],
        ),
        422,
        ["must be greater than or equal to aggregate container requests of 2Gi"],
        None,
    ),
    (
        "sidecars-add-up",
        pod(
            res({"memory": "1Gi"}),
            res({"memory": "768Mi"}),
            init=[{"name": "s", "image": "x", "restartPolicy": "Always", "resources": res({"memory": "512Mi"})}],
        ),
        422,
        ["must be greater than or equal to aggregate container requests of 1280Mi"],
        None,
    ),
    (
        "container-limit-over-pod-limit",
        pod(res(None, {"cpu": "1"}), res(None, {"cpu": "1500m"})),
        422,
        [
            'spec.resources.containers[0][cpu].limits: Invalid value: "1500m": must be less than or equal to pod limits of 1'
        ],
        None,
    ),
    (
        "hugepages-limit-below-aggregated",
        pod(
            res({"hugepages-2Mi": "2Mi", "memory": "1Gi"}, {"hugepages-2Mi": "2Mi", "memory": "1Gi"}),
            res({"hugepages-2Mi": "4Mi"}, {"hugepages-2Mi": "4Mi"}),
        ),
        422,
        [
            'spec.resources.limits[hugepages-2Mi]: Invalid value: "2Mi": must be greater than or equal to aggregate container limits of 4Mi'
        ],
        None,
    ),
    (
        "claims-forbidden",
        pod({"requests": {"cpu": "1"}, "claims": [{"name": "gpu"}]}),
        422,
        ["spec.resources.claims: Forbidden: claims cannot be set for Resources at pod-level"],
        None,
    ),
]


@pytest.mark.parametrize(
    ("obj", "status", "fragments", "stored"), [c[1:] for c in CREATE_CASES], ids=[c[0] for c in CREATE_CASES]
)
async def test_pod_level_resources_on_create(
    server: APIServer, obj: Obj, status: int, fragments: list[str], stored: Obj | None
) -> None:
    code, body = await send(server, "POST", PODS, obj)
    assert code == status, body
    for fragment in fragments:
        assert fragment in body["message"]
    if stored is not None:
        assert body["spec"]["resources"] == stored


@pytest.mark.parametrize(
    ("spec", "qos"),
    [
        pytest.param(
            {"resources": res({"cpu": "1", "memory": "1Gi"}, {"cpu": "1", "memory": "1Gi"})},
            "Guaranteed",
            id="pod-level-guaranteed",
        ),
        pytest.param({"resources": res(None, {"cpu": "1", "memory": "1Gi"})}, "Guaranteed", id="pod-limits-only"),
        pytest.param(
            {
                "resources": res({"cpu": "1"}),
                "containers": [{"resources": res({"cpu": "1", "memory": "1"}, {"cpu": "1", "memory": "1"})}],
            },
            "Burstable",
            id="pod-level-decides-over-containers",
        ),
        pytest.param({"containers": [{"resources": res({"cpu": "1"})}]}, "Burstable", id="containers"),
        pytest.param({"containers": [{}]}, "BestEffort", id="nothing"),
    ],
)
def test_qos_class_honours_pod_level_resources(spec: Obj, qos: str) -> None:
    assert qos_class(spec) == qos


@pytest.mark.parametrize(
    ("amount", "binary", "shown"),
    [
        ("0.6", False, "600m"),
        ("2", False, "2"),
        ("1500", False, "1500"),
        ("3000", False, "3k"),
        (str(1280 * 2**20), True, "1280Mi"),
        (str(2**30), True, "1Gi"),
        ("1000", True, "1k"),
        ("1500", True, "1500"),
        ("0.0000000001", False, "1n"),
    ],
)
def test_quantity_string_as_go_writes_it(amount: str, binary: bool, shown: str) -> None:
    from fractions import Fraction

    assert quantity_string(Fraction(amount), binary) == shown


# --- pods/resize --------------------------------------------------------------------------------

BURSTABLE = pod(
    res({"cpu": "1", "memory": "1Gi"}, {"cpu": "4", "memory": "4Gi"}),
    res({"cpu": "500m", "memory": "256Mi"}, {"cpu": "1", "memory": "512Mi"}),
)

# (id, patch type, patch, expected status, message fragment, the container's resources after)
RESIZE_CASES: list[tuple[str, str, Obj, int, str, Obj | None]] = [
    (
        "container-cpu-and-memory",
        STRATEGIC,
        {"spec": {"containers": [{"name": "c0", "resources": res({"cpu": "700m", "memory": "300Mi"})}]}},
        200,
        "",
        res({"cpu": "700m", "memory": "300Mi"}, {"cpu": "1", "memory": "512Mi"}),
    ),
    (
        "other-fields-ignored",
        STRATEGIC,
        {"metadata": {"labels": {"x": "y"}}, "spec": {"containers": [{"name": "c0", "image": "other"}]}},
        200,
        "",
        res({"cpu": "500m", "memory": "256Mi"}, {"cpu": "1", "memory": "512Mi"}),
    ),
    (
        "other-resources-not-mutable",
        STRATEGIC,
        {"spec": {"containers": [{"name": "c0", "resources": res({"ephemeral-storage": "1Gi"})}]}},
        422,
        "spec: Forbidden: only cpu and memory resources are mutable",
        None,
    ),
    (
        "limits-cannot-be-removed",
        MERGE,
        {"spec": {"containers": [{"name": "c0", "resources": res({"cpu": "500m", "memory": "256Mi"}, {"cpu": "1"})}]}},
        422,
        "spec.containers[0].resources.limits: Forbidden: resource limits cannot be removed",
        None,
    ),
    (
        "qos-may-not-change",
        MERGE,
        {"spec": {"resources": res({"cpu": "4", "memory": "4Gi"}, {"cpu": "4", "memory": "4Gi"})}},
        422,
        'spec: Invalid value: "Burstable": Pod QOS Class may not change as a result of resizing',
        None,
    ),
    (
        "pod-level-cpu",
        MERGE,
        {"spec": {"resources": res({"cpu": "2", "memory": "1Gi"}, {"cpu": "8", "memory": "4Gi"})}},
        200,
        "",
        res({"cpu": "500m", "memory": "256Mi"}, {"cpu": "1", "memory": "512Mi"}),
    ),
    (
        "pod-level-limits-cannot-be-removed",
        MERGE,
        {"spec": {"resources": {"limits": {"memory": None}}}},
        422,
        "spec.resources.limits: Forbidden: pod-level resource limits cannot be removed",
        None,
    ),
    (
        "pod-level-below-containers",
        MERGE,
        {"spec": {"resources": {"requests": {"cpu": "100m"}}}},
        422,
        'spec.resources.requests[cpu]: Invalid value: "100m": must be greater than or equal to aggregate container requests of 500m',
        None,
    ),
]


@pytest.mark.parametrize(
    ("ctype", "patch", "status", "fragment", "after"), [c[1:] for c in RESIZE_CASES], ids=[c[0] for c in RESIZE_CASES]
)
async def test_resize_subresource(
    server: APIServer, ctype: str, patch: Obj, status: int, fragment: str, after: Obj | None
) -> None:
    code, created = await send(server, "POST", PODS, BURSTABLE)
    assert code == 201, created
    code, body = await send(server, "PATCH", f"{PODS}/p/resize", patch, ctype)
    assert code == status, body
    code, stored = await send(server, "GET", f"{PODS}/p", None)
    if status != 200:
        assert fragment in body["message"]
        assert stored["spec"] == created["spec"]  # nothing changed
        return
    assert stored["spec"]["containers"][0]["resources"] == after
    assert stored["spec"]["containers"][0]["image"] == "registry.k8s.io/pause:3.10"
    assert "labels" not in stored["metadata"]
    if "resources" in patch["spec"]:
        assert stored["spec"]["resources"]["limits"]["cpu"] == patch["spec"]["resources"]["limits"]["cpu"]


async def test_resize_is_served_and_discovered(server: APIServer) -> None:
    await send(server, "POST", PODS, BURSTABLE)
    code, got = await send(server, "GET", f"{PODS}/p/resize", None)
    assert code == 200 and got["kind"] == "Pod" and got["metadata"]["name"] == "p"
    code, doc = await send(server, "GET", "/api/v1", None)
    resize = next(r for r in doc["resources"] if r["name"] == "pods/resize")
    assert resize["kind"] == "Pod" and sorted(resize["verbs"]) == ["get", "patch", "update"]
    # a main-resource update of a bound pod may still not touch resources
    code, bound = await send(
        server, "POST", f"{PODS}/p/binding", {"target": {"kind": "Node", "name": "n1"}, "metadata": {"name": "p"}}
    )
    assert code == 201, bound
    code, body = await send(
        server,
        "PATCH",
        f"{PODS}/p",
        {"spec": {"containers": [{"name": "c0", "resources": res({"cpu": "600m"})}]}},
        STRATEGIC,
    )
    assert code == 422 and "pod updates may not change fields" in body["message"]
    code, body = await send(
        server,
        "PATCH",
        f"{PODS}/p/resize",
        {"spec": {"containers": [{"name": "c0", "resources": res({"cpu": "600m"})}]}},
        STRATEGIC,
    )
    assert code == 200, body
    assert body["spec"]["containers"][0]["resources"]["requests"]["cpu"] == "600m"
    assert body["spec"]["nodeName"] == "n1"


async def test_status_carries_allocated_and_actual_resources(server: APIServer) -> None:
    await send(server, "POST", PODS, BURSTABLE)
    status = {
        "status": {
            "containerStatuses": [
                {
                    "name": "c0",
                    "image": "registry.k8s.io/pause:3.10",
                    "imageID": "",
                    "ready": True,
                    "restartCount": 0,
                    "allocatedResources": {"cpu": "500m", "memory": "256Mi"},
                    "resources": res({"cpu": "500m", "memory": "256Mi"}, {"cpu": "1", "memory": "512Mi"}),
                }
            ]
        }
    }
    code, body = await send(server, "PATCH", f"{PODS}/p/status", status, MERGE)
    assert code == 200, body
    got = body["status"]["containerStatuses"][0]
    assert got["allocatedResources"] == {"cpu": "500m", "memory": "256Mi"}
    assert got["resources"]["limits"]["memory"] == "512Mi"
    bad = {"status": {"containerStatuses": [{"name": "c0", "allocatedResources": {"cpu": "lots"}}]}}
    code, body = await send(server, "PATCH", f"{PODS}/p/status", bad, MERGE)
    assert code == 400 and "quantities must match" in body["message"]
    typo = {"status": {"containerStatuses": [{"name": "c0", "allocatedResource": {"cpu": "1"}}]}}
    code, body = await send(server, "PATCH", f"{PODS}/p/status?fieldValidation=Strict", typo, MERGE)
    assert code == 400 and 'unknown field "status.containerStatuses[0].allocatedResource"' in body["message"]


# --- upstream's pod resize error table (test/e2e/common/node/pod_resize.go, doPodResizeErrorTests) ---

CPU, CPU_LIMIT, MEM, MEM_LIMIT = "20m", "30m", "20Mi", "30Mi"


def resizable(*containers: tuple[str, Obj]) -> Obj:
    obj = pod()
    obj["spec"]["containers"] = [
        {"name": name, "image": "registry.k8s.io/pause:3.10", "resources": r} for name, r in containers
    ]
    return obj


BOTH = res({"cpu": CPU, "memory": MEM}, {"cpu": CPU_LIMIT, "memory": MEM_LIMIT})

# (id, the pod's containers, strategic merge patch, the error's text). This server's strategic
# merge keeps a list in its stored order, where upstream's follows the patch's: the reordering
# case is sent as a merge patch, whose list replaces the stored one in the order it gives.
E2E_RESIZE_ERRORS: list[tuple[str, list[tuple[str, Obj]], Obj, str]] = [
    (
        "best-effort-requesting-memory",
        [("c1", {})],
        {"spec": {"containers": [{"name": "c1", "resources": {"requests": {"memory": "40Mi"}}}]}},
        "Pod QOS Class may not change as a result of resizing",
    ),
    (
        "remove-memory-limits",
        [("c1", BOTH)],
        {"spec": {"containers": [{"name": "c1", "resources": {"limits": {"memory": None}}}]}},
        "resource limits cannot be removed",
    ),
    (
        "remove-cpu-limits",
        [("c1", BOTH)],
        {"spec": {"containers": [{"name": "c1", "resources": {"limits": {"cpu": None}}}]}},
        "resource limits cannot be removed",
    ),
    (
        "remove-cpu-requests",
        [("c1", res({"cpu": CPU, "memory": MEM}, {"memory": MEM_LIMIT}))],
        {"spec": {"containers": [{"name": "c1", "resources": {"requests": {"cpu": None}}}]}},
        "resource requests cannot be removed",
    ),
    (
        "remove-memory-requests",
        [("c1", res({"cpu": CPU, "memory": MEM}, {"cpu": CPU_LIMIT}))],
        {"spec": {"containers": [{"name": "c1", "resources": {"requests": {"memory": None}}}]}},
        "resource requests cannot be removed",
    ),
    (
        "reorder-containers",
        [("c1", BOTH), ("c2", BOTH)],
        {"spec": {"containers": [{"name": "c2", "resources": BOTH}, {"name": "c1", "resources": BOTH}]}},
        "spec.containers[0].name: Forbidden: containers may not be renamed or reordered on resize, "
        "spec.containers[1].name: Forbidden: containers may not be renamed or reordered on resize",
    ),
]


@pytest.mark.parametrize(
    ("containers", "patch", "error"), [c[1:] for c in E2E_RESIZE_ERRORS], ids=[c[0] for c in E2E_RESIZE_ERRORS]
)
async def test_upstream_resize_errors(
    server: APIServer, containers: list[tuple[str, Obj]], patch: Obj, error: str
) -> None:
    code, created = await send(server, "POST", PODS, resizable(*containers))
    assert code == 201, created
    ctype = MERGE if "reordered" in error else STRATEGIC
    code, body = await send(server, "PATCH", f"{PODS}/p/resize", patch, ctype)
    assert code == 422 and error in body["message"], body
    code, stored = await send(server, "GET", f"{PODS}/p", None)
    assert [c["resources"] for c in stored["spec"]["containers"]] == [
        c["resources"] for c in created["spec"]["containers"]
    ]
