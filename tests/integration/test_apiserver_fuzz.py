"""A schema-driven fuzzer against a running embedded API server, over real HTTP.

Requests are drawn from the server's own OpenAPI document (every path and method it publishes)
with bodies generated from the served schema (``openapi_types.DEFINITIONS``): objects built field
by field, and valid objects with one to three fields replaced by any JSON value. Whatever comes
in, the server must answer with a status below 500, and still serve normal requests afterwards.

The run is bounded and derandomized (the same requests every time);
``KUBESCHED_FUZZ_EXAMPLES=5000`` runs that many random ones instead.
"""

from __future__ import annotations

import copy
import json
import os
import re
from collections.abc import Iterator
from typing import Any

import pytest
import yaml
from apiserver_thread import ServerThread
from fuzzing import hostile
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from kubesched.sim.apiserver.discovery import RESOURCES
from kubesched.sim.apiserver.openapi import documents as openapi
from kubesched.sim.apiserver.openapi.types import DEFINITIONS

Obj = dict[str, Any]
_EXAMPLES = os.environ.get("KUBESCHED_FUZZ_EXAMPLES")
FUZZ = settings(
    max_examples=int(_EXAMPLES) if _EXAMPLES else 2000,
    derandomize=not _EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture],
)
NAMES = ["x", "x", "x", "default", "Bad_Name", "", "a" * 300]
PATCH_TYPES = (
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
    "application/json-patch+json",
    "application/apply-patch+yaml",
)


# --- generation from the schema -----------------------------------------------------------------

_ANY_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats()
    | st.sampled_from([0, -1, 2**31, 0.5, "", "-1", "1e999", "lots", "Exists", "NoExecute", "a/b/c", "\x00"])
    | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=6,
)


#: what YAML has and JSON has not: timestamps, binary, non-string keys (as PyYAML decodes them)
_ANY_YAML = st.recursive(
    st.dates() | st.datetimes() | st.binary(max_size=4) | st.floats() | st.integers() | st.text(max_size=6),
    lambda inner: (
        st.lists(inner, max_size=2)
        | st.dictionaries(st.integers() | st.booleans() | st.dates() | st.text(max_size=4), inner, max_size=2)
    ),
    max_leaves=4,
)


def _scalar(typ: str) -> st.SearchStrategy[Any]:
    if typ == "string":
        return st.sampled_from(["", "a", "x", "Exists", "In", "NoSchedule", "zone", "100m", "1Gi"]) | st.text(
            max_size=8
        )
    if typ == "integer":
        return st.integers(min_value=-(2**33), max_value=2**33)
    if typ == "number":
        return st.floats(allow_nan=False, allow_infinity=False)
    if typ == "boolean":
        return st.booleans()
    if typ == "date-time":
        return st.sampled_from(["2024-01-01T00:00:00Z", "yesterday", ""])
    return _ANY_JSON


def schema_value(typ: str, depth: int = 0) -> st.SearchStrategy[Any]:
    """A value of schema type ``typ`` (sometimes any JSON instead), objects with a few fields each."""
    if depth > 4:
        return st.none()
    if typ.startswith("#"):
        props = DEFINITIONS.get(typ[1:], {})
        if not props:
            return st.just({})
        keys = sorted(props)
        return st.lists(st.sampled_from(keys), max_size=4, unique=True).flatmap(
            lambda chosen: st.fixed_dictionaries({k: schema_value(props[k], depth + 1) for k in chosen})
        )
    if typ.startswith("["):
        return st.lists(schema_value(typ[1:-1], depth + 1), max_size=2)
    if typ.startswith("{"):
        return st.dictionaries(st.text(max_size=6) | st.just("cpu"), schema_value(typ[1:-1], depth + 1), max_size=2)
    return _scalar(typ) | _ANY_JSON if depth > 1 else _scalar(typ)


def templates() -> dict[str, Obj]:
    """A valid object per kind, named ``x``."""
    meta: Obj = {"name": "x", "labels": {"app": "web"}}
    pod = {
        "metadata": meta,
        "spec": {
            "containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "100m"}}}],
            "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoSchedule"}],
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}
                        ]
                    }
                }
            },
            "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}],
        },
    }
    return {
        "Pod": pod,
        "Node": {
            "metadata": meta,
            "spec": {"taints": [{"key": "k", "effect": "NoSchedule"}]},
            "status": {"capacity": {"cpu": "4"}},
        },
        "Namespace": {"metadata": meta},
        "Event": {"metadata": meta, "involvedObject": {"kind": "Pod", "name": "x"}, "reason": "R", "message": "m"},
        "Lease": {"metadata": meta, "spec": {"holderIdentity": "a", "leaseDurationSeconds": 15}},
        "PriorityClass": {"metadata": meta, "value": 10},
    }


TEMPLATES = templates()


def _paths(doc: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out += _paths(v, (*prefix, i))
    return out


@st.composite
def mutated(draw: st.DrawFn, base: Obj) -> Obj:
    doc = copy.deepcopy(base)
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(_paths(doc)[1:]))
        parent = doc
        for p in path[:-1]:
            parent = parent[p]
        parent[path[-1]] = draw(_ANY_JSON)
    return doc


@st.composite
def body_for(draw: st.DrawFn, kind: str, group: str) -> Any:
    definition = openapi.definition_of(kind, group)
    choices: list[st.SearchStrategy[Any]] = [_ANY_JSON]
    if definition is not None:
        choices.append(schema_value(f"#{definition}"))
    base = TEMPLATES.get(kind, {"metadata": {"name": "x"}, "spec": {}})
    choices += [mutated(base), mutated(base)]
    body = draw(st.one_of(choices))
    if isinstance(body, dict) and isinstance(body.get("metadata"), dict) and draw(st.booleans()):
        # A fresh name, so that creates get past "already exists" to admission and storage.
        body["metadata"]["name"] = draw(st.sampled_from(["y", "z", "w-1"]))
    return body


def _resource_of(path: str) -> Any:
    for r in RESOURCES:
        root = f"/api/{r.version}" if not r.group else f"/apis/{r.group}/{r.version}"
        if re.match(rf"^{re.escape(root)}/(namespaces/{{namespace}}/)?{r.plural}(/|$)", path):
            return r
    return None


def _fuzzed(path: str, method: str) -> bool:
    # Deleting namespaces would delete what the other requests work on, the defaults included.
    return method != "parameters" and not (method == "delete" and re.match(r"^/api/v1/namespaces(/\{name\})?$", path))


OPERATIONS = sorted(
    (path, method) for path, ops in openapi.v2_document()["paths"].items() for method in ops if _fuzzed(path, method)
)


#: JSON values past a limit: nesting, an integer's digits, a list and a mapping of many entries.
_HOSTILE_JSON = [
    "[" * 250 + "]" * 250,
    "[" * 5000,
    "9" * 401,
    "-" + "9" * 5001,
    "[" + ",".join(["0"] * 200_000) + "]",
    "{" + ",".join(f'"k{i}": {i}' for i in range(50_000)) + "}",
]


@st.composite
def hostile_json(draw: st.DrawFn, doc: Any) -> bytes:
    """``doc`` as JSON with one hostile value at a top-level field."""
    base = doc if isinstance(doc, dict) and doc else {"metadata": {"name": "x"}}
    field = draw(st.sampled_from([*sorted(base), "x"]))
    text = json.dumps({k: v for k, v in base.items() if k != field})
    hostile_value = draw(st.sampled_from(_HOSTILE_JSON))
    return (text[:-1] + (", " if text != "{}" else "") + f'"{field}": {hostile_value}}}').encode()


@st.composite
def requests(draw: st.DrawFn) -> tuple[str, str, bytes | None, str]:
    template, method = draw(st.sampled_from(OPERATIONS))
    res = _resource_of(template)
    path = template.replace("{namespace}", draw(st.sampled_from(["default", "default", "nope", "Bad"])))
    path = path.replace("{name}", draw(st.sampled_from(NAMES)) or "x")
    query = draw(
        st.sampled_from(
            [
                "",
                "",
                "?fieldValidation=Strict",
                "?dryRun=All",
                "?fieldManager=fuzz",
                "?labelSelector=a%20in%20(",
                "?fieldSelector=spec.x=1",
            ]
        )
    )
    ctype = "application/json"
    body: bytes | None = None
    if method in ("post", "put") and res and draw(st.integers(0, 5)) == 0:
        # What a hostile client sends: alias bombs, nesting, counts and numbers past the limits.
        doc = draw(body_for(res.kind, res.group))
        if draw(st.booleans()):
            ctype = "application/yaml"
            body = draw(hostile(yaml.safe_dump(doc if isinstance(doc, dict) and doc else {"metadata": {"name": "x"}})))
        else:
            body = draw(hostile_json(doc))
    elif method in ("post", "put") and res and draw(st.integers(0, 4)) == 0:
        ctype = "application/yaml"
        doc = draw(body_for(res.kind, res.group))
        if isinstance(doc, dict) and doc:
            doc[draw(st.sampled_from(sorted(doc)))] = draw(_ANY_YAML)
        body = yaml.safe_dump(doc).encode()
    elif method in ("post", "put"):
        body = json.dumps(draw(body_for(res.kind, res.group)) if res else draw(_ANY_JSON)).encode()
    elif method == "patch":
        ctype = draw(st.sampled_from(PATCH_TYPES))
        if ctype == "application/json-patch+json":
            ops = st.fixed_dictionaries(
                {
                    "op": st.sampled_from(["add", "replace", "remove", "test", "move", "copy", "bogus"]),
                    "path": st.sampled_from(
                        ["/metadata/labels", "/spec/tolerations", "/spec", "/x/y", "", "/metadata/name"]
                    ),
                    "value": _ANY_JSON,
                }
            )
            patch: Any = draw(st.lists(ops, max_size=3) | _ANY_JSON)
        else:
            patch = draw(body_for(res.kind, res.group)) if res else draw(_ANY_JSON)
        if ctype == "application/apply-patch+yaml" and "fieldManager" not in query:
            query = "?fieldManager=fuzz"
        body = json.dumps(patch).encode()
    elif method == "delete" and draw(st.booleans()):
        body = json.dumps(draw(_ANY_JSON)).encode()
    return method.upper(), path + query, body, ctype


@pytest.fixture(scope="module")
def running() -> Iterator[ServerThread]:
    with ServerThread() as srv:
        for kind, obj in TEMPLATES.items():
            res = next(
                r for r in RESOURCES if r.kind == kind and r.group in ("", "coordination.k8s.io", "scheduling.k8s.io")
            )
            root = f"/api/{res.version}" if not res.group else f"/apis/{res.group}/{res.version}"
            where = f"{root}/namespaces/default/{res.plural}" if res.namespaced else f"{root}/{res.plural}"
            assert srv.request("POST", where, json.dumps(obj).encode()) == 201, kind
        yield srv


def test_an_apply_patch_with_a_list_item_missing_its_merge_key_is_the_request_s_fault(running: ServerThread) -> None:
    """Found by the fuzzer (and run before it, while the event exists): server-side apply of ``conditions: [{}]`` onto an existing object."""
    status = running.request(
        "PATCH",
        "/api/v1/namespaces/default/events/x?fieldManager=fuzz",
        b'{"status": {"conditions": [{}]}}',
        "application/apply-patch+yaml",
    )
    assert status == 400


@FUZZ
@given(req=requests())
def test_no_request_makes_the_server_fail(running: ServerThread, req: tuple[str, str, bytes | None, str]) -> None:
    method, path, body, ctype = req
    status = running.request(method, path, body, ctype)
    event(f"{method} {status}")
    assert status < 500, (method, path, body[:300] if body else None, ctype, status)


def test_the_server_still_serves_after_the_fuzzing(running: ServerThread) -> None:
    # Runs after the fuzz test in this module (file order): the same server, after every request.
    assert running.request("GET", "/api/v1/nodes") == 200
    assert running.request("GET", "/api/v1/namespaces/kube-system/pods") == 200
    assert running.request("GET", "/healthz") == 200
    assert running.request("POST", "/api/v1/namespaces", json.dumps({"metadata": {"name": "after"}}).encode()) == 201
    pod = {"metadata": {"name": "after"}, "spec": {"containers": [{"name": "c", "image": "i"}]}}
    assert running.request("POST", "/api/v1/namespaces/after/pods", json.dumps(pod).encode()) == 201
