"""Gangs that carry nominations, and gangs that must preempt, bind end to end: separate processes,
the real kubectl, real HTTP — with the scheduler inside ``sim serve`` and as ``kubesched run``.

1. Three members of 2 CPUs on two empty nodes of 4, nominated n2, n1, n2 (as workload-aware
   preemption leaves them): each member's own nomination is not counted beside its placement,
   so the gang binds.
2. Two nodes full of low-priority pods and a high-priority gang of three that needs three of their
   four CPUs pairs: the gang preempts as one, its members wait nominated, and once the victims are
   gone the whole gang binds; the pod spared stays."""

from __future__ import annotations

import json

import pytest
from polling import eventually_sync
from test_gang_sim_serve import KUBECTL, Cluster, cluster  # noqa: F401 - the fixture, for both processes

pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")


def nodes(*names: str) -> str:
    docs = []
    for n in names:
        docs.append(
            f"""apiVersion: v1
kind: Node
metadata:
  name: {n}
  labels: {{kubernetes.io/hostname: {n}}}
status:
  capacity: {{cpu: "4", memory: 16Gi, pods: "110"}}
  allocatable: {{cpu: "4", memory: 16Gi, pods: "110"}}
"""
        )
    return "---\n".join(docs)


def gang(name: str, min_count: int) -> str:
    return f"""apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata: {{name: {name}}}
spec:
  schedulingPolicy:
    gang: {{minCount: {min_count}}}
"""


def pod(name: str, cpu: str, *, group: str = "", priority: str = "", node: str = "") -> str:
    lines = [
        "apiVersion: v1",
        "kind: Pod",
        f"metadata: {{name: {name}}}",
        "spec:",
        "  terminationGracePeriodSeconds: 0",
        "  containers:",
        "  - {name: c, image: registry.k8s.io/pause:3.10, resources: {requests: {cpu: '" + cpu + "'}}}",
    ]
    if group:
        lines.append(f"  schedulingGroup: {{podGroupName: {group}}}")
    if priority:
        lines.append(f"  priorityClassName: {priority}")
    if node:
        lines.append(f"  nodeName: {node}")
    return "\n".join(lines) + "\n"


def placed(c: Cluster) -> dict[str, str]:
    items = json.loads(c.kubectl("get", "pods", "-o", "json"))["items"]
    return {p["metadata"]["name"]: p["spec"].get("nodeName") or "" for p in items}


def test_a_gang_whose_members_carry_nominations_binds(cluster: Cluster) -> None:  # noqa: F811 - the fixture
    c = cluster
    c.kubectl("apply", "-f", "-", input=nodes("n1", "n2"))
    members = {"m0": "n2", "m1": "n1", "m2": "n2"}
    # The members wait for their PodGroup (GangScheduling's PreEnqueue) while they are nominated;
    # the PodGroup then lets all three in at once.
    c.kubectl("apply", "-f", "-", input="---\n".join(pod(m, "2", group="g") for m in members))
    for m, n in members.items():
        c.kubectl(
            "patch",
            "pod",
            m,
            "--subresource=status",
            "--type=merge",
            "-p",
            json.dumps({"status": {"nominatedNodeName": n}}),
        )
        assert c.kubectl("get", "pod", m, "-o", "jsonpath={.status.nominatedNodeName}") == n
    c.kubectl("apply", "-f", "-", input=gang("g", 3))
    bound = eventually_sync(
        lambda: placed(c), what="the gang bound", until=lambda p: all(p.get(m) for m in members), timeout=20
    )
    per_node = [list(bound.values()).count(n) for n in ("n1", "n2")]
    assert sorted(per_node) == [1, 2], bound


def test_a_gang_that_must_preempt_binds_once_its_victims_are_gone(cluster: Cluster) -> None:  # noqa: F811
    c = cluster
    classes = "\n---\n".join(
        f"apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {{name: {n}}}\nvalue: {v}\n"
        for n, v in (("low", 10), ("high", 1000))
    )
    c.kubectl("apply", "-f", "-", input=classes)
    c.kubectl("apply", "-f", "-", input=nodes("n1", "n2"))
    low = [pod(f"low-{n}-{i}", "2", priority="low", node=n) for n in ("n1", "n2") for i in (0, 1)]
    c.kubectl("apply", "-f", "-", input="---\n".join(low))
    c.kubectl("apply", "-f", "-", input=gang("g", 3))
    c.kubectl("apply", "-f", "-", input="---\n".join(pod(f"m{i}", "2", group="g", priority="high") for i in range(3)))
    final = eventually_sync(
        lambda: placed(c),
        what="the gang bound after preemption",
        until=lambda p: all(p.get(f"m{i}") for i in range(3)),
        timeout=30,
    )
    lows = [n for n in final if n.startswith("low-")]
    assert len(lows) == 1, final  # three victims for three members: one low pod spared
    events = json.loads(c.kubectl("get", "events", "-o", "json"))["items"]
    preempted = {e["involvedObject"]["name"] for e in events if e.get("reason") == "Preempted"}
    assert len(preempted) == 3 and not preempted & set(lows), (preempted, lows)
