"""FGD's plain-Python forms for a few rows give what its numpy forms give on the same rows: the
per-row terms of the typical pods (FGD._refresh) and the scores of a batch (FGD.rows_scores),
for random nodes, bound pods, typical pods and asks."""

from __future__ import annotations

import random
from typing import Any

import kubesched_gpushare.fgd as fgd_module
import numpy as np
import pytest
from gpushare_random import random_cluster
from kubesched_gpushare import FGD, FGDArgs, GpuAsk, TypicalPod
from kubesched_gpushare.ledger import GpuLedger

MILLIS = [0, 100, 230, 250, 470, 500, 810, 1000]


class _Handle:
    cluster = None
    profile_name = "test"


def _typical(rng: random.Random) -> list[TypicalPod]:
    pods = []
    for _ in range(rng.randint(1, 12)):
        count = rng.choice([0, 1, 1, 1, 2, 4])
        milli = rng.choice(MILLIS[1:]) if count == 1 else (1000 if count else 0)
        model = rng.choice(["", "", "T4", "V100M16|A10"])
        pods.append(
            TypicalPod(
                cpu=f"{rng.randrange(0, 40000)}m", gpuCount=count, gpuMilli=milli, model=model, weight=rng.random()
            )
        )
    return pods


def _ask(rng: random.Random) -> GpuAsk:
    count = rng.choice([0, 1, 1, 2, 4, 8])
    if count == 0:
        return GpuAsk()
    milli = rng.choice(MILLIS[1:]) if count == 1 else 1000
    return GpuAsk(count, milli)


@pytest.mark.parametrize("seed", range(40))
def test_few_rows_are_worked_out_as_the_numpy_forms_work_them(seed: int, monkeypatch: Any) -> None:
    rng = random.Random(seed)
    cols = random_cluster(rng, rng.randint(1, 24))
    ledger = GpuLedger()
    table = ledger.table(cols)
    table.refresh(np.arange(cols.n, dtype=np.intp))
    plugin = FGD(FGDArgs(typicalPods=_typical(rng)), handle=_Handle())  # type: ignore[arg-type]
    plugin.ledger = ledger
    fr = fgd_module.RowTerms(table, plugin.tp)
    few = fgd_module.RowTerms(table, plugin.tp)
    every = np.arange(cols.n, dtype=np.intp)
    plugin.fill_rows(table, fr, every)
    for chunk in np.array_split(every, max(1, cols.n // 3)):
        plugin.fill_few_rows(table, few, chunk)
    for name in ("small", "fit", "before", "generation"):
        assert getattr(few, name).tolist() == getattr(fr, name).tolist(), name
    for _ in range(30):
        rows = np.array(sorted(rng.sample(range(cols.n), rng.randint(1, min(cols.n, fgd_module.FEW_ROWS)))), np.intp)
        ask = _ask(rng)
        cpu = rng.choice([0, 1000, 4000, 16000, 64000])
        quick = plugin.rows_scores(table, fr, rows, ask, cpu)
        with monkeypatch.context() as m:
            m.setattr(fgd_module, "FEW_ROWS", -1)
            slow = plugin.rows_scores(table, fr, rows, ask, cpu)
        assert quick.dtype == slow.dtype
        assert quick.tolist() == slow.tolist(), (rows.tolist(), ask, cpu)
