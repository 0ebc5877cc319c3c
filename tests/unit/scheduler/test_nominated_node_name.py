"""NominatedNodeNameForExpectation (KEP-5278, on by default in 1.37): the binding cycle writes
``status.nominatedNodeName`` when PreBind has work (PreBindPreFlight) or the pod waits on
Permit; a failure clears it, the API server's binding clears it, and an assumed pod is not
also counted as nominated. Cases transcribed from upstream's
TestNominatedNodeNameForExpectation (test/integration/scheduler) and RunPreBindPreFlights."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from conftest import make_harness, profile, registry_with

from kubesched.framework.features import FeatureGates
from kubesched.framework.interface import CycleState
from kubesched.framework.status import Status
from kubesched.framework.types import PodInfo
from kubesched.runtime.framework import Framework
from kubesched.scheduler import SchedulerOptions
from kubesched.scheduler.binding_cycle import run_pre_bind_pre_flights
from kubesched.testing import make_node, make_pod

#: What the test plugins saw: the pod's nominatedNodeName in the cluster while in PreBind.
SEEN: dict[str, Any] = {}


class Blocking:
    """A PreBind with work; it notes the nominatedNodeName the cluster shows, then waits for
    ``SEEN["release"]`` and answers ``SEEN["answer"]``."""

    name = "Blocking"

    def __init__(self, args: Any, handle: Any) -> None:
        self.handle = handle

    def pre_bind_pre_flight(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        return None

    async def pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        live = await self.handle.cluster.get_pod(pod.namespace, pod.name)
        SEEN["during"] = (live.get("status") or {}).get("nominatedNodeName")
        await SEEN["release"].wait()
        answer: Status | None = SEEN.get("answer")
        return answer


class NothingToDo:
    """A PreBind whose preflight says it has nothing to do."""

    name = "NothingToDo"

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    def pre_bind_pre_flight(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        return Status.skip()

    def pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        return None


class WaitPermit:
    name = "WaitPermit"

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    def permit(self, state: CycleState, pod: PodInfo, node_name: str) -> Any:
        return Status.wait(), 600


class PassPermit:
    name = "PassPermit"

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    def permit(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        return None


@pytest.fixture(autouse=True)
def _reset() -> None:
    SEEN.clear()
    SEEN["release"] = asyncio.Event()


def options(enabled: bool) -> SchedulerOptions:
    return SchedulerOptions(
        seed=1, feature_gates=FeatureGates({"NominatedNodeNameForExpectation": enabled}), record_results=True
    )


async def nominated_while_binding(point: str | None, plugin: type | None, enabled: bool) -> str | None:
    """Schedule one pod with ``plugin`` at ``point`` (beside a recording PreBind that has no
    work of its own unless it is the plugin), and return the nominatedNodeName the cluster
    showed while the binding cycle was under way."""
    points: dict[str, list[Any]] = {"preBind": ["NothingToDo"]}
    classes: list[type] = [NothingToDo]
    if plugin is not None and point is not None:
        points.setdefault(point, []).append(plugin.name)
        classes.append(plugin)
    h = await make_harness(
        [profile(**points)], registry_with(*classes), options(enabled), objs=[make_node("n1"), make_pod("p")]
    )
    sched = h.scheduler
    await h.cluster.wait_delivered()
    qpi = sched.queue.pop_nowait()
    assert qpi is not None
    await sched.schedule_one(qpi)
    for _ in range(20):
        await asyncio.sleep(0)
    await h.cluster.wait_delivered()
    if plugin is Blocking:
        during = SEEN["during"]
    else:
        during = (h.pod("p").get("status") or {}).get("nominatedNodeName")
    SEEN["release"].set()
    for wp in list(sched.waiting_pods):
        wp.allow(WaitPermit.name)
    await h.settle()
    assert h.node_of("p") == "n1"
    # The binding clears it, as kube-apiserver does since 1.35.
    assert not (h.pod("p").get("status") or {}).get("nominatedNodeName")
    await sched.stop(grace=1)
    await h.cluster.stop()
    return during  # type: ignore[no-any-return]


@pytest.mark.parametrize("enabled", [True, False], ids=["gate on", "gate off"])
@pytest.mark.parametrize(
    "point,plugin,expected",
    [
        ("preBind", Blocking, True),
        ("permit", WaitPermit, True),
        ("permit", PassPermit, False),
        (None, None, False),
    ],
    ids=[
        "put if PreBind will run",
        "put if Permit will wait",
        "not put if Permit won't wait",
        "not put if neither Permit nor PreBind will run",
    ],
)
async def test_nominated_node_name_for_expectation(point: str, plugin: type, expected: bool, enabled: bool) -> None:
    during = await nominated_while_binding(point, plugin, enabled)
    assert during == ("n1" if expected and enabled else None)


async def test_a_failed_binding_cycle_clears_the_nomination_it_wrote() -> None:
    SEEN["answer"] = Status.as_error("provisioning failed")
    h = await make_harness(
        [profile(preBind=["Blocking"])], registry_with(Blocking), options(True), objs=[make_node("n1"), make_pod("p")]
    )
    sched = h.scheduler
    await h.cluster.wait_delivered()
    await sched.schedule_one(sched.queue.pop_nowait())  # type: ignore[arg-type]
    for _ in range(20):
        await asyncio.sleep(0)
    assert SEEN["during"] == "n1"
    SEEN["release"].set()
    await h.settle()
    await sched.wait_for_bindings()
    await h.settle()
    assert h.node_of("p") is None
    assert not (h.pod("p").get("status") or {}).get("nominatedNodeName")
    assert sched.ctx.nominator.node_of(h.pod("p")["metadata"]["uid"]) is None
    await sched.stop(grace=1)
    await h.cluster.stop()


async def test_an_assumed_pod_is_not_also_counted_as_nominated() -> None:
    h = await make_harness(
        [profile(preBind=["Blocking"])], registry_with(Blocking), options(True), objs=[make_node("n1"), make_pod("p")]
    )
    sched = h.scheduler
    await h.cluster.wait_delivered()
    await sched.schedule_one(sched.queue.pop_nowait())  # type: ignore[arg-type]
    for _ in range(20):
        await asyncio.sleep(0)
    await h.cluster.wait_delivered()  # the pod's update (nominatedNodeName n1) has arrived
    assert (h.pod("p").get("status") or {}).get("nominatedNodeName") == "n1"
    assert not sched.ctx.nominator.has_nominated("n1")
    SEEN["release"].set()
    await h.settle()
    await sched.stop(grace=1)
    await h.cluster.stop()


async def test_a_nomination_written_by_another_component_is_honoured() -> None:
    # An autoscaler expects the pod on n2: the scheduler tries n2 first, and holds it for the
    # pod against lower-priority pods meanwhile.
    h = await make_harness(
        [profile(filter=["NodeResourcesFit"], preFilter=["NodeResourcesFit"], score=["NodeResourcesFit"])],
        None,
        options(True),
        objs=[make_node("n1").capacity(cpu="4", pods="10"), make_node("n2").capacity(cpu="1", pods="10")],
    )
    h.add(make_pod("expected").priority(10).req(cpu="1").set("status.nominatedNodeName", "n2"))
    await h.cluster.wait_delivered()
    assert h.scheduler.ctx.nominator.node_of(h.pod("expected")["metadata"]["uid"]) == "n2"
    h.add(make_pod("other").priority(1).req(cpu="1"))
    await h.cluster.wait_delivered()
    await h.run_all()
    assert h.node_of("expected") == "n2"  # LeastAllocated alone would have picked n1
    assert h.node_of("other") == "n1"
    await h.scheduler.stop(grace=1)
    await h.cluster.stop()


# --- RunPreBindPreFlights -------------------------------------------------------------------------
def _preflight(name: str, answer: Any) -> type:
    def check(self: Any, state: Any, pod: Any, node: Any) -> Any:
        if isinstance(answer, Exception):
            raise answer
        return answer

    return type(
        name,
        (),
        {
            "name": name,
            "__init__": lambda self, a, h: None,
            "pre_bind_pre_flight": check,
            "pre_bind": lambda self, s, p, n: None,
        },
    )


@pytest.mark.parametrize(
    "answers,want",
    [
        ([], "Skip"),
        ([Status.skip(), Status.skip()], "Skip"),
        ([Status.skip(), None], "Success"),
        ([None, Status.skip()], "Success"),
        ([Status.skip(), Status.as_error("boom")], "Error"),
        ([None, RuntimeError("boom")], "Error"),
    ],
    ids=["no plugins", "all skip", "one has work", "first has work", "an error", "an exception"],
)
async def test_run_pre_bind_pre_flights(answers: list[Any], want: str) -> None:
    classes = [_preflight(f"P{i}", a) for i, a in enumerate(answers)]
    fw = Framework(profile(preBind=[c.name for c in classes]), registry_with(*classes))
    status = await run_pre_bind_pre_flights(fw, CycleState(), make_pod("p").info(), "n1")
    assert (status.code.upstream_name if status is not None else "Success") == want
    if want == "Error":
        assert status is not None and status.plugin == classes[-1].name


class Annotating:
    """A PreBind that writes an annotation on the pod (as GPU-sharing plugins write their GPU
    indices), with nothing to wait for."""

    name = "Annotating"

    def __init__(self, args: Any, handle: Any) -> None:
        self.handle = handle

    async def pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        await self.handle.cluster.patch_pod_annotations(pod.pod, {"example.com/slot": "3"})
        return None


async def test_what_a_binding_cycle_writes_does_not_queue_the_pod_again() -> None:
    # The annotation's update can arrive after the binding cycle is over but before the binding
    # does: the pod is assumed then, and upstream's updatePodInSchedulingQueue returns for it.
    h = await make_harness(
        [profile(preBind=["Annotating"])], registry_with(Annotating), options(True), objs=[make_node("n1")]
    )
    sched = h.scheduler
    added: list[str] = []
    add = sched.queue.add

    def counting(pod: PodInfo, *args: Any, **kwargs: Any) -> Any:
        added.append(pod.name)
        return add(pod, *args, **kwargs)

    sched.queue.add = counting  # type: ignore[method-assign]
    h.add(make_pod("p"))
    await h.cluster.wait_delivered()
    await h.run_all()
    assert h.node_of("p") == "n1"
    assert (h.pod("p")["metadata"].get("annotations") or {}).get("example.com/slot") == "3"
    assert added == ["p"]
    await sched.stop(grace=1)
    await h.cluster.stop()
