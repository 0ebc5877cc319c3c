"""The PodGroup's PodGroupInitiallyScheduled condition: written on the status with
observedGeneration, never set back from True, and written again on the newer object after a
Conflict (a controller wrote the PodGroup meanwhile)."""

from __future__ import annotations

import copy
from typing import Any

from kubesched.cluster.memory import InMemoryCluster
from kubesched.cluster.store import Store
from kubesched.scheduler.podgroup.condition import with_condition, write_condition


def group() -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "g", "namespace": "default", "generation": 3},
        "spec": {"schedulingPolicy": {"gang": {"minCount": 2}}},
    }


def test_true_is_never_set_back_and_the_same_is_not_written_twice() -> None:
    obj = with_condition(group(), "False", "Unschedulable", "why")
    assert obj is not None
    (cond,) = obj["status"]["conditions"]
    assert (cond["status"], cond["reason"], cond["message"], cond["observedGeneration"]) == (
        "False",
        "Unschedulable",
        "why",
        3,
    )
    assert with_condition(obj, "False", "Unschedulable", "why") is None
    true = with_condition(obj, "True", "Scheduled", "")
    assert true is not None and true["status"]["conditions"][0]["status"] == "True"
    assert with_condition(true, "False", "Unschedulable", "later") is None


async def test_a_conflict_is_retried_on_the_newer_object() -> None:
    store = Store()
    created = store.create("PodGroup", group())
    stale = copy.deepcopy(created)
    # A controller writes the PodGroup: the scheduler's copy is stale now.
    fresh = copy.deepcopy(created)
    fresh["metadata"].setdefault("labels", {})["touched"] = "yes"
    store.update("PodGroup", fresh)
    seen: list[str] = []

    def latest() -> dict[str, Any]:
        # The informer delivers the newer version after the first try.
        obj = stale if not seen else store.get("PodGroup", "default", "g")
        seen.append(obj["metadata"]["resourceVersion"])
        return obj

    await write_condition(InMemoryCluster(store), latest, "True", "Scheduled", "")
    assert len(seen) == 2 and seen[0] != seen[1]
    stored = store.get("PodGroup", "default", "g")
    assert stored["status"]["conditions"][0]["status"] == "True"
    assert stored["metadata"]["labels"] == {"touched": "yes"}
