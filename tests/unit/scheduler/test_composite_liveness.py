"""What must always hold of CompositePodGroup hierarchies, on random clusters run through
``simulate`` (GenericWorkload, CompositePodGroup and TopologyAwareWorkloadScheduling on): a
hierarchy of gangs (priority 100) under a composite that needs every child, on nodes partly
filled by lower-priority pods — standalone ones, and the pods of a PodGroup spread over the
nodes whose ``disruptionMode`` is ``all`` or ``single``, under a composite of its own or not.

After every run:

* nothing is partly bound: every child gang of the hierarchy is bound whole, or none is;
* a victim group that says ``all`` (itself or through its composite) is preempted whole or
  not at all;
* no node holds more than it has;
* nothing is stuck while the capacity is there: when the free CPUs and the lower-priority pods
  would hold the whole hierarchy, it is bound.

Every pod asks for one CPU, so whether the hierarchy fits is a count of CPUs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_pod_group_liveness import node, pod, simulate

GATES = "GenericWorkload=true,CompositePodGroup=true,TopologyAwareWorkloadScheduling=true"


@dataclass
class Cluster:
    cpus: list[int]
    #: the victim group's pods, one per entry: the node index each runs on
    victims: list[int]
    #: the victim group's disruptionMode, and whether it says so itself or through its composite
    mode: str
    through_composite: bool
    #: standalone low pods: node index each
    standalone: list[int]
    #: the hierarchy's child gangs: members (= minCount) each
    children: list[int]


@st.composite
def clusters(draw: st.DrawFn) -> Cluster:
    cpus = draw(st.lists(st.integers(2, 4), min_size=1, max_size=3))
    room = [c for c in cpus]
    victims: list[int] = []
    standalone: list[int] = []
    for i in range(len(cpus)):
        for _ in range(draw(st.integers(0, room[i]))):
            (victims if draw(st.booleans()) else standalone).append(i)
            room[i] -= 1
    children = draw(st.lists(st.integers(1, 3), min_size=1, max_size=2))
    return Cluster(cpus, victims, draw(st.sampled_from(["all", "single"])), draw(st.booleans()), standalone, children)


def group(kind: str, name: str, spec: dict[str, Any]) -> dict[str, Any]:
    version = "v1beta1"
    if kind == "CompositePodGroup":
        version = "v1alpha3"
        spec = {**spec, "workloadRef": {"workloadName": "w", "templateName": name}}
    return {"apiVersion": f"scheduling.k8s.io/{version}", "kind": kind, "metadata": {"name": name}, "spec": spec}


def scenario(c: Cluster) -> list[dict[str, Any]]:
    docs: list[dict[str, Any]] = [
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": f"p{p}"}, "value": p}
        for p in (10, 100)
    ]
    docs += [node(f"n{i}", cpu) for i, cpu in enumerate(c.cpus)]
    docs += [pod(f"low-{j}", 10, node_name=f"n{i}") for j, i in enumerate(c.standalone)]
    if c.victims:
        victim_spec: dict[str, Any] = {"schedulingPolicy": {"basic": {}}, "priority": 10}
        if c.through_composite:
            docs.append(
                group("CompositePodGroup", "vc", {"schedulingPolicy": {"basic": {}}, "disruptionMode": {c.mode: {}}})
            )
            victim_spec["parentCompositePodGroupName"] = "vc"
        else:
            victim_spec["disruptionMode"] = {c.mode: {}}
        docs.append(group("PodGroup", "v", victim_spec))
        docs += [pod(f"v-{j}", 10, node_name=f"n{i}", group="v") for j, i in enumerate(c.victims)]
    docs.append(group("CompositePodGroup", "h", {"schedulingPolicy": {"gang": {"minGroupCount": len(c.children)}}}))
    for k, members in enumerate(c.children):
        docs.append(
            group(
                "PodGroup",
                f"c{k}",
                {"schedulingPolicy": {"gang": {"minCount": members}}, "parentCompositePodGroupName": "h"},
            )
        )
        docs += [pod(f"c{k}-m{m}", 100, group=f"c{k}") for m in range(members)]
    return docs


def check(c: Cluster, data: dict[str, Any]) -> None:
    bound = {p["name"] for p in data["pods"] if p.get("node") and not p.get("deleted")}
    deleted = {p["name"] for p in data["pods"] if p.get("deleted")}
    deleted |= {key.split("/", 1)[1] for key in data["summary"]["preempted"]}
    free = 0
    for n in data["nodes"]:
        cap, used = n["allocatable"]["cpu"], n["requested"]["cpu"]
        assert used <= cap, f"node {n['name']} holds {used}m of {cap}m"
        free += (cap - used) // 1000
    whole = [all(f"c{k}-m{m}" in bound for m in range(n)) for k, n in enumerate(c.children)]
    some = [any(f"c{k}-m{m}" in bound for m in range(n)) for k, n in enumerate(c.children)]
    assert all(whole) or not any(some), f"the hierarchy is bound in part: whole {whole}, some {some}"
    gone = [f"v-{j}" in deleted for j in range(len(c.victims))]
    if c.mode == "all" and gone:
        assert all(gone) or not any(gone), f"a victim group saying 'all' lost only {sum(gone)} of {len(gone)} pods"
    if all(whole):
        return
    lower = sum(1 for j in range(len(c.standalone)) if f"low-{j}" not in deleted)
    lower += sum(1 for g in gone if not g)
    needed = sum(c.children)
    assert free + lower < needed, (
        f"the hierarchy needs {needed} CPUs, with {free} free and {lower} lower-priority pods to preempt: "
        f"{[(p['name'], p['message']) for p in data['pods'] if p['name'].startswith('c')]}"
    )


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters())
def test_a_hierarchy_is_bound_whole_or_not_and_never_waits_while_it_fits(c: Cluster) -> None:
    check(c, simulate(scenario(c), GATES))


def test_a_hierarchy_preempts_a_victim_group_whole() -> None:
    """Two nodes of 2 CPUs full: a victim group saying 'all' through its composite has a pod on
    each, beside a standalone pod each; the hierarchy of one gang of 2 takes the group whole
    (preempting it frees the 2 CPUs it needs) and spares the standalone pods or takes them."""
    c = Cluster([2, 2], [0, 1], "all", True, [0, 1], [2])
    data = simulate(scenario(c), GATES)
    check(c, data)
    bound = {p["name"] for p in data["pods"] if p.get("node") and not p.get("deleted")}
    assert {"c0-m0", "c0-m1"} <= bound
