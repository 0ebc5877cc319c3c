"""The embedded API server refuses what kube-apiserver refuses, over real HTTP: bodies Go's
decoder cannot decode (400), invalid metadata and scheduling fields (422, upstream's field paths
and wording), bodies over 3 MiB and objects over etcd's 1.5 MiB (413) — and the real kubectl
shows the user the server's message."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from kubesched.sim.apiserver.server import APIServer
from kubesched.testing import make_node, make_pod

Obj = dict[str, Any]
MiB = 1024 * 1024
KUBECTL = shutil.which("kubectl") or "/usr/bin/kubectl"
PODS = "/api/v1/namespaces/default/pods"


async def send(
    server: APIServer, method: str, path: str, body: Any, ctype: str = "application/json"
) -> tuple[int, Obj]:
    data = body if isinstance(body, str | bytes) else json.dumps(body)
    async with (
        aiohttp.ClientSession() as s,
        s.request(method, server.url + path, data=data, headers={"Content-Type": ctype}) as r,
    ):
        return r.status, await r.json(content_type=None)


def pod(**spec: Any) -> Obj:
    obj = make_pod("p").obj()
    obj["metadata"].pop("uid", None)
    obj.pop("status", None)
    obj["spec"]["containers"] = [{"name": "c", "image": "registry.k8s.io/pause:3.10"}]
    obj["spec"].update(spec)
    return obj


def pod_meta(**meta: Any) -> Obj:
    obj = pod()
    obj["metadata"].update(meta)
    return obj


def node(**spec: Any) -> Obj:
    obj = make_node("n1").capacity(cpu="4", memory="8Gi", pods="110").obj()
    obj.setdefault("spec", {}).update(spec)
    return obj


def required_node_affinity(*exprs: Obj) -> Obj:
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": list(exprs)}]}
        }
    }


def container(**fields: Any) -> list[Obj]:
    return [{"name": "c", "image": "registry.k8s.io/pause:3.10", **fields}]


_NODE_EXPR = (
    "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0]"
)
_POD_DECODE = 'Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal '

# (id, method, path, body, expected status, fragment of the Status message)
CASES: list[tuple[str, str, str, Callable[[], Any], int, str]] = [
    # --- decoding: 400 -------------------------------------------------------------------------
    (
        "label-value-integer",
        "POST",
        PODS,
        lambda: pod_meta(labels={"a": 5}),
        400,
        _POD_DECODE + "number into Go struct field ObjectMeta.metadata.labels of type string",
    ),
    (
        "tolerations-string",
        "POST",
        PODS,
        lambda: pod(tolerations="all"),
        400,
        _POD_DECODE + "string into Go struct field PodSpec.spec.tolerations of type []v1.Toleration",
    ),
    (
        "node-selector-list",
        "POST",
        PODS,
        lambda: pod(nodeSelector=["zone=a"]),
        400,
        _POD_DECODE + "array into Go struct field PodSpec.spec.nodeSelector of type map[string]string",
    ),
    (
        "command-item-number",
        "POST",
        PODS,
        lambda: pod(containers=container(command=["sleep", 5])),
        400,
        _POD_DECODE + "number into Go struct field Container.spec.containers.command of type string",
    ),
    (
        "priority-fraction",
        "POST",
        PODS,
        lambda: pod(priority=1.5),
        400,
        _POD_DECODE + "number 1.5 into Go struct field PodSpec.spec.priority of type int32",
    ),
    (
        "quantity-unparseable",
        "POST",
        PODS,
        lambda: pod(containers=container(resources={"requests": {"cpu": "lots"}})),
        400,
        "cannot be handled as a Pod: quantities must match the regular expression",
    ),
    (
        "node-taints-string",
        "POST",
        "/api/v1/nodes",
        lambda: node(taints="dedicated"),
        400,
        'Node in version "v1" cannot be handled as a Node: json: cannot unmarshal string into Go struct field '
        "NodeSpec.spec.taints of type []v1.Taint",
    ),
    (
        "priorityclass-value-string",
        "POST",
        "/apis/scheduling.k8s.io/v1/priorityclasses",
        lambda: {"metadata": {"name": "high"}, "value": "1000"},
        400,
        "json: cannot unmarshal string into Go struct field PriorityClass.value of type int32",
    ),
    (
        "service-label-bool",
        "POST",
        "/api/v1/namespaces/default/services",
        lambda: {"metadata": {"name": "s", "labels": {"a": True}}, "spec": {}},
        400,
        "json: cannot unmarshal bool into Go struct field ObjectMeta.metadata.labels of type string",
    ),
    (
        "service-spec-string",
        "POST",
        "/api/v1/namespaces/default/services",
        lambda: {"metadata": {"name": "s"}, "spec": "ClusterIP"},
        400,
        "json: cannot unmarshal string into Go struct field Service.spec of type v1.ServiceSpec",
    ),
    (
        "binding-target-string",
        "POST",
        PODS + "/p/binding",
        lambda: {"metadata": {"name": "p"}, "target": "n1"},
        400,
        "json: cannot unmarshal string into Go struct field Binding.target of type v1.ObjectReference",
    ),
    # --- metadata: 422 -------------------------------------------------------------------------
    (
        "label-value-1MiB",
        "POST",
        PODS,
        lambda: pod_meta(labels={"a": "x" * MiB}),
        422,
        'metadata.labels: Invalid value: "xxx',
    ),
    (
        "label-key-bad",
        "POST",
        PODS,
        lambda: pod_meta(labels={"-a": "b"}),
        422,
        'metadata.labels: Invalid value: "-a": name part must consist of alphanumeric characters',
    ),
    (
        "label-value-64",
        "POST",
        PODS,
        lambda: pod_meta(labels={"a": "b" * 64}),
        422,
        "must be no more than 63 characters",
    ),
    (
        "annotations-1MiB",
        "POST",
        PODS,
        lambda: pod_meta(annotations={"a": "x" * MiB}),
        422,
        'Pod "p" is invalid: metadata.annotations: Too long: may not be more than 262144 bytes',
    ),
    (
        "name-uppercase",
        "POST",
        PODS,
        lambda: pod_meta(name="Bad"),
        422,
        'metadata.name: Invalid value: "Bad": a lowercase RFC 1123 subdomain must consist of',
    ),
    # --- pod scheduling fields: 422 ------------------------------------------------------------
    (
        "node-affinity-operator-bogus",
        "POST",
        PODS,
        lambda: pod(affinity=required_node_affinity({"key": "zone", "operator": "Bogus", "values": ["a"]})),
        422,
        f'{_NODE_EXPR}.operator: Invalid value: "Bogus": not a valid selector operator',
    ),
    (
        "node-affinity-in-without-values",
        "POST",
        PODS,
        lambda: pod(affinity=required_node_affinity({"key": "zone", "operator": "In"})),
        422,
        f"{_NODE_EXPR}.values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
    ),
    (
        "node-affinity-exists-with-values",
        "POST",
        PODS,
        lambda: pod(affinity=required_node_affinity({"key": "zone", "operator": "Exists", "values": ["a"]})),
        422,
        f"{_NODE_EXPR}.values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
    ),
    (
        "node-affinity-gt-two-values",
        "POST",
        PODS,
        lambda: pod(affinity=required_node_affinity({"key": "cores", "operator": "Gt", "values": ["1", "2"]})),
        422,
        f"{_NODE_EXPR}.values: Required value: must be specified single value when `operator` is 'Lt' or 'Gt'",
    ),
    (
        "node-affinity-no-terms",
        "POST",
        PODS,
        lambda: pod(affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {}}}),
        422,
        "nodeSelectorTerms: Required value: must have at least one node selector term",
    ),
    (
        "preferred-weight-zero",
        "POST",
        PODS,
        lambda: pod(
            affinity={
                "nodeAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {"weight": 0, "preference": {"matchExpressions": [{"key": "a", "operator": "Exists"}]}}
                    ]
                }
            }
        ),
        422,
        "preferredDuringSchedulingIgnoredDuringExecution[0].weight: Invalid value: 0: must be in the range 1-100",
    ),
    (
        "pod-anti-affinity-no-topology-key",
        "POST",
        PODS,
        lambda: pod(
            affinity={
                "podAntiAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [{"labelSelector": {"matchLabels": {"a": "b"}}}]
                }
            }
        ),
        422,
        "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey: "
        "Required value: can not be empty",
    ),
    (
        "pod-affinity-selector-operator",
        "POST",
        PODS,
        lambda: pod(
            affinity={
                "podAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "topologyKey": "zone",
                            "labelSelector": {"matchExpressions": [{"key": "a", "operator": "Equals"}]},
                        }
                    ]
                }
            }
        ),
        422,
        'labelSelector.matchExpressions[0].operator: Invalid value: "Equals": not a valid selector operator',
    ),
    (
        "toleration-exists-with-value",
        "POST",
        PODS,
        lambda: pod(tolerations=[{"key": "k", "operator": "Exists", "value": "v"}]),
        422,
        'spec.tolerations[0].operator: Invalid value: core.Toleration{Key:"k", Operator:"Exists", Value:"v"',
    ),
    (
        "toleration-effect-bogus",
        "POST",
        PODS,
        lambda: pod(tolerations=[{"key": "k", "operator": "Exists", "effect": "Sometimes"}]),
        422,
        'spec.tolerations[0].effect: Unsupported value: "Sometimes": supported values: "NoSchedule", '
        '"PreferNoSchedule", "NoExecute"',
    ),
    (
        "toleration-operator-bogus",
        "POST",
        PODS,
        lambda: pod(tolerations=[{"key": "k", "operator": "Matches"}]),
        422,
        'spec.tolerations[0].operator: Unsupported value: "Matches": supported values: "Equal", "Exists"',
    ),
    (
        "toleration-seconds-not-noexecute",
        "POST",
        PODS,
        lambda: pod(tolerations=[{"key": "k", "operator": "Exists", "effect": "NoSchedule", "tolerationSeconds": 5}]),
        422,
        "spec.tolerations[0].effect: Invalid value: \"NoSchedule\": effect must be 'NoExecute' when "
        "`tolerationSeconds` is set",
    ),
    (
        "spread-max-skew-zero",
        "POST",
        PODS,
        lambda: pod(
            topologySpreadConstraints=[{"maxSkew": 0, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}]
        ),
        422,
        "spec.topologySpreadConstraints[0].maxSkew: Invalid value: 0: must be greater than zero",
    ),
    (
        "spread-when-unsatisfiable-bogus",
        "POST",
        PODS,
        lambda: pod(topologySpreadConstraints=[{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "Maybe"}]),
        422,
        'spec.topologySpreadConstraints[0].whenUnsatisfiable: Unsupported value: "Maybe": supported values: '
        '"DoNotSchedule", "ScheduleAnyway"',
    ),
    (
        "spread-no-topology-key",
        "POST",
        PODS,
        lambda: pod(topologySpreadConstraints=[{"maxSkew": 1, "whenUnsatisfiable": "DoNotSchedule"}]),
        422,
        "spec.topologySpreadConstraints[0].topologyKey: Required value: can not be empty",
    ),
    (
        "negative-cpu-request",
        "POST",
        PODS,
        lambda: pod(containers=container(resources={"requests": {"cpu": "-1"}})),
        422,
        'spec.containers[0].resources.requests[cpu]: Invalid value: "-1": must be greater than or equal to 0',
    ),
    (
        "node-selector-bad-value",
        "POST",
        PODS,
        lambda: pod(nodeSelector={"zone": "a b"}),
        422,
        'spec.nodeSelector: Invalid value: "a b": a valid label must be an empty string',
    ),
    (
        "preemption-policy-bogus",
        "POST",
        PODS,
        lambda: pod(preemptionPolicy="Sometimes"),
        422,
        'spec.preemptionPolicy: Unsupported value: "Sometimes": supported values: "Never", "PreemptLowerPriority"',
    ),
    # --- node taints: 422 ----------------------------------------------------------------------
    (
        "taint-effect-bogus",
        "POST",
        "/api/v1/nodes",
        lambda: node(taints=[{"key": "k", "effect": "Sometimes"}]),
        422,
        'spec.taints[0].effect: Unsupported value: "Sometimes": supported values: "NoSchedule", '
        '"PreferNoSchedule", "NoExecute"',
    ),
    (
        "taint-effect-missing",
        "POST",
        "/api/v1/nodes",
        lambda: node(taints=[{"key": "k"}]),
        422,
        "spec.taints[0].effect: Required value",
    ),
    (
        "taint-key-bad",
        "POST",
        "/api/v1/nodes",
        lambda: node(taints=[{"key": "a/b/c", "effect": "NoSchedule"}]),
        422,
        'spec.taints[0].key: Invalid value: "a/b/c": a qualified name must consist of',
    ),
    # --- sizes: 413 ----------------------------------------------------------------------------
    (
        "body-4MB",
        "POST",
        PODS,
        lambda: pod(containers=container(args=["x" * 1000] * 4000)),
        413,
        "Request entity too large: limit is 3145728",
    ),
    (
        "object-2MB",
        "POST",
        PODS,
        lambda: pod(containers=container(args=["x" * 1000] * 2000)),
        413,
        "etcdserver: request is too large",
    ),
]


@pytest.mark.parametrize(
    ("method", "path", "body", "code", "fragment"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
async def test_refused_as_upstream_refuses(
    server: APIServer, method: str, path: str, body: Callable[[], Any], code: int, fragment: str
) -> None:
    if path.endswith("/binding"):
        assert (await send(server, "POST", PODS, pod()))[0] == 201
    status, reply = await send(server, method, path, body())
    assert (status, reply.get("code")) == (code, code), reply.get("message", "")[:500]
    assert fragment in reply["message"], reply["message"][:500]
    assert reply["kind"] == "Status"
    if code == 422:
        # The fragment is one cause, as "field: message", or part of one.
        causes = [f"{c['field']}: {c['message']}" for c in reply["details"]["causes"]]
        assert any(fragment in c or c in fragment for c in causes), causes
    # Nothing refused was stored.
    async with aiohttp.ClientSession() as s, s.get(server.url + PODS) as r:
        names = [p["metadata"]["name"] for p in (await r.json())["items"]]
    assert names == (["p"] if path.endswith("/binding") else [])


@pytest.mark.parametrize(
    "body",
    [
        pod_meta(labels={"a": "b" * 63, "example.com/" + "k" * 63: ""}),
        pod_meta(annotations={"a": "x" * (256 * 1024 - 1)}),
        pod(containers=container(resources={"requests": {"cpu": 1, "memory": "64Mi"}})),
        pod(
            tolerations=[
                {"operator": "Exists"},
                {"key": "k", "operator": "Equal", "value": "v", "effect": "NoExecute", "tolerationSeconds": 5},
            ]
        ),
        pod(affinity=required_node_affinity({"key": "cores", "operator": "Gt", "values": ["3"]})),
        pod(topologySpreadConstraints=[{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway"}]),
        pod(containers=container(args=["x" * 1000] * 1400)),
    ],
    ids=["label-limits", "annotations-at-limit", "numeric-quantity", "tolerations", "gt", "spread", "object-1.4MB"],
)
async def test_valid_bodies_at_the_limits_are_accepted(server: APIServer, body: Obj) -> None:
    status, reply = await send(server, "POST", PODS, body)
    assert status == 201, reply.get("message", "")[:500]


async def test_yaml_bodies_are_checked_the_same(server: APIServer) -> None:
    text = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  labels: {a: 5}\nspec:\n  containers: [{name: c, image: i}]\n"
    status, reply = await send(server, "POST", PODS, text, "application/yaml")
    assert status == 400
    assert "ObjectMeta.metadata.labels of type string" in reply["message"]


@pytest.mark.parametrize(
    ("ctype", "patch", "code", "fragment"),
    [
        (
            "application/merge-patch+json",
            {"spec": {"tolerations": "all"}},
            400,
            "PodSpec.spec.tolerations of type []v1.Toleration",
        ),
        (
            "application/strategic-merge-patch+json",
            {"metadata": {"labels": {"a": 5}}},
            400,
            "ObjectMeta.metadata.labels of type string",
        ),
        (
            "application/json-patch+json",
            [{"op": "add", "path": "/metadata/labels", "value": {"a": "b c"}}],
            422,
            'metadata.labels: Invalid value: "b c"',
        ),
        (
            "application/merge-patch+json",
            {"spec": {"tolerations": [{"key": "k", "operator": "Exists", "effect": "Sometimes"}]}},
            422,
            'spec.tolerations[0].effect: Unsupported value: "Sometimes"',
        ),
        (
            "application/merge-patch+json",
            {"metadata": {"annotations": {"a": "x" * MiB}}},
            422,
            "metadata.annotations: Too long: may not be more than 262144 bytes",
        ),
    ],
    ids=["merge-type", "strategic-type", "json-patch-label", "merge-toleration", "merge-annotations"],
)
async def test_patches_are_checked_on_their_result(
    server: APIServer, ctype: str, patch: Any, code: int, fragment: str
) -> None:
    assert (await send(server, "POST", PODS, pod()))[0] == 201
    status, reply = await send(server, "PATCH", PODS + "/p", patch, ctype)
    assert status == code, reply.get("message", "")[:500]
    assert fragment in reply["message"]


async def test_node_update_with_bad_taint_is_refused(server: APIServer) -> None:
    status, created = await send(server, "POST", "/api/v1/nodes", node())
    assert status == 201
    created["spec"]["taints"] = [{"key": "k", "effect": "Sometimes"}]
    status, reply = await send(server, "PUT", "/api/v1/nodes/n1", created)
    assert status == 422
    assert 'spec.taints[0].effect: Unsupported value: "Sometimes"' in reply["message"]


@pytest.mark.parametrize("body", ["[1, 2]", '{"preconditions": "x"}'], ids=["list", "preconditions-string"])
async def test_delete_with_malformed_options_is_a_bad_request(server: APIServer, body: str) -> None:
    assert (await send(server, "POST", PODS, pod()))[0] == 201
    status, reply = await send(server, "DELETE", PODS + "/p", body)
    assert status == 400, reply


@pytest.mark.skipif(not os.access(KUBECTL, os.X_OK), reason="kubectl is not installed")
async def test_kubectl_apply_shows_the_refusal(server: APIServer, tmp_path: Path) -> None:
    kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig")
    manifest = tmp_path / "pod.yaml"
    manifest.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: bad\nspec:\n  containers: [{name: c, image: i}]\n"
        "  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
        "        nodeSelectorTerms:\n        - matchExpressions: [{key: zone, operator: Bogus, values: [a]}]\n"
    )
    proc = await asyncio.create_subprocess_exec(
        KUBECTL,
        "--kubeconfig",
        kubeconfig,
        "--cache-dir",
        str(tmp_path / "cache"),
        "apply",
        "-f",
        str(manifest),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "HOME": str(tmp_path)},
    )
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 1, out.decode()
    assert (
        'The Pod "bad" is invalid: '
        f'{_NODE_EXPR}.operator: Invalid value: "Bogus": not a valid selector operator' in err.decode()
    ), err.decode()


@pytest.mark.parametrize(
    ("body", "ctype", "fragment"),
    [
        ('{"metadata": {"name": "p"}, "spec": {"priority": NaN}}', "application/json", "invalid character 'N'"),
        ('{"metadata": {"name": "p"}, "x": 1e999}', "application/json", "unsupported value: inf"),
        ('{"metadata": {"name": "p"}, "x": ' + "[" * 150 + "]" * 150 + "}", "application/json", "nested more than 100"),
        ("[" * 100_000, "application/json", "nested too deeply"),
        ("metadata: {name: p}\nx: .nan\n", "application/yaml", "unsupported value: nan"),
    ],
    ids=["json-nan", "json-overflow", "nested-150", "nested-100000", "yaml-nan"],
)
async def test_bodies_json_cannot_carry_are_a_bad_request(
    server: APIServer, body: str, ctype: str, fragment: str
) -> None:
    status, reply = await send(server, "POST", PODS, body, ctype)
    assert status == 400, reply
    assert fragment in reply["message"]


async def test_yaml_timestamps_and_binary_are_stored_as_json_strings(server: APIServer) -> None:
    text = "metadata: {name: p}\nx: 2024-01-01\ny: !!binary aGVsbG8=\nspec:\n  containers: [{name: c, image: i}]\n"
    status, created = await send(server, "POST", PODS + "?fieldValidation=Ignore", text, "application/yaml")
    assert status == 201, created
    assert (created["x"], created["y"]) == ("2024-01-01", "aGVsbG8=")


@pytest.mark.parametrize(
    "ops",
    [
        [{"op": "move", "path": "/metadata/labels"}],
        [{"op": "copy", "path": "/x", "from": 5}],
        [{"op": "remove", "path": ""}],
        [{"op": "add", "path": 7, "value": 1}],
    ],
    ids=["move-without-from", "copy-from-number", "remove-root", "path-number"],
)
async def test_malformed_json_patches_are_refused_not_failed(server: APIServer, ops: list[Obj]) -> None:
    assert (await send(server, "POST", PODS, pod()))[0] == 201
    status, reply = await send(server, "PATCH", PODS + "/p", ops, "application/json-patch+json")
    assert status == 422, reply
