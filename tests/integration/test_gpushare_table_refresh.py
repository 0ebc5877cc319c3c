"""The GPU columns a batch reads are those of its nodes as they are now, whatever changed between
calls: GpuTable.refresh (and FGD's rows over it) may answer "all current" from the whole columns,
and must bring exactly the batch's stale rows up to date otherwise — every row of a batch, refreshed
call after call, is its node as derived from the node itself."""

from __future__ import annotations

from typing import Any

import numpy as np
from fuzzing import fuzz_settings
from gpushare_builders import gpu_node, gpu_pod, gs
from hypothesis import given
from hypothesis import strategies as st
from kubesched_gpushare.fgd import FGD, frag_terms
from kubesched_gpushare.ledger import GpuLedger

from kubesched.framework.columns import NodeColumns
from kubesched.framework.types import PodInfo
from kubesched.testing import as_node_infos

N = 6
TYPICAL = [
    gs.TypicalPod(cpu="4", gpuCount=1, gpuMilli=500, percentage=0.5),
    gs.TypicalPod(cpu="8", gpuCount=1, gpuMilli=1000, percentage=0.5),
]

# A step: place a GPU pod on node i (its row changes), or refresh the rows of a batch.
steps = st.lists(
    st.one_of(
        st.tuples(st.just("place"), st.integers(0, N - 1), st.sampled_from([250, 500, 1000])),
        st.tuples(st.just("refresh"), st.permutations(list(range(N))), st.integers(1, N)),
    ),
    max_size=14,
)


@fuzz_settings(200)
@given(steps)
def test_refreshed_rows_are_the_rows_built_afresh(ops: list[tuple[Any, ...]]) -> None:
    nodes = as_node_infos([gpu_node(f"n{i}", 2 if i % 2 else 4, model="T4" if i < 3 else "V100M16") for i in range(N)])
    cols = NodeColumns(nodes)
    ledger = GpuLedger()
    table = ledger.table(cols)
    fgd = FGD(gs.FGDArgs(typicalPods=TYPICAL), handle=_Handle())
    fgd.ledger = ledger
    placed = 0
    for op in ops:
        if op[0] == "place":
            _, i, milli = op
            ni = cols.node(i).clone()
            index = str(placed % (2 if i % 2 else 4))
            ni.add_pod(PodInfo(gpu_pod(f"p{placed}", milli, index=index, node=f"n{i}", cpu="1").obj()))
            placed += 1
            cols.set_row(i, ni)
            continue
        _, order, size = op
        rows = np.array(order[:size], np.intp)
        table.refresh(rows)
        mine = fgd._refresh(table, rows)
        for r in rows.tolist():
            # What the node's GPUs are now, derived from the node itself.
            ng = ledger.node(cols.node(r))
            assert table.generation[r] == cols.generation[r] == ng.generation
            assert (table.count[r], table.cpu_left[r]) == (ng.count, ng.cpu_left)
            assert table.left[r, : ng.count].tolist() == ng.left
            assert (table.total_left[r], table.fully_free[r]) == (ng.total_left, ng.fully_free)
            assert ledger.models[table.model[r]] == ng.model
            assert mine.generation[r] == ng.generation
            assert mine.before[r].tolist() == frag_terms(ng.cpu_left, ng.left, ng.model, fgd.tp)


class _Handle:
    """What FGD reads of its handle here: no cluster, a profile name."""

    cluster = None
    profile_name = "test"
