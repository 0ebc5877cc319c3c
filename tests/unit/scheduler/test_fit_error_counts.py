"""A FitError counts each reason once per node that gave it, however the nodes' statuses are
shared: one Status for many nodes (as the batch Filter hands them), equal ones made apart, or a
rare one found only on the last node — the message is the one counting node by node gives."""

from __future__ import annotations

from fuzzing import fuzz_settings
from hypothesis import example, given
from hypothesis import strategies as st

from kubesched.framework.status import Code, Status
from kubesched.scheduler.errors import Diagnosis, FitError
from kubesched.testing import make_pod

REASONS = ["Insufficient cpu", "Insufficient memory", "no GPU room", "node(s) were unschedulable"]
SHARED = [Status(Code.UNSCHEDULABLE, r) for r in REASONS] + [Status(Code.UNSCHEDULABLE, *REASONS[:2])]


def node_by_node(statuses: list[Status], nodes: int) -> str:
    counts: dict[str, int] = {}
    for status in statuses:
        for reason in status.reasons:
            counts[reason] = counts.get(reason, 0) + 1
    text = ", ".join(sorted(f"{n} {r}" for r, n in counts.items()))
    return f"0/{nodes} nodes are available:" + (f" {text}." if text else "")


# Each node's status: one of the shared ones, or one of its own (equal reasons, another object).
STATUS = st.one_of(
    st.sampled_from(SHARED),
    st.lists(st.sampled_from(REASONS), max_size=3).map(lambda rs: Status(Code.UNSCHEDULABLE, *rs)),
)


@fuzz_settings(300)
@given(st.lists(STATUS, max_size=40))
@example([SHARED[0]] * 30 + [SHARED[2]])  # a rare status only on the last node
@example([])
def test_reasons_are_counted_once_per_node(statuses: list[Status]) -> None:
    diagnosis = Diagnosis(node_to_status={f"n{i}": s for i, s in enumerate(statuses)})
    nodes = len(statuses) + 2
    assert str(FitError(make_pod("p").info(), nodes, diagnosis)) == node_by_node(statuses, nodes)


@fuzz_settings(200)
@given(st.lists(st.lists(STATUS, max_size=15), max_size=4), st.lists(STATUS, max_size=3))
def test_counts_given_with_the_statuses_say_the_same(chunks: list[list[Status]], unc: list[Status]) -> None:
    """Statuses added with their counts (as the batch Filter hands them) give the message that
    counting node by node gives; statuses added to the map without counts make it count the
    map again rather than miss them."""
    diagnosis = Diagnosis()
    everyone: list[Status] = []
    for c, chunk in enumerate(chunks):
        names = [f"c{c}-n{i}" for i in range(len(chunk))]
        distinct = dict(zip(map(id, chunk), chunk, strict=True))
        counted = [(s, sum(1 for x in chunk if x is s)) for s in distinct.values()]
        diagnosis.add_counted(names, chunk, counted)
        everyone += chunk
    for i, status in enumerate(unc):
        diagnosis.node_to_status[f"extra-{i}"] = status
        everyone.append(status)
    nodes = len(everyone) + 1
    assert str(FitError(make_pod("p").info(), nodes, diagnosis)) == node_by_node(everyone, nodes)
