import pytest

from kubesched.framework import ActionType, Code, CycleState, EventResource, QueueingHint
from kubesched.plugins.taint_toleration import TaintToleration
from kubesched.testing import filter_nodes, make_node, make_pod, score_nodes


def pod_tol(*tols: dict) -> object:
    b = make_pod("pod1")
    for t in tols:
        b = b.toleration(**t)
    return b


def node_taints(name: str, *taints: tuple[str, str, str]):
    b = make_node(name)
    for key, value, effect in taints:
        b = b.taint(key, value, effect)
    return b


PNS = "PreferNoSchedule"
NS = "NoSchedule"


SCORE_CASES = [
    (
        "node with taints tolerated by the pod gets a higher score than one with intolerable taints",
        pod_tol(dict(key="foo", operator="Equal", value="bar", effect=PNS)),
        [node_taints("nodeA", ("foo", "bar", PNS)), node_taints("nodeB", ("foo", "blah", PNS))],
        {"nodeA": 100, "nodeB": 0},
    ),
    (
        "nodes whose taints are all tolerated get the same score, however many",
        pod_tol(
            dict(key="cpu-type", operator="Equal", value="arm64", effect=PNS),
            dict(key="disk-type", operator="Equal", value="ssd", effect=PNS),
        ),
        [
            node_taints("nodeA"),
            node_taints("nodeB", ("cpu-type", "arm64", PNS)),
            node_taints("nodeC", ("cpu-type", "arm64", PNS), ("disk-type", "ssd", PNS)),
        ],
        {"nodeA": 100, "nodeB": 100, "nodeC": 100},
    ),
    (
        "the more intolerable taints a node has, the lower its score",
        pod_tol(dict(key="foo", operator="Equal", value="bar", effect=PNS)),
        [
            node_taints("nodeA"),
            node_taints("nodeB", ("cpu-type", "arm64", PNS)),
            node_taints("nodeC", ("cpu-type", "arm64", PNS), ("disk-type", "ssd", PNS)),
        ],
        {"nodeA": 100, "nodeB": 50, "nodeC": 0},
    ),
    (
        "only PreferNoSchedule taints and tolerations count",
        pod_tol(
            dict(key="cpu-type", operator="Equal", value="arm64", effect=NS),
            dict(key="disk-type", operator="Equal", value="ssd", effect=NS),
        ),
        [
            node_taints("nodeA"),
            node_taints("nodeB", ("cpu-type", "arm64", NS)),
            node_taints("nodeC", ("cpu-type", "arm64", PNS), ("disk-type", "ssd", PNS)),
        ],
        {"nodeA": 100, "nodeB": 100, "nodeC": 0},
    ),
    (
        "no tolerations: lands on the node without taints",
        pod_tol(),
        [node_taints("nodeA"), node_taints("nodeB", ("cpu-type", "arm64", PNS))],
        {"nodeA": 100, "nodeB": 0},
    ),
    (
        "toleration without effect tolerates PreferNoSchedule",
        pod_tol(dict(key="foo", operator="Exists")),
        [node_taints("nodeA", ("foo", "x", PNS)), node_taints("nodeB", ("bar", "x", PNS))],
        {"nodeA": 100, "nodeB": 0},
    ),
]


@pytest.mark.parametrize(("pod", "nodes", "expected"), [c[1:] for c in SCORE_CASES], ids=[c[0] for c in SCORE_CASES])
def test_score(pod, nodes, expected: dict[str, int]) -> None:
    assert score_nodes(TaintToleration, pod, nodes) == expected


def test_raw_score_counts_intolerable_taints() -> None:
    nodes = [
        node_taints("nodeA"),
        node_taints("nodeB", ("cpu-type", "arm64", PNS)),
        node_taints("nodeC", ("cpu-type", "arm64", PNS), ("disk-type", "ssd", PNS), ("x", "", NS)),
    ]
    assert score_nodes(TaintToleration, pod_tol(), nodes, normalize=False) == {"nodeA": 0, "nodeB": 1, "nodeC": 2}


def test_score_without_pre_score_is_an_error() -> None:
    pl = TaintToleration()
    score, status = pl.score(CycleState(), make_pod("p").info(), make_node("n").info())
    assert score == 0
    assert status is not None and status.code is Code.ERROR


FILTER_CASES = [
    (
        "no tolerations, node with a NoSchedule taint",
        pod_tol(),
        node_taints("nodeA", ("dedicated", "user1", NS)),
        "node(s) had untolerated taint {dedicated: user1}",
    ),
    (
        "toleration matches the dedicated taint",
        pod_tol(dict(key="dedicated", value="user1", effect=NS)),
        node_taints("nodeA", ("dedicated", "user1", NS)),
        None,
    ),
    (
        "toleration for another user does not match",
        pod_tol(dict(key="dedicated", operator="Equal", value="user2", effect=NS)),
        node_taints("nodeA", ("dedicated", "user1", NS)),
        "node(s) had untolerated taint {dedicated: user1}",
    ),
    (
        "Exists toleration tolerates the taint",
        pod_tol(dict(key="foo", operator="Exists", effect=NS)),
        node_taints("nodeA", ("foo", "bar", NS)),
        None,
    ),
    (
        "several tolerations tolerate several taints",
        pod_tol(
            dict(key="dedicated", operator="Equal", value="user2", effect=NS),
            dict(key="foo", operator="Exists", effect=NS),
        ),
        node_taints("nodeA", ("dedicated", "user2", NS), ("foo", "bar", NS)),
        None,
    ),
    (
        "key and value match but the (non-empty) effect does not",
        pod_tol(dict(key="foo", operator="Equal", value="bar", effect=PNS)),
        node_taints("nodeA", ("foo", "bar", NS)),
        "node(s) had untolerated taint {foo: bar}",
    ),
    (
        "empty toleration effect tolerates NoSchedule",
        pod_tol(dict(key="foo", operator="Equal", value="bar")),
        node_taints("nodeA", ("foo", "bar", NS)),
        None,
    ),
    (
        "untolerated PreferNoSchedule taint does not filter",
        pod_tol(dict(key="dedicated", operator="Equal", value="user2", effect=NS)),
        node_taints("nodeA", ("dedicated", "user1", PNS)),
        None,
    ),
    (
        "no tolerations and only a PreferNoSchedule taint",
        pod_tol(),
        node_taints("nodeA", ("dedicated", "user1", PNS)),
        None,
    ),
    (
        "NoExecute taints filter too",
        pod_tol(),
        node_taints("nodeA", ("evict", "", "NoExecute")),
        "node(s) had untolerated taint {evict: }",
    ),
]


@pytest.mark.parametrize(("pod", "node", "reason"), [c[1:] for c in FILTER_CASES], ids=[c[0] for c in FILTER_CASES])
def test_filter(pod, node, reason: str | None) -> None:
    status = filter_nodes(TaintToleration, pod, [node])["nodeA"]
    if reason is None:
        assert status is None
    else:
        assert status is not None and status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        assert status.reasons == [reason]


def test_events() -> None:
    events = TaintToleration().events_to_register()
    assert [(e.event.resource, e.event.action) for e in events] == [
        (EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_TAINT),
        (EventResource.UNSCHEDULED_POD, ActionType.UPDATE_POD_TOLERATIONS),
    ]


TOL_USER2 = pod_tol(dict(key="dedicated", operator="Equal", value="user2", effect=NS)).obj()


@pytest.mark.parametrize(
    ("old", "new", "hint"),
    [
        (None, "not-a-node", QueueingHint.QUEUE),
        ("not-a-node", node_taints("nodeA", ("dedicated", "user1", NS)).obj(), QueueingHint.QUEUE),
        (None, node_taints("nodeA", ("dedicated", "user1", NS)).obj(), QueueingHint.SKIP),
        (None, node_taints("nodeA", ("dedicated", "user2", NS)).obj(), QueueingHint.QUEUE),
        (
            node_taints("nodeA", ("dedicated", "user1", NS)).obj(),
            node_taints("nodeA", ("dedicated", "user1", NS), ("dedicated", "user3", NS)).obj(),
            QueueingHint.SKIP,
        ),
        (
            node_taints("nodeA", ("dedicated", "user1", NS)).obj(),
            node_taints("nodeA", ("dedicated", "user2", NS)).obj(),
            QueueingHint.QUEUE,
        ),
    ],
    ids=[
        "backoff on wrong new object",
        "backoff on wrong old object",
        "skip on untolerated taint node added",
        "queue on tolerated taint node added",
        "skip unrelated change",
        "queue on taint change",
    ],
)
def test_hint_node_change(old, new, hint) -> None:
    assert TaintToleration.is_schedulable_after_node_change(TOL_USER2, old, new) is hint


def test_hint_pod_toleration_change() -> None:
    old = make_pod("pod-1").uid("u1").obj()
    new = make_pod("pod-1").uid("u1").toleration("foo", effect=NS).obj()
    other = make_pod("pod-2").uid("u2").toleration("foo", effect=NS).obj()
    hint = TaintToleration.is_schedulable_after_pod_toleration_change
    assert hint(old, old, new) is QueueingHint.QUEUE
    assert hint(old, other, other) is QueueingHint.SKIP
