"""An object's namespace and name as one text, written in one place (kubesched/objects.py) and
the same text everywhere it was written before: listers, the store, pods' keys."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.cluster.store import Store
from kubesched.framework.types import PodInfo, pod_key
from kubesched.objects import namespaced_name, object_key
from kubesched.runtime.objects import ObjectIndex


def _obj(name: Any, namespace: Any = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    return {"metadata": meta}


@pytest.mark.parametrize(
    ("namespace", "name", "want"),
    [("ns", "a", "ns/a"), (None, "node-1", "node-1"), ("", "node-1", "node-1")],
    ids=["namespaced", "cluster-scoped", "empty-namespace"],
)
def test_namespaced_name(namespace: str | None, name: str, want: str) -> None:
    assert namespaced_name(namespace, name) == want
    assert object_key(_obj(name, namespace)) == want


def test_object_key_of_odd_metadata_is_text() -> None:
    assert object_key({}) == ""
    assert object_key({"metadata": None}) == ""
    assert object_key(_obj(7, "ns")) == "ns/7"


def test_a_pods_key_names_the_default_namespace_when_it_has_none() -> None:
    pod = {"metadata": {"name": "p", "uid": "u"}, "spec": {"containers": []}}
    assert pod_key(pod) == PodInfo(pod).key == "default/p"
    pod["metadata"]["namespace"] = "ml"
    assert pod_key(pod) == PodInfo(pod).key == "ml/p"
    assert object_key({"metadata": {"name": "p"}}) == "p"  # an object says what it says


def test_listers_and_the_store_file_objects_under_the_same_text() -> None:
    index = ObjectIndex()
    index.put(_obj("a", "ns"))
    index.put(_obj("n1"))
    assert index.get("ns", "a") == _obj("a", "ns") and index.get(None, "n1") == _obj("n1")
    assert index.get("other", "a") is None and index.get("ns", "n1") == _obj("n1")
    store = Store()
    assert store.object_key("Pod", "ns", "a") == "ns/a"
    assert store.object_key("Pod", None, "a") == "default/a"
    assert store.object_key("Node", None, "n1") == "n1"
