"""NodeOrder ranks a cycle's feasible nodes by counting their places in the seeded order of all
the snapshot's rows, not by sorting their keys: the ranks are the ones sorting gives, for any
subset of rows in any order; a row given twice is left to sorting."""

from __future__ import annotations

import numpy as np
from fuzzing import fuzz_settings
from gpushare_builders import gs
from hypothesis import given
from hypothesis import strategies as st
from kubesched_gpushare.node_order import ranks_among

from kubesched.framework.columns import NodeBatch, NodeColumns
from kubesched.framework.interface import CycleState
from kubesched.framework.types import PodInfo
from kubesched.testing import as_node_infos, make_node, make_pod


def sorted_ranks(keys: np.ndarray) -> list[int]:
    ranks = np.empty(len(keys), np.int64)
    ranks[np.argsort(keys, kind="stable")] = np.arange(len(keys))
    return ranks.tolist()


@fuzz_settings(300)
@given(st.data(), st.lists(st.integers(0, 2**62), min_size=1, max_size=40, unique=True))
def test_counted_ranks_are_sorted_ranks(data: st.DataObject, keys: list[int]) -> None:
    all_keys = np.array(keys, np.int64)
    places = np.array(sorted_ranks(all_keys), np.int64)
    rows = data.draw(st.lists(st.integers(0, len(keys) - 1), max_size=len(keys) + 3))
    got = ranks_among(places, np.array(rows, np.intp))
    if len(set(rows)) < len(rows):
        assert got is None
    else:
        assert got is not None and got.tolist() == sorted_ranks(all_keys[rows])


@fuzz_settings(50)
@given(st.integers(0, 1000), st.lists(st.integers(0, 29), min_size=1, max_size=30, unique=True))
def test_a_batch_is_ranked_as_a_list_of_its_nodes(seed: int, rows: list[int]) -> None:
    nodes = as_node_infos([make_node(f"node-{i}") for i in range(30)])
    cols = NodeColumns(nodes)
    plugin = gs.NodeOrder(gs.NodeOrderArgs(seed=seed), handle=None)  # type: ignore[arg-type]
    pod = PodInfo(make_pod("p").obj())
    batch, listed = CycleState(), CycleState()
    plugin.pre_score(batch, pod, NodeBatch(cols, np.array(rows, np.intp)))
    plugin.pre_score(listed, pod, [cols.node(r) for r in rows])
    key = f"NodeOrder/{seed}"
    assert batch.get(key).ranks.tolist() == listed.get(key).ranks.tolist()
