"""A PodInfo's copies (``with_node``, ``with_nomination``, ``rebased``) share every derived slot
with the original, whatever slots PodInfo has: the copy names each slot, and this test holds the
list to ``PodInfo.__slots__`` (a slot added and not copied would be missing from the copies)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from kubesched.framework.types import PodInfo
from kubesched.testing import make_pod


def _pod() -> PodInfo:
    pi = make_pod("p").req(cpu="100m").label("app", "a").info()
    return pi


COPIES: list[tuple[str, Callable[[PodInfo], PodInfo], set[str]]] = [
    ("with_node", lambda pi: pi.with_node("n1"), {"pod", "node_name"}),
    ("with_nomination", lambda pi: pi.with_nomination("n1"), {"pod"}),
    (
        "rebased",
        lambda pi: pi.rebased({**pi.pod, "spec": {**pi.pod["spec"], "nodeName": "n1"}}) or pi,
        {"pod", "node_name", "_qos"},
    ),
]


@pytest.mark.parametrize(("name", "copy", "changed"), COPIES, ids=[c[0] for c in COPIES])
def test_a_copy_shares_every_other_slot(name: str, copy: Callable[[PodInfo], PodInfo], changed: set[str]) -> None:
    pi = _pod()
    c = copy(pi)
    assert c is not pi
    for slot in PodInfo.__slots__:
        if slot not in changed:
            assert getattr(c, slot) is getattr(pi, slot), slot


def test_the_copies_are_still_what_they_say() -> None:
    pi = _pod()
    assert pi.with_node("n1").node_name == "n1"
    assert pi.with_node("n1").pod["spec"]["nodeName"] == "n1"
    assert pi.with_nomination("n2").pod["status"]["nominatedNodeName"] == "n2"
    rebased = pi.rebased({**pi.pod, "spec": {**pi.pod["spec"], "nodeName": "n3"}})
    assert rebased is not None and rebased.node_name == "n3"
