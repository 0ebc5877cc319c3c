"""A large gang's members arriving one by one cost each about the same, however large the gang:
counted in calls, never in time.

While a gang is short of its quorum its members wait in the pool as one group, gated by
GangScheduling's PreEnqueue. Each new member is news to that group (upstream's queueing hint
queues it), and the check that answers — "are ``minCount`` members known yet?" — is O(1) (the
pod-group index keeps the count). What makes or breaks a 1000-member gang is how often it is
asked: once per arrival (the group is asked up to its first held member, and the first is held
for the same reason as every other), and once per member when the quorum is met and the group
moves to activeQ. Asking every pooled member on each arrival, as the queue once did, makes n²/2
checks: 20 100 for 200 members instead of 399.

One group of 50, 100 and 200 members (every member 100m on eight 64-CPU nodes, half of them
created 10 s after the others) runs through ``simulate``: a gang whose ``minCount`` is its size,
one whose ``minCount`` is a quarter of it (the later members join a group that passed its gate:
the queue once cleared every member's gated mark on each of them, n²/2 writes), a basic group.

* the quorum checks (PreEnqueue, the index's member count), the hint calls and the queue's gate
  runs, counted with a wrapper: at most two per member at every size;
* the pod-group index's walks over a whole group (``state``) do not grow with the gang;
* the lines run on the arrival path (the queue, the cache, the pod-group index, the event
  handlers, GangScheduling), counted with a trace hook: a member adds as many lines from 100
  to 200 members as from 50 to 100 (anything O(n) per arrival on that path, a loop over the
  members without a call in it too, makes the second step dearer)."""

from __future__ import annotations

import os
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any
from unittest.mock import patch

import pytest
from test_pod_group_liveness import node, pod, simulate

import kubesched
from kubesched.backend.pod_groups import PodGroupIndex
from kubesched.backend.queue import SchedulingQueue
from kubesched.plugins.gangscheduling import GangScheduling

#: The gangs' sizes, each twice the one before.
SIZES = (50, 100, 200)
#: Quorum checks and hint calls per member, at most.
PER_MEMBER = 2
#: How much more a member may cost from 100 to 200 members than from 50 to 100, in lines run on
#: the arrival path: 1.00 as it is; a walk of the group's members on each arrival, one line a
#: member, makes it about 1.15.
MARGINAL_SLACK = 1.05


#: The groups' policies: a gang whose quorum is every member, one whose quorum is a quarter of
#: them (the members after it join a group in activeQ or being scheduled), a basic group.
POLICIES: dict[str, Callable[[int], dict[str, Any]]] = {
    "gang": lambda members: {"gang": {"minCount": members}},
    "gang of a quarter": lambda members: {"gang": {"minCount": max(1, members // 4)}},
    "basic": lambda members: {"basic": {}},
}


def gang(members: int, policy: str = "gang") -> list[dict[str, Any]]:
    """One group of ``members`` under ``policy``, half of them created 10 s later."""
    docs: list[dict[str, Any]] = [
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "p100"}, "value": 100}
    ]
    docs += [node(f"n{i}", 64) for i in range(8)]
    docs.append(
        {
            "apiVersion": "scheduling.k8s.io/v1beta1",
            "kind": "PodGroup",
            "metadata": {"name": "g"},
            "spec": {"schedulingPolicy": POLICIES[policy](members)},
        }
    )
    pods = [pod(f"g-m{k}", 100, group="g") for k in range(members)]
    for p in pods:
        p["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "100m"
    half = members // 2
    docs += pods[:half]
    docs.append({"apiVersion": "kubesched.io/v1", "kind": "Steps", "steps": [{"at": "10s", "create": pods[half:]}]})
    return docs


def bound(report: dict[str, Any]) -> int:
    return sum(1 for p in report["pods"] if p.get("node"))


COUNTED: list[tuple[type, str]] = [
    (GangScheduling, "pre_enqueue"),
    (GangScheduling, "after_pod_added"),
    (PodGroupIndex, "member_count"),
    (PodGroupIndex, "state"),
    (SchedulingQueue, "_gate"),
]


@contextmanager
def counting() -> Iterator[Counter[str]]:
    """Count the calls of every method in COUNTED, by name."""
    calls: Counter[str] = Counter()

    def counted(name: str, method: Callable[..., Any]) -> Callable[..., Any]:
        def call(self: Any, *args: Any, **kwargs: Any) -> Any:
            calls[name] += 1
            return method(self, *args, **kwargs)

        return call

    with ExitStack() as stack:
        for cls, name in COUNTED:
            stack.enter_context(patch.object(cls, name, counted(name, getattr(cls, name))))
        yield calls


#: The arrival path: the queue, the cache and the pod-group index (kubesched/backend), the event
#: handlers, GangScheduling. The lines run there are counted.
ARRIVAL_PATH = (
    str(Path(kubesched.__file__).parent / "backend") + os.sep,
    str(Path(kubesched.__file__).parent / "scheduler" / "eventhandlers.py"),
    str(Path(kubesched.__file__).parent / "plugins" / "gangscheduling.py"),
)


@dataclass
class Run:
    members: int
    #: calls of each method in COUNTED
    counted: Counter[str]
    #: lines run on the arrival path (None: another tracer, coverage say, was in place)
    lines: int | None


def run(members: int, policy: str) -> Run:
    """The group of ``members`` through ``simulate``, its calls and lines counted."""
    lines = 0

    def line(frame: FrameType, event: str, arg: Any) -> Any:
        nonlocal lines
        if event == "line":
            lines += 1
        return line

    def call(frame: FrameType, event: str, arg: Any) -> Any:
        return line if frame.f_code.co_filename.startswith(ARRIVAL_PATH) else None

    traced = sys.gettrace() is None
    with counting() as counted:
        if traced:
            sys.settrace(call)
        try:
            report = simulate(gang(members, policy))
        finally:
            if traced:
                sys.settrace(None)
    assert bound(report) == members
    return Run(members, counted, lines if traced else None)


@pytest.fixture(scope="module", params=list(POLICIES))
def runs(request: pytest.FixtureRequest) -> list[Run]:
    return [run(members, request.param) for members in SIZES]


def test_quorum_checks_grow_with_the_gang_not_its_square(runs: list[Run]) -> None:
    for r in runs:
        assert r.counted["pre_enqueue"] >= r.members  # each member passed the gate: counted
        for name in ("pre_enqueue", "member_count", "after_pod_added", "_gate"):
            n = r.counted[name]
            assert n <= PER_MEMBER * r.members, f"{name}: {n} calls for {r.members} members"
    # a walk over the whole group happens a fixed number of times, not once per member
    assert len({r.counted["state"] for r in runs}) == 1


def test_each_further_member_costs_the_same_lines(runs: list[Run]) -> None:
    """What a member adds to the run, from 50 to 100 members and from 100 to 200: the same when
    the arrival path is linear in the gang, more at the larger size when it is not."""
    (a, small), (b, mid), (c, large) = ((r.members, r.lines) for r in runs)
    if small is None or mid is None or large is None:
        pytest.skip("another tracer was in place: the lines were not counted")
    first, second = (mid - small) / (b - a), (large - mid) / (c - b)
    assert second <= MARGINAL_SLACK * first, (
        f"a member adds {second:.0f} lines between {b} and {c} members, {first:.0f} between {a} and {b}"
    )
