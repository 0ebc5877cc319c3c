import asyncio

import pytest

from kubesched.framework.events import ActionType, EventResource, QueueingHint
from kubesched.framework.status import Code
from kubesched.plugins.scheduling_gates import SchedulingGates
from kubesched.testing import framework_for, make_pod


@pytest.mark.parametrize(
    ("pod", "code", "message"),
    [
        (make_pod("p"), None, None),
        (
            make_pod("p").scheduling_gate("foo").scheduling_gate("bar"),
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            "waiting for scheduling gates: [foo bar]",
        ),
        (
            make_pod("p").scheduling_gate("only"),
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            "waiting for scheduling gates: [only]",
        ),
    ],
    ids=["pod without gates", "pod with two gates", "pod with one gate"],
)
def test_pre_enqueue(pod, code, message) -> None:
    status = SchedulingGates().pre_enqueue(pod.info())
    if code is None:
        assert status is None
    else:
        assert status is not None and status.code is code
        assert status.reasons == [message]


def test_pre_enqueue_through_runtime_names_plugin() -> None:
    fw = framework_for(SchedulingGates)
    status = asyncio.run(fw.run_pre_enqueue(make_pod("p").scheduling_gate("g").info()))
    assert status is not None and status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert status.plugin == "SchedulingGates"
    assert asyncio.run(fw.run_pre_enqueue(make_pod("p").info())) is None


def test_events_gate_removal_of_the_pod_itself() -> None:
    events = SchedulingGates().events_to_register()
    assert len(events) == 1
    ev = events[0].event
    assert ev.resource is EventResource.UNSCHEDULED_POD
    assert ev.action == ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED
    gated = make_pod("p").scheduling_gate("g").obj()
    ungated = make_pod("p").obj()
    assert events[0].hint is not None
    assert events[0].hint(ungated, gated, ungated) is QueueingHint.QUEUE
