"""A custom resource's schema is published in OpenAPI v2 visiting each schema node once: a
schema nested 60 levels deep (which a walk doubling at every level could never finish) costs a
number of visits linear in its size."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from kubesched.cluster.custom_resources import CustomResourceRegistry
from kubesched.sim.apiserver.customresources import CustomResources
from kubesched.sim.apiserver.openapi import documents

DEPTH = 60


def nested(depth: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string", "nullable": True}
    for _ in range(depth):
        schema = {"type": "object", "nullable": True, "properties": {"a": schema, "not": {"type": "integer"}}}
    return schema


def definition(schema: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "deeps.example.io"},
        "spec": {
            "group": "example.io",
            "names": {"plural": "deeps", "kind": "Deep"},
            "scope": "Namespaced",
            "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": schema}}],
        },
    }


class TooManyVisits(Exception):
    pass


def test_a_60_level_schema_is_converted_in_linear_visits(monkeypatch: pytest.MonkeyPatch) -> None:
    visits = [0]
    convert: Callable[[Any], Any] = documents._v2_schema
    budget = 50 * DEPTH  # a node's keys and values: a few dozen calls per level at most

    def counted(schema: Any) -> Any:
        visits[0] += 1
        if visits[0] > budget:
            raise TooManyVisits(visits[0])
        return convert(schema)

    monkeypatch.setattr(documents, "_v2_schema", counted)
    registry = CustomResourceRegistry()
    registry.observe("ADDED", definition({"type": "object", "properties": {"spec": nested(DEPTH)}}))
    doc = documents.v2_document(CustomResources(registry).resources())
    assert visits[0] <= budget
    node = doc["definitions"]["io.example.v1.Deep"]["properties"]["spec"]
    for _ in range(DEPTH):
        # v2 has no nullable; a field named "not" is a field, kept
        assert "nullable" not in node and node["properties"]["not"] == {"type": "integer"}
        node = node["properties"]["a"]
    assert node == {"type": "string"}
