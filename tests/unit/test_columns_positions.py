"""``positions``: numpy's ``flatnonzero`` without its Python wrappers, for the scheduling cycle's
masks (the nodes that passed the filters, the best scores' ties, the rows that changed). Property
test: the same indices as ``np.flatnonzero`` for any array it is given."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from kubesched.framework.columns import positions

ARRAYS = hnp.arrays(
    dtype=st.sampled_from([np.bool_, np.int64, np.int8, np.float64]),
    shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=6),
)


@settings(max_examples=300, deadline=None)
@given(a=ARRAYS)
def test_positions_are_flatnonzeros(a: np.ndarray) -> None:
    got = positions(a)
    want = np.flatnonzero(a)
    assert got.dtype == want.dtype
    assert got.tolist() == want.tolist()


@pytest.mark.parametrize(
    "a",
    [
        pytest.param(np.arange(12).reshape(3, 4)[:, ::2] % 3 == 0, id="strided-2d-view"),
        pytest.param((np.arange(10) % 4 == 1)[::-1], id="reversed-view"),
        pytest.param(np.zeros(0, bool), id="empty"),
    ],
)
def test_positions_of_views(a: np.ndarray) -> None:
    assert positions(a).tolist() == np.flatnonzero(a).tolist()
