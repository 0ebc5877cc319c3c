"""The CustomResourceDefinition the API-server tests publish: ``things.example.io``, kind
``Thing``, one served version ``v1`` whose ``spec`` has the schema a test gives."""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]


def thing_definition(spec_schema: Any) -> Obj:
    """The CRD of ``things.example.io`` with ``spec_schema`` as the schema of ``spec``."""
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "things.example.io"},
        "spec": {
            "group": "example.io",
            "names": {"plural": "things", "kind": "Thing"},
            "scope": "Namespaced",
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": spec_schema}}},
                }
            ],
        },
    }
