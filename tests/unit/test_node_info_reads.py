"""What NodeInfo reads of a node: its declared features (read once, kept by a clone, read
again after set_node) and the taints and unschedulable flag the hints read off a node object
not derived (:func:`node_taints`, :func:`node_unschedulable`), the same as NodeInfo's."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.framework.types import NodeInfo, node_taints, node_unschedulable


def _node(spec: Any = None, status: Any = None) -> dict[str, Any]:
    node: dict[str, Any] = {"metadata": {"name": "n1"}}
    if spec is not None:
        node["spec"] = spec
    if status is not None:
        node["status"] = status
    return node


@pytest.mark.parametrize(
    ("status", "features"),
    [
        (None, frozenset()),
        ({"declaredFeatures": None}, frozenset()),
        ({"declaredFeatures": ["A", "B"]}, frozenset({"A", "B"})),
        ({"declaredFeatures": ["A", 3]}, frozenset({"A", "3"})),
    ],
)
def test_declared_features(status: Any, features: frozenset[str]) -> None:
    ni = NodeInfo(_node(status=status))
    assert ni.declared_features == features
    assert ni.clone().declared_features == features


def test_declared_features_follow_set_node() -> None:
    ni = NodeInfo(_node(status={"declaredFeatures": ["A"]}))
    assert ni.declared_features == {"A"}
    ni.set_node(_node(status={"declaredFeatures": ["B"]}))
    assert ni.declared_features == {"B"}
    assert NodeInfo().declared_features == frozenset()


@pytest.mark.parametrize(
    "spec",
    [
        None,
        {},
        {"unschedulable": True, "taints": [{"key": "k", "effect": "NoSchedule"}]},
        {"unschedulable": False, "taints": None},
        {"unschedulable": "", "taints": []},
    ],
)
def test_raw_reads_are_node_info_s(spec: Any) -> None:
    node = _node(spec=spec)
    ni = NodeInfo(node)
    assert node_taints(node) == ni.taints == list(((node.get("spec") or {}).get("taints")) or ())
    assert node_unschedulable(node) == ni.unschedulable == bool((node.get("spec") or {}).get("unschedulable"))
    assert (node_taints(None), node_unschedulable(None)) == ([], False)
