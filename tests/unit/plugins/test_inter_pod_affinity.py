import asyncio
from typing import Any

import pytest
from pydantic import ValidationError

from kubesched.framework.events import ActionType, EventResource, QueueingHint
from kubesched.framework.interface import CycleState
from kubesched.framework.status import Code
from kubesched.plugins.interpodaffinity.inter_pod_affinity import (
    PRE_FILTER_STATE_KEY,
    InterPodAffinity,
    InterPodAffinityArgs,
    PreFilterState,
    flatten,
)
from kubesched.testing import as_node_infos, as_pod_info, framework_for, make_node, make_pod, score_nodes

NAME = "InterPodAffinity"
ERR_AFF = "node(s) didn't match pod affinity rules"
ERR_ANTI = "node(s) didn't match pod anti-affinity rules"
ERR_EXISTING = "node(s) didn't satisfy existing pods anti-affinity rules"

AFF = (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [ERR_AFF])
ANTI = (Code.UNSCHEDULABLE, [ERR_ANTI])
EXISTING = (Code.UNSCHEDULABLE, [ERR_EXISTING])
OK = None


# --- builders ----------------------------------------------------------------------------------


def expr(key: str, op: str, *values: str) -> dict:
    e: dict = {"key": key, "operator": op}
    if values:
        e["values"] = list(values)
    return e


def term(*exprs: dict, topo: str = "", namespaces: list[str] | None = None, ns_selector: dict | None = None) -> dict:
    t: dict = {"labelSelector": {"matchExpressions": list(exprs)}}
    if topo:
        t["topologyKey"] = topo
    if namespaces is not None:
        t["namespaces"] = namespaces
    if ns_selector is not None:
        t["namespaceSelector"] = ns_selector
    return t


def in_(key: str, topo: str, *values: str) -> dict:
    return term(expr(key, "In", *values), topo=topo)


def not_in(key: str, topo: str, *values: str) -> dict:
    return term(expr(key, "NotIn", *values), topo=topo)


def exists(key: str, topo: str) -> dict:
    return term(expr(key, "Exists"), topo=topo)


TEAM1 = {"matchExpressions": [expr("team", "In", "team1")]}


def affinity(
    aff: list[dict] = (),  # type: ignore[assignment]
    anti: list[dict] = (),  # type: ignore[assignment]
    paff: list[tuple[int, dict]] = (),  # type: ignore[assignment]
    panti: list[tuple[int, dict]] = (),  # type: ignore[assignment]
) -> dict:
    out: dict = {}
    if aff or paff:
        pa: dict = out.setdefault("podAffinity", {})
        if aff:
            pa["requiredDuringSchedulingIgnoredDuringExecution"] = list(aff)
        if paff:
            pa["preferredDuringSchedulingIgnoredDuringExecution"] = [
                {"weight": w, "podAffinityTerm": t} for w, t in paff
            ]
    if anti or panti:
        pn: dict = out.setdefault("podAntiAffinity", {})
        if anti:
            pn["requiredDuringSchedulingIgnoredDuringExecution"] = list(anti)
        if panti:
            pn["preferredDuringSchedulingIgnoredDuringExecution"] = [
                {"weight": w, "podAffinityTerm": t} for w, t in panti
            ]
    return out


def pod(
    name: str = "p",
    ns: str = "default",
    node: str | None = None,
    labels: dict[str, str] | None = None,
    aff: dict | None = None,
):
    b = make_pod(name, ns)
    if labels:
        b.labels(**labels)
    if node:
        b.node(node)
    if aff:
        b.set("spec.affinity", aff)
    return b


def node(name: str, **labels: str):
    """A node with exactly ``labels`` (no implicit hostname label), as upstream's test nodes."""
    return make_node(name).set("metadata.labels", dict(labels))


def namespace(name: str, **labels: str) -> dict:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}}


NAMESPACES = [
    namespace("subteam1.team1", team="team1"),
    namespace("subteam2.team1", team="team1"),
    namespace("subteam1.team2", team="team2"),
    namespace("subteam2.team2", team="team2"),
]


# --- runners -----------------------------------------------------------------------------------


def _outcome(status) -> Any:
    if status is None or status.is_success():
        return None
    return (status.code, list(status.reasons))


async def _afilter(p, nodes, pods=(), objects=(), args=None):
    pi = as_pod_info(p)
    infos = as_node_infos(nodes, pods)
    fw = framework_for(InterPodAffinity, args, infos, objects=objects)
    state = CycleState()
    _, status, _ = await fw.run_pre_filter(state, pi)
    assert status is None, status
    skipped = NAME in state.skip_filter_plugins
    return skipped, [_outcome(fw.run_filter(state, pi, ni)) for ni in infos]


def run_filter(p, nodes, pods=(), objects=(), args=None):
    return asyncio.run(_afilter(p, nodes, pods, objects, args))


async def _ascore(p, nodes, pods=(), objects=(), args=None):
    pi = as_pod_info(p)
    infos = as_node_infos(nodes, pods)
    fw = framework_for(InterPodAffinity, args, infos, objects=objects)
    state = CycleState()
    status = await fw.run_pre_score(state, pi, infos)
    assert status is None, status
    skipped = NAME in state.skip_score_plugins
    final: dict[str, dict[str, int]] = {}
    _, status = await fw.run_score(state, pi, infos, None, final)
    assert status is None, status
    return skipped, [final.get(ni.name, {}).get(NAME, 0) for ni in infos]


def run_score(p, nodes, pods=(), objects=(), args=None):
    return asyncio.run(_ascore(p, nodes, pods, objects, args))


def prefilter_state(p, nodes, pods=(), objects=()):
    """The plugin, its state after PreFilter, and the NodeInfos (PreFilter must not skip)."""
    pi = as_pod_info(p)
    infos = as_node_infos(nodes, pods)
    fw = framework_for(InterPodAffinity, None, infos, objects=objects)
    state = CycleState()
    _, status, _ = asyncio.run(fw.run_pre_filter(state, pi))
    assert status is None and NAME not in state.skip_filter_plugins
    return fw.plugins[NAME], state, pi, {ni.name: ni for ni in infos}


# --- Filter: one node (upstream TestRequiredAffinitySingleNode) --------------------------------

SECURITYSCAN = {"service": "securityscan"}
S1 = {"security": "S1"}
NODE1 = node("node1", region="r1", zone="z11")
EXISTING_SCAN = pod("existing", node="node1", labels=SECURITYSCAN)

SINGLE_NODE_CASES = [
    ("no required terms and no existing pods: skip", pod(), [], "skip"),
    (
        "affinity In matches the existing pod",
        pod(labels=S1, aff=affinity(aff=[in_("service", "region", "securityscan", "value2")])),
        [EXISTING_SCAN],
        OK,
    ),
    (
        "affinity NotIn matches the existing pod",
        pod(labels=S1, aff=affinity(aff=[not_in("service", "region", "securityscan3", "value3")])),
        [EXISTING_SCAN],
        OK,
    ),
    (
        "affinity fails because the existing pod is in another namespace",
        pod(
            labels=S1,
            aff=affinity(aff=[term(expr("service", "In", "securityscan", "value2"), namespaces=["DiffNameSpace"])]),
        ),
        [pod("existing", ns="ns", node="node1", labels=SECURITYSCAN)],
        AFF,
    ),
    (
        "affinity selector does not match the existing pod",
        pod(labels=SECURITYSCAN, aff=affinity(aff=[in_("service", "", "antivirusscan", "value2")])),
        [EXISTING_SCAN],
        AFF,
    ),
    (
        "several terms with different operators all match",
        pod(
            labels=S1,
            aff=affinity(
                aff=[
                    term(expr("service", "Exists"), expr("wrongkey", "DoesNotExist"), topo="region"),
                    term(expr("service", "In", "securityscan"), expr("service", "NotIn", "WrongValue"), topo="region"),
                ]
            ),
        ),
        [EXISTING_SCAN],
        OK,
    ),
    (
        "expressions are ANDed: one failing expression fails the term",
        pod(
            labels=S1,
            aff=affinity(
                aff=[
                    term(expr("service", "Exists"), expr("wrongkey", "DoesNotExist"), topo="region"),
                    term(expr("service", "In", "securityscan2"), expr("service", "NotIn", "WrongValue"), topo="region"),
                ]
            ),
        ),
        [EXISTING_SCAN],
        AFF,
    ),
    (
        "affinity and anti-affinity both satisfied",
        pod(
            labels=S1,
            aff=affinity(
                aff=[in_("service", "region", "securityscan", "value2")],
                anti=[in_("service", "node", "antivirusscan", "value2")],
            ),
        ),
        [EXISTING_SCAN],
        OK,
    ),
    (
        "affinity, anti-affinity and the existing pod's anti-affinity satisfied",
        pod(
            labels=S1,
            aff=affinity(
                aff=[in_("service", "region", "securityscan", "value2")],
                anti=[in_("service", "node", "antivirusscan", "value2")],
            ),
        ),
        [
            pod(
                "existing",
                node="node1",
                labels=SECURITYSCAN,
                aff=affinity(anti=[in_("service", "node", "antivirusscan", "value2")]),
            )
        ],
        OK,
    ),
    (
        "affinity satisfied, anti-affinity violated",
        pod(
            labels=S1,
            aff=affinity(
                aff=[in_("service", "region", "securityscan", "value2")],
                anti=[in_("service", "zone", "securityscan", "value2")],
            ),
        ),
        [EXISTING_SCAN],
        ANTI,
    ),
    (
        "the existing pod's anti-affinity is violated",
        pod(
            labels=SECURITYSCAN,
            aff=affinity(
                aff=[in_("service", "region", "securityscan", "value2")],
                anti=[in_("service", "node", "antivirusscan", "value2")],
            ),
        ),
        [
            pod(
                "existing",
                node="node1",
                labels=SECURITYSCAN,
                aff=affinity(anti=[in_("service", "zone", "securityscan", "value2")]),
            )
        ],
        EXISTING,
    ),
    (
        "pod does not match its own affinity and no pod matches it",
        pod(labels=SECURITYSCAN, aff=affinity(aff=[not_in("service", "region", "securityscan", "value2")])),
        [pod("elsewhere", node="node2", labels=SECURITYSCAN)],
        AFF,
    ),
    (
        "existing anti-affinity applies to a pod without constraints",
        pod(labels=SECURITYSCAN),
        [
            pod(
                "existing",
                node="node1",
                labels=SECURITYSCAN,
                aff=affinity(anti=[in_("service", "zone", "securityscan", "value2")]),
            )
        ],
        EXISTING,
    ),
    (
        "existing anti-affinity that does not match the pod: skip",
        pod(labels=SECURITYSCAN),
        [
            pod(
                "existing",
                node="node1",
                labels=SECURITYSCAN,
                aff=affinity(anti=[not_in("service", "zone", "securityscan", "value2")]),
            )
        ],
        "skip",
    ),
    (
        "incoming anti-affinity violated though the existing pod's is not",
        pod(labels=SECURITYSCAN, aff=affinity(anti=[exists("service", "region"), exists("security", "region")])),
        [pod("existing", node="node1", labels=S1, aff=affinity(anti=[exists("security", "zone")]))],
        ANTI,
    ),
    (
        "symmetry a1: partial match on the incoming pod's terms",
        pod(labels=SECURITYSCAN, aff=affinity(anti=[exists("service", "zone"), exists("security", "zone")])),
        [pod("existing", node="node1", labels=S1, aff=affinity(anti=[exists("security", "zone")]))],
        ANTI,
    ),
    (
        "symmetry a2: partial match on the existing pod's terms",
        pod(labels=S1, aff=affinity(anti=[exists("security", "zone")])),
        [
            pod(
                "existing",
                node="node1",
                labels=SECURITYSCAN,
                aff=affinity(anti=[exists("service", "zone"), exists("security", "zone")]),
            )
        ],
        EXISTING,
    ),
    (
        "symmetry b1",
        pod(labels={"abc": "", "xyz": ""}, aff=affinity(anti=[exists("abc", "zone"), exists("def", "zone")])),
        [
            pod(
                "existing",
                node="node1",
                labels={"def": "", "xyz": ""},
                aff=affinity(anti=[exists("abc", "zone"), exists("def", "zone")]),
            )
        ],
        ANTI,
    ),
    (
        "symmetry b2",
        pod(labels={"def": "", "xyz": ""}, aff=affinity(anti=[exists("abc", "zone"), exists("def", "zone")])),
        [
            pod(
                "existing",
                node="node1",
                labels={"abc": "", "xyz": ""},
                aff=affinity(anti=[exists("abc", "zone"), exists("def", "zone")]),
            )
        ],
        ANTI,
    ),
    (
        "affinity with a matching namespaceSelector",
        pod(
            labels=S1,
            aff=affinity(aff=[term(expr("service", "In", "securityscan", "value2"), topo="region", ns_selector=TEAM1)]),
        ),
        [pod("existing", ns="subteam1.team1", node="node1", labels=SECURITYSCAN)],
        OK,
    ),
    (
        "affinity with a non-matching namespaceSelector",
        pod(
            labels=S1,
            aff=affinity(aff=[term(expr("service", "In", "securityscan", "value2"), topo="region", ns_selector=TEAM1)]),
        ),
        [pod("existing", ns="subteam1.team2", node="node1", labels=SECURITYSCAN)],
        AFF,
    ),
    (
        "anti-affinity with a matching namespaceSelector",
        pod(
            ns="subteam1.team1",
            labels=S1,
            aff=affinity(anti=[term(expr("service", "In", "securityscan", "value2"), topo="zone", ns_selector=TEAM1)]),
        ),
        [pod("existing", ns="subteam2.team1", node="node1", labels=SECURITYSCAN)],
        ANTI,
    ),
    (
        "anti-affinity with an empty namespaceSelector matches every namespace",
        pod(
            ns="subteam1.team1",
            labels=S1,
            aff=affinity(anti=[term(expr("service", "In", "securityscan", "value2"), topo="zone", ns_selector={})]),
        ),
        [pod("existing", ns="subteam2.team1", node="node1", labels=SECURITYSCAN)],
        ANTI,
    ),
    (
        "anti-affinity with a non-matching namespaceSelector",
        pod(
            ns="subteam1.team1",
            labels=S1,
            aff=affinity(anti=[term(expr("service", "In", "securityscan", "value2"), topo="zone", ns_selector=TEAM1)]),
        ),
        [pod("existing", ns="subteam1.team2", node="node1", labels=SECURITYSCAN)],
        OK,
    ),
]


@pytest.mark.parametrize(
    "incoming, pods, want", [c[1:] for c in SINGLE_NODE_CASES], ids=[c[0] for c in SINGLE_NODE_CASES]
)
def test_required_affinity_single_node(incoming, pods, want):
    skipped, statuses = run_filter(incoming, [NODE1], pods, objects=NAMESPACES)
    if want == "skip":
        assert skipped
        assert statuses == [None]
    else:
        assert not skipped
        assert statuses == [want]


# --- Filter: several nodes (upstream TestRequiredAffinityMultipleNodes) -------------------------

CHINA = {"region": "China"}
CHINA_AZ1 = {"region": "China", "az": "az1"}
INDIA = {"region": "India"}


def abc_nodes(*zones: str):
    return [node(f"node{n}", region="r1", zone=z, hostname=f"node{n}") for n, z in zip("ABC", zones)]


MULTI_NODE_CASES = [
    (
        "nodes sharing the matching pod's region fit",
        pod(aff=affinity(aff=[in_("foo", "region", "bar")])),
        [pod("p1", node="node1", labels={"foo": "bar"})],
        [node("node1", **CHINA), node("node2", **CHINA_AZ1), node("node3", **INDIA)],
        [OK, OK, AFF],
        False,
    ),
    (
        "first pod of a group may go to any node with the topology key",
        pod(
            labels={"foo": "bar", "service": "securityscan"},
            aff=affinity(aff=[in_("foo", "zone", "bar"), in_("service", "zone", "securityscan")]),
        ),
        [pod("p1", node="nodeA", labels={"foo": "bar"})],
        [node("nodeA", zone="az1", hostname="h1"), node("nodeB", zone="az2", hostname="h2")],
        [OK, OK],
        False,
    ),
    (
        "first pod of a group needs nodes with the topology keys",
        pod(
            labels={"foo": "bar", "service": "securityscan"},
            aff=affinity(aff=[in_("foo", "zone", "bar"), in_("service", "zone", "securityscan")]),
        ),
        [pod("p1", node="nodeA", labels={"foo": "bar"})],
        [node("nodeA", zoneLabel="az1", hostname="h1"), node("nodeB", zoneLabel="az2", hostname="h2")],
        [AFF, AFF],
        False,
    ),
    (
        "anti-affinity blocks every node of the region",
        pod(aff=affinity(anti=[in_("foo", "region", "abc")])),
        [pod("p1", node="nodeA", labels={"foo": "abc"})],
        [node("nodeA", region="r1", hostname="nodeA"), node("nodeB", region="r1", hostname="nodeB")],
        [ANTI, ANTI],
        False,
    ),
    (
        "anti-affinity matches when any term matches",
        pod(aff=affinity(anti=[in_("foo", "region", "abc"), in_("service", "zone", "securityscan")])),
        [pod("p1", node="nodeA", labels={"foo": "abc", "service": "securityscan"})],
        abc_nodes("z1", "z2")[:2],
        [ANTI, ANTI],
        False,
    ),
    (
        "anti-affinity leaves the other region",
        pod(aff=affinity(anti=[in_("foo", "region", "abc")])),
        [pod("p1", node="nodeA", labels={"foo": "abc"})],
        [node("nodeA", **CHINA), node("nodeB", **CHINA_AZ1), node("nodeC", **INDIA)],
        [ANTI, ANTI, OK],
        False,
    ),
    (
        "existing anti-affinity in another namespace does not apply",
        pod(ns="NS1", labels={"foo": "123"}, aff=affinity(anti=[in_("foo", "region", "bar")])),
        [
            pod("p1", ns="NS1", node="nodeA", labels={"foo": "bar"}),
            pod("p2", ns="NS2", node="nodeC", aff=affinity(anti=[in_("foo", "region", "123")])),
        ],
        [node("nodeA", **CHINA), node("nodeB", **CHINA_AZ1), node("nodeC", **INDIA)],
        [ANTI, ANTI, OK],
        False,
    ),
    (
        "existing anti-affinity with a topology key no node has: skip",
        pod(labels={"foo": ""}),
        [pod("p1", node="nodeA", aff=affinity(anti=[exists("foo", "invalid-node-label")]))],
        abc_nodes("z1", "z1")[:2],
        [OK, OK],
        True,
    ),
    (
        "incoming anti-affinity with a topology key no node has",
        pod(aff=affinity(anti=[exists("foo", "invalid-node-label")])),
        [pod("p1", node="nodeA", labels={"foo": ""})],
        abc_nodes("z1", "z1")[:2],
        [OK, OK],
        False,
    ),
    (
        "each existing pod's anti-affinity blocks the pod everywhere",
        pod(labels={"foo": "", "bar": ""}),
        [
            pod("p1", node="nodeA", aff=affinity(anti=[exists("foo", "zone")])),
            pod("p2", node="nodeA", aff=affinity(anti=[exists("bar", "region")])),
        ],
        abc_nodes("z1", "z2")[:2],
        [EXISTING, EXISTING],
        False,
    ),
    (
        "incoming anti-affinity violated by one pod per node",
        pod(aff=affinity(anti=[exists("foo", "zone"), exists("bar", "region")])),
        [pod("p1", node="nodeA", labels={"foo": ""}), pod("p2", node="nodeB", labels={"bar": ""})],
        abc_nodes("z1", "z2")[:2],
        [ANTI, ANTI],
        False,
    ),
    (
        "existing anti-affinity: a term whose topology key is missing counts nothing",
        pod(labels={"foo": "", "bar": ""}),
        [pod("p1", node="nodeA", aff=affinity(anti=[exists("foo", "invalid-node-label"), exists("bar", "zone")]))],
        abc_nodes("z1", "z2")[:2],
        [EXISTING, OK],
        False,
    ),
    (
        "incoming anti-affinity: a term whose topology key is missing counts nothing",
        pod(aff=affinity(anti=[exists("foo", "invalid-node-label"), exists("bar", "zone")])),
        [pod("podA", node="nodeA", labels={"foo": "", "bar": ""})],
        abc_nodes("z1", "z2")[:2],
        [ANTI, OK],
        False,
    ),
    (
        "existing anti-affinity: every term with a valid topology key counts",
        pod(labels={"foo": "", "bar": ""}),
        [pod("p1", node="nodeA", aff=affinity(anti=[exists("foo", "region"), exists("bar", "zone")]))],
        abc_nodes("z1", "z2")[:2],
        [EXISTING, EXISTING],
        False,
    ),
    (
        "incoming anti-affinity: every term with a valid topology key counts",
        pod(aff=affinity(anti=[exists("foo", "region"), exists("bar", "zone")])),
        [pod("p1", node="nodeA", labels={"foo": "", "bar": ""})],
        abc_nodes("z1", "z2")[:2],
        [ANTI, ANTI],
        False,
    ),
    (
        "existing pods on two nodes leave only the third",
        pod(labels={"foo": "", "bar": ""}),
        [
            pod("p1", node="nodeA", aff=affinity(anti=[exists("foo", "zone"), exists("labelA", "zone")])),
            pod("p2", node="nodeB", aff=affinity(anti=[exists("bar", "zone"), exists("labelB", "zone")])),
        ],
        abc_nodes("z1", "z2", "z3"),
        [EXISTING, EXISTING, OK],
        False,
    ),
    (
        "affinity: one pod matches all terms, topology keys present",
        pod(aff=affinity(aff=[exists("foo", "region"), exists("bar", "zone")])),
        [pod("pod1", node="nodeA", labels={"foo": "", "bar": ""})],
        abc_nodes("z1", "z1")[:2],
        [OK, OK],
        False,
    ),
    (
        "affinity: the terms must be matched by the same pod",
        pod(aff=affinity(aff=[exists("foo", "region"), exists("bar", "zone")])),
        [pod("pod1", node="nodeA", labels={"foo": ""}), pod("pod2", node="nodeB", labels={"bar": ""})],
        abc_nodes("z1", "z2")[:2],
        [AFF, AFF],
        False,
    ),
]


@pytest.mark.parametrize(
    "incoming, pods, nodes, want, want_skip",
    [c[1:] for c in MULTI_NODE_CASES],
    ids=[c[0] for c in MULTI_NODE_CASES],
)
def test_required_affinity_multiple_nodes(incoming, pods, nodes, want, want_skip):
    skipped, statuses = run_filter(incoming, nodes, pods, objects=[namespace("NS1")])
    assert skipped is want_skip
    assert statuses == want


def test_filter_without_prefilter_state_is_an_error():
    plugin = InterPodAffinity(None, None)
    status = plugin.filter(CycleState(), as_pod_info(pod()), NODE1.info())
    assert status is not None and status.code is Code.ERROR
    assert "PreFilterInterPodAffinity" in status.message()


# --- PreFilter counts (upstream TestGetTPMapMatchingIncomingAffinityAntiAffinity) ----------------

NODE_A = node("nodeA", hostname="nodeA")


def normal(*labels: str):
    return pod("normal", node="nodeA", labels={label: "" for label in labels})


COUNT_CASES = [
    (
        "no existing pod matches the pod's affinity or anti-affinity",
        [normal("bbb")],
        affinity(aff=[exists("aaa", "hostname")], anti=[exists("aaa", "hostname")]),
        {},
        {},
    ),
    (
        "existing pod matches affinity and anti-affinity, one term each",
        [normal("aaa")],
        affinity(aff=[exists("aaa", "hostname")], anti=[exists("aaa", "hostname")]),
        {("hostname", "nodeA"): 1},
        {("hostname", "nodeA"): 1},
    ),
    (
        "existing pod matches both affinity terms: one count per term",
        [normal("aaa", "bbb")],
        affinity(aff=[exists("aaa", "hostname"), exists("bbb", "hostname")], anti=[exists("aaa", "hostname")]),
        {("hostname", "nodeA"): 2},
        {("hostname", "nodeA"): 1},
    ),
    (
        "existing pod misses one affinity term but matches anti-affinity",
        [normal("aaa")],
        affinity(
            aff=[exists("aaa", "hostname"), exists("bbb", "hostname")],
            anti=[exists("aaa", "hostname"), exists("bbb", "hostname")],
        ),
        {},
        {("hostname", "nodeA"): 1},
    ),
    (
        "anti-affinity with several terms, existing pod violates one (case 1)",
        [normal("aaa", "bbb")],
        affinity(
            aff=[exists("aaa", "hostname"), exists("ccc", "hostname")],
            anti=[exists("aaa", "hostname"), exists("ccc", "hostname")],
        ),
        {},
        {("hostname", "nodeA"): 1},
    ),
    (
        "anti-affinity with several terms, existing pod violates one (case 2)",
        [normal("bbb")],
        affinity(
            aff=[exists("aaa", "hostname"), exists("bbb", "hostname")],
            anti=[exists("aaa", "hostname"), exists("bbb", "hostname")],
        ),
        {},
        {("hostname", "nodeA"): 1},
    ),
]


@pytest.mark.parametrize(
    "existing, aff, want_affinity, want_anti", [c[1:] for c in COUNT_CASES], ids=[c[0] for c in COUNT_CASES]
)
def test_prefilter_counts(existing, aff, want_affinity, want_anti):
    _, state, _, _ = prefilter_state(pod("incoming", aff=aff), [NODE_A], existing)
    s: PreFilterState = state.read(PRE_FILTER_STATE_KEY)
    assert flatten(s.affinity_counts) == want_affinity
    assert flatten(s.anti_affinity_counts) == want_anti


def test_incoming_pod_without_terms_and_no_existing_anti_affinity_skips():
    skipped, statuses = run_filter(pod("aaa-normal"), [NODE_A], [normal("aaa")])
    assert skipped and statuses == [None]


# --- AddPod / RemovePod (upstream TestPreFilterStateAddRemovePod) ------------------------------

SEL_FOO_BAR = {"foo": "bar"}
ANTI_FOO_BAR = [in_("foo", "region", "bar")]
COMPLEX = [in_("foo", "region", "bar", "buzz"), not_in("service", "zone", "bar", "security", "test")]
ADD_REMOVE_NODES = [
    node("nodeA", region="r1", zone="z11"),
    node("nodeB", region="r1", zone="z12"),
    node("nodeC", region="r2", zone="z21"),
]

ADD_REMOVE_CASES = [
    (
        "anti-affinity counts after adding a pod",
        pod("pending", labels=SEL_FOO_BAR, aff=affinity(anti=ANTI_FOO_BAR)),
        [
            pod("p1", node="nodeA", labels=SEL_FOO_BAR),
            pod("p2", node="nodeC", aff=affinity(anti=ANTI_FOO_BAR)),
        ],
        pod("addedPod", node="nodeB", labels=SEL_FOO_BAR, aff=affinity(anti=ANTI_FOO_BAR)),
        {("region", "r1"): 2},
        {},
    ),
    (
        "anti-affinity counts with several terms after adding a pod",
        pod("pending", labels=SEL_FOO_BAR, aff=affinity(anti=COMPLEX)),
        [
            pod("p1", node="nodeA", labels=SEL_FOO_BAR),
            pod("p2", node="nodeC", aff=affinity(anti=ANTI_FOO_BAR)),
        ],
        pod("addedPod", node="nodeA", labels=SEL_FOO_BAR, aff=affinity(anti=COMPLEX)),
        {("region", "r1"): 2, ("zone", "z11"): 2, ("zone", "z21"): 1},
        {},
    ),
    (
        "affinity counts after adding a pod",
        pod("pending", labels=SEL_FOO_BAR, aff=affinity(aff=COMPLEX)),
        [
            pod("p1", node="nodeA", labels=SEL_FOO_BAR),
            pod("p2", node="nodeC", aff=affinity(aff=COMPLEX, anti=ANTI_FOO_BAR)),
        ],
        pod("addedPod", node="nodeA", labels=SEL_FOO_BAR, aff=affinity(anti=COMPLEX)),
        {},
        {("region", "r1"): 2, ("zone", "z11"): 2},
    ),
]


def _snapshot(s: PreFilterState) -> tuple[dict, dict, dict]:
    return (flatten(s.existing_anti_affinity_counts), flatten(s.affinity_counts), flatten(s.anti_affinity_counts))


@pytest.mark.parametrize(
    "pending, existing, added, want_anti, want_affinity",
    [c[1:] for c in ADD_REMOVE_CASES],
    ids=[c[0] for c in ADD_REMOVE_CASES],
)
def test_add_and_remove_pod(pending, existing, added, want_anti, want_affinity):
    _, all_state, _, _ = prefilter_state(pending, ADD_REMOVE_NODES, [*existing, added])
    plugin, state, pi, infos = prefilter_state(pending, ADD_REMOVE_NODES, existing)
    s: PreFilterState = state.read(PRE_FILTER_STATE_KEY)
    original = _snapshot(s)
    added_info = as_pod_info(added)
    node_info = infos[added_info.node_name]

    assert plugin.add_pod(state, pi, added_info, node_info) is None
    assert flatten(s.anti_affinity_counts) == want_anti
    assert flatten(s.affinity_counts) == want_affinity
    assert _snapshot(s) == _snapshot(all_state.read(PRE_FILTER_STATE_KEY))

    assert plugin.remove_pod(state, pi, added_info, node_info) is None
    assert _snapshot(s) == original


def test_added_pod_on_a_cloned_state_changes_only_the_clone():
    incoming = pod("pending", labels=SEL_FOO_BAR, aff=affinity(anti=ANTI_FOO_BAR))
    plugin, state, pi, infos = prefilter_state(incoming, ADD_REMOVE_NODES, [pod("p1", node="nodeA")])
    nominated = as_pod_info(pod("nominated", node="nodeC", labels=SEL_FOO_BAR))
    assert plugin.filter(state, pi, infos["nodeC"]) is None

    clone = state.clone()
    assert plugin.add_pod(clone, pi, nominated, infos["nodeC"]) is None
    assert _outcome(plugin.filter(clone, pi, infos["nodeC"])) == ANTI
    assert plugin.filter(state, pi, infos["nodeC"]) is None
    assert plugin.filter(clone, pi, infos["nodeA"]) is None


def test_removing_the_only_violating_pod_frees_the_domain():
    incoming = pod("pending", labels=SEL_FOO_BAR)
    blocker = pod("blocker", node="nodeA", aff=affinity(anti=ANTI_FOO_BAR))
    plugin, state, pi, infos = prefilter_state(incoming, ADD_REMOVE_NODES, [blocker])
    assert _outcome(plugin.filter(state, pi, infos["nodeB"])) == EXISTING
    assert plugin.remove_pod(state, pi, as_pod_info(blocker), infos["nodeA"]) is None
    assert plugin.filter(state, pi, infos["nodeB"]) is None
    assert state.read(PRE_FILTER_STATE_KEY).existing_anti_affinity_counts == {}


def test_first_pod_special_case_ends_once_a_matching_pod_is_added():
    # Self-affinity lets the first pod go anywhere; once one matching pod exists (e.g. a
    # nominated one), only its zone fits.
    incoming = pod("pending", labels=SEL_FOO_BAR, aff=affinity(aff=[in_("foo", "zone", "bar")]))
    plugin, state, pi, infos = prefilter_state(incoming, ADD_REMOVE_NODES)
    assert [plugin.filter(state, pi, infos[n]) for n in ("nodeA", "nodeB", "nodeC")] == [None, None, None]
    assert (
        plugin.add_pod(state, pi, as_pod_info(pod("first", node="nodeB", labels=SEL_FOO_BAR)), infos["nodeB"]) is None
    )
    assert [_outcome(plugin.filter(state, pi, infos[n])) for n in ("nodeA", "nodeB", "nodeC")] == [AFF, None, AFF]


def test_prefilter_state_clone_is_independent():
    _, state, _, _ = prefilter_state(
        pod("pending", labels=SEL_FOO_BAR, aff=affinity(aff=COMPLEX, anti=COMPLEX)),
        ADD_REMOVE_NODES,
        [pod("p1", node="nodeA", labels=SEL_FOO_BAR), pod("p2", node="nodeC", aff=affinity(anti=ANTI_FOO_BAR))],
    )
    s: PreFilterState = state.read(PRE_FILTER_STATE_KEY)
    c = s.clone()
    assert c is not s and _snapshot(c) == _snapshot(s)
    c.affinity_counts["region"]["r1"] += 5
    c.existing_anti_affinity_counts.clear()
    assert _snapshot(c) != _snapshot(s)
    assert flatten(s.existing_anti_affinity_counts) == {("region", "r2"): 1}


# --- Score (upstream TestPreferredAffinity) --------------------------------------------------------

SEC_S1 = {"security": "S1"}
SEC_S2 = {"security": "S2"}
AZ1 = {"az": "az1"}
AZ2 = {"az": "az2"}

STAY_S1_REGION = affinity(paff=[(5, in_("security", "region", "S1"))])
STAY_S2_REGION = affinity(paff=[(6, in_("security", "region", "S2"))])
AFFINITY3 = affinity(
    paff=[
        (8, term(expr("security", "NotIn", "S1"), expr("security", "In", "S2"), topo="region")),
        (2, term(expr("security", "Exists"), expr("wrongkey", "DoesNotExist"), topo="region")),
    ]
)
HARD_AFFINITY = affinity(
    aff=[
        in_("security", "region", "S1", "value2"),
        term(expr("security", "Exists"), expr("wrongkey", "DoesNotExist"), topo="region"),
    ]
)
AWAY_S1_AZ = affinity(panti=[(5, in_("security", "az", "S1"))])
AWAY_S2_AZ = affinity(panti=[(5, in_("security", "az", "S2"))])
STAY_S1_AWAY_S2 = affinity(paff=[(8, in_("security", "region", "S1"))], panti=[(5, in_("security", "az", "S2"))])
NS_SELECTOR_TERM = term(expr("security", "In", "S1"), topo="region", namespaces=["subteam2.team2"], ns_selector=TEAM1)
AFFINITY_NS_SELECTOR = affinity(paff=[(5, NS_SELECTOR_TERM)])
ANTI_AFFINITY_NS_SELECTOR = affinity(panti=[(5, NS_SELECTOR_TERM)])


def nodes_of(*labels: dict):
    return [node(f"node{i}", **lab) for i, lab in enumerate(labels, start=1)]


def on_many(spec: list[tuple]) -> list:
    return [
        pod(f"e{i}", ns=s[3] if len(s) > 3 else "default", node=f"node{s[0]}", labels=s[1], aff=s[2])
        for i, s in enumerate(spec)
    ]


SCORE_CASES = [
    (
        "no affinity anywhere: skip",
        pod(labels=SEC_S1),
        [],
        nodes_of(CHINA, INDIA, AZ1),
        "skip",
    ),
    (
        "affinity: the matching pod's region scores highest",
        pod(labels=SEC_S1, aff=STAY_S1_REGION),
        on_many([(1, SEC_S1, None), (2, SEC_S2, None), (3, SEC_S1, None)]),
        nodes_of(CHINA, INDIA, AZ1),
        [100, 0, 0],
    ),
    (
        "affinity: every node of the matching region scores the same",
        pod(aff=STAY_S1_REGION),
        on_many([(1, SEC_S1, None)]),
        nodes_of(CHINA, CHINA_AZ1, INDIA),
        [100, 100, 0],
    ),
    (
        "affinity: the region with more matching pods scores higher",
        pod(labels=SEC_S1, aff=STAY_S2_REGION),
        on_many(
            [
                (1, SEC_S2, None),
                (1, SEC_S2, None),
                (2, SEC_S2, None),
                (3, SEC_S2, None),
                (4, SEC_S2, None),
                (5, SEC_S2, None),
            ]
        ),
        nodes_of(CHINA, INDIA, CHINA, CHINA, INDIA),
        [100, 0, 100, 100, 0],
    ),
    (
        "affinity: different operators and values, some failing",
        pod(labels=SEC_S1, aff=AFFINITY3),
        on_many([(1, SEC_S1, None), (2, SEC_S2, None), (3, SEC_S1, None)]),
        nodes_of(CHINA, INDIA, AZ1),
        [20, 100, 0],
    ),
    (
        "affinity symmetry: existing pods' preferred terms",
        pod(labels=SEC_S2),
        on_many([(1, SEC_S1, STAY_S1_REGION), (2, SEC_S2, STAY_S2_REGION)]),
        nodes_of(CHINA, INDIA, AZ1),
        [0, 100, 0],
    ),
    (
        "affinity symmetry with namespaceSelector",
        pod(ns="subteam1.team1", labels=SEC_S1),
        on_many([(1, SEC_S1, AFFINITY_NS_SELECTOR), (2, SEC_S2, STAY_S2_REGION)]),
        nodes_of(CHINA, INDIA, AZ1),
        [100, 0, 0],
    ),
    (
        "anti-affinity symmetry with namespaceSelector",
        pod(ns="subteam1.team1", labels=SEC_S1),
        on_many([(1, SEC_S1, ANTI_AFFINITY_NS_SELECTOR), (2, SEC_S2, STAY_S2_REGION)]),
        nodes_of(CHINA, INDIA, AZ1),
        [0, 100, 100],
    ),
    (
        "affinity symmetry: existing pods' required terms",
        pod(labels=SEC_S1),
        on_many([(1, SEC_S1, HARD_AFFINITY), (2, SEC_S2, HARD_AFFINITY)]),
        nodes_of(CHINA, INDIA, AZ1),
        [100, 100, 0],
    ),
    (
        "anti-affinity: the node without matching pods scores high",
        pod(labels=SEC_S1, aff=AWAY_S1_AZ),
        on_many([(1, SEC_S1, None), (2, SEC_S2, None)]),
        nodes_of(AZ1, CHINA),
        [0, 100],
    ),
    (
        "anti-affinity: the node without the topology key scores high",
        pod(labels=SEC_S1, aff=AWAY_S1_AZ),
        on_many([(1, SEC_S1, None), (2, SEC_S1, None)]),
        nodes_of(AZ1, CHINA),
        [0, 100],
    ),
    (
        "anti-affinity: the node with more matching pods scores low",
        pod(labels=SEC_S1, aff=AWAY_S1_AZ),
        on_many([(1, SEC_S1, None), (1, SEC_S1, None), (2, SEC_S2, None)]),
        nodes_of(AZ1, INDIA),
        [0, 100],
    ),
    (
        "anti-affinity symmetry",
        pod(labels=SEC_S2),
        on_many([(1, SEC_S1, AWAY_S2_AZ), (2, SEC_S2, AWAY_S1_AZ)]),
        nodes_of(AZ1, AZ2),
        [0, 100],
    ),
    (
        "affinity and anti-affinity",
        pod(labels=SEC_S1, aff=STAY_S1_AWAY_S2),
        on_many([(1, SEC_S1, None), (2, SEC_S1, None)]),
        nodes_of(CHINA, AZ1),
        [100, 0],
    ),
    (
        "affinity and anti-affinity, pods of one service spread in one region",
        pod(labels=SEC_S1, aff=STAY_S1_AWAY_S2),
        on_many(
            [
                (1, SEC_S1, None),
                (1, SEC_S1, None),
                (2, SEC_S1, None),
                (3, SEC_S1, None),
                (3, SEC_S1, None),
                (4, SEC_S1, None),
                (5, SEC_S1, None),
            ]
        ),
        nodes_of(CHINA_AZ1, INDIA, CHINA, CHINA, INDIA),
        [100, 0, 100, 100, 0],
    ),
    (
        "affinity, anti-affinity and symmetry together",
        pod(labels=SEC_S1, aff=STAY_S1_AWAY_S2),
        on_many([(1, SEC_S1, None), (2, SEC_S2, None), (3, None, STAY_S1_AWAY_S2), (4, None, AWAY_S1_AZ)]),
        nodes_of(CHINA, AZ1, INDIA, AZ2),
        [100, 0, 100, 0],
    ),
    (
        "nodes of one topology where only some host pods with affinity",
        pod(labels=SEC_S1),
        on_many([(1, SEC_S1, None), (2, None, STAY_S1_AWAY_S2)]),
        nodes_of(CHINA, CHINA),
        [0, 0],
    ),
    (
        "affinity with pods matching the namespaceSelector",
        pod(ns="subteam1.team1", labels=SEC_S1, aff=AFFINITY_NS_SELECTOR),
        on_many(
            [
                (1, SEC_S1, None, "subteam1.team1"),
                (1, SEC_S1, None, "subteam1.team1"),
                (1, SEC_S1, None, "subteam1.team2"),
                (2, SEC_S1, None, "subteam2.team1"),
            ]
        ),
        nodes_of(CHINA, INDIA),
        [100, 0],
    ),
    (
        "affinity with pods matching the namespaceSelector and namespaces",
        pod(ns="subteam1.team1", labels=SEC_S1, aff=AFFINITY_NS_SELECTOR),
        on_many(
            [
                (1, SEC_S1, None, "subteam1.team1"),
                (1, SEC_S1, None, "subteam1.team1"),
                (1, SEC_S1, None, "subteam2.team2"),
                (2, SEC_S1, None, "subteam2.team1"),
            ]
        ),
        nodes_of(CHINA, INDIA),
        [100, 0],
    ),
    (
        "anti-affinity with pods matching the namespaceSelector",
        pod(ns="subteam1.team1", labels=SEC_S1, aff=ANTI_AFFINITY_NS_SELECTOR),
        on_many(
            [
                (1, SEC_S1, None, "subteam1.team1"),
                (1, SEC_S1, None, "subteam1.team1"),
                (1, SEC_S1, None, "subteam1.team2"),
                (2, SEC_S1, None, "subteam2.team1"),
            ]
        ),
        nodes_of(CHINA, INDIA),
        [0, 100],
    ),
    (
        "anti-affinity with pods matching the namespaceSelector and namespaces",
        pod(ns="subteam1.team1", labels=SEC_S1, aff=ANTI_AFFINITY_NS_SELECTOR),
        on_many(
            [
                (1, SEC_S1, None, "subteam1.team1"),
                (1, SEC_S1, None, "subteam1.team1"),
                (1, SEC_S1, None, "subteam2.team2"),
                (2, SEC_S1, None, "subteam2.team1"),
            ]
        ),
        nodes_of(CHINA, INDIA),
        [0, 100],
    ),
    (
        "preferred terms of existing pods count by default",
        pod(labels=SEC_S2),
        on_many([(1, SEC_S1, STAY_S1_AWAY_S2), (2, SEC_S2, STAY_S2_REGION)]),
        nodes_of(CHINA, INDIA),
        [0, 100],
    ),
]


@pytest.mark.parametrize("incoming, pods, nodes, want", [c[1:] for c in SCORE_CASES], ids=[c[0] for c in SCORE_CASES])
def test_preferred_affinity(incoming, pods, nodes, want):
    skipped, scores = run_score(incoming, nodes, pods, objects=NAMESPACES)
    if want == "skip":
        assert skipped
        assert scores == [0] * len(nodes)
    else:
        assert not skipped
        assert scores == want


def test_ignore_preferred_terms_of_existing_pods_skips():
    pods = on_many([(1, SEC_S1, STAY_S1_AWAY_S2), (2, SEC_S2, STAY_S2_REGION)])
    skipped, scores = run_score(
        pod(labels=SEC_S2), nodes_of(CHINA, INDIA), pods, args={"ignorePreferredTermsOfExistingPods": True}
    )
    assert skipped and scores == [0, 0]


def test_ignore_preferred_terms_still_scores_the_pods_own_terms():
    pods = on_many([(1, SEC_S1, None), (2, SEC_S2, None)])
    skipped, scores = run_score(
        pod(labels=SEC_S1, aff=STAY_S1_REGION),
        nodes_of(CHINA, INDIA),
        pods,
        args={"ignorePreferredTermsOfExistingPods": True},
    )
    assert not skipped and scores == [100, 0]


def test_no_nodes_to_score_skips():
    plugin = framework_for(InterPodAffinity, None, []).plugins[NAME]
    status = plugin.pre_score(CycleState(), as_pod_info(pod(labels=SEC_S2)), [])
    assert status is not None and status.code is Code.SKIP


def test_raw_scores_may_be_negative_before_normalization():
    pods = on_many([(1, SEC_S1, None), (1, SEC_S1, None), (2, SEC_S1, None)])
    raw = score_nodes(
        InterPodAffinity, pod(labels=SEC_S1, aff=AWAY_S1_AZ), nodes_of(AZ1, AZ2, CHINA), pods=pods, normalize=False
    )
    assert raw == {"node1": -10, "node2": -5, "node3": 0}
    final = score_nodes(InterPodAffinity, pod(labels=SEC_S1, aff=AWAY_S1_AZ), nodes_of(AZ1, AZ2, CHINA), pods=pods)
    assert final == {"node1": 0, "node2": 50, "node3": 100}


# --- Score with hardPodAffinityWeight (upstream TestPreferredAffinityWithHardPodAffinitySymmetricWeight)

SERVICE_S1 = {"service": "S1"}
HARD_POD_AFFINITY = affinity(
    aff=[
        term(
            expr("service", "In", "S1"),
            topo="region",
            namespaces=["default", "subteam2.team2"],
            ns_selector=TEAM1,
        )
    ]
)
HARD_WEIGHT_CASES = [
    ("default weight", "default", 1, [100, 100, 0]),
    ("zero weight: skip", "default", 0, "skip"),
    ("no matching namespace: skip", "subteam1.team2", 1, "skip"),
    ("matching namespaceSelector", "subteam1.team1", 1, [100, 100, 0]),
    ("matching namespaces", "subteam2.team2", 1, [100, 100, 0]),
]


@pytest.mark.parametrize("ns, weight, want", [c[1:] for c in HARD_WEIGHT_CASES], ids=[c[0] for c in HARD_WEIGHT_CASES])
def test_hard_pod_affinity_symmetric_weight(ns, weight, want):
    pods = on_many([(1, None, HARD_POD_AFFINITY), (2, None, HARD_POD_AFFINITY)])
    skipped, scores = run_score(
        pod(ns=ns, labels=SERVICE_S1),
        nodes_of(CHINA, INDIA, AZ1),
        pods,
        objects=NAMESPACES,
        args={"hardPodAffinityWeight": weight},
    )
    if want == "skip":
        assert skipped
    else:
        assert not skipped and scores == want


@pytest.mark.parametrize("weight", [1, 7, 100], ids=["weight 1", "weight 7", "weight 100"])
def test_hard_pod_affinity_weight_is_the_raw_score(weight):
    pods = on_many([(1, None, HARD_POD_AFFINITY)])
    raw = score_nodes(
        InterPodAffinity,
        pod(labels=SERVICE_S1),
        nodes_of(CHINA, INDIA),
        pods=pods,
        args={"hardPodAffinityWeight": weight},
        normalize=False,
    )
    assert raw == {"node1": weight, "node2": 0}


# --- args --------------------------------------------------------------------------------------


def test_args_defaults():
    args = InterPodAffinityArgs()
    assert args.hard_pod_affinity_weight == 1
    assert args.ignore_preferred_terms_of_existing_pods is False


@pytest.mark.parametrize("weight", [0, 1, 100], ids=["min 0", "default 1", "max 100"])
def test_args_accept_weights_in_range(weight):
    assert InterPodAffinityArgs.model_validate({"hardPodAffinityWeight": weight}).hard_pod_affinity_weight == weight


@pytest.mark.parametrize("weight", [-1, 101], ids=["below 0", "above 100"])
def test_args_refuse_weights_out_of_range(weight):
    with pytest.raises(
        ValidationError, match=rf"hardPodAffinityWeight: Invalid value: {weight}: not in valid range \[0, 100\]"
    ):
        InterPodAffinityArgs.model_validate({"hardPodAffinityWeight": weight})


def test_args_refuse_unknown_fields():
    with pytest.raises(ValidationError):
        InterPodAffinityArgs.model_validate({"hardPodAffinityWeigth": 3})


# --- events ------------------------------------------------------------------------------------


def test_events_to_register():
    plugin = InterPodAffinity(None, None)
    events = {(e.event.resource, e.event.action) for e in plugin.events_to_register()}
    assert events == {
        (EventResource.POD, ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.DELETE),
        # 1.36: the rejected pod's own labels.
        (EventResource.UNSCHEDULED_POD, ActionType.UPDATE_POD_LABEL),
        (EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL),
    }
    assert all(e.hint is not None for e in plugin.events_to_register())


TARGET = pod(
    "target", aff=affinity(aff=[in_("service", "region", "securityscan")], anti=[in_("app", "zone", "db")])
).obj()
Q, S = QueueingHint.QUEUE, QueueingHint.SKIP

POD_HINT_CASES = [
    ("added pod matching affinity", None, pod("x", node="n1", labels=SECURITYSCAN).obj(), Q),
    ("added pod not matching affinity", None, pod("x", node="n1", labels={"service": "web"}).obj(), S),
    ("unscheduled pod", None, pod("x", labels=SECURITYSCAN).obj(), S),
    (
        "relabelled to match affinity",
        pod("x", node="n1", labels={"service": "web"}).obj(),
        pod("x", node="n1", labels=SECURITYSCAN).obj(),
        Q,
    ),
    (
        "relabelled to stop matching anti-affinity",
        pod("x", node="n1", labels={"app": "db"}).obj(),
        pod("x", node="n1", labels={"app": "web"}).obj(),
        Q,
    ),
    (
        "relabelled without effect",
        pod("x", node="n1", labels={"app": "web"}).obj(),
        pod("x", node="n1", labels={"app": "cache"}).obj(),
        S,
    ),
    ("deleted pod matching anti-affinity", pod("x", node="n1", labels={"app": "db"}).obj(), None, Q),
    ("deleted pod unrelated", pod("x", node="n1", labels={"app": "web"}).obj(), None, S),
    (
        "deleted pod whose anti-affinity repelled the target",
        pod("x", node="n1", aff=affinity(anti=[exists("role", "zone")])).obj(),
        None,
        Q,
    ),
]


def nominated(b, node_name: str = "n1"):
    obj = b.obj()
    obj.setdefault("status", {})["nominatedNodeName"] = node_name
    return obj


POD_HINT_CASES += [
    # 1.36: nominated pods count as placed ones.
    ("added pod with nominated node matching affinity", None, nominated(pod("x", labels=SECURITYSCAN)), Q),
    ("added pod with nominated node not matching affinity", None, nominated(pod("x", labels={"service": "web"})), S),
    (
        "pod with nominated node relabelled to stop matching anti-affinity",
        nominated(pod("x", labels={"app": "db"})),
        nominated(pod("x", labels={"app": "web"})),
        Q,
    ),
    ("deleted pod with nominated node matching anti-affinity", nominated(pod("x", labels={"app": "db"})), None, Q),
]


@pytest.mark.parametrize("old, new, want", [c[1:] for c in POD_HINT_CASES], ids=[c[0] for c in POD_HINT_CASES])
def test_pod_change_hint(old, new, want):
    target = dict(TARGET)
    target["metadata"] = {**TARGET["metadata"], "labels": {"role": "x"}}
    assert InterPodAffinity(None, None).is_schedulable_after_pod_change(target, old, new) is want


def test_pod_change_hint_target_labels_changed():
    # 1.36: a change of the rejected pod's own labels may make it schedulable.
    target = pod("target", labels={"role": "x"}, aff=TARGET["spec"]["affinity"]).uid("t").obj()
    relabelled = pod("target", labels={"role": "y"}, aff=TARGET["spec"]["affinity"]).uid("t").obj()
    other = pod("other", labels={"role": "y"}).uid("o").obj()
    hint = InterPodAffinity(None, None).is_schedulable_after_pod_change
    assert hint(target, target, relabelled) is Q
    assert hint(target, target, target) is S
    assert hint(target, pod("other", labels={"role": "x"}).uid("o").obj(), other) is S


TWO_ANTI = pod("target", aff=affinity(anti=[in_("app", "zone", "db"), in_("tier", "host", "backend")])).obj()
DB_BACKEND = {"app": "db", "tier": "backend"}

# 1.37: one anti-affinity term is enough to repel, so the hint looks at any term, not all.
MULTI_ANTI_CASES = [
    ("deleted pod matching one of two anti terms", pod("x", node="n1", labels={"app": "db"}).obj(), None, Q),
    ("deleted pod matching both anti terms", pod("x", node="n1", labels=DB_BACKEND).obj(), None, Q),
    ("deleted pod matching no anti term", pod("x", node="n1", labels={"app": "web"}).obj(), None, S),
    (
        "relabelled to match no anti term",
        pod("x", node="n1", labels={"app": "db"}).obj(),
        pod("x", node="n1", labels={"app": "web"}).obj(),
        Q,
    ),
    (
        "relabelled but still matching an anti term",
        pod("x", node="n1", labels=DB_BACKEND).obj(),
        pod("x", node="n1", labels={"tier": "backend"}).obj(),
        S,
    ),
]


@pytest.mark.parametrize("old, new, want", [c[1:] for c in MULTI_ANTI_CASES], ids=[c[0] for c in MULTI_ANTI_CASES])
def test_pod_change_hint_multiple_anti_affinity_terms(old, new, want):
    assert InterPodAffinity(None, None).is_schedulable_after_pod_change(TWO_ANTI, old, new) is want


NODE_HINT_CASES = [
    ("added node with the affinity topology key", None, node("n", region="r1").obj(), Q),
    ("added node with the anti-affinity topology key", None, node("n", zone="z1").obj(), Q),
    ("added node without topology keys", None, node("n", other="x").obj(), S),
    ("node relabelled with a topology key", node("n").obj(), node("n", region="r2").obj(), Q),
]


@pytest.mark.parametrize("old, new, want", [c[1:] for c in NODE_HINT_CASES], ids=[c[0] for c in NODE_HINT_CASES])
def test_node_change_hint(old, new, want):
    assert InterPodAffinity(None, None).is_schedulable_after_node_change(TARGET, old, new) is want


def test_node_hint_skips_for_a_pod_without_required_terms():
    plain = pod("plain", aff=STAY_S1_REGION).obj()
    assert InterPodAffinity(None, None).is_schedulable_after_node_change(plain, None, node("n", region="r").obj()) is S


# --- sums kept across cycles: a node's change must show in the next cycle ------------------------

BLUE = {"color": "blue"}
RED = {"color": "red"}
ZONED = [node("n1", zone="z1", host="n1"), node("n2", zone="z1", host="n2"), node("n3", zone="z2", host="n3")]
WITH_BLUE_IN_ZONE = affinity(aff=[in_("color", "zone", "blue")])
AWAY_FROM_RED_HOST = affinity(anti=[in_("color", "host", "red")])
AWAY_FROM_BLUE_HOST = affinity(anti=[in_("color", "host", "blue")])
TOWARDS_RED_ZONE = affinity(paff=[(10, in_("color", "zone", "red"))])


def _add(name: str, on: str, labels: dict, aff: dict | None = None):
    return lambda cache: cache.add_pod(as_pod_info(pod(name, node=on, labels=labels, aff=aff)))


def _remove(name: str):
    def remove(cache):
        for ni in cache.nodes.values():
            for pi in ni.pods:
                if pi.name == name:
                    assert cache.remove_pod(pi.uid) is not None
                    return
        raise AssertionError(f"no pod {name}")

    return remove


def _relabel(name: str, **labels: str):
    def change(cache):
        obj = node(name, **labels).obj()
        cache.update_node(None, obj)

    return change


CROSS_CYCLE_CASES = [
    (
        "matching pod added: its zone becomes feasible",
        pod(labels=RED, aff=WITH_BLUE_IN_ZONE),
        [],
        _add("blue", "n3", BLUE),
        ([AFF, AFF, AFF], [AFF, AFF, OK]),
    ),
    (
        "matching pod removed: no node is feasible",
        pod(labels=RED, aff=WITH_BLUE_IN_ZONE),
        [("blue", "n1", BLUE, None)],
        _remove("blue"),
        ([OK, OK, AFF], [AFF, AFF, AFF]),
    ),
    (
        "repelling pod removed: its host is free again",
        pod(labels=BLUE, aff=AWAY_FROM_RED_HOST),
        [("red", "n2", RED, None)],
        _remove("red"),
        ([OK, ANTI, OK], [OK, OK, OK]),
    ),
    (
        "existing pod with anti-affinity added: its host repels",
        pod(labels=BLUE),
        [("other", "n1", RED, AWAY_FROM_BLUE_HOST)],
        _add("guard", "n3", RED, AWAY_FROM_BLUE_HOST),
        ([EXISTING, OK, OK], [EXISTING, OK, EXISTING]),
    ),
    (
        "existing pod with anti-affinity removed: its host is free again",
        pod(labels=BLUE),
        [("guard", "n2", RED, AWAY_FROM_BLUE_HOST)],
        _remove("guard"),
        ([OK, EXISTING, OK], ["skip"]),
    ),
    (
        "node of the matching pod relabelled into the other zone",
        pod(labels=RED, aff=WITH_BLUE_IN_ZONE),
        [("blue", "n3", BLUE, None)],
        _relabel("n3", zone="z1", host="n3"),
        ([AFF, AFF, OK], [OK, OK, OK]),
    ),
    (
        "node of a repelling pod relabelled onto another host",
        pod(labels=BLUE),
        [("guard", "n1", RED, AWAY_FROM_BLUE_HOST)],
        _relabel("n1", zone="z1", host="n2"),
        ([EXISTING, OK, OK], [EXISTING, EXISTING, OK]),
    ),
]


def _cross_cycle_cache(existing):
    from kubesched.backend.cache import Cache, Snapshot

    cache = Cache()
    for n in ZONED:
        cache.add_node(n.obj())
    for name, on, labels, aff in existing:
        _add(name, on, labels, aff)(cache)
    snapshot = Snapshot()
    cache.update_snapshot(snapshot)
    return cache, snapshot


@pytest.mark.parametrize(
    "incoming, existing, change, want",
    [c[1:] for c in CROSS_CYCLE_CASES],
    ids=[c[0] for c in CROSS_CYCLE_CASES],
)
def test_prefilter_sums_follow_node_changes_across_cycles(incoming, existing, change, want):
    cache, snapshot = _cross_cycle_cache(existing)
    fw = framework_for(InterPodAffinity, None, [])
    fw.set_snapshot(snapshot)
    pi = as_pod_info(incoming)

    def cycle() -> list:
        state = CycleState()
        _, status, _ = asyncio.run(fw.run_pre_filter(state, pi))
        assert status is None
        if NAME in state.skip_filter_plugins:
            return ["skip"]
        return [_outcome(fw.run_filter(state, pi, ni)) for ni in snapshot.list()]

    first = cycle()
    change(cache)
    cache.update_snapshot(snapshot)
    assert (first, cycle()) == want


def test_prescore_sums_follow_node_changes_across_cycles():
    cache, snapshot = _cross_cycle_cache([("red", "n1", RED, None)])
    fw = framework_for(InterPodAffinity, None, [])
    fw.set_snapshot(snapshot)
    pi = as_pod_info(pod(labels=BLUE, aff=TOWARDS_RED_ZONE))

    def cycle() -> dict[str, int]:
        state = CycleState()
        nodes = snapshot.list()
        assert asyncio.run(fw.run_pre_score(state, pi, nodes)) is None
        final: dict[str, dict[str, int]] = {}
        _, status = asyncio.run(fw.run_score(state, pi, nodes, None, final))
        assert status is None
        return {n: s.get(NAME, 0) for n, s in final.items()}

    assert cycle() == {"n1": 100, "n2": 100, "n3": 0}
    _remove("red")(cache)
    _add("red2", "n3", RED)(cache)
    cache.update_snapshot(snapshot)
    assert cycle() == {"n1": 0, "n2": 0, "n3": 100}
