"""The store's binding follows kube-apiserver's ClearingNominatedNodeNameAfterBinding gate."""

from __future__ import annotations

import pytest

from kubesched.cluster.base import Conflict, NotFound
from kubesched.cluster.store import Store
from kubesched.framework.features import FeatureGates


def nominated_then_bound(store: Store) -> str | None:
    store.create("Node", {"metadata": {"name": "n1"}})
    store.create(
        "Pod",
        {"metadata": {"name": "p", "namespace": "default"}, "spec": {}, "status": {"nominatedNodeName": "n1"}},
    )
    store.bind("default", "p", "n1")
    got: str | None = store.get("Pod", "default", "p")["status"].get("nominatedNodeName")
    return got


@pytest.mark.parametrize(
    ("gates", "left"),
    [
        (None, None),  # 1.37's default: on
        (FeatureGates({"ClearingNominatedNodeNameAfterBinding": True}), None),
        (FeatureGates({"ClearingNominatedNodeNameAfterBinding": False}), "n1"),
    ],
)
def test_binding_clears_the_nomination_as_the_gate_says(gates: FeatureGates | None, left: str | None) -> None:
    store = Store()
    store.follow_gates(gates)
    assert nominated_then_bound(store) == left


def test_a_second_binding_conflicts_and_changes_nothing() -> None:
    store = Store()
    store.create("Pod", {"metadata": {"name": "p", "namespace": "default"}, "spec": {}})
    bound = store.bind("default", "p", "n1")
    with pytest.raises(Conflict, match='pod p is already assigned to node "n1"'):
        store.bind("default", "p", "n2")
    after = store.get("Pod", "default", "p")
    assert after is bound and after["spec"]["nodeName"] == "n1"
    assert after["metadata"]["resourceVersion"] == str(store.resource_version)
    with pytest.raises(NotFound, match='pods "q" not found'):
        store.bind("default", "q", "n1")
