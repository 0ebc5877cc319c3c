"""The store's registry of custom resources: the key objects are kept under, scope, and a
definition's deletion taking its objects; scenarios holding definitions and their objects."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched.cluster.custom_resources import CRD_KIND, split_store_key, store_key
from kubesched.cluster.store import Store
from kubesched.framework.informers import GroupVersionResource
from kubesched.sim.scenario.loading import load_scenario_into
from kubesched.sim.scenario.reading import ScenarioError, parse_scenario

ROOT = Path(__file__).resolve().parents[2]


def crd(plural: str, kind: str, scope: str = "Namespaced", group: str = "example.io") -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": CRD_KIND,
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {
            "group": group,
            "names": {"plural": plural, "kind": kind},
            "scope": scope,
            "versions": [
                {
                    "name": "v1beta1",
                    "served": True,
                    "storage": False,
                    "schema": {"openAPIV3Schema": {"type": "object"}},
                },
                {"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {"type": "object"}}},
            ],
        },
    }


def test_store_key_is_the_qualified_resource_name() -> None:
    assert store_key("scheduling.x-k8s.io", "elasticquotas") == "elasticquotas.scheduling.x-k8s.io"
    gvr = GroupVersionResource("scheduling.x-k8s.io", "v1alpha1", "elasticquotas")
    assert gvr.qualified_name == store_key("scheduling.x-k8s.io", "elasticquotas")
    assert split_store_key("elasticquotas.scheduling.x-k8s.io") == ("scheduling.x-k8s.io", "elasticquotas")


def test_registry_follows_the_stored_definitions() -> None:
    store = Store()
    store.create(CRD_KIND, crd("things", "Thing"))
    store.create(CRD_KIND, crd("globals", "Global", "Cluster"))
    reg = store.custom_resources
    assert reg.store_key_for("example.io/v1beta1", "Thing") == "things.example.io"
    assert reg.store_key_for("example.io/v2", "Thing") is None
    assert reg.kind_for_key("things.example.io") == ("example.io/v1", "Thing")
    assert reg.resource_for_key("globals.example.io") == ("example.io", "v1", "globals")
    assert reg.is_namespaced("things.example.io") is True and reg.is_namespaced("globals.example.io") is False
    assert reg.lookup("example.io", "v1", "things") is not None
    created = store.create("globals.example.io", {"metadata": {"name": "g", "namespace": "ns"}})
    assert "namespace" not in created["metadata"] and created["apiVersion"] == "example.io/v1"
    assert store.get("globals.example.io", None, "g")["kind"] == "Global"
    store.create("things.example.io", {"metadata": {"name": "t", "namespace": "a"}})
    seen: list[tuple[str, str]] = []
    store.subscribe(lambda etype, kind, obj, old: seen.append((etype, kind)))
    store.delete(CRD_KIND, None, "things.example.io")
    assert seen == [("DELETED", "things.example.io"), ("DELETED", CRD_KIND)]
    assert store.list("things.example.io")[0] == []
    assert reg.store_key_for("example.io/v1", "Thing") is None


def _docs(path: Path) -> list[Any]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


def test_scenario_with_a_definition_then_its_objects() -> None:
    docs = [
        *_docs(ROOT / "config" / "crds" / "scheduling.x-k8s.io_elasticquotas.yaml"),
        {
            "apiVersion": "scheduling.x-k8s.io/v1alpha1",
            "kind": "ElasticQuota",
            "metadata": {"name": "q", "namespace": "team"},
            "spec": {"min": {"cpu": "1"}, "junk": 1},
        },
    ]
    sc = parse_scenario(docs, "s.yaml")
    assert [o["metadata"]["name"] for o in sc.custom_objects] == ["q"]
    assert "junk" not in sc.custom_objects[0]["spec"]  # pruned, as the API server prunes
    store = Store()
    load_scenario_into(store, sc)
    assert store.get("elasticquotas.scheduling.x-k8s.io", "team", "q")["spec"] == {"min": {"cpu": "1"}}
    assert store.get("Namespace", None, "team")
    status = store.get(CRD_KIND, None, "elasticquotas.scheduling.x-k8s.io")["status"]
    assert {c["type"] for c in status["conditions"]} == {"NamesAccepted", "Established"}


def test_scenario_object_without_its_definition_is_refused_naming_it() -> None:
    doc = {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup", "metadata": {"name": "pg"}, "spec": {}}
    with pytest.raises(
        ScenarioError, match=r"no CustomResourceDefinition .* PodGroup in scheduling.x-k8s.io/v1alpha1 \(PodGroup pg\)"
    ):
        parse_scenario([doc], "s.yaml")


def test_scenario_custom_object_failing_its_schema_is_refused_naming_the_field() -> None:
    docs = [
        *_docs(ROOT / "config" / "crds" / "scheduling.x-k8s.io_podgroups.yaml"),
        {
            "apiVersion": "scheduling.x-k8s.io/v1alpha1",
            "kind": "PodGroup",
            "metadata": {"name": "pg"},
            "spec": {"minMember": 0},
        },
    ]
    with pytest.raises(
        ScenarioError, match=r'PodGroup.scheduling.x-k8s.io "pg" is invalid: spec.minMember: Invalid value: 0'
    ):
        parse_scenario(docs, "s.yaml")


def test_scenario_definition_with_an_unknown_field_is_refused() -> None:
    bad = crd("things", "Thing")
    bad["spec"]["scoop"] = "x"
    with pytest.raises(ScenarioError, match=r'strict decoding error: unknown field "spec.scoop"'):
        parse_scenario([bad], "s.yaml")


def test_find_is_get_without_the_exception_for_every_scope() -> None:
    store = Store()
    store.create("Node", {"metadata": {"name": "n1"}})
    store.create("Event", {"metadata": {"name": "e", "namespace": "ns"}})
    assert store.find("Node", None, "n1") is store.get("Node", None, "n1")
    assert store.find("Event", "ns", "e") is store.get("Event", "ns", "e")
    assert store.find("Event", "other", "e") is None
    assert store.find("Event", "ns", "missing") is None
    assert store.find("NoSuchKind", None, "x") is None
