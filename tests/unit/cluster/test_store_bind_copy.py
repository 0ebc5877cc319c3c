"""A binding copies only what it changes: the pod bound is the pod as a whole copy changed
would be, member for member and in the same order, and the pod it replaced (kept in the watch
history, held by watchers) is left as it was."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kubesched.cluster.base import Conflict
from kubesched.cluster.store import Store, json_copy


def _pod(**status: Any) -> dict[str, Any]:
    pod: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default", "labels": {"app": "a"}},
        "spec": {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "1"}}}]},
    }
    if status:
        pod["status"] = status
    return pod


def _dumps(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"))


@pytest.mark.parametrize(
    "status",
    [
        {},
        {"phase": "Pending"},
        {
            "phase": "Pending",
            "nominatedNodeName": "n0",
            "conditions": [
                {"type": "PodScheduled", "status": "False", "reason": "Unschedulable"},
                {"type": "Other", "status": "True"},
            ],
            "qosClass": "Burstable",
        },
    ],
)
def test_a_bound_pod_is_the_pod_changed_and_the_old_one_stays(status: dict[str, Any]) -> None:
    store = Store()
    old = store.create("Pod", _pod(**status))
    before = _dumps(old)
    bound = store.bind("default", "p", "n1")
    # What the binding made, made again from a whole copy.
    expected = json_copy(old)
    expected["spec"]["nodeName"] = "n1"
    conditions = [c for c in expected.setdefault("status", {}).get("conditions") or () if c["type"] != "PodScheduled"]
    conditions.append(bound["status"]["conditions"][-1])
    expected["status"]["conditions"] = conditions
    expected["status"].pop("nominatedNodeName", None)
    expected["metadata"]["resourceVersion"] = bound["metadata"]["resourceVersion"]
    assert _dumps(bound) == _dumps(expected)
    assert bound["status"]["conditions"][-1]["type"] == "PodScheduled"
    # The replaced pod is as it was: its own metadata, spec and status, not the bound one's.
    assert _dumps(old) == before
    assert store.get("Pod", "default", "p") is bound
    # What neither changed is one object in both (nothing changes a stored object in place).
    assert bound["spec"]["containers"] is old["spec"]["containers"]
    assert bound["metadata"] is not old["metadata"] and bound["spec"] is not old["spec"]


def test_a_second_binding_conflicts_and_changes_nothing() -> None:
    store = Store()
    store.create("Pod", _pod())
    bound = store.bind("default", "p", "n1")
    text = _dumps(bound)
    with pytest.raises(Conflict, match='already assigned to node "n1"'):
        store.bind("default", "p", "n2")
    assert store.get("Pod", "default", "p") is bound
    assert _dumps(bound) == text
