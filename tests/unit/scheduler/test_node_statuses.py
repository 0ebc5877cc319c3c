"""A diagnosis's node map reads as the dict it stands for, whatever was added as columns (joined
on the first read) and whatever was written one node at a time, in any order: lengths, lookups,
iteration order, writes and deletions — and the FailedScheduling message is the same."""

from __future__ import annotations

from fuzzing import fuzz_settings
from hypothesis import given
from hypothesis import strategies as st

from kubesched.framework.status import Code, Status
from kubesched.scheduler.errors import Diagnosis, FitError, NodeStatuses
from kubesched.testing import make_pod

STATUSES = [Status(Code.UNSCHEDULABLE, r) for r in ("Insufficient cpu", "no GPU room", "taint")]

#: ("columns", k) adds k new nodes as columns, ("deferred", k) as columns listed when read; ("set", i, s) / ("del", i) / ("get", i) write,
#: delete or read node i (of those named so far, or a new one); ("len",) / ("iter",) read.
OPS = st.one_of(
    st.tuples(st.just("columns"), st.integers(0, 5), st.integers(0, 2)),
    st.tuples(st.just("deferred"), st.integers(0, 5), st.integers(0, 2)),
    st.tuples(st.just("set"), st.integers(0, 30), st.integers(0, 2)),
    st.tuples(st.just("del"), st.integers(0, 30)),
    st.tuples(st.just("get"), st.integers(0, 30)),
    st.tuples(st.just("len")),
    st.tuples(st.just("iter")),
)


@fuzz_settings(300)
@given(st.lists(OPS, max_size=30))
def test_it_reads_as_the_dict(ops: list[tuple]) -> None:  # type: ignore[type-arg]
    lazy = NodeStatuses()
    model: dict[str, Status] = {}
    fresh = 0

    def node(i: int) -> str:
        # A node added as a column so far, or one written alone (columns only bring new names).
        return f"k{i}" if i < fresh else f"s{i}"

    for op in ops:
        if op[0] in ("columns", "deferred"):
            names = [f"k{fresh + i}" for i in range(op[1])]
            fresh += op[1]
            statuses = [STATUSES[(op[2] + i) % 3] for i in range(op[1])]
            if op[0] == "columns":
                lazy.add_columns(names, statuses)
            else:
                lazy.add_deferred(len(names), lambda names=names, statuses=statuses: (names, statuses))
            model.update(zip(names, statuses, strict=True))
        elif op[0] == "set":
            lazy[node(op[1])] = STATUSES[op[2]]
            model[node(op[1])] = STATUSES[op[2]]
        elif op[0] == "del":
            name = node(op[1])
            assert (name in lazy) == (name in model)
            if name in model:
                del lazy[name]
                del model[name]
        elif op[0] == "get":
            assert lazy.get(node(op[1])) is model.get(node(op[1]))
        elif op[0] == "len":
            assert len(lazy) == len(model)
        else:
            assert list(lazy) == list(model)
    assert len(lazy) == len(model)
    assert list(lazy.items()) == list(model.items())
    assert lazy.copy() == model
    assert lazy == model


@fuzz_settings(200)
@given(st.lists(st.lists(st.integers(0, 2), max_size=8), max_size=4), st.lists(st.integers(0, 2), max_size=3))
def test_the_message_counts_columns_and_single_writes_alike(chunks: list[list[int]], singles: list[int]) -> None:
    """Columns added with counts, columns without, and single writes: the message counts each
    node once, as a plain dict of the same statuses gives it."""
    counted = Diagnosis()
    plain: dict[str, Status] = {}
    for c, chunk in enumerate(chunks):
        names = [f"c{c}-{i}" for i in range(len(chunk))]
        statuses = [STATUSES[k] for k in chunk]
        if c % 2:
            counted.node_to_status.add_columns(names, statuses)
        else:
            tally = [(STATUSES[k], chunk.count(k)) for k in dict.fromkeys(chunk)]
            counted.add_counted(names, statuses, tally)
        plain.update(zip(names, statuses, strict=True))
    for i, k in enumerate(singles):
        counted.node_to_status[f"s{i}"] = STATUSES[k]
        plain[f"s{i}"] = STATUSES[k]
    pod = make_pod("p").info()
    assert str(FitError(pod, 50, counted)) == str(FitError(pod, 50, Diagnosis(plain)))


def test_deferred_columns_are_listed_once_and_only_when_read() -> None:
    calls: list[int] = []

    def columns() -> tuple[list[str], list[Status]]:
        calls.append(1)
        return ["a", "b"], [STATUSES[0], STATUSES[1]]

    d = Diagnosis()
    d.add_counted_deferred(2, columns, [(STATUSES[0], 1), (STATUSES[1], 1)])
    assert len(d.node_to_status) == 2
    # The message counts what was counted: the nodes are not listed for it.
    message = str(FitError(make_pod("p"), 2, d))
    assert "1 Insufficient cpu" in message and "1 no GPU room" in message
    assert calls == []
    assert d.node_to_status["b"] is STATUSES[1]
    assert dict(d.node_to_status) == {"a": STATUSES[0], "b": STATUSES[1]} and calls == [1]


def test_deferred_columns_of_the_wrong_length_are_refused_when_read() -> None:
    lazy = NodeStatuses()
    lazy.add_deferred(2, lambda: (["a", "b"], [STATUSES[0]]))
    try:
        lazy.get("a")
    except ValueError as exc:
        assert "2 node names for 1 statuses" in str(exc)
    else:
        raise AssertionError("a short column was joined")
