import pytest
from pydantic import ValidationError

from kubesched.framework.events import ActionType, EventResource, QueueingHint
from kubesched.framework.interface import CycleState, PreFilterResult
from kubesched.framework.status import Code
from kubesched.plugins.node_affinity import NodeAffinity, NodeAffinityArgs
from kubesched.testing import filter_nodes, make_node, make_pod, score_nodes

ERR_POD = "node(s) didn't match Pod's node affinity/selector"
ERR_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
ERR_CONFLICT = "pod affinity terms conflict"


def expr(key: str, op: str, *values: str) -> dict:
    e: dict = {"key": key, "operator": op}
    if values:
        e["values"] = list(values)
    return e


def name_in(*names: str) -> dict:
    return expr("metadata.name", "In", *names)


def term(exprs: list[dict] | None = None, fields: list[dict] | None = None) -> dict:
    t: dict = {}
    if exprs is not None:
        t["matchExpressions"] = exprs
    if fields is not None:
        t["matchFields"] = fields
    return t


def required(*terms: dict):
    return make_pod("p").required_node_affinity({"nodeSelectorTerms": list(terms)})


def added_required(*terms: dict) -> dict:
    return {"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}}}


# (id, pod, node name, node labels, args, PreFilter: (code or None, node names or None), Filter reason or None)
FILTER_CASES = [
    ("missing labels", make_pod("p").node_selector(foo="bar"), "n", {}, None, (None, None), ERR_POD),
    ("same labels", make_pod("p").node_selector(foo="bar"), "n", {"foo": "bar"}, None, (None, None), None),
    (
        "node labels are superset",
        make_pod("p").node_selector(foo="bar"),
        "n",
        {"foo": "bar", "baz": "blah"},
        None,
        (None, None),
        None,
    ),
    (
        "node labels are subset",
        make_pod("p").node_selector(foo="bar", baz="blah"),
        "n",
        {"foo": "bar"},
        None,
        (None, None),
        ERR_POD,
    ),
    (
        "In operator matches",
        required(term([expr("foo", "In", "bar", "value2")])),
        "n",
        {"foo": "bar"},
        None,
        (None, None),
        None,
    ),
    (
        "Gt operator matches",
        required(term([expr("kernel-version", "Gt", "0204")])),
        "n",
        {"kernel-version": "0206"},
        None,
        (None, None),
        None,
    ),
    (
        "NotIn operator matches",
        required(term([expr("mem-type", "NotIn", "DDR", "DDR2")])),
        "n",
        {"mem-type": "DDR3"},
        None,
        (None, None),
        None,
    ),
    (
        "Exists operator matches",
        required(term([expr("GPU", "Exists")])),
        "n",
        {"GPU": "NVIDIA-GRID-K1"},
        None,
        (None, None),
        None,
    ),
    (
        "affinity that does not match the labels",
        required(term([expr("foo", "In", "value1", "value2")])),
        "n",
        {"foo": "bar"},
        None,
        (None, None),
        ERR_POD,
    ),
    ("empty matchExpressions match nothing", required(term([])), "n", {"foo": "bar"}, None, (None, None), ERR_POD),
    ("empty nodeSelectorTerms match nothing", required(), "n", {"foo": "bar"}, None, (None, None), ERR_POD),
    ("no affinity", make_pod("p"), "n", {"foo": "bar"}, None, (Code.SKIP, None), None),
    (
        "affinity with nil required selector",
        make_pod("p").set("spec.affinity", {"nodeAffinity": {}}),
        "n",
        {"foo": "bar"},
        None,
        (Code.SKIP, None),
        None,
    ),
    (
        "multiple matchExpressions ANDed that match",
        required(term([expr("GPU", "Exists"), expr("GPU", "NotIn", "AMD", "INTER")])),
        "n",
        {"GPU": "NVIDIA-GRID-K1"},
        None,
        (None, None),
        None,
    ),
    (
        "multiple matchExpressions ANDed that do not match",
        required(term([expr("GPU", "Exists"), expr("GPU", "In", "AMD", "INTER")])),
        "n",
        {"GPU": "NVIDIA-GRID-K1"},
        None,
        (None, None),
        ERR_POD,
    ),
    (
        "multiple terms ORed, one matches",
        required(term([expr("foo", "In", "bar", "value2")]), term([expr("diffkey", "In", "wrong", "value2")])),
        "n",
        {"foo": "bar"},
        None,
        (None, None),
        None,
    ),
    (
        "affinity and nodeSelector both satisfied",
        required(term([expr("foo", "Exists")])).node_selector(foo="bar"),
        "n",
        {"foo": "bar"},
        None,
        (None, None),
        None,
    ),
    (
        "affinity matches but nodeSelector does not",
        required(term([expr("foo", "Exists")])).node_selector(foo="bar"),
        "n",
        {"foo": "barrrrrr"},
        None,
        (None, None),
        ERR_POD,
    ),
    (
        "matchFields In matches the node",
        required(term(fields=[name_in("node1")])),
        "node1",
        {},
        None,
        (None, {"node1"}),
        None,
    ),
    (
        "matchFields In does not match the node",
        required(term(fields=[name_in("node1")])),
        "node2",
        {},
        None,
        (None, {"node1"}),
        ERR_POD,
    ),
    (
        "two terms: matchFields does not match, matchExpressions does",
        required(term(fields=[name_in("node1"), name_in("node2")]), term([expr("foo", "In", "bar")])),
        "node2",
        {"foo": "bar"},
        None,
        (None, None),
        None,
    ),
    (
        "one term: matchFields does not match, matchExpressions does",
        required(term([expr("foo", "In", "bar")], [name_in("node1")])),
        "node2",
        {"foo": "bar"},
        None,
        (None, {"node1"}),
        ERR_POD,
    ),
    (
        "one term: both matchFields and matchExpressions match",
        required(term([expr("foo", "In", "bar")], [name_in("node1")])),
        "node1",
        {"foo": "bar"},
        None,
        (None, {"node1"}),
        None,
    ),
    (
        "two terms: neither matches",
        required(term(fields=[name_in("node1")]), term([expr("foo", "In", "not-match-to-bar")])),
        "node2",
        {"foo": "bar"},
        None,
        (None, None),
        ERR_POD,
    ),
    (
        "two terms of node name affinity",
        required(term(fields=[name_in("node1")]), term(fields=[name_in("node2")])),
        "node2",
        {},
        None,
        (None, {"node1", "node2"}),
        None,
    ),
    (
        "two conflicting matchFields requirements",
        required(term(fields=[name_in("node1"), name_in("node2")])),
        "node2",
        {"foo": "bar"},
        None,
        (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, None),
        ERR_POD,
    ),
    (
        "matches added affinity and pod's node affinity",
        required(term([expr("zone", "In", "foo")])),
        "node2",
        {"zone": "foo"},
        added_required(term(fields=[name_in("node2")])),
        (None, None),
        None,
    ),
    (
        "matches added affinity but not pod's node affinity",
        required(term([expr("zone", "In", "bar")])),
        "node2",
        {"zone": "foo"},
        added_required(term(fields=[name_in("node2")])),
        (None, None),
        ERR_POD,
    ),
    # Upstream: a value no label can have makes its term match no node (the pod is not refused).
    (
        "NotIn with an invalid label value matches no node",
        required(term([expr("foo", "NotIn", "invalid value: ___@#$%^")])),
        "n",
        {"foo": "bar"},
        None,
        (None, None),
        ERR_POD,
    ),
    (
        "In with an invalid label value matches no node, even one labelled so",
        required(term([expr("foo", "In", "a b")])),
        "n",
        {"foo": "a b"},
        None,
        (None, None),
        ERR_POD,
    ),
    (
        "Gt with a non-integer value matches no node",
        required(term([expr("kernel-version", "Gt", "v2")])),
        "n",
        {"kernel-version": "0206"},
        None,
        (None, None),
        ERR_POD,
    ),
    (
        "an invalid term does not stop a valid one from matching",
        required(term([expr("foo", "NotIn", "invalid value: ___@#$%^")]), term([expr("foo", "In", "bar")])),
        "n",
        {"foo": "bar"},
        None,
        (None, None),
        None,
    ),
    (
        "does not match added affinity",
        make_pod("p"),
        "node2",
        {"zone": "foo"},
        added_required(term([expr("zone", "In", "bar")])),
        (None, None),
        ERR_ENFORCED,
    ),
]


def _node(name: str, labels: dict[str, str]):
    b = make_node(name).set("metadata.labels", {})
    return b.labels(**labels) if labels else b


@pytest.mark.parametrize(
    ("pod", "node_name", "labels", "args", "pre_filter", "reason"),
    [c[1:] for c in FILTER_CASES],
    ids=[c[0] for c in FILTER_CASES],
)
def test_pre_filter_and_filter(pod, node_name, labels, args, pre_filter, reason) -> None:
    plugin = NodeAffinity(NodeAffinityArgs.model_validate(args or {}), None)
    pi = pod.info()
    state = CycleState()
    result, status = plugin.pre_filter(state, pi)
    want_code, want_names = pre_filter
    if want_code is None:
        assert status is None
    else:
        assert status is not None and status.code is want_code
        if want_code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
            assert status.reasons == [ERR_CONFLICT]
    if want_names is None:
        assert result is None
    else:
        assert isinstance(result, PreFilterResult) and result.node_names == want_names
    # Filter does not depend on PreFilter having run.
    ni = _node(node_name, labels).info()
    for st in (CycleState(), state):
        got = plugin.filter(st, pi, ni)
        if reason is None:
            assert got is None
        else:
            assert got is not None and got.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
            assert got.reasons == [reason]


def test_harness_narrows_to_pre_filter_result() -> None:
    pod = required(term(fields=[name_in("node1")]))
    statuses = filter_nodes(NodeAffinity, pod, [make_node("node1"), make_node("node2")])
    assert statuses["node1"] is None
    assert statuses["node2"] is not None and statuses["node2"].code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE


def test_harness_reports_conflict_on_every_node() -> None:
    pod = required(term(fields=[name_in("node1"), name_in("node2")]))
    statuses = filter_nodes(NodeAffinity, pod, [make_node("node1"), make_node("node2")])
    for st in statuses.values():
        assert st is not None and st.reasons == [ERR_CONFLICT] and st.plugin == "NodeAffinity"


# --- scoring ----------------------------------------------------------------------------------

LABEL1 = {"foo": "bar"}
LABEL2 = {"key": "value"}
LABEL3 = {"az": "az1"}
LABEL4 = {"abc": "az11", "def": "az22"}
LABEL5 = {"foo": "bar", "key": "value", "az": "az1"}

AFFINITY1_PREFERRED = [{"weight": 2, "preference": term([expr("foo", "In", "bar")])}]
AFFINITY2_PREFERRED = [
    {"weight": 2, "preference": term([expr("foo", "In", "bar")])},
    {"weight": 4, "preference": term([expr("key", "In", "value")])},
    {"weight": 5, "preference": term([expr("foo", "In", "bar"), expr("key", "In", "value"), expr("az", "In", "az1")])},
]


def preferred_pod(terms: list[dict]):
    return make_pod("p").set(
        "spec.affinity", {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": terms}}
    )


SCORE_CASES = [
    (
        "all nodes same priority when there is no node affinity",
        make_pod("p"),
        [("node1", LABEL1), ("node2", LABEL2), ("node3", LABEL3)],
        None,
        {"node1": 0, "node2": 0, "node3": 0},
    ),
    (
        "no node matches the preferred terms",
        preferred_pod(AFFINITY1_PREFERRED),
        [("node1", LABEL4), ("node2", LABEL2), ("node3", LABEL3)],
        None,
        {"node1": 0, "node2": 0, "node3": 0},
    ),
    (
        "only node1 matches the preferred terms",
        preferred_pod(AFFINITY1_PREFERRED),
        [("node1", LABEL1), ("node2", LABEL2), ("node3", LABEL3)],
        None,
        {"node1": 100, "node2": 0, "node3": 0},
    ),
    (
        "all nodes match with different priorities",
        preferred_pod(AFFINITY2_PREFERRED),
        [("node1", LABEL1), ("node5", LABEL5), ("node2", LABEL2)],
        None,
        {"node1": 18, "node5": 100, "node2": 36},
    ),
    (
        "added affinity",
        make_pod("p"),
        [("node1", LABEL1), ("node2", LABEL2)],
        {"addedAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": AFFINITY1_PREFERRED}},
        {"node1": 100, "node2": 0},
    ),
    (
        "added affinity and pod has preferred affinity",
        preferred_pod(AFFINITY1_PREFERRED),
        [("node1", LABEL1), ("node2", LABEL2), ("node3", LABEL5)],
        {
            "addedAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 3, "preference": term([expr("key", "In", "value")])}
                ]
            }
        },
        {"node1": 40, "node2": 60, "node3": 100},
    ),
]


@pytest.mark.parametrize(
    ("pod", "nodes", "args", "expected"), [c[1:] for c in SCORE_CASES], ids=[c[0] for c in SCORE_CASES]
)
def test_score(pod, nodes, args, expected: dict[str, int]) -> None:
    node_builders = [_node(n, labels) for n, labels in nodes]
    assert score_nodes(NodeAffinity, pod, node_builders, args=args) == expected


def test_raw_score_is_sum_of_matching_weights() -> None:
    nodes = [_node("node1", LABEL1), _node("node5", LABEL5), _node("node2", LABEL2)]
    raw = score_nodes(NodeAffinity, preferred_pod(AFFINITY2_PREFERRED), nodes, normalize=False)
    assert raw == {"node1": 2, "node5": 11, "node2": 4}


def test_score_without_pre_score() -> None:
    plugin = NodeAffinity(NodeAffinityArgs(), None)
    pi = preferred_pod(AFFINITY2_PREFERRED).info()
    assert plugin.score(CycleState(), pi, _node("node5", LABEL5).info()) == 11


def test_pre_score_skips_without_preferences() -> None:
    plugin = NodeAffinity(NodeAffinityArgs(), None)
    status = plugin.pre_score(CycleState(), make_pod("p").info(), [])
    assert status is not None and status.code is Code.SKIP
    assert plugin.pre_score(CycleState(), preferred_pod(AFFINITY1_PREFERRED).info(), []) is None


# --- args -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        {
            "addedAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term([expr("a", "In")])]}
            }
        },
        {
            "addedAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [term(fields=[expr("metadata.labels", "In", "x")])]
                }
            }
        },
        {
            "addedAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 1, "preference": term([expr("a", "Gt", "x")])}
                ]
            }
        },
        {
            "addedAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term([expr("a", "Foo")])]}
            }
        },
        {"addedAffinity": {"unknownField": {}}},
        {"unknown": 1},
    ],
    ids=[
        "In without values",
        "matchFields on a field other than metadata.name",
        "Gt with a non-integer value",
        "unknown operator",
        "unknown affinity field",
        "unknown args field",
    ],
)
def test_invalid_args_are_refused(args: dict) -> None:
    with pytest.raises(ValidationError):
        NodeAffinityArgs.model_validate(args)


def test_valid_args_error_names_the_field() -> None:
    with pytest.raises(ValidationError, match="addedAffinity.requiredDuringSchedulingIgnoredDuringExecution"):
        NodeAffinityArgs.model_validate(
            {
                "addedAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term([expr("a", "In")])]}
                }
            }
        )


def test_args_default_is_empty() -> None:
    assert NodeAffinityArgs().addedAffinity is None
    assert NodeAffinity.Args is NodeAffinityArgs


# --- events -----------------------------------------------------------------------------------


def test_events() -> None:
    (ev,) = NodeAffinity(NodeAffinityArgs(), None).events_to_register()
    assert ev.event.resource is EventResource.NODE
    assert ev.event.action == ActionType.ADD | ActionType.UPDATE_NODE_LABEL


POD_FOO_BAR = required(term([expr("foo", "In", "bar")])).obj()


@pytest.mark.parametrize(
    ("args", "old", "new", "hint"),
    [
        (None, None, "not-a-node", QueueingHint.QUEUE),
        (None, None, _node("n", {"foo": "bar"}).obj(), QueueingHint.QUEUE),
        (None, None, _node("n", {"foo": "baz"}).obj(), QueueingHint.SKIP),
        (None, _node("n", {}).obj(), _node("n", {"foo": "bar"}).obj(), QueueingHint.QUEUE),
        (None, _node("n", {"foo": "bar"}).obj(), _node("n", {"foo": "bar", "x": "y"}).obj(), QueueingHint.SKIP),
        (None, _node("n", {"foo": "bar"}).obj(), _node("n", {}).obj(), QueueingHint.SKIP),
        (added_required(term([expr("zone", "In", "z1")])), None, _node("n", {"foo": "bar"}).obj(), QueueingHint.SKIP),
        (
            added_required(term([expr("zone", "In", "z1")])),
            None,
            _node("n", {"foo": "bar", "zone": "z1"}).obj(),
            QueueingHint.QUEUE,
        ),
    ],
    ids=[
        "wrong new object",
        "matching node added",
        "non-matching node added",
        "node updated to match",
        "node matched before and after",
        "node stopped matching",
        "added node misses enforced affinity",
        "added node matches enforced and pod affinity",
    ],
)
def test_hint_node_change(args, old, new, hint) -> None:
    plugin = NodeAffinity(NodeAffinityArgs.model_validate(args or {}), None)
    assert plugin.is_schedulable_after_node_change(POD_FOO_BAR, old, new) is hint
