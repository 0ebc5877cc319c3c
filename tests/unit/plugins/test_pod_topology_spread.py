"""PodTopologySpread: cases and expected numbers from upstream's filtering_test.go and scoring_test.go."""

from __future__ import annotations

import asyncio
import math
from typing import Any

import pytest
from pydantic import ValidationError

from kubesched.framework.events import ActionType, EventResource, QueueingHint
from kubesched.framework.features import FeatureGates
from kubesched.framework.interface import CycleState
from kubesched.framework.status import Code
from kubesched.plugins.podtopologyspread.pod_topology_spread import (
    ERR_REASON_CONSTRAINTS_NOT_MATCH,
    ERR_REASON_NODE_LABEL_NOT_MATCH,
    PRE_FILTER_KEY,
    PRE_SCORE_KEY,
    PodTopologySpread,
    PodTopologySpreadArgs,
    topology_normalizing_weight,
)
from kubesched.testing import (
    NodeBuilder,
    PodBuilder,
    as_node_infos,
    as_pod_info,
    filter_nodes,
    framework_for,
    make_node,
    make_pod,
)

HOST = "kubernetes.io/hostname"
ZONE_STD = "topology.kubernetes.io/zone"
DNS = "DoNotSchedule"
SA = "ScheduleAnyway"
FOO = {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}
BAR = {"matchExpressions": [{"key": "bar", "operator": "Exists"}]}
UNSCHEDULABLE_TAINT = "node.kubernetes.io/unschedulable"
LIST = {"defaultingType": "List"}
SYSTEM = {"defaultingType": "System"}

S, U, UU = Code.SUCCESS, Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE


# --- builders --------------------------------------------------------------------------------


def pod(name: str = "p", ns: str = "default", **labels: str) -> PodBuilder:
    b = make_pod(name, ns)
    for k, v in labels.items():
        b = b.label(k, v)
    return b


def on(node: str, name: str, ns: str = "default", **labels: str) -> PodBuilder:
    """An existing pod bound to ``node``."""
    return pod(name, ns, **labels).node(node)


def spread(
    b: PodBuilder,
    max_skew: int,
    key: str,
    when: str,
    selector: dict[str, Any] | None,
    *,
    min_domains: int | None = None,
    affinity: str | None = None,
    taints: str | None = None,
    match_keys: list[str] | None = None,
) -> PodBuilder:
    c: dict[str, Any] = {"maxSkew": max_skew, "topologyKey": key, "whenUnsatisfiable": when}
    if selector is not None:
        c["labelSelector"] = selector
    if min_domains is not None:
        c["minDomains"] = min_domains
    if affinity is not None:
        c["nodeAffinityPolicy"] = affinity
    if taints is not None:
        c["nodeTaintsPolicy"] = taints
    if match_keys is not None:
        c["matchLabelKeys"] = match_keys
    b.spec.setdefault("topologySpreadConstraints", []).append(c)
    return b


def node(name: str, **labels: str) -> NodeBuilder:
    """A node with exactly ``labels`` (no default hostname label), as upstream's test nodes."""
    return make_node(name).set("metadata.labels", dict(labels))


def tainted(b: NodeBuilder) -> NodeBuilder:
    return b.taint(UNSCHEDULABLE_TAINT, effect="NoSchedule")


def zn(name: str, zone: str, **extra: str) -> NodeBuilder:
    """A node with ``zone`` and ``node`` labels."""
    return node(name, zone=zone, node=name, **extra)


def zh(name: str, zone: str) -> NodeBuilder:
    """A node with ``zone`` and hostname labels."""
    return node(name, zone=zone, **{HOST: name})


def h(name: str) -> NodeBuilder:
    return node(name, **{HOST: name})


def tolerate_unschedulable(b: PodBuilder) -> PodBuilder:
    return b.toleration(key=UNSCHEDULABLE_TAINT, operator="Exists", effect="NoSchedule")


def four_zone_nodes() -> list[NodeBuilder]:
    return [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-x", "zone2"), zn("node-y", "zone2")]


def foo_pods(spec: str) -> list[PodBuilder]:
    """Existing pods labelled foo: ``"a:2 b:1 y:3"`` → p-a1, p-a2 on node-a, ...."""
    out = []
    for part in spec.split():
        n, count = part.split(":")
        for i in range(1, int(count) + 1):
            out.append(on(f"node-{n}", f"p-{n}{i}", foo=""))
    return out


def terminating(b: PodBuilder) -> PodBuilder:
    return b.set("metadata.deletionTimestamp", "2024-01-01T00:00:00Z")


# --- Filter ----------------------------------------------------------------------------------

SINGLE_CONSTRAINT = [
    (
        "no existing pods",
        spread(pod(foo=""), 1, "zone", DNS, FOO),
        four_zone_nodes(),
        [],
        {"node-a": S, "node-b": S, "node-x": S, "node-y": S},
    ),
    (
        "no existing pods, incoming pod doesn't match itself",
        spread(pod(foo=""), 1, "zone", DNS, BAR),
        four_zone_nodes(),
        [],
        {"node-a": S, "node-b": S, "node-x": S, "node-y": S},
    ),
    (
        "existing pods in a different namespace do not count",
        spread(pod(foo=""), 1, "zone", DNS, FOO),
        four_zone_nodes(),
        [
            on("node-a", "p-a1", "ns1", foo=""),
            on("node-a", "p-b1", "ns2", foo=""),
            on("node-x", "p-x1", foo=""),
            on("node-y", "p-y1", foo=""),
        ],
        {"node-a": S, "node-b": S, "node-x": U, "node-y": U},
    ),
    (
        "existing pods do not match null selector",
        spread(pod(foo=""), 1, "zone", DNS, None),
        four_zone_nodes(),
        foo_pods("x:1 y:1"),
        {"node-a": S, "node-b": S, "node-x": S, "node-y": S},
    ),
    (
        "pods spread across zones as 3/3, all nodes fit",
        spread(pod(foo=""), 1, "zone", DNS, FOO),
        four_zone_nodes(),
        foo_pods("a:2 b:1 y:3"),
        {"node-a": S, "node-b": S, "node-x": S, "node-y": S},
    ),
    (
        "pods spread across zones as 1/2 due to absence of label 'zone' on node-b",
        spread(pod(foo=""), 1, "zone", DNS, FOO),
        [
            zn("node-a", "zone1"),
            node("node-b", zon="zone1", node="node-b"),
            zn("node-x", "zone2"),
            zn("node-y", "zone2"),
        ],
        foo_pods("a:1 b:1 x:1 y:1"),
        {"node-a": S, "node-b": UU, "node-x": U, "node-y": U},
    ),
    (
        "pod cannot be scheduled as all nodes don't have label 'rack'",
        spread(pod(foo=""), 1, "rack", DNS, FOO),
        [zn("node-a", "zone1"), zn("node-x", "zone2")],
        [],
        {"node-a": UU, "node-x": UU},
    ),
    (
        "pods spread across nodes as 2/1/0/3, only node-x fits",
        spread(pod(foo=""), 1, "node", DNS, FOO),
        four_zone_nodes(),
        foo_pods("a:2 b:1 y:3"),
        {"node-a": U, "node-b": U, "node-x": S, "node-y": U},
    ),
    (
        "pods spread across nodes as 2/1/0/3, maxSkew is 2, node-b and node-x fit",
        spread(pod(foo=""), 2, "node", DNS, FOO),
        four_zone_nodes(),
        foo_pods("a:2 b:1 y:3"),
        {"node-a": U, "node-b": S, "node-x": S, "node-y": U},
    ),
    (
        "pods spread across nodes as 2/1/0/3, but pod doesn't match itself",
        spread(pod(bar=""), 1, "node", DNS, FOO),
        four_zone_nodes(),
        foo_pods("a:2 b:1 y:3"),
        {"node-a": U, "node-b": S, "node-x": S, "node-y": U},
    ),
    (
        "incoming pod has nodeAffinity, pods spread as 2/~1~/~0~/3, hence node-a fits",
        spread(pod(foo="").node_affinity_in("node", ["node-a", "node-y"]), 1, "node", DNS, FOO),
        four_zone_nodes(),
        foo_pods("a:2 b:1 y:3"),
        {"node-a": S, "node-b": S, "node-x": S, "node-y": U},
    ),
    (
        "terminating pods are excluded",
        spread(pod(foo=""), 1, "node", DNS, FOO),
        [node("node-a", node="node-a"), node("node-b", node="node-b")],
        [terminating(on("node-a", "p-a", foo="")), on("node-b", "p-b", foo="")],
        {"node-a": S, "node-b": U},
    ),
    (
        "incoming pod has nodeAffinity, pods spread as 0/~2~/0/1, hence node-a fits",
        spread(pod(foo="").node_affinity_in("node", ["node-b"], "NotIn"), 1, "zone", DNS, FOO),
        four_zone_nodes(),
        foo_pods("b:2 y:1"),
        {"node-a": S, "node-b": S, "node-x": U, "node-y": U},
    ),
    (
        "spread 2/2/1, maxSkew 2, fewer domains than minDomains: only the third node fits",
        spread(pod(foo=""), 2, "node", DNS, FOO, min_domains=4),
        [node("node-a", node="node-a"), node("node-b", node="node-b"), node("node-c", node="node-c")],
        foo_pods("a:2 b:2 c:1"),
        {"node-a": U, "node-b": U, "node-c": S},
    ),
    (
        "spread 2/2/1, maxSkew 2, more domains than minDomains: all nodes fit",
        spread(pod(foo=""), 2, "node", DNS, FOO, min_domains=2),
        [node("node-a", node="node-a"), node("node-b", node="node-b"), node("node-c", node="node-c")],
        foo_pods("a:2 b:2 c:1"),
        {"node-a": S, "node-b": S, "node-c": S},
    ),
    (
        "zones spread 2/1, maxSkew 2, fewer domains than minDomains: zone2 nodes fit",
        spread(pod(foo=""), 2, "zone", DNS, FOO, min_domains=3),
        four_zone_nodes(),
        [on("node-a", "p-b1", foo=""), on("node-b", "p-b2", foo=""), on("node-y", "p-y1", foo="")],
        {"node-a": U, "node-b": U, "node-x": S, "node-y": S},
    ),
    (
        "zones spread 2/1, maxSkew 2, more domains than minDomains: all nodes fit",
        spread(pod(foo=""), 2, "zone", DNS, FOO, min_domains=1),
        four_zone_nodes(),
        [on("node-a", "p-b1", foo=""), on("node-b", "p-b2", foo=""), on("node-y", "p-y1", foo="")],
        {"node-a": S, "node-b": S, "node-x": S, "node-y": S},
    ),
    (
        "NodeAffinityPolicy honored with nodeSelector",
        spread(pod(foo="").node_selector(foo=""), 1, "node", DNS, FOO),
        [
            node("node-a", node="node-a", foo=""),
            node("node-b", node="node-b", foo=""),
            node("node-x", node="node-x", foo=""),
            node("node-y", node="node-y"),
        ],
        [on("node-a", "p-b1", foo=""), on("node-b", "p-b2", foo=""), on("node-y", "p-y1", foo="")],
        {"node-a": U, "node-b": U, "node-x": S, "node-y": S},
    ),
    (
        "NodeAffinityPolicy ignored with nodeSelector",
        spread(pod(foo="").node_selector(foo=""), 1, "node", DNS, FOO, affinity="Ignore"),
        [
            node("node-a", node="node-a", foo=""),
            node("node-b", node="node-b", foo=""),
            node("node-x", node="node-x", foo=""),
            node("node-y", node="node-y"),
        ],
        [on("node-a", "p-b1", foo=""), on("node-b", "p-b2", foo=""), on("node-y", "p-y1", foo="")],
        {"node-a": U, "node-b": U, "node-x": S, "node-y": U},
    ),
    (
        "NodeAffinityPolicy honored with nodeAffinity",
        spread(pod(foo="").node_affinity_in("foo", [""]), 1, "node", DNS, FOO),
        [
            node("node-a", node="node-a", foo=""),
            node("node-b", node="node-b", foo=""),
            node("node-x", node="node-x", foo=""),
            node("node-y", node="node-y"),
        ],
        [on("node-a", "p-b1", foo=""), on("node-b", "p-b2", foo=""), on("node-y", "p-y1", foo="")],
        {"node-a": U, "node-b": U, "node-x": S, "node-y": S},
    ),
    (
        "NodeAffinityPolicy ignored with nodeAffinity",
        spread(pod(foo="").node_affinity_in("foo", [""]), 1, "node", DNS, FOO, affinity="Ignore"),
        [
            node("node-a", node="node-a", foo=""),
            node("node-b", node="node-b", foo=""),
            node("node-x", node="node-x", foo=""),
            node("node-y", node="node-y"),
        ],
        [on("node-a", "p-b1", foo=""), on("node-b", "p-b2", foo=""), on("node-y", "p-y1", foo="")],
        {"node-a": U, "node-b": U, "node-x": S, "node-y": U},
    ),
    (
        "NodeTaintsPolicy honored",
        spread(pod(foo=""), 1, "node", DNS, FOO, taints="Honor"),
        [
            node("node-a", node="node-a", foo=""),
            node("node-b", node="node-b", foo=""),
            node("node-x", node="node-x", foo=""),
            tainted(node("node-y", node="node-y")),
        ],
        [on("node-a", "p-b1", foo=""), on("node-b", "p-b2", foo=""), on("node-y", "p-y1", foo="")],
        {"node-a": U, "node-b": U, "node-x": S, "node-y": S},
    ),
    (
        "NodeTaintsPolicy ignored",
        spread(pod(foo=""), 1, "node", DNS, FOO),
        [
            node("node-a", node="node-a", foo=""),
            node("node-b", node="node-b", foo=""),
            node("node-x", node="node-x", foo=""),
            tainted(node("node-y", node="node-y")),
        ],
        [on("node-a", "p-b1", foo=""), on("node-b", "p-b2", foo=""), on("node-y", "p-y1", foo="")],
        {"node-a": U, "node-b": U, "node-x": S, "node-y": U},
    ),
]


def _zone_and_node(b: PodBuilder, zone_sel: dict = FOO, node_sel: dict = FOO) -> PodBuilder:
    return spread(spread(b, 1, "zone", DNS, zone_sel), 1, "node", DNS, node_sel)


MULTIPLE_CONSTRAINTS = [
    (
        "two constraints on zone and node, spreads = [3/3, 2/1/0/3]",
        _zone_and_node(pod(foo="")),
        four_zone_nodes(),
        foo_pods("a:2 b:1 y:3"),
        {"node-a": U, "node-b": U, "node-x": S, "node-y": U},
    ),
    (
        "two constraints on zone and node, spreads = [3/4, 2/1/0/4]",
        _zone_and_node(pod(foo="")),
        four_zone_nodes(),
        foo_pods("a:2 b:1 y:4"),
        {"node-a": U, "node-b": U, "node-x": U, "node-y": U},
    ),
    (
        "constraints hold different labelSelectors, spreads = [1/0, 1/0/0/1]",
        _zone_and_node(pod(foo="", bar=""), FOO, BAR),
        four_zone_nodes(),
        [on("node-a", "p-a1", foo=""), on("node-y", "p-y1", bar="")],
        {"node-a": U, "node-b": U, "node-x": S, "node-y": U},
    ),
    (
        "constraints hold different labelSelectors, spreads = [1/0, 0/0/1/1]",
        _zone_and_node(pod(foo="", bar=""), FOO, BAR),
        four_zone_nodes(),
        [on("node-a", "p-a1", foo=""), on("node-x", "p-x1", bar=""), on("node-y", "p-y1", bar="")],
        {"node-a": U, "node-b": U, "node-x": U, "node-y": U},
    ),
    (
        "constraints hold different labelSelectors, spreads = [2/3, 1/0/0/1]",
        _zone_and_node(pod(foo="", bar=""), FOO, BAR),
        four_zone_nodes(),
        [
            on("node-a", "p-a1", foo=""),
            on("node-a", "p-a2", foo="", bar=""),
            on("node-y", "p-y1", foo=""),
            on("node-y", "p-y2", foo="", bar=""),
            on("node-y", "p-y3", foo=""),
        ],
        {"node-a": U, "node-b": S, "node-x": U, "node-y": U},
    ),
    (
        "constraints hold different labelSelectors but pod doesn't match itself on 'zone'",
        _zone_and_node(pod(bar=""), FOO, BAR),
        four_zone_nodes(),
        [on("node-a", "p-a1", foo=""), on("node-x", "p-x1", bar=""), on("node-y", "p-y1", bar="")],
        {"node-a": S, "node-b": S, "node-x": U, "node-y": U},
    ),
    (
        "two constraints on zone and node, absence of label 'node' on node-x, spreads = [1/1, 1/0/0/1]",
        _zone_and_node(pod(foo="")),
        [zn("node-a", "zone1"), zn("node-b", "zone1"), node("node-x", zone="zone2"), zn("node-y", "zone2")],
        [on("node-a", "p-a1", foo=""), on("node-y", "p-y3", foo="")],
        {"node-a": U, "node-b": S, "node-x": UU, "node-y": U},
    ),
    (
        "two node inclusion constraints, zone: honor/ignore, node: ignore/ignore",
        spread(spread(pod(foo="").node_selector(foo=""), 1, "zone", DNS, FOO), 1, "node", DNS, FOO, affinity="Ignore"),
        [
            zn("node-a", "zone1", foo=""),
            zn("node-b", "zone1", foo=""),
            zn("node-x", "zone2", foo=""),
            zn("node-y", "zone2"),
        ],
        foo_pods("a:1 b:1 y:1"),
        {"node-a": U, "node-b": U, "node-x": S, "node-y": U},
    ),
    (
        "two node inclusion constraints, zone: honor/honor, node: honor/ignore",
        spread(spread(pod(foo=""), 1, "zone", DNS, FOO, taints="Honor"), 1, "node", DNS, FOO),
        [
            zn("node-a", "zone1", foo=""),
            zn("node-b", "zone1", foo=""),
            zn("node-x", "zone2", foo=""),
            tainted(zn("node-y", "zone2")),
        ],
        foo_pods("a:1 b:1 y:1"),
        {"node-a": U, "node-b": U, "node-x": S, "node-y": U},
    ),
    (
        "two node inclusion constraints, zone: honor/ignore, node: honor/ignore",
        _zone_and_node(pod(foo="").node_selector(foo="")),
        [
            zn("node-a", "zone1", foo=""),
            zn("node-b", "zone1"),
            zn("node-x", "zone2", foo=""),
            tainted(zn("node-y", "zone2", foo="")),
        ],
        foo_pods("a:1 b:1 y:1"),
        {"node-a": U, "node-b": S, "node-x": S, "node-y": U},
    ),
    (
        "two node inclusion constraints, zone: honor/honor, node: ignore/ignore",
        spread(
            spread(pod(foo="").node_selector(foo=""), 1, "zone", DNS, FOO, taints="Honor"),
            1,
            "node",
            DNS,
            FOO,
            affinity="Ignore",
        ),
        [
            zn("node-a", "zone1", foo=""),
            zn("node-b", "zone1"),
            zn("node-x", "zone2", foo=""),
            tainted(zn("node-y", "zone2", foo="")),
        ],
        foo_pods("a:1 b:1 y:1"),
        {"node-a": U, "node-b": U, "node-x": S, "node-y": U},
    ),
]


def _codes(statuses: dict[str, Any]) -> dict[str, Code]:
    return {n: (Code.SUCCESS if s is None else s.code) for n, s in statuses.items()}


@pytest.mark.parametrize(
    "pod_, nodes, existing, want", [c[1:] for c in SINGLE_CONSTRAINT], ids=[c[0] for c in SINGLE_CONSTRAINT]
)
def test_single_constraint(pod_, nodes, existing, want):
    assert _codes(filter_nodes(PodTopologySpread, pod_, nodes, args=LIST, pods=existing)) == want


@pytest.mark.parametrize(
    "pod_, nodes, existing, want", [c[1:] for c in MULTIPLE_CONSTRAINTS], ids=[c[0] for c in MULTIPLE_CONSTRAINTS]
)
def test_multiple_constraints(pod_, nodes, existing, want):
    assert _codes(filter_nodes(PodTopologySpread, pod_, nodes, args=LIST, pods=existing)) == want


def test_filter_reasons_are_upstreams():
    nodes = [zn("node-a", "zone1"), node("node-b", zon="zone1", node="node-b"), zn("node-x", "zone2")]
    got = filter_nodes(
        PodTopologySpread, spread(pod(foo=""), 1, "zone", DNS, FOO), nodes, args=LIST, pods=foo_pods("x:1")
    )
    assert got["node-a"] is None
    assert got["node-b"].reasons == [ERR_REASON_NODE_LABEL_NOT_MATCH]
    assert got["node-b"].reasons == ["node(s) didn't match pod topology spread constraints (missing required label)"]
    assert got["node-x"].code is Code.UNSCHEDULABLE
    assert got["node-x"].reasons == [ERR_REASON_CONSTRAINTS_NOT_MATCH]


@pytest.mark.parametrize(
    "pod_",
    [pod(foo=""), spread(pod(foo=""), 1, "zone", SA, FOO)],
    ids=["no constraints", "only ScheduleAnyway constraints"],
)
def test_pre_filter_skips_without_hard_constraints(pod_):
    fw, state, *_ = asyncio.run(_pre_filter(pod_, [zn("node-a", "zone1")], [], SYSTEM))
    assert PodTopologySpread.name in state.skip_filter_plugins
    assert state.get(PRE_FILTER_KEY) is None


def test_filter_without_pre_filter_is_an_error():
    plugin = PodTopologySpread(PodTopologySpreadArgs(), None)
    status = plugin.filter(CycleState(), as_pod_info(pod()), as_node_infos([zn("node-a", "zone1")])[0])
    assert status.code is Code.ERROR
    assert PRE_FILTER_KEY in status.message()


# --- PreFilter state -------------------------------------------------------------------------


async def _pre_filter(pod_, nodes, existing, args=LIST, objects=()):
    infos = as_node_infos(nodes, existing)
    fw = framework_for(PodTopologySpread, args, infos, objects=objects)
    state = CycleState()
    pi = as_pod_info(pod_)
    _, status, _ = await fw.run_pre_filter(state, pi)
    assert status is None
    return fw, state, pi, {ni.name: ni for ni in infos}


def _summary(state: CycleState) -> list[tuple[str, dict[str, int], int]]:
    """Per constraint: topology key, counts per value, and the global minimum."""
    s = state.get(PRE_FILTER_KEY)
    return [(c.topology_key, dict(s.counts[i]), s.paths[i].n0) for i, c in enumerate(s.constraints)]


PRE_FILTER_STATE = [
    (
        "clean cluster with one spreadConstraint",
        spread(pod(foo=""), 5, "zone", DNS, {"matchLabels": {"foo": "bar"}}),
        four_zone_nodes(),
        [],
        [("zone", {"zone1": 0, "zone2": 0}, 0)],
    ),
    (
        "normal case with one spreadConstraint",
        spread(pod(foo=""), 1, "zone", DNS, FOO),
        four_zone_nodes(),
        foo_pods("a:2 b:1 y:2"),
        [("zone", {"zone1": 3, "zone2": 2}, 2)],
    ),
    (
        "normal case with null label selector",
        spread(pod(foo=""), 1, "zone", DNS, None),
        four_zone_nodes(),
        foo_pods("a:2 b:1 y:2"),
        [("zone", {"zone1": 0, "zone2": 0}, 0)],
    ),
    (
        "normal case with one spreadConstraint, on a 3-zone cluster",
        spread(pod(foo=""), 1, "zone", DNS, FOO),
        four_zone_nodes() + [zn("node-o", "zone3"), zn("node-p", "zone3")],
        foo_pods("a:2 b:1 y:2"),
        [("zone", {"zone1": 3, "zone2": 2, "zone3": 0}, 0)],
    ),
    (
        "namespace mismatch doesn't count",
        spread(pod(foo=""), 1, "zone", DNS, FOO),
        four_zone_nodes(),
        [
            on("node-a", "p-a1", foo=""),
            on("node-a", "p-a2", "ns1", foo=""),
            on("node-b", "p-b1", foo=""),
            on("node-y", "p-y1", "ns2", foo=""),
            on("node-y", "p-y2", foo=""),
        ],
        [("zone", {"zone1": 2, "zone2": 1}, 1)],
    ),
    (
        "normal case with two spreadConstraints",
        _zone_and_node(pod(foo="")),
        four_zone_nodes(),
        foo_pods("a:2 b:1 y:4"),
        [("zone", {"zone1": 3, "zone2": 4}, 3), ("node", {"node-a": 2, "node-b": 1, "node-x": 0, "node-y": 4}, 0)],
    ),
    (
        "soft spreadConstraints should be bypassed",
        spread(
            spread(spread(spread(pod(foo=""), 1, "zone", SA, FOO), 1, "zone", DNS, FOO), 1, "node", SA, FOO),
            1,
            "node",
            DNS,
            FOO,
        ),
        [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-y", "zone2")],
        foo_pods("a:2 b:1 y:4"),
        [("zone", {"zone1": 3, "zone2": 4}, 3), ("node", {"node-a": 2, "node-b": 1, "node-y": 4}, 1)],
    ),
    (
        "different labelSelectors - simple version",
        _zone_and_node(pod(foo="", bar=""), FOO, BAR),
        [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-y", "zone2")],
        [on("node-a", "p-a", foo=""), on("node-b", "p-b", bar="")],
        [("zone", {"zone1": 1, "zone2": 0}, 0), ("node", {"node-a": 0, "node-b": 1, "node-y": 0}, 0)],
    ),
    (
        "different labelSelectors - complex pods",
        _zone_and_node(pod(foo="", bar=""), FOO, BAR),
        [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-y", "zone2")],
        [
            on("node-a", "p-a1", foo=""),
            on("node-a", "p-a2", foo="", bar=""),
            on("node-b", "p-b1", foo=""),
            on("node-y", "p-y1", foo=""),
            on("node-y", "p-y2", foo="", bar=""),
            on("node-y", "p-y3", foo=""),
            on("node-y", "p-y4", foo="", bar=""),
        ],
        [("zone", {"zone1": 3, "zone2": 4}, 3), ("node", {"node-a": 1, "node-b": 0, "node-y": 2}, 0)],
    ),
    (
        "two spreadConstraints, and with podAffinity",
        _zone_and_node(pod(foo="").node_affinity_in("node", ["node-x"], "NotIn")),
        four_zone_nodes(),
        foo_pods("a:2 b:1 y:4"),
        [("zone", {"zone1": 3, "zone2": 4}, 3), ("node", {"node-a": 2, "node-b": 1, "node-y": 4}, 1)],
    ),
    (
        "NodeAffinityPolicy honored with labelSelectors",
        spread(pod(foo="").node_selector(foo=""), 1, "node", DNS, BAR),
        [
            node("node-a", node="node-a", foo=""),
            node("node-b", node="node-b", foo=""),
            node("node-c", node="node-c", bar=""),
        ],
        [on("node-a", "p-a", bar=""), on("node-b", "p-b", bar=""), on("node-b", "p-c", bar=""), on("node-c", "p-d")],
        [("node", {"node-a": 1, "node-b": 2}, 1)],
    ),
    (
        "NodeAffinityPolicy ignored with labelSelectors",
        spread(pod(foo="").node_selector(foo=""), 1, "node", DNS, BAR, affinity="Ignore"),
        [
            node("node-a", node="node-a", foo=""),
            node("node-b", node="node-b", foo=""),
            node("node-c", node="node-c", bar=""),
        ],
        [on("node-a", "p-a", bar=""), on("node-b", "p-b", bar=""), on("node-b", "p-c", bar=""), on("node-c", "p-d")],
        [("node", {"node-a": 1, "node-b": 2, "node-c": 0}, 0)],
    ),
    (
        "NodeAffinityPolicy honored with nodeAffinity",
        spread(pod(foo="").node_affinity_in("foo", [""]), 1, "node", DNS, BAR),
        [
            node("node-a", node="node-a", foo=""),
            node("node-b", node="node-b", foo=""),
            node("node-c", node="node-c", bar=""),
        ],
        [on("node-a", "p-a", bar=""), on("node-b", "p-c", bar=""), on("node-b", "p-d", bar=""), on("node-c", "p-e")],
        [("node", {"node-a": 1, "node-b": 2}, 1)],
    ),
    (
        "NodeAffinityPolicy ignored with nodeAffinity",
        spread(pod(foo="").node_affinity_in("foo", [""]), 1, "node", DNS, BAR, affinity="Ignore"),
        [
            node("node-a", node="node-a", foo=""),
            node("node-b", node="node-b", foo=""),
            node("node-c", node="node-c", bar=""),
        ],
        [on("node-a", "p-a", bar=""), on("node-b", "p-b", bar=""), on("node-b", "p-c", bar=""), on("node-c", "p-d")],
        [("node", {"node-a": 1, "node-b": 2, "node-c": 0}, 0)],
    ),
    (
        "NodeTaintsPolicy ignored",
        spread(pod(foo=""), 1, "node", DNS, BAR),
        [node("node-a", node="node-a"), node("node-b", node="node-b"), tainted(node("node-c", node="node-c", bar=""))],
        [on("node-a", "p-a", bar=""), on("node-b", "p-b", bar=""), on("node-b", "p-c", bar=""), on("node-c", "p-d")],
        [("node", {"node-a": 1, "node-b": 2, "node-c": 0}, 0)],
    ),
    (
        "NodeTaintsPolicy honored",
        spread(pod(foo=""), 1, "node", DNS, BAR, taints="Honor"),
        [node("node-a", node="node-a"), node("node-b", node="node-b"), tainted(node("node-c", node="node-c", bar=""))],
        [on("node-a", "p-a", bar=""), on("node-b", "p-b", bar=""), on("node-b", "p-c", bar=""), on("node-c", "p-d")],
        [("node", {"node-a": 1, "node-b": 2}, 1)],
    ),
    (
        "NodeTaintsPolicy honored with tolerated taints",
        spread(tolerate_unschedulable(pod(foo="")), 1, "node", DNS, BAR, taints="Honor"),
        [node("node-a", node="node-a"), node("node-b", node="node-b"), tainted(node("node-c", node="node-c", bar=""))],
        [on("node-a", "p-a", bar=""), on("node-b", "p-b", bar=""), on("node-b", "p-c", bar=""), on("node-c", "p-d")],
        [("node", {"node-a": 1, "node-b": 2, "node-c": 0}, 0)],
    ),
    (
        "two node inclusion constraints, zone: honor/ignore, node: ignore/ignore",
        spread(spread(pod(foo="").node_selector(foo=""), 1, "zone", DNS, FOO), 1, "node", DNS, FOO, affinity="Ignore"),
        [zn("node-a", "zone1", foo=""), zn("node-b", "zone1"), zn("node-x", "zone2", foo="")],
        foo_pods("b:2 x:1"),
        [("zone", {"zone1": 0, "zone2": 1}, 0), ("node", {"node-a": 0, "node-b": 2, "node-x": 1}, 0)],
    ),
    (
        "two node inclusion constraints, zone: honor/honor, node: honor/ignore",
        spread(spread(pod(foo=""), 1, "zone", DNS, FOO, taints="Honor"), 1, "node", DNS, FOO),
        [zn("node-a", "zone1", foo=""), tainted(zn("node-b", "zone1")), zn("node-x", "zone2", foo="")],
        foo_pods("b:2 x:1"),
        [("zone", {"zone1": 0, "zone2": 1}, 0), ("node", {"node-a": 0, "node-b": 2, "node-x": 1}, 0)],
    ),
    (
        "two node inclusion constraints, zone: honor/ignore, node: honor/ignore",
        _zone_and_node(pod(foo="").node_selector(foo="")),
        [
            zn("node-a", "zone1"),
            tainted(zn("node-b", "zone1", foo="")),
            zn("node-x", "zone2", foo=""),
            zn("node-y", "zone2"),
        ],
        foo_pods("a:2 x:1 y:1"),
        [("zone", {"zone1": 0, "zone2": 1}, 0), ("node", {"node-b": 0, "node-x": 1}, 0)],
    ),
    (
        "two node inclusion constraints, zone: ignore/ignore, node: honor/honor",
        spread(
            spread(pod(foo="").node_selector(foo=""), 1, "zone", DNS, FOO, affinity="Ignore"),
            1,
            "node",
            DNS,
            FOO,
            taints="Honor",
        ),
        [
            zn("node-a", "zone1"),
            tainted(zn("node-b", "zone1", foo="")),
            zn("node-x", "zone2", foo=""),
            zn("node-y", "zone2", foo=""),
        ],
        foo_pods("a:2 x:2 y:1"),
        [("zone", {"zone1": 2, "zone2": 3}, 2), ("node", {"node-x": 2, "node-y": 1}, 1)],
    ),
    (
        "matchLabelKeys ANDed with a non-empty labelSelector",
        spread(pod(foo="", bar="a"), 1, "zone", DNS, FOO, match_keys=["bar"]),
        four_zone_nodes(),
        [
            on("node-a", "p-a1", foo=""),
            on("node-a", "p-a2", foo="", bar="a"),
            on("node-b", "p-b1", foo=""),
            on("node-y", "p-y1", foo="", bar="a"),
            on("node-y", "p-y2", bar=""),
        ],
        [("zone", {"zone1": 1, "zone2": 1}, 1)],
    ),
    (
        "matchLabelKeys ANDed with an empty labelSelector",
        spread(pod(foo="a"), 1, "zone", DNS, {}, match_keys=["foo"]),
        four_zone_nodes(),
        [on(f"node-{n}", f"p-{n}{i}", foo="a") for n, i in (("a", 1), ("a", 2), ("b", 1), ("y", 1), ("y", 2))],
        [("zone", {"zone1": 3, "zone2": 2}, 2)],
    ),
    (
        "key in matchLabelKeys is ignored when the labelSelector is nil",
        spread(pod(foo=""), 1, "zone", DNS, None, match_keys=["bar"]),
        four_zone_nodes(),
        [on(f"node-{n}", f"p-{n}{i}", foo="a") for n, i in (("a", 1), ("a", 2), ("b", 1), ("y", 1), ("y", 2))],
        [("zone", {"zone1": 0, "zone2": 0}, 0)],
    ),
    (
        "key in matchLabelKeys is ignored when the pod does not carry it",
        spread(pod(foo=""), 1, "zone", DNS, FOO, match_keys=["bar"]),
        four_zone_nodes(),
        [on(f"node-{n}", f"p-{n}{i}", foo="a") for n, i in (("a", 1), ("a", 2), ("b", 1), ("y", 1), ("y", 2))],
        [("zone", {"zone1": 3, "zone2": 2}, 2)],
    ),
]


@pytest.mark.parametrize(
    "pod_, nodes, existing, want", [c[1:] for c in PRE_FILTER_STATE], ids=[c[0] for c in PRE_FILTER_STATE]
)
def test_pre_filter_state(pod_, nodes, existing, want):
    _, state, *_ = asyncio.run(_pre_filter(pod_, nodes, existing))
    assert _summary(state) == want


def test_pre_filter_state_critical_paths_and_policies():
    _, state, *_ = asyncio.run(_pre_filter(_zone_and_node(pod(foo="")), four_zone_nodes(), foo_pods("a:2 b:1 y:4")))
    s = state.get(PRE_FILTER_KEY)
    assert s.paths[0].pairs() == (("zone1", 3), ("zone2", 4))
    assert s.paths[1].pairs() == (("node-x", 0), ("node-b", 1))
    assert [(c.max_skew, c.min_domains, c.honor_affinity, c.honor_taints) for c in s.constraints] == [
        (1, 1, True, False),
        (1, 1, True, False),
    ]
    assert s.self_match == [1, 1]


# --- PreFilter extensions ----------------------------------------------------------------------

ADD_POD = [
    (
        "node a and b both impact current min match",
        spread(pod(foo=""), 1, "node", DNS, FOO),
        on("node-a", "p-a1", foo=""),
        [],
        [zn("node-a", "zone1"), zn("node-b", "zone1")],
        [("node", {"node-a": 1, "node-b": 0}, 0)],
    ),
    (
        "only node a impacts current min match",
        spread(pod(foo=""), 1, "node", DNS, FOO),
        on("node-a", "p-a1", foo=""),
        foo_pods("b:1"),
        [zn("node-a", "zone1"), zn("node-b", "zone1")],
        [("node", {"node-a": 1, "node-b": 1}, 1)],
    ),
    (
        "add a pod in a different namespace doesn't change the counts",
        spread(pod(foo=""), 1, "node", DNS, FOO),
        on("node-a", "p-a1", "ns1", foo=""),
        foo_pods("b:1"),
        [zn("node-a", "zone1"), zn("node-b", "zone1")],
        [("node", {"node-a": 0, "node-b": 1}, 0)],
    ),
    (
        "add pod on non-critical node",
        spread(pod(foo=""), 1, "node", DNS, FOO),
        on("node-b", "p-b2", foo=""),
        foo_pods("b:1"),
        [zn("node-a", "zone1"), zn("node-b", "zone1")],
        [("node", {"node-a": 0, "node-b": 2}, 0)],
    ),
    (
        "node a and x both impact the minimum on zone and node",
        _zone_and_node(pod(foo="")),
        on("node-a", "p-a1", foo=""),
        [],
        [zn("node-a", "zone1"), zn("node-x", "zone2")],
        [("zone", {"zone1": 1, "zone2": 0}, 0), ("node", {"node-a": 1, "node-x": 0}, 0)],
    ),
    (
        "only node a impacts the minimum on zone and node",
        _zone_and_node(pod(foo="")),
        on("node-a", "p-a1", foo=""),
        foo_pods("x:1"),
        [zn("node-a", "zone1"), zn("node-x", "zone2")],
        [("zone", {"zone1": 1, "zone2": 1}, 1), ("node", {"node-a": 1, "node-x": 1}, 1)],
    ),
    (
        "node a impacts the minimum on node, node x on zone",
        _zone_and_node(pod(foo="")),
        on("node-a", "p-a1", foo=""),
        foo_pods("b:2 x:1"),
        [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-x", "zone2")],
        [("zone", {"zone1": 3, "zone2": 1}, 1), ("node", {"node-a": 1, "node-b": 2, "node-x": 1}, 1)],
    ),
    (
        "constraints hold different labelSelectors, node a impacts the minimum on zone",
        _zone_and_node(pod(foo="", bar=""), FOO, BAR),
        on("node-a", "p-a1", foo=""),
        [on("node-b", "p-b1", foo="", bar=""), on("node-x", "p-x1", foo="", bar=""), on("node-x", "p-x2", bar="")],
        [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-x", "zone2")],
        [("zone", {"zone1": 2, "zone2": 1}, 1), ("node", {"node-a": 0, "node-b": 1, "node-x": 2}, 0)],
    ),
    (
        "constraints hold different labelSelectors, node a impacts the minimum on both",
        _zone_and_node(pod(foo="", bar=""), FOO, BAR),
        on("node-a", "p-a1", foo="", bar=""),
        [on("node-b", "p-b1", bar=""), on("node-x", "p-x1", foo="", bar=""), on("node-x", "p-x2", bar="")],
        [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-x", "zone2")],
        [("zone", {"zone1": 1, "zone2": 1}, 1), ("node", {"node-a": 1, "node-b": 1, "node-x": 2}, 1)],
    ),
    (
        "add a pod when scheduling a pod whose node affinity excludes the node",
        spread(pod(foo="").node_affinity_in("foo", ["bar"], "NotIn"), 1, "zone", DNS, FOO),
        on("node-a", "p-a1", foo="", zone="zone1"),
        [on("node-a", "p-a2", foo="", zone="zone1"), on("node-b", "p-b1", foo="", zone="zone2")],
        [zn("node-a", "zone1", foo="bar"), zn("node-b", "zone2", foo="")],
        [("zone", {"zone2": 1}, 1)],
    ),
    (
        "add a pod when scheduling a pod whose node affinity matches the node",
        spread(pod(foo=""), 1, "zone", DNS, FOO),
        on("node-b", "p-b1", foo="", zone="zone2"),
        [on("node-a", "p-a1", foo="", zone="zone1"), on("node-b", "p-b2", foo="", zone="zone2")],
        [zn("node-a", "zone1", foo="bar"), zn("node-b", "zone2", foo="")],
        [("zone", {"zone1": 1, "zone2": 2}, 1)],
    ),
    (
        "add a pod the label selector does not match",
        spread(pod(foo=""), 1, "zone", DNS, FOO),
        on("node-b", "p-b1", zone="zone2"),
        [on("node-a", "p-a1", foo="", zone="zone1"), on("node-b", "p-b2", foo="", zone="zone2")],
        [zn("node-a", "zone1", foo="bar"), zn("node-b", "zone2", foo="")],
        [("zone", {"zone1": 1, "zone2": 1}, 1)],
    ),
    (
        "add a pod when scheduling a pod that tolerates the taint",
        spread(tolerate_unschedulable(pod(foo="")), 1, "zone", DNS, FOO),
        on("node-b", "p-b1", foo="", zone="zone2"),
        [on("node-a", "p-a1", foo="", zone="zone1"), on("node-b", "p-b2", foo="", zone="zone2")],
        [tainted(zn("node-a", "zone1")), zn("node-b", "zone2")],
        [("zone", {"zone1": 1, "zone2": 2}, 1)],
    ),
]


@pytest.mark.parametrize(
    "preemptor, added, existing, nodes, want", [c[1:] for c in ADD_POD], ids=[c[0] for c in ADD_POD]
)
def test_add_pod(preemptor, added, existing, nodes, want):
    async def run():
        fw, state, pi, infos = await _pre_filter(preemptor, nodes, existing)
        to_add = as_pod_info(added)
        assert await fw.run_pre_filter_add_pod(state, pi, to_add, infos[to_add.node_name]) is None
        return state

    assert _summary(asyncio.run(run())) == want


REMOVE_POD = [
    (
        "one constraint on zone, minimum unchanged",
        spread(pod(foo=""), 1, "zone", DNS, FOO),
        [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-x", "zone2")],
        foo_pods("a:1 b:1 x:1"),
        0,
        [("zone", {"zone1": 1, "zone2": 1}, 1)],
    ),
    (
        "one constraint on zone, minimum changed",
        spread(pod(foo=""), 1, "zone", DNS, FOO),
        four_zone_nodes(),
        foo_pods("a:1 b:1 x:1 y:1"),
        0,
        [("zone", {"zone1": 1, "zone2": 2}, 1)],
    ),
    (
        "delete an irrelevant pod won't help",
        spread(pod(foo=""), 1, "zone", DNS, FOO),
        four_zone_nodes(),
        [on("node-a", "p-a0", bar="")] + foo_pods("a:1 b:1 x:1 y:1"),
        0,
        [("zone", {"zone1": 2, "zone2": 2}, 2)],
    ),
    (
        "delete a non-existing pod won't help",
        spread(pod(foo=""), 1, "zone", DNS, FOO),
        four_zone_nodes(),
        foo_pods("a:1 b:1 x:1 y:1"),
        on("node-a", "p-a0", bar=""),
        [("zone", {"zone1": 2, "zone2": 2}, 2)],
    ),
    (
        "two spreadConstraints",
        _zone_and_node(pod(foo="")),
        [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-x", "zone2")],
        foo_pods("a:2 b:1 x:2"),
        3,
        [("zone", {"zone1": 3, "zone2": 1}, 1), ("node", {"node-a": 2, "node-b": 1, "node-x": 1}, 1)],
    ),
    (
        "remove a pod when scheduling a pod whose node affinity excludes the node",
        spread(pod(foo="").node_affinity_in("foo", ["bar"], "NotIn"), 1, "zone", DNS, FOO),
        [zn("node-a", "zone1", foo="bar"), zn("node-b", "zone2", foo="")],
        [on("node-a", "p-a2", foo="", zone="zone1"), on("node-b", "p-b1", foo="", zone="zone2")],
        on("node-a", "p-a1", foo="", zone="zone1"),
        [("zone", {"zone2": 1}, 1)],
    ),
    (
        "remove a pod when scheduling a pod whose node affinity matches the node",
        spread(pod(foo=""), 1, "zone", DNS, FOO),
        [zn("node-a", "zone1", foo="bar"), zn("node-b", "zone2", foo="")],
        [on("node-a", "p-a1", foo="", zone="zone1"), on("node-b", "p-b2", foo="", zone="zone2")],
        on("node-b", "p-b1", foo="", zone="zone2"),
        [("zone", {"zone1": 1, "zone2": 0}, 0)],
    ),
]


@pytest.mark.parametrize(
    "preemptor, nodes, existing, deleted, want", [c[1:] for c in REMOVE_POD], ids=[c[0] for c in REMOVE_POD]
)
def test_remove_pod(preemptor, nodes, existing, deleted, want):
    async def run():
        fw, state, pi, infos = await _pre_filter(preemptor, nodes, existing)
        victim = as_pod_info(existing[deleted] if isinstance(deleted, int) else deleted)
        assert await fw.run_pre_filter_remove_pod(state, pi, victim, infos[victim.node_name]) is None
        return state

    assert _summary(asyncio.run(run())) == want


def test_clone_is_independent_of_the_original():
    async def run():
        fw, state, pi, infos = await _pre_filter(
            spread(pod(foo=""), 1, "node", DNS, FOO), [zn("node-a", "z"), zn("node-b", "z")], foo_pods("b:1")
        )
        copy = state.clone()
        await fw.run_pre_filter_add_pod(copy, pi, as_pod_info(on("node-a", "p-a1", foo="")), infos["node-a"])
        return state, copy

    state, copy = asyncio.run(run())
    assert _summary(state) == [("node", {"node-a": 0, "node-b": 1}, 0)]
    assert _summary(copy) == [("node", {"node-a": 1, "node-b": 1}, 1)]


def test_removing_then_filtering_lets_a_node_fit():
    """Preemption's view: once a matching pod is removed from node-y, node-y fits."""

    async def run():
        pod_ = spread(pod(foo=""), 1, "node", DNS, FOO)
        fw, state, pi, infos = await _pre_filter(pod_, [zn("node-x", "z"), zn("node-y", "z")], foo_pods("y:1"))
        before = fw.run_filter(state, pi, infos["node-y"])
        await fw.run_pre_filter_remove_pod(state, pi, infos["node-y"].pods[0], infos["node-y"])
        return before, fw.run_filter(state, pi, infos["node-y"])

    before, after = asyncio.run(run())
    assert before is not None and before.code is Code.UNSCHEDULABLE
    assert after is None


# --- PreScore / Score ------------------------------------------------------------------------


async def _score(pod_, nodes, failed, existing, args=SYSTEM, objects=()):
    """PreScore with ``nodes`` as the feasible nodes and ``nodes + failed`` in the snapshot."""
    infos = as_node_infos(list(nodes) + list(failed), existing)
    fw = framework_for(PodTopologySpread, args, infos, objects=objects)
    feasible = infos[: len(nodes)]
    state = CycleState()
    pi = as_pod_info(pod_)
    status = await fw.run_pre_score(state, pi, feasible)
    assert status is None
    final: dict[str, dict[str, int]] = {}
    _, status = await fw.run_score(state, pi, feasible, None, final)
    assert status is None
    return state, {ni.name: final.get(ni.name, {}).get(PodTopologySpread.name) for ni in feasible}


def _host_spread(max_skew: int = 1, selector: dict | None = FOO) -> PodBuilder:
    return spread(pod(foo=""), max_skew, HOST, SA, selector)


def _four_hosts() -> list[NodeBuilder]:
    return [h("node-a"), h("node-b"), h("node-c"), h("node-d")]


SERVICE = {
    "apiVersion": "v1",
    "kind": "Service",
    "metadata": {"name": "svc", "namespace": "default"},
    "spec": {"selector": {"foo": ""}},
}


def _policy_nodes(taint_c: bool = False) -> list[NodeBuilder]:
    c = node("node-c", node="node-c")
    return [
        node("node-a", node="node-a", foo=""),
        node("node-b", node="node-b", foo=""),
        tainted(c) if taint_c else c,
    ]


def _plain_policy_nodes() -> list[NodeBuilder]:
    return [node("node-a", node="node-a"), node("node-b", node="node-b"), tainted(node("node-c", node="node-c"))]


SCORE = [
    (
        "one constraint on node, no existing pods",
        _host_spread(),
        [h("node-a"), h("node-b")],
        [],
        [],
        {"node-a": 100, "node-b": 100},
    ),
    (
        "one constraint on node, only one node is candidate",
        _host_spread(),
        [h("node-a")],
        [h("node-b")],
        foo_pods("a:2 b:1"),
        {"node-a": 100},
    ),
    (
        "one constraint on node, all nodes have the same number of matching pods",
        _host_spread(),
        [h("node-a"), h("node-b")],
        [],
        foo_pods("a:1 b:1"),
        {"node-a": 100, "node-b": 100},
    ),
    (
        "one constraint on node, all 4 nodes are candidates",
        _host_spread(),
        _four_hosts(),
        [],
        foo_pods("a:2 b:1 d:3"),
        {"node-a": 20, "node-b": 60, "node-c": 100, "node-d": 0},
    ),
    (
        "one constraint on node, null selector",
        _host_spread(selector=None),
        _four_hosts(),
        [],
        foo_pods("a:2 b:1 d:3"),
        {"node-a": 100, "node-b": 100, "node-c": 100, "node-d": 100},
    ),
    (
        "one constraint on node, all 4 nodes are candidates, maxSkew=2",
        _host_spread(2),
        _four_hosts(),
        [],
        foo_pods("a:2 b:1 d:3"),
        {"node-a": 33, "node-b": 66, "node-c": 100, "node-d": 16},
    ),
    (
        "one constraint on node, all 4 nodes are candidates, maxSkew=3",
        _host_spread(3),
        _four_hosts(),
        [],
        foo_pods("a:4 b:3 c:2 d:1"),
        {"node-a": 44, "node-b": 66, "node-c": 77, "node-d": 100},
    ),
    (
        "one constraint on node, 3 out of 4 nodes are candidates",
        _host_spread(),
        [h("node-a"), h("node-b"), h("node-x")],
        [h("node-y")],
        foo_pods("a:4 b:2 x:1 y:3"),
        {"node-a": 33, "node-b": 83, "node-x": 100},
    ),
    (
        "one constraint on node, 3 out of 4 nodes are candidates, one node doesn't match topology key",
        _host_spread(),
        [h("node-a"), node("node-b", n="node-b"), h("node-x")],
        [h("node-y")],
        foo_pods("a:4 b:2 x:1 y:3"),
        {"node-a": 16, "node-b": 0, "node-x": 100},
    ),
    (
        "one constraint on zone, 3 out of 4 nodes are candidates",
        spread(pod(foo=""), 1, "zone", SA, FOO),
        [zh("node-a", "zone1"), zh("node-b", "zone1"), zh("node-x", "zone2")],
        [zh("node-y", "zone2")],
        foo_pods("a:4 b:2 x:1 y:3"),
        {"node-a": 75, "node-b": 75, "node-x": 100},
    ),
    (
        "two constraints on zone and node, 2 out of 4 nodes are candidates",
        spread(spread(pod(foo=""), 1, "zone", SA, FOO), 1, HOST, SA, FOO),
        [zh("node-a", "zone1"), zh("node-x", "zone2")],
        [zh("node-b", "zone1"), zh("node-y", "zone2")],
        foo_pods("a:2 b:1 x:2 y:4"),
        {"node-a": 100, "node-x": 63},
    ),
    (
        "two constraints on zone and node, with different labelSelectors",
        spread(spread(pod(foo="", bar=""), 1, "zone", SA, FOO), 1, HOST, SA, BAR),
        [zh("node-a", "zone1"), zh("node-b", "zone1"), zh("node-x", "zone2"), zh("node-y", "zone2")],
        [],
        [
            on("node-a", "p-a1", foo=""),
            on("node-b", "p-b1", foo="", bar=""),
            on("node-y", "p-y1", foo=""),
            on("node-y", "p-y2", bar=""),
        ],
        {"node-a": 60, "node-b": 20, "node-x": 100, "node-y": 60},
    ),
    (
        "two constraints on zone and node, with different labelSelectors, some nodes have 0 pods",
        spread(spread(pod(foo="", bar=""), 1, "zone", SA, FOO), 1, HOST, SA, BAR),
        [zh("node-a", "zone1"), zh("node-b", "zone1"), zh("node-x", "zone2"), zh("node-y", "zone2")],
        [],
        [on("node-b", "p-b1", bar=""), on("node-x", "p-x1", foo=""), on("node-y", "p-y1", foo="", bar="")],
        {"node-a": 100, "node-b": 60, "node-x": 40, "node-y": 0},
    ),
    (
        "two constraints on zone and node, with different labelSelectors, 3 out of 4 nodes are candidates",
        spread(spread(pod(foo="", bar=""), 1, "zone", SA, FOO), 1, HOST, SA, BAR),
        [zh("node-a", "zone1"), zh("node-b", "zone1"), zh("node-x", "zone2")],
        [zh("node-y", "zone2")],
        [
            on("node-a", "p-a1", foo=""),
            on("node-b", "p-b1", foo="", bar=""),
            on("node-y", "p-y1", foo=""),
            on("node-y", "p-y2", bar=""),
        ],
        {"node-a": 50, "node-b": 25, "node-x": 100},
    ),
    (
        "existing pods in a different namespace do not count",
        _host_spread(),
        [h("node-a"), h("node-b")],
        [],
        [
            on("node-a", "p-a1", "ns1", foo=""),
            on("node-a", "p-a2", foo=""),
            on("node-b", "p-b1", foo=""),
            on("node-b", "p-b2", foo=""),
        ],
        {"node-a": 100, "node-b": 33},
    ),
    (
        "terminating pods are excluded",
        _host_spread(),
        [h("node-a"), h("node-b")],
        [],
        [terminating(on("node-a", "p-a", foo="")), on("node-b", "p-b", foo="")],
        {"node-a": 100, "node-b": 0},
    ),
    (
        "minDomains has no effect when ScheduleAnyway",
        spread(pod(foo=""), 2, "node", SA, FOO, min_domains=10),
        [node("node-a", node="node-a"), node("node-b", node="node-b"), node("node-c", node="node-c")],
        [],
        foo_pods("a:2 b:2 c:1"),
        {"node-a": 75, "node-b": 75, "node-c": 100},
    ),
    (
        "NodeAffinityPolicy honored with nodeSelector",
        spread(pod(foo="").node_selector(foo=""), 1, "node", SA, FOO),
        _policy_nodes(),
        [],
        foo_pods("a:2 b:1 c:1"),
        {"node-a": 0, "node-b": 33, "node-c": 100},
    ),
    (
        "NodeAffinityPolicy ignored with nodeSelector",
        spread(pod(foo="").node_selector(foo=""), 1, "node", SA, FOO, affinity="Ignore"),
        _policy_nodes(),
        [],
        foo_pods("a:2 b:1 c:1"),
        {"node-a": 66, "node-b": 100, "node-c": 100},
    ),
    (
        "NodeAffinityPolicy honored with nodeAffinity",
        spread(pod(foo="").node_affinity_in("foo", [""]), 1, "node", SA, FOO),
        _policy_nodes(),
        [],
        foo_pods("a:2 b:1 c:1"),
        {"node-a": 0, "node-b": 33, "node-c": 100},
    ),
    (
        "NodeAffinityPolicy ignored with nodeAffinity",
        spread(pod(foo="").node_affinity_in("foo", [""]), 1, "node", SA, FOO, affinity="Ignore"),
        _policy_nodes(),
        [],
        foo_pods("a:2 b:1 c:1"),
        {"node-a": 66, "node-b": 100, "node-c": 100},
    ),
    (
        "NodeTaintsPolicy honored",
        spread(pod(foo=""), 1, "node", SA, FOO, taints="Honor"),
        _plain_policy_nodes(),
        [],
        foo_pods("a:2 b:1 c:1"),
        {"node-a": 0, "node-b": 33, "node-c": 100},
    ),
    (
        "NodeTaintsPolicy ignored",
        spread(pod(foo=""), 1, "node", SA, FOO),
        _plain_policy_nodes(),
        [],
        foo_pods("a:2 b:1 c:1"),
        {"node-a": 66, "node-b": 100, "node-c": 100},
    ),
    (
        "matchLabelKeys ANDed with an empty labelSelector",
        spread(spread(pod(foo="", bar=""), 1, "zone", SA, {}, match_keys=["foo"]), 1, HOST, SA, {}, match_keys=["bar"]),
        [zh("node-a", "zone1"), zh("node-b", "zone1"), zh("node-c", "zone2"), zh("node-d", "zone2")],
        [],
        [
            on("node-a", "p-a1", foo=""),
            on("node-b", "p-b1", foo="", bar=""),
            on("node-c", "p-y1", foo=""),
            on("node-c", "p-y2", bar=""),
        ],
        {"node-a": 60, "node-b": 20, "node-c": 60, "node-d": 100},
    ),
    (
        "matchLabelKeys ANDed with a non-empty labelSelector",
        spread(spread(pod(foo="", bar="", baz=""), 1, "zone", SA, FOO), 1, HOST, SA, BAR, match_keys=["baz"]),
        [zh("node-a", "zone1"), zh("node-b", "zone1"), zh("node-c", "zone2"), zh("node-d", "zone2")],
        [],
        [
            on("node-a", "p-a1", foo=""),
            on("node-b", "p-b1", foo="", bar="", baz=""),
            on("node-c", "p-c1", foo=""),
            on("node-c", "p-c2", bar=""),
            on("node-c", "p-d3", bar="", baz=""),
        ],
        {"node-a": 60, "node-b": 20, "node-c": 60, "node-d": 100},
    ),
]


@pytest.mark.parametrize("pod_, nodes, failed, existing, want", [c[1:] for c in SCORE], ids=[c[0] for c in SCORE])
def test_pod_topology_spread_score(pod_, nodes, failed, existing, want):
    _, got = asyncio.run(_score(pod_, nodes, failed, existing))
    assert got == want


def test_system_defaulting_uses_the_selecting_service():
    """No constraints of its own, a Service selects the pod: the system defaults spread it
    (nodes without a zone still get hostname spreading)."""
    _, got = asyncio.run(_score(pod(foo=""), _four_hosts(), [], foo_pods("a:4 b:3 c:2 d:1"), objects=[SERVICE]))
    assert got == {"node-a": 44, "node-b": 66, "node-c": 77, "node-d": 100}


def test_system_defaulting_without_a_workload_object_skips():
    async def run():
        infos = as_node_infos(_four_hosts(), foo_pods("a:4"))
        fw = framework_for(PodTopologySpread, SYSTEM, infos)
        state = CycleState()
        assert await fw.run_pre_score(state, as_pod_info(pod(foo="")), infos) is None
        return state

    state = asyncio.run(run())
    assert PodTopologySpread.name in state.skip_score_plugins
    assert state.get(PRE_SCORE_KEY) is None


RS1 = {
    "apiVersion": "apps/v1",
    "kind": "ReplicaSet",
    "metadata": {"name": "rs1", "namespace": "default"},
    "spec": {"selector": FOO},
}


def _owned_by(b: PodBuilder, name: str) -> PodBuilder:
    return b.set(
        "metadata.ownerReferences",
        [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": name, "uid": name, "controller": True}],
    )


async def _pre_score_state(pod_, nodes, args, objects=()):
    infos = as_node_infos(nodes)
    fw = framework_for(PodTopologySpread, args, infos, objects=objects)
    state = CycleState()
    assert await fw.run_pre_score(state, as_pod_info(pod_), infos) is None
    return state


PRE_SCORE_SKIP = [
    ("the pod doesn't have soft topology spread constraints", pod(), [h("node-a"), h("node-b")], LIST),
    (
        "default constraints and a replicaset that doesn't match",
        _owned_by(pod(foo="bar", baz="sup"), "rs2"),
        [node("node-a", planet="mars")],
        {
            "defaultingType": "List",
            "defaultConstraints": [{"maxSkew": 2, "topologyKey": "planet", "whenUnsatisfiable": SA}],
        },
    ),
]


@pytest.mark.parametrize("pod_, nodes, args", [c[1:] for c in PRE_SCORE_SKIP], ids=[c[0] for c in PRE_SCORE_SKIP])
def test_pre_score_skip(pod_, nodes, args):
    state = asyncio.run(_pre_score_state(pod_, nodes, args, [RS1]))
    assert PodTopologySpread.name in state.skip_score_plugins


PRE_SCORE_STATE = [
    (
        "normal case",
        spread(spread(pod(foo=""), 1, "zone", SA, FOO), 1, HOST, SA, FOO),
        [zh("node-a", "zone1"), zh("node-b", "zone1"), zh("node-x", "zone2")],
        LIST,
        set(),
        [{"zone1": 0, "zone2": 0}, {}],
        [2, 3],
    ),
    (
        "node-x doesn't have label zone",
        spread(spread(pod(foo=""), 1, "zone", SA, FOO), 1, HOST, SA, BAR),
        [zh("node-a", "zone1"), zh("node-b", "zone1"), h("node-x")],
        LIST,
        {"node-x"},
        [{"zone1": 0}, {}],
        [1, 2],
    ),
    (
        "system default constraints and a replicaset",
        _owned_by(pod(foo="tar", baz="sup"), "rs1"),
        [
            node("node-a", **{HOST: "node-a", ZONE_STD: "mars"}),
            node("node-b", **{HOST: "node-b", ZONE_STD: "mars"}),
            h("node-c"),
            h("node-d"),
        ],
        SYSTEM,
        set(),
        [{}, {"mars": 0, "": 0}],
        [4, 2],
    ),
    (
        "default constraints and a replicaset",
        _owned_by(pod(foo="tar", baz="sup"), "rs1"),
        [node("node-a", rack="rack1", planet="mars", **{HOST: "node-a"})],
        {
            "defaultingType": "List",
            "defaultConstraints": [
                {"maxSkew": 1, "topologyKey": HOST, "whenUnsatisfiable": SA},
                {"maxSkew": 2, "topologyKey": "rack", "whenUnsatisfiable": DNS},
                {"maxSkew": 2, "topologyKey": "planet", "whenUnsatisfiable": SA},
            ],
        },
        set(),
        [{}, {"mars": 0}],
        [1, 1],
    ),
    (
        "NodeTaintsPolicy honored",
        spread(pod(foo=""), 1, "zone", SA, BAR, taints="Honor"),
        [zh("node-a", "zone1"), zh("node-b", "zone1"), tainted(zh("node-x", "zone2"))],
        LIST,
        set(),
        [{"zone1": 0, "zone2": 0}],
        [2],
    ),
]


@pytest.mark.parametrize(
    "pod_, nodes, args, ignored, counts, sizes", [c[1:] for c in PRE_SCORE_STATE], ids=[c[0] for c in PRE_SCORE_STATE]
)
def test_pre_score_state(pod_, nodes, args, ignored, counts, sizes):
    s = asyncio.run(_pre_score_state(pod_, nodes, args, [RS1])).get(PRE_SCORE_KEY)
    assert s.ignored_nodes == ignored
    assert s.counts == counts
    assert s.weights == [topology_normalizing_weight(n) for n in sizes]


def test_default_constraints_take_the_workload_selector():
    s = asyncio.run(_pre_score_state(_owned_by(pod(foo="tar"), "rs1"), [h("node-a")], SYSTEM, [RS1])).get(PRE_SCORE_KEY)
    assert [(c.topology_key, c.max_skew) for c in s.constraints] == [(HOST, 3), (ZONE_STD, 5)]
    assert all(c.matches({"foo": "x"}) and not c.matches({"bar": ""}) for c in s.constraints)


def test_topology_normalizing_weight_is_log_of_size_plus_two():
    assert topology_normalizing_weight(0) == pytest.approx(math.log(2))
    assert topology_normalizing_weight(3) == pytest.approx(math.log(5))


# --- args ------------------------------------------------------------------------------------

VALID_ARGS = [
    ("system defaulting by default", {}),
    ("list defaulting with no constraints", {"defaultingType": "List"}),
    (
        "list defaulting with constraints",
        {
            "defaultingType": "List",
            "defaultConstraints": [
                {"maxSkew": 1, "topologyKey": "node", "whenUnsatisfiable": DNS},
                {"maxSkew": 2, "topologyKey": "node", "whenUnsatisfiable": SA},
                {"maxSkew": 5, "topologyKey": "example.com/rack", "whenUnsatisfiable": SA, "nodeTaintsPolicy": "Honor"},
            ],
        },
    ),
]


@pytest.mark.parametrize("raw", [c[1] for c in VALID_ARGS], ids=[c[0] for c in VALID_ARGS])
def test_valid_args(raw):
    args = PodTopologySpreadArgs.model_validate(raw)
    assert args.defaultingType == raw.get("defaultingType", "System")
    assert len(args.defaultConstraints) == len(raw.get("defaultConstraints", []))


def _c(**kw: Any) -> dict[str, Any]:
    return {"maxSkew": 1, "topologyKey": "node", "whenUnsatisfiable": DNS, **kw}


INVALID_ARGS = [
    (
        "system defaulting with constraints",
        {"defaultingType": "System", "defaultConstraints": [_c()]},
        'defaultingType: Invalid value: "System": when .defaultConstraints are not empty',
    ),
    (
        "maxSkew not positive",
        {"defaultingType": "List", "defaultConstraints": [_c(maxSkew=0)]},
        "defaultConstraints[0].maxSkew: Invalid value: 0: not in valid range (0, inf)",
    ),
    (
        "empty topologyKey",
        {"defaultingType": "List", "defaultConstraints": [_c(topologyKey="")]},
        "defaultConstraints[0].topologyKey: Required value: can not be empty",
    ),
    (
        "invalid topologyKey",
        {"defaultingType": "List", "defaultConstraints": [_c(topologyKey="not a label")]},
        "defaultConstraints[0].topologyKey: Invalid value: 'not a label'",
    ),
    (
        "missing whenUnsatisfiable",
        {"defaultingType": "List", "defaultConstraints": [_c(whenUnsatisfiable="")]},
        "defaultConstraints[0].whenUnsatisfiable: Required value: can not be empty",
    ),
    (
        "unsupported whenUnsatisfiable",
        {"defaultingType": "List", "defaultConstraints": [_c(whenUnsatisfiable="Sometimes")]},
        'defaultConstraints[0].whenUnsatisfiable: Unsupported value: "Sometimes"',
    ),
    (
        "labelSelector is forbidden",
        {"defaultingType": "List", "defaultConstraints": [_c(labelSelector={"matchLabels": {"a": "b"}})]},
        "defaultConstraints[0].labelSelector: Forbidden: constraint must not define a selector, as they deduced for each pod",
    ),
    (
        "duplicate topologyKey and whenUnsatisfiable",
        {"defaultingType": "List", "defaultConstraints": [_c(), _c(maxSkew=2)]},
        'defaultConstraints[1]: Duplicate value: "{node, DoNotSchedule}"',
    ),
    ("unknown defaultingType", {"defaultingType": "Sometimes"}, "defaultingType"),
    ("unknown field", {"defaultingType": "List", "bogus": 1}, "bogus"),
]


@pytest.mark.parametrize("raw, message", [c[1:] for c in INVALID_ARGS], ids=[c[0] for c in INVALID_ARGS])
def test_invalid_args(raw, message):
    with pytest.raises(ValidationError) as err:
        PodTopologySpreadArgs.model_validate(raw)
    assert message in str(err.value)


def test_list_defaulting_applies_hard_default_constraints():
    """A listed DoNotSchedule default constraint filters a pod the Service selects."""
    args = {
        "defaultingType": "List",
        "defaultConstraints": [{"maxSkew": 1, "topologyKey": "node", "whenUnsatisfiable": DNS}],
    }
    nodes = [node("node-a", node="node-a"), node("node-b", node="node-b")]
    got = filter_nodes(PodTopologySpread, pod(foo=""), nodes, args=args, pods=foo_pods("a:1"), objects=[SERVICE])
    assert _codes(got) == {"node-a": U, "node-b": S}
    # Without a selecting workload the pod gets no default constraints.
    assert _codes(filter_nodes(PodTopologySpread, pod(foo=""), nodes, args=args, pods=foo_pods("a:1"))) == {
        "node-a": S,
        "node-b": S,
    }


# --- events ----------------------------------------------------------------------------------


def _plugin() -> PodTopologySpread:
    return PodTopologySpread(PodTopologySpreadArgs.model_validate(LIST), None)


def test_events_to_register():
    events = {(e.event.resource, e.event.action) for e in _plugin().events_to_register()}
    assert events == {
        (
            EventResource.POD,
            ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.UPDATE_POD_TOLERATIONS | ActionType.DELETE,
        ),
        (EventResource.UNSCHEDULED_POD, ActionType.UPDATE_POD_TOLERATIONS),
        (
            EventResource.NODE,
            ActionType.ADD | ActionType.DELETE | ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_TAINT,
        ),
    }
    assert all(e.hint is not None for e in _plugin().events_to_register())


TARGET = spread(pod(foo="").uid("target"), 1, "zone", DNS, FOO).obj()
TARGET_HONOR = spread(pod(foo="").uid("target"), 1, "zone", DNS, FOO, taints="Honor").obj()
Q, SKIP = QueueingHint.QUEUE, QueueingHint.SKIP

POD_HINTS = [
    ("a matching assigned pod is added", TARGET, None, on("n1", "p1", foo="").obj(), Q),
    ("a non-matching assigned pod is added", TARGET, None, on("n1", "p1", bar="").obj(), SKIP),
    ("a matching pod of another namespace is added", TARGET, None, on("n1", "p1", "other", foo="").obj(), SKIP),
    ("an unscheduled matching pod is added", TARGET, None, pod("p1", foo="").obj(), SKIP),
    ("a matching assigned pod is deleted", TARGET, on("n1", "p1", foo="").obj(), None, Q),
    ("a non-matching assigned pod is deleted", TARGET, on("n1", "p1", bar="").obj(), None, SKIP),
    (
        "an assigned pod's label change makes it match",
        TARGET,
        on("n1", "p1", bar="").uid("u1").obj(),
        on("n1", "p1", foo="").uid("u1").obj(),
        Q,
    ),
    (
        "an assigned pod's label change keeps it matching",
        TARGET,
        on("n1", "p1", foo="", a="1").uid("u1").obj(),
        on("n1", "p1", foo="", a="2").uid("u1").obj(),
        SKIP,
    ),
    (
        "the target got a toleration and a constraint honors taints",
        TARGET_HONOR,
        TARGET_HONOR,
        tolerate_unschedulable(spread(pod(foo="").uid("target"), 1, "zone", DNS, FOO, taints="Honor")).obj(),
        Q,
    ),
    (
        "the target got a toleration but no constraint honors taints",
        TARGET,
        TARGET,
        tolerate_unschedulable(spread(pod(foo="").uid("target"), 1, "zone", DNS, FOO)).obj(),
        SKIP,
    ),
]


def _nominated(b) -> dict:
    obj = b.obj()
    obj.setdefault("status", {})["nominatedNodeName"] = "n1"
    return obj


POD_HINTS += [
    # Nominated pods count where they are nominated, as assigned ones do.
    ("a matching pod with a nominated node is added", TARGET, None, _nominated(pod("p1", foo="")), Q),
    ("a non-matching pod with a nominated node is added", TARGET, None, _nominated(pod("p1", bar="")), SKIP),
    ("a matching pod with a nominated node is deleted", TARGET, _nominated(pod("p1", foo="")), None, Q),
]


@pytest.mark.parametrize("target, old, new, want", [c[1:] for c in POD_HINTS], ids=[c[0] for c in POD_HINTS])
def test_pod_change_hint(target, old, new, want):
    assert _plugin().is_schedulable_after_pod_change(target, old, new) is want


NODE_HINTS = [
    ("a node with the topology key is added", None, zn("n1", "zone1").obj(), Q),
    ("a node without the topology key is added", None, node("n1", other="x").obj(), SKIP),
    ("a node with the topology key is deleted", zn("n1", "zone1").obj(), None, Q),
    ("a node without the topology key is deleted", node("n1").obj(), None, SKIP),
    ("an update adds the topology key", node("n1").obj(), zn("n1", "zone1").obj(), Q),
    ("an update changes the topology value", zn("n1", "zone1").obj(), zn("n1", "zone2").obj(), Q),
    ("an update changes an unrelated label", zn("n1", "zone1").obj(), zn("n1", "zone1", foo="x").obj(), SKIP),
    ("an update changes the taints of a matching node", zn("n1", "zone1").obj(), tainted(zn("n1", "zone1")).obj(), Q),
    ("an update changes the taints of a node without the key", node("n1").obj(), tainted(node("n1")).obj(), SKIP),
]


@pytest.mark.parametrize("old, new, want", [c[1:] for c in NODE_HINTS], ids=[c[0] for c in NODE_HINTS])
def test_node_change_hint(old, new, want):
    assert _plugin().is_schedulable_after_node_change(TARGET, old, new) is want


# --- per-node counts kept across cycles ------------------------------------------------------


def _cluster(nodes: list[NodeBuilder], existing: list[PodBuilder]) -> tuple[Any, Any]:
    from kubesched.backend.cache import Cache, Snapshot

    cache = Cache()
    for n in nodes:
        cache.add_node(n.obj())
    for p in existing:
        cache.add_pod(as_pod_info(p))
    snapshot = Snapshot()
    cache.update_snapshot(snapshot)
    return cache, snapshot


def _add_pod(b: PodBuilder):
    return lambda cache: cache.add_pod(as_pod_info(b))


def _remove_pod(name: str):
    def remove(cache):
        for ni in cache.nodes.values():
            for pi in ni.pods:
                if pi.name == name:
                    assert cache.remove_pod(pi.uid) is not None
                    return
        raise AssertionError(f"no pod {name}")

    return remove


def _set_node(b: NodeBuilder):
    return lambda cache: cache.update_node(None, b.obj())


def _pre_filter_outcome(fw: Any, pi: Any) -> Any:
    state = CycleState()
    _, status, _ = asyncio.run(fw.run_pre_filter(state, pi))
    if status is not None:
        return status.code
    if "PodTopologySpread" in state.skip_filter_plugins:
        return "skip"
    s = state.get(PRE_FILTER_KEY)
    return [(list(tp.items()), p.pairs()) for tp, p in zip(s.counts, s.paths, strict=True)]


_MAX = 2**31 - 1
_ZONE_FOO = spread(pod("p", foo=""), 1, "zone", DNS, FOO)
_THREE_ZONES = [zn("node-a", "zone1"), zn("node-b", "zone2"), zn("node-c", "zone3")]

CROSS_CYCLE_PRE_FILTER = [
    (
        "a matching pod is added",
        _ZONE_FOO,
        [on("node-a", "e1", foo="")],
        _add_pod(on("node-b", "e2", foo="")),
        [([("zone1", 1), ("zone2", 0), ("zone3", 0)], (("zone2", 0), ("zone3", 0)))],
        [([("zone1", 1), ("zone2", 1), ("zone3", 0)], (("zone3", 0), ("zone1", 1)))],
    ),
    (
        "a matching pod is removed",
        _ZONE_FOO,
        [on("node-a", "e1", foo=""), on("node-b", "e2", foo="")],
        _remove_pod("e1"),
        [([("zone1", 1), ("zone2", 1), ("zone3", 0)], (("zone3", 0), ("zone1", 1)))],
        [([("zone1", 0), ("zone2", 1), ("zone3", 0)], (("zone1", 0), ("zone3", 0)))],
    ),
    (
        "a pod's labels change so it no longer matches",
        _ZONE_FOO,
        [on("node-a", "e1", foo="").uid("e1")],
        _add_pod(on("node-a", "e1", bar="").uid("e1")),
        [([("zone1", 1), ("zone2", 0), ("zone3", 0)], (("zone2", 0), ("zone3", 0)))],
        [([("zone1", 0), ("zone2", 0), ("zone3", 0)], (("zone1", 0), ("zone2", 0)))],
    ),
    (
        "a node moves to another zone",
        _ZONE_FOO,
        [on("node-a", "e1", foo="")],
        _set_node(zn("node-a", "zone2")),
        [([("zone1", 1), ("zone2", 0), ("zone3", 0)], (("zone2", 0), ("zone3", 0)))],
        [([("zone2", 1), ("zone3", 0)], (("zone3", 0), ("zone2", 1)))],
    ),
    (
        "a node loses the topology key",
        _ZONE_FOO,
        [on("node-a", "e1", foo="")],
        _set_node(node("node-a", node="node-a")),
        [([("zone1", 1), ("zone2", 0), ("zone3", 0)], (("zone2", 0), ("zone3", 0)))],
        [([("zone2", 0), ("zone3", 0)], (("zone2", 0), ("zone3", 0)))],
    ),
    (
        "a node is tainted while the constraint honors taints",
        spread(pod("p", foo=""), 1, "zone", DNS, FOO, taints="Honor"),
        [on("node-a", "e1", foo="")],
        _set_node(tainted(zn("node-a", "zone1"))),
        [([("zone1", 1), ("zone2", 0), ("zone3", 0)], (("zone2", 0), ("zone3", 0)))],
        [([("zone2", 0), ("zone3", 0)], (("zone2", 0), ("zone3", 0)))],
    ),
]


@pytest.mark.parametrize(
    "incoming, existing, change, before, after",
    [c[1:] for c in CROSS_CYCLE_PRE_FILTER],
    ids=[c[0] for c in CROSS_CYCLE_PRE_FILTER],
)
def test_pre_filter_counts_follow_node_changes_across_cycles(incoming, existing, change, before, after):
    cache, snapshot = _cluster(_THREE_ZONES, existing)
    fw = framework_for(PodTopologySpread, None, [])
    fw.set_snapshot(snapshot)
    pi = as_pod_info(incoming)
    first = _pre_filter_outcome(fw, pi)
    change(cache)
    cache.update_snapshot(snapshot)
    assert (first, _pre_filter_outcome(fw, pi)) == (before, after)


_HONOR_TAINTS = spread(pod("p", foo=""), 1, "zone", DNS, FOO, taints="Honor")

SAME_NODES_OTHER_POD = [
    (
        "another namespace",
        _ZONE_FOO,
        spread(pod("p", "other", foo=""), 1, "zone", DNS, FOO),
        [([("zone1", 0), ("zone2", 0), ("zone3", 0)], (("zone1", 0), ("zone2", 0)))],
    ),
    (
        "a node selector (nodeAffinityPolicy Honor)",
        _ZONE_FOO,
        spread(pod("p", foo="").node_selector(zone="zone1"), 1, "zone", DNS, FOO),
        [([("zone1", 2)], (("zone1", 2), ("", _MAX)))],
    ),
    (
        "a node selector ignored (nodeAffinityPolicy Ignore)",
        _ZONE_FOO,
        spread(pod("p", foo="").node_selector(zone="zone1"), 1, "zone", DNS, FOO, affinity="Ignore"),
        [([("zone1", 2), ("zone2", 1), ("zone3", 0)], (("zone3", 0), ("zone2", 1)))],
    ),
    (
        "required node affinity",
        _ZONE_FOO,
        spread(pod("p", foo="").node_affinity_in("zone", ["zone2", "zone3"]), 1, "zone", DNS, FOO),
        [([("zone2", 1), ("zone3", 0)], (("zone3", 0), ("zone2", 1)))],
    ),
    (
        "honoring taints without a toleration",
        _ZONE_FOO,
        _HONOR_TAINTS,
        [([("zone2", 1), ("zone3", 0)], (("zone3", 0), ("zone2", 1)))],
    ),
    (
        "honoring taints, then with a toleration",
        _HONOR_TAINTS,
        tolerate_unschedulable(spread(pod("p", foo=""), 1, "zone", DNS, FOO, taints="Honor")),
        [([("zone1", 2), ("zone2", 1), ("zone3", 0)], (("zone3", 0), ("zone2", 1)))],
    ),
    (
        "another selector",
        _ZONE_FOO,
        spread(pod("p", foo=""), 1, "zone", DNS, BAR),
        [([("zone1", 1), ("zone2", 0), ("zone3", 0)], (("zone2", 0), ("zone3", 0)))],
    ),
    (
        "another topology key",
        _ZONE_FOO,
        spread(pod("p", foo=""), 1, "node", DNS, FOO),
        [([("node-a", 2), ("node-b", 1), ("node-c", 0)], (("node-c", 0), ("node-b", 1)))],
    ),
]


@pytest.mark.parametrize(
    "first, second, want", [c[1:] for c in SAME_NODES_OTHER_POD], ids=[c[0] for c in SAME_NODES_OTHER_POD]
)
def test_pre_filter_counts_are_not_shared_between_different_pods(first, second, want):
    """One plugin instance, unchanged nodes: a pod differing in what decides the counts gets its own."""
    _, snapshot = _cluster(
        [tainted(zn("node-a", "zone1")), zn("node-b", "zone2"), zn("node-c", "zone3")],
        [on("node-a", "e1", foo=""), on("node-a", "e2", foo="", bar=""), on("node-b", "e3", foo="")],
    )
    kept = framework_for(PodTopologySpread, None, [])
    kept.set_snapshot(snapshot)
    fresh = framework_for(PodTopologySpread, None, [])
    fresh.set_snapshot(snapshot)
    assert _pre_filter_outcome(kept, as_pod_info(first)) == _pre_filter_outcome(fresh, as_pod_info(first))
    assert _pre_filter_outcome(kept, as_pod_info(second)) == want


def _pre_score_outcome(fw: Any, pi: Any, nodes: list[Any]) -> Any:
    state = CycleState()
    status = asyncio.run(fw.run_pre_score(state, pi, nodes))
    if status is not None:
        return status.code
    s = state.get(PRE_SCORE_KEY)
    if s is None:
        return "skip"
    return sorted(s.ignored_nodes), [list(tp.items()) for tp in s.counts], s.weights


def test_pre_score_counts_follow_node_changes_across_cycles():
    incoming = as_pod_info(spread(pod("p", foo=""), 1, "zone", SA, FOO))
    cache, snapshot = _cluster(_THREE_ZONES, [on("node-a", "e1", foo="")])
    fw = framework_for(PodTopologySpread, None, [])
    fw.set_snapshot(snapshot)
    w = topology_normalizing_weight(3)
    assert _pre_score_outcome(fw, incoming, snapshot.list()) == (
        [],
        [[("zone1", 1), ("zone2", 0), ("zone3", 0)]],
        [w],
    )
    _add_pod(on("node-c", "e2", foo=""))(cache)
    _add_pod(on("node-c", "e3", foo=""))(cache)
    _remove_pod("e1")(cache)
    cache.update_snapshot(snapshot)
    assert _pre_score_outcome(fw, incoming, snapshot.list()) == (
        [],
        [[("zone1", 0), ("zone2", 0), ("zone3", 2)]],
        [w],
    )


def test_pre_score_counts_are_not_shared_between_system_defaults_and_the_same_own_constraints():
    """Own constraints equal to the system defaults still require every topology key, the
    defaults do not: a node without a zone label counts under "" only for the latter."""
    own = pod("own", foo="")
    spread(own, 3, HOST, SA, {"matchLabels": {"foo": ""}})
    spread(own, 5, ZONE_STD, SA, {"matchLabels": {"foo": ""}})
    _, snapshot = _cluster(
        [node("node-a", **{ZONE_STD: "", HOST: "node-a"}), h("node-b")], [on("node-b", "e1", foo="")]
    )
    kept = framework_for(PodTopologySpread, None, [], objects=[SERVICE])
    kept.set_snapshot(snapshot)
    defaulted = _pre_score_outcome(kept, as_pod_info(pod("defaulted", foo="")), snapshot.list())
    assert defaulted[:2] == ([], [[], [("", 1)]])
    fresh = framework_for(PodTopologySpread, None, [], objects=[SERVICE])
    fresh.set_snapshot(snapshot)
    got = _pre_score_outcome(kept, as_pod_info(own), snapshot.list())
    assert got[:2] == (["node-b"], [[], [("", 0)]])
    assert got == _pre_score_outcome(fresh, as_pod_info(own), snapshot.list())


def _random_incoming(rng: Any) -> PodBuilder:
    b = pod("incoming", rng.choice(["default", "other"]), foo="")
    for when in rng.sample([DNS, SA], rng.randint(1, 2)):
        for key in rng.sample(["zone", HOST, "node"], rng.randint(1, 2)):
            spread(
                b,
                rng.randint(1, 3),
                key,
                when,
                rng.choice([FOO, BAR, {"matchLabels": {"foo": ""}}, {}]),
                min_domains=rng.choice([None, 2, 5]) if when == DNS else None,
                affinity=rng.choice([None, "Honor", "Ignore"]),
                taints=rng.choice([None, "Honor", "Ignore"]),
            )
    if rng.random() < 0.3:
        b.node_selector(zone=rng.choice(["zone1", "zone2"]))
    if rng.random() < 0.3:
        b.node_affinity_in("zone", rng.sample(["zone1", "zone2", "zone3"], 2))
    if rng.random() < 0.5:
        tolerate_unschedulable(b)
    return b


def _random_node(rng: Any, name: str) -> NodeBuilder:
    labels = {"node": name, HOST: name}
    if rng.random() < 0.85:
        labels["zone"] = rng.choice(["zone1", "zone2", "zone3"])
    b = node(name, **labels)
    return tainted(b) if rng.random() < 0.25 else b


def _random_change(rng: Any, cache: Any, names: list[str], serial: list[int]) -> None:
    pods = [(ni.name, pi) for ni in cache.nodes.values() if ni.node is not None for pi in ni.pods]
    kind = rng.choice(["add", "add", "remove", "relabel pod", "node"])
    if kind == "remove" and pods:
        cache.remove_pod(rng.choice(pods)[1].uid)
    elif kind == "relabel pod" and pods:
        where, pi = rng.choice(pods)
        labels = rng.choice([{"foo": ""}, {"bar": ""}, {"foo": "", "bar": ""}, {}])
        cache.update_pod(as_pod_info(pod(pi.name, pi.namespace, **labels).uid(pi.uid).node(where)))
    elif kind == "node":
        cache.update_node(None, _random_node(rng, rng.choice(names)).obj())
    else:
        serial[0] += 1
        labels = rng.choice([{"foo": ""}, {"bar": ""}, {"foo": "", "bar": ""}, {}])
        ns = rng.choice(["default", "default", "other"])
        cache.add_pod(as_pod_info(pod(f"e{serial[0]}", ns, **labels).node(rng.choice(names))))


@pytest.mark.parametrize("seed", range(4), ids=lambda s: f"seed {s}")
def test_cached_counts_equal_a_fresh_walk_under_random_changes(seed):
    """A long-lived plugin instance agrees, cycle after cycle, with a fresh one that walks every node."""
    import random

    rng = random.Random(seed)
    names = [f"n{i}" for i in range(10)]
    cache, snapshot = _cluster([_random_node(rng, n) for n in names], [])
    kept = framework_for(PodTopologySpread, None, [])
    kept.set_snapshot(snapshot)
    incoming = [as_pod_info(_random_incoming(rng)) for _ in range(4)]
    serial = [0]
    for _ in range(120):
        for _ in range(rng.randint(0, 3)):
            _random_change(rng, cache, names, serial)
        cache.update_snapshot(snapshot)
        fresh = framework_for(PodTopologySpread, None, [])
        fresh.set_snapshot(snapshot)
        pi = rng.choice(incoming)
        nodes = rng.sample(snapshot.list(), rng.randint(1, len(names)))
        assert _pre_filter_outcome(kept, pi) == _pre_filter_outcome(fresh, pi)
        assert _pre_score_outcome(kept, pi, nodes) == _pre_score_outcome(fresh, pi, nodes)


@pytest.mark.parametrize(
    ("gates", "want_b"),
    [(None, S), (FeatureGates({"TaintTolerationComparisonOperators": True}), U)],
    ids=["gate off: the Gt toleration tolerates nothing", "gate on: 999 > 950 is tolerated"],
)
def test_node_taints_policy_honors_comparison_operators(gates, want_b) -> None:
    # node-a's zone counts only when the pod tolerates its taint; then zone a holds 0 matching
    # pods and adding one to zone b (which holds 1) makes a skew of 2.
    incoming = spread(pod(foo=""), 1, "zone", DNS, FOO, taints="Honor").toleration(
        "sla", "950", "NoSchedule", operator="Gt"
    )
    nodes = [node("node-a", zone="a").taint("sla", "999", "NoSchedule"), node("node-b", zone="b")]
    got = filter_nodes(PodTopologySpread, incoming, nodes, pods=foo_pods("b:1"), feature_gates=gates)
    assert _codes(got)["node-b"] == want_b


def test_match_label_keys_ignored_with_the_gate_off() -> None:
    # The "ANDed with a non-empty labelSelector" case: with the gate (beta, on) zone1 counts
    # one matching pod; with it off matchLabelKeys is ignored and every foo pod counts.
    incoming = spread(pod(foo="", bar="a"), 1, "zone", DNS, FOO, match_keys=["bar"])
    existing = [
        on("node-a", "p-a1", foo=""),
        on("node-a", "p-a2", foo="", bar="a"),
        on("node-b", "p-b1", foo=""),
        on("node-y", "p-y1", foo="", bar="a"),
        on("node-y", "p-y2", bar=""),
    ]
    off = FeatureGates({"MatchLabelKeysInPodTopologySpread": False})
    on_ = filter_nodes(PodTopologySpread, incoming, four_zone_nodes(), pods=existing)
    off_ = filter_nodes(PodTopologySpread, incoming, four_zone_nodes(), pods=existing, feature_gates=off)
    # zone1 {a, b} vs zone2 {x, y}: on, 1 vs 1 → every node fits; off, 3 vs 1 → zone1 is too full.
    assert _codes(on_) == {n: S for n in on_}
    assert _codes(off_) == {"node-a": U, "node-b": U, "node-x": S, "node-y": S}
