"""plugins/coscheduling's points one at a time through kubesched.testing: the census PreEnqueue
keeps, PreFilter's verdict, QueueSort's grouping, Permit's wait and who ends it."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from kubesched import Status
from kubesched.framework.status import Code
from kubesched.testing import PluginFramework, PodBuilder, make_node, make_pod, plugin_framework

PACKAGE = Path(__file__).resolve().parents[2] / "plugins" / "coscheduling"
if str(PACKAGE) not in sys.path:
    sys.path.insert(0, str(PACKAGE))

from kubesched_coscheduling import MIN_AVAILABLE_LABEL, POD_GROUP_NAME_LABEL, Coscheduling  # noqa: E402


def member(name: str, group: str, min_available: int, second: int = 0) -> PodBuilder:
    return (
        make_pod(name)
        .label(POD_GROUP_NAME_LABEL, group)
        .label(MIN_AVAILABLE_LABEL, str(min_available))
        .created(f"2024-01-01T00:00:{second:02d}Z")
    )


@pytest.fixture
def fw() -> Iterator[PluginFramework]:
    with plugin_framework(Coscheduling, nodes=[make_node("n1").capacity(cpu="8", pods="10")]) as driver:
        yield driver


def test_prefilter_counts_the_members_pre_enqueue_has_seen(fw: PluginFramework) -> None:
    g = [member(f"g-{i}", "g", 3) for i in range(3)]
    for pod in g[:2]:
        assert fw.pre_enqueue(pod) is None  # never gates: it only counts
    outcome = fw.pre_filter(g[0])
    assert outcome.status is not None and outcome.status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert outcome.status.reasons == [
        "pre-filter pod g-0 cannot find enough sibling pods, current pods number: 2, minMember of group: 3"
    ]
    assert outcome.rejected_by == {"Coscheduling"}
    fw.pre_enqueue(g[2])
    assert fw.pre_filter(g[0]).status is None
    assert fw.pre_filter(make_pod("loner")).status is None


def test_queue_sort_keeps_a_group_together(fw: PluginFramework) -> None:
    pods = [member("a-0", "a", 2, 0), member("b-0", "b", 2, 1), member("a-1", "a", 2, 2), member("b-1", "b", 2, 3)]
    for pod in pods:
        fw.pre_enqueue(pod)
    assert fw.sort_pods(pods) == ["a-0", "a-1", "b-0", "b-1"]
    assert fw.sort_pods([*pods, make_pod("urgent").priority(10)])[0] == "urgent"


def test_permit_waits_until_the_last_member_allows_the_group(fw: PluginFramework) -> None:
    g0, g1 = member("g-0", "g", 2), member("g-1", "g", 2)
    status = fw.permit(g0, "n1")
    assert status is not None and status.is_wait()
    assert fw.waiting() == {"g-0"} and fw.pending_plugins(g0) == ["Coscheduling"]
    assert fw.permit(g1, "n1") is None
    assert fw.wait_on_permit(g0, timeout=1) is None
    assert fw.waiting() == set()


def test_unreserve_of_a_member_rejects_its_waiting_siblings(fw: PluginFramework) -> None:
    g0, g1 = member("g-0", "g", 3), member("g-1", "g", 3)
    fw.permit(g0, "n1")
    assert fw.reserve(g1, "n1") is None
    fw.unreserve(g1, "n1")
    status = fw.wait_on_permit(g0, timeout=1)
    assert status is not None and status.code is Code.UNSCHEDULABLE
    assert (status.plugin, status.reasons) == ("Coscheduling", ["rejection in Unreserve"])


def test_post_filter_releases_the_waiting_group(fw: PluginFramework) -> None:
    g = [member(f"g-{i}", "g", 3) for i in range(3)]
    for pod in g:
        fw.pre_enqueue(pod)
    fw.permit(g[0], "n1")
    assert fw.pre_filter(g[1]).status is None
    # another plugin's Filter found no room for g-1: the filtered statuses map says so
    outcome = fw.post_filter(g[1], {"n1": Status.unschedulable("Insufficient cpu")})
    assert outcome.nominated_node_name is None
    assert outcome.status.reasons == [
        "PodGroup default/g gets rejected due to Pod g-1 is unschedulable even after PostFilter"
    ]
    released = fw.wait_on_permit(g[0], timeout=1)
    assert released is not None and released.reasons == ["optimistic rejection in PostFilter"]


def test_the_test_can_allow_a_waiting_member_itself(fw: PluginFramework) -> None:
    g0 = member("g-0", "g", 5)
    assert fw.permit(g0, "n1").is_wait()  # type: ignore[union-attr]
    fw.allow(g0, "Coscheduling")
    assert fw.wait_on_permit(g0) is None
