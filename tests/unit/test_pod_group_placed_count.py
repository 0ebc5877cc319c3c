"""A pod-group index that follows the cache counts each group's placed members as the cache
changes: whatever the cache and the informers do, in any order, ``scheduled_count`` is what
``state`` counts member by member."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.backend.cache import Cache, CacheError
from kubesched.backend.pod_groups import PodGroupIndex
from kubesched.framework.types import PodInfo
from kubesched.testing import make_pod

GROUPS = ("a", "b")
MEMBERS = 2
NODES = ("n1", "n2")


def member(group: str, i: int, node: str = "") -> PodInfo:
    pod: dict[str, Any] = make_pod(f"{group}-{i}").obj()
    pod["metadata"]["uid"] = f"{group}-{i}"
    pod["spec"]["schedulingGroup"] = {"podGroupName": group}
    if node:
        pod["spec"]["nodeName"] = node
    return PodInfo(copy.deepcopy(pod))


OPS = st.lists(
    st.tuples(
        st.sampled_from(("seen", "seen-bound", "assume", "forget", "confirm", "cache-remove", "deleted")),
        st.sampled_from(GROUPS),
        st.integers(0, MEMBERS - 1),
        st.sampled_from(NODES),
    ),
    min_size=1,
    max_size=40,
)


def apply(op: str, cache: Cache, index: PodGroupIndex, group: str, i: int, node: str) -> None:
    if op == "seen":
        index.put_pod(member(group, i))
    elif op == "seen-bound":
        index.put_pod(member(group, i, node))
    elif op == "assume":
        try:
            cache.assume_pod(member(group, i, node), node)
        except CacheError:
            pass  # already in the cache: the scheduler never assumes it again
    elif op == "forget":
        try:
            cache.forget_pod(member(group, i))
        except CacheError:
            pass  # bound, not assumed
    elif op == "confirm":
        cache.add_pod(member(group, i, node))
    elif op == "cache-remove":
        cache.remove_pod(f"{group}-{i}")
    else:
        index.remove_pod(f"{group}-{i}")


@settings(max_examples=500, deadline=None)
@given(OPS, st.data())
def test_the_placed_count_is_what_the_state_counts(ops: list[tuple[str, str, int, str]], data: st.DataObject) -> None:
    follow_at = data.draw(st.integers(0, len(ops) // 2), label="follow_at")
    cache = Cache()
    index = PodGroupIndex()
    for n, (op, group, i, node) in enumerate(ops):
        if n == follow_at:
            index.follow(cache)  # members already known are counted from here
        apply(op, cache, index, group, i, node)
        for g in GROUPS:
            assert index.scheduled_count("default", g) == len(index.state("default", g).scheduled), (n, op, g)


def test_an_index_that_follows_no_cache_counts_by_the_state() -> None:
    index = PodGroupIndex()
    index.put_pod(member("a", 0, "n1"))
    index.put_pod(member("a", 1))
    assert index.scheduled_count("default", "a") == 1
