"""GroupKey: which pod group, as the pod-group index, the queue, the cycle and the plugins name
it — typed parts, with the text forms of old kept for messages (``PodGroup/<ns>/<name>``) and for
the queue's entities (upstream's ``EntityKey.String()``, ``podgroup/<ns>/<name>``)."""

from __future__ import annotations

import pytest

from kubesched.backend.pod_group_members import pod_group_key
from kubesched.backend.pod_groups import PodGroupIndex
from kubesched.framework.podgroup import (
    COMPOSITE_POD_GROUP_KIND,
    POD_GROUP_KIND,
    GroupKey,
    PodGroupInfo,
    group_key,
)
from kubesched.framework.types import PodInfo
from kubesched.runtime.framework import NoPodGroups
from tests.unit.plugins.pod_group_fakes import composite_pod_group, pod_group


@pytest.mark.parametrize(
    ("key", "text", "entity", "composite"),
    [
        (group_key("ml", "train"), "PodGroup/ml/train", "podgroup/ml/train", False),
        (
            group_key("ml", "job", COMPOSITE_POD_GROUP_KIND),
            "CompositePodGroup/ml/job",
            "compositepodgroup/ml/job",
            True,
        ),
        # A name is never cut out of the text again, so nothing in it can be misread.
        (GroupKey(POD_GROUP_KIND, "ns", "a/b"), "PodGroup/ns/a/b", "podgroup/ns/a/b", False),
    ],
    ids=["pod-group", "composite", "slash-in-name"],
)
def test_text_forms(key: GroupKey, text: str, entity: str, composite: bool) -> None:
    assert str(key) == text and f"{key}" == text
    assert key.entity == entity
    assert key.is_composite is composite


def test_the_parts_are_fields_and_the_key_is_a_value() -> None:
    key = group_key("ns", "pg")
    assert type(key) is GroupKey
    assert (key.kind, key.namespace, key.name) == ("PodGroup", "ns", "pg")
    assert key == GroupKey("PodGroup", "ns", "pg") and hash(key) == hash(GroupKey("PodGroup", "ns", "pg"))
    assert key != group_key("ns", "pg", COMPOSITE_POD_GROUP_KIND)
    assert key != "PodGroup/ns/pg"  # a key is not its text: a str never finds a GroupKey in a dict
    assert "PodGroup/ns/pg" not in {key: 1}


def test_the_queue_entity_of_a_pod_group_is_the_keys_entity() -> None:
    assert pod_group_key("ns", "pg") == group_key("ns", "pg").entity == "podgroup/ns/pg"


def test_children_sort_as_their_text_did_composites_first_then_by_name() -> None:
    idx = PodGroupIndex()
    for name in ("b", "a-b", "a"):
        idx.put_group(pod_group(name, parent="root"))
    for name in ("z", "c"):
        idx.put_composite(composite_pod_group(name, parent="root"))
    children = idx.children(group_key("default", "root", COMPOSITE_POD_GROUP_KIND))
    assert [str(k) for k in children] == sorted(str(k) for k in children)
    assert [k.name for k in children] == ["c", "z", "a", "a-b", "b"]


def _hierarchy() -> PodGroupIndex:
    idx = PodGroupIndex()
    idx.put_composite(composite_pod_group("root"))
    idx.put_composite(composite_pod_group("mid", parent="root"))
    idx.put_group(pod_group("leaf", min_count=1, parent="mid"))
    idx.put_group(pod_group("solo", min_count=1, parent="root"))
    return idx


def test_every_key_the_index_gives_is_a_group_key() -> None:
    idx = _hierarchy()
    leaf = group_key("default", "leaf")
    root = idx.root_of(leaf)
    top, problem = idx.snapshot_top(leaf)
    parent = idx.parent_of(leaf)
    given = [root, top, parent, *idx.children(group_key("default", "root", COMPOSITE_POD_GROUP_KIND))]
    given += idx.leaves_under(group_key("default", "root", COMPOSITE_POD_GROUP_KIND))
    assert problem == ""
    assert all(type(k) is GroupKey for k in given), given
    assert root == top == group_key("default", "root", COMPOSITE_POD_GROUP_KIND)
    assert parent == group_key("default", "mid", COMPOSITE_POD_GROUP_KIND)
    assert idx.leaves_under(group_key("default", "root", COMPOSITE_POD_GROUP_KIND)) == [
        leaf,
        group_key("default", "solo"),
    ]
    assert (
        idx.object(leaf) is not None and idx.object(group_key("default", "mid", COMPOSITE_POD_GROUP_KIND)) is not None
    )
    assert idx.object(group_key("default", "leaf", COMPOSITE_POD_GROUP_KIND)) is None  # same name, other kind
    pod = PodInfo(
        {
            "metadata": {"name": "p", "namespace": "default", "uid": "u1"},
            "spec": {"schedulingGroup": {"podGroupName": "leaf"}},
        }
    )
    assert idx.entity_of(pod) == "podgroup/default/leaf"
    assert idx.entity_of(pod, hierarchies=True) == "compositepodgroup/default/root"


def test_a_standalone_frameworks_pod_groups_answer_in_keys_too() -> None:
    none = NoPodGroups()
    leaf, cpg = group_key("ns", "pg"), group_key("ns", "c", COMPOSITE_POD_GROUP_KIND)
    assert none.root_of(leaf) == leaf and none.snapshot_top(leaf) == (leaf, "")
    assert none.leaves_under(leaf) == [leaf] and none.leaves_under(cpg) == [] and none.children(cpg) == []


def test_pod_group_info_carries_its_key() -> None:
    info = PodGroupInfo("ml", "job", None, kind=COMPOSITE_POD_GROUP_KIND)
    assert type(info.key) is GroupKey and info.key == group_key("ml", "job", COMPOSITE_POD_GROUP_KIND)
    assert repr(info) == "PodGroupInfo(CompositePodGroup/ml/job, children=[])"
