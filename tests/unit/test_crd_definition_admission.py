"""CustomResourceDefinitions as the embedded API server admits them, and the discovery and
OpenAPI documents of the resources they declare."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubesched.cluster.custom_resources import CRD_KIND, CustomResourceRegistry
from kubesched.cluster.store import Store
from kubesched.sim.apiserver.customresources import (
    CustomResources,
    admit_custom_new,
    admit_custom_update,
    admit_definition,
)
from kubesched.sim.apiserver.discovery import aggregated_discovery, api_group, api_resource_list, version_priority
from kubesched.sim.apiserver.errors import APIError
from kubesched.sim.apiserver.openapi import documents

CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": CRD_KIND,
    "metadata": {"name": "gadgets.example.io"},
    "spec": {
        "group": "example.io",
        "names": {"plural": "gadgets", "kind": "Gadget", "shortNames": ["gd"]},
        "scope": "Namespaced",
        "versions": [
            {"name": "v1alpha1", "served": True, "storage": False, "schema": {"openAPIV3Schema": {"type": "object"}}},
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "subresources": {"status": {}},
                "schema": {
                    "openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object", "nullable": True}}}
                },
            },
        ],
    },
}


def test_admitted_definition_is_defaulted_and_established() -> None:
    crd = admit_definition(copy.deepcopy(CRD), None, CustomResourceRegistry())
    assert crd["spec"]["names"]["singular"] == "gadget" and crd["spec"]["names"]["listKind"] == "GadgetList"
    assert crd["spec"]["conversion"] == {"strategy": "None"}
    assert [(c["type"], c["status"], c["reason"]) for c in crd["status"]["conditions"]] == [
        ("NamesAccepted", "True", "NoConflicts"),
        ("Established", "True", "InitialNamesAccepted"),
    ]
    assert crd["status"]["storedVersions"] == ["v1"] and crd["status"]["acceptedNames"]["kind"] == "Gadget"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda c: c["metadata"].update(name="other.example.io"),
            'metadata.name: Invalid value: "other.example.io": must be spec.names.plural+"."+spec.group',
        ),
        (
            lambda c: c["spec"].update(scope="Global"),
            'spec.scope: Unsupported value: "Global": supported values: "Cluster", "Namespaced"',
        ),
        (
            lambda c: c["spec"]["versions"][0].update(storage=True),
            'spec.versions: Invalid value: "": must have exactly one version marked as storage version',
        ),
        (
            lambda c: c["spec"]["versions"][1].pop("schema"),
            "spec.versions[1].schema.openAPIV3Schema: Required value",
        ),
        (lambda c: c["spec"]["names"].pop("kind"), "spec.names.kind: Required value"),
        (
            lambda c: c["spec"]["names"].update(singular="Gadget"),
            'spec.names.singular: Invalid value: "Gadget": a lowercase RFC 1123 label must consist of',
        ),
        (
            lambda c: c["spec"]["names"].update(listKind="gadget_list"),
            'spec.names.listKind: Invalid value: "gadget_list": may have mixed case, but should otherwise match',
        ),
        (
            lambda c: c["spec"]["names"].update(listKind="Gadget"),
            'spec.names.listKind: Invalid value: "Gadget": kind and listKind may not be the same',
        ),
    ],
)
def test_invalid_definitions_are_refused_naming_the_field(change: Any, message: str) -> None:
    crd = copy.deepcopy(CRD)
    change(crd)
    with pytest.raises(APIError) as err:
        admit_definition(crd, None, CustomResourceRegistry())
    assert err.value.code == 422 and message in err.value.message


def test_a_protected_group_needs_the_approval_annotation() -> None:
    crd = copy.deepcopy(CRD)
    crd["spec"]["group"] = "example.k8s.io"
    crd["metadata"]["name"] = "gadgets.example.k8s.io"
    with pytest.raises(APIError, match=r"metadata.annotations\[api-approved.kubernetes.io\]: Required value"):
        admit_definition(copy.deepcopy(crd), None, CustomResourceRegistry())
    crd["metadata"]["annotations"] = {
        "api-approved.kubernetes.io": "https://github.com/kubernetes/enhancements/pull/1111"
    }
    assert admit_definition(crd, None, CustomResourceRegistry())["status"]["storedVersions"] == ["v1"]


def test_a_stored_version_may_not_leave_spec_versions() -> None:
    old = admit_definition(copy.deepcopy(CRD), None, CustomResourceRegistry())
    new = copy.deepcopy(old)
    new["spec"]["versions"] = [dict(new["spec"]["versions"][0], storage=True)]
    with pytest.raises(
        APIError, match=r"status.storedVersions\[0\]: Invalid value: \"v1\": missing from spec.versions; v1 was"
    ):
        admit_definition(new, old, CustomResourceRegistry())


def test_scope_is_immutable() -> None:
    old = admit_definition(copy.deepcopy(CRD), None, CustomResourceRegistry())
    new = copy.deepcopy(old)
    new["spec"]["scope"] = "Cluster"
    with pytest.raises(APIError, match='spec.scope: Invalid value: "Cluster": field is immutable'):
        admit_definition(new, old, CustomResourceRegistry())


def test_discovery_and_openapi_of_a_definition() -> None:
    store = Store()
    store.create(CRD_KIND, admit_definition(copy.deepcopy(CRD), None, store.custom_resources))
    custom = CustomResources(store.custom_resources).resources()
    group = api_group("example.io", custom)
    assert group is not None and group["preferredVersion"]["version"] == "v1"
    listed = api_resource_list("example.io", "v1", None, custom)
    assert listed is not None
    names = {r["name"]: r for r in listed["resources"]}
    assert names["gadgets"]["shortNames"] == ["gd"] and names["gadgets"]["singularName"] == "gadget"
    assert "gadgets/status" in names
    assert api_resource_list("example.io", "v1alpha1", None, custom) is not None
    aggregated = aggregated_discovery(
        False, "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList", None, custom
    )
    item = next(i for i in aggregated["items"] if i["metadata"]["name"] == "example.io")
    assert [v["version"] for v in item["versions"]] == ["v1", "v1alpha1"]
    assert "apis/example.io/v1" in documents.v3_index(custom)["paths"]
    doc = documents.v3_document("apis/example.io/v1", custom)
    assert doc is not None
    schema = doc["components"]["schemas"]["io.example.v1.Gadget"]
    assert schema["x-kubernetes-group-version-kind"] == [{"group": "example.io", "version": "v1", "kind": "Gadget"}]
    patch = doc["paths"]["/apis/example.io/v1/namespaces/{namespace}/gadgets/{name}"]["patch"]
    assert "fieldValidation" in {p["name"] for p in patch["parameters"]}
    assert "application/strategic-merge-patch+json" not in patch["requestBody"]["content"]
    v2 = documents.v2_document(custom)["definitions"]["io.example.v1.Gadget"]
    assert "nullable" not in v2["properties"]["spec"]  # not OpenAPI v2


def test_version_priority_orders_as_kubernetes() -> None:
    names = ["v1alpha1", "v2", "foo", "v1beta2", "v1", "v1beta1", "v10"]
    assert sorted(names, key=version_priority) == ["v10", "v2", "v1", "v1beta2", "v1beta1", "v1alpha1", "foo"]


def test_custom_object_updates_through_the_main_resource_and_status() -> None:
    store = Store()
    crd = copy.deepcopy(CRD)
    crd["spec"]["versions"][1]["schema"]["openAPIV3Schema"] = {
        "type": "object",
        "x-kubernetes-preserve-unknown-fields": True,
    }
    store.create(CRD_KIND, admit_definition(crd, None, store.custom_resources))
    res = next(r for r in CustomResources(store.custom_resources).resources() if r.version == "v1")
    created = admit_custom_new(
        res,
        {
            "apiVersion": "example.io/v1",
            "kind": "Gadget",
            "metadata": {"name": "g"},
            "spec": {"a": 1},
            "status": {"s": 1},
        },
    )
    assert "status" not in created and created["metadata"]["generation"] == 1  # create cannot set status
    created["status"] = {"s": 1}
    main = admit_custom_update(res, created, {**copy.deepcopy(created), "spec": {"a": 2}, "status": {"s": 9}}, "")
    assert main["status"] == {"s": 1} and main["metadata"]["generation"] == 2
    labels = copy.deepcopy(main)
    labels["metadata"]["labels"] = {"x": "y"}
    assert admit_custom_update(res, main, labels, "")["metadata"]["generation"] == 2
    status = admit_custom_update(res, main, {**copy.deepcopy(main), "spec": {"a": 7}, "status": {"s": 3}}, "status")
    assert status["spec"] == {"a": 2} and status["status"] == {"s": 3} and status["metadata"]["generation"] == 2


def test_a_definition_whose_schema_does_not_decode_is_refused_outside_http_too() -> None:
    crd = copy.deepcopy(CRD)
    crd["spec"]["versions"][1]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"] = 5
    with pytest.raises(APIError) as refused:
        admit_definition(crd, None, CustomResourceRegistry())
    assert refused.value.code == 400
    assert "JSONSchemaProps.spec.versions.schema.openAPIV3Schema.properties.properties" in str(refused.value.message)
