"""Members of a gang that arrive one by one, each waiting for the quorum: the queue holds them
as one pod group, gated as a whole (upstream's QueuedPodGroupInfo), and counts them so —
``scheduler_pending_pods`` by pod, ``scheduler_queued_entities`` one ``podgroup`` — until the
last member makes the quorum and the group is placed whole."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.testing import make_node, make_pod, running_scheduler

MEMBERS = 6


def pod_group(min_count: int) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "g", "namespace": "default"},
        "spec": {"schedulingPolicy": {"gang": {"minCount": min_count}}},
    }


def member(i: int) -> dict[str, Any]:
    pod: dict[str, Any] = make_pod(f"m{i}").req(cpu="1").obj()
    pod["spec"]["schedulingGroup"] = {"podGroupName": "g"}
    return pod


@pytest.mark.asyncio
async def test_a_gang_short_of_its_quorum_is_held_as_one_entity() -> None:
    calls: list[tuple[str, str, int, str]] = []
    async with running_scheduler(
        nodes=[
            make_node("n1").capacity(cpu="8", memory="16Gi", pods="110"),
            make_node("n2").capacity(cpu="8", memory="16Gi", pods="110"),
        ],
        objects=[pod_group(MEMBERS)],
        feature_gates={"GenericWorkload": True},
    ) as s:
        queue = s.scheduler.queue
        queue.on_incoming = lambda q, event, pods, kind: calls.append((q, event, pods, kind))
        s.add(make_pod("big").req(cpu="64"))  # an unrelated pod that cannot fit
        for i in range(MEMBERS - 1):
            s.add(member(i))
            await s.settle()
            counts, entities = queue.counts(), queue.entity_counts()
            assert counts["gated"] == i + 1  # every member waiting, counted as a pod
            assert entities["gated", "podgroup"] == 1  # ... of one group
            assert entities["unschedulable", "pod"] == 1  # "big", on its own
            assert {queue.where(s.pod(f"m{j}")["metadata"]["uid"]) for j in range(i + 1)} == {"gated"}
            group = queue.group(s.pod("m0")["metadata"]["uid"])
            assert group is not None and group.gating_plugin == "GangScheduling" and group.size == i + 1
        s.add(member(MEMBERS - 1))
        placements = {f"m{i}": await s.wait_bound(f"m{i}") for i in range(MEMBERS)}
        assert all(placements.values())
        assert queue.entity_counts()["gated", "podgroup"] == 0
        # the group entered activeQ whole: one entity of every member
        assert any(q == "active" and pods == MEMBERS and kind == "podgroup" for q, _, pods, kind in calls)
