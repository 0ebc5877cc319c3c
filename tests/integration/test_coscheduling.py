"""The out-of-tree Coscheduling plugin (plugins/coscheduling), through the real scheduler loop."""

from __future__ import annotations

import asyncio
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import Harness, make_harness

from kubesched import CycleState, EventResource, PodInfo, QueueingHint
from kubesched.framework.features import FeatureGates
from kubesched.runtime.framework import PluginRef, ProfileSpec
from kubesched.runtime.registry import Registry, default_registry
from kubesched.scheduler import SchedulerOptions
from kubesched.testing import PodBuilder, make_node, make_pod

PACKAGE = Path(__file__).resolve().parents[2] / "plugins" / "coscheduling"
sys.path.insert(0, str(PACKAGE))

from kubesched_coscheduling import (  # noqa: E402
    MIN_AVAILABLE_LABEL,
    POD_GROUP_LABEL,
    POD_GROUP_NAME_LABEL,
    Coscheduling,
    CoschedulingArgs,
    PodGroupRef,
    pod_group_of,
)
from kubesched_coscheduling.coscheduling import InvalidPodGroup  # noqa: E402

SCHED = "default-scheduler"


def registry() -> Registry:
    """The installed plugins plus this checkout's Coscheduling (replacing an installed one)."""
    reg = Registry()
    for e in default_registry().entries():
        if e.name != Coscheduling.name:
            reg.register(e.cls, e.name, e.distribution)
    reg.register(Coscheduling)
    return reg


def gang_profile(**args: Any) -> ProfileSpec:
    """NodeResourcesFit and Coscheduling at every point Coscheduling implements, as multiPoint
    would enable them."""
    points = {
        "queueSort": ["Coscheduling"],
        "preEnqueue": ["Coscheduling"],
        "preFilter": ["NodeResourcesFit", "Coscheduling"],
        "filter": ["NodeResourcesFit"],
        "postFilter": ["Coscheduling"],
        "reserve": ["Coscheduling"],
        "permit": ["Coscheduling"],
        "bind": ["DefaultBinder"],
    }
    return ProfileSpec(
        SCHED,
        {point: [PluginRef(n) for n in names] for point, names in points.items()},
        {"Coscheduling": CoschedulingArgs.model_validate(args)},
    )


def member(name: str, group: str, min_available: int | None, cpu: str = "1", legacy: bool = True) -> PodBuilder:
    pod = make_pod(name).req(cpu=cpu)
    pod.label(POD_GROUP_NAME_LABEL if legacy else POD_GROUP_LABEL, group)
    if min_available is not None:
        pod.label(MIN_AVAILABLE_LABEL, str(min_available))
    return pod


def gang(group: str, size: int, min_available: int, legacy: bool = True) -> list[PodBuilder]:
    return [member(f"{group}-{i}", group, min_available, legacy=legacy) for i in range(size)]


def node(name: str = "n1", cpu: str = "4") -> Any:
    return make_node(name).capacity(cpu=cpu, memory="8Gi", pods="110")


async def gang_harness(*objs: Any, **args: Any) -> Harness:
    return await make_harness([gang_profile(**args)], registry(), objs=objs)


def released(group: str, pod: str) -> str:
    """What PostFilter adds to a member's message when it lets the group go (as it is: the
    scheduler puts no period after a PostFilter message)."""
    return f"PodGroup default/{group} gets rejected due to Pod {pod} is unschedulable even after PostFilter"


# --- the group is bound together ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("nodes", "expected"),
    [
        ([node("n1", cpu="4")], {"g-0": "n1", "g-1": "n1", "g-2": "n1"}),
        ([node("n1", cpu="1"), node("n2", cpu="1"), node("n3", cpu="1")], None),
    ],
    ids=["one-node-holds-all", "one-member-per-node"],
)
@pytest.mark.parametrize("legacy", [True, False], ids=["pod-group-name-label", "x-k8s-pod-group-label"])
async def test_group_is_bound_together_once_the_last_member_reaches_permit(
    nodes: list[Any], expected: dict[str, str] | None, legacy: bool
) -> None:
    h = await gang_harness(*nodes, *gang("g", 3, 3, legacy=legacy))
    assert await h.schedule_next() == "g-0"
    assert await h.schedule_next() == "g-1"
    assert h.waiting() == {"g-0", "g-1"}
    assert [h.node_of(f"g-{i}") for i in range(3)] == [None, None, None]
    assert await h.schedule_next() == "g-2"
    await h.settle()
    placed = {f"g-{i}": h.node_of(f"g-{i}") for i in range(3)}
    if expected is not None:
        assert placed == expected
    else:
        # Assumed members hold their room: each small node takes exactly one.
        assert sorted(placed.values()) == ["n1", "n2", "n3"]
    assert h.waiting() == set()


async def test_member_beyond_min_available_is_permitted_at_once() -> None:
    h = await gang_harness(node(), *gang("g", 3, 2))
    for _ in range(2):
        await h.schedule_next()
    await h.settle()
    assert h.node_of("g-0") == h.node_of("g-1") == "n1"
    await h.schedule_next()
    assert h.waiting() == set()
    await h.settle()
    assert h.node_of("g-2") == "n1"


# --- the group is released together ---------------------------------------------------------------


@pytest.mark.looptime
async def test_member_that_fits_nowhere_releases_the_waiting_group() -> None:
    h = await gang_harness(node(cpu="2"), *gang("g", 3, 3))
    await h.schedule_next()
    await h.schedule_next()
    assert h.waiting() == {"g-0", "g-1"}
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    await h.schedule_next()  # g-2 fits nowhere: the waiting members are let go at once
    await h.settle()
    assert loop.time() - t0 < 1
    assert [h.node_of(f"g-{i}") for i in range(3)] == [None, None, None]
    assert h.scheduler.cache.pod_count() == 0  # every reservation was given back
    assert h.waiting() == set()
    for name in ("g-0", "g-1"):
        assert h.failures(name) == ["0/1 nodes are available: 1 optimistic rejection in PostFilter."]
    assert h.failures("g-2") == ["0/1 nodes are available: 1 Insufficient cpu. " + released("g", "g-2")]


@pytest.mark.looptime
@pytest.mark.parametrize(
    ("args", "timeout", "shown"),
    [({}, 60, "1m0s"), ({"permitWaitingTimeSeconds": 10}, 10, "10s")],
    ids=["default-60s", "configured-10s"],
)
async def test_incomplete_group_is_rejected_and_unreserved_after_the_timeout(
    args: dict[str, Any], timeout: int, shown: str
) -> None:
    h = await gang_harness(node(), *gang("g", 3, 3), **args)
    await h.schedule_next()
    await h.schedule_next()  # g-2 stays in the queue: the group never completes in time
    assert h.waiting() == {"g-0", "g-1"}
    assert h.scheduler.cache.pod_count() == 2
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    await h.settle()
    assert loop.time() - t0 == pytest.approx(timeout, abs=0.5)
    assert h.node_of("g-0") is None and h.node_of("g-1") is None
    assert h.scheduler.cache.pod_count() == 0
    assert h.waiting() == set()
    timed_out = f"0/1 nodes are available: 1 rejected due to timeout after waiting {shown} at plugin Coscheduling."
    assert h.failures("g-0") == [timed_out]
    # The sibling timed out at the same instant, or was rejected by g-0's Unreserve first.
    assert h.failures("g-1") in (
        [timed_out],
        ["0/1 nodes are available: 1 rejection in Unreserve."],
    )


@pytest.mark.looptime
async def test_failed_group_backs_off_at_prefilter() -> None:
    h = await gang_harness(node(cpu="2"), *gang("g", 3, 3), podGroupBackoffSeconds=30)
    for _ in range(3):
        await h.schedule_next()
    await h.settle()
    assert h.scheduler.cache.pod_count() == 0
    uid = h.pod("g-0")["metadata"]["uid"]
    h.scheduler.queue.activate([uid])
    assert await h.schedule_next() == "g-0"
    assert h.failures("g-0")[-1] == (
        "0/1 nodes are available: podGroup default/g failed recently. " + released("g", "g-0")
    )
    await asyncio.sleep(31)
    h.scheduler.queue.activate([uid])
    assert await h.schedule_next() == "g-0"
    assert h.waiting() == {"g-0"}  # past PreFilter again, waiting for its siblings


# --- ordering -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cpu", "bound"),
    [("4", {"a-0", "a-1", "b-0", "b-1"}), ("2", {"a-0", "a-1"})],
    ids=["room-for-both-groups", "room-for-one-group"],
)
async def test_interleaved_groups_leave_the_queue_group_by_group(cpu: str, bound: set[str]) -> None:
    pods = [
        member("a-0", "a", 2).created("2024-01-01T00:00:00Z"),
        member("b-0", "b", 2).created("2024-01-01T00:00:01Z"),
        member("a-1", "a", 2).created("2024-01-01T00:00:02Z"),
        member("b-1", "b", 2).created("2024-01-01T00:00:03Z"),
    ]
    h = await gang_harness(node(cpu=cpu), *pods)
    order = [await h.schedule_next() for _ in range(4)]
    await h.settle()
    assert order == ["a-0", "a-1", "b-0", "b-1"]
    assert {p for p in ("a-0", "a-1", "b-0", "b-1") if h.node_of(p) == "n1"} == bound
    assert h.waiting() == set()


async def test_priority_comes_before_the_group() -> None:
    pods = [
        member("a-0", "a", 2).created("2024-01-01T00:00:00Z"),
        member("a-1", "a", 2).created("2024-01-01T00:00:02Z"),
        make_pod("urgent").priority(100).created("2024-01-01T00:00:05Z"),
        make_pod("plain").created("2024-01-01T00:00:01Z"),
    ]
    h = await gang_harness(node(), *pods)
    order = [await h.schedule_next() for _ in range(4)]
    await h.settle()
    assert order == ["urgent", "a-0", "a-1", "plain"]


# --- pods outside any group -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pod", "node_name", "message"),
    [
        (make_pod("plain").req(cpu="1"), "n1", None),
        (make_pod("plain").req(cpu="8"), None, "0/1 nodes are available: 1 Insufficient cpu."),
        (member("plain", "g", None), "n1", None),  # a group name without a minimum is no gang
    ],
    ids=["fits", "does-not-fit", "group-name-without-min-available"],
)
async def test_pods_outside_any_group_are_unaffected(pod: PodBuilder, node_name: str | None, message: str) -> None:
    h = await gang_harness(node(), pod)
    await h.schedule_next()
    assert h.waiting() == set()
    await h.settle()
    assert h.node_of("plain") == node_name
    assert h.failures("plain") == ([] if message is None else [message])


# --- PreFilter ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pods", "message"),
    [
        (
            gang("g", 2, 3),
            "pre-filter pod g-0 cannot find enough sibling pods, current pods number: 2, minMember of group: 3",
        ),
        (
            gang("g", 1, 2, legacy=False),
            "pre-filter pod g-0 cannot find enough sibling pods, current pods number: 1, minMember of group: 2",
        ),
        (
            [member("g-0", "g", 3), member("h-0", "h", 3), member("g-1", "g", 3), member("g-0", "g", 3).namespace("x")],
            "pre-filter pod g-0 cannot find enough sibling pods, current pods number: 2, minMember of group: 3",
        ),
        (
            [make_pod("g-0").label(POD_GROUP_NAME_LABEL, "g").label(MIN_AVAILABLE_LABEL, "three")],
            f"pod group default/g: label {MIN_AVAILABLE_LABEL} must be an integer, got 'three'",
        ),
    ],
    ids=["two-of-three", "one-of-two-x-k8s-label", "other-groups-and-namespaces-do-not-count", "bad-min-available"],
)
async def test_prefilter_rejects_a_group_below_min_available(pods: list[PodBuilder], message: str) -> None:
    h = await gang_harness(node(), *pods)
    await h.run_all()
    assert h.node_of("g-0") is None
    # PostFilter runs after a PreFilter rejection too (as upstream) and releases the group;
    # a pod whose group cannot be read has no group to release.
    tail = "" if "must be an integer" in message else " " + released("g", "g-0")
    assert h.failures("g-0") == [f"0/1 nodes are available: {message}.{tail}"]
    assert h.scheduler.queue.where(h.pod("g-0")["metadata"]["uid"]) == "unschedulable"


async def test_prefilter_counts_assigned_members() -> None:
    bound = [member(f"g-{i}", "g", 3).node("n1") for i in range(2)]
    h = await gang_harness(node(), *bound, member("g-2", "g", 3))
    await h.schedule_next()
    assert h.waiting() == set()  # two bound members and this one make three
    await h.settle()
    assert h.node_of("g-2") == "n1"


async def test_prefilter_prefers_a_pod_lister_when_the_handle_has_one() -> None:
    h = await gang_harness(node(), *gang("g", 3, 3))
    # A lister that knows pods is authoritative: here it knows only two of the three.
    for name in ("g-0", "g-1"):
        h.scheduler.listers.put("Pod", h.pod(name))
    await h.schedule_next()
    assert h.failures("g-0") == [
        "0/1 nodes are available: pre-filter pod g-0 cannot find enough sibling pods, "
        "current pods number: 2, minMember of group: 3. " + released("g", "g-0")
    ]


# --- pods of an upstream PodGroup (spec.schedulingGroup) ------------------------------------------
# A pod naming a scheduling.k8s.io PodGroup is gang-scheduled by kube-scheduler's own mechanism;
# Coscheduling treats it as a pod outside any label group, whatever its labels. Each test has a
# control case (the same pod without spec.schedulingGroup) showing the labels alone would count.


def upstream(pod: PodBuilder, group: str = "pg") -> PodBuilder:
    return pod.set("spec.schedulingGroup.podGroupName", group)


def plugin(h: Harness) -> Coscheduling:
    found = h.scheduler.frameworks[SCHED].plugins["Coscheduling"]
    assert isinstance(found, Coscheduling)
    return found


async def waiting_member(*objs: Any, **args: Any) -> Harness:
    """A harness whose g-0 (group g, min-available 2) waits at Permit for one more member: the
    pod lister knows a second, pending member g-1 the scheduler has not seen yet."""
    h = await gang_harness(node(), member("g-0", "g", 2).created("2024-01-01T00:00:00Z"), *objs, **args)
    h.scheduler.listers.put("Pod", h.pod("g-0"))
    phantom = member("g-1", "g", 2).obj()
    phantom["metadata"]["uid"] = "uid-g-1"
    h.scheduler.listers.put("Pod", phantom)
    assert await h.schedule_next() == "g-0"
    assert h.waiting() == {"g-0"}
    return h


@pytest.mark.parametrize(
    "min_available",
    ["3", "three"],
    ids=["gang-labels", "malformed-min-available"],
)
@pytest.mark.parametrize("scheduling_group", [True, False], ids=["with-scheduling-group", "labels-only"])
async def test_pod_with_a_scheduling_group_is_scheduled_alone(min_available: str, scheduling_group: bool) -> None:
    pod = make_pod("x").label(POD_GROUP_NAME_LABEL, "g").label(MIN_AVAILABLE_LABEL, min_available)
    h = await gang_harness(node(), upstream(pod) if scheduling_group else pod)
    await h.schedule_next()
    assert h.waiting() == set()
    await h.settle()
    if scheduling_group:
        assert h.node_of("x") == "n1"
        assert h.failures("x") == []
    else:
        assert h.node_of("x") is None
        assert h.failures("x")[0].startswith("0/1 nodes are available: ")


@pytest.mark.parametrize("scheduling_group", [True, False], ids=["with-scheduling-group", "labels-only"])
@pytest.mark.parametrize("lister", [False, True], ids=["pre-enqueue-census", "pod-lister"])
async def test_prefilter_does_not_count_a_pod_with_a_scheduling_group(scheduling_group: bool, lister: bool) -> None:
    x = member("x", "g", 2).created("2024-01-01T00:00:00Z")  # leaves the queue first
    g0 = member("g-0", "g", 2).created("2024-01-01T00:00:05Z")
    h = await gang_harness(node(), upstream(x) if scheduling_group else x, g0)
    if lister:
        for name in ("x", "g-0"):
            h.scheduler.listers.put("Pod", h.pod(name))
    if scheduling_group:
        await h.run_all()
        assert h.node_of("x") == "n1"  # placed on its own, no wait
        assert h.node_of("g-0") is None
        assert h.failures("g-0") == [
            "0/1 nodes are available: pre-filter pod g-0 cannot find enough sibling pods, "
            "current pods number: 1, minMember of group: 2. " + released("g", "g-0")
        ]
    else:
        await h.schedule_next()
        assert len(h.waiting()) == 1  # the first member waits for the second
        await h.schedule_next()
        await h.settle()
        assert (h.node_of("x"), h.node_of("g-0")) == ("n1", "n1")


@pytest.mark.looptime
@pytest.mark.parametrize("scheduling_group", [True, False], ids=["with-scheduling-group", "labels-only"])
async def test_permit_neither_waits_for_nor_completes_a_group_with_a_scheduling_group(scheduling_group: bool) -> None:
    x = member("x", "g", 2).created("2024-01-01T00:00:01Z")
    h = await waiting_member(upstream(x) if scheduling_group else x, permitWaitingTimeSeconds=10)
    assert await h.schedule_next() == "x"
    if scheduling_group:
        # x is bound at once; g-0 keeps waiting for a real member, and times out without one.
        assert h.waiting() == {"g-0"}
        await h.settle()
        assert h.node_of("x") == "n1"
        assert h.node_of("g-0") is None
        assert h.failures("g-0") == [
            "0/1 nodes are available: 1 rejected due to timeout after waiting 10s at plugin Coscheduling."
        ]
    else:
        assert h.waiting() == set()  # x completed the group
        await h.settle()
        assert (h.node_of("g-0"), h.node_of("x")) == ("n1", "n1")


@pytest.mark.parametrize("scheduling_group", [True, False], ids=["with-scheduling-group", "labels-only"])
async def test_postfilter_for_a_pod_with_a_scheduling_group_releases_no_group(scheduling_group: bool) -> None:
    x = member("x", "g", 2, cpu="8").created("2024-01-01T00:00:01Z")  # fits nowhere
    h = await waiting_member(upstream(x) if scheduling_group else x)
    assert await h.schedule_next() == "x"
    if scheduling_group:
        assert h.waiting() == {"g-0"}
        assert h.failures("x") == ["0/1 nodes are available: 1 Insufficient cpu."]
    else:
        assert h.waiting() == set()
        assert h.failures("x") == ["0/1 nodes are available: 1 Insufficient cpu. " + released("g", "x")]


@pytest.mark.parametrize("scheduling_group", [True, False], ids=["with-scheduling-group", "labels-only"])
async def test_unreserve_of_a_pod_with_a_scheduling_group_rejects_no_waiting_member(scheduling_group: bool) -> None:
    x = member("x", "g", 2)
    h = await waiting_member(upstream(x) if scheduling_group else x)
    cos = plugin(h)
    pi = PodInfo(h.pod("x"))
    assert cos.reserve(CycleState(), pi, "n1") is None
    cos.unreserve(CycleState(), pi, "n1")
    await asyncio.sleep(0)
    assert h.waiting() == ({"g-0"} if scheduling_group else set())


async def test_queue_sort_orders_a_pod_with_a_scheduling_group_by_its_own_creation() -> None:
    pods = [
        member("a-0", "a", 2).created("2024-01-01T00:00:00Z"),
        make_pod("plain").created("2024-01-01T00:00:01Z"),
        member("a-1", "a", 2).created("2024-01-01T00:00:02Z"),
        upstream(member("x", "a", 2)).created("2024-01-01T00:00:03Z"),
    ]
    h = await gang_harness(node(), *pods)
    order = [await h.schedule_next() for _ in range(4)]
    await h.settle()
    # a-1 shares its group's place (a-0's time); x, in no label group, keeps its own.
    assert order == ["a-0", "a-1", "plain", "x"]
    assert all(h.node_of(p) == "n1" for p in ("a-0", "a-1", "plain", "x"))


def test_sibling_events_ignore_pods_with_a_scheduling_group() -> None:
    hints = {e.event.resource: e.hint for e in Coscheduling(None, None).events_to_register()}  # type: ignore[arg-type]
    hint = hints[EventResource.POD]
    g0, g1 = member("g-0", "g", 2).obj(), member("g-1", "g", 2).obj()
    x = upstream(member("x", "g", 2)).obj()
    assert hint(g0, None, g1) == QueueingHint.QUEUE
    assert hint(g0, None, x) == QueueingHint.SKIP
    assert hint(g0, x, x) == QueueingHint.SKIP
    assert hint(x, None, g0) == QueueingHint.SKIP


@pytest.mark.parametrize(
    ("pod_group", "node_name"),
    [
        (
            {
                "apiVersion": "scheduling.k8s.io/v1beta1",
                "kind": "PodGroup",
                "metadata": {"name": "g", "namespace": "default"},
                "spec": {"schedulingPolicy": {"gang": {"minCount": 3}}},
            },
            "n1",
        ),
        (
            {
                "apiVersion": "scheduling.x-k8s.io/v1alpha1",
                "kind": "PodGroup",
                "metadata": {"name": "g", "namespace": "default"},
                "spec": {"minMember": 3},
            },
            None,
        ),
    ],
    ids=["scheduling-k8s-io-pod-group-is-not-read", "scheduler-plugins-pod-group-gives-min-member"],
)
async def test_min_member_is_read_only_from_a_scheduler_plugins_pod_group(
    pod_group: dict[str, Any], node_name: str | None
) -> None:
    h = await gang_harness(node(), member("g-0", "g", None, legacy=False))
    h.scheduler.listers.put("PodGroup", pod_group)
    await h.schedule_next()
    await h.settle()
    assert h.node_of("g-0") == node_name


async def test_both_gangs_in_one_profile_each_pod_placed_by_one_mechanism() -> None:
    """Coscheduling and GangScheduling in one profile (GenericWorkload on). t-0 and t-1 form the
    upstream gang "train" (minCount 2) and also carry the labels of label group "a"
    (min-available 3), whose only other members are a-0 and a-1: the schedulingGroup wins, so the
    gang "train" binds in its pod-group cycle while group "a", two of three, is held at PreFilter."""
    spec = gang_profile()
    spec.plugins["preEnqueue"].append(PluginRef("GangScheduling"))
    spec.plugins["placementFeasible"] = [PluginRef("GangScheduling")]
    pg = {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "train", "namespace": "default", "uid": "pg-train", "generation": 1},
        "spec": {"schedulingPolicy": {"gang": {"minCount": 2}}},
    }
    pods = [member(f"a-{i}", "a", 3).created("2024-01-01T00:00:00Z") for i in range(2)]
    pods += [upstream(member(f"t-{i}", "a", 3), "train").created("2024-01-01T00:00:01Z") for i in range(2)]
    options = SchedulerOptions(seed=1, record_results=True, feature_gates=FeatureGates({"GenericWorkload": True}))
    h = await make_harness([spec], registry(), options=options, objs=[node(), pg, *pods])
    await h.run_all()
    await h.settle()
    assert (h.node_of("t-0"), h.node_of("t-1")) == ("n1", "n1")
    assert (h.node_of("a-0"), h.node_of("a-1")) == (None, None)
    assert h.waiting() == set()
    assert h.failures("a-0")[0] == (
        "0/1 nodes are available: pre-filter pod a-0 cannot find enough sibling pods, "
        "current pods number: 2, minMember of group: 3. " + released("a", "a-0")
    )


# --- labels, args, packaging ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("labels", "expected"),
    [
        ({POD_GROUP_NAME_LABEL: "g", MIN_AVAILABLE_LABEL: "3"}, PodGroupRef("ns", "g", 3)),
        ({POD_GROUP_LABEL: "g", MIN_AVAILABLE_LABEL: "2"}, PodGroupRef("ns", "g", 2)),
        ({POD_GROUP_LABEL: "new", POD_GROUP_NAME_LABEL: "old", MIN_AVAILABLE_LABEL: "2"}, PodGroupRef("ns", "new", 2)),
        ({POD_GROUP_NAME_LABEL: "g"}, None),
        ({POD_GROUP_NAME_LABEL: "g", MIN_AVAILABLE_LABEL: "0"}, None),
        ({MIN_AVAILABLE_LABEL: "3"}, None),
        ({}, None),
    ],
    ids=["legacy-label", "x-k8s-label", "x-k8s-label-wins", "no-min", "min-zero", "no-name", "no-labels"],
)
def test_pod_group_of(labels: dict[str, str], expected: PodGroupRef | None) -> None:
    assert pod_group_of("ns", labels) == expected


def test_min_member_may_come_from_a_pod_group_object() -> None:
    lookup = {("ns", "g"): 4}
    assert pod_group_of("ns", {POD_GROUP_LABEL: "g"}, lambda ns, n: lookup.get((ns, n))) == PodGroupRef("ns", "g", 4)
    assert pod_group_of("ns", {POD_GROUP_LABEL: "h"}, lambda ns, n: lookup.get((ns, n))) is None


def test_malformed_min_available_is_an_error() -> None:
    with pytest.raises(InvalidPodGroup, match="must be an integer"):
        pod_group_of("ns", {POD_GROUP_NAME_LABEL: "g", MIN_AVAILABLE_LABEL: "x"})


@pytest.mark.parametrize(
    ("args", "permit", "backoff", "error"),
    [
        ({}, 60, 0, None),
        ({"permitWaitingTimeSeconds": 5, "podGroupBackoffSeconds": 20}, 5, 20, None),
        ({"podGroupBackoffSeconds": -1}, None, None, "podGroupBackoffSeconds cannot be negative"),
        ({"permitWaitingTimeSeconds": -1}, None, None, "permitWaitingTimeSeconds cannot be negative"),
        ({"kubeConfigPath": "/etc/kubernetes/scheduler.conf"}, None, None, "kubeConfigPath"),
    ],
    ids=["defaults", "set", "negative-backoff", "negative-permit", "unknown-field"],
)
def test_args(args: dict[str, Any], permit: int | None, backoff: int | None, error: str | None) -> None:
    if error is not None:
        with pytest.raises(ValueError, match=error):
            CoschedulingArgs.model_validate(args)
        return
    parsed = CoschedulingArgs.model_validate(args)
    assert (parsed.permit_waiting_time_seconds, parsed.pod_group_backoff_seconds) == (permit, backoff)


README_CONFIG = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: default-scheduler
    plugins:
      multiPoint:
        enabled:
          - name: Coscheduling
      queueSort:
        enabled:
          - name: Coscheduling
        disabled:
          - name: "*"
    pluginConfig:
      - name: Coscheduling
        args:
          permitWaitingTimeSeconds: 10
"""


def test_readme_config_enables_it_at_every_point() -> None:
    from kubesched.config import parse_config

    assert README_CONFIG.strip() in (PACKAGE / "README.md").read_text()
    cfg = parse_config(yaml.safe_load(README_CONFIG), registry=registry())
    spec = cfg.profiles[0]
    assert [r.name for r in spec.plugins["queueSort"]] == ["Coscheduling"]
    for point in ("preEnqueue", "preFilter", "postFilter", "reserve", "permit"):
        assert "Coscheduling" in [r.name for r in spec.plugins[point]], point
    assert spec.plugin_args["Coscheduling"].permit_waiting_time_seconds == 10


async def test_readme_config_schedules_a_gang_with_the_default_plugins() -> None:
    from kubesched.config import parse_config

    cfg = parse_config(yaml.safe_load(README_CONFIG), registry=registry())
    h = await make_harness(cfg.profiles, registry(), objs=[node("n1", cpu="2"), node("n2", cpu="2"), *gang("g", 3, 3)])
    await h.schedule_next()
    await h.schedule_next()
    assert h.waiting() == {"g-0", "g-1"}
    await h.schedule_next()
    await h.settle()
    assert all(h.node_of(f"g-{i}") in ("n1", "n2") for i in range(3))


def test_distribution_declares_the_entry_point() -> None:
    meta = tomllib.loads((PACKAGE / "pyproject.toml").read_text())
    assert meta["project"]["name"] == "kubesched-coscheduling"
    assert "kubesched" in meta["project"]["dependencies"]
    assert meta["project"]["entry-points"]["kubesched.plugins"] == {
        "Coscheduling": "kubesched_coscheduling:Coscheduling"
    }
    assert registry().get("Coscheduling").extension_points == (
        "preEnqueue",
        "queueSort",
        "preFilter",
        "postFilter",
        "reserve",
        "permit",
    )


# --- scheduler-plugins' PodGroup objects -------------------------------------------------------------

POD_GROUP_CRD = Path(__file__).resolve().parents[2] / "config" / "crds" / "scheduling.x-k8s.io_podgroups.yaml"


def sp_pod_group(name: str, min_member: int) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"minMember": min_member},
    }


def crd_members(group: str, size: int) -> list[PodBuilder]:
    """Members that name their group by scheduler-plugins' label and give no min-available:
    the minimum is the PodGroup object's."""
    return [member(f"{group}-{i}", group, None, legacy=False) for i in range(size)]


async def test_a_pod_group_objects_min_member_holds_the_gang_together() -> None:
    crd = yaml.safe_load(POD_GROUP_CRD.read_text())
    h = await gang_harness(crd, sp_pod_group("g", 3), node("n1", cpu="2"), *crd_members("g", 3))
    for _ in range(3):
        await h.schedule_next()
    await h.settle()
    # Room for two only: with minMember 3 none is bound (without the object, each pod alone: two).
    assert [h.node_of(f"g-{i}") for i in range(3)] == [None, None, None]
    assert h.waiting() == set()


async def test_a_pod_group_lowered_to_its_members_brings_them_back() -> None:
    crd = yaml.safe_load(POD_GROUP_CRD.read_text())
    h = await gang_harness(crd, sp_pod_group("g", 4), node("n1", cpu="4"), *crd_members("g", 3))
    for _ in range(3):
        await h.schedule_next()
    await h.settle()
    assert [h.node_of(f"g-{i}") for i in range(3)] == [None, None, None]
    assert "minMember of group: 4" in h.scheduler.results["default/g-0"].message
    h.update(sp_pod_group("g", 3))  # the event alone brings them back: nothing else changes
    for _ in range(3):
        assert await h.schedule_next() is not None
    await h.settle()
    assert {h.node_of(f"g-{i}") for i in range(3)} == {"n1"}


def test_the_pod_group_event_queues_only_its_own_members() -> None:
    [hint] = [
        e.hint
        for e in Coscheduling(None, None).events_to_register()
        if "podgroups" in str(e.event.resource)  # type: ignore[arg-type]
    ]
    assert hint is not None
    pod = member("g-0", "g", None, legacy=False).obj()
    assert hint(pod, None, sp_pod_group("g", 3)) is QueueingHint.QUEUE
    assert hint(pod, sp_pod_group("g", 4), None) is QueueingHint.QUEUE
    assert hint(pod, None, sp_pod_group("other", 3)) is QueueingHint.SKIP
