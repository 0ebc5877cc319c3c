"""KeptCounts: a count map kept across cycles gives the same code table as one built anew
(``Categorical.by_code`` of a plain dict), whatever was set, deleted or replaced in it and
whatever values the column gained, and the table it hands out cannot be written."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.framework.columns import Categorical, KeptCounts

VALUES = [f"node-{i}" for i in range(6)]

steps = st.lists(
    st.one_of(
        st.tuples(st.just("set"), st.sampled_from(VALUES), st.integers(-3, 5)),
        st.tuples(st.just("del"), st.sampled_from(VALUES), st.just(0)),
        st.tuples(st.just("pop"), st.sampled_from(VALUES), st.just(0)),
        st.tuples(st.just("update"), st.sampled_from(VALUES), st.integers(0, 5)),
        st.tuples(st.just("setdefault"), st.sampled_from(VALUES), st.integers(0, 5)),
        st.tuples(st.just("clear"), st.just(""), st.just(0)),
        st.tuples(st.just("code"), st.sampled_from(VALUES), st.just(0)),
        st.tuples(st.just("table"), st.just(""), st.just(0)),
    ),
    max_size=40,
)


def coded(column: Categorical, value: str) -> None:
    column.code(value, value)


@settings(max_examples=400, deadline=None)
@given(steps, st.lists(st.sampled_from(VALUES), min_size=4, max_size=10), st.sampled_from([np.int64, np.float64]))
def test_the_kept_table_is_the_table_built_anew(
    script: list[tuple[str, str, int]], first: list[str], dtype: Any
) -> None:
    column = Categorical(0)
    for v in first:
        coded(column, v)
    kept = KeptCounts()
    plain: dict[str, int] = {}
    for op, value, n in script:
        if op == "set":
            kept[value] = n
            plain[value] = n
        elif op == "del":
            if value in plain:
                del kept[value]
                del plain[value]
        elif op == "pop":
            kept.pop(value, None)
            plain.pop(value, None)
        elif op == "update":
            kept.update({value: n})
            plain.update({value: n})
        elif op == "setdefault":
            kept.setdefault(value, n)
            plain.setdefault(value, n)
        elif op == "clear":
            kept.clear()
            plain.clear()
        elif op == "code":
            coded(column, value)
        else:
            assert np.array_equal(column.by_code(kept, dtype), column.by_code(plain, dtype))
    table = column.by_code(kept, dtype)
    assert table.dtype == dtype
    assert np.array_equal(table, column.by_code(plain, dtype))


def test_the_table_handed_out_cannot_be_written_and_another_column_gets_its_own() -> None:
    a, b = Categorical(0), Categorical(0)
    for v in ("x", "y"):
        coded(a, v)
    for v in ("y", "x"):
        coded(b, v)
    kept = KeptCounts({"x": 2, "y": 3})
    table = a.by_code(kept)
    assert table.tolist() == [2, 3, 0]
    with pytest.raises(ValueError):
        table[0] = 7
    assert b.by_code(kept).tolist() == [3, 2, 0]
    kept["x"] = 5
    assert a.by_code(kept).tolist() == [5, 3, 0]


def test_values_the_column_gains_are_read_from_the_map() -> None:
    column = Categorical(0)
    coded(column, "a")
    kept = KeptCounts({"a": 1, "b": 2})
    assert column.by_code(kept).tolist() == [1, 0]
    coded(column, "b")
    coded(column, "c")
    assert column.by_code(kept).tolist() == [1, 2, 0, 0]


def test_a_copy_or_a_pickle_holds_the_same_counts() -> None:
    import copy
    import pickle

    column = Categorical(0)
    coded(column, "a")
    kept = KeptCounts({"a": 4})
    column.by_code(kept)
    for other in (copy.copy(kept), copy.deepcopy(kept), pickle.loads(pickle.dumps(kept))):
        assert type(other) is KeptCounts and other == {"a": 4}
        other["a"] = 1
        assert column.by_code(other).tolist() == [1, 0]
    assert column.by_code(kept).tolist() == [4, 0]
