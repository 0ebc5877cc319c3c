"""Preemption that finds no candidate clears the preemptor's nomination, as kube-scheduler 1.37
does: DefaultPreemption's PostFilter then answers a result with an empty nominated node
(upstream's NewPostFilterResultWithNominatedNode("")), and the failure report writes the empty
``status.nominatedNodeName``. A PostFilter that gives no result (the preemptor is not eligible)
leaves the nomination as it is."""

from __future__ import annotations

from typing import Any

from conftest import make_harness, profile

from kubesched.testing import make_node, make_pod


def _profile() -> Any:
    return profile(preFilter=["NodeResourcesFit"], filter=["NodeResourcesFit"], postFilter=["DefaultPreemption"])


async def _attempt(pending: Any) -> Any:
    running = make_pod("running").node("n1").priority(1000).req(cpu="1")
    h = await make_harness([_profile()], objs=[make_node("n1").capacity(cpu="1", pods="10"), running])
    # The nomination an earlier preemption wrote; the pod is not placed there yet.
    h.add(pending.set("status.nominatedNodeName", "n1"))
    await h.settle()
    uid = h.pod("p")["metadata"]["uid"]
    assert [p.uid for p in h.scheduler.ctx.nominator.nominated_pods_for_node("n1")] == [uid]
    await h.run_once()
    return h, uid


async def test_preemption_without_candidates_clears_the_nomination() -> None:
    # Only a higher-priority pod runs on n1: no victims anywhere.
    h, uid = await _attempt(make_pod("p").priority(10).req(cpu="1"))
    assert h.node_of("p") is None
    assert not h.pod("p")["status"].get("nominatedNodeName")
    assert h.scheduler.ctx.nominator.nominated_pods_for_node("n1") == []
    assert h.scheduler.results["default/p"].message == (
        "0/1 nodes are available: 1 Insufficient cpu. "
        "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."
    )
    assert h.scheduler.queue.where(uid) == "unschedulable"


async def test_preemptor_not_eligible_keeps_its_nomination() -> None:
    # preemptionPolicy Never: PostFilter returns no result, so nothing is changed.
    h, uid = await _attempt(make_pod("p").priority(10).preemption_policy("Never").req(cpu="1"))
    assert h.node_of("p") is None
    assert h.pod("p")["status"]["nominatedNodeName"] == "n1"
    assert [p.uid for p in h.scheduler.ctx.nominator.nominated_pods_for_node("n1")] == [uid]
