import pytest

from kubesched.framework.events import ActionType, EventResource, QueueingHint
from kubesched.framework.status import Code
from kubesched.plugins.node_name import NodeName
from kubesched.testing import filter_nodes, make_node, make_pod

REASON = "node(s) didn't match the requested node name"


@pytest.mark.parametrize(
    ("pod", "fits"),
    [
        (make_pod("p"), {"foo": True, "bar": True}),
        (make_pod("p").set("spec.nodeName", "foo"), {"foo": True, "bar": False}),
        (make_pod("p").set("spec.nodeName", "bar"), {"foo": False, "bar": True}),
        (make_pod("p").set("spec.nodeName", "baz"), {"foo": False, "bar": False}),
    ],
    ids=["no host specified", "host matches foo", "host matches bar", "host matches no node"],
)
def test_filter(pod, fits: dict[str, bool]) -> None:
    statuses = filter_nodes(NodeName, pod, [make_node("foo"), make_node("bar")])
    for node, ok in fits.items():
        if ok:
            assert statuses[node] is None
        else:
            st = statuses[node]
            assert st is not None and st.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
            assert st.reasons == [REASON]


def test_no_pre_filter() -> None:
    assert not hasattr(NodeName, "pre_filter")


def test_events() -> None:
    (ev,) = NodeName().events_to_register()
    assert ev.event.resource is EventResource.NODE and ev.event.action == ActionType.ADD
    assert ev.hint is not None


@pytest.mark.parametrize(
    ("pod", "new", "hint"),
    [
        (make_pod("p").set("spec.nodeName", "foo").obj(), "not-a-node", QueueingHint.QUEUE),
        (make_pod("p").set("spec.nodeName", "foo").obj(), make_node("bar").obj(), QueueingHint.SKIP),
        (make_pod("p").set("spec.nodeName", "foo").obj(), make_node("foo").obj(), QueueingHint.QUEUE),
        (make_pod("p").obj(), make_node("bar").obj(), QueueingHint.QUEUE),
    ],
    ids=["wrong new object", "unmatched node added", "matched node added", "pod without node name"],
)
def test_hint_node_add(pod, new, hint) -> None:
    assert NodeName.is_schedulable_after_node_add(pod, None, new) is hint
