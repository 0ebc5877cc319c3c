"""Deleting a pod as kube-apiserver does (kubesched.cluster.termination): the grace period after
the pod strategy's CheckGracefulDelete (upstream's TestCheckGracefulDelete cases: phase, node,
options) and the rules of a second DELETE after rest.BeforeDelete (only shorter, 0 removes,
negative counts as 1)."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

import pytest

from kubesched.cluster.base import NotFound
from kubesched.cluster.store import Store
from kubesched.cluster.termination import DEFAULT_GRACE_SECONDS, delete_pod, grace_period, terminating


def pod(name: str = "p", node: str = "n1", phase: str | None = None, grace: int | None = 30) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "x"}]}
    if node:
        spec["nodeName"] = node
    if grace is not None:
        spec["terminationGracePeriodSeconds"] = grace
    obj: dict[str, Any] = {"metadata": {"name": name, "namespace": "default"}, "spec": spec}
    if phase:
        obj["status"] = {"phase": phase}
    return obj


def graceful_store(*pods: dict[str, Any]) -> Store:
    store = Store()
    store.pod_termination = "graceful"
    for p in pods:
        store.create("Pod", p)
    return store


def seconds_until(stamp: str) -> float:
    return datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC).timestamp() - time.time()


# TestCheckGracefulDelete: (pod, DeleteOptions.gracePeriodSeconds) -> the period
@pytest.mark.parametrize(
    ("obj", "requested", "expected"),
    [
        pytest.param(pod(phase="Pending"), None, 30, id="in pending phase with has node name"),
        pytest.param(pod(phase="Failed"), None, 0, id="in failed phase"),
        pytest.param(pod(phase="Succeeded"), None, 0, id="in succeeded phase"),
        pytest.param(pod(phase="Pending", node=""), None, 0, id="no phase, not scheduled: deleted at once"),
        pytest.param(pod(phase="Running"), 5, 5, id="options' period over the pod's"),
        pytest.param(pod(phase="Running"), 0, 0, id="options' 0"),
        pytest.param(pod(phase="Running", grace=None), None, DEFAULT_GRACE_SECONDS, id="unset: the API default"),
        pytest.param(pod(phase="Running", node=""), 5, 0, id="not scheduled: 0 whatever asked"),
    ],
)
def test_grace_period(obj: dict[str, Any], requested: int | None, expected: int) -> None:
    assert grace_period(obj, requested) == expected


def test_a_bound_pod_is_marked_not_removed() -> None:
    store = graceful_store(pod(grace=20))
    got = delete_pod(store, "default", "p")
    meta = store.get("Pod", "default", "p")["metadata"]
    assert got["metadata"]["deletionTimestamp"] == meta["deletionTimestamp"]
    assert meta["deletionGracePeriodSeconds"] == 20
    assert 18 <= seconds_until(meta["deletionTimestamp"]) <= 21
    assert terminating(store.get("Pod", "default", "p")) == 20


@pytest.mark.parametrize(
    "obj",
    [
        pytest.param(pod(node=""), id="never bound"),
        pytest.param(pod(phase="Succeeded"), id="finished"),
        pytest.param(pod(grace=0), id="no grace period"),
    ],
)
def test_goes_at_once(obj: dict[str, Any]) -> None:
    store = graceful_store(obj)
    delete_pod(store, "default", "p")
    with pytest.raises(NotFound):
        store.get("Pod", "default", "p")


def test_immediate_termination_removes_a_bound_pod_at_once() -> None:
    store = Store()
    store.create("Pod", pod(grace=600))
    delete_pod(store, "default", "p")
    with pytest.raises(NotFound):
        store.get("Pod", "default", "p")


def test_a_second_delete_only_shortens() -> None:
    store = graceful_store(pod(grace=600))
    delete_pod(store, "default", "p")
    first = store.get("Pod", "default", "p")["metadata"]
    # Longer or unset: nothing changes (kube-apiserver answers the pending deletion).
    delete_pod(store, "default", "p", 900)
    delete_pod(store, "default", "p")
    assert store.get("Pod", "default", "p")["metadata"]["deletionTimestamp"] == first["deletionTimestamp"]
    # Shorter: the period and the moment move back together.
    delete_pod(store, "default", "p", 60)
    meta = store.get("Pod", "default", "p")["metadata"]
    assert meta["deletionGracePeriodSeconds"] == 60
    assert 57 <= seconds_until(meta["deletionTimestamp"]) <= 61
    # 0: gone.
    delete_pod(store, "default", "p", 0)
    with pytest.raises(NotFound):
        store.get("Pod", "default", "p")


def test_a_negative_period_counts_as_one_second() -> None:
    store = graceful_store(pod(grace=600))
    delete_pod(store, "default", "p", -5)
    assert store.get("Pod", "default", "p")["metadata"]["deletionGracePeriodSeconds"] == 1


def test_no_pod_is_not_found() -> None:
    with pytest.raises(NotFound):
        delete_pod(graceful_store(), "default", "missing")


def test_generation_moves_with_the_mark() -> None:
    obj = pod()
    obj["metadata"]["generation"] = 3
    store = graceful_store(obj)
    delete_pod(store, "default", "p")
    assert store.get("Pod", "default", "p")["metadata"]["generation"] == 4
