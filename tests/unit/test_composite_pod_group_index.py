"""PodGroupIndex with CompositePodGroups: parent→children links (made before the parent is
seen), a group's root, and the leaves of a hierarchy."""

from __future__ import annotations

from kubesched.backend.pod_groups import PodGroupIndex
from kubesched.framework.podgroup import COMPOSITE_POD_GROUP_KIND, PodGroupInfo, group_key
from tests.unit.plugins.pod_group_fakes import composite_pod_group, pod_group


def _cpg(name: str) -> str:
    return group_key("default", name, COMPOSITE_POD_GROUP_KIND)


def test_children_are_linked_before_the_parent_is_seen_and_the_root_waits_for_it() -> None:
    idx = PodGroupIndex()
    idx.put_group(pod_group("b", min_count=1, parent="sub"))
    idx.put_group(pod_group("a", min_count=1, parent="sub"))
    assert idx.children(_cpg("sub")) == [group_key("default", "a"), group_key("default", "b")]
    assert idx.root_of(group_key("default", "a")) is None  # "sub" unseen
    idx.put_composite(composite_pod_group("sub", min_group_count=2, parent="root"))
    assert idx.root_of(group_key("default", "a")) is None  # "root" unseen
    idx.put_composite(composite_pod_group("root"))
    assert idx.root_of(group_key("default", "a")) == _cpg("root")
    idx.put_group(pod_group("c", parent="root"))
    assert idx.leaves_under(_cpg("root")) == [
        group_key("default", "a"),
        group_key("default", "b"),
        group_key("default", "c"),
    ]
    assert idx.composite("default", "sub") is not None
    assert idx.root_of(group_key("default", "lonely")) == group_key("default", "lonely")


def test_a_changed_or_removed_parent_moves_the_links() -> None:
    idx = PodGroupIndex()
    idx.put_composite(composite_pod_group("r1"))
    idx.put_composite(composite_pod_group("r2"))
    idx.put_group(pod_group("a", parent="r1"))
    idx.put_group(pod_group("a", parent="r2"))
    assert idx.children(_cpg("r1")) == []
    assert idx.children(_cpg("r2")) == [group_key("default", "a")]
    idx.remove_group(pod_group("a", parent="r2"))
    assert idx.children(_cpg("r2")) == []
    idx.remove_composite(composite_pod_group("r2"))
    assert idx.composite("default", "r2") is None


def test_a_loop_in_the_hierarchy_has_no_root() -> None:
    idx = PodGroupIndex()
    idx.put_composite(composite_pod_group("x", parent="y"))
    idx.put_composite(composite_pod_group("y", parent="x"))
    idx.put_group(pod_group("a", parent="x"))
    assert idx.root_of(group_key("default", "a")) is None
    assert idx.leaves_under(_cpg("x")) == [group_key("default", "a")]


def test_pod_group_info_of_a_composite_counts_groups() -> None:
    leaf = PodGroupInfo("default", "a", pod_group("a", min_count=3, parent="r"))
    gang = PodGroupInfo(
        "default", "r", composite_pod_group("r", min_group_count=2), kind="CompositePodGroup", children=[leaf]
    )
    basic = PodGroupInfo("default", "b", composite_pod_group("b"), kind="CompositePodGroup")
    assert gang.key == _cpg("r") and gang.is_composite and gang.min_count == 2 and gang.is_gang
    assert basic.min_count == 1 and not basic.is_gang
    assert leaf.min_count == 3 and gang.leaves() == [leaf]
