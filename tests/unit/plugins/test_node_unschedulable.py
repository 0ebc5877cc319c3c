import pytest

from kubesched.framework.events import ActionType, EventResource, QueueingHint
from kubesched.framework.status import Code
from kubesched.plugins.node_unschedulable import NodeUnschedulable
from kubesched.testing import filter_nodes, make_node, make_pod

REASON = "node(s) were unschedulable"


@pytest.mark.parametrize(
    ("pod", "node", "rejected"),
    [
        (make_pod("p"), make_node("n").unschedulable(), True),
        (make_pod("p"), make_node("n"), False),
        (make_pod("p"), make_node("n").unschedulable(False), False),
        (
            make_pod("p").toleration("node.kubernetes.io/unschedulable", effect="NoSchedule", operator="Exists"),
            make_node("n").unschedulable(),
            False,
        ),
        (make_pod("p").toleration(), make_node("n").unschedulable(), False),
        (
            make_pod("p").toleration("node.kubernetes.io/unschedulable", effect="NoExecute", operator="Exists"),
            make_node("n").unschedulable(),
            True,
        ),
        (
            make_pod("p").toleration("other", effect="NoSchedule", operator="Exists"),
            make_node("n").unschedulable(),
            True,
        ),
    ],
    ids=[
        "does not schedule onto an unschedulable node",
        "schedules onto a normal node",
        "unschedulable false is a normal node",
        "toleration of the unschedulable taint admits the pod",
        "tolerate-everything admits the pod",
        "toleration with another effect does not help",
        "toleration of another key does not help",
    ],
)
def test_filter(pod, node, rejected: bool) -> None:
    status = filter_nodes(NodeUnschedulable, pod, [node])["n"]
    if rejected:
        assert status is not None and status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        assert status.reasons == [REASON]
        assert status.plugin == "NodeUnschedulable"
    else:
        assert status is None


def test_events() -> None:
    events = NodeUnschedulable().events_to_register()
    assert [(e.event.resource, e.event.action) for e in events] == [
        (EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_TAINT),
        (EventResource.UNSCHEDULED_POD, ActionType.UPDATE_POD_TOLERATIONS),
    ]
    assert all(e.hint is not None for e in events)


POD = make_pod("p").obj()


@pytest.mark.parametrize(
    ("old", "new", "hint"),
    [
        (None, "not-a-node", QueueingHint.QUEUE),
        (None, make_node("n").unschedulable().obj(), QueueingHint.SKIP),
        (None, make_node("n").obj(), QueueingHint.QUEUE),
        (make_node("n").unschedulable().obj(), make_node("n").unschedulable().label("a", "b").obj(), QueueingHint.SKIP),
        (make_node("n").unschedulable().obj(), make_node("n").obj(), QueueingHint.QUEUE),
        (make_node("n").obj(), make_node("n").unschedulable().obj(), QueueingHint.SKIP),
    ],
    ids=[
        "wrong new object queues",
        "unschedulable node added",
        "schedulable node added",
        "unrelated change of unschedulable node",
        "node becomes schedulable",
        "node becomes unschedulable",
    ],
)
def test_hint_node_change(old, new, hint) -> None:
    assert NodeUnschedulable.is_schedulable_after_node_change(POD, old, new) is hint


def test_hint_pod_toleration_change() -> None:
    pod = make_pod("p").uid("u1")
    old = pod.obj()
    tolerating = (
        make_pod("p")
        .uid("u1")
        .toleration("node.kubernetes.io/unschedulable", effect="NoSchedule", operator="Exists")
        .obj()
    )
    other_toleration = make_pod("p").uid("u1").toleration("x", effect="NoSchedule", operator="Exists").obj()
    other_pod = (
        make_pod("q")
        .uid("u2")
        .toleration("node.kubernetes.io/unschedulable", effect="NoSchedule", operator="Exists")
        .obj()
    )
    hint = NodeUnschedulable.is_schedulable_after_pod_toleration_change
    assert hint(old, old, tolerating) is QueueingHint.QUEUE
    assert hint(old, old, other_toleration) is QueueingHint.SKIP
    assert hint(old, tolerating, tolerating) is QueueingHint.SKIP
    assert hint(old, old, other_pod) is QueueingHint.SKIP
