"""Which group a victim is disrupted with (kubesched.plugins.preemption.units), by the rules
upstream's multi-tier preemption cases fix: the topmost group of a pod's chain that says
``disruptionMode: all``, or none (the pod goes alone)."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.backend.pod_groups import PodGroupIndex
from kubesched.framework.podgroup import GroupKey
from kubesched.plugins.preemption.units import unit_key


def group(name: str, mode: str, parent: str = "", kind: str = "PodGroup") -> dict[str, Any]:
    spec: dict[str, Any] = {"disruptionMode": {mode: {}}}
    if parent:
        spec["parentCompositePodGroupName"] = parent
    return {"kind": kind, "metadata": {"name": name, "namespace": "ns"}, "spec": spec}


def tree(root: str, mid: str, leaf: str) -> PodGroupIndex:
    index = PodGroupIndex()
    index.put_composite(group("root", root, kind="CompositePodGroup"))
    index.put_composite(group("mid", mid, parent="root", kind="CompositePodGroup"))
    index.put_group(group("leaf", leaf, parent="mid"))
    return index


@pytest.mark.parametrize(
    ("root", "mid", "leaf", "unit"),
    [
        ("single", "single", "single", None),
        ("single", "single", "all", GroupKey("PodGroup", "ns", "leaf")),
        ("single", "all", "single", GroupKey("CompositePodGroup", "ns", "mid")),
        ("all", "single", "single", GroupKey("CompositePodGroup", "ns", "root")),
        ("all", "all", "all", GroupKey("CompositePodGroup", "ns", "root")),
    ],
)
def test_the_topmost_group_saying_all_is_the_unit(root: str, mid: str, leaf: str, unit: GroupKey | None) -> None:
    assert unit_key(tree(root, mid, leaf), "ns", "leaf", composites=True) == unit


def test_without_composite_pod_groups_only_the_pod_group_counts() -> None:
    assert unit_key(tree("all", "all", "single"), "ns", "leaf", composites=False) is None
    assert unit_key(tree("all", "all", "all"), "ns", "leaf", composites=False) == GroupKey("PodGroup", "ns", "leaf")


def test_an_unseen_parent_ends_the_walk() -> None:
    index = PodGroupIndex()
    index.put_group(group("leaf", "all", parent="gone"))
    assert unit_key(index, "ns", "leaf", composites=True) == GroupKey("PodGroup", "ns", "leaf")
