"""resource.k8s.io/v1 as kube-apiserver v1.37 serves it, over real HTTP: the DeviceTaintRule kind
(CRUD, watch, status, discovery, OpenAPI), the 1.37 fields of ResourceSlice, ResourceClaim and
DeviceClass validated as upstream validates them, and Node ``status.declaredFeatures``."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import aiohttp
import pytest

from kubesched.sim.apiserver.server import APIServer
from kubesched.sim.scenario.reading import ScenarioError, parse_scenario

Obj = dict[str, Any]
GROUP = "/apis/resource.k8s.io/v1"
RULES = f"{GROUP}/devicetaintrules"
SLICES = f"{GROUP}/resourceslices"
CLAIMS = f"{GROUP}/namespaces/default/resourceclaims"
CLASSES = f"{GROUP}/deviceclasses"
MERGE = "application/merge-patch+json"


async def send(
    server: APIServer, method: str, path: str, body: Any = None, ctype: str = "application/json", accept: str = ""
) -> tuple[int, Obj]:
    headers = {"Content-Type": ctype, **({"Accept": accept} if accept else {})}
    data = None if body is None else json.dumps(body)
    async with aiohttp.ClientSession() as s, s.request(method, server.url + path, data=data, headers=headers) as r:
        return r.status, await r.json(content_type=None)


def rule(name: str = "r", effect: str = "NoSchedule", **selector: str) -> Obj:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceTaintRule",
        "metadata": {"name": name},
        "spec": {
            "deviceSelector": selector or {"driver": "gpu.example.com"},
            "taint": {"key": "example.com/broken", "value": "fan", "effect": effect},
        },
    }


def slice_(**spec: Any) -> Obj:
    base: Obj = {
        "driver": "gpu.example.com",
        "pool": {"name": "node-1", "generation": 1, "resourceSliceCount": 1},
        "nodeName": "node-1",
    }
    base.update(spec)
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"}, "spec": base}


def device(name: str = "gpu-0", **fields: Any) -> Obj:
    return {"name": name, **fields}


def claim(*requests: Obj) -> Obj:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "c"},
        "spec": {"devices": {"requests": list(requests)}},
    }


def exact(name: str = "gpu", **fields: Any) -> Obj:
    return {"name": name, "exactly": {"deviceClassName": "gpu.example.com", **fields}}


# --- DeviceTaintRule ----------------------------------------------------------------------------


async def test_device_taint_rule_crud_watch_and_status(server: APIServer) -> None:
    code, created = await send(server, "POST", RULES, rule())
    assert code == 201, created
    assert created["apiVersion"] == "resource.k8s.io/v1" and created["kind"] == "DeviceTaintRule"
    added = created["spec"]["taint"]["timeAdded"]
    assert added and created["metadata"]["generation"] == 1

    async with aiohttp.ClientSession() as s, s.get(f"{server.url}{RULES}?watch=1&resourceVersion=0") as watch:
        first = json.loads(await asyncio.wait_for(watch.content.readline(), 5))
    assert first["type"] == "ADDED" and first["object"]["metadata"]["name"] == "r"

    code, listed = await send(server, "GET", RULES)
    assert (
        code == 200
        and listed["kind"] == "DeviceTaintRuleList"
        and [i["metadata"]["name"] for i in listed["items"]] == ["r"]
    )

    # a new value keeps the time; a new effect takes a new one; the generation follows the spec
    await asyncio.sleep(1.1)
    code, same_effect = await send(server, "PATCH", f"{RULES}/r", {"spec": {"taint": {"value": "psu"}}}, MERGE)
    assert code == 200, same_effect
    assert same_effect["spec"]["taint"]["timeAdded"] == added and same_effect["metadata"]["generation"] == 2
    code, new_effect = await send(server, "PATCH", f"{RULES}/r", {"spec": {"taint": {"effect": "NoExecute"}}}, MERGE)
    assert code == 200 and new_effect["spec"]["taint"]["timeAdded"] != added

    condition = {
        "type": "EvictionInProgress",
        "status": "False",
        "reason": "NoPods",
        "message": "0 pods to evict",
        "lastTransitionTime": "2026-09-01T00:00:00Z",
    }
    code, body = await send(server, "PATCH", f"{RULES}/r", {"status": {"conditions": [condition]}}, MERGE)
    assert code == 200 and not body.get("status"), "the main resource ignores the status"
    code, body = await send(server, "PATCH", f"{RULES}/r/status", {"status": {"conditions": [condition]}}, MERGE)
    assert code == 200 and body["status"]["conditions"][0]["type"] == "EvictionInProgress"
    too_many = [dict(condition, type=f"T{i}") for i in range(9)]
    code, body = await send(server, "PATCH", f"{RULES}/r/status", {"status": {"conditions": too_many}}, MERGE)
    assert code == 422 and "status.conditions: Too many: 9: must have at most 8 items" in body["message"]

    code, _ = await send(server, "DELETE", f"{RULES}/r")
    assert code == 200
    code, body = await send(server, "GET", f"{RULES}/r")
    assert code == 404 and body["message"] == 'devicetaintrules.resource.k8s.io "r" not found'


RULE_CASES = [
    pytest.param(
        rule(effect="PreferNoSchedule"),
        'spec.taint.effect: Unsupported value: "PreferNoSchedule": supported values: "NoExecute", "NoSchedule", "None"',
        id="effect-prefer-no-schedule",
    ),
    pytest.param(
        {**rule(), "spec": {"taint": {"effect": "None"}}},
        'spec.taint.key: Invalid value: "": name part must be non-empty',
        id="key-required",
    ),
    pytest.param(
        {**rule(), "spec": {"taint": {"key": "k"}}}, "spec.taint.effect: Required value", id="effect-required"
    ),
    pytest.param(
        rule(driver="Not_A_Driver!"), 'spec.deviceSelector.driver: Invalid value: "Not_A_Driver!"', id="bad-driver"
    ),
    pytest.param(rule(pool="a/B"), 'spec.deviceSelector.pool: Invalid value: "B"', id="bad-pool-part"),
    pytest.param(rule(device="gpu.0"), 'spec.deviceSelector.device: Invalid value: "gpu.0"', id="device-is-a-label"),
    pytest.param(
        {**rule(), "spec": {**rule()["spec"], "deviceSelector": {"deviceClassName": "x"}}},
        'unknown field "spec.deviceSelector.deviceClassName"',
        id="tombstoned-class-selector",
    ),
]


@pytest.mark.parametrize(("obj", "fragment"), RULE_CASES)
async def test_device_taint_rule_validation(server: APIServer, obj: Obj, fragment: str) -> None:
    code, body = await send(server, "POST", f"{RULES}?fieldValidation=Strict", obj)
    assert code in (400, 422), body
    assert fragment in body["message"]


@pytest.mark.parametrize("effect", ["None", "NoSchedule", "NoExecute"])
async def test_device_taint_rule_effects(server: APIServer, effect: str) -> None:
    code, body = await send(server, "POST", RULES, rule(effect=effect))
    assert code == 201 and body["spec"]["taint"]["effect"] == effect


async def test_device_taint_rule_discovery_and_openapi(server: APIServer) -> None:
    code, doc = await send(server, "GET", GROUP)
    entry = next(r for r in doc["resources"] if r["name"] == "devicetaintrules")
    assert entry["kind"] == "DeviceTaintRule" and entry["namespaced"] is False
    assert any(r["name"] == "devicetaintrules/status" for r in doc["resources"])
    code, agg = await send(
        server, "GET", "/apis", accept="application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
    )
    group = next(g for g in agg["items"] if g["metadata"]["name"] == "resource.k8s.io")
    resources = {r["resource"]: r for r in group["versions"][0]["resources"]}
    assert resources["devicetaintrules"]["scope"] == "Cluster"
    assert [s["subresource"] for s in resources["devicetaintrules"]["subresources"]] == ["status"]
    code, index = await send(server, "GET", "/openapi/v3")
    code, v3 = await send(server, "GET", index["paths"]["apis/resource.k8s.io/v1"]["serverRelativeURL"])
    schema = v3["components"]["schemas"]["io.k8s.api.resource.v1.DeviceTaintRule"]
    assert schema["x-kubernetes-group-version-kind"] == [
        {"group": "resource.k8s.io", "version": "v1", "kind": "DeviceTaintRule"}
    ]
    assert "/apis/resource.k8s.io/v1/devicetaintrules/{name}/status" in v3["paths"]
    assert v3["info"]["version"] == "v1.37.0-kubesched"


async def test_device_taint_rule_table(server: APIServer) -> None:
    await send(server, "POST", RULES, rule())
    code, table = await send(server, "GET", RULES, accept="application/json;as=Table;v=v1;g=meta.k8s.io")
    assert code == 200 and [c["name"] for c in table["columnDefinitions"]] == ["Name", "Created At"]
    assert table["rows"][0]["cells"][0] == "r"


# --- ResourceSlice ------------------------------------------------------------------------------

COUNTERS = [{"name": "gpu-0-counters", "counters": {"memory": {"value": "80Gi"}, "sms": {"value": "132"}}}]
PARTITION = device(
    "gpu-0-mig-1g",
    consumesCounters=[
        {"counterSet": "gpu-0-counters", "counters": {"memory": {"value": "10Gi"}, "sms": {"value": "16"}}}
    ],
    taints=[{"key": "example.com/ecc", "effect": "NoSchedule"}],
    bindingConditions=["example.com/attached"],
    bindingFailureConditions=["example.com/attach-failed"],
    bindsToNode=True,
)
SHARED = device(
    "nic-0",
    allowMultipleAllocations=True,
    capacity={
        "bandwidth": {
            "value": "100G",
            "requestPolicy": {"default": "10G", "validRange": {"min": "10G", "max": "100G", "step": "10G"}},
        }
    },
)

SLICE_CASES = [
    pytest.param(slice_(sharedCounters=COUNTERS), 201, "", id="shared-counters-alone"),
    pytest.param(slice_(devices=[PARTITION]), 201, "", id="partition-with-taints-and-binding-conditions"),
    pytest.param(slice_(devices=[SHARED]), 201, "", id="consumable-capacity"),
    pytest.param(
        slice_(sharedCounters=COUNTERS, devices=[PARTITION]),
        422,
        'spec: Invalid value: "": only one of `sharedCounters` or `devices` is allowed',
        id="counters-and-devices",
    ),
    pytest.param(
        slice_(sharedCounters=[{"name": "c"}]),
        422,
        "spec.sharedCounters[0].counters: Required value",
        id="counter-set-needs-counters",
    ),
    pytest.param(
        slice_(sharedCounters=COUNTERS * 2),
        422,
        'spec.sharedCounters[1]: Duplicate value: "gpu-0-counters"',
        id="duplicate-counter-set",
    ),
    pytest.param(
        slice_(sharedCounters=[{"name": f"c{i}", "counters": {"x": {"value": "1"}}} for i in range(9)]),
        422,
        "spec.sharedCounters: Too many: 9: must have at most 8 items",
        id="too-many-counter-sets",
    ),
    pytest.param(
        slice_(
            devices=[
                device(consumesCounters=[{"counterSet": f"s{i}", "counters": {"x": {"value": "1"}}} for i in range(3)])
            ]
        ),
        422,
        "spec.devices[0].consumesCounters: Too many: 3: must have at most 2 items",
        id="too-many-consumptions",
    ),
    pytest.param(
        slice_(devices=[device(consumesCounters=[{"counterSet": "Bad_Set", "counters": {"x": {"value": "1"}}}])]),
        422,
        'spec.devices[0].consumesCounters[0].counterSet: Invalid value: "Bad_Set"',
        id="counter-set-is-a-label",
    ),
    pytest.param(
        slice_(devices=[device(taints=[{"key": "k", "effect": "PreferNoSchedule"}])]),
        422,
        'spec.devices[0].taints[0].effect: Unsupported value: "PreferNoSchedule"',
        id="device-taint-effect",
    ),
    pytest.param(
        slice_(devices=[device(taints=[{"key": f"k{i}", "effect": "None"} for i in range(17)])]),
        422,
        "spec.devices[0].taints: Too many: 17: must have at most 16 items",
        id="too-many-taints",
    ),
    pytest.param(
        slice_(devices=[device(bindingConditions=["a"])]),
        422,
        "spec.devices[0].bindingFailureConditions: Invalid value: []string(nil): bindingFailureConditions are required to use bindingConditions",
        id="binding-conditions-need-failures",
    ),
    pytest.param(
        slice_(devices=[device(bindingConditions=["a"], bindingFailureConditions=["a"])]),
        422,
        "bindingFailureConditions must not overlap with bindingConditions",
        id="binding-conditions-overlap",
    ),
    pytest.param(
        slice_(devices=[device(bindingConditions=list("abcde"), bindingFailureConditions=["f"])]),
        422,
        "spec.devices[0].bindingConditions: Too many: 5: must have at most 4 items",
        id="too-many-binding-conditions",
    ),
    pytest.param(
        slice_(devices=[device(capacity={"mem": {"value": "1Gi", "requestPolicy": {"default": "1Gi"}}})]),
        422,
        "spec.devices[0].capacity[mem].requestPolicy: Forbidden: allowMultipleAllocations must be true",
        id="request-policy-needs-multiple-allocations",
    ),
    pytest.param(
        slice_(
            devices=[
                device(
                    allowMultipleAllocations=True,
                    capacity={
                        "mem": {"value": "4Gi", "requestPolicy": {"default": "3Gi", "validValues": ["1Gi", "2Gi"]}}
                    },
                )
            ]
        ),
        422,
        'spec.devices[0].capacity[mem].requestPolicy.validValues: Invalid value: "3Gi": default value is not valid according to the requestPolicy',
        id="default-not-a-valid-value",
    ),
    pytest.param(
        slice_(
            devices=[
                device(
                    allowMultipleAllocations=True,
                    capacity={
                        "mem": {
                            "value": "4Gi",
                            "requestPolicy": {"default": "1Gi", "validValues": ["1Gi"], "validRange": {"min": "1Gi"}},
                        }
                    },
                )
            ]
        ),
        422,
        'Forbidden: exactly one policy can be specified, cannot specify "validValues" and "validRange" at the same time',
        id="values-and-range",
    ),
    pytest.param(
        slice_(
            devices=[
                device(
                    allowMultipleAllocations=True,
                    capacity={
                        "bw": {
                            "value": "100",
                            "requestPolicy": {"default": "15", "validRange": {"min": "10", "step": "10"}},
                        }
                    },
                )
            ]
        ),
        422,
        'requestPolicy.validRange.step: Invalid value: "15": value is not a multiple of a given step (10) from (10)',
        id="default-off-step",
    ),
    pytest.param(
        slice_(
            devices=[
                device(
                    allowMultipleAllocations=True,
                    capacity={
                        "bw": {
                            "value": "100",
                            "requestPolicy": {"default": "150", "validRange": {"min": "10", "max": "200"}},
                        }
                    },
                )
            ]
        ),
        422,
        'requestPolicy.validRange.max: Invalid value: "200": max is larger than capacity value: 100',
        id="range-over-capacity",
    ),
    pytest.param(slice_(nodeName=None, allNodes=True, perDeviceNodeSelection=None), 201, "", id="all-nodes"),
    pytest.param(
        slice_(allNodes=True),
        422,
        'spec: Invalid value: "{`nodeName`, `allNodes`}": exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required, but multiple fields are set',
        id="two-node-selections",
    ),
    pytest.param(
        slice_(pool={"name": "p", "resourceSliceCount": 0}),
        422,
        "spec.pool.resourceSliceCount: Invalid value: 0: must be greater than zero",
        id="slice-count",
    ),
    pytest.param(
        slice_(devices=[device(nodeName="node-1")]),
        422,
        "`nodeName`, `nodeSelector` and `allNodes` can only be set if `perDeviceNodeSelection` is set to true",
        id="device-node-without-per-device",
    ),
]


@pytest.mark.parametrize(("obj", "status", "fragment"), SLICE_CASES)
async def test_resource_slice_1_37_fields(server: APIServer, obj: Obj, status: int, fragment: str) -> None:
    obj["spec"] = {k: v for k, v in obj["spec"].items() if v is not None}
    code, body = await send(server, "POST", SLICES, obj)
    assert code == status, body
    if status == 201:
        assert body["spec"] == obj["spec"]  # every 1.37 field kept as sent
    else:
        assert fragment in body["message"]


async def test_resource_slice_identity_is_immutable_and_fields_strict(server: APIServer) -> None:
    code, _ = await send(server, "POST", SLICES, slice_(devices=[PARTITION]))
    assert code == 201
    code, body = await send(server, "PATCH", f"{SLICES}/s", {"spec": {"driver": "other.example.com"}}, MERGE)
    assert code == 422 and 'spec.driver: Invalid value: "other.example.com": field is immutable' in body["message"]
    typo = slice_(devices=[device(consumesCounter=[])])
    typo["metadata"]["name"] = "t"
    code, body = await send(server, "POST", f"{SLICES}?fieldValidation=Strict", typo)
    assert code == 400 and 'unknown field "spec.devices[0].consumesCounter"' in body["message"]
    bad_quantity = slice_(sharedCounters=[{"name": "c", "counters": {"memory": {"value": "lots"}}}])
    bad_quantity["metadata"]["name"] = "q"
    code, body = await send(server, "POST", SLICES, bad_quantity)
    assert code == 400 and "quantities must match" in body["message"]
    code, table = await send(server, "GET", SLICES, accept="application/json;as=Table;v=v1;g=meta.k8s.io")
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Node", "Driver", "Pool", "Age"]
    assert table["rows"][0]["cells"][:4] == ["s", "node-1", "gpu.example.com", "node-1"]


# --- ResourceClaim and DeviceClass --------------------------------------------------------------

CLAIM_CASES = [
    pytest.param(
        claim(exact(tolerations=[{"key": "example.com/ecc", "operator": "Exists", "effect": "NoSchedule"}])),
        201,
        "",
        id="toleration",
    ),
    pytest.param(
        claim(exact(allocationMode="ExactCount", count=1, capacity={"requests": {"bandwidth": "10G"}})),
        201,
        "",
        id="capacity-requests",
    ),
    pytest.param(
        claim(exact(tolerations=[{"key": "k", "operator": "Gt", "value": "1"}])),
        422,
        'spec.devices.requests[0].exactly.tolerations[0].operator: Unsupported value: "Gt": supported values: "Equal", "Exists"',
        id="toleration-operator",
    ),
    pytest.param(
        claim(exact(tolerations=[{"key": "k", "operator": "Exists", "value": "v"}])),
        422,
        'tolerations[0].value: Invalid value: "v": must be empty for operator `Exists`',
        id="exists-with-value",
    ),
    pytest.param(
        claim(exact(tolerations=[{"operator": "Exists", "effect": "PreferNoSchedule"}])),
        422,
        'tolerations[0].effect: Unsupported value: "PreferNoSchedule"',
        id="toleration-effect",
    ),
    pytest.param(
        claim(exact(capacity={"requests": {"1bad": "1"}})),
        422,
        'spec.devices.requests[0].exactly.capacity.requests[1bad]: Invalid value: "1bad": a valid C identifier',
        id="capacity-name",
    ),
    pytest.param(
        claim(exact(allocationMode="All", count=2)),
        422,
        "spec.devices.requests[0].exactly.count: Invalid value: 2: must not be specified when allocationMode is 'All'",
        id="all-with-count",
    ),
    pytest.param(
        claim({"name": "gpu"}),
        422,
        "spec.devices.requests[0]: Required value: exactly one of `exactly` or `firstAvailable` is required",
        id="neither-exactly-nor-first-available",
    ),
    pytest.param(
        claim(exact(), exact()), 422, 'spec.devices.requests[1]: Duplicate value: "gpu"', id="duplicate-request"
    ),
]


@pytest.mark.parametrize(("obj", "status", "fragment"), CLAIM_CASES)
async def test_resource_claim_1_37_fields(server: APIServer, obj: Obj, status: int, fragment: str) -> None:
    code, body = await send(server, "POST", CLAIMS, obj)
    assert code == status, body
    if status == 201:
        request = body["spec"]["devices"]["requests"][0]["exactly"]
        assert request["allocationMode"] == "ExactCount" and request["count"] == 1
        sent = obj["spec"]["devices"]["requests"][0]["exactly"]
        for key in ("tolerations", "capacity"):
            assert request.get(key) == sent.get(key)
    else:
        assert fragment in body["message"]


async def test_resource_claim_status_devices_and_share_ids(server: APIServer) -> None:
    code, _ = await send(server, "POST", CLAIMS, claim(exact()))
    assert code == 201
    share = "0b7a8f9e-1c2d-4e5f-8a9b-0c1d2e3f4a5b"
    result = {
        "request": "gpu",
        "driver": "gpu.example.com",
        "pool": "node-1",
        "device": "nic-0",
        "shareID": share,
        "consumedCapacity": {"bandwidth": "10G"},
        "bindingConditions": ["example.com/attached"],
        "bindingFailureConditions": ["example.com/attach-failed"],
    }
    status = {
        "allocation": {"devices": {"results": [result]}},
        "devices": [
            {
                "driver": "gpu.example.com",
                "pool": "node-1",
                "device": "nic-0",
                "shareID": share,
                "conditions": [
                    {
                        "type": "example.com/attached",
                        "status": "True",
                        "reason": "Ok",
                        "message": "",
                        "lastTransitionTime": "2026-09-01T00:00:00Z",
                    }
                ],
            }
        ],
    }
    code, body = await send(server, "PATCH", f"{CLAIMS}/c/status", {"status": status}, MERGE)
    assert code == 200, body
    assert body["status"]["devices"][0]["shareID"] == share
    assert body["status"]["allocation"]["devices"]["results"][0]["consumedCapacity"] == {"bandwidth": "10G"}
    bad = {"status": {"devices": [{**status["devices"][0], "shareID": share.upper()}]}}
    code, body = await send(server, "PATCH", f"{CLAIMS}/c/status", bad, MERGE)
    assert (
        code == 422 and "status.devices[0].shareID" in body["message"] and "RFC 4122 normalized form" in body["message"]
    )
    code, table = await send(server, "GET", CLAIMS, accept="application/json;as=Table;v=v1;g=meta.k8s.io")
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "State", "Age"]
    assert table["rows"][0]["cells"][1] == "allocated"


@pytest.mark.parametrize(
    ("name", "status"),
    [
        ("example.com/gpu", 201),
        ("deviceclass.resource.kubernetes.io/gpu", 422),
        ("cpu", 422),
        ("requests.example.com/gpu", 422),
    ],
)
async def test_device_class_extended_resource_name(server: APIServer, name: str, status: int) -> None:
    cls = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": "gpu"},
        "spec": {"extendedResourceName": name},
    }
    code, body = await send(server, "POST", CLASSES, cls)
    assert code == status, body
    if status == 422:
        assert (
            f'spec.extendedResourceName: Invalid value: "{name}": must be a valid extended resource name'
            in body["message"]
        )


# --- nodes and scenarios ------------------------------------------------------------------------


async def test_node_declared_features(server: APIServer) -> None:
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "n1"},
        "status": {"declaredFeatures": ["InPlacePodVerticalScaling"]},
    }
    code, body = await send(server, "POST", "/api/v1/nodes", node)
    assert code == 201 and body["status"]["declaredFeatures"] == ["InPlacePodVerticalScaling"]
    patch = {"status": {"declaredFeatures": ["InPlacePodVerticalScaling", "GuaranteedQoSPodCPUResize"]}}
    code, body = await send(server, "PATCH", "/api/v1/nodes/n1/status", patch, MERGE)
    assert code == 200 and body["status"]["declaredFeatures"] == patch["status"]["declaredFeatures"]
    code, body = await send(server, "PATCH", "/api/v1/nodes/n1/status", {"status": {"declaredFeatures": "x"}}, MERGE)
    assert code == 400 and "NodeStatus.status.declaredFeatures of type []string" in body["message"]


def test_scenario_accepts_device_taint_rules() -> None:
    ok = parse_scenario([rule(), {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}}])
    assert [o["kind"] for o in ok.others] == ["DeviceTaintRule"]
    with pytest.raises(ScenarioError, match=r'spec\.taint\.effect: Unsupported value: "PreferNoSchedule"'):
        parse_scenario([rule(effect="PreferNoSchedule")])
    with pytest.raises(ScenarioError, match=r'unknown field "spec\.taint\.efect"'):
        parse_scenario([{**rule(), "spec": {"taint": {"key": "k", "efect": "None"}}}])
