"""The store's binding follows kube-apiserver's ClearingNominatedNodeNameAfterBinding gate."""

from __future__ import annotations

import pytest

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
