"""The queue passes over a pooled pod whose every hint a screen rules out (``ClusterEventWithHint.
screen``/``pod_keys``), and moves exactly the pods it moves asking every hint: random pools of
pods rejected by a screened plugin, an unscreened one, one that registers nothing, or several,
under random events and changes of pooled pods' keys, with screening (and the pool's index of
keys) on and off side by side."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from conftest import profile, registry_with
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.backend.queue import SchedulingQueue
from kubesched.framework.events import NODE_ADD, ClusterEventWithHint, QueueingHint
from kubesched.framework.status import Status
from kubesched.framework.types import PodInfo
from kubesched.runtime.framework import Framework
from kubesched.testing import make_pod

NAMES = ["n0", "n1", "n2", "n3"]


class Rejecting:
    """Rejects every pod; registers no event (the plugins below register their own)."""

    name = "Deaf"

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    def filter(self, state: Any, pod: Any, node: Any) -> Status:
        return Status.unschedulable("no")

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return []


def _wants(pod: dict[str, Any]) -> Any:
    """The node a pod names: its status's ``wants`` (which may change while it waits in the pool,
    a status change moving nothing), else its label."""
    status = pod.get("status") or {}
    return status["wants"] if "wants" in status else ((pod.get("metadata") or {}).get("labels") or {}).get("wants")


class Screened(Rejecting):
    """Only the node a pod names may help it (any node one that names ``any``, whose keys cannot
    be had); the screen says so."""

    name = "Screened"

    def events_to_register(self) -> list[ClusterEventWithHint]:
        def hint(pod: dict[str, Any], old: Any, new: Any) -> QueueingHint:
            return QueueingHint.QUEUE if _wants(pod) in (new["metadata"]["name"], "any") else QueueingHint.SKIP

        def pod_keys(pod: dict[str, Any]) -> set[Any]:
            if _wants(pod) == "any":  # no keys to promise anything by: the hint is asked
                raise ValueError("any node")
            return {_wants(pod)}

        return [
            ClusterEventWithHint(NODE_ADD, hint, screen=lambda old, new: new["metadata"]["name"], pod_keys=pod_keys)
        ]


class Unscreened(Rejecting):
    """A node of an even number helps a pod that wants any node."""

    name = "Unscreened"

    def events_to_register(self) -> list[ClusterEventWithHint]:
        def hint(pod: dict[str, Any], old: Any, new: Any) -> QueueingHint:
            wants = ((pod.get("metadata") or {}).get("labels") or {}).get("wants")
            even = int(new["metadata"]["name"][1:]) % 2 == 0
            return QueueingHint.QUEUE if wants and even else QueueingHint.SKIP

        return [ClusterEventWithHint(NODE_ADD, hint)]


def _queue(screening: bool) -> SchedulingQueue:
    reg = registry_with(Screened, Unscreened, Rejecting)
    fw = Framework(profile(filter=["Screened", "Unscreened", "Deaf"]), reg)
    q = SchedulingQueue({"default-scheduler": fw}, clock=lambda: 1000.0)
    q.screening = screening
    return q


PODS = st.lists(
    st.tuples(
        st.sets(st.sampled_from(["Screened", "Unscreened", "Deaf", "Unknown"]), max_size=3),
        st.sampled_from([*NAMES, "any", None]),
    ),
    max_size=12,
)


#: An event (a node added), or a pooled pod's status naming another node (pod index, node).
STEPS = st.lists(
    st.one_of(st.sampled_from(NAMES), st.tuples(st.integers(0, 3), st.sampled_from([*NAMES, "any", "none"]))),
    min_size=1,
    max_size=10,
)


@settings(max_examples=300, deadline=None)
@given(PODS, STEPS)
def test_screening_moves_exactly_the_pods_asking_every_hint_moves(
    pods: list[tuple[set[str], str | None]], steps: list[Any]
) -> None:
    queues = [_queue(True), _queue(False)]
    for q in queues:
        for i, (rejectors, wants) in enumerate(pods):
            pod = make_pod(f"p{i}")
            if wants is not None:
                pod = pod.label("wants", wants)
            q.add(pod.info())
            qpi = q.pop_nowait()
            assert qpi is not None
            q.add_unschedulable_if_not_present(qpi, set(rejectors))
    for step in steps:
        if isinstance(step, tuple):
            i, wants = step
            for q in queues:
                pooled = [e for e in q._unschedulable.values() if e.pod_info.name == f"p{i}"]
                if pooled:  # a status change: the pod stays in the pool, its key changes
                    obj = copy.deepcopy(pooled[0].pod)
                    obj.setdefault("status", {})["wants"] = wants
                    q.update(PodInfo(obj))
            continue
        node = {"metadata": {"name": step}}
        moved = [q.on_event(NODE_ADD, None, node) for q in queues]
        assert moved[0] == moved[1]
        pooled_names = [sorted(e.pod_info.name for e in q._unschedulable.values()) for q in queues]
        assert pooled_names[0] == pooled_names[1]
    # The pods moved, in the order they come out.
    out = [[], []]
    for q, names in zip(queues, out):
        q.flush_backoff_completed()
        while (qpi := q.pop_nowait()) is not None:
            names.append(qpi.pod_info.name)
    assert out[0] == out[1]


def test_a_pod_only_the_screened_plugin_rejected_is_passed_over_unasked() -> None:
    asked: list[str] = []
    q = _queue(True)
    q.on_hint = lambda plugin, event, hint, seconds: asked.append(plugin)
    for name, wants in (("a", "n1"), ("b", "n2")):
        q.add(make_pod(name).label("wants", wants).info())
        qpi = q.pop_nowait()
        assert qpi is not None
        q.add_unschedulable_if_not_present(qpi, {"Screened"})
    assert q.on_event(NODE_ADD, None, {"metadata": {"name": "n1"}}) == 1
    assert asked == ["Screened"]  # b's hint was not asked; a's was, and it queued a


@pytest.mark.parametrize("screening", [True, False])
def test_a_pod_whose_keys_change_while_it_waits_is_found_by_its_new_keys(screening: bool) -> None:
    """A status change leaves a pod in the pool (it is no reason to retry it), but its keys may
    change with it: the pool indexes it again, and an event for its new key finds it."""
    q = _queue(screening)
    q.add(make_pod("p").label("wants", "n1").info())
    qpi = q.pop_nowait()
    assert qpi is not None
    q.add_unschedulable_if_not_present(qpi, {"Screened"})
    obj = copy.deepcopy(qpi.pod)
    obj.setdefault("status", {})["wants"] = "n2"
    q.update(PodInfo(obj))
    assert [e.pod_info.name for e in q._unschedulable.values()] == ["p"]  # still waiting
    assert q.on_event(NODE_ADD, None, {"metadata": {"name": "n1"}}) == 0
    assert q.on_event(NODE_ADD, None, {"metadata": {"name": "n2"}}) == 1
