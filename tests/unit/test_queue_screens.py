"""The queue passes over a pooled pod whose every hint a screen rules out (``ClusterEventWithHint.
screen``/``pod_keys``), and moves exactly the pods it moves asking every hint: random pools of
pods rejected by a screened plugin, an unscreened one, one that registers nothing, or several,
under random events, with screening on and off side by side."""

from __future__ import annotations

from typing import Any

from conftest import profile, registry_with
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.backend.queue import SchedulingQueue
from kubesched.framework.events import NODE_ADD, ClusterEventWithHint, QueueingHint
from kubesched.framework.status import Status
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


class Screened(Rejecting):
    """Only the node a pod names (label ``wants``) may help it; the screen says so."""

    name = "Screened"

    def events_to_register(self) -> list[ClusterEventWithHint]:
        def hint(pod: dict[str, Any], old: Any, new: Any) -> QueueingHint:
            wants = ((pod.get("metadata") or {}).get("labels") or {}).get("wants")
            return QueueingHint.QUEUE if wants == new["metadata"]["name"] else QueueingHint.SKIP

        return [
            ClusterEventWithHint(
                NODE_ADD,
                hint,
                screen=lambda old, new: new["metadata"]["name"],
                pod_keys=lambda pod: {((pod.get("metadata") or {}).get("labels") or {}).get("wants")},
            )
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
        st.sampled_from([*NAMES, None]),
    ),
    max_size=12,
)


@settings(max_examples=200, deadline=None)
@given(PODS, st.lists(st.sampled_from(NAMES), min_size=1, max_size=5))
def test_screening_moves_exactly_the_pods_asking_every_hint_moves(
    pods: list[tuple[set[str], str | None]], events: list[str]
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
    for name in events:
        node = {"metadata": {"name": name}}
        moved = [q.on_event(NODE_ADD, None, node) for q in queues]
        assert moved[0] == moved[1]
        pooled = [sorted(e.pod_info.name for e in q._unschedulable.values()) for q in queues]
        assert pooled[0] == pooled[1]


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
