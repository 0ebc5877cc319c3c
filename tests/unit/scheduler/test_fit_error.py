"""The FailedScheduling message a FitError spells, as kube-scheduler's since 1.30: the PreFilter
message or the Filter reasons counted, each closed by a period, then the PostFilter message as
it is (no period of the scheduler's after it)."""

from __future__ import annotations

import pytest

from kubesched.framework.status import Status
from kubesched.scheduler.errors import Diagnosis, FitError
from kubesched.testing import make_pod


def fit_error(diagnosis: Diagnosis, nodes: int = 2) -> str:
    return str(FitError(make_pod("p").info(), nodes, diagnosis))


def filtered(**post: str) -> Diagnosis:
    return Diagnosis(
        node_to_status={"n1": Status.unschedulable("Insufficient cpu"), "n2": Status.unschedulable("Insufficient cpu")},
        **post,
    )


@pytest.mark.parametrize(
    ("post_filter_msg", "expected"),
    [
        pytest.param("", "0/2 nodes are available: 2 Insufficient cpu.", id="no PostFilter message"),
        pytest.param(
            "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.",
            "0/2 nodes are available: 2 Insufficient cpu. "
            "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.",
            id="a fit error of preemption's own: its period only",
        ),
        pytest.param(
            "preemption: found a potential placement for pod on node n2, preempting 1 victims",
            "0/2 nodes are available: 2 Insufficient cpu. "
            "preemption: found a potential placement for pod on node n2, preempting 1 victims",
            id="a success: no period at all",
        ),
    ],
)
def test_the_post_filter_message_is_appended_as_it_is(post_filter_msg: str, expected: str) -> None:
    assert fit_error(filtered(post_filter_msg=post_filter_msg)) == expected


def test_a_pre_filter_message_is_closed_by_a_period_and_replaces_the_reasons() -> None:
    d = filtered(pre_filter_msg="pod is cursed", post_filter_msg="preemption: not eligible")
    assert fit_error(d) == "0/2 nodes are available: pod is cursed. preemption: not eligible"
