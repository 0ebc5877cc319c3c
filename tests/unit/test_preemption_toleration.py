"""PreemptionToleration (plugins/preemption-toleration) as scheduler-plugins'
``pkg/preemptiontoleration``: ``preemption_toleration_test.go`` (``ExemptedFromPreemption``, its
PriorityClass read through the handle's listers) and ``preemption_toleration_policy_test.go``
(the annotations parsed), case for case; then the PostFilter through the runtime (the test kit's
``plugin_framework``, with NodeResourcesFit): victims that tolerate are spared, the others
preempted as DefaultPreemption would; eligibility; the args as ``DefaultPreemptionArgs``."""

from __future__ import annotations

import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from kubesched import Code, PodInfo, Status
from kubesched.testing import PodBuilder, make_node, make_pod, plugin_framework

PACKAGE = Path(__file__).resolve().parents[2] / "plugins" / "preemption-toleration"
sys.path.insert(0, str(PACKAGE))  # the package is not installed for the suite

from kubesched_preemption_toleration import (  # noqa: E402
    MINIMUM_PREEMPTABLE_PRIORITY,
    TOLERATION_SECONDS,
    Policy,
    PolicyError,
    PreemptionToleration,
    PreemptionTolerationArgs,
    PriorityClassNotFound,
    exempted_from_preemption,
)

CLASS = "dummy"


def priority_class(value: int, annotations: dict[str, str] | None = None, name: str = CLASS) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if annotations is not None:
        meta["annotations"] = annotations
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": meta, "value": value}


def rfc3339(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def scheduled_at(builder: PodBuilder, at: float) -> PodBuilder:
    """upstream's ``ScheduledAt``: a ``PodScheduled=True`` condition of that time."""
    return builder.set(
        "status.conditions", [{"type": "PodScheduled", "status": "True", "lastTransitionTime": rfc3339(at)}]
    )


def victim(priority: int, cls: str = CLASS) -> PodBuilder:
    return make_pod("victim").priority(priority).set("spec.priorityClassName", cls)


def preemptor(priority: int, policy: str = "PreemptLowerPriority") -> PodBuilder:
    return make_pod("preemptor").priority(priority).preemption_policy(policy)


def exempted(pc: dict[str, Any] | None, v: PodBuilder, p: PodBuilder, now: float | None = None) -> bool:
    """``ExemptedFromPreemption`` with the PriorityClass (if any) in the handle's listers."""
    with plugin_framework(PreemptionToleration, objects=[pc] if pc is not None else []) as fw:
        listers = fw.plugin().handle.listers
        return exempted_from_preemption(v.info(), p.info(), listers, time.time() if now is None else now)


# --- preemption_toleration_test.go ---------------------------------------------------------------
def test_a_priority_class_that_does_not_exist_is_an_error() -> None:
    with pytest.raises(PriorityClassNotFound, match=f'priorityclass.scheduling.k8s.io "{CLASS}" not found'):
        exempted(None, victim(3), preemptor(2))


@pytest.mark.parametrize(
    "annotations",
    [{MINIMUM_PREEMPTABLE_PRIORITY: "a"}, {MINIMUM_PREEMPTABLE_PRIORITY: "10", TOLERATION_SECONDS: "a"}],
    ids=["minimum not parsable", "toleration seconds not parsable"],
)
def test_a_policy_that_cannot_be_parsed_tolerates_nothing(annotations: dict[str, str]) -> None:
    assert exempted(priority_class(1, annotations), victim(3), preemptor(2)) is False


@pytest.mark.parametrize(
    ("pc", "v", "p", "want"),
    [
        # the preemptor's PreemptionPolicy is Never: exempted
        (priority_class(1), victim(1), preemptor(2, "Never"), True),
        # PreemptLowerPriority, the victim's class below the preemptor: not exempted
        (priority_class(1), victim(1), preemptor(2), False),
        # PreemptLowerPriority, the victim's class not below the preemptor: exempted
        (priority_class(3), victim(3), preemptor(2), True),
    ],
    ids=["preemptor never preempts", "lower class", "class not lower"],
)
def test_without_a_policy(pc: dict[str, Any], v: PodBuilder, p: PodBuilder, want: bool) -> None:
    assert exempted(pc, v, p) is want


@pytest.mark.parametrize("preemptor_priority", [201, 200], ids=["above the minimum", "equal to the minimum"])
def test_a_preemptor_at_or_above_the_minimum_preemptable_priority_is_tolerated_by_nobody(
    preemptor_priority: int,
) -> None:
    now = time.time()
    pc = priority_class(100, {MINIMUM_PREEMPTABLE_PRIORITY: "200"})
    assert exempted(pc, scheduled_at(victim(100), now), preemptor(preemptor_priority), now) is False


@pytest.mark.parametrize(
    ("seconds", "scheduled_ago", "want"),
    [
        (0, 0.0, False),  # toleration 0: none
        (-1, None, True),  # negative: for ever (scheduled at Go's zero time)
        (100, 101.0, False),  # the toleration has expired
        (100, 10.0, True),  # within the toleration
    ],
    ids=["zero seconds", "negative seconds", "expired", "not expired"],
)
def test_a_preemptor_below_the_minimum_is_tolerated_for_the_toleration_seconds(
    seconds: int, scheduled_ago: float | None, want: bool
) -> None:
    now = time.time()
    pc = priority_class(100, {MINIMUM_PREEMPTABLE_PRIORITY: "200", TOLERATION_SECONDS: str(seconds)})
    v = victim(100)
    v = (
        scheduled_at(v, now - scheduled_ago)
        if scheduled_ago is not None
        else v.set(
            "status.conditions",
            [{"type": "PodScheduled", "status": "True", "lastTransitionTime": "0001-01-01T00:00:00Z"}],
        )
    )
    assert exempted(pc, v, preemptor(199), now) is want


def test_a_victim_not_yet_scheduled_tolerates_while_its_policy_holds() -> None:
    pc = priority_class(100, {MINIMUM_PREEMPTABLE_PRIORITY: "200", TOLERATION_SECONDS: "100"})
    assert exempted(pc, victim(100), preemptor(199)) is True
    unscheduled = victim(100).set("status.conditions", [{"type": "PodScheduled", "status": "False"}])
    assert exempted(pc, unscheduled, preemptor(199)) is True


def test_a_victim_without_a_priority_class_tolerates_nothing() -> None:
    assert exempted(None, make_pod("v").priority(1), preemptor(2, "Never")) is False


# --- preemption_toleration_policy_test.go ----------------------------------------------------------
@pytest.mark.parametrize(
    ("annotations", "expected"),
    [
        (None, Policy(2, 0)),
        ({MINIMUM_PREEMPTABLE_PRIORITY: "100", TOLERATION_SECONDS: "10"}, Policy(100, 10)),
        ({MINIMUM_PREEMPTABLE_PRIORITY: "100", TOLERATION_SECONDS: "-1"}, Policy(100, -1)),
    ],
    ids=["defaults", "both values", "negative seconds"],
)
def test_policy_of_a_priority_class(annotations: dict[str, str] | None, expected: Policy) -> None:
    assert Policy.of(priority_class(1, annotations)) == expected


@pytest.mark.parametrize(
    ("annotations", "message"),
    [
        ({MINIMUM_PREEMPTABLE_PRIORITY: "a"}, 'strconv.ParseInt: parsing "a": invalid syntax'),
        ({TOLERATION_SECONDS: "a"}, 'strconv.ParseInt: parsing "a": invalid syntax'),
        # beyond upstream's table: Go's ParseInt refuses what Python's int() would take
        ({MINIMUM_PREEMPTABLE_PRIORITY: " 5"}, 'strconv.ParseInt: parsing " 5": invalid syntax'),
        ({MINIMUM_PREEMPTABLE_PRIORITY: "1_000"}, 'strconv.ParseInt: parsing "1_000": invalid syntax'),
        ({MINIMUM_PREEMPTABLE_PRIORITY: "2147483648"}, 'strconv.ParseInt: parsing "2147483648": value out of range'),
    ],
)
def test_an_annotation_that_is_not_an_integer_of_its_size_is_an_error(
    annotations: dict[str, str], message: str
) -> None:
    with pytest.raises(PolicyError) as err:
        Policy.of(priority_class(1, annotations))
    assert str(err.value) == message


# --- PostFilter through the runtime ---------------------------------------------------------------
TOLERANT = priority_class(1000, {MINIMUM_PREEMPTABLE_PRIORITY: "10000", TOLERATION_SECONDS: "3600"}, name="training")


def cluster(ago: float = 60.0) -> tuple[list[Any], list[PodBuilder]]:
    """Two full nodes of 2 CPUs: n1 with a training pod (tolerant) scheduled ``ago`` seconds ago,
    n2 with a pod of priority 1000 and no PriorityClass."""
    nodes = [make_node(n).capacity(cpu="2", pods="10") for n in ("n1", "n2")]
    pods = [
        scheduled_at(
            make_pod("train").uid("train").node("n1").priority(1000).set("spec.priorityClassName", "training"),
            time.time() - ago,
        ).req(cpu="2"),
        scheduled_at(make_pod("plain").uid("plain").node("n2").priority(1000).req(cpu="2"), time.time() - ago),
    ]
    return nodes, pods


def post_filter(nodes: list[Any], pods: list[PodBuilder], p: PodBuilder) -> tuple[str | None, Status]:
    with plugin_framework("NodeResourcesFit", PreemptionToleration, nodes=nodes, pods=pods, objects=[TOLERANT]) as fw:
        out = fw.post_filter(p)
    return out.nominated_node_name, out.status


def test_the_tolerant_victim_is_spared_and_the_other_node_taken() -> None:
    nodes, pods = cluster()
    node, status = post_filter(nodes, pods, make_pod("web").uid("web").priority(5000).req(cpu="1"))
    assert status.code is Code.SUCCESS, status.message()
    assert node == "n2"
    assert status.message() == "found a potential placement for pod on node n2, preempting 1 victims"


def test_no_victim_anywhere_says_so_per_node() -> None:
    nodes, pods = cluster()
    pods[1] = pods[1].set("spec.priorityClassName", "training")
    node, status = post_filter(nodes, pods, make_pod("web").uid("web").priority(5000).req(cpu="1"))
    assert status.code is Code.UNSCHEDULABLE
    assert node in ("", None)
    assert status.message() == (
        "0/2 nodes are available: 1 No victims found on node n1 for preemptor pod web, "
        "1 No victims found on node n2 for preemptor pod web."
    )


def test_a_preemptor_at_the_minimum_preemptable_priority_preempts_the_tolerant_pod() -> None:
    nodes, pods = cluster()
    pods[1] = pods[1].set("spec.priorityClassName", "training")
    node, status = post_filter(nodes, pods, make_pod("urgent").uid("urgent").priority(10000).req(cpu="1"))
    assert status.code is Code.SUCCESS, status.message()
    assert node in ("n1", "n2")


def test_the_toleration_ends_after_its_seconds() -> None:
    nodes, pods = cluster(ago=3601)
    pods[1] = pods[1].set("spec.priorityClassName", "training")
    node, status = post_filter(nodes, pods, make_pod("web").uid("web").priority(5000).req(cpu="1"))
    assert status.code is Code.SUCCESS, status.message()
    assert node in ("n1", "n2")


def test_a_victim_of_an_unknown_priority_class_fails_the_preemption_with_an_error() -> None:
    nodes, pods = cluster()
    pods[1] = pods[1].set("spec.priorityClassName", "gone")
    pods[0] = pods[0].set("spec.priorityClassName", "gone")
    _, status = post_filter(nodes, pods, make_pod("web").uid("web").priority(5000).req(cpu="1"))
    assert status.code is Code.ERROR
    assert status.message() == 'priorityclass.scheduling.k8s.io "gone" not found'


def test_a_preemptor_that_never_preempts_is_not_eligible() -> None:
    nodes, pods = cluster()
    _, status = post_filter(nodes, pods, make_pod("web").priority(5000).preemption_policy("Never").req(cpu="1"))
    assert (status.code, status.message()) == (Code.UNSCHEDULABLE, "not eligible due to preemptionPolicy=Never.")


def test_a_lower_pod_terminating_on_the_nominated_node_makes_the_preemptor_wait() -> None:
    nodes, pods = cluster()
    pods[1] = pods[1].set("metadata.deletionTimestamp", rfc3339(time.time()))
    p = make_pod("web").uid("web").priority(5000).req(cpu="1").set("status.nominatedNodeName", "n2")
    with plugin_framework("NodeResourcesFit", PreemptionToleration, nodes=nodes, pods=pods, objects=[TOLERANT]) as fw:
        plugin = fw.plugin(PreemptionToleration.name)
        info = PodInfo(p.obj())
        assert plugin.pod_eligible_to_preempt_others(info, Status(Code.UNSCHEDULABLE)) == (
            False,
            "not eligible due to a terminating pod on the nominated node.",
        )
        # unless the nominated node can no longer take it anyway
        assert plugin.pod_eligible_to_preempt_others(info, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE)) == (True, "")


def test_the_candidate_count_follows_the_args() -> None:
    plugin = PreemptionToleration(
        PreemptionTolerationArgs.model_validate({"minCandidateNodesPercentage": 40, "minCandidateNodesAbsolute": 1})
    )
    plugin.offset_source = lambda n: n - 1
    assert plugin.get_offset_and_num_candidates(10) == (9, 4)
    assert plugin.get_offset_and_num_candidates(2) == (1, 1)
    assert PreemptionToleration().get_offset_and_num_candidates(500)[1] == 100


# --- args: DefaultPreemptionArgs' defaults and validation ------------------------------------------
def test_args_defaults() -> None:
    args = PreemptionTolerationArgs.model_validate({})
    assert (args.min_candidate_nodes_percentage, args.min_candidate_nodes_absolute) == (10, 100)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"minCandidateNodesPercentage": 101}, "minCandidateNodesPercentage: Invalid value: 101: not in valid range"),
        (
            {"minCandidateNodesAbsolute": -1},
            r"minCandidateNodesAbsolute: Invalid value: -1: not in valid range \[0, inf\)",
        ),
        (
            {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0},
            "cannot be zero at the same time as minCandidateNodesAbsolute",
        ),
        ({"minCandidateNodes": 1}, "extra"),
    ],
)
def test_args_refused_naming_the_field(raw: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        PreemptionTolerationArgs.model_validate(raw)
