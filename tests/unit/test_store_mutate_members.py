"""Store.mutate with ``members`` (only those members, and metadata, copied) stores what a whole
copy would, and leaves the object it replaces as it was: the in-memory cluster's status and
annotation writes use it."""

from __future__ import annotations

import asyncio
import copy
from typing import Any

from kubesched.cluster.memory import InMemoryCluster
from kubesched.cluster.store import Store


def pod() -> dict[str, Any]:
    return {
        "metadata": {
            "name": "p",
            "namespace": "default",
            "uid": "u1",
            "creationTimestamp": "2026-01-01T00:00:00Z",
            "annotations": {"a": "1"},
            "labels": {"x": "y"},
        },
        "spec": {"containers": [{"name": "c"}]},
        "status": {"conditions": [{"type": "Ready", "status": "False"}], "nominatedNodeName": "n0"},
    }


def set_status(p: dict[str, Any]) -> None:
    status = p.setdefault("status", {})
    status["nominatedNodeName"] = "n1"
    status["conditions"] = [*status.get("conditions", ()), {"type": "PodScheduled", "status": "False"}]


def test_members_mutate_stores_what_a_whole_copy_would() -> None:
    whole, shallow = Store(), Store()
    for s in (whole, shallow):
        s.create("Pod", pod())
    old = shallow.get("Pod", "default", "p")
    before = copy.deepcopy(old)
    a = whole.mutate("Pod", "default", "p", set_status)
    b = shallow.mutate("Pod", "default", "p", set_status, members=("status",))
    assert a == b
    assert old == before  # the object replaced (a watcher's "old") is unchanged
    assert b["metadata"] is not old["metadata"] and b["status"] is not old["status"]


def test_cluster_writes_leave_the_replaced_object_alone() -> None:
    store = Store()
    store.create("Pod", pod())
    cluster = InMemoryCluster(store)
    first = store.get("Pod", "default", "p")
    before = copy.deepcopy(first)

    async def writes() -> None:
        await cluster.patch_pod_annotations(first, {"b": "2"})
        await cluster.set_nominated_node_name(first, "n2")
        await cluster.update_pod_condition(first, {"type": "PodScheduled", "status": "False"}, "")

    asyncio.run(writes())
    assert first == before
    now = store.get("Pod", "default", "p")
    assert now["metadata"]["annotations"] == {"a": "1", "b": "2"}
    assert now["status"]["nominatedNodeName"] is None  # cleared by the condition write
    assert [c["type"] for c in now["status"]["conditions"]] == ["Ready", "PodScheduled"]
