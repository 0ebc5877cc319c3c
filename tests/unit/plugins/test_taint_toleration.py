import numpy as np
import pytest

from kubesched.backend.cache import Snapshot
from kubesched.framework.columns import NodeBatch
from kubesched.framework.events import ActionType, EventResource, QueueingHint
from kubesched.framework.features import FeatureGates
from kubesched.framework.interface import CycleState
from kubesched.framework.selectors import tolerates
from kubesched.framework.status import Code
from kubesched.plugins.taint_toleration import TaintToleration
from kubesched.testing import filter_nodes, make_node, make_pod, score_nodes
from kubesched.testing.harness import framework_for


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


UNTOLERATED = "node(s) had untolerated taint(s)"
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
        UNTOLERATED,
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
        UNTOLERATED,
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
        UNTOLERATED,
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
        UNTOLERATED,
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


# --- TaintTolerationComparisonOperators (alpha, off in 1.37) ------------------------------------

COMPARE = FeatureGates({"TaintTolerationComparisonOperators": True})
SLA = "node.kubernetes.io/sla"

# k8s.io/api core/v1 toleration_test.go: (toleration operator, toleration value, taint value, tolerated)
TOLERATES_CASES = [
    ("Gt, taint value less than the toleration's", "Gt", "950", "800", False),
    ("Gt, taint value greater than the toleration's", "Gt", "750", "950", True),
    ("Lt, taint value greater than the toleration's", "Lt", "800", "950", False),
    ("Lt, taint value less than the toleration's", "Lt", "950", "800", True),
    ("Gt, equal values", "Gt", "950", "950", False),
    ("Lt, equal values", "Lt", "950", "950", False),
    ("Gt, non-numeric taint value", "Gt", "950", "high", False),
    ("Gt, non-numeric toleration value", "Gt", "high", "950", False),
    ("Gt, negative values, taint below", "Gt", "-100", "-200", False),
    ("Gt, negative values, taint above", "Gt", "-100", "-50", True),
    ("Lt, negative values, taint below", "Lt", "-50", "-100", True),
    ("Gt, large int64 threshold", "Gt", "9223372036854775806", "100", False),
    ("Gt, int64 max taint", "Gt", "100", "9223372036854775807", True),
    ("Gt, taint value beyond int64", "Gt", "100", "9223372036854775808", False),
    ("Gt, leading zero is not a decimal integer", "Gt", "100", "0200", False),
    ("Gt, plus sign is not a decimal integer", "Gt", "100", "+200", False),
    ("Lt, zero", "Lt", "1", "0", True),
    ("Lt, minus zero is not a decimal integer", "Lt", "1", "-0", False),
    ("Gt, empty taint value", "Gt", "1", "", False),
]


@pytest.mark.parametrize(
    ("op", "tol_value", "taint_value", "want"),
    [c[1:] for c in TOLERATES_CASES],
    ids=[c[0] for c in TOLERATES_CASES],
)
def test_comparison_operators(op: str, tol_value: str, taint_value: str, want: bool) -> None:
    toleration = {"key": SLA, "operator": op, "value": tol_value, "effect": NS}
    taint = {"key": SLA, "value": taint_value, "effect": NS}
    assert tolerates(toleration, taint, comparison_operators=True) is want
    # Without the gate Lt and Gt tolerate nothing.
    assert tolerates(toleration, taint) is False


def test_comparison_operators_still_check_key_and_effect() -> None:
    toleration = {"key": SLA, "operator": "Gt", "value": "100", "effect": NS}
    assert not tolerates(toleration, {"key": "other", "value": "200", "effect": NS}, True)
    assert not tolerates(toleration, {"key": SLA, "value": "200", "effect": "NoExecute"}, True)
    assert tolerates(
        {"key": SLA, "operator": "Gt", "value": "100"}, {"key": SLA, "value": "200", "effect": "NoExecute"}, True
    )


GT_950 = dict(key=SLA, operator="Gt", value="950", effect=NS)


@pytest.mark.parametrize(
    ("gates", "taint_value", "reason"),
    [
        (None, "999", UNTOLERATED),
        (COMPARE, "999", None),
        (COMPARE, "900", UNTOLERATED),
    ],
    ids=["gate off (1.37 default): Gt tolerates nothing", "gate on: 999 > 950", "gate on: 900 is not > 950"],
)
def test_filter_comparison_operators(gates, taint_value: str, reason: str | None) -> None:
    node = node_taints("nodeA", (SLA, taint_value, NS))
    status = filter_nodes(TaintToleration, pod_tol(GT_950), [node], feature_gates=gates)["nodeA"]
    if reason is None:
        assert status is None
    else:
        assert status is not None and status.reasons == [reason]


@pytest.mark.parametrize(("gates", "want"), [(None, [False, False]), (COMPARE, [True, False])], ids=["off", "on"])
def test_filter_nodes_batch_comparison_operators(gates, want: list[bool]) -> None:
    snapshot = Snapshot([node_taints("a", (SLA, "999", NS)).info(), node_taints("b", (SLA, "1", NS)).info()])
    batch = NodeBatch(snapshot.columns(), np.arange(2))
    pl = TaintToleration(handle=framework_for(TaintToleration, feature_gates=gates))
    assert pl.filter_nodes(CycleState(), pod_tol(GT_950).info(), batch).tolist() == want


def test_score_comparison_operators() -> None:
    pod = pod_tol(dict(key=SLA, operator="Lt", value="10", effect=PNS))
    nodes = [node_taints("nodeA", (SLA, "5", PNS)), node_taints("nodeB", (SLA, "50", PNS))]
    assert score_nodes(TaintToleration, pod, nodes, feature_gates=COMPARE) == {"nodeA": 100, "nodeB": 0}
    assert score_nodes(TaintToleration, pod, nodes) == {"nodeA": 0, "nodeB": 0}


def test_hint_node_change_comparison_operators() -> None:
    pod = pod_tol(GT_950).obj()
    old = node_taints("nodeA", (SLA, "900", NS)).obj()
    new = node_taints("nodeA", (SLA, "999", NS)).obj()
    hint = TaintToleration.is_schedulable_after_node_change
    assert hint(pod, old, new, True) is QueueingHint.QUEUE
    assert hint(pod, old, new) is QueueingHint.SKIP
