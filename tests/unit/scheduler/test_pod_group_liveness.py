"""What must always hold of pod groups, on random clusters run through ``simulate``
(GenericWorkload on): gangs and basic groups of several priorities, members that carry
nominations already, members and nodes that arrive later, lower-priority pods to preempt.

After every run:

* nothing is partly bound: a gang has no member bound, or at least ``minCount`` (counting
  those bound and preempted since);
* no node holds more than it has (a pod bound twice, or beside a nomination counted twice,
  would show here);
* nothing is stuck while the capacity is there: a group with members still pending could not
  have placed what it still needs even with every lower-priority standalone pod gone;
* the shortcuts that make a large gang cheap (members held by the group's quorum not asked
  again one by one, the placed members counted as the cache changes) change nothing: the run
  with them off reports the same, pod for pod.

Every pod asks for one CPU, so whether a group fits is a count of free CPUs."""

from __future__ import annotations

import contextlib
import io
import json
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from unittest.mock import patch

import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from kubesched.backend.pod_groups import PodGroupIndex
from kubesched.cli import main

PRIORITIES = (10, 50, 100, 500)


@dataclass
class Group:
    name: str
    gang: bool
    min_count: int
    priority: int
    members: int
    #: each member's nomination (a node index), or None
    nominations: list[int | None] = field(default_factory=list)
    #: members created at 10s instead of at the start
    late: int = 0


@dataclass
class Cluster:
    cpus: list[int]
    #: standalone pods already running: (node index, priority)
    running: list[tuple[int, int]]
    groups: list[Group]
    #: nodes of 4 CPUs added at 20s
    added_nodes: int


@st.composite
def clusters(draw: st.DrawFn) -> Cluster:
    cpus = draw(st.lists(st.integers(2, 6), min_size=1, max_size=4))
    running: list[tuple[int, int]] = []
    for i, c in enumerate(cpus):
        for _ in range(draw(st.integers(0, c))):
            running.append((i, draw(st.sampled_from(PRIORITIES[:3]))))
    groups = []
    for g in range(draw(st.integers(1, 3))):
        members = draw(st.integers(1, 4))
        gang = draw(st.booleans())
        min_count = draw(st.integers(1, members)) if gang else 0
        nominations = draw(
            st.lists(st.one_of(st.none(), st.integers(0, len(cpus) - 1)), min_size=members, max_size=members)
        )
        late = draw(st.integers(0, members - 1))
        priority = draw(st.sampled_from(PRIORITIES))
        groups.append(Group(f"g{g}", gang, min_count, priority, members, nominations, late))
    return Cluster(cpus, running, groups, draw(st.integers(0, 1)))


def node(name: str, cpu: int) -> dict[str, Any]:
    res = {"cpu": str(cpu), "memory": "64Gi", "pods": "110"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {"capacity": res, "allocatable": res},
    }


def pod(name: str, priority: int, node_name: str = "", group: str = "", nominated: str = "") -> dict[str, Any]:
    spec: dict[str, Any] = {
        "priorityClassName": f"p{priority}",
        "containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "1"}}}],
    }
    if node_name:
        spec["nodeName"] = node_name
    if group:
        spec["schedulingGroup"] = {"podGroupName": group}
    obj: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}
    if nominated:
        obj["status"] = {"nominatedNodeName": nominated}
    return obj


def scenario(c: Cluster) -> list[dict[str, Any]]:
    docs: list[dict[str, Any]] = [
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": f"p{p}"}, "value": p}
        for p in PRIORITIES
    ]
    docs += [node(f"n{i}", cpu) for i, cpu in enumerate(c.cpus)]
    docs += [pod(f"run-{j}", p, node_name=f"n{i}") for j, (i, p) in enumerate(c.running)]
    later: list[dict[str, Any]] = []
    for g in c.groups:
        policy = {"gang": {"minCount": g.min_count}} if g.gang else {"basic": {}}
        docs.append(
            {
                "apiVersion": "scheduling.k8s.io/v1beta1",
                "kind": "PodGroup",
                "metadata": {"name": g.name},
                "spec": {"schedulingPolicy": policy},
            }
        )
        for k in range(g.members):
            nominated = g.nominations[k]
            member = pod(
                f"{g.name}-m{k}", g.priority, group=g.name, nominated="" if nominated is None else f"n{nominated}"
            )
            (later if k >= g.members - g.late else docs).append(member)
    steps: list[dict[str, Any]] = []
    if later:
        steps.append({"at": "10s", "create": later})
    if c.added_nodes:
        steps.append({"at": "20s", "create": [node(f"added-{i}", 4) for i in range(c.added_nodes)]})
    if steps:
        docs.append({"apiVersion": "kubesched.io/v1", "kind": "Steps", "steps": steps})
    return docs


def simulate(docs: list[dict[str, Any]], gates: str = "GenericWorkload=true") -> dict[str, Any]:
    """``docs`` through ``kubesched simulate --output json`` under ``gates``."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "scenario.yaml"
        path.write_text(yaml.safe_dump_all(docs))
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            code = main(["simulate", "--scenario", str(path), "--feature-gates", gates, "--output", "json"])
    assert code == 0
    result: dict[str, Any] = json.loads(out.getvalue())
    return result


def check(c: Cluster, data: dict[str, Any]) -> None:
    bound = {p["name"]: p["node"] for p in data["pods"] if p.get("node") and not p.get("deleted")}
    deleted = {p["name"] for p in data["pods"] if p.get("deleted")}
    deleted |= {key.split("/", 1)[1] for key in data["summary"]["preempted"]}
    free = 0
    for n in data["nodes"]:
        cap, used = n["allocatable"]["cpu"], n["requested"]["cpu"]
        assert used <= cap, f"node {n['name']} holds {used}m of {cap}m"
        free += (cap - used) // 1000
    for g in c.groups:
        names = [f"{g.name}-m{k}" for k in range(g.members)]
        placed = sum(1 for n in names if n in bound)
        # a member preempted later was bound first (a victim gang may lose members one by one,
        # as upstream's default disruption mode allows): the scheduler bound it with the others
        gone = sum(1 for n in names if n in deleted)
        if g.gang:
            ever = placed + gone
            assert ever == 0 or ever >= g.min_count, f"gang {g.name}: {ever} bound of minCount {g.min_count}"
        if placed + gone == g.members:
            continue
        # a gang preempted below its minimum keeps too few members to reach it again: nothing in
        # a scenario makes the preempted ones anew (a controller would), so it waits by right
        if g.gang and g.members - gone < g.min_count:
            continue
        # what it still needs: its minimum, or one more member once the minimum is bound
        needs = g.min_count - placed if g.gang and placed < g.min_count else 1
        lower = sum(1 for j, (_, p) in enumerate(c.running) if p < g.priority and f"run-{j}" not in deleted)
        assert free + lower < needs, (
            f"group {g.name} (priority {g.priority}) still needs {needs}, with {free} CPUs free and {lower} "
            f"lower-priority pods to preempt: {[(p['name'], p['message']) for p in data['pods'] if p['name'] in names]}"
        )


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters())
# A gang of three (minCount 2) bound two, both preempted by a basic group of higher priority: its
# one member left cannot reach its minimum (found by a run of this test).
@example(
    Cluster(
        cpus=[3],
        running=[],
        groups=[
            Group("g0", gang=False, min_count=0, priority=50, members=4, nominations=[None] * 4, late=3),
            Group("g1", gang=True, min_count=2, priority=10, members=3, nominations=[None] * 3),
        ],
        added_nodes=1,
    )
)
def test_no_group_is_partly_bound_and_none_waits_while_it_fits(c: Cluster) -> None:
    check(c, simulate(scenario(c)))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters())
def test_the_group_shortcuts_change_nothing(c: Cluster) -> None:
    docs = scenario(c)
    fast = simulate(docs)

    def counted(self: PodGroupIndex, namespace: str, name: str) -> int:
        return len(self.state(namespace, name).scheduled)

    with patch.object(PodGroupIndex, "scheduled_count", counted):
        slow = simulate(docs)
    for run in (fast, slow):  # wall-clock figures
        del run["summary"]["seconds"], run["summary"]["podsPerSecond"]
    assert fast == slow


def test_the_gang_with_nominations_from_the_report_binds() -> None:
    """Three members of 2 CPUs on two empty 4-CPU nodes, nominated n2, n1, n2 as preemption
    leaves them: their own nominations are not counted beside their placements."""
    c = Cluster([4, 4], [], [Group("g", True, 3, 100, 3, [1, 0, 1])], 0)
    docs = scenario(c)
    for d in docs:
        if d["kind"] == "Pod":
            d["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "2"
    data = simulate(docs)
    assert sorted((p["name"], p["node"]) for p in data["pods"]) == [("g-m0", "n1"), ("g-m1", "n0"), ("g-m2", "n1")]


def test_two_groups_preempting_at_once_both_bind() -> None:
    """A node of 6 CPUs full of priority-10 pods; two basic groups of one member (priority 50)
    preempt in the background one after the other, the second counting the first's nomination.
    The second's last victim's deletion once met its member still held at PreEnqueue, and
    nothing woke it again: it waited with a CPU free."""
    c = Cluster(
        [6], [(0, 10)] * 6, [Group("g0", False, 0, 50, 1, [None], 0), Group("g1", False, 0, 50, 1, [None], 0)], 0
    )
    data = simulate(scenario(c))
    check(c, data)
    assert {p["name"] for p in data["pods"] if p.get("node") and not p.get("deleted")} >= {"g0-m0", "g1-m0"}
