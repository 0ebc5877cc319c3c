"""Members of a gang that arrive one by one, each waiting for the quorum: the queue holds them
as upstream's hint and PreEnqueue would, pod for pod, whether it asks GangScheduling again for
every member (its verdict declared per pod) or only for the first of a group that is still held
(``pre_enqueue_by_pod_group``): the same pool order, the same incoming-pods counts, the same
placements once the last member makes the quorum."""

from __future__ import annotations

from typing import Any
from unittest.mock import patch

import pytest

from kubesched.plugins.gangscheduling import GangScheduling
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


async def arrive_one_by_one() -> tuple[list[list[str]], dict[str, int], list[tuple[str, str]], dict[str, str | None]]:
    """After each member's arrival: the pool's order; at the end the incoming counts by event,
    the metric's calls, and where every member went."""
    pools: list[list[str]] = []
    calls: list[tuple[str, str]] = []
    async with running_scheduler(
        nodes=[
            make_node("n1").capacity(cpu="8", memory="16Gi", pods="110"),
            make_node("n2").capacity(cpu="8", memory="16Gi", pods="110"),
        ],
        objects=[pod_group(MEMBERS)],
        feature_gates={"GenericWorkload": True},
    ) as s:
        queue = s.scheduler.queue
        queue.on_incoming = lambda q, event, pods: calls.extend([(q, event)] * pods)
        # an unrelated pod that cannot fit, pooled between the members
        s.add(make_pod("big").req(cpu="64"))
        for i in range(MEMBERS):
            s.add(member(i))
            await s.settle()
            pools.append([q.pod_info.name for q in queue._unschedulable.values()])
        placements = {f"m{i}": await s.wait_bound(f"m{i}") for i in range(MEMBERS)}
        return pools, dict(queue.incoming), calls, placements


@pytest.mark.asyncio
async def test_holding_the_group_at_once_is_holding_each_member() -> None:
    fast = await arrive_one_by_one()
    with patch.object(GangScheduling, "pre_enqueue_by_pod_group", False):
        slow = await arrive_one_by_one()
    assert fast[0] == slow[0]  # the pool's order after each arrival
    assert fast[1] == slow[1] and sorted(fast[2]) == sorted(slow[2])  # incoming counts, the metric
    assert fast[3] == slow[3] and all(fast[3].values())  # every member bound, on the same node
    # the members already waiting were held again at each arrival: counted as gated each time
    held_again = sum(1 for q, event in fast[2] if q == "gated" and event != "PodAdd")
    assert held_again >= MEMBERS - 2
