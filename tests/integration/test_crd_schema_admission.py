"""CustomResourceDefinitions whose schema kube-apiserver refuses, over real HTTP: a schema that
does not decode (``properties: 5``, ``rule: 5``) is answered 400 with the decoder's words, one
that does not validate (``type: bogus``, a CEL syntax error, ``pattern: "("``) 422 naming the
field as upstream does; none is stored, so the OpenAPI documents stay served."""

from __future__ import annotations

import copy
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import aiohttp
import pytest
from crds import thing_definition as definition

from kubesched.cluster.store import Store
from kubesched.sim.apiserver.server import APIServer
from kubesched.sim.apiserver.validation import patterns

Obj = dict[str, Any]
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
ROOT = "spec.versions[0].schema.openAPIV3Schema"
#: each request must be answered well within this (the server once hung for minutes)
TIMEOUT = aiohttp.ClientTimeout(total=5)


@pytest.fixture
async def served() -> AsyncIterator[APIServer]:
    srv = APIServer(Store())
    await srv.start()
    try:
        yield srv
    finally:
        await srv.stop()


async def call(server: APIServer, method: str, path: str, body: Obj | None = None) -> tuple[int, Any]:
    async with aiohttp.ClientSession(timeout=TIMEOUT) as s:
        data = json.dumps(body).encode() if body is not None else None
        headers = {"Content-Type": "application/json"}
        async with s.request(method, server.url + path, data=data, headers=headers) as r:
            return r.status, json.loads(await r.read())


async def assert_nothing_stored_and_documents_served(server: APIServer) -> None:
    status, listed = await call(server, "GET", CRDS)
    assert status == 200 and listed["items"] == []
    for path in ("/openapi/v2", "/openapi/v3"):
        status, _ = await call(server, "GET", path)
        assert status == 200, path


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        (
            {"type": "object", "properties": 5},
            "json: cannot unmarshal number into Go struct field "
            "JSONSchemaProps.spec.versions.schema.openAPIV3Schema.properties.properties "
            "of type map[string]v1.JSONSchemaProps",
        ),
        (
            {"type": "object", "x-kubernetes-validations": [{"rule": 5}]},
            "json: cannot unmarshal number into Go struct field "
            "ValidationRule.spec.versions.schema.openAPIV3Schema.properties.x-kubernetes-validations.rule "
            "of type string",
        ),
        (
            {"type": "object", "properties": {"n": {"type": "integer", "minLength": 1.5}}},
            "json: cannot unmarshal number 1.5 into Go struct field "
            "JSONSchemaProps.spec.versions.schema.openAPIV3Schema.properties.properties.minLength of type int64",
        ),
    ],
    ids=["properties-5", "rule-5", "fraction"],
)
async def test_a_schema_that_does_not_decode_is_400_in_the_decoders_words(
    served: APIServer, schema: Obj, message: str
) -> None:
    status, body = await call(served, "POST", CRDS, definition(schema))
    assert status == 400, body
    assert body["message"] == (
        'CustomResourceDefinition in version "v1" cannot be handled as a CustomResourceDefinition: ' + message
    )
    await assert_nothing_stored_and_documents_served(served)


def _cause(body: Obj, field: str) -> str:
    found = [c["message"] for c in body["details"]["causes"] if c["field"] == field]
    assert found, body["details"]["causes"]
    return found[0]


@pytest.mark.parametrize(
    ("schema", "field", "check"),
    [
        (
            {"type": "object", "properties": {"a": {"type": "bogus"}}},
            f"{ROOT}.properties[spec].properties[a].type",
            lambda m: (
                m == 'Unsupported value: "bogus": supported values: '
                '"array", "boolean", "integer", "number", "object", "string"'
            ),
        ),
        (
            {"type": "object", "x-kubernetes-validations": [{"rule": "self.a +"}]},
            f"{ROOT}.properties[spec].x-kubernetes-validations[0].rule",
            lambda m: m.startswith('Invalid value: "self.a +": compilation failed: ERROR: <input>:1:9: Syntax error:'),
        ),
        (
            {"type": "object", "properties": {"s": {"type": "string", "pattern": "("}}},
            f"{ROOT}.properties[spec].properties[s].pattern",
            lambda m: (
                m.startswith('Invalid value: "(": must be a valid regular expression, but isn\'t: ')
                and (not patterns.LINEAR or m.endswith("error parsing regexp: missing closing ): `(`"))
            ),
        ),
        (
            {"type": "object", "properties": {"x": {"description": "no type"}}},
            f"{ROOT}.properties[spec].properties[x].type",
            lambda m: m == "Required value: must not be empty for specified object fields",
        ),
        (
            {"type": "object", "properties": {"x": None}},
            f"{ROOT}.properties[spec].properties[x].type",
            lambda m: m == "Required value: must not be empty for specified object fields",
        ),
        (
            {"type": "array"},
            f"{ROOT}.properties[spec].items",
            lambda m: m == "Required value: must be specified",
        ),
        (
            {"type": "object", "x-kubernetes-validations": [{"rule": "  "}]},
            f"{ROOT}.properties[spec].x-kubernetes-validations[0].rule",
            lambda m: m == "Required value: rule is not specified",
        ),
        (
            {"type": "object", "anyOf": [{"type": "string"}]},
            f"{ROOT}.properties[spec].anyOf[0].type",
            lambda m: m == "Forbidden: must be empty to be structural",
        ),
    ],
    ids=["type-bogus", "cel-syntax", "pattern", "no-type", "null-field", "array-no-items", "empty-rule", "nested-type"],
)
async def test_a_schema_that_does_not_validate_is_422_naming_the_field(
    served: APIServer, schema: Obj, field: str, check: Callable[[str], bool]
) -> None:
    status, body = await call(served, "POST", CRDS, definition(schema))
    assert status == 422, body
    assert body["reason"] == "Invalid"
    assert check(_cause(body, field)), body["details"]["causes"]
    await assert_nothing_stored_and_documents_served(served)


async def test_an_update_to_a_bad_schema_is_refused_and_the_good_one_stays(served: APIServer) -> None:
    good = definition({"type": "object", "properties": {"a": {"type": "string", "pattern": "^[a-z]+$"}}})
    status, created = await call(served, "POST", CRDS, good)
    assert status == 201, created
    bad = copy.deepcopy(created)
    bad["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["a"]["type"] = "bogus"
    status, body = await call(served, "PUT", f"{CRDS}/things.example.io", bad)
    assert status == 422, body
    status, v2 = await call(served, "GET", "/openapi/v2")
    assert status == 200
    assert v2["definitions"]["io.example.v1.Thing"]["properties"]["spec"]["properties"]["a"]["type"] == "string"


async def test_int_or_string_any_of_is_structural(served: APIServer) -> None:
    schema = {
        "type": "object",
        "properties": {
            "port": {"x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer"}, {"type": "string"}]}
        },
    }
    status, body = await call(served, "POST", CRDS, definition(schema))
    assert status == 201, body


async def test_a_definition_40_levels_deep_is_published_at_once(served: APIServer) -> None:
    schema: Obj = {"type": "string"}
    for _ in range(40):
        schema = {"type": "object", "properties": {"a": schema}}
    status, body = await call(served, "POST", CRDS, definition(schema))
    assert status == 201, body
    for path in ("/openapi/v2", "/openapi/v3/apis/example.io/v1"):
        status, doc = await call(served, "GET", path)
        assert status == 200, path
    assert "io.example.v1.Thing" in doc["components"]["schemas"]
