"""PodGroupIndex with CompositePodGroups: parent→children links (made before the parent is
seen), a group's root, and the leaves of a hierarchy."""

from __future__ import annotations

import pytest

from kubesched.backend.pod_groups import PodGroupIndex
from kubesched.framework.podgroup import COMPOSITE_POD_GROUP_KIND, GroupKey, PodGroupInfo, group_key
from tests.unit.plugins.pod_group_fakes import composite_pod_group, pod_group


def _cpg(name: str) -> GroupKey:
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


# --- cache.BuildHierarchySnapshotFromPod (1.37): where a PodGroup's hierarchy snapshot is built
# from, or why it cannot be. Worked from the function itself (its walk up looks at most
# WorkloadMaxTreeDepth - 1 = 3 parents, then stops; a group met twice on the walk down from there
# is a cycle): 1.37's own test table for it is not in the stored sources. A chain "pg c1 c2 r"
# is PodGroup pg under c1 under c2 under root r; "x>y" makes composite x name y as its parent.


def _index(chain: str, *extra: str) -> PodGroupIndex:
    """``chain``: the PodGroup, then its ancestors up to the root (all seen unless named in
    ``extra`` as ``-name``); ``extra``: more composites as ``name>parent``, or ``-name`` unseen."""
    idx = PodGroupIndex()
    names = chain.split()
    unseen = {e[1:] for e in extra if e.startswith("-")}
    idx.put_group(pod_group(names[0], min_count=1, parent=names[1] if len(names) > 1 else None))
    for i, name in enumerate(names[1:], start=1):
        if name not in unseen:
            idx.put_composite(composite_pod_group(name, parent=names[i + 1] if i + 1 < len(names) else None))
    for e in extra:
        if ">" in e:
            name, parent = e.split(">")
            idx.put_composite(composite_pod_group(name, parent=parent))
    return idx


def _missing(name: str) -> str:
    return f"composite pod group object not found in state for compositepodgroup/default/{name}"


def _cycle(name: str) -> str:
    return f"cycle detected in composite pod group hierarchy: compositepodgroup/default/{name}"


BUILD_HIERARCHY_SNAPSHOT_FROM_POD = [
    ("a pod group without a parent", _index("pg"), (group_key("default", "pg"), "")),
    ("a pod group under a root", _index("pg r"), (_cpg("r"), "")),
    ("four levels, the most a Workload's templates allow", _index("pg c1 c2 r"), (_cpg("r"), "")),
    ("five levels: the walk stops at the root, three parents up", _index("pg c1 c2 c3 r"), (_cpg("r"), "")),
    ("six levels: the walk stops below the root", _index("pg c1 c2 c3 c4 r"), (_cpg("c4"), "")),
    ("the parent not seen", _index("pg missing", "-missing"), (None, _missing("missing"))),
    ("a grandparent not seen", _index("pg c1 missing", "-missing"), (None, _missing("missing"))),
    ("the root not seen, three parents up", _index("pg c1 c2 missing", "-missing"), (None, _missing("missing"))),
    ("the root not seen, past the walk", _index("pg c1 c2 c3 missing", "-missing"), (_cpg("missing"), "")),
    ("a composite its own parent", _index("pg self", "self>self"), (None, _cycle("self"))),
    ("two composites each other's parent", _index("pg c1", "c1>c2", "c2>c1"), (None, _cycle("c2"))),
    ("three composites in a ring", _index("pg c1", "c1>c2", "c2>c3", "c3>c1"), (None, _cycle("c1"))),
    ("a ring past the walk's end", _index("pg c1 c2 c3", "c3>c4", "c4>c5", "c5>c4"), (None, _cycle("c4"))),
    ("a ring out of the walk's reach", _index("pg c1 c2 c3", "c3>c4", "c4>c5", "c5>c6", "c6>c5"), (_cpg("c4"), "")),
]


@pytest.mark.parametrize(
    ("idx", "want"),
    [c[1:] for c in BUILD_HIERARCHY_SNAPSHOT_FROM_POD],
    ids=[c[0] for c in BUILD_HIERARCHY_SNAPSHOT_FROM_POD],
)
def test_build_hierarchy_snapshot_from_pod(idx: PodGroupIndex, want: tuple[GroupKey | None, str]) -> None:
    assert idx.snapshot_top(group_key("default", "pg")) == want
